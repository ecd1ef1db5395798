//! Transports: layers that unwrap a datagram (read a header, check or decrypt it) and hand the
//! payload to a [`Dissector`], so that `--decode PORT=netcode+demo` reads a game's packets
//! inside its transport with every tool unchanged.
//!
//! A [`Transport`] is two halves:
//!
//! - [`Transport::tracker`]: the sequential pass ([`Tracker`]), run once in capture order,
//!   cheap, bounded in memory: it learns keys from connection requests and records which
//!   datagrams are replays, and gives each datagram an [`Observation`].
//! - [`Transport::unwrap`]: pure, per datagram, any thread, any order: reads the header, verifies
//!   and decrypts with what the observation holds, and returns the layer's trace entries and the
//!   plaintext payload ([`Unwrapped`]).
//!
//! [`Stack`] puts a transport over any dissector (or over none: the payload as bytes) and is
//! itself a [`Dissector`]: ONE [`Dissection`] per datagram, whose trace holds the transport's
//! entries (paths prefixed with the layer's name: `netcode.sequence`, `netcode.mac`) and the
//! inner dissector's entries with their usual paths, at bit offsets in datagram coordinates (a
//! stream cipher puts plaintext byte `i` where ciphertext byte `i` was). One status: the
//! transport's when it failed or could not decrypt ([`Status::Encrypted`]), else the inner
//! dissector's; the problem's [`Verdict::layer`] names the layer.
//!
//! # Example
//!
//! A toy transport (one header byte that must be 0x7e) over the demo's packets would be:
//!
//! ```
//! use bitlens_codec::dissect::{Dissector, Problem, Status};
//! use bitlens_codec::observe::{Observation, Tracker};
//! use bitlens_codec::transport::{Plaintext, Stack, Transport, Unwrapped, field};
//! use bitlens_codec::Value;
//! use std::net::SocketAddr;
//! use std::sync::Arc;
//!
//! struct Tilde;
//! struct NoState;
//! impl Tracker for NoState {
//!     fn observe(&mut self, _: SocketAddr, _: SocketAddr, _: &[u8]) -> Observation {
//!         Observation::NONE
//!     }
//! }
//! impl Transport for Tilde {
//!     fn name(&self) -> &'static str { "tilde" }
//!     fn tracker(&self) -> Box<dyn Tracker> { Box::new(NoState) }
//!     fn unwrap(&self, d: &[u8], _: &Observation, record: bool) -> Unwrapped {
//!         let mut u = Unwrapped::new("tilde.packet");
//!         if record && !d.is_empty() {
//!             u.header.push(field("tilde.mark", 0, 8, Value::Int(d[0].into())));
//!         }
//!         if d.first() == Some(&0x7e) {
//!             u.payload = Some(Plaintext { offset: 1, bytes: d[1..].to_vec() });
//!         } else {
//!             u.fail(Problem { kind: "bad_mark", bit: 0, field: "tilde.mark".into(),
//!                              message: "tilde.mark: not 0x7e".into() });
//!         }
//!         u
//!     }
//! }
//!
//! let raw = Stack::new(Arc::new(Tilde), None);
//! assert_eq!(raw.name(), "tilde");
//! let d = raw.dissect(&[0x7e, 1, 2]);
//! assert_eq!(d.status, Status::Ok);
//! assert_eq!(d.trace.get("payload").map(|f| (f.bit, f.bits)), Some((8, 16)));
//! let v = raw.verdict(&[0x7f, 1, 2]);
//! assert_eq!((v.status, v.layer), (Status::Error, Some("tilde")));
//! ```

use crate::dissect::{Carried, Dissection, Dissector, LayerView, Layout, Problem, Status, Verdict};
use crate::observe::{Observation, Tracker};
use crate::packet::ProtocolId;
use crate::trace::{Entries, FieldKind, Trace, TraceField, Value};
use std::sync::Arc;

/// The plaintext a transport hands on, and where it sits in the datagram.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plaintext {
    /// Byte offset of the payload's first byte in the datagram.
    pub offset: usize,
    /// The payload's bytes (decrypted, for an encrypting transport).
    pub bytes: Vec<u8>,
}

/// What a transport made of one datagram.
#[derive(Debug, Clone, PartialEq)]
pub struct Unwrapped {
    /// [`Status::Ok`] (read; a payload, if any, in `payload`), [`Status::Error`] (with
    /// `problem`) or [`Status::Encrypted`] (header read, payload not readable; `problem` may say
    /// why, e.g. an unknown client).
    pub status: Status,
    /// The transport's packet type (`netcode.keep_alive`); a payload's dissection gives its own.
    pub packet_type: &'static str,
    /// What the layer found wrong, or why it could not decrypt.
    pub problem: Option<Problem>,
    /// The layer's entries before the payload (empty when not recording).
    pub header: Vec<TraceField>,
    /// The layer's entries after the payload: a MAC (empty when not recording).
    pub trailer: Vec<TraceField>,
    /// The payload for the inner dissector, when the packet carries one and it could be read.
    pub payload: Option<Plaintext>,
    /// The layer the problem belongs to when it is not this transport's own but a layer it
    /// runs inside itself (netcode's MAC under yojimbo): what [`Verdict::layer`] names. `None`:
    /// the transport's own name.
    pub layer: Option<&'static str>,
}

impl Unwrapped {
    /// An ok result of type `packet_type` with no entries and no payload yet.
    pub fn new(packet_type: &'static str) -> Self {
        Unwrapped {
            status: Status::Ok,
            packet_type,
            problem: None,
            header: Vec::new(),
            trailer: Vec::new(),
            payload: None,
            layer: None,
        }
    }

    /// Marks the datagram failed with `problem` (the first problem is kept) and drops the
    /// payload.
    pub fn fail(&mut self, problem: Problem) {
        self.status = Status::Error;
        self.payload = None;
        self.problem.get_or_insert(problem);
    }

    /// Marks the payload unreadable for want of a key; `why` says why, when it is worth saying.
    pub fn encrypted(&mut self, why: Option<Problem>) {
        if self.status == Status::Ok {
            self.status = Status::Encrypted;
            self.problem = why;
        }
        self.payload = None;
    }
}

/// A trace entry of a transport: a value at depth 0 with the full path `path` (the layer's name
/// first: `netcode.sequence`).
pub fn field(path: &str, bit: usize, bits: usize, value: Value) -> TraceField {
    TraceField::new(path, 0, bit, bits, value, FieldKind::Value)
}

/// A layer that unwraps datagrams for an inner dissector (see the module docs).
pub trait Transport: Send + Sync {
    /// The layer's name: the `NAME` of `--decode PORT=NAME+INNER`, and the first segment of its
    /// entries' paths.
    fn name(&self) -> &'static str;

    /// A fresh sequential pass over a capture or a live session.
    fn tracker(&self) -> Box<dyn Tracker>;

    /// Reads one datagram given what the tracker observed when it went by; records trace
    /// entries only with `record` (the verdict path records nothing). Never panics, never
    /// allocates by an unchecked length.
    fn unwrap(&self, datagram: &[u8], seen: &Observation, record: bool) -> Unwrapped;

    /// The datagram with its payload in plaintext where the ciphertext was (same length, the
    /// layer's own bytes unchanged), for the proxy to mutate the payload's fields in place;
    /// `None` when it cannot be read (no key, a fault) or carries no payload. The default:
    /// `None` (a transport that does not encrypt needs no opening: its bytes are the payload's).
    fn open(&self, datagram: &[u8], seen: &Observation) -> Option<Vec<u8>> {
        let _ = (datagram, seen);
        None
    }

    /// The datagram as its fields were read, for showing its bits (the TUI's bit view), never
    /// for closing again: [`Transport::open`]'s, and where the layer decrypts more than its
    /// payload (netcode's connect token, with the server's key) that too, in place. The
    /// default: [`Transport::open`].
    fn shown(&self, datagram: &[u8], seen: &Observation) -> Option<Vec<u8>> {
        self.open(datagram, seen)
    }

    /// Where the payload is in an opened datagram (byte range), if it has one.
    fn payload_range(&self, datagram: &[u8]) -> Option<std::ops::Range<usize>> {
        let _ = datagram;
        None
    }

    /// Closes an opened (and maybe changed) datagram again: encrypts its payload in place and
    /// signs it (a new MAC), with the keys and the packet's own sequence. False, and nothing
    /// changed, when it cannot (no key). The default: true, nothing to do.
    fn close(&self, datagram: &mut [u8], seen: &Observation) -> bool {
        let _ = (datagram, seen);
        true
    }

    /// The windows of trace bits numbered past the datagram's own (a packet the layer
    /// reassembled from fragments) that this datagram's bytes carry, in the opened datagram's
    /// coordinates ([`Carried`]). The default: none (a layer that reassembles nothing).
    fn carried(&self, datagram: &[u8], seen: &Observation) -> Vec<Carried> {
        let _ = (datagram, seen);
        Vec::new()
    }

    /// What of the observation `seen` an owner keeps for a whole session (the live TUI keeps
    /// every datagram's): the same, without what the pass decrypted, which each dissection
    /// then opens again (what [`Tracker::keep_plaintext`] does for a pass whose every
    /// observation is kept). The default: `seen` as it is (a layer that decrypts nothing).
    fn to_keep(&self, seen: Observation) -> Observation {
        seen
    }

    /// Whether the layer hands its payload to an inner dissector (`--decode PORT=NAME+INNER`).
    /// False for a layer that reads its payload itself, with its own configuration (yojimbo's
    /// messages): then only `--decode PORT=NAME` names it, and [`Stack`] keeps the payload it
    /// returns only as the plaintext it handed on ([`LayerView::plaintext`]), with no entry of
    /// its own. The default: true.
    fn takes_inner(&self) -> bool {
        true
    }
}

/// A transport over an inner dissector (or, with none, over the payload as bytes): a
/// [`Dissector`] named `transport+inner` (or `transport`).
#[derive(Clone)]
pub struct Stack {
    name: String,
    transport: Arc<dyn Transport>,
    inner: Option<Arc<dyn Dissector>>,
}

impl std::fmt::Debug for Stack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stack").field("name", &self.name).finish()
    }
}

/// Moves a dissection of the payload (bits from 0) to datagram coordinates: `bits` later.
fn shift_problem(p: &mut Problem, bits: usize) {
    p.bit += bits;
}

impl Stack {
    /// `transport` over `inner` (`None`: the payload shown as bytes).
    pub fn new(transport: Arc<dyn Transport>, inner: Option<Arc<dyn Dissector>>) -> Self {
        let name = match &inner {
            Some(d) => format!("{}+{}", transport.name(), d.name()),
            None => transport.name().to_owned(),
        };
        Stack {
            name,
            transport,
            inner,
        }
    }

    /// The transport.
    pub fn transport(&self) -> &Arc<dyn Transport> {
        &self.transport
    }

    /// The inner dissector, if any.
    pub fn inner(&self) -> Option<&Arc<dyn Dissector>> {
        self.inner.as_ref()
    }

    /// The inner dissection of `plain`, moved to datagram coordinates (bits `offset * 8` on,
    /// entries after the `header` transport entries).
    fn inner_dissection(&self, plain: &Plaintext, header: usize, values: bool) -> Dissection {
        let base = plain.offset * 8;
        let Some(inner) = &self.inner else {
            let bits = plain.bytes.len() * 8;
            let mut d = Dissection::default();
            d.trace.fields.push(field(
                "payload",
                base,
                bits,
                Value::Bytes(plain.bytes.clone()),
            ));
            d.trace.bits_read = bits;
            d.trace.total_bits = bits;
            return d;
        };
        let mut d = inner.dissect_seen(&plain.bytes, &Observation::NONE, values);
        d.trace.fields.shift_bits(base);
        if let Some(p) = &mut d.problem {
            shift_problem(p, base);
        }
        if let Some(s) = &mut d.desync {
            s.expected_bit += base;
            s.found_bit = s.found_bit.map(|b| b + base);
        }
        for m in d.messages.iter_mut().flatten() {
            m.offset += plain.offset;
            m.entries = m.entries.start + header..m.entries.end + header;
            m.body = m.body.start + header..m.body.end + header;
            if let Some(p) = &mut m.problem {
                shift_problem(p, base);
            }
        }
        d
    }

    fn dissect_with(&self, datagram: &[u8], seen: &Observation, values: bool) -> Dissection {
        let u = self.transport.unwrap(datagram, seen, true);
        let header_len = u.header.len();
        let mut fields = Entries::new();
        let (mut status, mut packet_type, mut problem) = (u.status, Some(u.packet_type), u.problem);
        let (mut desync, mut messages) = (None, None);
        let mut payload_bits = 0..0;
        let (mut bits_read, mut error) = (datagram.len() * 8, None);
        if let Some(plain) = &u.payload {
            payload_bits = plain.offset * 8..(plain.offset + plain.bytes.len()) * 8;
        }
        // A layer that reads its payload itself (yojimbo) traced it in its own entries: its
        // payload is kept only as the plaintext it handed on (`--write-plaintext`).
        let handed_on = u
            .payload
            .as_ref()
            .filter(|_| self.inner.is_some() || self.transport.takes_inner());
        if let Some(plain) = handed_on {
            let inner = self.inner_dissection(plain, header_len, values);
            let Dissection {
                status: s,
                packet_type: t,
                trace,
                problem: p,
                desync: ds,
                messages: ms,
                layers: _,
            } = inner;
            if self.inner.is_some() {
                status = s;
                packet_type = t;
                problem = p;
                desync = ds;
                messages = ms;
                bits_read = payload_bits.start + trace.bits_read;
                error = trace.error;
            }
            // The inner trace's storage is the thread's recycled one (room for its fields
            // already): the few header entries go in front of it, rather than every inner entry
            // being moved into a fresh vector that grows as it goes.
            fields = trace.fields;
            fields.prepend(u.header);
        } else {
            fields.extend(u.header);
        }
        let trailer_start = fields.len();
        fields.extend(u.trailer);
        let layer = LayerView {
            name: self.transport.name(),
            header: 0..header_len,
            trailer: trailer_start..fields.len(),
            payload_bits,
            status: u.status,
            problem: if u.status == Status::Ok {
                None
            } else {
                problem.clone()
            },
            plaintext: u.payload.map(|p| p.bytes),
        };
        if u.status != Status::Ok {
            status = u.status;
        }
        if packet_type.is_none() {
            packet_type = Some(u.packet_type);
        }
        Dissection {
            status,
            packet_type,
            trace: Trace {
                fields,
                error,
                bits_read,
                total_bits: datagram.len() * 8,
            },
            problem,
            desync,
            messages,
            layers: vec![layer],
        }
    }
}

impl Dissector for Stack {
    fn name(&self) -> &str {
        &self.name
    }

    fn layout(&self) -> Layout {
        Layout::Other
    }

    fn verdict(&self, payload: &[u8]) -> Verdict<'_> {
        self.verdict_seen(payload, &Observation::NONE)
    }

    fn dissect(&self, payload: &[u8]) -> Dissection {
        self.dissect_with(payload, &Observation::NONE, false)
    }

    fn dissect_values(&self, payload: &[u8]) -> Dissection {
        self.dissect_with(payload, &Observation::NONE, true)
    }

    fn tracker(&self) -> Option<Box<dyn Tracker>> {
        Some(self.transport.tracker())
    }

    fn verdict_seen(&self, payload: &[u8], seen: &Observation) -> Verdict<'_> {
        let u = self.transport.unwrap(payload, seen, false);
        let outer = Verdict {
            status: u.status,
            packet_type: Some(u.packet_type),
            problem: u.problem,
            layer: Some(u.layer.unwrap_or(self.transport.name())),
        };
        if u.status != Status::Ok {
            return outer;
        }
        match (&self.inner, &u.payload) {
            (Some(inner), Some(plain)) => {
                let mut v = inner.verdict(&plain.bytes);
                if let Some(p) = &mut v.problem {
                    shift_problem(p, plain.offset * 8);
                }
                if v.packet_type.is_none() {
                    v.packet_type = Some(u.packet_type);
                }
                v.layer = v.problem.as_ref().map(|_| inner.name());
                v
            }
            _ => Verdict {
                layer: None,
                ..outer
            },
        }
    }

    fn dissect_seen(&self, payload: &[u8], seen: &Observation, values: bool) -> Dissection {
        self.dissect_with(payload, seen, values)
    }

    fn open_seen(&self, datagram: &[u8], seen: &Observation) -> Option<Vec<u8>> {
        self.transport.open(datagram, seen)
    }

    fn shown_seen(&self, datagram: &[u8], seen: &Observation) -> Option<Vec<u8>> {
        self.transport.shown(datagram, seen)
    }

    fn to_keep(&self, seen: Observation) -> Observation {
        self.transport.to_keep(seen)
    }

    fn payload_start(&self, datagram: &[u8]) -> usize {
        self.transport
            .payload_range(datagram)
            .map_or(0, |r| r.start)
    }

    fn seal_payload(&self, datagram: &mut [u8]) -> bool {
        match (&self.inner, self.transport.payload_range(datagram)) {
            (Some(d), Some(r)) => datagram.get_mut(r).is_some_and(|p| d.seal(p)),
            _ => false,
        }
    }

    fn close_seen(&self, datagram: &mut [u8], seen: &Observation) -> bool {
        self.transport.close(datagram, seen)
    }

    fn carried_seen(&self, datagram: &[u8], seen: &Observation) -> Vec<Carried> {
        self.transport.carried(datagram, seen)
    }

    fn with_protocol_id(&self, id: ProtocolId) -> Option<Arc<dyn Dissector>> {
        let inner = self.inner.as_ref()?.with_protocol_id(id)?;
        Some(Arc::new(Stack::new(
            Arc::clone(&self.transport),
            Some(inner),
        )))
    }
}
