//! bitlens's demo protocol, which the `bitlens` binary decodes by default and `bitlens synth`
//! writes, and the runner of the conformance vector files:
//!
//! - [`demo`]: the demo protocol built from the seeds' examples (bit-packed packets on UDP port
//!   40000), and [`batch_demo`]: its message batches (port 40001);
//! - [`vectors`]: the runner of the conformance vector files (`bitlens-vectors/1`), which drive
//!   every stream of `bitlens-codec` and the schema interpreter with the same operations.
//!
//! A game's own protocol needs none of it: it is an example of one, and the fixture bitlens's
//! tests, fuzz targets and benchmarks share (through `bitlens-testkit`, which re-exports it).
#![forbid(unsafe_code)]

pub mod batch_demo;
pub mod demo;
pub mod vectors;
