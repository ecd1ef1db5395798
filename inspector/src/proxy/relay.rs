//! The relay: one thread that polls the listen socket and every client's upstream socket,
//! and forwards, mutates and impairs datagrams.
//!
//! Sockets are edge-triggered in `mio`; a socket that was readable stays on a ready list until
//! a read says it would block, and each turn reads at most [`BUDGET`] datagrams from each ready
//! socket, so a flooding client cannot starve the others (or the server's replies).

use super::impair::{Impairment, PerImpairment, Scheduler};
use super::mapping::Mappings;
use super::mutate::Mutator;
use super::output::{Outputs, Sink, SinkReport};
use super::{CHANNEL, ClientDraws, Config, Direction, Fate, Seen, SessionDissector};
use crate::capture::Timestamp;
use mio::net::UdpSocket;
use mio::{Events, Interest, Poll, Token};
use std::collections::HashSet;
use std::io::ErrorKind;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{SyncSender, sync_channel};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Datagrams read from one socket per turn before the others get theirs.
pub const BUDGET: usize = 64;
/// Bytes of delayed and held datagrams at most.
pub const QUEUE_BYTES: usize = 64 << 20;
/// The listen socket's token; mappings use 1, 2, ...
const LISTEN: Token = Token(0);
/// The largest UDP payload (IPv6 without jumbograms), plus one to see a cut.
const MAX_DATAGRAM: usize = 65_536;

/// Counts of what the relay did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RelayStats {
    /// Datagrams received from clients.
    pub to_server: u64,
    /// Datagrams received from the server.
    pub to_client: u64,
    /// Datagrams sent (duplicates count twice).
    pub sent: u64,
    /// Clients mapped over the run.
    pub clients: u64,
    /// Mappings removed after the idle timeout.
    pub idled_out: u64,
    /// Mappings evicted to make room for a new client.
    pub evicted: u64,
    /// Datagrams each impairment took (dropped, duplicated, delayed, held back to reorder).
    pub impaired: PerImpairment<u64>,
    /// Datagrams not forwarded because the delay queue was full.
    pub queue_full: u64,
    /// Delayed datagrams whose client's mapping was gone when they fell due.
    pub unmapped: u64,
    /// Delayed or held datagrams not sent because the proxy stopped.
    pub discarded_at_exit: u64,
    /// Sends that failed (a full socket buffer, an unreachable peer).
    pub send_errors: u64,
    /// ICMP port unreachable from the server (nothing listening there), reported on reads or
    /// sends of a client's upstream socket.
    pub upstream_refused: u64,
    /// Upstream sockets that could not be opened (too many open files, ...).
    pub socket_errors: u64,
}

/// What one run did.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// The relay's counts.
    pub relay: RelayStats,
    /// The mutator's counts.
    pub mutations: super::mutate::MutationStats,
    /// Per rule that fired without anything to work on: how often and why
    /// ([`Mutator::misses`]).
    pub misses: Vec<String>,
    /// The sink's counts.
    pub sink: SinkReport,
}

/// `now + wait`, or `now` if that instant cannot be represented (the specs bound every wait
/// to an hour, so this never happens with the command line's values; it keeps a datagram from
/// ever making the relay panic).
fn later(now: Instant, wait: Duration) -> Instant {
    now.checked_add(wait).unwrap_or(now)
}

struct Upstream {
    socket: UdpSocket,
    /// This client's random streams, per direction.
    draws: ClientDraws,
}

struct Outgoing {
    mapping: usize,
    client: SocketAddr,
    direction: Direction,
    bytes: Vec<u8>,
}

/// A bound proxy, ready to [`Proxy::run`].
pub struct Proxy {
    config: Config,
    dis: Arc<SessionDissector>,
    poll: Poll,
    listen: UdpSocket,
    local: SocketAddr,
}

impl Proxy {
    /// Binds the listen socket.
    ///
    /// # Errors
    /// The address cannot be bound (in use, not local, ...).
    pub fn bind(config: Config, dis: SessionDissector) -> std::io::Result<Self> {
        let poll = Poll::new()?;
        let mut listen = UdpSocket::bind(config.listen)?;
        poll.registry()
            .register(&mut listen, LISTEN, Interest::READABLE)?;
        let local = listen.local_addr()?;
        Ok(Proxy {
            config,
            dis: Arc::new(dis),
            poll,
            listen,
            local,
        })
    }

    /// The address clients send to (the port chosen when `--listen` said 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// The server's address.
    pub fn upstream(&self) -> SocketAddr {
        self.config.upstream
    }

    /// The decoding of the session.
    pub fn dissector(&self) -> Arc<SessionDissector> {
        Arc::clone(&self.dis)
    }

    /// Relays until `stop` is set (Ctrl-C) or an output fails, with the sink on a thread of
    /// its own; returns when the sink has written everything out.
    ///
    /// # Errors
    /// Polling itself failing (not a socket error: those are counted).
    pub fn run(self, outputs: Outputs, stop: Arc<AtomicBool>) -> std::io::Result<Report> {
        let (tx, rx) = sync_channel::<Seen>(CHANNEL);
        let sink = Sink::new(Arc::clone(&self.dis), outputs);
        let sink_stop = Arc::clone(&stop);
        let sink = std::thread::Builder::new()
            .name("bitlens-sink".into())
            .spawn(move || sink.run(rx, &sink_stop))?;
        let mut relay = Relay::new(self, tx);
        let result = relay.run(&stop);
        let Relay {
            stats,
            mutator,
            events,
            ..
        } = relay;
        drop(events);
        let sink = sink.join().unwrap_or_else(|_| SinkReport {
            error: Some("the output thread panicked".into()),
            recording_failed: true,
            ..SinkReport::default()
        });
        result.map(|()| Report {
            relay: stats,
            mutations: mutator.stats,
            misses: mutator.misses(),
            sink,
        })
    }
}

struct Relay {
    poll: Poll,
    listen: UdpSocket,
    upstream: SocketAddr,
    dis: Arc<SessionDissector>,
    mappings: Mappings<Upstream>,
    scheduler: Scheduler<(usize, Direction), Outgoing>,
    config: Config,
    mutator: Mutator,
    events: SyncSender<Seen>,
    frame: u64,
    stats: RelayStats,
    buf: Vec<u8>,
    ready: Vec<Token>,
    in_ready: HashSet<Token>,
}

impl Relay {
    fn new(p: Proxy, events: SyncSender<Seen>) -> Self {
        let c = &p.config;
        Relay {
            mappings: Mappings::new(c.max_clients, c.idle, 1),
            scheduler: Scheduler::new(c.queue, QUEUE_BYTES),
            mutator: Mutator::new(c.rules.clone(), c.fuzz),
            upstream: c.upstream,
            poll: p.poll,
            listen: p.listen,
            dis: p.dis,
            config: p.config,
            events,
            frame: 0,
            stats: RelayStats::default(),
            buf: vec![0; MAX_DATAGRAM],
            ready: Vec::new(),
            in_ready: HashSet::new(),
        }
    }

    fn run(&mut self, stop: &AtomicBool) -> std::io::Result<()> {
        let mut events = Events::with_capacity(1024);
        // Idle mappings are looked for a few times per timeout, at least once a second.
        let sweep_every =
            (self.mappings.idle() / 4).clamp(Duration::from_millis(10), Duration::from_secs(1));
        let mut next_sweep = Instant::now() + sweep_every;
        while !stop.load(Ordering::Relaxed) {
            let now = Instant::now();
            while let Some(out) = self.scheduler.pop_due(now) {
                self.send(out);
            }
            if now >= next_sweep {
                for gone in self.mappings.expire(now) {
                    let mut s = gone.socket.socket;
                    let _ = self.poll.registry().deregister(&mut s);
                    self.stats.idled_out += 1;
                }
                next_sweep = now + sweep_every;
            }
            let timeout = if self.ready.is_empty() {
                let mut t = next_sweep.min(now + Duration::from_millis(100));
                if let Some(due) = self.scheduler.next_due() {
                    t = t.min(due);
                }
                t.saturating_duration_since(now)
            } else {
                Duration::ZERO
            };
            match self.poll.poll(&mut events, Some(timeout)) {
                Ok(()) => {}
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
            for ev in &events {
                if self.in_ready.insert(ev.token()) {
                    self.ready.push(ev.token());
                }
            }
            let ready = std::mem::take(&mut self.ready);
            for token in ready {
                if self.service(token) {
                    self.ready.push(token);
                } else {
                    self.in_ready.remove(&token);
                }
            }
        }
        self.stats.discarded_at_exit += self.scheduler.len() as u64;
        Ok(())
    }

    /// Reads up to [`BUDGET`] datagrams from one socket; true when it may have more.
    fn service(&mut self, token: Token) -> bool {
        for _ in 0..BUDGET {
            if token == LISTEN {
                match self.listen.recv_from(&mut self.buf) {
                    Ok((n, client)) => {
                        let data = self.buf[..n].to_vec();
                        self.received_from_client(client, data);
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => return false,
                    Err(e) if e.kind() == ErrorKind::Interrupted => {}
                    // Errors queued on the listen socket (an ICMP error for a reply to a client
                    // that has gone) concern one datagram: read on.
                    Err(_) => self.stats.send_errors += 1,
                }
            } else {
                let id = token.0;
                let Some(m) = self.mappings.get(id) else {
                    return false;
                };
                match m.socket.socket.recv(&mut self.buf) {
                    Ok(n) => {
                        let data = self.buf[..n].to_vec();
                        self.received_from_server(id, data);
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => return false,
                    Err(e) if e.kind() == ErrorKind::Interrupted => {}
                    Err(e) if e.kind() == ErrorKind::ConnectionRefused => self.refused(id),
                    Err(_) => self.stats.send_errors += 1,
                }
            }
        }
        true
    }

    /// Counts an ICMP port unreachable; the first of the run is reported at once, the others
    /// in the closing summary.
    fn refused(&mut self, id: usize) {
        self.stats.upstream_refused += 1;
        if self.stats.upstream_refused == 1 {
            let client = self
                .mappings
                .get(id)
                .map(|m| m.client.to_string())
                .unwrap_or_default();
            eprintln!(
                "{} proxy: {} refused a datagram of client {client} (nothing listening there?)",
                self.config.program, self.upstream
            );
        }
    }

    fn received_from_client(&mut self, client: SocketAddr, data: Vec<u8>) {
        self.stats.to_server += 1;
        let now = Instant::now();
        let id = match self.mappings.touch_client(&client, now) {
            Some(id) => id,
            None => match self.map(client, now) {
                Some(id) => id,
                None => return,
            },
        };
        self.forward(id, client, Direction::ToServer, data, now);
    }

    fn received_from_server(&mut self, id: usize, data: Vec<u8>) {
        self.stats.to_client += 1;
        let now = Instant::now();
        let Some(client) = self.mappings.touch_id(id, now).map(|m| m.client) else {
            return;
        };
        self.forward(id, client, Direction::ToClient, data, now);
    }

    /// Opens and registers a client's upstream socket.
    fn map(&mut self, client: SocketAddr, now: Instant) -> Option<usize> {
        let any = match self.upstream.ip() {
            IpAddr::V4(_) => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            IpAddr::V6(_) => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
        };
        let opened = UdpSocket::bind(SocketAddr::new(any, 0)).and_then(|mut s| {
            s.connect(self.upstream)?;
            let token = Token(self.mappings.next_id());
            self.poll
                .registry()
                .register(&mut s, token, Interest::READABLE)?;
            Ok(s)
        });
        let socket = match opened {
            Ok(s) => s,
            Err(e) => {
                if self.stats.socket_errors == 0 {
                    eprintln!(
                        "{} proxy: cannot open an upstream socket for client {client}: {e}",
                        self.config.program
                    );
                }
                self.stats.socket_errors += 1;
                return None;
            }
        };
        let draws = ClientDraws::new(self.config.seed, self.mappings.next_id() as u64);
        let (id, evicted) = self
            .mappings
            .insert(client, Upstream { socket, draws }, now);
        if let Some(gone) = evicted {
            let mut s = gone.socket.socket;
            let _ = self.poll.registry().deregister(&mut s);
            self.stats.evicted += 1;
        }
        self.stats.clients += 1;
        Some(id)
    }

    fn forward(
        &mut self,
        id: usize,
        client: SocketAddr,
        direction: Direction,
        mut bytes: Vec<u8>,
        now: Instant,
    ) {
        self.frame += 1;
        let time = Timestamp::from_nanos(
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as i128),
        );
        // The transports' pass sees the datagram as it arrived, in arrival order (nothing
        // without a transport).
        let (src, dst) = match direction {
            Direction::ToServer => (client, self.upstream),
            Direction::ToClient => (self.upstream, client),
        };
        let observed = self.dis.observe(src, dst, &bytes);
        // The client's own streams for this direction (a mapping is there: the caller has
        // just touched it).
        let (mutation, decision) = match self.mappings.get_mut(id) {
            Some(m) => {
                let draws = m.socket.draws.of(direction);
                let mutation = if self.mutator.wants(direction) {
                    self.mutator.mutate(
                        direction,
                        &mut bytes,
                        &self.dis,
                        &observed,
                        &mut draws.mutate,
                    )
                } else {
                    None
                };
                let decision = if self.config.impairments.is_empty() {
                    Default::default()
                } else {
                    self.config.impairments.decide(direction, &mut draws.impair)
                };
                (mutation, decision)
            }
            None => (None, Default::default()),
        };
        let mut fate = Fate {
            decision,
            queue_full: false,
        };
        let flow = (id, direction);
        for kind in Impairment::ALL.into_iter().filter(|&k| decision.has(k)) {
            self.stats.impaired[kind] += 1;
        }
        if !decision.has(Impairment::Drop) {
            let copies = if decision.has(Impairment::Duplicate) {
                2
            } else {
                1
            };
            for _ in 0..copies {
                let out = Outgoing {
                    mapping: id,
                    client,
                    direction,
                    bytes: Vec::new(),
                };
                if let Some(delay) = decision.delay {
                    let out = Outgoing {
                        bytes: bytes.clone(),
                        ..out
                    };
                    if self
                        .scheduler
                        .delay(later(now, delay), bytes.len(), out)
                        .is_err()
                    {
                        fate.queue_full = true;
                    }
                } else if decision.has(Impairment::Reorder) && !self.scheduler.is_holding(&flow) {
                    let hold = self.config.impairments.hold;
                    let out = Outgoing {
                        bytes: bytes.clone(),
                        ..out
                    };
                    if self
                        .scheduler
                        .hold(flow, later(now, hold), bytes.len(), out)
                        .is_err()
                    {
                        fate.queue_full = true;
                    }
                } else {
                    self.send_bytes(id, client, direction, &bytes);
                    // A datagram held back for reordering goes right after the one that
                    // overtook it.
                    if let Some(held) = self.scheduler.release(&flow) {
                        self.send(held);
                    }
                }
            }
            if fate.queue_full {
                self.stats.queue_full += 1;
            }
        }
        let seen = Seen {
            frame: self.frame,
            time,
            direction,
            client,
            server: self.upstream,
            bytes,
            fate,
            mutation,
            observed,
        };
        // Blocks while the sink is behind: the bounded channel is the back-pressure. An error
        // means the sink has stopped (a failed output): the stop flag ends the loop.
        let _ = self.events.send(seen);
    }

    fn send(&mut self, out: Outgoing) {
        self.send_bytes(out.mapping, out.client, out.direction, &out.bytes);
    }

    fn send_bytes(&mut self, id: usize, client: SocketAddr, direction: Direction, bytes: &[u8]) {
        let result = match direction {
            Direction::ToClient => self.listen.send_to(bytes, client),
            Direction::ToServer => match self.mappings.get(id) {
                Some(m) => m.socket.socket.send(bytes),
                None => {
                    self.stats.unmapped += 1;
                    return;
                }
            },
        };
        match result {
            Ok(_) => self.stats.sent += 1,
            Err(e) if e.kind() == ErrorKind::ConnectionRefused => self.refused(id),
            Err(_) => self.stats.send_errors += 1,
        }
    }
}
