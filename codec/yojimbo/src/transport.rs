//! The yojimbo layer as a bitlens [`Transport`]: `--decode PORT=yojimbo`. yojimbo always runs
//! over netcode, so the layer owns a [`Netcode`] transport (with its keys) and reads what is
//! inside each decrypted type-5 payload: the reliable.io header or fragment, the connection
//! packet (with a [`Config`]), reassembled packets and blocks.
//!
//! - The sequential pass ([`Transport::tracker`]) runs netcode's pass, and for every payload
//!   packet whose keys it knows decrypts it (in capture order: reassembly needs it) and feeds
//!   it to a bounded [`Connections`] (one [`Receiver`](crate::Receiver) per client, server and
//!   direction; a netcode disconnect ends that direction's receiver). The observation of a
//!   datagram carries netcode's observation and what reassembly found on it: the connection
//!   packet it completed (its bytes and datagrams), the blocks it completed, the notes
//!   (duplicates, resends, inconsistent or incomplete fragments).
//! - The per-datagram reading ([`Transport::unwrap`], pure) is netcode's (its header entries
//!   and MAC), then the `yojimbo` scope inside netcode's payload: `yojimbo.reliable.*`, the
//!   connection packet's fields (`yojimbo.entries[0].messages[1].body.sequence`), and on the
//!   datagram that completed them, the reassembled packet (scope `yojimbo.reassembled`) and
//!   each complete block (scope `yojimbo.blocks[i]`: channel, message id and type, the
//!   datagrams it came from, its body's fields, its bytes), and `yojimbo.notes[i]`.
//!
//! Bit offsets: the reliable header and a regular packet's fields are in datagram coordinates
//! (plaintext byte `i` where ciphertext byte `i` was). A reassembled packet and a block were
//! not read from this datagram's bytes: their entries are numbered after the datagram's own
//! bits (from `8 * datagram length` on, the packet first, then the blocks), like a second byte
//! source (Wireshark's "Reassembled" tab), so that no entry claims bits of this datagram.
//!
//! Status: netcode's failures and its [`Status::Encrypted`] win (the problem's layer is
//! `netcode`); a reliable.io or connection packet refusal is the datagram's error, its field
//! `yojimbo.` + the refused field and its bit; a fragment that does not complete its packet is
//! ok, of type `yojimbo.fragment K of N`. Without a configuration the reliable.io header is
//! read (with the crate's largest limits and yojimbo's 1024-byte fragments) and the payload's
//! status is [`Status::Encrypted`] with the reason [`NO_CONFIG`] (a want of what the reader
//! knows, as netcode's missing key: not an error of the traffic).

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::Arc;

use bitlens_codec::dissect::{Carried, Problem, Status, intern};
use bitlens_codec::observe::{Numbered, Observation, Tracker};
use bitlens_codec::transport::{Transport, Unwrapped};
use bitlens_codec::{FieldKind, ReadStream, TraceField, TraceStream, Value};
use bitlens_netcode::Netcode;

use crate::config::{Config, ConfigError, MAX_PACKET_FRAGMENTS, MAX_PACKET_SIZE, ReliableConfig};
use crate::connections::Connections;
use crate::error::{Refusal, RefusalKind};
use crate::packet;
use crate::receiver::{CompleteBlock, Note};
use crate::reliable::{self, Reliable};

/// The name of the layer: `--decode PORT=yojimbo`, and the first segment of its fields.
pub const NAME: &str = "yojimbo";

/// Why a payload is not read past its reliable.io header without a configuration.
pub const NO_CONFIG: &str = "no yojimbo configuration (channels, message types): give --schema \
                             with a [yojimbo] section";

/// netcode's payload packet type (type 5) and disconnect packet type (type 6).
const PAYLOAD: u8 = 5;
const DISCONNECT: u8 = 6;

/// reliable.io's limits without a configuration: the largest this crate allows, with yojimbo's
/// default fragment size (a fragment of another size is refused).
const UNCONFIGURED: ReliableConfig = ReliableConfig {
    max_packet_size: MAX_PACKET_SIZE,
    fragment_size: 1024,
    max_fragments: MAX_PACKET_FRAGMENTS,
};

/// The yojimbo transport: netcode with its keys underneath, and the connection's configuration
/// (channels and message types) when it is known.
#[derive(Clone)]
pub struct Yojimbo {
    netcode: Netcode,
    config: Option<Arc<Config>>,
}

impl std::fmt::Debug for Yojimbo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Yojimbo")
            .field("netcode", &self.netcode)
            .field("configured", &self.config.is_some())
            .finish()
    }
}

impl Yojimbo {
    /// yojimbo over `netcode` (which holds the keys), reading connection packets with `config`
    /// (`None`: the reliable.io header only, and [`NO_CONFIG`] as the reason).
    ///
    /// # Errors
    /// The configuration's first invalid setting ([`Config::validate`]).
    pub fn new(netcode: Netcode, config: Option<Arc<Config>>) -> Result<Self, ConfigError> {
        if let Some(c) = &config {
            c.validate()?;
        }
        Ok(Yojimbo { netcode, config })
    }

    /// The netcode layer underneath.
    pub fn netcode(&self) -> &Netcode {
        &self.netcode
    }

    /// The configuration, if one was given.
    pub fn config(&self) -> Option<&Arc<Config>> {
        self.config.as_ref()
    }

    fn reliable_config(&self) -> ReliableConfig {
        self.config.as_ref().map_or(UNCONFIGURED, |c| c.reliable)
    }
}

/// What the sequential pass found on one datagram (the content of its [`Observation`]).
struct Seen {
    /// netcode's observation.
    netcode: Observation,
    /// What reassembly found, for a payload packet that was decrypted under a configuration.
    found: Option<Found>,
}

/// What reassembly found on one datagram.
#[derive(Clone)]
struct Found {
    /// The fragmented connection packet this datagram completed: its reliable sequence, bytes
    /// and datagrams.
    reassembled: Option<(u16, Vec<u8>, Vec<u64>)>,
    /// The blocks it completed.
    blocks: Vec<CompleteBlock>,
    /// What else was noticed on it (including what a connection ended or given up held).
    notes: Vec<Note>,
}

/// Connections by (sender, receiver).
type Key = (SocketAddr, SocketAddr);

/// The sequential pass of [`Yojimbo`].
struct YojimboTracker {
    netcode: Netcode,
    inner: Box<dyn Tracker>,
    connections: Option<Connections<Key>>,
    /// Datagrams seen, for numbering when the tools give no number.
    count: u64,
    /// Observations carry netcode's plaintext ([`Tracker::keep_plaintext`]; reassembly reads
    /// it here either way).
    keep_plaintext: bool,
}

impl YojimboTracker {
    /// Reassembly's part of the pass over datagram `d` (number `number`, from `from` to `to`),
    /// whose netcode observation is `netcode` (the plaintext it reads): yojimbo's observation.
    fn reassemble(
        &mut self,
        number: u64,
        from: SocketAddr,
        to: SocketAddr,
        d: &[u8],
        netcode: Observation,
    ) -> Observation {
        let kind = d.first().map(|p| p & 0x0f);
        let found = match (&mut self.connections, kind) {
            (Some(c), Some(PAYLOAD | DISCONNECT)) => {
                let u = self.netcode.unwrap(d, &netcode, false);
                match (u.status, u.payload) {
                    (Status::Ok, Some(plain)) => {
                        let r = c.receive(&(from, to), number, &plain.bytes);
                        let mut notes = r.notes;
                        for (_, held) in c.take_evicted() {
                            notes.extend(held);
                        }
                        let reassembled = match (r.reassembled, r.packet) {
                            (Some(bytes), Some(p)) => Some((p.sequence, bytes, p.datagrams)),
                            _ => None,
                        };
                        Some(Found {
                            reassembled,
                            blocks: r.blocks,
                            notes,
                        })
                    }
                    // A verified disconnect ends both directions: what they still held is
                    // reported incomplete here.
                    (Status::Ok, None) if kind == Some(DISCONNECT) => {
                        let mut notes = c.end(&(from, to)).unwrap_or_default();
                        notes.extend(c.end(&(to, from)).unwrap_or_default());
                        Some(Found {
                            reassembled: None,
                            blocks: Vec::new(),
                            notes,
                        })
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        let netcode = if self.keep_plaintext {
            netcode
        } else {
            bitlens_netcode::without_plaintext(netcode)
        };
        Observation::new(Seen { netcode, found })
    }
}

impl Tracker for YojimboTracker {
    fn observe(&mut self, from: SocketAddr, to: SocketAddr, datagram: &[u8]) -> Observation {
        let n = self.count + 1;
        self.observe_numbered(n, from, to, datagram)
    }

    fn observe_numbered(
        &mut self,
        number: u64,
        from: SocketAddr,
        to: SocketAddr,
        d: &[u8],
    ) -> Observation {
        self.count = number;
        let netcode = self.inner.observe_numbered(number, from, to, d);
        self.reassemble(number, from, to, d, netcode)
    }

    /// netcode's pass over the batch first (its plaintexts in one buffer), then reassembly
    /// datagram by datagram, in order, as [`Tracker::observe_numbered`] does.
    fn observe_batch(&mut self, batch: &[Numbered<'_>], out: &mut Vec<Observation>) {
        let mut netcode = Vec::with_capacity(batch.len());
        self.inner.observe_batch(batch, &mut netcode);
        out.reserve(batch.len());
        for (b, n) in batch.iter().zip(netcode) {
            self.count = b.number;
            out.push(self.reassemble(b.number, b.from, b.to, b.datagram, n));
        }
    }

    fn keep_plaintext(&mut self, keep: bool) {
        // netcode's pass keeps its plaintext for reassembly here, which drops it after.
        self.keep_plaintext = keep;
    }

    /// What each connection still held in reassembly: each block on a line of its own
    /// (`yojimbo FROM -> TO: block of message 251 on channel 1 incomplete: 3 of 9 fragments
    /// arrived, in datagrams ...`), the fragmented connection packets in one count per
    /// connection (a lossy link loses many, each resent as messages, not as the packet).
    fn finish(&mut self) -> Vec<String> {
        let Some(c) = &mut self.connections else {
            return Vec::new();
        };
        let mut lines = Vec::new();
        for ((from, to), notes) in c.finish() {
            let mut packets = Vec::new();
            for n in notes {
                match n {
                    Note::PacketIncomplete { sequence, .. } => packets.push(u64::from(sequence)),
                    other => lines.push(format!("yojimbo {from} -> {to}: {}", note_text(&other))),
                }
            }
            match packets.len() {
                0 => {}
                1 => lines.push(format!(
                    "yojimbo {from} -> {to}: fragmented packet {} incomplete",
                    packets[0]
                )),
                n => lines.push(format!(
                    "yojimbo {from} -> {to}: {n} fragmented packets incomplete (sequences {})",
                    numbers(&packets)
                )),
            }
        }
        lines
    }
}

/// The snake-case name of a refusal's rule, for [`Problem::kind`].
fn kind_name(k: &RefusalKind) -> &'static str {
    use RefusalKind as K;
    match k {
        K::Wire(w) => w.name(),
        K::TooManyEntries { .. } => "too_many_entries",
        K::ChannelIndex { .. } => "channel_index",
        K::MessageCount { .. } => "message_count",
        K::BlocksDisabled { .. } => "blocks_disabled",
        K::FragmentId { .. } => "block_fragment_id",
        K::FragmentCount { .. } => "block_fragment_count",
        K::NotABlockMessage { .. } => "not_a_block_message",
        K::Body { .. } => "body",
        K::BlockOnUnreliableChannel { .. } => "block_on_unreliable_channel",
        K::EmptyPacket => "empty_packet",
        K::ReliableTooShort { .. } => "reliable_too_short",
        K::FragmentPrefix { .. } => "fragment_prefix",
        K::PacketFragmentCount { .. } => "packet_fragment_count",
        K::PacketFragmentId { .. } => "packet_fragment_id",
        K::FragmentSequence { .. } => "fragment_sequence",
        K::NonCanonicalHeader => "non_canonical_header",
        K::FragmentSize { .. } => "fragment_size",
        K::PacketTooLarge { .. } => "packet_too_large",
    }
}

/// A refusal as the datagram's problem: `yojimbo.` + its field, its bit moved by `base`.
fn refused(r: &Refusal, base: usize) -> Problem {
    let field = if r.field.is_empty() {
        NAME.to_owned()
    } else {
        format!("{NAME}.{}", r.field)
    };
    Problem {
        kind: kind_name(&r.kind),
        bit: base + r.bit,
        message: format!("{field}: {}", r.rule()),
        field,
    }
}

/// A list of datagram numbers, for people: `34, 37`.
fn numbers(ds: &[u64]) -> String {
    let mut s = String::new();
    for (i, d) in ds.iter().enumerate() {
        let _ = write!(s, "{}{d}", if i == 0 { "" } else { ", " });
    }
    s
}

/// `n word` or `n words`: `1 byte`, `2 bytes`.
fn count(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

/// The datagrams something came in, in words: `datagram 5`, `datagrams 5, 7`.
fn in_datagrams(ds: &[u64]) -> String {
    match ds {
        [] => "no datagram".to_owned(),
        [d] => format!("datagram {d}"),
        _ => format!("datagrams {}", numbers(ds)),
    }
}

/// A note in words.
pub fn note_text(n: &Note) -> String {
    match n {
        Note::DuplicatePacket { sequence } => {
            format!("packet {sequence} was received before: shown, not applied")
        }
        Note::StalePacket { sequence } => {
            format!("packet {sequence} is older than the received window: shown, not applied")
        }
        Note::DuplicateFragment {
            sequence,
            fragment_id,
        } => format!("fragment {fragment_id} of packet {sequence} was received before"),
        Note::FragmentOfReceivedPacket {
            sequence,
            fragment_id,
        } => format!("fragment {fragment_id} of packet {sequence}, received whole already"),
        Note::InconsistentFragment {
            sequence,
            fragment_id,
            why,
        } => format!("fragment {fragment_id} of packet {sequence} is inconsistent: {why}"),
        Note::PacketIncomplete {
            sequence,
            num_fragments,
            received,
            datagrams,
        } => format!(
            "packet {sequence} incomplete: {} of {num_fragments} fragments arrived, in {}",
            received.len(),
            in_datagrams(datagrams)
        ),
        Note::DuplicateBlockFragment {
            channel,
            message_id,
            fragment_id,
        } => format!(
            "block fragment {fragment_id} of message {message_id} on channel {channel} was \
             received before"
        ),
        Note::FragmentOfCompleteBlock {
            channel,
            message_id,
            fragment_id,
        } => format!(
            "block fragment {fragment_id} of message {message_id} on channel {channel}: the \
             block is complete already (a resend)"
        ),
        Note::InconsistentBlockFragment {
            channel,
            message_id,
            fragment_id,
            why,
        } => format!(
            "block fragment {fragment_id} of message {message_id} on channel {channel} is \
             inconsistent: {why}"
        ),
        Note::BlockIncomplete {
            channel,
            message_id,
            num_fragments,
            received,
            datagrams,
        } => format!(
            "block of message {message_id} on channel {channel} incomplete: {} of \
             {num_fragments} fragments arrived, in {}",
            received.len(),
            in_datagrams(datagrams)
        ),
    }
}

/// Moves traced fields under `prefix` (`yojimbo`), `depth` deeper and `base` bits later.
fn moved(
    fields: Vec<TraceField>,
    prefix: &str,
    depth: usize,
    base: usize,
    out: &mut Vec<TraceField>,
) {
    for f in fields {
        let path = format!("{prefix}.{}", f.path());
        let mut g = TraceField::new(
            &path,
            f.depth + depth,
            f.bit + base,
            f.bits,
            f.value,
            f.kind,
        );
        g.raw = f.raw;
        g.range = f.range;
        g.failed = f.failed;
        out.push(g);
    }
}

/// A hand-made entry of the layer.
fn entry(
    path: &str,
    depth: usize,
    bit: usize,
    bits: usize,
    value: Value,
    scope: bool,
) -> TraceField {
    let kind = if scope {
        FieldKind::Scope
    } else {
        FieldKind::Value
    };
    TraceField::new(path, depth, bit, bits, value, kind)
}

/// What one datagram's yojimbo part is made into: the entries and the verdict.
struct Reading<'a> {
    cfg: Option<&'a Config>,
    record: bool,
    fields: Vec<TraceField>,
    problem: Option<Problem>,
    packet_type: &'static str,
}

impl Reading<'_> {
    /// Reads (and with `record`, traces) a connection packet whose bit 0 is datagram bit
    /// `base`, under `prefix`, `depth` deep.
    fn connection(&mut self, cfg: &Config, bytes: &[u8], sequence: u16, base: usize, depth: usize) {
        let result = if bytes.is_empty() {
            Err(Refusal::new(RefusalKind::EmptyPacket, 0, "num_entries"))
        } else if self.record {
            let (r, t) = packet::trace(cfg, bytes, sequence);
            moved(t.fields.into_vec(), NAME, depth, base, &mut self.fields);
            r
        } else {
            packet::read(cfg, bytes, sequence)
        };
        if let Err(e) = result {
            self.problem.get_or_insert(refused(&e, base));
        }
    }

    /// A complete block as the scope `yojimbo.blocks[i]` (inside the scope `yojimbo.blocks`),
    /// its entries from bit `at` on; the bit after them.
    fn block(&mut self, i: usize, b: &CompleteBlock, at: usize) -> usize {
        let Some(cfg) = self.cfg else {
            return at;
        };
        let name = cfg
            .message_types
            .get(b.message_type as usize)
            .map_or("?", |t| t.name.as_str());
        let p = format!("{NAME}.blocks[{i}]");
        let total = b.body.len + b.data.len() * 8;
        let summary = format!(
            "channel {}, message {} ({name}), {} from {}",
            b.channel,
            b.message_id,
            count(b.data.len(), "byte"),
            in_datagrams(&b.datagrams)
        );
        self.fields
            .push(entry(&p, 2, at, total, Value::Str(summary), true));
        let int = |v: i128| Value::Int(v);
        for (f, v) in [
            ("channel", int(b.channel as i128)),
            ("message_id", int(b.message_id.into())),
            ("type", int(b.message_type.into())),
            ("type_name", Value::Str(name.to_owned())),
            ("datagrams", Value::Str(numbers(&b.datagrams))),
        ] {
            self.fields
                .push(entry(&format!("{p}.{f}"), 3, at, 0, v, false));
        }
        let body = format!("{p}.body");
        self.fields
            .push(entry(&body, 3, at, b.body.len, Value::None, true));
        if let Some(t) = cfg.message_types.get(b.message_type as usize) {
            let mut s = TraceStream::new(&b.body.data);
            let r = t.body.trace(&mut s);
            moved(
                s.into_trace(r).fields.into_vec(),
                &body,
                4,
                at,
                &mut self.fields,
            );
        }
        let data_at = at + b.body.len;
        self.fields.push(entry(
            &format!("{p}.data"),
            3,
            data_at,
            b.data.len() * 8,
            Value::Bytes(b.data.clone()),
            false,
        ));
        data_at + b.data.len() * 8
    }
}

impl Yojimbo {
    /// The yojimbo part of a decrypted payload at byte `offset` of a datagram of `len` bytes.
    fn read(
        &self,
        plain: &[u8],
        offset: usize,
        len: usize,
        found: Option<&Found>,
        record: bool,
    ) -> Reading<'_> {
        let cfg = self.config.as_deref();
        let base = offset * 8;
        let mut r = Reading {
            cfg,
            record,
            fields: Vec::new(),
            problem: None,
            packet_type: "yojimbo.packet",
        };
        if record {
            r.fields
                .push(entry(NAME, 0, base, plain.len() * 8, Value::None, true));
        }
        let rcfg = self.reliable_config();
        let reliable = if record {
            let mut s = TraceStream::new(plain);
            let h = reliable::read(&mut s, plain, &rcfg);
            let verdict = h.as_ref().map(|_| ()).map_err(Refusal::to_codec);
            moved(
                s.into_trace(verdict).fields.into_vec(),
                NAME,
                1,
                base,
                &mut r.fields,
            );
            h
        } else {
            reliable::read(&mut ReadStream::new(plain), plain, &rcfg)
        };
        let rel = match reliable {
            Ok(rel) => rel,
            Err(e) => {
                r.packet_type = "yojimbo.invalid";
                r.problem = Some(refused(&e, base));
                return r;
            }
        };
        let (start, sequence) = match rel {
            Reliable::Regular(h) => (h.bytes, h.sequence),
            Reliable::Fragment(f) => {
                r.packet_type = intern(&format!(
                    "yojimbo.fragment {} of {}",
                    f.fragment_id + 1,
                    f.num_fragments
                ));
                (f.data_start, f.sequence)
            }
        };
        let rest = &plain[start.min(plain.len())..];
        if record {
            let path = match rel {
                Reliable::Regular(_) => "yojimbo.connection_packet",
                Reliable::Fragment(_) => "yojimbo.fragment_data",
            };
            let bytes = Value::Bytes(rest.to_vec());
            let scope = matches!(rel, Reliable::Regular(_));
            let e = entry(path, 1, base + start * 8, rest.len() * 8, bytes, scope);
            r.fields.push(e);
        }
        let Some(cfg) = cfg else {
            return r;
        };
        let mut after = len * 8;
        match rel {
            Reliable::Regular(_) => r.connection(cfg, rest, sequence, base + start * 8, 2),
            Reliable::Fragment(_) => {
                if let Some((seq, bytes, datagrams)) = found.and_then(|f| f.reassembled.as_ref()) {
                    r.packet_type = "yojimbo.packet (reassembled)";
                    if record {
                        let what = format!(
                            "packet {seq}: {} from {}",
                            count(bytes.len(), "byte"),
                            in_datagrams(datagrams)
                        );
                        let e = entry(
                            "yojimbo.reassembled",
                            1,
                            after,
                            bytes.len() * 8,
                            Value::Str(what),
                            true,
                        );
                        r.fields.push(e);
                    }
                    r.connection(cfg, bytes, *seq, after, 2);
                    after += bytes.len() * 8;
                }
            }
        }
        if record && let Some(found) = found {
            if !found.blocks.is_empty() {
                let bits = found.blocks.iter().map(|b| b.body.len + b.data.len() * 8);
                let e = entry("yojimbo.blocks", 1, after, bits.sum(), Value::None, true);
                r.fields.push(e);
            }
            for (i, b) in found.blocks.iter().enumerate() {
                after = r.block(i, b, after);
            }
            for (i, n) in found.notes.iter().enumerate() {
                let e = entry(
                    &format!("yojimbo.notes[{i}]"),
                    1,
                    base,
                    0,
                    Value::Str(note_text(n)),
                    false,
                );
                r.fields.push(e);
            }
        }
        r
    }
}

impl Transport for Yojimbo {
    fn name(&self) -> &'static str {
        NAME
    }

    fn tracker(&self) -> Box<dyn Tracker> {
        let connections = self
            .config
            .as_ref()
            .and_then(|c| Connections::new(Arc::clone(c), false).ok());
        Box::new(YojimboTracker {
            netcode: self.netcode.clone(),
            inner: self.netcode.tracker(),
            connections,
            count: 0,
            keep_plaintext: true,
        })
    }

    /// netcode's observation inside without its plaintext (what reassembly found stays: the
    /// dissection reads it).
    fn to_keep(&self, seen: Observation) -> Observation {
        match seen.get::<Seen>() {
            Some(s)
                if s.netcode
                    .get::<bitlens_netcode::Seen>()
                    .is_some_and(|n| n.opened.is_some()) =>
            {
                Observation::new(Seen {
                    netcode: self.netcode.to_keep(s.netcode.clone()),
                    found: s.found.clone(),
                })
            }
            _ => seen,
        }
    }

    fn unwrap(&self, d: &[u8], seen: &Observation, record: bool) -> Unwrapped {
        let none = Observation::NONE;
        let s = seen.get::<Seen>();
        let netcode_seen = s.map_or(&none, |s| &s.netcode);
        let mut u = self.netcode.unwrap(d, netcode_seen, record);
        if u.status != Status::Ok {
            u.layer = Some(bitlens_netcode::NAME);
            return u;
        }
        let found = s.and_then(|s| s.found.as_ref());
        let Some(plain) = u.payload.take() else {
            // Not a payload packet: netcode's own, and on a disconnect what the connection
            // still held when it ended.
            if record && let Some(found) = found {
                for (i, n) in found.notes.iter().enumerate() {
                    let path = format!("{NAME}.notes[{i}]");
                    let v = Value::Str(note_text(n));
                    u.header.push(entry(&path, 0, d.len() * 8, 0, v, false));
                }
            }
            return u;
        };
        let r = self.read(&plain.bytes, plain.offset, d.len(), found, record);
        u.header.extend(r.fields);
        u.packet_type = r.packet_type;
        match r.problem {
            Some(p) => u.fail(p),
            None if self.config.is_none() => u.encrypted(Some(Problem {
                kind: "no_configuration",
                bit: plain.offset * 8,
                field: NAME.to_owned(),
                message: format!("{NAME}: {NO_CONFIG}"),
            })),
            None => {}
        }
        // The decrypted payload, read above, is still what the layer handed on (the plaintext
        // `decode --write-plaintext` writes), unless the yojimbo layer refused it.
        if u.status != Status::Error {
            u.payload = Some(plain);
        }
        u
    }

    fn open(&self, d: &[u8], seen: &Observation) -> Option<Vec<u8>> {
        let s = seen.get::<Seen>()?;
        self.netcode.open(d, &s.netcode)
    }

    fn shown(&self, d: &[u8], seen: &Observation) -> Option<Vec<u8>> {
        // A connection request's token opens without what the pass saw.
        let none = Observation::NONE;
        let netcode = seen.get::<Seen>().map_or(&none, |s| &s.netcode);
        self.netcode.shown(d, netcode)
    }

    fn payload_range(&self, d: &[u8]) -> Option<std::ops::Range<usize>> {
        self.netcode.payload_range(d)
    }

    fn close(&self, d: &mut [u8], seen: &Observation) -> bool {
        seen.get::<Seen>()
            .is_some_and(|s| self.netcode.close(d, &s.netcode))
    }

    /// On the datagram that completed a fragmented connection packet: where its own fragment's
    /// data sits in the reassembled packet's entries (numbered from `8 * datagram length`, see
    /// the module docs) and in the datagram. reliable.io puts fragment `k`'s data at byte
    /// `k * fragment_size` of the packet (every fragment but the last is that long). The other
    /// fragments were forwarded before; blocks come from other datagrams' fragments too.
    fn carried(&self, d: &[u8], seen: &Observation) -> Vec<Carried> {
        let Some(s) = seen.get::<Seen>() else {
            return Vec::new();
        };
        let Some((_, packet, _)) = s.found.as_ref().and_then(|f| f.reassembled.as_ref()) else {
            return Vec::new();
        };
        let Some(plain) = self.netcode.unwrap(d, &s.netcode, false).payload else {
            return Vec::new();
        };
        let bytes = &plain.bytes;
        let rcfg = self.reliable_config();
        let Ok(Reliable::Fragment(f)) = reliable::read(&mut ReadStream::new(bytes), bytes, &rcfg)
        else {
            return Vec::new();
        };
        let len = bytes.len().saturating_sub(f.data_start);
        let start = f.fragment_id as usize * rcfg.fragment_size as usize;
        if start + len > packet.len() {
            return Vec::new();
        }
        vec![Carried {
            trace_bit: d.len() * 8 + start * 8,
            bit: (plain.offset + f.data_start) * 8,
            bits: len * 8,
        }]
    }

    fn takes_inner(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{ChannelConfig, ChannelType, MessageType, NoBody};

    fn config() -> Config {
        let mut unreliable = ChannelConfig::new(ChannelType::UnreliableUnordered);
        unreliable.max_block_size = 4096;
        Config {
            reliable: ReliableConfig {
                max_packet_size: 4096,
                fragment_size: 64,
                max_fragments: 64,
            },
            channels: vec![ChannelConfig::new(ChannelType::ReliableOrdered), unreliable],
            message_types: vec![
                MessageType::new("a", false, Arc::new(NoBody)),
                MessageType::new("b", true, Arc::new(NoBody)),
            ],
        }
    }

    /// An observation kept for a session (the live TUI) loses netcode's plaintext inside it and
    /// keeps what reassembly found; one without plaintext is kept as it is.
    #[test]
    fn an_observation_to_keep_drops_the_plaintext_inside_and_keeps_what_was_found() {
        let y = Yojimbo::new(Netcode::new(), Some(Arc::new(config()))).unwrap();
        let netcode = |plain: bool| bitlens_netcode::Seen {
            from_client: Some(true),
            key: None,
            protocol_id: Some(7),
            replay: false,
            opened: plain.then(|| bitlens_netcode::Opened::new(&[1; 20], Some(&[2; 4]))),
        };
        let found = || Found {
            reassembled: Some((3, vec![9; 5], vec![11, 12])),
            blocks: Vec::new(),
            notes: Vec::new(),
        };
        let kept = y.to_keep(Observation::new(Seen {
            netcode: Observation::new(netcode(true)),
            found: Some(found()),
        }));
        let s = kept.get::<Seen>().expect("still yojimbo's");
        let n = s.netcode.get::<bitlens_netcode::Seen>().expect("netcode's");
        assert!(n.opened.is_none(), "the plaintext is dropped");
        assert_eq!((n.from_client, n.protocol_id), (Some(true), Some(7)));
        let f = s.found.as_ref().expect("what reassembly found stays");
        assert_eq!(f.reassembled, Some((3, vec![9; 5], vec![11, 12])));
        // Nothing to drop: the same observation back.
        let bare = y.to_keep(Observation::new(Seen {
            netcode: Observation::new(netcode(false)),
            found: None,
        }));
        let s = bare.get::<Seen>().expect("yojimbo's");
        assert!(s.found.is_none());
        let n = s.netcode.get::<bitlens_netcode::Seen>().expect("netcode's");
        assert!(n.opened.is_none() && n.from_client == Some(true));
    }

    /// The incomplete-fragment notes name the datagrams in words, singular or plural.
    #[test]
    fn incomplete_notes_say_which_datagrams_in_words() {
        let packet = |datagrams: Vec<u64>| Note::PacketIncomplete {
            sequence: 5,
            num_fragments: 3,
            received: vec![0],
            datagrams,
        };
        assert_eq!(
            note_text(&packet(vec![5])),
            "packet 5 incomplete: 1 of 3 fragments arrived, in datagram 5"
        );
        assert_eq!(
            note_text(&packet(vec![5, 7])),
            "packet 5 incomplete: 1 of 3 fragments arrived, in datagrams 5, 7"
        );
        let block = Note::BlockIncomplete {
            channel: 1,
            message_id: 251,
            num_fragments: 9,
            received: vec![0, 1],
            datagrams: vec![516],
        };
        assert_eq!(
            note_text(&block),
            "block of message 251 on channel 1 incomplete: 2 of 9 fragments arrived, in datagram \
             516"
        );
        assert_eq!(
            (count(1, "byte"), count(2, "byte")),
            ("1 byte".into(), "2 bytes".into())
        );
        assert_eq!(in_datagrams(&[]), "no datagram");
    }

    /// Hostile plaintexts (random bytes, and valid headers with random bytes after them):
    /// never a panic, entries only with `record`, and the traced and plain reads agree on the
    /// verdict and the packet type.
    #[test]
    fn hostile_payloads_read_the_same_traced_or_not() {
        let y = Yojimbo::new(Netcode::new(), Some(Arc::new(config()))).unwrap();
        let bare = Yojimbo::new(Netcode::new(), None).unwrap();
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for round in 0..20_000 {
            let len = (next() % 200) as usize;
            let mut p: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            match round % 4 {
                0 if len >= 8 => p[..8].copy_from_slice(&[0x3e, 0, 0, 1, 0, 0, 0, 0]),
                1 if len >= 5 => p[..5].copy_from_slice(&[1, 7, 0, 1, 2]),
                _ => {}
            }
            for t in [&y, &bare] {
                let traced = t.read(&p, 16, len + 32, None, true);
                let plain = t.read(&p, 16, len + 32, None, false);
                assert_eq!(traced.problem, plain.problem, "{p:02x?}");
                assert_eq!(traced.packet_type, plain.packet_type);
                assert!(plain.fields.is_empty());
                assert!(!traced.fields.is_empty());
                if let Some(pr) = &traced.problem {
                    assert!(pr.field.starts_with("yojimbo"), "{pr:?}");
                    assert!(pr.bit >= 16 * 8, "{pr:?}");
                }
            }
        }
    }

    #[test]
    fn an_empty_connection_packet_is_refused_and_a_regular_one_read() {
        let y = Yojimbo::new(Netcode::new(), Some(Arc::new(config()))).unwrap();
        // The client/server samples' packet: header, then one byte (no channel entries).
        let r = y.read(&[0x3e, 0, 0, 1, 0, 0, 0, 0, 0], 0, 9, None, true);
        assert_eq!(
            (r.problem.as_ref(), r.packet_type),
            (None, "yojimbo.packet")
        );
        assert!(r.fields.iter().any(|f| f.path() == "yojimbo.num_entries"));
        let r = y.read(&[0x3e, 0, 0, 1, 0, 0, 0, 0], 0, 8, None, false);
        let p = r.problem.expect("refused");
        assert_eq!(
            (p.kind, p.field.as_str()),
            ("empty_packet", "yojimbo.num_entries")
        );
        assert_eq!(p.bit, 64);
    }

    #[test]
    fn an_invalid_configuration_is_refused() {
        let mut c = config();
        c.channels.clear();
        assert!(Yojimbo::new(Netcode::new(), Some(Arc::new(c))).is_err());
    }
}
