//! Fixed-point (Q format) fields of serialize 1.0 (STANDARD.md, "fixed (Q format, ranged)"): the
//! ranged spec [`FixedPoint`], the value [`Fixed`] with its exact decimal text, and the
//! standard's one rounding rule for quantizing into a Q format or narrowing out of one.
//!
//! # Wire
//!
//! A `Qi.f` value is an integer `raw` held in a storage type of exactly `i + f` bits (8, 16, 32,
//! 64 or 128; the sign bit of signed storage counts toward `i`): the real value is
//! `raw / 2^f`. Its bounds are whole units `min..=max`, so the raw bounds are
//! `raw_min = min << f` and `raw_max = max << f`. On the wire, `raw - raw_min` takes
//! `bits_required128(raw_min, raw_max)` bits, split into 32-bit groups from the least significant
//! upward (the last group carries the remainder): exactly [`Stream::int128`](crate::Stream::int128)
//! of `raw` over the raw bounds, which for widths up to 64 bits is [`Stream::int`](crate::Stream::int).
//! `min == max` takes no bits at all, on every storage width. A reader refuses an offset above
//! `raw_max - raw_min`.
//!
//! # Rounding
//!
//! The wire never rounds: `raw` goes across exactly. Where a value is quantized into a Q format
//! ([`quantize_f64`], [`parse_decimal`]) or narrowed out of one ([`narrow`]), ties round **half
//! away from zero**: `(raw + half) >> drop` for `raw >= 0` and `-((-raw + half) >> drop)` for
//! `raw < 0`. The plain arithmetic shift floors, which rounds negative ties up: `-3.126953125`
//! into Q8.8 is raw `-801` by the rule, `-800` by the shift.

use crate::bits::bits_required128;
use std::fmt;

/// A ranged fixed-point field: its Q format (storage width, signedness, fraction bits) and its
/// bounds in whole units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FixedPoint {
    integer_bits: u32,
    fraction_bits: u32,
    signed: bool,
    min: i64,
    max: i64,
    raw_min: i128,
    raw_max: i128,
    width: u32,
}

/// Why [`FixedPoint::new`] refused a format.
enum Invalid {
    NoIntegerBits,
    Storage,
    Empty,
    Capacity,
    Unsigned128,
}

impl FixedPoint {
    /// `Q{integer_bits}.{fraction_bits}` in signed (or unsigned) storage of `integer_bits +
    /// fraction_bits` bits, over `min..=max` whole units.
    ///
    /// # Errors
    /// A description of the problem: no integer bits, a storage width other than 8, 16, 32, 64
    /// or 128, `min > max`, bounds the Q format cannot hold, or unsigned 128-bit storage with raw
    /// values of 2^127 or more: serialize 1.0 sends them (an offset of up to 128 bits), bitlens
    /// holds raw values as `i128` and refuses the declaration (WIRE.md, "Deviations from
    /// serialize 1.0", 3).
    pub fn new(
        integer_bits: u32,
        fraction_bits: u32,
        signed: bool,
        min: i64,
        max: i64,
    ) -> Result<Self, String> {
        let q = format!(
            "{}Q{integer_bits}.{fraction_bits}",
            if signed { "" } else { "unsigned " }
        );
        Self::build(integer_bits, fraction_bits, signed, min, max).map_err(|why| match why {
            Invalid::NoIntegerBits => format!("{q} has no integer bits (use at least 1)"),
            Invalid::Storage => format!(
                "{q} takes {} bits of storage (integer_bits + fraction_bits must be 8, 16, 32, 64 or 128)",
                u64::from(integer_bits) + u64::from(fraction_bits)
            ),
            Invalid::Empty => {
                format!("fixed min {min} is greater than max {max} (swap them, or fix one)")
            }
            Invalid::Capacity => format!(
                "{q} cannot hold the bounds {min}..={max} (give it more integer_bits, or \
                 narrower bounds)"
            ),
            Invalid::Unsigned128 => format!(
                "{q} over {min}..={max} has raw values of 2^127 or more, which bitlens does not \
                 support: its raw values are i128 (WIRE.md, \"Deviations from serialize 1.0\", \
                 3) (keep max below {}, or use fewer fraction bits)",
                1u128 << integer_bits.saturating_sub(1).min(127)
            ),
        })
    }

    /// [`FixedPoint::new`] for constants: `None` where `new` gives an error.
    pub const fn new_const(
        integer_bits: u32,
        fraction_bits: u32,
        signed: bool,
        min: i64,
        max: i64,
    ) -> Option<Self> {
        match Self::build(integer_bits, fraction_bits, signed, min, max) {
            Ok(spec) => Some(spec),
            Err(_) => None,
        }
    }

    const fn build(
        integer_bits: u32,
        fraction_bits: u32,
        signed: bool,
        min: i64,
        max: i64,
    ) -> Result<Self, Invalid> {
        if integer_bits == 0 {
            return Err(Invalid::NoIntegerBits);
        }
        let storage = integer_bits as u64 + fraction_bits as u64;
        if !matches!(storage, 8 | 16 | 32 | 64 | 128) {
            return Err(Invalid::Storage);
        }
        if min > max {
            return Err(Invalid::Empty);
        }
        // The whole units the format holds: [-2^(i-1), 2^(i-1) - 1] signed, [0, 2^i - 1]
        // unsigned. Bounds are i64, so only formats with fewer integer bits can refuse them.
        let fits = if signed {
            integer_bits > 64 || {
                let half = 1i128 << (integer_bits - 1);
                (min as i128) >= -half && (max as i128) < half
            }
        } else {
            min >= 0 && (integer_bits > 63 || (max as i128) < (1i128 << integer_bits))
        };
        if !fits {
            return Err(Invalid::Capacity);
        }
        // In range of the format, `units << f` cannot overflow the storage; only unsigned
        // 128-bit storage can exceed i128.
        let raw_min = (min as i128).checked_shl(fraction_bits);
        let raw_max = (max as i128).checked_shl(fraction_bits);
        let (raw_min, raw_max) = match (raw_min, raw_max) {
            (Some(lo), Some(hi))
                if (lo >> fraction_bits) as i64 == min && (hi >> fraction_bits) as i64 == max =>
            {
                (lo, hi)
            }
            _ => return Err(Invalid::Unsigned128),
        };
        Ok(FixedPoint {
            integer_bits,
            fraction_bits,
            signed,
            min,
            max,
            raw_min,
            raw_max,
            width: bits_required128(raw_min, raw_max),
        })
    }

    /// Integer bits (the sign bit included for signed storage).
    pub const fn integer_bits(&self) -> u32 {
        self.integer_bits
    }
    /// Fraction bits: the raw value is the real value times `2^fraction_bits`.
    pub const fn fraction_bits(&self) -> u32 {
        self.fraction_bits
    }
    /// Whether the storage is signed.
    pub const fn signed(&self) -> bool {
        self.signed
    }
    /// Bits of the storage type: `integer_bits + fraction_bits`.
    pub const fn storage_bits(&self) -> u32 {
        self.integer_bits + self.fraction_bits
    }
    /// Smallest value, in whole units.
    pub const fn min(&self) -> i64 {
        self.min
    }
    /// Largest value, in whole units.
    pub const fn max(&self) -> i64 {
        self.max
    }
    /// Smallest raw value: `min << fraction_bits`.
    pub const fn raw_min(&self) -> i128 {
        self.raw_min
    }
    /// Largest raw value: `max << fraction_bits`.
    pub const fn raw_max(&self) -> i128 {
        self.raw_max
    }
    /// Bits on the wire: `bits_required128(raw_min, raw_max)` (0 when `min == max`).
    pub const fn width(&self) -> u32 {
        self.width
    }

    /// `x` quantized into this format (half away from zero, [`quantize_f64`]), as a [`Fixed`].
    /// The bounds are not checked here: a writer refuses a value outside them.
    ///
    /// # Errors
    /// `x` is not finite, or its raw value does not fit in `i128`.
    pub fn from_f64(&self, x: f64) -> Result<Fixed, String> {
        let raw = quantize_f64(x, self.fraction_bits).ok_or_else(|| {
            format!(
                "{x} has no Q{}.{} value",
                self.integer_bits, self.fraction_bits
            )
        })?;
        Ok(Fixed::new(raw, self.fraction_bits))
    }

    /// The decimal `text` quantized into this format (half away from zero, [`parse_decimal`]).
    ///
    /// # Errors
    /// As [`parse_decimal`].
    pub fn from_decimal(&self, text: &str) -> Result<Fixed, String> {
        Ok(Fixed::new(
            parse_decimal(text, self.fraction_bits)?,
            self.fraction_bits,
        ))
    }
}

/// A fixed-point value: `raw / 2^fraction_bits`, exactly.
///
/// Displays as its exact decimal (`-3.25`; every such value has a finite decimal expansion).
/// Serializes (JSON) as a number when `f64` holds it exactly, so that a JSON reader gets it back
/// exactly, and as the exact decimal in a string otherwise (`"0.0000000000000000000542101086242752217003726400434970855712890625"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fixed {
    /// The stored integer.
    pub raw: i128,
    /// Fraction bits of its Q format (at most 127).
    pub fraction_bits: u32,
}

impl Fixed {
    /// `raw / 2^fraction_bits` (`fraction_bits` is taken modulo 128).
    pub const fn new(raw: i128, fraction_bits: u32) -> Self {
        Fixed {
            raw,
            fraction_bits: fraction_bits % 128,
        }
    }

    /// The nearest `f64` (ties to even).
    pub fn to_f64(self) -> f64 {
        // `raw as f64` rounds once; scaling by a power of two is exact (|raw| >= 1 keeps the
        // quotient above 2^-127, far from subnormals).
        self.raw as f64 * pow2(-(self.fraction_bits as i32))
    }

    /// The value as an `f64` when `f64` holds it exactly: at most 53 significant bits.
    pub fn exact_f64(self) -> Option<f64> {
        let m = self.raw.unsigned_abs();
        if m == 0 {
            return Some(0.0);
        }
        let odd = m >> m.trailing_zeros();
        (odd >> 53 == 0).then(|| self.to_f64())
    }

    /// The same value with `fraction_bits` fraction bits: exact when widening (`None` if it
    /// overflows `i128`), rounded half away from zero when narrowing ([`narrow`]).
    pub fn rescale(self, fraction_bits: u32) -> Option<Fixed> {
        let to = fraction_bits;
        if to >= 128 {
            return None;
        }
        let raw = if to >= self.fraction_bits {
            let up = to - self.fraction_bits;
            let r = self.raw.checked_shl(up)?;
            if r >> up != self.raw {
                return None;
            }
            r
        } else {
            narrow(self.raw, self.fraction_bits - to)
        };
        Some(Fixed::new(raw, to))
    }
}

/// `2^e` as an `f64`, for `e` in -1022..=1023.
fn pow2(e: i32) -> f64 {
    f64::from_bits(((1023 + e) as u64) << 52)
}

/// `x` quantized into a Q format with `fraction_bits` (0..=127) fraction bits: `x · 2^f`
/// rounded half away from zero (the standard's rounding rule). The scaling is exact, so this is
/// the rule applied to the exact value of `x`.
///
/// `None` when `x` is NaN or infinite, or its raw value does not fit in `i128`.
pub fn quantize_f64(x: f64, fraction_bits: u32) -> Option<i128> {
    if fraction_bits >= 128 || !x.is_finite() {
        return None;
    }
    // f64::round is half away from zero.
    let scaled = (x * pow2(fraction_bits as i32)).round();
    // i128's range in f64: [-2^127, 2^127).
    let limit = pow2(127);
    (scaled >= -limit && scaled < limit).then_some(scaled as i128)
}

/// `raw` with `drop` fraction bits removed, rounded half away from zero: `(raw + half) >> drop`
/// for `raw >= 0`, `-((-raw + half) >> drop)` for `raw < 0`, `half = 1 << (drop - 1)` (the
/// standard's rule; a plain shift would floor). `drop` of 0 gives `raw`; 128 or more gives 0.
pub const fn narrow(raw: i128, drop: u32) -> i128 {
    if drop == 0 {
        return raw;
    }
    if drop >= 128 {
        return 0;
    }
    let half = 1u128 << (drop - 1);
    // |raw| <= 2^127 and half <= 2^126: the sum fits u128, the quotient fits i128.
    let magnitude = ((raw.unsigned_abs() + half) >> drop) as i128;
    if raw < 0 { -magnitude } else { magnitude }
}

/// The exact decimal text of `raw / 2^fraction_bits`: no exponent, no trailing zeros after the
/// point, no point for whole numbers (`-3.25`, `1234`, `0.5`).
pub fn to_decimal(raw: i128, fraction_bits: u32) -> String {
    let f = fraction_bits % 128;
    let m = raw.unsigned_abs();
    let mut out = String::new();
    if raw < 0 {
        out.push('-');
    }
    let (int, mut frac) = if f == 0 {
        (m, 0)
    } else {
        (m >> f, m & ((1u128 << f) - 1))
    };
    out.push_str(&int.to_string());
    if frac != 0 {
        out.push('.');
        // Each step multiplies the fraction by 10 (in 131 bits, as a carry over 128) and
        // takes the digit above bit f; every step removes a factor of two, so it ends within
        // f digits.
        while frac != 0 {
            let (lo, hi) = mul10(frac);
            let digit = (lo >> f) | (hi << (128 - f));
            out.push(char::from(b'0' + digit as u8));
            frac = lo & ((1u128 << f) - 1);
        }
    }
    out
}

/// `x · 10` as (low 128 bits, the bits above them), for `x < 2^127`.
fn mul10(x: u128) -> (u128, u128) {
    let (a, b) = (x >> 64, x & u128::from(u64::MAX));
    let (a10, b10) = (a * 10, b * 10);
    let (lo, carry) = (a10 << 64).overflowing_add(b10);
    (lo, (a10 >> 64) + u128::from(carry))
}

/// The longest decimal text [`parse_decimal`] reads: far more digits than any Q format's exact
/// value has, and a bound on the work a hostile input can ask for.
pub const MAX_DECIMAL_LEN: usize = 512;

/// Reads a decimal number (`-3.25`, `1e-3`, `+12`, `0.000...`) into a Q format with
/// `fraction_bits` fraction bits, rounding its exact value half away from zero (the standard's
/// rule). Every digit counts: `-3.126953125` is a tie in Q8.8 and gives raw `-801`.
///
/// # Errors
/// Text that is not a decimal number, longer than [`MAX_DECIMAL_LEN`], or whose raw value does not
/// fit in `i128`.
pub fn parse_decimal(text: &str, fraction_bits: u32) -> Result<i128, String> {
    let bad = || format!("{text:?} is not a decimal number");
    if text.len() > MAX_DECIMAL_LEN {
        return Err(format!(
            "decimal of {} characters (at most {MAX_DECIMAL_LEN})",
            text.len()
        ));
    }
    let f = fraction_bits;
    if f >= 128 {
        return Err(format!("{f} fraction bits (at most 127)"));
    }
    let (negative, rest) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let (mantissa, exponent) = match rest.find(['e', 'E']) {
        Some(i) => (&rest[..i], rest[i + 1..].parse::<i64>().map_err(|_| bad())?),
        None => (rest, 0),
    };
    let (int_digits, frac_digits) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int_digits.is_empty() && frac_digits.is_empty()
        || !int_digits.bytes().all(|b| b.is_ascii_digit())
        || !frac_digits.bytes().all(|b| b.is_ascii_digit())
    {
        return Err(bad());
    }
    // All digits, and where the point goes: value = digits · 10^(exponent - len(frac)).
    let mut digits: Vec<u8> = int_digits
        .bytes()
        .chain(frac_digits.bytes())
        .map(|b| b - b'0')
        .collect();
    let leading = digits.iter().take_while(|&&d| d == 0).count();
    digits.drain(..leading);
    if digits.is_empty() {
        return Ok(0);
    }
    let point = exponent.saturating_sub(frac_digits.len() as i64);
    // Digits of the whole part: len + point. The value is below 10^(len + point).
    let whole_len = digits.len() as i64 + point;
    if whole_len > 40 {
        return Err(format!("{text} is too large for a Q format"));
    }
    if whole_len < -40 {
        // Below 10^-40 < 2^-128: less than half of the smallest step, rounds to 0.
        return Ok(0);
    }
    let (whole, frac): (&[u8], Vec<u8>) = if whole_len <= 0 {
        let mut frac = vec![0u8; (-whole_len) as usize];
        frac.extend_from_slice(&digits);
        (&[], frac)
    } else if whole_len as usize >= digits.len() {
        // No fraction: pad the whole part with zeros below.
        digits.resize(whole_len as usize, 0);
        (&digits[..], Vec::new())
    } else {
        let (w, fr) = digits.split_at(whole_len as usize);
        (w, fr.to_vec())
    };
    let too_large = || format!("{text} is too large for Q with {f} fraction bits");
    let mut int: u128 = 0;
    for &d in whole {
        int = int
            .checked_mul(10)
            .and_then(|x| x.checked_add(u128::from(d)))
            .ok_or_else(too_large)?;
    }
    // The fraction's binary digits by doubling its decimal digits: the carry out of the top
    // digit is the next bit. After f bits, one more doubling says whether the rest is at least
    // one half (round up the magnitude: ties go away from zero).
    let mut frac = frac;
    let mut double = || {
        let mut carry = 0u8;
        for d in frac.iter_mut().rev() {
            let x = *d * 2 + carry;
            *d = x % 10;
            carry = x / 10;
        }
        carry
    };
    let mut bits: u128 = 0;
    for _ in 0..f {
        bits = bits << 1 | u128::from(double());
    }
    let round_up = double() == 1;
    let shifted = int
        .checked_shl(f)
        .filter(|s| s >> f == int)
        .ok_or_else(too_large)?;
    let magnitude = (shifted | bits)
        .checked_add(u128::from(round_up))
        .ok_or_else(too_large)?;
    if negative {
        if magnitude > 1u128 << 127 {
            return Err(too_large());
        }
        Ok((magnitude as i128).wrapping_neg())
    } else {
        i128::try_from(magnitude).map_err(|_| too_large())
    }
}

impl fmt::Display for Fixed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&to_decimal(self.raw, self.fraction_bits))
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for Fixed {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.exact_f64() {
            Some(x) => s.serialize_f64(x),
            None => s.collect_str(self),
        }
    }
}

/// Integer types that can hold a fixed-point value for [`Stream::fixed_as`](crate::Stream::fixed_as): every
/// primitive integer but `u128` (bitlens holds raw values as `i128`).
pub trait FixedStorage: Copy {
    /// Bits of the type: the storage width of the Q format.
    const BITS: u32;
    /// Whether the type is signed.
    const SIGNED: bool;
    /// The value as a raw `i128`.
    fn to_raw(self) -> i128;
    /// The value from a raw `i128` already checked to lie within a range of this type.
    fn from_raw(raw: i128) -> Self;
}

macro_rules! fixed_storage {
    ($($t:ty),*) => {$(
        impl FixedStorage for $t {
            const BITS: u32 = <$t>::BITS;
            const SIGNED: bool = <$t>::MIN != 0;
            #[inline(always)]
            fn to_raw(self) -> i128 { self as i128 }
            #[inline(always)]
            fn from_raw(raw: i128) -> Self { raw as $t }
        }
    )*};
}
fixed_storage!(i8, i16, i32, i64, i128, u8, u16, u32, u64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_ties_round_away_from_zero() {
        // -3.126953125 = -800.5 / 256: the rule gives -801, an arithmetic shift -800.
        assert_eq!(quantize_f64(-3.126953125, 8), Some(-801));
        assert_eq!(quantize_f64(3.126953125, 8), Some(801));
        assert_eq!(parse_decimal("-3.126953125", 8), Ok(-801));
        assert_eq!(parse_decimal("3.126953125", 8), Ok(801));
        assert_eq!(narrow(-1601, 1), -801);
        assert_eq!(narrow(1601, 1), 801);
        // Not ties: nearest.
        assert_eq!(narrow(-1602, 2), -401);
        assert_eq!(narrow(-1603, 2), -401);
        assert_eq!(narrow(-1605, 2), -401);
        assert_eq!(narrow(-1606, 2), -402);
        assert_eq!(narrow(i128::MIN, 1), -(1 << 126));
        assert_eq!(narrow(i128::MAX, 127), 1);
        assert_eq!(narrow(-5, 0), -5);
    }

    #[test]
    fn narrow_matches_the_rule_on_every_small_value() {
        for drop in 1..6u32 {
            let step = 1i128 << drop;
            for raw in -200i128..200 {
                // The exact quotient's nearest integer, ties away from zero, by integers.
                let q = raw.div_euclid(step);
                let r = raw.rem_euclid(step);
                let want = if 2 * r > step || (2 * r == step && raw > 0) {
                    q + 1
                } else {
                    q
                };
                assert_eq!(narrow(raw, drop), want, "{raw} >> {drop}");
            }
        }
    }

    #[test]
    fn decimals_are_exact_both_ways() {
        for (raw, f, text) in [
            (-832i128, 8, "-3.25"),
            (1234 * 65536 + 32768, 16, "1234.5"),
            (0, 16, "0"),
            (5, 0, "5"),
            (
                1,
                64,
                "0.0000000000000000000542101086242752217003726400434970855712890625",
            ),
            (i128::MIN, 64, "-9223372036854775808"),
            (i128::MAX, 0, "170141183460469231731687303715884105727"),
            (
                1,
                127,
                "0.0000000000000000000000000000000000000058774717541114375398436826861112283890933277838604376075437585313920862972736358642578125",
            ),
            (
                (0x0123456789ABCDEFi128 << 64) + 0x0FEDCBA987654321,
                64,
                "81985529216486895.0622222222222222222224631560383301120964461006224155426025390625",
            ),
        ] {
            let fixed = Fixed::new(raw, f);
            let shown = fixed.to_string();
            assert_eq!(shown, text, "{raw} Q.{f}");
            assert_eq!(parse_decimal(&shown, f), Ok(raw), "{shown}");
        }
        assert_eq!(parse_decimal("1e-3", 16), Ok(66)); // 65.536 -> 66
        assert_eq!(parse_decimal("-0.5e1", 0), Ok(-5));
        assert_eq!(parse_decimal("+.5", 0), Ok(1));
        assert_eq!(parse_decimal("-.5", 0), Ok(-1));
        assert_eq!(parse_decimal("0.49999999999999999999999", 0), Ok(0));
        assert_eq!(parse_decimal("1e-400", 8), Ok(0));
        assert!(parse_decimal("1e400", 8).is_err());
        assert!(parse_decimal("170141183460469231731687303715884105728", 0).is_err());
        assert_eq!(
            parse_decimal("-170141183460469231731687303715884105728", 0),
            Ok(i128::MIN)
        );
        for bad in ["", "-", ".", "1.2.3", "abc", "1e", "0x10", "nan", "1 "] {
            assert!(parse_decimal(bad, 8).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn exact_f64_only_when_f64_holds_the_value() {
        assert_eq!(Fixed::new(-832, 8).exact_f64(), Some(-3.25));
        assert_eq!(
            Fixed::new((1 << 53) - 1, 0).exact_f64(),
            Some(9007199254740991.0)
        );
        assert_eq!(Fixed::new((1 << 53) + 1, 0).exact_f64(), None);
        assert_eq!(Fixed::new(1 << 100, 64).exact_f64(), Some(68719476736.0));
        assert_eq!(
            serde_json::to_string(&Fixed::new(-832, 8)).unwrap(),
            "-3.25"
        );
        assert_eq!(
            serde_json::to_string(&Fixed::new((1 << 53) + 1, 0)).unwrap(),
            "\"9007199254740993\""
        );
    }

    #[test]
    fn specs_check_their_format_and_bounds() {
        let q = FixedPoint::new(8, 8, true, -100, 100).unwrap();
        assert_eq!((q.raw_min(), q.raw_max(), q.width()), (-25600, 25600, 16));
        let wide = FixedPoint::new(112, 16, true, -(1 << 57), 1 << 57).unwrap();
        assert_eq!(wide.width(), 75);
        let full = FixedPoint::new(64, 64, true, i64::MIN, i64::MAX).unwrap();
        assert_eq!(full.width(), 128);
        assert_eq!(FixedPoint::new(64, 64, true, 7, 7).unwrap().width(), 0);
        assert_eq!(
            FixedPoint::new(16, 16, false, 0, 30000).unwrap().width(),
            31
        );
        assert!(FixedPoint::new(16, 8, true, 0, 1).is_err()); // 24-bit storage
        assert!(FixedPoint::new(0, 16, true, 0, 0).is_err());
        assert!(FixedPoint::new(16, 16, true, -40000, 40000).is_err());
        assert!(FixedPoint::new(16, 16, true, -32768, 32767).is_ok());
        assert!(FixedPoint::new(16, 16, false, -1, 1).is_err());
        assert!(FixedPoint::new(16, 16, false, 0, 65535).is_ok());
        assert!(FixedPoint::new(16, 16, true, 200, 100).is_err());
        // Every refusal says what to change (a schema error must: the schema_load fuzz target
        // checks it, and it reaches these through `type = "fixed"`).
        for (i, f, signed, min, max) in [
            (16, 8, true, 0, 1),
            (0, 16, true, 0, 0),
            (16, 16, true, -40000, 40000),
            (16, 16, true, 200, 100),
            (1, 127, false, 0, 1),
        ] {
            let e = FixedPoint::new(i, f, signed, min, max).unwrap_err();
            assert!(e.ends_with(')'), "{e}");
        }
        assert_eq!(
            FixedPoint::new(4, 4, true, -102, 55).unwrap_err(),
            "Q4.4 cannot hold the bounds -102..=55 (give it more integer_bits, or narrower bounds)"
        );
        // Raw 2^127 (serialize.rs writes 1.0 as fifteen 00 then 80): a deviation (issue 29.14).
        let e = FixedPoint::new(1, 127, false, 0, 1).unwrap_err();
        assert_eq!(
            e,
            "unsigned Q1.127 over 0..=1 has raw values of 2^127 or more, which bitlens does not \
             support: its raw values are i128 (WIRE.md, \"Deviations from serialize 1.0\", 3) \
             (keep max below 1, or use fewer fraction bits)"
        );
        let e = FixedPoint::new(63, 65, false, 0, 1 << 62).unwrap_err();
        assert!(e.contains("(keep max below 4611686018427387904,"), "{e}");
        assert!(FixedPoint::new(63, 65, false, 0, (1 << 62) - 1).is_ok());
        assert!(FixedPoint::new(64, 64, false, 0, i64::MAX).is_ok());
        assert!(FixedPoint::new(2, 126, false, 0, 1).is_ok());
        assert!(FixedPoint::new(1, 127, false, 0, 0).is_ok());
        assert_eq!(FixedPoint::new_const(8, 8, true, -100, 100), Some(q));
    }

    #[test]
    fn f64_quantizes_exactly() {
        assert_eq!(quantize_f64(0.1, 8), Some(26)); // 25.600000000000001
        assert_eq!(quantize_f64(-0.5, 0), Some(-1));
        assert_eq!(quantize_f64(0.5, 0), Some(1));
        assert_eq!(quantize_f64(-0.0, 16), Some(0));
        assert_eq!(quantize_f64(f64::NAN, 8), None);
        assert_eq!(quantize_f64(1e300, 8), None);
        assert_eq!(quantize_f64(-1.0, 127), Some(i128::MIN));
        assert_eq!(quantize_f64(1.0, 127), None);
        let x = 0.1f64;
        let raw = quantize_f64(x, 64).unwrap();
        assert_eq!(Fixed::new(raw, 64).exact_f64(), Some(x));
        assert_eq!(Fixed::new(raw, 64).rescale(8), Some(Fixed::new(26, 8)));
        assert_eq!(Fixed::new(-3, 0).rescale(4), Some(Fixed::new(-48, 4)));
        assert_eq!(Fixed::new(i128::MAX, 0).rescale(1), None);
    }
}
