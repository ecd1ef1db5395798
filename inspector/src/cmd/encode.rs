//! `encode --schema FILE --type NAME --json VALUE.json > packet.bin`: crafts one packet from
//! JSON with a schema (to test servers, or to build captures). With `--batch`, the JSON is a
//! list of messages of the schema's `[batch]` section and the bytes are one batch datagram:
//!
//! ```json
//! [{"type": "ChatText", "stage": "update", "body": {"text": "gg"}},
//!  {"type": 7, "body": {"network_id": 3}}]
//! ```
//!
//! `type` is a message type's name or number; `stage` an update stage's name or number
//! (default 0); `body` the message's fields, as `decode-bytes --json` shows them.

use super::common::{Context, Exit, Rejected};
use super::common::{load_schema, read_text};
use anyhow::Context as _;
use bitlens_batch::{BatchWriter, UpdateStage};
use bitlens_schema::Schema;
use clap::Parser;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Craft one packet (or with --batch, one batch datagram) from JSON with a schema; the bytes go
/// to stdout (exit status 1 when the value does not fit the schema).
#[derive(Parser, Debug)]
pub struct EncodeArgs {
    /// The schema (TOML).
    #[arg(long)]
    pub schema: PathBuf,
    /// The packet type's name.
    #[arg(
        long = "type",
        required_unless_present = "batch",
        conflicts_with = "batch"
    )]
    pub packet_type: Option<String>,
    /// The JSON is a list of messages of the schema's `[batch]` section:
    /// `[{"type": NAME, "stage": NAME, "body": {...}}, ...]`; writes one batch datagram.
    #[arg(long)]
    pub batch: bool,
    /// The packet body (or with --batch, the list of messages) as JSON.
    #[arg(long)]
    pub json: PathBuf,
}

/// The subcommand: the packet's bytes on stdout.
///
/// # Errors
/// As [`run`] and [`run_batch`]; a failed write to stdout is a file error.
pub fn command(args: EncodeArgs, ctx: &Context<'_>) -> anyhow::Result<Exit> {
    let bytes = match &args.packet_type {
        Some(t) => run(&args.schema, t, &args.json, ctx.program())?,
        None => run_batch(&args.schema, &args.json, ctx.program())?,
    };
    let mut out = crate::files::stdout();
    out.write_all(&bytes)
        .and_then(|()| out.flush())
        .context("cannot write the packet to stdout")?;
    Ok(Exit::Ok)
}

/// Loads the schema and the JSON value and returns the framed packet's bytes; the schema's
/// warnings go to stderr after `program`'s name.
///
/// # Errors
/// A usage or file error: the schema or the JSON file cannot be read, the schema does not
/// load, the packet type is not the schema's. A [`Rejected`] value: the file is not JSON, or
/// the value does not fit the schema (the message names the JSON path, or the field and bit).
pub fn run(
    schema: &Path,
    packet_type: &str,
    json: &Path,
    program: &str,
) -> anyhow::Result<Vec<u8>> {
    let file = schema;
    let schema = load_schema(file, program)?;
    if !schema
        .protocol()
        .packet_types
        .iter()
        .any(|t| t == packet_type)
    {
        anyhow::bail!(
            "{}: no packet type named {packet_type:?} (the schema has {})",
            file.display(),
            schema.protocol().packet_types.join(", ")
        );
    }
    let text = read_text(json)?;
    let value: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| Rejected::new(format!("{}: not JSON: {e}", json.display())))?;
    encode(&schema, packet_type, &value).map_err(|e| in_file(json, e))
}

/// `e`, a refusal of the value in the JSON file `json`, with the file's name in front (still
/// a [`Rejected`] when it was one): `value.json: z: missing`.
fn in_file(json: &Path, e: anyhow::Error) -> anyhow::Error {
    let message = format!("{}: {e:#}", json.display());
    match e.downcast_ref::<Rejected>() {
        Some(_) => anyhow::Error::new(Rejected::new(message)),
        None => anyhow::Error::msg(message),
    }
}

/// Loads the schema and the JSON list of messages and returns the batch datagram's bytes.
///
/// # Errors
/// A usage or file error: the schema or the JSON file cannot be read, the schema does not load
/// or has no `[batch]` section. A [`Rejected`] list, as [`encode_batch`], or a file that is not
/// JSON.
pub fn run_batch(schema: &Path, json: &Path, program: &str) -> anyhow::Result<Vec<u8>> {
    let file = schema;
    let schema = load_schema(file, program)?;
    if schema.batch().is_none() {
        anyhow::bail!("{}: the schema has no [batch] section", file.display());
    }
    let text = read_text(json)?;
    let value: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| Rejected::new(format!("{}: not JSON: {e}", json.display())))?;
    encode_batch(&schema, &value).map_err(|e| in_file(json, e))
}

/// Encodes a JSON list of messages as one batch datagram of at most the schema's MTU.
///
/// # Errors
/// A [`Rejected`] list: not a list of `{"type", "stage", "body"}` objects, a message type or
/// stage the schema does not have, a body that does not fit its message type (naming the
/// message, the JSON path or the field and byte), or messages that do not fit in one datagram.
pub fn encode_batch(schema: &Schema, value: &serde_json::Value) -> anyhow::Result<Vec<u8>> {
    let reject = |m: String| anyhow::Error::new(Rejected::new(m));
    let batch = schema
        .batch()
        .ok_or_else(|| anyhow::anyhow!("the schema has no [batch] section"))?;
    let list = value.as_array().ok_or_else(|| {
        reject("expected a list of messages: [{\"type\": ..., \"body\": {...}}, ...]".into())
    })?;
    let mtu = schema.protocol().mtu;
    let mut buf = vec![0u8; mtu];
    let mut w = BatchWriter::new(&mut buf).map_err(|e| reject(e.to_string()))?;
    for (i, m) in list.iter().enumerate() {
        let obj = m
            .as_object()
            .ok_or_else(|| reject(format!("[{i}]: expected an object with type and body")))?;
        if let Some(k) = obj
            .keys()
            .find(|k| !["type", "stage", "body"].contains(&k.as_str()))
        {
            return Err(reject(format!(
                "[{i}].{k}: no such key (a message has type, stage, body)"
            )));
        }
        let name = match obj.get("type") {
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(serde_json::Value::Number(n)) => n.to_string(),
            _ => {
                return Err(reject(format!(
                    "[{i}].type: expected a message type's name or number"
                )));
            }
        };
        let body = obj
            .get("body")
            .ok_or_else(|| reject(format!("[{i}].body: missing")))?;
        let (t, body) = schema
            .batch_message_from_json(&name, body)
            .map_err(|e| reject(format!("[{i}]: {e}")))?;
        let stage = match obj.get("stage") {
            None => UpdateStage(0),
            Some(serde_json::Value::Number(n)) => n
                .as_u64()
                .and_then(|n| u8::try_from(n).ok())
                .map(UpdateStage)
                .ok_or_else(|| reject(format!("[{i}].stage: expected 0..=255 or a stage name")))?,
            Some(serde_json::Value::String(s)) => (0..=u8::MAX)
                .find(|&n| batch.stage_name(n) == Some(s.as_str()))
                .map(UpdateStage)
                .ok_or_else(|| reject(format!("[{i}].stage: no stage named {s:?}")))?,
            Some(_) => return Err(reject(format!("[{i}].stage: expected a number or a name"))),
        };
        let fits = batch
            .push(&mut w, stage, t, &body)
            .map_err(|e| reject(format!("[{i}]: cannot encode the message: {e}")))?;
        if !fits {
            return Err(reject(format!(
                "[{i}]: the messages do not fit in one datagram of {mtu} bytes (the schema's mtu)"
            )));
        }
    }
    let n = w.finish();
    buf.truncate(n);
    Ok(buf)
}

/// Encodes `value` as a packet of type `packet_type`.
///
/// # Errors
/// A [`Rejected`] value, as [`run`], without the files.
pub fn encode(
    schema: &Schema,
    packet_type: &str,
    value: &serde_json::Value,
) -> anyhow::Result<Vec<u8>> {
    let v = schema
        .value_from_json(packet_type, value)
        .map_err(Rejected::new)?;
    let mut buf = vec![0u8; schema.protocol().mtu];
    let n = schema
        .write(packet_type, &v, &mut buf)
        .map_err(|e| Rejected::new(format!("cannot encode the packet: {e}")))?;
    buf.truncate(n);
    Ok(buf)
}
