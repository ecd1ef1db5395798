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
    /// Craft one packet from JSON with a schema; the bytes go to stdout.
    Encode {
        /// The schema (TOML).
        #[arg(long)]
        schema: PathBuf,
        /// The packet type's name.
        #[arg(long = "type")]
        packet_type: String,
        /// The packet body as JSON.
        #[arg(long)]
        json: PathBuf,
    },
    /// Decode one raw packet with a schema, field by field (exit status 1 if it is rejected).
    DecodeBytes {
        /// The schema (TOML).
        #[arg(long)]
        schema: PathBuf,
        /// The packet's bytes.
        packet: PathBuf,
        /// Print the trace and value as JSON.
        #[arg(long)]
        json: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Encode {
            schema,
            packet_type,
            json,
        } => match bitlens::cmd::encode::run(&schema, &packet_type, &json) {
            Ok(bytes) => {
                use std::io::Write as _;
                let mut out = std::io::stdout().lock();
                match out.write_all(&bytes).and_then(|()| out.flush()) {
                    Ok(()) => ExitCode::SUCCESS,
                    Err(err) => {
                        eprintln!("bitlens: {err}");
                        ExitCode::FAILURE
                    }
                }
            }
            Err(err) => {
                eprintln!("bitlens: {err:#}");
                ExitCode::from(2)
            }
        },
        Command::DecodeBytes {
            schema,
            packet,
            json,
        } => match bitlens::cmd::decode_bytes::run(
            &schema,
            &packet,
            json,
            &mut std::io::stdout().lock(),
        ) {
            Ok(true) => ExitCode::SUCCESS,
            Ok(false) => ExitCode::FAILURE,
            Err(err) => {
                eprintln!("bitlens: {err:#}");
                ExitCode::from(2)
            }
        },
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
