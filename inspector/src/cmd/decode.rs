//! `bitlens decode CAPTURE [--json]`: every UDP datagram decoded, in capture order.

use super::common::{DecodeOpts, read_capture};
use crate::capture::{self, Datagram};
use crate::decode::Decoders;
use crate::output;
use anyhow::Result;
use std::io::Write;
use std::path::Path;

/// Decodes `datagrams` of `file` into text or JSON lines, appended to `buf`.
fn render(
    name: &str,
    file: &[u8],
    decoders: &Decoders,
    datagrams: &[Datagram],
    json: bool,
    fields: bool,
    buf: &mut Vec<u8>,
) {
    for d in datagrams {
        let payload = d.payload(file);
        if json {
            let decoded = decoders.decode_flat(d, payload);
            output::write_json(buf, d, payload.len(), &decoded);
            buf.push(b'\n');
            decoded.trace.recycle();
        } else {
            let decoded = decoders.decode_payload(d.status, decoders.for_datagram(d), payload);
            let mut line = output::summary_line(d, &decoded);
            if let Some(flaw) = &d.flaw {
                line.push_str("  ");
                line.push_str(&flaw.message(name, d.frame));
            }
            // Writing into a Vec cannot fail.
            let _ = writeln!(buf, "{line}");
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
    let (name, file) = read_capture(path)?;
    // One pass: chunks of datagrams go to every core as the indexer finds them, and their
    // output is written in capture order; a chunk's output (about 700 KB of JSON) fits in cache
    // and its buffer is reused.
    const CHUNK: usize = 256;
    let mut closed = false;
    let summary = crate::pipeline::ordered(
        |push| capture::scan(&name, &file, CHUNK, |_, datagrams| push(datagrams.to_vec())),
        |chunk: Vec<Datagram>, buf| render(&name, &file, &decoders, &chunk, json, fields, buf),
        |buf| match out.write_all(buf) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                closed = true;
                Ok(false)
            }
            Err(e) => Err(e.into()),
        },
    )?
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    if closed {
        return Ok(None);
    }
    out.flush().ok();
    Ok(summary.damage.as_ref().map(ToString::to_string))
}
