//! What every subcommand shares: what it runs with ([`Context`]) and how it ends ([`Exit`],
//! [`Rejected`]), the options of the capture commands ([`DecodeOpts`]), and how the files it
//! is given are read.

use crate::capture::Capture;
use crate::dissectors::Dissectors;
use anyhow::{Context as _, Result, anyhow};
use bitlens_codec::ProtocolId;
use bitlens_netcode::{Netcode, parse_key, parse_keylog};
use bitlens_schema::Schema;
use clap::Args;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use crate::files::{must_exist, read_input, read_text};

/// How a subcommand ended, when it did not fail with an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// All is well: exit status 0.
    Ok,
    /// The input was read and rejected, and the output says why: exit status 1.
    Rejected,
    /// A usage or file error the subcommand has already reported: exit status 2.
    Failed,
}

impl Exit {
    /// The process exit status.
    pub fn code(self) -> u8 {
        match self {
            Exit::Ok => 0,
            Exit::Rejected => 1,
            Exit::Failed => 2,
        }
    }
}

/// An error that means "the input was read and rejected" (exit status 1, the message on
/// stderr), where any other error of a subcommand is a usage or file error (exit status 2).
#[derive(Debug)]
pub struct Rejected(pub anyhow::Error);

impl Rejected {
    /// A rejection with this message.
    pub fn new(message: impl fmt::Display) -> Self {
        Rejected(anyhow::anyhow!("{message}"))
    }
}

impl fmt::Display for Rejected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#}", self.0)
    }
}

impl std::error::Error for Rejected {}

/// What a subcommand runs with: the program's name (for messages) and the dissectors it was
/// built with (which `--decode`, `--schema` and `--protocol-id` start from).
#[derive(Debug)]
pub struct Context<'a> {
    program: &'a str,
    dissectors: &'a Dissectors,
}

impl<'a> Context<'a> {
    /// A context for `program` with `dissectors` (tests, and programs that run a subcommand
    /// without parsing arguments).
    pub fn new(program: &'a str, dissectors: &'a Dissectors) -> Self {
        Context {
            program,
            dissectors,
        }
    }

    /// The program's name, as messages begin with it (`bitlens: ...`).
    pub fn program(&self) -> &str {
        self.program
    }

    /// The dissectors the program was built with.
    pub fn dissectors(&self) -> &Dissectors {
        self.dissectors
    }
}

/// Which dissector reads which port.
#[derive(Args, Debug, Clone, Default)]
pub struct DecodeOpts {
    /// Read a UDP port with a dissector, like Wireshark's "Decode As" (repeatable):
    /// `--decode 5000=NAME`; NAME is a protocol of this program, schema or schema-batch (with
    /// --schema), or none (removes a default).
    #[arg(long = "decode", value_name = "PORT=NAME")]
    pub decode: Vec<String>,
    /// Check CRCs with this protocol id, for every protocol that frames packets (hex `0x...`
    /// or decimal; 32-bit unless above 0xffffffff or written with 16 hex digits).
    #[arg(long, value_name = "ID")]
    pub protocol_id: Option<String>,
    /// Describe the protocol with a schema file (see SCHEMA.md): it replaces the packet
    /// dissectors on their ports (and, when it has a `[batch]` section, the batch dissectors),
    /// or reads the ports given with `--decode PORT=schema` / `PORT=schema-batch`.
    #[arg(long, value_name = "FILE")]
    pub schema: Option<PathBuf>,
    /// netcode 1.02 (`--decode PORT=netcode+NAME` or `PORT=yojimbo`): the server's private key, a file of 64 hex
    /// digits; it decrypts each connection request's token and so every packet of that client.
    #[arg(long, value_name = "FILE")]
    pub netcode_key: Option<PathBuf>,
    /// netcode: a key log of the clients' session keys (lines `NETCODE_CLIENT ADDRESS
    /// PROTOCOL_ID C2S_KEY S2C_KEY`, README "Encrypted traffic").
    #[arg(long, value_name = "FILE")]
    pub netcode_keylog: Option<PathBuf>,
    /// netcode: the protocol id the server expects; a connection request with another is a
    /// fault (without it, each connection's own request says it).
    #[arg(long, value_name = "ID")]
    pub netcode_protocol_id: Option<String>,
}

impl DecodeOpts {
    /// The dissectors these options make of the program's (`ctx`): the schema first, then the
    /// `--decode` overrides in order, then the protocol id. Warnings go to stderr after the
    /// program's name.
    ///
    /// # Errors
    /// A message naming the bad argument.
    pub fn dissectors(&self, ctx: &Context<'_>) -> Result<Dissectors> {
        let mut d = ctx.dissectors().clone();
        let schema = self
            .schema
            .as_deref()
            .map(|path| load_schema(path, ctx.program()))
            .transpose()?
            .map(Arc::new);
        let netcode = self.netcode()?;
        // yojimbo runs over netcode with the same keys; its configuration comes from the
        // schema or the program (`Dissectors::set_yojimbo`, the one place).
        if netcode.is_some() || schema.is_some() {
            let under = netcode.clone().unwrap_or_default();
            d.set_yojimbo(under, schema.as_ref())
                .map_err(anyhow::Error::msg)?;
        }
        if let Some(schema) = schema {
            d.set_schema(schema);
        }
        if let Some(netcode) = netcode {
            d.add_transport(Arc::new(netcode));
        }
        for arg in &self.decode {
            d.apply_override(arg).map_err(anyhow::Error::msg)?;
        }
        // Keys and no port to use them on: say so, or the capture shows as undecoded and the
        // key looks wrong. Only a transport's stack has a sequential pass (an observer).
        if self.netcode_given() && d.observer().is_none() {
            stderr_line!(
                "{}: warning: the --netcode-* options apply to no port: read one with \
                 --decode PORT=netcode+NAME or PORT=yojimbo",
                ctx.program()
            );
        }
        if let Some(id) = &self.protocol_id {
            d.set_protocol_id(parse_protocol_id(id)?);
        }
        Ok(d)
    }
}

impl DecodeOpts {
    /// Whether any `--netcode-*` option is given.
    fn netcode_given(&self) -> bool {
        self.netcode_key.is_some()
            || self.netcode_keylog.is_some()
            || self.netcode_protocol_id.is_some()
    }

    /// The netcode transport with the keys these options give, when they give any.
    ///
    /// # Errors
    /// A key file or key log that does not read (the message names the file and line).
    pub fn netcode(&self) -> Result<Option<Netcode>> {
        if !self.netcode_given() {
            return Ok(None);
        }
        let mut n = Netcode::new();
        if let Some(path) = &self.netcode_key {
            let text = key_text(path, "a key of 64 hex digits")?;
            let key = parse_key(&text).map_err(|e| anyhow!("{}: {e}", path.display()))?;
            n = n.with_private_key(key);
        }
        if let Some(path) = &self.netcode_keylog {
            let text = key_text(path, "a key log (lines `NETCODE_CLIENT ...`)")?;
            let log = parse_keylog(&text).map_err(|e| anyhow!("{}: {e}", path.display()))?;
            n = n.with_keylog(log);
        }
        if let Some(id) = &self.netcode_protocol_id {
            n = n.with_protocol_id(
                bitlens_netcode::parse_protocol_id(id)
                    .map_err(|e| anyhow!("--netcode-protocol-id: {e}"))?,
            );
        }
        Ok(Some(n))
    }
}

/// Loads a schema file and prints its warnings on stderr, one line each, after the name of
/// the program (`PROGRAM: FILE:LINE:COL: warning: ...`).
///
/// # Errors
/// The file does not exist or is a folder, or the schema does not load (the message names the
/// file, line and column).
pub fn load_schema(path: &Path, program: &str) -> Result<Schema> {
    must_exist(path)?;
    let schema = Schema::load(path).map_err(|e| anyhow!("{e}"))?;
    for w in schema.warnings() {
        stderr_line!("{program}: {w}");
    }
    Ok(schema)
}

/// Parses `--protocol-id`.
///
/// # Errors
/// When it is not a number.
pub fn parse_protocol_id(s: &str) -> Result<ProtocolId> {
    let (digits, radix) = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => (h, 16),
        None => (s, 10),
    };
    let v = u64::from_str_radix(digits, radix)
        .with_context(|| format!("--protocol-id {s:?} is not a number"))?;
    if v > u64::from(u32::MAX) || (radix == 16 && digits.len() == 16) {
        Ok(ProtocolId::U64(v))
    } else {
        Ok(ProtocolId::U32(v as u32))
    }
}

/// Opens a capture, with a one-line error naming the file.
///
/// # Errors
/// When the file is missing, unreadable or not a capture.
pub fn open_capture(path: &Path) -> Result<Capture> {
    must_exist(path)?;
    Capture::open(path).map_err(|e| anyhow::anyhow!("{e}"))
}

/// Reads a capture file's bytes for a single pass ([`crate::capture::scan`]), with the same
/// messages as [`open_capture`]: the file's name (as messages show it) and its bytes.
///
/// # Errors
/// A missing or unreadable file.
pub fn read_capture(path: &Path) -> Result<(String, Vec<u8>)> {
    must_exist(path)?;
    let name = path.display().to_string();
    let file = crate::capture::read_file(path).map_err(|error| {
        anyhow::anyhow!(
            "{}",
            crate::capture::CaptureError::Io {
                file: name.clone(),
                error
            }
        )
    })?;
    Ok((name, file))
}

/// A capture path argument.
#[derive(Args, Debug, Clone)]
pub struct CaptureArg {
    /// A pcap or pcapng file.
    pub capture: PathBuf,
}

/// The text of a netcode key file; a binary file (a capture given by mistake) is refused with
/// what was expected (`FILE: expected WHAT, found binary data`), as a text file of the wrong shape is.
fn key_text(path: &Path, expected: &str) -> Result<String> {
    String::from_utf8(crate::files::read_input(path)?)
        .map_err(|_| anyhow!("{}: expected {expected}, found binary data", path.display()))
}
