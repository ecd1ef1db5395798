//! Corpus replay shared by `codec/testkit/tests/corpus_replay.rs` and `inspector/tests/corpus_replay.rs`
//! (included with `#[path]`): walks `corpus/<target>/`, runs every file through the target's
//! harness function, and checks that every fuzz target in `fuzz/fuzz_targets/` has a corpus
//! folder and a replay mapping in one of the two tests.

#![allow(dead_code)]

use std::collections::BTreeSet;
use std::fs;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

/// A harness function, as called by a fuzz target.
pub type Harness = fn(&[u8]);

/// The replay tests of the workspace and the targets each maps. A new target goes into the
/// `TARGETS` table of the test whose crate holds its harness, and into this list.
pub const REPLAY_TESTS: &[&str] = &[
    "codec/testkit/tests/corpus_replay.rs",
    "inspector/tests/corpus_replay.rs",
];

/// The repository root: the nearest folder above the crate running the test that holds
/// `corpus/` (crates sit at different depths).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .find(|p| p.join("corpus").is_dir() && p.join("Cargo.toml").is_file())
        .expect("the repository root holds corpus/")
        .to_path_buf()
}

/// The names of the fuzz targets: the stems of `fuzz/fuzz_targets/*.rs`.
pub fn fuzz_targets() -> BTreeSet<String> {
    let dir = root().join("fuzz/fuzz_targets");
    fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect()
}

/// The files of `corpus/<target>/`, sorted; panics when the folder is missing or empty.
pub fn corpus_files(target: &str) -> Vec<PathBuf> {
    let dir = root().join("corpus").join(target);
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|e| {
            panic!(
                "fuzz target {target} has no corpus folder {} ({e}): see fuzz/README.md, \
                 'Adding a target'",
                dir.display()
            )
        })
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(
        !files.is_empty(),
        "corpus folder {} is empty",
        dir.display()
    );
    files
}

/// Runs every corpus file of `target` through `harness`; fails naming every file that panics.
/// Returns how many files ran.
pub fn replay(target: &str, harness: Harness) -> usize {
    let files = corpus_files(target);
    let mut failed = Vec::new();
    for file in &files {
        let data = fs::read(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        if catch_unwind(AssertUnwindSafe(|| harness(&data))).is_err() {
            failed.push(file.display().to_string());
        }
    }
    assert!(
        failed.is_empty(),
        "{target}: {} of {} corpus files failed (reproduce: cargo fuzz run {target} FILE):\n{}",
        failed.len(),
        files.len(),
        failed.join("\n")
    );
    files.len()
}

/// Checks that every fuzz target is mapped by exactly one replay test (the string `"<target>"`
/// appears in its `TARGETS` table) and has a corpus, and that `mapped` (this test's table) names
/// only targets that exist.
pub fn check_mapping(mapped: &[&str]) {
    let targets = fuzz_targets();
    for t in mapped {
        assert!(
            targets.contains(*t),
            "replay maps {t}, but fuzz/fuzz_targets/{t}.rs does not exist"
        );
    }
    let sources: Vec<(&str, String)> = REPLAY_TESTS
        .iter()
        .map(|p| {
            let text = fs::read_to_string(root().join(p)).unwrap_or_default();
            // Only the `TARGETS` table counts, not a mention elsewhere in the file.
            let table = text
                .split_once("const TARGETS")
                .and_then(|(_, rest)| rest.split_once("];"))
                .map_or(String::new(), |(table, _)| table.to_owned());
            (*p, table)
        })
        .collect();
    for t in &targets {
        // The quoted name followed by a comma, however rustfmt wraps the tuple.
        let quoted = format!("\"{t}\",");
        let owners: Vec<&str> = sources
            .iter()
            .filter(|(_, text)| text.contains(&quoted))
            .map(|(p, _)| *p)
            .collect();
        assert_eq!(
            owners.len(),
            1,
            "fuzz target {t} must be replayed by exactly one of {REPLAY_TESTS:?} (add \
             (\"{t}\", harness) to its TARGETS table); found in {owners:?}"
        );
        corpus_files(t);
    }
}

/// Writes a named seed file into `corpus/<target>/`.
pub fn write_seed(target: &str, name: &str, data: &[u8]) {
    let dir = root().join("corpus").join(target);
    fs::create_dir_all(&dir).expect("create corpus folder");
    fs::write(dir.join(name), data).expect("write seed");
}

/// A small deterministic generator for searching seed inputs.
pub struct XorShift(pub u64);

impl XorShift {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// `len` random bytes.
    pub fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next_u64() as u8).collect()
    }
}
