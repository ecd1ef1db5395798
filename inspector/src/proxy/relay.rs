//! The relay: one thread that polls the listen socket and every client's upstream socket,
//! and forwards, mutates and impairs datagrams.
//!
//! Sockets are edge-triggered in `mio`; a socket that was readable stays on a ready list until
//! a read says it would block, and each turn reads at most [`BUDGET`] datagrams from each ready
//! socket, so a flooding client cannot starve the others (or the server's replies).
//!
//! The system calls are batched: one `recvmmsg` reads what a socket holds (up to the budget;
//! a read that returns fewer datagrams than it had room for has emptied the socket, so no
//! second call is made to hear "would block"), and the datagrams to send wait in an outbox
//! that goes out at the end of the turn's socket, one `sendmmsg` per run of datagrams leaving
//! by the same socket (a lone datagram takes a plain `send`). The sockets' buffers are sized on
//! purpose ([`LISTEN_BUFFER`], [`UPSTREAM_BUFFER`]; the kernel caps them at
//! `net.core.rmem_max` and `net.core.wmem_max`, and [`Proxy::buffers`] says what it granted),
//! so that a burst waits in the kernel instead of being dropped at the default ~200 KiB.

use super::impair::{Impairment, PerImpairment, Scheduler};
use super::mapping::Mappings;
use super::mutate::Mutator;
use super::output::{Outputs, Sink, SinkReport};
use super::{CHANNEL, ClientDraws, Config, Direction, Fate, Seen, SessionDissector};
use crate::capture::Timestamp;
use mio::net::UdpSocket;
use mio::{Events, Interest, Poll, Token};
use nix::errno::Errno;
use nix::sys::socket::{
    MsgFlags, MultiHeaders, SockaddrStorage, getsockopt, recvmmsg, send, sendmmsg, sendto,
    setsockopt, sockopt,
};
use std::collections::HashSet;
use std::io::{ErrorKind, IoSlice, IoSliceMut};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::os::fd::{AsFd, AsRawFd, RawFd};
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
/// The receive and send buffers asked for the listen socket by default (`--socket-buffer`),
/// which carries every client's datagrams: while a burst arrives faster than the relay
/// forwards it, the backlog waits here. Each MiB asked holds some 2,500 small datagrams (the
/// kernel charges each ~830 bytes against twice the size asked), so 128 MiB some 320,000: a
/// whole 200,000-datagram burst even when the relay gets no core while it arrives. On a loaded
/// machine 8 MiB lost up to a third of such a burst, 32 MiB up to 8% decoding, 64 MiB up to
/// 10% (BENCHMARKS.md). It is a limit, not an allocation: the kernel holds that much only
/// while datagrams wait.
pub const LISTEN_BUFFER: usize = 128 << 20;
/// The buffers asked for each client's upstream socket (the server's replies to one client;
/// at most the listen socket's).
pub const UPSTREAM_BUFFER: usize = 2 << 20;
/// Datagrams per `sendmmsg`.
const SEND_BATCH: usize = 64;
/// The largest buffer Linux grants whatever the caps and capabilities: it halves `INT_MAX`
/// before doubling the value for its bookkeeping, so `--socket-buffer 1GiB` gets one byte less.
const KERNEL_MAX_BUFFER: usize = i32::MAX as usize / 2;
/// The smallest read: slots made on the stack.
const FEW: usize = 4;

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
    buffers: SocketBuffers,
}

/// The listen socket's buffers: asked for and granted by the kernel, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SocketBuffers {
    /// What the proxy asked for, each way (`--socket-buffer`, [`LISTEN_BUFFER`] by default).
    pub asked: usize,
    /// The receive buffer granted: half of what `SO_RCVBUF` reads back (the kernel doubles
    /// the value it accepts, for its bookkeeping).
    pub receive: usize,
    /// The send buffer granted, the same way.
    pub send: usize,
    /// The receive buffer was forced past `net.core.rmem_max` (`SO_RCVBUFFORCE`, which needs
    /// `CAP_NET_ADMIN`).
    pub receive_forced: bool,
    /// The send buffer was forced past `net.core.wmem_max` (`SO_SNDBUFFORCE`).
    pub send_forced: bool,
}

impl SocketBuffers {
    /// One line for the start-up message: the sizes, which were forced past the system's
    /// limit, and which system limit capped the others.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "socket buffers {} receive, {} send",
            size_text(self.receive),
            size_text(self.send)
        );
        let names = |rmem: bool, wmem: bool| -> Vec<&'static str> {
            [(rmem, "net.core.rmem_max"), (wmem, "net.core.wmem_max")]
                .into_iter()
                .filter_map(|(c, name)| c.then_some(name))
                .collect()
        };
        // What the sizes owe to forcing and to the kernel's own ceiling, in one parenthesis.
        let mut notes = Vec::new();
        let forced = names(self.receive_forced, self.send_forced);
        if !forced.is_empty() {
            notes.push(format!("past {} with CAP_NET_ADMIN", forced.join(" and ")));
        }
        // Short of the kernel's own ceiling is no system limit's doing; at the ceiling, say
        // what was asked, so that an odd number of bytes reads as the kernel's, not a typo.
        if self.asked > KERNEL_MAX_BUFFER
            && (self.receive == KERNEL_MAX_BUFFER || self.send == KERNEL_MAX_BUFFER)
        {
            notes.push(format!(
                "asked {}: the kernel grants at most {}",
                size_text(self.asked),
                size_text(KERNEL_MAX_BUFFER)
            ));
        }
        if !notes.is_empty() {
            s.push_str(&format!(" ({})", notes.join("; ")));
        }
        let full = self.asked.min(KERNEL_MAX_BUFFER);
        let capped = names(self.receive < full, self.send < full);
        if !capped.is_empty() {
            let it = if capped.len() == 1 { "it" } else { "them" };
            s.push_str(&format!(
                " (asked {}; capped by {}: raise {it} with sysctl, or run with \
                 CAP_NET_ADMIN, to absorb longer bursts)",
                size_text(self.asked),
                capped.join(" and ")
            ));
        }
        s
    }
}

/// `bytes` in the largest binary unit that holds it exactly: `128 MiB`, `208 KiB`, `1 GiB`,
/// `212993 bytes`.
pub fn size_text(bytes: usize) -> String {
    for (shift, unit) in [(30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if bytes != 0 && bytes.is_multiple_of(1 << shift) {
            return format!("{} {unit}", bytes >> shift);
        }
    }
    crate::words::count(bytes as u64, "byte")
}

/// Asks for `size` bytes of receive and send buffer on `socket`; returns what the kernel
/// granted (the default, when it refuses the request altogether).
///
/// The kernel caps `SO_RCVBUF` and `SO_SNDBUF` at `net.core.rmem_max` and `wmem_max`
/// (a few hundred KiB by default, less than a burst needs). When it did, the size is forced
/// with `SO_RCVBUFFORCE` / `SO_SNDBUFFORCE`, which a process with `CAP_NET_ADMIN` (root) may
/// set past the cap; without the capability that fails and the capped size stays.
fn size_buffers<S: AsFd>(socket: &S, size: usize) -> SocketBuffers {
    let receive = size_one(socket, size, sockopt::RcvBuf, sockopt::RcvBufForce);
    let send = size_one(socket, size, sockopt::SndBuf, sockopt::SndBufForce);
    SocketBuffers {
        asked: size,
        receive: receive.0,
        send: send.0,
        receive_forced: receive.1,
        send_forced: send.1,
    }
}

/// One way of [`size_buffers`]: the size granted (half what the kernel reads back), and
/// whether it took the forcing option to get it.
fn size_one<S, O, F>(socket: &S, size: usize, plain: O, force: F) -> (usize, bool)
where
    S: AsFd,
    O: nix::sys::socket::GetSockOpt<Val = usize> + nix::sys::socket::SetSockOpt<Val = usize> + Copy,
    F: nix::sys::socket::SetSockOpt<Val = usize>,
{
    let _ = setsockopt(socket, plain, &size);
    let granted = getsockopt(socket, plain).unwrap_or(0) / 2;
    if granted >= size.min(KERNEL_MAX_BUFFER) || setsockopt(socket, force, &size).is_err() {
        return (granted, false);
    }
    let forced = getsockopt(socket, plain).unwrap_or(0) / 2;
    (forced.max(granted), forced > granted)
}

impl Proxy {
    /// Binds the listen socket.
    ///
    /// # Errors
    /// The address cannot be bound (in use, not local, ...).
    pub fn bind(config: Config, dis: SessionDissector) -> std::io::Result<Self> {
        let poll = Poll::new()?;
        let mut listen = UdpSocket::bind(config.listen)?;
        let buffers = size_buffers(&listen, config.socket_buffer);
        poll.registry()
            .register(&mut listen, LISTEN, Interest::READABLE)?;
        let local = listen.local_addr()?;
        Ok(Proxy {
            config,
            dis: Arc::new(dis),
            poll,
            listen,
            local,
            buffers,
        })
    }

    /// The listen socket's buffer sizes, as the kernel granted them.
    pub fn buffers(&self) -> SocketBuffers {
        self.buffers
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
    /// With no output at all (`--quiet` and nothing recorded or logged) there is no sink: the
    /// relay only forwards.
    ///
    /// # Errors
    /// Polling itself failing (not a socket error: those are counted).
    pub fn run(self, outputs: Outputs, stop: Arc<AtomicBool>) -> std::io::Result<Report> {
        let nothing_out = outputs.json.is_none()
            && outputs.recording.is_none()
            && outputs.mutation_log.is_none()
            && outputs.live.is_none();
        let mut sink = None;
        let mut tx = None;
        if !nothing_out {
            let (sender, rx) = sync_channel::<Seen>(CHANNEL);
            let writer = Sink::new(Arc::clone(&self.dis), outputs);
            let sink_stop = Arc::clone(&stop);
            sink = Some(
                std::thread::Builder::new()
                    .name("bitlens-sink".into())
                    .spawn(move || writer.run(rx, &sink_stop))?,
            );
            tx = Some(sender);
        }
        let mut relay = Relay::new(self, tx);
        let result = relay.run(&stop);
        let Relay {
            stats,
            mutator,
            events,
            ..
        } = relay;
        drop(events);
        let sink = match sink {
            None => SinkReport::default(),
            Some(sink) => sink.join().unwrap_or_else(|_| SinkReport {
                error: Some("the output thread panicked".into()),
                recording_failed: true,
                ..SinkReport::default()
            }),
        };
        result.map(|()| Report {
            relay: stats,
            mutations: mutator.stats,
            misses: mutator.misses(),
            sink,
        })
    }
}

/// One datagram of the outbox.
#[derive(Debug, Clone, Copy)]
struct Item {
    /// To this client by the listen socket; `None`: to the server by mapping `id`'s socket.
    to: Option<SocketAddr>,
    /// The client's mapping.
    id: usize,
    /// The end of its bytes in [`Outbox::bytes`].
    end: usize,
}

impl Item {
    /// True when both leave by the same socket (so they can share a `sendmmsg`).
    fn same_socket(&self, other: &Item) -> bool {
        match (self.to, other.to) {
            (Some(_), Some(_)) => true,
            (None, None) => self.id == other.id,
            _ => false,
        }
    }
}

/// The datagrams to send at the end of a socket's turn: their bytes one after the other.
#[derive(Default)]
struct Outbox {
    bytes: Vec<u8>,
    items: Vec<Item>,
}

impl Outbox {
    /// The bytes of item `i`.
    fn bytes_of(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.items[i - 1].end };
        &self.bytes[start..self.items[i].end]
    }
}

/// The preallocated headers of the batched calls, one set per kind of socket and way: the
/// kernel writes each receive header's address length back, and a send header points at the
/// addresses of its last call, so none is shared.
struct Headers {
    listen_in: MultiHeaders<SockaddrStorage>,
    upstream_in: MultiHeaders<()>,
    listen_out: MultiHeaders<SockaddrStorage>,
    upstream_out: MultiHeaders<()>,
}

/// The buffers of batched reads: [`BUDGET`] slots of [`MAX_DATAGRAM`] bytes (allocated zeroed,
/// so the kernel maps only the pages a datagram touches), and per datagram read its length
/// and sender.
struct Inbox {
    slots: Vec<u8>,
    got: Vec<(usize, Option<SocketAddr>)>,
    /// Datagrams the next read of the listen socket, and of an upstream socket, makes room
    /// for: doubled after a read that filled them, shrunk after one that did not, so a quiet
    /// socket costs a small read and a flooded one reads [`BUDGET`] at once.
    want: [usize; 2],
}

/// The std address of a `recvmmsg` sender.
fn socket_addr(a: &SockaddrStorage) -> Option<SocketAddr> {
    if let Some(v4) = a.as_sockaddr_in() {
        return Some(SocketAddr::V4((*v4).into()));
    }
    a.as_sockaddr_in6().map(|v6| SocketAddr::V6((*v6).into()))
}

/// What a batched read ended with.
enum ReadEnd {
    /// The socket is empty.
    Drained,
    /// The read filled every slot: there may be more.
    Full,
    /// A read error (not "would block"): one datagram's worth (an ICMP error, ...).
    Error(Errno),
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
    /// The sink's channel; none when nothing is written (`--quiet` alone).
    events: Option<SyncSender<Seen>>,
    frame: u64,
    stats: RelayStats,
    inbox: Inbox,
    outbox: Outbox,
    headers: Headers,
    /// The datagram being forwarded (mutations edit it in place).
    scratch: Vec<u8>,
    ready: Vec<Token>,
    in_ready: HashSet<Token, foldhash::fast::RandomState>,
}

impl Relay {
    fn new(p: Proxy, events: Option<SyncSender<Seen>>) -> Self {
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
            inbox: Inbox {
                slots: vec![0; BUDGET * MAX_DATAGRAM],
                got: Vec::with_capacity(BUDGET),
                want: [FEW, FEW],
            },
            outbox: Outbox::default(),
            headers: Headers {
                listen_in: MultiHeaders::preallocate(BUDGET, None),
                upstream_in: MultiHeaders::preallocate(BUDGET, None),
                listen_out: MultiHeaders::preallocate(SEND_BATCH, None),
                upstream_out: MultiHeaders::preallocate(SEND_BATCH, None),
            },
            scratch: Vec::with_capacity(MAX_DATAGRAM),
            ready: Vec::new(),
            in_ready: HashSet::default(),
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
            self.flush();
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
                let more = self.service(token);
                self.flush();
                if more {
                    self.ready.push(token);
                } else {
                    self.in_ready.remove(&token);
                }
            }
        }
        self.stats.discarded_at_exit += self.scheduler.len() as u64;
        Ok(())
    }

    /// Reads up to [`BUDGET`] datagrams from one socket and forwards them into the outbox;
    /// true when the socket may have more.
    fn service(&mut self, token: Token) -> bool {
        let mut budget = BUDGET;
        while budget > 0 {
            let kind = usize::from(token != LISTEN);
            let room = self.inbox.want[kind].min(budget);
            let fd = if token == LISTEN {
                self.listen.as_raw_fd()
            } else {
                match self.mappings.get(token.0) {
                    Some(m) => m.socket.socket.as_raw_fd(),
                    None => return false,
                }
            };
            let end = self.read(token, fd, room);
            let n = self.inbox.got.len();
            self.inbox.want[kind] = match end {
                ReadEnd::Full => (room * 2).min(BUDGET),
                _ => (n * 2).clamp(FEW, BUDGET),
            };
            budget -= n.max(1).min(budget);
            self.deliver(token);
            match end {
                ReadEnd::Drained => return false,
                ReadEnd::Full => {}
                ReadEnd::Error(Errno::EINTR) => {}
                ReadEnd::Error(Errno::ECONNREFUSED) if token != LISTEN => self.refused(token.0),
                // Errors queued on the listen socket (an ICMP error for a reply to a client
                // that has gone) concern one datagram: read on.
                ReadEnd::Error(_) => self.stats.send_errors += 1,
            }
        }
        true
    }

    /// One `recvmmsg` of at most `room` datagrams from `token`'s socket into the inbox.
    fn read(&mut self, token: Token, fd: RawFd, room: usize) -> ReadEnd {
        let Inbox { slots, got, .. } = &mut self.inbox;
        got.clear();
        let mut chunks = slots.chunks_mut(MAX_DATAGRAM);
        // A few slots (a quiet socket's read) on the stack; more in a vector.
        let mut few: [[IoSliceMut<'_>; 1]; FEW];
        let mut many: Vec<[IoSliceMut<'_>; 1]>;
        let iovs: &mut [[IoSliceMut<'_>; 1]] = if room <= FEW {
            few = std::array::from_fn(|_| [IoSliceMut::new(chunks.next().unwrap_or_default())]);
            &mut few[..room]
        } else {
            many = chunks
                .take(room)
                .map(|slot| [IoSliceMut::new(slot)])
                .collect();
            &mut many
        };
        let flags = MsgFlags::MSG_DONTWAIT;
        let result = if token == LISTEN {
            recvmmsg(
                fd,
                &mut self.headers.listen_in,
                iovs.iter_mut(),
                flags,
                None,
            )
            .map(|msgs| {
                got.extend(msgs.map(|m| (m.bytes, m.address.as_ref().and_then(socket_addr))));
            })
        } else {
            recvmmsg(
                fd,
                &mut self.headers.upstream_in,
                iovs.iter_mut(),
                flags,
                None,
            )
            .map(|msgs| got.extend(msgs.map(|m| (m.bytes, None))))
        };
        match result {
            Ok(()) if got.len() == room => ReadEnd::Full,
            Ok(()) | Err(Errno::EAGAIN) => ReadEnd::Drained,
            Err(e) => ReadEnd::Error(e),
        }
    }

    /// Forwards the datagrams of the last read from `token`'s socket.
    fn deliver(&mut self, token: Token) {
        let got = std::mem::take(&mut self.inbox.got);
        let now = Instant::now();
        for (i, &(len, from)) in got.iter().enumerate() {
            let start = i * MAX_DATAGRAM;
            self.scratch.clear();
            self.scratch
                .extend_from_slice(&self.inbox.slots[start..start + len.min(MAX_DATAGRAM)]);
            if token == LISTEN {
                // A sender the kernel did not name (not IPv4 or IPv6) cannot be answered.
                if let Some(client) = from {
                    self.received_from_client(client, now);
                }
            } else {
                self.received_from_server(token.0, now);
            }
        }
        self.inbox.got = got;
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
            stderr_line!(
                "{} proxy: {} refused a datagram of client {client} (nothing listening there?)",
                self.config.program,
                self.upstream
            );
        }
    }

    /// Forwards the datagram in `scratch` from `client` to the server.
    fn received_from_client(&mut self, client: SocketAddr, now: Instant) {
        self.stats.to_server += 1;
        let id = match self.mappings.touch_client(&client, now) {
            Some(id) => id,
            None => match self.map(client, now) {
                Some(id) => id,
                None => return,
            },
        };
        self.forward(id, client, Direction::ToServer, now);
    }

    /// Forwards the datagram in `scratch` from the server to the client of mapping `id`.
    fn received_from_server(&mut self, id: usize, now: Instant) {
        self.stats.to_client += 1;
        let Some(client) = self.mappings.touch_id(id, now).map(|m| m.client) else {
            return;
        };
        self.forward(id, client, Direction::ToClient, now);
    }

    /// Opens and registers a client's upstream socket.
    fn map(&mut self, client: SocketAddr, now: Instant) -> Option<usize> {
        let any = match self.upstream.ip() {
            IpAddr::V4(_) => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            IpAddr::V6(_) => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
        };
        let opened = UdpSocket::bind(SocketAddr::new(any, 0)).and_then(|mut s| {
            size_buffers(&s, UPSTREAM_BUFFER.min(self.config.socket_buffer));
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
                    stderr_line!(
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

    /// Mutates, impairs and sends (into the outbox) the datagram in `scratch`, and hands it to
    /// the sink.
    fn forward(&mut self, id: usize, client: SocketAddr, direction: Direction, now: Instant) {
        self.frame += 1;
        let mut bytes = std::mem::take(&mut self.scratch);
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
                    // overtook it (the scheduler's hash lookup only when something waits).
                    if !self.scheduler.is_empty()
                        && let Some(held) = self.scheduler.release(&flow)
                    {
                        self.send(held);
                    }
                }
            }
            if fate.queue_full {
                self.stats.queue_full += 1;
            }
        }
        let Some(events) = &self.events else {
            // No sink: the buffer serves the next datagram.
            self.scratch = bytes;
            return;
        };
        let time = Timestamp::from_nanos(
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as i128),
        );
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
        let _ = events.send(seen);
    }

    fn send(&mut self, out: Outgoing) {
        self.send_bytes(out.mapping, out.client, out.direction, &out.bytes);
    }

    /// Queues a datagram in the outbox (sent by [`Relay::flush`], in order).
    fn send_bytes(&mut self, id: usize, client: SocketAddr, direction: Direction, bytes: &[u8]) {
        let to = match direction {
            Direction::ToClient => Some(client),
            Direction::ToServer => None,
        };
        self.outbox.bytes.extend_from_slice(bytes);
        let end = self.outbox.bytes.len();
        self.outbox.items.push(Item { to, id, end });
    }

    /// Sends the outbox, in order: one `sendmmsg` per run of datagrams that leave by the same
    /// socket, a plain send for a lone one. Each datagram counts as sent or as an error, as
    /// it would alone.
    fn flush(&mut self) {
        if self.outbox.items.is_empty() {
            return;
        }
        let out = std::mem::take(&mut self.outbox);
        let mut first = 0;
        while first < out.items.len() {
            let mut end = first + 1;
            while end < out.items.len()
                && end - first < SEND_BATCH
                && out.items[first].same_socket(&out.items[end])
            {
                end += 1;
            }
            self.send_run(&out, first, end);
            first = end;
        }
        self.outbox = out;
        self.outbox.bytes.clear();
        self.outbox.items.clear();
    }

    /// Sends the outbox's datagrams `first..end`, which leave by one socket.
    fn send_run(&mut self, out: &Outbox, first: usize, end: usize) {
        let head = out.items[first];
        let fd = match head.to {
            Some(_) => self.listen.as_raw_fd(),
            None => match self.mappings.get(head.id) {
                Some(m) => m.socket.socket.as_raw_fd(),
                // Evicted since (a new client took its place in a full table).
                None => {
                    self.stats.unmapped += (end - first) as u64;
                    return;
                }
            },
        };
        let flags = MsgFlags::MSG_DONTWAIT;
        let mut at = first;
        while at < end {
            let result = if end - at == 1 {
                match out.items[at].to {
                    Some(client) => {
                        sendto(fd, out.bytes_of(at), &SockaddrStorage::from(client), flags)
                    }
                    None => send(fd, out.bytes_of(at), flags),
                }
                .map(|_| 1)
            } else {
                let iovs: Vec<[IoSlice<'_>; 1]> =
                    (at..end).map(|i| [IoSlice::new(out.bytes_of(i))]).collect();
                match head.to {
                    Some(_) => {
                        let addrs: Vec<Option<SockaddrStorage>> = (at..end)
                            .map(|i| out.items[i].to.map(SockaddrStorage::from))
                            .collect();
                        let h = &mut self.headers.listen_out;
                        sendmmsg(fd, h, &iovs, &addrs, [], flags).map(Iterator::count)
                    }
                    None => {
                        let addrs = vec![None; end - at];
                        let h = &mut self.headers.upstream_out;
                        sendmmsg(fd, h, &iovs, &addrs, [], flags).map(Iterator::count)
                    }
                }
            };
            match result {
                Ok(n) => {
                    self.stats.sent += n as u64;
                    at += n.max(1);
                }
                // The datagram at `at` failed (a full buffer, an ICMP error): counted, and the
                // rest tried again.
                Err(Errno::ECONNREFUSED) => {
                    self.refused(out.items[at].id);
                    at += 1;
                }
                Err(_) => {
                    self.stats.send_errors += 1;
                    at += 1;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The system's cap on a socket buffer, as the kernel grants it (Linux).
    fn cap(name: &str) -> Option<usize> {
        std::fs::read_to_string(format!("/proc/sys/net/core/{name}"))
            .ok()?
            .trim()
            .parse()
            .ok()
    }

    /// True when this process holds CAP_NET_ADMIN (bit 12 of its effective capabilities).
    fn net_admin() -> bool {
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("CapEff:"))
            .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
            .is_some_and(|caps| caps & (1 << 12) != 0)
    }

    #[test]
    fn socket_buffers_are_what_was_asked_forced_or_capped() {
        let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let got = size_buffers(&socket, LISTEN_BUFFER);
        assert_eq!(got.asked, LISTEN_BUFFER);
        if let (Some(rmem), Some(wmem)) = (cap("rmem_max"), cap("wmem_max")) {
            let said = got.describe();
            if net_admin() {
                // Past the system's cap when it is below: the size asked for, said so.
                assert_eq!(
                    (got.receive, got.send),
                    (LISTEN_BUFFER, LISTEN_BUFFER),
                    "{got:?}"
                );
                assert_eq!(got.receive_forced, rmem < LISTEN_BUFFER, "{got:?}");
                assert_eq!(got.send_forced, wmem < LISTEN_BUFFER, "{got:?}");
                assert_eq!(
                    said.contains("with CAP_NET_ADMIN"),
                    rmem < LISTEN_BUFFER,
                    "{said}"
                );
                assert!(!said.contains("capped"), "{said}");
            } else {
                assert_eq!(got.receive, LISTEN_BUFFER.min(rmem), "{got:?}");
                assert_eq!(got.send, LISTEN_BUFFER.min(wmem), "{got:?}");
                assert!(!got.receive_forced && !got.send_forced, "{got:?}");
                assert_eq!(
                    said.contains("net.core.rmem_max"),
                    rmem < LISTEN_BUFFER,
                    "{said}"
                );
            }
        }
        // The default is far below: without the request a burst overflows it.
        let plain = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let default = getsockopt(&plain, sockopt::RcvBuf).unwrap() / 2;
        assert!(default < LISTEN_BUFFER, "{default}");
        // A size below the cap is granted as asked, without forcing.
        let small = size_buffers(&plain, 256 << 10);
        assert_eq!(
            (small.receive, small.send),
            (256 << 10, 256 << 10),
            "{small:?}"
        );
        assert!(!small.receive_forced && !small.send_forced, "{small:?}");
    }

    #[test]
    fn sizes_are_said_in_the_largest_exact_unit() {
        assert_eq!(size_text(128 << 20), "128 MiB");
        assert_eq!(size_text(1 << 30), "1 GiB");
        assert_eq!(size_text(1536 << 20), "1536 MiB");
        assert_eq!(size_text(208 << 10), "208 KiB");
        assert_eq!(size_text(212_993), "212993 bytes");
        assert_eq!(size_text(1), "1 byte");
        assert_eq!(size_text(0), "0 bytes");
    }

    #[test]
    fn a_capped_buffer_names_the_limit_to_raise() {
        let b = SocketBuffers {
            asked: 8 << 20,
            receive: 208 << 10,
            send: 8 << 20,
            receive_forced: false,
            send_forced: false,
        };
        assert_eq!(
            b.describe(),
            "socket buffers 208 KiB receive, 8 MiB send (asked 8 MiB; capped by \
             net.core.rmem_max: raise it with sysctl, or run with CAP_NET_ADMIN, to absorb \
             longer bursts)"
        );
        let both = SocketBuffers { send: 4 << 20, ..b };
        assert!(
            both.describe().ends_with(
                "capped by net.core.rmem_max and net.core.wmem_max: raise them with sysctl, \
                 or run with CAP_NET_ADMIN, to absorb longer bursts)"
            ),
            "{}",
            both.describe()
        );
        let full = SocketBuffers {
            receive: 8 << 20,
            ..b
        };
        assert_eq!(full.describe(), "socket buffers 8 MiB receive, 8 MiB send");
        let forced = SocketBuffers {
            receive_forced: true,
            ..full
        };
        assert_eq!(
            forced.describe(),
            "socket buffers 8 MiB receive, 8 MiB send (past net.core.rmem_max with \
             CAP_NET_ADMIN)"
        );
        // 1 GiB, forced: the kernel grants one byte less (its INT_MAX / 2), which no sysctl
        // or capability raises; before, the line also said "capped by ... run with
        // CAP_NET_ADMIN" to a proxy that had just used it.
        let most = SocketBuffers {
            asked: 1 << 30,
            receive: KERNEL_MAX_BUFFER,
            send: KERNEL_MAX_BUFFER,
            receive_forced: true,
            send_forced: true,
        };
        assert_eq!(
            most.describe(),
            "socket buffers 1073741823 bytes receive, 1073741823 bytes send (past \
             net.core.rmem_max and net.core.wmem_max with CAP_NET_ADMIN; asked 1 GiB: the \
             kernel grants at most 1073741823 bytes)"
        );
        let capped = SocketBuffers {
            receive: 208 << 10,
            receive_forced: false,
            ..most
        };
        assert!(
            capped
                .describe()
                .contains("(asked 1 GiB; capped by net.core.rmem_max:"),
            "{}",
            capped.describe()
        );
    }

    #[test]
    fn runs_of_the_outbox_split_by_socket() {
        let a: SocketAddr = "127.0.0.1:1".parse().unwrap();
        let b: SocketAddr = "127.0.0.1:2".parse().unwrap();
        let item = |to, id| Item { to, id, end: 0 };
        // Replies to different clients share the listen socket; requests share a mapping's.
        assert!(item(Some(a), 1).same_socket(&item(Some(b), 2)));
        assert!(item(None, 1).same_socket(&item(None, 1)));
        assert!(!item(None, 1).same_socket(&item(None, 2)));
        assert!(!item(None, 1).same_socket(&item(Some(a), 1)));
        let mut out = Outbox::default();
        for (i, bytes) in [&b"ab"[..], b"", b"cde"].into_iter().enumerate() {
            out.bytes.extend_from_slice(bytes);
            out.items.push(Item {
                to: None,
                id: i,
                end: out.bytes.len(),
            });
        }
        assert_eq!(out.bytes_of(0), b"ab");
        assert_eq!(out.bytes_of(1), b"");
        assert_eq!(out.bytes_of(2), b"cde");
    }
}
