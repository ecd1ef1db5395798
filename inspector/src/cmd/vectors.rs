//! `vectors FILE...`: runs conformance vector files through every stream.

use super::common::{Context, Exit};
use bitlens_demo::vectors;
use clap::Parser;
use std::path::PathBuf;

/// Run conformance vector files (format bitlens-vectors/1) through every stream (exit status
/// 1 when a vector fails).
#[derive(Parser, Debug)]
pub struct VectorsArgs {
    /// Vector files.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
}

/// The subcommand.
///
/// # Errors
/// None of its own: files that cannot be read are reported as they come (see [`run`]).
pub fn command(args: VectorsArgs, ctx: &Context<'_>) -> anyhow::Result<Exit> {
    run(&args.files, ctx.program())
}

/// Runs every file, prints one line per failing vector and the closing `N passed, M failed`;
/// a file that cannot be read or parsed is reported on stderr after `program`'s name.
/// [`Exit::Rejected`] if any vector failed, [`Exit::Failed`] if a file could not be read or
/// parsed.
///
/// # Errors
/// Standard output cannot be written.
pub fn run(files: &[PathBuf], program: &str) -> anyhow::Result<Exit> {
    use std::io::Write as _;
    let mut out = crate::files::stdout();
    let (mut passed, mut failed, mut broken) = (0usize, 0usize, false);
    for file in files {
        let text = match super::common::read_text(file) {
            Ok(t) => t,
            Err(e) => {
                stderr_line!("{program}: {e}");
                broken = true;
                continue;
            }
        };
        match vectors::run(&text) {
            Ok(report) => {
                passed += report.passed.len();
                failed += report.failed.len();
                for (name, why) in &report.failed {
                    writeln!(out, "FAIL {}: {name}: {why}", file.display())?;
                }
            }
            Err(e) => {
                stderr_line!("{program}: {}: {e}", file.display());
                broken = true;
            }
        }
    }
    writeln!(out, "{passed} passed, {failed} failed")?;
    Ok(if broken {
        Exit::Failed
    } else if failed > 0 {
        Exit::Rejected
    } else {
        Exit::Ok
    })
}
