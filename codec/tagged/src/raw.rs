//! Schema-less walk of a tagged document, like `protoc --decode_raw`: ids, wire types and raw
//! values, with sized values opened as nested structs when their bytes parse as one.
//!
//! The document itself must be well formed (the same checks as a typed read, with byte offsets
//! and field ids in errors). Inside a sized value, parsing as a struct is only an attempt: a
//! string, a byte string or an array of numbers may fail it, and then it is left as bytes.
//! Attempts stop at [`MAX_DEPTH`], and every byte is a field header of at most one parsed
//! struct, so the tree has at most one node per input byte.

use super::reporter::next_id;
use super::{Error, MAX_DEPTH, Reader, WireType};

/// One field found in a document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawField<'a> {
    /// The field id (delta coding undone).
    pub id: u64,
    /// Byte offset of the field header in the document.
    pub offset: usize,
    /// The wire type in the header.
    pub wire: WireType,
    /// The value as found.
    pub value: RawValue<'a>,
}

/// A field value without its type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RawValue<'a> {
    /// One byte.
    Byte(u8),
    /// Eight bytes, in wire order (little-endian).
    Octet([u8; 8]),
    /// A varint's value.
    Varint(u64),
    /// A sized value's bytes, and its fields when those bytes parse as a struct.
    Sized {
        /// The bytes after the length prefix.
        bytes: &'a [u8],
        /// The fields, when the bytes are a non-empty, well-formed struct body.
        fields: Option<Vec<RawField<'a>>>,
    },
}

/// Walks a whole document: the root struct's size prefix, its fields, and nothing after it.
///
/// # Errors
/// Any malformed field of the root struct, a size prefix past the end, or trailing bytes.
pub fn parse_document(bytes: &[u8]) -> Result<Vec<RawField<'_>>, Error> {
    let mut r = Reader::new(bytes);
    let fields = r.sized(parse_fields)?;
    if !r.is_empty() {
        return Err(Error::TrailingBytes {
            offset: r.offset(),
            field: None,
            count: r.remaining(),
        });
    }
    Ok(fields)
}

/// Walks the fields in the rest of `r`'s region.
///
/// # Errors
/// The first malformed field.
pub fn parse_fields<'a>(r: &mut Reader<'a>) -> Result<Vec<RawField<'a>>, Error> {
    let outer = r.field();
    let mut fields = Vec::new();
    let mut previous = None;
    while !r.is_empty() {
        let offset = r.offset();
        let head = r.varint()?;
        let id = next_id(previous, head >> 2).ok_or(Error::IdOverflow {
            offset,
            field: previous,
        })?;
        previous = Some(id);
        r.set_field(Some(id));
        let wire = WireType::from_header(head);
        let value = match wire {
            WireType::Byte => RawValue::Byte(r.byte()?),
            WireType::Octet => {
                let mut octet = [0u8; 8];
                octet.copy_from_slice(r.bytes(8)?);
                RawValue::Octet(octet)
            }
            WireType::Varint => RawValue::Varint(r.varint()?),
            WireType::Sized => {
                let bytes = r.sized_bytes()?;
                let start = r.offset() - bytes.len();
                let fields = if bytes.is_empty() || r.depth() + 1 >= MAX_DEPTH {
                    None
                } else {
                    parse_fields(&mut r.sub_reader(start, bytes.len())).ok()
                };
                RawValue::Sized { bytes, fields }
            }
        };
        fields.push(RawField {
            id,
            offset,
            wire,
            value,
        });
    }
    r.set_field(outer);
    Ok(fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_bar_walks_without_a_schema() {
        let doc = [0x07, 0x02, 0x80, 0x01, 0x00, 0xFF, 0x00, 0x06];
        let fields = parse_document(&doc).unwrap();
        let ids: Vec<_> = fields.iter().map(|f| (f.id, f.wire, f.offset)).collect();
        assert_eq!(
            ids,
            [
                (0, WireType::Varint, 1),
                (1, WireType::Byte, 4),
                (2, WireType::Byte, 6)
            ]
        );
        assert_eq!(fields[0].value, RawValue::Varint(129));
        assert_eq!(fields[1].value, RawValue::Byte(255));
    }

    #[test]
    fn nested_struct_is_opened_and_text_is_not() {
        // field 0: sized { field 0: varint 5 }, field 1: sized "Ayla"
        let doc = [
            0x0A, 0x03, 0x02, 0x02, 0x05, 0x03, 0x04, b'A', b'y', b'l', b'a',
        ];
        let fields = parse_document(&doc).unwrap();
        let RawValue::Sized {
            fields: Some(inner),
            ..
        } = &fields[0].value
        else {
            panic!("{fields:?}")
        };
        assert_eq!(inner[0].value, RawValue::Varint(5));
        assert!(matches!(
            &fields[1].value,
            RawValue::Sized {
                bytes: b"Ayla",
                fields: None
            }
        ));
    }

    #[test]
    fn errors_name_offset_and_field() {
        // field 3 (sized) claims 100 bytes.
        let doc = [0x03, 0x0F, 0x64, 0x00];
        let err = parse_document(&doc).unwrap_err();
        assert_eq!(
            err.to_string(),
            "byte 2 (field 3): sized length 100 exceeds the 1 bytes that remain"
        );
    }
}
