//! Turning a dissected datagram into text lines and JSON objects for `decode` and `check`.
//! Nothing here knows a format: every datagram is a [`Dissection`] (one field tree, one status;
//! for batch formats, messages that are ranges of the tree).

use crate::capture::{Datagram, Timestamp};
use bitlens_codec::dissect::{Dissection, Problem};
use bitlens_codec::float_text::{f32_text, f64_text};
use bitlens_codec::{FieldKind, TraceField, Value};
use std::fmt::Write as _;
use std::net::SocketAddr;

/// Whether JSON lists a trace entry among `fields`: values, and scopes that carry a value of
/// their own (a string, a vector, an index); not checks, padding or plain scopes.
fn shown(f: &TraceField) -> bool {
    match &f.kind {
        FieldKind::Scope => !matches!(f.value, Value::None),
        FieldKind::Value => true,
        FieldKind::Check { .. } | FieldKind::Padding => false,
    }
}

/// Writes a datagram as one JSON object (no newline) for `bitlens decode --json`; `decoder` is
/// the name of its dissector (`none` without one).
///
/// The shape (README, "JSON"):
///
/// ```text
/// {"frame","time","src","dst","len","captured"?,"decoder","status","packet_type",
///  "fields":[{"path","bit","bits","value","min","max"}],
///  "checks":[{"label","bit","ok","expected","found"}],
///  "error":{"kind","bit","field","message"}|null,
///  "desync":{"label","expected_bit","found_bit","after_check","behind_min","behind_max",
///            "message"}|null,
///  "messages":[{"index","offset","type","name","stage","stage_name","len","status","error",
///               "fields"}],          (batch formats only)
///  "flaw":{"field","offset","claimed","room","message"}}   (only with a malformed length)
/// ```
///
/// `status` and `error` are the datagram's one status and first problem (for a batch: an error
/// when its framing or any message is corrupt). A batch's fields are listed per message, with
/// paths relative to the message.
///
/// `len` is the UDP payload length the UDP header declares ([`Datagram::declared_len`]);
/// `captured`, the bytes of it in the capture (`payload_len`), is there only when they differ:
/// a datagram cut by the snap length, or an IP fragment. `flaw` is there only for an IP or UDP
/// length that claims more than an uncut frame holds ([`Datagram::flaw`]): its Wireshark field
/// name (`udp.length`), file offset, value and the bytes there are.
///
/// Values are written as SCHEMA.md gives them: NaN and infinities as `"nan"`, `"inf"`,
/// `"-inf"`, `"nan:0x<bits>"`; integers beyond the range of `i64`/`u64` (and such `min`/`max`) as
/// strings of their digits; fixed-point values as numbers where `f64` holds them exactly.
///
/// Written straight into the buffer rather than through serde structs: a million datagrams make
/// gigabytes of JSON, and the intermediate strings and vectors cost more than the writing
/// (BENCHMARKS.md, section 5). Strings go through `Json::str` (serde_json's escaping rules)
/// and floats through zmij, serde_json's own float formatter.
pub fn write_json(
    buf: &mut Vec<u8>,
    d: &Datagram,
    payload_len: usize,
    decoder: &str,
    dissection: &Dissection,
) {
    let fields = &dissection.trace.fields;
    let mut j = Json::new(buf);
    j.raw("{\"frame\":");
    j.uint(d.frame);
    j.raw(",\"time\":");
    j.time(d.time);
    j.raw(",\"src\":");
    j.addr(&d.src);
    j.raw(",\"dst\":");
    j.addr(&d.dst);
    j.raw(",\"len\":");
    j.uint(d.declared_len() as u64);
    if payload_len != d.declared_len() {
        j.raw(",\"captured\":");
        j.uint(payload_len as u64);
    }
    j.raw(",\"decoder\":");
    j.str(decoder);
    j.raw(",\"status\":");
    j.str(dissection.status.name());
    j.raw(",\"packet_type\":");
    j.opt_str(dissection.packet_type);
    j.raw(",\"fields\":[");
    if dissection.messages.is_none() {
        let mut first = true;
        for f in fields.iter().filter(|f| shown(f)) {
            j.comma(&mut first);
            j.field(f.path(), f);
        }
    } else {
        // A batch inside a transport: the transport's own entries (its messages' fields are
        // listed per message).
        let mut first = true;
        for layer in &dissection.layers {
            let own = fields.get(layer.header.clone()).unwrap_or_default().iter();
            let own = own.chain(fields.get(layer.trailer.clone()).unwrap_or_default());
            for f in own.filter(|f| shown(f)) {
                j.comma(&mut first);
                j.field(f.path(), f);
            }
        }
    }
    j.raw("],\"checks\":[");
    let mut first = true;
    for f in fields {
        if let FieldKind::Check {
            label,
            expected,
            found,
        } = &f.kind
        {
            j.comma(&mut first);
            j.raw("{\"label\":");
            j.str(label);
            j.raw(",\"bit\":");
            j.uint(f.bit as u64);
            j.raw(",\"ok\":");
            j.raw(if expected == found { "true" } else { "false" });
            j.raw(",\"expected\":");
            j.uint(u64::from(*expected));
            j.raw(",\"found\":");
            j.uint(u64::from(*found));
            j.raw("}");
        }
    }
    j.raw("],\"error\":");
    match &dissection.problem {
        Some(p) => j.problem(p),
        None => j.raw("null"),
    }
    j.raw(",\"desync\":");
    match &dissection.desync {
        Some(s) => {
            j.raw("{\"label\":");
            j.str(&s.label);
            j.raw(",\"expected_bit\":");
            j.uint(s.expected_bit as u64);
            j.raw(",\"found_bit\":");
            j.opt_uint(s.found_bit.map(|b| b as u64));
            j.raw(",\"after_check\":");
            j.opt_str(s.after_check.as_deref());
            j.raw(",\"behind_min\":");
            j.opt_int(s.behind.map(|b| i128::from(b.0)));
            j.raw(",\"behind_max\":");
            j.opt_int(s.behind.map(|b| i128::from(b.1)));
            j.raw(",\"message\":");
            j.str(&s.message());
            j.raw("}");
        }
        None => j.raw("null"),
    }
    if let Some(messages) = &dissection.messages {
        j.raw(",\"messages\":[");
        let mut first = true;
        for m in messages {
            j.comma(&mut first);
            j.raw("{\"index\":");
            j.uint(m.index as u64);
            j.raw(",\"offset\":");
            j.uint(m.offset as u64);
            j.raw(",\"type\":");
            j.uint(u64::from(m.message_type));
            j.raw(",\"name\":");
            j.opt_str(m.name);
            j.raw(",\"stage\":");
            j.uint(u64::from(m.stage));
            j.raw(",\"stage_name\":");
            j.opt_str(m.stage_name);
            j.raw(",\"len\":");
            j.uint(m.len as u64);
            j.raw(",\"status\":");
            j.str(m.status.name());
            j.raw(",\"error\":");
            match &m.problem {
                Some(p) => j.problem(p),
                None => j.raw("null"),
            }
            j.raw(",\"fields\":[");
            let mut first_field = true;
            for (path, f) in dissection.body_of(m).filter(|(_, f)| shown(f)) {
                j.comma(&mut first_field);
                j.field(path, f);
            }
            j.raw("]}");
        }
        j.raw("]");
    }
    if let Some(flaw) = &d.flaw {
        j.raw(",\"flaw\":{\"field\":");
        j.str(flaw.field.name());
        j.raw(",\"offset\":");
        j.uint(flaw.offset);
        j.raw(",\"claimed\":");
        j.uint(u64::from(flaw.claimed));
        j.raw(",\"room\":");
        j.uint(u64::from(flaw.room));
        j.raw(",\"message\":");
        j.str(&flaw.to_string());
        j.raw("}");
    }
    j.raw("}");
}

/// Whether a JSON string needs escaping: a control character, `"` or `\\`. Eight bytes at a
/// time (the classic "has a byte less than n" and "has a zero byte" word tricks, exact in what
/// they report: a word with no such byte never reports one); a string of 8 bytes or more ends
/// with its last 8 bytes as one more word instead of a byte loop over the rest.
fn needs_escape(bytes: &[u8]) -> bool {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    let has_zero = |w: u64| w.wrapping_sub(ONES) & !w & HIGH != 0;
    let bad = |c: &[u8; 8]| {
        let w = u64::from_le_bytes(*c);
        w.wrapping_sub(ONES * 0x20) & !w & HIGH != 0
            || has_zero(w ^ (ONES * u64::from(b'"')))
            || has_zero(w ^ (ONES * u64::from(b'\\')))
    };
    let Some(last) = bytes.last_chunk::<8>() else {
        return bytes.iter().any(|&b| b < 0x20 || b == b'"' || b == b'\\');
    };
    let (chunks, rest) = bytes.as_chunks::<8>();
    chunks.iter().any(bad) || (!rest.is_empty() && bad(last))
}

/// Two decimal digits for each of 0..100: `DIGITS[2 * n..2 * n + 2]`.
const DIGITS: &[u8; 200] = b"\
0001020304050607080910111213141516171819202122232425262728293031323334353637383940414243444546474849\
5051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899";

/// Writes the decimal digits of `v` at the start of `out` and returns how many there are
/// (1..=20). The digits are stored straight into `out` (the caller's buffer): building them in a
/// local array and copying that made every number wait on a failed store-to-load forward.
#[inline]
fn write_decimal(out: &mut [u8; 20], mut v: u64) -> usize {
    let len = v.checked_ilog10().map_or(1, |l| l as usize + 1);
    // Two digits at a time from the right: `i` stays within 2..=20 in the loop.
    let mut i = len;
    while v >= 100 {
        let r = (v % 100) as usize * 2;
        v /= 100;
        i -= 2;
        out[i..i + 2].copy_from_slice(&DIGITS[r..r + 2]);
    }
    if v >= 10 {
        let r = v as usize * 2;
        out[..2].copy_from_slice(&DIGITS[r..r + 2]);
    } else {
        out[0] = b'0' + v as u8;
    }
    len
}

/// A JSON writer over a byte buffer: just the pieces `write_json` needs.
///
/// Literal keys are appended with their length known at compile time ([`Json::raw`] is always
/// inlined) and numbers are stored straight into the buffer ([`write_decimal`]): a copy of known
/// length is a few register moves, where appending a slice of runtime length calls libc's
/// `memcpy`, which was a fifth of `decode --json` (BENCHMARKS.md, section 5). The text of the
/// last range written is kept ([`RangeCache`]) and appended whole for the fields that share it.
struct Json<'a> {
    out: &'a mut Vec<u8>,
    last_range: RangeCache,
}

/// The text `,"min":A,"max":B}` of the last range written: most fields of a packet share their
/// range with the field before (256 full-range ints of one array, three floats of a vector).
struct RangeCache {
    range: Option<(i128, i128)>,
    text: [u8; 64],
    len: usize,
}

impl Default for RangeCache {
    fn default() -> Self {
        RangeCache {
            range: None,
            text: [0; 64],
            len: 0,
        }
    }
}

impl<'a> Json<'a> {
    fn new(buf: &'a mut Vec<u8>) -> Self {
        Json {
            out: buf,
            last_range: RangeCache::default(),
        }
    }

    /// Literal JSON text; inlined so that the length is a constant and the copy is a few moves.
    #[inline(always)]
    fn raw(&mut self, s: &str) {
        self.out.extend_from_slice(s.as_bytes());
    }

    fn comma(&mut self, first: &mut bool) {
        if !std::mem::take(first) {
            self.out.push(b',');
        }
    }

    #[inline]
    fn uint(&mut self, v: u64) {
        // Bit widths, octets, small counts: one or two digits without the general loop.
        if v < 10 {
            self.out.push(b'0' + v as u8);
            return;
        }
        if v < 100 {
            let r = v as usize * 2;
            self.out.extend_from_slice(&[DIGITS[r], DIGITS[r + 1]]);
            return;
        }
        // Bit positions and most values: three or four digits, two pairs.
        if v < 10_000 {
            let (hi, lo) = (v as usize / 100 * 2, v as usize % 100 * 2);
            if v < 1000 {
                self.out
                    .extend_from_slice(&[DIGITS[hi + 1], DIGITS[lo], DIGITS[lo + 1]]);
            } else {
                self.out.extend_from_slice(&[
                    DIGITS[hi],
                    DIGITS[hi + 1],
                    DIGITS[lo],
                    DIGITS[lo + 1],
                ]);
            }
            return;
        }
        let at = self.out.len();
        self.out.extend_from_slice(&[0; 20]);
        let out = self.out[at..]
            .first_chunk_mut::<20>()
            .expect("20 bytes were just pushed");
        let len = write_decimal(out, v);
        self.out.truncate(at + len);
    }

    /// An integer as the codec's `JsonInt` serializes it: a number within the range of `i64`
    /// and `u64`, else a string of its digits (a 128-bit value JSON readers would round).
    fn int(&mut self, v: i128) {
        match u64::try_from(v.unsigned_abs()) {
            Ok(abs) if v >= 0 || abs <= 1 << 63 => {
                if v < 0 {
                    self.out.push(b'-');
                }
                self.uint(abs);
            }
            _ => {
                self.out.push(b'"');
                self.out
                    .extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
                self.out.push(b'"');
            }
        }
    }

    fn opt_uint(&mut self, v: Option<u64>) {
        match v {
            Some(v) => self.uint(v),
            None => self.raw("null"),
        }
    }

    fn opt_int(&mut self, v: Option<i128>) {
        match v {
            Some(v) => self.int(v),
            None => self.raw("null"),
        }
    }

    /// A JSON string: copied as is when nothing in it needs escaping (paths, names, most
    /// messages), through serde_json's escaping otherwise.
    fn str(&mut self, s: &str) {
        if needs_escape(s.as_bytes()) {
            self.serde(s);
        } else {
            self.out.push(b'"');
            self.out.extend_from_slice(s.as_bytes());
            self.out.push(b'"');
        }
    }

    fn opt_str(&mut self, s: Option<&str>) {
        match s {
            Some(s) => self.str(s),
            None => self.raw("null"),
        }
    }

    /// A capture time as a string, as [`Timestamp`]'s `Display` writes it.
    fn time(&mut self, t: Timestamp) {
        let (negative, secs, nanos) = t.epoch_parts();
        self.raw(if negative { "\"-" } else { "\"" });
        self.uint(secs);
        let mut b = itoa::Buffer::new();
        let digits = b.format(nanos);
        self.out.push(b'.');
        self.out.extend_from_slice(&b"000000000"[digits.len()..]);
        self.out.extend_from_slice(digits.as_bytes());
        self.out.push(b'"');
    }

    /// An address as a string, as `SocketAddr`'s `Display` writes it.
    fn addr(&mut self, a: &SocketAddr) {
        self.out.push(b'"');
        match a {
            SocketAddr::V4(v4) => {
                for (i, octet) in v4.ip().octets().into_iter().enumerate() {
                    if i > 0 {
                        self.out.push(b'.');
                    }
                    self.uint(u64::from(octet));
                }
                self.out.push(b':');
                self.uint(u64::from(v4.port()));
            }
            SocketAddr::V6(v6) => {
                use std::io::Write as _;
                let _ = write!(self.out, "{v6}");
            }
        }
        self.out.push(b'"');
    }

    /// Anything serde_json formats (floats, strings that need escaping). Writing to a `Vec`
    /// cannot fail, and these values always serialize.
    fn serde<T: serde::Serialize + ?Sized>(&mut self, v: &T) {
        let _ = serde_json::to_writer(&mut *self.out, v);
    }

    fn value(&mut self, v: &Value) {
        match v {
            Value::None => self.raw("null"),
            Value::Bool(b) => self.raw(if *b { "true" } else { "false" }),
            Value::Int(i) => self.int(*i),
            Value::U128(i) => {
                self.out.push(b'"');
                self.out
                    .extend_from_slice(itoa::Buffer::new().format(*i).as_bytes());
                self.out.push(b'"');
            }
            // As `Fixed` serializes: a number when f64 holds it exactly, else its decimal text.
            Value::Fixed(x) => match x.exact_f64() {
                Some(f) => self.f64(f),
                None => self.str(&x.to_string()),
            },
            Value::Str(s) => self.str(s),
            Value::Bytes(bytes) => {
                self.out.push(b'"');
                let at = self.out.len();
                self.out.resize(at + bytes.len() * 2, 0);
                // The slice is exactly twice the bytes: encoding into it cannot fail.
                let _ = hex::encode_to_slice(bytes, &mut self.out[at..]);
                self.out.push(b'"');
            }
            // Floats as `Value` serializes them (NaN and infinities as strings).
            Value::F32(x) => self.f32(*x),
            Value::F64(x) => self.f64(*x),
            Value::Floats(xs) => {
                self.out.push(b'[');
                for (i, x) in xs.iter().enumerate() {
                    if i > 0 {
                        self.out.push(b',');
                    }
                    self.f32(*x);
                }
                self.out.push(b']');
            }
        }
    }

    /// A float as the codec's `Value` serializes it: shortest round-trip form by zmij
    /// (serde_json's own formatter), and NaN and infinities as the strings SCHEMA.md gives
    /// (`"nan"`, `"inf"`, `"-inf"`, `"nan:0x..."` for other NaN bit patterns).
    fn f32(&mut self, x: f32) {
        match f32_text(x) {
            None => {
                let mut text = zmij::Buffer::new();
                self.out.extend_from_slice(text.format_finite(x).as_bytes());
            }
            Some(text) => self.str(&text),
        }
    }

    fn f64(&mut self, x: f64) {
        match f64_text(x) {
            None => {
                let mut text = zmij::Buffer::new();
                self.out.extend_from_slice(text.format_finite(x).as_bytes());
            }
            Some(text) => self.str(&text),
        }
    }

    /// A field, under `path` (its own, or relative to its message).
    fn field(&mut self, path: &str, f: &TraceField) {
        self.raw("{\"path\":");
        self.str(path);
        self.raw(",\"bit\":");
        self.uint(f.bit as u64);
        self.raw(",\"bits\":");
        self.uint(f.bits as u64);
        self.raw(",\"value\":");
        self.value(&f.value);
        match f.range {
            None => self.raw(",\"min\":null,\"max\":null}"),
            Some(r) => self.range_end(r),
        }
    }

    /// `,"min":A,"max":B}`, from the cache when the range is the last one written.
    fn range_end(&mut self, r: (i128, i128)) {
        if self.last_range.range != Some(r) {
            let at = self.out.len();
            self.raw(",\"min\":");
            self.int(r.0);
            self.raw(",\"max\":");
            self.int(r.1);
            self.raw("}");
            let text = &self.out[at..];
            // Two 64-bit ranges take at most 57 bytes; wider ones are not cached.
            if let Some(dst) = self.last_range.text.get_mut(..text.len()) {
                dst.copy_from_slice(text);
                self.last_range.len = text.len();
                self.last_range.range = Some(r);
            }
            return;
        }
        let at = self.out.len();
        self.out.extend_from_slice(&self.last_range.text);
        self.out.truncate(at + self.last_range.len);
    }

    fn problem(&mut self, p: &Problem) {
        self.raw("{\"kind\":");
        self.str(p.kind);
        self.raw(",\"bit\":");
        self.uint(p.bit as u64);
        self.raw(",\"field\":");
        self.str(&p.field);
        self.raw(",\"message\":");
        self.str(&p.message);
        self.raw("}");
    }
}

/// The one-line text summary of a datagram; `decoder` is its dissector's name.
pub fn summary_line(d: &Datagram, decoder: &str, dissection: &Dissection) -> String {
    let mut s = format!(
        "{:>7}  {}  {} -> {}  {:>5} B{}  {} {} {}",
        d.frame,
        d.time,
        d.src,
        d.dst,
        d.declared_len(),
        d.captured_note(),
        decoder,
        dissection.packet_type.unwrap_or("-"),
        dissection.status
    );
    if let Some(p) = &dissection.problem {
        let _ = write!(s, "  {}", p.message);
    }
    if let Some(ds) = &dissection.desync {
        let _ = write!(s, "; {}", ds.message());
    }
    s
}

/// The field tree of a dissected datagram, indented, one field per line.
pub fn field_lines(dissection: &Dissection) -> Vec<String> {
    let trace = &dissection.trace;
    // A read past the end at a field with too few bits to read: shown where it stopped.
    let stop = trace.past_end_entry();
    trace
        .fields
        .iter()
        .chain(stop.as_ref())
        .map(|f| {
            let indent = "  ".repeat(f.depth + 1);
            let name = f.name();
            let mut line = match &f.kind {
                FieldKind::Scope if matches!(f.value, Value::None) => format!("{indent}{name}"),
                FieldKind::Scope | FieldKind::Value => format!("{indent}{name} = {}", f.value),
                FieldKind::Padding => format!("{indent}(padding)"),
                FieldKind::Check { label, expected, found } => {
                    let mark = if expected == found { "✓" } else { "✗" };
                    format!("{indent}check {mark} \"{label}\" expected {expected:#010x} found {found:#010x}")
                }
            };
            let _ = write!(line, "  [bit {}, {} bits", f.bit, f.bits);
            if let Some((lo, hi)) = f.range {
                let _ = write!(line, ", {lo}..={hi}");
            }
            if let Some(raw) = f.raw {
                let _ = write!(line, ", code {raw}");
            }
            line.push(']');
            if f.failed {
                line.push_str("  <- read stopped here");
            }
            line
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use bitlens_codec::trace::JsonInt;
    use std::net::{Ipv4Addr, Ipv6Addr, SocketAddrV6};

    fn written(f: impl FnOnce(&mut Json)) -> String {
        let mut buf = Vec::new();
        f(&mut Json::new(&mut buf));
        String::from_utf8(buf).unwrap()
    }

    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them() {
        for s in [
            "objects[17].position.x",
            "",
            "say \"hi\"",
            "back\\slash",
            "tab\there",
            "nul\0and\u{1f}unit",
            "del\u{7f}",
            "ünïcödé ✓ 🦀",
            "objects[17].position.\"x\"",
            "0123456789abcdef\\",
            "ütf-8 before a \u{1} control",
            "ÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿ",
        ] {
            assert_eq!(
                written(|j| j.str(s)),
                serde_json::to_string(s).unwrap(),
                "{s:?}"
            );
        }
    }

    /// The word-at-a-time test against a byte-by-byte one: every length up to 24, each byte that
    /// must be escaped (and its harmless neighbours) at every position.
    #[test]
    fn needs_escape_finds_every_special_byte_anywhere() {
        for len in 0..=24usize {
            for at in 0..len.max(1) {
                for b in [
                    0u8, 0x1f, 0x20, b'"', b'\\', b'!', b'#', b'[', b']', 0x7f, 0x80, 0xff,
                ] {
                    let mut s = vec![b'a'; len];
                    if let Some(x) = s.get_mut(at) {
                        *x = b;
                    }
                    let naive = s.iter().any(|&c| c < 0x20 || c == b'"' || c == b'\\');
                    assert_eq!(needs_escape(&s), naive, "{s:?}");
                }
            }
        }
    }

    /// The cached range text against a fresh write: the same range twice, ranges alternating, a
    /// range too wide to cache between uses of a cached one, in every order.
    #[test]
    fn cached_ranges_are_written_as_fresh_ones() {
        let ranges = [
            (0, 5),
            (-2_147_483_648, 2_147_483_647),
            (0, i128::from(u64::MAX)),
            (i128::MIN, i128::MAX),
            (-1, 0),
        ];
        let fresh = |r: (i128, i128)| written(|j| j.range_end(r));
        for a in ranges {
            for b in ranges {
                let mut buf = Vec::new();
                let mut j = Json::new(&mut buf);
                for r in [a, a, b, a, b, b] {
                    j.range_end(r);
                }
                let expected: String = [a, a, b, a, b, b].map(fresh).concat();
                assert_eq!(String::from_utf8(buf).unwrap(), expected, "{a:?} {b:?}");
            }
        }
        assert_eq!(fresh((-3, 7)), ",\"min\":-3,\"max\":7}");
    }

    #[test]
    fn integers_are_written_in_decimal() {
        let mut cases = vec![u64::MAX, u64::MAX - 1];
        for p in 0..20 {
            let t = 10u64.pow(p);
            cases.extend([t - 1, t, t + 1]);
        }
        for v in cases {
            assert_eq!(written(|j| j.uint(v)), v.to_string());
            let i = -i128::from(v);
            let text = if i < i128::from(i64::MIN) {
                format!("\"{i}\"")
            } else {
                i.to_string()
            };
            assert_eq!(written(|j| j.int(i)), text);
            assert_eq!(
                written(|j| j.int(i)),
                serde_json::to_string(&JsonInt(i)).unwrap()
            );
        }
        // Beyond 64 bits: the digits in a string, as `JsonInt` serializes them.
        for i in [
            i128::MIN,
            i128::MAX,
            i128::from(u64::MAX) + 1,
            i128::from(i64::MIN) - 1,
            -i128::from(u64::MAX) - 1,
        ] {
            assert_eq!(written(|j| j.int(i)), format!("\"{i}\""));
            assert_eq!(
                written(|j| j.int(i)),
                serde_json::to_string(&JsonInt(i)).unwrap()
            );
        }
        for i in [i128::from(i64::MIN), i128::from(u64::MAX), 0] {
            assert_eq!(written(|j| j.int(i)), i.to_string());
        }
    }

    #[test]
    fn values_are_written_as_serde_json_writes_them() {
        for v in [
            Value::None,
            Value::Bool(false),
            Value::Int(0),
            Value::Int(-1),
            Value::Int(i128::from(i64::MIN)),
            Value::Int(i128::from(u64::MAX)),
            Value::Int(i128::MIN),
            Value::F32(0.1),
            Value::F32(-0.0),
            Value::F32(1e-10),
            Value::F32(123_456.79),
            Value::F32(f32::MAX),
            Value::F32(f32::MIN_POSITIVE),
            Value::F32(1e-45),
            Value::F32(f32::NEG_INFINITY),
            Value::F32(f32::NAN),
            Value::F64(0.1),
            Value::F64(f64::MIN_POSITIVE / 4.0),
            Value::F64(-1e300),
            Value::F64(f64::INFINITY),
            Value::U128(u128::MAX),
            Value::Fixed(bitlens_codec::Fixed::new(-832, 8)),
            Value::Fixed(bitlens_codec::Fixed::new(1, 64)),
            Value::Fixed(bitlens_codec::Fixed::new(i128::MIN, 0)),
            Value::Str("a\"b".into()),
            Value::Bytes(vec![0, 0xab, 0xff]),
            Value::Floats(vec![1.5, -0.0, f32::NAN]),
            Value::F32(f32::from_bits(0xffc00001)),
            Value::F64(-f64::NAN),
        ] {
            assert_eq!(
                written(|j| j.value(&v)),
                serde_json::to_string(&v).unwrap(),
                "{v:?}"
            );
        }
        // SCHEMA.md's spellings, not serde_json's null.
        let floats = Value::Floats(vec![f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.0]);
        assert_eq!(
            written(|j| j.value(&floats)),
            r#"["nan","inf","-inf",-0.0]"#
        );
        let payload = Value::F64(f64::from_bits(0x7ff0000000000001));
        assert_eq!(
            written(|j| j.value(&payload)),
            r#""nan:0x7ff0000000000001""#
        );
    }

    #[test]
    fn times_and_addresses_are_written_as_display_writes_them() {
        for nanos in [
            0i128,
            1,
            999_999_999,
            1_700_000_000_123_456_789,
            -1,
            -500_000_000,
            -1_000_000_000,
            -1_500_000_001,
            i128::from(i64::MIN) * 1_000_000_000,
            i128::from(i64::MAX) * 1_000_000_000 + 999_999_999,
        ] {
            let t = Timestamp::from_nanos(nanos);
            assert_eq!(written(|j| j.time(t)), format!("\"{t}\""), "{nanos}");
        }
        for a in [
            SocketAddr::from((Ipv4Addr::new(10, 0, 0, 11), 50001)),
            SocketAddr::from((Ipv4Addr::new(255, 255, 255, 255), 0)),
            SocketAddr::V6(SocketAddrV6::new(Ipv6Addr::LOCALHOST, 40000, 0, 0)),
            SocketAddr::V6(SocketAddrV6::new("fe80::1:2".parse().unwrap(), 65535, 0, 3)),
        ] {
            assert_eq!(written(|j| j.addr(&a)), format!("\"{a}\""), "{a}");
        }
    }
}
