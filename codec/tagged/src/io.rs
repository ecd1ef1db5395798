//! Byte reader and writer for the tagged format: bounded regions, depth limit, sized prefixes.

use super::varint::{MAX_VARINT_LEN, VarintRead, encode_varint, read_varint, write_varint};
use super::{Error, MAX_DEPTH};

/// Reads a tagged document, one bounded region at a time.
///
/// Offsets in errors are absolute: a region is a window `[pos, end)` on the whole document,
/// never a copy. Every length is checked against the bytes left in the current region before
/// anything is allocated or skipped.
#[derive(Clone, Debug)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    end: usize,
    depth: u32,
    field: Option<u64>,
}

impl<'a> Reader<'a> {
    /// A reader over a whole document.
    pub fn new(buf: &'a [u8]) -> Self {
        Reader {
            buf,
            pos: 0,
            end: buf.len(),
            depth: 0,
            field: None,
        }
    }

    /// Absolute byte offset of the next byte to read.
    #[inline]
    pub fn offset(&self) -> usize {
        self.pos
    }

    /// Bytes left in the current region.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.end - self.pos
    }

    /// Whether the current region is used up.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.pos >= self.end
    }

    /// Number of sized regions entered and not yet left.
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// Id of the field being read, used in errors: set by the schema-less walk of
    /// [`raw`](crate::raw). A typed decode leaves it `None` and names the innermost field in an
    /// error as the error leaves that field.
    #[inline]
    pub fn field(&self) -> Option<u64> {
        self.field
    }

    #[inline]
    pub(crate) fn set_field(&mut self, field: Option<u64>) -> Option<u64> {
        core::mem::replace(&mut self.field, field)
    }

    /// Reads one raw byte.
    ///
    /// # Errors
    /// [`Error::PastEnd`] when the region is used up.
    #[inline]
    pub fn byte(&mut self) -> Result<u8, Error> {
        Ok(self.bytes(1)?[0])
    }

    /// Reads `n` raw bytes, borrowed from the document.
    ///
    /// # Errors
    /// [`Error::PastEnd`] when fewer than `n` bytes remain (nothing is consumed then).
    #[inline]
    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8], Error> {
        // `pos <= end <= buf.len()` always holds, so the slice of the region cannot fail.
        match self
            .buf
            .get(self.pos..self.end)
            .and_then(|rest| rest.get(..n))
        {
            Some(out) => {
                self.pos += n;
                Ok(out)
            }
            None => Err(self.past_end(n)),
        }
    }

    #[cold]
    #[inline(never)]
    fn past_end(&self, needed: usize) -> Error {
        Error::PastEnd {
            offset: self.pos,
            field: self.field,
            needed,
            remaining: self.remaining(),
        }
    }

    /// Reads one varint.
    ///
    /// # Errors
    /// [`Error::PastEnd`], [`Error::VarintTooLong`] or [`Error::VarintOverflow`].
    #[inline(always)]
    pub fn varint(&mut self) -> Result<u64, Error> {
        // One and two bytes (tags, lengths and values below 16512), inlined.
        let rest = self.buf.get(self.pos..self.end).unwrap_or_default();
        match *rest {
            [b, ..] if b < 0x80 => {
                self.pos += 1;
                Ok(u64::from(b))
            }
            [b0, b1, ..] if b1 < 0x80 => {
                self.pos += 2;
                Ok(0x80 + (u64::from(b0 & 0x7F) << 7 | u64::from(b1)))
            }
            _ => self.long_varint(),
        }
    }

    #[inline(never)]
    fn long_varint(&mut self) -> Result<u64, Error> {
        let (offset, field) = (self.pos, self.field);
        match read_varint(self.buf.get(self.pos..self.end).unwrap_or_default()) {
            VarintRead::Ok(x, n) => {
                self.pos += n;
                Ok(x)
            }
            VarintRead::PastEnd(have) => Err(Error::PastEnd {
                offset,
                field,
                needed: have + 1,
                remaining: have,
            }),
            VarintRead::TooLong => Err(Error::VarintTooLong { offset, field }),
            VarintRead::Overflow => Err(Error::VarintOverflow { offset, field }),
        }
    }

    /// Reads a length prefix, checks it against what remains, and hands `f` the region it
    /// delimits; then checks that `f` used the whole region and moves past it.
    ///
    /// # Errors
    /// [`Error::TooDeep`] past [`MAX_DEPTH`] nested regions, [`Error::SizedTooLong`],
    /// [`Error::TrailingBytes`] if `f` left bytes unread, or whatever `f` returns.
    pub fn sized<R>(&mut self, f: impl FnOnce(&mut Self) -> Result<R, Error>) -> Result<R, Error> {
        let offset = self.pos;
        if self.depth >= MAX_DEPTH {
            return Err(self.too_deep());
        }
        let len = self.varint()?;
        let remaining = self.remaining();
        let len = match usize::try_from(len) {
            Ok(len) if len <= remaining => len,
            _ => return Err(self.sized_too_long(offset, len)),
        };
        let outer_end = self.end;
        self.end = self.pos + len;
        self.depth += 1;
        let result = f(self);
        self.depth -= 1;
        let inner_end = self.end;
        self.end = outer_end;
        let value = result?;
        if self.pos != inner_end {
            return Err(self.trailing(inner_end));
        }
        Ok(value)
    }

    #[cold]
    #[inline(never)]
    fn too_deep(&self) -> Error {
        Error::TooDeep {
            offset: self.pos,
            field: self.field,
            limit: MAX_DEPTH,
        }
    }

    #[cold]
    #[inline(never)]
    fn sized_too_long(&self, offset: usize, len: u64) -> Error {
        Error::SizedTooLong {
            offset,
            field: self.field,
            len,
            remaining: self.remaining(),
        }
    }

    #[cold]
    #[inline(never)]
    fn trailing(&self, inner_end: usize) -> Error {
        Error::TrailingBytes {
            offset: self.pos,
            field: self.field,
            count: inner_end - self.pos,
        }
    }

    /// Reads a length prefix and returns the bytes it delimits, without looking inside.
    ///
    /// # Errors
    /// [`Error::SizedTooLong`] or a varint error.
    pub fn sized_bytes(&mut self) -> Result<&'a [u8], Error> {
        let offset = self.pos;
        let len = self.varint()?;
        let remaining = self.remaining();
        match usize::try_from(len) {
            Ok(n) if n <= remaining => self.bytes(n),
            _ => Err(Error::SizedTooLong {
                offset,
                field: self.field,
                len,
                remaining,
            }),
        }
    }

    /// A reader over `[start, start + len)` of the same document, one level deeper; the range
    /// must lie inside bytes this reader has already bounds-checked.
    pub(crate) fn sub_reader(&self, start: usize, len: usize) -> Reader<'a> {
        Reader {
            buf: self.buf,
            pos: start,
            end: start + len,
            depth: self.depth + 1,
            field: self.field,
        }
    }
}

/// Writes a tagged document into a growing `Vec<u8>`.
#[derive(Debug)]
pub struct Writer<'a> {
    out: &'a mut Vec<u8>,
    base: usize,
    depth: u32,
    field: Option<u64>,
}

impl<'a> Writer<'a> {
    /// A writer appending to `out`; offsets in errors count from the current end of `out`.
    pub fn new(out: &'a mut Vec<u8>) -> Self {
        let base = out.len();
        Writer {
            out,
            base,
            depth: 0,
            field: None,
        }
    }

    /// Bytes written so far by this writer.
    #[inline]
    pub fn offset(&self) -> usize {
        self.out.len() - self.base
    }

    /// Id of the field being written, used in errors: `None` in an encode, which names the
    /// innermost field in an error as the error leaves that field.
    #[inline]
    pub fn field(&self) -> Option<u64> {
        self.field
    }

    /// Appends one raw byte.
    #[inline]
    pub fn byte(&mut self, b: u8) {
        self.out.push(b);
    }

    /// Appends raw bytes.
    #[inline]
    pub fn bytes(&mut self, b: &[u8]) {
        self.out.extend_from_slice(b);
    }

    /// Appends a varint.
    #[inline]
    pub fn varint(&mut self, x: u64) {
        write_varint(self.out, x);
    }

    /// Writes what `f` writes, prefixed by its length as a varint.
    ///
    /// The body is written after a one-byte slot for its length; a length that needs more bytes
    /// has the rest rotated in behind that byte (seed 001's rotation, for bodies of 128 bytes or
    /// more only): one pass, no temporary buffer.
    ///
    /// # Errors
    /// [`Error::TooDeep`] past [`MAX_DEPTH`] nested sized values, or whatever `f` returns.
    pub fn sized(&mut self, f: impl FnOnce(&mut Self) -> Result<(), Error>) -> Result<(), Error> {
        if self.depth >= MAX_DEPTH {
            return Err(Error::TooDeep {
                offset: self.offset(),
                field: self.field,
                limit: MAX_DEPTH,
            });
        }
        // The length's first byte goes in front now: most bodies are shorter than 128 bytes, so
        // that byte is the whole length and nothing moves. Longer bodies rotate the rest of
        // their length in behind it.
        let start = self.out.len();
        self.out.push(0);
        self.depth += 1;
        let result = f(self);
        self.depth -= 1;
        result?;
        let body_len = self.out.len() - start - 1;
        match self.out.get_mut(start) {
            // The slot holds the whole length.
            Some(slot) if body_len < 0x80 => *slot = body_len as u8,
            _ => self.rotate_length(start, body_len),
        }
        Ok(())
    }

    /// Puts a length of two bytes or more in front of the body after `start`: its first byte in
    /// the slot at `start`, the rest rotated in behind it.
    #[inline(never)]
    fn rotate_length(&mut self, start: usize, body_len: usize) {
        let (bytes, n) = encode_varint(body_len as u64);
        let first = MAX_VARINT_LEN - n;
        self.out[start] = bytes[first];
        self.out.extend_from_slice(&bytes[first + 1..]);
        self.out[start + 1..].rotate_right(n - 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sized_prefix_is_rotated_in_front() {
        let mut out = vec![0xAA];
        let mut w = Writer::new(&mut out);
        w.sized(|w| {
            w.bytes(&[7; 200]);
            Ok(())
        })
        .unwrap();
        // 200 = 80 48 in reduced-redundancy form.
        assert_eq!(&out[..3], &[0xAA, 0x80, 0x48]);
        assert_eq!(out.len(), 1 + 2 + 200);
        assert!(out[3..].iter().all(|&b| b == 7));
    }

    /// The slot's fast path (bodies under 128 bytes) and the rotation meet at 127 and 128.
    #[test]
    fn sized_prefix_at_the_one_byte_boundary() {
        for (len, prefix) in [(127usize, &[0x7Fu8][..]), (128, &[0x80, 0x00])] {
            let mut out = Vec::new();
            Writer::new(&mut out)
                .sized(|w| {
                    w.bytes(&vec![7; len]);
                    Ok(())
                })
                .unwrap();
            assert_eq!(&out[..prefix.len()], prefix, "body of {len}");
            assert_eq!(out.len(), prefix.len() + len);
        }
    }

    /// The inlined one- and two-byte varint reads stay inside the region: a varint whose second
    /// byte lies past the region's end is refused though the document holds that byte.
    #[test]
    fn a_varint_cut_by_the_region_end_is_refused() {
        let doc = [0x01, 0x80, 0x00];
        let mut r = Reader::new(&doc);
        let err = r.sized(|r| r.varint().map(drop)).unwrap_err();
        assert_eq!(
            err,
            Error::PastEnd {
                offset: 1,
                field: None,
                needed: 2,
                remaining: 1
            }
        );
        for (bytes, value) in [
            (&[0x80u8, 0x00][..], 128u64),
            (&[0xFF, 0x7F], 16511),
            (&[0x80, 0x80, 0x00], 16512),
            (&[0xFF, 0xFF, 0x7F], 16512 + (1 << 21) - 1),
        ] {
            let mut r = Reader::new(bytes);
            assert_eq!(r.varint(), Ok(value));
            assert!(r.is_empty());
            let mut r = Reader::new(&bytes[..bytes.len() - 1]);
            assert!(matches!(r.varint(), Err(Error::PastEnd { .. })));
        }
    }

    #[test]
    fn sized_length_is_checked_before_use() {
        let doc = [0x0A, 1, 2];
        let mut r = Reader::new(&doc);
        let err = r.sized(|r| r.bytes(10).map(|_| ())).unwrap_err();
        assert_eq!(
            err,
            Error::SizedTooLong {
                offset: 0,
                field: None,
                len: 10,
                remaining: 2
            }
        );
    }

    #[test]
    fn unread_bytes_in_a_region_are_an_error() {
        let doc = [0x02, 1, 2];
        let mut r = Reader::new(&doc);
        let err = r.sized(|r| r.byte().map(|_| ())).unwrap_err();
        assert!(matches!(
            err,
            Error::TrailingBytes {
                offset: 2,
                count: 1,
                ..
            }
        ));
    }
}
