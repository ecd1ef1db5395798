//! Shared pieces of the bitlens fuzz targets: the guard allocator.
//!
//! libFuzzer's `-malloc_limit_mb` only works with a sanitizer's allocator hooks, so every target
//! installs [`GuardAlloc`] as its global allocator (`bitlens_fuzz::guard_allocator!()`): a single
//! allocation above [`LIMIT`] aborts the process, which libFuzzer reports as a crash with the
//! input that caused it. Decoding must never allocate by an unchecked length (STYLE.md rule 2);
//! this turns a violation into a finding even when the allocation would succeed.

use std::alloc::{GlobalAlloc, Layout, System};

/// The largest single allocation a target may make: 1 MiB.
pub const LIMIT: usize = 1 << 20;

/// A global allocator that forwards to [`System`] and aborts on any allocation above [`LIMIT`].
pub struct GuardAlloc;

#[cold]
fn too_large(size: usize) -> ! {
    // No allocation here: write the message with a fixed buffer straight to stderr.
    use std::io::Write;
    let mut msg = [0u8; 96];
    let mut cursor = std::io::Cursor::new(&mut msg[..]);
    let _ = writeln!(
        cursor,
        "bitlens-fuzz: allocation of {size} bytes exceeds 1 MiB"
    );
    let n = cursor.position() as usize;
    let _ = std::io::stderr().write_all(&msg[..n]);
    std::process::abort();
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged, after a size
// check that only aborts; the `GlobalAlloc` contract is therefore the one `System` upholds.
unsafe impl GlobalAlloc for GuardAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() > LIMIT {
            too_large(layout.size());
        }
        // SAFETY: forwarded unchanged (see the impl comment).
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.size() > LIMIT {
            too_large(layout.size());
        }
        // SAFETY: forwarded unchanged.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > LIMIT {
            too_large(new_size);
        }
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
