//! A count of the loader's operations, for the tests that load schemas at their caps: each
//! name checked, each name looked up or entered in a table, each name an include copies, on
//! this thread. A loader that stays linear counts the same work again for each entry more; one
//! that turns quadratic (a duplicate check that scans its siblings again for each entry) does
//! not, whatever the machine's load. Not part of the API.

use std::cell::Cell;

thread_local! {
    static STEPS: Cell<u64> = const { Cell::new(0) };
}

/// Counts `n` operations.
pub(crate) fn steps(n: usize) {
    STEPS.with(|s| s.set(s.get().saturating_add(n as u64)));
}

/// Counts one operation.
pub(crate) fn step() {
    steps(1);
}

/// The operations counted on this thread since the last [`reset`].
pub fn count() -> u64 {
    STEPS.with(Cell::get)
}

/// Starts the count again from 0.
pub fn reset() {
    STEPS.with(|s| s.set(0));
}
