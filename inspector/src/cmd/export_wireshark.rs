//! `bitlens export-wireshark --schema FILE [--port P ...] [--batch-port P ...] > proto.lua`:
//! writes a Lua dissector for Wireshark 4.x from a schema (`Schema::wireshark_lua`).

use super::common::must_exist;
use bitlens_schema::{Schema, WiresharkOptions};
use std::path::Path;

/// Loads the schema and returns the dissector's Lua text.
///
/// # Errors
/// The schema cannot be read or checked (the message names the file, line and column), or it
/// cannot be exported (a protocol name Wireshark refuses, too many field paths).
pub fn run(schema: &Path, options: &WiresharkOptions) -> anyhow::Result<String> {
    must_exist(schema)?;
    let schema = Schema::load(schema)?;
    if !options.batch_ports.is_empty() && schema.batch().is_none() {
        anyhow::bail!(
            "--batch-port needs a schema with a [batch] section ({} has none)",
            schema.protocol().name
        );
    }
    Ok(schema.wireshark_lua(options)?)
}
