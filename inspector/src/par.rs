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

#[cfg(test)]
mod tests {
    use super::*;

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
