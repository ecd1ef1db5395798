//! Splitting work over the machine's cores (`check` and `decode` use both cores of a 2-core
//! machine): plain scoped threads over contiguous ranges, merged in order, and an ordered
//! pipeline of output chunks for `decode`.

use std::ops::Range;
use std::sync::mpsc;

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

/// Runs `work(k, buffer)` for every `k` in `0..n` on [`threads`] worker threads, and hands the
/// filled buffers to `sink` on the calling thread in the order of `k`.
///
/// Each worker has at most a few buffers in flight and gets them back after `sink`, so memory
/// stays bounded whatever `n` is, and the buffers stay mapped and warm in cache (fresh buffers
/// per chunk made page faults and cache misses on the stores a third of `decode --json`).
/// `sink` returns `Ok(false)` to stop early (a closed pipe); the workers then stop too.
///
/// # Errors
/// What `sink` returned, or a worker's panic (a bug), reported instead of losing that output.
pub fn ordered(
    n: usize,
    work: impl Fn(usize, &mut Vec<u8>) + Sync,
    mut sink: impl FnMut(&[u8]) -> anyhow::Result<bool>,
) -> anyhow::Result<()> {
    /// Filled buffers a worker may have queued before it waits for the writer.
    const QUEUED: usize = 2;
    let workers = threads().min(n).max(1);
    let work = &work;
    std::thread::scope(|scope| {
        let mut filled = Vec::with_capacity(workers);
        let mut returned = Vec::with_capacity(workers);
        let mut handles = Vec::with_capacity(workers);
        for w in 0..workers {
            let (to_sink, from_worker) = mpsc::sync_channel::<Vec<u8>>(QUEUED);
            let (to_worker, back) = mpsc::channel::<Vec<u8>>();
            handles.push(scope.spawn(move || {
                for k in (w..n).step_by(workers) {
                    let mut buf = back.try_recv().unwrap_or_default();
                    buf.clear();
                    work(k, &mut buf);
                    if to_sink.send(buf).is_err() {
                        return; // the writer stopped
                    }
                }
            }));
            filled.push(from_worker);
            returned.push(to_worker);
        }
        let mut result = Ok(());
        for k in 0..n {
            let w = k % workers;
            // A closed channel means the worker panicked: the join below says so.
            let Ok(buf) = filled[w].recv() else { break };
            match sink(&buf) {
                Ok(true) => {}
                Ok(false) => break,
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
            let _ = returned[w].send(buf);
        }
        drop(filled);
        drop(returned);
        for h in handles {
            if h.join().is_err() {
                anyhow::bail!(
                    "a decoding thread panicked: a bug in bitlens, please report it with this capture"
                );
            }
        }
        result
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
    fn ordered_writes_every_chunk_in_order_and_stops_when_asked() {
        for n in [0, 1, 2, 3, 100] {
            let mut out = Vec::new();
            ordered(
                n,
                |k, buf| buf.extend_from_slice(format!("{k},").as_bytes()),
                |b| {
                    out.extend_from_slice(b);
                    Ok(true)
                },
            )
            .unwrap();
            let want: String = (0..n).map(|k| format!("{k},")).collect();
            assert_eq!(String::from_utf8(out).unwrap(), want);
        }
        let mut seen = 0;
        ordered(
            10_000,
            |k, buf| buf.push(k as u8),
            |_| {
                seen += 1;
                Ok(seen < 5)
            },
        )
        .unwrap();
        assert_eq!(seen, 5);
        let err = ordered(10, |_, _| {}, |_| anyhow::bail!("disk full")).unwrap_err();
        assert_eq!(err.to_string(), "disk full");
        let panicky = ordered(10, |k, _| assert!(k != 7, "boom"), |_| Ok(true));
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
