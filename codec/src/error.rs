//! The one error type of the bit-packed layer: every error names the bit and the field.

use std::fmt;

/// What went wrong, without where. Where is in [`Error`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A read needed more bits than remain (checked before anything is consumed).
    PastEnd {
        /// Bits the read needed.
        needed: usize,
        /// Bits that remained.
        remaining: usize,
    },
    /// A value (or a length, count, index or code) lies outside its declared range.
    OutOfRange {
        /// The value found (read) or given (write).
        value: i128,
        /// Smallest allowed value.
        min: i128,
        /// Largest allowed value.
        max: i128,
    },
    /// Alignment padding (before `align`, `bytes`, `check`) held non-zero bits.
    NonzeroPadding {
        /// The padding bits as read.
        padding: u32,
    },
    /// A serialization check marker did not hold the hash of its label: reader and writer disagree.
    CheckMismatch {
        /// The label of the check.
        label: String,
        /// The hash the reader expected.
        expected: u32,
        /// The 32 bits found.
        found: u32,
    },
    /// The CRC32 (with the protocol id folded in) does not match the packet.
    CrcMismatch {
        /// CRC computed over the packet.
        expected: u32,
        /// CRC stored in the packet.
        found: u32,
    },
    /// A string's bytes are not UTF-8.
    InvalidUtf8,
    /// Bytes, or non-zero bits, follow the end of the packet.
    TrailingData {
        /// Whole bytes after the end (0 when only padding bits of the last byte were non-zero).
        bytes: usize,
    },
    /// The datagram is longer than the protocol's MTU (checked before anything is read).
    TooLong {
        /// Bytes in the datagram.
        bytes: usize,
        /// The protocol's MTU.
        mtu: usize,
    },
    /// The packet type is in range but the protocol has no such packet.
    UnknownPacketType(u32),
    /// A write did not fit in the buffer (or a packet exceeded the MTU).
    BufferFull {
        /// Bits the write needed.
        needed: usize,
        /// Bits that were free.
        available: usize,
    },
    /// A caller passed arguments no wire encoding exists for (min > max, a width of 0 or over 64,
    /// a non-finite compressed float range, ...). A bug in the serialize function, not in the data.
    InvalidArgument(String),
    /// A network id does not resolve to a known object (seed 004 linking).
    Unresolved {
        /// The network id that was read.
        id: u64,
    },
    /// A 128-bit ranged value (`int128`, `fixed`) read above its range, where `min + offset`
    /// does not fit the `i128` of [`ErrorKind::OutOfRange`]. Its name is `out_of_range` too.
    OffsetOutOfRange {
        /// Smallest allowed value.
        min: i128,
        /// Largest allowed value.
        max: i128,
        /// The offset read, above `max - min`.
        offset: u128,
    },
    /// A wide string (`wstring`) holds UTF-16 that is not well formed: an unpaired surrogate.
    InvalidUtf16 {
        /// Which rule: a high surrogate without a low one after it, or a low one without a
        /// high one before it.
        why: &'static str,
    },
    /// A string holds a zero character inside its transmitted length (serialize 1.0: the
    /// payload would have two lengths, the wire's and the one a C reader computes).
    InteriorNul,
}

impl ErrorKind {
    /// The kind's stable snake_case name, as used by the conformance vectors and JSON output.
    pub fn name(&self) -> &'static str {
        match self {
            ErrorKind::PastEnd { .. } => "past_end",
            ErrorKind::OutOfRange { .. } => "out_of_range",
            ErrorKind::NonzeroPadding { .. } => "nonzero_padding",
            ErrorKind::CheckMismatch { .. } => "check_mismatch",
            ErrorKind::CrcMismatch { .. } => "crc_mismatch",
            ErrorKind::InvalidUtf8 => "invalid_utf8",
            ErrorKind::TrailingData { .. } => "trailing_data",
            ErrorKind::TooLong { .. } => "too_long",
            ErrorKind::UnknownPacketType(_) => "unknown_packet_type",
            ErrorKind::BufferFull { .. } => "buffer_full",
            ErrorKind::InvalidArgument(_) => "invalid_argument",
            ErrorKind::Unresolved { .. } => "unresolved",
            ErrorKind::OffsetOutOfRange { .. } => "out_of_range",
            ErrorKind::InvalidUtf16 { .. } => "invalid_utf16",
            ErrorKind::InteriorNul => "interior_nul",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::PastEnd { needed, remaining } => {
                write!(f, "read past end: needs {needed} bits, {remaining} remain")
            }
            ErrorKind::OutOfRange { value, min, max } => {
                write!(f, "{value} out of range {min}..={max}")
            }
            ErrorKind::NonzeroPadding { padding } => {
                write!(f, "non-zero alignment padding {padding:#x}")
            }
            ErrorKind::CheckMismatch {
                label,
                expected,
                found,
            } => write!(
                f,
                "check \"{label}\" mismatch: expected {expected:#010x}, found {found:#010x} (reader and writer desynced)"
            ),
            ErrorKind::CrcMismatch { expected, found } => write!(
                f,
                "CRC32 mismatch: computed {expected:#010x}, packet has {found:#010x} (corrupt, or another protocol id)"
            ),
            ErrorKind::InvalidUtf8 => write!(f, "string is not valid UTF-8"),
            ErrorKind::TrailingData { bytes: 0 } => {
                write!(f, "non-zero bits after the end of the packet")
            }
            ErrorKind::TrailingData { bytes } => {
                write!(f, "{bytes} trailing bytes after the end of the packet")
            }
            ErrorKind::TooLong { bytes, mtu } => {
                write!(f, "datagram of {bytes} bytes exceeds the MTU of {mtu}")
            }
            ErrorKind::UnknownPacketType(t) => write!(f, "unknown packet type {t}"),
            ErrorKind::BufferFull { needed, available } => {
                write!(f, "buffer full: needs {needed} bits, {available} free")
            }
            ErrorKind::InvalidArgument(why) => write!(f, "invalid argument: {why}"),
            ErrorKind::Unresolved { id } => {
                write!(f, "network id {id} does not resolve to an object")
            }
            ErrorKind::OffsetOutOfRange { min, max, offset } => {
                write!(f, "{min} + {offset} out of range {min}..={max}")
            }
            ErrorKind::InvalidUtf16 { why } => write!(f, "string is not valid UTF-16: {why}"),
            ErrorKind::InteriorNul => write!(
                f,
                "string holds a NUL character inside its length (a C reader would see a shorter string)"
            ),
        }
    }
}

/// An error of the bit-packed layer: a kind, the bit offset where it happened, and the field path
/// (for example `objects[17].position.x`).
///
/// Boxed, so that `Result<T, Error>` stays one pointer wide on the hot path.
#[derive(Clone, PartialEq, Eq)]
pub struct Error(Box<Inner>);

#[derive(Debug, Clone, PartialEq, Eq)]
struct Inner {
    kind: ErrorKind,
    bit: usize,
    /// Inline up to 24 bytes with feature `inline-paths` (as a trace's paths): most errors
    /// then take one allocation, not two (the fuzz targets read many refused inputs).
    field: crate::path_string::PathString,
}

impl Error {
    /// An error of `kind` at stream bit `bit` in the field named `field`.
    #[cold]
    pub fn new(kind: ErrorKind, bit: usize, field: &str) -> Self {
        Error(Box::new(Inner {
            kind,
            bit,
            field: field.into(),
        }))
    }

    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.0.kind
    }

    /// The stream bit offset where it went wrong (the first bit of the offending field).
    pub fn bit(&self) -> usize {
        self.0.bit
    }

    /// The field path, outermost first: `objects[17].position.x`.
    pub fn field(&self) -> &str {
        &self.0.field
    }

    /// Prefixes the path with an enclosing scope's name (used as the error unwinds, so that
    /// reads pay nothing for names until something fails).
    #[cold]
    pub fn within(mut self, scope: &str) -> Self {
        let f = &mut self.0.field;
        if scope.is_empty() {
        } else if f.is_empty() {
            *f = scope.into();
        } else if f.starts_with('[') {
            f.insert_str(0, scope);
        } else {
            f.insert(0, '.');
            f.insert_str(0, scope);
        }
        self
    }

    /// Prefixes the path with an array index: `[17]`.
    #[cold]
    pub fn at_index(mut self, index: usize) -> Self {
        let f = &mut self.0.field;
        let prefix = if f.is_empty() || f.starts_with('[') {
            format!("[{index}]")
        } else {
            format!("[{index}].")
        };
        f.insert_str(0, &prefix);
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.field.is_empty() {
            write!(f, "bit {}: {}", self.0.bit, self.0.kind)
        } else {
            write!(
                f,
                "bit {} (field \"{}\"): {}",
                self.0.bit, self.0.field, self.0.kind
            )
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Error({}: {self})", self.0.kind.name())
    }
}

impl std::error::Error for Error {}

/// The result type of the bit-packed layer.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_reads_like_the_issue() {
        let e = Error::new(
            ErrorKind::OutOfRange {
                value: 140,
                min: 0,
                max: 100,
            },
            203,
            "health",
        );
        assert_eq!(
            e.to_string(),
            "bit 203 (field \"health\"): 140 out of range 0..=100"
        );
    }

    #[test]
    fn paths_build_while_unwinding() {
        let e = Error::new(ErrorKind::InvalidUtf8, 9, "x")
            .within("position")
            .at_index(17)
            .within("objects");
        assert_eq!(e.field(), "objects[17].position.x");
        let e = Error::new(ErrorKind::InvalidUtf8, 9, "")
            .at_index(3)
            .within("mice");
        assert_eq!(e.field(), "mice[3]");
        let e = Error::new(ErrorKind::InvalidUtf8, 9, "len").within("mice");
        assert_eq!(e.field(), "mice.len");
    }
}
