//! `profile CAPTURE`: where the bits go, per packet type, message type, field path, direction
//! and second, with the overhead in rows of its own (see [`crate::profile`]); as a table fitted
//! to the terminal, as JSON, as a flame graph (`--svg`), and checked against a budget
//! (`--budget`, exit status 1 when anything is over).

use super::common::{Context, Exit, read_capture};
use super::common::{DecodeOpts, must_exist};
use crate::capture;
use crate::dissectors::Dissectors;
use crate::profile::budget::Budget;
use crate::profile::{Profile, Profiler, flame, text};
use crate::progress::Progress;
use anyhow::{Result, anyhow, bail};
use bitlens_codec::observe::Observation;
use clap::Parser;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Where the bits go: totals per packet type, message type, field path (array indices folded),
/// direction and second, overhead (IP and UDP headers, CRC, padding, check markers, length
/// prefixes) in rows of its own, range hints and the cost of compressed floats. Datagrams that
/// do not decode are counted apart. Exit status 1 when --budget finds anything over.
#[derive(Parser, Debug)]
pub struct ProfileArgs {
    /// A pcap or pcapng file.
    pub capture: PathBuf,
    /// The profile as one JSON object instead of tables.
    #[arg(long)]
    pub json: bool,
    /// Also write a flame graph of bits by type and field path to FILE (SVG).
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Width of the tables in columns (default: the terminal's, or 100 when stdout is not a
    /// terminal).
    #[arg(long, value_name = "COLUMNS")]
    pub width: Option<usize>,
    /// Show only the N costliest rows of the fields table (N is 1 or more; without --top,
    /// every row).
    #[arg(long, value_name = "N", value_parser = top_rows)]
    pub top: Option<usize>,
    /// Check the profile against a budget file (TOML: largest_datagram in bytes; tables
    /// bytes_per_second with to_server and from_server; packet_type, message_type and field,
    /// mean bits per occurrence by name): exit status 1 listing each thing over budget.
    #[arg(long, value_name = "FILE")]
    pub budget: Option<PathBuf>,
    /// Which dissector reads which port.
    #[command(flatten)]
    pub opts: DecodeOpts,
}

/// `--top N`: a count of rows from 1 up (0 would show no row, which is not what anyone
/// asks for: every row is no `--top` at all).
fn top_rows(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(0) => {
            Err("0 rows would show none: N is 1 or more (leave --top out for every row)".into())
        }
        Ok(n) => Ok(n),
        Err(_) => Err(format!("{text:?}: N is a count of rows, 1 or more")),
    }
}

/// The subcommand.
///
/// # Errors
/// A usage or file error: the capture or budget cannot be read, the SVG cannot be written,
/// the capture is damaged part way (after the profile of what came before).
pub fn command(args: ProfileArgs, ctx: &Context<'_>) -> Result<Exit> {
    let dissectors = args.opts.dissectors(ctx)?;
    let budget = args.budget.as_deref().map(Budget::load).transpose()?;
    let (profile, damage) = profile_file(&args.capture, &dissectors, !args.json)?;
    let name = args.capture.display().to_string();
    let mut out = std::io::BufWriter::new(crate::files::stdout());
    if args.json {
        serde_json::to_writer(&mut out, &profile)?;
        out.write_all(b"\n")?;
    } else {
        let width = text::width(args.width);
        out.write_all(text::render(&profile, &name, width, args.top).as_bytes())?;
    }
    out.flush()?;
    if let Some(svg) = &args.svg {
        write_svg(&profile, &name, svg)?;
    }
    if let Some(damage) = damage {
        bail!("{damage}");
    }
    Ok(match budget {
        Some(b) => report_budget(ctx, &b, &profile),
        None => Exit::Ok,
    })
}

/// Writes the flame graph of `profile` to `path`.
///
/// # Errors
/// The file cannot be written, or there is nothing to draw.
pub fn write_svg(profile: &Profile, title: &str, path: &Path) -> Result<()> {
    let file = std::fs::File::create(path)
        .map_err(|e| anyhow!("{}: {}", path.display(), crate::files::uncreatable(path, e)))?;
    let mut w = std::io::BufWriter::new(file);
    flame::write_svg(profile, title, &mut w)
        .and_then(|()| w.flush())
        .map_err(|e| anyhow!("{}: {e}", path.display()))
}

/// Checks `profile` against `budget`: each thing over on stderr, and budgeted names the
/// capture lacks as warnings. [`Exit::Rejected`] when anything is over.
pub fn report_budget(ctx: &Context<'_>, budget: &Budget, profile: &Profile) -> Exit {
    let verdict = budget.check(profile);
    for m in &verdict.missing {
        stderr_line!(
            "{}: budget: warning: {m} is not in the capture",
            ctx.program()
        );
    }
    for o in &verdict.over {
        stderr_line!("{}: {o}", ctx.program());
    }
    if verdict.over.is_empty() {
        Exit::Ok
    } else {
        Exit::Rejected
    }
}

/// Profiles the capture at `path`, with a progress bar on a terminal's stderr when
/// `progress`; returns the profile and the capture's damage, if it ended in damage (the
/// profile is of the datagrams before it).
///
/// # Errors
/// The capture cannot be opened.
pub fn profile_file(
    path: &Path,
    dissectors: &Dissectors,
    progress: bool,
) -> Result<(Profile, Option<String>)> {
    must_exist(path)?;
    let (name, file) = read_capture(path)?;
    let bar = Progress::bytes(file.len() as u64, "profile", progress);
    let mut profiler = Profiler::new(dissectors);
    // The transports' sequential pass, in capture order (none without a transport).
    let mut observer = dissectors.observer();
    const CHUNK: usize = 4096;
    let summary = capture::scan(&name, &file, CHUNK, |_, datagrams| {
        for d in datagrams {
            let payload = d.payload(&file);
            let seen = match &mut observer {
                Some(o) => o.observe(d, payload),
                None => Observation::NONE,
            };
            profiler.add(d, payload, &seen);
        }
        if let Some(last) = datagrams.last() {
            bar.set(last.payload_range().end as u64);
        }
    })
    .map_err(|e| anyhow!("{e}"))?;
    bar.finish();
    let mut profile = profiler.finish();
    profile.pending = observer.as_mut().map(|o| o.finish()).unwrap_or_default();
    Ok((profile, summary.damage.as_ref().map(ToString::to_string)))
}
