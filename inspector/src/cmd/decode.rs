//! `bitlens decode CAPTURE [--json]`: every UDP datagram decoded, in capture order.

use super::common::{DecodeOpts, open_capture};
use crate::capture::Capture;
use crate::decode::Decoders;
use crate::output;
use anyhow::Result;
use std::io::Write;
use std::ops::Range;
use std::path::Path;

/// Decodes datagrams `range` into text or JSON lines, appended to `buf`.
fn render(
    capture: &Capture,
    decoders: &Decoders,
    range: Range<usize>,
    json: bool,
    fields: bool,
    buf: &mut Vec<u8>,
) {
    for d in &capture.datagrams()[range] {
        if json {
            let decoded = decoders.decode_flat(capture, d);
            output::write_json(buf, d, capture.payload(d).len(), &decoded);
            buf.push(b'\n');
            decoded.trace.recycle();
        } else {
            let decoded = decoders.decode(capture, d);
            // Writing into a Vec cannot fail.
            let _ = writeln!(buf, "{}", output::summary_line(capture, d, &decoded));
            if fields {
                for l in output::field_lines(&decoded) {
                    let _ = writeln!(buf, "{l}");
                }
            }
        }
    }
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
    // Chunks decoded on every core and written in capture order; a chunk's output (about
    // 700 KB of JSON) fits in cache, and its buffer is reused.
    const CHUNK: usize = 256;
    let all = capture.datagrams();
    let mut closed = false;
    crate::par::ordered(
        all.len().div_ceil(CHUNK),
        |k, buf| {
            let range = k * CHUNK..((k + 1) * CHUNK).min(all.len());
            render(&capture, &decoders, range, json, fields, buf);
        },
        |buf| match out.write_all(buf) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                closed = true;
                Ok(false)
            }
            Err(e) => Err(e.into()),
        },
    )?;
    if closed {
        return Ok(None);
    }
    out.flush().ok();
    Ok(capture.damage().map(ToString::to_string))
}
