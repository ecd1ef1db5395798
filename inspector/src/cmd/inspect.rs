//! `bitlens inspect CAPTURE`: the terminal UI.

use super::common::{DecodeOpts, open_capture};
use anyhow::{Result, bail};
use std::io::IsTerminal;
use std::path::Path;

/// Opens the capture and runs the TUI. A damaged capture opens with the packets before the
/// damage; the status bar names the damage. Returns the damage message for the exit status.
///
/// # Errors
/// When the capture cannot be opened, the options are invalid, or there is no terminal.
pub fn run(path: &Path, opts: &DecodeOpts) -> Result<Option<String>> {
    let decoders = opts.decoders()?;
    let capture = open_capture(path)?;
    if !std::io::stdout().is_terminal() {
        bail!(
            "inspect needs a terminal; for pipes use `bitlens decode {}` (or --json)",
            path.display()
        );
    }
    let damage = capture.damage().map(ToString::to_string);
    crate::tui::run(capture, decoders)?;
    Ok(damage)
}
