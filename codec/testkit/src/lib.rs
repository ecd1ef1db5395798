//! bitlens's own fixtures, shared by its tests, fuzz targets, benches and `bitlens synth`; not
//! published, and never a dependency of the codec crates themselves.
//!
//! - [`demo`]: the demo protocol built from the seeds' examples (bit-packed packets on UDP port
//!   40000), and [`batch_demo`]: its message batches (port 40001).
//! - [`showcase`]: a packet set that uses every attribute of the derive (the differential test
//!   of the derive against its schema).
//! - [`vectors`]: the runner of the conformance vector files (`bitlens-vectors/1`).
//! - [`fuzzing`]: the harness functions of bitlens's own fuzz targets, which the stable corpus
//!   replay calls too.
#![forbid(unsafe_code)]

pub mod batch_demo;
pub mod demo;
#[doc(hidden)]
pub mod fuzzing;
pub mod showcase;
pub mod vectors;
