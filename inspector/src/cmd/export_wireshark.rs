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
    /// --batch-port, for a batch format). Twice for a packet set and its message set in one
    /// file: `--as mygame --as mygame-batch` (each layout's ports default to its own).
    #[arg(long = "as", value_name = "NAME")]
    pub dissector: Vec<String>,
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
    let lua = match (&args.schema, args.dissector.is_empty()) {
        (Some(schema), _) => run(schema, &options)?,
        (None, false) => run_dissectors(ctx.dissectors(), &args.dissector, &mut options)?,
        (None, true) => bail!("give --schema FILE or --as NAME"),
    };
    let mut out = crate::files::stdout();
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
    run_dissectors(dissectors, &[name.to_owned()], options)
}

/// Refuses a transport (`--as netcode`, `--as yojimbo`) or a stack over one (`--as
/// netcode+demo`) in one line: their traffic is encrypted, and a Wireshark Lua dissector cannot
/// decrypt, so no half dissector (headers only) is exported.
fn encrypted_refused(dissectors: &Dissectors, name: &str) -> Result<()> {
    let (transport, inner) = match name.split_once('+') {
        Some((t, i)) => (t.trim(), Some(i.trim())),
        None => (name.trim(), None),
    };
    if !dissectors.transport_names().any(|t| t == transport) {
        return Ok(());
    }
    let instead = match inner {
        Some(i) => format!(
            "write the decrypted payloads with `decode --decode PORT={name} --netcode-key FILE \
             --write-plaintext OUT.pcapng` and export --as {i} for them"
        ),
        None => format!("read it with `bitlens decode --decode PORT={transport}` or `inspect`"),
    };
    bail!(
        "--as {name:?}: {transport} traffic is encrypted (netcode 1.02) and a Wireshark Lua \
         dissector cannot decrypt it, so none is exported; {instead}"
    )
}

/// The Lua text of one file for the dissectors `names` of `dissectors` (`--as`, repeated): at
/// most one of each layout, so a packet set and its message set (`--as mygame --as
/// mygame-batch`) make one protocol, the packet set's `[protocol]` and packets with the message
/// set's `[batch]` section. A message set alone is put under the program's packet set (the
/// first packet set with a schema text). Each layout without ports in `options` gets the ports
/// `dissectors` read with the dissector of that layout named here (`--port` for packets,
/// `--batch-port` for batches), whatever ports the other layout was given.
///
/// # Errors
/// No dissector of a name, one without a schema text, two of one layout, a `--batch-port`
/// without a `[batch]` section to dissect (the message names the program's message sets to add
/// with `--as`), or a text that cannot be exported.
pub fn run_dissectors(
    dissectors: &Dissectors,
    names: &[String],
    options: &mut WiresharkOptions,
) -> Result<String> {
    let mut packets: Option<(&str, String)> = None;
    let mut batches: Option<(&str, String)> = None;
    for name in names {
        encrypted_refused(dissectors, name)?;
        let d = dissectors
            .by_name(name)
            .ok_or_else(|| anyhow!("--as {name:?}: {}", dissectors.unknown(name)))?;
        let text = d.schema_text().ok_or_else(|| {
            anyhow!(
                "--as {name:?}: this dissector has no schema text (a derived packet set or a \
                 schema has one; give --schema FILE)"
            )
        })?;
        let slot = match d.layout() {
            Layout::Batches => &mut batches,
            Layout::Packets | Layout::Other => &mut packets,
        };
        if let Some((other, _)) = slot {
            bail!(
                "--as {other:?} and --as {name:?} are both {}: one file holds one protocol, \
                 with at most one packet set and one message set",
                if d.layout() == Layout::Batches {
                    "message sets"
                } else {
                    "packet sets"
                }
            );
        }
        *slot = Some((name.as_str(), text));
    }
    let text = match (&packets, &batches) {
        (Some((p, ptext)), Some((b, btext))) => {
            if has_section(ptext, "batch") || has_section(btext, "protocol") {
                bail!(
                    "--as {p:?} and --as {b:?}: {} already has what the other adds (a whole \
                     schema: give it alone, or --schema FILE)",
                    if has_section(ptext, "batch") { p } else { b }
                );
            }
            format!("{ptext}\n{btext}")
        }
        (Some((p, ptext)), None) => {
            if !options.batch_ports.is_empty() && !has_section(ptext, "batch") {
                let sets: Vec<String> = dissectors
                    .names()
                    .filter(|n| {
                        dissectors.by_name(n).is_some_and(|d| {
                            d.layout() == Layout::Batches && d.schema_text().is_some()
                        })
                    })
                    .map(|n| format!("--as {n}"))
                    .collect();
                let add = if sets.is_empty() {
                    "this program has no message set with a schema text: give --schema FILE \
                     with a [batch] section"
                        .to_owned()
                } else {
                    format!(
                        "add {} (this program's message set) to export its batches into the \
                         same file",
                        sets.join(" or ")
                    )
                };
                bail!("--batch-port: {p:?} is a packet set without a [batch] section; {add}");
            }
            ptext.clone()
        }
        (None, Some((b, btext))) => with_protocol(dissectors, b, btext.clone())?,
        (None, None) => bail!("give --schema FILE or --as NAME"),
    };
    let label = names.join(" + ");
    let schema = Schema::from_toml(&text, &format!("{label} (schema text)"))?;
    let defaults = |name: &str| -> Vec<u16> {
        dissectors
            .ports()
            .filter(|&(_, n)| n == name)
            .map(|(p, _)| p)
            .collect()
    };
    if options.ports.is_empty()
        && let Some((p, _)) = packets
    {
        options.ports = defaults(p);
    }
    if options.batch_ports.is_empty()
        && let Some((b, _)) = batches
    {
        options.batch_ports = defaults(b);
    }
    export(schema, options)
}

/// Whether a schema text has the section `[name]`.
fn has_section(text: &str, name: &str) -> bool {
    let header = format!("[{name}]");
    text.lines().any(|l| l.trim() == header)
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
