//! Oracles of bitlens's fuzz harnesses: code a harness runs only to check the code under test.
//!
//! In a fuzz build this crate is compiled without libFuzzer's coverage instrumentation
//! (`fuzz/rustc-sancov.sh` reads `fuzz-oracle = true` in its manifest), so its branches and
//! comparisons do not steer the fuzzer towards inputs that exercise the oracle (a JSON parser)
//! rather than bitlens. Its functions are not generic: the parser's code is instantiated here,
//! not in the harness's crate.
#![forbid(unsafe_code)]

use serde::Deserialize;
use serde::de::IgnoredAny;

/// The keys of a `decode --json` line that the `pipeline` harness compares with the dissection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonLine {
    /// `status`.
    pub status: String,
    /// `decoder`.
    pub decoder: String,
    /// `packet_type`, `None` when absent or `null`.
    pub packet_type: Option<String>,
    /// `len`: the payload's length in bytes.
    pub len: usize,
    /// `error`, when present and not `null`.
    pub error: Option<JsonError>,
    /// Whether `desync` is present and not `null`.
    pub desync: bool,
    /// How many elements `checks` holds.
    pub checks: usize,
    /// How many elements `messages` holds, `None` when absent or `null`.
    pub messages: Option<usize>,
}

/// `error` of a `decode --json` line.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct JsonError {
    /// `kind`.
    pub kind: String,
    /// `bit`: where the read failed.
    pub bit: usize,
    /// `field`: the field's path.
    pub field: String,
}

/// The line as serde reads it: the keys not named here are skipped without being built.
#[derive(Deserialize)]
struct Raw {
    status: String,
    decoder: String,
    packet_type: Option<String>,
    len: usize,
    error: Option<JsonError>,
    desync: Option<IgnoredAny>,
    checks: Vec<IgnoredAny>,
    messages: Option<Vec<IgnoredAny>>,
}

/// Parses one `decode --json` line: the whole line must be valid JSON (serde_json checks every
/// value, also those it skips) holding at least the keys of [`JsonLine`] with their types.
pub fn parse_json_line(line: &[u8]) -> Result<JsonLine, serde_json::Error> {
    let raw: Raw = serde_json::from_slice(line)?;
    Ok(JsonLine {
        status: raw.status,
        decoder: raw.decoder,
        packet_type: raw.packet_type,
        len: raw.len,
        error: raw.error,
        desync: raw.desync.is_some(),
        checks: raw.checks.len(),
        messages: raw.messages.map(|m| m.len()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_gives_its_keys_and_a_broken_line_is_refused() {
        let line = br#"{"t":1,"status":"error","decoder":"demo","packet_type":null,"len":3,
            "error":{"kind":"past_end","bit":17,"field":"a.b"},"desync":{"x":[1]},
            "checks":[{},{}],"fields":[{"name":"a"}]}"#;
        let v = parse_json_line(line).expect("valid");
        assert_eq!(v.status, "error");
        assert_eq!(v.decoder, "demo");
        assert_eq!(v.packet_type, None);
        assert_eq!(v.len, 3);
        let e = v.error.expect("an error");
        assert_eq!(
            (e.kind.as_str(), e.bit, e.field.as_str()),
            ("past_end", 17, "a.b")
        );
        assert!(v.desync);
        assert_eq!(v.checks, 2);
        assert_eq!(v.messages, None);
        // Invalid JSON in a key the oracle skips is still refused.
        let broken = br#"{"status":"ok","decoder":"d","len":0,"checks":[],"fields":[tru]}"#;
        assert!(parse_json_line(broken).is_err());
        let messages = br#"{"status":"ok","decoder":"d","len":0,"checks":[],"messages":[1,2,3]}"#;
        assert_eq!(parse_json_line(messages).expect("valid").messages, Some(3));
    }
}
