//! Compressed floats against serialize 1.0's formula, written a second time from the standard's
//! text (`bitlens_testkit::fuzzing::quantize`): the worked example, issue 21's codes between
//! quanta, the two deviations at the top, every code of the benchmark range, random values of
//! game, inexact and extreme ranges.

use bitlens_codec::CompressedFloat;
use bitlens_testkit::fuzzing::quantize::{standard_code, standard_value};

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

/// The standard's worked example (serialize 1.0, "compressed_float"): over `[0, 10]` at
/// 0.01 the f32 arithmetic gives 1, 3, 11 and 1000 where `f64` gives 0, 2, 10 and 999; a
/// value on a quantum agrees either way.
#[test]
fn the_standards_worked_example() {
    let q = CompressedFloat::new(0.0, 10.0, 0.01).unwrap();
    for (v, code) in [
        (0.005, 1),
        (0.025, 3),
        (0.105, 11),
        (9.995, 1000),
        (2.5, 250),
    ] {
        assert_eq!(q.encode(v), code, "{v}");
        assert_eq!(u64::from(code), standard_code(0.0, 10.0, 0.01, v));
    }
}

/// Issue 21's reproductions: codes the standard's writer sends between quanta of ranges
/// with more steps than f32 resolves; bitlens once settled them to a neighbour and refused
/// them on read.
#[test]
fn codes_between_quanta_are_the_standards() {
    let cases: [(f32, f32, f32, f32, u32); 3] = [
        (0.0, 12_582_911.0, 1.0, 7_991_359.5, 7_991_360),
        (0.0, 100_000.0, 0.001, 18_712.252, 18_712_250),
        (100.0, 200.0, 1e-5, 181.859, 0x7C_E82C),
    ];
    for (min, max, res, v, code) in cases {
        let q = CompressedFloat::new(min, max, res).unwrap();
        assert_eq!(q.encode(v), code, "{min}..={max} at {res}: {v}");
        assert_eq!(u64::from(code), standard_code(min, max, res, v));
        assert_eq!(
            q.decode(code).to_bits(),
            standard_value(min, max, res, code).to_bits()
        );
        assert!(!q.is_stable(), "{min}..={max} at {res}");
    }
    // The second one's code does not come back: a reader accepts it all the same.
    let q = CompressedFloat::new(0.0, 100_000.0, 0.001).unwrap();
    assert_eq!(q.steps(), 99_999_992);
    assert!(!q.reencodes(18_712_251));
}

/// The two edges where the standard's formula itself is wrong and bitlens caps at `M`
/// (WIRE.md, "Deviations").
#[test]
fn odd_steps_near_2_pow_24_never_exceed_m() {
    // Odd M in [2^23, 2^24): the formula rounds the top of the range to M + 1.
    let m = (1u32 << 23) + 1;
    let q = CompressedFloat::new(0.0, m as f32, 1.0).unwrap();
    assert_eq!(q.steps(), m);
    assert_eq!(
        standard_code(0.0, m as f32, 1.0, m as f32),
        u64::from(m) + 1
    );
    assert_eq!(q.encode(m as f32), m);
    assert!(q.is_stable(), "the cap makes M = 2^23 + 1 stable");
    // [0, 16777215] at 1: M = 2^24 - 1, and the formula's 2^24 does not fit 24 bits.
    let q = CompressedFloat::new(0.0, 16_777_215.0, 1.0).unwrap();
    assert_eq!((q.steps(), q.width()), (16_777_215, 24));
    assert_eq!(standard_code(0.0, 16_777_215.0, 1.0, 16_777_215.0), 1 << 24);
    assert_eq!(q.encode(16_777_215.0), 16_777_215);
}

/// `encode` is the standard's formula capped at `M`.
fn agrees(q: &CompressedFloat, (min, max, res): (f32, f32, f32), v: f32) -> bool {
    u64::from(q.encode(v)) == standard_code(min, max, res, v).min(u64::from(q.steps()))
}

/// Every code of the entity benchmark's range decodes to the standard's value, and every
/// value at and next to a code's value quantizes to the standard's code.
#[test]
fn bench_range_matches_the_standard_for_every_code() {
    let range = (-1000.0, 1000.0, 0.01);
    let q = CompressedFloat::new(range.0, range.1, range.2).unwrap();
    assert_eq!(q.steps(), 200_000);
    assert!(q.is_stable_by_bound());
    for code in 0..=q.steps() {
        let v = q.decode(code);
        let want = standard_value(range.0, range.1, range.2, code);
        assert_eq!(v.to_bits(), want.to_bits(), "{code}");
        for w in [v.next_down(), v, v.next_up()] {
            assert!(agrees(&q, range, w), "{w:e}");
        }
        assert_eq!(q.encode(v), code);
    }
}

/// Codes of game ranges, inexact ranges and extremes, and random values (every bit
/// pattern: NaN, infinities, out of range), against the standard.
#[test]
fn encode_and_decode_match_the_standard() {
    let mut next = xorshift(0x2545_F491_4F6C_DD1D);
    let extremes = [
        (-1000.0, 1000.0, 0.01),
        (0.0, 1.0, 1e-12),
        (1.0e-40, 3.0e-39, 1.0e-45),
        (-1.0e38, 1.0e38, 1.0e30),
        (0.0, 100_000.0, 0.001),
        (100.0, 200.0, 1e-5),
        (-7.25, 3.5, 3e-7),
        (0.0, 12_582_911.0, 1.0),
        (0.0, 16_777_215.0, 1.0),
    ];
    for range @ (min, max, res) in RANGES.into_iter().chain(extremes) {
        let q = CompressedFloat::new(min, max, res).unwrap();
        for code in (0..=q.steps()).step_by((q.steps() / 100_000).max(1) as usize) {
            let want = standard_value(min, max, res, code);
            assert_eq!(
                q.decode(code).to_bits(),
                want.to_bits(),
                "{min}..={max} {code}"
            );
        }
        for _ in 0..200_000 {
            let v = f32::from_bits(next() as u32);
            assert!(agrees(&q, range, v), "{min}..={max} {v:e}");
            // And values inside the range, where most of them are.
            let inside = min + (max - min) * (next() as u32 as f32 / u32::MAX as f32);
            assert!(agrees(&q, range, inside), "{min}..={max} {inside:e}");
        }
    }
}

/// Every `f32` (all 2^32 bit patterns) quantizes to the standard's code in the entity
/// benchmark's range, one near zero and one finer than f32 resolves. Takes minutes in
/// release: `cargo test --release -p bitlens-codec --test compressed_float every_f32 -- --ignored`.
#[test]
#[ignore = "exhaustive over all 2^32 f32 bit patterns; run in release"]
fn every_f32_quantizes_like_the_standard() {
    for range @ (min, max, res) in [
        (-1000.0, 1000.0, 0.01),
        (0.0, 1.0, 0.001),
        (100.0, 200.0, 1e-5),
    ] {
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
                        if !agrees(q, range, v) {
                            panic!("{min}..={max}: {v:e} ({bits:#010x})");
                        }
                    }
                });
            }
        });
    }
}
