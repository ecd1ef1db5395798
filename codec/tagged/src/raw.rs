//! Schema-less walk of a tagged document, like `protoc --decode_raw`: ids, wire types and raw
//! values, with sized values opened as nested structs when their bytes parse as one.
//!
//! The document itself must be well formed (the same checks as a typed read, with byte offsets
//! and field ids in errors). Inside a sized value, parsing as a struct is only an attempt: a
//! string, a byte string or an array of numbers may fail it, and then it is left as bytes.
//! Attempts stop at [`MAX_DEPTH`].
//!
//! # Memory
//! The walk is lazy and allocates nothing: [`parse_document`] checks the root struct's fields
//! (their headers and lengths, not what is inside sized values) and returns them as an iterator,
//! [`RawFields`]; a sized value is opened when the iterator reaches it, after the same check of
//! its own fields, which cannot fail the document. A consumer that recurses into every opened
//! struct (as `bitlens tagged` prints them) holds one iterator per level, at most
//! [`MAX_DEPTH`], whatever the document's size; every struct's fields are read twice (checked,
//! then walked), so the whole walk is linear in the input.

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
        fields: Option<RawFields<'a>>,
    },
}

/// The fields of one struct body, read as they are asked for. Their headers and lengths were
/// checked when the struct was found, so the iteration itself cannot fail.
#[derive(Clone, Debug)]
pub struct RawFields<'a> {
    reader: Reader<'a>,
    previous: Option<u64>,
}

impl<'a> RawFields<'a> {
    /// The fields of the struct body `reader` is positioned on (to the end of its region), when
    /// every one of them is well formed.
    fn checked(reader: Reader<'a>) -> Result<Self, Error> {
        let fields = RawFields {
            reader,
            previous: None,
        };
        let mut check = fields.clone();
        while !check.reader.is_empty() {
            check.read(false)?;
        }
        Ok(fields)
    }

    /// Byte offset of the next field (of the end, once every field was read).
    pub fn offset(&self) -> usize {
        self.reader.offset()
    }

    /// Reads the next field; a sized value is opened as a struct only when `open` is set.
    fn read(&mut self, open: bool) -> Result<RawField<'a>, Error> {
        let r = &mut self.reader;
        let offset = r.offset();
        let head = r.varint()?;
        let id = next_id(self.previous, head >> 2).ok_or(Error::IdOverflow {
            offset,
            field: self.previous,
        })?;
        self.previous = Some(id);
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
                let fields = if !open || bytes.is_empty() || r.depth() + 1 >= MAX_DEPTH {
                    None
                } else {
                    let start = r.offset() - bytes.len();
                    RawFields::checked(r.sub_reader(start, bytes.len())).ok()
                };
                RawValue::Sized { bytes, fields }
            }
        };
        Ok(RawField {
            id,
            offset,
            wire,
            value,
        })
    }
}

impl<'a> Iterator for RawFields<'a> {
    type Item = RawField<'a>;

    fn next(&mut self) -> Option<RawField<'a>> {
        if self.reader.is_empty() {
            return None;
        }
        // Checked before: an error here cannot happen, and would only end the iteration.
        self.read(true).ok()
    }
}

/// Two walks are equal when they are at the same place of equal bytes.
impl PartialEq for RawFields<'_> {
    fn eq(&self, other: &Self) -> bool {
        let key = |f: &Self| {
            let r = &f.reader;
            (
                r.offset(),
                r.depth(),
                f.previous,
                r.clone().bytes(r.remaining()).ok(),
            )
        };
        key(self) == key(other)
    }
}

impl Eq for RawFields<'_> {}

/// Checks a whole document (the root struct's size prefix, its fields, and nothing after it)
/// and returns its fields, to be walked lazily.
///
/// # Errors
/// Any malformed field of the root struct, a size prefix past the end, or trailing bytes.
pub fn parse_document(bytes: &[u8]) -> Result<RawFields<'_>, Error> {
    let mut r = Reader::new(bytes);
    let fields = r.sized(|r| {
        let fields = RawFields::checked(r.clone())?;
        r.bytes(r.remaining())?;
        Ok(fields)
    })?;
    if !r.is_empty() {
        return Err(Error::TrailingBytes {
            offset: r.offset(),
            field: None,
            count: r.remaining(),
        });
    }
    Ok(fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_bar_walks_without_a_schema() {
        let doc = [0x07, 0x02, 0x80, 0x01, 0x00, 0xFF, 0x00, 0x06];
        let fields: Vec<_> = parse_document(&doc).unwrap().collect();
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
        let fields: Vec<_> = parse_document(&doc).unwrap().collect();
        let RawValue::Sized {
            fields: Some(inner),
            ..
        } = &fields[0].value
        else {
            panic!("{fields:?}")
        };
        let inner: Vec<_> = inner.clone().collect();
        assert_eq!(inner.len(), 1);
        assert_eq!(
            (inner[0].offset, &inner[0].value),
            (3, &RawValue::Varint(5))
        );
        assert!(matches!(
            &fields[1].value,
            RawValue::Sized {
                bytes: b"Ayla",
                fields: None
            }
        ));
    }

    #[test]
    fn a_struct_is_opened_only_when_its_own_fields_are_well_formed() {
        // field 0: sized { field 0: sized { 0x7F: a sized header without its length } }: the
        // inner bytes are no struct, the outer still is (its one field is a well-formed sized
        // value).
        let doc = [0x05, 0x03, 0x03, 0x03, 0x01, 0x7F];
        let mut fields = parse_document(&doc).unwrap();
        let Some(RawField {
            value:
                RawValue::Sized {
                    fields: Some(mut outer),
                    ..
                },
            ..
        }) = fields.next()
        else {
            panic!("the outer value is a struct")
        };
        assert!(fields.next().is_none());
        let inner = outer.next().unwrap();
        assert_eq!(
            inner.value,
            RawValue::Sized {
                bytes: &[0x7F],
                fields: None
            }
        );
        assert!(outer.next().is_none());
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
