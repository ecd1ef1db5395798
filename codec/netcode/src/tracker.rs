//! The sequential pass: which address pairs are netcode connections, their keys (from the
//! connection request's token, or the key log) and their replay windows.

use crate::crypto::{Key, open_token, token_ad};
use crate::keys::ClientKeys;
use crate::token::read_token;
use crate::wire::{
    NONCE_OFFSET, PacketType, TOKEN_BYTES, TOKEN_OFFSET, bytes_at, read_header,
    request_expire_timestamp, request_protocol_id,
};
use bitlens_codec::observe::{Observation, Tracker};
use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::Arc;

/// Connections (address pairs) remembered at most; the oldest is forgotten first.
pub const MAX_CONNECTIONS: usize = 4096;
/// Replay window: sequences this far behind the newest are replays (the standard's guide).
pub const REPLAY_WINDOW: u64 = 256;

/// Where the keys come from.
#[derive(Default)]
pub struct Keyring {
    /// The server's private key (decrypts connect tokens).
    pub private_key: Option<Key>,
    /// Key log lines by client address.
    pub keylog: HashMap<SocketAddr, ClientKeys>,
    /// The protocol id the server expects, if given.
    pub protocol_id: Option<u64>,
}

impl Keyring {
    /// True when some key was given: then a packet of an unknown connection is worth a reason.
    pub fn any(&self) -> bool {
        self.private_key.is_some() || !self.keylog.is_empty()
    }
}

/// What the pass knew when a datagram went by (an [`Observation`]'s content).
#[derive(Debug, Clone, Default)]
pub struct Seen {
    /// Sent by the client of a known connection (`Some(true)`), by its server (`Some(false)`),
    /// or not known.
    pub from_client: Option<bool>,
    /// The key for this direction, when known.
    pub key: Option<Key>,
    /// The connection's protocol id (from its request or key log line).
    pub protocol_id: Option<u64>,
    /// Its sequence was seen before in this direction (or is older than the window).
    pub replay: bool,
}

/// A replay window: the newest sequence and the last 256 by their low bits.
struct Window {
    newest: u64,
    seen: Box<[u64; REPLAY_WINDOW as usize]>,
}

impl Window {
    fn new() -> Self {
        Window {
            newest: 0,
            seen: Box::new([u64::MAX; REPLAY_WINDOW as usize]),
        }
    }

    /// True when `seq` was seen or is too old; records it otherwise.
    fn replayed(&mut self, seq: u64) -> bool {
        if seq.saturating_add(REPLAY_WINDOW) <= self.newest {
            return true;
        }
        let slot = &mut self.seen[(seq % REPLAY_WINDOW) as usize];
        if *slot != u64::MAX && *slot >= seq {
            return true;
        }
        *slot = seq;
        self.newest = self.newest.max(seq);
        false
    }
}

struct Connection {
    protocol_id: u64,
    keys: Option<(Key, Key)>,
    /// Client to server, server to client.
    windows: [Window; 2],
}

/// The tracker of one stack's ports.
pub struct NetcodeTracker {
    keys: Arc<Keyring>,
    /// By (client, server).
    connections: HashMap<(SocketAddr, SocketAddr), Connection>,
    order: VecDeque<(SocketAddr, SocketAddr)>,
}

impl NetcodeTracker {
    /// A pass with `keys`.
    pub fn new(keys: Arc<Keyring>) -> Self {
        NetcodeTracker {
            keys,
            connections: HashMap::new(),
            order: VecDeque::new(),
        }
    }

    fn remember(
        &mut self,
        pair: (SocketAddr, SocketAddr),
        protocol_id: u64,
        keys: Option<(Key, Key)>,
    ) {
        if let Some(c) = self.connections.get_mut(&pair) {
            if c.keys != keys || c.protocol_id != protocol_id {
                // A new token for the same addresses: a new session, new sequences.
                *c = Connection {
                    protocol_id,
                    keys,
                    windows: [Window::new(), Window::new()],
                };
            }
            return;
        }
        while self.connections.len() >= MAX_CONNECTIONS {
            let Some(old) = self.order.pop_front() else {
                break;
            };
            self.connections.remove(&old);
        }
        self.order.push_back(pair);
        self.connections.insert(
            pair,
            Connection {
                protocol_id,
                keys,
                windows: [Window::new(), Window::new()],
            },
        );
    }

    /// The keys a connection request reveals: its token's, with the private key; else the key
    /// log's line for the client.
    fn request_keys(&self, from: SocketAddr, d: &[u8]) -> Option<(Key, Key)> {
        let id = request_protocol_id(d)?;
        if let Some(key) = &self.keys.private_key {
            let nonce = bytes_at::<24>(d, NONCE_OFFSET)?;
            let ad = token_ad(id, request_expire_timestamp(d)?);
            let sealed = d.get(TOKEN_OFFSET..TOKEN_OFFSET + TOKEN_BYTES)?;
            if let Some(t) = open_token(key, &nonce, &ad, sealed).and_then(|p| read_token(&p).ok())
            {
                return Some((t.client_to_server, t.server_to_client));
            }
        }
        self.keys
            .keylog
            .get(&from)
            .map(|k| (k.client_to_server, k.server_to_client))
    }
}

impl Tracker for NetcodeTracker {
    fn observe(&mut self, from: SocketAddr, to: SocketAddr, d: &[u8]) -> Observation {
        let Ok(h) = read_header(d) else {
            return Observation::NONE;
        };
        if h.packet_type == PacketType::ConnectionRequest {
            let Some(id) = request_protocol_id(d) else {
                return Observation::NONE;
            };
            let keys = self.request_keys(from, d);
            self.remember((from, to), id, keys);
            return Observation::new(Seen {
                from_client: Some(true),
                key: None,
                protocol_id: Some(id),
                replay: false,
            });
        }
        let mut pair = if self.connections.contains_key(&(from, to)) {
            Some(((from, to), true))
        } else if self.connections.contains_key(&(to, from)) {
            Some(((to, from), false))
        } else {
            None
        };
        if pair.is_none() {
            // A connection whose request was not seen: the key log may know its client.
            let logged = [(from, to, true), (to, from, false)]
                .into_iter()
                .find_map(|(c, s, dir)| Some((c, s, dir, *self.keys.keylog.get(&c)?)));
            if let Some((c, s, dir, k)) = logged {
                self.remember(
                    (c, s),
                    k.protocol_id,
                    Some((k.client_to_server, k.server_to_client)),
                );
                pair = Some(((c, s), dir));
            }
        }
        let Some((pair, from_client)) = pair else {
            return Observation::new(Seen::default());
        };
        let Some(c) = self.connections.get_mut(&pair) else {
            return Observation::new(Seen::default());
        };
        let replay = h.packet_type.replay_protected()
            && c.windows[usize::from(!from_client)].replayed(h.sequence);
        let key = c.keys.map(|(c2s, s2c)| if from_client { c2s } else { s2c });
        Observation::new(Seen {
            from_client: Some(from_client),
            key,
            protocol_id: Some(c.protocol_id),
            replay,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_refuses_repeats_and_the_too_old() {
        let mut w = Window::new();
        assert!(!w.replayed(0));
        assert!(w.replayed(0));
        assert!(!w.replayed(5));
        assert!(!w.replayed(3), "late but new");
        assert!(w.replayed(3));
        assert!(!w.replayed(1000));
        assert!(w.replayed(1000 - 256), "older than the window");
        assert!(!w.replayed(1000 - 255));
        assert!(!w.replayed(u64::MAX - 1));
        assert!(w.replayed(u64::MAX - 1));
    }
}
