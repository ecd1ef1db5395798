//! `bitlens`: inspect, decode and check captures of bit-packed game traffic.

use bitlens::cmd::{self, common::DecodeOpts};
use clap::{Parser, Subcommand};
use std::io::Write;
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
    /// Open a capture in the terminal UI: packet list, field tree, bit view, check markers.
    Inspect {
        /// A pcap or pcapng file.
        capture: PathBuf,
        #[command(flatten)]
        opts: DecodeOpts,
    },
    /// Decode every UDP datagram of a capture: one line (or JSON object) per datagram.
    Decode {
        /// A pcap or pcapng file.
        capture: PathBuf,
        /// One JSON object per datagram (frame, time, src, dst, len, decoder, status,
        /// packet_type, fields, checks, error, desync).
        #[arg(long)]
        json: bool,
        /// Print the field tree under each datagram (text form).
        #[arg(long, conflicts_with = "json")]
        fields: bool,
        #[command(flatten)]
        opts: DecodeOpts,
    },
    /// Summarise a capture: packets per type and status, the first problem of each kind.
    /// Exit 0 when every datagram decodes, 1 when any does not, 2 on a usage or file error.
    Check {
        /// A pcap or pcapng file.
        capture: PathBuf,
        /// Also fail (exit 1) on datagrams that no decoder is set for.
        #[arg(long)]
        strict: bool,
        #[command(flatten)]
        opts: DecodeOpts,
    },
    /// Write a capture of demo traffic (several clients, every packet type, 60 Hz).
    Synth {
        /// The capture file to write.
        out: PathBuf,
        /// How many datagrams.
        #[arg(long, default_value_t = 1000)]
        packets: usize,
        /// Seed of the generator (same seed, same bytes).
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Add labelled faults (desync, truncation, bit flips, out-of-range counts, wrong
        /// protocol id, corrupt CRC, snap-length cuts, IP fragments); labels go to
        /// OUT.labels.json.
        #[arg(long)]
        faults: bool,
        /// File format and link layer.
        #[arg(long, value_enum, default_value_t)]
        format: cmd::synth::Format,
    },
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
    /// Write a Wireshark 4.x dissector (Lua) for a schema's protocol: `> proto.lua`, then
    /// `tshark -X lua_script:proto.lua` or Wireshark's plugins folder.
    ExportWireshark {
        /// The schema (TOML).
        #[arg(long)]
        schema: PathBuf,
        /// UDP port of the bit-packed packets (repeatable); none: a heuristic dissector that
        /// claims the datagrams whose CRC holds.
        #[arg(long = "port", value_name = "PORT")]
        ports: Vec<u16>,
        /// UDP port of the `[batch]` message batches (repeatable); none: a heuristic dissector
        /// that claims the datagrams whose batch and message lengths add up.
        #[arg(long = "batch-port", value_name = "PORT")]
        batch_ports: Vec<u16>,
        /// The protocol's filter name (default: the schema's protocol name; give another one
        /// when Wireshark already has a protocol of that name).
        #[arg(long)]
        name: Option<String>,
    },
    /// Run a live UDP proxy between a game client and its server: one NDJSON line per datagram
    /// (the `decode --json` contract plus direction and client), and on request a recording,
    /// impairments (drop, duplicate, delay, reorder) and field-level mutations. Ctrl-C stops it.
    Proxy(Box<cmd::proxy::ProxyArgs>),
    /// Send the mutated datagrams of a proxy log to a server again, byte for byte.
    Replay(cmd::proxy::ReplayArgs),
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

/// Prints a one-line error and gives exit status 2.
fn fail(err: &anyhow::Error) -> ExitCode {
    eprintln!("bitlens: {err:#}");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Inspect { capture, opts } => match cmd::inspect::run(&capture, &opts) {
            Ok(None) => ExitCode::SUCCESS,
            Ok(Some(damage)) => {
                eprintln!("bitlens: {damage}");
                ExitCode::from(2)
            }
            Err(e) => fail(&e),
        },
        Command::Decode {
            capture,
            json,
            fields,
            opts,
        } => {
            let mut out = std::io::BufWriter::new(std::io::stdout().lock());
            match cmd::decode::run(&capture, &opts, json, fields, &mut out) {
                Ok(None) => ExitCode::SUCCESS,
                Ok(Some(damage)) => {
                    let _ = out.flush();
                    eprintln!("bitlens: {damage}");
                    ExitCode::from(2)
                }
                Err(e) => fail(&e),
            }
        }
        Command::Check {
            capture,
            strict,
            opts,
        } => {
            let mut out = std::io::stdout().lock();
            match cmd::check::run(&capture, &opts, &mut out) {
                Ok(o) => {
                    if let Some(damage) = o.damage {
                        eprintln!("bitlens: {damage}");
                        ExitCode::from(2)
                    } else if o.problems > 0 || (strict && o.undecoded > 0) {
                        ExitCode::from(1)
                    } else {
                        ExitCode::SUCCESS
                    }
                }
                Err(e) => fail(&e),
            }
        }
        Command::Synth {
            out,
            packets,
            seed,
            faults,
            format,
        } => match cmd::synth::run(&out, packets, seed, faults, format) {
            Ok(summary) => {
                println!("{summary}");
                ExitCode::SUCCESS
            }
            Err(e) => fail(&e),
        },
        Command::Vectors { files } => cmd::vectors::run(&files),
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
        Command::ExportWireshark {
            schema,
            ports,
            batch_ports,
            name,
        } => {
            let options = bitlens_schema::WiresharkOptions {
                ports,
                batch_ports,
                name,
            };
            match cmd::export_wireshark::run(&schema, &options) {
                Ok(lua) => {
                    let mut out = std::io::stdout().lock();
                    match out.write_all(lua.as_bytes()).and_then(|()| out.flush()) {
                        Ok(()) => ExitCode::SUCCESS,
                        Err(err) => {
                            eprintln!("bitlens: {err}");
                            ExitCode::FAILURE
                        }
                    }
                }
                Err(e) => fail(&e),
            }
        }
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
        Command::Proxy(args) => match cmd::proxy::run(&args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => fail(&e),
        },
        Command::Replay(args) => match cmd::proxy::replay(&args, &mut std::io::stdout().lock()) {
            Ok(_) => ExitCode::SUCCESS,
            Err(e) => fail(&e),
        },
        Command::Tagged { file, json } => {
            if let Err(err) = cmd::common::must_exist(&file) {
                return fail(&err);
            }
            match cmd::tagged::run(&file, json, &mut std::io::stdout().lock()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(err) => {
                    eprintln!("bitlens: {err:#}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}
