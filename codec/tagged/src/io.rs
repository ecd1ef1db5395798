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
    pub fn offset(&self) -> usize {
        self.pos
    }

    /// Bytes left in the current region.
    pub fn remaining(&self) -> usize {
        self.end - self.pos
    }

    /// Whether the current region is used up.
    pub fn is_empty(&self) -> bool {
        self.pos >= self.end
    }

    /// Number of sized regions entered and not yet left.
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// Id of the field being read, used in errors.
    pub fn field(&self) -> Option<u64> {
        self.field
    }

    pub(crate) fn set_field(&mut self, field: Option<u64>) -> Option<u64> {
        core::mem::replace(&mut self.field, field)
    }

    /// Reads one raw byte.
    ///
    /// # Errors
    /// [`Error::PastEnd`] when the region is used up.
    pub fn byte(&mut self) -> Result<u8, Error> {
        Ok(self.bytes(1)?[0])
    }

    /// Reads `n` raw bytes, borrowed from the document.
    ///
    /// # Errors
    /// [`Error::PastEnd`] when fewer than `n` bytes remain (nothing is consumed then).
    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8], Error> {
        if n > self.remaining() {
            return Err(Error::PastEnd {
                offset: self.pos,
                field: self.field,
                needed: n,
                remaining: self.remaining(),
            });
        }
        let out = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    /// Reads one varint.
    ///
    /// # Errors
    /// [`Error::PastEnd`], [`Error::VarintTooLong`] or [`Error::VarintOverflow`].
    #[inline]
    pub fn varint(&mut self) -> Result<u64, Error> {
        // One byte (most tags, lengths and small values), inlined.
        if self.pos < self.end
            && let Some(&b) = self.buf.get(self.pos)
            && b < 0x80
        {
            self.pos += 1;
            return Ok(u64::from(b));
        }
        self.long_varint()
    }

    fn long_varint(&mut self) -> Result<u64, Error> {
        let (offset, field) = (self.pos, self.field);
        match read_varint(&self.buf[self.pos..self.end]) {
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
            return Err(Error::TooDeep {
                offset,
                field: self.field,
                limit: MAX_DEPTH,
            });
        }
        let len = self.varint()?;
        let remaining = self.remaining();
        let len = match usize::try_from(len) {
            Ok(len) if len <= remaining => len,
            _ => {
                return Err(Error::SizedTooLong {
                    offset,
                    field: self.field,
                    len,
                    remaining,
                });
            }
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
            return Err(Error::TrailingBytes {
                offset: self.pos,
                field: self.field,
                count: inner_end - self.pos,
            });
        }
        Ok(value)
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
    pub fn offset(&self) -> usize {
        self.out.len() - self.base
    }

    /// Id of the field being written, used in errors.
    pub fn field(&self) -> Option<u64> {
        self.field
    }

    pub(crate) fn set_field(&mut self, field: Option<u64>) -> Option<u64> {
        core::mem::replace(&mut self.field, field)
    }

    /// Appends one raw byte.
    pub fn byte(&mut self, b: u8) {
        self.out.push(b);
    }

    /// Appends raw bytes.
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
        let (bytes, n) = encode_varint(body_len as u64);
        let first = MAX_VARINT_LEN - n;
        self.out[start] = bytes[first];
        if n > 1 {
            self.out.extend_from_slice(&bytes[first + 1..]);
            self.out[start + 1..].rotate_right(n - 1);
        }
        Ok(())
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
