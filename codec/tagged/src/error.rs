//! The error of the tagged format: every variant names the byte offset and the field id.

use core::fmt;

use super::WireType;

/// Why a tagged document could not be read or written.
///
/// Every variant carries `offset`, the byte offset from the start of the document (for a read)
/// or of the output (for a write) where the problem was found, and `field`, the id of the
/// innermost field being read or written (`None` for the document's own size prefix).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A fixed-size value (byte, octet, varint byte) needs more bytes than remain in its region.
    PastEnd {
        /// Byte offset of the value.
        offset: usize,
        /// Innermost field id.
        field: Option<u64>,
        /// Bytes the value needs.
        needed: usize,
        /// Bytes that remain in the enclosing region.
        remaining: usize,
    },
    /// A varint has a continuation bit on its tenth byte: no u64 takes more than ten.
    VarintTooLong {
        /// Byte offset of the varint's first byte.
        offset: usize,
        /// Innermost field id.
        field: Option<u64>,
    },
    /// A varint's value does not fit in a u64.
    VarintOverflow {
        /// Byte offset of the varint's first byte.
        offset: usize,
        /// Innermost field id.
        field: Option<u64>,
    },
    /// A sized value's length prefix is larger than what remains (checked before any allocation).
    SizedTooLong {
        /// Byte offset of the length prefix.
        offset: usize,
        /// Innermost field id.
        field: Option<u64>,
        /// The length the prefix claims.
        len: u64,
        /// Bytes that remain after the prefix.
        remaining: usize,
    },
    /// A known field arrived with another wire type than its Rust type uses.
    WireMismatch {
        /// Byte offset of the field header.
        offset: usize,
        /// The field id.
        field: Option<u64>,
        /// Wire type of the declared Rust type.
        expected: WireType,
        /// Wire type found in the header.
        found: WireType,
    },
    /// A varint decoded fine but does not fit the field's Rust integer type.
    OutOfRange {
        /// Byte offset of the value.
        offset: usize,
        /// Innermost field id.
        field: Option<u64>,
        /// The decoded value (zig-zag already undone for signed types).
        value: i128,
        /// The Rust type that could not hold it.
        ty: &'static str,
    },
    /// A bool byte is neither 0 nor 1.
    InvalidBool {
        /// Byte offset of the value.
        offset: usize,
        /// Innermost field id.
        field: Option<u64>,
        /// The byte found.
        byte: u8,
    },
    /// A string's bytes are not UTF-8.
    InvalidUtf8 {
        /// Byte offset of the first invalid byte.
        offset: usize,
        /// Innermost field id.
        field: Option<u64>,
    },
    /// Sized values are nested deeper than [`MAX_DEPTH`](super::MAX_DEPTH).
    TooDeep {
        /// Byte offset of the sized value that would go one level too deep.
        offset: usize,
        /// Innermost field id.
        field: Option<u64>,
        /// The depth limit.
        limit: u32,
    },
    /// A field header's delta pushes the field id past u64::MAX.
    IdOverflow {
        /// Byte offset of the field header.
        offset: usize,
        /// The previous field id (the one the delta is added to).
        field: Option<u64>,
    },
    /// A field id too large for a header (above 2^62 - 1 after delta coding), when writing.
    IdTooLarge {
        /// Byte offset in the output.
        offset: usize,
        /// The field id.
        field: Option<u64>,
    },
    /// A `report` function reported ids out of increasing order: a bug in the type, not the data.
    IdsNotIncreasing {
        /// Byte offset in the input or output when it was noticed.
        offset: usize,
        /// The id reported out of order.
        field: Option<u64>,
        /// The id reported before it.
        previous: u64,
    },
    /// A fixed-size array region holds another number of elements than the Rust array.
    ArrayLength {
        /// Byte offset of the array's length prefix.
        offset: usize,
        /// Innermost field id.
        field: Option<u64>,
        /// Elements the Rust type has.
        expected: usize,
        /// Elements found.
        found: usize,
    },
    /// Bytes follow the document's root struct.
    TrailingBytes {
        /// Byte offset of the first extra byte.
        offset: usize,
        /// Innermost field id (`None` after the root).
        field: Option<u64>,
        /// How many bytes follow.
        count: usize,
    },
    /// `None` inside an array, tuple or map has no encoding (only a field can be absent).
    NoneInSequence {
        /// Byte offset in the output.
        offset: usize,
        /// Innermost field id.
        field: Option<u64>,
    },
}

impl Error {
    /// Byte offset where the problem was found.
    pub fn offset(&self) -> usize {
        match *self {
            Error::PastEnd { offset, .. }
            | Error::VarintTooLong { offset, .. }
            | Error::VarintOverflow { offset, .. }
            | Error::SizedTooLong { offset, .. }
            | Error::WireMismatch { offset, .. }
            | Error::OutOfRange { offset, .. }
            | Error::InvalidBool { offset, .. }
            | Error::InvalidUtf8 { offset, .. }
            | Error::TooDeep { offset, .. }
            | Error::IdOverflow { offset, .. }
            | Error::IdTooLarge { offset, .. }
            | Error::IdsNotIncreasing { offset, .. }
            | Error::ArrayLength { offset, .. }
            | Error::TrailingBytes { offset, .. }
            | Error::NoneInSequence { offset, .. } => offset,
        }
    }

    /// Id of the innermost field involved, `None` at the document level.
    pub fn field(&self) -> Option<u64> {
        match *self {
            Error::PastEnd { field, .. }
            | Error::VarintTooLong { field, .. }
            | Error::VarintOverflow { field, .. }
            | Error::SizedTooLong { field, .. }
            | Error::WireMismatch { field, .. }
            | Error::OutOfRange { field, .. }
            | Error::InvalidBool { field, .. }
            | Error::InvalidUtf8 { field, .. }
            | Error::TooDeep { field, .. }
            | Error::IdOverflow { field, .. }
            | Error::IdTooLarge { field, .. }
            | Error::IdsNotIncreasing { field, .. }
            | Error::ArrayLength { field, .. }
            | Error::TrailingBytes { field, .. }
            | Error::NoneInSequence { field, .. } => field,
        }
    }
}

impl Error {
    /// `self` naming field `id` when it names no field yet: an error raised inside a field's
    /// value (where the reader and writer do not track the id) learns the id of the innermost
    /// field on its way out of it, the same id it would have been built with.
    #[cold]
    #[inline(never)]
    pub(crate) fn in_field(mut self, id: u64) -> Self {
        match &mut self {
            Error::PastEnd { field, .. }
            | Error::VarintTooLong { field, .. }
            | Error::VarintOverflow { field, .. }
            | Error::SizedTooLong { field, .. }
            | Error::WireMismatch { field, .. }
            | Error::OutOfRange { field, .. }
            | Error::InvalidBool { field, .. }
            | Error::InvalidUtf8 { field, .. }
            | Error::TooDeep { field, .. }
            | Error::IdOverflow { field, .. }
            | Error::IdTooLarge { field, .. }
            | Error::IdsNotIncreasing { field, .. }
            | Error::ArrayLength { field, .. }
            | Error::TrailingBytes { field, .. }
            | Error::NoneInSequence { field, .. } => {
                if field.is_none() {
                    *field = Some(id);
                }
            }
        }
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "byte {} ", self.offset())?;
        match self.field() {
            Some(id) => write!(f, "(field {id}): ")?,
            None => f.write_str("(document): ")?,
        }
        match self {
            Error::PastEnd {
                needed, remaining, ..
            } => write!(f, "value needs {needed} bytes but only {remaining} remain"),
            Error::VarintTooLong { .. } => {
                f.write_str("varint is longer than the 10 bytes a u64 can take")
            }
            Error::VarintOverflow { .. } => f.write_str("varint overflows a u64"),
            Error::SizedTooLong { len, remaining, .. } => write!(
                f,
                "sized length {len} exceeds the {remaining} bytes that remain"
            ),
            Error::WireMismatch {
                expected, found, ..
            } => write!(
                f,
                "wire type {found} where the field's type uses {expected}"
            ),
            Error::OutOfRange { value, ty, .. } => {
                write!(f, "value {value} is out of range for {ty}")
            }
            Error::InvalidBool { byte, .. } => {
                write!(f, "bool byte is 0x{byte:02X}, expected 0x00 or 0x01")
            }
            Error::InvalidUtf8 { .. } => f.write_str("string is not valid UTF-8"),
            Error::TooDeep { limit, .. } => {
                write!(f, "sized values nest deeper than the limit of {limit}")
            }
            Error::IdOverflow { .. } => f.write_str("field id delta overflows a u64"),
            Error::IdTooLarge { .. } => f.write_str(
                "field id is too large for a field header (max 2^62 - 1 after delta coding)",
            ),
            Error::IdsNotIncreasing { previous, .. } => write!(
                f,
                "report() gave this id after id {previous}: ids must be reported in increasing order"
            ),
            Error::ArrayLength {
                expected, found, ..
            } => write!(
                f,
                "fixed array holds {found} elements, the type has {expected}"
            ),
            Error::TrailingBytes { count, .. } => {
                write!(f, "{count} bytes follow the end of the document")
            }
            Error::NoneInSequence { .. } => f.write_str(
                "None cannot be written inside an array, tuple or map (only a field can be absent)",
            ),
        }
    }
}

impl std::error::Error for Error {}
