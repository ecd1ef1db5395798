//! A protocol described in a TOML file and interpreted through the same [`Stream`] trait as the
//! compiled code (seed 003's schema, seed 004's data-driven serialization).
//!
//! [`Schema::from_toml`] checks a schema once (every error names the file, line and column and
//! says what to change); then one interpreter, generic over [`Stream`], reads, writes, measures
//! and traces packets as [`DynValue`] trees. It calls exactly the primitives a hand-written
//! serialize function would, with the same names, so a schema that describes a compiled protocol
//! gives the same bytes, the same verdicts, the same errors and the same trace as the compiled
//! code (`captures/demo.schema.toml` does this for the demo protocol of `bitlens_testkit`; the `schema_vs_compiled`
//! fuzz target checks it).
//!
//! Like every reader of this crate, the interpreter never panics and never allocates by an
//! unchecked length: array counts are checked against their `max_len` and against the bits
//! that remain before anything grows. Its work is linear in the datagram whatever the schema:
//! the loader refuses a struct that would make a reader record more than 64 fields per bit it
//! reads plus 4096, or nest deeper than 32 levels ([`Schema::max_trace_fields`]).
//!
//! The language is described in `SCHEMA.md` at the top of the repository. A short example:
//!
//! ```
//! use bitlens_schema::Schema;
//!
//! let schema = Schema::from_toml(r#"
//!     [protocol]
//!     name = "tiny"
//!     id = 0x1234
//!     mtu = 1200
//!     packets = ["Hello"]
//!
//!     [struct.Hello]
//!     fields = [
//!       { name = "health", type = "int", min = 0, max = 100 },
//!       { name = "name", type = "string", max_len = 15 },
//!     ]
//! "#, "tiny.toml")?;
//!
//! let value = schema.value_from_json("Hello", &serde_json::json!({"health": 73, "name": "bob"}))?;
//! let mut buf = [0u8; 64];
//! let n = schema.write("Hello", &value, &mut buf)?;
//! let (packet_type, back) = schema.read(&buf[..n])?;
//! assert_eq!((packet_type, &back), (0, &value));
//! assert_eq!(back.to_string(), r#"{"health":73,"name":"bob"}"#);
//!
//! let err = Schema::from_toml("[struct.A]\nfields = [{ name = \"x\", type = \"i33\" }]", "bad.toml")
//!     .unwrap_err();
//! assert!(err.to_string().starts_with("bad.toml:2:32: unknown type \"i33\""));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`Stream`]: bitlens_codec::stream::Stream

#![forbid(unsafe_code)]

pub mod batch;
mod bit_run;
mod bounds;
mod defs;
pub mod dissect;
mod error;
mod interpret;
mod json;
mod names;
mod parse;
mod schema;
mod source;
mod value;
pub mod wireshark;
#[doc(hidden)]
pub mod work;
pub mod yojimbo;

pub use error::{SchemaError, SchemaWarning};
pub use parse::BUILTINS;
pub use schema::Schema;
pub use source::{parse_i128, parse_u128};
pub use value::{DynStruct, DynValue};
pub use wireshark::{WiresharkError, WiresharkOptions};
