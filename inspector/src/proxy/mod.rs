//! `bitlens proxy`: a live UDP proxy between a game client and its server that shows, records,
//! impairs and mutates the datagrams in flight.
//!
//! ```text
//!  client A ──┐                       ┌─ upstream socket A ──┐
//!  client B ──┼─► --listen socket ─►──┼─ upstream socket B ──┼──► --upstream server
//!  client C ──┘   (one for all)       └─ upstream socket C ──┘
//!                       relay thread: map ─ mutate ─ impair ─ send
//!                              │ Seen (bounded channel)
//!                       sink thread: decode ─ NDJSON ─ pcapng ─ mutation log ─ TUI
//! ```
//!
//! - **Relay** ([`relay`]): one thread polls the listen socket and one connected upstream socket
//!   per client ([`mapping`]: a bounded table whose mappings idle out). A datagram from a client
//!   goes out of its upstream socket; a reply comes back through the listen socket to that
//!   client. Each datagram gets a frame number (1, 2, ... in the order received, both
//!   directions), may be mutated ([`mutate`], by the [`rules`]) and impaired ([`impair`]), and is handed to the
//!   sink as a [`Seen`].
//! - **Sink** ([`output`]): decodes each datagram through the one adapter to decoding
//!   ([`dissect`]) and writes its NDJSON line, its pcapng frame ([`record`]) and its mutation.
//!   The channel between the two is bounded: a sink that cannot keep up slows the relay (the
//!   kernel's socket buffers then drop, as they would for a slow server); nothing queues
//!   without bound.
//! - **Replay** ([`replay`]): the mutated datagrams of a log, rebuilt from their original bytes
//!   and logged edits, sent to a server again.
//!
//! # Guarantees
//! No datagram, from a client or from the server, makes the proxy panic or stop: oversized
//! datagrams are forwarded whole (up to the 65,535 bytes of UDP), socket errors (ICMP port
//! unreachable from a closed server, a full send buffer) are counted (the first refusal is
//! reported at once, the rest in the closing summary), never fatal. Memory is bounded: at most `--max-clients` mappings (the least recently
//! active is evicted), at most `--queue` delayed or held datagrams and 64 MiB of them, a
//! channel of [`CHANNEL`] datagrams to the sink. Ctrl-C (SIGINT) or SIGTERM stops the relay;
//! the sink then writes out what it holds and closes the recording.
//!
//! # What the outputs hold
//! Frame `N` is the same datagram in the NDJSON lines, the recording and the mutation log.
//! Addresses are the client's and the server's (the proxy is transparent in them: a recording
//! decodes with the same `--decode` options as the live session); the bytes are those the
//! proxy forwarded (after mutation), the time is when it received them, to the nanosecond.

pub mod dissect;
pub mod impair;
pub mod mapping;
pub mod mutate;
pub mod output;
pub mod record;
pub mod relay;
pub mod replay;
pub mod rules;
pub mod spec;

use crate::capture::{Datagram, Timestamp};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::net::SocketAddr;
use std::time::Duration;

pub use dissect::SessionDissector;
pub use relay::{Proxy, RelayStats};

/// Datagrams in flight between the relay and the sink.
pub const CHANNEL: usize = 1024;

/// The longest `--idle-timeout`, in seconds: one day. Larger values are refused at start-up.
pub const MAX_IDLE_SECS: f64 = 86_400.0;

/// Which way a datagram goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// From a client to the server.
    ToServer,
    /// From the server to a client.
    ToClient,
}

impl Direction {
    /// `to_server` or `to_client`, as the logs spell it.
    pub fn name(self) -> &'static str {
        match self {
            Direction::ToServer => "to_server",
            Direction::ToClient => "to_client",
        }
    }

    /// Parses [`Direction::name`].
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "to_server" => Some(Direction::ToServer),
            "to_client" => Some(Direction::ToClient),
            _ => None,
        }
    }
}

/// The random draws of one client in one direction: the impairments' and the mutations'
/// streams (two, so that adding a rule never changes the impairment draws).
#[derive(Debug, Clone)]
pub struct Draws {
    /// What [`impair::Impairments::decide`] draws from.
    pub impair: ChaCha8Rng,
    /// What [`mutate::Mutator::mutate`] draws from.
    pub mutate: ChaCha8Rng,
}

/// The random streams of one client: one [`Draws`] per direction, each its own ChaCha stream
/// of the `--seed` key, numbered by the client's place in the run (its mapping: 1 for the
/// first client seen, 2 for the next, ...; a client that idles out and comes back is a new
/// one) and the direction. A client's decisions therefore depend only on the seed, on that
/// number and on its own datagrams of that direction: not on how the replies interleave
/// with the requests, nor on other clients' traffic, nor on the client's port (a game client
/// that restarts on another port draws the same).
#[derive(Debug, Clone)]
pub struct ClientDraws {
    to_server: Draws,
    to_client: Draws,
}

impl ClientDraws {
    /// The streams of the `client`-th client of a run seeded with `seed`.
    pub fn new(seed: u64, client: u64) -> Self {
        let stream = |dir: u64, purpose: u64| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            rng.set_stream(client.wrapping_mul(4) | dir << 1 | purpose);
            rng
        };
        ClientDraws {
            to_server: Draws {
                impair: stream(0, 0),
                mutate: stream(0, 1),
            },
            to_client: Draws {
                impair: stream(1, 0),
                mutate: stream(1, 1),
            },
        }
    }

    /// The streams of one direction.
    pub fn of(&mut self, dir: Direction) -> &mut Draws {
        match dir {
            Direction::ToServer => &mut self.to_server,
            Direction::ToClient => &mut self.to_client,
        }
    }
}

/// The directions an impairment or a rule applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Directions {
    /// Client to server only.
    ToServer,
    /// Server to client only.
    ToClient,
    /// Both ways.
    Both,
}

impl Directions {
    /// Parses `to_server`, `to_client` or `both`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "to_server" => Some(Directions::ToServer),
            "to_client" => Some(Directions::ToClient),
            "both" => Some(Directions::Both),
            _ => None,
        }
    }

    /// The name [`Directions::parse`] reads.
    pub fn name(self) -> &'static str {
        match self {
            Directions::ToServer => "to_server",
            Directions::ToClient => "to_client",
            Directions::Both => "both",
        }
    }

    /// True when `dir` is one of them.
    pub fn contains(self, dir: Direction) -> bool {
        matches!(
            (self, dir),
            (Directions::Both, _)
                | (Directions::ToServer, Direction::ToServer)
                | (Directions::ToClient, Direction::ToClient)
        )
    }
}

/// Everything about the proxy but its outputs.
#[derive(Debug, Clone)]
pub struct Config {
    /// The program's name: messages begin with `PROGRAM proxy:` (`bitlens`, a game's own).
    pub program: String,
    /// Where clients send to.
    pub listen: SocketAddr,
    /// The server.
    pub upstream: SocketAddr,
    /// A mapping without traffic either way for this long is removed.
    pub idle: Duration,
    /// Most clients mapped at once.
    pub max_clients: usize,
    /// Most datagrams delayed or held back at once.
    pub queue: usize,
    /// Bytes of receive and send buffer asked for the listen socket, each way
    /// ([`relay::LISTEN_BUFFER`] by default; forced past the system's cap when the process may:
    /// see [`relay::SocketBuffers`]).
    pub socket_buffer: usize,
    /// Seed of the impairment and mutation draws (see [`ClientDraws`]).
    pub seed: u64,
    /// Drop, duplicate, delay, reorder.
    pub impairments: impair::Impairments,
    /// Mutation rules, in order.
    pub rules: Vec<rules::Rule>,
    /// `--fuzz`.
    pub fuzz: Option<rules::Fuzz>,
}

/// What happened to a datagram on its way.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Fate {
    /// The impairments drawn for it.
    pub decision: impair::Decision,
    /// It should have waited (delay, reorder) but the queue was full: not forwarded.
    pub queue_full: bool,
}

impl Fate {
    /// The names of what happened: the impairments drawn ([`impair::Impairment::name`], in
    /// their order), then `queue_full`.
    pub fn names(&self) -> impl Iterator<Item = &'static str> {
        let decision = self.decision;
        impair::Impairment::ALL
            .into_iter()
            .filter(move |&kind| decision.has(kind))
            .map(impair::Impairment::name)
            .chain(self.queue_full.then_some("queue_full"))
    }

    /// True when the datagram reached its destination (at least once).
    pub fn forwarded(&self) -> bool {
        !self.decision.has(impair::Impairment::Drop) && !self.queue_full
    }
}

/// One datagram the relay received, as the sink sees it.
#[derive(Debug, Clone)]
pub struct Seen {
    /// Its number: 1, 2, ... in the order received, both directions.
    pub frame: u64,
    /// When the proxy received it.
    pub time: Timestamp,
    /// Which way.
    pub direction: Direction,
    /// The client's address.
    pub client: SocketAddr,
    /// The server's address.
    pub server: SocketAddr,
    /// The bytes forwarded (after mutation; as received when dropped).
    pub bytes: Vec<u8>,
    /// Impairments.
    pub fate: Fate,
    /// The mutation, if one was made.
    pub mutation: Option<mutate::Mutation>,
    /// What the transports' sequential pass observed of it
    /// ([`Observation::NONE`](bitlens_codec::observe::Observation::NONE) without a transport):
    /// its dissection needs it.
    pub observed: bitlens_codec::observe::Observation,
}

impl Seen {
    /// Source and destination as recorded: client and server, in the datagram's direction.
    pub fn endpoints(&self) -> (SocketAddr, SocketAddr) {
        match self.direction {
            Direction::ToServer => (self.client, self.server),
            Direction::ToClient => (self.server, self.client),
        }
    }

    /// The datagram as a capture would hold it: its frame, time, endpoints and length.
    pub fn datagram(&self) -> Datagram {
        let (src, dst) = self.endpoints();
        Datagram::detached(self.frame, self.time, src, dst, self.bytes.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    #[test]
    fn each_client_and_direction_has_a_stream_of_its_own() {
        let first = |d: &mut ClientDraws, dir| {
            let draws = d.of(dir);
            (draws.impair.random::<u64>(), draws.mutate.random::<u64>())
        };
        let mut a = ClientDraws::new(7, 1);
        let (s, c) = (
            first(&mut a, Direction::ToServer),
            first(&mut a, Direction::ToClient),
        );
        // Drawing in another order gives each stream the same numbers.
        let mut b = ClientDraws::new(7, 1);
        assert_eq!(first(&mut b, Direction::ToClient), c);
        assert_eq!(first(&mut b, Direction::ToServer), s);
        let all = [
            s.0,
            s.1,
            c.0,
            c.1,
            first(&mut ClientDraws::new(7, 2), Direction::ToServer).0,
            first(&mut ClientDraws::new(8, 1), Direction::ToServer).0,
        ];
        let distinct: std::collections::BTreeSet<_> = all.iter().collect();
        assert_eq!(distinct.len(), all.len(), "{all:?}");
    }
}
