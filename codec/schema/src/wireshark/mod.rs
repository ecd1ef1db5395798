//! A Wireshark dissector, in Lua, generated from a schema: `bitlens export-wireshark`.
//!
//! [`Schema::wireshark_lua`] reads the same checked definitions the interpreter runs (no second
//! parse of the TOML) and writes one self-contained Lua file for Wireshark 4.x (Lua 5.2, as 4.0
//! to 4.2 ship; nothing in it needs Lua 5.3 or later):
//!
//! ```text
//! prelude      Proto objects, ProtoFields (one per field path), experts, constants
//! runtime      common.lua (f32 arithmetic, CRC-32, text), packet.lua (bit reader), batch.lua
//! generated    one Lua function per struct, calling the runtime's primitives in field order
//! dissectors   framing (MTU, CRC, packet type, body, end check, end), status, error, desync
//! registration on the UDP ports given, or as heuristic dissectors (a packet's CRC must hold)
//! ```
//!
//! The runtime mirrors the Rust readers primitive by primitive (bit order and word layout of
//! WIRE.md section 1, every range and refusal check, the compressed-float arithmetic step by
//! step in `f32`, 128-bit integers and Q-format values exactly in 16-bit limbs), so the dissector
//! reports the same field paths, values, bit offsets, statuses and first error as
//! `bitlens decode --json`; `inspector/tests/wireshark_export.rs` checks that with the real
//! `tshark` on every shipped capture and on `captures/every.schema.toml`.
//!
//! Field types: integers up to 64 bits are Wireshark integers (64-bit ones Int64/UInt64), wider
//! `int128` and `u128` values are decimal text fields, `fixed` values doubles (their label shows
//! the exact decimal), floats floats, strings and wide strings text, bytes bytes; structs,
//! arrays and elements are plain subtrees, and a tagged union a subtree of its tag (an integer
//! whose label names the variant) and the variant's fields.
//!
//! Every field is a `ProtoField` named after its path without array indices:
//! `arena.players.health` for `players[3].health`, so that `arena.players.health > 90` filters.
//! Fields of different kinds that would share a name (a number in one packet type, a string in
//! another) keep the name for the first kind met and add the kind to the others
//! (`arena.x_string`); integer fields that share a name share one integer type wide enough for
//! all of them.
//!
//! A new field type is one arm in `packet.rs` (its node and its call) and, when it reads in a
//! new way, one Lua function in `packet.lua`.
//!
//! ```
//! use bitlens_schema::{Schema, WiresharkOptions};
//!
//! let schema = Schema::from_toml(r#"
//!     [protocol]
//!     name = "tiny"
//!     id = 0x1234
//!     mtu = 1200
//!     packets = ["Hello"]
//!
//!     [struct.Hello]
//!     fields = [{ name = "health", type = "int", min = 0, max = 100 }]
//! "#, "tiny.toml")?;
//! let options = WiresharkOptions { ports: vec![5000], ..WiresharkOptions::default() };
//! let lua = schema.wireshark_lua(&options)?;
//! assert!(lua.contains(r#"ProtoField.uint32("tiny.health", "health", base.DEC)"#));
//! assert!(lua.contains(r#"DissectorTable.get("udp.port"):add(5000, PROTO)"#));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod batch;
mod export;
mod lua;
mod packet;

pub use export::WiresharkOptions;
pub use lua::{MAX_FIELDS, WiresharkError};
