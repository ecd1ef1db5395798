//! The sequential pass: which address pairs are netcode connections, their keys (from the
//! connection request's token, or the key log) and their replay windows.
//!
//! Connections are kept by their two addresses in a fixed order (the lower first), so that a
//! datagram either way finds its connection with one hash of its addresses; the entry holds the
//! connection whose client is the lower address and the one whose client is the higher (two
//! peers can each have asked the other). The hasher is foldhash's, seeded at random per table:
//! captures and live clients choose the addresses, and the table holds at most
//! [`MAX_CONNECTIONS`].

use crate::crypto::{Key, open_packet_in_place, open_token, packet_ad, token_ad};
use crate::keys::ClientKeys;
use crate::token::read_token;
use crate::wire::{
    Header, MAC_BYTES, NONCE_OFFSET, PacketType, TOKEN_BYTES, TOKEN_OFFSET, bytes_at, read_header,
    request_expire_timestamp, request_protocol_id,
};
use bitlens_codec::observe::{Numbered, Observation, Tracker};
use foldhash::fast::RandomState;
use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::ops::Range;
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
    /// Its sequence was received before in this direction (or is older than the window).
    pub replay: bool,
    /// What opening it with [`Seen::key`] gave, when the pass tried.
    pub opened: Option<Opened>,
}

/// What the pass's decryption of an encrypted packet gave (it opens each packet whose key it
/// knows and that is not a replay, as the standard's reader does before it moves the window;
/// the dissection then reads this instead of decrypting again). The bytes live in a buffer that
/// the observations of a whole batch share ([`Tracker::observe_batch`]), so cloning it, and
/// freeing it on another thread, costs no copy and no allocation per packet.
#[derive(Clone)]
pub struct Opened {
    /// The batch's buffer: this packet's sealed bytes and its plaintext among others'.
    bytes: Arc<Vec<u8>>,
    /// Where the bytes opened (ciphertext and MAC) are in `bytes`.
    sealed: Range<usize>,
    /// Where the plaintext is, or `None` when the MAC did not verify with the key.
    plain: Option<Range<usize>>,
}

impl Opened {
    /// What opening `sealed` gave: `plain`, or `None` when it did not open (in a buffer of its
    /// own; the pass puts a batch's in one).
    pub fn new(sealed: &[u8], plain: Option<&[u8]>) -> Self {
        let mut bytes = Vec::with_capacity(sealed.len() + plain.map_or(0, <[u8]>::len));
        bytes.extend_from_slice(sealed);
        let plain = plain.map(|p| {
            bytes.extend_from_slice(p);
            sealed.len()..bytes.len()
        });
        Opened {
            bytes: Arc::new(bytes),
            sealed: 0..sealed.len(),
            plain,
        }
    }

    /// The bytes opened (ciphertext and MAC): the dissection uses [`Opened::plain`] only for
    /// these bytes (the proxy dissects a datagram it changed with the observation of the
    /// datagram as it came).
    pub fn sealed(&self) -> &[u8] {
        &self.bytes[self.sealed.clone()]
    }

    /// The plaintext, or `None` when the MAC did not verify with the key.
    pub fn plain(&self) -> Option<&[u8]> {
        self.plain.clone().map(|r| &self.bytes[r])
    }
}

impl std::fmt::Debug for Opened {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Opened")
            .field("sealed", &self.sealed())
            .field("plain", &self.plain())
            .finish()
    }
}

/// Where a packet the pass opened is in the buffer of its batch ([`Opened`]'s ranges), until
/// the batch ends and the buffer is shared.
#[derive(Clone)]
struct Spot {
    sealed: Range<usize>,
    plain: Option<Range<usize>>,
}

/// Opens the sealed bytes `sealed` of a packet (ciphertext then MAC) with `key`, `sequence`
/// and associated data `ad` into `buf`: appends the sealed bytes, then the plaintext when the
/// MAC verifies; says where they are.
fn open_into(buf: &mut Vec<u8>, key: &Key, sequence: u64, ad: &[u8], sealed: &[u8]) -> Spot {
    let start = buf.len();
    buf.extend_from_slice(sealed);
    let at = buf.len();
    let Some(split) = sealed.len().checked_sub(MAC_BYTES) else {
        return Spot {
            sealed: start..at,
            plain: None,
        };
    };
    let (body, tag) = sealed.split_at(split);
    buf.extend_from_slice(body);
    let opened = open_packet_in_place(key, sequence, ad, &mut buf[at..], tag);
    if !opened {
        buf.truncate(at);
    }
    Spot {
        sealed: start..at,
        plain: opened.then_some(at..buf.len()),
    }
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

    /// True when `seq` was received or is too old.
    fn replayed(&self, seq: u64) -> bool {
        if seq.saturating_add(REPLAY_WINDOW) <= self.newest {
            return true;
        }
        let slot = self.seen[(seq % REPLAY_WINDOW) as usize];
        slot != u64::MAX && slot >= seq
    }

    /// Records `seq` as received (after its packet opened: one that does not open must not
    /// move the window, or a forged packet could make the real one a replay).
    fn advance(&mut self, seq: u64) {
        self.seen[(seq % REPLAY_WINDOW) as usize] = seq;
        self.newest = self.newest.max(seq);
    }
}

struct Connection {
    protocol_id: u64,
    keys: Option<(Key, Key)>,
    /// Client to server, server to client.
    windows: [Window; 2],
}

/// A connection's addresses in the tracker's order (the lower first), and which of the two
/// slots of that key holds the connection whose client is `client`.
fn key_of(client: SocketAddr, server: SocketAddr) -> ((SocketAddr, SocketAddr), usize) {
    if client <= server {
        ((client, server), 0)
    } else {
        ((server, client), 1)
    }
}

/// The connections between two addresses: the one whose client is the lower address, and the
/// one whose client is the higher.
type Slots = [Option<Connection>; 2];

/// The tracker of one stack's ports.
pub struct NetcodeTracker {
    keys: Arc<Keyring>,
    /// By the two addresses, lower first ([`key_of`]).
    connections: HashMap<(SocketAddr, SocketAddr), Slots, RandomState>,
    /// Connections remembered (slots filled).
    len: usize,
    /// (client, server), oldest first.
    order: VecDeque<(SocketAddr, SocketAddr)>,
    /// Observations carry the plaintext opened ([`Tracker::keep_plaintext`]).
    keep_plaintext: bool,
    /// Where a datagram observed alone is opened (kept for the next, so that opening allocates
    /// nothing).
    scratch: Vec<u8>,
    /// The bytes the last batch's packets took in its buffer: the next batch's first guess.
    batch_bytes: usize,
}

impl NetcodeTracker {
    /// A pass with `keys`.
    pub fn new(keys: Arc<Keyring>) -> Self {
        NetcodeTracker {
            keys,
            connections: HashMap::default(),
            len: 0,
            order: VecDeque::new(),
            keep_plaintext: true,
            scratch: Vec::new(),
            batch_bytes: 0,
        }
    }

    /// Forgets the connection of `client` to `server`.
    fn forget(&mut self, client: SocketAddr, server: SocketAddr) {
        let (key, slot) = key_of(client, server);
        if let Some(slots) = self.connections.get_mut(&key) {
            if slots[slot].take().is_some() {
                self.len -= 1;
            }
            if slots.iter().all(Option::is_none) {
                self.connections.remove(&key);
            }
        }
    }

    fn remember(
        &mut self,
        pair: (SocketAddr, SocketAddr),
        protocol_id: u64,
        keys: Option<(Key, Key)>,
    ) {
        let (key, slot) = key_of(pair.0, pair.1);
        if let Some(c) = self
            .connections
            .get_mut(&key)
            .and_then(|slots| slots[slot].as_mut())
        {
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
        while self.len >= MAX_CONNECTIONS {
            let Some((client, server)) = self.order.pop_front() else {
                break;
            };
            self.forget(client, server);
        }
        self.order.push_back(pair);
        self.connections.entry(key).or_default()[slot] = Some(Connection {
            protocol_id,
            keys,
            windows: [Window::new(), Window::new()],
        });
        self.len += 1;
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

impl NetcodeTracker {
    /// What the pass learns of datagram `d` from `from` to `to` (`None`: not a netcode packet
    /// it can read), the packet it opened put in `buf` (where: the [`Spot`]).
    fn note(
        &mut self,
        from: SocketAddr,
        to: SocketAddr,
        d: &[u8],
        buf: &mut Vec<u8>,
    ) -> Option<(Seen, Option<Spot>)> {
        let h = read_header(d).ok()?;
        if h.packet_type == PacketType::ConnectionRequest {
            let id = request_protocol_id(d)?;
            let keys = self.request_keys(from, d);
            self.remember((from, to), id, keys);
            let seen = Seen {
                from_client: Some(true),
                key: None,
                protocol_id: Some(id),
                replay: false,
                opened: None,
            };
            return Some((seen, None));
        }
        // One hash for both ways: the sender as the client first, then as the server.
        let (key, slot) = key_of(from, to);
        if let Some(slots) = self.connections.get_mut(&key) {
            let from_client = slots[slot].is_some();
            let at = if from_client { slot } else { 1 - slot };
            if let Some(c) = slots[at].as_mut() {
                return Some(seen_by(c, from_client, &h, d, buf));
            }
        }
        // A connection whose request was not seen: the key log may know its client.
        let logged = [(from, to, true), (to, from, false)]
            .into_iter()
            .find_map(|(c, s, dir)| Some((c, s, dir, *self.keys.keylog.get(&c)?)));
        let Some((client, server, from_client, k)) = logged else {
            return Some((Seen::default(), None));
        };
        self.remember(
            (client, server),
            k.protocol_id,
            Some((k.client_to_server, k.server_to_client)),
        );
        let (key, slot) = key_of(client, server);
        Some(
            match self
                .connections
                .get_mut(&key)
                .and_then(|slots| slots[slot].as_mut())
            {
                Some(c) => seen_by(c, from_client, &h, d, buf),
                None => (Seen::default(), None),
            },
        )
    }
}

impl Tracker for NetcodeTracker {
    fn observe(&mut self, from: SocketAddr, to: SocketAddr, d: &[u8]) -> Observation {
        let mut buf = std::mem::take(&mut self.scratch);
        buf.clear();
        let noted = self.note(from, to, d, &mut buf);
        let seen = match noted {
            None => Observation::NONE,
            Some((mut seen, spot)) => {
                if self.keep_plaintext {
                    seen.opened =
                        spot.map(|s| Opened::new(&buf[s.sealed], s.plain.map(|p| &buf[p])));
                }
                Observation::new(seen)
            }
        };
        self.scratch = buf;
        seen
    }

    /// The batch's packets are opened into one buffer, which their observations share.
    fn observe_batch(&mut self, batch: &[Numbered<'_>], out: &mut Vec<Observation>) {
        out.reserve(batch.len());
        if !self.keep_plaintext {
            for b in batch {
                out.push(self.observe(b.from, b.to, b.datagram));
            }
            return;
        }
        let mut buf = Vec::with_capacity(self.batch_bytes);
        let noted: Vec<_> = batch
            .iter()
            .map(|b| self.note(b.from, b.to, b.datagram, &mut buf))
            .collect();
        self.batch_bytes = buf.len();
        let bytes = Arc::new(buf);
        // The observations share one allocation too (netcode's datagrams, in order).
        let mut values = Vec::with_capacity(noted.iter().flatten().count());
        for (mut seen, spot) in noted.iter().flatten().cloned() {
            seen.opened = spot.map(|s| Opened {
                bytes: Arc::clone(&bytes),
                sealed: s.sealed,
                plain: s.plain,
            });
            values.push(seen);
        }
        let mut shared = Observation::batch(values);
        out.extend(noted.iter().map(|n| match n {
            None => Observation::NONE,
            Some(_) => shared.next().unwrap_or_default(),
        }));
    }

    fn keep_plaintext(&mut self, keep: bool) {
        self.keep_plaintext = keep;
    }
}

/// What connection `c` knows of datagram `d` (header `h`) of its client (`from_client`) or
/// its server: its key, whether its sequence is a replay, and where in `buf` the pass opened
/// it. As netcode 1.02's reader: a replay is not opened, and the window records a sequence
/// only once its packet opened.
fn seen_by(
    c: &mut Connection,
    from_client: bool,
    h: &Header,
    d: &[u8],
    buf: &mut Vec<u8>,
) -> (Seen, Option<Spot>) {
    let protected = h.packet_type.replay_protected();
    let window = &mut c.windows[usize::from(!from_client)];
    let replay = protected && window.replayed(h.sequence);
    let key = c.keys.map(|(c2s, s2c)| if from_client { c2s } else { s2c });
    let spot = match (key, d.get(h.body_offset()..)) {
        (Some(k), Some(sealed)) if !replay => {
            let ad = packet_ad(c.protocol_id, h.prefix);
            let spot = open_into(buf, &k, h.sequence, &ad, sealed);
            if protected && spot.plain.is_some() {
                window.advance(h.sequence);
            }
            Some(spot)
        }
        _ => None,
    };
    let seen = Seen {
        from_client: Some(from_client),
        key,
        protocol_id: Some(c.protocol_id),
        replay,
        opened: None,
    };
    (seen, spot)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(last: u8, port: u16) -> SocketAddr {
        SocketAddr::from(([10, 0, 0, last], port))
    }

    /// A payload packet with a one-byte sequence, sealed with `key` (protocol id 7).
    fn payload(seq: u8, key: &Key) -> Vec<u8> {
        payload_of(seq, key, 7)
    }

    /// A payload packet with a one-byte sequence, sealed with `key` for protocol id `id`.
    fn payload_of(seq: u8, key: &Key, id: u64) -> Vec<u8> {
        let prefix = 5 | 1 << 4;
        let mut body = vec![seq; 4];
        let mac = crate::crypto::seal_packet(key, seq.into(), &packet_ad(id, prefix), &mut body);
        let mut d = vec![prefix, seq];
        d.extend_from_slice(&body);
        d.extend_from_slice(&mac);
        d
    }

    fn keyring(clients: impl IntoIterator<Item = SocketAddr>) -> Arc<Keyring> {
        let keylog = clients
            .into_iter()
            .enumerate()
            .map(|(i, c)| {
                let k = ClientKeys {
                    protocol_id: 7,
                    client_to_server: [i as u8; 32],
                    server_to_client: [0x80 | i as u8; 32],
                };
                (c, k)
            })
            .collect();
        Arc::new(Keyring {
            keylog,
            ..Keyring::default()
        })
    }

    /// What `t` sees of a payload packet from `from` to `to`, sealed with the key of that
    /// direction in `t`'s key log (the client's or the server's; zeros for a stranger).
    fn seen(t: &mut NetcodeTracker, from: SocketAddr, to: SocketAddr, seq: u8) -> Seen {
        let key = match (t.keys.keylog.get(&from), t.keys.keylog.get(&to)) {
            (Some(k), _) => k.client_to_server,
            (None, Some(k)) => k.server_to_client,
            (None, None) => [0; 32],
        };
        t.observe(from, to, &payload(seq, &key))
            .get::<Seen>()
            .cloned()
            .expect("a netcode datagram")
    }

    #[test]
    fn one_entry_serves_both_directions_with_their_keys_and_windows() {
        let (client, server) = (addr(11, 50001), addr(1, 40000));
        let mut t = NetcodeTracker::new(keyring([client]));
        let up = seen(&mut t, client, server, 1);
        assert_eq!(up.from_client, Some(true));
        assert_eq!(up.key, Some([0; 32]));
        assert!(!up.replay);
        let down = seen(&mut t, server, client, 1);
        assert_eq!(down.from_client, Some(false));
        assert_eq!(down.key, Some([0x80; 32]));
        assert!(!down.replay, "each direction has its own window");
        assert!(seen(&mut t, client, server, 1).replay);
        assert!(seen(&mut t, server, client, 1).replay);
        // A client above its server in address order lands in the entry's other slot.
        let high = addr(200, 60000);
        let mut t = NetcodeTracker::new(keyring([high]));
        assert_eq!(seen(&mut t, server, high, 3).from_client, Some(false));
        assert_eq!(seen(&mut t, high, server, 3).key, Some([0; 32]));
        assert_eq!((t.len, t.connections.len()), (1, 1));
        // Not a known client either way.
        let stranger = seen(&mut t, addr(9, 9), server, 1);
        assert_eq!(stranger.from_client, None);
    }

    #[test]
    fn the_oldest_connection_is_forgotten_beyond_the_limit() {
        let server = addr(1, 40000);
        let clients: Vec<SocketAddr> = (0..=MAX_CONNECTIONS as u32)
            .map(|i| SocketAddr::from(([10, 1, (i >> 8) as u8, i as u8], 50000)))
            .collect();
        let mut t = NetcodeTracker::new(keyring(clients.iter().copied()));
        for &c in &clients {
            assert!(!seen(&mut t, c, server, 9).replay);
        }
        assert_eq!(t.len, MAX_CONNECTIONS);
        assert_eq!(t.connections.len(), MAX_CONNECTIONS);
        // The first was forgotten: its window starts afresh; the second's still holds 9.
        assert!(!seen(&mut t, clients[0], server, 9).replay);
        assert!(seen(&mut t, clients[2], server, 9).replay);
        assert_eq!(t.len, MAX_CONNECTIONS);
    }

    #[test]
    fn a_window_refuses_repeats_and_the_too_old() {
        let mut w = Window::new();
        // Received: checked, then recorded.
        let mut received = |seq: u64| {
            let r = w.replayed(seq);
            if !r {
                w.advance(seq);
            }
            r
        };
        assert!(!received(0));
        assert!(received(0));
        assert!(!received(5));
        assert!(!received(3), "late but new");
        assert!(received(3));
        assert!(!received(1000));
        assert!(received(1000 - 256), "older than the window");
        assert!(!received(1000 - 255));
        assert!(!received(u64::MAX - 1));
        assert!(received(u64::MAX - 1));
    }

    #[test]
    fn a_packet_that_does_not_open_leaves_the_window_alone() {
        let (client, server) = (addr(11, 50001), addr(1, 40000));
        let mut t = NetcodeTracker::new(keyring([client]));
        // Sequence 9 sealed with a wrong key, twice, and a forged far-ahead sequence: none
        // opens, none is a replay, and none moves the window.
        for seq in [9, 9, 250] {
            let s = t
                .observe(client, server, &payload(seq, &[0x55; 32]))
                .get::<Seen>()
                .cloned()
                .expect("a netcode datagram");
            assert!(!s.replay, "sequence {seq}");
            let o = s.opened.expect("the key is known: the pass tried");
            assert_eq!(o.plain(), None);
        }
        // The real 9 and an old one then open; the real 9 again is a replay.
        let real = seen(&mut t, client, server, 9);
        assert!(!real.replay);
        assert_eq!(
            real.opened.as_ref().and_then(Opened::plain),
            Some(&[9u8; 4][..])
        );
        assert!(!seen(&mut t, client, server, 1).replay);
        let again = seen(&mut t, client, server, 9);
        assert!(again.replay);
        assert!(again.opened.is_none(), "a replay is not opened");
    }

    #[test]
    fn without_its_plaintext_an_observation_decides_the_same() {
        let (client, server) = (addr(11, 50001), addr(1, 40000));
        let mut t = NetcodeTracker::new(keyring([client]));
        t.keep_plaintext(false);
        // A forged packet does not move the window, the real one does, and nothing opened is
        // carried on.
        let forged = t
            .observe(client, server, &payload(9, &[0x55; 32]))
            .get::<Seen>()
            .cloned()
            .expect("a netcode datagram");
        assert!(!forged.replay && forged.opened.is_none());
        let real = seen(&mut t, client, server, 9);
        assert!(!real.replay && real.opened.is_none());
        assert!(real.key.is_some(), "the key is still handed on");
        assert!(seen(&mut t, client, server, 9).replay);
        t.keep_plaintext(true);
        let next = seen(&mut t, client, server, 10);
        assert_eq!(
            next.opened.as_ref().and_then(Opened::plain),
            Some(&[10u8; 4][..])
        );
    }

    /// A connection request with protocol id `id` (its token is not read without the private
    /// key: the key log gives the keys).
    fn request(id: u64) -> Vec<u8> {
        let mut d = vec![0u8];
        d.extend_from_slice(crate::wire::VERSION_INFO);
        d.extend_from_slice(&id.to_le_bytes());
        d.resize(crate::wire::REQUEST_BYTES, 0);
        d
    }

    /// What an observation says, the bytes it opened included (`None`: not netcode's).
    type Said = Option<(
        Option<bool>,
        Option<Key>,
        Option<u64>,
        bool,
        Option<(Vec<u8>, Option<Vec<u8>>)>,
    )>;

    fn said(o: &Observation) -> Said {
        let s = o.get::<Seen>()?;
        let opened = s
            .opened
            .as_ref()
            .map(|o| (o.sealed().to_vec(), o.plain().map(<[u8]>::to_vec)));
        Some((s.from_client, s.key, s.protocol_id, s.replay, opened))
    }

    /// A batch's observations are those of the same datagrams one by one, whatever the batch's
    /// size: with a forged packet and then the real one of the same sequence in a batch, and a
    /// request (a new session on the same addresses) and its first payload packets in one; and
    /// a batch's plaintexts are in one buffer.
    #[test]
    fn a_batch_decides_as_datagram_by_datagram() {
        let (client, server) = (addr(11, 50001), addr(1, 40000));
        let keys = keyring([client]);
        let (up, down) = ([0u8; 32], [0x80u8; 32]);
        let datagrams: Vec<(SocketAddr, SocketAddr, Vec<u8>)> = vec![
            (client, server, payload(9, &[0x55; 32])), // forged: not opened, window unmoved
            (client, server, payload(9, &up)),         // the real 9 opens
            (server, client, payload(9, &down)),       // the other way's own window
            (client, server, payload(9, &up)),         // a replay
            (client, server, vec![0x15, 1, 2]),        // too short: not netcode's
            (client, server, request(8)),              // a new session: protocol id 8
            (client, server, payload_of(9, &up, 8)),   // 9 again, new window: opens
            (client, server, payload(10, &up)),        // sealed for the old id: MAC fails
            (client, server, payload_of(10, &up, 8)),  // the real 10
            (client, server, payload_of(9, &up, 8)),   // a replay in the new session
            (addr(9, 9), server, payload(1, &up)),     // a stranger
        ];
        let mut one = NetcodeTracker::new(Arc::clone(&keys));
        let want: Vec<Said> = datagrams
            .iter()
            .map(|(f, t, d)| said(&one.observe(*f, *t, d)))
            .collect();
        let opens = |i: usize| {
            want[i]
                .as_ref()
                .and_then(|w| w.4.as_ref())
                .map(|o| o.1.is_some())
        };
        let replay = |i: usize| want[i].as_ref().is_some_and(|w| w.3);
        assert_eq!(opens(0), Some(false));
        assert!(
            !replay(1) && opens(1) == Some(true),
            "the forged 9 moved no window"
        );
        assert!(!replay(2) && opens(2) == Some(true));
        assert!(replay(3) && opens(3).is_none(), "a replay is not opened");
        assert!(want[4].is_none());
        assert_eq!(want[5].as_ref().and_then(|w| w.2), Some(8));
        assert!(
            !replay(6) && opens(6) == Some(true),
            "the request reset the windows"
        );
        assert!(!replay(7) && opens(7) == Some(false));
        assert!(!replay(8) && opens(8) == Some(true));
        assert!(replay(9));
        assert_eq!(want[10].as_ref().map(|w| w.0), Some(None));
        for size in [1, 2, 3, 5, datagrams.len()] {
            let mut t = NetcodeTracker::new(Arc::clone(&keys));
            let mut got = Vec::new();
            for chunk in datagrams.chunks(size) {
                let batch: Vec<Numbered<'_>> = chunk
                    .iter()
                    .zip(1..)
                    .map(|((from, to, d), number)| Numbered {
                        number,
                        from: *from,
                        to: *to,
                        datagram: d,
                    })
                    .collect();
                let before = got.len();
                t.observe_batch(&batch, &mut got);
                assert_eq!(got.len() - before, chunk.len());
                // One buffer for the batch's packets.
                let buffers: Vec<&Arc<Vec<u8>>> = got[before..]
                    .iter()
                    .filter_map(|o| Some(&o.get::<Seen>()?.opened.as_ref()?.bytes))
                    .collect();
                assert!(buffers.windows(2).all(|w| Arc::ptr_eq(w[0], w[1])));
            }
            let got: Vec<Said> = got.iter().map(said).collect();
            assert_eq!(got, want, "batches of {size}");
        }
        // Without the plaintext, the same decisions and nothing opened carried.
        let mut t = NetcodeTracker::new(keys);
        t.keep_plaintext(false);
        let batch: Vec<Numbered<'_>> = datagrams
            .iter()
            .map(|(from, to, d)| Numbered {
                number: 0,
                from: *from,
                to: *to,
                datagram: d,
            })
            .collect();
        let mut got = Vec::new();
        t.observe_batch(&batch, &mut got);
        let bare = |w: &Said| w.clone().map(|(a, b, c, d, _)| (a, b, c, d, None));
        let got: Vec<Said> = got.iter().map(said).collect();
        assert_eq!(got, want.iter().map(bare).collect::<Vec<_>>());
    }
}
