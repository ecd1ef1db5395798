//! Capture files to UDP datagrams: the first stage of the inspector.
//!
//! [`Capture::open`] reads a whole pcap or pcapng file into memory (through the `pcap-file`
//! crate), walks every frame, strips its link header (in one module for every link type),
//! parses IP and UDP (through `etherparse`) and keeps an index of the UDP datagrams: frame number,
//! time, addresses, status and the payload as a byte range of the file, so nothing is copied.
//!
//! - Formats: pcap (µs and ns magic, both byte orders) and pcapng (every interface with its own
//!   link type, timestamp resolution, power of 10 or of 2, and `if_tsoffset`).
//! - Link types: Ethernet (with 802.1Q / QinQ tags), Linux cooked SLL and SLL2 (loopback
//!   included), BSD loopback NULL and LOOP, raw IPv4 / IPv6.
//! - Frames are numbered from 1 over all frames of the file, as Wireshark numbers them; frames that
//!   are not UDP are counted by [`SkipReason`] and skipped.
//! - Frames cut by the snap length are [`Status::Truncated`], IP fragments [`Status::Fragment`]:
//!   the payload range holds only what is there, never decoded as if whole.
//! - An IP or UDP length that claims more than a frame the capture did not cut holds is a
//!   [`Flaw`] of its datagram ([`Datagram::flaw`]), with the file offset of the field.
//! - Times are exact to the nanosecond ([`Timestamp`], epoch nanoseconds).
//!
//! # Damage and safety
//! A file that is not a capture is an `Err`. Damage later in the file (a truncated or absurdly
//! long record, a malformed pcapng block, an unknown interface) stops the walk and is kept in
//! [`Capture::damage`], with every datagram before it. No input makes the reader panic, and no
//! allocation is sized by a length read from the file: record lengths are checked against
//! [`MAX_RECORD_LEN`] and what remains of the file first.
//!
//! # Example
//! ```
//! use bitlens::capture::{write, Capture, Status, Timestamp};
//!
//! let out = [write::SynthDatagram::new(
//!     Timestamp::from_nanos(1_700_000_000_123_456_789),
//!     "10.0.0.1:5000".parse().unwrap(),
//!     "10.0.0.2:40000".parse().unwrap(),
//!     b"hello",
//! )];
//! let bytes = write::to_bytes(write::WriteFormat::PcapEthernet { nanos: true }, &out).unwrap();
//! let capture = Capture::from_bytes("demo.pcap", bytes).unwrap();
//! let d = &capture.datagrams()[0];
//! assert_eq!((d.frame, d.status), (1, Status::Whole));
//! assert_eq!(d.time.to_string(), "1700000000.123456789");
//! assert_eq!(capture.payload(d), b"hello");
//! ```

mod error;
mod link;
mod net;
mod read;
// The harness of the `capture_ingest` fuzz target (feature `fuzzing`).
#[cfg(feature = "fuzzing")]
mod fuzz;
#[cfg(feature = "fuzzing")]
mod rewrite;
pub mod write;

use std::fmt;
use std::net::SocketAddr;
use std::ops::Range;
use std::path::Path;

pub use error::{CaptureError, Location};
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub use fuzz::fuzz_ingest;

/// The largest record (pcap: its 16-byte header and captured bytes) or block (pcapng) accepted,
/// in bytes: 16 MiB. Larger claims are damage, not an allocation.
pub const MAX_RECORD_LEN: u64 = 16 << 20;

/// A point in time as nanoseconds since the Unix epoch (negative before 1970).
///
/// Stored as whole seconds and nanoseconds (16 bytes, 8-aligned, to keep [`Datagram`] small);
/// `Display` writes epoch seconds with exactly 9 decimals, e.g. `1700000000.123456789`, the form
/// of Wireshark's `frame.time_epoch`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp {
    secs: i64,
    nanos: u32,
}

impl Timestamp {
    /// The time `nanos` nanoseconds after the epoch (saturating beyond ±2^63 seconds).
    pub const fn from_nanos(nanos: i128) -> Self {
        let secs = nanos.div_euclid(1_000_000_000);
        let sub = nanos.rem_euclid(1_000_000_000) as u32;
        if secs > i64::MAX as i128 {
            Self {
                secs: i64::MAX,
                nanos: 999_999_999,
            }
        } else if secs < i64::MIN as i128 {
            Self {
                secs: i64::MIN,
                nanos: 0,
            }
        } else {
            Self {
                secs: secs as i64,
                nanos: sub,
            }
        }
    }

    /// The time `secs` seconds plus `nanos` nanoseconds after the epoch.
    pub const fn from_secs_nanos(secs: i64, nanos: u32) -> Self {
        if nanos < 1_000_000_000 {
            // Already normal: no 128-bit division (every well-formed record takes this path).
            return Self { secs, nanos };
        }
        Self::from_nanos(secs as i128 * 1_000_000_000 + nanos as i128)
    }

    /// Nanoseconds since the epoch.
    pub const fn as_nanos(self) -> i128 {
        self.secs as i128 * 1_000_000_000 + self.nanos as i128
    }

    /// Whole seconds since the epoch (rounded towards minus infinity) and the nanoseconds past
    /// them (0..1e9).
    pub const fn secs_nanos(self) -> (i64, u32) {
        (self.secs, self.nanos)
    }

    /// The time as the `Display` form writes it: negative or not, whole seconds and nanoseconds
    /// of the absolute value (`-0.5 s` is `(true, 0, 500_000_000)`).
    pub const fn epoch_parts(self) -> (bool, u64, u32) {
        if self.secs >= 0 {
            (false, self.secs as u64, self.nanos)
        } else if self.nanos == 0 {
            (true, self.secs.unsigned_abs(), 0)
        } else {
            (
                true,
                (self.secs + 1).unsigned_abs(),
                1_000_000_000 - self.nanos,
            )
        }
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (negative, secs, nanos) = self.epoch_parts();
        let sign = if negative { "-" } else { "" };
        write!(f, "{sign}{secs}.{nanos:09}")
    }
}

/// A LINKTYPE value: what the first header of each frame is (tcpdump.org/linktypes.html).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct LinkType(pub u32);

impl LinkType {
    /// BSD loopback, 4-byte address family in the capturing host's byte order.
    pub const NULL: Self = Self(0);
    /// Ethernet II, with optional 802.1Q / QinQ tags.
    pub const ETHERNET: Self = Self(1);
    /// Raw IP, version given by the first nibble.
    pub const RAW: Self = Self(101);
    /// OpenBSD loopback, 4-byte address family in network byte order.
    pub const LOOP: Self = Self(108);
    /// Linux cooked capture v1 (`tcpdump -i any` before libpcap 1.10).
    pub const LINUX_SLL: Self = Self(113);
    /// Raw IPv4.
    pub const IPV4: Self = Self(228);
    /// Raw IPv6.
    pub const IPV6: Self = Self(229);
    /// Linux cooked capture v2 (`tcpdump -i any` since libpcap 1.10).
    pub const LINUX_SLL2: Self = Self(276);

    /// The LINKTYPE_ name of a few common link types this reader does not parse (Wi-Fi, PPP,
    /// USB, Bluetooth, netlink...), for messages that name what was skipped.
    pub fn unread_name(self) -> Option<&'static str> {
        Some(match self.0 {
            6 => "IEEE802_5",
            9 => "PPP",
            10 => "FDDI",
            50 => "PPP_HDLC",
            51 => "PPP_ETHER",
            104 => "C_HDLC",
            105 => "IEEE802_11",
            119 => "IEEE802_11_PRISM",
            127 => "IEEE802_11_RADIOTAP",
            187 => "BLUETOOTH_HCI_H4",
            189 => "USB_LINUX",
            192 => "PPI",
            195 => "IEEE802_15_4_WITHFCS",
            201 => "BLUETOOTH_HCI_H4_WITH_PHDR",
            220 => "USB_LINUX_MMAPPED",
            249 => "USBPCAP",
            253 => "NETLINK",
            _ => return None,
        })
    }

    /// A short name, or `None` for link types this reader does not parse.
    pub fn name(self) -> Option<&'static str> {
        Some(match self {
            Self::NULL => "NULL",
            Self::ETHERNET => "ETHERNET",
            Self::RAW => "RAW",
            Self::LOOP => "LOOP",
            Self::LINUX_SLL => "LINUX_SLL",
            Self::IPV4 => "IPV4",
            Self::IPV6 => "IPV6",
            Self::LINUX_SLL2 => "LINUX_SLL2",
            _ => return None,
        })
    }
}

impl fmt::Debug for LinkType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => write!(f, "{name}"),
            None => write!(f, "LinkType({})", self.0),
        }
    }
}

impl fmt::Display for LinkType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// Whether a datagram's payload is all there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    /// The whole UDP payload is in the capture.
    Whole,
    /// The frame ends before the UDP payload does: cut by the snap length, or (with a
    /// [`Flaw`] saying so, see [`Datagram::flaw`]) a UDP length past the end of the IP payload.
    /// The payload range holds only the bytes present; ports are 0 if the frame ends inside the
    /// UDP header.
    Truncated,
    /// An IP fragment (IPv4 MF flag or offset, IPv6 fragment header). The first fragment has the
    /// ports and the first payload bytes; later ones have ports 0 and a piece of the datagram.
    Fragment,
}

/// A length field of an IP or UDP header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LengthField {
    /// IPv4 total length: the whole packet, header included.
    Ipv4TotalLength,
    /// IPv6 payload length: what follows the 40-byte fixed header.
    Ipv6PayloadLength,
    /// UDP length: the datagram, its 8-byte header included.
    UdpLength,
}

impl LengthField {
    /// Wireshark's name for the field: `ip.len`, `ipv6.plen`, `udp.length`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Ipv4TotalLength => "ip.len",
            Self::Ipv6PayloadLength => "ipv6.plen",
            Self::UdpLength => "udp.length",
        }
    }
}

/// A length field that claims more bytes than there are, in a frame the capture did not cut:
/// the sender (or the tool that wrote the file) is at fault, where a snap-length cut
/// ([`Status::Truncated`] without a flaw) is the capture's doing. The datagram is indexed with
/// the bytes that are there, as for a cut.
///
/// - An IP length past the end of a frame whose captured length is its original length.
/// - A UDP length past the end of the IP payload (the end the IP header gives it, so a cut frame
///   can show it too); not for a first fragment, whose UDP length counts the later ones.
///
/// `Display` says what is wrong; [`Flaw::message`] adds where, in one line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Flaw {
    /// The field.
    pub field: LengthField,
    /// The field's value.
    pub claimed: u16,
    /// The bytes there are for what the field measures (less than `claimed`): the IP packet's
    /// bytes in the frame (IPv4), those after the fixed header (IPv6), or the bytes the IP
    /// header leaves for the UDP datagram (UDP).
    pub room: u16,
    /// Byte offset of the field in the file.
    pub offset: u64,
}

impl Flaw {
    /// The one-line message naming the file, the frame and the field's byte offset:
    /// `x.pcap: frame 3 at byte 82: UDP length 64 is more than ...`.
    pub fn message(&self, file: &str, frame: u64) -> String {
        let at = Location {
            file: file.to_owned(),
            frame: Some(frame),
            offset: self.offset,
        };
        format!("{at}: {self}")
    }
}

impl fmt::Display for Flaw {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (claimed, room) = (self.claimed, self.room);
        match self.field {
            LengthField::Ipv4TotalLength => write!(
                f,
                "IPv4 total length {claimed} runs past the end of the frame, which holds {room} \
                 bytes of the packet and was not cut by the snap length (a malformed IP header)"
            ),
            LengthField::Ipv6PayloadLength => write!(
                f,
                "IPv6 payload length {claimed} runs past the end of the frame, which holds \
                 {room} bytes after the IPv6 header and was not cut by the snap length (a \
                 malformed IP header)"
            ),
            LengthField::UdpLength => write!(
                f,
                "UDP length {claimed} is more than the {room} bytes the IP header leaves for \
                 the datagram (a malformed UDP header, not a snap-length cut)"
            ),
        }
    }
}

/// Why a frame holds no UDP datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SkipReason {
    /// The interface's link type is not one this reader parses.
    UnsupportedLinkType,
    /// The link header carries something other than IPv4 / IPv6 (ARP, LLC, ...).
    NotIp,
    /// IP, but not UDP (TCP, ICMP, ...).
    NotUdp,
    /// The frame ends inside its link or IP header.
    TruncatedHeader,
    /// The IP header is malformed (wrong version, header length too small, ...).
    MalformedIp,
}

impl SkipReason {
    /// Every reason, in the order [`Skipped::iter`] reports them.
    pub const ALL: [Self; 5] = [
        Self::UnsupportedLinkType,
        Self::NotIp,
        Self::NotUdp,
        Self::TruncatedHeader,
        Self::MalformedIp,
    ];

    /// A short description for summaries.
    pub fn describe(self) -> &'static str {
        match self {
            Self::UnsupportedLinkType => "unsupported link type",
            Self::NotIp => "not IP",
            Self::NotUdp => "not UDP",
            Self::TruncatedHeader => "cut inside link or IP header",
            Self::MalformedIp => "malformed IP header",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.describe())
    }
}

/// How many frames were skipped, by reason.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Skipped {
    counts: [u64; SkipReason::ALL.len()],
    /// The link types of the frames skipped for [`SkipReason::UnsupportedLinkType`], with
    /// their counts, in the order first seen (at most [`Skipped::LINK_TYPES`] of them).
    link_types: Vec<(LinkType, u64)>,
}

impl Skipped {
    /// Frames skipped for `reason`.
    pub fn count(&self, reason: SkipReason) -> u64 {
        self.counts.get(reason.index()).copied().unwrap_or(0)
    }

    /// Frames skipped for any reason.
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// Each reason with a non-zero count.
    pub fn iter(&self) -> impl Iterator<Item = (SkipReason, u64)> + '_ {
        SkipReason::ALL
            .into_iter()
            .map(|r| (r, self.count(r)))
            .filter(|&(_, n)| n > 0)
    }

    /// How many distinct unsupported link types are named ([`Skipped::link_types`]): a pcapng
    /// file can declare an interface per block, and the list is not sized by the file.
    pub const LINK_TYPES: usize = 16;

    /// The link types of the frames skipped because bitlens does not read them, with how many
    /// frames each (the first [`Skipped::LINK_TYPES`] link types seen; every frame is counted
    /// in [`Skipped::count`]).
    pub fn link_types(&self) -> &[(LinkType, u64)] {
        &self.link_types
    }

    fn add(&mut self, reason: SkipReason) {
        if let Some(n) = self.counts.get_mut(reason.index()) {
            *n += 1;
        }
    }

    /// Counts a frame skipped because its link type `link` is not one this reader parses.
    fn add_link_type(&mut self, link: LinkType) {
        self.add(SkipReason::UnsupportedLinkType);
        if let Some((_, n)) = self.link_types.iter_mut().find(|(l, _)| *l == link) {
            *n += 1;
        } else if self.link_types.len() < Self::LINK_TYPES {
            self.link_types.push((link, 1));
        }
    }
}

/// The container format of a capture file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileFormat {
    /// Classic libpcap.
    Pcap {
        /// Nanosecond timestamps (magic `a1b23c4d`) rather than microseconds.
        nanos: bool,
        /// Written big-endian.
        big_endian: bool,
    },
    /// pcapng.
    Pcapng,
}

/// Timestamp resolution of an interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeResolution {
    /// Units of 10^-n seconds (pcap µs is `Decimal(6)`, ns is `Decimal(9)`).
    Decimal(u8),
    /// Units of 2^-n seconds (pcapng `if_tsresol` with the high bit set).
    Binary(u8),
}

/// A capture interface: the pcap file header, or a pcapng interface description block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interface {
    /// Link type of its frames.
    pub link_type: LinkType,
    /// Timestamp resolution.
    pub resolution: TimeResolution,
    /// Seconds added to every timestamp (pcapng `if_tsoffset`; 0 for pcap).
    pub ts_offset_secs: i64,
    /// Snap length (0: unlimited).
    pub snaplen: u32,
    /// Interface name (pcapng `if_name`), if given.
    pub name: Option<String>,
}

/// One UDP datagram of a capture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Datagram {
    /// Frame number, 1-based over all frames of the file (as Wireshark numbers them).
    pub frame: u64,
    /// Capture time.
    pub time: Timestamp,
    /// Source address and port (port 0 when not in the capture, see [`Status`]).
    pub src: SocketAddr,
    /// Destination address and port (port 0 when not in the capture, see [`Status`]).
    pub dst: SocketAddr,
    /// Bytes of the frame in the file.
    pub captured_len: u32,
    /// Bytes of the frame on the wire.
    pub original_len: u32,
    /// Whether the payload is all there.
    pub status: Status,
    /// A length field of its IP or UDP header that claims more than there is, in a frame the
    /// capture did not cut; `None` for a well-formed datagram and for a snap-length cut.
    pub flaw: Option<Flaw>,
    /// Index into [`Capture::interfaces`] (0 for pcap).
    pub interface: u32,
    /// Link type of the frame.
    pub link_type: LinkType,
    payload_start: usize,
    payload_len: u32,
    /// The UDP header's length field (header included), 0 without a UDP header.
    udp_len: u16,
    /// Bytes of the IP and UDP headers in front of the payload ([`Datagram::header_len`]).
    header_len: u16,
}

impl Datagram {
    /// Byte range of the UDP payload in [`Capture::data`].
    pub fn payload_range(&self) -> Range<usize> {
        self.payload_start..self.payload_start.saturating_add(self.payload_len as usize)
    }

    /// The UDP payload in `file`, the bytes of the file it was indexed from (empty for other
    /// bytes too short to hold it).
    pub fn payload<'f>(&self, file: &'f [u8]) -> &'f [u8] {
        file.get(self.payload_range()).unwrap_or(&[])
    }

    /// Bytes of UDP payload present in the capture.
    pub fn payload_len(&self) -> usize {
        self.payload_len as usize
    }

    /// The UDP payload length its UDP header declares (the header's length field less its 8
    /// bytes), what `decode` reports as `len`: more than [`Datagram::payload_len`] for a
    /// datagram cut short or the first fragment of one. Without a usable length field (cut
    /// inside the UDP header, a later fragment, a field below 8, which IPv6 jumbograms set to
    /// 0) it is the bytes present.
    pub fn declared_len(&self) -> usize {
        if self.udp_len >= 8 {
            usize::from(self.udp_len) - 8
        } else {
            self.payload_len()
        }
    }

    /// ` (54 captured)` after the length of a datagram the capture holds only part of, else
    /// empty: how `decode` and the inspector show a datagram cut short.
    pub fn captured_note(&self) -> String {
        if self.payload_len() == self.declared_len() {
            String::new()
        } else {
            format!(" ({} captured)", self.payload_len())
        }
    }

    /// Bytes of the headers in front of the UDP payload above the link layer: the IP header
    /// (options and IPv6 extension headers included) and the 8-byte UDP header; 0 for a
    /// datagram seen outside any capture ([`Datagram::detached`]), and only the IP header for a
    /// later fragment, which carries no UDP header. What `profile` counts as IP and UDP
    /// overhead.
    pub fn header_len(&self) -> usize {
        usize::from(self.header_len)
    }

    /// A whole datagram seen outside any file (the live proxy's): its payload is the first
    /// `payload_len` bytes of a buffer of its own, so [`Datagram::payload`] of that buffer gives
    /// it. Link type raw IP, interface 0.
    pub fn detached(
        frame: u64,
        time: Timestamp,
        src: SocketAddr,
        dst: SocketAddr,
        payload_len: usize,
    ) -> Self {
        let len = u32::try_from(payload_len).unwrap_or(u32::MAX);
        Datagram {
            frame,
            time,
            src,
            dst,
            captured_len: len,
            original_len: len,
            status: Status::Whole,
            interface: 0,
            link_type: LinkType::RAW,
            payload_start: 0,
            payload_len: len,
            flaw: None,
            udp_len: 0,
            header_len: 0,
        }
    }
}

/// A capture file read into memory, with its index of UDP datagrams.
#[derive(Debug)]
pub struct Capture {
    name: String,
    data: Vec<u8>,
    format: FileFormat,
    frames: u64,
    datagrams: Vec<Datagram>,
    skipped: Skipped,
    interfaces: Vec<Interface>,
    damage: Option<CaptureError>,
}

/// Reads a whole file. A large one is read in two halves on two threads, so that the kernel's
/// copy and the page faults of the new buffer (most of the time it takes) use both cores; a file
/// that changes size while it is read is read again from the start, in one piece.
pub fn read_file(path: &Path) -> std::io::Result<Vec<u8>> {
    #[cfg(unix)]
    {
        use std::io::{Read, Seek, SeekFrom};
        use std::os::unix::fs::FileExt;
        const PARALLEL_MIN: u64 = 16 << 20;
        let mut file = std::fs::File::open(path)?;
        let meta = file.metadata()?;
        if meta.is_file() && meta.len() >= PARALLEL_MIN && crate::pipeline::threads() > 1 {
            let len = usize::try_from(meta.len()).map_err(std::io::Error::other)?;
            let mut data = vec![0u8; len];
            let half = len / 2;
            let (first, second) = data.split_at_mut(half);
            let file_ref = &file;
            let (a, b) = std::thread::scope(|s| {
                let second_half = s.spawn(move || file_ref.read_exact_at(second, half as u64));
                let a = file_ref.read_exact_at(first, 0);
                (a, second_half.join())
            });
            if let (Ok(()), Ok(Ok(()))) = (a, b) {
                // Anything appended meanwhile is read too, as a sequential read would.
                file.seek(SeekFrom::Start(len as u64))?;
                file.read_to_end(&mut data)?;
                return Ok(data);
            }
        }
    }
    std::fs::read(path)
}

/// What one pass over a capture found, besides its datagrams (see [`scan`]).
#[derive(Debug)]
pub struct ScanSummary {
    /// The container format.
    pub format: FileFormat,
    /// Frames read before the end or the damage, UDP or not.
    pub frames: u64,
    /// UDP datagrams handed to the sink.
    pub datagrams: usize,
    /// Frames without a UDP datagram, by reason.
    pub skipped: Skipped,
    /// Damage that ended the file early (the datagrams before it were handed over).
    pub damage: Option<CaptureError>,
}

impl ScanSummary {
    /// What a pass found that handed `sent` datagrams to its sink.
    fn new(indexed: read::Indexed, sent: usize) -> Self {
        ScanSummary {
            format: indexed.format,
            frames: indexed.frames,
            datagrams: sent,
            skipped: indexed.skipped,
            damage: indexed.damage,
        }
    }
}

/// Indexes the capture file in `data` and hands its datagrams to `sink` in chunks of up to
/// `chunk`, in file order, each with the index of its first datagram, keeping none of them.
///
/// For one pass over a large capture (`bitlens check`): no memory for an index (its pages cost
/// a third of `check`'s time on 1M datagrams), and the work on a chunk can begin while the rest
/// is still being indexed. Payloads are [`Datagram::payload`] of `data`.
///
/// # Errors
/// As [`Capture::from_bytes`].
pub fn scan(
    name: &str,
    data: &[u8],
    chunk: usize,
    mut sink: impl FnMut(usize, &[Datagram]),
) -> Result<ScanSummary, CaptureError> {
    let mut sent = 0;
    let indexed = read::index_chunks(name, data, chunk, &mut |first, datagrams| {
        sent += datagrams.len();
        sink(first, datagrams);
    })?;
    Ok(ScanSummary::new(indexed, sent))
}

/// Reads a pcap file once, front to back, in windows of about `window` bytes, handing each
/// window's datagrams to `sink` with the index of the first and the window's bytes (their
/// payloads are [`Datagram::payload`] of those bytes); `sink` keeps both and returns a vector
/// and a buffer for the next window (of any contents and capacity: they are cleared). Memory
/// stays at a few windows whatever the file's size, and their pages are faulted in once, not
/// the whole file's.
///
/// Counts, frame numbers and damage are exactly those of [`Capture::open`]. `Ok(None)` when the
/// file is not a pcap file (pcapng): read it whole and use [`scan`].
///
/// # Errors
/// As [`Capture::open`].
pub fn stream_pcap(
    path: &Path,
    window: usize,
    mut sink: impl FnMut(usize, Vec<Datagram>, Vec<u8>) -> (Vec<Datagram>, Vec<u8>),
) -> Result<Option<ScanSummary>, CaptureError> {
    let name = path.display().to_string();
    let mut file = std::fs::File::open(path).map_err(|error| CaptureError::Io {
        file: name.clone(),
        error,
    })?;
    let mut sent = 0;
    let streamed = read::stream_pcap(&name, &mut file, window, &mut |first, datagrams, bytes| {
        sent += datagrams.len();
        sink(first, datagrams, bytes)
    })?;
    Ok(streamed.map(|indexed| ScanSummary::new(indexed, sent)))
}

impl Capture {
    /// Reads and indexes the capture file at `path`.
    ///
    /// # Errors
    /// [`CaptureError::Io`] if the file cannot be read; [`CaptureError::NotACapture`] (or a
    /// header error) if it is not a pcap or pcapng file. Damage after the file header is not an
    /// error: see [`Capture::damage`].
    pub fn open(path: impl AsRef<Path>) -> Result<Self, CaptureError> {
        let path = path.as_ref();
        let name = path.display().to_string();
        let data = read_file(path).map_err(|error| CaptureError::Io {
            file: name.clone(),
            error,
        })?;
        Self::from_bytes(name, data)
    }

    /// Indexes a capture held in memory; `name` is used in error messages.
    ///
    /// # Errors
    /// As [`Capture::open`], without the I/O.
    pub fn from_bytes(name: impl Into<String>, data: Vec<u8>) -> Result<Self, CaptureError> {
        let name = name.into();
        let indexed = read::index(&name, &data)?;
        Ok(Self {
            name,
            data,
            format: indexed.format,
            frames: indexed.frames,
            datagrams: indexed.datagrams,
            skipped: indexed.skipped,
            interfaces: indexed.interfaces,
            damage: indexed.damage,
        })
    }

    /// The file name given to [`Capture::open`] or [`Capture::from_bytes`].
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The container format.
    pub fn format(&self) -> FileFormat {
        self.format
    }

    /// The whole file.
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// Every UDP datagram, in file order.
    pub fn datagrams(&self) -> &[Datagram] {
        &self.datagrams
    }

    /// The UDP payload of `datagram` (only the bytes present; see [`Status`]). Empty for a
    /// datagram of another capture that does not fit this one.
    pub fn payload(&self, datagram: &Datagram) -> &[u8] {
        datagram.payload(&self.data)
    }

    /// Frames read before the end or the damage, UDP or not.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Frames without a UDP datagram, by reason.
    pub fn skipped(&self) -> &Skipped {
        &self.skipped
    }

    /// The capture interfaces (one for pcap; pcapng interfaces of all sections, in order).
    pub fn interfaces(&self) -> &[Interface] {
        &self.interfaces
    }

    /// The damage that stopped reading before the end of the file, if any.
    pub fn damage(&self) -> Option<&CaptureError> {
        self.damage.as_ref()
    }

    /// An empty capture that datagrams are appended to as they arrive ([`Capture::push`]): the
    /// live proxy's session, shown by the same inspector as a file.
    pub fn live(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            data: Vec::new(),
            format: FileFormat::Pcapng,
            frames: 0,
            datagrams: Vec::new(),
            skipped: Skipped::default(),
            interfaces: Vec::new(),
            damage: None,
        }
    }

    /// Appends a whole datagram to a [`Capture::live`] capture: its payload is copied to the end
    /// of [`Capture::data`], `frame` is kept as given.
    pub fn push(&mut self, mut datagram: Datagram, payload: &[u8]) {
        datagram.payload_start = self.data.len();
        datagram.payload_len = u32::try_from(payload.len()).unwrap_or(u32::MAX);
        self.data.extend_from_slice(payload);
        self.frames = self.frames.max(datagram.frame);
        self.datagrams.push(datagram);
    }
}

#[cfg(test)]
mod tests;
