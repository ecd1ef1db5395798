//! The guard's two limits, in a test binary whose global allocator is the guard: what stays
//! within them runs, and what passes one aborts the process with a message naming the limit
//! (checked in a child process, since an abort ends the process). What is counted is checked
//! in a child too: the counters are the process's, and libtest's other threads allocate.

use bitlens_fuzz_guard::{LIMIT, allocated_by, bounded, budget};
use std::hint::black_box;
use std::process::Command;

bitlens_fuzz_guard::guard_allocator!();

/// The environment variable that makes `child` run one case.
const CASE: &str = "BITLENS_FUZZ_GUARD_CASE";

/// Runs the `child` test of this binary with `case` and returns (success, stderr).
fn run_child(case: &str) -> (bool, String) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child", "--nocapture", "--test-threads=1"])
        .env(CASE, case)
        .env("RUST_BACKTRACE", "1")
        .output()
        .expect("the test binary runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Keeps `chunks` allocations of `size` bytes alive at once, then frees them.
fn hold(chunks: usize, size: usize) -> usize {
    let v: Vec<Vec<u8>> = (0..chunks).map(|_| black_box(vec![1u8; size])).collect();
    v.iter().map(Vec::len).sum()
}

/// Allocates and frees `chunks` allocations of `size` bytes one after the other.
fn churn(chunks: usize, size: usize) -> usize {
    (0..chunks).map(|_| black_box(vec![1u8; size]).len()).sum()
}

#[test]
fn child() {
    let Ok(case) = std::env::var(CASE) else {
        return;
    };
    let input = [0u8; 1000];
    match case.as_str() {
        "single" => {
            black_box(vec![0u8; LIMIT + 1]);
        }
        // 2 MiB in 32 KiB pieces, each freed at once: only the total can catch it.
        "total" => {
            bounded(&input, |_| churn(64, 32 << 10));
        }
        "within" => {
            // Up to the budget of a 1000-byte input (1 MiB + 64 000), in pieces, and a loop of
            // 5 MiB allocated outside any input.
            bounded(&input, |d| churn(16, (budget(d.len()) - 4096) / 16));
            churn(160, 32 << 10);
        }
        // A finding: the panic's message and backtrace come out whole, not the guard's abort.
        "counted" => counted(),
        "panic" => {
            bounded(&input, |_| panic!("the harness found a bug"));
        }
        other => panic!("unknown case {other}"),
    }
    eprintln!("child: {case} finished");
}

#[test]
fn one_allocation_over_1_mib_aborts() {
    let (ok, err) = run_child("single");
    assert!(!ok);
    assert!(
        err.contains(&format!(
            "bitlens-fuzz-guard: allocation of {} bytes exceeds 1 MiB",
            LIMIT + 1
        )),
        "{err}"
    );
}

#[test]
fn an_input_allocating_past_its_budget_aborts() {
    let (ok, err) = run_child("total");
    assert!(!ok);
    assert!(
        err.contains("bitlens-fuzz-guard: an input of 1000 bytes allocated")
            && err.contains("over its budget of 1112576\n"),
        "{err}"
    );
    assert!(!err.contains("finished"), "{err}");
}

#[test]
fn within_the_budget_and_outside_inputs_nothing_aborts() {
    let (ok, err) = run_child("within");
    assert!(ok, "{err}");
    assert!(err.contains("child: within finished"), "{err}");
}

#[test]
fn a_panic_under_the_guard_keeps_its_message_and_backtrace() {
    let (ok, err) = run_child("panic");
    assert!(!ok);
    assert!(err.contains("the harness found a bug"), "{err}");
    assert!(err.contains("stack backtrace"), "{err}");
    assert!(!err.contains("bitlens-fuzz-guard"), "{err}");
}

#[test]
fn the_budget_is_64_per_input_byte_plus_1_mib() {
    assert_eq!(budget(0), 1 << 20);
    assert_eq!(budget(1000), (1 << 20) + 64_000);
    assert_eq!(budget(usize::MAX), usize::MAX);
}

#[test]
fn allocations_and_growth_are_counted() {
    let (ok, err) = run_child("counted");
    assert!(ok, "{err}");
    assert!(err.contains("child: counted finished"), "{err}");
}

/// The `counted` case, alone in a child process on one thread: libtest's own threads allocate
/// too, and the counters are the process's.
fn counted() {
    let ((), n) = allocated_by(|| {
        black_box(Vec::<u8>::with_capacity(1000));
    });
    assert_eq!(n, 1000);
    let ((), n) = allocated_by(|| {
        let mut v: Vec<u8> = Vec::with_capacity(100);
        v.reserve_exact(400);
        black_box(v);
    });
    assert_eq!(n, 400, "100, then 300 of growth");
    let (held, n) = allocated_by(|| hold(4, 1 << 10));
    assert_eq!(held, 4096);
    assert!(n >= 4096 + 4 * 24, "the chunks and the outer vector: {n}");
}
