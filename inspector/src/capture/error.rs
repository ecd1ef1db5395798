//! [`CaptureError`]: everything that can go wrong reading or writing a capture file.

use std::fmt;

/// Where in a capture file something went wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// File name as given to [`Capture::open`](super::Capture::open) or
    /// [`Capture::from_bytes`](super::Capture::from_bytes).
    pub file: String,
    /// 1-based number of the frame the damaged record holds or would have held, when known.
    pub frame: Option<u64>,
    /// Byte offset of the damaged record or header in the file.
    pub offset: u64,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.frame {
            Some(frame) => write!(f, "{}: frame {} at byte {}", self.file, frame, self.offset),
            None => write!(f, "{}: at byte {}", self.file, self.offset),
        }
    }
}

/// An error reading or writing a capture.
///
/// Reading: a file that is not a capture at all is an `Err` of [`Capture::open`]; damage later in
/// a capture is kept by [`Capture::damage`] beside every packet before it. `Display` is one line
/// naming the file, the frame (where known) and the byte offset.
///
/// [`Capture::open`]: super::Capture::open
/// [`Capture::damage`]: super::Capture::damage
#[derive(Debug)]
#[non_exhaustive]
pub enum CaptureError {
    /// The file could not be read (or written).
    Io {
        /// The file.
        file: String,
        /// What the operating system said.
        error: std::io::Error,
    },
    /// The file starts with neither a pcap nor a pcapng magic number.
    NotACapture {
        /// The file.
        file: String,
        /// The first four bytes, big-endian (0 when the file is shorter).
        magic: u32,
        /// The file's length, for a file too short to start with anything.
        len: u64,
    },
    /// The file ends inside the pcap file header or the first pcapng section header.
    TruncatedHeader {
        /// Where.
        at: Location,
        /// Bytes the header needs.
        needed: u64,
        /// Bytes left in the file.
        available: u64,
    },
    /// A record or block claims more bytes than the file has left.
    TruncatedRecord {
        /// Where the record starts.
        at: Location,
        /// Bytes the record claims, its header included (a pcap record's 16 bytes, as a pcapng
        /// block length counts its own).
        needed: u64,
        /// Bytes left in the file.
        available: u64,
        /// A pcapng block (said "block"), not a pcap record.
        pcapng: bool,
    },
    /// A record or block claims more than [`MAX_RECORD_LEN`](super::MAX_RECORD_LEN) bytes.
    RecordTooLong {
        /// Where the record starts.
        at: Location,
        /// Bytes the record claims, its header included (as for [`CaptureError::TruncatedRecord`]).
        claimed: u64,
        /// A pcapng block (said "block"), not a pcap record.
        pcapng: bool,
    },
    /// A pcapng section header has an unknown byte-order magic.
    BadMagic {
        /// Where the section header starts.
        at: Location,
        /// The byte-order magic found.
        magic: u32,
    },
    /// A pcapng packet block names an interface no description block introduced.
    UnknownInterface {
        /// Where the block starts.
        at: Location,
        /// The interface id in the block.
        interface: u32,
    },
    /// A pcapng block is malformed (length fields, options, timestamp resolution, ...).
    MalformedBlock {
        /// Where the block starts.
        at: Location,
        /// What is wrong, from the pcapng parser.
        detail: String,
    },
    /// A datagram could not be written (time before 1970 or past 2106 for pcap, payload too
    /// large for IP, ...).
    Unwritable {
        /// Index of the datagram in the list given to the writer.
        index: usize,
        /// Why.
        detail: String,
    },
}

impl CaptureError {
    /// The location in the file, for errors that have one.
    pub fn location(&self) -> Option<&Location> {
        match self {
            Self::TruncatedHeader { at, .. }
            | Self::TruncatedRecord { at, .. }
            | Self::RecordTooLong { at, .. }
            | Self::BadMagic { at, .. }
            | Self::UnknownInterface { at, .. }
            | Self::MalformedBlock { at, .. } => Some(at),
            Self::Io { .. } | Self::NotACapture { .. } | Self::Unwritable { .. } => None,
        }
    }
}

impl fmt::Display for CaptureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io { file, error } => write!(f, "{file}: {error}"),
            Self::NotACapture { file, len: 0, .. } => write!(
                f,
                "{file}: not a pcap or pcapng file (it is empty); \
                 save it from Wireshark or tcpdump as pcap or pcapng"
            ),
            Self::NotACapture {
                file,
                len: len @ 1..4,
                ..
            } => write!(
                f,
                "{file}: not a pcap or pcapng file (only {len} bytes long); \
                 save it from Wireshark or tcpdump as pcap or pcapng"
            ),
            Self::NotACapture { file, magic, .. } => write!(
                f,
                "{file}: not a pcap or pcapng file (starts with {magic:#010x}); \
                 save it from Wireshark or tcpdump as pcap or pcapng"
            ),
            Self::TruncatedHeader {
                at,
                needed,
                available,
            } => write!(
                f,
                "{at}: file header needs {needed} bytes, only {available} left (file cut short?)"
            ),
            Self::TruncatedRecord {
                at,
                needed,
                available,
                pcapng,
            } => write!(
                f,
                "{at}: {} claims {needed} bytes{}, only {available} left (file cut short?)",
                claimant(*pcapng).0,
                claimant(*pcapng).1
            ),
            Self::RecordTooLong {
                at,
                claimed,
                pcapng,
            } => write!(
                f,
                "{at}: {} claims {claimed} bytes{}, more than the {} MiB limit",
                claimant(*pcapng).0,
                claimant(*pcapng).1,
                super::MAX_RECORD_LEN >> 20
            ),
            Self::BadMagic { at, magic } => {
                write!(
                    f,
                    "{at}: section header has unknown byte-order magic {magic:#010x}"
                )
            }
            Self::UnknownInterface { at, interface } => write!(
                f,
                "{at}: packet names interface {interface}, which no interface description block introduced"
            ),
            Self::MalformedBlock { at, detail } => {
                write!(f, "{at}: malformed pcapng block: {detail}")
            }
            Self::Unwritable { index, detail } => {
                write!(f, "datagram {index} cannot be written: {detail}")
            }
        }
    }
}

/// The subject of a length error: a pcap record's length leaves out its 16-byte header, a pcapng
/// block's counts the whole block, so only the first says "with its header".
fn claimant(pcapng: bool) -> (&'static str, &'static str) {
    if pcapng {
        ("pcapng block", "")
    } else {
        ("record", " with its header")
    }
}

impl std::error::Error for CaptureError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io { error, .. } => Some(error),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_is_one_line_naming_file_frame_and_offset() {
        let e = CaptureError::RecordTooLong {
            at: Location {
                file: "captures/bad.pcap".into(),
                frame: Some(17),
                offset: 4242,
            },
            claimed: u64::from(u32::MAX),
            pcapng: false,
        };
        assert_eq!(
            e.to_string(),
            "captures/bad.pcap: frame 17 at byte 4242: record claims 4294967295 bytes with its header, more than the 16 MiB limit"
        );
        let e = CaptureError::MalformedBlock {
            at: Location {
                file: "x.pcapng".into(),
                frame: None,
                offset: 28,
            },
            detail: "bad".into(),
        };
        assert_eq!(
            e.to_string(),
            "x.pcapng: at byte 28: malformed pcapng block: bad"
        );
        assert!(!e.to_string().contains('\n'));
    }
}
