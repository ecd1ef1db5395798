//! Messages per second through the batch writer and reader, against bitcode and postcard on the
//! same messages, and heap allocations per message.
//!
//! `cargo bench -p bitlens-codec --bench batch`. The mix: 1000 messages, 40% MoveRigidBody,
//! 20% ChatText, 15% Ping, 15% Pong, 10% Despawn (SpawnRoboCat is left out: its mice list would
//! be a heap `Vec` in the serde mirrors and measure the allocator, not the codecs).
//!
//! - bitlens: `BatchWriter` into one reused MTU buffer (1200 bytes), a new batch whenever the
//!   next message's bound does not fit; reading walks every batch and decodes every message.
//! - postcard: `to_slice` per message into one reused buffer, `take_from_bytes` per message
//!   (no framing, no batching: less work than bitlens does).
//! - bitcode: one reused `bitcode::Buffer` encoding / decoding the whole `Vec` of 1000 messages
//!   (bitcode packs column-wise across messages; its decode builds the `Vec`).

use bitlens_batch::{BatchWriter, InlineStr, MessageBody, UpdateStage, read_batch};
use bitlens_codec::link::NetworkId;
use bitlens_testkit::batch_demo::{
    ChatText, DemoMessage, Despawn, MoveRigidBody, Ping, PingStamp, Pong,
};
use criterion::{BenchmarkId, Criterion, Throughput};
use serde::{Deserialize, Serialize};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};
use std::alloc::System;
use std::hint::black_box;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const N: usize = 1000;
const MTU: usize = 1200;

/// The same messages for the serde and bitcode baselines, borrowing text like bitlens' inline
/// strings do not allocate.
#[derive(Serialize, Deserialize, bitcode::Encode, bitcode::Decode, Debug, PartialEq)]
enum Mirror<'a> {
    Move {
        id: u32,
        position: [f32; 3],
        orientation: [f32; 4],
        velocities: Option<([f32; 3], [f32; 3])>,
    },
    Chat {
        player: u32,
        text: &'a str,
    },
    Ping {
        sequence: u32,
        sent_ms: u32,
        frame: u64,
    },
    Pong {
        sequence: u32,
        sent_ms: u32,
        frame: u64,
        handled_ms: u32,
    },
    Despawn {
        id: u32,
    },
}

fn messages() -> Vec<DemoMessage> {
    let body = match &bitlens_testkit::batch_demo::samples()[1] {
        DemoMessage::Move(m) => m.body.clone(),
        _ => unreachable!(),
    };
    let texts = [
        "gg",
        "meow! the home base is under attack",
        "rematch?",
        "brb",
    ];
    (0..N)
        .map(|i| {
            let id = NetworkId::new(1 + (i as u32 * 7919) % 5000).unwrap();
            let stamp = PingStamp {
                sequence: i as u32,
                sent_ms: 16 * i as u32,
                frame: i as u64,
            };
            match i % 20 {
                0..8 => {
                    let mut b = body.clone();
                    b.position[0] += i as f32;
                    if i % 3 == 0 {
                        b.at_rest = true;
                        b.linear_velocity = [0.0; 3];
                        b.angular_velocity = [0.0; 3];
                    }
                    DemoMessage::Move(MoveRigidBody {
                        network_id: id,
                        body: b,
                    })
                }
                8..12 => DemoMessage::Chat(ChatText {
                    player: i as u32 % 16,
                    text: InlineStr::truncated(texts[i % texts.len()]),
                }),
                12..15 => DemoMessage::Ping(Ping { stamp }),
                15..18 => DemoMessage::Pong(Pong {
                    stamp,
                    handled_ms: 16 * i as u32 + 3,
                }),
                _ => DemoMessage::Despawn(Despawn { network_id: id }),
            }
        })
        .collect()
}

fn mirror(m: &DemoMessage) -> Mirror<'_> {
    match m {
        DemoMessage::Move(m) => Mirror::Move {
            id: m.network_id.get(),
            position: m.body.position,
            orientation: m.body.orientation,
            velocities: (!m.body.at_rest)
                .then_some((m.body.linear_velocity, m.body.angular_velocity)),
        },
        DemoMessage::Chat(c) => Mirror::Chat {
            player: c.player,
            text: c.text.as_str(),
        },
        DemoMessage::Ping(p) => Mirror::Ping {
            sequence: p.stamp.sequence,
            sent_ms: p.stamp.sent_ms,
            frame: p.stamp.frame,
        },
        DemoMessage::Pong(p) => Mirror::Pong {
            sequence: p.stamp.sequence,
            sent_ms: p.stamp.sent_ms,
            frame: p.stamp.frame,
            handled_ms: p.handled_ms,
        },
        DemoMessage::Despawn(d) => Mirror::Despawn {
            id: d.network_id.get(),
        },
        DemoMessage::Spawn(_) => unreachable!("not in the mix"),
    }
}

/// Writes every message into MTU batches, handing each finished batch to `sink`.
fn bitlens_write(msgs: &mut [DemoMessage], buf: &mut [u8], mut sink: impl FnMut(&[u8])) -> usize {
    let mut batches = 0;
    let mut i = 0;
    while i < msgs.len() {
        let mut w = BatchWriter::new(buf).unwrap();
        while i < msgs.len() && msgs[i].push(&mut w, UpdateStage::UPDATE).unwrap() {
            i += 1;
        }
        let n = w.finish();
        sink(&buf[..n]);
        batches += 1;
    }
    batches
}

/// Decode targets reused from message to message, as a receiver's dispatch keeps them.
#[derive(Default)]
struct Slots {
    mv: MoveRigidBody,
    chat: ChatText,
    ping: Ping,
    pong: Pong,
    despawn: Despawn,
}

/// Reads every batch and decodes every message by its type into its slot (the way a
/// `Dispatch` does); returns a checksum.
fn bitlens_read(batches: &[Vec<u8>], s: &mut Slots) -> u64 {
    let mut sum = 0u64;
    for b in batches {
        for raw in read_batch(b).unwrap() {
            let raw = raw.unwrap();
            let t = raw.header.message_type;
            match t {
                MoveRigidBody::TYPE => raw.decode_into(&mut s.mv),
                ChatText::TYPE => raw.decode_into(&mut s.chat),
                Ping::TYPE => raw.decode_into(&mut s.ping),
                Pong::TYPE => raw.decode_into(&mut s.pong),
                Despawn::TYPE => raw.decode_into(&mut s.despawn),
                _ => unreachable!(),
            }
            .unwrap();
            sum = sum.wrapping_add(u64::from(t));
        }
        black_box(&*s);
    }
    sum
}

fn postcard_write(msgs: &[Mirror<'_>], buf: &mut [u8]) -> usize {
    let mut at = 0;
    for m in msgs {
        at += postcard::to_slice(m, &mut buf[at..]).unwrap().len();
    }
    at
}

fn postcard_read(mut bytes: &[u8]) -> u64 {
    let mut sum = 0u64;
    while !bytes.is_empty() {
        let (m, rest): (Mirror<'_>, _) = postcard::take_from_bytes(bytes).unwrap();
        sum = sum.wrapping_add(matches!(m, Mirror::Move { .. }) as u64);
        black_box(&m);
        bytes = rest;
    }
    sum
}

fn allocations(f: impl FnOnce()) -> usize {
    let region = Region::new(GLOBAL);
    f();
    let c = region.change();
    c.allocations + c.reallocations
}

fn report(msgs: &[DemoMessage], mirrors: &[Mirror<'_>], batches: &[Vec<u8>]) {
    let mut m = msgs.to_vec();
    let mut buf = vec![0u8; MTU];
    let mut big = vec![0u8; 256 * N];
    let mut bc = bitcode::Buffer::new();
    // Warm up the reused buffers, then count one more pass.
    bitlens_write(&mut m, &mut buf, |_| {});
    let bytes: usize = batches.iter().map(Vec::len).sum();
    let pc_len = postcard_write(mirrors, &mut big);
    let bc_len = bc.encode(mirrors).len();
    let bc_bytes = bc.encode(mirrors).to_vec();
    let _ = bc.decode::<Vec<Mirror<'_>>>(&bc_bytes).unwrap();
    let a = [
        allocations(|| {
            bitlens_write(&mut m, &mut buf, |b| {
                black_box(b);
            });
        }),
        allocations(|| {
            black_box(bitlens_read(batches, &mut Slots::default()));
        }),
        allocations(|| {
            black_box(postcard_write(mirrors, &mut big));
        }),
        allocations(|| {
            black_box(postcard_read(&big[..pc_len]));
        }),
        allocations(|| {
            black_box(bc.encode(mirrors).len());
        }),
        allocations(|| {
            black_box(bc.decode::<Vec<Mirror<'_>>>(&bc_bytes).unwrap());
        }),
    ];
    let per = |x: usize| x as f64 / N as f64;
    println!("messages: {N} in {} batches", batches.len());
    println!(
        "bytes per message: bitlens {:.2} (with 4-byte headers and batch headers), postcard {:.2}, bitcode {:.2}",
        bytes as f64 / N as f64,
        pc_len as f64 / N as f64,
        bc_len as f64 / N as f64
    );
    println!(
        "allocations per message (after warm-up): bitlens write {} read {}; postcard write {} read {}; bitcode encode {} decode {}",
        per(a[0]),
        per(a[1]),
        per(a[2]),
        per(a[3]),
        per(a[4]),
        per(a[5])
    );
}

fn main() {
    let msgs = messages();
    let mirrors: Vec<Mirror<'_>> = msgs.iter().map(mirror).collect();
    let mut batches = Vec::new();
    bitlens_write(&mut msgs.clone(), &mut vec![0u8; MTU], |b| {
        batches.push(b.to_vec())
    });
    // Same messages back from every codec.
    let mut big = vec![0u8; 256 * N];
    let n = postcard_write(&mirrors, &mut big);
    let mut back = Vec::new();
    let mut rest = &big[..n];
    while !rest.is_empty() {
        let (m, r): (Mirror<'_>, _) = postcard::take_from_bytes(rest).unwrap();
        back.push(m);
        rest = r;
    }
    assert_eq!(back, mirrors);
    let bc_bytes = bitcode::encode(&mirrors);
    assert_eq!(
        bitcode::decode::<Vec<Mirror<'_>>>(&bc_bytes).unwrap(),
        mirrors
    );
    assert_eq!(
        bitlens_read(&batches, &mut Slots::default()),
        msgs.iter()
            .map(|m| u64::from(m.message_type()))
            .sum::<u64>()
    );

    report(&msgs, &mirrors, &batches);

    let mut c = Criterion::default().configure_from_args();
    let mut g = c.benchmark_group("batch");
    g.throughput(Throughput::Elements(N as u64));
    let mut m = msgs.clone();
    let mut buf = vec![0u8; MTU];
    g.bench_function(BenchmarkId::new("write", "bitlens"), |b| {
        b.iter(|| {
            bitlens_write(&mut m, &mut buf, |x| {
                black_box(x);
            })
        })
    });
    g.bench_function(BenchmarkId::new("write", "postcard"), |b| {
        b.iter(|| postcard_write(&mirrors, &mut big))
    });
    let mut bc = bitcode::Buffer::new();
    g.bench_function(BenchmarkId::new("write", "bitcode"), |b| {
        b.iter(|| bc.encode(&mirrors).len())
    });
    let mut slots = Slots::default();
    g.bench_function(BenchmarkId::new("read", "bitlens"), |b| {
        b.iter(|| bitlens_read(&batches, &mut slots))
    });
    let n = postcard_write(&mirrors, &mut big);
    g.bench_function(BenchmarkId::new("read", "postcard"), |b| {
        b.iter(|| postcard_read(&big[..n]))
    });
    g.bench_function(BenchmarkId::new("read", "bitcode"), |b| {
        b.iter(|| bc.decode::<Vec<Mirror<'_>>>(&bc_bytes).unwrap().len())
    });
    g.finish();
    c.final_summary();
}
