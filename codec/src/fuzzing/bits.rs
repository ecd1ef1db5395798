//! `bit_runs`: the bit layer's runs ([`BitWriter::write_run`], [`BitReader::read_run`]) against
//! one call per field, on arbitrary widths, values, buffer sizes, starting offsets and bytes.

use crate::bits::{BitReader, BitWriter, Overflow, PastEnd};
use arbitrary::Unstructured;

/// A run of 1, 4 or 5 fields of arbitrary widths (known only at run time here; the constant
/// widths the runs are made for are pinned by the unit tests and the bench's checks):
/// - written as runs and field by field into buffers of 0..=48 bytes after 0..=7 lead bits:
///   the same bytes, and a run that does not fit is refused whole, with the run's counts and
///   nothing written;
/// - what was written reads back run by run;
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

    let (mut by_run, mut by_field) = (vec![0u8; len], vec![0u8; len]);
    let mut wr = BitWriter::new(&mut by_run);
    let mut wf = BitWriter::new(&mut by_field);
    let lead = if lead > 0 && wr.write_bits(0, lead).is_ok() {
        wf.write_bits(0, lead).expect("the same lead fits both");
        lead
    } else {
        0
    };
    let mut written = Vec::new();
    for _ in 0..count {
        let mut fields = [(0u32, 0u32); K];
        for (f, &n) in fields.iter_mut().zip(&widths) {
            let mask = if n == 32 { u32::MAX } else { (1 << n) - 1 };
            *f = (u.arbitrary::<u32>()? & mask, n);
        }
        let before = wr.bits_written();
        match wr.write_run(fields) {
            Ok(()) => {
                for (v, n) in fields {
                    wf.write_bits(v, n)
                        .expect("a field of a run that fitted fits");
                }
                written.push(fields.map(|(v, _)| v));
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
    assert_eq!(by_run, by_field, "runs and fields wrote different bytes");

    let mut r = BitReader::new(&by_run[..used]);
    if lead > 0 {
        r.read_bits(lead).expect("the lead reads back");
    }
    for values in &written {
        assert_eq!(
            r.read_run(widths).as_ref(),
            Ok(values),
            "a run did not read back"
        );
    }

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
