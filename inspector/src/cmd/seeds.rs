//! `bitlens seeds CAPTURE --port P DIR`: a capture's datagrams as a fuzz seed corpus.
//!
//! Every whole UDP payload to or from port `P` (the port a decoder is set on, as `--decode`
//! matches it: destination first, then source) is written to `DIR` once, as a file named by the
//! SHA-1 of its bytes in hex: the name libFuzzer gives the inputs it keeps, so a seed the fuzzer
//! finds again, or a corpus merged with `-merge=1`, keeps one file per payload. Payloads that a
//! snap length cut or that arrived as IP fragments are not what a peer sent and are skipped.
//! Real traffic seeds the fuzzer with packets that get past the framing and into every body.

use super::common::{Context as Ctx, Exit};
use crate::capture::{Capture, Status};
use crate::words::count;
use anyhow::{Context, Result, bail};
use clap::Parser;
use sha1::{Digest, Sha1};
use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

/// Write a fuzz seed corpus from a capture: one file per distinct UDP payload to or from PORT,
/// named by the SHA-1 of its bytes (as libFuzzer names inputs).
#[derive(Parser, Debug)]
pub struct SeedsArgs {
    /// A pcap or pcapng file.
    pub capture: PathBuf,
    /// The UDP port whose datagrams become seeds (default: the program's protocol port, when
    /// it has exactly one).
    #[arg(long)]
    pub port: Option<u16>,
    /// The corpus folder (created if missing), e.g. fuzz/corpus/packet_read.
    pub dir: PathBuf,
}

/// The subcommand: writes the seeds and prints a one-line summary.
///
/// # Errors
/// No `--port` while the program reads several ports (or none); otherwise as [`run`].
pub fn command(args: SeedsArgs, ctx: &Ctx<'_>) -> Result<Exit> {
    let port = match args.port {
        Some(p) => p,
        None => {
            let ports: Vec<u16> = ctx.dissectors().ports().map(|(p, _)| p).collect();
            match ports.as_slice() {
                [p] => *p,
                [] => bail!("seeds needs --port PORT"),
                _ => bail!(
                    "seeds needs --port PORT: {} reads {}",
                    ctx.program(),
                    ctx.dissectors().describe()
                ),
            }
        }
    };
    let summary = run(&args.capture, port, &args.dir)?;
    crate::files::print_line(format_args!("{}: {summary}", args.dir.display()))?;
    Ok(Exit::Ok)
}

/// What a `seeds` run found and wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Datagrams to or from the port.
    pub datagrams: usize,
    /// Distinct whole payloads among them.
    pub distinct: usize,
    /// Files written (distinct payloads not already in the folder).
    pub written: usize,
    /// Distinct payloads whose file was already there.
    pub present: usize,
    /// Datagrams skipped because the capture holds only part of them (snap length, fragment).
    pub partial: usize,
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} on the port, {}: {} written, {} already there",
            count(self.datagrams as u64, "datagram"),
            count(self.distinct as u64, "distinct payload"),
            count(self.written as u64, "seed file"),
            self.present
        )?;
        if self.partial > 0 {
            write!(
                f,
                "; {} skipped",
                count(self.partial as u64, "cut or fragmented datagram")
            )?;
        }
        Ok(())
    }
}

/// The name of a seed file: the SHA-1 of `payload` in lowercase hex, as libFuzzer names inputs.
pub fn seed_name(payload: &[u8]) -> String {
    hex::encode(Sha1::digest(payload))
}

/// The distinct whole payloads to or from `port`, in capture order, with their file names; and
/// the summary's counts of datagrams and partial ones.
pub fn collect(capture: &Capture, port: u16) -> (Vec<(String, &[u8])>, Summary) {
    let mut summary = Summary::default();
    let mut names = BTreeSet::new();
    let mut seeds = Vec::new();
    for d in capture.datagrams() {
        if d.dst.port() != port && d.src.port() != port {
            continue;
        }
        summary.datagrams += 1;
        if d.status != Status::Whole {
            summary.partial += 1;
            continue;
        }
        let payload = capture.payload(d);
        let name = seed_name(payload);
        if names.insert(name.clone()) {
            seeds.push((name, payload));
        }
    }
    summary.distinct = seeds.len();
    (seeds, summary)
}

/// Writes the seeds of `capture` for `port` into `dir` (created if missing).
///
/// # Errors
/// A capture that cannot be read (or is damaged before any datagram), no datagram on the port,
/// a folder or file that cannot be written.
pub fn run(capture: &Path, port: u16, dir: &Path) -> Result<Summary> {
    let capture = super::common::open_capture(capture)?;
    let (seeds, mut summary) = collect(&capture, port);
    if summary.datagrams == 0 {
        anyhow::bail!(
            "{}: no UDP datagram to or from port {port} (bitlens decode lists the ports)",
            capture.name()
        );
    }
    std::fs::create_dir_all(dir).with_context(|| format!("{}: cannot create", dir.display()))?;
    for (name, payload) in seeds {
        let path = dir.join(name);
        if path.exists() {
            summary.present += 1;
            continue;
        }
        std::fs::write(&path, payload)
            .with_context(|| format!("{}: cannot write", path.display()))?;
        summary.written += 1;
    }
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::Timestamp;
    use crate::capture::write::{SynthDatagram, WriteFormat, write_file};
    use std::net::SocketAddr;

    fn addr(port: u16) -> SocketAddr {
        SocketAddr::from(([10, 0, 0, 1], port))
    }

    fn temp(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("bitlens-seeds-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn the_name_is_the_sha1_libfuzzer_gives() {
        // SHA-1 of "abc" (FIPS 180-2 test vector).
        assert_eq!(
            seed_name(b"abc"),
            "a9993e364706816aba3e25717850c26c9cd0d89d"
        );
        assert_eq!(seed_name(b""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
    }

    #[test]
    fn one_file_per_distinct_whole_payload_on_the_port() {
        let dir = temp("run");
        let t = |i: i128| Timestamp::from_nanos(1_700_000_000_000_000_000 + i * 1000);
        let long = vec![7u8; 300];
        let datagrams = vec![
            SynthDatagram::new(t(0), addr(5000), addr(28500), &b"one"[..]),
            SynthDatagram::new(t(1), addr(28500), addr(5000), &b"two"[..]),
            SynthDatagram::new(t(2), addr(5001), addr(28500), &b"one"[..]),
            SynthDatagram::new(t(3), addr(5000), addr(9999), &b"other port"[..]),
            SynthDatagram::new(t(4), addr(5000), addr(28500), long.as_slice()).truncated(100),
            SynthDatagram::new(t(5), addr(5000), addr(28500), long.as_slice()).fragmented(64),
        ];
        std::fs::create_dir_all(&dir).unwrap();
        let pcap = dir.join("in.pcap");
        write_file(
            &pcap,
            WriteFormat::PcapEthernet { nanos: false },
            &datagrams,
        )
        .unwrap();
        let out = dir.join("corpus");
        let s = run(&pcap, 28500, &out).unwrap();
        // The fragments: the first carries the port, the later ones none (not counted).
        assert_eq!(
            s,
            Summary {
                datagrams: 5,
                distinct: 2,
                written: 2,
                present: 0,
                partial: 2,
            }
        );
        let mut files: Vec<String> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        files.sort();
        let mut want = vec![seed_name(b"one"), seed_name(b"two")];
        want.sort();
        assert_eq!(files, want);
        assert_eq!(std::fs::read(out.join(seed_name(b"two"))).unwrap(), b"two");
        // Again: nothing new.
        let again = run(&pcap, 28500, &out).unwrap();
        assert_eq!((again.written, again.present), (0, 2));
        assert!(
            again
                .to_string()
                .contains("0 seed files written, 2 already there")
        );
        let err = run(&pcap, 1234, &out).unwrap_err().to_string();
        assert!(
            err.contains("no UDP datagram to or from port 1234"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
