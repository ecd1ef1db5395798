//! Encodes or decodes the tagged bench's save game 10,000 times, with bitlens's tagged format or
//! with prost: a fixed workload for instruction counting, repeatable where wall-clock time on a
//! loaded machine is not:
//!
//!     cargo build --release -p bitlens-codec --example tagged_count
//!     valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!         target/release/examples/tagged_count decode   # or: none, encode, prost-encode, prost-decode
//!
//! Instructions per document = (total - total of `none`) / 10,000. `time` runs every mode 20
//! times and prints the fastest ns per document of each, tagged and prost interleaved (a quick
//! same-run check, not a substitute for the criterion bench).

use std::hint::black_box;
use std::time::Instant;

use bitlens_tagged::{decode_document, encode_document_into};
use prost::Message as _;

#[path = "../benches/common/save_game.rs"]
mod save_game;
use save_game::{PSave, Save, mirror, save};

const N: usize = 10_000;

fn run(mode: &str, data: &mut Save, p: &PSave, tagged: &[u8], proto: &[u8], out: &mut Vec<u8>) {
    match mode {
        "none" => {}
        "encode" => {
            for _ in 0..N {
                out.clear();
                encode_document_into(black_box(&mut *data), out).unwrap();
                black_box(out.len());
            }
        }
        "decode" => {
            for _ in 0..N {
                black_box(decode_document::<Save>(black_box(tagged)).unwrap());
            }
        }
        "prost-encode" => {
            for _ in 0..N {
                out.clear();
                black_box(p).encode(out).unwrap();
                black_box(out.len());
            }
        }
        "prost-decode" => {
            for _ in 0..N {
                black_box(PSave::decode(black_box(proto)).unwrap());
            }
        }
        other => panic!("unknown mode {other}"),
    }
}

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_else(|| "none".into());
    let mut data = save();
    let p = mirror(&data);
    let mut tagged = Vec::new();
    encode_document_into(&mut data, &mut tagged).unwrap();
    assert_eq!(decode_document::<Save>(&tagged).unwrap(), data);
    let proto = p.encode_to_vec();
    assert_eq!(PSave::decode(&proto[..]).unwrap(), p);
    let mut out = Vec::with_capacity(4096);
    if mode != "time" {
        run(&mode, &mut data, &p, &tagged, &proto, &mut out);
        return;
    }
    let modes = ["encode", "prost-encode", "decode", "prost-decode"];
    let mut best = [f64::MAX; 4];
    for _ in 0..20 {
        for (i, m) in modes.iter().enumerate() {
            let t = Instant::now();
            run(m, &mut data, &p, &tagged, &proto, &mut out);
            best[i] = best[i].min(t.elapsed().as_nanos() as f64 / N as f64);
        }
    }
    for (m, b) in modes.iter().zip(best) {
        println!("{m:>13}: {b:8.1} ns");
    }
    println!(
        "encode tagged/prost {:.2}, decode tagged/prost {:.2}",
        best[0] / best[1],
        best[2] / best[3]
    );
}
