//! `#[derive(BatchStruct)]` and `#[derive(MessageEnum)]`: byte-aligned batch messages (seed
//! 002, `bitlens_batch`) from `#[batch(...)]` attributes, and the enum of a protocol's messages.
//!
//! Each field becomes one call of a `ByteStream` primitive, with the schema interpreter's range
//! checks around it (checked before a write and after a read), and one inline table of the
//! schema language's `[batch.struct.NAME]` (SCHEMA.md "Message batches").
//!
//! Split as the bit-packed derive is: the container's attributes (`attrs.rs`), each field's
//! wire form (`fields.rs`), the code and schema text of one value (`body.rs`), and the impls
//! (`expand.rs`).

mod attrs;
mod body;
mod expand;
mod fields;

pub use expand::{expand_enum, expand_struct};
