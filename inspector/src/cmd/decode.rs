//! `bitlens decode CAPTURE [--json]`: every UDP datagram decoded, in capture order.

use super::common::{DecodeOpts, open_capture};
use crate::output;
use anyhow::Result;
use std::io::Write;
use std::path::Path;

/// Writes one line (or JSON object) per datagram; with `fields`, the field tree under each.
/// Returns the capture's damage message, if the capture ended in damage (the datagrams before
/// it were written).
///
/// # Errors
/// When the capture cannot be opened or the options are invalid.
pub fn run(
    path: &Path,
    opts: &DecodeOpts,
    json: bool,
    fields: bool,
    out: &mut dyn Write,
) -> Result<Option<String>> {
    let decoders = opts.decoders()?;
    let capture = open_capture(path)?;
    let mut line = Vec::with_capacity(4096);
    for d in capture.datagrams() {
        let decoded = decoders.decode(&capture, d);
        line.clear();
        if json {
            serde_json::to_writer(
                &mut line,
                &output::json(d, capture.payload(d).len(), &decoded),
            )?;
            line.push(b'\n');
        } else {
            writeln!(line, "{}", output::summary_line(&capture, d, &decoded))?;
            if fields {
                for l in output::field_lines(&decoded) {
                    writeln!(line, "{l}")?;
                }
            }
        }
        if let Err(e) = out.write_all(&line) {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                return Ok(None);
            }
            return Err(e.into());
        }
    }
    out.flush().ok();
    Ok(capture.damage().map(ToString::to_string))
}
