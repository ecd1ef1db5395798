//! `check CAPTURE`: a summary table for CI pipelines of games.
//!
//! Exit status: 0 when every datagram with a dissector decodes, 1 when any does not (or, with
//! `--strict`, when any datagram has no dissector or a frame's link type is one bitlens does not
//! read; with `--budget`, when the capture's profile
//! is over budget), 2 on a usage or file error (a damaged capture included).

use super::common::{Context, Exit};
use super::common::{DecodeOpts, must_exist, read_capture};
use crate::capture::{self, Datagram};
use crate::dissectors::{Dissectors, seen_at};
use crate::words::{count, plural};
use anyhow::{Result, bail};
use bitlens_codec::dissect::Status;
use bitlens_codec::observe::Observation;
use clap::Parser;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, mpsc};

/// Summarise a capture: packets per type and status, the first problem of each kind. Exit
/// status 1 when any datagram with a dissector does not decode.
#[derive(Parser, Debug)]
pub struct CheckArgs {
    /// A pcap or pcapng file.
    pub capture: PathBuf,
    /// Also fail (exit status 1) on datagrams that no dissector reads, on encrypted payloads
    /// no key was given for, and on frames of a link type bitlens does not read.
    #[arg(long)]
    pub strict: bool,
    /// Also check the capture's profile against a budget (see `profile --budget`): exit
    /// status 1 listing each thing over budget.
    #[arg(long, value_name = "FILE")]
    pub budget: Option<PathBuf>,
    /// Which dissector reads which port.
    #[command(flatten)]
    pub opts: DecodeOpts,
}

/// The subcommand: the table on stdout; rejected (exit status 1) when a datagram does not
/// decode (with `--strict`, also when one has no dissector); a damaged capture is a file
/// error (exit status 2) whatever the datagrams before the damage.
///
/// # Errors
/// As [`run`], and the capture's damage.
pub fn command(args: CheckArgs, ctx: &Context<'_>) -> Result<Exit> {
    let dissectors = args.opts.dissectors(ctx)?;
    let budget = args
        .budget
        .as_deref()
        .map(crate::profile::budget::Budget::load)
        .transpose()?;
    let o = run(&args.capture, &dissectors, &mut crate::files::stdout())?;
    if let Some(damage) = o.damage {
        bail!("{damage}");
    }
    if o.unreadable > 0 {
        stderr_line!(
            "{}",
            unread_warning(
                ctx.program(),
                &args.capture,
                o.unreadable,
                &o.unread_link_types
            )
        );
    }
    let over_budget = match budget {
        Some(b) => {
            let (profile, _) = super::profile::profile_file(&args.capture, &dissectors, true)?;
            super::profile::report_budget(ctx, &b, &profile) == Exit::Rejected
        }
        None => false,
    };
    Ok(
        if o.problems > 0
            || over_budget
            || (args.strict && (o.undecoded + o.encrypted > 0 || o.unreadable > 0))
        {
            Exit::Rejected
        } else {
            Exit::Ok
        },
    )
}

/// The outcome of a check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// Datagrams that did not decode.
    pub problems: usize,
    /// Datagrams with no decoder for their ports.
    pub undecoded: usize,
    /// Datagrams whose payload is encrypted and no key for them was given (not problems;
    /// `--strict` fails on them).
    pub encrypted: usize,
    /// Frames skipped because bitlens does not read their link type (`--strict` fails on
    /// them: a capture of such frames only would otherwise pass with nothing checked).
    pub unreadable: u64,
    /// The link types of the [`Outcome::unreadable`] frames and how many frames each (the
    /// first few link types, [`capture::Skipped::link_types`]).
    pub unread_link_types: Vec<(capture::LinkType, u64)>,
    /// The capture's damage, if it ended early.
    pub damage: Option<String>,
    /// What the transports still held unfinished when the capture ended (a yojimbo block
    /// whose other fragments never came), one line each ([`crate::dissectors::Observer::finish`]).
    pub pending: Vec<String>,
}

/// The warning on frames skipped for their link type: how many frames of which link types
/// (number, and name where known), that nothing in them was checked, and that `--strict` fails
/// on them (without it the exit status does not say so).
fn unread_warning(
    program: &str,
    capture: &Path,
    frames: u64,
    link_types: &[(capture::LinkType, u64)],
) -> String {
    let mut parts: Vec<String> = link_types
        .iter()
        .map(|&(link, n)| match link.unread_name() {
            Some(name) => format!("{} of link type {} ({name})", count(n, "frame"), link.0),
            None => format!("{} of link type {}", count(n, "frame"), link.0),
        })
        .collect();
    let rest = frames.saturating_sub(link_types.iter().map(|(_, n)| n).sum());
    if rest > 0 {
        parts.push(format!("{} of other link types", count(rest, "frame")));
    }
    format!(
        "{program}: warning: {}: {} skipped: {program} does not read {}, nothing in {} was \
         checked (check --strict fails on {})",
        capture.display(),
        parts.join(", "),
        if link_types.len() + usize::from(rest > 0) == 1 {
            "that link type"
        } else {
            "those link types"
        },
        if frames == 1 { "it" } else { "them" },
        if frames == 1 { "it" } else { "them" },
    )
}

/// The kind under which `check` lists the first datagram with each [`crate::capture::Flaw`]:
/// `flaw/udp.length`, `flaw/ip.len`, `flaw/ipv6.plen`.
const FLAW: &str = "flaw/";

/// The bytes a job's datagrams point into: a window of a streamed pcap file (given back for
/// reuse), or the whole file.
enum Bytes {
    Window(Vec<u8>),
    File(Arc<Vec<u8>>),
}

impl Bytes {
    fn as_slice(&self) -> &[u8] {
        match self {
            Bytes::Window(w) => w,
            Bytes::File(f) => f,
        }
    }
}

/// A worker's job: the index of its first datagram, the datagrams, the bytes they point into,
/// and the transports' observations of them.
type Job = (usize, Vec<Datagram>, Bytes, Vec<Observation>);

/// What one thread found in its chunks of the capture.
#[derive(Debug, Default)]
struct Tally<'d> {
    /// Per packet type (a handful, borrowed from the dissectors), counts per status.
    rows: Vec<(&'d str, [usize; Status::ALL.len()])>,
    problems: usize,
    undecoded: usize,
    /// The first datagram with each kind of problem: its index in the capture, its payload
    /// (the window it came in is reused) and what the transports' pass observed of it.
    first: BTreeMap<String, (usize, Datagram, Vec<u8>, Observation)>,
    /// Datagrams whose payload is encrypted without a key for it.
    encrypted: usize,
}

impl<'d> Tally<'d> {
    /// Adds the verdicts on `chunk`, whose first datagram is datagram `first` of the capture;
    /// `seen` holds the transports' observations of its datagrams (empty without transports).
    fn add(
        &mut self,
        dissectors: &'d Dissectors,
        file: &[u8],
        first: usize,
        chunk: &[Datagram],
        seen: &[Observation],
    ) {
        for (k, (i, d)) in (first..).zip(chunk).enumerate() {
            let observed = seen_at(seen, k);
            let v = dissectors.verdict_seen(d, d.payload(file), observed);
            let name = v.packet_type.unwrap_or("-");
            // Found by address before by content: the names are the dissectors' own.
            let k = match self
                .rows
                .iter()
                .position(|(n, _)| std::ptr::eq(*n, name))
                .or_else(|| self.rows.iter().position(|(n, _)| *n == name))
            {
                Some(k) => k,
                None => {
                    self.rows.push((name, [0; Status::ALL.len()]));
                    self.rows.len() - 1
                }
            };
            self.rows[k].1[v.status as usize] += 1;
            match v.status {
                Status::Ok if d.flaw.is_none() => continue,
                Status::Ok => {}
                Status::Undecoded => self.undecoded += 1,
                Status::Encrypted => self.encrypted += 1,
                _ => self.problems += 1,
            }
            // A malformed IP or UDP length is shown whatever the payload's verdict (a lying
            // IP length can wrap a datagram that decodes); it is what truncated a datagram
            // whose UDP length lies.
            let flaw = d.flaw.map(|flaw| format!("{FLAW}{}", flaw.field.name()));
            let problem = match (v.status, &v.problem) {
                (Status::Ok | Status::Undecoded, _) | (Status::Encrypted, None) => None,
                (Status::Truncated, _) if flaw.is_some() => None,
                (Status::Error | Status::Encrypted, Some(p)) => {
                    Some(format!("{}/{}", v.status.name(), p.kind))
                }
                (status, _) => Some(status.name().to_owned()),
            };
            // Under a stack the kind says which layer failed: `netcode: error/mac_mismatch`,
            // `demo: error/out_of_range`.
            let problem = match (problem, v.layer) {
                (Some(kind), Some(layer)) => Some(format!("{layer}: {kind}")),
                (problem, _) => problem,
            };
            // The example's observation without what the pass decrypted: it shares a buffer
            // with the whole window's, which it would keep (its dissection opens it again).
            for kind in flaw.into_iter().chain(problem) {
                self.first.entry(kind).or_insert_with(|| {
                    let kept = dissectors.to_keep(d, observed.clone());
                    (i, d.clone(), d.payload(file).to_vec(), kept)
                });
            }
        }
    }

    fn merge(&mut self, other: Tally<'d>) {
        for (name, row) in other.rows {
            match self.rows.iter_mut().find(|(n, _)| *n == name) {
                Some((_, mine)) => {
                    for (a, b) in mine.iter_mut().zip(row) {
                        *a += b;
                    }
                }
                None => self.rows.push((name, row)),
            }
        }
        self.problems += other.problems;
        self.undecoded += other.undecoded;
        self.encrypted += other.encrypted;
        for (kind, (i, d, payload, seen)) in other.first {
            match self.first.get(&kind) {
                Some((mine, ..)) if *mine <= i => {}
                _ => {
                    self.first.insert(kind, (i, d, payload, seen));
                }
            }
        }
    }
}

/// Reads every datagram with `dissectors` and writes the summary table to `out`.
///
/// # Errors
/// When the capture cannot be opened or the table cannot be written.
pub fn run(path: &Path, dissectors: &Dissectors, out: &mut dyn Write) -> Result<Outcome> {
    must_exist(path)?;
    let (summary, total, pending) = tally(path, dissectors)?;
    let counts: BTreeMap<String, [usize; Status::ALL.len()]> = total
        .rows
        .iter()
        .map(|(name, row)| ((*name).to_owned(), *row))
        .collect();
    let Tally {
        problems,
        undecoded,
        encrypted,
        first,
        ..
    } = total;
    let first = trace_first(dissectors, first);
    let totals = Outcome {
        problems,
        undecoded,
        encrypted,
        unreadable: summary
            .skipped
            .count(capture::SkipReason::UnsupportedLinkType),
        unread_link_types: summary.skipped.link_types().to_vec(),
        damage: summary.damage.as_ref().map(ToString::to_string),
        pending,
    };
    let s = report(
        &path.display().to_string(),
        &summary,
        dissectors,
        &counts,
        &first,
        &totals,
    );
    out.write_all(s.as_bytes())?;
    Ok(totals)
}

/// Reads every datagram of the capture at `path` with `dissectors`, on every core: the
/// capture's summary, the tally of all its datagrams and what the transports still held
/// unfinished at its end.
///
/// # Errors
/// When the capture cannot be read, or a worker panicked.
fn tally<'d>(
    path: &Path,
    dissectors: &'d Dissectors,
) -> Result<(capture::ScanSummary, Tally<'d>, Vec<String>)> {
    // One pass. A pcap file is read in windows that go to one worker per core with their
    // datagrams, and come back for reuse: verdicts run while the rest is read and indexed, and
    // neither the file nor an index of it is ever whole in memory (its page faults were half of
    // check's time). A pcapng file is read whole and its datagrams go out in chunks.
    const WINDOW: usize = 1 << 20;
    const CHUNK: usize = 8192;
    let workers = crate::pipeline::threads();
    let size = std::fs::metadata(path).map_or(0, |m| m.len());
    let bar = crate::progress::Progress::bytes(size, "check", true);
    let (summary, tallies, pending) = std::thread::scope(|scope| {
        let (give_back, returned) = mpsc::channel::<(Vec<Datagram>, Bytes)>();
        let mut to_workers = Vec::with_capacity(workers);
        let mut handles = Vec::with_capacity(workers);
        for _ in 0..workers {
            let (to_worker, jobs) = mpsc::sync_channel::<Job>(2);
            let give_back = give_back.clone();
            handles.push(scope.spawn(move || {
                let mut tally = Tally::default();
                for (first, chunk, bytes, seen) in jobs {
                    tally.add(dissectors, bytes.as_slice(), first, &chunk, &seen);
                    let _ = give_back.send((chunk, bytes));
                }
                tally
            }));
            to_workers.push(to_worker);
        }
        // Buffers the workers are done with, for the next jobs.
        let (mut chunks, mut windows): (Vec<Vec<Datagram>>, Vec<Vec<u8>>) =
            (Vec::new(), Vec::new());
        let mut next = 0;
        // The transports' pass, in capture order, before the chunk goes out (none without
        // transports: then the observations stay empty and nothing runs).
        let mut observer = dissectors.observer();
        // With the plaintext, a chunk's in one buffer (see `decode`'s pass): each packet is
        // decrypted once, here.
        // Sends a job; gives back a window and an empty datagram vector for the next ones.
        let mut send = |first: usize, chunk: Vec<Datagram>, bytes: Bytes| {
            let seen: Vec<Observation> = match &mut observer {
                Some(o) => o.observe_chunk(&chunk, bytes.as_slice()),
                None => Vec::new(),
            };
            while let Ok((chunk, bytes)) = returned.try_recv() {
                chunks.push(chunk);
                if let Bytes::Window(w) = bytes {
                    windows.push(w);
                }
            }
            // A worker that panicked has hung up: its join below reports it.
            let _ = to_workers[next % workers].send((first, chunk, bytes, seen));
            next += 1;
            let mut spare = chunks.pop().unwrap_or_default();
            spare.clear();
            (windows.pop().unwrap_or_default(), spare)
        };
        // A window's datagrams go to the worker as they are, not copied (the copy was 5% of
        // check's instructions); a spare vector comes back for the next window.
        let streamed = capture::stream_pcap(path, WINDOW, |first, datagrams, window| {
            bar.inc(window.len() as u64);
            let (window, spare) = send(first, datagrams, Bytes::Window(window));
            (spare, window)
        });
        let summary = match streamed {
            Ok(Some(summary)) => Ok(summary),
            Ok(None) => read_capture(path).and_then(|(name, file)| {
                let file = Arc::new(file);
                let mut spare = Vec::new();
                capture::scan(&name, &file, CHUNK, |first, datagrams| {
                    if let Some(last) = datagrams.last() {
                        bar.set(last.payload_range().end as u64);
                    }
                    spare.extend_from_slice(datagrams);
                    let chunk = std::mem::take(&mut spare);
                    spare = send(first, chunk, Bytes::File(Arc::clone(&file))).1;
                })
                .map_err(|e| anyhow::anyhow!("{e}"))
            }),
            Err(e) => Err(anyhow::anyhow!("{e}")),
        };
        drop(to_workers);
        let pending = observer.as_mut().map(|o| o.finish()).unwrap_or_default();
        let tallies: Vec<_> = handles.into_iter().map(|h| h.join()).collect();
        (summary, tallies, pending)
    });
    bar.finish();
    let summary = summary?;
    let mut total = Tally::default();
    for t in tallies {
        total.merge(t.map_err(|_| {
            anyhow::anyhow!(
                "a decoding thread panicked: a bug in bitlens, please report it with this capture"
            )
        })?);
    }
    Ok((summary, total, pending))
}

/// The first datagram of each kind of problem, traced in full (desync location and all): its
/// frame and the message `check` shows.
fn trace_first(
    dissectors: &Dissectors,
    first: BTreeMap<String, (usize, Datagram, Vec<u8>, Observation)>,
) -> BTreeMap<String, (u64, String)> {
    first
        .into_iter()
        .map(|(kind, (_, d, payload, seen))| {
            if let (Some(flaw), true) = (d.flaw, kind.starts_with(FLAW)) {
                return (kind, (d.frame, format!("at byte {}: {flaw}", flaw.offset)));
            }
            let (_, dissection) = dissectors.dissect_seen(&d, &payload, &seen);
            let mut msg = match &dissection.problem {
                Some(p) => p.message.clone(),
                None if dissection.status == Status::Truncated => format!(
                    "{} of {} captured (cut by the snap length)",
                    payload.len(),
                    count(d.declared_len() as u64, "byte")
                ),
                None => format!(
                    "{}, {}",
                    count(payload.len() as u64, "byte"),
                    dissection.status
                ),
            };
            if let Some(ds) = &dissection.desync {
                msg = format!("{msg}; {}", ds.message());
            }
            (kind, (d.frame, msg))
        })
        .collect()
}

/// `check`'s output: the capture's line, the decoders, the table and the closing count.
fn report(
    name: &str,
    summary: &capture::ScanSummary,
    dissectors: &Dissectors,
    counts: &BTreeMap<String, [usize; Status::ALL.len()]>,
    first: &BTreeMap<String, (u64, String)>,
    totals: &Outcome,
) -> String {
    let Outcome {
        problems,
        undecoded,
        encrypted,
        ..
    } = *totals;
    let mut s = String::new();
    use std::fmt::Write as _;
    let skipped: Vec<String> = summary
        .skipped
        .iter()
        .map(|(r, n)| format!("{n} {}", r.describe()))
        .collect();
    let _ = writeln!(
        s,
        "{}: {}, {}{}",
        name,
        count(summary.frames, "frame"),
        count(summary.datagrams as u64, "UDP datagram"),
        if skipped.is_empty() {
            String::new()
        } else {
            format!(", skipped: {}", skipped.join(", "))
        }
    );
    let _ = writeln!(s, "decoders: {}", dissectors.describe());
    let _ = writeln!(s);
    s.push_str(&table(counts, first, encrypted));
    if !totals.pending.is_empty() {
        // Fragments that stopped before the capture ended: not a datagram's problem (the
        // capture may just have been stopped), but what a reader of the capture would miss.
        let _ = writeln!(s, "\nstill in reassembly when the capture ended:");
        for line in &totals.pending {
            let _ = writeln!(s, "  {line}");
        }
    }
    let decodable = summary.datagrams - undecoded;
    let _ = writeln!(
        s,
        "\n{} of {decodable} {} with a decoder decoded, {problems} with problems{}{}",
        decodable - problems - encrypted,
        plural(decodable as u64, "datagram"),
        if encrypted > 0 {
            // A transport that decrypts but has no configuration to read the payload with
            // (yojimbo without a `[yojimbo]` schema) leaves it encrypted though a key was given.
            let unconfigured = first.keys().any(|k| k.ends_with("/no_configuration"));
            // A connect token that the given key does not open leaves its connection's
            // payloads encrypted: the key is wrong, not missing.
            let wrong_key = first.keys().any(|k| k.ends_with("/token_mac_mismatch"));
            if unconfigured {
                format!(", {encrypted} encrypted and not read (no key or no configuration, above)")
            } else if wrong_key {
                format!(
                    ", {encrypted} encrypted that could not be opened with the given key \
                     (token_mac_mismatch, above)"
                )
            } else {
                format!(", {encrypted} encrypted without a key")
            }
        } else {
            String::new()
        },
        if undecoded > 0 {
            format!(", {undecoded} without a decoder")
        } else {
            String::new()
        }
    );
    s
}

/// The counts per packet type and status, their totals, and the first problem of each kind:
/// the middle of `check`'s output. The `encrypted` column only when some datagram is.
fn table(
    counts: &BTreeMap<String, [usize; Status::ALL.len()]>,
    first: &BTreeMap<String, (u64, String)>,
    encrypted: usize,
) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let width = counts.keys().map(String::len).max().unwrap_or(4).max(11);
    // The encrypted column only where there are encrypted datagrams: tables of captures
    // without transports keep their shape.
    let columns = if encrypted > 0 {
        Status::ALL.len()
    } else {
        Status::ALL.len() - 1
    };
    let _ = write!(s, "{:<width$}", "packet type");
    for st in &Status::ALL[..columns] {
        let _ = write!(s, " {:>9}", st.name());
    }
    let _ = writeln!(s);
    let mut totals = [0usize; Status::ALL.len()];
    for (t, row) in counts {
        let _ = write!(s, "{t:<width$}");
        for (i, n) in row.iter().enumerate().take(columns) {
            totals[i] += n;
            let _ = write!(s, " {n:>9}");
        }
        let _ = writeln!(s);
    }
    let _ = write!(s, "{:<width$}", "total");
    for n in &totals[..columns] {
        let _ = write!(s, " {n:>9}");
    }
    let _ = writeln!(s);
    if !first.is_empty() {
        let _ = writeln!(s, "\nfirst problem of each kind:");
        let kw = first.keys().map(String::len).max().unwrap_or(0);
        for (kind, (frame, msg)) in first {
            let _ = writeln!(s, "  {kind:<kw$}  frame {frame}: {msg}");
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::unread_warning;
    use crate::capture::LinkType;
    use std::path::Path;

    #[test]
    fn the_unread_warning_names_link_types_and_counts() {
        let one = unread_warning("mygame", Path::new("a.pcapng"), 1, &[(LinkType(105), 1)]);
        assert_eq!(
            one,
            "mygame: warning: a.pcapng: 1 frame of link type 105 (IEEE802_11) skipped: mygame \
             does not read that link type, nothing in it was checked (check --strict fails on it)"
        );
        // Past the link types named, the other frames are still counted.
        let many = unread_warning(
            "bitlens",
            Path::new("b.pcapng"),
            10,
            &[(LinkType(127), 2), (LinkType(4000), 3)],
        );
        assert!(
            many.contains(
                "2 frames of link type 127 (IEEE802_11_RADIOTAP), 3 frames of link type 4000, \
                 5 frames of other link types skipped: bitlens does not read those link types"
            ),
            "{many}"
        );
    }
}
