//! `fuzz/rustc-sancov.sh`, the rustc wrapper of fuzz builds: which instrumentation it leaves to
//! which crate. It runs here with `echo` in place of rustc, so each case reads the arguments the
//! real rustc would get.

use std::path::{Path, PathBuf};
use std::process::Command;

const SANCOV: &str = "-Cpasses=sancov-module";
const FOLD: &str = "-Cllvm-args=-simplifycfg-branch-fold-threshold=0";
const ASAN: &str = "-Zsanitizer=address";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The arguments the wrapper passes on for a compilation of the crate in `manifest_dir` (a
/// folder of the repository, or any other) with `args`, under the extra environment `env`.
fn passed(manifest_dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Vec<String> {
    let mut cmd = Command::new("sh");
    cmd.arg(repo().join("fuzz/rustc-sancov.sh"))
        .arg("echo")
        .args(args)
        .env("CARGO_MANIFEST_DIR", manifest_dir)
        .env_remove("FUZZ_ASAN_ALL")
        .env_remove("FUZZ_INSTRUMENT_ALL")
        .env_remove("FUZZ_WRAPPER_LOG")
        .current_dir(std::env::temp_dir());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("sh runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .expect("utf-8")
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

fn has(args: &[String], flag: &str) -> bool {
    args.iter().any(|a| a == flag)
}

#[test]
fn a_dependency_keeps_asan_and_loses_the_coverage() {
    let args = passed(
        Path::new("/nonexistent/registry/serde"),
        &["src/lib.rs", SANCOV, FOLD, ASAN, "-Copt-level=3"],
        &[],
    );
    assert!(has(&args, ASAN) && has(&args, "-Copt-level=3"), "{args:?}");
    assert!(!has(&args, SANCOV) && !has(&args, FOLD), "{args:?}");
}

#[test]
fn a_crate_that_forbids_unsafe_loses_asan_and_keeps_the_coverage() {
    let codec = repo().join("codec");
    // The workspace's lint, as cargo passes it.
    let args = passed(
        &codec,
        &[
            "src/lib.rs",
            SANCOV,
            "-Z",
            "sanitizer=address",
            "--forbid=unsafe_code",
        ],
        &[],
    );
    assert!(has(&args, SANCOV), "{args:?}");
    assert!(
        !args.iter().any(|a| a.contains("sanitizer=address")),
        "{args:?}"
    );
    // `#![forbid(unsafe_code)]` in the crate root (codec/src/lib.rs has it), no lint flag.
    let args = passed(&codec, &["src/lib.rs", SANCOV, ASAN], &[]);
    assert!(has(&args, SANCOV) && !has(&args, ASAN), "{args:?}");
    // FUZZ_ASAN_ALL=1: ASan everywhere.
    let args = passed(
        &codec,
        &["src/lib.rs", SANCOV, ASAN, "--forbid=unsafe_code"],
        &[("FUZZ_ASAN_ALL", "1")],
    );
    assert!(has(&args, SANCOV) && has(&args, ASAN), "{args:?}");
}

#[test]
fn a_crate_that_may_hold_unsafe_keeps_asan() {
    // The guard allocator: `unsafe impl GlobalAlloc`, no forbid.
    let args = passed(
        &repo().join("codec/fuzz-guard"),
        &["src/lib.rs", SANCOV, ASAN],
        &[],
    );
    assert!(has(&args, SANCOV) && has(&args, ASAN), "{args:?}");
}

#[test]
fn an_oracle_loses_the_coverage_and_asan() {
    let args = passed(
        Path::new(env!("CARGO_MANIFEST_DIR")),
        &["src/lib.rs", SANCOV, FOLD, ASAN, "--forbid=unsafe_code"],
        &[],
    );
    assert!(!has(&args, SANCOV) && !has(&args, FOLD), "{args:?}");
    assert!(!has(&args, ASAN), "{args:?}");
}

#[test]
fn a_build_without_the_coverage_pass_runs_as_is() {
    let given = ["src/lib.rs", ASAN, "--forbid=unsafe_code", "-Copt-level=3"];
    let args = passed(&repo().join("codec"), &given, &[]);
    assert_eq!(args, given);
}
