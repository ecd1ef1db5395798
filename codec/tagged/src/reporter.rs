//! The reporters: one `report` function per struct, walked by an encoder, a decoder, a zero
//! check and a dumper.

use core::fmt;

use super::{Error, Reader, Value, WireType, Writer};

/// Receives the fields of a struct, in increasing id order, from [`Tagged::report`](super::Tagged::report).
pub trait Reporter {
    /// Handles one field: writes it, reads it, or records it, depending on the reporter.
    ///
    /// # Errors
    /// The reporter's own errors (a malformed input for the decoder), and
    /// [`Error::IdsNotIncreasing`] when `id` is not above the previous one.
    fn field<T: Value>(&mut self, id: u64, name: &str, value: &mut T) -> Result<(), Error>;
}

#[inline]
fn check_order(previous: Option<u64>, id: u64, offset: usize) -> Result<(), Error> {
    match previous {
        Some(previous) if id <= previous => Err(Error::IdsNotIncreasing {
            offset,
            field: Some(id),
            previous,
        }),
        _ => Ok(()),
    }
}

/// The id a header's delta stands for: `delta` for the first field, `previous + 1 + delta` after.
#[inline]
pub(crate) fn next_id(previous: Option<u64>, delta: u64) -> Option<u64> {
    match previous {
        None => Some(delta),
        Some(p) => p.checked_add(1)?.checked_add(delta),
    }
}

/// Writes the fields of one struct, omitting zero values and delta-coding the ids.
#[derive(Debug)]
pub struct Encoder<'w, 'a> {
    w: &'w mut Writer<'a>,
    last_reported: Option<u64>,
    last_written: Option<u64>,
}

impl<'w, 'a> Encoder<'w, 'a> {
    /// An encoder writing a struct body (no size prefix) to `w`.
    #[inline]
    pub fn new(w: &'w mut Writer<'a>) -> Self {
        Encoder {
            w,
            last_reported: None,
            last_written: None,
        }
    }
}

impl Reporter for Encoder<'_, '_> {
    // Inlined into each struct's `report`: the call, its saved registers and the `Result` in
    // memory cost about as much as the field's own work.
    #[inline(always)]
    fn field<T: Value>(&mut self, id: u64, _name: &str, value: &mut T) -> Result<(), Error> {
        check_order(self.last_reported, id, self.w.offset())?;
        self.last_reported = Some(id);
        if value.is_zero() {
            return Ok(());
        }
        let delta = match self.last_written {
            None => id,
            // `id > last_written` holds: last_written <= last_reported < id.
            Some(previous) => id - previous - 1,
        };
        if delta > u64::MAX >> 2 {
            return Err(Error::IdTooLarge {
                offset: self.w.offset(),
                field: Some(id),
            });
        }
        self.w.varint(delta << 2 | T::WIRE as u64);
        // The writer does not track the field: an error from inside the value gets its id here.
        if let Err(e) = value.encode(self.w) {
            return Err(e.in_field(id));
        }
        self.last_written = Some(id);
        Ok(())
    }
}

#[derive(Clone, Copy, Debug)]
struct Header {
    id: u64,
    wire: WireType,
    offset: usize,
}

/// Reads the fields of one struct body: a merge walk over the stream's ids and the reported ids.
#[derive(Debug)]
pub struct Decoder<'r, 'a> {
    r: &'r mut Reader<'a>,
    next: Option<Header>,
    last_read: Option<u64>,
    last_reported: Option<u64>,
}

impl<'r, 'a> Decoder<'r, 'a> {
    /// A decoder over the rest of `r`'s region, which must hold one struct body.
    ///
    /// # Errors
    /// A malformed first field header.
    #[inline]
    pub fn new(r: &'r mut Reader<'a>) -> Result<Self, Error> {
        let mut d = Decoder {
            r,
            next: None,
            last_read: None,
            last_reported: None,
        };
        d.load_next()?;
        Ok(d)
    }

    #[inline(always)]
    fn load_next(&mut self) -> Result<(), Error> {
        if self.r.is_empty() {
            self.next = None;
            return Ok(());
        }
        let offset = self.r.offset();
        let head = self.r.varint()?;
        let id = next_id(self.last_read, head >> 2).ok_or(Error::IdOverflow {
            offset,
            field: self.last_read,
        })?;
        self.last_read = Some(id);
        self.next = Some(Header {
            id,
            wire: WireType::from_header(head),
            offset,
        });
        Ok(())
    }

    fn skip(&mut self, h: Header) -> Result<(), Error> {
        let result = match h.wire {
            WireType::Byte => self.r.bytes(1).map(drop),
            WireType::Octet => self.r.bytes(8).map(drop),
            WireType::Varint => self.r.varint().map(drop),
            WireType::Sized => self.r.sized_bytes().map(drop),
        };
        result.map_err(|e| e.in_field(h.id))
    }

    /// Skips the fields after the last reported one (ids this version does not know), checking
    /// that they are well formed.
    ///
    /// # Errors
    /// A malformed trailing field.
    #[inline(always)]
    pub fn finish(self) -> Result<(), Error> {
        // Most structs end with their last known field: nothing to skip, no call.
        if self.next.is_none() {
            return Ok(());
        }
        self.skip_unknown()
    }

    #[inline(never)]
    fn skip_unknown(mut self) -> Result<(), Error> {
        while let Some(h) = self.next {
            self.skip(h)?;
            self.load_next()?;
        }
        Ok(())
    }
}

impl Reporter for Decoder<'_, '_> {
    #[inline(always)]
    fn field<T: Value>(&mut self, id: u64, _name: &str, value: &mut T) -> Result<(), Error> {
        check_order(self.last_reported, id, self.r.offset())?;
        self.last_reported = Some(id);
        loop {
            match self.next {
                // A field this version does not know (removed, or newer than us): skip it.
                Some(h) if h.id < id => {
                    self.skip(h)?;
                    self.load_next()?;
                }
                Some(h) if h.id == id => {
                    if h.wire != T::WIRE {
                        return Err(Error::WireMismatch {
                            offset: h.offset,
                            field: Some(id),
                            expected: T::WIRE,
                            found: h.wire,
                        });
                    }
                    // The reader does not track the field: an error from inside the value gets
                    // its id here.
                    match T::decode(self.r) {
                        Ok(v) => *value = v,
                        Err(e) => return Err(e.in_field(id)),
                    }
                    return self.load_next();
                }
                // Not in the stream (an older writer, or a zero value): the zero value.
                _ => {
                    *value = T::zero();
                    return Ok(());
                }
            }
        }
    }
}

/// Finds out whether every reported field holds its zero value (then a struct is omitted).
#[derive(Debug)]
pub(crate) struct ZeroCheck {
    pub(crate) zero: bool,
}

impl Reporter for ZeroCheck {
    fn field<T: Value>(&mut self, _id: u64, _name: &str, value: &mut T) -> Result<(), Error> {
        if self.zero && !value.is_zero() {
            self.zero = false;
        }
        Ok(())
    }
}

/// One field of a typed dump.
#[derive(Clone, Debug, PartialEq)]
pub struct DumpField {
    /// The field id.
    pub id: u64,
    /// The field name given to the reporter.
    pub name: String,
    /// The wire type of the field's Rust type.
    pub wire: WireType,
    /// The value.
    pub value: DumpValue,
}

/// A value in a typed dump.
#[derive(Clone, Debug, PartialEq)]
pub enum DumpValue {
    /// A primitive, as Rust's `Debug` prints it (strings quoted).
    Scalar(String),
    /// A nested struct (also tuples and map entries).
    Struct(Vec<DumpField>),
    /// The elements of an array or map.
    List(Vec<DumpValue>),
}

/// Records every reported field with its id, name, wire type and value.
#[derive(Debug, Default)]
pub struct Dumper {
    fields: Vec<DumpField>,
}

impl Dumper {
    /// The fields recorded so far.
    pub fn into_dump(self) -> Dump {
        Dump {
            fields: self.fields,
        }
    }
}

impl Reporter for Dumper {
    fn field<T: Value>(&mut self, id: u64, name: &str, value: &mut T) -> Result<(), Error> {
        self.fields.push(DumpField {
            id,
            name: name.to_owned(),
            wire: T::WIRE,
            value: value.dump(),
        });
        Ok(())
    }
}

/// The typed dump of a struct; `Display` prints one field per line, nested by indentation.
#[derive(Clone, Debug, PartialEq)]
pub struct Dump {
    /// The struct's fields in id order, zero values included.
    pub fields: Vec<DumpField>,
}

fn write_fields(f: &mut fmt::Formatter<'_>, fields: &[DumpField], indent: usize) -> fmt::Result {
    for field in fields {
        write!(
            f,
            "{:indent$}{} {} ({}): ",
            "",
            field.id,
            field.name,
            field.wire,
            indent = indent
        )?;
        write_value(f, &field.value, indent)?;
        writeln!(f)?;
    }
    Ok(())
}

fn write_value(f: &mut fmt::Formatter<'_>, value: &DumpValue, indent: usize) -> fmt::Result {
    match value {
        DumpValue::Scalar(s) => f.write_str(s),
        DumpValue::Struct(fields) => {
            writeln!(f, "{{")?;
            write_fields(f, fields, indent + 2)?;
            write!(f, "{:indent$}}}", "", indent = indent)
        }
        DumpValue::List(items) => {
            f.write_str("[")?;
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write_value(f, item, indent)?;
            }
            f.write_str("]")
        }
    }
}

impl fmt::Display for Dump {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_fields(f, &self.fields, 0)
    }
}

/// Writes a struct body reported by `report`, with its size prefix.
pub(crate) fn encode_struct(
    w: &mut Writer<'_>,
    report: impl FnOnce(&mut Encoder<'_, '_>) -> Result<(), Error>,
) -> Result<(), Error> {
    w.sized(|w| report(&mut Encoder::new(w)))
}

/// Reads a sized struct body into the fields reported by `report`.
pub(crate) fn decode_struct(
    r: &mut Reader<'_>,
    report: impl FnOnce(&mut Decoder<'_, '_>) -> Result<(), Error>,
) -> Result<(), Error> {
    r.sized(|r| {
        let mut d = Decoder::new(r)?;
        report(&mut d)?;
        d.finish()
    })
}
