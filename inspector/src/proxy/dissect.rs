//! The proxy's one connection to decoding: everything the relay, the mutations and the output
//! ask of a protocol goes through [`SessionDissector`], over the program's [`Dissectors`], so
//! the proxy works for every protocol a program registers (the demo, a schema, a game's own
//! compiled packet sets and message sets):
//!
//! - [`SessionDissector::packet_type`] is [`Dissector::verdict`] (read speed, no trace);
//! - [`SessionDissector::field_map`] reads [`Dissector::dissect`]'s one field tree;
//! - [`SessionDissector::seal`] is [`Dissector::seal`] (the CRC re-signed, for formats that
//!   have one);
//! - [`SessionDissector::write_json`] is the `decode --json` writer of a dissection.
//!
//! The dissector of a session is the one `bitlens decode` would pick for the recording: by the
//! server's UDP port (the datagrams are recorded between the client and the server, see
//! [`super::record`]), so a live line and the recording's line for the same frame agree.

use crate::capture::Datagram;
use crate::dissectors::{Dissectors, Observer};
use crate::output;
use bitlens_codec::dissect::{Dissector, Layout};
use bitlens_codec::observe::Observation;
use bitlens_codec::{FieldKind, TraceField, Value};
use std::fmt;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

/// What a field is to a mutation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A value: a ranged integer, a code, a bool, raw bits.
    Value,
    /// The length or count in front of a string or array (`name.len`, `mice.len`).
    Length {
        /// Bits one counted element takes, when the datagram shows it (an element was read).
        unit_bits: Option<usize>,
    },
    /// A check marker (`check "label"`), 32 bits.
    Check,
    /// The packet CRC (32 bits at bit 0).
    Crc,
}

/// One field of a datagram: where its bits are and what the reader allows there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// Full path: `aim.x`, `mice.len`, `objects[2].position.y`; a check's path is its label.
    pub path: String,
    /// First bit (stream bit: bit `k % 8` of byte `k / 8`).
    pub bit: usize,
    /// Width in bits.
    pub bits: usize,
    /// The allowed range of the wire integer (`int(v, min, max)` sends `v - min`).
    pub range: Option<(i128, i128)>,
    /// The wire integer read (a compressed float's code, an int's value), when it has one.
    pub wire: Option<i128>,
    /// What it is.
    pub role: Role,
}

/// The fields of one datagram, as its decoder traced them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldMap {
    /// The packet type's name, when the read got that far.
    pub packet_type: Option<String>,
    /// Values, lengths, check markers and the CRC, in stream order (no scopes, no padding).
    pub fields: Vec<Field>,
    /// Bits in the datagram.
    pub total_bits: usize,
    /// Paths of traced fields whose bits this datagram does not carry (a reassembled packet's
    /// fields from its earlier fragments, a block's): never mutated, named when a rule wanted
    /// them.
    pub elsewhere: Vec<String>,
}

impl FieldMap {
    /// The fields whose path matches `pattern` (`*` matches any run of characters).
    pub fn matching<'a>(&'a self, pattern: &'a str) -> impl Iterator<Item = &'a Field> + 'a {
        self.fields
            .iter()
            .filter(move |f| wildcard_match(pattern, &f.path))
    }
}

/// `*` matches any run of characters (also `.` and `[`), everything else itself.
pub fn wildcard_match(pattern: &str, text: &str) -> bool {
    let (p, t) = (pattern.as_bytes(), text.as_bytes());
    // Iterative glob with one backtrack point: linear in practice, never recursive.
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, ti));
            pi += 1;
        } else if pi < p.len() && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

/// The decoding of one proxied session (one `--upstream`).
#[derive(Clone)]
pub struct SessionDissector {
    dissectors: Dissectors,
    /// The dissector of the server's port, as the recording's datagrams would pick it.
    dissector: Option<Arc<dyn Dissector>>,
    /// The transports' sequential pass over the live datagrams, in arrival order (`None`
    /// without a transport on the server's port).
    observer: Option<Arc<Mutex<Observer>>>,
}

impl fmt::Debug for SessionDissector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionDissector")
            .field("dissectors", &self.dissectors)
            .field("dissector", &self.name())
            .finish()
    }
}

impl SessionDissector {
    /// The decoding of datagrams to and from `server`, with the dissector `dissectors` have on
    /// its port.
    pub fn new(dissectors: Dissectors, server: SocketAddr) -> Self {
        let dissector = dissectors.for_ports(server.port(), server.port()).cloned();
        let observer = dissectors.observer().map(|o| Arc::new(Mutex::new(o)));
        SessionDissector {
            dissectors,
            dissector,
            observer,
        }
    }

    /// Takes note of the next live datagram (from `src` to `dst`, before any mutation), in
    /// arrival order: what its dissection, opening and sealing need ([`Observation::NONE`]
    /// without a transport).
    pub fn observe(&self, src: SocketAddr, dst: SocketAddr, payload: &[u8]) -> Observation {
        match &self.observer {
            Some(o) => o
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .observe_live(src, dst, payload),
            None => Observation::NONE,
        }
    }

    /// The traffic ended (the proxy stops): what the transports still held unfinished
    /// ([`Observer::finish`], one line each; nothing without a transport).
    pub fn finish(&self) -> Vec<String> {
        match &self.observer {
            Some(o) => o.lock().unwrap_or_else(|e| e.into_inner()).finish(),
            None => Vec::new(),
        }
    }

    /// The datagram with its transport's payload in plaintext, to mutate in place; `None`
    /// without a transport (the bytes are the payload's) or a key.
    pub fn open(&self, payload: &[u8], seen: &Observation) -> Option<Vec<u8>> {
        self.dissector.as_ref()?.open_seen(payload, seen)
    }

    /// Bit of the inner format's CRC in a datagram (after a transport's header).
    pub fn crc_bit(&self, payload: &[u8]) -> usize {
        self.dissector
            .as_ref()
            .map_or(0, |d| d.payload_start(payload) * 8)
    }

    /// The dissector's name (`demo`, `schema`, a game's protocol), `None` when the server's
    /// port has none.
    pub fn name(&self) -> Option<&str> {
        self.dissector.as_ref().map(|d| d.name())
    }

    /// The packet type names a datagram of this session can have (what a rule's `packet=`
    /// is compared with): a framed protocol's types, `Batch` for message batches; `None`
    /// when the format does not say (or the port has no dissector).
    pub fn packet_types(&self) -> Option<Vec<String>> {
        let d = self.dissector.as_ref()?;
        match (d.protocol(), d.layout()) {
            (Some(p), _) => Some(p.packet_types.clone()),
            (None, Layout::Batches) => Some(vec![bitlens_batch::dissect::BATCH.to_owned()]),
            (None, _) => None,
        }
    }

    /// The per-port dissectors (the TUI's inspector takes them whole).
    pub fn dissectors(&self) -> &Dissectors {
        &self.dissectors
    }

    /// The packet type of a datagram, read at read-stream speed (no trace).
    pub fn packet_type(&self, payload: &[u8], seen: &Observation) -> Option<String> {
        let v = self.dissector.as_ref()?.verdict_seen(payload, seen);
        v.packet_type.map(str::to_owned)
    }

    /// Every field of a datagram with its bits, range and role.
    pub fn field_map(&self, payload: &[u8], seen: &Observation) -> FieldMap {
        let total_bits = payload.len() * 8;
        let Some(dissector) = &self.dissector else {
            return FieldMap {
                total_bits,
                ..FieldMap::default()
            };
        };
        let dissection = dissector.dissect_seen(payload, seen, false);
        let trace = &dissection.trace.fields;
        let mut fields = Vec::with_capacity(trace.len());
        let mut elsewhere = Vec::new();
        // Entries numbered past the datagram's bits (a reassembled packet): the part this
        // datagram carries is moved to its bits, the rest was read from other datagrams.
        let past = |f: &TraceField| f.bit + f.bits > total_bits;
        let carried = if trace.iter().any(past) {
            dissector.carried_seen(payload, seen)
        } else {
            Vec::new()
        };
        for f in trace {
            let role = match &f.kind {
                FieldKind::Check { label, .. } if label == "crc32" && f.bit == 0 => Role::Crc,
                FieldKind::Check { .. } => Role::Check,
                FieldKind::Value if f.name() == "len" => Role::Length {
                    unit_bits: unit_bits(trace, f.path()),
                },
                FieldKind::Value => Role::Value,
                FieldKind::Scope | FieldKind::Padding => continue,
            };
            let path = match &f.kind {
                FieldKind::Check { label, .. } => label.to_string(),
                _ => f.path().to_owned(),
            };
            let wire = f.raw.or(match f.value {
                Value::Int(v) => Some(v),
                Value::Bool(b) => Some(i128::from(b)),
                _ => None,
            });
            let bit = if past(f) {
                let window = carried
                    .iter()
                    .find(|w| f.bit >= w.trace_bit && f.bit + f.bits <= w.trace_bit + w.bits);
                match window {
                    Some(w) => w.bit + (f.bit - w.trace_bit),
                    None => {
                        elsewhere.push(path);
                        continue;
                    }
                }
            } else {
                f.bit
            };
            fields.push(Field {
                path,
                bit,
                bits: f.bits,
                range: f.range,
                wire,
                role,
            });
        }
        let map = FieldMap {
            packet_type: dissection.packet_type.map(str::to_owned),
            fields,
            total_bits,
            elsewhere,
        };
        dissection.recycle();
        map
    }

    /// Re-signs a (mutated) datagram: its CRC computed again with the protocol id folded in
    /// ([`Dissector::seal`]; behind a transport, the opened payload's). False when the format
    /// has no CRC (message batches, no dissector) or the datagram is shorter than the CRC.
    pub fn seal(&self, datagram: &mut [u8]) -> bool {
        self.dissector
            .as_ref()
            .is_some_and(|d| d.seal_payload(datagram))
    }

    /// Closes an opened datagram ([`SessionDissector::open`]) again: its transport encrypts and
    /// signs it. False when it cannot (or there is no dissector).
    pub fn close(&self, datagram: &mut [u8], seen: &Observation) -> bool {
        self.dissector
            .as_ref()
            .is_some_and(|d| d.close_seen(datagram, seen))
    }

    /// Appends the `decode --json` object of a datagram (no newline), its payload `payload`.
    pub fn write_json(&self, buf: &mut Vec<u8>, d: &Datagram, payload: &[u8], seen: &Observation) {
        let (decoder, dissection) = self.dissectors.dissect_seen(d, payload, seen);
        output::write_json(buf, d, payload.len(), decoder, &dissection);
        dissection.recycle();
    }
}

/// Bits per element counted by the length field at `len_path`: an array's first element, or a
/// string's bytes.
fn unit_bits(trace: &[TraceField], len_path: &str) -> Option<usize> {
    let scope = len_path.strip_suffix(".len")?;
    let first = format!("{scope}[0]");
    if let Some(e) = trace.iter().find(|f| f.path() == first) {
        return Some(e.bits).filter(|&b| b > 0);
    }
    let utf8 = format!("{scope}.utf8");
    trace.iter().any(|f| f.path() == utf8).then_some(8)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dissectors::shipped;
    use bitlens_codec::packet::{read_packet, write_packet};
    use bitlens_testkit::demo::{self, DemoPacket};

    fn robocat() -> Vec<u8> {
        let mut p = demo::samples().pop().unwrap();
        let mut buf = [0u8; 1200];
        let n = write_packet(&mut p, &mut buf).unwrap();
        buf[..n].to_vec()
    }

    #[test]
    fn wildcards_match_paths() {
        assert!(wildcard_match("aim.x", "aim.x"));
        assert!(!wildcard_match("aim.x", "aim.xy"));
        assert!(wildcard_match(
            "objects[*].position.x",
            "objects[12].position.x"
        ));
        assert!(wildcard_match("*.len", "mice.len"));
        assert!(wildcard_match("*", ""));
        assert!(!wildcard_match("a*b", "acbx"));
        assert!(wildcard_match("a*b*c", "a_b_b_c"));
    }

    #[test]
    fn the_field_map_of_a_robocat_has_roles_and_units() {
        let s = SessionDissector::new(shipped(), "127.0.0.1:40000".parse().unwrap());
        assert_eq!(s.name(), Some("demo"));
        let bytes = robocat();
        let map = s.field_map(&bytes, &Observation::NONE);
        assert_eq!(map.packet_type.as_deref(), Some("RoboCat"));
        assert_eq!(map.total_bits, bytes.len() * 8);
        let get = |p: &str| map.fields.iter().find(|f| f.path == p).unwrap().clone();
        assert_eq!(get("crc32").role, Role::Crc);
        assert_eq!((get("stats").role, get("stats").bits), (Role::Check, 32));
        let health = get("health");
        assert_eq!(
            (health.range, health.wire, health.bits),
            (Some((0, 100)), Some(87), 7)
        );
        assert_eq!(
            get("mice.len").role,
            Role::Length {
                unit_bits: Some(12)
            }
        );
        assert_eq!(get("name.len").role, Role::Length { unit_bits: Some(8) });
        assert_eq!(map.matching("location.*").count(), 3);
    }

    #[test]
    fn sealing_makes_a_changed_packet_pass_the_crc_again() {
        let s = SessionDissector::new(shipped(), "127.0.0.1:40000".parse().unwrap());
        let mut bytes = robocat();
        // health: 87 -> 86 (bit 35, 7 bits, LSB first: clear the value's bit 0).
        bytes[4] ^= 1 << 3;
        assert!(read_packet::<DemoPacket>(&bytes).is_err());
        assert!(s.seal(&mut bytes));
        match read_packet::<DemoPacket>(&bytes).unwrap() {
            DemoPacket::RoboCat(c) => assert_eq!(c.health, 86),
            other => panic!("{other:?}"),
        }
        let none = SessionDissector::new(shipped(), "127.0.0.1:9".parse().unwrap());
        assert_eq!(none.name(), None);
        assert_eq!(none.packet_types(), None);
        let types = s.packet_types().unwrap();
        assert!(types.iter().any(|t| t == "RoboCat"), "{types:?}");
        assert!(!none.seal(&mut bytes));
    }
}
