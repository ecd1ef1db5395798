//! `decode CAPTURE [--json|--fields]`: every UDP datagram dissected, in capture order.

use super::common::{Context, Exit};
use super::common::{DecodeOpts, open_capture, read_capture};
use crate::capture::{self, Datagram};
use crate::dissectors::{Dissectors, seen_at};
use crate::output;
use anyhow::{Result, bail};
use bitlens_codec::observe::Observation;
use clap::Parser;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Decode every UDP datagram of a capture: one line (or JSON object) per datagram.
#[derive(Parser, Debug)]
pub struct DecodeArgs {
    /// A pcap or pcapng file.
    pub capture: PathBuf,
    /// One JSON object per datagram (frame, time, src, dst, len, decoder, status,
    /// packet_type, fields, checks, error, desync; messages for batches).
    #[arg(long)]
    pub json: bool,
    /// Print the field tree under each datagram (text form).
    #[arg(long, conflicts_with = "json")]
    pub fields: bool,
    /// Also write the payloads a transport decrypted (`--decode PORT=netcode+NAME` with
    /// `--netcode-key`) as a pcapng capture, one datagram per payload with its datagram's
    /// addresses and time: what Wireshark, whose Lua cannot decrypt, reads with the exported
    /// dissector.
    #[arg(long, value_name = "FILE")]
    pub write_plaintext: Option<PathBuf>,
    /// Which dissector reads which port.
    #[command(flatten)]
    pub opts: DecodeOpts,
}

/// The subcommand: writes every datagram to stdout; a damaged capture is a file error (exit
/// status 2) after the datagrams before the damage.
///
/// # Errors
/// As [`run`], and the capture's damage.
pub fn command(args: DecodeArgs, ctx: &Context<'_>) -> Result<Exit> {
    let dissectors = args.opts.dissectors(ctx)?;
    if let Some(path) = &args.write_plaintext
        && write_plaintext(&args.capture, &dissectors, path)? == 0
    {
        stderr_line!(
            "{}: {}: no payload was decrypted, so it holds no datagram (it needs a port read \
             with --decode PORT=netcode+NAME, and --netcode-key or --netcode-keylog)",
            ctx.program(),
            path.display()
        );
    }
    let mut out = std::io::BufWriter::new(crate::files::stdout());
    // A bar for text output only: JSON's readers take stderr for errors.
    let (damage, pending) = run_with_progress(
        &args.capture,
        &dissectors,
        (args.json, args.fields),
        !args.json,
        &mut out,
    )?;
    quiet_on_closed_pipe(out.flush())?;
    for line in pending {
        stderr_line!(
            "{}: warning: {}: still in reassembly when the capture ended: {line}",
            ctx.program(),
            args.capture.display()
        );
    }
    match damage {
        None => Ok(Exit::Ok),
        Some(damage) => bail!("{damage}"),
    }
}

/// `result` with a closed pipe (the reader went away: `| head`) as no error; any other
/// error (`> /dev/full`) is kept.
fn quiet_on_closed_pipe(result: std::io::Result<()>) -> std::io::Result<()> {
    match result {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// Writes the plaintext payloads the transports handed on ([`LayerView::plaintext`]) of
/// every datagram of `capture` to a pcapng file at `out`, with the datagram's addresses and
/// time; returns how many. A sequential pass of its own: the capture in order through the
/// transports' trackers, then each datagram dissected.
///
/// # Errors
/// The capture cannot be opened, or the output cannot be written.
///
/// [`LayerView::plaintext`]: bitlens_codec::dissect::LayerView::plaintext
pub fn write_plaintext(capture: &Path, dissectors: &Dissectors, out: &Path) -> Result<usize> {
    use crate::capture::write::{CaptureWriter, PcapngResolution, SynthDatagram, WriteFormat};
    let capture = open_capture(capture)?;
    let payload = |d: &Datagram| capture.payload(d);
    let seen = dissectors.observe_all(capture.datagrams().iter().map(|d| (d, payload(d))));
    let format = WriteFormat::PcapngEthernet {
        resolution: PcapngResolution::Nano,
        ts_offset_secs: 0,
    };
    let mut w = CaptureWriter::create(out, format).map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut written = 0;
    for (i, d) in capture.datagrams().iter().enumerate() {
        let (_, x) = dissectors.dissect_values_seen(d, payload(d), seen_at(&seen, i));
        let Some(plain) = x.layers.first().and_then(|l| l.plaintext.as_deref()) else {
            continue;
        };
        w.write(&SynthDatagram::new(d.time, d.src, d.dst, plain))
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        written += 1;
    }
    w.finish().map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(written)
}

/// Dissects `datagrams` of `file` into text or JSON lines at the start of `buf` (which holds an
/// earlier chunk's output) and returns their length; `seen` holds the sequential pass's
/// observation of each datagram (empty without transports).
#[allow(
    clippy::too_many_arguments,
    reason = "the chunk's parts and the output's options"
)]
fn render(
    name: &str,
    file: &[u8],
    dissectors: &Dissectors,
    datagrams: &[Datagram],
    seen: &[Observation],
    json: bool,
    fields: bool,
    buf: &mut Vec<u8>,
) -> usize {
    if json {
        // Over the earlier chunk's bytes: the writer's room, with no zeroing.
        let mut lines = output::JsonLines::over(buf);
        for (i, d) in datagrams.iter().enumerate() {
            let payload = d.payload(file);
            let seen = seen_at(seen, i);
            // Used where it was returned: taking the pair apart copied the dissection.
            let dissected = dissectors.dissect_values_seen(d, payload, seen);
            lines.line(d, payload.len(), dissected.0, &dissected.1);
            dissected.1.recycle();
        }
        return lines.written();
    }
    buf.clear();
    for (i, d) in datagrams.iter().enumerate() {
        let payload = d.payload(file);
        let seen = seen_at(seen, i);
        // Only `--fields` shows the field tree: the other outputs list values, and skip what
        // only the tree has (a batch's message headers, which are in each message's view).
        let (decoder, dissection) = if fields {
            dissectors.dissect_seen(d, payload, seen)
        } else {
            dissectors.dissect_values_seen(d, payload, seen)
        };
        let mut line = output::summary_line(d, decoder, &dissection);
        if let Some(flaw) = &d.flaw {
            line.push_str("  ");
            line.push_str(&flaw.message(name, d.frame));
        }
        buf.extend_from_slice(line.as_bytes());
        buf.push(b'\n');
        if fields {
            output::write_field_lines(buf, &dissection);
        }
        dissection.recycle();
    }
    buf.len()
}

/// Writes one line (or JSON object) per datagram; with `fields`, the field tree under each.
/// Returns the capture's damage message, if the capture ended in damage (the datagrams before
/// it were written).
///
/// # Errors
/// When the capture cannot be opened, or the output cannot be written.
pub fn run(
    path: &Path,
    dissectors: &Dissectors,
    json: bool,
    fields: bool,
    out: &mut dyn Write,
) -> Result<Option<String>> {
    run_with_progress(path, dissectors, (json, fields), false, out).map(|(damage, _)| damage)
}

/// [`run`], with a progress bar on stderr when `progress` and stderr is a terminal; also what
/// the transports still held unfinished when the capture ended
/// ([`crate::dissectors::Observer::finish`]; nothing when the reader of the output went away).
fn run_with_progress(
    path: &Path,
    dissectors: &Dissectors,
    (json, fields): (bool, bool),
    progress: bool,
    out: &mut dyn Write,
) -> Result<(Option<String>, Vec<String>)> {
    let (name, file) = read_capture(path)?;
    let bar = crate::progress::Progress::bytes(file.len() as u64, "decode", progress);
    // One pass: chunks of datagrams go to every core as the indexer finds them, and their
    // output is written in capture order; a chunk's output (about 700 KB of JSON) fits in cache
    // and its buffer is reused.
    const CHUNK: usize = 256;
    let mut closed = false;
    // The transports' sequential pass runs here, in capture order, before the chunk goes to a
    // worker; without transports there is no pass and the observations stay empty.
    let mut observer = dissectors.observer();
    // The pass opens each encrypted packet (its replay window moves only for packets that
    // open) and hands the plaintext on, a chunk's in one buffer that the worker frees at once
    // ([`crate::dissectors::Observer::observe_chunk`]): a packet is decrypted once. Handed on
    // one plaintext at a time, every plaintext was allocated on this thread and freed on a
    // worker, and glibc's arena locks made the workers wait (7.7 s for 1M netcode datagrams on
    // 2 cores, 4.5 s of it system time); 9bb5221 then opened each packet twice instead
    // (BENCHMARKS.md, "netcode: what decrypting costs").
    let summary = crate::pipeline::ordered(
        |push| {
            capture::scan(&name, &file, CHUNK, |_, datagrams| {
                if let Some(last) = datagrams.last() {
                    bar.set(last.payload_range().end as u64);
                }
                let seen: Vec<Observation> = match &mut observer {
                    Some(o) => o.observe_chunk(datagrams, &file),
                    None => Vec::new(),
                };
                push((datagrams.to_vec(), seen))
            })
        },
        |(chunk, seen): (Vec<Datagram>, Vec<Observation>), buf| {
            render(&name, &file, dissectors, &chunk, &seen, json, fields, buf)
        },
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
    bar.finish();
    if closed {
        return Ok((None, Vec::new()));
    }
    quiet_on_closed_pipe(out.flush())?;
    let pending = observer.as_mut().map(|o| o.finish()).unwrap_or_default();
    Ok((summary.damage.as_ref().map(ToString::to_string), pending))
}
