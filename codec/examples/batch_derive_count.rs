//! A fixed workload for instruction counting: 10 000 writes, reads or measures of one demo batch
//! message, through the serialize function `#[derive(BatchStruct)]` writes or the hand-written
//! one it replaced (`codec/benches/common/handwritten_batch.rs`).
//!
//!     cargo build --release -p bitlens-codec --example batch_derive_count
//!     valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!         target/release/examples/batch_derive_count derived write spawn   # or: hand; read, measure; none
//!
//! Instructions per message = (total - total of `none`) / 10 000. Messages: spawn, move, chat,
//! ping, pong, despawn.

use bitlens_batch::{
    BatchWriter, ByteCounter, MessageBody, UpdateStage, encode_message, max_body, read_batch,
};
use bitlens_testkit::batch_demo::DemoMessage;
use std::hint::black_box;

#[path = "../benches/common/handwritten_batch.rs"]
mod hand;
use hand::{Hand, messages};

const N: usize = 10_000;
const MTU: usize = 1200;

/// The bytes of `m` alone in a batch.
fn batch_of<M: MessageBody>(m: &mut M) -> Vec<u8> {
    let mut buf = vec![0u8; MTU];
    let mut w = BatchWriter::new(&mut buf).expect("a batch");
    assert!(w.push(UpdateStage::UPDATE, m).expect("writes"));
    let n = w.finish();
    buf.truncate(n);
    buf
}

fn work<M: MessageBody + Default>(op: &str, mut m: M) -> usize {
    let mut buf = [0u8; MTU];
    let mut sum = 0;
    match op {
        "write" => {
            for _ in 0..N {
                sum += encode_message(
                    black_box(&mut buf),
                    0,
                    UpdateStage::UPDATE,
                    black_box(&mut m),
                    max_body(MTU),
                )
                .expect("writes");
            }
        }
        "read" => {
            let batch = batch_of(&mut m);
            let raw = read_batch(&batch)
                .expect("a batch")
                .next()
                .expect("a message")
                .expect("whole");
            let mut into = M::default();
            for _ in 0..N {
                black_box(&raw)
                    .decode_into(black_box(&mut into))
                    .expect("reads");
                sum += 1;
            }
        }
        "measure" => {
            for _ in 0..N {
                let mut c = ByteCounter::new();
                black_box(&mut m).serialize(&mut c).expect("measures");
                sum += c.bytes();
            }
        }
        _ => {}
    }
    sum
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let side = args.get(1).map_or("none", String::as_str);
    let op = args.get(2).map_or("write", String::as_str);
    let which = args.get(3).map_or("spawn", String::as_str);
    let Some((_, m)) = messages().into_iter().find(|(n, _)| *n == which) else {
        eprintln!("no message {which}");
        std::process::exit(2);
    };
    let op = if side == "none" { "none" } else { op };
    let hand = side == "hand";
    // Both sides write the same bytes.
    let same = match m.clone() {
        DemoMessage::Spawn(x) => batch_of(&mut x.clone()) == batch_of(&mut Hand(x)),
        DemoMessage::Move(x) => batch_of(&mut x.clone()) == batch_of(&mut Hand(x)),
        DemoMessage::Chat(x) => batch_of(&mut x.clone()) == batch_of(&mut Hand(x)),
        DemoMessage::Ping(x) => batch_of(&mut x.clone()) == batch_of(&mut Hand(x)),
        DemoMessage::Pong(x) => batch_of(&mut x.clone()) == batch_of(&mut Hand(x)),
        DemoMessage::Despawn(x) => batch_of(&mut x.clone()) == batch_of(&mut Hand(x)),
    };
    assert!(
        same,
        "derived and hand-written {which} write the same bytes"
    );
    let sum = match (m, hand) {
        (DemoMessage::Spawn(x), false) => work(op, x),
        (DemoMessage::Spawn(x), true) => work(op, Hand(x)),
        (DemoMessage::Move(x), false) => work(op, x),
        (DemoMessage::Move(x), true) => work(op, Hand(x)),
        (DemoMessage::Chat(x), false) => work(op, x),
        (DemoMessage::Chat(x), true) => work(op, Hand(x)),
        (DemoMessage::Ping(x), false) => work(op, x),
        (DemoMessage::Ping(x), true) => work(op, Hand(x)),
        (DemoMessage::Pong(x), false) => work(op, x),
        (DemoMessage::Pong(x), true) => work(op, Hand(x)),
        (DemoMessage::Despawn(x), false) => work(op, x),
        (DemoMessage::Despawn(x), true) => work(op, Hand(x)),
    };
    println!("{side} {op} {which}: {sum}");
}
