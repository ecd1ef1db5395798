//! `bitlens check CAPTURE`: a summary table for CI pipelines of games.
//!
//! Exit status: 0 when every datagram with a decoder decodes, 1 when any does not (or, with
//! `--strict`, when any datagram has no decoder), 2 on a usage or file error.

use super::common::{DecodeOpts, open_capture};
use crate::decode::Status;
use anyhow::Result;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

/// The outcome of a check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// Datagrams that did not decode.
    pub problems: usize,
    /// Datagrams with no decoder for their ports.
    pub undecoded: usize,
    /// The capture's damage, if it ended early.
    pub damage: Option<String>,
}

/// Decodes every datagram and writes the summary table to `out`.
///
/// # Errors
/// When the capture cannot be opened or the options are invalid.
pub fn run(path: &Path, opts: &DecodeOpts, out: &mut dyn Write) -> Result<Outcome> {
    let decoders = opts.decoders()?;
    let capture = open_capture(path)?;
    // counts[type][status]
    let mut counts: BTreeMap<String, [usize; Status::ALL.len()]> = BTreeMap::new();
    // The first problem of each kind: (kind, frame, message).
    let mut first: BTreeMap<String, (u64, String)> = BTreeMap::new();
    let (mut problems, mut undecoded) = (0, 0);
    for d in capture.datagrams() {
        let v = decoders.verdict(&capture, d);
        let row = counts
            .entry(v.packet_type.clone().unwrap_or_else(|| "-".into()))
            .or_default();
        row[v.status as usize] += 1;
        match v.status {
            Status::Ok => {}
            Status::Undecoded => undecoded += 1,
            status => {
                problems += 1;
                let kind = match &v.error {
                    Some(e) if status == Status::Error => format!("error/{}", e.kind().name()),
                    _ => status.name().to_owned(),
                };
                first.entry(kind).or_insert_with(|| {
                    // Only the first of each kind is traced in full (desync location and all).
                    let decoded = decoders.decode(&capture, d);
                    let mut msg = match decoded.error() {
                        Some(e) => e.to_string(),
                        None => format!("{} bytes, {}", capture.payload(d).len(), decoded.status),
                    };
                    if let Some(ds) = &decoded.desync {
                        msg = format!("{msg}; {}", ds.message());
                    }
                    (d.frame, msg)
                });
            }
        }
    }

    let mut s = String::new();
    use std::fmt::Write as _;
    let skipped: Vec<String> = capture
        .skipped()
        .iter()
        .map(|(r, n)| format!("{n} {}", r.describe()))
        .collect();
    let _ = writeln!(
        s,
        "{}: {} frames, {} UDP datagrams{}",
        capture.name(),
        capture.frames(),
        capture.datagrams().len(),
        if skipped.is_empty() {
            String::new()
        } else {
            format!(", skipped: {}", skipped.join(", "))
        }
    );
    let _ = writeln!(s, "decoders: {}", decoders.describe());
    let _ = writeln!(s);
    let width = counts.keys().map(String::len).max().unwrap_or(4).max(11);
    let _ = write!(s, "{:<width$}", "packet type");
    for st in Status::ALL {
        let _ = write!(s, " {:>9}", st.name());
    }
    let _ = writeln!(s);
    let mut totals = [0usize; Status::ALL.len()];
    for (t, row) in &counts {
        let _ = write!(s, "{t:<width$}");
        for (i, n) in row.iter().enumerate() {
            totals[i] += n;
            let _ = write!(s, " {n:>9}");
        }
        let _ = writeln!(s);
    }
    let _ = write!(s, "{:<width$}", "total");
    for n in totals {
        let _ = write!(s, " {n:>9}");
    }
    let _ = writeln!(s);
    if !first.is_empty() {
        let _ = writeln!(s, "\nfirst problem of each kind:");
        let kw = first.keys().map(String::len).max().unwrap_or(0);
        for (kind, (frame, msg)) in &first {
            let _ = writeln!(s, "  {kind:<kw$}  frame {frame}: {msg}");
        }
    }
    let damage = capture.damage().map(ToString::to_string);
    let decodable = capture.datagrams().len() - undecoded;
    let _ = writeln!(
        s,
        "\n{} of {decodable} datagrams decoded, {problems} with problems{}",
        decodable - problems,
        if undecoded > 0 {
            format!(", {undecoded} without a decoder")
        } else {
            String::new()
        }
    );
    out.write_all(s.as_bytes())?;
    Ok(Outcome {
        problems,
        undecoded,
        damage,
    })
}
