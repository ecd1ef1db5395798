//! Lossy float encodings: compressed floats (seed 000, WIRE.md) and smallest-three quaternions.
//!
//! Every step is an `f32` operation rounded on its own; nothing is fused (`mul_add` is never
//! used), so the codes match the C++ reference built without FMA, bit for bit.

use crate::bits::bits_required;

/// The largest number of steps a compressed float may have: the largest `f32` below 2^32.
pub const MAX_STEPS: f32 = 4_294_967_040.0;

/// A compressed-float range: `min..=max` in steps of (about) `res`, sent as an integer code.
///
/// Wire: `code` in `bits_required(0, M)` bits, where `M = ceil(clamp((max - min) / res, 1,
/// 4294967040))`. Write: `n = clamp((v - min) / (max - min), 0, 1)` (NaN gives 0),
/// `code = min(floor(n * M + 0.5), M)`. Read: a code above `M` is rejected;
/// `v = (code / M) * (max - min) + min`. Each operation is rounded to `f32`.
///
/// The `min(.., M)` is bitlens's own: for odd `M` in `[2^23, 2^24)` the reference rounds the top
/// of the range to `M + 1`, a code its own reader would misread. Elsewhere the codes agree.
///
/// Read then write gives back the same code for every code when the resolution divides the
/// range evenly and `M <=` [`MAX_EXACT_STEPS`] (2^23 + 1), and for any range of at most
/// [`EXACT_STEPS_ANY_RANGE`] (2^20) steps each at least 4 ulps wide ([`CompressedFloat::is_exact`]).
/// Beyond that, `f32` cannot hold every code's value: the writer settles such codes and the
/// reader rejects the ones a writer never sends, so every accepted packet still re-encodes to
/// the same bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CompressedFloat {
    min: f32,
    max: f32,
    delta: f32,
    steps: u32,
    steps_f: f32,
    width: u32,
    exact: bool,
    /// `1 / delta` and `1 / M` in `f64`: `div` divides by them with a multiplication, with
    /// the same result as the `f32` division.
    inv_delta: f64,
    inv_steps: f64,
    /// `M + 1` for an exact range, else 0: the codes below it are in range and canonical.
    exact_limit: u32,
}

/// `a / b` rounded to `f32`, computed as `(a * (1 / b))` in `f64` and rounded once to `f32`:
/// bit-identical to the `f32` division `a / b` wherever that quotient is a normal number (and
/// NaN, infinite or huge where it is), for every `f32` `a` and every positive `b` with
/// `inv_b = 1.0 / f64::from(b)`. A multiplication instead of a `divss`: a few times the
/// throughput, which the compressed floats of a table are bound by.
///
/// Why it is exact: write `a = A·2^s`, `b = B·2^t` with integers `A, B < 2^24`. The `f32`
/// division rounds `q = a / b` to nearest; the result differs only if an `f32` rounding
/// boundary (a midpoint `K·2^e`, `K` odd, `2^24 < K < 2^25`) lies between `q` and the `f64`
/// value. `q` is never a midpoint (the odd part of `A·2^(s-e)` is below 2^24, that of `K·B` is
/// above), and otherwise `|q - K·2^e| >= 2^e / B`, which relative to `q < 2^25·2^e` is more than
/// `2^-25 / B > 2^-49`. The `f64` value is `q·(1 + ε1)(1 + ε2)` with `|εi| <= 2^-53`: within
/// `2^-52` of `q`, so on the same side of every midpoint. (Below 2^-126 the `f32` grid is
/// coarser and the argument does not hold; [`CompressedFloat`] only divides where such a
/// quotient gives code 0 either way.) Pinned exhaustively over the codes and values of a range
/// and by a property test over random `a`, `b` (tests below).
#[inline(always)]
fn div(a: f32, inv_b: f64) -> f32 {
    (f64::from(a) * inv_b) as f32
}

/// Why [`CompressedFloat::new`] refused a range.
enum Invalid {
    NotFinite,
    Empty,
    Resolution,
    Overflow,
}

/// Ranges of at most this many steps, each at least 4 ulps wide, keep every code through read
/// then write whatever their bounds ([`CompressedFloat::is_exact`]).
pub const EXACT_STEPS_ANY_RANGE: u32 = 1 << 20;

/// The largest step count `M` for which reading any code and writing the value back gives the
/// same code: 2^23 + 1 = 8,388,609 (ranges near zero, see [`CompressedFloat`]).
///
/// Measured, not derived: `max_exact_steps_holds_exhaustively` (an ignored test, run it in
/// release) checks every code of M = 2^k - 1, 2^k, 2^k + 1 for k in 20..=24 over four range
/// families and bisects the boundary: 8,388,609 holds in all four, and every M from 8,388,610
/// up loses codes (near 2^23 an f32 no longer holds `x.5`, so `code / M * M + 0.5` rounds to a
/// neighbour).
pub const MAX_EXACT_STEPS: u32 = (1 << 23) + 1;

impl CompressedFloat {
    /// The range `min..=max` at resolution `res`.
    ///
    /// # Errors
    /// A description of the problem when a bound is not finite, `min >= max`, or `res` is not a
    /// positive finite number.
    pub fn new(min: f32, max: f32, res: f32) -> Result<Self, String> {
        Self::build(min, max, res).map_err(|problem| match problem {
            Invalid::NotFinite => {
                format!("compressed float range {min}..={max} at {res} is not finite")
            }
            Invalid::Empty => format!("compressed float min {min} is not below max {max}"),
            Invalid::Resolution => format!("compressed float resolution {res} is not positive"),
            Invalid::Overflow => format!("compressed float range {min}..={max} overflows f32"),
        })
    }

    /// [`CompressedFloat::new`] for constants: `None` where `new` gives an error.
    ///
    /// A range in a `const` lets the compiler fold its width, its exactness and its factors
    /// into every `serialize` function that uses it, where a `static` built at run time (a
    /// `LazyLock`) is checked and loaded again before every value (BENCHMARKS.md, section 2).
    /// `const` evaluation rounds every `f32` and `f64` operation as run time does, so both
    /// constructors build the same range (a test compares them).
    pub const fn new_const(min: f32, max: f32, res: f32) -> Option<Self> {
        match Self::build(min, max, res) {
            Ok(range) => Some(range),
            Err(_) => None,
        }
    }

    const fn build(min: f32, max: f32, res: f32) -> Result<Self, Invalid> {
        if !(min.is_finite() && max.is_finite() && res.is_finite()) {
            return Err(Invalid::NotFinite);
        }
        if min >= max {
            return Err(Invalid::Empty);
        }
        if res <= 0.0 {
            return Err(Invalid::Resolution);
        }
        let delta = max - min;
        if !delta.is_finite() {
            return Err(Invalid::Overflow);
        }
        let values = delta / res;
        let values = if values.is_nan() {
            1.0
        } else {
            values.clamp(1.0, MAX_STEPS)
        };
        let steps = values.ceil() as u32;
        Ok(Self::assemble(min, max, delta, steps))
    }

    /// The range from its wire constants: `min`, `delta = max - min` and `M` (`steps`).
    const fn assemble(min: f32, max: f32, delta: f32, steps: u32) -> Self {
        // Exact: every code survives read then write (see `is_exact`). Sufficient, measured
        // condition: at most 2^20 steps, each at least 4 ulps of the range's largest magnitude.
        let largest = min.abs().max(max.abs());
        let ulp = f32::from_bits(largest.to_bits() + 1) - largest;
        let exact = steps <= EXACT_STEPS_ANY_RANGE && delta / steps as f32 >= 4.0 * ulp;
        CompressedFloat {
            min,
            max,
            delta,
            steps,
            steps_f: steps as f32,
            width: bits_required(0, steps as i64),
            exact,
            inv_delta: 1.0 / delta as f64,
            inv_steps: 1.0 / (steps as f32) as f64,
            // An exact range has at most 2^20 steps: M + 1 does not overflow.
            exact_limit: if exact { steps + 1 } else { 0 },
        }
    }

    /// Smallest value.
    pub const fn min(&self) -> f32 {
        self.min
    }
    /// Largest value.
    pub const fn max(&self) -> f32 {
        self.max
    }
    /// `M`: the largest code.
    pub const fn steps(&self) -> u32 {
        self.steps
    }
    /// Bits per code on the wire.
    pub const fn width(&self) -> u32 {
        self.width
    }

    /// Whether every code of this range survives read then write, so that a reader need not
    /// check: at most 2^20 steps, each at least 4 ulps of the largest magnitude in the range
    /// (a sufficient condition, pinned by a property test over random ranges).
    pub const fn is_exact(&self) -> bool {
        self.exact
    }

    /// Whether a reader may accept `code`: every code of an exact range; otherwise only codes
    /// that read then write give back (the only ones [`CompressedFloat::encode`] produces).
    #[inline]
    pub fn is_canonical(&self, code: u32) -> bool {
        self.exact || (code <= self.steps && self.quantize(self.decode(code)) == code)
    }

    /// The code the writer sends for `v` (clamped into range; NaN sends the code of `min`).
    ///
    /// For a range that is not exact (finer than `f32` holds at its magnitude), the code is
    /// settled to one that read then write gives back: decode and re-encode until it stops
    /// moving (both steps are monotone, so it converges; in practice in one or two steps). The
    /// reference library sends the unsettled code there, which its own reader cannot reproduce.
    #[inline(always)]
    pub fn encode(&self, v: f32) -> u32 {
        let code = self.quantize(v);
        if self.exact { code } else { self.settle(code) }
    }

    #[inline]
    fn settle(&self, mut code: u32) -> u32 {
        for _ in 0..64 {
            let next = self.quantize(self.decode(code));
            if next == code {
                break;
            }
            code = next;
        }
        code
    }

    /// The reference quantization: `min(floor(clamp((v - min) / delta, 0, 1) * M + 0.5), M)`.
    ///
    /// The division is `div` (the same `f32` quotient, or one that gives the same code: below
    /// 2^-126 both give code 0). The clamp is folded into the saturating cast and the final
    /// `min`: for `n <= 0` or NaN, `n * M + 0.5` is at most 0.5 or NaN, which the cast turns into
    /// 0, the code of `n = 0`; for `n > 1`, `n * M >= M` (rounding is monotone and `M` is an
    /// `f32`), so the cast gives at least `M` and the `min` gives `M`, the code of `n = 1`.
    #[inline(always)]
    fn quantize(&self, v: f32) -> u32 {
        let shifted = v - self.min;
        let n = div(shifted, self.inv_delta);
        let scaled = n * self.steps_f;
        // floor(x) for x = scaled + 0.5 >= 0.5: truncation is the same there, and the cast
        // truncates (saturating: NaN and negatives give 0) without calling libm's floorf,
        // which baseline x86-64 needs.
        let code = (scaled + 0.5) as u32;
        code.min(self.steps)
    }

    /// The value the reader produces for `code` (which must be at most [`Self::steps`]):
    /// `(code / M) * delta + min`, each step rounded to `f32` (the division by `div`; the
    /// quotient is 0 or at least 2^-32, a normal number).
    #[inline(always)]
    pub fn decode(&self, code: u32) -> f32 {
        self.scale(div(code as f32, self.inv_steps))
    }

    /// [`Self::decode`] for a code below [`Self::exact_limit`]: at most 2^20 steps, so
    /// `code as f32` is exact and `code` goes to `f64` in one conversion instead of two.
    #[inline(always)]
    pub(crate) fn decode_exact(&self, code: u32) -> f32 {
        debug_assert!(self.exact && code <= self.steps);
        self.scale((f64::from(code) * self.inv_steps) as f32)
    }

    /// `M + 1` for an exact range, 0 otherwise: a reader may take any code below it without
    /// further checks (one comparison for the range check and [`Self::is_canonical`]).
    #[inline(always)]
    pub(crate) fn exact_limit(&self) -> u32 {
        self.exact_limit
    }

    /// `n * delta + min`, each step rounded to `f32`.
    #[inline(always)]
    fn scale(&self, n: f32) -> f32 {
        let scaled = n * self.delta;
        scaled + self.min
    }
}

/// `1 / sqrt(2)`: no component of a unit quaternion other than the largest can exceed it.
const SMALL_LIMIT: f32 = std::f32::consts::FRAC_1_SQRT_2;

/// Smallest-three quaternion encoding with `bits` bits per component (2..=16).
///
/// Wire: 2 bits, the index (x = 0, y = 1, z = 2, w = 3) of the component with the largest
/// magnitude (the first one on ties); then the other three in index order, each as
/// `code = min(floor((c + 1/√2) / √2 * (2^bits - 1) + 0.5), 2^bits - 1)`. The writer negates the
/// quaternion when the largest component is negative (q and -q are the same rotation), so the
/// reader rebuilds it as `sqrt(max(0, 1 - a² - b² - c²))`.
///
/// Canonical form: the reader rejects encodings whose rebuilt largest component is not the
/// largest (a smaller index with a magnitude `>=` it, or a larger index with a magnitude `>` it),
/// because the writer could never produce them. Every accepted encoding re-encodes identically.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SmallestThree {
    bits: u32,
    max_code: u32,
}

impl SmallestThree {
    /// The encoding with `bits` bits per small component.
    ///
    /// # Errors
    /// A description when `bits` is outside 2..=16.
    pub fn new(bits: u32) -> Result<Self, String> {
        if !(2..=16).contains(&bits) {
            return Err(format!(
                "quaternion component width {bits} is outside 2..=16"
            ));
        }
        Ok(SmallestThree {
            bits,
            max_code: (1 << bits) - 1,
        })
    }

    /// [`SmallestThree::new`] for constants: `None` when `bits` is outside 2..=16.
    pub const fn new_const(bits: u32) -> Option<Self> {
        if bits < 2 || bits > 16 {
            return None;
        }
        Some(SmallestThree {
            bits,
            max_code: (1 << bits) - 1,
        })
    }

    /// Bits per small component.
    pub const fn bits(&self) -> u32 {
        self.bits
    }

    /// The largest code of one small component.
    pub const fn max_code(&self) -> u32 {
        self.max_code
    }

    /// Total bits on the wire: 2 + 3 × bits.
    pub const fn width(&self) -> u32 {
        2 + 3 * self.bits
    }

    /// Quantizes one small component.
    #[inline]
    pub fn encode_component(&self, c: f32) -> u32 {
        let n = (c + SMALL_LIMIT) / (2.0 * SMALL_LIMIT);
        let n = if n.is_nan() || n <= 0.0 {
            0.0
        } else if n > 1.0 {
            1.0
        } else {
            n
        };
        // floor of a value >= 0.5: the truncating cast is exact (see `CompressedFloat::encode`).
        let code = (n * self.max_code as f32 + 0.5) as u32;
        code.min(self.max_code)
    }

    /// The component value of a code.
    #[inline]
    pub fn decode_component(&self, code: u32) -> f32 {
        let n = code as f32 / self.max_code as f32;
        n * (2.0 * SMALL_LIMIT) - SMALL_LIMIT
    }

    /// The index of the largest component and the three codes, for a quaternion `[x, y, z, w]`.
    /// Non-finite components count as zero.
    pub fn encode(&self, q: [f32; 4]) -> (u32, [u32; 3]) {
        let q = q.map(|c| if c.is_finite() { c } else { 0.0 });
        let mut largest = 0;
        for i in 1..4 {
            if q[i].abs() > q[largest].abs() {
                largest = i;
            }
        }
        let sign = if q[largest] < 0.0 { -1.0 } else { 1.0 };
        let mut codes = [0u32; 3];
        let mut k = 0;
        for (i, c) in q.iter().enumerate() {
            if i != largest {
                codes[k] = self.encode_component(c * sign);
                k += 1;
            }
        }
        (largest as u32, codes)
    }

    /// Rebuilds `[x, y, z, w]` from the largest index and the three codes, or `None` when the
    /// encoding is not canonical (see the type's documentation).
    pub fn decode(&self, largest: u32, codes: [u32; 3]) -> Option<[f32; 4]> {
        let largest = largest as usize;
        if largest > 3 || codes.iter().any(|&c| c > self.max_code) {
            return None;
        }
        let small = codes.map(|c| self.decode_component(c));
        let sum = small[0] * small[0] + small[1] * small[1] + small[2] * small[2];
        let rest = 1.0 - sum;
        let big = if rest > 0.0 { rest.sqrt() } else { 0.0 };
        let mut q = [0.0f32; 4];
        let mut k = 0;
        for (i, slot) in q.iter_mut().enumerate() {
            if i == largest {
                *slot = big;
            } else {
                let c = small[k];
                k += 1;
                let canonical = if i < largest {
                    c.abs() < big
                } else {
                    c.abs() <= big
                };
                if !canonical {
                    return None;
                }
                *slot = c;
            }
        }
        Some(q)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ranges (`min`, `max`, `res`) built at compile time and at run time; the last is invalid.
    const CONST_RANGES: [(f32, f32, f32); 6] = [
        (-1000.0, 1000.0, 0.01),
        (-512.0, 512.0, 0.01),
        (0.0, 1.0, 1e-12),
        (1e6, 1e6 + 1.0, 1e-3),
        (-3.3, 7.7, 0.0007),
        (2.0, 1.0, 0.1),
    ];

    /// [`CONST_RANGES`] built at compile time: must equal the run-time constructor's ranges field for
    /// field.
    const AT_COMPILE_TIME: [Option<CompressedFloat>; 6] = {
        let mut out = [None; 6];
        let mut i = 0;
        while i < CONST_RANGES.len() {
            let (min, max, res) = CONST_RANGES[i];
            out[i] = CompressedFloat::new_const(min, max, res);
            i += 1;
        }
        out
    };

    #[test]
    fn const_constructor_builds_what_new_builds() {
        let at_run_time =
            CONST_RANGES.map(|(min, max, res)| CompressedFloat::new(min, max, res).ok());
        assert_eq!(AT_COMPILE_TIME, at_run_time);
        assert!(AT_COMPILE_TIME[5].is_none());
        // And over random ranges (run time on both sides, the same code path as const).
        let mut next = xorshift(0x9E37_79B9_7F4A_7C15);
        for _ in 0..20_000 {
            let x = next();
            let min = f32::from_bits(x as u32);
            let max = f32::from_bits((x >> 32) as u32);
            let res = f32::from_bits((x >> 16) as u32 & 0x7FFF_FFFF);
            let built = CompressedFloat::new(min, max, res).ok();
            assert_eq!(CompressedFloat::new_const(min, max, res), built);
        }
    }

    #[test]
    fn seed_range_has_2000_steps_in_11_bits() {
        let q = CompressedFloat::new(-10.0, 10.0, 0.01).unwrap();
        assert_eq!(q.steps(), 2000);
        assert_eq!(q.width(), 11);
        assert_eq!(q.encode(1.5), 1150);
        assert_eq!(q.encode(f32::NAN), 0);
        assert_eq!(q.encode(12.5), 2000);
        assert_eq!(q.encode(-1e30), 0);
        assert_eq!(q.decode(2000), 10.0);
    }

    #[test]
    fn invalid_ranges_are_refused() {
        assert!(CompressedFloat::new(1.0, 1.0, 0.1).is_err());
        assert!(CompressedFloat::new(2.0, 1.0, 0.1).is_err());
        assert!(CompressedFloat::new(0.0, 1.0, 0.0).is_err());
        assert!(CompressedFloat::new(0.0, f32::INFINITY, 1.0).is_err());
        assert!(CompressedFloat::new(-f32::MAX, f32::MAX, 1.0).is_err());
        // A resolution finer than 2^32 steps is clamped to the widest code.
        let q = CompressedFloat::new(0.0, 1.0, 1e-12).unwrap();
        assert_eq!(q.steps(), 4_294_967_040);
        assert_eq!(q.width(), 32);
        assert!(q.encode(1.0) <= q.steps());
    }

    #[test]
    fn odd_steps_near_2_pow_24_never_exceed_m() {
        // The reference's hazard: odd M in [2^23, 2^24) rounds the top of the range to M + 1.
        let m = (1u32 << 23) + 1;
        let q = CompressedFloat::new(0.0, m as f32, 1.0).unwrap();
        assert_eq!(q.steps(), m);
        assert_eq!(q.encode(m as f32), m);
    }

    /// Every code of a range re-encodes to itself after a decode.
    fn all_codes_stable(min: f32, max: f32, res: f32) -> Result<(), u32> {
        let q = CompressedFloat::new(min, max, res).unwrap();
        for code in 0..=q.steps() {
            if q.encode(q.decode(code)) != code {
                return Err(code);
            }
        }
        Ok(())
    }

    /// Ranges of the kinds games send: positions, unit values, angles, fixed-point fractions.
    const RANGES: [(f32, f32, f32); 7] = [
        (-10.0, 10.0, 0.01),
        (0.0, 1.0, 0.001),
        (-2000.0, 2000.0, 0.1),
        (-512.0, 512.0, 0.01),
        (0.0, 360.0, 0.001),
        (-1.0, 1.0, 1.0 / 65536.0),
        (0.0, 4.0, 1.0 / (1 << 20) as f32),
    ];

    #[test]
    fn compressed_float_codes_are_stable() {
        for (min, max, res) in RANGES {
            assert_eq!(
                all_codes_stable(min, max, res),
                Ok(()),
                "{min}..={max} at {res}"
            );
        }
    }

    /// Whether every code of `M` steps over `min..=min + span` survives decode then encode.
    fn family_stable(min: f32, span: f32, m: u32) -> bool {
        let q = CompressedFloat::new(min, min + span, span / m as f32).unwrap();
        (0..=q.steps()).all(|code| q.encode(q.decode(code)) == code)
    }

    /// Measures MAX_EXACT_STEPS: for ranges near zero, the largest power-of-two step count (and
    /// its odd neighbours) whose every code survives read then write. Slow in debug builds:
    /// `cargo test --release -p bitlens-codec --lib max_exact_steps -- --ignored --nocapture`.
    #[test]
    #[ignore = "exhaustive over up to 32M codes per range; run in release"]
    fn max_exact_steps_holds_exhaustively() {
        type Family = (&'static str, fn(u32) -> (f32, f32));
        let families: [Family; 4] = [
            ("[0, M]", |m| (0.0, m as f32)),
            ("[-M/2, M/2]", |m| (-(m as f32) / 2.0, m as f32)),
            ("[-1, 1]", |_| (-1.0, 2.0)),
            ("[0, 1]", |_| (0.0, 1.0)),
        ];
        for (name, range) in families {
            let mut line = format!("{name:<12}");
            for k in 20..=24u32 {
                for m in [(1u32 << k) - 1, 1 << k, (1 << k) + 1] {
                    let (min, span) = range(m);
                    let ok = family_stable(min, span, m);
                    line.push_str(&format!(" {m}:{}", if ok { "ok" } else { "NO" }));
                    if m <= MAX_EXACT_STEPS {
                        assert!(
                            ok,
                            "{name}: M = {m} is not stable but is within MAX_EXACT_STEPS"
                        );
                    }
                }
            }
            println!("{line}");
            // Bisect the boundary between 2^23 + 1 (stable) and 2^24 - 1 (not).
            let (mut good, mut bad) = ((1u32 << 23) + 1, (1u32 << 24) - 1);
            while bad - good > 1 {
                let mid = good + (bad - good) / 2;
                let (min, span) = range(mid);
                if family_stable(min, span, mid) {
                    good = mid
                } else {
                    bad = mid
                }
            }
            let above: Vec<bool> = (1..=8)
                .map(|d| {
                    let (min, span) = range(good + d);
                    family_stable(min, span, good + d)
                })
                .collect();
            println!(
                "{name:<12} largest stable M by bisection: {good}; the 8 above it stable: {above:?}"
            );
        }
    }

    // ---- the division by reciprocal (`div`) against the reference `f32` arithmetic ----

    /// The reference writer, as the C++ library computes it: an `f32` division, then the clamp.
    fn reference_quantize(q: &CompressedFloat, v: f32) -> u32 {
        let n = (v - q.min) / q.delta;
        let n = if n.is_nan() || n <= 0.0 {
            0.0
        } else if n > 1.0 {
            1.0
        } else {
            n
        };
        let code = (n * q.steps_f + 0.5) as u32;
        code.min(q.steps)
    }

    /// The reference reader: `(code / M) * delta + min` with an `f32` division.
    fn reference_decode(q: &CompressedFloat, code: u32) -> f32 {
        (code as f32 / q.steps_f) * q.delta + q.min
    }

    /// A fixed xorshift sequence: the same samples on every run.
    fn xorshift(seed: u64) -> impl FnMut() -> u64 {
        let mut x = seed;
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        }
    }

    /// Whether `div` gives the `f32` quotient's bits, for `a / b` whose magnitude is not below
    /// the smallest normal (the only place the proof in `div` does not reach).
    fn div_agrees(a: f32, b: f32) -> bool {
        let want = a / b;
        let got = div(a, 1.0 / f64::from(b));
        if want.is_nan() {
            return got.is_nan();
        }
        want.abs() < f32::MIN_POSITIVE || want.to_bits() == got.to_bits()
    }

    #[test]
    fn div_is_the_f32_division_for_random_operands() {
        let mut next = xorshift(0x9E37_79B9_7F4A_7C15);
        let mut checked = 0;
        for _ in 0..2_000_000 {
            let r = next();
            let a = f32::from_bits(r as u32);
            let b = f32::from_bits((r >> 32) as u32 & 0x7FFF_FFFF);
            if !(b.is_finite() && b > 0.0) {
                continue;
            }
            assert!(div_agrees(a, b), "{a:e} / {b:e}");
            checked += 1;
        }
        assert!(checked > 1_900_000);
        // Operands of similar size (quotients near 1, where every bit of the result counts) and
        // integer operands (a code over M).
        for _ in 0..2_000_000 {
            let r = next();
            let a = f32::from_bits(0x3F00_0000 + (r as u32 & 0x00FF_FFFF));
            let b = f32::from_bits(0x3F00_0000 + ((r >> 32) as u32 & 0x00FF_FFFF));
            assert!(div_agrees(a, b), "{a:e} / {b:e}");
            let m = ((r >> 40) as u32 & 0x00FF_FFFF).max(1);
            let code = (r as u32 & 0x00FF_FFFF) % (m + 1);
            assert!(div_agrees(code as f32, m as f32), "{code} / {m}");
        }
    }

    /// Every code of the entity benchmark's range decodes to the reference value, and every
    /// value at and next to a code's value quantizes to the reference code.
    #[test]
    fn bench_range_matches_the_reference_for_every_code() {
        let q = CompressedFloat::new(-1000.0, 1000.0, 0.01).unwrap();
        assert_eq!(q.steps(), 200_000);
        assert!(q.is_exact());
        for code in 0..=q.steps() {
            let v = q.decode(code);
            assert_eq!(v.to_bits(), reference_decode(&q, code).to_bits(), "{code}");
            assert_eq!(q.decode_exact(code).to_bits(), v.to_bits(), "{code}");
            for w in [v.next_down(), v, v.next_up()] {
                assert_eq!(q.quantize(w), reference_quantize(&q, w), "{w:e}");
            }
            assert_eq!(q.encode(v), code);
        }
    }

    /// Codes of the ranges of `compressed_float_codes_are_stable` and of random values (every
    /// bit pattern: NaN, infinities, out of range) match the reference.
    #[test]
    fn quantize_and_decode_match_the_reference() {
        let mut next = xorshift(0x2545_F491_4F6C_DD1D);
        let extremes = [
            (-1000.0, 1000.0, 0.01),
            (0.0, 1.0, 1e-12),
            (1.0e-40, 3.0e-39, 1.0e-45),
            (-1.0e38, 1.0e38, 1.0e30),
        ];
        for (min, max, res) in RANGES.into_iter().chain(extremes) {
            let q = CompressedFloat::new(min, max, res).unwrap();
            for code in (0..=q.steps()).step_by((q.steps() / 100_000).max(1) as usize) {
                let want = reference_decode(&q, code);
                assert_eq!(
                    q.decode(code).to_bits(),
                    want.to_bits(),
                    "{min}..={max} {code}"
                );
            }
            for _ in 0..200_000 {
                let v = f32::from_bits(next() as u32);
                assert_eq!(
                    q.quantize(v),
                    reference_quantize(&q, v),
                    "{min}..={max} {v:e}"
                );
                // And values inside the range, where most of them are.
                let inside = min + (max - min) * (next() as u32 as f32 / u32::MAX as f32);
                let want = reference_quantize(&q, inside);
                assert_eq!(q.quantize(inside), want, "{min}..={max} {inside:e}");
            }
        }
    }

    /// Every `f32` (all 2^32 bit patterns) quantizes to the reference code in the entity
    /// benchmark's range and in one near zero. Takes a minute in release:
    /// `cargo test --release -p bitlens-codec --lib every_f32 -- --ignored`.
    #[test]
    #[ignore = "exhaustive over all 2^32 f32 bit patterns; run in release"]
    fn every_f32_quantizes_like_the_reference() {
        for (min, max, res) in [(-1000.0, 1000.0, 0.01), (0.0, 1.0, 0.001)] {
            let q = CompressedFloat::new(min, max, res).unwrap();
            let threads = std::thread::available_parallelism().map_or(2, |n| n.get()) as u64;
            let chunk = (1u64 << 32).div_ceil(threads);
            std::thread::scope(|scope| {
                for t in 0..threads {
                    let q = &q;
                    scope.spawn(move || {
                        let end = ((t + 1) * chunk).min(1 << 32);
                        for bits in t * chunk..end {
                            let v = f32::from_bits(bits as u32);
                            if q.quantize(v) != reference_quantize(q, v) {
                                panic!("{min}..={max}: {v:e} ({bits:#010x})");
                            }
                        }
                    });
                }
            });
        }
    }

    #[test]
    fn quaternion_components_are_stable_for_every_width() {
        for bits in 2..=16 {
            let q = SmallestThree::new(bits).unwrap();
            for code in 0..=q.max_code() {
                assert_eq!(
                    q.encode_component(q.decode_component(code)),
                    code,
                    "bits {bits}"
                );
            }
        }
    }

    #[test]
    fn quaternion_roundtrip_and_canonical_form() {
        let q = SmallestThree::new(10).unwrap();
        let identity = [0.0, 0.0, 0.0, 1.0];
        let (largest, codes) = q.encode(identity);
        assert_eq!(largest, 3);
        let back = q.decode(largest, codes).unwrap();
        assert!((back[3] - 1.0).abs() < 1e-3);
        assert_eq!(q.encode(back), (largest, codes));
        // -q encodes like q.
        assert_eq!(q.encode([0.0, 0.0, 0.0, -1.0]), (largest, codes));
        // A "largest" that is smaller than a sent component is refused.
        let big = q.encode_component(0.7);
        assert_eq!(q.decode(0, [big, big, big]), None);
    }
}

/// The wire constants of a compressed-float range (serialize 1.0's precomputed entry point,
/// `serialize_compressed_float_precomputed(value, max_integer_value, bits, delta, min)`): with
/// `min`, all the arithmetic needs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CompressedFloatParams {
    /// `M`: `ceil(clamp((max - min) / res, 1, 4294967040))`, the largest code.
    pub max_integer_value: u32,
    /// The code's width: `bits_required(0, M)`.
    pub bits: u32,
    /// `max - min`, rounded to `f32`.
    pub delta: f32,
}

impl CompressedFloat {
    /// The range's wire constants: what a schema compiler precomputes from `(min, max, res)`.
    pub const fn params(&self) -> CompressedFloatParams {
        CompressedFloatParams {
            max_integer_value: self.steps,
            bits: self.width,
            delta: self.delta,
        }
    }

    /// The range given by precomputed wire constants (serialize 1.0's precomputed entry point):
    /// the same codes and values as any `(min, max, res)` that derives them. [`Self::max`] is
    /// `min + delta` rounded to `f32`; the arithmetic uses `delta` itself.
    ///
    /// # Errors
    /// A description when `min` or `delta` is not finite, `delta` is not positive, `min +
    /// delta` overflows, `max_integer_value` is outside `1..=4294967040`, or `bits` is not
    /// `bits_required(0, max_integer_value)`.
    pub fn from_params(min: f32, params: CompressedFloatParams) -> Result<Self, String> {
        let CompressedFloatParams {
            max_integer_value: m,
            bits,
            delta,
        } = params;
        Self::from_params_const(min, params).ok_or_else(|| {
            if !(min.is_finite() && delta.is_finite() && delta > 0.0) {
                format!(
                    "compressed float min {min} and delta {delta} must be finite, delta above 0"
                )
            } else if !(min + delta).is_finite() {
                format!("compressed float range {min} + {delta} overflows f32")
            } else if m == 0 || m as f32 > MAX_STEPS {
                format!("compressed float max_integer_value {m} is outside 1..=4294967040")
            } else {
                format!(
                    "compressed float bits {bits} for max_integer_value {m} (it takes {})",
                    bits_required(0, i64::from(m))
                )
            }
        })
    }

    /// [`CompressedFloat::from_params`] for constants: `None` where it gives an error.
    pub const fn from_params_const(min: f32, params: CompressedFloatParams) -> Option<Self> {
        let m = params.max_integer_value;
        let delta = params.delta;
        let max = min + delta;
        let valid = min.is_finite()
            && delta.is_finite()
            && delta > 0.0
            && max.is_finite()
            && m >= 1
            && m <= MAX_STEPS as u32
            && params.bits == bits_required(0, m as i64);
        if valid {
            Some(Self::assemble(min, max, delta, m))
        } else {
            None
        }
    }
}

#[cfg(test)]
mod params_tests {
    use super::*;

    #[test]
    fn precomputed_params_rebuild_the_derived_range() {
        for (min, max, res) in [
            (0.0f32, 10.0f32, 0.01f32),
            (-180.0, 180.0, 0.1),
            (100.0, 200.0, 1e-5),
            (0.0, 12582911.0, 1.0),
            (-1.0, 1.0, 3.0),
        ] {
            let derived = CompressedFloat::new(min, max, res).unwrap();
            let p = derived.params();
            let pre = CompressedFloat::from_params(min, p).unwrap();
            assert_eq!(pre.params(), p);
            for code in [0, 1, p.max_integer_value / 3, p.max_integer_value] {
                assert_eq!(pre.decode(code).to_bits(), derived.decode(code).to_bits());
            }
            for v in [min, max, (min + max) / 2.0, 0.005, 9.995, 181.859] {
                assert_eq!(pre.encode(v), derived.encode(v), "{min} {max} {res} {v}");
            }
        }
        let p = CompressedFloat::new(0.0, 10.0, 0.01).unwrap().params();
        assert_eq!(
            p,
            CompressedFloatParams {
                max_integer_value: 1000,
                bits: 10,
                delta: 10.0
            }
        );
        let bad = |p| CompressedFloat::from_params(0.0, p).unwrap_err();
        assert!(bad(CompressedFloatParams { bits: 11, ..p }).contains("takes 10"));
        assert!(
            bad(CompressedFloatParams {
                max_integer_value: 0,
                bits: 0,
                ..p
            })
            .contains("outside")
        );
        assert!(bad(CompressedFloatParams { delta: -1.0, ..p }).contains("finite"));
        assert!(
            bad(CompressedFloatParams {
                delta: f32::NAN,
                ..p
            })
            .contains("finite")
        );
        let huge = CompressedFloatParams {
            delta: f32::MAX,
            ..p
        };
        assert!(
            CompressedFloat::from_params(f32::MAX, huge)
                .unwrap_err()
                .contains("overflows")
        );
    }
}
