//! One interface between protocol formats and the tools that show them: a [`Dissector`] turns a
//! datagram's payload into a [`Verdict`] or a [`Dissection`].
//!
//! - [`Dissector::verdict`] reads at read speed and records nothing: the [`Status`], the packet
//!   type's name (borrowed from the dissector) and the first [`Problem`]. It is what
//!   `bitlens check` tallies a million times.
//! - [`Dissector::dissect`] reads the same bytes through the same serialize function with a
//!   recording stream: ONE field tree ([`Trace`], bits are datagram bit offsets) with the check
//!   markers, one status, the first problem, where reader and writer drifted apart
//!   ([`Desync`]), and for batch formats the per-message headers ([`MessageView`]), whose
//!   fields are ranges of that same tree.
//!
//! Implemented here for any compiled packet set ([`PacketDissector`]), in `bitlens-batch` for
//! compiled batch message sets, and in `bitlens-schema` for TOML schemas and their batches. The
//! inspector, `check`, the proxy and the exports see nothing but this trait.
//!
//! # Guarantees
//!
//! - Like every reader of this crate, a dissector never panics and never allocates by an
//!   unchecked length, on any payload.
//! - A verdict and a dissection of the same payload agree: the same status, packet type and
//!   problem (the two paths run one serialize function on a [`ReadStream`] and a
//!   [`TraceStream`]). `bitlens check`, `bitlens decode` (text and JSON)
//!   and the inspector's TUI therefore give every datagram one status.
//!
//! # Example
//!
//! ```
//! use bitlens_codec::dissect::{Dissector, PacketDissector, Status};
//! use bitlens_codec::{Packet, Protocol, ProtocolId, Result, Stream, Value, write_packet};
//! use std::sync::LazyLock;
//!
//! static PROTOCOL: LazyLock<Protocol> = LazyLock::new(|| Protocol {
//!     name: "tiny".into(),
//!     id: ProtocolId::U32(0x7469_6e79),
//!     packet_types: vec!["Hello".into()],
//!     mtu: 1200,
//! });
//!
//! #[derive(Default)]
//! struct Hello { health: i32 }
//!
//! impl Packet for Hello {
//!     fn protocol() -> &'static Protocol { &PROTOCOL }
//!     fn packet_type(&self) -> u32 { 0 }
//!     fn empty(t: u32) -> Option<Self> { (t == 0).then(Hello::default) }
//!     fn serialize_body<S: Stream>(&mut self, s: &mut S) -> Result<()> {
//!         s.int_as("health", &mut self.health, 0, 100)
//!     }
//! }
//!
//! let mut buf = [0u8; 64];
//! let n = write_packet(&mut Hello { health: 73 }, &mut buf)?;
//! let tiny = PacketDissector::<Hello>::new("tiny");
//! assert_eq!(tiny.verdict(&buf[..n]).status, Status::Ok);
//! let d = tiny.dissect(&buf[..n]);
//! assert_eq!(d.packet_type, Some("Hello"));
//! assert_eq!(d.trace.get("health").map(|f| f.bit), Some(32));
//!
//! // A flipped bit breaks the CRC; under another protocol id every packet does.
//! buf[4] ^= 1; // health 73 -> 72
//! assert_eq!(tiny.verdict(&buf[..n]).problem.map(|p| p.kind), Some("crc_mismatch"));
//! assert!(tiny.seal(&mut buf[..n]), "re-signed: the CRC matches the changed bytes");
//! assert_eq!(tiny.verdict(&buf[..n]).status, Status::Ok);
//! assert_eq!(tiny.dissect(&buf[..n]).trace.get("health").map(|f| &f.value), Some(&Value::Int(72)));
//! let other = tiny.with_protocol_id(ProtocolId::U32(1)).expect("a framed format");
//! assert_eq!(other.verdict(&buf[..n]).status, Status::Error);
//! # Ok::<(), bitlens_codec::Error>(())
//! ```

use crate::error::{Error, ErrorKind, Result};
use crate::observe::{Observation, Tracker};
use crate::packet::{Packet, Protocol, ProtocolId, seal_crc, verify_packet};
use crate::read::{ReadStream, TraceStream};
use crate::trace::{EntryKind, Field, Trace, TraceField};
use std::collections::HashSet;
use std::fmt;
use std::marker::PhantomData;
use std::ops::Range;
use std::sync::{Arc, Mutex};

/// How a datagram decoded: one status per datagram, everywhere (text, JSON, `check`, TUI).
///
/// Dissectors give [`Status::Ok`], [`Status::Error`] or [`Status::Desync`], and a transport
/// ([`crate::transport`]) also [`Status::Encrypted`]; the inspector gives truncated, fragment and
/// undecoded from the capture before any dissector runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum Status {
    /// Decoded, every check held.
    Ok,
    /// The read stopped at an error other than a check mismatch (for a batch: the framing or
    /// any message).
    Error,
    /// A check marker mismatched: reader and writer disagree.
    Desync,
    /// The capture cut the datagram short: not decoded.
    Truncated,
    /// An IP fragment: not decoded.
    Fragment,
    /// No dissector for its ports.
    #[default]
    Undecoded,
    /// A transport read its header, but its payload is encrypted and no key for its connection
    /// is known (no server key, no key log line, or the connection request was not seen). Not
    /// a failure of the traffic, only of what the reader knows: like [`Status::Undecoded`] it
    /// is not a problem, and `check` fails on it only with `--strict`. Last in [`Status::ALL`]
    /// (its index in count arrays), and shown only where it occurs, so outputs of captures
    /// without transports keep their shape.
    Encrypted,
}

impl Status {
    /// All statuses, in display order.
    pub const ALL: [Status; 7] = [
        Status::Ok,
        Status::Error,
        Status::Desync,
        Status::Truncated,
        Status::Fragment,
        Status::Undecoded,
        Status::Encrypted,
    ];

    /// The lower-case name used in JSON, text and filters.
    pub fn name(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Error => "error",
            Status::Desync => "desync",
            Status::Truncated => "truncated",
            Status::Fragment => "fragment",
            Status::Undecoded => "undecoded",
            Status::Encrypted => "encrypted",
        }
    }

    /// The status named `name` ([`Status::name`]).
    pub fn from_name(name: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|s| s.name() == name)
    }

    /// True for the statuses that count as a problem: all but ok, undecoded and encrypted.
    pub fn is_problem(self) -> bool {
        !matches!(self, Status::Ok | Status::Undecoded | Status::Encrypted)
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a datagram (or one message of a batch) did not decode, whichever layer said so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The error kind's snake-case name (`out_of_range`, `check_mismatch`, `body_length`, ...).
    pub kind: &'static str,
    /// Bit offset in the datagram.
    pub bit: usize,
    /// Field path (for a batch message: `[index].field`).
    pub field: String,
    /// The whole one-line message.
    pub message: String,
}

impl From<&Error> for Problem {
    fn from(e: &Error) -> Self {
        Problem {
            kind: e.kind().name(),
            bit: e.bit(),
            field: e.field().to_owned(),
            message: e.to_string(),
        }
    }
}

/// Where a desynced reader really is, found by searching for the mismatched check's hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Desync {
    /// The check that mismatched.
    pub label: String,
    /// Bit where the reader looked for it.
    pub expected_bit: usize,
    /// Bit where the writer's marker really is, if found nearby.
    pub found_bit: Option<usize>,
    /// The last check that held before it (the drift happened in between).
    pub after_check: Option<String>,
    /// How many bits the reader is behind the writer (negative: ahead), as a range: byte
    /// alignment before the marker hides the exact count unless the padding shows it.
    pub behind: Option<(i64, i64)>,
}

impl Desync {
    /// A sentence for people: "reader is 3 bits behind the writer between check 'header' and
    /// check 'objects' ...".
    pub fn message(&self) -> String {
        let between = match &self.after_check {
            Some(prev) => format!("between check '{prev}' and check '{}'", self.label),
            None => format!("before check '{}'", self.label),
        };
        match (self.behind, self.found_bit) {
            (Some((lo, hi)), Some(found)) => {
                let (dir, lo, hi) = if hi <= 0 {
                    ("ahead of", -hi, -lo)
                } else {
                    ("behind", lo.max(1), hi)
                };
                let amount = if lo == hi {
                    format!("{lo}")
                } else {
                    format!("{lo} to {hi}")
                };
                let unit = if hi == 1 { "bit" } else { "bits" };
                format!(
                    "reader is {amount} {unit} {dir} the writer {between} (marker found at bit {found}, expected at bit {})",
                    self.expected_bit
                )
            }
            _ => format!(
                "reader and writer desynced {between}: marker not found within 64 bytes of bit {}",
                self.expected_bit
            ),
        }
    }
}

fn read_u32_at_bit(data: &[u8], bit: usize) -> Option<u32> {
    if !bit.is_multiple_of(8) {
        return None;
    }
    let b = data.get(bit / 8..)?.first_chunk::<4>()?;
    Some(u32::from_le_bytes(*b))
}

/// Searches byte offsets within 64 bytes of where the reader expected check `label` (hash
/// `expected`, at `bit`) for the hash the writer wrote, nearest first. Check markers are
/// byte-aligned in the writer's stream too, so only byte offsets can hold them; the zero padding
/// before the writer's marker narrows down where the writer's last field really ended.
pub fn locate_desync(
    trace: &Trace,
    label: &str,
    expected: u32,
    bit: usize,
    payload: &[u8],
) -> Desync {
    // Read as views: a desynced datagram's dissection builds no owned field list.
    let after_check = (trace.fields.views().rev())
        .filter(|f| f.bit() < bit)
        .find_map(|f| match f.check() {
            Some((label, expected, found)) if expected == found && label != "crc32" => {
                Some(label.to_owned())
            }
            _ => None,
        });
    // Where the reader's last field ended, before it aligned for the marker.
    let reader_end = (trace.fields.views())
        .filter(|f| matches!(f.kind(), EntryKind::Value | EntryKind::Check))
        .map(|f| f.bit() + f.bits())
        .filter(|&end| end <= bit)
        .max()
        .unwrap_or(bit);
    let found_bit = (1..=64usize).find_map(|step| {
        [bit.checked_add(step * 8), bit.checked_sub(step * 8)]
            .into_iter()
            .flatten()
            .find(|&candidate| read_u32_at_bit(payload, candidate) == Some(expected))
    });
    let behind = found_bit.map(|w| {
        // The writer's padding before its marker is zero: count the zero bits just before it.
        let mut zeros = 0usize;
        while zeros < 7 && w > zeros {
            let b = w - zeros - 1;
            let set = payload
                .get(b / 8)
                .is_some_and(|byte| byte >> (b % 8) & 1 == 1);
            if set {
                break;
            }
            zeros += 1;
        }
        let (lo, hi) = ((w - zeros) as i64, w as i64);
        (lo - reader_end as i64, hi - reader_end as i64)
    });
    Desync {
        label: label.to_owned(),
        expected_bit: bit,
        found_bit,
        after_check,
        behind,
    }
}

/// The verdict on a datagram without its trace: what `check` needs, at read-stream speed. The
/// packet type's name is borrowed from the dissector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict<'d> {
    /// The status (a check mismatch is [`Status::Desync`]).
    pub status: Status,
    /// The packet type's name, when the read got that far.
    pub packet_type: Option<&'d str>,
    /// What stopped the read.
    pub problem: Option<Problem>,
    /// The layer whose problem it is, for stacked dissectors ([`crate::transport::Stack`]):
    /// the transport's name, or the inner dissector's; `None` for a dissector of its own.
    pub layer: Option<&'d str>,
}

impl<'d> Verdict<'d> {
    /// The verdict of a bit-packed read: ok, desync for a check mismatch, error otherwise.
    pub fn of_read(packet_type: Option<&'d str>, result: Result<()>) -> Self {
        let (status, problem) = match &result {
            Ok(()) => (Status::Ok, None),
            Err(e) => (status_of(e), Some(Problem::from(e))),
        };
        Verdict {
            status,
            packet_type,
            problem,
            layer: None,
        }
    }

    /// A datagram no dissector read (truncated, a fragment, or no dissector for its ports).
    pub fn not_decoded(status: Status) -> Self {
        Verdict {
            status,
            packet_type: None,
            problem: None,
            layer: None,
        }
    }
}

/// `path` without the message scope `scope` and the dot after it.
#[inline]
fn relative<'p>(path: &'p str, scope: &str) -> &'p str {
    if scope.is_empty() {
        // A dissection without message scopes: paths are relative already (and a zero-length
        // prefix test was a `memcmp` call per field, 4% of `decode --json`).
        return path;
    }
    match path.strip_prefix(scope) {
        Some(rest) => rest.strip_prefix('.').unwrap_or(rest),
        None => path,
    }
}

/// [`relative`] of a path's bytes.
#[inline(always)]
fn relative_bytes<'p>(path: &'p [u8], scope: &[u8]) -> &'p [u8] {
    if scope.is_empty() {
        return path;
    }
    match path.strip_prefix(scope) {
        Some(rest) => rest.strip_prefix(b".").unwrap_or(rest),
        None => path,
    }
}

fn status_of(e: &Error) -> Status {
    match e.kind() {
        ErrorKind::CheckMismatch { .. } => Status::Desync,
        _ => Status::Error,
    }
}

/// How one message of a batch decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MessageStatus {
    /// A known type, decoded completely.
    Ok,
    /// A type the protocol does not know: skipped by its length.
    UnknownType,
    /// Its header or body is corrupt.
    Error,
}

impl MessageStatus {
    /// The snake-case name used in JSON.
    pub fn name(self) -> &'static str {
        match self {
            MessageStatus::Ok => "ok",
            MessageStatus::UnknownType => "unknown_type",
            MessageStatus::Error => "error",
        }
    }
}

/// One message of a batch datagram (seed 002: type byte, update stage byte, body length): its
/// header, how it decoded, and where its entries are in the dissection's one field tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageView {
    /// Index in the batch.
    pub index: usize,
    /// Byte offset of its header in the datagram.
    pub offset: usize,
    /// Message type.
    pub message_type: u8,
    /// Name of a known type.
    pub name: Option<&'static str>,
    /// Update stage byte.
    pub stage: u8,
    /// Name of a known stage.
    pub stage_name: Option<&'static str>,
    /// Body length from the header.
    pub len: usize,
    /// How it decoded.
    pub status: MessageStatus,
    /// Why it did not.
    pub problem: Option<Problem>,
    /// Its entries in [`Dissection::trace`]: its scope (named `[index]`, valued with its type's
    /// name), its header, its body; only its body in a [`Dissector::dissect_values`].
    pub entries: Range<usize>,
    /// Its body's entries (a range inside `entries`): the fields the message's own serialize
    /// function recorded.
    pub body: Range<usize>,
}

/// A window of trace bits that a datagram carries although its dissection numbers them past the
/// datagram's own bits: a packet reassembled from fragments is traced as a second byte source
/// after the datagram (yojimbo), and the part of it that this datagram's fragment brought is
/// here ([`Dissector::carried_seen`]), so that the proxy can change those bits in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Carried {
    /// First trace bit of the window (at or past `8 * datagram length`).
    pub trace_bit: usize,
    /// Where that bit is in the datagram (an opened datagram's plaintext, for a transport).
    pub bit: usize,
    /// Width of the window in bits.
    pub bits: usize,
}

/// One transport layer of a stacked dissection ([`crate::transport::Stack`]): its name, where
/// its entries are in the dissection's one field tree, where its payload is, and how it went.
///
/// Every bit of the datagram is in exactly one place: a layer's `header` or `trailer` entries
/// (prefix, sequence, MAC: a profile counts them as overhead without knowing the transport), or
/// the payload the layer handed on (`payload_bits`), whose entries are the inner dissector's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayerView {
    /// The layer's name (`netcode`), the first segment of its entries' paths.
    pub name: &'static str,
    /// Its entries before the payload's in [`Dissection::trace`].
    pub header: Range<usize>,
    /// Its entries after the payload's (a MAC).
    pub trailer: Range<usize>,
    /// The datagram bits of the payload it handed on (empty when it handed on none).
    pub payload_bits: Range<usize>,
    /// The layer's own status: ok, error, or encrypted (the payload not readable).
    pub status: Status,
    /// The layer's own problem.
    pub problem: Option<Problem>,
    /// The payload it handed on (decrypted, for an encrypting transport), when it handed one
    /// on: what `decode --write-plaintext` writes.
    pub plaintext: Option<Vec<u8>>,
}

/// A datagram dissected: one field tree, one status, the first problem, the desync analysis,
/// and for batch formats the messages.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Dissection {
    /// The status.
    pub status: Status,
    /// The packet type's name, when the read got that far (`Batch` for batch formats); names
    /// live as long as the process ([`intern`]), so a dissection allocates none.
    pub packet_type: Option<&'static str>,
    /// Every field, scope, check marker and padding the codec recorded, in datagram bit offsets
    /// (empty when nothing was decoded). A batch's messages are scopes of this tree.
    pub trace: Trace,
    /// What stopped the read, whichever layer said so (for a batch: the framing error, else the
    /// first corrupt message's).
    pub problem: Option<Problem>,
    /// Where reader and writer drifted apart, for [`Status::Desync`].
    pub desync: Option<Desync>,
    /// The messages of a batch format, in order (`None` for formats without messages).
    pub messages: Option<Vec<MessageView>>,
    /// The transport layers around the payload, outermost first (empty for a dissector of its
    /// own).
    pub layers: Vec<LayerView>,
}

impl Dissection {
    /// A datagram no dissector read (truncated, a fragment, or no dissector for its ports).
    pub fn not_decoded(status: Status) -> Self {
        Dissection {
            status,
            ..Dissection::default()
        }
    }

    /// Classifies a finished bit-packed trace (ok, desync, error) and locates a desync in
    /// `payload`.
    pub fn of_trace(packet_type: Option<&'static str>, trace: Trace, payload: &[u8]) -> Self {
        let (status, desync) = match &trace.error {
            None => (Status::Ok, None),
            Some(e) => match e.kind() {
                ErrorKind::CheckMismatch {
                    label, expected, ..
                } => (
                    Status::Desync,
                    Some(locate_desync(&trace, label, *expected, e.bit(), payload)),
                ),
                _ => (Status::Error, None),
            },
        };
        let problem = trace.error.as_ref().map(Problem::from);
        Dissection {
            status,
            packet_type,
            trace,
            problem,
            desync,
            messages: None,
            layers: Vec::new(),
        }
    }

    /// The message whose entries hold trace entry `i`.
    pub fn message_of(&self, i: usize) -> Option<&MessageView> {
        let messages = self.messages.as_deref()?;
        let k = messages.partition_point(|m| m.entries.end <= i);
        messages.get(k).filter(|m| m.entries.contains(&i))
    }

    /// The path of trace entry `i` relative to its message (`header.len`, `text`), or its full
    /// path outside messages.
    pub fn path_in_message(&self, i: usize) -> &str {
        let Some(f) = self.trace.fields.get(i) else {
            return "";
        };
        match self.message_of(i).filter(|m| m.entries.start != i) {
            Some(m) => relative(f.path(), self.scope_path(m)),
            None => f.path(),
        }
    }

    /// The entries of message `m`'s body, each with its path relative to the message (`text`
    /// for `[1].text`), in stream order: what JSON lists as the message's fields.
    pub fn body_of<'a>(
        &'a self,
        m: &'a MessageView,
    ) -> impl Iterator<Item = (&'a str, &'a TraceField)> + 'a {
        let scope = self.scope_path(m);
        let body = self.trace.fields.get(m.body.clone()).unwrap_or_default();
        body.iter().map(move |f| (relative(f.path(), scope), f))
    }

    /// [`Dissection::body_of`] as views, through one path buffer ([`crate::trace::Entries::walk_range`]):
    /// `each` gets every entry of message `m`'s body with its path relative to the message,
    /// in stream order (paths as their UTF-8 bytes).
    pub fn walk_body<'a>(&'a self, m: &MessageView, mut each: impl FnMut(&[u8], Field<'a>)) {
        let scope = if m.entries.start == m.body.start {
            String::new()
        } else {
            self.trace.fields.path_of(m.entries.start)
        };
        let mut walk = self.trace.fields.walk_range(m.body.clone());
        while let Some((f, path)) = walk.next_bytes() {
            each(relative_bytes(path, scope.as_bytes()), f);
        }
    }

    /// The path of message `m`'s scope (`[2]`); empty when the scope was not recorded
    /// ([`Dissector::dissect_values`]: the body's paths are relative already).
    fn scope_path(&self, m: &MessageView) -> &str {
        if m.entries.start == m.body.start {
            return "";
        }
        self.trace
            .fields
            .get(m.entries.start)
            .map_or("", TraceField::path)
    }

    /// Gives the trace's storage back for the next dissection on this thread
    /// ([`Trace::recycle`]).
    #[inline]
    pub fn recycle(self) {
        self.trace.recycle();
    }
}

/// `name` as a `&'static str`, stored once per distinct name for the life of the process: the
/// names a dissection carries (packet types, message types) are a protocol's, a handful, and a
/// dissection then allocates none of them.
pub fn intern(name: &str) -> &'static str {
    static NAMES: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    let names = names.get_or_insert_with(HashSet::new);
    if let Some(n) = names.get(name) {
        return n;
    }
    let n: &'static str = Box::leak(name.to_owned().into_boxed_str());
    names.insert(n);
    n
}

/// How a format lays out a datagram: what `--schema` replaces in the inspector, and whether a
/// dissection lists messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Layout {
    /// One bit-packed framed packet per datagram (CRC, type, body, end check; WIRE.md section 1).
    Packets,
    /// A batch of byte-aligned messages (seed 002; WIRE.md section 3).
    Batches,
    /// Anything else.
    Other,
}

/// A protocol format, as every tool sees it: a verdict at read speed, a full dissection, and
/// what the tools around them need (framing parameters, another protocol id, re-signing, a
/// schema text).
pub trait Dissector: Send + Sync {
    /// The name `--decode PORT=NAME` uses and JSON's `decoder` shows: `demo`, `batch`,
    /// `schema`, `schema-batch`, or the user's protocol name.
    fn name(&self) -> &str;

    /// How the format lays out a datagram.
    fn layout(&self) -> Layout;

    /// The verdict on a payload, read without recording anything.
    fn verdict(&self, payload: &[u8]) -> Verdict<'_>;

    /// The full dissection of a payload.
    fn dissect(&self, payload: &[u8]) -> Dissection;

    /// The dissection without the entries only a field tree shows, for outputs that list
    /// values (`decode --json`): the same status, packet type, problem, desync, checks and
    /// messages, and the same fields under [`Dissection::body_of`] each message, but a batch's
    /// message scopes and headers are not recorded (their values are in the [`MessageView`]s).
    /// The default is [`Dissector::dissect`]: a packet's tree has nothing only a tree shows.
    fn dissect_values(&self, payload: &[u8]) -> Dissection {
        self.dissect(payload)
    }

    /// The sequential half of a stateful format (a transport stack): a fresh [`Tracker`] that
    /// sees the datagrams in order and gives each the [`Observation`] its dissection needs.
    /// `None` (the default) for formats that read every datagram on its own: the tools then
    /// run no sequential pass at all.
    fn tracker(&self) -> Option<Box<dyn Tracker>> {
        None
    }

    /// [`Dissector::verdict`] with what the tracker observed; the default ignores it.
    fn verdict_seen(&self, payload: &[u8], seen: &Observation) -> Verdict<'_> {
        let _ = seen;
        self.verdict(payload)
    }

    /// [`Dissector::dissect`] (or with `values`, [`Dissector::dissect_values`]) with what the
    /// tracker observed; the default ignores it.
    fn dissect_seen(&self, payload: &[u8], seen: &Observation, values: bool) -> Dissection {
        let _ = seen;
        if values {
            self.dissect_values(payload)
        } else {
            self.dissect(payload)
        }
    }

    /// The datagram with a transport's payload in plaintext, for mutating its fields in place
    /// (the proxy); `None` for formats without a transport (their bytes are the payload's), and
    /// when it cannot be opened.
    fn open_seen(&self, datagram: &[u8], seen: &Observation) -> Option<Vec<u8>> {
        let _ = (datagram, seen);
        None
    }

    /// The datagram with every byte a transport decrypted in plaintext, in place, for showing
    /// the bits its fields were read from (the TUI's bit view); `None` when they are the
    /// datagram's own. The default: [`Dissector::open_seen`].
    fn shown_seen(&self, datagram: &[u8], seen: &Observation) -> Option<Vec<u8>> {
        self.open_seen(datagram, seen)
    }

    /// What of the observation `seen` an owner keeps for a whole session (the live TUI):
    /// without what a transport decrypted ([`Transport::to_keep`](crate::transport::Transport::to_keep)).
    /// The default: `seen` as it is.
    fn to_keep(&self, seen: Observation) -> Observation {
        seen
    }

    /// Byte offset of the payload in a datagram (0 without a transport): where a mutation log
    /// finds the inner format's CRC.
    fn payload_start(&self, datagram: &[u8]) -> usize {
        let _ = datagram;
        0
    }

    /// Re-signs the payload's own integrity fields where the payload is in the datagram (an
    /// opened one, for a transport): [`Dissector::seal`] of the payload. The default is
    /// [`Dissector::seal`] of the datagram.
    fn seal_payload(&self, datagram: &mut [u8]) -> bool {
        self.seal(datagram)
    }

    /// Closes an opened datagram ([`Dissector::open_seen`]) again: a transport encrypts and
    /// signs it with the keys `seen` holds and the packet's own sequence. False when it cannot.
    /// The default: true, nothing to do.
    fn close_seen(&self, datagram: &mut [u8], seen: &Observation) -> bool {
        let _ = (datagram, seen);
        true
    }

    /// The windows of trace bits past the datagram's own that this datagram carries (see
    /// [`Carried`]); empty (the default) when every traced bit is the datagram's own or was
    /// read from other datagrams.
    fn carried_seen(&self, datagram: &[u8], seen: &Observation) -> Vec<Carried> {
        let _ = (datagram, seen);
        Vec::new()
    }

    /// The framing parameters (packet type names, protocol id, MTU), for formats that frame
    /// packets.
    fn protocol(&self) -> Option<&Protocol> {
        None
    }

    /// The same dissector checking CRCs with another protocol id (`--protocol-id`), for formats
    /// that have one. It frames with the one framing function ([`crate::packet::frame`]).
    fn with_protocol_id(&self, id: ProtocolId) -> Option<Arc<dyn Dissector>> {
        let _ = id;
        None
    }

    /// Re-signs a datagram whose bytes were changed after it was written (the proxy's
    /// mutations): stores the CRC with the protocol id folded in. False, and nothing changed,
    /// for formats without integrity fields (and datagrams too short to hold them).
    fn seal(&self, datagram: &mut [u8]) -> bool {
        let _ = datagram;
        false
    }

    /// The protocol described in the schema language (SCHEMA.md), when the dissector can give
    /// it: what `export-wireshark` reads.
    fn schema_text(&self) -> Option<String> {
        None
    }
}

/// The [`Dissector`] of a compiled packet set: any [`Packet`] type, framed with a [`Protocol`]
/// value (its own, or the same with another id).
pub struct PacketDissector<P> {
    name: String,
    protocol: Protocol,
    /// The packet type names, [`intern`]ed.
    types: Vec<&'static str>,
    packets: PhantomData<fn() -> P>,
}

impl<P: Packet> PacketDissector<P> {
    /// The dissector of `P`, named `name`, framed with `P::protocol()`.
    pub fn new(name: impl Into<String>) -> Self {
        Self::with_protocol(name, P::protocol().clone())
    }

    /// The dissector of `P` framed with `protocol` (the packet types must be `P`'s; the id and
    /// MTU may differ).
    pub fn with_protocol(name: impl Into<String>, protocol: Protocol) -> Self {
        let types = protocol.packet_types.iter().map(|t| intern(t)).collect();
        PacketDissector {
            name: name.into(),
            protocol,
            types,
            packets: PhantomData,
        }
    }

    fn type_name(&self, seen: Option<u32>) -> Option<&'static str> {
        self.types.get(usize::try_from(seen?).ok()?).copied()
    }
}

impl<P> Clone for PacketDissector<P> {
    fn clone(&self) -> Self {
        PacketDissector {
            name: self.name.clone(),
            protocol: self.protocol.clone(),
            types: self.types.clone(),
            packets: PhantomData,
        }
    }
}

impl<P> fmt::Debug for PacketDissector<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PacketDissector")
            .field("name", &self.name)
            .field("protocol", &self.protocol)
            .finish()
    }
}

impl<P: Packet + 'static> Dissector for PacketDissector<P> {
    fn name(&self) -> &str {
        &self.name
    }

    fn layout(&self) -> Layout {
        Layout::Packets
    }

    fn verdict(&self, payload: &[u8]) -> Verdict<'_> {
        let mut s = ReadStream::new(payload);
        let mut seen = None;
        let r = verify_packet::<P, _>(&mut s, &self.protocol, &mut seen);
        Verdict::of_read(self.type_name(seen), r)
    }

    fn dissect(&self, payload: &[u8]) -> Dissection {
        let mut s = TraceStream::new(payload);
        let mut seen = None;
        let r = verify_packet::<P, _>(&mut s, &self.protocol, &mut seen);
        let trace = s.into_trace(r);
        Dissection::of_trace(self.type_name(seen), trace, payload)
    }

    fn protocol(&self) -> Option<&Protocol> {
        Some(&self.protocol)
    }

    fn with_protocol_id(&self, id: ProtocolId) -> Option<Arc<dyn Dissector>> {
        let mut d = self.clone();
        d.protocol.id = id;
        Some(Arc::new(d))
    }

    fn seal(&self, datagram: &mut [u8]) -> bool {
        seal_crc(self.protocol.id, datagram)
    }

    fn schema_text(&self) -> Option<String> {
        P::schema_text()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::Stream;
    use crate::write::WriteStream;

    #[test]
    fn a_writer_with_an_extra_bit_is_located() {
        // The writer sends one extra bit right where the reader is byte-aligned, so the marker
        // moves by a byte instead of hiding in alignment slack.
        let mut buf = [0u8; 64];
        let mut w = WriteStream::new(&mut buf);
        w.bits("a", &mut 0x5A5A_5A5A, 32).unwrap();
        w.bits("b", &mut 0x11, 8).unwrap();
        w.check("header").unwrap();
        w.bits("c", &mut 0xAB, 8).unwrap();
        w.bool("bug", &mut true).unwrap();
        w.check("objects").unwrap();
        let n = w.finish();

        let mut r = TraceStream::new(&buf[..n]);
        let result = (|| {
            r.bits("a", &mut 0, 32)?;
            r.bits("b", &mut 0, 8)?;
            r.check("header")?;
            r.bits("c", &mut 0, 8)?;
            r.check("objects")
        })();
        let trace = r.into_trace(result);
        let d = Dissection::of_trace(None, trace, &buf[..n]);
        assert_eq!(d.status, Status::Desync);
        assert_eq!(d.problem.as_ref().map(|p| p.kind), Some("check_mismatch"));
        let s = d.desync.unwrap();
        assert_eq!(
            (s.label.as_str(), s.expected_bit, s.found_bit),
            ("objects", 80, Some(88))
        );
        assert_eq!(s.after_check.as_deref(), Some("header"));
        // The writer's extra 1 bit is followed by 7 zero padding bits: 1 to 8 bits behind.
        assert_eq!(s.behind, Some((1, 8)));
        assert_eq!(
            s.message(),
            "reader is 1 to 8 bits behind the writer between check 'header' and check 'objects' \
             (marker found at bit 88, expected at bit 80)"
        );
    }

    #[test]
    fn a_marker_that_is_nowhere_near_says_so() {
        let mut r = TraceStream::new(&[0u8; 8]);
        let result = r.check("gone");
        let trace = r.into_trace(result);
        let d = Dissection::of_trace(None, trace, &[0u8; 8]);
        let s = d.desync.unwrap();
        assert_eq!((s.found_bit, s.behind), (None, None));
        assert_eq!(
            s.message(),
            "reader and writer desynced before check 'gone': marker not found within 64 bytes \
             of bit 0"
        );
    }

    #[test]
    fn statuses_round_trip_their_names() {
        for s in Status::ALL {
            assert_eq!(Status::from_name(s.name()), Some(s));
            assert_eq!(s.to_string(), s.name());
        }
        assert_eq!(Status::from_name("nonsense"), None);
        assert!(Status::Desync.is_problem() && !Status::Undecoded.is_problem());
    }
}
