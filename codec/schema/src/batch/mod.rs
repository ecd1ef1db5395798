//! Message batches with schema-described bodies: the `[batch]` section of a schema, interpreted
//! through the batch layer's own [`ByteStream`] trait (WIRE.md section 3, seed 002).
//!
//! One interpreter per layer: a `[batch.struct.NAME]` body calls exactly the byte-aligned
//! primitives a hand-written `Message::serialize` calls ([`ByteReader`], [`ByteWriter`],
//! [`ByteCounter`], and the tracing reader), with the same names, so a schema that describes
//! compiled messages gives the same bytes, errors and traces (`captures/demo.schema.toml`
//! describes the demo messages of `bitlens_testkit::batch_demo`; `fuzzing::schema::schema_batch_vs_compiled` checks it).
//!
//! ```text
//! type            wire (batch::fast)                        DynValue
//! u8 i8 bool      1 byte (bool: 0 or 1)                     Int / Bool
//! u16..i64        little-endian, 2 / 4 / 8 bytes            Int (u64: U64)
//! f32 f64         raw IEEE-754 bits, little-endian          F32 / F64
//! packed_u32/u64  varint of the tagged format               Int / U64
//! packed_i32/i64  zig-zag, then varint                      Int
//! string          packed length in 0..=max_len, UTF-8       Str
//! bytes           `len` raw bytes, or packed length + bytes Bytes
//! pod             `len` elements (or one struct) in one copy, traced as one field of bytes
//! array           packed count in 0..=max_len, elements `name[i]`
//! a struct name   its fields in a scope
//! ```
//!
//! Reading never panics and never allocates by an unchecked length: counts go through
//! [`ByteStream::length`], which checks them against `max_len` and the bytes that remain.
//!
//! Names read from the file are interned once (`&'static str`), because the batch layer keeps
//! its errors `Copy` and allocation-free: the memory is bounded by the distinct names of every
//! schema a process loads.
//!
//! `schema.rs` holds the checked section and its API, `parse.rs` the loader of the section,
//! `interpret.rs` the interpreter.

mod interpret;
pub(crate) mod parse;
pub(crate) mod schema;

pub use schema::BatchSchema;
