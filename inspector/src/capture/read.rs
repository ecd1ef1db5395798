//! Walking pcap records and pcapng blocks (through `pcap-file`) and indexing their frames.
//!
//! Every record and block length is checked against [`MAX_RECORD_LEN`] and against what remains of
//! the file before the parser sees it, so a lying header gives a precise error, never a large
//! allocation. Parsing is over the borrowed file bytes: payloads are kept as byte offsets.

use pcap_file::Endianness;
use pcap_file::pcap::{PcapParseError, PcapParser, PcapTsResolution};
use pcap_file::pcapng::blocks::ENHANCED_PACKET_BLOCK;
use pcap_file::pcapng::blocks::PACKET_BLOCK;
use pcap_file::pcapng::blocks::SECTION_HEADER_BLOCK;
use pcap_file::pcapng::blocks::SIMPLE_PACKET_BLOCK;
use pcap_file::pcapng::blocks::interface_description::{
    InterfaceDescriptionBlock, InterfaceDescriptionOption,
};
use pcap_file::pcapng::blocks::{
    INTERFACE_DESCRIPTION_BLOCK, INTERFACE_STATISTIC_BLOCK, NAME_RESOLUTION_BLOCK,
};
use pcap_file::pcapng::{
    Block, BlockContentParseError, BlockConversionError, ContentValidationError, PcapNgFormatError,
    PcapNgParseError, PcapNgParser, StateUpdateError,
};
use std::io::Read;

use super::{
    CaptureError, Datagram, FileFormat, Flaw, Interface, LinkType, Location, MAX_RECORD_LEN,
    Skipped, TimeResolution, Timestamp, link, net,
};

/// pcap magic numbers, as the first four bytes read big-endian.
const PCAP_MICRO_BE: u32 = 0xA1B2_C3D4;
const PCAP_MICRO_LE: u32 = 0xD4C3_B2A1;
const PCAP_NANO_BE: u32 = 0xA1B2_3C4D;
const PCAP_NANO_LE: u32 = 0x4D3C_B2A1;
/// pcapng section header byte-order magic, read big-endian.
const BYTE_ORDER_BE: u32 = 0x1A2B_3C4D;
const BYTE_ORDER_LE: u32 = 0x4D3C_2B1A;

/// pcap file header length.
const PCAP_HEADER_LEN: usize = 24;
/// pcap record header: seconds, fraction, captured length, original length (4 bytes each).
const PCAP_RECORD_HEADER_LEN: usize = 16;
/// pcapng block header: type and total length (4 bytes each).
const BLOCK_HEADER_LEN: usize = 8;
/// Smallest pcapng block: header and trailing length.
const BLOCK_MIN_LEN: usize = 12;
/// Bytes before the packet data in an enhanced packet block body (and an obsolete packet block).
const EPB_FIXED_LEN: usize = 20;
/// Offset of the captured length in an enhanced packet block body (and an obsolete packet
/// block's): after the interface id and the two timestamp words.
const EPB_CAPTURED_LEN_AT: usize = 12;
/// Bytes before the packet data in a simple packet block body.
const SPB_FIXED_LEN: usize = 4;

/// What indexing a file produced.
pub(crate) struct Indexed {
    pub(crate) format: FileFormat,
    pub(crate) frames: u64,
    pub(crate) datagrams: Vec<Datagram>,
    pub(crate) skipped: Skipped,
    pub(crate) interfaces: Vec<Interface>,
    pub(crate) damage: Option<CaptureError>,
}

/// Reads a big-endian `u32` at `at`.
fn be32(data: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(
        data.get(at..at.checked_add(4)?)?.try_into().ok()?,
    ))
}

/// Reads a `u32` at `at` in the given byte order.
fn u32_in(data: &[u8], at: usize, endianness: Endianness) -> Option<u32> {
    let v = be32(data, at)?;
    Some(if endianness.is_big() {
        v
    } else {
        v.swap_bytes()
    })
}

/// Indexes a whole capture file.
pub(crate) fn index(name: &str, data: &[u8]) -> Result<Indexed, CaptureError> {
    index_with(name, data, None)
}

/// Hands the datagrams of a capture file to `sink` in chunks of up to `chunk`, in file order,
/// keeping none: the result's `datagrams` is empty. `sink` gets the index of the chunk's first
/// datagram.
pub(crate) fn index_chunks(
    name: &str,
    data: &[u8],
    chunk: usize,
    sink: &mut dyn FnMut(usize, &[Datagram]),
) -> Result<Indexed, CaptureError> {
    index_with(
        name,
        data,
        Some(Chunked {
            chunk: chunk.max(1),
            sink,
            sent: 0,
        }),
    )
}

/// Reads from `input` until `buf` holds `want` bytes or the input ends; true at the end.
/// (`read_to_end` through `take` reads straight into the vector's spare room.)
fn fill(buf: &mut Vec<u8>, input: &mut dyn Read, want: usize) -> std::io::Result<bool> {
    let missing = want.saturating_sub(buf.len());
    if missing == 0 {
        return Ok(false);
    }
    buf.reserve(missing);
    let got = input.take(missing as u64).read_to_end(buf)?;
    Ok(got < missing)
}

/// Where [`stream_pcap`] hands each window: the index of its first datagram, the datagrams and
/// the window, both kept; returns a vector and a buffer for the next window (any contents: they
/// are cleared).
pub(crate) type WindowSink<'s> =
    dyn FnMut(usize, Vec<Datagram>, Vec<u8>) -> (Vec<Datagram>, Vec<u8>) + 's;

/// Walks a pcap file read from `input` in windows of about `window` bytes, handing each
/// window's datagrams to `sink` with the window itself (payload offsets are relative to it) and
/// the index of its first datagram. `sink` keeps the window and gives back a buffer for the
/// next one. Memory stays at a few windows whatever the file's size, and the windows' pages are
/// faulted in once instead of the whole file's (`bitlens check`, BENCHMARKS.md section 5).
///
/// Records, damage and frame numbers are exactly those of [`index`] over the whole file: a
/// record cut by a window's end is read again with the next window, and only a record cut by
/// the end of the file is damage. Returns `Ok(None)`, having read only the start of `input`,
/// when the file is not a pcap file (pcapng is walked whole, by [`index`]).
pub(crate) fn stream_pcap(
    name: &str,
    input: &mut dyn Read,
    window: usize,
    sink: &mut WindowSink<'_>,
) -> Result<Option<Indexed>, CaptureError> {
    let io = |error| CaptureError::Io {
        file: name.to_owned(),
        error,
    };
    let mut buf = Vec::with_capacity(window);
    let mut eof = fill(&mut buf, input, window.max(PCAP_HEADER_LEN)).map_err(io)?;
    let magic = be32(&buf, 0).unwrap_or(0);
    if !matches!(
        magic,
        PCAP_MICRO_BE | PCAP_MICRO_LE | PCAP_NANO_BE | PCAP_NANO_LE
    ) {
        return Ok(None);
    }
    let (mut frames, mut skipped, mut interfaces) = (0, Skipped::default(), Vec::new());
    let mut datagrams = Vec::new();
    let (mut base, mut from, mut sent) = (0usize, PCAP_HEADER_LEN, 0usize);
    let mut parser_format = None;
    let mut tail = Vec::new();
    loop {
        let mut ix = Indexer {
            name,
            data: &buf,
            frames,
            datagrams: std::mem::take(&mut datagrams),
            skipped: std::mem::take(&mut skipped),
            interfaces: std::mem::take(&mut interfaces),
            chunked: None,
            base,
            eof,
            stopped_at: None,
        };
        let (format, parser) = match parser_format.take() {
            Some(known) => known,
            None => ix.pcap_header()?,
        };
        let damage = ix.pcap_records(&parser, from);
        let stopped = ix.stopped_at;
        (frames, datagrams, skipped, interfaces) =
            (ix.frames, ix.datagrams, ix.skipped, ix.interfaces);
        // More to read: a record cut by the window's end, or a window that ended on a record
        // boundary before the file did.
        let more = damage.is_none() && (stopped.is_some() || !eof);
        let keep = stopped.unwrap_or(buf.len());
        tail.clear();
        tail.extend_from_slice(&buf[keep..]);
        let first = sent;
        sent += datagrams.len();
        (datagrams, buf) = sink(first, datagrams, buf);
        datagrams.clear();
        if !more {
            return Ok(Some(Indexed {
                format,
                frames,
                datagrams: Vec::new(),
                skipped,
                interfaces,
                damage,
            }));
        }
        // The cut record starts the next window; it grows past `window` only for a record
        // longer than that (at most MAX_RECORD_LEN, checked before it is read).
        base += keep;
        from = 0;
        buf.clear();
        buf.extend_from_slice(&tail);
        let want = buf.len() + window;
        eof = fill(&mut buf, input, want).map_err(io)?;
        parser_format = Some((format, parser));
    }
}

/// Where an indexer streaming its datagrams sends them.
struct Chunked<'s> {
    chunk: usize,
    sink: &'s mut dyn FnMut(usize, &[Datagram]),
    /// Datagrams sent so far.
    sent: usize,
}

fn index_with(
    name: &str,
    data: &[u8],
    chunked: Option<Chunked<'_>>,
) -> Result<Indexed, CaptureError> {
    let magic = be32(data, 0).unwrap_or(0);
    let mut ix = Indexer {
        name,
        data,
        frames: 0,
        datagrams: Vec::with_capacity(chunked.as_ref().map_or(0, |c| c.chunk)),
        skipped: Skipped::default(),
        interfaces: Vec::new(),
        chunked,
        base: 0,
        eof: true,
        stopped_at: None,
    };
    let (format, damage) = match magic {
        PCAP_MICRO_BE | PCAP_MICRO_LE | PCAP_NANO_BE | PCAP_NANO_LE => ix.pcap()?,
        SECTION_HEADER_BLOCK => (FileFormat::Pcapng, ix.pcapng()?),
        _ => {
            return Err(CaptureError::NotACapture {
                file: name.to_owned(),
                magic,
                len: data.len() as u64,
            });
        }
    };
    ix.flush();
    let mut datagrams = ix.datagrams;
    datagrams.shrink_to_fit();
    Ok(Indexed {
        format,
        frames: ix.frames,
        datagrams,
        skipped: ix.skipped,
        interfaces: ix.interfaces,
        damage,
    })
}

/// The [`Location`] of an error at `offset`, built only when called: one `String` per record
/// would cost more than indexing the record.
fn location(name: &str, offset: usize, frame: Option<u64>) -> impl Fn() -> Location + '_ {
    move || Location {
        file: name.to_owned(),
        frame,
        offset: offset as u64,
    }
}

struct Indexer<'a, 's> {
    name: &'a str,
    data: &'a [u8],
    frames: u64,
    datagrams: Vec<Datagram>,
    skipped: Skipped,
    interfaces: Vec<Interface>,
    /// Set when the datagrams go to a sink in chunks instead of staying in `datagrams`.
    chunked: Option<Chunked<'s>>,
    /// File offset of `data[0]` (not 0 for a window of a streamed file: [`stream_pcap`]).
    base: usize,
    /// Whether `data` runs to the end of the file. When it does not, a record cut by the end
    /// of `data` stops the walk at its start (`stopped_at`) instead of being damage.
    eof: bool,
    /// Where a walk over a window stopped for more data.
    stopped_at: Option<usize>,
}

impl Indexer<'_, '_> {
    /// Sends the datagrams found since the last chunk to the sink, if there is one.
    fn flush(&mut self) {
        if let Some(c) = &mut self.chunked
            && !self.datagrams.is_empty()
        {
            (c.sink)(c.sent, &self.datagrams);
            c.sent += self.datagrams.len();
            self.datagrams.clear();
        }
    }

    fn at(&self, offset: usize, frame: Option<u64>) -> Location {
        Location {
            file: self.name.to_owned(),
            frame,
            offset: offset as u64,
        }
    }

    /// Numbers the next frame and indexes its datagram, if it has one. `start` is the offset of
    /// the frame's first byte in the file, `len` the captured length (already checked in bounds).
    fn frame(
        &mut self,
        interface: u32,
        time: Timestamp,
        start: usize,
        len: usize,
        original_len: u32,
    ) {
        self.frames += 1;
        let link_type = self
            .interfaces
            .get(interface as usize)
            .map_or(LinkType(u32::MAX), |i| i.link_type);
        let Some(frame) = start
            .checked_add(len)
            .and_then(|end| self.data.get(start..end))
        else {
            self.skipped.add(super::SkipReason::TruncatedHeader);
            return;
        };
        let cut = (len as u64) < u64::from(original_len);
        let udp = link::ip_offset(link_type, frame).and_then(|ip_at| net::udp(frame, ip_at, cut));
        match udp {
            Ok(udp) => self.datagrams.push(Datagram {
                frame: self.frames,
                time,
                src: udp.src,
                dst: udp.dst,
                captured_len: u32::try_from(len).unwrap_or(u32::MAX),
                original_len,
                status: udp.status,
                // The field's offset in the file, not the frame (nor a window of the file).
                flaw: udp.flaw.map(|flaw| Flaw {
                    offset: (self.base + start) as u64 + flaw.offset,
                    ..flaw
                }),
                interface,
                link_type,
                payload_start: start + udp.payload.start,
                payload_len: u32::try_from(udp.payload.len()).unwrap_or(0),
                udp_len: udp.udp_len,
                header_len: udp.header_len,
            }),
            Err(super::SkipReason::UnsupportedLinkType) => self.skipped.add_link_type(link_type),
            Err(reason) => self.skipped.add(reason),
        }
        if self
            .chunked
            .as_ref()
            .is_some_and(|c| self.datagrams.len() >= c.chunk)
        {
            self.flush();
        }
    }

    /// Walks a pcap file. The outer `Err` is a file header error; the inner option is damage.
    fn pcap(&mut self) -> Result<(FileFormat, Option<CaptureError>), CaptureError> {
        let (format, parser) = self.pcap_header()?;
        Ok((format, self.pcap_records(&parser, PCAP_HEADER_LEN)))
    }

    /// Reads the pcap file header at the start of `data`; its interface becomes interface 0.
    fn pcap_header(&mut self) -> Result<(FileFormat, PcapParser), CaptureError> {
        let data = self.data;
        let (_, parser) = PcapParser::new(data).map_err(|e| match e {
            PcapParseError::IncompleteBuffer(..) => CaptureError::TruncatedHeader {
                at: self.at(0, None),
                needed: PCAP_HEADER_LEN as u64,
                available: data.len() as u64,
            },
            PcapParseError::Validation(_) => CaptureError::NotACapture {
                file: self.name.to_owned(),
                magic: be32(data, 0).unwrap_or(0),
                len: data.len() as u64,
            },
        })?;
        let header = parser.header();
        let nanos = header.ts_resolution == PcapTsResolution::NanoSecond;
        let format = FileFormat::Pcap {
            nanos,
            big_endian: header.endianness.is_big(),
        };
        self.interfaces.push(Interface {
            link_type: LinkType(u32::from(header.datalink)),
            resolution: TimeResolution::Decimal(if nanos { 9 } else { 6 }),
            ts_offset_secs: 0,
            snaplen: header.snaplen,
            name: None,
        });
        Ok((format, parser))
    }

    /// Walks the pcap records of `data` from `from`; returns the damage that ends the file, if
    /// any. Without `eof`, a record cut by the end of `data` sets `stopped_at` to its start.
    fn pcap_records(&mut self, parser: &PcapParser, from: usize) -> Option<CaptureError> {
        let data = self.data;
        let header = parser.header();
        let frac_unit: i128 = if header.ts_resolution == PcapTsResolution::NanoSecond {
            1
        } else {
            1000
        };
        let mut rest = data.get(from..).unwrap_or(&[]);
        while !rest.is_empty() {
            let pos = data.len() - rest.len();
            let at = location(self.name, self.base + pos, Some(self.frames + 1));
            let Some(incl_len) = u32_in(rest, 8, header.endianness) else {
                if !self.eof {
                    self.stopped_at = Some(pos);
                    return None;
                }
                let (needed, available) = (PCAP_RECORD_HEADER_LEN as u64, rest.len() as u64);
                return Some(CaptureError::TruncatedRecord {
                    at: at(),
                    needed,
                    available,
                    pcapng: false,
                });
            };
            // The whole record, its header included, as a pcapng block length counts it: in the
            // limit, and in the messages of both a record too long and one cut short.
            let record_len = PCAP_RECORD_HEADER_LEN as u64 + u64::from(incl_len);
            if record_len > MAX_RECORD_LEN {
                return Some(CaptureError::RecordTooLong {
                    at: at(),
                    claimed: record_len,
                    pcapng: false,
                });
            }
            let record_len = record_len as usize;
            if record_len > rest.len() {
                if !self.eof {
                    self.stopped_at = Some(pos);
                    return None;
                }
                let (needed, available) = (record_len as u64, rest.len() as u64);
                return Some(CaptureError::TruncatedRecord {
                    at: at(),
                    needed,
                    available,
                    pcapng: false,
                });
            }
            // Raw: timestamps and lengths are taken as written, like Wireshark does, rather than
            // rejecting a fraction >= 1 s or a captured length above the snap length.
            match parser.next_raw_packet(rest) {
                Ok((next, raw)) => {
                    let time = match u32::try_from(i128::from(raw.ts_frac) * frac_unit) {
                        Ok(nanos) => Timestamp::from_secs_nanos(i64::from(raw.ts_sec), nanos),
                        Err(_) => Timestamp::from_nanos(
                            i128::from(raw.ts_sec) * 1_000_000_000
                                + i128::from(raw.ts_frac) * frac_unit,
                        ),
                    };
                    let start = pos + PCAP_RECORD_HEADER_LEN;
                    self.frame(0, time, start, raw.data.len(), raw.orig_len);
                    rest = next;
                }
                Err(e) => {
                    return Some(CaptureError::MalformedBlock {
                        at: at(),
                        detail: e.to_string(),
                    });
                }
            }
        }
        None
    }

    /// Walks a pcapng file. The outer `Err` is a first-section-header error; the option is damage.
    fn pcapng(&mut self) -> Result<Option<CaptureError>, CaptureError> {
        let data = self.data;
        if let Some(damage) = self.check_block(data, 0, Endianness::Big) {
            return Err(damage);
        }
        let (mut rest, mut parser) =
            PcapNgParser::new(data).map_err(|e| self.ng_error(e, 0, None, SECTION_HEADER_BLOCK))?;
        // Interface ids restart at 0 in each section; ours run on over the file.
        let mut section_base = 0usize;

        while !rest.is_empty() {
            let pos = data.len() - rest.len();
            if let Some(damage) = self.check_block(rest, pos, parser.state().endianness()) {
                return Ok(Some(damage));
            }
            let block_type = u32_in(rest, 0, parser.state().endianness()).unwrap_or(0);
            let frame = is_packet_block(block_type).then_some(self.frames + 1);
            if let Some(damage) = self.check_captured_len(rest, pos, parser.state().endianness()) {
                return Ok(Some(damage));
            }
            match parser.next_block(rest) {
                Ok((next, block)) => {
                    match block {
                        Block::SectionHeader(_) => section_base = self.interfaces.len(),
                        Block::InterfaceDescription(idb) => self.interfaces.push(interface(&idb)),
                        Block::EnhancedPacket(epb) => {
                            let interface = section_base.saturating_add(epb.interface_id as usize);
                            let start = pos + BLOCK_HEADER_LEN + EPB_FIXED_LEN;
                            self.frame(
                                u32::try_from(interface).unwrap_or(u32::MAX),
                                duration_time(epb.timestamp),
                                start,
                                epb.data.len(),
                                epb.original_len,
                            );
                        }
                        Block::Packet(pb) => {
                            let interface =
                                section_base.saturating_add(usize::from(pb.interface_id));
                            let start = pos + BLOCK_HEADER_LEN + EPB_FIXED_LEN;
                            self.frame(
                                u32::try_from(interface).unwrap_or(u32::MAX),
                                duration_time(pb.timestamp),
                                start,
                                pb.data.len(),
                                pb.original_len,
                            );
                        }
                        Block::SimplePacket(spb) => {
                            // No timestamp in a simple packet block: Wireshark shows the epoch.
                            let start = pos + BLOCK_HEADER_LEN + SPB_FIXED_LEN;
                            let interface = u32::try_from(section_base).unwrap_or(u32::MAX);
                            self.frame(
                                interface,
                                Timestamp::default(),
                                start,
                                spb.data.len(),
                                spb.original_len,
                            );
                        }
                        _ => {}
                    }
                    rest = next;
                }
                Err(e) => return Ok(Some(self.ng_error(e, pos, frame, block_type))),
            }
        }
        Ok(None)
    }

    /// Checks the length of the block at the start of `rest` (at `pos` in the file) before the
    /// parser sees it.
    fn check_block(&self, rest: &[u8], pos: usize, endianness: Endianness) -> Option<CaptureError> {
        let available = rest.len() as u64;
        let block_type = u32_in(rest, 0, endianness);
        let frame = block_type
            .filter(|&t| is_packet_block(t))
            .map(|_| self.frames + 1);
        let at = location(self.name, pos, frame);
        if rest.len() < BLOCK_MIN_LEN {
            return Some(if pos == 0 {
                CaptureError::TruncatedHeader {
                    at: at(),
                    needed: 28,
                    available,
                }
            } else {
                CaptureError::TruncatedRecord {
                    at: at(),
                    needed: BLOCK_MIN_LEN as u64,
                    available,
                    pcapng: true,
                }
            });
        }
        let len = if block_type == Some(SECTION_HEADER_BLOCK) {
            // A section header states its own byte order.
            match be32(rest, 8) {
                Some(BYTE_ORDER_BE) => be32(rest, 4),
                Some(BYTE_ORDER_LE) => be32(rest, 4).map(u32::swap_bytes),
                magic => {
                    return Some(CaptureError::BadMagic {
                        at: at(),
                        magic: magic.unwrap_or(0),
                    });
                }
            }
        } else {
            u32_in(rest, 4, endianness)
        };
        let len = u64::from(len.unwrap_or(0));
        if len > MAX_RECORD_LEN {
            return Some(CaptureError::RecordTooLong {
                at: at(),
                claimed: len,
                pcapng: true,
            });
        }
        if len > available {
            return Some(if pos == 0 {
                CaptureError::TruncatedHeader {
                    at: at(),
                    needed: len,
                    available,
                }
            } else {
                CaptureError::TruncatedRecord {
                    at: at(),
                    needed: len,
                    available,
                    pcapng: true,
                }
            });
        }
        None
    }

    /// Checks the captured length of the (enhanced or obsolete) packet block at the start of
    /// `rest`, whose block length [`Indexer::check_block`] has checked, against the bytes its
    /// block holds for packet data. `pcap-file` compares it with the original length first, and
    /// 0xFFFFFFFF came out as "original length lower than its actual length".
    fn check_captured_len(
        &self,
        rest: &[u8],
        pos: usize,
        endianness: Endianness,
    ) -> Option<CaptureError> {
        let name = match u32_in(rest, 0, endianness)? {
            ENHANCED_PACKET_BLOCK => "enhanced packet block",
            PACKET_BLOCK => "packet block",
            _ => return None,
        };
        let block_len = u32_in(rest, 4, endianness)? as usize;
        let captured = u32_in(rest, BLOCK_HEADER_LEN + EPB_CAPTURED_LEN_AT, endianness)?;
        // Header, fixed fields, data (padded to 4 bytes), options, trailing length.
        let room = block_len.checked_sub(BLOCK_HEADER_LEN + EPB_FIXED_LEN + 4)?;
        (captured as usize > room).then(|| CaptureError::MalformedBlock {
            at: self.at(pos, Some(self.frames + 1)),
            detail: format!(
                "{name} claims {captured} captured bytes, more than the {room} its \
                 {block_len}-byte block holds for packet data"
            ),
        })
    }

    /// Maps a `pcap-file` pcapng error of the block of type `block_type` to ours, in our own
    /// words (the block, what was wrong).
    fn ng_error(
        &self,
        e: PcapNgParseError,
        pos: usize,
        frame: Option<u64>,
        block_type: u32,
    ) -> CaptureError {
        let at = self.at(pos, frame);
        match e {
            PcapNgParseError::IncompleteBuffer(needed, available) => {
                CaptureError::TruncatedRecord {
                    at,
                    needed: needed as u64,
                    available: available as u64,
                    pcapng: true,
                }
            }
            PcapNgParseError::InvalidFormat(PcapNgFormatError::InvalidMagicNumber(magic)) => {
                CaptureError::BadMagic { at, magic }
            }
            PcapNgParseError::InvalidFormat(f) => CaptureError::MalformedBlock {
                at,
                detail: format_detail(&f, block_type),
            },
            PcapNgParseError::BlockConversion(c)
            | PcapNgParseError::StateUpdate(StateUpdateError::BlockConversion(c)) => {
                conversion_error(at, &c)
            }
        }
    }
}

/// The name of a pcapng block type, as the specification calls it.
fn block_name(block_type: u32) -> String {
    match block_type {
        SECTION_HEADER_BLOCK => "section header block".into(),
        INTERFACE_DESCRIPTION_BLOCK => "interface description block".into(),
        PACKET_BLOCK => "packet block".into(),
        SIMPLE_PACKET_BLOCK => "simple packet block".into(),
        NAME_RESOLUTION_BLOCK => "name resolution block".into(),
        INTERFACE_STATISTIC_BLOCK => "interface statistics block".into(),
        ENHANCED_PACKET_BLOCK => "enhanced packet block".into(),
        other => format!("block of type {other:#010x}"),
    }
}

/// What is wrong with the lengths of a block of type `block_type`, said as bitlens's other
/// capture errors say it (`pcap-file`'s own wording, "Block length fields don't match:
/// initial 48B, trailing 52B", is not passed through).
fn format_detail(f: &PcapNgFormatError, block_type: u32) -> String {
    let block = block_name(block_type);
    let bytes = |n: u64| crate::words::count(n, "byte");
    match f {
        PcapNgFormatError::MissingSectionHeader => {
            "the file does not start with a section header block".into()
        }
        PcapNgFormatError::InvalidMagicNumber(magic) => {
            format!("{block} has the unknown byte-order magic {magic:#010x}")
        }
        PcapNgFormatError::BlockNotAligned(len) => {
            format!("{block} claims {}, not a multiple of 4", bytes(*len as u64))
        }
        PcapNgFormatError::BlockTooShort(min, len) => {
            format!(
                "{block} claims {}, fewer than the {min} it needs",
                bytes(*len as u64)
            )
        }
        PcapNgFormatError::BlockLengthMismatch(start, end) => format!(
            "{block} claims {} at its start and {end} at its end (they must agree)",
            bytes(u64::from(*start))
        ),
        PcapNgFormatError::InvalidBlockLength { expected, actual } => {
            format!(
                "{block} claims {}, but its contents take {expected}",
                bytes(u64::from(*actual))
            )
        }
    }
}

/// A block content error: an unknown interface gets its own variant, the rest their detail.
fn conversion_error(at: Location, c: &BlockConversionError) -> CaptureError {
    match c.source.as_ref() {
        BlockContentParseError::Validation(ContentValidationError::InvalidInterfaceId(
            interface,
        )) => {
            let interface = *interface;
            CaptureError::UnknownInterface { at, interface }
        }
        source => CaptureError::MalformedBlock {
            at,
            detail: format!("{c}: {source}"),
        },
    }
}

fn is_packet_block(block_type: u32) -> bool {
    matches!(
        block_type,
        ENHANCED_PACKET_BLOCK | PACKET_BLOCK | SIMPLE_PACKET_BLOCK
    )
}

/// `pcap-file` 3.0 decodes pcapng timestamps with the interface's `if_tsresol` and `if_tsoffset`
/// (2.0.0 read them all as nanoseconds); the `Duration` is exact to the nanosecond.
fn duration_time(d: std::time::Duration) -> Timestamp {
    Timestamp::from_nanos(i128::try_from(d.as_nanos()).unwrap_or(i128::MAX))
}

fn interface(idb: &InterfaceDescriptionBlock<'_>) -> Interface {
    let resolution = idb.ts_resolution();
    let resolution = if resolution.is_bin() {
        TimeResolution::Binary(resolution.resolution())
    } else {
        TimeResolution::Decimal(resolution.resolution())
    };
    let name = idb.options.iter().find_map(|o| match o {
        InterfaceDescriptionOption::IfName(name) => Some(name.to_string()),
        _ => None,
    });
    Interface {
        link_type: LinkType(u32::from(idb.linktype)),
        resolution,
        ts_offset_secs: idb.ts_offset(),
        snaplen: idb.snaplen,
        name,
    }
}

/// A little-endian pcap file header for `link` (fuzzing and tests).
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn pcap_header(link: LinkType, nanos: bool) -> Vec<u8> {
    let magic: u32 = if nanos { 0xA1B2_3C4D } else { 0xA1B2_C3D4 };
    let mut h = Vec::with_capacity(PCAP_HEADER_LEN);
    h.extend_from_slice(&magic.to_le_bytes());
    h.extend_from_slice(&2u16.to_le_bytes());
    h.extend_from_slice(&4u16.to_le_bytes());
    h.extend_from_slice(&[0; 8]);
    h.extend_from_slice(&262_144u32.to_le_bytes());
    h.extend_from_slice(&link.0.to_le_bytes());
    h
}

/// A little-endian pcapng section header and one interface of `link` (fuzzing and tests).
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn pcapng_prefix(link: LinkType) -> Vec<u8> {
    let mut v = Vec::with_capacity(48);
    // Section header block: type, length 28, byte-order magic, version 1.0, section length -1.
    for word in [SECTION_HEADER_BLOCK, 28, BYTE_ORDER_BE] {
        v.extend_from_slice(&word.to_le_bytes());
    }
    v.extend_from_slice(&1u16.to_le_bytes());
    v.extend_from_slice(&0u16.to_le_bytes());
    v.extend_from_slice(&u64::MAX.to_le_bytes());
    v.extend_from_slice(&28u32.to_le_bytes());
    // Interface description block: type 1, length 20, link type, reserved, snaplen 0.
    v.extend_from_slice(&1u32.to_le_bytes());
    v.extend_from_slice(&20u32.to_le_bytes());
    v.extend_from_slice(&u16::try_from(link.0).unwrap_or(u16::MAX).to_le_bytes());
    v.extend_from_slice(&0u16.to_le_bytes());
    v.extend_from_slice(&0u32.to_le_bytes());
    v.extend_from_slice(&20u32.to_le_bytes());
    v
}

/// A pcap file holding `frame` as its only record (fuzzing and tests).
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn single_frame_pcap(link: LinkType, frame: &[u8]) -> Vec<u8> {
    let mut v = pcap_header(link, true);
    let len = u32::try_from(frame.len()).unwrap_or(u32::MAX);
    for word in [1_700_000_000u32, 1, len, len] {
        v.extend_from_slice(&word.to_le_bytes());
    }
    v.extend_from_slice(frame);
    v
}
