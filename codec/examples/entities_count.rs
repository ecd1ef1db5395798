//! Encodes or decodes the entity table of `benches/entities.rs` (1000 entities) 100 times: a
//! fixed workload for instruction counting, which is repeatable where wall-clock time on a shared
//! machine is not:
//!
//!     cargo build --release -p bitlens-codec --example entities_count
//!     valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!         target/release/examples/entities_count encode   # or: decode
//!
//! Instructions per entity = (total - baseline) / 100,000, where the baseline is `none`.

use bitlens_codec::{ReadStream, WriteStream};
use std::hint::black_box;

const ROUNDS: usize = 100;

#[path = "../benches/common/entities.rs"]
mod common;
use common::{Entity, N, serialize_table, table};

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_else(|| "none".into());
    let mut data = table();
    let mut buf = vec![0u8; 64 * 1024];
    let mut w = WriteStream::new(&mut buf);
    serialize_table(&mut w, &mut data).expect("fits");
    let len = w.finish();
    let packed = buf[..len].to_vec();
    match mode.as_str() {
        "encode" => {
            for _ in 0..ROUNDS {
                let mut w = WriteStream::new(&mut buf);
                serialize_table(&mut w, black_box(&mut data)).expect("fits");
                black_box(w.finish());
            }
        }
        "decode" => {
            let mut t = Vec::with_capacity(N);
            for _ in 0..ROUNDS {
                serialize_table(&mut ReadStream::new(black_box(&packed)), &mut t).expect("valid");
                black_box(t.len());
            }
            assert_eq!(t, data);
        }
        "time" => {
            // Best of 200 batches of 100 rounds each way, for bitlens and for bitcode on the same
            // table: rough ns per entity and their ratio, for a quick look on a loaded machine
            // (criterion is the measurement of record).
            let mut best = [f64::MAX; 4];
            let mut t = Vec::with_capacity(N);
            let mut bc = bitcode::Buffer::new();
            let bitcode_bytes = bitcode::encode(&data);
            let time = |best: &mut f64, f: &mut dyn FnMut()| {
                let start = std::time::Instant::now();
                for _ in 0..ROUNDS {
                    f();
                }
                *best = best.min(start.elapsed().as_secs_f64());
            };
            for _ in 0..200 {
                time(&mut best[0], &mut || {
                    let mut w = WriteStream::new(&mut buf);
                    serialize_table(&mut w, black_box(&mut data)).expect("fits");
                    black_box(w.finish());
                });
                time(&mut best[1], &mut || {
                    serialize_table(&mut ReadStream::new(black_box(&packed)), &mut t)
                        .expect("valid");
                    black_box(t.len());
                });
                time(&mut best[2], &mut || {
                    black_box(bc.encode(black_box(&data)).len());
                });
                time(&mut best[3], &mut || {
                    let v: Vec<Entity> = bc.decode(black_box(&bitcode_bytes)).expect("valid");
                    black_box(v.len());
                });
            }
            let per = best.map(|s| s * 1e9 / (ROUNDS * N) as f64);
            println!(
                "bitlens encode {:.2} decode {:.2} ns/entity; bitcode encode {:.2} decode {:.2}; \
                 ratio encode {:.2}x decode {:.2}x",
                per[0],
                per[1],
                per[2],
                per[3],
                per[0] / per[2],
                per[1] / per[3]
            );
        }
        _ => {}
    }
}
