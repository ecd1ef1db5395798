//! Big-endian varints with reduced redundancy, and zig-zag for signed values (seed 001).
//!
//! ```text
//!  value      bytes            rule
//!  0          00               7 bits per byte, most significant group first;
//!  127        7F               the high bit of every byte but the last is set;
//!  128        80 00            each continuation adds one, so no value has two encodings
//!  16511      FF 7F            (the largest two-byte value; plain varints stop at 16383)
//!  16512      80 80 00
//!  u64::MAX   10 bytes         longest possible encoding
//! ```

/// The longest varint a u64 needs, in bytes.
pub const MAX_VARINT_LEN: usize = 10;

/// `x` as a big-endian reduced-redundancy varint: the encoding is the last `n` bytes of the
/// returned `(bytes, n)`.
///
/// The groups are produced least significant first, from the end of the array backwards, so
/// they come out in wire order with no reversal and no allocation.
pub fn encode_varint(mut x: u64) -> ([u8; MAX_VARINT_LEN], usize) {
    let mut bytes = [0u8; MAX_VARINT_LEN];
    let mut i = MAX_VARINT_LEN - 1;
    bytes[i] = (x & 0x7F) as u8;
    x >>= 7;
    while x != 0 {
        // Reduced redundancy: a continuation byte stands for one more than its bits say.
        x -= 1;
        i -= 1;
        // Every byte before the last one written (the least significant) continues.
        bytes[i] = 0x80 | (x & 0x7F) as u8;
        x >>= 7;
    }
    (bytes, MAX_VARINT_LEN - i)
}

/// Appends `x` as a big-endian reduced-redundancy varint ([`encode_varint`]).
#[inline]
pub fn write_varint(out: &mut Vec<u8>, x: u64) {
    if x < 0x80 {
        // One byte, the value itself: most tags, lengths and small values, inlined.
        out.push(x as u8);
    } else if x < TWO_BYTE_END {
        // Two bytes (128..=16511), inlined: one continuation byte standing for one more than
        // its bits, then the low group.
        let y = x - 0x80;
        out.extend_from_slice(&[0x80 | (y >> 7) as u8, (y & 0x7F) as u8]);
    } else {
        write_long_varint(out, x);
    }
}

/// The first value that needs three bytes: 128 one-byte values and 2^14 two-byte ones before it.
const TWO_BYTE_END: u64 = 0x80 + (1 << 14);

fn write_long_varint(out: &mut Vec<u8>, x: u64) {
    let (bytes, n) = encode_varint(x);
    out.extend_from_slice(&bytes[MAX_VARINT_LEN - n..]);
}

/// Number of bytes [`write_varint`] uses for `x`.
pub const fn varint_len(mut x: u64) -> usize {
    let mut len = 1;
    while x >= 0x80 {
        x = (x >> 7) - 1;
        len += 1;
    }
    len
}

/// Outcome of decoding a varint from the front of a slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarintRead {
    /// The value and the number of bytes it took.
    Ok(u64, usize),
    /// The slice ended inside the varint; the field says how many bytes were available.
    PastEnd(usize),
    /// A tenth byte still had its continuation bit set.
    TooLong,
    /// The value does not fit a u64.
    Overflow,
}

/// Decodes one varint from the front of `bytes`, rejecting over-long and overflowing encodings.
#[inline]
pub fn read_varint(bytes: &[u8]) -> VarintRead {
    // One and two bytes (every value below 16512), inlined; the rest in a loop.
    match *bytes {
        [b, ..] if b < 0x80 => VarintRead::Ok(u64::from(b), 1),
        [b0, b1, ..] if b1 < 0x80 => {
            VarintRead::Ok(0x80 + (u64::from(b0 & 0x7F) << 7 | u64::from(b1)), 2)
        }
        _ => read_long_varint(bytes),
    }
}

fn read_long_varint(bytes: &[u8]) -> VarintRead {
    let mut x: u64 = 0;
    for i in 0..MAX_VARINT_LEN {
        let Some(&byte) = bytes.get(i) else {
            return VarintRead::PastEnd(bytes.len());
        };
        // The low 7 bits of `x` are zero here: the shift below made room for them.
        x |= u64::from(byte & 0x7F);
        if byte & 0x80 == 0 {
            return VarintRead::Ok(x, i + 1);
        }
        if i == MAX_VARINT_LEN - 1 {
            return VarintRead::TooLong;
        }
        // Reduced redundancy: add one per continuation, then make room for the next group.
        match x.checked_add(1) {
            Some(next) if next <= u64::MAX >> 7 => x = next << 7,
            _ => return VarintRead::Overflow,
        }
    }
    VarintRead::TooLong
}

/// Maps a signed value to an unsigned one so that small magnitudes stay small: 0, -1, 1, -2 → 0, 1, 2, 3.
pub fn zigzag(x: i64) -> u64 {
    ((x << 1) ^ (x >> 63)) as u64
}

/// Inverse of [`zigzag`].
pub fn unzigzag(y: u64) -> i64 {
    ((y >> 1) as i64) ^ -((y & 1) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(x: u64) -> Vec<u8> {
        let mut v = Vec::new();
        write_varint(&mut v, x);
        v
    }

    /// The table of seed 001, "Big-endian varints with reduced redundancy".
    const TABLE: &[(u64, &[u8])] = &[
        (0, &[0x00]),
        (1, &[0x01]),
        (127, &[0x7F]),
        (128, &[0x80, 0x00]),
        (129, &[0x80, 0x01]),
        (16511, &[0xFF, 0x7F]),
        (16512, &[0x80, 0x80, 0x00]),
        (16513, &[0x80, 0x80, 0x01]),
    ];

    #[test]
    fn seed_table() {
        for &(value, bytes) in TABLE {
            assert_eq!(enc(value), bytes, "encoding {value}");
            assert_eq!(read_varint(bytes), VarintRead::Ok(value, bytes.len()));
            assert_eq!(varint_len(value), bytes.len());
        }
    }

    #[test]
    fn boundaries_and_extremes() {
        for x in [u64::MAX, u64::MAX - 1, 1 << 63, (1 << 63) - 1, 16383, 16384] {
            let b = enc(x);
            assert_eq!(read_varint(&b), VarintRead::Ok(x, b.len()));
            assert_eq!(varint_len(x), b.len());
        }
        assert_eq!(enc(u64::MAX).len(), MAX_VARINT_LEN);
    }

    #[test]
    fn every_length_boundary_round_trips() {
        // The largest value of each length, its successor, and a spread of others.
        let mut values = vec![0u64, 1, 127, 128];
        let mut top = 127u64;
        while let Some(next) = top.checked_add(1).and_then(|t| t.checked_mul(128)) {
            top = next + 127;
            values.extend([top - 1, top, top + 1]);
        }
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..10_000 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            values.push(x >> (x % 64));
        }
        for v in values {
            let b = enc(v);
            assert_eq!(read_varint(&b), VarintRead::Ok(v, b.len()), "{v}");
            assert_eq!(varint_len(v), b.len(), "{v}");
            let (bytes, n) = encode_varint(v);
            assert_eq!(&bytes[MAX_VARINT_LEN - n..], &b[..], "{v}");
        }
    }

    #[test]
    fn rejects_long_overflowing_and_truncated() {
        // Ten continuation bytes: longer than any u64.
        assert_eq!(read_varint(&[0x80; 11]), VarintRead::TooLong);
        // Ten bytes, but the value exceeds u64::MAX.
        let mut big = vec![0xFF; 9];
        big.push(0x7F);
        assert_eq!(read_varint(&big), VarintRead::Overflow);
        // One past u64::MAX in ten bytes.
        let mut max = enc(u64::MAX);
        assert_eq!(max.len(), 10);
        *max.last_mut().unwrap() += 1;
        assert!(!matches!(read_varint(&max), VarintRead::Ok(..)));
        assert_eq!(read_varint(&[]), VarintRead::PastEnd(0));
        assert_eq!(read_varint(&[0x80, 0x80]), VarintRead::PastEnd(2));
    }

    #[test]
    fn every_prefix_of_a_varint_is_rejected() {
        let b = enc(u64::MAX);
        for n in 0..b.len() {
            assert_eq!(read_varint(&b[..n]), VarintRead::PastEnd(n));
        }
    }

    #[test]
    fn zigzag_table() {
        for (s, u) in [
            (0i64, 0u64),
            (-1, 1),
            (1, 2),
            (-2, 3),
            (i64::MAX, u64::MAX - 1),
            (i64::MIN, u64::MAX),
        ] {
            assert_eq!(zigzag(s), u);
            assert_eq!(unzigzag(u), s);
        }
    }
}
