//! What both Lua generators share: Lua literals, filter names, the constant and field-tree
//! tables, and the registry of `ProtoField`s.

use std::collections::{HashMap, HashSet};
use std::fmt::{self, Write as _};

/// The most `ProtoField`s (distinct field paths) one dissector may define: a schema whose
/// structs nest so many times that its paths exceed this is refused rather than written out.
pub const MAX_FIELDS: usize = 65_536;
/// Why a schema could not be exported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WiresharkError(pub(super) String);

impl fmt::Display for WiresharkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for WiresharkError {}
/// A protocol name as a Wireshark filter name.
pub(super) fn proto_name(name: &str) -> String {
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
pub(super) fn segment(name: &str) -> String {
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
pub(super) fn lua_str(s: &str) -> String {
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
pub(super) fn lua_num(x: f64) -> String {
    let s = format!("{x:?}");
    if s.contains(['.', 'e', 'E']) {
        s
    } else {
        format!("{s}.0")
    }
}

/// What a `ProtoField` holds. Fields of one filter name share a class (and so a type).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Class {
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
    pub(super) fn suffix(self) -> &'static str {
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
pub(super) enum Spec {
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
    pub(super) fn class(&self) -> Class {
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
pub(super) struct Tables {
    pub(super) prefix: &'static str,
    pub(super) nodes: Vec<String>,
    pub(super) consts: Vec<String>,
    pub(super) const_index: HashMap<String, usize>,
}

impl Tables {
    pub(super) fn new(prefix: &'static str) -> Self {
        Tables {
            prefix,
            nodes: Vec::new(),
            consts: Vec::new(),
            const_index: HashMap::new(),
        }
    }

    /// Adds a field tree; the Lua expression that names it.
    pub(super) fn node(&mut self, lua: String) -> String {
        self.nodes.push(lua);
        format!("{}N[{}]", self.prefix, self.nodes.len())
    }

    /// The Lua expression naming constant `lua`, added on its first use.
    pub(super) fn constant(&mut self, lua: String) -> String {
        let n = self.consts.len();
        let i = *self.const_index.entry(lua.clone()).or_insert(n);
        if i == n {
            self.consts.push(lua);
        }
        format!("{}C[{}]", self.prefix, i + 1)
    }
}

/// The `ProtoField`s of one protocol: one per (filter name, class), merged as fields register.
pub(super) struct Registry {
    pub(super) prefix: String,
    /// The Lua table the fields are stored in (`PF`, `BF`).
    pub(super) table: &'static str,
    entries: Vec<Entry>,
    index: HashMap<(String, Class), usize>,
    /// The class that keeps the plain filter name.
    pub(super) owner: HashMap<String, Class>,
}

impl Registry {
    pub(super) fn new(prefix: &str, table: &'static str) -> Self {
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
    pub(super) fn field(
        &mut self,
        path: &str,
        name: &str,
        spec: Spec,
    ) -> Result<usize, WiresharkError> {
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
    pub(super) fn expr(&self, id: usize) -> String {
        format!("{}[{}]", self.table, id + 1)
    }

    /// The field definitions: `PF[i] = ProtoField....` lines, the 64-bit conversions, and the
    /// `fields` list of the proto `proto`.
    pub(super) fn emit(&self, proto: &str, wide: &str) -> String {
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
    use crate::schema::Schema;
    use crate::wireshark::WiresharkOptions;

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
