//! Derive macros of bitlens: `#[derive(BitPacked)]` and `#[derive(PacketSet)]` for the
//! bit-packed codec (`bitlens_codec`, which re-exports them), `#[derive(BatchStruct)]` and
//! `#[derive(MessageEnum)]` for byte-aligned message batches (`bitlens_batch`, which re-exports
//! them and documents their `#[batch(...)]` attributes), and `#[derive(Tagged)]` for the tagged
//! format (`bitlens_tagged`).
//!
//! # `#[derive(BitPacked)]`
//!
//! Generates `bitlens_codec::BitPacked`: the one `serialize` function over every `Stream`, the
//! fewest bits a value takes, and the type's definition in the schema language (`SCHEMA.md`),
//! which `bitlens-schema` interprets to the same bytes, errors and traces. On a **struct**, its
//! fields in order; on an **enum of unit variants**, `int(smallest, largest)` over the variants'
//! numbers (the schema's `[enum]`: no gaps, so every number read has a variant); on an **enum
//! with data**, a tagged union: the variant's number as `int(0, variants - 1)` named
//! `variant`, then that variant's fields (the schema's `[union]`).
//!
//! A field without attributes goes through its type's own `BitPacked`: `bool` (1 bit), the
//! integers `i8`..`i64`, `u8`..`u32` (`int` over the type's full range), `u64`, `f32`, `f64`
//! (raw bits), `i128` (full-range `int128`), `u128`, `[u8; N]` (aligned raw bytes), and any
//! derived type (a struct in a scope named after the field). Attributes on a field,
//! `#[bitlens(...)]`, modelled on deku's:
//!
//! | attribute | field type | wire |
//! |---|---|---|
//! | `range = MIN..=MAX` (or `MIN..MAX`) | integers | `v - MIN` in `bits_required(MIN, MAX)` bits (`int128` for `u64`, `i128`, `u128`) |
//! | `bits = N` | integers up to 64 bits, `bool` | `N` raw bits (two's complement of the type's width) |
//! | `compressed(min = A, max = B, resolution = R)` | `f32`, `[f32; 3]` | compressed float / vector |
//! | `compressed(min = A, delta = D, max_integer_value = M)` | `f32`, `[f32; 3]` | the same from precomputed constants |
//! | `compressed = CONST` | `f32`, `[f32; 3]` | a `CompressedFloat` constant (the schema gets its precomputed constants) |
//! | `quaternion(bits = N)` or `quaternion = CONST` | `[f32; 4]` | smallest three, `2 + 3N` bits |
//! | `fixed(integer_bits = I, fraction_bits = F, min = A, max = B)` (`unsigned`), or `fixed = CONST` | the Q format's storage integer | serialize 1.0's fixed point |
//! | `max_len = N` | `String` | `int(len, 0, N)`, then UTF-8 bytes |
//! | `wstring, max_len = N` | `String` | UTF-16 units in 32-bit groups |
//! | `len = N` | `Vec<u8>` | `N` aligned raw bytes |
//! | `max_len = N` (and `element(...)` with an element's attributes) | `Vec<T>` | `int(len, 0, N)`, then each element |
//! | `sparse(max_objects = N)` | `Vec<T>`, `T` with a `sparse_index` field | relative object indices, closed by `N` |
//! | `sparse_index` | an integer field of a sparse array's element | the index the array sends |
//! | `object_index(max_objects = N, previous = P)` | integers holding `N` | one relative object index |
//! | `int_relative(previous = P)` | `u32`, `i64`, `u64` | the reference library's relative integer |
//! | `align` / `align_after` | any | zero bits to a byte boundary, before / after the field |
//! | `check = "label"` / `check_after = "label"` | any (repeatable) | a check marker before / after the field |
//! | `if = flag` / `unless = flag` | any | sent only when the earlier bool `flag` is true / false; absent reads as `Default` (writing another value is refused) |
//! | (none) / `flag = "name"` | `Option<T>` | a bool `has_<field>` (or `name`), then the value when `Some` |
//! | `if = flag` | `Option<T>` | `Some` exactly when the earlier bool `flag` says so |
//! | `flatten` | a derived struct | its fields inline, without a scope (the schema's `include`) |
//! | `name = "wire"` | any | the field's name in traces, errors and the schema |
//! | `skip` | any (`Default`) | not sent; reads as `Default` |
//!
//! `P` (previous) is an integer constant (default `-1`) or the name of an earlier integer field.
//! Bounds may be literals or constant expressions. On the type: `name = "..."` (its schema
//! name), `tag_name = "..."` (a union's tag), `crate = "path"`.
//!
//! Wrong attributes are compile errors at the attribute that say the fix: an empty range, a
//! range outside its type, a compressed float without `resolution` (or `min`, `max`), a `Vec` or
//! `String` without `max_len`, raw bits wider than the type, a quaternion outside 2..=16 bits, a
//! Q format that is not the field's storage, a guard that is not an earlier bool, two fields with
//! one wire name, two forms on one field, an enum whose numbers leave gaps. Attributes given as
//! constant expressions are checked the same way by compile-time assertions.
//!
//! A compressed float range that is not stable (a packet read with it may not re-encode to the
//! same bytes: `CompressedFloat::is_stable`, WIRE.md) compiles with a warning at its attribute,
//! decided at compile time (`bitlens_codec::packed::range_stability`), as `bitlens-schema` warns
//! when it loads one; so does a range with too many steps (more than 2^16, not stable by the
//! cheap bound) to decide at compile time. Readers accept every code up to `M` either way.
//!
//! # `#[derive(PacketSet)]`
//!
//! On the enum of a protocol's packets (one variant per packet type, numbered from 0 in
//! declaration order): `#[bitlens(protocol = "name", id = ID, mtu = N)]` (`id` an integer
//! literal, with `id_bits = 64` for a 64-bit id, or a `ProtocolId` constant). Generates the
//! `Packet` impl (`protocol()`, `packet_type()`, `empty(t)`, `serialize_body`; framing by
//! `bitlens_codec::packet::frame`) and `PacketSet::schema()`, the whole protocol. A variant is
//! `Name(Body)` (a derived struct: its fields are the body), `Name { fields }`, `Name(fields)`
//! or `Name`; `#[bitlens(name = "...")]` renames its packet type, `check = "label"` /
//! `check_after = "label"` put check markers around its body.
//!
//! # `#[derive(BatchStruct)]` and `#[derive(MessageEnum)]`
//!
//! A batch message's (or a struct inside one's) serialize function over every
//! `bitlens_batch::ByteStream`, its byte bounds and its `[batch.struct.NAME]` text, from
//! `#[batch(...)]` attributes (a namespace of their own, so one struct can be both bit-packed
//! and a batch struct, as the demo's `RigidBody` is); `message_type = N` makes it a
//! `MessageBody`. On the enum of a protocol's messages, `MessageEnum`: decode, push, encode,
//! the `[batch]` section, and with `handler = Type` that type's `Dispatch`. The attribute table
//! is in the `bitlens_batch` crate docs.
//!
//! # `#[derive(Tagged)]`
//!
//! Writes the one `report` function of a struct from `#[tag(N)]` attributes on its fields.
//!
//! - `#[tag(N)]` on every field gives its id; ids must be unique, and fields are reported in
//!   increasing id order whatever their declaration order.
//! - `#[tag(skip)]` leaves a field out of the format (it keeps its `Default` on decode).
//! - `#[tag(removed(4, 7))]` on the struct lists ids of deleted fields: using one again is a
//!   compile error, and the list is exposed as `Tagged::REMOVED_IDS`.
//! - `#[tag(crate = "path")]` on the struct names the tagged crate's path (default
//!   `::bitlens_tagged`), for code inside that crate itself.
//!
//! See the `bitlens_tagged` module documentation for a runnable example.
//!
//! # For contributors: where the derives are, and adding a wire primitive
//!
//! Both attribute namespaces go through one table and one parser: `forms.rs` is the table
//! (every key of `#[bitlens(...)]` and `#[batch(...)]`: its name, its namespace, its role, which
//! keys it combines with; the bit-packed wire forms as written, `Form`, and as resolved, `Kind`,
//! with the `Stream` call, the fewest bits and the schema keys of each), `attrs.rs` the one
//! parser of field attributes (and the container's and the variant's), `fields.rs` the check
//! of each form against the field's type, `body.rs` a list of fields (guards, flags, markers,
//! wire names), `bitpacked.rs` and `packet_set.rs` the impls. The batch derive is split the
//! same way under `batch/` (`attrs.rs`, `fields.rs`, `body.rs`, `expand.rs`), with its own
//! byte-aligned forms (`batch::fields::Kind`).
//!
//! A new bit-packed primitive (say `foo(bits = N)`) touches:
//!
//! 1. the codec: the `Stream` method that reads, writes, measures and traces it (`stream.rs`,
//!    whose default body the reader and writer share, and the streams that override it in
//!    `read.rs`, `write.rs`, `measure.rs` and `generate.rs`, which draws a value within the
//!    attribute), with WIRE.md saying its bits;
//! 2. this crate's table, `forms.rs`: a `Key` (its row: name, role, namespace), a `Form` (what
//!    the attribute holds) and a `Kind` (what is sent); the compiler then stops at each `match`
//!    that must learn it: the parser in `attrs.rs` (`FieldAttrs::item`, the parameters), the
//!    check against the field's type in `fields.rs` (`kind_of`), and in `forms.rs` the serialize
//!    call, the fewest bits and the schema keys (`Kind::serialize`, `min_bits`, `schema`);
//! 3. the schema crate's table of types (`bitlens-schema`: its name, keys and interpreter), and
//!    the Wireshark dissector's Lua beside it;
//! 4. the docs: the attribute table above, SCHEMA.md's type, a `tests/errors/` case for each
//!    new compile error, and the differential tests (`bitlens-testkit`'s showcase) that hold the
//!    derived code to the schema interpreter.

use proc_macro::TokenStream;
use syn::{DeriveInput, parse_macro_input};

mod attrs;
mod batch;
mod bitpacked;
mod body;
mod fields;
mod forms;
mod packet_set;
mod tagged;

/// Derives `bitlens_codec::BitPacked` from `#[bitlens(...)]` attributes (see the crate doc).
#[proc_macro_derive(BitPacked, attributes(bitlens))]
pub fn derive_bit_packed(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    match bitpacked::expand(&input) {
        Ok(tokens) => tokens.into(),
        Err(err) => err.to_compile_error().into(),
    }
}

/// Derives `bitlens_codec::Packet` and `bitlens_codec::PacketSet` for a packet enum (see the
/// crate doc).
#[proc_macro_derive(PacketSet, attributes(bitlens))]
pub fn derive_packet_set(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    match packet_set::expand(&input) {
        Ok(tokens) => tokens.into(),
        Err(err) => err.to_compile_error().into(),
    }
}

/// Derives `bitlens_tagged::Tagged` from `#[tag(N)]` field attributes.
#[proc_macro_derive(Tagged, attributes(tag))]
pub fn derive_tagged(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    match tagged::expand(&input) {
        Ok(tokens) => tokens.into(),
        Err(err) => err.to_compile_error().into(),
    }
}

/// Derives `bitlens_batch::BatchStruct` (and `bitlens_batch::MessageBody` with
/// `#[batch(message_type = N)]`) from `#[batch(...)]` attributes: see the `bitlens_batch` crate
/// docs.
#[proc_macro_derive(BatchStruct, attributes(batch))]
pub fn derive_batch_struct(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    match batch::expand_struct(&input) {
        Ok(tokens) => tokens.into(),
        Err(err) => err.to_compile_error().into(),
    }
}

/// Derives `bitlens_batch::MessageEnum` for the enum of a protocol's batch messages: see the
/// `bitlens_batch` crate docs.
#[proc_macro_derive(MessageEnum, attributes(batch))]
pub fn derive_message_enum(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    match batch::expand_enum(&input) {
        Ok(tokens) => tokens.into(),
        Err(err) => err.to_compile_error().into(),
    }
}
