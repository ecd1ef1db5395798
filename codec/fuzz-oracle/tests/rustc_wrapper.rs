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
    // The guard allocator: `unsafe impl GlobalAlloc`, no forbid. An oracle (its manifest says
    // so: it only checks allocation limits), so no coverage either.
    let args = passed(
        &repo().join("codec/fuzz-guard"),
        &["src/lib.rs", SANCOV, FOLD, ASAN],
        &[],
    );
    assert!(has(&args, ASAN), "{args:?}");
    assert!(!has(&args, SANCOV) && !has(&args, FOLD), "{args:?}");
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

/// What the wrapper decided for a dependency (a crate outside the repository, compiled with
/// `--cap-lints allow` as cargo compiles one) whose crate root is `root`, compiled for real by
/// rustc (`--emit=metadata`) with `extra` arguments: `(drop coverage, drop ASan)`, from the
/// wrapper's log.
fn dependency_decision(
    name: &str,
    root: &str,
    extra: &[&str],
    env: &[(&str, &str)],
) -> (bool, bool) {
    let dir = std::env::temp_dir().join(format!("bitlens-wrapper-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).expect("scratch folder");
    let lib = dir.join("src/lib.rs");
    std::fs::write(&lib, root).expect("crate root");
    let log = dir.join("wrapper.log");
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let mut cmd = Command::new("sh");
    cmd.arg(repo().join("fuzz/rustc-sancov.sh"))
        .arg(rustc)
        .args([
            "--crate-name",
            "dep",
            "--crate-type",
            "lib",
            "--edition",
            "2021",
        ])
        .arg(&lib)
        .args([
            "--emit=dep-info,metadata",
            "--cap-lints",
            "allow",
            SANCOV,
            ASAN,
        ])
        .arg("--out-dir")
        .arg(&dir)
        .args(extra)
        .env("CARGO_MANIFEST_DIR", &dir)
        .env("FUZZ_WRAPPER_LOG", &log)
        // `-Zsanitizer` on a stable rustc, as `RUSTC_BOOTSTRAP=1 cargo fuzz` does.
        .env("RUSTC_BOOTSTRAP", "1")
        .env_remove("FUZZ_ASAN_ALL")
        .env_remove("FUZZ_INSTRUMENT_ALL")
        .current_dir(&dir);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("sh runs");
    assert!(
        out.status.success(),
        "the compilation itself fails: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let logged = std::fs::read_to_string(&log).expect("the wrapper logs its decision");
    let _ = std::fs::remove_dir_all(&dir);
    (
        logged.contains("drop-cov=1"),
        logged.contains("drop-asan=1"),
    )
}

const SAFE: &str = "pub fn first(x: &[u8]) -> u8 {\n    x[0]\n}\n";
const UNSAFE: &str = "pub fn first(x: &[u8]) -> u8 {\n    unsafe { *x.get_unchecked(0) }\n}\n";

#[test]
fn a_dependency_whose_root_forbids_unsafe_loses_asan() {
    // toml, toml_datetime, serde_spanned: the attribute alone or in a list.
    for lint in [
        "#![forbid(unsafe_code)]",
        "#![forbid(non_ascii_idents, unsafe_code)]",
    ] {
        let root = format!("{lint}\n{SAFE}");
        assert_eq!(
            dependency_decision("forbid", &root, &[], &[]),
            (true, true),
            "{lint}"
        );
    }
    // FUZZ_ASAN_ALL=1: ASan everywhere.
    let root = format!("#![forbid(unsafe_code)]\n{SAFE}");
    assert_eq!(
        dependency_decision("all", &root, &[], &[("FUZZ_ASAN_ALL", "1")]),
        (true, false)
    );
}

#[test]
fn a_dependency_whose_forbid_the_cap_lifts_over_unsafe_keeps_asan() {
    // `--cap-lints allow` lowers the forbid: the compilation succeeds with the `unsafe` in it,
    // and only the wrapper's uncapped check sees it.
    let root = format!("#![forbid(unsafe_code)]\n{UNSAFE}");
    assert_eq!(
        dependency_decision("capped", &root, &[], &[]),
        (true, false)
    );
    // No forbid at all (serde_json, winnow): ASan, whatever the code.
    assert_eq!(dependency_decision("plain", SAFE, &[], &[]), (true, false));
}

#[test]
fn a_cfg_attr_forbid_counts_only_where_this_compilation_decides_it() {
    // toml_parser: `unsafe` only with its `unsafe` feature, forbidden without it.
    let root = format!(
        "#![cfg_attr(not(feature = \"unsafe\"), forbid(unsafe_code))]\n\
         #[cfg(feature = \"unsafe\")]\n{UNSAFE}#[cfg(not(feature = \"unsafe\"))]\n{SAFE}"
    );
    assert_eq!(dependency_decision("nofeat", &root, &[], &[]), (true, true));
    let with = ["--cfg", "feature=\"unsafe\""];
    assert_eq!(
        dependency_decision("feat", &root, &with, &[]),
        (true, false)
    );
    // bitflags: forbidden unless compiled as a test.
    let root = format!("#![cfg_attr(not(test), forbid(unsafe_code))]\n{SAFE}");
    assert_eq!(
        dependency_decision("nottest", &root, &[], &[]),
        (true, true)
    );
    assert_eq!(
        dependency_decision("test", &root, &["--test"], &[]),
        (true, false)
    );
    // Forms the wrapper does not decide keep ASan: another cfg, a forbid over several lines.
    let root = format!("#![cfg_attr(feature = \"strict\", forbid(unsafe_code))]\n{SAFE}");
    assert_eq!(
        dependency_decision("othercfg", &root, &[], &[]),
        (true, false)
    );
    let root = format!("#![forbid(\n    unsafe_code\n)]\n{SAFE}");
    assert_eq!(dependency_decision("lines", &root, &[], &[]), (true, false));
}

#[test]
fn the_fuzzing_engine_is_compiled_without_asan() {
    // libfuzzer-sys compiles libFuzzer's C++ with the `cc` crate, which adds
    // `-fsanitize=address` when rustc's ASan is on; `-fno-sanitize=address` in CXXFLAGS (set by
    // the repository's cargo configuration for every cargo run from it) turns it off again.
    let config = std::fs::read_to_string(repo().join(".cargo/config.toml")).expect("config");
    let env = config.split("\n[env]\n").nth(1).expect("an [env] table");
    let env = env.split("\n[").next().unwrap_or(env);
    assert!(
        env.lines()
            .any(|l| l.trim() == "CXXFLAGS = \"-fno-sanitize=address\""),
        "{env}"
    );
}
