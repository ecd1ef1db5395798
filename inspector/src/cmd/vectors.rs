//! `bitlens vectors FILE...`: runs conformance vector files through every stream.

use bitlens_testkit::vectors;
use std::path::PathBuf;
use std::process::ExitCode;

/// Runs every file, prints one line per failing vector and the closing `N passed, M failed`.
/// Exit status 1 if any vector failed, 2 if a file could not be read or parsed.
pub fn run(files: &[PathBuf]) -> ExitCode {
    let (mut passed, mut failed, mut broken) = (0usize, 0usize, false);
    for file in files {
        let text = match super::common::read_text(file) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("bitlens: {e}");
                broken = true;
                continue;
            }
        };
        match vectors::run(&text) {
            Ok(report) => {
                passed += report.passed.len();
                failed += report.failed.len();
                for (name, why) in &report.failed {
                    println!("FAIL {}: {name}: {why}", file.display());
                }
            }
            Err(e) => {
                eprintln!("bitlens: {}: {e}", file.display());
                broken = true;
            }
        }
    }
    println!("{passed} passed, {failed} failed");
    if broken {
        ExitCode::from(2)
    } else if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
