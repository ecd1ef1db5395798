//! `bitlens`: inspect, decode and check captures of bit-packed game traffic.

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

/// Inspect, decode and check captures of bit-packed game traffic.
#[derive(Parser)]
#[command(name = "bitlens", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run conformance vector files (format bitlens-vectors/1) through every stream.
    Vectors {
        /// Vector files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Dump a tagged document (save file) without knowing its type, like `protoc --decode_raw`.
    Tagged {
        /// The document to dump.
        file: PathBuf,
        /// Print `{"fields": [...]}` JSON instead of the indented text tree.
        #[arg(long)]
        json: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Vectors { files } => bitlens::cmd::vectors::run(&files),
        Command::Tagged { file, json } => {
            match bitlens::cmd::tagged::run(&file, json, &mut std::io::stdout().lock()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(err) => {
                    eprintln!("bitlens: {err:#}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}
