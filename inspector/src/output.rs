//! Turning a dissected datagram into text lines and JSON objects for `decode` and `check`.
//! Nothing here knows a format: every datagram is a [`Dissection`] (one field tree, one status;
//! for batch formats, messages that are ranges of the tree).

use crate::capture::{Datagram, Timestamp};
use bitlens_codec::Entries;
use bitlens_codec::dissect::{Dissection, Problem};
use bitlens_codec::float_text::{f32_text, f64_text};
use bitlens_codec::trace::{EntryKind, Field, NamePart, ValueRef};
use std::fmt::Write as _;
use std::io::Write as _;
use std::net::SocketAddr;

/// Whether JSON lists a trace entry among `fields`: values, and scopes that carry a value of
/// their own (a string, a vector, an index); not checks, padding or plain scopes.
#[inline(always)]
fn shown(f: &Field<'_>) -> bool {
    match f.kind() {
        EntryKind::Scope => f.has_value(),
        EntryKind::Value => true,
        EntryKind::Check | EntryKind::Padding => false,
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
    datagram_json(&mut Json::new(buf), d, payload_len, decoder, dissection);
}

/// [`write_json`] lines, one per datagram, written at the start of a buffer over the bytes it
/// holds (a reused buffer's earlier output: room that needs no zeroing), for `decode --json`'s
/// chunks. The writer's room and its last range carry from line to line. The buffer is left
/// as it is past [`JsonLines::written`].
pub struct JsonLines<'a>(Json<'a>);

impl<'a> JsonLines<'a> {
    /// Lines written from the start of `buf`, over its bytes.
    pub fn over(buf: &'a mut Vec<u8>) -> Self {
        JsonLines(Json {
            out: buf,
            pos: 0,
            ranges: RangeCache::default(),
            floats: FloatTexts::default(),
            checks: Vec::new(),
            keep_room: true,
            scratch: Vec::new(),
            plain: false,
        })
    }

    /// A datagram as [`write_json`] writes it, and a newline.
    pub fn line(
        &mut self,
        d: &Datagram,
        payload_len: usize,
        decoder: &str,
        dissection: &Dissection,
    ) {
        datagram_json(&mut self.0, d, payload_len, decoder, dissection);
        self.0.byte(b'\n');
    }

    /// How many bytes at the start of the buffer the lines take.
    pub fn written(&self) -> usize {
        self.0.pos
    }
}

/// The body of [`write_json`], through a writer.
fn datagram_json(
    j: &mut Json,
    d: &Datagram,
    payload_len: usize,
    decoder: &str,
    dissection: &Dissection,
) {
    let fields = &dissection.trace.fields;
    j.plain = !needs_escape(fields.texts().as_bytes());
    j.header(d, payload_len, decoder, dissection);
    // Each field and check is written after a comma; `close_list` makes the first one the `[`.
    let start = j.pos;
    if dissection.messages.is_none() {
        // One pass over the entries: the fields written, the checks' places kept for their list.
        let mut checks = std::mem::take(&mut j.checks);
        checks.clear();
        let mut walk = fields.walk();
        let mut i = 0;
        // Paths are built for the fields shown (and scopes), not for checks or padding.
        while let Some((f, path)) = walk.next_where(shown) {
            match path {
                Some(path) if shown(&f) => j.field(path, &f),
                _ if f.kind() == EntryKind::Check => checks.push(i),
                _ => {}
            }
            i += 1;
        }
        j.close_list(start);
        j.raw(",\"checks\":");
        let start = j.pos;
        for &i in &checks {
            if let Some(f) = fields.view(i) {
                j.check_entry(&f);
            }
        }
        j.close_list(start);
        j.checks = checks;
    } else {
        // A batch inside a transport: the transport's own entries (its messages' fields are
        // listed per message).
        for layer in &dissection.layers {
            for range in [layer.header.clone(), layer.trailer.clone()] {
                let mut walk = fields.walk_range(range);
                while let Some((f, path)) = walk.next_bytes() {
                    if shown(&f) {
                        j.field(path, &f);
                    }
                }
            }
        }
        j.close_list(start);
        j.raw(",\"checks\":");
        let start = j.pos;
        for f in fields.views() {
            j.check_entry(&f);
        }
        j.close_list(start);
    }
    j.raw(",\"error\":");
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
            j.raw(",\"fields\":");
            let start = j.pos;
            dissection.walk_body(m, |path, f| {
                if shown(&f) {
                    j.field(path, &f);
                }
            });
            j.close_list(start);
            j.byte(b'}');
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

/// Whether a JSON string needs escaping: a control character, `"` or `\\`. A string of 16
/// bytes or more is tested in blocks of 16 ([`escape_in_block`]), the last 16 bytes as one more
/// block instead of a byte loop over the rest (one of 17 to 32 bytes is its first and last
/// block); a shorter one as its first and last 8 (or 4) bytes in words ([`escape_in_word`]). One
/// branch per block of a longer one, none per byte or word.
#[inline(always)]
fn needs_escape(bytes: &[u8]) -> bool {
    if let (Some(first), Some(last)) = (bytes.first_chunk::<16>(), bytes.last_chunk::<16>()) {
        if bytes.len() <= 32 {
            return escape_in_block(first) | escape_in_block(last);
        }
        // A loop that may leave early is not vectorized across blocks (which left texts under
        // 512 bytes to a loop of one byte at a time): each block is its own vector compares.
        for block in bytes.as_chunks::<16>().0 {
            if escape_in_block(block) {
                return true;
            }
        }
        return escape_in_block(last);
    }
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    if let (Some(head), Some(tail)) = (bytes.first_chunk::<8>(), bytes.last_chunk::<8>()) {
        let marks =
            escape_in_word(u64::from_le_bytes(*head)) | escape_in_word(u64::from_le_bytes(*tail));
        return marks & HIGH != 0;
    }
    if let (Some(head), Some(tail)) = (bytes.first_chunk::<4>(), bytes.last_chunk::<4>()) {
        let word =
            u64::from(u32::from_le_bytes(*head)) | u64::from(u32::from_le_bytes(*tail)) << 32;
        return escape_in_word(word) & HIGH != 0;
    }
    bytes.iter().any(|&b| b < 0x20 || b == b'"' || b == b'\\')
}

/// A word whose high bits (`0x80` of a byte) are not all clear when one of the word's eight
/// bytes is to be escaped, and all clear when none is: the classic "has a byte less than n" and
/// "has a zero byte" word tricks, exact in whether they report (a word with no such byte never
/// reports one, though the byte they mark may be a later one).
#[inline(always)]
fn escape_in_word(w: u64) -> u64 {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    let zero_byte = |w: u64| w.wrapping_sub(ONES) & !w;
    w.wrapping_sub(ONES * 0x20) & !w
        | zero_byte(w ^ (ONES * u64::from(b'"')))
        | zero_byte(w ^ (ONES * u64::from(b'\\')))
}

/// Whether 16 bytes hold one to escape: a reduction without branches, which LLVM compiles to
/// vector compares of the whole block.
#[inline(always)]
fn escape_in_block(block: &[u8; 16]) -> bool {
    let mut any = 0u8;
    for &b in block {
        any |= u8::from(b < 0x20) | u8::from(b == b'"') | u8::from(b == b'\\');
    }
    any != 0
}

/// Two decimal digits for each of 0..100: `DIGITS[2 * n..2 * n + 2]`.
const DIGITS: &[u8; 200] = b"\
0001020304050607080910111213141516171819202122232425262728293031323334353637383940414243444546474849\
5051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899";

/// Writes the decimal digits of `v` at the start of `out` and returns how many there are
/// (1..=20). Values below 10,000 (bit positions, widths, octets, ports, small values: most of
/// the numbers of a datagram) take no loop and no division by a runtime length; the rest are
/// written in groups of eight digits ([`write_decimal_long`]).
#[inline(always)]
fn write_decimal(out: &mut [u8; 20], v: u64) -> usize {
    if v < 10 {
        out[0] = b'0' + v as u8;
        return 1;
    }
    if v < 100 {
        let r = v as usize * 2;
        out[..2].copy_from_slice(&DIGITS[r..r + 2]);
        return 2;
    }
    if v < 10_000 {
        let (hi, lo) = (v as usize / 100 * 2, v as usize % 100 * 2);
        if v < 1000 {
            out[0] = DIGITS[hi + 1];
            out[1..3].copy_from_slice(&DIGITS[lo..lo + 2]);
            return 3;
        }
        out[..2].copy_from_slice(&DIGITS[hi..hi + 2]);
        out[2..4].copy_from_slice(&DIGITS[lo..lo + 2]);
        return 4;
    }
    write_decimal_long(out, v)
}

/// The eight decimal digits of `v` (below 10^8, leading zeros kept) as the values 0..=9 in the
/// bytes of a word, the first digit in its lowest byte (the byte a little-endian store writes
/// first). No division by a runtime value and no loop: the number is split into halves in the
/// word's lanes, 4 + 4 digits in two 32-bit lanes, then 2 + 2 in 16-bit lanes, then 1 + 1 in
/// bytes, each split a multiplication by a fixed-point reciprocal that is exact in its range.
#[inline(always)]
fn digit_bytes(v: u32) -> u64 {
    let v = u64::from(v);
    let high = v / 10_000;
    // Lanes of 32 bits: the first four digits low, the last four high.
    let x = high | ((v - high * 10_000) << 32);
    // Each lane (below 10^4) divided by 100: floor(n * 10486 / 2^20) is n / 100 for n < 10^4.
    let hundreds = ((x * 10_486) >> 20) & 0x0000_007f_0000_007f;
    let y = hundreds | ((x - hundreds * 100) << 16);
    // Each 16-bit lane (below 100) divided by 10: floor(n * 103 / 2^10) is n / 10 for n < 100.
    let tens = ((y * 103) >> 10) & 0x000f_000f_000f_000f;
    tens | ((y - tens * 10) << 8)
}

/// `'0'` in every byte: added to [`digit_bytes`], the digits' ASCII.
const ASCII_ZEROS: u64 = u64::from_ne_bytes([b'0'; 8]);

/// Writes the digits of `v` (1 to 10^8 - 1) without leading zeros as one 8-byte store at the
/// start of `out` (the bytes past the digits are zeros) and returns how many there are.
#[inline(always)]
fn write_leading(out: &mut [u8], v: u32) -> usize {
    let digits = digit_bytes(v);
    // The leading zeros are the word's low zero bytes; `v` > 0 has a non-zero digit.
    let zeros = (digits.trailing_zeros() / 8).min(7);
    let text = (digits | ASCII_ZEROS) >> (8 * zeros);
    out[..8].copy_from_slice(&text.to_le_bytes());
    8 - zeros as usize
}

/// Writes all eight digits of `v` (below 10^8), leading zeros kept, at the start of `out`.
#[inline(always)]
fn write_eight(out: &mut [u8], v: u32) {
    out[..8].copy_from_slice(&(digit_bytes(v) | ASCII_ZEROS).to_le_bytes());
}

/// [`write_decimal`] of a value of 5 digits or more: at most three groups of eight digits
/// ([`digit_bytes`]), the first without its leading zeros. It may write zeros past the digits
/// (within the 20 bytes). Inlined: a call cost a third of it (saving and restoring registers,
/// loading its constants).
#[inline(always)]
fn write_decimal_long(out: &mut [u8; 20], v: u64) -> usize {
    const E8: u64 = 100_000_000;
    if v < E8 {
        return write_leading(out, v as u32);
    }
    let (high, low) = (v / E8, (v % E8) as u32);
    let n = if high < 100 {
        // 9 or 10 digits (every `u32` and `i32` of that size): one or two leading digits.
        let pair = high as usize * 2;
        if high < 10 {
            out[0] = DIGITS[pair + 1];
            1
        } else {
            out[..2].copy_from_slice(&DIGITS[pair..pair + 2]);
            2
        }
    } else if high < E8 {
        write_leading(out, high as u32)
    } else {
        // 17 to 20 digits: `high / E8` is at most 1844.
        let n = write_leading(out, (high / E8) as u32);
        write_eight(&mut out[n..], (high % E8) as u32);
        n + 8
    };
    write_eight(&mut out[n..], low);
    n + 8
}

/// Copies `src` into `dst` (of the same length). Short strings (paths, names, float digits:
/// 1 to 32 bytes) are two overlapping copies of a constant length (three single bytes below
/// 4: names `x`, `a`), a few register moves, where a copy of runtime length calls libc's
/// `memcpy`.
#[inline(always)]
fn copy_short(dst: &mut [u8], src: &[u8]) {
    let n = src.len();
    // Both pieces are loaded before either is stored, as words: copies of constant length
    // written as such were merged by LLVM into one `memcpy` call of the length picked.
    if (8..=16).contains(&n) {
        let (head, tail) = (word::<8>(src, 0), word::<8>(src, n - 8));
        put_word(dst, 0, head);
        put_word(dst, n - 8, tail);
    } else if (17..=32).contains(&n) {
        let (head, tail) = (word::<16>(src, 0), word::<16>(src, n - 16));
        put_word(dst, 0, head);
        put_word(dst, n - 16, tail);
    } else if (4..8).contains(&n) {
        let (head, tail) = (word::<4>(src, 0), word::<4>(src, n - 4));
        put_word(dst, 0, head);
        put_word(dst, n - 4, tail);
    } else if (1..4).contains(&n) {
        // One to three bytes: the first, the middle and the last (some the same byte).
        let (first, middle, last) = (src[0], src[n / 2], src[n - 1]);
        dst[0] = first;
        dst[n / 2] = middle;
        dst[n - 1] = last;
    } else {
        dst[..n].copy_from_slice(src);
    }
}

/// The `N` bytes of `s` at `at`, as a value.
#[inline(always)]
fn word<const N: usize>(s: &[u8], at: usize) -> [u8; N] {
    let mut w = [0; N];
    w.copy_from_slice(&s[at..at + N]);
    w
}

/// Stores `w` at `at` of `d`.
#[inline(always)]
fn put_word<const N: usize>(d: &mut [u8], at: usize, w: [u8; N]) {
    if let Some(slot) = d.get_mut(at..at + N).and_then(|s| s.first_chunk_mut::<N>()) {
        *slot = w;
    }
}

/// A slice of the writer's room being filled, with a position of its own: what a field writes
/// between two room checks. Its slice and position stay in registers, where the writer's are
/// behind `&mut` and reloaded after every byte stored (a store through a `u8` pointer may alias
/// them). The caller asks for room for everything it writes through the cursor.
struct Cursor<'b> {
    w: &'b mut [u8],
    p: usize,
}

/// Bytes of room a [`Window`] spans.
const WINDOW: usize = 320;

/// A fixed-size window of the writer's room and a position in it: a field's text after its
/// path (at most 8 + 20 + 8 + 20 + 9 bytes, 80 for the value, then 64 for a range's copy). Every piece is
/// written at the position masked to 255 (which it never passes: what comes before the last
/// piece is below 256 bytes), so the compiler sees each piece inside the window and checks no
/// bounds per piece, as it does for a [`Cursor`]'s slice.
struct Window<'b> {
    w: &'b mut [u8; WINDOW],
    p: usize,
}

impl Window<'_> {
    /// The `N` bytes at the position.
    #[inline(always)]
    fn at<const N: usize>(&mut self) -> &mut [u8; N] {
        debug_assert!(self.p < 256, "a field's tail is shorter");
        let at = self.p & 255;
        self.w[at..]
            .first_chunk_mut()
            .expect("255 + N is within the window")
    }

    #[inline(always)]
    fn put<const N: usize>(&mut self, s: &[u8; N]) {
        *self.at::<N>() = *s;
        self.p += N;
    }

    #[inline(always)]
    fn uint(&mut self, v: u64) {
        let n = write_decimal(self.at::<20>(), v);
        self.p += n;
    }

    /// A float's text (at most 24 bytes).
    #[inline(always)]
    fn put_text(&mut self, s: &[u8]) {
        let n = s.len().min(32);
        copy_short(&mut self.at::<32>()[..n], &s[..n]);
        self.p += n;
    }

    /// `,"min":A,"max":B}` of `range` (`null`s without one), copied whole from its slot of
    /// `cache` when the slot holds that range, else written and kept there (64 bytes at the
    /// position). False, with nothing written, for bounds beyond 64 bits (not cached).
    #[inline(always)]
    fn range(&mut self, cache: &mut RangeCache, range: Option<(i128, i128)>) -> bool {
        let Some(r) = range else {
            self.put(b",\"min\":null,\"max\":null}");
            return true;
        };
        let slot = cache.slot(r);
        if slot.range == Some(r) {
            *self.at::<64>() = slot.text;
            self.p += slot.len;
            return true;
        }
        let fits = |v: i128| i64::try_from(v).is_ok() || u64::try_from(v).is_ok();
        if !(fits(r.0) && fits(r.1)) {
            return false;
        }
        let at = self.p;
        self.put(b",\"min\":");
        self.int(r.0);
        self.put(b",\"max\":");
        self.int(r.1);
        self.put(b"}");
        let end = self.p;
        self.p = at;
        slot.text = *self.at::<64>();
        self.p = end;
        slot.len = end - at;
        slot.range = Some(r);
        true
    }

    /// A bound within `i64` or `u64` (the caller checked).
    #[inline(always)]
    fn int(&mut self, v: i128) {
        if v < 0 {
            self.put(b"-");
        }
        self.uint(v.unsigned_abs() as u64);
    }
}

impl Cursor<'_> {
    /// Bytes of a length known at compile time.
    #[inline(always)]
    fn put<const N: usize>(&mut self, s: &[u8; N]) {
        self.w[self.p..self.p + N].copy_from_slice(s);
        self.p += N;
    }

    /// Bytes of runtime length (copied as [`copy_short`] does).
    #[inline(always)]
    fn put_slice(&mut self, s: &[u8]) {
        let n = s.len();
        copy_short(&mut self.w[self.p..self.p + n], s);
        self.p += n;
    }

    /// The decimal digits of `v`: needs 20 bytes of room.
    #[inline(always)]
    fn uint(&mut self, v: u64) {
        let w = self.w[self.p..]
            .first_chunk_mut()
            .expect("the caller asked for room for 20 digits");
        self.p += write_decimal(w, v);
    }

    /// A string that needs no escaping (the caller checked, or it is a constant), quoted.
    #[inline(always)]
    fn quoted(&mut self, s: &str) {
        self.put(b"\"");
        self.put_slice(s.as_bytes());
        self.put(b"\"");
    }

    /// A capture time as a string, as [`Timestamp`]'s `Display` writes it: 33 bytes of room.
    #[inline(always)]
    fn time(&mut self, t: Timestamp) {
        let (negative, secs, nanos) = t.epoch_parts();
        if negative {
            self.put(b"\"-");
        } else {
            self.put(b"\"");
        }
        self.uint(secs);
        // `.` and nine digits, leading zeros kept; nanos is below 10^9.
        self.put(&[b'.', b'0' + (nanos / 100_000_000) as u8]);
        write_eight(&mut self.w[self.p..], nanos % 100_000_000);
        self.p += 8;
        self.put(b"\"");
    }

    /// An IPv4 address and port as a string, as `SocketAddr`'s `Display` writes it: 44 bytes of
    /// room (the last number written needs 20).
    #[inline(always)]
    fn addr_v4(&mut self, a: &std::net::SocketAddrV4) {
        let [a0, a1, a2, a3] = a.ip().octets();
        self.put(b"\"");
        for octet in [a0, a1, a2] {
            self.uint(u64::from(octet));
            self.put(b".");
        }
        self.uint(u64::from(a3));
        self.put(b":");
        self.uint(u64::from(a.port()));
        self.put(b"\"");
    }

    /// `v` as a JSON number when it is within the range of `i64` or `u64` (21 bytes of room),
    /// and whether it was: wider values are strings, which the caller writes.
    #[inline(always)]
    fn int(&mut self, v: i128) -> bool {
        match u64::try_from(v.unsigned_abs()) {
            Ok(abs) if v >= 0 => self.uint(abs),
            Ok(abs) if abs <= 1 << 63 => {
                self.put(b"-");
                self.uint(abs);
            }
            _ => return false,
        }
        true
    }
}

/// Zeroed bytes the writer adds past what it has written when it runs out of room
/// ([`Json::room`]). Below 2 KiB, libc's `memset` zeroes them with vector stores; from 2 KiB it
/// switches to `rep stosb`, and under callgrind every byte counts as an instruction. A growth
/// adds the piece's length and this, so it stays under 2 KiB for pieces below 512 bytes (a
/// field asks for its path and 170).
const ROOM: usize = 1536;

/// A JSON writer over a byte buffer: just the pieces `write_json` needs.
///
/// The buffer is kept longer than what is written: `out[..pos]` is the JSON, `out[pos..]`
/// zeroed room (at least [`ROOM`] bytes after each growth), cut off when the writer is dropped.
/// So a write is one comparison against the room and a copy of known length into the slice
/// (literal keys, the digits of a number, a field's `{"path":"...","bit":` in one piece), with
/// no capacity check, length update or `memcpy` call per piece as `Vec::extend_from_slice`
/// makes, and numbers are written straight into place (no local array to copy, no padding to
/// cut). The texts of recent ranges are kept ([`RangeCache`]) and copied whole for the fields
/// that share them.
struct Json<'a> {
    out: &'a mut Vec<u8>,
    pos: usize,
    ranges: RangeCache,
    floats: FloatTexts,
    /// The places of a datagram's checks among its entries (kept for the next datagram's).
    checks: Vec<usize>,
    /// Leave the room in the buffer when dropped ([`JsonLines`]).
    keep_room: bool,
    /// For [`Json::append`].
    scratch: Vec<u8>,
    /// The current trace's texts hold nothing to escape ([`Entries::texts`]), so neither do
    /// its paths and check labels.
    plain: bool,
}

/// The texts `,"min":A,"max":B}` of recent ranges, in eight slots picked by a hash of the range
/// (a later range with the same hash takes the slot): most fields of a packet share their range
/// with a field shortly before (256 full-range ints of one array, the three components of each
/// vector of an object, the same fields of the next object).
#[derive(Default)]
struct RangeCache {
    slots: [RangeText; 8],
}

/// One slot of a [`RangeCache`]: a range and its text, in the first `len` bytes of 64.
struct RangeText {
    range: Option<(i128, i128)>,
    text: [u8; 64],
    len: usize,
}

impl Default for RangeText {
    fn default() -> Self {
        RangeText {
            range: None,
            text: [0; 64],
            len: 0,
        }
    }
}

impl RangeCache {
    /// The slot of `r`: the top three bits of a multiplicative hash of its bounds.
    #[inline(always)]
    fn slot(&mut self, r: (i128, i128)) -> &mut RangeText {
        let key = (r.0 as u64) ^ (r.1 as u64).rotate_left(29);
        &mut self.slots[(key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 61) as usize]
    }
}

/// The texts of the first floats of the last vector of floats written (a position, a velocity):
/// its components usually follow as fields of their own with the same values, and each is then
/// a copy instead of another run of the float formatter. Matched by bit pattern, so a copy is
/// always the text the formatter would write.
#[derive(Default)]
struct FloatTexts {
    /// How many entries hold a text; the components are looked up in order from `next`.
    count: usize,
    next: usize,
    bits: [u32; 4],
    /// Each text in the first `len` bytes of 16 (an `f32`'s shortest form is at most 16).
    text: [[u8; 16]; 4],
    len: [usize; 4],
}

impl FloatTexts {
    /// The text of `x` when it is the next float of the vector.
    #[inline(always)]
    fn next_text(&mut self, x: f32) -> Option<(&[u8; 16], usize)> {
        let i = self.next;
        if i < self.count && self.bits[i] == x.to_bits() {
            self.next = i + 1;
            Some((&self.text[i], self.len[i]))
        } else {
            None
        }
    }
}

impl Drop for Json<'_> {
    /// Cuts the room off: the buffer ends with the JSON written (unless `keep_room`).
    fn drop(&mut self) {
        if !self.keep_room {
            self.out.truncate(self.pos);
        }
    }
}

impl<'a> Json<'a> {
    fn new(buf: &'a mut Vec<u8>) -> Self {
        let pos = buf.len();
        Json {
            out: buf,
            pos,
            ranges: RangeCache::default(),
            floats: FloatTexts::default(),
            checks: Vec::new(),
            keep_room: false,
            scratch: Vec::new(),
            plain: false,
        }
    }

    /// The unwritten rest of the buffer, at least `n` bytes of it; write into its start and
    /// advance `pos` by what was written.
    #[inline(always)]
    fn room(&mut self, n: usize) -> &mut [u8] {
        if self.out.len() - self.pos < n {
            self.grow(n);
        }
        &mut self.out[self.pos..]
    }

    /// `N` bytes of room, as an array.
    #[inline(always)]
    fn window<const N: usize>(&mut self) -> &mut [u8; N] {
        self.room(N)
            .first_chunk_mut()
            .expect("room() gives at least N bytes")
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self, n: usize) {
        self.out.resize(self.pos + n + ROOM, 0);
    }

    /// Bytes of runtime length (copied as [`copy_short`] does).
    #[inline(always)]
    fn bytes(&mut self, b: &[u8]) {
        let n = b.len();
        copy_short(&mut self.room(n)[..n], b);
        self.pos += n;
    }

    /// Literal JSON text; inlined so that the length is a constant and the copy a few moves.
    #[inline(always)]
    fn raw(&mut self, s: &str) {
        let n = s.len();
        self.room(n)[..n].copy_from_slice(s.as_bytes());
        self.pos += n;
    }

    #[inline(always)]
    fn byte(&mut self, b: u8) {
        self.window::<1>()[0] = b;
        self.pos += 1;
    }

    /// Text that another writer appends to a `Vec` (serde_json's escaping, `Display`), through
    /// a scratch buffer: appending to the output would cut its room off, and a reused buffer's
    /// room would then be zeroed again for the rest of the chunk.
    fn append(&mut self, f: impl FnOnce(&mut Vec<u8>)) {
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        f(&mut scratch);
        self.bytes(&scratch);
        self.scratch = scratch;
    }

    fn comma(&mut self, first: &mut bool) {
        if !std::mem::take(first) {
            self.byte(b',');
        }
    }

    /// A cursor over at least `n` bytes of room; add what it wrote (`p`) to `pos`.
    #[inline(always)]
    fn cursor(&mut self, n: usize) -> Cursor<'_> {
        Cursor {
            w: self.room(n),
            p: 0,
        }
    }

    #[inline(always)]
    fn uint(&mut self, v: u64) {
        let mut c = self.cursor(20);
        c.uint(v);
        self.pos += c.p;
    }

    /// An integer as the codec's `JsonInt` serializes it: a number within the range of `i64`
    /// and `u64`, else a string of its digits (a 128-bit value JSON readers would round).
    #[inline]
    fn int(&mut self, v: i128) {
        let mut c = self.cursor(21);
        let number = c.int(v);
        self.pos += c.p;
        if !number {
            self.wide_int(v);
        }
    }

    /// An integer beyond the range of `i64` and `u64`: the string of its digits.
    #[cold]
    fn wide_int(&mut self, v: i128) {
        self.byte(b'"');
        self.bytes(itoa::Buffer::new().format(v).as_bytes());
        self.byte(b'"');
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
    #[inline]
    fn str(&mut self, s: &str) {
        self.str_of(s, false);
    }

    /// [`Json::str`], not looking for anything to escape when the caller knows there is none
    /// (`plain`: a text of a trace whose texts hold nothing to escape).
    #[inline(always)]
    fn str_of(&mut self, s: &str, plain: bool) {
        if !plain && needs_escape(s.as_bytes()) {
            self.escaped(s);
        } else {
            let n = s.len();
            let w = &mut self.room(n + 2)[..n + 2];
            w[0] = b'"';
            copy_short(&mut w[1..=n], s.as_bytes());
            w[n + 1] = b'"';
            self.pos += n + 2;
        }
    }

    /// A string with something to escape, as serde_json escapes it. Writing to a `Vec`
    /// cannot fail.
    #[cold]
    fn escaped(&mut self, s: &str) {
        self.append(|out| {
            let _ = serde_json::to_writer(out, s);
        });
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
        // `.` and nine digits, leading zeros kept; nanos is below 1e9.
        let w = self.window::<11>();
        w[0] = b'.';
        let mut v = nanos as usize;
        for i in (0..4).rev() {
            let r = v % 100 * 2;
            v /= 100;
            w[2 + 2 * i..4 + 2 * i].copy_from_slice(&DIGITS[r..r + 2]);
        }
        w[1] = b'0' + (v % 10) as u8;
        w[10] = b'"';
        self.pos += 11;
    }

    /// An address as a string, as `SocketAddr`'s `Display` writes it.
    fn addr(&mut self, a: &SocketAddr) {
        match a {
            SocketAddr::V4(v4) => {
                self.byte(b'"');
                for (i, octet) in v4.ip().octets().into_iter().enumerate() {
                    if i > 0 {
                        self.byte(b'.');
                    }
                    self.uint(u64::from(octet));
                }
                self.byte(b':');
                self.uint(u64::from(v4.port()));
                self.byte(b'"');
            }
            SocketAddr::V6(v6) => self.append(|out| {
                use std::io::Write as _;
                let _ = write!(out, "\"{v6}\"");
            }),
        }
    }

    fn value(&mut self, v: ValueRef<'_>) {
        match v {
            ValueRef::None => self.raw("null"),
            ValueRef::Bool(b) => self.raw(if b { "true" } else { "false" }),
            ValueRef::Int(i) => self.int(i128::from(i)),
            ValueRef::UInt(i) => self.uint(i),
            ValueRef::Wide(i) => self.int(i),
            ValueRef::U128(i) => {
                self.byte(b'"');
                self.bytes(itoa::Buffer::new().format(i).as_bytes());
                self.byte(b'"');
            }
            // As `Fixed` serializes: a number when f64 holds it exactly, else its decimal text.
            ValueRef::Fixed(x) => match x.exact_f64() {
                Some(f) => self.f64(f),
                None => self.str(&x.to_string()),
            },
            // A text of the trace, which `plain` says holds nothing to escape.
            ValueRef::Str(s) => self.str_of(s, self.plain),
            ValueRef::Bytes(bytes) => {
                let n = bytes.len() * 2;
                let w = &mut self.room(n + 2)[..n + 2];
                w[0] = b'"';
                // The slice is exactly twice the bytes: encoding into it cannot fail.
                let _ = hex::encode_to_slice(bytes, &mut w[1..=n]);
                w[n + 1] = b'"';
                self.pos += n + 2;
            }
            // Floats as `Value` serializes them (NaN and infinities as strings).
            ValueRef::F32(x) => self.f32(x),
            ValueRef::F64(x) => self.f64(x),
            ValueRef::Floats(xs) if xs.iter().all(|x| x.is_finite()) => self.finite_floats(xs),
            ValueRef::Floats(xs) => {
                self.floats.count = 0;
                self.byte(b'[');
                for (i, x) in xs.iter().enumerate() {
                    if i > 0 {
                        self.byte(b',');
                    }
                    self.f32(*x);
                }
                self.byte(b']');
            }
        }
    }

    /// A vector of finite floats, `[X,Y,..]`, through one cursor; the texts of the first four
    /// are kept for its components ([`FloatTexts`]).
    fn finite_floats(&mut self, xs: &[f32]) {
        // 2 bytes of brackets, 17 for each float and its comma (an `f32`'s shortest form is at
        // most 16 bytes, `-0.0000010000003`), 16 past the last for the copy of a text into the
        // cache.
        let n = xs.len().saturating_mul(17).saturating_add(18);
        if self.out.len() - self.pos < n {
            self.grow(n);
        }
        let mut c = Cursor {
            w: &mut self.out[self.pos..],
            p: 0,
        };
        let cache = &mut self.floats;
        cache.count = xs.len().min(4);
        cache.next = 0;
        c.put(b"[");
        for (i, x) in xs.iter().enumerate() {
            if i > 0 {
                c.put(b",");
            }
            let at = c.p;
            c.put_slice(zmij::Buffer::new().format_finite(*x).as_bytes());
            if i < 4 {
                cache.bits[i] = x.to_bits();
                cache.len[i] = c.p - at;
                cache.text[i].copy_from_slice(&c.w[at..at + 16]);
            }
        }
        c.put(b"]");
        self.pos += c.p;
    }

    /// A float as the codec's `Value` serializes it: shortest round-trip form by zmij
    /// (serde_json's own formatter), and NaN and infinities as the strings SCHEMA.md gives
    /// (`"nan"`, `"inf"`, `"-inf"`, `"nan:0x..."` for other NaN bit patterns).
    fn f32(&mut self, x: f32) {
        match f32_text(x) {
            None => self.bytes(zmij::Buffer::new().format_finite(x).as_bytes()),
            Some(text) => self.str(&text),
        }
    }

    fn f64(&mut self, x: f64) {
        match f64_text(x) {
            None => self.bytes(zmij::Buffer::new().format_finite(x).as_bytes()),
            Some(text) => self.str(&text),
        }
    }

    /// A field after a comma (of a list closed by [`Json::close_list`]), under `path` (its
    /// own, or relative to its message).
    #[inline]
    fn field(&mut self, path: &[u8], f: &Field<'_>) {
        if !self.plain && needs_escape(path) {
            self.field_escaped(path, f);
        } else {
            self.field_plain(path, f);
        }
    }

    /// [`Json::field`] with a path to escape, piece by piece.
    #[cold]
    #[inline(never)]
    fn field_escaped(&mut self, path: &[u8], f: &Field<'_>) {
        self.raw(",{\"path\":");
        self.escaped(std::str::from_utf8(path).unwrap_or(""));
        self.raw(",\"bit\":");
        self.uint(f.bit() as u64);
        self.raw(",\"bits\":");
        self.uint(f.bits() as u64);
        self.raw(",\"value\":");
        self.value(f.value());
        self.range_end(f.range());
    }

    /// `,{"path":"PATH","bit":B,"bits":N,"value":V,"min":A,"max":B}` for a path that needs no
    /// escaping, through one cursor after one room check: the value too when it is a 64-bit
    /// integer, a boolean or a finite float (most fields), and the range when its bounds fit 64
    /// bits; else those by [`Json::value`] and [`Json::range_end`]. Inlined into the walks'
    /// loops: a call cost some 20 instructions a field in saved and restored registers.
    #[inline(always)]
    fn field_plain(&mut self, path: &[u8], f: &Field<'_>) {
        // 10 + path, then the rest through a window ([`Window`]).
        let n = path.len() + 10 + WINDOW;
        if self.out.len() - self.pos < n {
            self.grow(n);
        }
        let mut c = Cursor {
            w: &mut self.out[self.pos..],
            p: 0,
        };
        c.put(b",{\"path\":\"");
        c.put_slice(path);
        let head = c.p;
        let mut w = Window {
            w: c.w[head..]
                .first_chunk_mut()
                .expect("room was asked for the window"),
            p: 0,
        };
        w.put(b"\",\"bit\":");
        w.uint(f.bit() as u64);
        w.put(b",\"bits\":");
        w.uint(f.bits() as u64);
        w.put(b",\"value\":");
        let value = f.value();
        let done = match value {
            ValueRef::Int(i) => {
                if i < 0 {
                    w.put(b"-");
                }
                w.uint(i.unsigned_abs());
                true
            }
            ValueRef::UInt(u) => {
                w.uint(u);
                true
            }
            ValueRef::Bool(true) => {
                w.put(b"true");
                true
            }
            ValueRef::Bool(false) => {
                w.put(b"false");
                true
            }
            ValueRef::F32(x) if x.is_finite() => {
                match self.floats.next_text(x) {
                    // A vector's component: its text, copied whole (16 bytes of room).
                    Some((text, len)) => {
                        *w.at::<16>() = *text;
                        w.p += len;
                    }
                    None => w.put_text(zmij::Buffer::new().format_finite(x).as_bytes()),
                }
                true
            }
            ValueRef::F64(x) if x.is_finite() => {
                w.put_text(zmij::Buffer::new().format_finite(x).as_bytes());
                true
            }
            // A short text of a trace whose texts hold nothing to escape (a message name, a
            // packet type): quoted in the window (at most 66 of its 80 bytes).
            ValueRef::Str(text) if self.plain && text.len() <= 64 => {
                let n = text.len();
                let out = w.at::<80>();
                out[0] = b'"';
                copy_short(&mut out[1..=n], text.as_bytes());
                out[n + 1] = b'"';
                w.p += n + 2;
                true
            }
            _ => false,
        };
        if !done {
            self.pos += head + w.p;
            self.value(value);
            return self.range_end(f.range());
        }
        let range = f.range();
        let cached = w.range(&mut self.ranges, range);
        self.pos += head + w.p;
        if !cached {
            self.range_end(range);
        }
    }

    /// `,"min":A,"max":B}` (or `null`s), copied from its [`RangeCache`] slot when that slot
    /// holds the same range.
    fn range_end(&mut self, range: Option<(i128, i128)>) {
        if self.out.len() - self.pos < WINDOW {
            self.grow(WINDOW);
        }
        let mut w = Window {
            w: self.out[self.pos..]
                .first_chunk_mut()
                .expect("room was asked for the window"),
            p: 0,
        };
        if w.range(&mut self.ranges, range) {
            self.pos += w.p;
            return;
        }
        let Some(r) = range else { return };
        // Wider bounds (strings of digits) are not cached.
        self.raw(",\"min\":");
        self.int(r.0);
        self.raw(",\"max\":");
        self.int(r.1);
        self.byte(b'}');
    }

    /// Closes a list whose items were written from `start` on, each after a comma: the first
    /// comma becomes the `[` (nothing written: `[]`), and `]` ends it.
    fn close_list(&mut self, start: usize) {
        if self.pos == start {
            self.raw("[]");
        } else {
            self.out[start] = b'[';
            self.byte(b']');
        }
    }

    /// The check of a trace entry, after a comma ([`Json::check`]); nothing for other entries.
    #[inline(always)]
    fn check_entry(&mut self, f: &Field<'_>) {
        if let Some((label, expected, found)) = f.check() {
            self.check(label, f.bit(), expected, found);
        }
    }

    /// A datagram's object up to its fields: `{"frame":F,"time":T,"src":S,"dst":D,"len":L,
    /// ["captured":C,]"decoder":N,"status":S,"packet_type":P,"fields":`. Through one cursor when
    /// its strings need no escaping and its addresses are IPv4 (every datagram of most
    /// captures), else piece by piece ([`Json::header_pieces`]).
    fn header(&mut self, d: &Datagram, payload_len: usize, decoder: &str, dissection: &Dissection) {
        let (SocketAddr::V4(src), SocketAddr::V4(dst)) = (&d.src, &d.dst) else {
            return self.header_pieces(d, payload_len, decoder, dissection);
        };
        let packet_type = dissection.packet_type.unwrap_or("");
        if needs_escape(decoder.as_bytes()) || needs_escape(packet_type.as_bytes()) {
            return self.header_pieces(d, payload_len, decoder, dissection);
        }
        let status = dissection.status.name();
        // 10 + 21 + 8 + 33 + 7 + 44 + 7 + 44 + 7 + 20 + 12 + 20 + 12 + 11 + 15 + 20 + 11 bytes at
        // most for the keys, numbers and addresses, and the strings.
        let mut c = self.cursor(310 + decoder.len() + status.len() + packet_type.len());
        c.put(b"{\"frame\":");
        c.uint(d.frame);
        c.put(b",\"time\":");
        c.time(d.time);
        c.put(b",\"src\":");
        c.addr_v4(src);
        c.put(b",\"dst\":");
        c.addr_v4(dst);
        c.put(b",\"len\":");
        c.uint(d.declared_len() as u64);
        if payload_len != d.declared_len() {
            c.put(b",\"captured\":");
            c.uint(payload_len as u64);
        }
        c.put(b",\"decoder\":");
        c.quoted(decoder);
        // Status names are constants without anything to escape (a test holds them to it).
        c.put(b",\"status\":");
        c.quoted(status);
        c.put(b",\"packet_type\":");
        match dissection.packet_type {
            Some(t) => c.quoted(t),
            None => c.put(b"null"),
        }
        c.put(b",\"fields\":");
        self.pos += c.p;
    }

    /// [`Json::header`] piece by piece: IPv6 addresses, strings to escape.
    #[cold]
    fn header_pieces(
        &mut self,
        d: &Datagram,
        payload_len: usize,
        decoder: &str,
        dissection: &Dissection,
    ) {
        self.raw("{\"frame\":");
        self.uint(d.frame);
        self.raw(",\"time\":");
        self.time(d.time);
        self.raw(",\"src\":");
        self.addr(&d.src);
        self.raw(",\"dst\":");
        self.addr(&d.dst);
        self.raw(",\"len\":");
        self.uint(d.declared_len() as u64);
        if payload_len != d.declared_len() {
            self.raw(",\"captured\":");
            self.uint(payload_len as u64);
        }
        self.raw(",\"decoder\":");
        self.str(decoder);
        self.raw(",\"status\":");
        self.str(dissection.status.name());
        self.raw(",\"packet_type\":");
        self.opt_str(dissection.packet_type);
        self.raw(",\"fields\":");
    }

    /// A check after a comma: `,{"label":L,"bit":B,"ok":O,"expected":E,"found":F}`, through one
    /// cursor when its label needs no escaping. A check that held (`expected` is `found`, most
    /// of them) has its digits written once and copied.
    #[inline(always)]
    fn check(&mut self, label: &str, bit: usize, expected: u32, found: u32) {
        if !self.plain && needs_escape(label.as_bytes()) {
            self.raw(",{\"label\":");
            self.escaped(label);
            self.raw(",\"bit\":");
            self.uint(bit as u64);
            self.raw(",\"ok\":");
            self.raw(if expected == found { "true" } else { "false" });
            self.raw(",\"expected\":");
            self.uint(u64::from(expected));
            self.raw(",\"found\":");
            self.uint(u64::from(found));
            self.byte(b'}');
            return;
        }
        // 11 bytes and the label, then at most 8 + 20 + 23 + 20 + 9 + 20 + 1 through a window.
        let mut c = self.cursor(label.len() + 11 + WINDOW);
        c.put(b",{\"label\":\"");
        c.put_slice(label.as_bytes());
        let head = c.p;
        let mut w = Window {
            w: c.w[head..]
                .first_chunk_mut()
                .expect("room was asked for the window"),
            p: 0,
        };
        w.put(b"\",\"bit\":");
        w.uint(bit as u64);
        if expected == found {
            w.put(b",\"ok\":true,\"expected\":");
            let at = w.p;
            w.uint(u64::from(expected));
            let end = w.p;
            // The digits (at most 10) and what follows them, as one copy of constant length.
            w.p = at;
            let digits = *w.at::<16>();
            w.p = end;
            w.put(b",\"found\":");
            *w.at::<16>() = digits;
            w.p += end - at;
        } else {
            w.put(b",\"ok\":false,\"expected\":");
            w.uint(u64::from(expected));
            w.put(b",\"found\":");
            w.uint(u64::from(found));
        }
        w.put(b"}");
        self.pos += head + w.p;
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
        self.byte(b'}');
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

/// The field tree of a dissected datagram, indented, one field per line, each ending in a
/// newline, appended to `out` (what `decode --fields` prints under the datagram's line).
pub fn write_field_lines(out: &mut Vec<u8>, dissection: &Dissection) {
    let trace = &dissection.trace;
    // A read past the end at a field with too few bits to read: shown where it stopped.
    let stop: Entries = trace.past_end_entry().into_iter().collect();
    // An array element's name `[i]` is written here, not allocated per field.
    let mut index = [0u8; 12];
    for f in trace.fields.views().chain(stop.views()) {
        let kind = match (f.check(), f.kind()) {
            (Some((label, expected, found)), _) => LineKind::Check {
                label,
                expected,
                found,
            },
            (None, EntryKind::Scope) => LineKind::Scope,
            (None, EntryKind::Padding) => LineKind::Padding,
            (None, _) => LineKind::Value,
        };
        let name = match f.name_part() {
            NamePart::Text(name) => name,
            NamePart::Index(i) => {
                let mut digits = itoa::Buffer::new();
                let text = digits.format(i).as_bytes();
                index[0] = b'[';
                index[1..=text.len()].copy_from_slice(text);
                index[text.len() + 1] = b']';
                std::str::from_utf8(&index[..text.len() + 2]).unwrap_or("")
            }
        };
        FieldLine {
            depth: f.depth(),
            name,
            value: f.value(),
            kind,
            bit: f.bit(),
            bits: f.bits(),
            range: f.range(),
            raw: f.raw(),
            failed: f.failed(),
        }
        .write(out);
    }
}

/// One field of the tree as `decode --fields` shows it: the pieces its line is made of.
#[derive(Debug, Clone, Copy)]
pub struct FieldLine<'a> {
    /// Nesting depth: 0 at the top (indented by two spaces per level, plus two).
    pub depth: usize,
    /// The field's own name (the last part of its path).
    pub name: &'a str,
    /// The value shown after ` = ` (for a scope, nothing when it has none).
    pub value: ValueRef<'a>,
    /// What the field is.
    pub kind: LineKind<'a>,
    /// First bit.
    pub bit: usize,
    /// Width in bits.
    pub bits: usize,
    /// The allowed range of the wire integer, for ranged fields.
    pub range: Option<(i128, i128)>,
    /// The integer sent on the wire, where it differs from the value.
    pub raw: Option<i128>,
    /// The read stopped at this field.
    pub failed: bool,
}

/// What a [`FieldLine`]'s field is.
#[derive(Debug, Clone, Copy)]
pub enum LineKind<'a> {
    /// A value.
    Value,
    /// A struct or array scope.
    Scope,
    /// Alignment padding.
    Padding,
    /// A check marker (or the packet CRC).
    Check {
        /// The check's label.
        label: &'a str,
        /// The 32 bits the reader expected.
        expected: u32,
        /// The 32 bits found.
        found: u32,
    },
}

/// Spaces to indent with, copied from in slices.
const SPACES: &[u8] = &[b' '; 64];

impl FieldLine<'_> {
    /// Appends the field's line and a newline to `out`. Integers, bools, floats, checks and
    /// padding are written by hand (no `core::fmt`); strings, bytes, float vectors, fixed
    /// values and `u128`s above `i128::MAX` as `Value`'s `Display` writes them.
    pub fn write(&self, out: &mut Vec<u8>) {
        let mut indent = self.depth.saturating_add(1).saturating_mul(2);
        while indent > 0 {
            let n = indent.min(SPACES.len());
            out.extend_from_slice(&SPACES[..n]);
            indent -= n;
        }
        match self.kind {
            LineKind::Scope if matches!(self.value, ValueRef::None) => {
                out.extend_from_slice(self.name.as_bytes());
            }
            LineKind::Scope | LineKind::Value => {
                out.extend_from_slice(self.name.as_bytes());
                out.extend_from_slice(b" = ");
                value_text(out, self.value);
            }
            LineKind::Padding => out.extend_from_slice(b"(padding)"),
            LineKind::Check {
                label,
                expected,
                found,
            } => {
                let mark: &str = if expected == found { "✓" } else { "✗" };
                out.extend_from_slice(b"check ");
                out.extend_from_slice(mark.as_bytes());
                out.extend_from_slice(b" \"");
                out.extend_from_slice(label.as_bytes());
                out.extend_from_slice(b"\" expected ");
                hex32(out, expected);
                out.extend_from_slice(b" found ");
                hex32(out, found);
            }
        }
        let mut digits = itoa::Buffer::new();
        out.extend_from_slice(b"  [bit ");
        out.extend_from_slice(digits.format(self.bit).as_bytes());
        out.extend_from_slice(b", ");
        out.extend_from_slice(digits.format(self.bits).as_bytes());
        out.extend_from_slice(b" bits");
        if let Some((lo, hi)) = self.range {
            out.extend_from_slice(b", ");
            int_text(out, lo);
            out.extend_from_slice(b"..=");
            int_text(out, hi);
        }
        if let Some(raw) = self.raw {
            out.extend_from_slice(b", code ");
            int_text(out, raw);
        }
        out.push(b']');
        if self.failed {
            out.extend_from_slice(b"  <- read stopped here");
        }
        out.push(b'\n');
    }
}

/// `i` in decimal: through `i64` when it fits (`itoa`'s 128-bit path is several times slower).
fn int_text(out: &mut Vec<u8>, i: i128) {
    let mut digits = itoa::Buffer::new();
    let text = match i64::try_from(i) {
        Ok(small) => digits.format(small),
        Err(_) => digits.format(i),
    };
    out.extend_from_slice(text.as_bytes());
}

/// `x` as `{:#010x}` writes it: `0x` and eight lowercase hex digits.
fn hex32(out: &mut Vec<u8>, x: u32) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut text = *b"0x00000000";
    for (i, d) in text[2..].iter_mut().enumerate() {
        *d = HEX[((x >> (28 - 4 * i)) & 0xf) as usize];
    }
    out.extend_from_slice(&text);
}

/// `value` as its `Display` writes it.
fn value_text(out: &mut Vec<u8>, value: ValueRef) {
    match value {
        ValueRef::None => {}
        ValueRef::Bool(b) => out.extend_from_slice(if b { b"true" } else { b"false" }),
        ValueRef::Int(i) => out.extend_from_slice(itoa::Buffer::new().format(i).as_bytes()),
        ValueRef::UInt(u) => out.extend_from_slice(itoa::Buffer::new().format(u).as_bytes()),
        ValueRef::Wide(i) => int_text(out, i),
        ValueRef::F32(x) => match f32_text(x) {
            Some(text) => out.extend_from_slice(text.as_bytes()),
            // A whole number below 2^24 is every f32 near it, so its shortest digits are its
            // integer's: `Display` writes those, with no `.0` (and `-0` for minus zero).
            None if x.trunc() == x && x.abs() < 16_777_216.0 => {
                if x.is_sign_negative() {
                    out.push(b'-');
                }
                let whole = x.abs() as u32;
                out.extend_from_slice(itoa::Buffer::new().format(whole).as_bytes());
            }
            None => {
                let _ = write!(out, "{x}");
            }
        },
        ValueRef::F64(x) => match f64_text(x) {
            Some(text) => out.extend_from_slice(text.as_bytes()),
            // As for f32, below 2^53.
            None if x.trunc() == x && x.abs() < 9_007_199_254_740_992.0 => {
                if x.is_sign_negative() {
                    out.push(b'-');
                }
                let whole = x.abs() as u64;
                out.extend_from_slice(itoa::Buffer::new().format(whole).as_bytes());
            }
            None => {
                let _ = write!(out, "{x}");
            }
        },
        // The rare kinds: Debug escaping, hex bytes, float vectors, fixed decimals.
        ValueRef::Str(_)
        | ValueRef::Bytes(_)
        | ValueRef::Floats(_)
        | ValueRef::U128(_)
        | ValueRef::Fixed(_) => {
            let _ = write!(out, "{value}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bitlens_codec::{FieldKind, TraceField, Value};

    impl Json<'_> {
        /// [`Json::value`] of an owned value.
        fn value_owned(&mut self, v: &Value) {
            let f = TraceField::new("", 0, 0, 0, v.clone(), FieldKind::Value);
            let e = Entries::from(vec![f]);
            self.value(e.view(0).expect("one entry").value());
        }

        /// [`Json::field`] of an owned entry.
        fn field_owned(&mut self, path: &str, f: &TraceField) {
            let e = Entries::from(vec![f.clone()]);
            self.field(path.as_bytes(), &e.view(0).expect("one entry"));
        }
    }
    use bitlens_codec::trace::JsonInt;
    use std::net::{Ipv4Addr, Ipv6Addr, SocketAddrV6};

    /// A [`FieldLine`] with owned pieces (what `decode --fields` read from `TraceField`s).
    struct OwnedLine<'a> {
        depth: usize,
        name: &'a str,
        value: &'a Value,
        kind: &'a FieldKind,
        bit: usize,
        bits: usize,
        range: Option<(i128, i128)>,
        raw: Option<i128>,
        failed: bool,
    }

    /// The `format!` code `decode --fields` used before [`FieldLine::write`]: the reference the
    /// writer's text is held to.
    fn formatted_line(f: &OwnedLine) -> String {
        let indent = "  ".repeat(f.depth + 1);
        let name = f.name;
        let mut line = match f.kind {
            FieldKind::Scope if matches!(f.value, Value::None) => format!("{indent}{name}"),
            FieldKind::Scope | FieldKind::Value => format!("{indent}{name} = {}", f.value),
            FieldKind::Padding => format!("{indent}(padding)"),
            FieldKind::Check {
                label,
                expected,
                found,
            } => {
                let mark = if expected == found { "✓" } else { "✗" };
                format!(
                    "{indent}check {mark} \"{label}\" expected {expected:#010x} found {found:#010x}"
                )
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
        line.push('\n');
        line
    }

    fn written_line(f: &OwnedLine) -> String {
        let kind = match f.kind {
            FieldKind::Value => LineKind::Value,
            FieldKind::Scope => LineKind::Scope,
            FieldKind::Padding => LineKind::Padding,
            FieldKind::Check {
                label,
                expected,
                found,
            } => LineKind::Check {
                label,
                expected: *expected,
                found: *found,
            },
        };
        let line = FieldLine {
            depth: f.depth,
            name: f.name,
            value: f.value.as_ref(),
            kind,
            bit: f.bit,
            bits: f.bits,
            range: f.range,
            raw: f.raw,
            failed: f.failed,
        };
        let mut out = b"before\n".to_vec();
        line.write(&mut out);
        String::from_utf8(out[7..].to_vec()).unwrap()
    }

    /// Every value kind, every field kind, with and without ranges, codes and a failed read,
    /// at depths 0 to 5 and one deeper than the indentation constant: the writer's line is the
    /// `format!` code's, byte for byte.
    #[test]
    fn field_lines_are_written_as_format_wrote_them() {
        let f32s = [
            0.0f32,
            -0.0,
            1.0,
            -1.0,
            0.5,
            -2.75,
            1.0e-7,
            1.0e20,
            f32::MIN_POSITIVE,
            f32::from_bits(1),
            f32::from_bits(0x8000_0001),
            f32::MAX,
            f32::MIN,
            f32::EPSILON,
            16_777_215.0,
            16_777_216.0,
            -16_777_216.0,
            33_554_432.0,
            123_456.79,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            -f32::NAN,
            f32::from_bits(0x7f80_0001),
            f32::from_bits(0xffc0_1234),
        ];
        let f64s = [
            0.0f64,
            -0.0,
            1.0,
            -7.0,
            0.1,
            1.0e-300,
            1.0e300,
            f64::from_bits(1),
            f64::MIN_POSITIVE,
            f64::MAX,
            f64::MIN,
            9_007_199_254_740_991.0,
            9_007_199_254_740_992.0,
            -9_007_199_254_740_993.0,
            4_294_967_296.5,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::from_bits(0x7ff0_0000_0000_0001),
            f64::from_bits(0xfff8_0000_0000_00ff),
        ];
        let mut values = vec![
            Value::None,
            Value::Bool(true),
            Value::Bool(false),
            Value::Str(String::new()),
            Value::Str("say \"hi\"\\ tab\t nl\n nul\0 del\u{7f} ünïcödé ✓ 🦀 \u{200b}".into()),
            Value::Bytes(vec![]),
            Value::Bytes(vec![0, 1, 0xab, 0xff]),
            Value::Floats(vec![]),
            Value::Floats(vec![1.0, -0.0, f32::NAN, f32::from_bits(0x7fa0_0000), 0.1]),
            Value::U128(u128::MAX),
            Value::from_u128(u128::MAX / 2 + 1),
            Value::Fixed(bitlens_codec::Fixed {
                raw: -12_345,
                fraction_bits: 8,
            }),
            Value::Fixed(bitlens_codec::Fixed {
                raw: i128::MAX,
                fraction_bits: 127,
            }),
        ];
        for i in [
            0,
            1,
            -1,
            9,
            10,
            i128::from(i64::MIN),
            i128::from(i64::MAX),
            i128::from(u64::MAX),
            i128::from(u64::MAX) + 1,
            i128::MIN,
            i128::MAX,
        ] {
            values.push(Value::Int(i));
        }
        values.extend(f32s.map(Value::F32));
        values.extend(f64s.map(Value::F64));
        let checks = [
            FieldKind::Check {
                label: "crc32".into(),
                expected: 0xdead_beef,
                found: 0xdead_beef,
            },
            FieldKind::Check {
                label: "after \"quotes\" ✓".into(),
                expected: 0,
                found: u32::MAX,
            },
            FieldKind::Check {
                label: "".into(),
                expected: 0x0123_4567,
                found: 0x89ab_cdef,
            },
        ];
        let kinds = [FieldKind::Value, FieldKind::Scope, FieldKind::Padding];
        let none = Value::None;
        let ranges = [
            None,
            Some((0, 5)),
            Some((i128::MIN, i128::MAX)),
            Some((-3, -1)),
        ];
        let raws = [None, Some(0), Some(-1), Some(i128::MIN), Some(i128::MAX)];
        let mut lines = 0;
        for depth in [0, 1, 2, 3, 4, 5, 40] {
            for (bit, bits) in [(0, 0), (7, 1), (usize::MAX, usize::MAX)] {
                for range in ranges {
                    for raw in raws {
                        for failed in [false, true] {
                            let mut pieces = Vec::new();
                            for kind in &kinds {
                                for value in &values {
                                    pieces.push((kind, value));
                                }
                            }
                            for check in &checks {
                                pieces.push((check, &none));
                            }
                            for (kind, value) in pieces {
                                for name in ["x", "objects[17]", "[3]", "ünï"] {
                                    let line = OwnedLine {
                                        depth,
                                        name,
                                        value,
                                        kind,
                                        bit,
                                        bits,
                                        range,
                                        raw,
                                        failed,
                                    };
                                    assert_eq!(written_line(&line), formatted_line(&line));
                                    lines += 1;
                                }
                            }
                        }
                    }
                }
            }
        }
        assert!(lines > 100_000, "{lines}");
        assert_eq!(
            written_line(&OwnedLine {
                depth: 1,
                name: "hp",
                value: &Value::F32(-0.0),
                kind: &FieldKind::Value,
                bit: 3,
                bits: 7,
                range: Some((-1, 99)),
                raw: Some(5),
                failed: true,
            }),
            "    hp = -0  [bit 3, 7 bits, -1..=99, code 5]  <- read stopped here\n"
        );
    }

    /// The whole-number float path against `Display` over spread bit patterns: every exponent,
    /// mantissas with few and many low bits, both signs.
    #[test]
    fn floats_are_written_as_display_writes_them() {
        let text = |v: &Value| {
            let mut out = Vec::new();
            value_text(&mut out, v.as_ref());
            String::from_utf8(out).unwrap()
        };
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..200_000 {
            // splitmix64
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            // Clear a random number of low mantissa bits: whole numbers come up often.
            let clear = (z >> 58) as u32;
            let b32 = (z as u32) & !((1u32 << (clear % 24)) - 1);
            let b64 = z & !((1u64 << (clear % 53)) - 1);
            for v in [
                Value::F32(f32::from_bits(b32)),
                Value::F64(f64::from_bits(b64)),
            ] {
                assert_eq!(text(&v), v.to_string(), "{v:?}");
            }
        }
        for i in -70_000i32..70_000 {
            #[allow(clippy::cast_precision_loss)]
            for v in [
                Value::F32(i as f32),
                Value::F32(i as f32 * 256.0),
                Value::F64(f64::from(i) * 1.0e10),
            ] {
                assert_eq!(text(&v), v.to_string(), "{v:?}");
            }
        }
    }

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

    /// The block-at-a-time test against a byte-by-byte one: every length up to 40, each byte that
    /// must be escaped (and its harmless neighbours) at every position.
    #[test]
    fn needs_escape_finds_every_special_byte_anywhere() {
        // Every length to 40; longer ones (the block loop, and past the 512 bytes where LLVM
        // vectorized it) at a few places.
        let lens = (0..=40usize).chain([47, 48, 63, 64, 100, 255, 511, 512, 513, 600]);
        for len in lens {
            let places: Vec<usize> = if len <= 40 {
                (0..len.max(1)).collect()
            } else {
                vec![0, 1, 15, 16, 17, len / 2, len - 17, len - 16, len - 1]
            };
            for at in places {
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
            (i128::from(i64::MIN), i128::from(u64::MAX)),
            (i128::from(i64::MIN) - 1, 0),
        ];
        let fresh = |r: (i128, i128)| written(|j| j.range_end(Some(r)));
        for a in ranges {
            for b in ranges {
                let mut buf = Vec::new();
                let mut j = Json::new(&mut buf);
                for r in [a, a, b, a, b, b] {
                    j.range_end(Some(r));
                }
                drop(j);
                let expected: String = [a, a, b, a, b, b].map(fresh).concat();
                assert_eq!(String::from_utf8(buf).unwrap(), expected, "{a:?} {b:?}");
            }
        }
        assert_eq!(fresh((-3, 7)), ",\"min\":-3,\"max\":7}");
        // More ranges than slots, cycled: every slot taken over and over.
        let mut buf = Vec::new();
        let mut j = Json::new(&mut buf);
        let mut expected = String::new();
        for _ in 0..3 {
            for k in 0..40 {
                let r = (-k, k * 1000);
                j.range_end(Some(r));
                expected.push_str(&fresh(r));
            }
        }
        drop(j);
        assert_eq!(String::from_utf8(buf).unwrap(), expected);
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
                written(|j| j.value_owned(&v)),
                serde_json::to_string(&v).unwrap(),
                "{v:?}"
            );
        }
        // SCHEMA.md's spellings, not serde_json's null.
        let floats = Value::Floats(vec![f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.0]);
        assert_eq!(
            written(|j| j.value_owned(&floats)),
            r#"["nan","inf","-inf",-0.0]"#
        );
        let payload = Value::F64(f64::from_bits(0x7ff0000000000001));
        assert_eq!(
            written(|j| j.value_owned(&payload)),
            r#""nan:0x7ff0000000000001""#
        );
    }

    /// A long vector of finite floats whose texts are the longest an `f32` has (16 bytes with
    /// the sign: `-0.0000010000003`), alone and after other text: its room is counted for
    /// them, and the texts kept for its components are whole.
    #[test]
    fn long_vectors_of_the_longest_floats_fit_their_room() {
        let x = f32::from_bits(3_045_472_192);
        assert_eq!(zmij::Buffer::new().format_finite(x).len(), 16);
        for len in [1, 4, 17, 18, 2017, 2018, 3000, 10_000] {
            let v = Value::Floats(vec![x; len]);
            assert_eq!(
                written(|j| j.value_owned(&v)),
                serde_json::to_string(&v).unwrap(),
                "{len}"
            );
            let f = TraceField::new("v.x", 1, 0, 17, Value::F32(x), FieldKind::Value);
            let text = written(|j| {
                j.raw("x");
                j.value_owned(&v);
                j.field_owned("v.x", &f);
            });
            assert_eq!(
                text,
                format!(
                    "x{},{{\"path\":\"v.x\",\"bit\":0,\"bits\":17,\"value\":-0.0000010000003,\"min\":null,\"max\":null}}",
                    serde_json::to_string(&v).unwrap()
                )
            );
        }
    }

    /// A reproducible stream of 64-bit values (splitmix64) for the differential tests.
    struct Bits(u64);

    impl Bits {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }

        /// A value of a random magnitude: every digit count is about as likely.
        fn magnitude(&mut self) -> u64 {
            let shift = self.next() % 64;
            self.next() >> shift
        }
    }

    /// What the writer writes, against the reference formatting it replaced (std's `Display`
    /// for integers, serde_json for `JsonInt`, floats and strings), over many random values of
    /// every magnitude and every class (subnormal, zero, NaN payloads, escapes, non-ASCII), each
    /// written alone and all of them into one buffer that starts non-empty and grows (its room
    /// runs out at every kind of write).
    #[test]
    fn every_piece_is_written_as_the_reference_formatting_writes_it() {
        let mut bits = Bits(30);
        let mut all = b"prefix ".to_vec();
        let mut expected = String::from("prefix ");
        let mut j = Json::new(&mut all);
        let mut check = |j: &mut Json, piece: &dyn Fn(&mut Json), reference: String| {
            assert_eq!(written(|j| piece(j)), reference);
            piece(j);
            expected.push_str(&reference);
        };
        for _ in 0..5_000 {
            let u = bits.magnitude();
            check(&mut j, &|j| j.uint(u), u.to_string());
            let wide = i128::from(bits.magnitude()) << (bits.next() % 66);
            for i in [wide, -wide, i128::from(u as i64), i128::from(u)] {
                let reference = serde_json::to_string(&JsonInt(i)).unwrap();
                check(&mut j, &|j| j.int(i), reference);
            }
            let r = (-wide, i128::from(u) >> (u % 3 * 40));
            let reference = format!(
                ",\"min\":{},\"max\":{}}}",
                serde_json::to_string(&JsonInt(r.0)).unwrap(),
                serde_json::to_string(&JsonInt(r.1)).unwrap()
            );
            check(&mut j, &|j| j.range_end(Some(r)), reference.clone());
            check(&mut j, &|j| j.range_end(Some(r)), reference);
            let x = f32::from_bits(bits.next() as u32);
            let y = f64::from_bits(bits.next());
            for v in [Value::F32(x), Value::F64(y), Value::Floats(vec![x, -x])] {
                let reference = serde_json::to_string(&v).unwrap();
                check(&mut j, &|j| j.value_owned(&v), reference);
            }
        }
        // Floats of every class: subnormals, zeros, extremes, NaNs with payloads, small integers.
        let f32s = [
            0.0,
            -0.0,
            f32::from_bits(1),
            f32::from_bits(0x807f_ffff),
            f32::MIN_POSITIVE,
            f32::MAX,
            f32::MIN,
            f32::EPSILON,
            f32::NAN,
            -f32::NAN,
            f32::from_bits(0x7f80_0001),
            f32::INFINITY,
            f32::NEG_INFINITY,
            1.0,
            100.0,
            1e7,
            1e16,
            1.5e-7,
            0.3,
        ];
        for x in f32s {
            for v in [
                Value::F32(x),
                Value::F64(f64::from(x)),
                Value::F64(-f64::from(x)),
            ] {
                let reference = serde_json::to_string(&v).unwrap();
                check(&mut j, &|j| j.value_owned(&v), reference);
            }
        }
        // Strings of every length up to 40 over an alphabet with escapes, controls, multi-byte
        // characters: as serde_json escapes them, and as a field's path.
        let alphabet = [
            "a", "Z", "0", ".", "[", "]", "_", "\"", "\\", "\n", "\t", "\u{0}", "\u{1f}", "\u{7f}",
            "é", "✓", "🦀", "/", " ",
        ];
        for _ in 0..5_000 {
            let len = bits.next() % 41;
            let mut s = String::new();
            for _ in 0..len {
                // Mostly plain characters, as paths and names are.
                let k = bits.next() as usize;
                let pick = if k.is_multiple_of(4) {
                    k / 4 % alphabet.len()
                } else {
                    k / 4 % 7
                };
                s.push_str(alphabet[pick]);
            }
            let quoted = serde_json::to_string(&s).unwrap();
            check(&mut j, &|j| j.str(&s), quoted.clone());
            // A whole field under that path, with a value of each kind.
            let (bit, bits_) = (bits.magnitude() as usize, bits.next() as usize % 200);
            let x = f32::from_bits(bits.next() as u32);
            let i = i128::from(bits.magnitude()) << (bits.next() % 66);
            for value in [
                Value::Int(i),
                Value::Int(-i),
                Value::Bool(x.is_sign_negative()),
                Value::F32(x),
                Value::F64(f64::from_bits(bits.next())),
                Value::Str(s.clone()),
                Value::None,
                Value::Floats(vec![x, 1.5]),
            ] {
                let reference = format!(
                    ",{{\"path\":{quoted},\"bit\":{bit},\"bits\":{bits_},\"value\":{},\"min\":null,\"max\":null}}",
                    serde_json::to_string(&value).unwrap()
                );
                let f = TraceField::new(&s, 0, bit, bits_, value, FieldKind::Value);
                check(&mut j, &|j| j.field_owned(&s, &f), reference);
            }
        }
        // Checks with labels of that alphabet, held and failed, of every magnitude.
        for _ in 0..5_000 {
            let label: String = (0..bits.next() % 20)
                .map(|_| alphabet[bits.next() as usize % alphabet.len()])
                .collect();
            let bit = bits.magnitude() as usize;
            let expected = (bits.magnitude() >> 32) as u32;
            let found = if bits.next().is_multiple_of(3) {
                bits.next() as u32
            } else {
                expected
            };
            let reference = format!(
                ",{{\"label\":{},\"bit\":{bit},\"ok\":{},\"expected\":{expected},\"found\":{found}}}",
                serde_json::to_string(&label).unwrap(),
                expected == found
            );
            check(
                &mut j,
                &|j| j.check(&label, bit, expected, found),
                reference,
            );
        }
        // Vectors of floats and the fields after them: their components (whose texts are
        // copied), other floats, the same float twice, non-finite ones, fields skipped.
        for _ in 0..5_000 {
            let mut xs: Vec<f32> = (0..bits.next() % 7)
                .map(|_| f32::from_bits(bits.next() as u32))
                .collect();
            if bits.next().is_multiple_of(4) {
                xs.push(f32::NAN);
            }
            let v = Value::Floats(xs.clone());
            let reference = serde_json::to_string(&v).unwrap();
            check(&mut j, &|j| j.value_owned(&v), reference);
            let mut after: Vec<f32> = xs
                .iter()
                .copied()
                .filter(|_| !bits.next().is_multiple_of(5))
                .collect();
            if bits.next().is_multiple_of(3) {
                after.insert(0, f32::from_bits(bits.next() as u32));
            }
            if let Some(&x) = after.first() {
                after.push(x);
            }
            for x in after {
                let value = Value::F32(x);
                let reference = format!(
                    ",{{\"path\":\"v.x\",\"bit\":0,\"bits\":17,\"value\":{},\"min\":null,\"max\":null}}",
                    serde_json::to_string(&value).unwrap()
                );
                let f = TraceField::new("v.x", 1, 0, 17, value, FieldKind::Value);
                check(&mut j, &|j| j.field_owned("v.x", &f), reference);
            }
        }
        // Datagram headers: IPv4 and IPv6 addresses, times of every magnitude and sign, a
        // captured length or not, decoders and packet types with and without escapes.
        let names = [
            "demo",
            "batch",
            "",
            "say \"hi\"",
            "t\tab",
            "SceneUpdate",
            "ünï",
        ];
        for _ in 0..5_000 {
            let mut addr = || -> SocketAddr {
                let port = bits.next() as u16 >> (bits.next() % 16);
                if bits.next().is_multiple_of(5) {
                    SocketAddr::from((Ipv6Addr::from(bits.next() as u128 * 977), port))
                } else {
                    SocketAddr::from((
                        Ipv4Addr::from((bits.next() as u32) >> (bits.next() % 32)),
                        port,
                    ))
                }
            };
            let (src, dst) = (addr(), addr());
            let nanos = i128::from(bits.magnitude() as i64)
                * if bits.next().is_multiple_of(2) {
                    1
                } else {
                    1_000_000_000
                };
            let time = Timestamp::from_nanos(nanos);
            let len = bits.magnitude() as usize % 70_000;
            let d = Datagram::detached(bits.magnitude(), time, src, dst, len);
            let payload_len = if bits.next().is_multiple_of(4) {
                len / 2
            } else {
                len
            };
            let decoder = names[bits.next() as usize % names.len()];
            let mut dissection = Dissection::not_decoded(
                bitlens_codec::dissect::Status::ALL[bits.next() as usize % 7],
            );
            dissection.packet_type = match bits.next() % 3 {
                0 => None,
                _ => Some(names[bits.next() as usize % names.len()]),
            };
            let captured = if payload_len == len {
                String::new()
            } else {
                format!(",\"captured\":{payload_len}")
            };
            let reference = format!(
                "{{\"frame\":{},\"time\":\"{time}\",\"src\":\"{src}\",\"dst\":\"{dst}\",\"len\":{len}{captured},\"decoder\":{},\"status\":{},\"packet_type\":{},\"fields\":",
                d.frame,
                serde_json::to_string(decoder).unwrap(),
                serde_json::to_string(dissection.status.name()).unwrap(),
                serde_json::to_string(&dissection.packet_type).unwrap()
            );
            check(
                &mut j,
                &|j| j.header(&d, payload_len, decoder, &dissection),
                reference,
            );
        }
        drop(j);
        assert_eq!(String::from_utf8(all).unwrap(), expected);
    }

    /// Lists closed by `close_list`: none, one and several items written after commas.
    #[test]
    fn lists_of_items_after_commas_are_closed_as_json_lists() {
        for n in 0..4 {
            let text = written(|j| {
                j.raw("x:");
                let start = j.pos;
                for i in 0..n {
                    j.raw(",");
                    j.uint(i);
                }
                j.close_list(start);
            });
            let items: Vec<String> = (0..n).map(|i| i.to_string()).collect();
            assert_eq!(text, format!("x:[{}]", items.join(",")));
        }
    }

    /// Short copies of every length (two words, two half-words, three single bytes) copy
    /// exactly the bytes given, and nothing past them.
    #[test]
    fn short_copies_copy_every_length_exactly() {
        let src: Vec<u8> = (1..=48u8).collect();
        for n in 0..=48 {
            let mut dst = [0u8; 64];
            copy_short(&mut dst[..n], &src[..n]);
            assert_eq!(dst[..n], src[..n], "{n}");
            assert!(dst[n..].iter().all(|&b| b == 0), "{n}");
        }
    }

    /// The header writes status names without escaping them: none has anything to escape.
    #[test]
    fn status_names_need_no_escaping() {
        for status in bitlens_codec::dissect::Status::ALL {
            assert!(!needs_escape(status.name().as_bytes()), "{status:?}");
        }
    }

    /// Lines written over a reused buffer's bytes: only the bytes written count, whatever was
    /// there (longer or shorter), and an escaped string keeps the room (it goes through the
    /// scratch buffer, not onto the output).
    #[test]
    fn lines_over_a_reused_buffer_write_only_their_bytes() {
        for old in [0usize, 3, 40, 5000] {
            let mut buf = vec![b'#'; old];
            let mut lines = JsonLines::over(&mut buf);
            lines.0.str("say \"hi\"");
            lines.0.uint(1234567);
            lines.0.str("plain");
            let room = lines.0.out.len();
            lines.0.str("tab\there");
            assert_eq!(lines.0.out.len(), room, "the room was cut off");
            let n = lines.written();
            drop(lines);
            let text = r#""say \"hi\""1234567"plain""tab\there""#;
            assert_eq!(std::str::from_utf8(&buf[..n]).unwrap(), text);
            assert!(buf.len() >= n, "{old}");
        }
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

    #[test]
    fn walked_paths_are_the_recorded_paths_in_every_shipped_capture() {
        use bitlens_codec::observe::Observation;
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../captures");
        let dissectors = crate::dissectors::shipped();
        let mut walked = 0;
        for file in std::fs::read_dir(dir).expect("captures/") {
            let path = file.expect("a directory entry").path();
            if !path
                .extension()
                .is_some_and(|e| e == "pcap" || e == "pcapng")
            {
                continue;
            }
            let capture = crate::capture::Capture::open(&path).expect("a shipped capture");
            for d in capture.datagrams() {
                let payload = d.payload(capture.data());
                let seen = &Observation::NONE;
                let (_, tree) = dissectors.dissect_seen(d, payload, seen);
                let (_, values) = dissectors.dissect_values_seen(d, payload, seen);
                for x in [tree, values] {
                    let fields = &x.trace.fields;
                    let mut walk = fields.walk();
                    let mut i = 0;
                    while let Some((f, path)) = walk.next() {
                        assert_eq!(path, f.path(), "{} frame {}", path, d.frame);
                        assert_eq!(path, fields[i].path(), "{} frame {}", path, d.frame);
                        i += 1;
                    }
                    assert_eq!(i, fields.len());
                    walked += i;
                }
            }
        }
        assert!(walked > 10_000, "{walked} entries walked");
    }
}
