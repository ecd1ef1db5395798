//! The command line as a library: [`Cli`] registers protocols on UDP ports and subcommands,
//! parses the arguments and runs the one subcommand they name (ripgrep's shape: parse, then
//! dispatch). The `bitlens` binary is built with it, and so is a game's own inspector:
//!
//! ```no_run
//! use bitlens::Cli;
//! use bitlens_demo::{batch_demo, demo};
//!
//! fn main() -> std::process::ExitCode {
//!     Cli::new("mygame")
//!         .about("Inspect, decode and check captures of mygame's traffic.")
//!         .packets::<demo::DemoPacket>(7777, "mygame")
//!         .message_enum::<batch_demo::DemoMessage>(7778, "mygame-batch")
//!         .run()
//! }
//! ```
//!
//! Every program gets `inspect`, `decode [--json|--fields]`, `check`, `profile` (where the
//! bits go) and `decode-bytes`, with
//! `--decode PORT=NAME`, `--protocol-id` and `--schema`; the live proxy `proxy` (and `replay`
//! of its mutations), which decodes, mutates and re-signs with the same dissectors; and
//! `export-wireshark`, a Lua dissector from a schema file or from a registered dissector's
//! schema text (`--as NAME`: a derived packet set has one); and for fuzzing, `seeds` (a
//! capture's datagrams as a seed corpus) and `fuzz-init` (the cargo-fuzz crate for a packet
//! set). [`Cli::command`] adds more (the `bitlens` binary adds `synth`, `vectors`, `tagged`
//! and `encode`).
//!
//! # Exit status
//!
//! One rule for every subcommand ([`EXIT_STATUS`]): 0 when all is well, 1 when the input was
//! read and rejected (`check` found datagrams that do not decode, `decode-bytes` a packet that
//! does not, `vectors` a failing vector, `tagged` a malformed document, `encode` a value that
//! does not fit the schema, `replay` a log that is not a proxy log), 2 on a usage or file error (a bad argument or schema, a file that
//! cannot be read or is not a capture, a capture damaged part way, an output that cannot be
//! written).

pub use crate::cmd::common::{Context, Exit, Rejected};
use crate::dissectors::Dissectors;
use bitlens_batch::dissect::{BatchDissector, MessageSet};
use bitlens_batch::{MessageEnum, MessagesOf};
use bitlens_codec::dissect::{Dissector, PacketDissector};
use bitlens_codec::packet::Packet;
use bitlens_codec::transport::Transport;
use clap::ArgMatches;
use std::ffi::OsString;
use std::process::ExitCode;
use std::sync::Arc;

/// The exit status rule, as `--help` states it.
pub const EXIT_STATUS: &str = "Exit status: 0 ok; 1 the input was read and rejected; 2 a usage \
or file error (bad arguments or schema; a file missing, unreadable, not a capture or damaged; \
output that cannot be written).";

/// A subcommand's body: parsed arguments in, how it ended out. An `Err` is a usage or file
/// error (exit status 2), or a [`Rejected`] input (exit status 1); its message goes to stderr
/// after the program's name.
pub type Run<A> = fn(A, &Context<'_>) -> anyhow::Result<Exit>;

type Dispatch = Box<dyn Fn(&ArgMatches, &Context<'_>) -> anyhow::Result<Exit> + Send + Sync>;

struct Subcommand {
    command: clap::Command,
    run: Dispatch,
}

/// A command-line program over protocols registered on UDP ports (see the module docs).
pub struct Cli {
    name: &'static str,
    about: Option<String>,
    version: Option<&'static str>,
    dissectors: Dissectors,
    subcommands: Vec<Subcommand>,
}

impl Cli {
    /// A program named `name` with the subcommands every program gets (`inspect`, `decode`,
    /// `check`, `profile`, `decode-bytes`, `proxy`, `replay`, `export-wireshark`, and for fuzzing `seeds`
    /// and `fuzz-init`) and no protocol yet.
    pub fn new(name: &'static str) -> Self {
        Cli {
            name,
            about: None,
            version: None,
            dissectors: Dissectors::new(),
            subcommands: Vec::new(),
        }
        .command("inspect", crate::cmd::inspect::command)
        .command("decode", crate::cmd::decode::command)
        .command("check", crate::cmd::check::command)
        .command("profile", crate::cmd::profile::command)
        .command("decode-bytes", crate::cmd::decode_bytes::command)
        .command("proxy", crate::cmd::proxy::command)
        .command("replay", crate::cmd::proxy::replay_command)
        .command("export-wireshark", crate::cmd::export_wireshark::command)
        .command("seeds", crate::cmd::seeds::command)
        .command("fuzz-init", crate::cmd::fuzz_init::command)
        .transport(bitlens_netcode::Netcode::new())
        .transport(
            bitlens_yojimbo::Yojimbo::new(bitlens_netcode::Netcode::new(), None)
                .expect("no configuration to refuse"),
        )
    }

    /// The one-line description `--help` starts with.
    pub fn about(mut self, about: impl Into<String>) -> Self {
        self.about = Some(about.into());
        self
    }

    /// The version `--version` prints (typically `env!("CARGO_PKG_VERSION")`).
    pub fn version(mut self, version: &'static str) -> Self {
        self.version = Some(version);
        self
    }

    /// Reads UDP port `port` (either side of a datagram) with `dissector`, which
    /// `--decode PORT=NAME` can also name. The first one registered is `decode-bytes`' default.
    pub fn dissector(mut self, port: u16, dissector: impl Dissector + 'static) -> Self {
        self.dissectors.register(port, Arc::new(dissector));
        self
    }

    /// Reads UDP port `port` as packets of the compiled packet set `P`, framed with
    /// `P::protocol()` (a [`PacketDissector`] named `name`).
    pub fn packets<P: Packet + 'static>(self, port: u16, name: &str) -> Self {
        self.dissector(port, PacketDissector::<P>::new(name))
    }

    /// Reads UDP port `port` as batches of the message set `messages` (a [`BatchDissector`]
    /// named `name`).
    pub fn messages<M: MessageSet + 'static>(self, port: u16, name: &str, messages: M) -> Self {
        self.dissector(port, BatchDissector::new(name, messages))
    }

    /// Reads UDP port `port` as batches of the message enum `M` (`#[derive(MessageEnum)]`), a
    /// [`BatchDissector`] named `name` whose schema text (for `export-wireshark --as`) is
    /// `M::schema()`.
    pub fn message_enum<M: MessageEnum + 'static>(self, port: u16, name: &str) -> Self {
        self.messages(port, name, MessagesOf::<M>::new())
    }

    /// Makes `transport` known, so that `--decode PORT=NAME+INNER` can stack it over any
    /// known dissector (every program knows netcode 1.02, whose keys come from
    /// `--netcode-key`/`--netcode-keylog`).
    pub fn transport(mut self, transport: impl Transport + 'static) -> Self {
        self.dissectors.add_transport(Arc::new(transport));
        self
    }

    /// Reads yojimbo traffic (`--decode PORT=yojimbo`, over netcode with the `--netcode-*`
    /// keys) with the game's own configuration: its channels and message types, each body a
    /// hand-written serialize function ([`bitlens_yojimbo::Typed`]) or a derived struct
    /// ([`bitlens_yojimbo::Derived`]). A schema's `[yojimbo]` section, given with `--schema`,
    /// takes its place. `.yojimbo(config).stacked(40000, "yojimbo", None)` reads port 40000.
    ///
    /// # Panics
    /// When `config` is not a valid yojimbo configuration ([`bitlens_yojimbo::Config::validate`]):
    /// a mistake in the program, not in its input.
    pub fn yojimbo(mut self, config: bitlens_yojimbo::Config) -> Self {
        if let Err(e) = self.dissectors.set_yojimbo_config(config) {
            panic!("Cli::yojimbo: {e}");
        }
        self
    }

    /// Reads UDP port `port` with the known transport `transport` over the registered
    /// dissector `inner` (`None`: the payload as bytes), as `--decode PORT=TRANSPORT+INNER`
    /// does: `.packets::<Game>(7777, "game").stacked(7777, "netcode", Some("game"))`.
    ///
    /// # Panics
    /// When `transport` or `inner` is not known yet: a mistake in the program, not in its input.
    pub fn stacked(mut self, port: u16, transport: &str, inner: Option<&str>) -> Self {
        let name = match inner {
            Some(i) => format!("{port}={transport}+{i}"),
            None => format!("{port}={transport}"),
        };
        if let Err(e) = self.dissectors.apply_override(&name) {
            panic!("Cli::stacked: {e}");
        }
        self
    }

    /// Adds the subcommand `name`: its arguments are `A` (a `#[derive(clap::Parser)]` struct,
    /// whose doc comment is the subcommand's help), its body `run`. A later subcommand of the
    /// same name replaces an earlier one.
    pub fn command<A: clap::Parser + 'static>(mut self, name: &'static str, run: Run<A>) -> Self {
        let command = A::command()
            .name(name)
            .bin_name(format!("{} {name}", self.name));
        let dispatch: Dispatch = Box::new(move |matches, ctx| {
            let args = A::from_arg_matches(matches).map_err(|e| anyhow::anyhow!("{e}"))?;
            run(args, ctx)
        });
        let sub = Subcommand {
            command,
            run: dispatch,
        };
        match self
            .subcommands
            .iter_mut()
            .find(|s| s.command.get_name() == name)
        {
            Some(s) => *s = sub,
            None => self.subcommands.push(sub),
        }
        self
    }

    /// The dissectors registered so far.
    pub fn dissectors(&self) -> &Dissectors {
        &self.dissectors
    }

    /// The clap command: every subcommand, with `--decode`'s help listing this program's
    /// protocols and default ports.
    pub fn clap_command(&self) -> clap::Command {
        let names: Vec<&str> = self.dissectors.names().collect();
        let transports: Vec<String> = self.dissectors.transport_choices().collect();
        let decode_help = format!(
            "Read a UDP port with a dissector, like Wireshark's \"Decode As\" (repeatable): \
             `--decode 5000={}`. NAME: {}{} (with --schema), {}or none \
             (removes a default). Defaults: {}",
            names.first().copied().unwrap_or("NAME"),
            names.iter().map(|n| format!("{n}, ")).collect::<String>(),
            crate::dissectors::SCHEMA_DECODERS.join(" and "),
            match transports.is_empty() {
                true => String::new(),
                false => format!("the transports {}, ", transports.join(", ")),
            },
            if self.dissectors.describe().is_empty() {
                "none".to_owned()
            } else {
                self.dissectors.describe()
            }
        );
        // The usage line names the program as `Cli::new` does, not as its executable file.
        let mut cmd = clap::Command::new(self.name)
            .bin_name(self.name)
            .subcommand_required(true)
            .arg_required_else_help(true)
            .after_help(EXIT_STATUS);
        if let Some(about) = &self.about {
            cmd = cmd.about(about.clone());
        }
        if let Some(v) = self.version {
            cmd = cmd.version(v);
        }
        for s in &self.subcommands {
            let mut sub = s.command.clone().after_help(EXIT_STATUS);
            if sub.get_arguments().any(|a| a.get_id() == "decode") {
                sub = sub.mut_arg("decode", |a| a.help(decode_help.clone()));
            }
            cmd = cmd.subcommand(sub);
        }
        cmd
    }

    /// Parses the process's arguments and runs the subcommand they name.
    pub fn run(self) -> ExitCode {
        self.run_from(std::env::args_os())
    }

    /// Parses `args` (the program's name first) and runs the subcommand they name; returns the
    /// exit status (see the module docs).
    pub fn run_from<I, T>(self, args: I) -> ExitCode
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString> + Clone,
    {
        ExitCode::from(self.status_from(args))
    }

    /// [`Cli::run_from`], as a number.
    pub fn status_from<I, T>(self, args: I) -> u8
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString> + Clone,
    {
        let matches = match self.clap_command().try_get_matches_from(args) {
            Ok(m) => m,
            Err(e) => {
                // Help and version go to stdout with status 0; usage errors to stderr with 2.
                let _ = e.print();
                return if e.use_stderr() { 2 } else { 0 };
            }
        };
        let Some((name, sub)) = matches.subcommand() else {
            return 2;
        };
        let Some(s) = self
            .subcommands
            .iter()
            .find(|s| s.command.get_name() == name)
        else {
            return 2;
        };
        let ctx = Context::new(self.name, &self.dissectors);
        match (s.run)(sub, &ctx) {
            Ok(exit) => exit.code(),
            // The reader of stdout went away (`| head`): the output it wanted was written, and
            // like other Unix tools the program stops quietly (decode checks this itself).
            Err(e) if reader_went_away(&e) => 0,
            // Standard output that cannot be written (`> /dev/full`) says only that.
            Err(e) if crate::files::stdout_failure(&e).is_some() => {
                let said = crate::files::stdout_failure(&e).unwrap_or_default();
                stderr_line!("{}: {said}", self.name);
                2
            }
            Err(e) => {
                stderr_line!("{}: {e:#}", self.name);
                if e.downcast_ref::<Rejected>().is_some() {
                    1
                } else {
                    2
                }
            }
        }
    }
}

/// Whether `e` is a write to a stdout whose reader went away: an I/O error of kind
/// `BrokenPipe` anywhere in its chain, also one wrapped in a `serde_json::Error`, whose
/// `source()` skips the I/O error itself (`profile --json | head -c 100`).
fn reader_went_away(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        let kind = c
            .downcast_ref::<std::io::Error>()
            .map(std::io::Error::kind)
            .or_else(|| c.downcast_ref::<serde_json::Error>()?.io_error_kind());
        kind == Some(std::io::ErrorKind::BrokenPipe)
    })
}

#[cfg(test)]
mod tests {
    use super::reader_went_away;
    use std::io::{Error, ErrorKind};

    #[test]
    fn a_broken_pipe_is_seen_through_serde_json_and_context() {
        let pipe = || Error::new(ErrorKind::BrokenPipe, "pipe");
        assert!(reader_went_away(&anyhow::Error::from(pipe())));
        let json = anyhow::Error::from(serde_json::Error::io(pipe()));
        assert!(reader_went_away(&json));
        assert!(reader_went_away(&json.context("writing the profile")));
        let other = serde_json::Error::io(Error::new(ErrorKind::PermissionDenied, "no"));
        assert!(!reader_went_away(&anyhow::Error::from(other)));
        assert!(!reader_went_away(&anyhow::anyhow!("not a capture")));
    }
}
