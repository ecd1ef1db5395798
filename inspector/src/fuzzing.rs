//! The harness of the `pipeline` fuzz target: arbitrary bytes through the inspector's decode
//! pipeline, as `check`, `decode`, `decode --json` and `decode --fields` run it, with the
//! properties that hold between those outputs.
//!
//! The first byte picks a dissector (the demo's packets and batches, the demo schema's packets
//! and batches, `every.schema.toml`'s packets and batches) and whether its integrity fields are
//! re-signed first ([`Dissector::seal`]), so that random bytes reach the bodies past the CRC;
//! the rest is the UDP payload. For every input:
//!
//! - the verdict (what `check` tallies) and the dissection (what `decode` shows) give the same
//!   status, packet type and problem;
//! - a desync is located exactly when the status is [`Status::Desync`], and the writer's marker
//!   it points at holds the mismatched check's hash, within 64 bytes of where the reader looked;
//! - the JSON line parses, and says the dissection's status, packet type, error and desync;
//! - the text line names the status and the problem, and `--fields` gives one line per trace
//!   entry;
//! - the dissection without message headers (`decode --json`'s) writes the same JSON and text.

use crate::capture::{Datagram, Timestamp};
use crate::dissectors::Dissectors;
use crate::output;
use bitlens_codec::dissect::{Dissection, Dissector, Status};
use bitlens_codec::trace::FieldKind;
use bitlens_demo::{batch_demo, demo};
use bitlens_schema::Schema;
use bitlens_schema::dissect::{SchemaDissector, batch_dissector};
use std::net::SocketAddr;
use std::sync::{Arc, LazyLock};

/// `demo.schema.toml`: the demo protocol described in TOML.
const DEMO_SCHEMA: &str = include_str!("../../captures/demo.schema.toml");

/// `every.schema.toml`: every construct of the schema language, packets and a `[batch]`.
const EVERY_SCHEMA: &str = include_str!("../../captures/every.schema.toml");

/// The dissectors the first byte picks from, each on its own port (1, 2, ...).
static PICKS: LazyLock<Vec<Arc<dyn Dissector>>> = LazyLock::new(|| {
    let load = |text: &str, file: &str| match Schema::from_toml(text, file) {
        Ok(s) => Arc::new(s),
        Err(e) => panic!("the shipped {file} does not load: {e}"),
    };
    let mut picks: Vec<Arc<dyn Dissector>> = vec![
        Arc::new(demo::dissector()),
        Arc::new(batch_demo::dissector()),
    ];
    for (text, file) in [
        (DEMO_SCHEMA, "demo.schema.toml"),
        (EVERY_SCHEMA, "every.schema.toml"),
    ] {
        let schema = load(text, file);
        picks.push(Arc::new(SchemaDissector::named(file, Arc::clone(&schema))));
        if let Some(b) = batch_dissector(schema) {
            picks.push(Arc::new(b));
        }
    }
    picks
});

/// [`PICKS`] registered on ports 1, 2, ... .
static DISSECTORS: LazyLock<Dissectors> = LazyLock::new(|| {
    let mut d = Dissectors::new();
    for (port, pick) in (1..).zip(PICKS.iter()) {
        d.register(port, Arc::clone(pick));
    }
    d
});

/// Runs `data` through the decode pipeline and checks its outputs against each other; panics on
/// the first property that does not hold.
#[doc(hidden)]
pub fn fuzz_pipeline(data: &[u8]) {
    let Some((&selector, payload)) = data.split_first() else {
        return;
    };
    let index = usize::from(selector & 0x7f) % PICKS.len();
    let mut payload = payload.to_vec();
    if selector & 0x80 != 0 {
        PICKS[index].seal(&mut payload);
    }
    let port = u16::try_from(index + 1).expect("a handful of dissectors");
    let time = Timestamp::from_nanos(1_700_000_000_000_000_000);
    let d = Datagram::detached(
        1,
        time,
        SocketAddr::from(([10, 0, 0, 2], 50000)),
        SocketAddr::from(([10, 0, 0, 1], port)),
        payload.len(),
    );
    let verdict = DISSECTORS.verdict(&d, &payload);
    let (decoder, dissection) = DISSECTORS.dissect(&d, &payload);
    assert_eq!(decoder, PICKS[index].name(), "the port's dissector");
    assert_eq!(
        verdict.status, dissection.status,
        "check and decode: status"
    );
    assert_eq!(
        verdict.packet_type, dissection.packet_type,
        "check and decode: packet type"
    );
    assert_eq!(
        verdict.problem, dissection.problem,
        "check and decode: problem"
    );
    assert_eq!(
        dissection.status.is_problem(),
        dissection.problem.is_some(),
        "a problem exactly when the status says one"
    );
    assert_desync(&dissection, &payload);
    let json = assert_json(&d, decoder, &dissection, payload.len());
    let line = assert_text(&d, decoder, &dissection);
    let full = Outputs {
        status: dissection.status,
        bits_read: dissection.trace.bits_read,
        line,
        json,
    };
    // The full dissection's storage goes to the next one (as `decode` reuses it), so that one
    // input pays for one trace, within the guard's per-input budget.
    dissection.recycle();
    assert_values_agree(&d, &payload, &full);
}

/// What the full dissection wrote, kept after its trace is recycled.
struct Outputs {
    status: Status,
    bits_read: usize,
    line: String,
    json: Vec<u8>,
}

/// `decode --json` and the text line read [`Dissectors::dissect_values`] (no message headers in
/// the tree): they must write exactly what the full dissection gives.
fn assert_values_agree(d: &Datagram, payload: &[u8], full: &Outputs) {
    let (decoder, values) = DISSECTORS.dissect_values(d, payload);
    assert_eq!(values.status, full.status, "dissect_values: status");
    assert_eq!(
        values.trace.bits_read, full.bits_read,
        "dissect_values: bits read"
    );
    let mut json = Vec::with_capacity(full.json.len());
    output::write_json(&mut json, d, payload.len(), decoder, &values);
    assert!(
        json == full.json,
        "decode --json differs without the headers:\n{}\n{}",
        String::from_utf8_lossy(&full.json),
        String::from_utf8_lossy(&json)
    );
    assert_eq!(
        output::summary_line(d, decoder, &values),
        full.line,
        "the text line differs without the headers"
    );
}

/// The desync locator: run exactly on a desync, and its finding holds.
fn assert_desync(dissection: &Dissection, payload: &[u8]) {
    let Some(ds) = &dissection.desync else {
        // A batch's desynced message is a message problem (its status is the datagram's
        // error); a bit-packed packet's desync always has a location.
        if dissection.messages.is_none() {
            assert_ne!(dissection.status, Status::Desync, "a desync not located");
        }
        return;
    };
    assert_eq!(
        dissection.status,
        Status::Desync,
        "located, but not a desync"
    );
    let expected = dissection
        .trace
        .fields
        .iter()
        .rev()
        .find_map(|f| match &f.kind {
            FieldKind::Check {
                label, expected, ..
            } if *label == ds.label => Some(*expected),
            _ => None,
        })
        .expect("the mismatched check is in the trace");
    if let Some(found) = ds.found_bit {
        assert_eq!(found % 8, 0, "markers are byte-aligned");
        assert!(
            found.abs_diff(ds.expected_bit) <= 64 * 8,
            "searched too far"
        );
        let at = payload
            .get(found / 8..found / 8 + 4)
            .expect("the found marker is inside the payload");
        assert_eq!(
            u32::from_le_bytes(at.try_into().expect("four bytes")),
            expected,
            "the found marker is not the check's hash"
        );
        let (lo, hi) = ds.behind.expect("a found marker measures the drift");
        assert!(lo <= hi && hi - lo <= 7, "drift range {lo}..={hi}");
    } else {
        assert_eq!(ds.behind, None, "no marker found, no drift");
    }
    assert!(!ds.message().is_empty());
}

/// The JSON line parses and says what the dissection says; returns the line.
fn assert_json(
    d: &Datagram,
    decoder: &str,
    dissection: &Dissection,
    payload_len: usize,
) -> Vec<u8> {
    let mut buf = Vec::new();
    output::write_json(&mut buf, d, payload_len, decoder, dissection);
    // The keys compared below; the oracle crate parses the whole line with serde_json (skipping
    // the rest without building it), outside the fuzzer's coverage: its branches are not code
    // under test.
    let v = match bitlens_fuzz_oracle::parse_json_line(&buf) {
        Ok(v) => v,
        Err(e) => panic!(
            "decode --json wrote invalid JSON ({e}): {}",
            String::from_utf8_lossy(&buf)
        ),
    };
    assert_eq!(v.status, dissection.status.name(), "JSON status");
    assert_eq!(v.decoder, decoder, "JSON decoder");
    assert_eq!(
        v.packet_type.as_deref(),
        dissection.packet_type,
        "JSON packet_type"
    );
    assert_eq!(v.len, payload_len, "JSON len");
    match (&dissection.problem, &v.error) {
        (Some(p), Some(e)) => {
            assert_eq!(e.kind, p.kind, "JSON error kind");
            assert_eq!(e.bit, p.bit, "JSON error bit");
            assert_eq!(e.field, p.field.as_str(), "JSON error field");
        }
        (None, None) => {}
        (p, e) => panic!("JSON error {e:?} for problem {p:?}"),
    }
    assert_eq!(v.desync, dissection.desync.is_some(), "JSON desync");
    let checks = dissection
        .trace
        .fields
        .iter()
        .filter(|f| matches!(f.kind, FieldKind::Check { .. }))
        .count();
    assert_eq!(v.checks, checks, "JSON checks");
    assert_eq!(
        v.messages,
        dissection.messages.as_ref().map(Vec::len),
        "JSON messages (none for a packet)"
    );
    buf
}

/// The text line names the status and the problem; `--fields` lists every trace entry, and the
/// field a read ran past the end at when no entry was recorded for it. Returns the text line.
fn assert_text(d: &Datagram, decoder: &str, dissection: &Dissection) -> String {
    let line = output::summary_line(d, decoder, dissection);
    assert!(!line.contains('\n'), "one line per datagram: {line:?}");
    assert!(
        line.contains(&format!(" {}", dissection.status)),
        "the text line names the status: {line}"
    );
    if let Some(p) = &dissection.problem {
        assert!(line.contains(&p.message), "the text line has the problem");
    }
    let mut fields = Vec::new();
    output::write_field_lines(&mut fields, dissection);
    let stop = dissection.trace.past_end_entry();
    // One line per entry: a newline ends each, and none is inside one.
    assert_eq!(
        fields.iter().filter(|&&b| b == b'\n').count(),
        dissection.trace.fields.len() + usize::from(stop.is_some()),
        "--fields lines"
    );
    if stop.is_some() {
        assert!(
            fields.ends_with(b"  <- read stopped here\n"),
            "--fields marks where a read ran past the end: {}",
            String::from_utf8_lossy(&fields)
        );
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dissect_on(port: u16, payload: &[u8]) -> Status {
        let d = Datagram::detached(
            1,
            Timestamp::from_nanos(0),
            SocketAddr::from(([10, 0, 0, 2], 50000)),
            SocketAddr::from(([10, 0, 0, 1], port)),
            payload.len(),
        );
        DISSECTORS.dissect(&d, payload).1.status
    }

    #[test]
    fn the_samples_decode_and_noise_keeps_the_outputs_in_step() {
        assert!(PICKS.len() >= 6, "demo, batch, two schemas with batches");
        // The demo's packets, by the compiled dissector (pick 0) and the demo schema (pick 2).
        for (name, bytes) in bitlens_testkit::fuzzing::sample_packets() {
            for selector in [0u8, 2] {
                let mut data = vec![selector];
                data.extend_from_slice(&bytes);
                fuzz_pipeline(&data);
                let status = dissect_on(u16::from(selector) + 1, &bytes);
                assert_eq!(status, Status::Ok, "{name} by pick {selector}");
            }
        }
        // A desynced packet: the writer's marker is found where it is.
        let (_, mut bytes) = bitlens_testkit::fuzzing::sample_packets().swap_remove(0);
        bytes.insert(8, 0);
        let mut data = vec![0x80];
        data.extend_from_slice(&bytes);
        fuzz_pipeline(&data);
        let mut x = 0x2545_f491_u32;
        for len in 0..400usize {
            let data: Vec<u8> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 17;
                    x ^= x << 5;
                    x as u8
                })
                .collect();
            fuzz_pipeline(&data);
        }
    }
}
