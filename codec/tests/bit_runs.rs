//! `BitWriter::write_run` / `BitReader::read_run` against field-by-field writes and reads, with
//! the checker the `bit_runs` fuzz harness uses.

use bitlens_testkit::fuzzing::bits::check_runs;

fn next(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

fn low_mask(n: u32) -> u64 {
    if n >= 64 { u64::MAX } else { (1u64 << n) - 1 }
}

/// Runs against field-by-field writes and reads (`bitlens_testkit::fuzzing::bits::check_runs`, the
/// fuzz harness's checker): every buffer size from 0 to 40 bytes, every starting offset 0..8
/// bits, run shapes that fit one window, need two, and exceed the reader's 120 bits.
#[test]
fn runs_agree_with_field_by_field() {
    fn check<const K: usize>(widths: [u32; K], x: &mut u64) {
        for len in 0..=40usize {
            for lead in 0..8u32 {
                let values: Vec<[u32; K]> = (0..12)
                    .map(|_| widths.map(|n| (next(x) as u32) & (low_mask(n) as u32)))
                    .collect();
                check_runs(widths, len, lead, &values);
            }
        }
    }
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    check([1, 32, 32, 32, 23], &mut x);
    check([3, 10, 24, 1, 32], &mut x);
    check([1], &mut x);
    check([32, 32], &mut x);
    check([17, 32, 5], &mut x);
    check([32, 32, 32, 24], &mut x);
    check([32, 32, 32, 32, 7], &mut x);
    check([7; 9], &mut x);
    // Widths known only at run time, half of them 32 so that runs near the reader's 120
    // bits (windows reloaded late in the run) come up often.
    let mut width = || {
        let x = next(&mut x);
        if x & 1 == 0 {
            32
        } else {
            1 + (x >> 8) as u32 % 32
        }
    };
    let shapes5: Vec<[u32; 5]> = (0..150).map(|_| [(); 5].map(|()| width())).collect();
    let shapes4: Vec<[u32; 4]> = (0..60).map(|_| [(); 4].map(|()| width())).collect();
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for w in shapes5 {
        check(w, &mut x);
    }
    for w in shapes4 {
        check(w, &mut x);
    }
}
