//! `bitlens check CAPTURE`: a summary table for CI pipelines of games.
//!
//! Exit status: 0 when every datagram with a decoder decodes, 1 when any does not (or, with
//! `--strict`, when any datagram has no decoder), 2 on a usage or file error.

use super::common::{DecodeOpts, open_capture};
use crate::capture::Capture;
use crate::decode::{Decoders, Status};
use anyhow::Result;
use std::collections::BTreeMap;
use std::io::Write;
use std::ops::Range;
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

/// What one thread found in its part of the capture.
#[derive(Debug, Default)]
struct Tally {
    /// counts[type][status]
    counts: BTreeMap<String, [usize; Status::ALL.len()]>,
    problems: usize,
    undecoded: usize,
    /// The index of the first datagram with each kind of problem.
    first: BTreeMap<String, usize>,
}

impl Tally {
    fn merge(&mut self, other: Tally) {
        for (t, row) in other.counts {
            let mine = self.counts.entry(t).or_default();
            for (a, b) in mine.iter_mut().zip(row) {
                *a += b;
            }
        }
        self.problems += other.problems;
        self.undecoded += other.undecoded;
        for (kind, i) in other.first {
            let e = self.first.entry(kind).or_insert(i);
            *e = (*e).min(i);
        }
    }
}

fn tally(capture: &Capture, decoders: &Decoders, range: Range<usize>) -> Tally {
    let mut t = Tally::default();
    let mut rows = Vec::new();
    for i in range {
        let v = decoders.verdict(capture, &capture.datagrams()[i]);
        let name = v.packet_type.unwrap_or("-");
        // A handful of names, borrowed from the decoders: found by address before by content.
        let k = match rows
            .iter()
            .position(|(n, _): &(&str, _)| std::ptr::eq(*n, name))
            .or_else(|| rows.iter().position(|(n, _)| *n == name))
        {
            Some(k) => k,
            None => {
                rows.push((name, [0; Status::ALL.len()]));
                rows.len() - 1
            }
        };
        let row = &mut rows[k].1;
        row[v.status as usize] += 1;
        match v.status {
            Status::Ok => {}
            Status::Undecoded => t.undecoded += 1,
            status => {
                t.problems += 1;
                let kind = match &v.problem {
                    Some(p) if status == Status::Error => format!("error/{}", p.kind),
                    _ => status.name().to_owned(),
                };
                t.first.entry(kind).or_insert(i);
            }
        }
    }
    for (name, row) in rows {
        let mine = t.counts.entry(name.to_owned()).or_default();
        for (a, b) in mine.iter_mut().zip(row) {
            *a += b;
        }
    }
    t
}

/// Decodes every datagram and writes the summary table to `out`.
///
/// # Errors
/// When the capture cannot be opened or the options are invalid.
pub fn run(path: &Path, opts: &DecodeOpts, out: &mut dyn Write) -> Result<Outcome> {
    let decoders = opts.decoders()?;
    let capture = open_capture(path)?;
    // Verdicts in parallel, one contiguous part of the capture per thread; the parts merge in
    // capture order, so "first problem" means the earliest frame whatever the thread count.
    let parts = crate::par::split(capture.datagrams().len());
    let tallies = crate::par::map(&parts, |range| tally(&capture, &decoders, range))?;
    let mut total = Tally::default();
    for t in tallies {
        total.merge(t);
    }
    let Tally {
        counts,
        problems,
        undecoded,
        first,
    } = total;
    // The first problem of each kind, traced in full (desync location and all).
    let first: BTreeMap<String, (u64, String)> = first
        .into_iter()
        .map(|(kind, i)| {
            let d = &capture.datagrams()[i];
            let decoded = decoders.decode(&capture, d);
            let mut msg = match &decoded.problem {
                Some(p) => p.message.clone(),
                None => format!("{} bytes, {}", capture.payload(d).len(), decoded.status),
            };
            if let Some(ds) = &decoded.desync {
                msg = format!("{msg}; {}", ds.message());
            }
            (kind, (d.frame, msg))
        })
        .collect();

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
        "\n{} of {decodable} datagrams with a decoder decoded, {problems} with problems{}",
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
