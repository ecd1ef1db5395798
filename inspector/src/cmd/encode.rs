//! `encode --schema FILE --type NAME --json VALUE.json > packet.bin`: crafts one packet from
//! JSON with a schema (to test servers, or to build captures).

use super::common::{Context, Exit, Rejected};
use super::common::{load_schema, read_text};
use anyhow::Context as _;
use bitlens_schema::Schema;
use clap::Parser;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Craft one packet from JSON with a schema; the bytes go to stdout (exit status 1 when the
/// value does not fit the schema).
#[derive(Parser, Debug)]
pub struct EncodeArgs {
    /// The schema (TOML).
    #[arg(long)]
    pub schema: PathBuf,
    /// The packet type's name.
    #[arg(long = "type")]
    pub packet_type: String,
    /// The packet body as JSON.
    #[arg(long)]
    pub json: PathBuf,
}

/// The subcommand: the packet's bytes on stdout.
///
/// # Errors
/// As [`run`]; a failed write to stdout is a file error.
pub fn command(args: EncodeArgs, _: &Context<'_>) -> anyhow::Result<Exit> {
    let bytes = run(&args.schema, &args.packet_type, &args.json)?;
    let mut out = std::io::stdout().lock();
    out.write_all(&bytes)
        .and_then(|()| out.flush())
        .context("cannot write the packet to stdout")?;
    Ok(Exit::Ok)
}

/// Loads the schema and the JSON value and returns the framed packet's bytes.
///
/// # Errors
/// A usage or file error: the schema or the JSON file cannot be read, the schema does not
/// load, the packet type is not the schema's. A [`Rejected`] value: the file is not JSON, or
/// the value does not fit the schema (the message names the JSON path, or the field and bit).
pub fn run(schema: &Path, packet_type: &str, json: &Path) -> anyhow::Result<Vec<u8>> {
    let schema = load_schema(schema)?;
    if !schema
        .protocol()
        .packet_types
        .iter()
        .any(|t| t == packet_type)
    {
        anyhow::bail!(
            "no packet type named {packet_type:?} (the schema has {})",
            schema.protocol().packet_types.join(", ")
        );
    }
    let text = read_text(json)?;
    let value: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| Rejected::new(format!("{}: not JSON: {e}", json.display())))?;
    encode(&schema, packet_type, &value)
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
