//! `bitlens`: inspect, decode and check captures of bit-packed game traffic.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Inspect, decode and check captures of bit-packed game traffic.
#[derive(Parser)]
#[command(name = "bitlens", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
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
    let result = match &cli.command {
        Command::Tagged { file, json } => {
            bitlens::tagged_cmd::run(file, *json, &mut std::io::stdout().lock())
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("bitlens: {err:#}");
            ExitCode::FAILURE
        }
    }
}
