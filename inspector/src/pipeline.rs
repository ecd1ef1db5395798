//! Splitting work over the machine's cores: how many threads to use, and the ordered pipeline of
//! output chunks that `decode` runs on them (`check` keeps its own pool: its jobs carry the file
//! windows they point into, and its results merge instead of being written in order).

use std::sync::mpsc;

/// How many threads to use: the available parallelism, at most 8.
pub fn threads() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 8)
}

/// Runs `work(job, buffer)` for every job that `produce` pushes, on [`threads`] worker threads,
/// and hands the filled buffers to `sink` on the calling thread in the order the jobs were
/// pushed. `work` writes its output at the start of the buffer and returns its length: the
/// buffer comes with an earlier job's bytes (clear it, or write over them: room that needs no
/// zeroing), and `sink` gets only the first bytes `work` said. `produce` runs on the calling thread too, so the work on early jobs overlaps
/// producing the later ones (`decode` indexes the capture while it decodes).
///
/// Each worker has at most two jobs queued, and its buffers come back after `sink`, so memory
/// stays bounded whatever the number of jobs, and the buffers stay mapped and warm in cache
/// (fresh buffers per chunk made page faults and cache misses on the stores a third of
/// `decode --json`). `sink` returns `Ok(false)` to stop early (a closed pipe): the rest of the
/// jobs are dropped unworked.
///
/// # Errors
/// What `sink` returned, or a worker's panic (a bug), reported instead of losing that output.
pub fn ordered<J: Send, R>(
    produce: impl FnOnce(&mut dyn FnMut(J)) -> R,
    work: impl Fn(J, &mut Vec<u8>) -> usize + Sync,
    mut sink: impl FnMut(&[u8]) -> anyhow::Result<bool>,
) -> anyhow::Result<R> {
    /// Jobs a worker may have queued before the producer waits for it.
    const QUEUED: usize = 2;
    let workers = threads();
    let work = &work;
    std::thread::scope(|scope| {
        let mut inputs = Vec::with_capacity(workers);
        let mut outputs = Vec::with_capacity(workers);
        let mut handles = Vec::with_capacity(workers);
        for _ in 0..workers {
            let (to_worker, jobs) = mpsc::sync_channel::<(J, Vec<u8>)>(QUEUED);
            // Unbounded, so that a worker never waits on the writer while the producer waits on
            // it: the bounded job queues already bound what is in flight.
            let (to_writer, filled) = mpsc::channel::<(Vec<u8>, usize)>();
            handles.push(scope.spawn(move || {
                for (job, mut buf) in jobs {
                    let len = work(job, &mut buf);
                    if to_writer.send((buf, len)).is_err() {
                        return; // the writer stopped
                    }
                }
            }));
            inputs.push(to_worker);
            outputs.push(filled);
        }
        let mut spare: Vec<Vec<u8>> = Vec::new();
        let (mut pushed, mut written) = (0usize, 0usize);
        let mut stop: Option<anyhow::Result<()>> = None;
        // Writes every finished buffer that is next in order; with `wait`, waits for them.
        let mut drain = |upto: usize, wait: bool, written: &mut usize, spare: &mut Vec<Vec<u8>>| {
            while *written < upto {
                let from = &outputs[*written % workers];
                let (buf, len) = if wait {
                    // A closed channel means the worker panicked: the join below says so.
                    match from.recv() {
                        Ok(buf) => buf,
                        Err(_) => return Some(Ok(())),
                    }
                } else {
                    match from.try_recv() {
                        Ok(buf) => buf,
                        Err(mpsc::TryRecvError::Empty) => return None,
                        Err(mpsc::TryRecvError::Disconnected) => return Some(Ok(())),
                    }
                };
                match sink(buf.get(..len).unwrap_or(&buf)) {
                    Ok(true) => {}
                    Ok(false) => return Some(Ok(())),
                    Err(e) => return Some(Err(e)),
                }
                *written += 1;
                spare.push(buf);
            }
            None
        };
        let produced = produce(&mut |job| {
            if stop.is_some() {
                return;
            }
            let buf = spare.pop().unwrap_or_default();
            if inputs[pushed % workers].send((job, buf)).is_err() {
                stop = Some(Ok(())); // the worker panicked: the join below says so
                return;
            }
            pushed += 1;
            stop = drain(pushed, false, &mut written, &mut spare);
        });
        if stop.is_none() {
            stop = drain(pushed, true, &mut written, &mut spare);
        }
        drop(inputs);
        drop(outputs);
        for h in handles {
            if h.join().is_err() {
                anyhow::bail!(
                    "a decoding thread panicked: a bug in bitlens, please report it with this capture"
                );
            }
        }
        stop.unwrap_or(Ok(()))?;
        Ok(produced)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A worker that writes over an earlier job's bytes instead of clearing them: only the
    /// length it returns is written out, never the longer leftovers after it.
    #[test]
    fn only_the_length_work_returns_is_written() {
        let mut out = Vec::new();
        ordered(
            |push| (0..3000usize).rev().for_each(push),
            |k, buf| {
                let text = format!("{k},");
                if buf.len() < text.len() {
                    buf.resize(text.len(), b'#');
                }
                buf[..text.len()].copy_from_slice(text.as_bytes());
                text.len()
            },
            |b| {
                out.extend_from_slice(b);
                Ok(true)
            },
        )
        .unwrap();
        let want: String = (0..3000usize).rev().map(|k| format!("{k},")).collect();
        assert_eq!(String::from_utf8(out).unwrap(), want);
    }

    #[test]
    fn ordered_writes_every_job_in_order_and_stops_when_asked() {
        for n in [0usize, 1, 2, 3, 100, 5000] {
            let mut out = Vec::new();
            let produced = ordered(
                |push| {
                    for k in 0..n {
                        push(k);
                    }
                    n
                },
                |k, buf| {
                    buf.clear();
                    buf.extend_from_slice(format!("{k},").as_bytes());
                    buf.len()
                },
                |b| {
                    out.extend_from_slice(b);
                    Ok(true)
                },
            )
            .unwrap();
            assert_eq!(produced, n);
            let want: String = (0..n).map(|k| format!("{k},")).collect();
            assert_eq!(String::from_utf8(out).unwrap(), want);
        }
        let mut seen = 0;
        ordered(
            |push| (0..100_000usize).for_each(push),
            |k, buf| {
                buf.clear();
                buf.push(k as u8);
                1
            },
            |_| {
                seen += 1;
                Ok(seen < 5)
            },
        )
        .unwrap();
        assert_eq!(seen, 5);
        let err = ordered(
            |push| (0..10).for_each(push),
            |_, _| 0,
            |_| anyhow::bail!("disk full"),
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "disk full");
        let panicky = ordered(
            |push| (0..1000usize).for_each(push),
            |k, _| {
                assert!(k != 7, "boom");
                0
            },
            |_| Ok(true),
        );
        assert!(panicky.unwrap_err().to_string().contains("panicked"));
    }
}
