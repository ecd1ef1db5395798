//! `inspect CAPTURE`: the terminal UI.

use super::common::{Context, Exit};
use super::common::{DecodeOpts, open_capture};
use crate::dissectors::Dissectors;
use anyhow::{Result, bail};
use clap::Parser;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

/// Open a capture in the terminal UI: packet list, field tree, bit view, check markers.
#[derive(Parser, Debug)]
pub struct InspectArgs {
    /// A pcap or pcapng file.
    pub capture: PathBuf,
    /// Which dissector reads which port.
    #[command(flatten)]
    pub opts: DecodeOpts,
}

/// The subcommand: runs the TUI; a damaged capture is a file error (exit status 2) once the
/// user quits.
///
/// # Errors
/// As [`run`], and the capture's damage.
pub fn command(args: InspectArgs, ctx: &Context<'_>) -> Result<Exit> {
    let dissectors = args.opts.dissectors(ctx)?;
    match run(&args.capture, dissectors, ctx.program())? {
        None => Ok(Exit::Ok),
        Some(damage) => bail!("{damage}"),
    }
}

/// Opens the capture and runs the TUI. A damaged capture opens with the packets before the
/// damage; the status bar names the damage. One damaged before its first UDP datagram does not
/// open: its damage is the error. Returns the damage message for the exit status.
/// `program` names the program in the message for a missing terminal.
///
/// # Errors
/// When the capture cannot be opened, or there is no terminal.
pub fn run(path: &Path, dissectors: Dissectors, program: &str) -> Result<Option<String>> {
    let capture = open_capture(path)?;
    // Damaged before its first UDP datagram: nothing to show, so the damage is the error and
    // the TUI does not open on an empty list.
    if let (true, Some(damage)) = (capture.datagrams().is_empty(), capture.damage()) {
        bail!("{damage}");
    }
    if !std::io::stdout().is_terminal() {
        bail!(
            "inspect needs a terminal; for pipes use `{program} decode {}` (or --json)",
            path.display()
        );
    }
    let damage = capture.damage().map(ToString::to_string);
    crate::tui::run(capture, dissectors, program)?;
    Ok(damage)
}
