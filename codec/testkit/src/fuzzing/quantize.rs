//! `compressed_float`: the compressed float writer and reader against serialize 1.0's formula,
//! written here a second time straight from the standard's text (plain `f32` operations, no
//! reciprocal, no cap at `M`), for arbitrary ranges, values and codes.
//!
//! What it asserts, for every range [`CompressedFloat::new`] accepts:
//! - the writer's code is the standard's (capped at `M`, bitlens's one deviation);
//! - a reader accepts every code up to `M` and gives the standard's value, bit for bit, and
//!   refuses every code above it (out_of_range), the trace stream agreeing;
//! - on a range stable by the cheap bound, every code read writes back as itself; past
//!   2^23 + 1 steps, no range is stable; on a range small enough to check code by code,
//!   [`CompressedFloat::is_stable`] is the truth.

use arbitrary::Unstructured;
use bitlens_codec::bits::BitWriter;
use bitlens_codec::error::ErrorKind;
use bitlens_codec::quantize::{CompressedFloat, MAX_STABLE_STEPS};
use bitlens_codec::read::{ReadStream, TraceStream};
use bitlens_codec::stream::Stream;

/// `(delta, M)` of a declaration, as the standard derives them.
fn standard_params(min: f32, max: f32, res: f32) -> (f32, u32) {
    let delta = max - min;
    let mut values = delta / res;
    if values.is_nan() || values < 1.0 {
        values = 1.0;
    } else if values > 4_294_967_040.0 {
        values = 4_294_967_040.0;
    }
    (delta, values.ceil() as u32)
}

/// The code serialize 1.0's writer computes for `v`: `floor((n * M) + 0.5)` with the product and
/// the sum each rounded to `f32`, without bitlens's cap at `M` (so `M + 1` where the standard's
/// formula gives it).
pub fn standard_code(min: f32, max: f32, res: f32, v: f32) -> u64 {
    let (delta, m) = standard_params(min, max, res);
    let mut n = (v - min) / delta;
    if n.is_nan() || n < 0.0 {
        n = 0.0;
    } else if n > 1.0 {
        n = 1.0;
    }
    let product: f32 = n * m as f32;
    let sum: f32 = product + 0.5;
    sum.floor() as u64
}

/// The value serialize 1.0's reader gives for `code`: `((code / M) * delta) + min`, every step
/// rounded to `f32`.
pub fn standard_value(min: f32, max: f32, res: f32, code: u32) -> f32 {
    let (delta, m) = standard_params(min, max, res);
    let quotient: f32 = code as f32 / m as f32;
    let product: f32 = quotient * delta;
    product + min
}

/// An arbitrary declaration: raw bit patterns, or a shaped one (a step count up to 2^28, a
/// magnitude from tiny to huge, steps from below one ulp to many).
fn arb_range(u: &mut Unstructured<'_>) -> arbitrary::Result<(f32, f32, f32)> {
    if u.ratio(1, 4)? {
        let min = f32::from_bits(u.arbitrary()?);
        let max = f32::from_bits(u.arbitrary()?);
        let res = f32::from_bits(u.arbitrary()?);
        return Ok((min, max, res));
    }
    let steps = 1 + (u.arbitrary::<u32>()? >> u.int_in_range(4..=31u32)?);
    let exp = i32::from(u.int_in_range(-40i8..=40)?);
    let min = f32::from(u.arbitrary::<i16>()?) / 1024.0 * 2f32.powi(exp);
    let span_exp = i32::from(u.int_in_range(-40i8..=40)?);
    let span = f32::from(u.int_in_range(1u16..=4096)?) / 64.0 * 2f32.powi(span_exp);
    let res = if u.arbitrary()? {
        span / steps as f32
    } else {
        [1.0, 0.1, 0.01, 0.001, 1e-4, 1e-5, 1e-6][u.int_in_range(0..=6usize)?]
    };
    Ok((min, min + span, res))
}

/// Reads `code` (written raw in the range's width) as a compressed float through the read and
/// trace streams: both accept it with the same value, or both refuse it with the same error.
fn read_code(spec: &CompressedFloat, code: u32) -> Result<f32, ErrorKind> {
    let mut buf = [0u8; 8];
    let mut w = BitWriter::new(&mut buf);
    w.write_bits(code, spec.width()).expect("4 bytes fit");
    let n = w.finish().len();
    let mut a = 0.0f32;
    let ra = ReadStream::new(&buf[..n]).compressed_f32("v", &mut a, spec);
    let mut b = 0.0f32;
    let rb = TraceStream::new(&buf[..n]).compressed_f32("v", &mut b, spec);
    assert_eq!(ra, rb, "read and trace disagree on code {code}");
    if ra.is_ok() {
        assert_eq!(
            a.to_bits(),
            b.to_bits(),
            "read and trace values of code {code}"
        );
    }
    ra.map(|()| a).map_err(|e| e.kind().clone())
}

/// The kind of range `compressed_float` builds from `data`, for naming corpus seeds: `None` when
/// it builds none.
pub fn compressed_float_case(data: &[u8]) -> Option<&'static str> {
    let (min, max, res) = arb_range(&mut Unstructured::new(data)).ok()?;
    let spec = CompressedFloat::new(min, max, res).ok()?;
    Some(if spec.steps() > MAX_STABLE_STEPS {
        "unstable_past_max_stable_steps"
    } else if spec.is_stable_by_bound() {
        "stable_by_bound"
    } else if spec.steps() > 1 << 12 {
        "unchecked"
    } else if spec.is_stable() {
        "stable_code_by_code"
    } else {
        "unstable_code_by_code"
    })
}

/// `compressed_float`: see the module documentation.
pub fn compressed_float(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let Ok((min, max, res)) = arb_range(&mut u) else {
        return;
    };
    let Ok(spec) = CompressedFloat::new(min, max, res) else {
        return;
    };
    let m = spec.steps();
    assert_eq!((spec.delta(), m), standard_params(min, max, res));

    // The writer, on arbitrary values and on values at and next to code values.
    let mut values = Vec::new();
    while values.len() < 16 && !u.is_empty() {
        let v = if u.arbitrary().unwrap_or(false) {
            f32::from_bits(u.arbitrary().unwrap_or(0))
        } else {
            let code = u.int_in_range(0..=m).unwrap_or(0);
            let v = spec.decode(code);
            [v, v.next_up(), v.next_down()][u.int_in_range(0..=2usize).unwrap_or(0)]
        };
        values.push(v);
    }
    for v in values {
        let code = spec.encode(v);
        let want = standard_code(min, max, res, v).min(u64::from(m));
        assert_eq!(u64::from(code), want, "{min}..={max} at {res}: {v:e}");
    }

    // The reader, on arbitrary codes, the top and the first codes past it.
    let mut codes = vec![0, m];
    while codes.len() < 18 && !u.is_empty() {
        codes.push(u.int_in_range(0..=m).unwrap_or(0));
    }
    let stable_by_bound = spec.is_stable_by_bound();
    for code in codes {
        let v = read_code(&spec, code).expect("a code up to M is accepted");
        let want = standard_value(min, max, res, code);
        assert_eq!(
            v.to_bits(),
            want.to_bits(),
            "{min}..={max} at {res}: code {code}"
        );
        if stable_by_bound {
            assert_eq!(spec.encode(v), code, "stable {min}..={max} at {res}");
        }
    }
    let top = if spec.width() == 32 {
        u32::MAX
    } else {
        (1 << spec.width()) - 1
    };
    if top > m {
        for code in [m + 1, top] {
            let e = read_code(&spec, code).expect_err("a code above M is refused");
            assert!(
                matches!(e, ErrorKind::OutOfRange { .. }),
                "code {code}: {e}"
            );
        }
    }

    // Stability: cheap verdicts always; the exact one where every code can be checked here.
    if m > MAX_STABLE_STEPS {
        assert!(!spec.is_stable());
        assert!(!spec.reencodes(MAX_STABLE_STEPS));
    } else if m <= 1 << 12 {
        let every = (0..=m).all(|c| spec.encode(spec.decode(c)) == c);
        assert_eq!(spec.is_stable(), every, "{min}..={max} at {res}");
        assert!(
            !stable_by_bound || every,
            "the bound claims {min}..={max} at {res}"
        );
    }
}
