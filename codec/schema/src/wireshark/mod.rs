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
mod packet;

use crate::schema::Schema;
use std::collections::{HashMap, HashSet};
use std::fmt::{self, Write as _};

const COMMON_LUA: &str = include_str!("common.lua");
const PACKET_LUA: &str = include_str!("packet.lua");
const BATCH_LUA: &str = include_str!("batch.lua");

/// The most `ProtoField`s (distinct field paths) one dissector may define: a schema whose
/// structs nest so many times that its paths exceed this is refused rather than written out.
pub const MAX_FIELDS: usize = 65_536;

/// How the exported dissector finds its datagrams, and what it is called.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WiresharkOptions {
    /// UDP ports of the bit-packed packets; none: a heuristic dissector that claims a datagram
    /// when its CRC (with the protocol id folded in) holds.
    pub ports: Vec<u16>,
    /// UDP ports of the message batches (a schema with a `[batch]` section); none: a heuristic
    /// dissector that claims a datagram whose batch and message lengths add up exactly.
    pub batch_ports: Vec<u16>,
    /// The protocol's filter name; default: the schema's protocol name (the loader checked
    /// that Wireshark accepts it: SCHEMA.md, "Names"). A name given here passes the same rule.
    pub name: Option<String>,
}

/// Why a schema could not be exported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WiresharkError(String);

impl fmt::Display for WiresharkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for WiresharkError {}

impl Schema {
    /// Writes a Lua dissector for Wireshark 4.x that decodes this schema's packets (and its
    /// `[batch]` messages), field by field, with the verdicts of `bitlens decode`.
    ///
    /// # Errors
    /// A protocol name Wireshark cannot use as a filter name, a schema with more than
    /// [`MAX_FIELDS`] distinct field paths, a schema without a `[protocol]` section (a yojimbo
    /// game's: Lua cannot decrypt netcode), or a `bit_run` picked by a field wider than a Lua
    /// number holds exactly.
    pub fn wireshark_lua(&self, options: &WiresharkOptions) -> Result<String, WiresharkError> {
        if !self.has_protocol() {
            return Err(WiresharkError("the schema has no [protocol] section, so no packets to export (its [yojimbo] section describes traffic inside netcode's encryption, which a Wireshark Lua dissector cannot decrypt: read it with `bitlens decode`)".into()));
        }
        let name = match &options.name {
            Some(n) => {
                // The rule the schema's own protocol name passed when it loaded.
                if let Some(why) = crate::names::protocol(n, self.batch.is_some()) {
                    return Err(WiresharkError(format!(
                        "protocol name {} {why}",
                        crate::names::shown(n)
                    )));
                }
                n.clone()
            }
            None => proto_name(&self.protocol.name),
        };
        let mut out = String::new();
        let _ = writeln!(
            out,
            "-- Wireshark dissector for the {:?} protocol, written by `bitlens export-wireshark` \
             from its schema.",
            self.protocol.name
        );
        out.push_str(
            "-- Load it with `tshark -X lua_script:THIS.lua` or copy it into Wireshark's personal \
             Lua plugins folder.\n\
             -- Fields are filterable by path (array indices left out); each item shows its bit \
             offset and width.\n\
             -- Generated code: edit the schema and export again rather than this file.\n\n",
        );
        let packets = packet::generate(self, &name, &options.ports)?;
        let batch = match &self.batch {
            Some(b) => Some(batch::generate(b, &name, &options.batch_ports)?),
            None => None,
        };
        out.push_str(COMMON_LUA);
        out.push_str(&packets.prelude);
        out.push_str(PACKET_LUA);
        out.push_str(&packets.code);
        if let Some(b) = batch {
            out.push_str("\ndo\n");
            out.push_str(&b.prelude);
            out.push_str(BATCH_LUA);
            out.push_str(&b.code);
            out.push_str("end\n");
        }
        Ok(out)
    }
}

/// A protocol name as a Wireshark filter name.
fn proto_name(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| match c {
            'a'..='z' | '0'..='9' | '_' | '-' => c,
            'A'..='Z' => c.to_ascii_lowercase(),
            _ => '_',
        })
        .collect();
    if !s.starts_with(|c: char| c.is_ascii_lowercase()) {
        s.insert_str(0, "p_");
    }
    s
}

/// One segment of a field's filter name: letters, digits, `_` and `-` stay; `<=` and `=` (the
/// relative index's flags `d<=5`, `d=1`) are spelled out; anything else becomes `_`.
fn segment(name: &str) -> String {
    let mut s = String::with_capacity(name.len());
    let mut chars = name.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '_' | '-' => s.push(c),
            '<' if chars.peek() == Some(&'=') => {
                chars.next();
                s.push_str("_le_");
            }
            '=' => s.push_str("_eq_"),
            _ => s.push('_'),
        }
    }
    s
}

/// A Lua string literal holding exactly the bytes of `s`.
fn lua_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for b in s.bytes() {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            0x20..=0x7e => out.push(b as char),
            // Three digits: a following digit cannot extend the escape.
            _ => {
                let _ = write!(out, "\\{b:03}");
            }
        }
    }
    out.push('"');
    out
}

/// A double as Lua reads it back exactly (shortest round-trip text).
fn lua_num(x: f64) -> String {
    let s = format!("{x:?}");
    if s.contains(['.', 'e', 'E']) {
        s
    } else {
        format!("{s}.0")
    }
}

/// What a `ProtoField` holds. Fields of one filter name share a class (and so a type).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Class {
    /// No value: a struct, array or element (and a vector or quaternion, shown in its label).
    Scope,
    Bool,
    /// Integers within i64.
    Int,
    /// Integers within u64 (u64 fields, 64-bit `bits`).
    U64,
    Float,
    Str,
    Bytes,
    /// The dissector's own fields (status, error, checks, padding): never shared with a field.
    Meta,
}

impl Class {
    fn suffix(self) -> &'static str {
        match self {
            Class::Scope => "scope",
            Class::Bool => "bool",
            Class::Int => "int",
            Class::U64 => "u64",
            Class::Float => "float",
            Class::Str => "string",
            Class::Bytes => "bytes",
            Class::Meta => "meta",
        }
    }
}

/// What one field contributes to its `ProtoField`.
#[derive(Debug, Clone)]
enum Spec {
    Scope,
    Bool,
    /// An integer in `min..=max`, with names for some values (enums, packet types).
    Int {
        min: i128,
        max: i128,
        names: Option<Vec<(i64, String)>>,
    },
    U64,
    F32,
    F64,
    Str,
    Bytes,
    /// A dissector field: its Lua constructor call, with `ABBR` for the filter name.
    Meta(&'static str),
}

impl Spec {
    fn class(&self) -> Class {
        match self {
            Spec::Scope => Class::Scope,
            Spec::Bool => Class::Bool,
            Spec::Int { .. } => Class::Int,
            Spec::U64 => Class::U64,
            Spec::F32 | Spec::F64 => Class::Float,
            Spec::Str => Class::Str,
            Spec::Bytes => Class::Bytes,
            Spec::Meta(_) => Class::Meta,
        }
    }
}

struct Entry {
    base: String,
    name: String,
    class: Class,
    range: Option<(i128, i128)>,
    double: bool,
    /// Value names; `None` after two sources disagree on one.
    names: Option<Vec<(i64, String)>>,
    meta: Option<&'static str>,
}

/// The Lua tables a generated dissector fills before any packet is read: `<prefix>N`, the field
/// trees (children before parents), and `<prefix>C`, constants written once however often they
/// are used (the packet dissector's prefix is empty, the batch dissector's `B`).
struct Tables {
    prefix: &'static str,
    nodes: Vec<String>,
    consts: Vec<String>,
    const_index: HashMap<String, usize>,
}

impl Tables {
    fn new(prefix: &'static str) -> Self {
        Tables {
            prefix,
            nodes: Vec::new(),
            consts: Vec::new(),
            const_index: HashMap::new(),
        }
    }

    /// Adds a field tree; the Lua expression that names it.
    fn node(&mut self, lua: String) -> String {
        self.nodes.push(lua);
        format!("{}N[{}]", self.prefix, self.nodes.len())
    }

    /// The Lua expression naming constant `lua`, added on its first use.
    fn constant(&mut self, lua: String) -> String {
        let n = self.consts.len();
        let i = *self.const_index.entry(lua.clone()).or_insert(n);
        if i == n {
            self.consts.push(lua);
        }
        format!("{}C[{}]", self.prefix, i + 1)
    }
}

/// The `ProtoField`s of one protocol: one per (filter name, class), merged as fields register.
struct Registry {
    prefix: String,
    /// The Lua table the fields are stored in (`PF`, `BF`).
    table: &'static str,
    entries: Vec<Entry>,
    index: HashMap<(String, Class), usize>,
    /// The class that keeps the plain filter name.
    owner: HashMap<String, Class>,
}

impl Registry {
    fn new(prefix: &str, table: &'static str) -> Self {
        Registry {
            prefix: prefix.to_owned(),
            table,
            entries: Vec::new(),
            index: HashMap::new(),
            owner: HashMap::new(),
        }
    }

    /// The field for `path` (segments joined by `.`, no indices) showing `name`; its Lua
    /// expression is `PF[id]` with the id returned.
    fn field(&mut self, path: &str, name: &str, spec: Spec) -> Result<usize, WiresharkError> {
        let base = if path.is_empty() {
            self.prefix.clone()
        } else {
            format!("{}.{path}", self.prefix)
        };
        let class = spec.class();
        let key = (base.clone(), class);
        let id = match self.index.get(&key) {
            Some(&id) if class != Class::Meta => id,
            _ => {
                if self.entries.len() >= MAX_FIELDS {
                    return Err(WiresharkError(format!(
                        "the schema has more than {MAX_FIELDS} distinct field paths (Wireshark \
                         needs a field for each): nest fewer structs"
                    )));
                }
                self.owner.entry(base.clone()).or_insert(class);
                self.entries.push(Entry {
                    base,
                    name: name.to_owned(),
                    class,
                    range: None,
                    double: false,
                    names: Some(Vec::new()),
                    meta: None,
                });
                self.index.insert(key, self.entries.len() - 1);
                self.entries.len() - 1
            }
        };
        let e = &mut self.entries[id];
        match spec {
            Spec::Int { min, max, names } => {
                e.range = Some(match e.range {
                    Some((a, b)) => (a.min(min), b.max(max)),
                    None => (min, max),
                });
                match (&mut e.names, names) {
                    (Some(have), Some(new)) => {
                        for (v, n) in new {
                            match have.iter().find(|(w, _)| *w == v) {
                                Some((_, m)) if *m != n => {
                                    e.names = None;
                                    break;
                                }
                                Some(_) => {}
                                None => have.push((v, n)),
                            }
                        }
                    }
                    (Some(_), None) => {}
                    (None, _) => {}
                }
            }
            Spec::F64 => e.double = true,
            Spec::Meta(ctor) => e.meta = Some(ctor),
            _ => {}
        }
        Ok(id)
    }

    /// The Lua expression of field `id`.
    fn expr(&self, id: usize) -> String {
        format!("{}[{}]", self.table, id + 1)
    }

    /// The field definitions: `PF[i] = ProtoField....` lines, the 64-bit conversions, and the
    /// `fields` list of the proto `proto`.
    fn emit(&self, proto: &str, wide: &str) -> String {
        let mut out = String::new();
        // Every plain name is taken by its owner; a suffixed name avoids all of them.
        let mut taken: HashSet<String> = self.owner.keys().cloned().collect();
        let mut finals = Vec::with_capacity(self.entries.len());
        for e in &self.entries {
            let owns = self.owner.get(&e.base) == Some(&e.class);
            let abbr = if owns {
                e.base.clone()
            } else {
                let mut candidate = format!("{}_{}", e.base, e.class.suffix());
                let mut n = 2;
                while taken.contains(&candidate) {
                    candidate = format!("{}_{}{n}", e.base, e.class.suffix());
                    n += 1;
                }
                taken.insert(candidate.clone());
                candidate
            };
            finals.push(abbr);
        }
        for (i, (e, abbr)) in self.entries.iter().zip(&finals).enumerate() {
            let a = lua_str(abbr);
            let n = lua_str(&e.name);
            let lhs = self.expr(i);
            let ctor = match e.class {
                Class::Meta => e
                    .meta
                    .unwrap_or("ProtoField.none(ABBR, NAME)")
                    .replace("ABBR", &a)
                    .replace("NAME", &n),
                Class::Scope => format!("ProtoField.none({a}, {n})"),
                Class::Bool => format!("ProtoField.bool({a}, {n})"),
                Class::Float if e.double => format!("ProtoField.double({a}, {n})"),
                Class::Float => format!("ProtoField.float({a}, {n})"),
                Class::Str => format!("ProtoField.string({a}, {n})"),
                Class::Bytes => format!("ProtoField.bytes({a}, {n})"),
                Class::U64 => format!("ProtoField.uint64({a}, {n}, base.DEC)"),
                Class::Int => {
                    let (min, max) = e.range.unwrap_or((0, 0));
                    let (ty, small) = if min >= 0 && max <= i128::from(u32::MAX) {
                        ("uint32", true)
                    } else if min >= i128::from(i32::MIN) && max <= i128::from(i32::MAX) {
                        ("int32", true)
                    } else if min >= 0 {
                        ("uint64", false)
                    } else {
                        ("int64", false)
                    };
                    let vs = match &e.names {
                        Some(names) if small && !names.is_empty() => {
                            let mut t = String::from(", {");
                            for (j, (v, name)) in names.iter().enumerate() {
                                if j > 0 {
                                    t.push_str(", ");
                                }
                                let _ = write!(t, "[{v}] = {}", lua_str(name));
                            }
                            t.push('}');
                            t
                        }
                        _ => String::new(),
                    };
                    format!("ProtoField.{ty}({a}, {n}, base.DEC{vs})")
                }
            };
            let _ = writeln!(out, "{lhs} = {ctor}");
            let conv = match e.class {
                Class::U64 => Some("to_u64"),
                Class::Int => match e.range {
                    Some((min, max)) if min >= 0 && max > i128::from(u32::MAX) => Some("to_u64"),
                    Some((min, max))
                        if min < i128::from(i32::MIN)
                            || (min < 0 && max > i128::from(i32::MAX)) =>
                    {
                        Some("to_i64")
                    }
                    _ => None,
                },
                _ => None,
            };
            if let Some(c) = conv {
                let _ = writeln!(out, "{wide}[{lhs}] = {c}");
            }
        }
        let _ = writeln!(out, "{proto}.fields = {}", self.table);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_are_filter_name_characters() {
        assert_eq!(segment("health"), "health");
        assert_eq!(segment("d<=125"), "d_le_125");
        assert_eq!(segment("d=1"), "d_eq_1");
        assert_eq!(segment("end of packet"), "end_of_packet");
        assert_eq!(proto_name("Arena Shooter!"), "arena_shooter_");
        assert_eq!(proto_name("1nra"), "p_1nra");
        let valid = |n: &str| crate::names::protocol(n, false).is_none();
        assert!(valid("demo-2") && !valid("Demo") && !valid("2x") && !valid("p") && !valid("udp"));
    }

    #[test]
    fn lua_strings_and_numbers_read_back_exactly() {
        assert_eq!(
            lua_str("a\"b\\c\nd\u{1}7é"),
            "\"a\\\"b\\\\c\\nd\\0017\\195\\169\""
        );
        assert_eq!(lua_num(512.0), "512.0");
        assert_eq!(lua_num(f64::from(0.01f32)), "0.009999999776482582");
    }

    #[test]
    fn a_schema_of_too_many_field_paths_is_refused() {
        // Each level doubles the paths: 2^17 leaves.
        let mut text = String::from(
            "[protocol]\nname = \"deep\"\nid = 1\nmtu = 100\npackets = [\"L17\"]\n\
             [struct.L0]\nfields = [{ name = \"x\", type = \"bool\" }]\n",
        );
        for i in 1..=17 {
            let _ = write!(
                text,
                "[struct.L{i}]\nfields = [{{ name = \"a\", type = \"L{j}\" }}, \
                 {{ name = \"b\", type = \"L{j}\" }}]\n",
                j = i - 1
            );
        }
        let schema = Schema::from_toml(&text, "deep.toml").unwrap();
        let err = schema
            .wireshark_lua(&WiresharkOptions::default())
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("more than 65536 distinct field paths"),
            "{err}"
        );
    }

    #[test]
    fn fields_of_one_name_share_a_class_and_the_others_get_a_suffix() {
        let mut r = Registry::new("demo", "PF");
        let int = |min, max| Spec::Int {
            min,
            max,
            names: None,
        };
        let a = r.field("x", "x", int(0, 100)).unwrap();
        let b = r.field("x", "x", int(-5, 5)).unwrap();
        let c = r.field("x", "x", Spec::Str).unwrap();
        let d = r.field("y", "y", Spec::F32).unwrap();
        let e = r.field("y", "y", Spec::F64).unwrap();
        assert_eq!((a, b, c, d, e), (0, 0, 1, 2, 2));
        let lua = r.emit("P", "WIDE");
        assert!(
            lua.contains("PF[1] = ProtoField.int32(\"demo.x\", \"x\", base.DEC)"),
            "{lua}"
        );
        assert!(
            lua.contains("PF[2] = ProtoField.string(\"demo.x_string\", \"x\")"),
            "{lua}"
        );
        assert!(
            lua.contains("PF[3] = ProtoField.double(\"demo.y\", \"y\")"),
            "{lua}"
        );
    }
}
