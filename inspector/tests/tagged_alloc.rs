//! `bitlens tagged` streams its output: on a document of sized fields nested 60 deep (at 1 MiB,
//! 790 MB of JSON, which took 1.8 GB when the output was built whole; here 64 KiB, to keep the
//! test quick unoptimized), everything it allocates, counted by a global allocator
//! (`stats_alloc`), is the file and its buffers.
//!
//! One `#[test]` only: the counters are global, and tests in one binary run on several threads.

use std::alloc::System;
use std::io::Write;

use bitlens_tagged::varint::write_varint;
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Sized field 0 nested `depth` deep around byte fields 0, 1, 2, ... (`size` bytes or a few
/// less).
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

/// Counts the bytes written, keeping none, and checks that the output ends as it should.
#[derive(Default)]
struct Counter {
    written: usize,
    last: u8,
}

impl Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.written += buf.len();
        if let Some(&b) = buf.last() {
            self.last = b;
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn tagged_output_is_streamed_in_memory_the_size_of_the_input() {
    let doc = nested_document(60, 1 << 16);
    let path = std::env::temp_dir().join(format!("bitlens-nested-{}.tagged", std::process::id()));
    std::fs::write(&path, &doc).unwrap();
    for json in [true, false] {
        let mut out = Counter::default();
        let region = Region::new(GLOBAL);
        bitlens::cmd::tagged::run(&path, json, &mut out).unwrap();
        let stats = region.change();
        let allocated = stats.bytes_allocated + stats.bytes_reallocated.max(0) as usize;
        // The file (read whole), a 64 KiB output buffer and small change.
        let bound = doc.len() + (128 << 10);
        assert!(
            allocated <= bound,
            "json {json}: {allocated} bytes allocated for a {}-byte document ({} bytes out), \
             over {bound}",
            doc.len(),
            out.written
        );
        // The whole tree was written: 32 000 fields 61 levels deep (and in JSON the hex of
        // every level's bytes).
        let least = if json { 600 } else { 60 };
        assert!(
            out.written > least * doc.len(),
            "json {json}: {} bytes out",
            out.written
        );
        assert_eq!(out.last, b'\n');
        eprintln!(
            "json {json}: {allocated} bytes allocated for {} bytes in, {} bytes out",
            doc.len(),
            out.written
        );
    }
    std::fs::remove_file(&path).ok();
}
