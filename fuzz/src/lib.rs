//! Shared pieces of the bitlens fuzz targets: the guard allocator, from `bitlens-fuzz-guard`
//! (the crate a user's own fuzz crate depends on too).
//!
//! Every target installs [`GuardAlloc`] as its global allocator (`bitlens_fuzz::guard_allocator!()`)
//! and runs its harness through [`bounded`]: a single allocation above [`LIMIT`] (1 MiB), or more
//! than [`budget`]`(len)` = 64 x the input + 1 MiB allocated in total for one input, aborts the
//! process, which libFuzzer reports as a crash with the input that caused it. Decoding must never
//! allocate by an unchecked length (STYLE.md rule 2); this turns a violation into a finding even
//! when the allocation would succeed.

pub use bitlens_fuzz_guard::{
    GuardAlloc, LIMIT, PER_INPUT_BASE, PER_INPUT_FACTOR, bounded, bounded_with, budget,
    guard_allocator,
};
