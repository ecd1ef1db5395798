//! Encodes or decodes the entity table of `benches/entities.rs` (1000 entities) 100 times: a
//! fixed workload for instruction counting, which is repeatable where wall-clock time on a shared
//! machine is not:
//!
//!     cargo build --release -p bitlens-codec --example entities_count
//!     valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!         target/release/examples/entities_count encode   # or another mode
//!
//! Instructions per entity = (total - baseline) / 100,000, where the baseline is `none`.
//!
//! Modes: `encode` and `decode` run the bench's serialize function; `floor-encode`,
//! `floor-decode` and `floor-encode-raw` run the hand-written floor of `floor.rs` (the same
//! bytes, with one check per entity for its five fixed-width fields where the stream has one
//! per field; `-raw` puts each float's raw low 18 bits where its code goes, which is not the
//! wire, to show what the quantization costs); `none` only sets up. `time` prints the fastest of
//! 200 batches of each, and of bitcode on the same table, in one process:
//!
//!     cargo run --release -p bitlens-codec --example entities_count -- time
//!
//! Every mode first checks that the floor writes the stream's bytes, reads the table back, and
//! rejects what the stream rejects at the edges its hand-written checks cover.

use bitlens_codec::{BitWriter, ReadStream, WriteStream};
use std::hint::black_box;

const ROUNDS: usize = 100;

#[path = "../../benches/common/entities.rs"]
mod common;
mod floor;
use common::{Entity, N, serialize_table, table};

/// Runs `f` [`ROUNDS`] times and keeps the fastest batch in `best` (seconds).
fn time(best: &mut f64, f: &mut dyn FnMut()) {
    let start = std::time::Instant::now();
    for _ in 0..ROUNDS {
        f();
    }
    *best = best.min(start.elapsed().as_secs_f64());
}

/// The floor refuses what the stream refuses: a table longer than `N` on write, and on read an
/// id one past `i32::MAX` (an absolute `i32::MAX`, then `d = 1`: serialize 1.0 does not wrap).
fn check_rejections(data: &[Entity]) {
    let mut buf = vec![0u8; 64 * 1024];
    let mut long = data.to_vec();
    long.push(Entity {
        id: u32::MAX,
        ..Entity::default()
    });
    assert!(serialize_table(&mut WriteStream::new(&mut buf), &mut long).is_err());
    assert!(
        floor::encode(&mut buf, &long).is_err(),
        "the floor's length check"
    );

    let mut w = BitWriter::new(&mut buf);
    w.write_bits(2, floor::LEN_BITS).expect("fits");
    for last in [false, true] {
        w.write_run(floor::FIXED.map(|n| (0, n))).expect("fits"); // x, y, z, health, flags: 0
        if last {
            w.write_bits(1, 1).expect("fits"); // d = 1
        } else {
            w.write_bits(0, 6).expect("fits"); // no d = 1, no tier
            w.write_bits(i32::MAX as u32, 32).expect("fits"); // absolute
        }
    }
    let n = w.flush();
    let mut t = Vec::new();
    let stream = serialize_table(&mut ReadStream::new(&buf[..n]), &mut t);
    assert!(stream.is_err());
    assert!(
        floor::decode(&buf[..n], &mut t).is_err(),
        "the floor's id range check"
    );
}

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_else(|| "none".into());
    let data = table();
    let mut buf = vec![0u8; 64 * 1024];
    let mut w = WriteStream::new(&mut buf);
    serialize_table(&mut w, &mut data.clone()).expect("fits");
    let len = w.finish();
    let packed = buf[..len].to_vec();

    let mut floor_buf = vec![0u8; 64 * 1024];
    let n = floor::encode(&mut floor_buf, &data).expect("fits");
    assert_eq!(
        floor_buf[..n],
        packed[..],
        "the floor writes the stream's bytes"
    );
    let mut t = Vec::with_capacity(N);
    floor::decode(&packed, &mut t).expect("valid");
    assert_eq!(t, data, "the floor reads the table back");
    check_rejections(&data);

    // The write side of a serialize function takes the table as `&mut`: its own copy.
    let mut written = data.clone();
    let mut stream_encode = || {
        let mut w = WriteStream::new(&mut buf);
        serialize_table(&mut w, black_box(&mut written)).expect("fits");
        black_box(w.finish());
    };
    let stream_decode = |t: &mut Vec<Entity>| {
        serialize_table(&mut ReadStream::new(black_box(&packed)), t).expect("valid");
        black_box(t.len());
    };
    let mut floor_encode = |raw: bool| {
        let table = black_box(&data);
        let n = if raw {
            floor::encode_raw(&mut floor_buf, table)
        } else {
            floor::encode(&mut floor_buf, table)
        };
        black_box(n.expect("fits"));
    };
    let floor_decode = |t: &mut Vec<Entity>| {
        floor::decode(black_box(&packed), t).expect("valid");
        black_box(t.len());
    };
    match mode.as_str() {
        "encode" => (0..ROUNDS).for_each(|_| stream_encode()),
        "decode" => {
            (0..ROUNDS).for_each(|_| stream_decode(&mut t));
            assert_eq!(t, data);
        }
        "floor-encode" => (0..ROUNDS).for_each(|_| floor_encode(false)),
        "floor-encode-raw" => (0..ROUNDS).for_each(|_| floor_encode(true)),
        "floor-decode" => {
            (0..ROUNDS).for_each(|_| floor_decode(&mut t));
            assert_eq!(t, data);
        }
        "time" => {
            // Rough ns per entity and ratios to bitcode, for a quick look on a loaded machine
            // (criterion is the measurement of record).
            let mut best = [f64::MAX; 7];
            let mut bc = bitcode::Buffer::new();
            let bitcode_bytes = bitcode::encode(&data);
            for _ in 0..200 {
                time(&mut best[0], &mut stream_encode);
                time(&mut best[1], &mut || stream_decode(&mut t));
                time(&mut best[2], &mut || floor_encode(false));
                time(&mut best[3], &mut || floor_decode(&mut t));
                time(&mut best[4], &mut || floor_encode(true));
                time(&mut best[5], &mut || {
                    black_box(bc.encode(black_box(&data)).len());
                });
                time(&mut best[6], &mut || {
                    let v: Vec<Entity> = bc.decode(black_box(&bitcode_bytes)).expect("valid");
                    black_box(v.len());
                });
            }
            let [enc, dec, floor_enc, floor_dec, raw_enc, bc_enc, bc_dec] =
                best.map(|s| s * 1e9 / (ROUNDS * N) as f64);
            println!(
                "ns/entity encode/decode: bitlens {enc:.2}/{dec:.2} ({:.2}x/{:.2}x bitcode); \
                 floor {floor_enc:.2}/{floor_dec:.2} ({:.2}x/{:.2}x); floor, raw float bits \
                 {raw_enc:.2} ({:.2}x); bitcode {bc_enc:.2}/{bc_dec:.2}",
                enc / bc_enc,
                dec / bc_dec,
                floor_enc / bc_enc,
                floor_dec / bc_dec,
                raw_enc / bc_enc
            );
        }
        "none" => {}
        other => panic!(
            "unknown mode {other:?}: none, encode, decode, floor-encode, floor-decode, \
             floor-encode-raw or time"
        ),
    }
}
