//! Writing UDP datagrams as capture files: for `bitlens synth`, the live proxy's recording
//! (a comment on each frame) and tests.
//!
//! Headers come from `etherparse` (with correct IP and UDP checksums) and files from `pcap-file`'s
//! writers. Besides whole datagrams, a datagram can be written cut to a snap length
//! ([`SynthDatagram::truncated`]) or split into IPv4 fragments ([`SynthDatagram::fragmented`]),
//! to exercise the reader's [`Status::Truncated`](super::Status) and
//! [`Status::Fragment`](super::Status).

use std::borrow::Cow;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::time::Duration;

use etherparse::{IpFragOffset, IpNumber, Ipv4Header, PacketBuilder, UdpHeader};
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapTsResolution, PcapWriter};
use pcap_file::pcapng::blocks::enhanced_packet::{EnhancedPacketBlock, EnhancedPacketOption};
use pcap_file::pcapng::blocks::interface_description::{
    InterfaceDescriptionBlock, InterfaceDescriptionOption, InterfaceTsResolution,
};
use pcap_file::pcapng::blocks::opt_common::CommonOption;
use pcap_file::pcapng::{PcapNgWriteError, PcapNgWriter};
use pcap_file::{DataLink, Endianness};

use super::link::{ETHERTYPE_IPV4, ETHERTYPE_IPV6};
use super::{CaptureError, LinkType, Timestamp};

/// Snap length written in file headers (what tcpdump uses).
const SNAPLEN: u32 = 262_144;
/// Source MAC of synthesized Ethernet frames (locally administered).
const SRC_MAC: [u8; 6] = [0x02, 0x00, 0x00, 0x00, 0x00, 0x01];
/// Destination MAC of synthesized Ethernet frames (locally administered).
const DST_MAC: [u8; 6] = [0x02, 0x00, 0x00, 0x00, 0x00, 0x02];
/// ARPHRD_LOOPBACK: the Linux loopback device type in SLL / SLL2 headers.
const ARPHRD_LOOPBACK: u16 = 772;
/// TTL / hop limit of synthesized packets.
const TTL: u8 = 64;

/// The pcapng interface name of files written without one of their own.
const IF_NAME: &str = "bitlens0";

/// Timestamp resolution of a pcapng interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PcapngResolution {
    /// Microseconds (`if_tsresol` 6, the pcapng default).
    Micro,
    /// Nanoseconds (`if_tsresol` 9).
    Nano,
    /// Units of 2^-n seconds (`if_tsresol` 0x80 | n), n at most 29.
    PowerOfTwo(u8),
}

/// The file and link layer to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteFormat {
    /// pcap, Ethernet II frames between two fixed MAC addresses.
    PcapEthernet {
        /// Nanosecond timestamps (else microseconds, truncated).
        nanos: bool,
    },
    /// pcapng with one Ethernet interface.
    PcapngEthernet {
        /// The interface's timestamp resolution (times are truncated to it).
        resolution: PcapngResolution,
        /// The interface's `if_tsoffset` in seconds (written only when not 0).
        ts_offset_secs: i64,
    },
    /// pcap, Linux cooked v2 (LINKTYPE 276) frames of the loopback device (ARPHRD 772): what
    /// `tcpdump -i any` writes for 127.0.0.1 traffic.
    PcapSll2Loopback {
        /// Nanosecond timestamps (else microseconds, truncated).
        nanos: bool,
    },
    /// pcap, Ethernet frames with all-zero MAC addresses: what `tcpdump -i lo` writes on Linux.
    PcapEthernetLoopback {
        /// Nanosecond timestamps (else microseconds, truncated).
        nanos: bool,
    },
}

impl WriteFormat {
    fn link_type(self) -> LinkType {
        match self {
            Self::PcapSll2Loopback { .. } => LinkType::LINUX_SLL2,
            _ => LinkType::ETHERNET,
        }
    }
}

/// A UDP datagram to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SynthDatagram<'a> {
    /// Capture time.
    pub time: Timestamp,
    /// Source address and port.
    pub src: SocketAddr,
    /// Destination address and port (same IP version as `src`).
    pub dst: SocketAddr,
    /// UDP payload.
    pub payload: Cow<'a, [u8]>,
    /// Keep only this many bytes of the frame (link header included), as a snap length does.
    pub snaplen: Option<u32>,
    /// Split into IPv4 fragments of at most this many IP payload bytes (rounded down to a
    /// multiple of 8), each its own frame.
    pub fragment_size: Option<u16>,
}

impl<'a> SynthDatagram<'a> {
    /// A whole datagram.
    pub fn new(
        time: Timestamp,
        src: SocketAddr,
        dst: SocketAddr,
        payload: impl Into<Cow<'a, [u8]>>,
    ) -> Self {
        Self {
            time,
            src,
            dst,
            payload: payload.into(),
            snaplen: None,
            fragment_size: None,
        }
    }

    /// The same datagram with its frame cut to `snaplen` bytes.
    pub fn truncated(mut self, snaplen: u32) -> Self {
        self.snaplen = Some(snaplen);
        self
    }

    /// The same datagram split into IPv4 fragments of at most `size` IP payload bytes.
    pub fn fragmented(mut self, size: u16) -> Self {
        self.fragment_size = Some(size);
        self
    }
}

/// A capture file being written one datagram at a time: the file header goes out when the
/// writer is made and each datagram's frames when it is written, so memory does not grow with
/// the file (`bitlens synth` writes ten million datagrams this way).
///
/// A fragmented datagram takes one frame per fragment; every other datagram one frame.
pub struct CaptureWriter<W: Write> {
    out: Out<W>,
    format: WriteFormat,
    /// How many datagrams were written: the index of the next one, for errors.
    written: usize,
    /// The file name I/O errors give.
    name: String,
}

/// The `pcap-file` writer of a [`CaptureWriter`]'s format.
enum Out<W: Write> {
    Pcap(PcapWriter<W>),
    Pcapng(PcapNgWriter<W>),
}

impl<W: Write> CaptureWriter<W> {
    /// Writes the file header (and for pcapng the interface) of `format` to `out`.
    ///
    /// # Errors
    /// [`CaptureError::Io`] when `out` fails; [`CaptureError::Unwritable`] for a pcapng
    /// resolution of more than 2^-29.
    pub fn new(out: W, format: WriteFormat) -> Result<Self, CaptureError> {
        Self::named(out, format, "output".into(), IF_NAME)
    }

    /// [`CaptureWriter::new`] with the pcapng interface named `if_name` (`if_name`, what
    /// Wireshark shows as the interface; the live proxy's recording is `bitlens-proxy`). A
    /// pcap file has no interface names: there it is left out.
    ///
    /// # Errors
    /// As [`CaptureWriter::new`].
    pub fn with_interface(
        out: W,
        format: WriteFormat,
        if_name: &str,
    ) -> Result<Self, CaptureError> {
        Self::named(out, format, "output".into(), if_name)
    }

    fn named(
        out: W,
        format: WriteFormat,
        name: String,
        if_name: &str,
    ) -> Result<Self, CaptureError> {
        let io = |e: &dyn std::fmt::Display| CaptureError::Io {
            file: name.clone(),
            error: std::io::Error::other(e.to_string()),
        };
        let out = match format {
            WriteFormat::PcapngEthernet {
                resolution,
                ts_offset_secs,
            } => {
                let mut writer =
                    PcapNgWriter::with_endianness(out, Endianness::Little).map_err(|e| io(&e))?;
                let ts_resol = match resolution {
                    PcapngResolution::Micro => InterfaceTsResolution::MICRO,
                    PcapngResolution::Nano => InterfaceTsResolution::NANO,
                    PcapngResolution::PowerOfTwo(n) => InterfaceTsResolution::new(true, n)
                        .map_err(|e| CaptureError::Unwritable {
                            index: 0,
                            detail: format!("resolution 2^-{n}: {e}"),
                        })?,
                };
                let mut options = vec![
                    InterfaceDescriptionOption::IfName(if_name.to_owned().into()),
                    InterfaceDescriptionOption::IfTsResol(ts_resol),
                ];
                if ts_offset_secs != 0 {
                    options.push(InterfaceDescriptionOption::IfTsOffset(ts_offset_secs));
                }
                let mut idb = InterfaceDescriptionBlock::new(DataLink::ETHERNET, SNAPLEN);
                idb.options = options;
                writer.write_pcapng_block(idb).map_err(|e| io(&e))?;
                Out::Pcapng(writer)
            }
            WriteFormat::PcapEthernet { nanos }
            | WriteFormat::PcapSll2Loopback { nanos }
            | WriteFormat::PcapEthernetLoopback { nanos } => {
                let header = PcapHeader {
                    snaplen: SNAPLEN,
                    datalink: DataLink::from(format.link_type().0),
                    ts_resolution: if nanos {
                        PcapTsResolution::NanoSecond
                    } else {
                        PcapTsResolution::MicroSecond
                    },
                    endianness: Endianness::Little,
                    ..PcapHeader::default()
                };
                Out::Pcap(PcapWriter::with_header(out, header).map_err(|e| io(&e))?)
            }
        };
        Ok(CaptureWriter {
            out,
            format,
            written: 0,
            name,
        })
    }

    /// Writes the frames of one datagram.
    ///
    /// # Errors
    /// [`CaptureError::Unwritable`] (with the datagram's index among those written) for a
    /// datagram whose addresses mix IPv4 and IPv6, whose time does not fit the format (before
    /// the epoch or the interface offset, after 2106 for pcap), whose payload is too large for
    /// UDP, or fragments of an IPv6 datagram; [`CaptureError::Io`] when the output fails.
    pub fn write(&mut self, d: &SynthDatagram<'_>) -> Result<(), CaptureError> {
        self.write_commented(d, None)
    }

    /// [`CaptureWriter::write`] with `comment` on each frame of the datagram (pcapng's
    /// `opt_comment`, `frame.comment` in tshark); a pcap file has no comments: there it is
    /// left out. Every frame is whole in `W` once this returns, so a file cut after any of
    /// them reads back whole up to it; `W` decides when bytes reach the disk (wrap a file in a
    /// `BufWriter` and call [`CaptureWriter::flush`]).
    ///
    /// # Errors
    /// As [`CaptureWriter::write`]: nothing of a datagram that is
    /// [`CaptureError::Unwritable`] is written.
    pub fn write_commented(
        &mut self,
        d: &SynthDatagram<'_>,
        comment: Option<&str>,
    ) -> Result<(), CaptureError> {
        let index = self.written;
        let time = duration(index, d.time)?;
        let options = match comment {
            Some(c) => vec![EnhancedPacketOption::Common(CommonOption::Comment(
                c.into(),
            ))],
            None => vec![],
        };
        for (frame, original_len) in frames(index, self.format, d)? {
            match &mut self.out {
                Out::Pcapng(writer) => {
                    let epb = EnhancedPacketBlock {
                        interface_id: 0,
                        timestamp: time,
                        original_len,
                        data: Cow::Borrowed(&frame),
                        options: options.clone(),
                    };
                    writer.write_pcapng_block(epb).map_err(|e| match e {
                        PcapNgWriteError::Io(error) => CaptureError::Io {
                            file: self.name.clone(),
                            error,
                        },
                        e => CaptureError::Unwritable {
                            index,
                            detail: format!(
                                "{e}: {}",
                                std::error::Error::source(&e)
                                    .map(|s| s.to_string())
                                    .unwrap_or_default()
                            ),
                        },
                    })?;
                }
                Out::Pcap(writer) => {
                    let packet =
                        PcapPacket::new(time, original_len, frame.as_slice()).map_err(|e| {
                            CaptureError::Unwritable {
                                index,
                                detail: e.to_string(),
                            }
                        })?;
                    writer.write_packet(&packet).map_err(|e| CaptureError::Io {
                        file: self.name.clone(),
                        error: std::io::Error::other(e.to_string()),
                    })?;
                }
            }
        }
        self.written += 1;
        Ok(())
    }

    /// Writes out what `W` buffers.
    ///
    /// # Errors
    /// [`CaptureError::Io`] when the output fails.
    pub fn flush(&mut self) -> Result<(), CaptureError> {
        let flushed = match &mut self.out {
            Out::Pcap(writer) => writer
                .flush()
                .map_err(|e| std::io::Error::other(e.to_string())),
            Out::Pcapng(writer) => writer.get_mut().flush(),
        };
        flushed.map_err(|error| CaptureError::Io {
            file: self.name.clone(),
            error,
        })
    }

    /// Flushes the output and gives it back.
    ///
    /// # Errors
    /// [`CaptureError::Io`] when the flush fails.
    pub fn finish(self) -> Result<W, CaptureError> {
        let mut out = match self.out {
            Out::Pcap(writer) => writer.into_inner(),
            Out::Pcapng(writer) => writer.into_inner(),
        };
        out.flush().map_err(|error| CaptureError::Io {
            file: self.name,
            error,
        })?;
        Ok(out)
    }
}

impl CaptureWriter<BufWriter<File>> {
    /// Creates the capture file at `path` (buffered) and writes its header; I/O errors name
    /// `path`.
    ///
    /// # Errors
    /// As [`CaptureWriter::new`], and when the file cannot be created.
    pub fn create(path: impl AsRef<Path>, format: WriteFormat) -> Result<Self, CaptureError> {
        let name = path.as_ref().display().to_string();
        let file = File::create(path.as_ref()).map_err(|error| CaptureError::Io {
            file: name.clone(),
            error: crate::files::uncreatable(path.as_ref(), error),
        })?;
        Self::named(BufWriter::new(file), format, name, IF_NAME)
    }
}

/// Writes `datagrams` as a capture file in `format` to `out` (a [`CaptureWriter`] over a slice).
///
/// # Errors
/// As [`CaptureWriter::new`] and [`CaptureWriter::write`].
pub fn write_capture<W: Write>(
    out: W,
    format: WriteFormat,
    datagrams: &[SynthDatagram<'_>],
) -> Result<(), CaptureError> {
    let mut writer = CaptureWriter::new(out, format)?;
    for d in datagrams {
        writer.write(d)?;
    }
    writer.finish().map(drop)
}

/// Writes `datagrams` as a capture file in memory.
///
/// # Errors
/// As [`write_capture`].
pub fn to_bytes(
    format: WriteFormat,
    datagrams: &[SynthDatagram<'_>],
) -> Result<Vec<u8>, CaptureError> {
    let mut out = Vec::new();
    write_capture(&mut out, format, datagrams)?;
    Ok(out)
}

/// Writes `datagrams` as a capture file at `path`, as it goes ([`CaptureWriter::create`]); a
/// file that cannot be written whole is removed.
///
/// # Errors
/// As [`write_capture`]; I/O errors name `path`.
pub fn write_file(
    path: impl AsRef<Path>,
    format: WriteFormat,
    datagrams: &[SynthDatagram<'_>],
) -> Result<(), CaptureError> {
    let path = path.as_ref();
    let mut writer = CaptureWriter::create(path, format)?;
    let result = datagrams
        .iter()
        .try_for_each(|d| writer.write(d))
        .and_then(|()| writer.finish().map(drop));
    if result.is_err() {
        // Best effort: the error is what the caller needs to see.
        let _ = std::fs::remove_file(path);
    }
    result
}

fn duration(index: usize, time: Timestamp) -> Result<Duration, CaptureError> {
    let nanos = u128::try_from(time.as_nanos()).map_err(|_| CaptureError::Unwritable {
        index,
        detail: format!("time {time} is before 1970"),
    })?;
    let secs = u64::try_from(nanos / 1_000_000_000).map_err(|_| CaptureError::Unwritable {
        index,
        detail: format!("time {time} is too late"),
    })?;
    Ok(Duration::new(secs, (nanos % 1_000_000_000) as u32))
}

/// The frames of one datagram (several when fragmented), each with its original length.
fn frames(
    index: usize,
    format: WriteFormat,
    d: &SynthDatagram<'_>,
) -> Result<Vec<(Vec<u8>, u32)>, CaptureError> {
    let unwritable = |detail: String| CaptureError::Unwritable { index, detail };
    let packets = match d.fragment_size {
        None => vec![ip_packet(d).map_err(unwritable)?],
        Some(size) => ipv4_fragments(d, size).map_err(unwritable)?,
    };
    let mut out = Vec::with_capacity(packets.len());
    for ip in packets {
        let ethertype = match ip.first().map(|b| b >> 4) {
            Some(6) => ETHERTYPE_IPV6,
            _ => ETHERTYPE_IPV4,
        };
        let mut frame = link_header(format, ethertype);
        frame.extend_from_slice(&ip);
        let original_len =
            u32::try_from(frame.len()).map_err(|_| unwritable("frame too long".into()))?;
        if let Some(snaplen) = d.snaplen {
            frame.truncate(snaplen as usize);
        }
        out.push((frame, original_len));
    }
    Ok(out)
}

/// The link header of a frame in `format` carrying `ethertype`.
fn link_header(format: WriteFormat, ethertype: u16) -> Vec<u8> {
    let mut h = Vec::with_capacity(20);
    match format {
        WriteFormat::PcapEthernet { .. } | WriteFormat::PcapngEthernet { .. } => {
            h.extend_from_slice(&DST_MAC);
            h.extend_from_slice(&SRC_MAC);
            h.extend_from_slice(&ethertype.to_be_bytes());
        }
        WriteFormat::PcapEthernetLoopback { .. } => {
            h.extend_from_slice(&[0; 12]);
            h.extend_from_slice(&ethertype.to_be_bytes());
        }
        WriteFormat::PcapSll2Loopback { .. } => {
            h.extend_from_slice(&ethertype.to_be_bytes()); // protocol
            h.extend_from_slice(&[0, 0]); // reserved
            h.extend_from_slice(&1u32.to_be_bytes()); // interface index of lo
            h.extend_from_slice(&ARPHRD_LOOPBACK.to_be_bytes());
            h.push(0); // packet type: to us
            h.push(6); // address length
            h.extend_from_slice(&[0; 8]); // address
        }
    }
    h
}

/// An IP packet holding the whole UDP datagram, checksums computed.
fn ip_packet(d: &SynthDatagram<'_>) -> Result<Vec<u8>, String> {
    let builder = match (d.src.ip(), d.dst.ip()) {
        (IpAddr::V4(s), IpAddr::V4(t)) => PacketBuilder::ipv4(s.octets(), t.octets(), TTL),
        (IpAddr::V6(s), IpAddr::V6(t)) => PacketBuilder::ipv6(s.octets(), t.octets(), TTL),
        _ => {
            return Err(format!(
                "{} and {} are of different IP versions",
                d.src, d.dst
            ));
        }
    };
    let builder = builder.udp(d.src.port(), d.dst.port());
    let mut out = Vec::with_capacity(builder.size(d.payload.len()));
    builder
        .write(&mut out, &d.payload)
        .map_err(|e| e.to_string())?;
    Ok(out)
}

/// IPv4 packets, each holding a piece of the UDP datagram (header + payload) of at most `size`
/// bytes, rounded down to a multiple of 8 (the fragment offset unit).
fn ipv4_fragments(d: &SynthDatagram<'_>, size: u16) -> Result<Vec<Vec<u8>>, String> {
    let (IpAddr::V4(src), IpAddr::V4(dst)) = (d.src.ip(), d.dst.ip()) else {
        return Err("only IPv4 datagrams can be written as fragments".into());
    };
    let size = usize::from(size) / 8 * 8;
    if size == 0 {
        return Err("fragment size must be at least 8".into());
    }
    let mut whole = Ipv4Header::new(0, TTL, IpNumber::UDP, src.octets(), dst.octets())
        .map_err(|e| e.to_string())?;
    let udp = UdpHeader::with_ipv4_checksum(d.src.port(), d.dst.port(), &whole, &d.payload)
        .map_err(|e| e.to_string())?;
    let mut datagram = udp.to_bytes().to_vec();
    datagram.extend_from_slice(&d.payload);
    // Fragments of one datagram share an identification; vary it per datagram.
    whole.identification = (d.time.as_nanos() as u16) | 1;

    let mut out = Vec::new();
    for (i, piece) in datagram.chunks(size).enumerate() {
        let offset = i * size;
        let mut h = whole.clone();
        h.total_len =
            u16::try_from(Ipv4Header::MIN_LEN + piece.len()).map_err(|e| e.to_string())?;
        h.more_fragments = offset + piece.len() < datagram.len();
        h.fragment_offset = u16::try_from(offset / 8)
            .ok()
            .and_then(|o| IpFragOffset::try_new(o).ok())
            .ok_or_else(|| "fragment offset too large".to_string())?;
        h.header_checksum = h.calc_header_checksum();
        let mut packet = h.to_bytes().to_vec();
        packet.extend_from_slice(piece);
        out.push(packet);
    }
    Ok(out)
}
