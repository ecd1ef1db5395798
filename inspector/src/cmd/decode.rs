//! `bitlens decode CAPTURE [--json]`: every UDP datagram decoded, in capture order.

use super::common::{DecodeOpts, open_capture};
use crate::capture::Capture;
use crate::decode::Decoders;
use crate::output;
use anyhow::Result;
use std::io::Write;
use std::ops::Range;
use std::path::Path;

/// Decodes datagrams `range` into text or JSON lines.
fn render(
    capture: &Capture,
    decoders: &Decoders,
    range: Range<usize>,
    json: bool,
    fields: bool,
) -> std::io::Result<Vec<u8>> {
    let mut buf = Vec::with_capacity(range.len() * 512);
    for d in &capture.datagrams()[range] {
        if json {
            let decoded = decoders.decode_flat(capture, d);
            output::write_json(&mut buf, d, capture.payload(d).len(), &decoded);
            buf.push(b'\n');
        } else {
            let decoded = decoders.decode(capture, d);
            writeln!(buf, "{}", output::summary_line(capture, d, &decoded))?;
            if fields {
                for l in output::field_lines(&decoded) {
                    writeln!(buf, "{l}")?;
                }
            }
        }
    }
    Ok(buf)
}

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
    // Rounds of chunks decoded on every core, written in capture order: memory stays bounded by
    // one round's output whatever the capture's size.
    const CHUNK: usize = 2048;
    let all = capture.datagrams();
    let threads = crate::par::threads();
    let mut next = 0;
    while next < all.len() {
        let round: Vec<_> = (0..threads)
            .map(|k| (next + k * CHUNK).min(all.len())..(next + (k + 1) * CHUNK).min(all.len()))
            .filter(|r| !r.is_empty())
            .collect();
        next = round.last().map_or(all.len(), |r| r.end);
        let buffers = crate::par::map(&round, |r| render(&capture, &decoders, r, json, fields))?;
        for buf in buffers {
            if let Err(e) = out.write_all(&buf?) {
                if e.kind() == std::io::ErrorKind::BrokenPipe {
                    return Ok(None);
                }
                return Err(e.into());
            }
        }
    }
    out.flush().ok();
    Ok(capture.damage().map(ToString::to_string))
}
