//! `bit_runs`: the bit layer's runs ([`BitWriter::write_run`], [`BitReader::read_run`]) against
//! one call per field, on arbitrary widths, values, buffer sizes, starting offsets and bytes.

use arbitrary::Unstructured;
use bitlens_codec::bits::{BitReader, BitWriter, Overflow, PastEnd};

/// A run of 1, 4 or 5 fields of arbitrary widths (known only at run time here; constant widths,
/// which the runs are made for and the compiler folds, are checked in release builds by the
/// bitpacker bench's byte comparison and the entity floor's):
/// - written as runs and field by field into buffers of 0..=48 bytes after 0..=7 lead bits, and
///   read back (`check_runs`);
/// - the rest of the input (hostile bytes) read run by run and field by field: the same values,
///   and a run past the end is refused whole (the run's counts, nothing consumed). Never a panic.
pub fn bit_runs(data: &[u8]) {
    bit_runs_case(data);
}

/// [`bit_runs`], returning what the input exercised: the number of fields per run and how many
/// hostile bytes were read (`None` when the input ended before the hostile part). Names the
/// corpus seeds.
pub fn bit_runs_case(data: &[u8]) -> Option<(usize, usize)> {
    let mut u = Unstructured::new(data);
    let shape = u.int_in_range(0u8..=2).ok()?;
    match shape {
        0 => runs::<1>(&mut u).ok().map(|h| (1, h)),
        1 => runs::<4>(&mut u).ok().map(|h| (4, h)),
        _ => runs::<5>(&mut u).ok().map(|h| (5, h)),
    }
}

/// Returns the number of hostile bytes read.
fn runs<const K: usize>(u: &mut Unstructured<'_>) -> arbitrary::Result<usize> {
    let mut widths = [0u32; K];
    for w in &mut widths {
        *w = 1 + u32::from(u.arbitrary::<u8>()?) % 32;
    }
    let total: usize = widths.iter().map(|&n| n as usize).sum();
    let len = u.int_in_range(0..=48usize)?;
    let lead = u.int_in_range(0..=7u32)?;
    let count = u.int_in_range(0..=16usize)?;
    let mut values = Vec::with_capacity(count);
    for _ in 0..count {
        let mut run = [0u32; K];
        for (v, &n) in run.iter_mut().zip(&widths) {
            *v = u.arbitrary::<u32>()? & (u32::MAX >> (32 - n));
        }
        values.push(run);
    }
    check_runs(widths, len, lead, &values);

    let hostile = u.bytes(u.len())?;
    let mut rr = BitReader::new(hostile);
    let mut rf = BitReader::new(hostile);
    loop {
        let remaining = rr.bits_remaining();
        match rr.read_run(widths) {
            Ok(values) => {
                for (v, n) in values.into_iter().zip(widths) {
                    assert_eq!(
                        rf.read_bits(n),
                        Ok(v),
                        "runs and fields read different values"
                    );
                }
            }
            Err(e) => {
                assert_eq!(
                    e,
                    PastEnd {
                        needed: total,
                        remaining
                    }
                );
                assert!(total > remaining, "a run that fits was refused");
                assert_eq!(
                    rr.bits_remaining(),
                    remaining,
                    "a refused run consumed bits"
                );
                break;
            }
        }
    }
    Ok(hostile.len())
}

/// Writes `values` (each within its width) run by run and field by field into a buffer of `len`
/// bytes after `lead` bits, until the first run that does not fit, and checks:
/// - the same bytes, and none past `len` touched;
/// - a refused run is refused whole, with the run's counts, and writes nothing;
/// - what was written reads back run by run, and a run past the end is then refused whole, with
///   the run's counts, consuming nothing.
///
/// Shared by the fuzz harness above and the bit layer's unit test. Returns the runs written.
pub fn check_runs<const K: usize>(
    widths: [u32; K],
    len: usize,
    lead: u32,
    values: &[[u32; K]],
) -> usize {
    let total: usize = widths.iter().map(|&n| n as usize).sum();
    // Three bytes past the buffer, filled like it, must come out untouched.
    let (mut by_run, mut by_field) = (vec![0xA5u8; len + 3], vec![0xA5u8; len + 3]);
    let mut wr = BitWriter::new(&mut by_run[..len]);
    let mut wf = BitWriter::new(&mut by_field[..len]);
    let lead = if lead > 0 && wr.write_bits(1, lead).is_ok() {
        wf.write_bits(1, lead).expect("the same lead fits both");
        lead
    } else {
        0
    };
    let mut written = 0;
    for run in values {
        let mut fields = [(0u32, 0u32); K];
        for ((f, &v), &n) in fields.iter_mut().zip(run).zip(&widths) {
            *f = (v, n);
        }
        let before = wr.bits_written();
        match wr.write_run(fields) {
            Ok(()) => {
                for (v, n) in fields {
                    wf.write_bits(v, n)
                        .expect("a field of a run that fitted fits");
                }
                written += 1;
            }
            Err(e) => {
                let available = len * 8 - before;
                assert_eq!(
                    e,
                    Overflow {
                        needed: total,
                        available
                    }
                );
                assert!(total > available, "a run that fits was refused");
                assert_eq!(wr.bits_written(), before, "a refused run wrote bits");
                break;
            }
        }
    }
    let used = wr.flush();
    assert_eq!(used, wf.flush());
    assert_eq!(
        by_run, by_field,
        "runs and fields wrote different bytes (len {len}, lead {lead}, widths {widths:?})"
    );

    let mut r = BitReader::new(&by_run[..used]);
    if lead > 0 {
        r.read_bits(lead).expect("the lead reads back");
    }
    for run in &values[..written] {
        assert_eq!(
            r.read_run(widths).as_ref(),
            Ok(run),
            "a run did not read back"
        );
    }
    let left = r.bits_remaining();
    if total > left {
        assert_eq!(
            r.read_run(widths),
            Err(PastEnd {
                needed: total,
                remaining: left
            })
        );
        assert_eq!(r.bits_remaining(), left, "a refused run consumed bits");
    }
    written
}
