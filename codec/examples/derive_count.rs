//! A fixed workload for instruction counting (repeatable where wall-clock time on a shared
//! machine is not): 10 000 writes, reads or measures of each demo packet of the derive's
//! comparison, through the derived serialize functions or the hand-written ones they replaced.
//!
//!     cargo build --release -p bitlens-codec --example derive_count
//!     valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!         target/release/examples/derive_count derived write scene_update   # or: hand; read, measure; none
//!
//! Instructions per packet = (total - total of `none`) / 10 000.

use bitlens_codec::packet::{measure_packet, read_packet, write_packet};
use bitlens_testkit::demo::{DemoPacket, MTU};
use std::hint::black_box;

#[path = "../benches/common/handwritten_demo.rs"]
mod hand;
use hand::{Hand, packets};

const N: usize = 10_000;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let side = args.get(1).map_or("none", String::as_str);
    let op = args.get(2).map_or("write", String::as_str);
    let which = args.get(3).map_or("scene_update", String::as_str);
    let Some((_, packet)) = packets().into_iter().find(|(n, _)| *n == which) else {
        eprintln!("no packet {which}");
        std::process::exit(2);
    };
    let mut buf = [0u8; MTU];
    let n = write_packet(&mut packet.clone(), &mut buf).expect("writes");
    let bytes = buf[..n].to_vec();
    let mut sum = 0usize;
    match (side, op) {
        ("derived", "write") => {
            let mut p = packet.clone();
            for _ in 0..N {
                sum += write_packet(black_box(&mut p), &mut buf).expect("writes");
            }
        }
        ("hand", "write") => {
            let mut p = Hand(packet.clone());
            for _ in 0..N {
                sum += write_packet(black_box(&mut p), &mut buf).expect("writes");
            }
        }
        ("derived", "read") => {
            for _ in 0..N {
                let p = read_packet::<DemoPacket>(black_box(&bytes)).expect("reads");
                sum += usize::from(p == packet);
            }
        }
        ("hand", "read") => {
            for _ in 0..N {
                let p = read_packet::<Hand>(black_box(&bytes)).expect("reads");
                sum += usize::from(p.0 == packet);
            }
        }
        ("derived", "measure") => {
            let mut p = packet.clone();
            for _ in 0..N {
                sum += measure_packet(black_box(&mut p)).expect("measures");
            }
        }
        ("hand", "measure") => {
            let mut p = Hand(packet.clone());
            for _ in 0..N {
                sum += measure_packet(black_box(&mut p)).expect("measures");
            }
        }
        _ => {}
    }
    println!("{side} {op} {which}: {sum}");
}
