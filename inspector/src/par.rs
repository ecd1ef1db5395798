//! Splitting work over the machine's cores (`check` and `decode` use both cores of a 2-core
//! machine): plain scoped threads over contiguous ranges, merged in order.

use std::ops::Range;

/// How many threads to use: the available parallelism, at most 8.
pub fn threads() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 8)
}

/// `0..len` in [`threads`] contiguous, nearly equal parts (fewer for tiny inputs).
pub fn split(len: usize) -> Vec<Range<usize>> {
    let parts = threads().min(len.div_ceil(1024)).max(1);
    let step = len.div_ceil(parts);
    (0..parts)
        .map(|k| (k * step).min(len)..((k + 1) * step).min(len))
        .collect()
}

/// Runs `f` on every range in its own scoped thread and returns the results in order.
///
/// # Errors
/// When a thread panicked: a bug, reported instead of silently dropping that range's work.
pub fn map<T: Send>(
    ranges: &[Range<usize>],
    f: impl Fn(Range<usize>) -> T + Sync,
) -> anyhow::Result<Vec<T>> {
    let f = &f;
    std::thread::scope(|scope| {
        let handles: Vec<_> = ranges
            .iter()
            .map(|r| {
                let r = r.clone();
                scope.spawn(move || f(r))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().map_err(|_| {
                    anyhow::anyhow!("a decoding thread panicked: a bug in bitlens, please report it with this capture")
                })
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_keeps_order_and_reports_panics() {
        let parts = split(10_000);
        let sums = map(&parts, |r| r.sum::<usize>()).unwrap();
        assert_eq!(sums.iter().sum::<usize>(), (0..10_000usize).sum::<usize>());
        let panicky = map(&[0..1, 1..2], |r| {
            assert!(r.start == 0, "boom");
            r.start
        });
        assert!(panicky.unwrap_err().to_string().contains("panicked"));
    }

    #[test]
    fn split_covers_everything_once_in_order() {
        for len in [0, 1, 1023, 1024, 5000, 1_000_001] {
            let parts = split(len);
            assert_eq!(parts.first().map_or(0, |r| r.start), 0);
            assert_eq!(parts.last().map_or(0, |r| r.end), len);
            for w in parts.windows(2) {
                assert_eq!(w[0].end, w[1].start);
            }
        }
    }
}
