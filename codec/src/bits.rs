//! Word-level bit packing (seed 003, WIRE.md section 1 "Bits").
//!
//! Layout: LSB-first. The first value written occupies the lowest bits of byte 0; stream bit `k`
//! is bit `k % 8` of byte `k / 8`. The writer gathers values in a 64-bit scratch register and
//! stores it as a little-endian word (the reference stores 32-bit words; the bytes are the same,
//! so the word size never shows on the wire); the reader loads a little-endian 64-bit window at
//! the byte holding its next bit:
//!
//! ```text
//!  byte 0          byte 1          byte 2
//!  7 6 5 4 3 2 1 0 7 6 5 4 3 2 1 0 7 6 5 4 3 2 1 0
//!  b b b b b a a a c c c c c c c b . . . . . . c c     a: 3 bits, b: 6 bits, c: 9 bits
//! ```
//!
//! A packet of `n` bits occupies `ceil(n / 8)` bytes; unused high bits of the last byte are zero.
//!
//! Neither type panics or allocates: the writer works in a caller-owned buffer and reports
//! [`Overflow`] when a value would not fit; the reader reports [`PastEnd`] *before* consuming
//! anything when fewer bits remain than asked for.

/// The number of bits needed to send any integer in `min..=max`: 0 when `min == max`, else the
/// bit length of the unsigned span `max - min`.
///
/// `[0, 1000]` needs 10 bits, `[-100, 100]` 8, `[i32::MIN, i32::MAX]` 32, `[126, 4097]` 12.
/// `min > max` is the caller's bug; the span then wraps and the answer is meaningless (the streams
/// reject such ranges before asking).
#[inline]
pub const fn bits_required(min: i64, max: i64) -> u32 {
    let span = (max as u64).wrapping_sub(min as u64);
    64 - span.leading_zeros()
}

/// [`bits_required`] for 128-bit bounds (serialize 1.0's `bits_required128`): 0 when `min == max`,
/// else the bit length of the unsigned span `max - min`, computed in the unsigned 128-bit domain
/// so that a span wider than `2^127` is exact. Agrees with [`bits_required`] wherever both apply.
///
/// `[0, 2^64]` needs 65 bits, `[i128::MIN, i128::MAX]` 128, `[-5_000_000_000, 5_000_000_000]` 34.
#[inline]
pub const fn bits_required128(min: i128, max: i128) -> u32 {
    let span = (max as u128).wrapping_sub(min as u128);
    128 - span.leading_zeros()
}

/// The writer ran out of room in its buffer: `needed` more bits were asked for, `available` remain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overflow {
    /// Bits the write needed.
    pub needed: usize,
    /// Bits still free in the buffer.
    pub available: usize,
}

/// The reader was asked for more bits than remain: nothing was consumed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PastEnd {
    /// Bits the read needed.
    pub needed: usize,
    /// Bits that remained.
    pub remaining: usize,
}

/// The low `n` bits set, for `n` in 0..=32 (no branch: the shift never reaches 64).
#[inline(always)]
const fn mask32(n: u32) -> u64 {
    (1u64 << n) - 1
}

/// `MASKS[n]` has the low `min(n, 32)` bits set. A read masks with one `and` from this table
/// (indexed by `n as u8`, so no bounds check) where computing the mask takes three instructions
/// and the shift count register; a constant `n` folds it to a constant.
const MASKS: [u32; 256] = {
    let mut t = [u32::MAX; 256];
    let mut n = 0;
    while n < 32 {
        t[n] = (1u32 << n) - 1;
        n += 1;
    }
    t
};

#[inline(always)]
const fn low_mask(n: u32) -> u64 {
    if n >= 64 { u64::MAX } else { (1u64 << n) - 1 }
}

/// Packs values of 1..=32 bits into a caller-owned byte buffer, word by word.
///
/// Values gather in a 64-bit scratch register that is stored as one little-endian 64-bit word
/// whenever it fills (the same bytes as two 32-bit words: word size never shows on the wire).
/// Call [`BitWriter::flush`] when done: it stores the partial last word and returns the number
/// of bytes the packet occupies.
///
/// The capacity is checked once per word, not once per value. A write compares the scratch's
/// new fill with `limit` (64, or near the end of the buffer the bits the buffer has left for the
/// current word); only a write that reaches it goes on. Far from the end, where the word after
/// the current one also lies wholly in the buffer, no write of up to 64 bits can pass the end:
/// the full word is stored at once. In the last two words every such write is checked against
/// the capacity before anything is stored.
#[derive(Debug)]
pub struct BitWriter<'a> {
    buf: &'a mut [u8],
    scratch: u64,
    /// Bits in `scratch` (0..64).
    scratch_bits: u32,
    /// `min(64, capacity_bits - 64 * word)`: a write that brings `scratch_bits` to this either
    /// completes the word or reaches the end of the buffer.
    limit: u32,
    /// Index of the 64-bit word the scratch holds (its bytes start at `8 * word`).
    word: usize,
    /// Words below this index are followed by a whole word of the buffer: a write that
    /// completes one of them fits (`capacity_bits / 64 - 1`, or 0).
    far: usize,
    capacity_bits: usize,
}

impl<'a> BitWriter<'a> {
    /// A writer that packs into `buf`, starting at its first bit. Bytes of `buf` past what is
    /// written are left as they were; bytes written are fully defined (padding bits zero).
    #[inline]
    pub fn new(buf: &'a mut [u8]) -> Self {
        let capacity_bits = buf.len().saturating_mul(8);
        BitWriter {
            buf,
            scratch: 0,
            scratch_bits: 0,
            limit: capacity_bits.min(64) as u32,
            word: 0,
            far: (capacity_bits / 64).saturating_sub(1),
            capacity_bits,
        }
    }

    /// Bits written so far.
    #[inline]
    pub fn bits_written(&self) -> usize {
        64 * self.word + self.scratch_bits as usize
    }

    /// Bits still free in the buffer.
    #[inline]
    pub fn bits_available(&self) -> usize {
        self.capacity_bits - self.bits_written()
    }

    /// Whether `n` more bits fit for certain, judged by the word index alone: true when the
    /// `ceil(n / 64)` words after the current one, and one more, lie wholly in the buffer. A
    /// constant `n` makes this one comparison, where [`BitWriter::bits_available`] takes several.
    #[inline(always)]
    fn surely_fits(&self, n: usize) -> bool {
        self.word + n.div_ceil(64) < self.far
    }

    /// The refusal of a write of `n` bits that does not fit.
    #[cold]
    #[inline(never)]
    fn overflow(&self, n: usize) -> Overflow {
        Overflow {
            needed: n,
            available: self.bits_available(),
        }
    }

    /// Stores the full scratch word at `word` and moves on to the next word. Only called when
    /// the word lies wholly within the capacity: `get_mut` cannot miss.
    #[inline(always)]
    fn store_word(&mut self) {
        if let Some(word) = self.buf.as_chunks_mut::<8>().0.get_mut(self.word) {
            *word = self.scratch.to_le_bytes();
        }
        self.word += 1;
    }

    /// Sets `limit` for the current word.
    #[inline(always)]
    fn reset_limit(&mut self) {
        self.limit = (self.capacity_bits - 64 * self.word).min(64) as u32;
    }

    /// Appends the low `n` bits of `value` (`n` in 1..=64, higher bits of `value` zero): the
    /// core of every write. `carry` gives the bits of `value` past a completed word, `value >>
    /// (64 - used)`, which one shift gives when `n <= 32` and two when `used` may be 0.
    ///
    /// # Errors
    /// [`Overflow`] if the buffer has fewer than `n` free bits; nothing is written then.
    #[inline(always)]
    fn append(&mut self, value: u64, n: u32, carry: fn(u64, u32) -> u64) -> Result<(), Overflow> {
        let used = self.scratch_bits;
        let total = used + n;
        // The merged word is computed before the word-full test, not in each branch: the shift
        // and `or` then start as soon as the value is loaded, and a store of a full word does not
        // wait for them after the test resolves. Same instructions on the fast path, 0.86x the time
        // on serialize.rs's bitpacker loop where they sat after the test (BENCHMARKS.md, issue 17).
        let merged = self.scratch | (value << used);
        if total < self.limit {
            self.scratch = merged;
            self.scratch_bits = total;
            return Ok(());
        }
        if self.word < self.far {
            // The word is full (`limit` is 64 this far from the end), and whatever spills over
            // fits in the next one.
            self.scratch = merged;
            self.store_word();
            self.scratch = carry(value, used);
            self.scratch_bits = total - 64;
            return Ok(());
        }
        // The call takes the address of a copy of the state, not the writer's own: a caller's
        // loop keeps the writer in registers.
        let mut near = BitWriter {
            buf: &mut *self.buf,
            ..*self
        };
        let r = near.put_near_end(value, n);
        (self.scratch, self.scratch_bits, self.limit, self.word) =
            (near.scratch, near.scratch_bits, near.limit, near.word);
        r
    }

    /// [`BitWriter::append`] in the last two words of the buffer: checked against the capacity.
    #[cold]
    #[inline(never)]
    fn put_near_end(&mut self, value: u64, n: u32) -> Result<(), Overflow> {
        if n as usize > self.bits_available() {
            return Err(self.overflow(n as usize));
        }
        self.put_checked(value, n);
        Ok(())
    }

    /// Writes the low `n` bits of `value` (`n` in 1..=32; higher bits of `value` must be zero).
    ///
    /// # Errors
    /// [`Overflow`] if the buffer has fewer than `n` free bits; nothing is written then.
    #[inline(always)]
    pub fn write_bits(&mut self, value: u32, n: u32) -> Result<(), Overflow> {
        debug_assert!((1..=32).contains(&n));
        debug_assert!(u64::from(value) <= low_mask(n));
        // A full word with n <= 32 means used >= 32: the shift is 1..=32.
        self.append(u64::from(value), n, |v, used| v >> (64 - used))
    }

    /// Writes a run of fields at once: `(value, width)` pairs, widths 1..=32, each value within
    /// its width. The same bits as one [`BitWriter::write_bits`] per field, with one capacity
    /// check for the run.
    ///
    /// Meant for widths that are constants at the call site (a struct's fixed-width fields):
    /// the values are then gathered at constant offsets into chunks of up to 64 bits, and each
    /// chunk takes one word-full test, where field-by-field writes take a test per field
    /// (BENCHMARKS.md).
    ///
    /// # Errors
    /// [`Overflow`] (for the whole run) if the buffer has fewer free bits than the run needs;
    /// nothing is written then.
    #[inline(always)]
    pub fn write_run<const K: usize>(&mut self, fields: [(u32, u32); K]) -> Result<(), Overflow> {
        let total: u32 = fields.iter().map(|&(_, n)| n).sum();
        if !self.surely_fits(total as usize) && total as usize > self.bits_available() {
            return Err(self.overflow(total as usize));
        }
        // Gather the fields into chunks of up to 64 bits; with constant widths the chunk
        // boundaries fold, and each chunk is one append.
        let (mut chunk, mut chunk_bits) = (0u64, 0u32);
        for (value, n) in fields {
            debug_assert!((1..=32).contains(&n));
            debug_assert!(u64::from(value) <= low_mask(n));
            if chunk_bits + n > 64 {
                self.put_checked(chunk, chunk_bits);
                (chunk, chunk_bits) = (0, 0);
            }
            chunk |= u64::from(value) << chunk_bits;
            chunk_bits += n;
        }
        if chunk_bits > 0 {
            self.put_checked(chunk, chunk_bits);
        }
        Ok(())
    }

    /// Appends the low `n` bits of `value` (`n` in 0..=64, higher bits zero) whose room in the
    /// buffer was already checked.
    #[inline(always)]
    fn put_checked(&mut self, value: u64, n: u32) {
        let used = self.scratch_bits;
        self.scratch |= value << used;
        let total = used + n;
        if total >= 64 {
            self.store_word();
            if self.word >= self.far {
                self.reset_limit();
            }
            self.scratch = carry_wide(value, used);
            self.scratch_bits = total - 64;
        } else {
            self.scratch_bits = total;
        }
    }

    /// Writes the low `n` bits of `value`, `n` in 1..=64: the low 32 bits, then the rest.
    ///
    /// # Errors
    /// [`Overflow`] if the buffer has fewer than `n` free bits; nothing is written then.
    #[inline(always)]
    pub fn write_wide(&mut self, value: u64, n: u32) -> Result<(), Overflow> {
        if n <= 32 {
            return self.write_bits(value as u32, n);
        }
        // LSB first: the low 32 bits, then the rest, as one append.
        self.append(value, n, carry_wide)
    }

    /// Zero bits needed to reach the next byte boundary (0 when aligned).
    #[inline]
    pub fn align_bits(&self) -> u32 {
        (8 - self.scratch_bits % 8) % 8
    }

    /// Writes zero bits up to the next byte boundary.
    ///
    /// # Errors
    /// [`Overflow`] if the padding does not fit.
    #[inline]
    pub fn align(&mut self) -> Result<(), Overflow> {
        match self.align_bits() {
            0 => Ok(()),
            n => self.write_bits(0, n),
        }
    }

    /// Writes whole bytes. The writer must be byte-aligned (call [`BitWriter::align`] first).
    ///
    /// Eight bytes at a time go in as one 64-bit word (the same bits as eight 8-bit writes); a
    /// run of 64 bytes or more first reaches a word boundary, then is copied into the buffer in
    /// one piece.
    ///
    /// # Errors
    /// [`Overflow`] if the bytes do not fit; nothing is written then.
    #[inline]
    pub fn write_bytes(&mut self, bytes: &[u8]) -> Result<(), Overflow> {
        debug_assert_eq!(self.scratch_bits % 8, 0);
        let needed = bytes.len().saturating_mul(8);
        if needed > self.bits_available() {
            return Err(self.overflow(needed));
        }
        self.put_bytes_checked(bytes);
        // Far from the end `limit` is 64 before and after; only the last two words change it.
        if self.word >= self.far {
            self.reset_limit();
        }
        Ok(())
    }

    /// Pads to the next byte boundary with zero bits, then writes `bytes` (a stream's `align`
    /// and `bytes` in one step), when all of it fits for certain by the word index alone (as
    /// [`BitWriter::write_run`]'s test): `true` then. Otherwise writes nothing and returns
    /// `false`, and the caller aligns and writes with their own capacity checks, so that a
    /// refusal names the same bit as before.
    #[inline(always)]
    pub(crate) fn try_align_and_bytes(&mut self, bytes: &[u8]) -> bool {
        // At most 7 bits of padding.
        if !self.surely_fits(bytes.len().saturating_mul(8).saturating_add(7)) {
            return false;
        }
        // The scratch is zero above its bits: aligning is rounding the count up. A word that
        // the padding completes is stored (the next one is in the buffer: `surely_fits`).
        let used = (self.scratch_bits + 7) & !7;
        if used == 64 {
            self.store_word();
            self.scratch = 0;
            self.scratch_bits = 0;
        } else {
            self.scratch_bits = used;
        }
        // `limit` stays 64: every word this touches lies before `far`.
        self.put_bytes_checked(bytes);
        true
    }

    /// The body of [`BitWriter::write_bytes`]: the writer is byte-aligned and the room for
    /// `bytes` was checked. Leaves `limit` to the caller.
    #[inline(always)]
    fn put_bytes_checked(&mut self, bytes: &[u8]) {
        let mut rest = bytes;
        if rest.len() >= 64 {
            // Up to the word boundary, then whole words straight into the buffer.
            let head = ((64 - self.scratch_bits) / 8 % 8) as usize;
            let (first, tail) = rest.split_at(head);
            self.put_checked(le_value(first), 8 * head as u32);
            let (words, tail) = tail.split_at(tail.len() / 8 * 8);
            let at = 8 * self.word;
            if let Some(dst) = self.buf.get_mut(at..at + words.len()) {
                dst.copy_from_slice(words);
            }
            self.word += words.len() / 8;
            rest = tail;
        }
        // Eight bytes at a time, each with the scratch's bits below it: one store per 8 bytes
        // into a range of the buffer checked once (it lies within the capacity checked above).
        let words = rest.len() / 8;
        if words > 0 {
            let used = self.scratch_bits;
            let at = 8 * self.word;
            if let Some(dst) = self.buf.get_mut(at..at + 8 * words) {
                let mut carry = self.scratch;
                for (d, s) in dst.chunks_exact_mut(8).zip(rest.chunks_exact(8)) {
                    let v = u64::from_le_bytes([s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]]);
                    d.copy_from_slice(&(carry | v << used).to_le_bytes());
                    carry = carry_wide(v, used);
                }
                self.scratch = carry;
            }
            self.word += words;
        }
        let tail = rest.len() % 8;
        if tail > 0 {
            // The last 8 bytes when there are that many (one load), else byte by byte.
            let value = match rest.last_chunk::<8>() {
                Some(last) => u64::from_le_bytes(*last) >> (64 - 8 * tail),
                None => le_value(rest),
            };
            self.put_checked(value, 8 * tail as u32);
        }
    }

    /// Flushes and hands back the written bytes: `ceil(bits / 8)` of them.
    #[inline]
    pub fn finish(mut self) -> &'a mut [u8] {
        let n = self.flush();
        let buf = std::mem::take(&mut self.buf);
        // `n` never exceeds the buffer: `min` only spares the slice its panic branch.
        let n = n.min(buf.len());
        &mut buf[..n]
    }

    /// Stores the partial last word and returns the bytes written: `ceil(bits / 8)`.
    /// Further writes continue where this left off.
    #[inline]
    pub fn flush(&mut self) -> usize {
        let at = 8 * self.word;
        let tail = self.scratch_bits.div_ceil(8) as usize;
        if let Some(dst) = self.buf.as_chunks_mut::<8>().0.get_mut(self.word) {
            // A whole word of room: rewrite the bytes past the packet with the values they had,
            // in one 8-byte store (the scratch is zero above its bits).
            let keep = u64::MAX.checked_shl(8 * tail as u32).unwrap_or(0);
            let word = u64::from_le_bytes(*dst) & keep | self.scratch;
            *dst = word.to_le_bytes();
        } else if let Some(dst) = self.buf.get_mut(at..at + tail) {
            dst.copy_from_slice(&self.scratch.to_le_bytes()[..tail]);
        }
        at + tail
    }
}

/// The bits of `value` past a word that `used` bits of scratch filled: `value >> (64 - used)`,
/// written as two shifts so that `used == 0` (all of `value` fitted) gives 0 instead of a shift
/// by 64.
#[inline(always)]
fn carry_wide(value: u64, used: u32) -> u64 {
    (value >> 1) >> (63 - used)
}

/// The little-endian value of up to 8 bytes (0 for none).
#[inline(always)]
fn le_value(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .take(8)
        .rev()
        .fold(0, |v, &b| v << 8 | u64::from(b))
}

/// Counts bits exactly as [`BitWriter`] would write them, without storing anything.
#[derive(Debug, Default, Clone)]
pub struct BitCounter {
    bits: usize,
    limit: usize,
}

impl BitCounter {
    /// A counter with no limit.
    pub fn new() -> Self {
        BitCounter {
            bits: 0,
            limit: usize::MAX,
        }
    }
    /// A counter that reports [`Overflow`] past `limit_bits`, like a writer over a buffer that size.
    pub fn with_limit(limit_bits: usize) -> Self {
        BitCounter {
            bits: 0,
            limit: limit_bits,
        }
    }
    /// Bits counted so far.
    pub fn bits(&self) -> usize {
        self.bits
    }
}

/// Unpacks values from a byte slice, with every read checked against the end.
///
/// Each read loads the unaligned little-endian 64-bit window that starts at the byte holding the
/// next bit (the missing bytes of the last window read as zero), shifts and masks: reads do not
/// depend on one another except through the bit position, which keeps them fast.
#[derive(Debug, Clone)]
pub struct BitReader<'a> {
    data: &'a [u8],
    bits_read: usize,
    total_bits: usize,
}

impl<'a> BitReader<'a> {
    /// A reader over all of `data`.
    #[inline]
    pub fn new(data: &'a [u8]) -> Self {
        BitReader {
            data,
            bits_read: 0,
            total_bits: data.len().saturating_mul(8),
        }
    }

    /// The bytes being read.
    pub fn data(&self) -> &'a [u8] {
        self.data
    }

    /// Bits consumed so far.
    #[inline]
    pub fn bits_read(&self) -> usize {
        self.bits_read
    }

    /// Bits left before the end of the data.
    #[inline]
    pub fn bits_remaining(&self) -> usize {
        self.total_bits - self.bits_read
    }

    /// Reads `n` bits (1..=32).
    ///
    /// # Errors
    /// [`PastEnd`] if fewer than `n` bits remain; nothing is consumed then.
    #[inline(always)]
    pub fn read_bits(&mut self, n: u32) -> Result<u32, PastEnd> {
        debug_assert!((1..=32).contains(&n));
        let pos = self.bits_read;
        let byte = pos >> 3;
        // Fast path: a whole 8-byte window exists, so at least 57 bits remain past `pos` — more
        // than any n <= 32 — and the window's own bounds check is the only one.
        if let Some(w) = self.data.get(byte..byte + 8) {
            let window = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
            self.bits_read = pos + n as usize;
            return Ok((window >> (pos & 7)) as u32 & MASKS[usize::from(n as u8)]);
        }
        // Near the end: plain values in and out, so the reader never escapes to memory and its
        // position stays in a register in the loops of callers.
        let value = read_near_end(self.data, pos, n)?;
        self.bits_read = pos + n as usize;
        Ok(value)
    }

    /// Reads a run of fields at once: widths 1..=32. The same values as one
    /// [`BitReader::read_bits`] per width, with one bounds check for a run of up to 120 bits
    /// (a longer run, or one in the last 16 bytes, is read field by field).
    ///
    /// Meant for widths that are constants at the call site (a struct's fixed-width fields):
    /// the run's 16 bytes are checked once, a 64-bit window is loaded and shifted once per 57
    /// bits or so, and each field is then a shift and a mask by constants (BENCHMARKS.md,
    /// bitstream-io rows).
    ///
    /// # Errors
    /// [`PastEnd`] (for the whole run) if fewer bits remain than the run needs; nothing is
    /// consumed then.
    #[inline(always)]
    pub fn read_run<const K: usize>(&mut self, widths: [u32; K]) -> Result<[u32; K], PastEnd> {
        let total: u32 = widths.iter().sum();
        let mut out = [0u32; K];
        let pos = self.bits_read;
        let byte = pos >> 3;
        // 16 bytes from the byte holding `pos` hold at least 121 bits past it.
        if let (true, Some(run)) = (total <= 120, self.data.get(byte..byte + 16)) {
            let shift = (pos & 7) as u32;
            // `window` holds the bits from `base` (relative to `pos`) on: at least 57 of them,
            // or (a window clamped to the last 8 bytes) every bit up to `shift + 120`.
            let (mut base, mut window) = (0u32, 0u64);
            let mut at = 0u32;
            for (i, (v, n)) in out.iter_mut().zip(widths).enumerate() {
                debug_assert!((1..=32).contains(&n));
                if i == 0 || at + n - base > 57 {
                    // With constant widths this test folds: the loads happen at fixed fields.
                    // The window starts at the byte holding bit `at`, or at the run's last 8
                    // bytes when that byte is further on: those still hold every bit up to
                    // `shift + 120`, all the rest of the run needs.
                    base = at;
                    let bit = shift + at;
                    let from = ((bit >> 3) as usize).min(8);
                    let w = &run[from..from + 8];
                    let w = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
                    window = w >> (bit - 8 * from as u32);
                }
                *v = (window >> (at - base)) as u32 & MASKS[usize::from(n as u8)];
                at += n;
            }
            self.bits_read = pos + total as usize;
            return Ok(out);
        }
        if total as usize > self.bits_remaining() {
            return Err(PastEnd {
                needed: total as usize,
                remaining: self.bits_remaining(),
            });
        }
        for (v, n) in out.iter_mut().zip(widths) {
            *v = self.read_bits(n)?;
        }
        Ok(out)
    }

    /// Reads `n` bits (1..=64): the low 32 bits, then the rest.
    ///
    /// # Errors
    /// [`PastEnd`] if fewer than `n` bits remain; nothing is consumed then.
    #[inline(always)]
    pub fn read_wide(&mut self, n: u32) -> Result<u64, PastEnd> {
        if n <= 32 {
            return self.read_bits(n).map(u64::from);
        }
        let pos = self.bits_read;
        let byte = pos >> 3;
        // Fast path: 9 bytes from the one holding `pos` hold at least 65 bits past it.
        if let Some(w) = self.data.get(byte..byte + 9) {
            let low = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
            let shift = (pos & 7) as u32;
            // The 9th byte's bits above the low word's, without a shift by 64 when `shift == 0`.
            let high = (u64::from(w[8]) << 1) << (63 - shift);
            self.bits_read = pos + n as usize;
            return Ok((low >> shift | high) & low_mask(n));
        }
        if n as usize > self.bits_remaining() {
            return Err(PastEnd {
                needed: n as usize,
                remaining: self.bits_remaining(),
            });
        }
        let low = self.read_bits(32)?;
        let high = self.read_bits(n - 32)?;
        Ok(u64::from(low) | (u64::from(high) << 32))
    }

    /// Padding bits to the next byte boundary (0 when aligned).
    #[inline]
    pub fn align_bits(&self) -> u32 {
        ((8 - (self.bits_read % 8)) % 8) as u32
    }

    /// Skips to the next byte boundary and returns the padding bits that were skipped (their
    /// value; the stream layer insists they are zero).
    ///
    /// # Errors
    /// [`PastEnd`] if the padding runs past the end.
    #[inline]
    pub fn align(&mut self) -> Result<u32, PastEnd> {
        match self.align_bits() {
            0 => Ok(0),
            n => self.read_bits(n),
        }
    }

    /// Reads `out.len()` whole bytes. The reader must be byte-aligned.
    ///
    /// # Errors
    /// [`PastEnd`] if fewer bytes remain; nothing is consumed then.
    #[inline]
    pub fn read_bytes(&mut self, out: &mut [u8]) -> Result<(), PastEnd> {
        debug_assert_eq!(self.bits_read % 8, 0);
        let needed = out.len().saturating_mul(8);
        if needed > self.bits_remaining() {
            return Err(PastEnd {
                needed,
                remaining: self.bits_remaining(),
            });
        }
        let start = self.bits_read / 8;
        if let Some(src) = self.data.get(start..start + out.len()) {
            out.copy_from_slice(src);
        }
        self.bits_read += needed;
        Ok(())
    }
}

/// [`BitReader::read_bits`] in the last 8 bytes, where the end must be checked.
#[cold]
#[inline(never)]
fn read_near_end(data: &[u8], pos: usize, n: u32) -> Result<u32, PastEnd> {
    let total = data.len() * 8;
    if n as usize > total - pos {
        return Err(PastEnd {
            needed: n as usize,
            remaining: total - pos,
        });
    }
    let byte = pos >> 3;
    let mut w = [0u8; 8];
    let tail = data.get(byte..).unwrap_or(&[]);
    let k = tail.len().min(8);
    w[..k].copy_from_slice(&tail[..k]);
    Ok(((u64::from_le_bytes(w) >> (pos & 7)) & mask32(n)) as u32)
}

/// Where the write-side streams put their bits: a [`BitWriter`] or a [`BitCounter`].
pub trait BitSink {
    /// Writes `n` bits (1..=64) of `value`.
    ///
    /// # Errors
    /// [`Overflow`] when the bits do not fit.
    fn put(&mut self, value: u64, n: u32) -> Result<(), Overflow>;
    /// Bits written so far.
    fn position(&self) -> usize;
    /// Bits still free.
    fn available(&self) -> usize;
    /// Writes aligned whole bytes.
    ///
    /// # Errors
    /// [`Overflow`] when the bytes do not fit.
    fn put_bytes(&mut self, bytes: &[u8]) -> Result<(), Overflow>;
    /// Pads to a byte boundary and writes `bytes` when all of it fits for certain: `true`
    /// then; otherwise `false`, nothing written, and the caller takes the checked steps.
    #[inline(always)]
    fn try_align_and_bytes(&mut self, _bytes: &[u8]) -> bool {
        false
    }
}

impl BitSink for BitWriter<'_> {
    #[inline(always)]
    fn put(&mut self, value: u64, n: u32) -> Result<(), Overflow> {
        self.write_wide(value, n)
    }
    #[inline(always)]
    fn position(&self) -> usize {
        self.bits_written()
    }
    #[inline(always)]
    fn available(&self) -> usize {
        self.bits_available()
    }
    #[inline(always)]
    fn put_bytes(&mut self, bytes: &[u8]) -> Result<(), Overflow> {
        self.write_bytes(bytes)
    }
    #[inline(always)]
    fn try_align_and_bytes(&mut self, bytes: &[u8]) -> bool {
        BitWriter::try_align_and_bytes(self, bytes)
    }
}

impl BitSink for BitCounter {
    #[inline(always)]
    fn put(&mut self, _value: u64, n: u32) -> Result<(), Overflow> {
        if n as usize > self.limit - self.bits {
            return Err(Overflow {
                needed: n as usize,
                available: self.limit - self.bits,
            });
        }
        self.bits += n as usize;
        Ok(())
    }
    #[inline(always)]
    fn position(&self) -> usize {
        self.bits
    }
    #[inline(always)]
    fn available(&self) -> usize {
        self.limit - self.bits
    }
    #[inline(always)]
    fn put_bytes(&mut self, bytes: &[u8]) -> Result<(), Overflow> {
        let needed = bytes.len().saturating_mul(8);
        if needed > self.limit - self.bits {
            return Err(Overflow {
                needed,
                available: self.limit - self.bits,
            });
        }
        self.bits += needed;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The next value of a fixed xorshift sequence: the same samples on every run.
    fn next(x: &mut u64) -> u64 {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        *x
    }

    #[test]
    fn bits_required_matches_wire_md() {
        assert_eq!(bits_required(0, 1000), 10);
        assert_eq!(bits_required(-100, 100), 8);
        assert_eq!(bits_required(i32::MIN as i64, i32::MAX as i64), 32);
        assert_eq!(bits_required(126, 4097), 12);
        assert_eq!(bits_required(5, 5), 0);
        assert_eq!(bits_required(0, 1), 1);
        assert_eq!(bits_required(i64::MIN, i64::MAX), 64);
    }

    #[test]
    fn lsb_first_layout() {
        let mut buf = [0xAAu8; 3];
        let mut w = BitWriter::new(&mut buf);
        w.write_bits(0b101, 3).unwrap();
        w.write_bits(0b111111, 6).unwrap();
        w.write_bits(0x1FF, 9).unwrap();
        assert_eq!(w.flush(), 3);
        assert_eq!(buf, [0b1111_1101, 0b1111_1111, 0b0000_0011]);
    }

    #[test]
    fn word_boundary_straddles() {
        // 31 + 2 bits crosses the first word; 33-bit wide values split at 32.
        let mut buf = [0u8; 16];
        let mut w = BitWriter::new(&mut buf);
        w.write_bits(0x7FFF_FFFF, 31).unwrap();
        w.write_bits(0b10, 2).unwrap();
        w.write_wide(0x1_2345_6789, 33).unwrap();
        w.write_bits(1, 1).unwrap();
        let n = w.flush();
        assert_eq!(n, 9);
        let mut r = BitReader::new(&buf[..n]);
        assert_eq!(r.read_bits(31), Ok(0x7FFF_FFFF));
        assert_eq!(r.read_bits(2), Ok(0b10));
        assert_eq!(r.read_wide(33), Ok(0x1_2345_6789));
        assert_eq!(r.read_bits(1), Ok(1));
        assert_eq!(r.bits_remaining(), 9 * 8 - 67);
    }

    #[test]
    fn writer_overflow_is_an_error_not_a_panic() {
        let mut buf = [0u8; 5];
        let mut w = BitWriter::new(&mut buf);
        w.write_bits(u32::MAX, 32).unwrap();
        w.write_bits(0x7F, 7).unwrap();
        assert_eq!(
            w.write_bits(3, 2),
            Err(Overflow {
                needed: 2,
                available: 1
            })
        );
        w.write_bits(1, 1).unwrap();
        assert_eq!(
            w.write_bits(1, 1),
            Err(Overflow {
                needed: 1,
                available: 0
            })
        );
        assert_eq!(w.flush(), 5);
        assert_eq!(buf, [0xFF, 0xFF, 0xFF, 0xFF, 0xFF]);
    }

    #[test]
    fn reader_checks_before_consuming() {
        let data = [0xFFu8, 0x01];
        let mut r = BitReader::new(&data);
        assert_eq!(r.read_bits(12), Ok(0x1FF));
        assert_eq!(
            r.read_bits(5),
            Err(PastEnd {
                needed: 5,
                remaining: 4
            })
        );
        assert_eq!(r.bits_read(), 12);
        assert_eq!(r.read_bits(4), Ok(0));
        assert_eq!(
            r.read_bits(1),
            Err(PastEnd {
                needed: 1,
                remaining: 0
            })
        );
    }

    #[test]
    fn empty_reader() {
        let mut r = BitReader::new(&[]);
        assert!(r.read_bits(1).is_err());
        assert_eq!(r.align(), Ok(0));
        assert!(r.read_bytes(&mut []).is_ok());
    }

    #[test]
    fn counter_agrees_with_writer() {
        let mut buf = [0u8; 64];
        let mut w = BitWriter::new(&mut buf);
        let mut c = BitCounter::new();
        for (i, n) in [3u32, 10, 24, 1, 32, 64, 7].iter().enumerate() {
            let v = i as u64 & low_mask(*n);
            w.put(v, *n).unwrap();
            c.put(v, *n).unwrap();
        }
        assert_eq!(w.position(), c.position());
    }

    /// Every buffer size from 0 to 40 bytes, width sequences (up to 64 bits, through
    /// `write_wide`) that cross the far/near-end limits at every offset: the writer must agree
    /// bit for bit with a one-bit-at-a-time reference,
    /// refuse exactly the writes that do not fit (with the right counts), leave the bytes past
    /// the packet alone, and read back the same values.
    #[test]
    fn writer_agrees_with_a_bitwise_reference_near_the_end() {
        let patterns: [&[u32]; 8] = [
            &[3, 10, 24, 1, 32],
            &[32],
            &[1],
            &[31, 2, 7],
            &[17, 32, 5],
            &[64],
            &[33, 7, 64, 1],
            &[40, 3, 57],
        ];
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        for len in 0..=40usize {
            for widths in patterns {
                for skip in 0..widths.len() {
                    let mut buf = vec![0xA5u8; len + 3];
                    let mut reference = vec![0u8; len];
                    let mut w = BitWriter::new(&mut buf[..len]);
                    let mut bits = 0usize;
                    let mut written = Vec::new();
                    for i in 0..200 {
                        let n = widths[(i + skip) % widths.len()];
                        let v = next(&mut x) & low_mask(n);
                        let free = len * 8 - bits;
                        assert_eq!(w.bits_available(), free);
                        let r = if n <= 32 {
                            w.write_bits(v as u32, n)
                        } else {
                            w.write_wide(v, n)
                        };
                        if n as usize > free {
                            assert_eq!(
                                r,
                                Err(Overflow {
                                    needed: n as usize,
                                    available: free
                                })
                            );
                            continue;
                        }
                        assert_eq!(r, Ok(()));
                        for k in 0..n as usize {
                            if v >> k & 1 == 1 {
                                reference[(bits + k) / 8] |= 1 << ((bits + k) % 8);
                            }
                        }
                        bits += n as usize;
                        written.push((v, n));
                        assert_eq!(w.bits_written(), bits);
                    }
                    let used = w.flush();
                    assert_eq!(used, bits.div_ceil(8));
                    assert_eq!(&buf[..used], &reference[..used], "len {len} {widths:?}");
                    assert!(buf[used..].iter().all(|&b| b == 0xA5), "len {len}: tail");
                    let mut r = BitReader::new(&buf[..used]);
                    for &(v, n) in &written {
                        assert_eq!(r.read_wide(n), Ok(v));
                    }
                    assert_eq!(r.bits_remaining(), used * 8 - bits);
                }
            }
        }
    }

    /// Byte runs of every length from 0 to 150 (the 8-byte appends, the tail, and the long runs
    /// copied word by word) after every whole-byte lead from 0 to 9 bytes, into buffers that fit
    /// exactly, leave slack, or are one byte short: the same bytes as one 8-bit write per byte,
    /// the bytes past the packet untouched, and a run that does not fit refused whole.
    #[test]
    fn byte_runs_agree_with_byte_by_byte_writes() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for len in 0..=150usize {
            let bytes: Vec<u8> = (0..len).map(|_| next(&mut x) as u8).collect();
            for lead in 0..=9usize {
                for slack in [-1isize, 0, 1, 9] {
                    let size = (lead + len) as isize + slack;
                    if size < lead as isize {
                        continue;
                    }
                    let size = size as usize;
                    let mut buf = vec![0xA5u8; size];
                    let mut w = BitWriter::new(&mut buf);
                    for i in 0..lead {
                        w.write_bits(i as u32 * 37 % 256, 8).unwrap();
                    }
                    let r = w.write_bytes(&bytes);
                    if slack < 0 {
                        let short = Overflow {
                            needed: len * 8,
                            available: (size - lead) * 8,
                        };
                        assert_eq!(r, Err(short), "len {len} lead {lead}");
                        assert_eq!(w.bits_written(), lead * 8);
                    } else {
                        assert_eq!(r, Ok(()), "len {len} lead {lead} slack {slack}");
                        assert_eq!(w.bits_written(), (lead + len) * 8);
                    }
                    let used = w.flush();
                    let expected: Vec<u8> = (0..lead)
                        .map(|i| (i * 37 % 256) as u8)
                        .chain(if slack < 0 { vec![] } else { bytes.clone() })
                        .collect();
                    assert_eq!(used, expected.len());
                    assert_eq!(&buf[..used], &expected[..], "len {len} lead {lead}");
                    assert!(buf[used..].iter().all(|&b| b == 0xA5), "len {len}: tail");
                }
            }
        }
    }

    #[test]
    fn byte_runs_and_alignment() {
        let mut buf = [0u8; 8];
        let mut w = BitWriter::new(&mut buf);
        w.write_bits(5, 3).unwrap();
        w.align().unwrap();
        w.write_bytes(&[0xA1, 0xB2, 0xC3, 0xD4, 0xE5]).unwrap();
        assert_eq!(w.flush(), 6);
        assert_eq!(&buf[..6], &[0x05, 0xA1, 0xB2, 0xC3, 0xD4, 0xE5]);
        let mut r = BitReader::new(&buf[..6]);
        assert_eq!(r.read_bits(3), Ok(5));
        assert_eq!(r.align(), Ok(0));
        let mut out = [0u8; 5];
        r.read_bytes(&mut out).unwrap();
        assert_eq!(out, [0xA1, 0xB2, 0xC3, 0xD4, 0xE5]);
        let mut too_many = [0u8; 1];
        assert!(r.read_bytes(&mut too_many).is_err());
    }
}
