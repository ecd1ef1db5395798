//! The fuzz crate (`fuzz/`) and `tests/fuzz_corpus.rs` are what `bitlens fuzz-init` writes for
//! this crate's packet set: regenerate them with
//! `bitlens fuzz-init --packet custom_protocol::Packet --crate-dir examples/custom-protocol
//! --bitlens . --no-default-features --force` (the fuzz build leaves the inspector out).

use bitlens::cmd::fuzz_init::{Options, TARGETS, files};
use std::path::PathBuf;

#[test]
fn the_committed_fuzz_crate_is_what_fuzz_init_writes() {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let opts = Options {
        bitlens: Some(here.join("../..")),
        default_features: false,
        ..Options::new(&here, "custom_protocol::Packet", "bitlens")
    };
    let files = files(&opts).unwrap();
    assert_eq!(files.len(), TARGETS.len() + 3);
    for f in files {
        let path = here.join(&f.path);
        let on_disk =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(
            on_disk,
            f.text,
            "{} differs from fuzz-init's",
            f.path.display()
        );
    }
    // Each target has a seeded corpus, replayed by tests/fuzz_corpus.rs.
    for (target, _) in TARGETS {
        let dir = here.join("fuzz/corpus").join(target);
        assert!(
            std::fs::read_dir(&dir).unwrap().count() > 100,
            "{}",
            dir.display()
        );
    }
}
