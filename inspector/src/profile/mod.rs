//! Where the bits go: a capture's datagrams totalled per packet type, message type, field path
//! (array indices folded: `objects[].position.x`), direction and second, with the overhead
//! (IP and UDP headers, the framing's CRC, packet type tags, check markers, alignment padding,
//! length prefixes, message headers) in rows of its own. `bitlens profile` prints it
//! ([`text`]), writes it as JSON or as a flame graph ([`flame`]), and checks it against a
//! budget ([`budget`]); the TUI's profile view shows the same for its filter.
//!
//! Every entry of a dissection's field tree is classified by ONE function, [`classify`]. Only
//! the leaves of the tree (entries without entries inside them) are counted, so each bit of a
//! decoded datagram is counted once: for every datagram, the leaves' widths plus the bits no
//! leaf covers ([`Overhead::Unread`]) are its UDP payload's bits, and the IP and UDP headers
//! ([`crate::capture::Datagram::header_len`]) come on top.
//!
//! Datagrams that did not decode (truncated, fragments, errors, desyncs) and datagrams no
//! dissector reads are counted apart ([`Profile::not_decoded`]), never in a field's total.
//!
//! Aggregation allocates per distinct field path, not per field: each path is folded into a
//! scratch buffer and looked up in a table of interned ids.

pub mod budget;
pub mod flame;
pub mod text;

use crate::capture::{Datagram, Timestamp};
use crate::dissectors::Dissectors;
use bitlens_codec::dissect::{Dissection, Status, intern};
use bitlens_codec::observe::Observation;
use bitlens_codec::trace::{EntryKind, Field, ValueRef};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// The tables of interned paths: a fast hash, the keys being the program's own field paths.
type Ids = HashMap<Box<str>, u32, foldhash::fast::RandomState>;

/// A kind of overhead: bits that carry no field of the game's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Overhead {
    /// The IP header (options and extension headers included) and the 8-byte UDP header.
    IpUdp,
    /// The framing's CRC32, with the protocol id folded in (the id itself is never sent).
    Crc,
    /// The packet type tag of a framed packet.
    PacketType,
    /// Check markers (serialize checks) other than the CRC.
    CheckMarker,
    /// Alignment padding.
    Padding,
    /// Length prefixes: of a batch, of a batch message's body, of arrays and strings.
    LengthPrefix,
    /// The rest of a batch message's header (its type and update stage bytes).
    MessageHeader,
    /// A transport layer's own fields before its payload (netcode: prefix byte, sequence,
    /// the connect token's fields).
    TransportHeader,
    /// A transport layer's own fields after its payload (netcode: the MAC).
    TransportTrailer,
    /// yojimbo: the reliable.io packet header or fragment header in front of the connection
    /// packet (prefix, sequence, ack, ack bits, fragment id and count).
    ReliableHeader,
    /// yojimbo: the connection packet's framing (entry count, channel index, block flag,
    /// message counts, message ids, message types, block fragment headers).
    ChannelFraming,
    /// yojimbo: the bytes of a connection packet sent in reliable.io fragments, on each
    /// fragment's datagram (their messages are read once the packet is whole: the message type
    /// and channel rows count them on the datagram that completed it).
    PacketFragments,
    /// yojimbo: a block's bytes (block fragment data): the game's own, but opaque.
    BlockData,
    /// Bits of a decoded payload no field covers (the body of a message of a type the protocol
    /// does not know, skipped by its length).
    Unread,
}

impl Overhead {
    /// Every kind, in declaration order (totals are indexed by the discriminant; tables sort
    /// their rows by cost).
    pub const ALL: [Overhead; 14] = [
        Overhead::IpUdp,
        Overhead::Crc,
        Overhead::PacketType,
        Overhead::CheckMarker,
        Overhead::Padding,
        Overhead::LengthPrefix,
        Overhead::MessageHeader,
        Overhead::TransportHeader,
        Overhead::TransportTrailer,
        Overhead::ReliableHeader,
        Overhead::ChannelFraming,
        Overhead::PacketFragments,
        Overhead::BlockData,
        Overhead::Unread,
    ];

    /// The row's name in tables, flame graphs and budgets (`(crc32 + protocol id)`).
    pub fn label(self) -> &'static str {
        match self {
            Overhead::IpUdp => "(IP + UDP headers)",
            Overhead::TransportHeader => "(transport headers)",
            Overhead::TransportTrailer => "(transport MACs)",
            Overhead::Crc => "(crc32 + protocol id)",
            Overhead::PacketType => "(packet type)",
            Overhead::CheckMarker => "(check markers)",
            Overhead::Padding => "(alignment padding)",
            Overhead::LengthPrefix => "(length prefixes)",
            Overhead::MessageHeader => "(message headers)",
            Overhead::ReliableHeader => "(reliable.io headers)",
            Overhead::ChannelFraming => "(channel framing)",
            Overhead::PacketFragments => "(packet fragments)",
            Overhead::BlockData => "(block data)",
            Overhead::Unread => "(not read: skipped by length)",
        }
    }
}

/// What a trace entry's bits are: a field of the game's, or overhead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Class {
    /// A field the game sends.
    Field,
    /// Overhead of this kind.
    Overhead(Overhead),
    /// Bits this datagram does not carry: entries a transport numbers after the datagram's own
    /// bits (yojimbo's reassembled packet, read from the bytes of several fragments, and its
    /// complete blocks). Their wire bits are counted where they were sent (packet fragments,
    /// block data); they count only in the message type and channel rows.
    Reassembled,
}

/// Classifies trace entry `i` (`f`) of dissection `d`: THE one place that decides whether an
/// entry's bits are a field or overhead, and which overhead.
///
/// - padding entries are [`Overhead::Padding`]; the top-level check labelled `crc32` is
///   [`Overhead::Crc`], every other check marker [`Overhead::CheckMarker`];
/// - inside a batch message, the header's `len` is a [`Overhead::LengthPrefix`] and the rest of
///   the header (type, stage) [`Overhead::MessageHeader`];
/// - an entry named `len` (array and string lengths, a batch message body's) or `batch_len`
///   is a [`Overhead::LengthPrefix`], the top-level `packet_type` is [`Overhead::PacketType`];
/// - everything else is a [`Class::Field`].
///
/// Tested first: an entry of a transport layer's own (`Dissection::layers`: netcode's header
/// fields, its MAC) is [`Overhead::TransportHeader`] or [`Overhead::TransportTrailer`]; the
/// payload it handed on is classified by the rules above, as if it had come in the clear.
/// yojimbo's entries (the layer reads its payload itself: they are all its own) are split:
/// an entry numbered past the datagram's bits is [`Class::Reassembled`]; `yojimbo.reliable.*`
/// is [`Overhead::ReliableHeader`], a message body's field (`...messages[k].body.*`, a block's
/// first fragment's `...fragment.body.*`) a [`Class::Field`], a block fragment's bytes
/// [`Overhead::BlockData`], a packet fragment's bytes [`Overhead::PacketFragments`], and the
/// rest of the connection packet [`Overhead::ChannelFraming`].
pub fn classify(d: &Dissection, i: usize, f: Leaf) -> Class {
    let total = d.trace.total_bits;
    let (bit, depth) = (f.field.bit(), f.field.depth());
    if bit + f.field.bits() > total {
        return Class::Reassembled;
    }
    for layer in &d.layers {
        if layer.header.contains(&i) {
            if let Some(rest) = f.path.strip_prefix("yojimbo.") {
                return yojimbo_class(rest, bit >= total && total > 0);
            }
            return Class::Overhead(Overhead::TransportHeader);
        }
        if layer.trailer.contains(&i) {
            return Class::Overhead(Overhead::TransportTrailer);
        }
    }
    let overhead = match (f.field.check(), f.field.kind()) {
        (Some((label, _, _)), _) if depth == 0 && label == "crc32" => Some(Overhead::Crc),
        (Some(_), _) => Some(Overhead::CheckMarker),
        (None, EntryKind::Padding) => Some(Overhead::Padding),
        (None, _) => {
            let path = f.path;
            // The name is looked at only for paths that can end in one of these (a cheap test
            // first: this runs for every leaf of every datagram).
            if path.ends_with("len") && matches!(last_segment(path), "len" | "batch_len") {
                Some(Overhead::LengthPrefix)
            } else if d.messages.is_some()
                && d.message_of(i)
                    .is_some_and(|m| !m.body.contains(&i) && m.entries.start != i)
            {
                Some(Overhead::MessageHeader)
            } else if depth == 0 && path == "packet_type" {
                Some(Overhead::PacketType)
            } else {
                None
            }
        }
    };
    overhead.map_or(Class::Field, Class::Overhead)
}

/// [`classify`] of a yojimbo entry, its path after `yojimbo.`; `after` when it is numbered at
/// or past the end of the datagram's bits (a complete block's zero-width entries).
fn yojimbo_class(rest: &str, after: bool) -> Class {
    let o = if after {
        return Class::Reassembled;
    } else if rest.starts_with("reliable.") {
        Overhead::ReliableHeader
    } else if rest == "fragment_data" {
        Overhead::PacketFragments
    } else if rest.contains(".body.") || rest.ends_with(".body") {
        return Class::Field;
    } else if rest.ends_with(".data") {
        Overhead::BlockData
    } else {
        Overhead::ChannelFraming
    };
    Class::Overhead(o)
}

/// Bits of the value a compressed float entry stands for: 32 per `f32` (a compressed vector
/// or quaternion counts each component), 64 for an `f64`; `None` for anything not a
/// compressed float.
pub fn raw_float_bits(f: &Field) -> Option<u64> {
    match f.value() {
        ValueRef::Floats(v) => Some(32 * v.len() as u64),
        ValueRef::F32(_) if f.raw().is_some() => Some(32),
        ValueRef::F64(_) if f.raw().is_some() => Some(64),
        _ => None,
    }
}

/// What the profiler reads of one trace entry: its view and its full path (from
/// [`bitlens_codec::Entries::walk`], so that no owned `TraceField` is built per entry).
#[derive(Debug, Clone, Copy)]
pub struct Leaf<'a> {
    /// The entry.
    pub field: Field<'a>,
    /// Its full path: `objects[17].position.x`.
    pub path: &'a str,
}

/// The last segment of a path, as `TraceField::name` gives it: `x` of `objects[17].position.x`,
/// `[3]` of `mice[3]`.
fn last_segment(path: &str) -> &str {
    let dot = path.rfind('.').map_or(0, |i| i + 1);
    let bracket = path.rfind('[').unwrap_or(0);
    &path[dot.max(bracket)..]
}

/// A count and the bits it adds up to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Tally {
    /// How many.
    pub count: u64,
    /// Their bits.
    pub bits: u64,
}

impl Tally {
    fn add(&mut self, bits: u64) {
        self.count += 1;
        self.bits += bits;
    }
}

/// One decoded datagram's bits, as the profile counted them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DatagramCost {
    /// Bits of UDP payload.
    pub payload_bits: u64,
    /// Bits of the fields' leaves.
    pub field_bits: u64,
    /// Bits of overhead leaves in the payload, and the bits no leaf covered ([`Overhead::Unread`]).
    pub overhead_bits: u64,
    /// Bits of the IP and UDP headers.
    pub header_bits: u64,
}

/// Per field path (or per overhead kind of a packet or message type).
#[derive(Debug, Clone)]
struct FieldAcc {
    packet_type: &'static str,
    message: Option<&'static str>,
    path: Box<str>,
    class: Class,
    tally: Tally,
    min_bits: u64,
    max_bits: u64,
    /// The declared range of the wire integer, and the smallest and largest seen.
    range: Option<(i128, i128)>,
    seen: Option<(i128, i128)>,
}

/// A compressed float, vector or quaternion path.
#[derive(Debug, Clone)]
struct PackedAcc {
    name: Box<str>,
    tally: Tally,
    raw_bits: u64,
}

/// Builds a [`Profile`], one datagram at a time.
pub struct Profiler<'a> {
    dissectors: &'a Dissectors,
    ids: Ids,
    fields: Vec<FieldAcc>,
    packed_ids: Ids,
    packed: Vec<PackedAcc>,
    packet_types: BTreeMap<&'static str, Tally>,
    messages: BTreeMap<&'static str, Tally>,
    /// yojimbo: per channel index, its connection packet entries and their bits.
    channels: BTreeMap<u64, Tally>,
    /// yojimbo: the message types' names, by type number (the configuration's).
    yojimbo_types: Vec<&'static str>,
    directions: BTreeMap<(u16, bool), Tally>,
    /// Bits on the wire above the link layer per second since the first datagram: to and from
    /// the server ports.
    seconds: BTreeMap<i64, [u64; 2]>,
    not_decoded: BTreeMap<Status, Tally>,
    datagrams: u64,
    decoded: Tally,
    header_bits: u64,
    first: Option<Timestamp>,
    last: Option<Timestamp>,
    largest: Option<(u64, u64)>,
    /// The key being looked up: the row's packet type and message, then its path.
    scratch: String,
    /// The packet type and message whose prefix `scratch` starts with, and its length.
    prefix: Option<(&'static str, Option<&'static str>, usize)>,
    /// The group of the prefix, and the ordinal of the next leaf in its run.
    group: u32,
    ordinal: usize,
    /// Per group, the raw path, class and id of the leaf seen first at each ordinal.
    shapes: Vec<Vec<Option<ShapeSlot>>>,
    /// The number of each packet type and message pair, the prefix of its rows' keys.
    groups: HashMap<(&'static str, Option<&'static str>), u32, foldhash::fast::RandomState>,
}

impl<'a> Profiler<'a> {
    /// An empty profile of traffic read with `dissectors`.
    pub fn new(dissectors: &'a Dissectors) -> Self {
        Profiler {
            dissectors,
            ids: Ids::default(),
            fields: Vec::new(),
            packed_ids: Ids::default(),
            packed: Vec::new(),
            packet_types: BTreeMap::new(),
            messages: BTreeMap::new(),
            channels: BTreeMap::new(),
            yojimbo_types: dissectors
                .yojimbo_config()
                .map(|c| c.message_types.iter().map(|t| intern(&t.name)).collect())
                .unwrap_or_default(),
            directions: BTreeMap::new(),
            seconds: BTreeMap::new(),
            not_decoded: BTreeMap::new(),
            datagrams: 0,
            decoded: Tally::default(),
            header_bits: 0,
            first: None,
            last: None,
            largest: None,
            scratch: String::new(),
            prefix: None,
            group: 0,
            ordinal: 0,
            shapes: Vec::new(),
            groups: HashMap::default(),
        }
    }

    /// Adds datagram `d` (UDP payload `payload`, and what the transports' sequential pass
    /// observed of it: [`Observation::NONE`] without transports); returns its cost when it
    /// decoded.
    pub fn add(
        &mut self,
        d: &Datagram,
        payload: &[u8],
        seen: &Observation,
    ) -> Option<DatagramCost> {
        self.datagrams += 1;
        let payload_bits = payload.len() as u64 * 8;
        let header_bits = d.header_len() as u64 * 8;
        let Some((port, to_server)) = self.dissectors.server_port(d) else {
            self.not_decoded
                .entry(Status::Undecoded)
                .or_default()
                .add(payload_bits + header_bits);
            return None;
        };
        let wire = payload_bits + header_bits;
        self.directions
            .entry((port, to_server))
            .or_default()
            .add(wire);
        let first = *self.first.get_or_insert(d.time);
        self.last = Some(self.last.map_or(d.time, |l| l.max(d.time)));
        let second = (d.time.as_nanos() - first.as_nanos()).div_euclid(1_000_000_000);
        let second = i64::try_from(second).unwrap_or(i64::MAX);
        self.seconds.entry(second).or_default()[usize::from(!to_server)] += wire;
        if self
            .largest
            .is_none_or(|(_, len)| payload.len() as u64 > len)
        {
            self.largest = Some((d.frame, payload.len() as u64));
        }
        let (_, dissection) = self.dissectors.dissect_seen(d, payload, seen);
        if dissection.status != Status::Ok {
            self.not_decoded
                .entry(dissection.status)
                .or_default()
                .add(wire);
            dissection.recycle();
            return None;
        }
        self.decoded.add(wire);
        self.header_bits += header_bits;
        let packet_type = dissection.packet_type.unwrap_or("(unnamed)");
        self.packet_types.entry(packet_type).or_default().add(wire);
        let id = self.overhead_id(packet_type, None, Overhead::IpUdp);
        self.fields[id as usize].tally.add(header_bits);
        let mut cost = self.walk(&dissection, packet_type, payload_bits);
        cost.header_bits = header_bits;
        dissection.recycle();
        Some(cost)
    }

    /// Counts the leaves of a decoded datagram's tree, its messages and its compressed floats.
    fn walk(
        &mut self,
        d: &Dissection,
        packet_type: &'static str,
        payload_bits: u64,
    ) -> DatagramCost {
        let mut cost = DatagramCost {
            payload_bits,
            ..DatagramCost::default()
        };
        for m in d.messages.iter().flatten() {
            let bits = d
                .trace
                .fields
                .view(m.entries.start)
                .filter(|_| m.entries.start != m.body.start)
                .map_or(m.len as u64 * 8, |f| f.bits() as u64);
            self.messages.entry(message_name(m)).or_default().add(bits);
        }
        // yojimbo: the message each leaf belongs to, and the message type and channel rows.
        let yojimbo = if d.layers.iter().any(|l| l.name == "yojimbo") {
            self.yojimbo_rows(d)
        } else {
            Vec::new()
        };
        // A datagram's leaves start a run of their own, even after one of the same type.
        self.prefix = None;
        let fields = &d.trace.fields;
        let mut messages = d.messages.as_deref().unwrap_or_default();
        // Inside a compressed vector or quaternion: its components are not counted again.
        let mut packed_depth: Option<usize> = None;
        let mut walk = fields.walk();
        let mut next = 0;
        while let Some((field, path)) = walk.next() {
            let f = Leaf { field, path };
            let i = next;
            next += 1;
            let depth = field.depth();
            if packed_depth.is_some_and(|packed| depth <= packed) {
                packed_depth = None;
            }
            let leaf = fields.view(i + 1).is_none_or(|next| next.depth() <= depth);
            // Messages hold ascending ranges of entries: follow them instead of searching.
            while messages.first().is_some_and(|m| m.entries.end <= i) {
                messages = &messages[1..];
            }
            let message = messages.first().filter(|m| m.entries.contains(&i));
            if packed_depth.is_none()
                && let Some(raw) = raw_float_bits(&field)
            {
                self.count_packed(packet_type, message.map(message_name), f, raw);
                if !leaf {
                    packed_depth = Some(depth);
                }
            }
            if !leaf {
                continue;
            }
            let class = classify(d, i, f);
            // Only the datagram's own bits: a transport numbers what it read from several
            // datagrams (yojimbo's reassembled packet, its blocks) after them.
            let bits = (field.bit() as u64 + field.bits() as u64)
                .min(payload_bits)
                .saturating_sub(field.bit() as u64);
            match class {
                Class::Field => cost.field_bits += bits,
                Class::Overhead(_) => cost.overhead_bits += bits,
                Class::Reassembled => continue,
            }
            let message = match yojimbo.get(i) {
                Some(name) => *name,
                None => message.map(message_name),
            };
            let id = self.leaf_id(packet_type, message, f, class);
            let acc = &mut self.fields[id as usize];
            acc.tally.add(bits);
            acc.min_bits = acc.min_bits.min(bits);
            acc.max_bits = acc.max_bits.max(bits);
            if let (Some(range), Some(v)) = (field.range(), wire_int(&field)) {
                acc.range = Some(range);
                acc.seen = Some(acc.seen.map_or((v, v), |(lo, hi)| (lo.min(v), hi.max(v))));
            }
        }
        let covered = cost.field_bits + cost.overhead_bits;
        if covered < payload_bits {
            let unread = payload_bits - covered;
            cost.overhead_bits += unread;
            // A yojimbo connection packet is written to a whole number of bytes: the bits after
            // its last field are its last byte's padding.
            let kind = if yojimbo.is_empty() {
                Overhead::Unread
            } else {
                Overhead::Padding
            };
            let id = self.overhead_id(packet_type, None, kind);
            self.fields[id as usize].tally.add(unread);
        }
        cost
    }

    /// yojimbo's message type and channel rows of a datagram (its own connection packet, or
    /// the one it completed), and per entry the name of the message type it belongs to. The
    /// leaves come in stream order: an entry's channel index (when not elided) and a message's
    /// type (when not elided) come before the rest of them. A message counts its type and
    /// body; a channel all of its entry's bits. A complete block's entries are left out: its
    /// body and bytes were counted with its fragments.
    fn yojimbo_rows(&mut self, d: &Dissection) -> Vec<Option<&'static str>> {
        let fields = &d.trace.fields;
        let mut names = vec![None; fields.len()];
        // (entry path, channel, bits), (message path, type, bits).
        let mut entry: Option<(String, u64, u64)> = None;
        let mut message: Option<(String, Option<u32>, u64)> = None;
        let mut walk = fields.walk();
        let mut next = 0;
        while let Some((f, path)) = walk.next() {
            let i = next;
            next += 1;
            if fields
                .view(i + 1)
                .is_some_and(|next| next.depth() > f.depth())
            {
                continue;
            }
            let Some((e, rest)) = yojimbo_entry(path) else {
                continue;
            };
            if entry.as_ref().is_none_or(|(p, _, _)| p != e) {
                self.flush_entry(entry.take());
                entry = Some((e.to_owned(), 0, 0));
            }
            let value = match f.value() {
                ValueRef::Int(v) => u64::try_from(v).ok(),
                ValueRef::UInt(v) => Some(v),
                ValueRef::Wide(v) => u64::try_from(v).ok(),
                _ => None,
            };
            if let Some((_, channel, bits)) = &mut entry {
                *bits += f.bits() as u64;
                if rest == "channel" {
                    *channel = value.unwrap_or(0);
                }
            }
            // The message: `messages[k]`, or a block's fragment (its type on fragment 0).
            let m = match rest.split_once('.') {
                Some((m, tail)) if m.starts_with("messages[") || m == "fragment" => {
                    Some((&path[..e.len() + 1 + m.len()], tail))
                }
                _ => None,
            };
            let Some((m, tail)) = m else {
                continue;
            };
            if message.as_ref().is_none_or(|(p, _, _)| p != m) {
                self.flush_message(message.take());
                message = Some((m.to_owned(), None, 0));
            }
            let Some((_, kind, bits)) = &mut message else {
                continue;
            };
            if tail == "type" {
                *kind = value.and_then(|v| u32::try_from(v).ok());
            }
            // With one message type the type is elided: every message is of type 0.
            let elided = self.yojimbo_types.len() == 1 && !m.ends_with("fragment");
            let known = kind.or(elided.then_some(0));
            if tail == "type" || tail.starts_with("body") {
                *bits += f.bits() as u64;
                names[i] = known.map(|k| self.yojimbo_type_name(k));
            }
        }
        self.flush_message(message);
        self.flush_entry(entry);
        names
    }

    fn flush_entry(&mut self, entry: Option<(String, u64, u64)>) {
        if let Some((_, channel, bits)) = entry {
            self.channels.entry(channel).or_default().add(bits);
        }
    }

    /// A message is counted when its type is known (a block fragment other than the first
    /// carries none: its bits are its channel's).
    fn flush_message(&mut self, message: Option<(String, Option<u32>, u64)>) {
        let Some((m, kind, bits)) = message else {
            return;
        };
        let elided = self.yojimbo_types.len() == 1 && !m.ends_with("fragment");
        if let Some(k) = kind.or(elided.then_some(0)) {
            let name = self.yojimbo_type_name(k);
            self.messages.entry(name).or_default().add(bits);
        }
    }

    fn yojimbo_type_name(&self, k: u32) -> &'static str {
        match self.yojimbo_types.get(k as usize) {
            Some(n) => n,
            None => intern(&format!("type {k}")),
        }
    }

    /// The id of a leaf's row: its packet type, message and folded path (or overhead kind).
    /// [`Profiler::field_id`] through the shape cache: the `k`th leaf of a run of leaves of
    /// one packet type or message usually has the same raw path as the last time (a packet
    /// type's fields come in the same order), and then its id is known without folding or
    /// hashing the path. A slot is filled once (the first path seen there); leaves that do
    /// not match it take the table lookup.
    fn leaf_id(
        &mut self,
        packet_type: &'static str,
        message: Option<&'static str>,
        f: Leaf,
        class: Class,
    ) -> u32 {
        self.start_key(packet_type, message);
        let k = self.ordinal;
        self.ordinal += 1;
        let group = self.group as usize;
        if let Some(Some((path, c, id))) = self.shapes.get(group).and_then(|s| s.get(k))
            && *c == class
            && **path == *f.path
        {
            return *id;
        }
        let id = self.field_id(packet_type, message, f, class);
        if self.shapes.len() <= group {
            self.shapes.resize_with(group + 1, Vec::new);
        }
        let shape = &mut self.shapes[group];
        if k < SHAPE_LEAVES {
            if shape.len() <= k {
                shape.resize(k + 1, None);
            }
            if shape[k].is_none() {
                shape[k] = Some((f.path.into(), class, id));
            }
        }
        id
    }

    fn field_id(
        &mut self,
        packet_type: &'static str,
        message: Option<&'static str>,
        f: Leaf,
        class: Class,
    ) -> u32 {
        if let Class::Overhead(o) = class {
            return self.overhead_id(packet_type, message, o);
        }
        let start = self.start_key(packet_type, message);
        // A yojimbo message body's field is named within its body (`sequence`).
        let path = f.path;
        let path = match path.strip_prefix("yojimbo.") {
            Some(_) => path.split_once(".body.").map_or(path, |(_, p)| p),
            None => path,
        };
        fold_path(path, message.is_some(), &mut self.scratch);
        if let Some(&id) = self.ids.get(self.scratch.as_str()) {
            return id;
        }
        let path = self.scratch[start..].into();
        self.insert(packet_type, message, path, class)
    }

    fn overhead_id(
        &mut self,
        packet_type: &'static str,
        message: Option<&'static str>,
        o: Overhead,
    ) -> u32 {
        self.start_key(packet_type, message);
        self.scratch.push_str(o.label());
        if let Some(&id) = self.ids.get(self.scratch.as_str()) {
            return id;
        }
        self.insert(packet_type, message, o.label().into(), Class::Overhead(o))
    }

    /// Leaves `scratch` holding the key prefix of `packet_type` and `message` (written again
    /// only when they change: a datagram's leaves share them) and returns its length.
    fn start_key(&mut self, packet_type: &'static str, message: Option<&'static str>) -> usize {
        match self.prefix {
            Some((t, m, len))
                if std::ptr::eq(t, packet_type)
                    && m.map(str::as_ptr) == message.map(str::as_ptr) =>
            {
                self.scratch.truncate(len);
                len
            }
            _ => {
                // The prefix is the group's number, not its names: shorter keys to hash and
                // compare for every leaf.
                let next = u32::try_from(self.groups.len()).unwrap_or(u32::MAX);
                let group = *self.groups.entry((packet_type, message)).or_insert(next);
                self.scratch.clear();
                self.scratch.push_str(itoa::Buffer::new().format(group));
                self.scratch.push('\u{1f}');
                let len = self.scratch.len();
                self.prefix = Some((packet_type, message, len));
                self.group = group;
                self.ordinal = 0;
                len
            }
        }
    }

    fn insert(
        &mut self,
        packet_type: &'static str,
        message: Option<&'static str>,
        path: Box<str>,
        class: Class,
    ) -> u32 {
        let id = u32::try_from(self.fields.len()).unwrap_or(u32::MAX);
        self.ids.insert(self.scratch.as_str().into(), id);
        self.fields.push(FieldAcc {
            packet_type,
            message,
            path,
            class,
            tally: Tally::default(),
            min_bits: u64::MAX,
            max_bits: 0,
            range: None,
            seen: None,
        });
        id
    }

    fn count_packed(
        &mut self,
        packet_type: &'static str,
        message: Option<&'static str>,
        f: Leaf,
        raw_bits: u64,
    ) {
        self.prefix = None;
        self.scratch.clear();
        self.scratch.push_str(message.unwrap_or(packet_type));
        self.scratch.push('.');
        fold_path(f.path, message.is_some(), &mut self.scratch);
        let id = match self.packed_ids.get(self.scratch.as_str()) {
            Some(&id) => id,
            None => {
                let id = u32::try_from(self.packed.len()).unwrap_or(u32::MAX);
                self.packed_ids.insert(self.scratch.as_str().into(), id);
                self.packed.push(PackedAcc {
                    name: self.scratch.as_str().into(),
                    tally: Tally::default(),
                    raw_bits: 0,
                });
                id
            }
        };
        let acc = &mut self.packed[id as usize];
        acc.tally.add(f.field.bits() as u64);
        acc.raw_bits += raw_bits;
    }

    /// The profile of the datagrams added so far.
    pub fn finish(self) -> Profile {
        build::profile(self)
    }
}

mod build;

/// A slot of the shape cache: the raw path and class of the leaf first seen there, its row.
type ShapeSlot = (Box<str>, Class, u32);

/// Leaves per packet type or message the shape cache remembers.
const SHAPE_LEAVES: usize = 4096;

/// The wire integer of a ranged entry: its raw code when it has one, else its integer value.
fn wire_int(f: &Field) -> Option<i128> {
    f.raw().or(match f.value() {
        ValueRef::Int(v) => Some(i128::from(v)),
        ValueRef::UInt(v) => Some(i128::from(v)),
        ValueRef::Wide(v) => Some(v),
        _ => None,
    })
}

/// A message's name in rows: its type's name, or `type N` for a type the protocol does not
/// know.
fn message_name(m: &bitlens_codec::dissect::MessageView) -> &'static str {
    match m.name {
        Some(n) => n,
        None => intern(&format!("type {}", m.message_type)),
    }
}

/// A yojimbo connection packet entry's path (`yojimbo.entries[2]`) and the rest of `path` in
/// it (`messages[0].body.x`), for leaves inside one.
fn yojimbo_entry(path: &str) -> Option<(&str, &str)> {
    let rest = path.strip_prefix("yojimbo.entries[")?;
    let close = rest.find(']')?;
    let end = "yojimbo.entries[".len() + close + 1;
    let tail = path[end..].strip_prefix('.')?;
    Some((&path[..end], tail))
}

/// Appends `path` with array indices folded (`objects[17].position.x` becomes
/// `objects[].position.x`); `in_message` drops the message's own scope (`[2].text` is `text`).
pub fn fold_path(path: &str, in_message: bool, out: &mut String) {
    let mut rest = path;
    if in_message && rest.starts_with('[') {
        rest = match rest.find(']') {
            Some(end) => rest[end + 1..]
                .strip_prefix('.')
                .unwrap_or(&rest[end + 1..]),
            None => rest,
        };
    }
    // Copy up to each `[`, then skip to its `]` (indices are ASCII digits).
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..=open]);
        rest = match rest[open..].find(']') {
            Some(close) => &rest[open + close..],
            None => "",
        };
    }
    out.push_str(rest);
}

/// The whole profile: what the text table, JSON, the flame graph, the TUI view and budgets
/// read.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Profile {
    /// Datagrams seen, decoded or not.
    pub datagrams: u64,
    /// Decoded datagrams, and their bits on the wire above the link layer (UDP payload and IP
    /// and UDP headers): the total every share is of.
    pub decoded: Tally,
    /// Bits of IP and UDP headers of the decoded datagrams.
    pub header_bits: u64,
    /// Seconds from the first to the last datagram a dissector reads.
    pub duration_secs: f64,
    /// Per direction and server port.
    pub directions: Vec<DirectionRow>,
    /// Per packet type (decoded datagrams; a batch's type is `Batch`).
    pub packet_types: Vec<Row>,
    /// Per batch message type (bits of header and body); per yojimbo message type (bits of
    /// its type and body, wherever it was read: a fragmented packet's messages on the datagram
    /// that completed it). Shares are of the message types' bits (and the channels' of the
    /// channels'): a profile of some datagrams (the TUI's filter) can hold the datagram that
    /// completed a packet without the fragments that carried it.
    pub message_types: Vec<Row>,
    /// Per yojimbo channel (`channel N`): its connection packet entries (framing, message ids,
    /// messages, block fragments), counted as the message types are.
    pub channels: Vec<Row>,
    /// Fields (leaves, by folded path) and overhead rows, by cost, most first.
    pub fields: Vec<FieldRow>,
    /// Overhead per kind, by cost.
    pub overhead: Vec<Row>,
    /// Compressed floats, vectors and quaternions against their raw values.
    pub compressed: Vec<CompressedRow>,
    /// Bits on the wire per second, per direction (seconds without traffic are left out).
    pub seconds: Vec<SecondRow>,
    /// Datagrams counted apart: not decoded (by status), or on ports without a dissector.
    pub not_decoded: Vec<Row>,
    /// The largest UDP payload of a datagram a dissector reads.
    pub largest_datagram: Option<Largest>,
    /// Per-type stacks of the flame graph (`type;field;subfield`, bits), internal to `flame`.
    #[serde(skip)]
    pub stacks: Vec<(String, u64)>,
    /// What the transports still held in reassembly when the capture ended (fragments whose
    /// packet or block never completed), one line each ([`Tracker::finish`]); left out of the
    /// JSON when empty.
    ///
    /// [`Tracker::finish`]: bitlens_codec::observe::Tracker::finish
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pending: Vec<String>,
}

/// A row of totals.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// What it totals.
    pub name: String,
    /// How many.
    pub count: u64,
    /// Bits.
    pub bits: u64,
    /// Bytes (bits / 8).
    pub bytes: f64,
    /// Share of the decoded total, 0..=1; a message type's of all message types' bits, a
    /// channel's of all channels' ([`Profile::message_types`]).
    pub share: f64,
    /// Bits per occurrence.
    pub bits_per: f64,
}

/// A direction's totals.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DirectionRow {
    /// `to` or `from` the server port.
    pub direction: &'static str,
    /// The server port (the port whose dissector reads the traffic).
    pub port: u16,
    /// Datagrams and bits on the wire (payload and IP and UDP headers), decoded or not.
    pub datagrams: u64,
    /// Bits.
    pub bits: u64,
    /// Bytes per second over the capture's duration.
    pub bytes_per_sec: f64,
}

/// A field path's (or an overhead kind's, per type) row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FieldRow {
    /// `Type.path` (`SceneUpdate.objects[].position.x`, `MoveRigidBody.network_id`), or
    /// `Type.(overhead)`.
    pub name: String,
    /// `field`, or the overhead kind.
    pub kind: String,
    /// Occurrences, bits, bytes, share, bits per occurrence.
    #[serde(flatten)]
    pub totals: Row,
    /// Where the declared range is wider than the values of this capture.
    pub hint: Option<String>,
}

/// A compressed float's cost against its raw value.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompressedRow {
    /// `Type.path`.
    pub name: String,
    /// Occurrences.
    pub count: u64,
    /// Bits sent.
    pub bits: u64,
    /// Bits the raw values take (32 per float).
    pub raw_bits: u64,
}

/// One second of traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SecondRow {
    /// Seconds since the first datagram.
    pub second: i64,
    /// Bits to the server ports.
    pub to_server: u64,
    /// Bits from the server ports.
    pub from_server: u64,
}

/// The largest datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Largest {
    /// Its frame number.
    pub frame: u64,
    /// Its UDP payload's bytes.
    pub bytes: u64,
}

/// Profiles `datagrams` of `file` (payloads are [`Datagram::payload`] of it).
pub fn profile<'d>(
    dissectors: &Dissectors,
    file: &[u8],
    datagrams: impl IntoIterator<Item = (&'d Datagram, &'d Observation)>,
) -> Profile {
    let mut p = Profiler::new(dissectors);
    for (d, seen) in datagrams {
        p.add(d, d.payload(file), seen);
    }
    p.finish()
}

#[cfg(test)]
mod tests;
