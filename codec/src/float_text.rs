//! How `f32` and `f64` values that JSON cannot spell as numbers are written: as strings, in
//! every output (`decode --json`, `decode-bytes --json`, the trace's serde form, schema values,
//! the TUI), and read back by `encode` bit for bit.
//!
//! | value | text |
//! |---|---|
//! | +infinity | `"inf"` |
//! | -infinity | `"-inf"` |
//! | the default quiet NaN (`f32` `0x7fc00000`, `f64` `0x7ff8000000000000`) | `"nan"` |
//! | any other NaN (sign, signalling bit, payload) | `"nan:0x"` and its bit pattern in hex: `"nan:0xffc00001"` (8 digits for `f32`, 16 for `f64`) |
//!
//! Finite values, `-0.0` included, stay JSON numbers (`-0.0` reads back as `-0.0`).

use std::borrow::Cow;

/// The text of a non-finite `f32` (see the module table), `None` for a finite one.
pub fn f32_text(x: f32) -> Option<Cow<'static, str>> {
    if x.is_finite() {
        return None;
    }
    Some(if x.is_nan() {
        if x.to_bits() == f32::NAN.to_bits() {
            Cow::Borrowed("nan")
        } else {
            Cow::Owned(format!("nan:{:#010x}", x.to_bits()))
        }
    } else if x > 0.0 {
        Cow::Borrowed("inf")
    } else {
        Cow::Borrowed("-inf")
    })
}

/// The text of a non-finite `f64` (see the module table), `None` for a finite one.
pub fn f64_text(x: f64) -> Option<Cow<'static, str>> {
    if x.is_finite() {
        return None;
    }
    Some(if x.is_nan() {
        if x.to_bits() == f64::NAN.to_bits() {
            Cow::Borrowed("nan")
        } else {
            Cow::Owned(format!("nan:{:#018x}", x.to_bits()))
        }
    } else if x > 0.0 {
        Cow::Borrowed("inf")
    } else {
        Cow::Borrowed("-inf")
    })
}

/// Reads an `f32` from a string: a module-table spelling (`"nan:0x..."` must be a NaN bit
/// pattern) or a decimal number, to the nearest `f32` of the decimal. `None` for anything else.
pub fn parse_f32(s: &str) -> Option<f32> {
    match s.strip_prefix("nan:0x") {
        Some(hex) if hex.len() <= 8 => {
            let x = f32::from_bits(u32::from_str_radix(hex, 16).ok()?);
            x.is_nan().then_some(x)
        }
        Some(_) => None,
        None => s.parse().ok(),
    }
}

/// Reads an `f64` from a string, as [`parse_f32`].
pub fn parse_f64(s: &str) -> Option<f64> {
    match s.strip_prefix("nan:0x") {
        Some(hex) if hex.len() <= 16 => {
            let x = f64::from_bits(u64::from_str_radix(hex, 16).ok()?);
            x.is_nan().then_some(x)
        }
        Some(_) => None,
        None => s.parse().ok(),
    }
}

#[cfg(feature = "serde")]
/// Serializes an `f32` as a JSON number, or as its module-table string when it is not finite.
///
/// # Errors
/// Whatever the serializer reports.
pub fn serialize_f32<S: serde::Serializer>(x: &f32, s: S) -> Result<S::Ok, S::Error> {
    match f32_text(*x) {
        Some(text) => s.serialize_str(&text),
        None => s.serialize_f32(*x),
    }
}

#[cfg(feature = "serde")]
/// Serializes an `f64` as a JSON number, or as its module-table string when it is not finite.
///
/// # Errors
/// Whatever the serializer reports.
pub fn serialize_f64<S: serde::Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
    match f64_text(*x) {
        Some(text) => s.serialize_str(&text),
        None => s.serialize_f64(*x),
    }
}

#[cfg(feature = "serde")]
/// Serializes `f32`s as a JSON array, each as [`serialize_f32`] does.
///
/// # Errors
/// Whatever the serializer reports.
pub fn serialize_f32s<S: serde::Serializer>(xs: &[f32], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    let mut seq = s.serialize_seq(Some(xs.len()))?;
    for x in xs {
        seq.serialize_element(&F32(*x))?;
    }
    seq.end()
}

#[cfg(feature = "serde")]
/// An `f32` that serializes as [`serialize_f32`] does.
#[derive(Debug, Clone, Copy)]
pub struct F32(pub f32);

#[cfg(feature = "serde")]
impl serde::Serialize for F32 {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serialize_f32(&self.0, s)
    }
}

#[cfg(feature = "serde")]
/// An `f64` that serializes as [`serialize_f64`] does.
#[derive(Debug, Clone, Copy)]
pub struct F64(pub f64);

#[cfg(feature = "serde")]
impl serde::Serialize for F64 {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serialize_f64(&self.0, s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_non_finite_value_round_trips_through_its_text() {
        let f32s = [
            f32::NAN,
            -f32::NAN,
            f32::from_bits(0x7f800001), // signalling, payload 1
            f32::from_bits(0xffc00001),
            f32::from_bits(0x7fffffff),
            f32::INFINITY,
            f32::NEG_INFINITY,
        ];
        for x in f32s {
            let text = f32_text(x).unwrap();
            assert_eq!(
                parse_f32(&text).map(f32::to_bits),
                Some(x.to_bits()),
                "{text}"
            );
        }
        assert_eq!(f32_text(f32::NAN).as_deref(), Some("nan"));
        assert_eq!(f32_text(-f32::NAN).as_deref(), Some("nan:0xffc00000"));
        assert_eq!(f32_text(f32::NEG_INFINITY).as_deref(), Some("-inf"));
        assert_eq!(f32_text(-0.0), None);
        let f64s = [
            f64::NAN,
            -f64::NAN,
            f64::from_bits(0x7ff0000000000001),
            f64::from_bits(0xfff8dead0000beef),
            f64::INFINITY,
            f64::NEG_INFINITY,
        ];
        for x in f64s {
            let text = f64_text(x).unwrap();
            assert_eq!(
                parse_f64(&text).map(f64::to_bits),
                Some(x.to_bits()),
                "{text}"
            );
        }
        assert_eq!(
            f64_text(f64::from_bits(0x7ff0000000000001)).as_deref(),
            Some("nan:0x7ff0000000000001")
        );
        // A bit pattern that is not a NaN is refused, as is a pattern too wide.
        assert_eq!(parse_f32("nan:0x3f800000"), None);
        assert_eq!(parse_f32("nan:0x7fc000000"), None);
        assert_eq!(parse_f64("nan:0x0"), None);
        assert_eq!(parse_f32("1.5"), Some(1.5));
        assert_eq!(parse_f32("x"), None);
    }

    #[cfg(feature = "serde")]
    #[test]
    fn json_spells_them_as_strings() {
        let v = [F32(f32::NAN), F32(f32::INFINITY), F32(-0.0), F32(1.5)];
        assert_eq!(
            serde_json::to_string(&v).unwrap(),
            r#"["nan","inf",-0.0,1.5]"#
        );
        assert_eq!(
            serde_json::to_string(&F64(f64::NEG_INFINITY)).unwrap(),
            r#""-inf""#
        );
    }
}
