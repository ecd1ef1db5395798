//! `synth OUT --packets N [--seed S] [--faults] [--format F]`: writes demo traffic.

use super::common::{Context, Exit};
use crate::capture::write::{CaptureWriter, PcapngResolution, WriteFormat};
use crate::synth::datagrams;
use anyhow::{Result, bail};
use clap::{Parser, ValueEnum};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Write a capture of demo traffic (several clients, every packet type, 60 Hz).
#[derive(Parser, Debug)]
pub struct SynthArgs {
    /// The capture file to write.
    pub out: PathBuf,
    /// How many datagrams.
    #[arg(long, default_value_t = 1000)]
    pub packets: usize,
    /// Seed of the generator (same seed, same bytes).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Add labelled faults (desync, truncation, bit flips, out-of-range counts, wrong protocol
    /// id, corrupt CRC, snap-length cuts, IP fragments); labels go to OUT.labels.json.
    #[arg(long)]
    pub faults: bool,
    /// File format and link layer.
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

/// The subcommand: writes the capture and prints a one-line summary.
///
/// # Errors
/// As [`run`].
pub fn command(args: SynthArgs, _: &Context<'_>) -> Result<Exit> {
    let summary = run(&args.out, args.packets, args.seed, args.faults, args.format)?;
    crate::files::print_line(&summary)?;
    Ok(Exit::Ok)
}

/// The capture file format and link layer to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Format {
    /// pcap, Ethernet, microsecond timestamps.
    #[default]
    Pcap,
    /// pcap, Ethernet, nanosecond timestamps.
    PcapNs,
    /// pcapng, Ethernet, nanosecond timestamps.
    Pcapng,
    /// pcapng, Ethernet, microsecond timestamps.
    PcapngUs,
    /// pcap, Linux cooked v2 of the loopback device (what `tcpdump -i any` writes).
    Sll2,
    /// pcap, Ethernet with zero MAC addresses (what `tcpdump -i lo` writes).
    Loopback,
}

impl Format {
    fn write_format(self) -> WriteFormat {
        match self {
            Format::Pcap => WriteFormat::PcapEthernet { nanos: false },
            Format::PcapNs => WriteFormat::PcapEthernet { nanos: true },
            Format::Pcapng => WriteFormat::PcapngEthernet {
                resolution: PcapngResolution::Nano,
                ts_offset_secs: 0,
            },
            Format::PcapngUs => WriteFormat::PcapngEthernet {
                resolution: PcapngResolution::Micro,
                ts_offset_secs: 0,
            },
            Format::Sll2 => WriteFormat::PcapSll2Loopback { nanos: true },
            Format::Loopback => WriteFormat::PcapEthernetLoopback { nanos: false },
        }
    }
}

/// Where the fault labels of `out` go: `faults.pcap` -> `faults.labels.json`.
pub fn labels_path(out: &Path) -> PathBuf {
    out.with_extension("labels.json")
}

/// Writes the capture (and with `faults`, its labels) and returns a one-line summary. Each
/// datagram and label is written as it is made: memory stays the same whatever `packets` is.
///
/// # Errors
/// When a file cannot be written.
pub fn run(out: &Path, packets: usize, seed: u64, faults: bool, format: Format) -> Result<String> {
    if packets == 0 {
        bail!("--packets must be at least 1");
    }
    let mut capture =
        CaptureWriter::create(out, format.write_format()).map_err(|e| anyhow::anyhow!("{e}"))?;
    let path = labels_path(out);
    let label_error = |e: std::io::Error| anyhow::anyhow!("{}: {e}", path.display());
    let mut labels = if faults {
        Some(BufWriter::new(File::create(&path).map_err(label_error)?))
    } else {
        None
    };
    let mut count = 0usize;
    let bar = crate::progress::Progress::items(packets as u64, "synth", true);
    for (i, (datagram, fault)) in datagrams(packets, seed, faults).enumerate() {
        if i % 4096 == 0 {
            bar.set(i as u64);
        }
        capture
            .write(&datagram)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        if let (Some(labels), Some(fault)) = (&mut labels, fault) {
            serde_json::to_writer(&mut *labels, &fault)
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
            labels.write_all(b"\n").map_err(label_error)?;
            count += 1;
        }
    }
    bar.finish();
    capture.finish().map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut summary = format!(
        "{}: {} ({format:?}, seed {seed})",
        out.display(),
        crate::words::count(packets as u64, "datagram")
    );
    if let Some(mut labels) = labels {
        labels.flush().map_err(label_error)?;
        summary.push_str(&format!(", {count} labelled faults in {}", path.display()));
    }
    Ok(summary)
}
