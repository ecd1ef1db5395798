//! bitlens's own fixtures, shared by its tests, fuzz targets, benches and `bitlens synth`; not
//! published, and never a dependency of the codec crates themselves.
//!
//! - [`demo`]: the demo protocol built from the seeds' examples (bit-packed packets on UDP port
//!   40000), and [`batch_demo`]: its message batches (port 40001), from `bitlens-demo`.
//! - [`showcase`]: a packet set that uses every attribute of the derive (the differential test
//!   of the derive against its schema).
//! - [`vectors`]: the runner of the conformance vector files (`bitlens-vectors/1`), from
//!   `bitlens-demo`.
//! - [`fuzzing`]: the harness functions of bitlens's own fuzz targets, which the stable corpus
//!   replay calls too.
#![forbid(unsafe_code)]

#[doc(hidden)]
pub mod fuzzing;
pub mod showcase;

/// The demo protocol and the vector runner live in the published `bitlens-demo` (the `bitlens`
/// binary ships them); re-exported here under their old paths.
pub use bitlens_demo::{batch_demo, demo, vectors};

/// `len` deterministic pseudo-random bytes from `seed` (xorshift): test inputs that are the same
/// on every run.
pub fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}
