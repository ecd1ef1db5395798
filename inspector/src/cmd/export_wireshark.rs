//! `export-wireshark (--schema FILE | --as NAME) [--port P ...] [--batch-port P ...] > proto.lua`:
//! writes a Lua dissector for Wireshark 4.x from a schema (`Schema::wireshark_lua`): a schema
//! file, or the schema text of one of the program's own dissectors (a derived packet set, a
//! schema: [`bitlens_codec::dissect::Dissector::schema_text`]).

use super::common::{Context, Exit, must_exist};
use crate::dissectors::Dissectors;
use anyhow::{Result, anyhow, bail};
use bitlens_codec::dissect::Layout;
use bitlens_schema::{Schema, WiresharkOptions};
use clap::Parser;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Write a Wireshark 4.x dissector (Lua) for a protocol: `> proto.lua`, then
/// `tshark -X lua_script:proto.lua` or Wireshark's plugins folder.
#[derive(Parser, Debug)]
#[command(group = clap::ArgGroup::new("protocol").required(true).args(["schema", "dissector"]))]
pub struct ExportArgs {
    /// The schema (TOML).
    #[arg(long, value_name = "FILE")]
    pub schema: Option<PathBuf>,
    /// One of this program's dissectors, by the name `--decode PORT=NAME` uses, when it has a
    /// schema text (a derived packet set, a schema); its ports here are the default --port (or
    /// --batch-port, for a batch format).
    #[arg(long = "as", value_name = "NAME")]
    pub dissector: Option<String>,
    /// UDP port of the bit-packed packets (repeatable); none: a heuristic dissector that
    /// claims the datagrams whose CRC holds.
    #[arg(long = "port", value_name = "PORT")]
    pub ports: Vec<u16>,
    /// UDP port of the `[batch]` message batches (repeatable); none: a heuristic dissector
    /// that claims the datagrams whose batch and message lengths add up.
    #[arg(long = "batch-port", value_name = "PORT")]
    pub batch_ports: Vec<u16>,
    /// The protocol's filter name (default: the schema's protocol name; give another one
    /// when Wireshark already has a protocol of that name).
    #[arg(long)]
    pub name: Option<String>,
}

/// The subcommand: the Lua text on stdout.
///
/// # Errors
/// As [`run`] and [`run_dissector`]; stdout cannot be written.
pub fn command(args: ExportArgs, ctx: &Context<'_>) -> Result<Exit> {
    let mut options = WiresharkOptions {
        ports: args.ports,
        batch_ports: args.batch_ports,
        name: args.name,
    };
    let lua = match (&args.schema, &args.dissector) {
        (Some(schema), _) => run(schema, &options)?,
        (None, Some(name)) => run_dissector(ctx.dissectors(), name, &mut options)?,
        (None, None) => bail!("give --schema FILE or --as NAME"),
    };
    let mut out = std::io::stdout().lock();
    out.write_all(lua.as_bytes())?;
    out.flush()?;
    Ok(Exit::Ok)
}

/// Loads the schema and returns the dissector's Lua text.
///
/// # Errors
/// The schema cannot be read or checked (the message names the file, line and column), or it
/// cannot be exported (a protocol name Wireshark refuses, too many field paths).
pub fn run(schema: &Path, options: &WiresharkOptions) -> Result<String> {
    must_exist(schema)?;
    export(Schema::load(schema)?, options)
}

/// The Lua text of the dissector `name` of `dissectors`, from its schema text. Without ports
/// in `options`, it gets the ports `dissectors` read with it (as `--port` for a packet format,
/// `--batch-port` for a batch format).
///
/// # Errors
/// No dissector of that name, one without a schema text, or a text that cannot be exported.
pub fn run_dissector(
    dissectors: &Dissectors,
    name: &str,
    options: &mut WiresharkOptions,
) -> Result<String> {
    let d = dissectors
        .by_name(name)
        .ok_or_else(|| anyhow!("--as {name:?}: {}", dissectors.unknown(name)))?;
    let text = d.schema_text().ok_or_else(|| {
        anyhow!(
            "--as {name:?}: this dissector has no schema text (a derived packet set or a schema \
             has one; give --schema FILE)"
        )
    })?;
    let text = with_protocol(dissectors, name, text)?;
    let schema = Schema::from_toml(&text, &format!("{name} (schema text)"))?;
    if options.ports.is_empty() && options.batch_ports.is_empty() {
        let ports = dissectors
            .ports()
            .filter(|&(_, n)| n == name)
            .map(|(p, _)| p);
        match d.layout() {
            Layout::Packets => options.ports.extend(ports),
            Layout::Batches => options.batch_ports.extend(ports),
            Layout::Other => {}
        }
    }
    export(schema, options)
}

/// A message set's schema text is its `[batch]` section alone (`MessageEnum::schema`): the
/// program's packet set gives the `[protocol]` it belongs to (the first packet dissector with
/// a schema text), as the two make one schema file.
fn with_protocol(dissectors: &Dissectors, name: &str, text: String) -> Result<String> {
    let has_protocol = text.lines().any(|l| l.trim() == "[protocol]");
    if has_protocol {
        return Ok(text);
    }
    let packets = dissectors
        .names()
        .filter_map(|n| dissectors.by_name(n))
        .filter(|d| d.layout() == Layout::Packets)
        .find_map(|d| d.schema_text());
    match packets {
        Some(protocol) if !protocol.lines().any(|l| l.trim() == "[batch]") => {
            Ok(format!("{protocol}\n{text}"))
        }
        _ => bail!(
            "--as {name:?}: its schema text is a [batch] section, and this program has no packet \
             set with a schema text to take the [protocol] from (give --schema FILE)"
        ),
    }
}

fn export(schema: Schema, options: &WiresharkOptions) -> Result<String> {
    if !options.batch_ports.is_empty() && schema.batch().is_none() {
        bail!(
            "--batch-port needs a schema with a [batch] section ({} has none)",
            schema.protocol().name
        );
    }
    Ok(schema.wireshark_lua(options)?)
}
