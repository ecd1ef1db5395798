//! The checked `[batch]` section: message types, their bodies' definitions, and the API the
//! inspector uses (decode, encode, measure, push).

use crate::bounds::Cost;
use crate::value::DynValue;
use bitlens_batch::message::{BatchWriter, MAX_MTU, RawMessage, UpdateStage, max_body};
use bitlens_batch::stream::{ByteCounter, ByteReader, ByteStream, ByteWriter};
use bitlens_batch::{BatchError, BatchErrorKind, Result};
use std::collections::HashSet;
use std::sync::{Arc, Mutex};

/// A name of the file as the batch layer's `&'static str`, interned process-wide.
pub(crate) fn intern(s: &str) -> &'static str {
    static NAMES: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    let names = names.get_or_insert_with(HashSet::new);
    if let Some(n) = names.get(s) {
        return n;
    }
    let n: &'static str = Box::leak(s.to_owned().into_boxed_str());
    names.insert(n);
    n
}

/// A fixed-width primitive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Prim {
    Bool,
    U8,
    U16,
    U32,
    U64,
    I8,
    I16,
    I32,
    I64,
    F32,
    F64,
}

impl Prim {
    pub(crate) fn from_name(n: &str) -> Option<Prim> {
        Some(match n {
            "bool" => Prim::Bool,
            "u8" => Prim::U8,
            "u16" => Prim::U16,
            "u32" => Prim::U32,
            "u64" => Prim::U64,
            "i8" => Prim::I8,
            "i16" => Prim::I16,
            "i32" => Prim::I32,
            "i64" => Prim::I64,
            "f32" => Prim::F32,
            "f64" => Prim::F64,
            _ => return None,
        })
    }

    pub(crate) fn size(self) -> usize {
        match self {
            Prim::Bool | Prim::U8 | Prim::I8 => 1,
            Prim::U16 | Prim::I16 => 2,
            Prim::U32 | Prim::I32 | Prim::F32 => 4,
            Prim::U64 | Prim::I64 | Prim::F64 => 8,
        }
    }

    /// The largest value of an unsigned type, `None` for signed and float types.
    pub(crate) fn unsigned_max(self) -> Option<u64> {
        match self {
            Prim::U8 => Some(u8::MAX.into()),
            Prim::U16 => Some(u16::MAX.into()),
            Prim::U32 => Some(u32::MAX.into()),
            Prim::U64 => Some(u64::MAX),
            _ => None,
        }
    }

    pub(crate) fn signed(self) -> bool {
        matches!(self, Prim::I8 | Prim::I16 | Prim::I32 | Prim::I64)
    }
}

/// A range check made after a value is read (and before it is written).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Check {
    None,
    /// Unsigned values in `min..=max`.
    Range {
        min: u64,
        max: u64,
    },
    /// Signed values with `|v| <= max`; an error reports `|v|` out of `0..=max`.
    Abs(u64),
}

/// What a batch field is on the wire.
#[derive(Debug, Clone)]
pub(crate) enum BKind {
    Prim(Prim, Check),
    /// A varint: `wide` = 64 bits, `signed` = zig-zag first.
    Packed {
        signed: bool,
        wide: bool,
        check: Check,
    },
    Str {
        max_len: usize,
    },
    Bytes {
        len: usize,
    },
    ByteVec {
        max_len: usize,
    },
    /// `len` primitives in one copy of their bytes.
    Pod {
        element: Prim,
        len: usize,
        check: Check,
    },
    /// A struct of fixed-width fields in one copy of its bytes.
    PodStruct {
        sid: usize,
        size: usize,
    },
    Struct(usize),
    Array {
        max_len: usize,
        /// Fewest bytes of one element: the reader checks `count * unit` against what remains.
        unit: usize,
        element: Box<BKind>,
    },
}

#[derive(Debug, Clone)]
pub(crate) struct BField {
    pub(crate) name: &'static str,
    pub(crate) kind: BKind,
    pub(crate) guard: Option<(usize, bool)>,
}

#[derive(Debug, Clone)]
pub(crate) struct BStruct {
    pub(crate) fields: Vec<BField>,
    pub(crate) layout: Arc<[Arc<str>]>,
    /// Fewest bytes its unguarded fields take.
    pub(crate) min_size: usize,
    /// The most trace entries its fields record, per body byte plus fixed (no scope of its own).
    pub(crate) cost: Cost,
    /// Levels of structs and arrays inside it.
    pub(crate) depth: usize,
}

#[derive(Debug, Clone)]
pub(crate) struct MessageDef {
    pub(crate) message_type: u8,
    pub(crate) name: &'static str,
    pub(crate) body: usize,
}

/// The `[batch]` section of a schema: message types by number, their byte-aligned bodies, and
/// optionally the update stages' names.
#[derive(Debug, Clone)]
pub struct BatchSchema {
    pub(crate) messages: Vec<MessageDef>,
    pub(crate) by_type: Vec<Option<usize>>,
    pub(crate) structs: Vec<BStruct>,
    pub(crate) stages: Option<Vec<Option<&'static str>>>,
}

impl BatchSchema {
    /// The name of message type `t`, `None` for types the schema does not list.
    pub fn message_name(&self, t: u8) -> Option<&'static str> {
        self.def(t).map(|m| m.name)
    }

    /// The number of the message type named `name`.
    pub fn message_type(&self, name: &str) -> Option<u8> {
        self.messages
            .iter()
            .find(|m| m.name == name)
            .map(|m| m.message_type)
    }

    /// The message types, by number.
    pub fn message_types(&self) -> impl Iterator<Item = (u8, &'static str)> + '_ {
        self.messages.iter().map(|m| (m.message_type, m.name))
    }

    /// The most entries the trace of one message body of `len` bytes can hold, whatever its
    /// type (a read visits as many fields): linear in `len`, because the loader refuses a batch
    /// struct that records more than 64 entries per byte it reads plus 256 (SCHEMA.md, "Bounds").
    pub fn max_trace_fields(&self, len: usize) -> usize {
        self.messages
            .iter()
            .map(|m| self.structs[m.body].cost.entries(len))
            .max()
            .unwrap_or(0)
    }

    /// The name of an update stage: the schema's `stages`, or else [`UpdateStage::name`].
    pub fn stage_name(&self, stage: u8) -> Option<&'static str> {
        match &self.stages {
            Some(names) => names.get(usize::from(stage)).copied().flatten(),
            None => UpdateStage(stage).name(),
        }
    }

    pub(crate) fn def(&self, t: u8) -> Option<&MessageDef> {
        self.by_type[usize::from(t)].map(|i| &self.messages[i])
    }

    fn known(&self, s: &impl ByteStream, t: u8) -> Result<&MessageDef> {
        self.def(t).ok_or_else(|| {
            let kind = BatchErrorKind::InvalidValue("a message type the schema does not list");
            BatchError::new(kind, s.base() + s.position(), "type")
        })
    }

    /// Serializes the body of a message of type `t` on any [`ByteStream`]: the hook that
    /// reads, writes, measures and traces. A reader replaces `value` with the body read; a
    /// writer sends `value` (a struct) and leaves it as it was.
    ///
    /// # Errors
    /// A type the schema does not list (invalid_value), a value that does not fit its field
    /// (invalid_value, out_of_range), and whatever the stream reports.
    pub fn serialize_body<S: ByteStream>(
        &self,
        s: &mut S,
        t: u8,
        value: &mut DynValue,
    ) -> Result<()> {
        let body = self.known(s, t)?.body;
        self.struct_body(s, body, value)
    }

    /// Decodes a message's body: `Ok(None)` for a type the schema does not list (skipped by its
    /// length). The body must be consumed exactly.
    ///
    /// # Errors
    /// The first error, naming the message.
    pub fn decode(&self, raw: &RawMessage<'_>) -> Result<Option<DynValue>> {
        if self.def(raw.header.message_type).is_none() {
            return Ok(None);
        }
        let mut r =
            ByteReader::with_tracer(raw.body, raw.body_offset(), bitlens_codec::trace::NoTrace);
        let mut v = DynValue::Null;
        self.serialize_body(&mut r, raw.header.message_type, &mut v)
            .and_then(|()| r.finish())
            .map_err(|e| e.in_message(raw.at()))?;
        Ok(Some(v))
    }

    /// Writes the body of a message of type `t` into `buf`, returning the bytes used.
    ///
    /// # Errors
    /// As [`BatchSchema::serialize_body`]; buffer_full when `buf` is too small.
    pub fn encode_body(&self, t: u8, value: &DynValue, buf: &mut [u8]) -> Result<usize> {
        let mut w = ByteWriter::new(buf);
        self.serialize_body(&mut w, t, &mut value.clone())?;
        Ok(w.finish())
    }

    /// The exact body size of a message of type `t` with `value`.
    ///
    /// # Errors
    /// As [`BatchSchema::serialize_body`].
    pub fn measure(&self, t: u8, value: &DynValue) -> Result<usize> {
        let mut c = ByteCounter::new();
        self.serialize_body(&mut c, t, &mut value.clone())?;
        Ok(c.bytes())
    }

    /// Appends a message of type `t` to a batch: `Ok(false)` when it does not fit.
    ///
    /// # Errors
    /// As [`BatchSchema::encode_body`]; too_large when the body exceeds the largest message
    /// any batch can carry.
    pub fn push(
        &self,
        w: &mut BatchWriter<'_>,
        stage: UpdateStage,
        t: u8,
        value: &DynValue,
    ) -> Result<bool> {
        let mut body = vec![0u8; max_body(MAX_MTU)];
        let n = self.encode_body(t, value, &mut body)?;
        w.push_raw(t, stage, &body[..n])
    }
}
