//! `bitlens encode --schema FILE --type NAME --json VALUE.json > packet.bin`: crafts one packet
//! from JSON with a schema (to test servers, or to build captures).

use super::common::{load_schema, read_text};
use anyhow::Context as _;
use bitlens_schema::Schema;
use std::path::Path;

/// Loads the schema and the JSON value and returns the framed packet's bytes.
///
/// # Errors
/// The schema or the JSON cannot be read or does not fit (the message names the file, or the
/// JSON path), or the value is out of range (the message names the field and bit).
pub fn run(schema: &Path, packet_type: &str, json: &Path) -> anyhow::Result<Vec<u8>> {
    let schema = load_schema(schema)?;
    let text = read_text(json)?;
    let value: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{}: not JSON", json.display()))?;
    encode(&schema, packet_type, &value)
}

/// Encodes `value` as a packet of type `packet_type`.
///
/// # Errors
/// As [`run`], without the files.
pub fn encode(
    schema: &Schema,
    packet_type: &str,
    value: &serde_json::Value,
) -> anyhow::Result<Vec<u8>> {
    let v = schema
        .value_from_json(packet_type, value)
        .map_err(anyhow::Error::msg)?;
    let mut buf = vec![0u8; schema.protocol().mtu];
    let n = schema
        .write(packet_type, &v, &mut buf)
        .context("cannot encode the packet")?;
    buf.truncate(n);
    Ok(buf)
}
