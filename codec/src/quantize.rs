//! Lossy float encodings: compressed floats (serialize 1.0's `compressed_float`) and
//! smallest-three quaternions (seed 000, WIRE.md).
//!
//! Every step is an `f32` operation rounded on its own; nothing is fused (`mul_add` is never
//! used), so the codes and the decoded values are the standard's, bit for bit.

use crate::bits::bits_required;

/// The largest number of steps a compressed float may have: the largest `f32` below 2^32.
pub const MAX_STEPS: f32 = 4_294_967_040.0;

/// A compressed-float range: `min..=max` in steps of (about) `res`, sent as an integer code
/// (serialize 1.0, "compressed_float").
///
/// Wire: `code` in `bits_required(0, M)` bits, where `M = ceil(clamp((max - min) / res, 1,
/// 4294967040))`. Write: `n = clamp((v - min) / (max - min), 0, 1)` (NaN gives 0),
/// `code = min(floor((n * M) + 0.5), M)`. Read: a code above `M` is refused, every other code
/// is accepted; `v = ((code / M) * (max - min)) + min`. Each operation is rounded to `f32`
/// (two roundings before the floor, never a fused multiply-add): the standard's arithmetic.
///
/// The `min(.., M)` is bitlens's own (WIRE.md, "Deviations"): for odd `M` in `[2^23, 2^24)`
/// the standard's formula rounds the top of the range to `M + 1`, a code its own reader
/// refuses (and for `M = 2^24 - 1`, one that does not fit the width). Elsewhere the codes agree.
///
/// # Stability
/// A range is *stable* when reading any code `0..=M` and writing the value back gives the same
/// code ([`CompressedFloat::is_stable`]); only then does every accepted packet re-encode to the
/// identical bytes. Which ranges are:
/// - `M > 2^23 + 1` ([`MAX_STABLE_STEPS`]): never. `f32` values in `[2^23, 2^24)` are whole
///   numbers, so `x + 0.5` is a tie that rounds to even: the code `2^23 + 1` is never written
///   (the clamp gives it back only when it is `M` itself).
/// - at most 2^20 steps ([`STABLE_STEPS_BY_BOUND`]), each at least 4 ulps of the largest
///   magnitude in the range: always ([`CompressedFloat::is_stable_by_bound`], pinned by a
///   property test over random ranges and an exhaustive one over every code of such ranges).
/// - between the two, it depends on the bits of `min`, `max` and `res`: [`is_stable`] checks
///   every code (at most `2^23 + 2` of them). Measured: steps narrower than one ulp of the
///   largest magnitude lose codes, and ranges near zero that divide evenly are stable up to
///   `M = 2^23 + 1` (`stability_boundary_holds_exhaustively`, an ignored test).
///
/// On an unstable range a reader still accepts every code up to `M` and gives the standard's
/// value for it; a code whose value writes back as another code is one no conforming writer
/// sends ([`CompressedFloat::reencodes`] tells which), a provenance question for tools, never a
/// refusal.
///
/// [`is_stable`]: CompressedFloat::is_stable
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CompressedFloat {
    min: f32,
    max: f32,
    delta: f32,
    steps: u32,
    steps_f: f32,
    width: u32,
    /// Stable by the cheap sufficient test (see [`CompressedFloat::is_stable_by_bound`]).
    stable_by_bound: bool,
    /// `1 / delta` and `1 / M` in `f64`: `div` divides by them with a multiplication, with
    /// the same result as the `f32` division.
    inv_delta: f64,
    inv_steps: f64,
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
const fn div(a: f32, inv_b: f64) -> f32 {
    (a as f64 * inv_b) as f32
}

/// Why [`CompressedFloat::new`] refused a range.
enum Invalid {
    NotFinite,
    Empty,
    Resolution,
    Overflow,
}

/// Ranges of at most this many steps, each at least 4 ulps wide, are stable whatever their
/// bounds ([`CompressedFloat::is_stable_by_bound`]).
pub const STABLE_STEPS_BY_BOUND: u32 = 1 << 20;

/// The largest step count `M` of a stable range: 2^23 + 1 = 8,388,609. Every range with more
/// steps is unstable, and ranges near zero that divide evenly are stable up to it (see
/// [`CompressedFloat`]).
///
/// Why no larger `M` is stable: an `f32` in `[2^23, 2^24)` is a whole number `x`, so `x + 0.5`
/// is a tie and rounds to the even neighbour; `floor` then never gives the odd code `2^23 + 1`
/// (above 2^24 no odd code at all). The clamp to `M` gives it back only when `M = 2^23 + 1`.
/// Measured by `stability_boundary_holds_exhaustively` (an ignored test, run it in release).
pub const MAX_STABLE_STEPS: u32 = (1 << 23) + 1;

/// Codes up to this one convert to `f32` exactly: a range with at most this many steps
/// decodes a code with one conversion to `f64`.
const EXACT_CODES: u32 = 1 << 24;

impl CompressedFloat {
    /// The range `min..=max` at resolution `res`.
    ///
    /// # Errors
    /// A description of the problem when a bound is not finite, `min >= max`, `res` is not a
    /// positive number (NaN, zero or negative), or `max - min` or `(max - min) / res` is not
    /// finite in `f32` (the standard gives such a declaration no wire meaning).
    ///
    /// A resolution of `+inf` is a declaration like any resolution coarser than the range:
    /// `(max - min) / res` is 0, which the standard clamps to 1, so `M = 1` and the code takes
    /// one bit (serialize.rs writes 7.0 in `[0, 10]` as the bit `1`; WIRE.md).
    pub fn new(min: f32, max: f32, res: f32) -> Result<Self, String> {
        Self::build(min, max, res).map_err(|problem| match problem {
            Invalid::NotFinite => {
                format!("compressed float range {min}..={max} at {res} is not finite")
            }
            Invalid::Empty => format!("compressed float min {min} is not below max {max}"),
            Invalid::Resolution => {
                format!("compressed float resolution {res} is not a positive number")
            }
            Invalid::Overflow => format!(
                "compressed float range {min}..={max} at {res} overflows f32 (max - min, or \
                 (max - min) / resolution, is infinite)"
            ),
        })
    }

    /// [`CompressedFloat::new`] for constants: `None` where `new` gives an error.
    ///
    /// A range in a `const` lets the compiler fold its width, its stability and its factors
    /// into every `serialize` function that uses it, where a `static` built at run time (a
    /// `LazyLock`) is checked and loaded again before every value (BENCHMARKS.md, section 2).
    /// `const` evaluation rounds every `f32` and `f64` operation as run time does, so both
    /// constructors build the same range (a test compares them). With [`Self::is_stable`], a
    /// constant range can be checked at compile time:
    ///
    /// ```
    /// use bitlens_codec::CompressedFloat;
    /// const AIM: CompressedFloat = CompressedFloat::new_const(-180.0, 180.0, 0.1).unwrap();
    /// const _: () = assert!(AIM.is_stable(), "every code of AIM re-encodes");
    /// ```
    pub const fn new_const(min: f32, max: f32, res: f32) -> Option<Self> {
        match Self::build(min, max, res) {
            Ok(range) => Some(range),
            Err(_) => None,
        }
    }

    const fn build(min: f32, max: f32, res: f32) -> Result<Self, Invalid> {
        // `res` may be +inf (M = 1, see `new`); NaN and -inf are refused below.
        if !(min.is_finite() && max.is_finite()) {
            return Err(Invalid::NotFinite);
        }
        if min >= max {
            return Err(Invalid::Empty);
        }
        if res.is_nan() || res <= 0.0 {
            return Err(Invalid::Resolution);
        }
        let delta = max - min;
        let values = delta / res;
        if !delta.is_finite() || !values.is_finite() {
            return Err(Invalid::Overflow);
        }
        let values = values.clamp(1.0, MAX_STEPS);
        let steps = values.ceil() as u32;
        Ok(Self::assemble(min, max, delta, steps))
    }

    /// The range from its wire constants: `min`, `delta = max - min` and `M` (`steps`).
    const fn assemble(min: f32, max: f32, delta: f32, steps: u32) -> Self {
        // Stable by the cheap test (see `is_stable_by_bound`): at most 2^20 steps, each at
        // least 4 ulps of the range's largest magnitude.
        let largest = min.abs().max(max.abs());
        let ulp = f32::from_bits(largest.to_bits() + 1) - largest;
        let stable_by_bound = steps <= STABLE_STEPS_BY_BOUND && delta / steps as f32 >= 4.0 * ulp;
        CompressedFloat {
            min,
            max,
            delta,
            steps,
            steps_f: steps as f32,
            width: bits_required(0, steps as i64),
            stable_by_bound,
            inv_delta: 1.0 / delta as f64,
            inv_steps: 1.0 / (steps as f32) as f64,
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
    /// `max - min`, rounded to `f32` (the standard's `delta`).
    pub const fn delta(&self) -> f32 {
        self.delta
    }
    /// `M`: the largest code (the standard's `max_integer_value`).
    pub const fn steps(&self) -> u32 {
        self.steps
    }
    /// Bits per code on the wire.
    pub const fn width(&self) -> u32 {
        self.width
    }

    /// Whether every code `0..=M` survives read then write ([`Self::decode`], then
    /// [`Self::encode`]): the ranges on which every accepted packet re-encodes to the same
    /// bytes. Exact: `false` above [`MAX_STABLE_STEPS`], `true` when
    /// [`Self::is_stable_by_bound`], and otherwise every code is checked (at most 2^23 + 2 of
    /// them; a few milliseconds in a release build).
    ///
    /// A `const fn`: a constant range can assert it at compile time (see
    /// [`Self::new_const`]). The ranges that need the per-code check take compile time in
    /// proportion to `M`, and past about 2^17 steps the compiler's `long_running_const_eval`
    /// lint stops them: check those at run time.
    pub const fn is_stable(&self) -> bool {
        if self.steps > MAX_STABLE_STEPS {
            return false;
        }
        if self.stable_by_bound {
            return true;
        }
        // A sparse pass first: an unstable range usually loses codes all over, so most are
        // found here without the full pass.
        let stride = if self.steps >> 12 > 1 {
            self.steps >> 12
        } else {
            1
        };
        let mut code = 0;
        while code <= self.steps {
            if !self.reencodes(code) {
                return false;
            }
            code += stride;
        }
        let mut code = 0;
        while code <= self.steps {
            if !self.reencodes(code) {
                return false;
            }
            code += 1;
        }
        true
    }

    /// A cheap sufficient test of [`Self::is_stable`]: at most [`STABLE_STEPS_BY_BOUND`]
    /// (2^20) steps, each at least 4 ulps of the largest magnitude in the range. Pinned by a
    /// property test over random ranges and by exhaustive checks of every code; a rounding-error
    /// bound proves it from 8 ulps.
    pub const fn is_stable_by_bound(&self) -> bool {
        self.stable_by_bound
    }

    /// Whether `code` (at most `M`) writes back as itself after a read: what a conforming
    /// writer can have sent. Every code of a stable range does; on other ranges a code that
    /// does not is one only a non-conforming writer sends (a provenance signal, never a reason
    /// to refuse).
    #[inline]
    pub const fn reencodes(&self, code: u32) -> bool {
        self.encode(self.decode(code)) == code
    }

    /// The code the writer sends for `v`: the standard's formula (clamped into range; NaN
    /// sends the code of `min`), with the top capped at `M`.
    ///
    /// The division is `div` (the same `f32` quotient, or one that gives the same code: below
    /// 2^-126 both give code 0). The clamp is folded into the saturating cast and the final
    /// cap: for `n <= 0` or NaN, `n * M + 0.5` is at most 0.5 or NaN, which the cast turns into
    /// 0, the code of `n = 0`; for `n > 1`, `n * M >= M` (rounding is monotone and `M` is an
    /// `f32`), so the cast gives at least `M` and the cap gives `M`, the code of `n = 1`.
    #[inline(always)]
    pub const fn encode(&self, v: f32) -> u32 {
        let shifted = v - self.min;
        let n = div(shifted, self.inv_delta);
        // Two roundings, as the standard requires: the product, then the sum.
        let scaled = n * self.steps_f;
        // floor(x) for x = scaled + 0.5 >= 0.5: truncation is the same there, and the cast
        // truncates (saturating: NaN and negatives give 0) without calling libm's floorf,
        // which baseline x86-64 needs.
        let code = (scaled + 0.5) as u32;
        if code > self.steps { self.steps } else { code }
    }

    /// The value the reader produces for `code` (a reader refuses codes above [`Self::steps`]
    /// before asking): `((code / M) * delta) + min`, each step rounded to `f32` (the code
    /// converts to `f32` first, rounding above 2^24; the division by `div`, whose quotient is 0
    /// or at least 2^-32, a normal number).
    #[inline(always)]
    pub const fn decode(&self, code: u32) -> f32 {
        // Up to 2^24 the code is an exact f32: one conversion to f64 instead of two.
        let c = if self.steps <= EXACT_CODES {
            code as f64
        } else {
            (code as f32) as f64
        };
        self.scale((c * self.inv_steps) as f32)
    }

    /// `n * delta + min`, each step rounded to `f32`.
    #[inline(always)]
    const fn scale(&self, n: f32) -> f32 {
        let scaled = n * self.delta;
        scaled + self.min
    }
}

/// `1 / sqrt(2)`: no component of a unit quaternion other than the largest can exceed it.
const SMALL_LIMIT: f32 = std::f32::consts::FRAC_1_SQRT_2;

/// Smallest-three quaternion encoding with `bits` bits per component (2..=16): seed 000's
/// writer (WIRE.md, "Smallest-three quaternions").
///
/// Wire: 2 bits, the index (x = 0, y = 1, z = 2, w = 3) of the component with the largest
/// magnitude (the first one on ties); then the other three in index order, each as
/// `code = min(floor((c + 1/√2) / √2 * (2^bits - 1) + 0.5), 2^bits - 1)`. The writer negates the
/// quaternion when the largest component is negative (q and -q are the same rotation), so the
/// reader rebuilds it as `sqrt(max(0, 1 - a² - b² - c²))`.
///
/// A reader accepts every index and every code: when two components nearly tie, the writer's
/// largest one can be rebuilt slightly smaller than a sent one (about 0.1-0.2% of random
/// rotations: 0.168% at 9 bits, 0.084% at 10, WIRE.md), and a seed-style writer sends exactly that. Such an encoding does
/// not re-encode to the same bits ([`SmallestThree::reencodes`]): the one place where an
/// accepted demo packet may re-encode to other bytes.
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

    /// Rebuilds `[x, y, z, w]` from the largest index and the three codes: the three sent
    /// components decoded in index order, the largest one rebuilt. `None` only for an index
    /// above 3 or a code above [`Self::max_code`] (which no reader passes on).
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
                *slot = small[k];
                k += 1;
            }
        }
        Some(q)
    }

    /// Whether an encoding writes back as itself after a read: false for a near tie, where a
    /// sent component comes out at least as large as the rebuilt largest one (a smaller index
    /// with a magnitude `>=` it, or a larger index with a magnitude `>` it). A seed-style writer
    /// sends such encodings; readers accept them.
    pub fn reencodes(&self, largest: u32, codes: [u32; 3]) -> bool {
        self.decode(largest, codes)
            .is_some_and(|q| self.encode(q) == (largest, codes))
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

    /// Stability decided at compile time: a stable range by the bound, an unstable one past
    /// 2^23 + 1 steps, and one that needs the per-code check (2^12 steps of 1 ulp near 1).
    const STABILITY_AT_COMPILE_TIME: [bool; 3] = {
        let by_bound = CompressedFloat::new_const(-512.0, 512.0, 0.01).unwrap();
        let too_fine = CompressedFloat::new_const(0.0, 100_000.0, 0.001).unwrap();
        let checked = CompressedFloat::new_const(1.0, 1.000_488_3, 1.192_092_9e-7).unwrap();
        [
            by_bound.is_stable(),
            too_fine.is_stable(),
            checked.is_stable(),
        ]
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
    fn stability_is_decided_at_compile_time_as_at_run_time() {
        let checked = CompressedFloat::new(1.0, 1.000_488_3, 1.192_092_9e-7).unwrap();
        assert!(
            !checked.is_stable_by_bound(),
            "the third range needs the per-code check"
        );
        assert!(checked.steps() > 4000 && checked.steps() < 5000);
        let by_brute_force = (0..=checked.steps()).all(|c| checked.reencodes(c));
        assert_eq!(STABILITY_AT_COMPILE_TIME, [true, false, by_brute_force]);
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
        assert!(CompressedFloat::new(0.0, 1.0, -1.0).is_err());
        assert!(CompressedFloat::new(0.0, 1.0, f32::NAN).is_err());
        assert!(CompressedFloat::new(0.0, 1.0, f32::NEG_INFINITY).is_err());
        assert!(CompressedFloat::new(0.0, f32::INFINITY, 1.0).is_err());
        assert!(CompressedFloat::new(-f32::MAX, f32::MAX, 1.0).is_err());
        // (max - min) / res is infinite in f32: no wire meaning (serialize 1.0).
        let e = CompressedFloat::new(0.0, 1e30, 1e-30).unwrap_err();
        assert!(e.contains("overflows f32"), "{e}");
        // A resolution finer than 2^32 steps is clamped to the widest code, as the standard
        // says.
        let q = CompressedFloat::new(0.0, 1.0, 1e-12).unwrap();
        assert_eq!(q.steps(), 4_294_967_040);
        assert_eq!(q.width(), 32);
        assert!(q.encode(1.0) <= q.steps());
        assert!(!q.is_stable());
    }

    /// Resolution +inf (issue 29.15): `(max - min) / res` is 0, clamped to 1 as the standard
    /// says, so one bit: 7.0 in [0, 10] is the code 1 (serialize.rs writes the bit `1`), read
    /// back as 10. Refused before.
    #[test]
    fn an_infinite_resolution_is_one_bit() {
        let q = CompressedFloat::new(0.0, 10.0, f32::INFINITY).unwrap();
        assert_eq!((q.steps(), q.width()), (1, 1));
        assert_eq!(q.encode(7.0), 1);
        assert_eq!(q.encode(4.0), 0);
        assert_eq!((q.decode(0), q.decode(1)), (0.0, 10.0));
        assert!(q.is_stable());
        const Q: Option<CompressedFloat> = CompressedFloat::new_const(0.0, 10.0, f32::INFINITY);
        assert_eq!(Q.map(|c| c.steps()), Some(1));
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
    fn game_ranges_are_stable_code_by_code() {
        for (min, max, res) in RANGES {
            let q = CompressedFloat::new(min, max, res).unwrap();
            assert!(q.is_stable(), "{min}..={max} at {res}");
            let lost = (0..=q.steps()).find(|&c| q.encode(q.decode(c)) != c);
            assert_eq!(lost, None, "{min}..={max} at {res}");
        }
    }

    /// `is_stable` against a code-by-code check over random small ranges of every shape
    /// (steps from 1 to a few ulps wide, bounds from tiny to huge), and the bound never claims
    /// a range that loses a code.
    #[test]
    fn is_stable_agrees_with_every_code() {
        let mut next = xorshift(0x5DEE_CE66_D1CE_4E5B);
        let (mut stable, mut unstable, mut unproven_stable) = (0, 0, 0);
        for _ in 0..3000 {
            let m = 1 + (next() % 4096) as u32;
            let exp = (next() % 40) as i32 - 20;
            let min = ((next() % 2001) as f32 / 1000.0 - 1.0) * 2f32.powi(exp);
            let ulp = f32::from_bits(min.abs().to_bits() + 1) - min.abs();
            let span = ulp.max(f32::MIN_POSITIVE) * m as f32 * (next() % 64 + 1) as f32 / 8.0;
            let Ok(q) = CompressedFloat::new(min, min + span, span / m as f32) else {
                continue;
            };
            let every = (0..=q.steps()).all(|c| q.encode(q.decode(c)) == c);
            assert_eq!(
                q.is_stable(),
                every,
                "{min}..={} at {}",
                min + span,
                span / m as f32
            );
            if q.is_stable_by_bound() {
                assert!(every, "the bound claims {min}..={}", min + span);
            }
            match (every, q.is_stable_by_bound()) {
                (true, true) => stable += 1,
                (true, false) => unproven_stable += 1,
                (false, _) => unstable += 1,
            }
        }
        // The sample reaches all three kinds.
        assert!(
            stable > 100 && unstable > 100 && unproven_stable > 100,
            "{stable} {unstable} {unproven_stable}"
        );
    }

    /// Past 2^23 + 1 steps, the code 2^23 + 1 is never written (see [`MAX_STABLE_STEPS`]).
    #[test]
    fn no_range_past_max_stable_steps_writes_2_pow_23_plus_1() {
        let mut next = xorshift(0x0123_4567_89AB_CDEF);
        for _ in 0..2000 {
            let m = MAX_STABLE_STEPS + 1 + (next() % (1 << 28)) as u32;
            let min = (next() % 20001) as f32 / 10.0 - 1000.0;
            let span = (m as f32) / 2f32.powi((next() % 30) as i32);
            let Ok(q) = CompressedFloat::new(min, min + span, span / m as f32) else {
                continue;
            };
            if q.steps() <= MAX_STABLE_STEPS {
                continue;
            }
            let target = MAX_STABLE_STEPS;
            assert!(!q.reencodes(target), "M = {}", q.steps());
            // Nothing near its value writes it either.
            let v = q.decode(target);
            let mut w = v;
            for _ in 0..8 {
                assert_ne!(q.encode(w), target);
                w = w.next_down();
            }
            let mut w = v;
            for _ in 0..8 {
                assert_ne!(q.encode(w), target);
                w = w.next_up();
            }
            assert!(!q.is_stable());
        }
    }

    /// Whether every code of `M` steps over `min..=min + span` survives decode then encode.
    fn family_stable(min: f32, span: f32, m: u32) -> bool {
        let q = CompressedFloat::new(min, min + span, span / m as f32).unwrap();
        (0..=q.steps()).all(|code| q.encode(q.decode(code)) == code)
    }

    /// Measures the stability boundary: for ranges near zero that divide evenly, every M up to
    /// `MAX_STABLE_STEPS` (2^23 + 1) tried keeps every code, and none above it does. Slow in
    /// debug builds:
    /// `cargo test --release -p bitlens-codec --lib stability_boundary -- --ignored --nocapture`.
    #[test]
    #[ignore = "exhaustive over up to 32M codes per range; run in release"]
    fn stability_boundary_holds_exhaustively() {
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
                    assert_eq!(ok, m <= MAX_STABLE_STEPS, "{name}: M = {m}");
                    let q = CompressedFloat::new(min, min + span, span / m as f32).unwrap();
                    assert_eq!(q.is_stable(), ok, "{name}: M = {m}");
                }
            }
            println!("{line}");
            // Bisect the boundary between 2^23 + 1 (stable) and 2^24 - 1 (not).
            let (mut good, mut bad) = (MAX_STABLE_STEPS, (1u32 << 24) - 1);
            while bad - good > 1 {
                let mid = good + (bad - good) / 2;
                let (min, span) = range(mid);
                if family_stable(min, span, mid) {
                    good = mid
                } else {
                    bad = mid
                }
            }
            assert_eq!(good, MAX_STABLE_STEPS, "{name}");
            println!("{name:<12} largest stable M by bisection: {good}");
        }
    }

    // ---- the division by reciprocal (`div`) against the standard's `f32` arithmetic ----

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
    fn quaternion_roundtrip_and_near_ties() {
        let q = SmallestThree::new(10).unwrap();
        let identity = [0.0, 0.0, 0.0, 1.0];
        let (largest, codes) = q.encode(identity);
        assert_eq!(largest, 3);
        let back = q.decode(largest, codes).unwrap();
        assert!((back[3] - 1.0).abs() < 1e-3);
        assert_eq!(q.encode(back), (largest, codes));
        // -q encodes like q.
        assert_eq!(q.encode([0.0, 0.0, 0.0, -1.0]), (largest, codes));
        // A "largest" rebuilt smaller than a sent component: accepted as sent, not re-encoded.
        let big = q.encode_component(0.7);
        let back = q.decode(0, [big, big, big]).unwrap();
        assert_eq!(
            back[0], 0.0,
            "1 - 3 * 0.7^2 < 0: the largest is rebuilt as 0"
        );
        assert!(!q.reencodes(0, [big, big, big]));
        assert!(q.reencodes(largest, codes));
        // Only arguments no reader passes are refused.
        assert_eq!(q.decode(4, codes), None);
        assert_eq!(q.decode(0, [1024, 0, 0]), None);
    }

    /// Issue 21's reproduction: normalize(0.53, 0.42, 0.53, 0.51) at 10 bits, x and z tie, the
    /// seed's writer picks x (the first) and sends z quantized, which comes out larger than the
    /// x rebuilt from the three codes.
    #[test]
    fn a_near_tie_is_what_the_seeds_writer_sends() {
        let q = SmallestThree::new(10).unwrap();
        let v: [f32; 4] = [0.53, 0.42, 0.53, 0.51];
        let norm = v.iter().map(|c| c * c).sum::<f32>().sqrt();
        let (largest, codes) = q.encode(v.map(|c| c / norm));
        assert_eq!((largest, codes), (0, [816, 895, 881]));
        let back = q.decode(largest, codes).unwrap();
        assert!(back[2] > back[0], "{back:?}");
        assert!(!q.reencodes(largest, codes));
        assert_eq!(q.encode(back).0, 2, "re-encoding picks the sent z");
        for (i, c) in back.iter().enumerate() {
            assert!((c - v[i] / norm).abs() < 2e-3, "{back:?}");
        }
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
