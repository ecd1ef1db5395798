//! `proxy` and `replay`: the options, and the run (see [`crate::proxy`]). Both come with every
//! [`crate::Cli`]: a game's own inspector proxies its own protocols.

use super::common::{Context as CmdContext, Exit, Rejected};
use super::common::{DecodeOpts, read_text};
use crate::dissectors::{Arrival, Dissectors};
use crate::proxy::impair::{Impairment, Impairments};
use crate::proxy::output::Outputs;
use crate::proxy::record::Recording;
use crate::proxy::relay::Report;
use crate::proxy::rules::{Fuzz, Rule};
use crate::proxy::spec::{RulesFile, Spec, number_text};
use crate::proxy::{
    CHANNEL, Config, Direction, Directions, MAX_IDLE_SECS, Proxy, SessionDissector, replay,
};
use anyhow::{Context, Result, anyhow, bail};
use clap::Parser;
use std::io::{BufWriter, Write};
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::sync_channel;
use std::time::Duration;

/// Run a live UDP proxy between a game client and its server: one NDJSON line per datagram
/// (the `decode --json` contract plus direction and client), and on request a recording,
/// impairments (drop, duplicate, delay, reorder) and field-level mutations. Ctrl-C stops it.
#[derive(Parser, Debug, Clone)]
pub struct ProxyArgs {
    /// Where clients send to: ADDR:PORT (port 0 picks a free one; the start-up line on stderr
    /// says which).
    #[arg(long, value_name = "ADDR:PORT")]
    pub listen: String,
    /// The server: HOST:PORT.
    #[arg(long, value_name = "HOST:PORT")]
    pub upstream: String,
    /// Record the session: one pcapng frame per datagram, client and server addresses,
    /// nanosecond times, the bytes forwarded.
    #[arg(long, value_name = "FILE.pcapng")]
    pub record: Option<PathBuf>,
    /// Write the NDJSON lines of the mutated datagrams here (the input of `bitlens replay`).
    #[arg(long, value_name = "FILE")]
    pub mutation_log: Option<PathBuf>,
    /// No NDJSON lines on stdout.
    #[arg(long, conflicts_with = "tui")]
    pub quiet: bool,
    /// Show the live session in the inspector instead of NDJSON lines.
    #[arg(long)]
    pub tui: bool,
    /// Seconds without a datagram either way after which a client's mapping is removed (at
    /// most 86400, one day).
    #[arg(long, value_name = "SECS", default_value_t = 60.0)]
    pub idle_timeout: f64,
    /// Most clients mapped at once (the least recently active is evicted for a new one).
    #[arg(long, value_name = "N", default_value_t = 1024)]
    pub max_clients: usize,
    /// Most datagrams delayed or held back at once (beyond: not forwarded, counted).
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    pub queue: usize,
    /// Receive and send buffer of the listen socket, each way: bytes, or with a KiB, MiB or
    /// GiB suffix (64 KiB to 1 GiB). A burst waits there while the proxy catches up; the kernel
    /// caps the size at net.core.rmem_max / wmem_max unless the proxy runs with
    /// CAP_NET_ADMIN (root), when it is forced past them. The start-up line says what was
    /// granted.
    #[arg(long, value_name = "SIZE", default_value = "128MiB", value_parser = buffer_size)]
    pub socket_buffer: usize,
    /// Seed of the impairment and mutation draws: the same seed and traffic, the same run
    /// (each client draws from streams of its own, one per direction, numbered by the order in
    /// which the clients first sent).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Drop datagrams: `P` or `p=P,dir=DIR` (P: 0..1 or `5%`; DIR: to_server, to_client, both).
    #[arg(long, value_name = "SPEC")]
    pub drop: Option<String>,
    /// Forward datagrams twice: as --drop.
    #[arg(long, value_name = "SPEC")]
    pub duplicate: Option<String>,
    /// Delay datagrams: `ms=40,jitter_ms=10[,p=P][,dir=DIR]` (uniform in ms ± jitter; ms and
    /// jitter_ms at most 3600000, one hour).
    #[arg(long, value_name = "SPEC")]
    pub delay: Option<String>,
    /// Hold datagrams back behind the next of their client and direction:
    /// `p=P[,hold_ms=50][,dir=DIR]` (hold_ms at most 3600000, one hour).
    #[arg(long, value_name = "SPEC")]
    pub reorder: Option<String>,
    /// A mutation rule (repeatable): `packet=PlayerInput,field=aim.x,action=out_of_range,p=1%`;
    /// keys: name, packet, dir, p, field, action (set, out_of_range, flip, overclaim, truncate,
    /// desync), value, bits, crc (resign, stale).
    #[arg(long = "mutate", value_name = "SPEC")]
    pub mutate: Vec<String>,
    /// A TOML file of impairments and mutation rules (`[impair]`, `[[mutate]]`, `seed`).
    #[arg(long, value_name = "FILE")]
    pub rules: Option<PathBuf>,
    /// Mutate this share of datagrams (0..1 or `5%`) with mutations drawn from their fields.
    #[arg(long, value_name = "RATE")]
    pub fuzz: Option<String>,
    /// The directions --fuzz mutates.
    #[arg(long, value_name = "DIR", default_value = "to_server")]
    pub fuzz_direction: String,
    /// How datagrams are decoded (by the server's port).
    #[command(flatten)]
    pub decode: DecodeOpts,
}

/// The `proxy` subcommand: runs until Ctrl-C with the program's dissectors (as `--decode`,
/// `--schema` and `--protocol-id` change them).
///
/// # Errors
/// As [`run`].
pub fn command(args: ProxyArgs, ctx: &CmdContext<'_>) -> Result<Exit> {
    run(&args, ctx.dissectors(), ctx.program())?;
    Ok(Exit::Ok)
}

/// The `replay` subcommand: one line per datagram sent on stdout.
///
/// # Errors
/// As [`replay()`].
pub fn replay_command(args: ReplayArgs, _: &CmdContext<'_>) -> Result<Exit> {
    replay(&args, &mut crate::files::stdout())?;
    Ok(Exit::Ok)
}

/// Send the mutated datagrams of a proxy log to a server again, byte for byte.
#[derive(Parser, Debug, Clone)]
pub struct ReplayArgs {
    /// A proxy log: `--mutation-log FILE` or the NDJSON output.
    pub log: PathBuf,
    /// The server: HOST:PORT.
    #[arg(long, value_name = "HOST:PORT")]
    pub upstream: String,
    /// Only these frames (repeatable).
    #[arg(long = "frame", value_name = "N")]
    pub frames: Vec<u64>,
    /// Milliseconds between two datagrams (at most 3600000, one hour).
    #[arg(long, value_name = "MS", default_value_t = 10,
          value_parser = clap::value_parser!(u64).range(0..=3_600_000))]
    pub gap_ms: u64,
    /// Replay the datagrams that went to the clients instead (sent to --upstream all the same).
    #[arg(long)]
    pub to_client: bool,
}

/// The smallest and largest `--socket-buffer`.
const SOCKET_BUFFER_RANGE: std::ops::RangeInclusive<usize> = (64 << 10)..=(1 << 30);

/// `--socket-buffer`: bytes, `N KiB`, `N MiB` or `N GiB` (the unit's case and a space before
/// it do not matter; `K`, `M`, `G`, `KB`, `MB`, `GB` are the same binary units).
fn buffer_size(text: &str) -> Result<usize, String> {
    let t = text.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, unit) = t.split_at(digits);
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        _ => {
            return Err(format!(
                "{text:?}: a size is bytes, or a number of KiB, MiB or GiB"
            ));
        }
    };
    let size = number
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(1 << shift))
        .filter(|n| SOCKET_BUFFER_RANGE.contains(n))
        .ok_or_else(|| format!("{text:?}: a size from 64KiB to 1GiB (bytes, KiB, MiB or GiB)"))?;
    Ok(size)
}

fn resolve(what: &str, s: &str) -> Result<SocketAddr> {
    // A well-formed HOST:PORT whose host does not resolve is not a shape error.
    let shaped = s
        .rsplit_once(':')
        .is_some_and(|(h, p)| !h.is_empty() && p.parse::<u16>().is_ok());
    s.to_socket_addrs()
        .with_context(|| {
            if shaped {
                format!("{what} {s:?}: cannot resolve the host")
            } else {
                format!("{what} {s:?}: not HOST:PORT")
            }
        })?
        .next()
        .ok_or_else(|| anyhow!("{what} {s:?}: no address"))
}

/// True when datagrams sent to `upstream` would reach a socket bound to `listen`: the same
/// address, or a wildcard listen (`0.0.0.0`, `::`) on the port of an address of this host (or
/// the reverse: an unspecified upstream is this host). An IPv6 wildcard counts as receiving
/// IPv4 too (Linux's dual-stack default).
fn loops_back(listen: SocketAddr, upstream: SocketAddr) -> bool {
    if listen.port() != upstream.port() || listen.port() == 0 {
        return false;
    }
    let (l, u) = (listen.ip().to_canonical(), upstream.ip().to_canonical());
    if l == u {
        return true;
    }
    // An address of this host: the kernel lets a socket bind to it.
    let this_host = |ip: IpAddr| {
        ip.is_unspecified() || ip.is_loopback() || std::net::UdpSocket::bind((ip, 0)).is_ok()
    };
    let reaches = |wildcard: IpAddr, to: IpAddr| wildcard.is_ipv6() || to.is_ipv4();
    if l.is_unspecified() {
        this_host(u) && reaches(l, u)
    } else if u.is_unspecified() {
        this_host(l) && reaches(u, l)
    } else {
        false
    }
}

impl ProxyArgs {
    /// The proxy's configuration; `program` is the name its messages begin with.
    ///
    /// The option that sets `kind` (`--drop SPEC`, ...), if given.
    fn impairment(&self, kind: Impairment) -> Option<&String> {
        match kind {
            Impairment::Drop => self.drop.as_ref(),
            Impairment::Duplicate => self.duplicate.as_ref(),
            Impairment::Delay => self.delay.as_ref(),
            Impairment::Reorder => self.reorder.as_ref(),
        }
    }

    /// # Errors
    /// A bad address, spec, rules file or number, with the option's name.
    pub fn config(&self, program: &str) -> Result<Config> {
        let listen = resolve("--listen", &self.listen)?;
        let upstream = resolve("--upstream", &self.upstream)?;
        if loops_back(listen, upstream) {
            bail!(
                "--upstream {:?} ({upstream}) is where --listen {:?} receives: every datagram \
                 would come back to the proxy (a forwarding loop); give the server's address",
                self.upstream,
                self.listen
            );
        }
        let idle = (self.idle_timeout > 0.0 && self.idle_timeout <= MAX_IDLE_SECS)
            .then(|| Duration::try_from_secs_f64(self.idle_timeout).ok())
            .flatten()
            .ok_or_else(|| {
                anyhow!(
                    "--idle-timeout must be a number of seconds > 0 and at most {MAX_IDLE_SECS} \
                     (one day) (found {})",
                    number_text(self.idle_timeout)
                )
            })?;
        let mut impairments = Impairments::default();
        let mut rules = Vec::new();
        let mut seed = None;
        if let Some(path) = &self.rules {
            let file = RulesFile::load(path).map_err(anyhow::Error::msg)?;
            seed = file.seed;
            for (kind, spec) in file.impair {
                impairments.set(&kind, spec).map_err(anyhow::Error::msg)?;
            }
            for spec in file.mutate {
                rules.push(Rule::from_spec(spec, rules.len() + 1).map_err(anyhow::Error::msg)?);
            }
        }
        for kind in Impairment::ALL {
            if let Some(text) = self.impairment(kind) {
                let spec = Spec::from_cli(&format!("--{}", kind.name()), text, Some("p"))
                    .map_err(anyhow::Error::msg)?;
                impairments
                    .set(kind.name(), spec)
                    .map_err(anyhow::Error::msg)?;
            }
        }
        for text in &self.mutate {
            let spec = Spec::from_cli("--mutate", text, None).map_err(anyhow::Error::msg)?;
            rules.push(Rule::from_spec(spec, rules.len() + 1).map_err(anyhow::Error::msg)?);
        }
        let fuzz = match &self.fuzz {
            None => None,
            Some(rate) => {
                let mut spec =
                    Spec::from_cli("--fuzz", rate, Some("p")).map_err(anyhow::Error::msg)?;
                let rate = spec
                    .probability(&["p"])
                    .map_err(anyhow::Error::msg)?
                    .ok_or_else(|| anyhow!("--fuzz needs a rate, e.g. 5%"))?;
                spec.finish("a rate").map_err(anyhow::Error::msg)?;
                let directions = Directions::parse(&self.fuzz_direction).ok_or_else(|| {
                    anyhow!("--fuzz-direction must be to_server, to_client or both")
                })?;
                Some(Fuzz { rate, directions })
            }
        };
        Ok(Config {
            program: program.to_owned(),
            listen,
            upstream,
            idle,
            max_clients: self.max_clients.max(1),
            queue: self.queue,
            socket_buffer: self.socket_buffer,
            seed: self.seed.or(seed).unwrap_or(0),
            impairments,
            rules,
            fuzz,
        })
    }
}

/// Runs the proxy until Ctrl-C, decoding with `defaults` as the options change them; the
/// summary goes to stderr, each line beginning with `PROGRAM proxy:`.
///
/// # Errors
/// Bad options, an address that cannot be bound, an output that cannot be created or fails.
pub fn run(args: &ProxyArgs, defaults: &Dissectors, program: &str) -> Result<()> {
    let config = args.config(program)?;
    let me = format!("{program} proxy");
    let dissectors = args
        .decode
        .dissectors(&CmdContext::new(program, defaults))?;
    let dis = SessionDissector::new(dissectors, config.upstream);
    check_packet_names(&config, &dis)?;
    let mut outputs = Outputs::default();
    if let Some(path) = &args.record {
        outputs.recording = Some(Recording::create(path, program).map_err(anyhow::Error::msg)?);
    }
    if let Some(path) = &args.mutation_log {
        let file = std::fs::File::create(path)
            .with_context(|| format!("{}: cannot create", path.display()))?;
        outputs.mutation_log = Some((path.display().to_string(), BufWriter::new(file)));
    }
    if !args.quiet && !args.tui {
        outputs.json = Some(Box::new(BufWriter::with_capacity(
            1 << 16,
            std::io::stdout(),
        )));
    }
    let summary = describe(&config, &dis);
    // The same sequential pass as the relay's (a clone shares it): what it still holds at exit.
    let observed = dis.clone();
    let proxy = Proxy::bind(config.clone(), dis)
        .with_context(|| format!("--listen {}: cannot bind", args.listen))?;
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(signal, Arc::clone(&stop)).context("cannot catch Ctrl-C")?;
    }
    let report = if args.tui {
        run_with_tui(proxy, outputs, stop, &summary, program)?
    } else {
        stderr_line!(
            "{me}: listening on {}, forwarding to {}; {summary}; {}",
            proxy.local_addr(),
            config.upstream,
            proxy.buffers().describe()
        );
        let _ = std::io::stderr().flush();
        proxy.run(outputs, stop)?
    };
    let r = &report.relay;
    let impaired: String = Impairment::ALL
        .iter()
        .map(|&kind| format!("{} {}, ", kind.done(), r.impaired[kind]))
        .collect();
    stderr_line!(
        "{me}: {} ({} to the server, {} to clients) from {}; \
         sent {}; {impaired}mutated {}; \
         not forwarded: {} queue full, {} unmapped, {} at exit; {} send errors, \
         {} refused by the server; {} mappings idled out, {} evicted",
        crate::words::count((r.to_server + r.to_client) as u64, "datagram"),
        r.to_server,
        r.to_client,
        crate::words::count(r.clients as u64, "client"),
        r.sent,
        report.mutations.mutated,
        r.queue_full,
        r.unmapped,
        r.discarded_at_exit,
        r.send_errors,
        r.upstream_refused,
        r.idled_out,
        r.evicted,
    );
    for miss in &report.misses {
        stderr_line!("{me}: {miss}");
    }
    for line in observed.finish() {
        stderr_line!("{me}: warning: still in reassembly when the proxy stopped: {line}");
    }
    // Only frames that reached the file count; a recording that failed is the error below.
    if let Some(path) = &args.record
        && !report.sink.recording_failed
    {
        stderr_line!(
            "{me}: recorded {} to {}",
            crate::words::count(report.sink.recorded as u64, "frame"),
            path.display()
        );
    }
    match report.sink.error {
        Some(e) => Err(anyhow!(e)),
        None => Ok(()),
    }
}

/// `--tui`: the relay on a thread of its own, the inspector on this one, fed each datagram by
/// the sink over a bounded channel, until the user quits (or SIGINT); the recording and the
/// mutation log are written as in the headless mode.
///
/// # Errors
/// Terminal I/O errors; polling errors of the relay.
fn run_with_tui(
    proxy: Proxy,
    mut outputs: Outputs,
    stop: Arc<AtomicBool>,
    summary: &str,
    program: &str,
) -> Result<Report> {
    let (tx, rx) = sync_channel::<Arrival>(CHANNEL);
    outputs.live = Some(tx);
    let dissectors = proxy.dissector().dissectors().clone();
    let name = format!("proxy {} → {}", proxy.local_addr(), proxy.upstream());
    let relay_stop = Arc::clone(&stop);
    let relay = std::thread::Builder::new()
        .name("bitlens-relay".into())
        .spawn(move || proxy.run(outputs, relay_stop))?;
    let result = crate::tui::live::run(name, dissectors, program, summary, &rx, &stop);
    stop.store(true, Ordering::Relaxed);
    // The sink may be blocked handing a datagram to the list: let it finish.
    let drain = std::thread::spawn(move || while rx.recv().is_ok() {});
    let report = relay
        .join()
        .map_err(|_| anyhow!("the relay thread panicked"))??;
    let _ = drain.join();
    result.map(|()| report)
}

/// Refuses a rule whose `packet=` can never match: a name that is not a packet type of the
/// session's dissector, or any name when the server's port has no dissector.
fn check_packet_names(config: &Config, dis: &SessionDissector) -> Result<()> {
    let port = config.upstream.port();
    for rule in &config.rules {
        let Some(want) = &rule.packet else { continue };
        let Some(name) = dis.name() else {
            bail!(
                "rule {}: packet={want:?} can never match: port {port} has no dissector \
                 (--decode {port}=NAME)",
                rule.name
            );
        };
        if let Some(types) = dis.packet_types()
            && !types.contains(want)
        {
            bail!(
                "rule {}: packet={want:?} is not a packet type of {name} on port {port} \
                 (known: {})",
                rule.name,
                list_names(&types, 30)
            );
        }
    }
    Ok(())
}

/// At most `max` names, comma-separated, then how many more.
fn list_names(names: &[String], max: usize) -> String {
    let mut s = names
        .iter()
        .take(max)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > max {
        s.push_str(&format!(" and {} more", names.len() - max));
    }
    s
}

/// The start-up description: decoding, impairments, rules.
fn describe(config: &Config, dis: &SessionDissector) -> String {
    let mut s = match dis.name() {
        Some(name) => format!("decoding port {} as {name}", config.upstream.port()),
        None => format!(
            "port {} has no dissector (datagrams show as undecoded; --decode {}=NAME)",
            config.upstream.port(),
            config.upstream.port()
        ),
    };
    if !config.impairments.is_empty() {
        s.push_str("; impair: ");
        s.push_str(&config.impairments.describe());
    }
    let m = crate::proxy::mutate::Mutator::new(config.rules.clone(), config.fuzz);
    let rules = m.describe();
    if !rules.is_empty() {
        s.push_str("; mutate: ");
        s.push_str(&rules);
    }
    if !config.impairments.is_empty() || !rules.is_empty() {
        s.push_str(&format!("; seed {}", config.seed));
    }
    s
}

/// Runs `bitlens replay`; returns how many datagrams were sent.
///
/// # Errors
/// An unreadable log, a bad address, a socket error; a [`Rejected`] log that is not a proxy
/// log, whose edits do not give its bytes, or that has nothing to send ([`replay::select`]).
pub fn replay(args: &ReplayArgs, out: &mut dyn Write) -> Result<usize> {
    let upstream = resolve("--upstream", &args.upstream)?;
    let text = read_text(&args.log)?;
    let entries = replay::load(&args.log.display().to_string(), &text).map_err(Rejected::new)?;
    let direction = if args.to_client {
        Direction::ToClient
    } else {
        Direction::ToServer
    };
    let chosen = replay::select(&entries, direction, &args.frames)
        .map_err(|e| Rejected::new(format!("{}: {e}", args.log.display())))?;
    replay::send(&chosen, upstream, Duration::from_millis(args.gap_ms), out)
        .map_err(anyhow::Error::msg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unresolvable_host_is_not_called_a_shape_error() {
        let e = format!(
            "{:#}",
            resolve("--upstream", "nosuchhost.invalid:7790").unwrap_err()
        );
        assert!(e.contains("cannot resolve the host"), "{e}");
        assert!(!e.contains("not HOST:PORT"), "{e}");
        for bad in ["127.0.0.1:99999", "127.0.0.1", ":7790"] {
            let e = format!("{:#}", resolve("--listen", bad).unwrap_err());
            assert!(e.contains("not HOST:PORT"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_listen_address_the_upstream_reaches_is_a_loop() {
        let a = |s: &str| s.parse::<SocketAddr>().unwrap();
        for (listen, upstream) in [
            ("127.0.0.1:7790", "127.0.0.1:7790"),
            ("0.0.0.0:7790", "127.0.0.1:7790"),
            ("[::]:7790", "127.0.0.1:7790"),
            ("[::]:7790", "[::1]:7790"),
            ("127.0.0.1:7790", "0.0.0.0:7790"),
            ("[::ffff:127.0.0.1]:7790", "127.0.0.1:7790"),
        ] {
            assert!(loops_back(a(listen), a(upstream)), "{listen} -> {upstream}");
        }
        for (listen, upstream) in [
            ("127.0.0.1:7790", "127.0.0.1:7791"),
            ("127.0.0.1:7790", "127.0.0.2:7790"),
            ("0.0.0.0:7790", "[::1]:7790"),
            // TEST-NET-3: no host has it.
            ("0.0.0.0:7790", "203.0.113.9:7790"),
            ("127.0.0.1:0", "127.0.0.1:0"),
        ] {
            assert!(
                !loops_back(a(listen), a(upstream)),
                "{listen} -> {upstream}"
            );
        }
    }

    #[test]
    fn socket_buffer_sizes_take_binary_units_and_stay_in_range() {
        assert_eq!(buffer_size("8MiB"), Ok(8 << 20));
        assert_eq!(buffer_size("64 MiB"), Ok(64 << 20));
        assert_eq!(buffer_size("512k"), Ok(512 << 10));
        assert_eq!(buffer_size("65536"), Ok(65536));
        assert_eq!(buffer_size("1024MB"), Ok(1 << 30));
        assert_eq!(buffer_size("1GiB"), Ok(1 << 30));
        assert_eq!(buffer_size("1 g"), Ok(1 << 30));
        for bad in [
            "", "MiB", "8GiB", "2GiB", "1TiB", "8 MiBs", "-1", "1.5MiB", "63KiB", "1025MiB",
        ] {
            assert!(buffer_size(bad).is_err(), "{bad}");
        }
        // No overflow on a number too large for any unit.
        assert!(buffer_size("18446744073709551615MiB").is_err());
    }
}
