//! The byte-aligned fast writer and reader of seed 002 (`FastBufferWriter` / `FastBufferReader`),
//! driven, like the bit-packed streams, by one serialize function per message over the
//! [`ByteStream`] trait.
//!
//! ```text
//! primitive          wire
//! u8 / i8            1 byte
//! u16..u64, i16..    little-endian, 2 / 4 / 8 bytes, two's complement
//! f32 / f64          raw IEEE-754 bits, little-endian (NaN payloads, -0 kept)
//! bool               1 byte, 0 or 1 (anything else is rejected on read)
//! pod(T)             size_of::<T>() bytes, the struct's memory in one copy (bytemuck::Pod:
//!                    no padding, every bit pattern valid); little-endian hosts only
//! packed u / i       the tagged format's varint (tagged::varint): big-endian 7-bit groups with
//!                    reduced redundancy; signed values zig-zagged first
//! bytes(n)           n raw bytes, n not sent
//! string / text      packed length, then that many bytes of UTF-8
//! ```
//!
//! Every read is bounds-checked before it copies; lengths are checked against their maximum and
//! against the bytes that remain before anything is sized by them. Writers are bounded by their
//! slice: a write that does not fit is [`BatchErrorKind::BufferFull`], never a panic.

use super::error::{BatchError, BatchErrorKind, Result};
use bitlens_codec::trace::{FieldKind, NoTrace, Tracer, Value};
use bitlens_tagged::varint::{
    MAX_VARINT_LEN, VarintRead, encode_varint, read_varint, unzigzag, varint_len, zigzag,
};

/// How the bytes of [`ByteStream::slice`] are checked and shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SliceKind {
    /// Raw bytes.
    Bytes,
    /// UTF-8 text: a reader rejects anything else.
    Utf8,
}

/// One serialize function per message drives the fast writer, reader, counter and tracer
/// through this trait: read and write cannot drift apart (DESIGN.md, "The one idea").
///
/// On a reading stream a primitive fills `v`; on a writing one it sends `v` and leaves it alone.
pub trait ByteStream: Sized {
    /// True for [`ByteReader`].
    const READING: bool;
    /// True for [`ByteWriter`] and [`ByteCounter`].
    const WRITING: bool = !Self::READING;

    /// `N` raw bytes; `show` turns them into the trace's value.
    ///
    /// # Errors
    /// Buffer full / past_end.
    fn fixed<const N: usize>(
        &mut self,
        name: &'static str,
        v: &mut [u8; N],
        show: fn(&[u8; N]) -> Value,
    ) -> Result<()>;

    /// `v.len()` raw bytes (the length is not sent); [`SliceKind::Utf8`] bytes must be UTF-8.
    ///
    /// # Errors
    /// Buffer full / past_end; invalid_utf8.
    fn slice(&mut self, name: &'static str, v: &mut [u8], kind: SliceKind) -> Result<()>;

    /// A packed `u64`: a varint of the tagged format (1 to 10 bytes).
    ///
    /// # Errors
    /// Buffer full / past_end; invalid_varint.
    fn varint(&mut self, name: &'static str, v: &mut u64) -> Result<()>;

    /// A length as a varint in `0..=max`; a reader also checks `len * max(unit, 1)` against the
    /// bytes that remain, before the caller sizes anything by it.
    ///
    /// # Errors
    /// Out_of_range (written or read), past_end, invalid_varint.
    fn length(
        &mut self,
        name: &'static str,
        len: &mut usize,
        max: usize,
        unit: usize,
    ) -> Result<()>;

    /// The length of a string or byte vector: [`ByteStream::length`] with unit 1, which a trace
    /// records as `name.len` (the bytes that follow are `name`), so that the two have different
    /// paths; errors name `name`.
    ///
    /// # Errors
    /// As [`ByteStream::length`].
    #[inline]
    fn text_length(&mut self, name: &'static str, len: &mut usize, max: usize) -> Result<()> {
        self.length(name, len, max, 1)
    }

    /// A named group of fields (a struct): the trace records a nested scope.
    ///
    /// # Errors
    /// Whatever `f` returns.
    fn scope<R>(&mut self, name: &'static str, f: impl FnOnce(&mut Self) -> Result<R>)
    -> Result<R>;

    /// Array element `i`: the trace records the scope `[i]`.
    ///
    /// # Errors
    /// Whatever `f` returns.
    fn index<R>(&mut self, i: usize, f: impl FnOnce(&mut Self) -> Result<R>) -> Result<R>;

    /// Bytes consumed or produced so far.
    fn position(&self) -> usize;

    /// The declared range `min..=max` of the value read next (a ranged integer's: `range`,
    /// `abs_max` as `-abs_max..=abs_max`, an id's), which a trace records with that value as a
    /// bit-packed field's range is recorded. Only a tracing reader keeps it; it is dropped when
    /// the read finds no value (past_end, invalid_varint).
    #[inline]
    fn trace_range(&mut self, min: i128, max: i128) {
        let _ = (min, max);
    }

    /// Byte offset of the stream's first byte within its datagram (for errors and traces).
    fn base(&self) -> usize;

    /// One byte.
    ///
    /// # Errors
    /// Buffer full / past_end.
    #[inline]
    fn u8(&mut self, name: &'static str, v: &mut u8) -> Result<()> {
        let mut b = [*v];
        self.fixed(name, &mut b, |b| Value::Int(i128::from(b[0])))?;
        *v = b[0];
        Ok(())
    }

    /// One byte, 0 or 1.
    ///
    /// # Errors
    /// Out_of_range when a reader finds another byte; buffer full / past_end.
    #[inline]
    fn bool(&mut self, name: &'static str, v: &mut bool) -> Result<()> {
        let mut b = [u8::from(*v)];
        let at = self.base() + self.position();
        self.fixed(name, &mut b, |b| match b[0] {
            0 => Value::Bool(false),
            1 => Value::Bool(true),
            n => Value::Int(i128::from(n)),
        })?;
        if Self::READING {
            if b[0] > 1 {
                let kind = BatchErrorKind::OutOfRange {
                    value: u64::from(b[0]),
                    min: 0,
                    max: 1,
                };
                return Err(BatchError::new(kind, at, name));
            }
            *v = b[0] == 1;
        }
        Ok(())
    }

    /// A plain-old-data value in one copy of its `size_of::<T>()` bytes of memory.
    ///
    /// Only on little-endian hosts, where memory order is the wire's little-endian order: a
    /// big-endian build fails to compile here rather than send other bytes.
    ///
    /// # Errors
    /// Buffer full / past_end.
    #[cfg(target_endian = "little")]
    #[inline]
    fn pod<T: bytemuck::Pod>(&mut self, name: &'static str, v: &mut T) -> Result<()> {
        self.slice(name, bytemuck::bytes_of_mut(v), SliceKind::Bytes)
    }

    /// A packed `u32` (varint); a reader rejects values over `u32::MAX`.
    ///
    /// # Errors
    /// Out_of_range, buffer full / past_end, invalid_varint.
    #[inline]
    fn packed_u32(&mut self, name: &'static str, v: &mut u32) -> Result<()> {
        let mut x = u64::from(*v);
        let at = self.base() + self.position();
        self.varint(name, &mut x)?;
        *v = u32::try_from(x).map_err(|_| {
            let kind = BatchErrorKind::OutOfRange {
                value: x,
                min: 0,
                max: u64::from(u32::MAX),
            };
            BatchError::new(kind, at, name)
        })?;
        Ok(())
    }

    /// A packed `i32`: zig-zag, then varint; a reader rejects values outside `i32`.
    ///
    /// # Errors
    /// Out_of_range, buffer full / past_end, invalid_varint.
    #[inline]
    fn packed_i32(&mut self, name: &'static str, v: &mut i32) -> Result<()> {
        let mut x = i64::from(*v);
        let at = self.base() + self.position();
        self.packed_i64(name, &mut x)?;
        *v = i32::try_from(x).map_err(|_| {
            let kind = BatchErrorKind::OutOfRange {
                value: zigzag(x),
                min: 0,
                max: zigzag(i64::from(i32::MIN)),
            };
            BatchError::new(kind, at, name)
        })?;
        Ok(())
    }

    /// A packed `i64`: zig-zag (0, -1, 1, -2 → 0, 1, 2, 3), then varint.
    ///
    /// # Errors
    /// Buffer full / past_end, invalid_varint.
    #[inline]
    fn packed_i64(&mut self, name: &'static str, v: &mut i64) -> Result<()> {
        let mut x = zigzag(*v);
        self.varint(name, &mut x)?;
        *v = unzigzag(x);
        Ok(())
    }

    /// A byte vector: packed length in `0..=max_len`, then the bytes. A reader reuses the
    /// vector's capacity and sizes it only after the length has been checked.
    ///
    /// # Errors
    /// Out_of_range, past_end, invalid_varint.
    fn byte_vec(&mut self, name: &'static str, v: &mut Vec<u8>, max_len: usize) -> Result<()> {
        let mut len = v.len();
        self.text_length(name, &mut len, max_len)?;
        if Self::READING {
            v.clear();
            v.resize(len, 0);
        }
        self.slice(name, v, SliceKind::Bytes)
    }

    /// A string: packed length in `0..=max_len` bytes, then UTF-8. A reader reuses the string's
    /// capacity.
    ///
    /// # Errors
    /// Out_of_range, past_end, invalid_varint, invalid_utf8.
    fn string(&mut self, name: &'static str, s: &mut String, max_len: usize) -> Result<()> {
        let mut len = s.len();
        self.text_length(name, &mut len, max_len)?;
        // A writer only reads the bytes; a reader fills them. Either way the string's own
        // buffer is borrowed as bytes and handed back, so its capacity is reused.
        let mut owned = std::mem::take(s).into_bytes();
        if Self::READING {
            owned.clear();
            owned.resize(len, 0);
        }
        let r = self.slice(name, &mut owned, SliceKind::Utf8);
        if r.is_err() {
            owned.clear();
        }
        // Unchanged bytes of a String, or bytes the reader checked: UTF-8 either way.
        *s = String::from_utf8(owned).unwrap_or_default();
        r
    }

    /// A string of at most `N` bytes stored inline ([`InlineStr`]): packed length, then UTF-8.
    /// Never allocates.
    ///
    /// # Errors
    /// Out_of_range, past_end, invalid_varint, invalid_utf8.
    fn text<const N: usize>(&mut self, name: &'static str, s: &mut InlineStr<N>) -> Result<()> {
        let mut len = s.len;
        self.text_length(name, &mut len, N)?;
        if Self::READING {
            s.len = 0;
        }
        self.slice(name, &mut s.bytes[..len], SliceKind::Utf8)?;
        s.len = len;
        Ok(())
    }
}

macro_rules! le_primitives {
    ($($name:ident: $t:ty, $show:expr;)*) => {
        /// Little-endian fixed-width primitives, provided for every [`ByteStream`].
        pub trait LittleEndian: ByteStream {
            $(
                #[doc = concat!("A `", stringify!($t), "`, little-endian, in ", stringify!($t), "'s size.")]
                ///
                /// # Errors
                /// Buffer full / past_end.
                #[inline]
                fn $name(&mut self, name: &'static str, v: &mut $t) -> Result<()> {
                    let mut b = v.to_le_bytes();
                    self.fixed(name, &mut b, |b| {
                        let f: fn($t) -> Value = $show;
                        f(<$t>::from_le_bytes(*b))
                    })?;
                    *v = <$t>::from_le_bytes(b);
                    Ok(())
                }
            )*
        }
        impl<S: ByteStream> LittleEndian for S {}
    };
}

le_primitives! {
    u16: u16, |x| Value::Int(i128::from(x));
    u32: u32, |x| Value::Int(i128::from(x));
    u64: u64, |x| Value::Int(i128::from(x));
    i8: i8, |x| Value::Int(i128::from(x));
    i16: i16, |x| Value::Int(i128::from(x));
    i32: i32, |x| Value::Int(i128::from(x));
    i64: i64, |x| Value::Int(i128::from(x));
    f32: f32, Value::F32;
    f64: f64, Value::F64;
}

/// A UTF-8 string of at most `N` bytes, stored inline: messages that carry text stay
/// plain values on the stack, and reading them never allocates.
#[derive(Clone, Copy)]
pub struct InlineStr<const N: usize> {
    len: usize,
    bytes: [u8; N],
}

impl<const N: usize> InlineStr<N> {
    /// The most bytes it holds.
    pub const CAPACITY: usize = N;

    /// The empty string.
    pub const fn new() -> Self {
        InlineStr {
            len: 0,
            bytes: [0; N],
        }
    }

    /// `s`, if it fits in `N` bytes.
    pub fn try_from_str(s: &str) -> Option<Self> {
        let mut out = Self::new();
        let b = s.as_bytes();
        out.bytes.get_mut(..b.len())?.copy_from_slice(b);
        out.len = b.len();
        Some(out)
    }

    /// `s` cut at the last character boundary that fits in `N` bytes.
    pub fn truncated(s: &str) -> Self {
        let mut end = s.len().min(N);
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        Self::try_from_str(&s[..end]).unwrap_or_default()
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        // Every way in (constructors, `text` reads) checks UTF-8, so this never fails.
        std::str::from_utf8(&self.bytes[..self.len]).unwrap_or("")
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

// Equality and hashing look at the text only: bytes past the length are left over from
// earlier values (a read reuses the buffer) and mean nothing.
impl<const N: usize> PartialEq for InlineStr<N> {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl<const N: usize> Eq for InlineStr<N> {}

impl<const N: usize> std::hash::Hash for InlineStr<N> {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.as_str().hash(h);
    }
}

impl<const N: usize> Default for InlineStr<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> std::fmt::Debug for InlineStr<N> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.as_str())
    }
}

#[cfg(feature = "arbitrary")]
impl<'a, const N: usize> arbitrary::Arbitrary<'a> for InlineStr<N> {
    fn arbitrary(u: &mut arbitrary::Unstructured<'a>) -> arbitrary::Result<Self> {
        let s: &str = u.arbitrary()?;
        Ok(Self::truncated(s))
    }
}

/// A list of at most `N` values stored inline: a message's bounded array stays a plain value,
/// and reading it never allocates (the array counterpart of [`InlineStr`]). A
/// `#[derive(BatchStruct)]` field of this type is an array with `max_len = N`.
#[derive(Clone, Copy)]
pub struct InlineVec<T: Copy + Default, const N: usize> {
    len: usize,
    items: [T; N],
}

impl<T: Copy + Default, const N: usize> InlineVec<T, N> {
    /// The most values it holds.
    pub const CAPACITY: usize = N;

    /// The empty list.
    pub fn new() -> Self {
        InlineVec {
            len: 0,
            items: [T::default(); N],
        }
    }

    /// `items`, if they fit in `N`.
    pub fn try_from_slice(items: &[T]) -> Option<Self> {
        let mut out = Self::new();
        out.items.get_mut(..items.len())?.copy_from_slice(items);
        out.len = items.len();
        Some(out)
    }

    /// Appends `v`; `Err(v)` when full.
    ///
    /// # Errors
    /// The value back, when the list holds `N` already.
    pub fn try_push(&mut self, v: T) -> Result<(), T> {
        match self.items.get_mut(self.len) {
            Some(slot) => {
                *slot = v;
                self.len += 1;
                Ok(())
            }
            None => Err(v),
        }
    }

    /// The values.
    pub fn as_slice(&self) -> &[T] {
        &self.items[..self.len]
    }

    /// The values, mutable.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        &mut self.items[..self.len]
    }

    /// `n` default values (at most `N`): what a reader does once a count is checked.
    pub fn reset(&mut self, n: usize) {
        self.len = n.min(N);
        self.items[..self.len].fill(T::default());
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

// Equality and hashing look at the values only, not at slots past the length.
impl<T: Copy + Default + PartialEq, const N: usize> PartialEq for InlineVec<T, N> {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<T: Copy + Default + Eq, const N: usize> Eq for InlineVec<T, N> {}

impl<T: Copy + Default + std::hash::Hash, const N: usize> std::hash::Hash for InlineVec<T, N> {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.as_slice().hash(h);
    }
}

impl<T: Copy + Default, const N: usize> Default for InlineVec<T, N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Copy + Default, const N: usize> std::ops::Deref for InlineVec<T, N> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T: Copy + Default, const N: usize> std::ops::DerefMut for InlineVec<T, N> {
    fn deref_mut(&mut self) -> &mut [T] {
        self.as_mut_slice()
    }
}

impl<T: Copy + Default + std::fmt::Debug, const N: usize> std::fmt::Debug for InlineVec<T, N> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

#[cfg(feature = "arbitrary")]
impl<'a, T, const N: usize> arbitrary::Arbitrary<'a> for InlineVec<T, N>
where
    T: Copy + Default + arbitrary::Arbitrary<'a>,
{
    fn arbitrary(u: &mut arbitrary::Unstructured<'a>) -> arbitrary::Result<Self> {
        let mut out = Self::new();
        for _ in 0..u.int_in_range(0..=N)? {
            let _ = out.try_push(u.arbitrary()?);
        }
        Ok(out)
    }
}

/// Where a batch array keeps its elements: a `Vec` (allocated, reused) or an [`InlineVec`]
/// (never allocates). Derived code sizes it only after the count was checked.
pub trait ArrayStorage<T> {
    /// Number of elements.
    fn count(&self) -> usize;
    /// `n` default elements (a reader, once `n` was checked against the bytes that remain).
    fn reset(&mut self, n: usize);
    /// The elements.
    fn items_mut(&mut self) -> &mut [T];
}

impl<T: Default> ArrayStorage<T> for Vec<T> {
    fn count(&self) -> usize {
        self.len()
    }
    fn reset(&mut self, n: usize) {
        self.clear();
        self.resize_with(n, T::default);
    }
    fn items_mut(&mut self) -> &mut [T] {
        self
    }
}

impl<T: Copy + Default, const N: usize> ArrayStorage<T> for InlineVec<T, N> {
    fn count(&self) -> usize {
        self.len
    }
    fn reset(&mut self, n: usize) {
        InlineVec::reset(self, n);
    }
    fn items_mut(&mut self) -> &mut [T] {
        self.as_mut_slice()
    }
}

// ---- Writer ----------------------------------------------------------------------------------

/// The fast writer: byte-aligned, over a caller-owned buffer, every write bounded by it.
#[derive(Debug)]
pub struct ByteWriter<'a> {
    buf: &'a mut [u8],
    pos: usize,
    base: usize,
}

impl<'a> ByteWriter<'a> {
    /// A writer at the start of `buf`.
    pub fn new(buf: &'a mut [u8]) -> Self {
        ByteWriter {
            buf,
            pos: 0,
            base: 0,
        }
    }

    /// A writer whose errors report offsets from `base` (the buffer's place in its datagram).
    pub fn with_base(buf: &'a mut [u8], base: usize) -> Self {
        ByteWriter { buf, pos: 0, base }
    }

    /// The bytes written so far.
    pub fn written(&self) -> &[u8] {
        &self.buf[..self.pos]
    }

    /// Consumes the writer, giving the number of bytes written.
    pub fn finish(self) -> usize {
        self.pos
    }

    #[inline]
    fn room(&mut self, name: &'static str, n: usize) -> Result<&mut [u8]> {
        let available = self.buf.len() - self.pos;
        if n > available {
            let kind = BatchErrorKind::BufferFull {
                needed: n,
                available,
            };
            return Err(BatchError::new(kind, self.base + self.pos, name));
        }
        let out = &mut self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }
}

impl ByteStream for ByteWriter<'_> {
    const READING: bool = false;

    #[inline]
    fn fixed<const N: usize>(
        &mut self,
        name: &'static str,
        v: &mut [u8; N],
        _: fn(&[u8; N]) -> Value,
    ) -> Result<()> {
        self.room(name, N)?.copy_from_slice(v);
        Ok(())
    }

    #[inline]
    fn slice(&mut self, name: &'static str, v: &mut [u8], _: SliceKind) -> Result<()> {
        self.room(name, v.len())?.copy_from_slice(v);
        Ok(())
    }

    #[inline]
    fn varint(&mut self, name: &'static str, v: &mut u64) -> Result<()> {
        if *v < 0x80 {
            // One byte: the encoding is the value itself (tagged::varint's table).
            self.room(name, 1)?[0] = *v as u8;
            return Ok(());
        }
        let (bytes, n) = encode_varint(*v);
        self.room(name, n)?
            .copy_from_slice(&bytes[MAX_VARINT_LEN - n..]);
        Ok(())
    }

    fn length(&mut self, name: &'static str, len: &mut usize, max: usize, _: usize) -> Result<()> {
        if *len > max {
            let kind = BatchErrorKind::OutOfRange {
                value: *len as u64,
                min: 0,
                max: max as u64,
            };
            return Err(BatchError::new(kind, self.base + self.pos, name));
        }
        self.varint(name, &mut (*len as u64))
    }

    #[inline]
    fn scope<R>(&mut self, _: &'static str, f: impl FnOnce(&mut Self) -> Result<R>) -> Result<R> {
        f(self)
    }

    #[inline]
    fn index<R>(&mut self, _: usize, f: impl FnOnce(&mut Self) -> Result<R>) -> Result<R> {
        f(self)
    }

    fn position(&self) -> usize {
        self.pos
    }

    fn base(&self) -> usize {
        self.base
    }
}

// ---- Counter ---------------------------------------------------------------------------------

/// Counts the exact bytes a [`ByteWriter`] would write (for tests of size upper bounds).
#[derive(Debug, Default, Clone, Copy)]
pub struct ByteCounter {
    bytes: usize,
}

impl ByteCounter {
    /// A counter at zero.
    pub fn new() -> Self {
        Self::default()
    }

    /// Bytes counted.
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

impl ByteStream for ByteCounter {
    const READING: bool = false;

    fn fixed<const N: usize>(
        &mut self,
        _: &'static str,
        _: &mut [u8; N],
        _: fn(&[u8; N]) -> Value,
    ) -> Result<()> {
        self.bytes += N;
        Ok(())
    }

    fn slice(&mut self, _: &'static str, v: &mut [u8], _: SliceKind) -> Result<()> {
        self.bytes += v.len();
        Ok(())
    }

    fn varint(&mut self, _: &'static str, v: &mut u64) -> Result<()> {
        self.bytes += varint_len(*v);
        Ok(())
    }

    fn length(&mut self, name: &'static str, len: &mut usize, max: usize, _: usize) -> Result<()> {
        if *len > max {
            let kind = BatchErrorKind::OutOfRange {
                value: *len as u64,
                min: 0,
                max: max as u64,
            };
            return Err(BatchError::new(kind, self.bytes, name));
        }
        self.bytes += varint_len(*len as u64);
        Ok(())
    }

    fn scope<R>(&mut self, _: &'static str, f: impl FnOnce(&mut Self) -> Result<R>) -> Result<R> {
        f(self)
    }

    fn index<R>(&mut self, _: usize, f: impl FnOnce(&mut Self) -> Result<R>) -> Result<R> {
        f(self)
    }

    fn position(&self) -> usize {
        self.bytes
    }

    fn base(&self) -> usize {
        0
    }
}

// ---- Reader ----------------------------------------------------------------------------------

/// The fast reader: byte-aligned, over a borrowed slice, every read bounds-checked first.
///
/// Over a [`Tracer`] like the bit-packed decoder: [`NoTrace`] costs nothing; a recording tracer
/// (see [`crate::dissect`]) sees every field with its byte offset in the datagram.
#[derive(Debug, Clone)]
pub struct ByteReader<'a, T: Tracer = NoTrace> {
    data: &'a [u8],
    pos: usize,
    base: usize,
    tracer: T,
    /// The range [`ByteStream::trace_range`] gave the next value traced.
    range: Option<(i128, i128)>,
}

impl<'a> ByteReader<'a> {
    /// A reader at the start of `data`.
    pub fn new(data: &'a [u8]) -> Self {
        ByteReader {
            data,
            pos: 0,
            base: 0,
            tracer: NoTrace,
            range: None,
        }
    }
}

impl<'a, T: Tracer> ByteReader<'a, T> {
    /// A reader of `data`, which starts at byte `base` of its datagram, recording into `tracer`.
    pub fn with_tracer(data: &'a [u8], base: usize, tracer: T) -> Self {
        ByteReader {
            data,
            pos: 0,
            base,
            tracer,
            range: None,
        }
    }

    /// Bytes not yet read.
    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    /// The tracer, with what it recorded.
    pub fn into_tracer(self) -> T {
        self.tracer
    }

    /// Insists that every byte was read.
    ///
    /// # Errors
    /// Trailing_body when bytes remain.
    pub fn finish(&self) -> Result<()> {
        match self.remaining() {
            0 => Ok(()),
            unread => Err(BatchError::new(
                BatchErrorKind::TrailingBody { unread },
                self.base + self.pos,
                "",
            )),
        }
    }

    /// The next `n` bytes, borrowed from the data.
    ///
    /// # Errors
    /// Past_end when fewer remain (nothing is consumed).
    #[inline]
    pub fn take(&mut self, name: &'static str, n: usize) -> Result<&'a [u8]> {
        let remaining = self.remaining();
        if n > remaining {
            let at = self.base + self.pos;
            self.range = None;
            if T::ACTIVE {
                let bits = remaining * 8;
                self.tracer.field(
                    name,
                    at * 8,
                    bits,
                    Value::None,
                    None,
                    FieldKind::Value,
                    true,
                );
            }
            let kind = BatchErrorKind::PastEnd {
                needed: n,
                remaining,
            };
            return Err(BatchError::new(kind, at, name));
        }
        let data: &'a [u8] = self.data;
        let out = &data[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    #[inline]
    fn record(&mut self, name: &str, at: usize, value: impl FnOnce() -> Value, failed: bool) {
        if T::ACTIVE {
            let (bit, bits) = (at * 8, (self.base + self.pos - at) * 8);
            let range = self.range.take();
            // The common values through the tracer's typed hooks (no `Value` unpacked).
            match (value(), range) {
                (Value::F32(x), None) if !failed => self.tracer.float32(name, bit, bits, x),
                (Value::F64(x), None) if !failed => self.tracer.float64(name, bit, bits, x),
                (Value::Int(v), None) if i64::try_from(v).is_ok() => {
                    self.tracer.int(name, bit, bits, v as i64, None, failed);
                }
                (value, range) => {
                    let kind = FieldKind::Value;
                    self.tracer
                        .field(name, bit, bits, value, range, kind, failed);
                }
            }
        }
    }

    /// A varint, traced as `show` makes the value of what was read (the varint itself, or the
    /// number it codes).
    #[inline]
    fn varint_shown(
        &mut self,
        name: &'static str,
        v: &mut u64,
        show: impl FnOnce(u64) -> i128,
    ) -> Result<()> {
        let at = self.base + self.pos;
        match read_varint(&self.data[self.pos..]) {
            VarintRead::Ok(x, n) => {
                self.pos += n;
                *v = x;
                if T::ACTIVE {
                    self.record_int(name, at, show(x));
                }
                Ok(())
            }
            VarintRead::PastEnd(remaining) => {
                self.range = None;
                self.record(name, at, || Value::None, true);
                let kind = BatchErrorKind::PastEnd {
                    needed: remaining + 1,
                    remaining,
                };
                Err(BatchError::new(kind, at, name))
            }
            VarintRead::TooLong | VarintRead::Overflow => {
                self.range = None;
                self.record(name, at, || Value::None, true);
                Err(BatchError::new(BatchErrorKind::InvalidVarint, at, name))
            }
        }
    }

    /// Records an accepted integer through the tracer's typed hook where it and its range fit
    /// `i64` (every one the format reads but a `u64` above `i64::MAX`).
    #[inline]
    fn record_int(&mut self, name: &str, at: usize, value: i128) {
        let bits = (self.base + self.pos - at) * 8;
        let range = self.range.take();
        let narrow =
            |(lo, hi): (i128, i128)| Some((i64::try_from(lo).ok()?, i64::try_from(hi).ok()?));
        match (i64::try_from(value), range) {
            (Ok(v), None) => self.tracer.int(name, at * 8, bits, v, None, false),
            (Ok(v), Some(r)) if narrow(r).is_some() => {
                self.tracer.int(name, at * 8, bits, v, narrow(r), false);
            }
            _ => {
                let kind = FieldKind::Value;
                let shown = Value::Int(value);
                self.tracer
                    .field(name, at * 8, bits, shown, range, kind, false);
            }
        }
    }

    fn range_record(&mut self, name: &str, at: usize, value: u64, max: usize, failed: bool) {
        self.range = None;
        if T::ACTIVE {
            let bits = (self.base + self.pos - at) * 8;
            let max = Some(max as u64);
            self.tracer.uint(name, at * 8, bits, value, max, failed);
        }
    }

    /// [`ByteStream::length`], recorded in a trace under `traced` (errors name `name`).
    fn length_traced(
        &mut self,
        name: &'static str,
        traced: &str,
        len: &mut usize,
        max: usize,
        unit: usize,
    ) -> Result<()> {
        let at = self.base + self.pos;
        let mut x = 0;
        // Recorded below with its range; an invalid varint records itself.
        let mut plain = ByteReader::with_tracer(&self.data[self.pos..], at, NoTrace);
        plain.varint(name, &mut x).inspect_err(|_| {
            self.record(traced, at, || Value::None, true);
        })?;
        self.pos += plain.pos;
        if x > max as u64 {
            self.range_record(traced, at, x, max, true);
            let kind = BatchErrorKind::OutOfRange {
                value: x,
                min: 0,
                max: max as u64,
            };
            return Err(BatchError::new(kind, at, name));
        }
        // x <= max fits in usize.
        let n = x as usize;
        let remaining = self.remaining();
        // An element that can take no bytes still counts one, as in the bit-packed
        // `Stream::array`: a count can never claim more elements than bytes remain.
        let needed = n.saturating_mul(unit.max(1));
        if needed > remaining {
            self.range_record(traced, at, x, max, true);
            let kind = BatchErrorKind::PastEnd { needed, remaining };
            return Err(BatchError::new(kind, at, name));
        }
        self.range_record(traced, at, x, max, false);
        *len = n;
        Ok(())
    }
}

impl<T: Tracer> ByteStream for ByteReader<'_, T> {
    const READING: bool = true;

    #[inline]
    fn fixed<const N: usize>(
        &mut self,
        name: &'static str,
        v: &mut [u8; N],
        show: fn(&[u8; N]) -> Value,
    ) -> Result<()> {
        let at = self.base + self.pos;
        v.copy_from_slice(self.take(name, N)?);
        let shown = &*v;
        self.record(name, at, || show(shown), false);
        Ok(())
    }

    #[inline]
    fn slice(&mut self, name: &'static str, v: &mut [u8], kind: SliceKind) -> Result<()> {
        let at = self.base + self.pos;
        let bytes = self.take(name, v.len())?;
        // Borrowed by the tracer's typed hooks: no owned `Value` per slice.
        let (bit, bits) = (at * 8, v.len() * 8);
        if kind == SliceKind::Utf8 {
            match std::str::from_utf8(bytes) {
                Ok(s) => {
                    if T::ACTIVE {
                        let range = self.range.take();
                        self.tracer.text(name, bit, bits, s, range, false);
                    }
                }
                Err(_) => {
                    if T::ACTIVE {
                        let range = self.range.take();
                        self.tracer.bytes(name, bit, bits, bytes, range, true);
                    }
                    return Err(BatchError::new(BatchErrorKind::InvalidUtf8, at, name));
                }
            }
        } else if T::ACTIVE {
            let range = self.range.take();
            self.tracer.bytes(name, bit, bits, bytes, range, false);
        }
        v.copy_from_slice(bytes);
        Ok(())
    }

    #[inline]
    fn varint(&mut self, name: &'static str, v: &mut u64) -> Result<()> {
        self.varint_shown(name, v, i128::from)
    }

    /// As the default, traced with the decoded value: the zig-zag code is only the wire's
    /// (`-3` is sent as `5` and traced as `-3`).
    #[inline]
    fn packed_i64(&mut self, name: &'static str, v: &mut i64) -> Result<()> {
        let mut x = 0;
        self.varint_shown(name, &mut x, |x| i128::from(unzigzag(x)))?;
        *v = unzigzag(x);
        Ok(())
    }

    fn length(
        &mut self,
        name: &'static str,
        len: &mut usize,
        max: usize,
        unit: usize,
    ) -> Result<()> {
        self.length_traced(name, name, len, max, unit)
    }

    fn text_length(&mut self, name: &'static str, len: &mut usize, max: usize) -> Result<()> {
        // An array element's string (no name of its own) keeps the element's path.
        if T::ACTIVE && !name.is_empty() {
            let traced = format!("{name}.len");
            self.length_traced(name, &traced, len, max, 1)
        } else {
            self.length_traced(name, name, len, max, 1)
        }
    }

    #[inline]
    fn scope<R>(
        &mut self,
        name: &'static str,
        f: impl FnOnce(&mut Self) -> Result<R>,
    ) -> Result<R> {
        if T::ACTIVE {
            self.tracer
                .enter(Some(name), None, (self.base + self.pos) * 8);
            let r = f(self);
            self.tracer.exit((self.base + self.pos) * 8);
            r
        } else {
            f(self)
        }
    }

    #[inline]
    fn index<R>(&mut self, i: usize, f: impl FnOnce(&mut Self) -> Result<R>) -> Result<R> {
        if T::ACTIVE {
            self.tracer.enter(None, Some(i), (self.base + self.pos) * 8);
            let r = f(self);
            self.tracer.exit((self.base + self.pos) * 8);
            r
        } else {
            f(self)
        }
    }

    fn position(&self) -> usize {
        self.pos
    }

    fn base(&self) -> usize {
        self.base
    }

    #[inline]
    fn trace_range(&mut self, min: i128, max: i128) {
        if T::ACTIVE {
            self.range = Some((min, max));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default, PartialEq)]
    struct Sample {
        a: u8,
        b: u16,
        c: i32,
        d: f32,
        flag: bool,
        packed: u32,
        signed: i64,
        name: InlineStr<8>,
    }

    impl Sample {
        fn serialize<S: ByteStream>(&mut self, s: &mut S) -> Result<()> {
            s.u8("a", &mut self.a)?;
            s.u16("b", &mut self.b)?;
            s.i32("c", &mut self.c)?;
            s.f32("d", &mut self.d)?;
            s.bool("flag", &mut self.flag)?;
            s.packed_u32("packed", &mut self.packed)?;
            s.packed_i64("signed", &mut self.signed)?;
            s.text("name", &mut self.name)
        }
    }

    /// a=1, b=0x0302, c=-2, d=1.0, flag, packed=128 (80 00), signed=-1 (01), name="hi".
    const SAMPLE: [u8; 20] = [
        0x01, 0x02, 0x03, 0xFE, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x80, 0x3F, 0x01, 0x80, 0x00, 0x01,
        0x02, b'h', b'i', 0, 0,
    ];

    fn sample() -> Sample {
        Sample {
            a: 1,
            b: 0x0302,
            c: -2,
            d: 1.0,
            flag: true,
            packed: 128,
            signed: -1,
            name: InlineStr::try_from_str("hi").unwrap(),
        }
    }

    #[test]
    fn emit_matches_static_bytes() {
        let mut buf = [0u8; 20];
        let mut w = ByteWriter::new(&mut buf);
        sample().serialize(&mut w).unwrap();
        assert_eq!(w.finish(), 18);
        assert_eq!(buf, SAMPLE);
        let mut c = ByteCounter::new();
        sample().serialize(&mut c).unwrap();
        assert_eq!(c.bytes(), 18);
    }

    #[test]
    fn parse_matches_static_bytes() {
        let mut back = Sample::default();
        let mut r = ByteReader::new(&SAMPLE[..18]);
        back.serialize(&mut r).unwrap();
        r.finish().unwrap();
        assert_eq!(back, sample());
    }

    #[test]
    fn every_prefix_is_rejected() {
        for n in 0..18 {
            let mut back = Sample::default();
            let e = back
                .serialize(&mut ByteReader::new(&SAMPLE[..n]))
                .unwrap_err();
            assert!(
                matches!(e.kind(), BatchErrorKind::PastEnd { .. }),
                "prefix {n}: {e}"
            );
            assert!(e.offset() <= n);
        }
    }

    #[test]
    fn hostile_values_are_named() {
        let mut bad = SAMPLE;
        bad[11] = 2; // flag
        let e = Sample::default()
            .serialize(&mut ByteReader::new(&bad))
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "byte 11 (field \"flag\"): 2 out of range 0..=1"
        );
        let mut bad = SAMPLE;
        bad[15] = 9; // name.len over 8
        let e = Sample::default()
            .serialize(&mut ByteReader::new(&bad))
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "byte 15 (field \"name\"): 9 out of range 0..=8"
        );
        let mut bad = SAMPLE;
        bad[16] = 0xFF; // not UTF-8
        let e = Sample::default()
            .serialize(&mut ByteReader::new(&bad[..18]))
            .unwrap_err();
        assert_eq!(*e.kind(), BatchErrorKind::InvalidUtf8);
        // A packed u32 over u32::MAX.
        let mut buf = [0u8; 10];
        let mut w = ByteWriter::new(&mut buf);
        w.varint("", &mut (1u64 << 40)).unwrap();
        let n = w.finish();
        let e = ByteReader::new(&buf[..n])
            .packed_u32("packed", &mut 0)
            .unwrap_err();
        assert!(matches!(e.kind(), BatchErrorKind::OutOfRange { .. }));
    }

    #[test]
    fn packed_signed_values_are_traced_decoded() {
        use bitlens_codec::trace::Recorder;
        let mut buf = [0u8; 16];
        let mut w = ByteWriter::new(&mut buf);
        let (mut small, mut big, mut plain) = (-3, i64::MIN, 5);
        w.packed_i32("small", &mut small).unwrap();
        w.packed_i64("big", &mut big).unwrap();
        w.packed_u32("plain", &mut plain).unwrap();
        let n = w.finish();
        // -3 is sent as its zig-zag code 5.
        assert_eq!(buf[0], 5);
        let mut r = ByteReader::with_tracer(&buf[..n], 10, Recorder::default());
        let (mut small, mut big, mut plain) = (0, 0, 0);
        r.packed_i32("small", &mut small).unwrap();
        r.packed_i64("big", &mut big).unwrap();
        r.packed_u32("plain", &mut plain).unwrap();
        assert_eq!((small, big, plain), (-3, i64::MIN, 5));
        let shown: Vec<_> = r
            .into_tracer()
            .into_fields()
            .into_vec()
            .into_iter()
            .map(|f| (f.path().to_string(), f.bit, f.value))
            .collect();
        assert_eq!(
            shown,
            [
                ("small".into(), 80, Value::Int(-3)),
                ("big".into(), 88, Value::Int(i128::from(i64::MIN))),
                ("plain".into(), 80 + 8 * (n - 1), Value::Int(5)),
            ]
        );
    }

    #[test]
    fn writes_past_the_buffer_are_errors() {
        let mut buf = [0u8; 5];
        let mut w = ByteWriter::new(&mut buf);
        let e = sample().serialize(&mut w).unwrap_err();
        assert_eq!(
            e.to_string(),
            "byte 3 (field \"c\"): buffer full: needs 4 bytes, 2 free"
        );
    }

    #[test]
    fn pod_is_one_copy_in_le_order() {
        #[derive(Clone, Copy, Default, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
        #[repr(C)]
        struct P {
            x: u32,
            y: u16,
            z: u16,
        }
        let mut p = P { x: 1, y: 2, z: 3 };
        let mut buf = [0u8; 8];
        let mut w = ByteWriter::new(&mut buf);
        w.pod("p", &mut p).unwrap();
        assert_eq!(buf, [1, 0, 0, 0, 2, 0, 3, 0]);
        let mut back = P::default();
        ByteReader::new(&buf).pod("p", &mut back).unwrap();
        assert_eq!(back, p);
    }

    #[test]
    fn strings_and_vectors_reuse_capacity() {
        let mut s = String::from("hello");
        let mut v = vec![1u8, 2, 3];
        let mut buf = [0u8; 16];
        let mut w = ByteWriter::new(&mut buf);
        w.string("s", &mut s, 10).unwrap();
        w.byte_vec("v", &mut v, 10).unwrap();
        let n = w.finish();
        assert_eq!(&buf[..n], b"\x05hello\x03\x01\x02\x03");
        let mut s2 = String::with_capacity(32);
        let mut v2 = Vec::with_capacity(32);
        let mut r = ByteReader::new(&buf[..n]);
        r.string("s", &mut s2, 10).unwrap();
        r.byte_vec("v", &mut v2, 10).unwrap();
        assert_eq!((s2.as_str(), v2.as_slice()), ("hello", &[1u8, 2, 3][..]));
        assert!(s2.capacity() >= 32 && v2.capacity() >= 32);
        // A length claiming more than remains is refused before anything is sized.
        let e = ByteReader::new(b"\x09ab")
            .byte_vec("v", &mut v2, 100)
            .unwrap_err();
        assert!(matches!(e.kind(), BatchErrorKind::PastEnd { .. }));
    }

    #[test]
    fn a_count_of_elements_that_take_no_bytes_is_bounded_by_the_bytes_that_remain() {
        // 65529 as a varint (3 bytes) and nothing after it: even elements that take no bytes
        // count one each, so the count cannot claim a long loop (reliability issue: a 3-byte
        // body grew an array to 65529 elements).
        let mut buf = [0u8; 3];
        let mut w = ByteWriter::new(&mut buf);
        w.varint("n", &mut 65529).unwrap();
        let n = w.finish();
        let mut len = 0;
        let e = ByteReader::new(&buf[..n])
            .length("n", &mut len, 65529, 0)
            .unwrap_err();
        assert!(
            matches!(
                e.kind(),
                BatchErrorKind::PastEnd {
                    needed: 65529,
                    remaining: 0
                }
            ),
            "{e}"
        );
        assert_eq!(len, 0);
        // Zero elements always fit.
        ByteReader::new(&[0])
            .length("n", &mut len, 65529, 0)
            .unwrap();
    }

    #[test]
    fn inline_str_truncates_on_char_boundaries() {
        let s = InlineStr::<4>::truncated("aé€");
        assert_eq!(s.as_str(), "aé");
        assert!(InlineStr::<2>::try_from_str("abc").is_none());
    }
}
