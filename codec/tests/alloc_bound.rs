//! Allocation bound of every read, measured with a counting global allocator (`stats_alloc`):
//!
//! - reading any committed corpus input of a read target allocates in total at most a factor
//!   × the input size + [`SLACK`] bytes: [`PACKET_FACTOR`] for demo packets, [`TYPED_FACTOR`]
//!   for typed tagged documents (total, not peak: every allocation and every reallocation's
//!   growth is counted, so the peak is lower still);
//! - the schema-less tagged walk, every nested struct opened, allocates nothing at all: on the
//!   corpus and on a 1 MiB document of sized fields nested 60 deep (which took 1.8 GB as a
//!   tree with `bitlens tagged --json`);
//! - a count that claims 4 billion elements allocates (almost) nothing: it is checked against
//!   the bits that remain before anything grows.
//!
//! One `#[test]` only: the counters are global, and tests in one binary run on several threads.

use std::alloc::System;
use std::path::Path;

use bitlens_codec::{ErrorKind, ReadStream, Stream, read_packet};
use bitlens_tagged::{self as tagged, varint::write_varint};
use bitlens_testkit::demo::DemoPacket;
use bitlens_testkit::fuzzing::tagged::{Rich, SaveV3};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Bytes a demo packet read may allocate per input byte: a `SceneObject` per at least 84 bits,
/// the `Vec` doubling as it grows (`--nocapture` prints the largest ratio measured).
const PACKET_FACTOR: usize = 16;
/// Bytes a typed tagged read may allocate per input byte. A sized region of `n` bytes holds at
/// most `n` elements (each takes at least one byte) and the decoder reserves that many, so a
/// region of empty `Inner` structs (40 bytes in memory, 1 on the wire:
/// `corpus/tagged_read/hostile_empty_structs_1000.bin`) costs 40 bytes per input byte.
const TYPED_FACTOR: usize = 48;
/// Fixed allowance: error paths, the field-name stack, small first allocations.
const SLACK: usize = 4096;

/// Walks a document without a schema, opening every nested struct; the number of fields.
fn raw_walk(data: &[u8]) -> Option<usize> {
    fn count(fields: tagged::raw::RawFields<'_>) -> usize {
        fields
            .map(|f| match f.value {
                tagged::raw::RawValue::Sized {
                    fields: Some(inner),
                    ..
                } => 1 + count(inner),
                _ => 1,
            })
            .sum()
    }
    tagged::raw::parse_document(data).ok().map(count)
}

/// A document of about `size` bytes (under 2 MiB: every size prefix takes 3 bytes): sized field
/// 0 nested `depth` deep around byte fields 0, 1, 2, ... of value 1.
fn nested_document(depth: usize, size: usize) -> Vec<u8> {
    let mut body: Vec<u8> = [0x00, 0x01].repeat((size - 2 - depth * 4) / 2);
    for _ in 0..depth {
        let mut outer = vec![0x03];
        write_varint(&mut outer, body.len() as u64);
        outer.extend_from_slice(&body);
        body = outer;
    }
    let mut doc = Vec::new();
    write_varint(&mut doc, body.len() as u64);
    doc.extend_from_slice(&body);
    doc
}

/// Total bytes allocated (and grown by reallocation) while `f` runs.
fn allocated(f: impl FnOnce()) -> usize {
    let region = Region::new(GLOBAL);
    f();
    let s = region.change();
    s.bytes_allocated + s.bytes_reallocated.max(0) as usize
}

fn corpus(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../corpus")
        .join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let data = std::fs::read(&p).unwrap();
            (p.file_name().unwrap().to_string_lossy().into_owned(), data)
        })
        .collect()
}

#[test]
fn reads_allocate_a_bounded_multiple_of_their_input() {
    // Warm up lazily initialised statics (protocol tables) outside the measured regions.
    let _ = read_packet::<DemoPacket>(&[]);
    let _ = tagged::decode_document::<Rich>(&[]);

    let mut worst = std::collections::BTreeMap::<String, (f64, String)>::new();
    let mut check = |what: &str, factor: usize, name: &str, data: &[u8], bytes: usize| {
        let bound = factor * data.len() + SLACK;
        assert!(
            bytes <= bound,
            "{what} of {name} ({} bytes) allocated {bytes} bytes, over {bound}",
            data.len()
        );
        // Tiny inputs only measure the fixed cost (an error, the name stack).
        let ratio = if data.len() >= 64 {
            bytes as f64 / data.len() as f64
        } else {
            0.0
        };
        let w = worst.entry(what.to_owned()).or_default();
        if ratio > w.0 {
            *w = (ratio, format!("{name}: {bytes} bytes for {}", data.len()));
        }
    };
    for target in ["packet_read", "hostile_lengths", "packet_roundtrip"] {
        for (name, data) in corpus(target) {
            let n = allocated(|| drop(std::hint::black_box(read_packet::<DemoPacket>(&data))));
            check("read_packet", PACKET_FACTOR, &name, &data, n);
        }
    }
    for (name, data) in corpus("tagged_read") {
        let n = allocated(|| drop(std::hint::black_box(tagged::decode_document::<Rich>(&data))));
        check("decode Rich", TYPED_FACTOR, &name, &data, n);
        let n = allocated(|| {
            drop(std::hint::black_box(tagged::decode_document::<SaveV3>(
                &data,
            )))
        });
        check("decode SaveV3", TYPED_FACTOR, &name, &data, n);
        let n = allocated(|| {
            std::hint::black_box(raw_walk(&data));
        });
        assert_eq!(n, 0, "raw walk of {name} allocated {n} bytes");
    }
    for (what, (ratio, example)) in &worst {
        eprintln!("{what}: largest bytes allocated per input byte {ratio:.2} ({example})");
    }

    // 1 MiB: 60 sized fields nested around byte fields; the walk opens every level.
    let doc = nested_document(60, 1 << 20);
    let mut fields = None;
    let n = allocated(|| fields = Some(raw_walk(&doc)));
    assert_eq!(fields, Some(Some(60 + (doc.len() - 2 - 60 * 4) / 2)));
    assert_eq!(n, 0, "the raw walk of a 1 MiB document allocated {n} bytes");

    // A count field claiming 4294967295 elements of 32 bits, then 8 bytes: rejected before the
    // vector grows.
    let mut data = vec![0xFF; 4];
    data.extend_from_slice(&[0; 8]);
    let mut v: Vec<u32> = Vec::new();
    let mut result = None;
    let n = allocated(|| {
        let mut s = ReadStream::new(&data);
        result = Some(s.array("elements", &mut v, u32::MAX as usize, 32, |s, e| {
            s.int_as("", e, 0, u32::MAX)
        }));
    });
    let err = result.unwrap().expect_err("4 billion elements in 12 bytes");
    assert!(matches!(err.kind(), ErrorKind::PastEnd { .. }), "{err}");
    assert!(v.capacity() == 0);
    assert!(n <= 256, "a 4-billion count allocated {n} bytes");

    // The tagged format: a string and an array whose size prefix claims 4294967295 bytes.
    for id in [11u8, 13] {
        let mut body = vec![0x03 | (id << 2)];
        write_varint(&mut body, u64::from(u32::MAX));
        body.extend_from_slice(b"abc");
        let mut doc = Vec::new();
        write_varint(&mut doc, body.len() as u64);
        doc.extend_from_slice(&body);
        let n = allocated(|| {
            tagged::decode_document::<Rich>(&doc).expect_err("size past the end");
        });
        assert!(n <= 512, "a 4-billion size prefix allocated {n} bytes");
    }
}
