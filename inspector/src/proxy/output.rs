//! The sink: each [`Seen`] datagram becomes its NDJSON line, its recorded frame, its mutation
//! log line and an entry of a live view's list (the TUI's, over a channel of
//! [`Arrival`]s).
//!
//! A line is the `bitlens decode --json` object of the datagram (README, "JSON"; addresses are
//! the client's and the server's, the bytes those forwarded), followed by the proxy's keys:
//!
//! ```text
//! {...decode --json keys..., "direction":"to_server"|"to_client", "client":"IP:PORT",
//!  "impairments":["drop"|"duplicate"|"delay"|"reorder"|"queue_full", ...],
//!  "delay_us":N|null,
//!  "mutation":{"rule","packet_type","crc":"resigned"|"stale"|"none",
//!              "ops":[{"action","field","bit","bits","old","new","old_value","new_value"}],
//!              "original":HEX,"sent":HEX}|null}
//! ```
//!
//! The mutation log (`--mutation-log FILE`) holds the lines of the mutated datagrams only: the
//! input of `bitlens replay`.

use super::record::Recording;
use super::{Seen, SessionDissector};
use crate::dissectors::Arrival;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender};
use std::time::Duration;

/// Appends the NDJSON line of a datagram (without the newline).
pub fn write_line(buf: &mut Vec<u8>, dis: &SessionDissector, seen: &Seen) {
    dis.write_json(buf, &seen.datagram(), &seen.bytes, &seen.observed);
    // A decode --json object ends with its closing brace: the proxy's keys go before it.
    if buf.last() == Some(&b'}') {
        buf.pop();
    }
    buf.extend_from_slice(b",\"direction\":\"");
    buf.extend_from_slice(seen.direction.name().as_bytes());
    buf.extend_from_slice(b"\",\"client\":\"");
    buf.extend_from_slice(seen.client.to_string().as_bytes());
    buf.extend_from_slice(b"\",\"impairments\":[");
    for (i, name) in seen.fate.names().enumerate() {
        if i > 0 {
            buf.push(b',');
        }
        buf.push(b'"');
        buf.extend_from_slice(name.as_bytes());
        buf.push(b'"');
    }
    buf.extend_from_slice(b"],\"delay_us\":");
    match seen.fate.decision.delay {
        Some(d) => buf.extend_from_slice(d.as_micros().to_string().as_bytes()),
        None => buf.extend_from_slice(b"null"),
    }
    buf.extend_from_slice(b",\"mutation\":");
    // Writing into a Vec cannot fail, and the mutation always serializes.
    let _ = serde_json::to_writer(&mut *buf, &seen.mutation);
    buf.push(b'}');
}

/// Where the sink writes.
#[derive(Default)]
pub struct Outputs {
    /// NDJSON lines (stdout), unless `--quiet`.
    pub json: Option<Box<dyn Write + Send>>,
    /// `--record`.
    pub recording: Option<Recording>,
    /// `--mutation-log`: its name and file.
    pub mutation_log: Option<(String, BufWriter<File>)>,
    /// A live view's feed (the TUI of `proxy --tui`): each datagram with its bytes.
    pub live: Option<SyncSender<Arrival>>,
}

/// What the sink did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SinkReport {
    /// NDJSON lines written.
    pub lines: u64,
    /// Frames recorded: written out to the file (not only buffered).
    pub recorded: u64,
    /// The recording failed (its error is [`SinkReport::error`]): frames after the last
    /// successful flush were lost.
    pub recording_failed: bool,
    /// Mutations logged.
    pub mutations_logged: u64,
    /// The reader of the lines went away (a closed pipe): the proxy stopped.
    pub output_closed: bool,
    /// The write error that stopped the proxy.
    pub error: Option<String>,
}

/// The sink's side of the channel.
pub struct Sink {
    dis: Arc<SessionDissector>,
    out: Outputs,
    report: SinkReport,
    /// Frames written to the recording's buffer since its last flush.
    buffered: u64,
    line: Vec<u8>,
}

impl Sink {
    /// A sink writing `out`, decoding with `dis`.
    pub fn new(dis: Arc<SessionDissector>, out: Outputs) -> Self {
        Sink {
            dis,
            out,
            report: SinkReport::default(),
            buffered: 0,
            line: Vec::with_capacity(4096),
        }
    }

    /// Writes every datagram received until the relay hangs up, flushing whenever the channel
    /// runs dry; sets `stop` when an output fails (the relay then stops too).
    pub fn run(mut self, rx: Receiver<Seen>, stop: &AtomicBool) -> SinkReport {
        loop {
            match rx.recv_timeout(Duration::from_millis(200)) {
                Ok(seen) => {
                    self.take(seen, stop);
                    // Whatever else is waiting, then one flush for all of it.
                    for _ in 0..4096 {
                        match rx.try_recv() {
                            Ok(seen) => self.take(seen, stop),
                            Err(_) => break,
                        }
                    }
                    self.flush(stop);
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        self.flush(stop);
        self.report
    }

    fn fail(&mut self, stop: &AtomicBool, e: String) {
        if self.report.error.is_none() {
            self.report.error = Some(e);
        }
        stop.store(true, Ordering::Relaxed);
    }

    /// The lines' output failed: a reader that went away (a closed pipe) stops the proxy
    /// quietly, any other error is the run's error.
    fn json_failed(&mut self, stop: &AtomicBool, e: &std::io::Error) {
        self.out.json = None;
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            self.report.output_closed = true;
            stop.store(true, Ordering::Relaxed);
        } else {
            self.fail(
                stop,
                format!(
                    "cannot write to standard output: {}",
                    crate::files::reason(e)
                ),
            );
        }
    }

    fn take(&mut self, seen: Seen, stop: &AtomicBool) {
        let wants_line =
            self.out.json.is_some() || (seen.mutation.is_some() && self.out.mutation_log.is_some());
        if wants_line {
            self.line.clear();
            write_line(&mut self.line, &self.dis, &seen);
            self.line.push(b'\n');
        }
        if let Some(json) = &mut self.out.json {
            match json.write_all(&self.line) {
                Ok(()) => self.report.lines += 1,
                Err(e) => self.json_failed(stop, &e),
            }
        }
        if seen.mutation.is_some()
            && let Some((name, log)) = &mut self.out.mutation_log
        {
            match log.write_all(&self.line) {
                Ok(()) => self.report.mutations_logged += 1,
                Err(e) => {
                    let e = format!("{name}: {e}");
                    self.out.mutation_log = None;
                    self.fail(stop, e);
                }
            }
        }
        if let Some(rec) = &mut self.out.recording {
            match rec.write(&seen) {
                Ok(true) => self.buffered += 1,
                Ok(false) => {}
                Err(e) => {
                    self.out.recording = None;
                    self.report.recording_failed = true;
                    self.fail(stop, e);
                }
            }
        }
        if let Some(live) = &self.out.live {
            let arrival = Arrival {
                datagram: seen.datagram(),
                payload: seen.bytes,
                observed: seen.observed,
            };
            if live.send(arrival).is_err() {
                // The live view closed: it stops the proxy itself.
                self.out.live = None;
            }
        }
    }

    fn flush(&mut self, stop: &AtomicBool) {
        if let Some(json) = &mut self.out.json
            && let Err(e) = json.flush()
        {
            self.json_failed(stop, &e);
        }
        if let Some((name, log)) = &mut self.out.mutation_log
            && let Err(e) = log.flush()
        {
            let e = format!("{name}: {e}");
            self.out.mutation_log = None;
            self.fail(stop, e);
        }
        if let Some(rec) = &mut self.out.recording {
            match rec.flush() {
                Ok(()) => self.report.recorded += std::mem::take(&mut self.buffered),
                Err(e) => {
                    self.out.recording = None;
                    self.report.recording_failed = true;
                    self.fail(stop, e);
                }
            }
        }
    }
}
