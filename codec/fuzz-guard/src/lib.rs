//! A global allocator for fuzz targets that turns an allocation past its limits into a finding.
//!
//! libFuzzer's `-malloc_limit_mb` works only with a sanitizer's allocator hooks, and `-rss_limit_mb`
//! only sees the whole process, so a target installs [`GuardAlloc`] as its global allocator and
//! runs each input through [`bounded`]:
//!
//! ```ignore
//! #![no_main]
//! bitlens_fuzz_guard::guard_allocator!();
//! libfuzzer_sys::fuzz_target!(|data: &[u8]| bitlens_fuzz_guard::bounded(data, my_harness));
//! ```
//!
//! Two limits, and the process aborts (libFuzzer reports a crash with the input) on either:
//!
//! - **one allocation** above [`LIMIT`] (1 MiB), anywhere in the process;
//! - **the total allocated for one input** above [`budget`]`(len)` = [`PER_INPUT_FACTOR`] (64) x
//!   the input's length + [`PER_INPUT_BASE`] (1 MiB): every allocation while [`bounded`] runs,
//!   and every reallocation's growth, freed or not. A reader that allocates a little per field
//!   in a loop that a hostile count drives stays under the first limit and trips this one.
//!
//! Neither limit applies while a thread panics: the panic is the finding, and its message and
//! backtrace (whose symbol tables take several MiB) must reach libFuzzer's report.
//!
//! Decoding must never allocate by an unchecked length (bitlens STYLE.md rule 2): these limits
//! make a violation a finding even when the allocation would succeed. Allocations outside
//! [`bounded`] (libFuzzer's own, between inputs) count toward no budget.
//!
//! This crate holds the only `unsafe` of bitlens's fuzzing (`unsafe impl GlobalAlloc`, every
//! method forwarding to [`System`]); the codec crates forbid `unsafe`.
//!
//! In fuzz builds (`cfg(fuzzing)`, a nightly or `RUSTC_BOOTSTRAP=1` toolchain, as cargo fuzz
//! needs anyway) the four [`GlobalAlloc`] methods are compiled without ASan's instrumentation
//! (`#[sanitize(address = "off")]`): they run on every allocation of every crate, and ASan gave
//! each call a fake stack frame (use-after-return detection, for `System`'s inlined
//! `posix_memalign` out-parameter) and shadow checks of the atomics they read. What they forward
//! to stays checked: `System` is libc's `malloc`, which ASan's runtime replaces (redzones,
//! quarantine, double-free and leak detection are unchanged). fuzz/README.md, "Fuzz throughput,
//! issue 30" (fourth pass).
#![cfg_attr(fuzzing, feature(sanitize))]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The largest single allocation: 1 MiB.
pub const LIMIT: usize = 1 << 20;

/// Bytes of budget per input byte in [`budget`].
pub const PER_INPUT_FACTOR: usize = 64;

/// Bytes of budget every input gets, whatever its length, in [`budget`].
pub const PER_INPUT_BASE: usize = 1 << 20;

/// No input is running: nothing is counted against a budget.
const NO_BUDGET: usize = usize::MAX;

/// The budget of the input running now, or [`NO_BUDGET`].
static BUDGET: AtomicUsize = AtomicUsize::new(NO_BUDGET);
/// The length of the input running now (for the message).
static INPUT_LEN: AtomicUsize = AtomicUsize::new(0);
/// Bytes allocated since the input started.
static USED: AtomicUsize = AtomicUsize::new(0);

/// The total an input of `len` bytes may allocate: `64 x len + 1 MiB` (saturating).
pub const fn budget(len: usize) -> usize {
    len.saturating_mul(PER_INPUT_FACTOR)
        .saturating_add(PER_INPUT_BASE)
}

/// Runs `harness` on `data` with the per-input budget [`budget`]`(data.len())`; returns what it
/// returns. Only counts when [`GuardAlloc`] is the global allocator.
///
/// # Panics
/// Whatever `harness` panics with; the budget is lifted as the panic unwinds.
pub fn bounded<R>(data: &[u8], harness: impl FnOnce(&[u8]) -> R) -> R {
    let _input = Input::start(data.len());
    harness(data)
}

/// [`bounded`] with a budget the harness chooses: for a harness that keeps, by design, more per
/// input byte than a reader may (bitlens's harnesses that record a field tree use
/// `bitlens_testkit::fuzzing::traced_budget`: the reader's budget plus one trace entry per input
/// bit).
///
/// # Panics
/// Whatever `harness` panics with; the budget is lifted as the panic unwinds.
pub fn bounded_with<R>(data: &[u8], budget: usize, harness: impl FnOnce(&[u8]) -> R) -> R {
    let _input = Input::start_with(budget, data.len());
    harness(data)
}

/// Runs `f` counting what it allocates, with no budget (for tests that measure the ratio a
/// reader needs): returns `f`'s result and the bytes allocated. Zero unless [`GuardAlloc`] is
/// the global allocator. Not reentrant with [`bounded`].
pub fn allocated_by<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let input = Input::start_with(usize::MAX - 1, 0);
    let r = f();
    let used = USED.load(Ordering::Relaxed);
    drop(input);
    (r, used)
}

/// The budget of one input, lifted on drop (also while a panic unwinds).
struct Input;

impl Input {
    fn start(len: usize) -> Input {
        Input::start_with(budget(len), len)
    }

    fn start_with(budget: usize, len: usize) -> Input {
        USED.store(0, Ordering::Relaxed);
        INPUT_LEN.store(len, Ordering::Relaxed);
        BUDGET.store(budget, Ordering::Relaxed);
        Input
    }
}

impl Drop for Input {
    fn drop(&mut self) {
        BUDGET.store(NO_BUDGET, Ordering::Relaxed);
    }
}

/// A global allocator that forwards to [`System`] and aborts on an allocation above [`LIMIT`]
/// or an input's total above its [`budget`].
pub struct GuardAlloc;

/// Counts `grown` bytes against the running input's budget; aborts past it.
#[inline]
fn count(grown: usize) {
    let budget = BUDGET.load(Ordering::Relaxed);
    if budget == NO_BUDGET || std::thread::panicking() {
        return;
    }
    let used = USED
        .fetch_add(grown, Ordering::Relaxed)
        .saturating_add(grown);
    if used > budget {
        over_budget(used, budget);
    }
}

/// Aborts on an allocation above [`LIMIT`], unless the thread is panicking: a panic is the
/// finding already, and the panic hook's backtrace (several MiB of symbol tables) must not
/// turn it into this guard's abort, which would hide its message.
#[inline]
fn check_single(size: usize) {
    if size > LIMIT && !std::thread::panicking() {
        too_large(size);
    }
}

/// Writes `args` to stderr through a fixed buffer (no allocation: the allocator is failing)
/// and aborts.
#[cold]
fn abort_with(args: std::fmt::Arguments<'_>) -> ! {
    use std::io::Write;
    let mut msg = [0u8; 256];
    let mut cursor = std::io::Cursor::new(&mut msg[..]);
    let _ = cursor.write_fmt(args);
    let n = cursor.position() as usize;
    let _ = std::io::stderr().write_all(&msg[..n]);
    std::process::abort();
}

#[cold]
fn too_large(size: usize) -> ! {
    abort_with(format_args!(
        "bitlens-fuzz-guard: allocation of {size} bytes exceeds 1 MiB\n"
    ))
}

#[cold]
fn over_budget(used: usize, budget: usize) -> ! {
    let len = INPUT_LEN.load(Ordering::Relaxed);
    abort_with(format_args!(
        "bitlens-fuzz-guard: an input of {len} bytes allocated {used} bytes in total, over its \
         budget of {budget}\n"
    ))
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged, after checks
// that only count and abort; the `GlobalAlloc` contract is therefore the one `System` upholds.
unsafe impl GlobalAlloc for GuardAlloc {
    #[cfg_attr(fuzzing, sanitize(address = "off"))]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        check_single(layout.size());
        count(layout.size());
        // SAFETY: forwarded unchanged (see the impl comment).
        unsafe { System.alloc(layout) }
    }

    #[cfg_attr(fuzzing, sanitize(address = "off"))]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        check_single(layout.size());
        count(layout.size());
        // SAFETY: forwarded unchanged.
        unsafe { System.alloc_zeroed(layout) }
    }

    #[cfg_attr(fuzzing, sanitize(address = "off"))]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged.
        unsafe { System.dealloc(ptr, layout) }
    }

    #[cfg_attr(fuzzing, sanitize(address = "off"))]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        check_single(new_size);
        count(new_size.saturating_sub(layout.size()));
        // SAFETY: forwarded unchanged.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Installs [`GuardAlloc`] as the global allocator of a fuzz target binary.
#[macro_export]
macro_rules! guard_allocator {
    () => {
        #[global_allocator]
        static GUARD: $crate::GuardAlloc = $crate::GuardAlloc;
    };
}
