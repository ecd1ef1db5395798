//! netcode 1.02 (STANDARD.md of github:mas-bandwidth/netcode; renetcode in Rust, netcode and
//! yojimbo in C/C++) as a bitlens [`Transport`]: stacked over any dissector
//! (`--decode PORT=netcode+NAME`), it reads every packet's header by the standard's reader rules,
//! decrypts connection requests' private connect tokens with the server's private key, and then
//! every packet of that client both ways with the session keys in the token (or those of a key
//! log, [`KeyLog`]), and hands the payload packets' plaintext to the inner dissector.
//!
//! Without keys the header is dissected and the payload reported [`Status::Encrypted`](bitlens_codec::dissect::Status::Encrypted), never
//! guessed at. Faults have their own kinds (the problem's field names the layer, `netcode.`):
//! `mac_mismatch`, `replay`, `token_mac_mismatch`, `token`, `too_small`, `request_size`,
//! `packet_type`, `sequence_bytes`, `version`, `protocol_id`, `plaintext_size`, `direction`,
//! and (status encrypted) `unknown_client`. NETCODE.md has the layout, the rules and where
//! renetcode deviates from the standard.
//!
//! The crate is apart from `bitlens-codec` so that the codec depends on no cryptography.

mod crypto;
pub mod fuzzing;
mod keys;
mod token;
mod tracker;
pub mod wire;

pub use crypto::{Key, open_packet, packet_ad, seal_packet};
pub use keys::{
    ClientKeys, KEYLOG_LABEL, KeyError, KeyLog, parse_key, parse_keylog, parse_protocol_id,
};
pub use token::{PrivateToken, TokenValue, read_token};
pub use tracker::{MAX_CONNECTIONS, Opened, REPLAY_WINDOW, Seen};

use bitlens_codec::Value;
use bitlens_codec::dissect::Problem;
use bitlens_codec::observe::{Observation, Tracker};
use bitlens_codec::transport::{Plaintext, Transport, Unwrapped, field};
use crypto::{open_packet_in_place, open_token, token_ad};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use tracker::{Keyring, NetcodeTracker};
use wire::{
    CHALLENGE_TOKEN_BYTES, Header, MAC_BYTES, NONCE_OFFSET, PacketType, TOKEN_BYTES, TOKEN_OFFSET,
    VERSION_INFO, bytes_at, read_header, request_expire_timestamp, request_protocol_id, u32_at,
    u64_at,
};

/// The name of the layer: `--decode PORT=netcode+NAME`, and the first segment of its fields.
pub const NAME: &str = "netcode";

/// The netcode transport, with the keys it was given.
#[derive(Clone, Default)]
pub struct Netcode {
    keys: Arc<Keyring>,
}

impl std::fmt::Debug for Netcode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Netcode")
            .field("private_key", &self.keys.private_key.is_some())
            .field("keylog_clients", &self.keys.keylog.len())
            .field("protocol_id", &self.keys.protocol_id)
            .finish()
    }
}

fn problem(kind: &'static str, bit: usize, field: &str, message: String) -> Problem {
    Problem {
        kind,
        bit,
        field: field.to_owned(),
        message,
    }
}

fn bytes(path: &str, at: usize, b: &[u8]) -> bitlens_codec::TraceField {
    field(path, at * 8, b.len() * 8, Value::Bytes(b.to_vec()))
}

fn int(path: &str, at: usize, len: usize, v: impl Into<i128>) -> bitlens_codec::TraceField {
    field(path, at * 8, len * 8, Value::Int(v.into()))
}

impl Netcode {
    /// netcode without keys: headers only, payloads encrypted.
    pub fn new() -> Self {
        Self::default()
    }

    /// With the server's private key, which decrypts connect tokens and so learns every
    /// client's session keys from its connection request.
    pub fn with_private_key(mut self, key: Key) -> Self {
        keyring_mut(&mut self.keys).private_key = Some(key);
        self
    }

    /// With the session keys of a key log ([`parse_keylog`]).
    pub fn with_keylog(mut self, clients: HashMap<SocketAddr, ClientKeys>) -> Self {
        keyring_mut(&mut self.keys).keylog.extend(clients);
        self
    }

    /// Expecting protocol id `id`: a connection request with another is a fault
    /// (`protocol_id`).
    pub fn with_protocol_id(mut self, id: u64) -> Self {
        keyring_mut(&mut self.keys).protocol_id = Some(id);
        self
    }

    fn request(&self, d: &[u8], h: &Header, record: bool, u: &mut Unwrapped) {
        let version = &d[1..14];
        let id = u64_at(d, 14).unwrap_or(0);
        let expire = u64_at(d, 22).unwrap_or(0);
        if record {
            u.header.push(int("netcode.packet_type", 0, 0, 0u8));
            u.header[0].bits = 4;
            u.header
                .push(field("netcode.sequence_bytes", 4, 4, Value::Int(0)));
            u.header.push(field(
                "netcode.version_info",
                8,
                13 * 8,
                Value::Str(String::from_utf8_lossy(version).into_owned()),
            ));
            u.header.push(int("netcode.protocol_id", 14, 8, id));
            u.header
                .push(int("netcode.expire_timestamp", 22, 8, expire));
            u.header.push(bytes(
                "netcode.token_nonce",
                NONCE_OFFSET,
                &d[NONCE_OFFSET..TOKEN_OFFSET],
            ));
        }
        let _ = h;
        if version != VERSION_INFO {
            u.fail(problem(
                "version",
                8,
                "netcode.version_info",
                format!(
                    "netcode.version_info: {:?}, not \"NETCODE 1.02\"",
                    String::from_utf8_lossy(version)
                ),
            ));
        }
        if let Some(want) = self.keys.protocol_id.filter(|w| *w != id) {
            u.fail(problem(
                "protocol_id",
                14 * 8,
                "netcode.protocol_id",
                format!("netcode.protocol_id: {id:#x}, the server expects {want:#x}"),
            ));
        }
        let sealed = &d[TOKEN_OFFSET..TOKEN_OFFSET + TOKEN_BYTES];
        let mac_at = TOKEN_OFFSET + TOKEN_BYTES - MAC_BYTES;
        let Some(key) = &self.keys.private_key else {
            if record {
                u.header.push(bytes(
                    "netcode.token",
                    TOKEN_OFFSET,
                    &sealed[..TOKEN_BYTES - MAC_BYTES],
                ));
                u.header.push(bytes(
                    "netcode.token_mac",
                    mac_at,
                    &sealed[TOKEN_BYTES - MAC_BYTES..],
                ));
            }
            u.encrypted(None);
            return;
        };
        let nonce = bytes_at::<24>(d, NONCE_OFFSET).unwrap_or([0; 24]);
        let Some(plain) = open_token(key, &nonce, &token_ad(id, expire), sealed) else {
            if record {
                u.header.push(bytes(
                    "netcode.token",
                    TOKEN_OFFSET,
                    &sealed[..TOKEN_BYTES - MAC_BYTES],
                ));
                let mut mac = bytes(
                    "netcode.token_mac",
                    mac_at,
                    &sealed[TOKEN_BYTES - MAC_BYTES..],
                );
                mac.failed = true;
                u.header.push(mac);
            }
            u.fail(problem(
                "token_mac_mismatch",
                mac_at * 8,
                "netcode.token_mac",
                "netcode.token_mac: the private connect token does not decrypt with the server's \
                 key (wrong key, or the token, protocol id or expire timestamp was changed)"
                    .to_owned(),
            ));
            return;
        };
        match read_token(&plain) {
            Ok(t) => {
                if record {
                    u.header.push(field(
                        "netcode.token",
                        TOKEN_OFFSET * 8,
                        (TOKEN_BYTES - MAC_BYTES) * 8,
                        Value::None,
                    ));
                    let scope = u.header.len() - 1;
                    u.header[scope].kind = bitlens_codec::FieldKind::Scope;
                    for f in &t.fields {
                        let value = match &f.value {
                            TokenValue::Int(i) => Value::Int(*i),
                            TokenValue::Addr(a) => Value::Str(a.clone()),
                            TokenValue::Bytes(b) => Value::Bytes(b.clone()),
                        };
                        let mut e = field(
                            &format!("netcode.token.{}", f.name),
                            (TOKEN_OFFSET + f.offset) * 8,
                            f.len * 8,
                            value,
                        );
                        e.depth = 1;
                        u.header.push(e);
                    }
                    // The token's zero padding to its fixed size: its own entry, so that every
                    // bit of the datagram is in one entry (the profile counts on it).
                    let used = t.fields.last().map_or(0, |f| f.offset + f.len);
                    let size = TOKEN_BYTES - MAC_BYTES;
                    if used < size {
                        let mut pad = field(
                            "netcode.token.padding",
                            (TOKEN_OFFSET + used) * 8,
                            (size - used) * 8,
                            Value::None,
                        );
                        pad.kind = bitlens_codec::FieldKind::Padding;
                        pad.depth = 1;
                        u.header.push(pad);
                    }
                    u.header.push(bytes(
                        "netcode.token_mac",
                        mac_at,
                        &sealed[TOKEN_BYTES - MAC_BYTES..],
                    ));
                }
            }
            Err(e) => u.fail(problem(
                "token",
                (TOKEN_OFFSET + e.offset) * 8,
                "netcode.token",
                format!("netcode.token: {}", e.message),
            )),
        }
    }

    /// The decrypted per-packet data of a packet that is not a payload: its fields.
    fn control(&self, h: &Header, plain: &[u8], at: usize, record: bool, u: &mut Unwrapped) {
        if !record {
            return;
        }
        match h.packet_type {
            PacketType::ConnectionChallenge | PacketType::ConnectionResponse => {
                u.header.push(int(
                    "netcode.challenge_token_sequence",
                    at,
                    8,
                    u64_at(plain, 0).unwrap_or(0),
                ));
                let token = plain.get(8..8 + CHALLENGE_TOKEN_BYTES).unwrap_or_default();
                // Encrypted with a key only the server holds: shown as the bytes they are.
                u.header
                    .push(bytes("netcode.challenge_token_encrypted", at + 8, token));
            }
            PacketType::KeepAlive => {
                u.header.push(int(
                    "netcode.client_index",
                    at,
                    4,
                    u32_at(plain, 0).unwrap_or(0),
                ));
                u.header.push(int(
                    "netcode.max_clients",
                    at + 4,
                    4,
                    u32_at(plain, 4).unwrap_or(0),
                ));
            }
            _ => {}
        }
    }

    fn encrypted(
        &self,
        d: &[u8],
        h: &Header,
        seen: Option<&Seen>,
        record: bool,
        u: &mut Unwrapped,
    ) {
        let body = h.body_offset();
        let mac_at = d.len() - MAC_BYTES;
        if record {
            u.header.push(field(
                "netcode.packet_type",
                0,
                4,
                Value::Int((h.prefix & 0x0f).into()),
            ));
            u.header.push(field(
                "netcode.sequence_bytes",
                4,
                4,
                Value::Int((h.prefix >> 4).into()),
            ));
            u.header.push(field(
                "netcode.sequence",
                8,
                h.sequence_bytes * 8,
                Value::Int(h.sequence.into()),
            ));
            u.trailer.push(bytes("netcode.mac", mac_at, &d[mac_at..]));
        }
        let wrong_way = match (h.packet_type, seen.and_then(|s| s.from_client)) {
            (PacketType::ConnectionChallenge, Some(true)) => Some("a client"),
            (PacketType::ConnectionResponse, Some(false)) => Some("the server"),
            _ => None,
        };
        if let Some(who) = wrong_way {
            u.fail(problem(
                "direction",
                0,
                "netcode.packet_type",
                format!(
                    "netcode.packet_type: {} sent by {who}: the standard ignores it",
                    h.packet_type.name()
                ),
            ));
            return;
        }
        if seen.is_some_and(|s| s.replay) {
            u.fail(problem(
                "replay",
                8,
                "netcode.sequence",
                format!(
                    "netcode.sequence: {} was already received in this direction (or is {} or more \
                     behind the newest): a replay, which the standard ignores",
                    h.sequence, REPLAY_WINDOW
                ),
            ));
            return;
        }
        let (Some(key), Some(id)) = (seen.and_then(|s| s.key), seen.and_then(|s| s.protocol_id))
        else {
            if record {
                u.header
                    .push(bytes("netcode.encrypted", body, &d[body..mac_at]));
            }
            let why =
                (self.keys.any() && seen.is_none_or(|s| s.from_client.is_none())).then(|| {
                    problem(
                    "unknown_client",
                    0,
                    "netcode",
                    "netcode: no connection request of this client was seen and the key log has \
                     no line for it: payload not decrypted"
                        .to_owned(),
                )
                });
            u.encrypted(why);
            return;
        };
        let Some(plain) = plaintext(seen, &key, id, h, d) else {
            if record {
                u.header
                    .push(bytes("netcode.encrypted", body, &d[body..mac_at]));
                if let Some(mac) = u.trailer.last_mut() {
                    mac.failed = true;
                }
            }
            u.fail(problem(
                "mac_mismatch",
                mac_at * 8,
                "netcode.mac",
                format!(
                    "netcode.mac: does not verify with the session key (wrong key, or bytes changed) \
                     for {} sequence {}",
                    h.packet_type.name(),
                    h.sequence
                ),
            ));
            return;
        };
        let (lo, hi) = h.packet_type.plaintext_sizes();
        if !(lo..=hi).contains(&plain.len()) {
            u.fail(problem(
                "plaintext_size",
                body * 8,
                "netcode.encrypted",
                format!(
                    "netcode: {} of {} decrypted bytes, not {lo}..={hi}",
                    h.packet_type.name(),
                    plain.len()
                ),
            ));
            return;
        }
        if h.packet_type == PacketType::ConnectionPayload {
            u.payload = Some(Plaintext {
                offset: body,
                bytes: plain,
            });
        } else {
            self.control(h, &plain, body, record, u);
        }
    }
}

/// netcode's observation `o` without the plaintext its sequential pass opened (the dissection
/// then opens the packet again); any other observation as it is. For a layer above
/// netcode that reads the plaintext in its own pass (yojimbo's reassembly) and then hands on an
/// observation that is kept ([`Tracker::keep_plaintext`]).
pub fn without_plaintext(o: Observation) -> Observation {
    match o.get::<Seen>() {
        Some(seen) if seen.opened.is_some() => Observation::new(Seen {
            opened: None,
            ..seen.clone()
        }),
        _ => o,
    }
}

/// The plaintext of encrypted packet `d` (header `h`): what the sequential pass opened
/// ([`Seen::opened`]; a packet is decrypted once) when it opened these very bytes, else `d`
/// opened with `key` and protocol id `id`. `None` when the MAC does not verify.
fn plaintext(seen: Option<&Seen>, key: &Key, id: u64, h: &Header, d: &[u8]) -> Option<Vec<u8>> {
    let sealed = d.get(h.body_offset()..)?;
    match seen.and_then(|s| s.opened.as_ref()) {
        Some(o) if o.sealed() == sealed => o.plain().map(<[u8]>::to_vec),
        _ => open_packet(key, h.sequence, &packet_ad(id, h.prefix), sealed),
    }
}

/// The keyring to change, copied first when it is shared (`Arc::make_mut` without `Clone`:
/// keys are copied only here).
fn keyring_mut(keys: &mut Arc<Keyring>) -> &mut Keyring {
    if Arc::get_mut(keys).is_none() {
        let copy = Keyring {
            private_key: keys.private_key,
            keylog: keys.keylog.clone(),
            protocol_id: keys.protocol_id,
        };
        *keys = Arc::new(copy);
    }
    Arc::get_mut(keys).expect("unique: copied just above when shared")
}

impl Transport for Netcode {
    fn name(&self) -> &'static str {
        NAME
    }

    fn tracker(&self) -> Box<dyn Tracker> {
        Box::new(NetcodeTracker::new(Arc::clone(&self.keys)))
    }

    fn to_keep(&self, seen: Observation) -> Observation {
        without_plaintext(seen)
    }

    fn shown(&self, d: &[u8], seen: &Observation) -> Option<Vec<u8>> {
        let h = read_header(d).ok()?;
        if h.packet_type != PacketType::ConnectionRequest {
            return self.open(d, seen);
        }
        // A request's connect token, opened with the server's key, in place (its MAC as
        // captured): the token's fields were read from these bytes.
        let key = self.keys.private_key.as_ref()?;
        let ad = token_ad(request_protocol_id(d)?, request_expire_timestamp(d)?);
        let nonce = bytes_at::<24>(d, NONCE_OFFSET)?;
        let sealed = d.get(TOKEN_OFFSET..TOKEN_OFFSET + TOKEN_BYTES)?;
        let plain = open_token(key, &nonce, &ad, sealed)?;
        let mut shown = d.to_vec();
        shown
            .get_mut(TOKEN_OFFSET..TOKEN_OFFSET + plain.len())?
            .copy_from_slice(&plain);
        Some(shown)
    }

    fn open(&self, d: &[u8], seen: &Observation) -> Option<Vec<u8>> {
        let h = read_header(d).ok()?;
        if h.packet_type == PacketType::ConnectionRequest {
            return None;
        }
        let s = seen.get::<Seen>()?;
        let (key, id) = (s.key?, s.protocol_id?);
        let body = h.body_offset();
        let mac_at = d.len().checked_sub(MAC_BYTES)?;
        // One copy of the datagram, its body then opened in place (or the pass's plaintext of
        // these very bytes copied over it).
        let mut opened = d.to_vec();
        match s.opened.as_ref() {
            Some(o) if o.sealed() == d.get(body..)? => {
                let plain = o.plain()?;
                opened
                    .get_mut(body..body + plain.len())?
                    .copy_from_slice(plain);
            }
            _ => {
                let (sealed, tag) = opened.split_at_mut(mac_at);
                let ad = packet_ad(id, h.prefix);
                if !open_packet_in_place(&key, h.sequence, &ad, sealed.get_mut(body..)?, tag) {
                    return None;
                }
            }
        }
        Some(opened)
    }

    fn payload_range(&self, d: &[u8]) -> Option<std::ops::Range<usize>> {
        let h = read_header(d).ok()?;
        (h.packet_type == PacketType::ConnectionPayload)
            .then(|| h.body_offset()..d.len() - MAC_BYTES)
    }

    fn close(&self, d: &mut [u8], seen: &Observation) -> bool {
        let Ok(h) = read_header(d) else {
            return false;
        };
        if h.packet_type == PacketType::ConnectionRequest {
            return true;
        }
        let Some((key, id)) = seen
            .get::<Seen>()
            .and_then(|s| Some((s.key?, s.protocol_id?)))
        else {
            return false;
        };
        let mac_at = d.len() - MAC_BYTES;
        let mac = seal_packet(
            &key,
            h.sequence,
            &packet_ad(id, h.prefix),
            &mut d[h.body_offset()..mac_at],
        );
        d[mac_at..].copy_from_slice(&mac);
        true
    }

    fn unwrap(&self, d: &[u8], seen: &Observation, record: bool) -> Unwrapped {
        let h = match read_header(d) {
            Ok(h) => h,
            Err(e) => {
                let mut u = Unwrapped::new("netcode.invalid");
                if record && let Some(&p) = d.first() {
                    u.header.push(field(
                        "netcode.packet_type",
                        0,
                        4,
                        Value::Int((p & 0x0f).into()),
                    ));
                    u.header.push(field(
                        "netcode.sequence_bytes",
                        4,
                        4,
                        Value::Int((p >> 4).into()),
                    ));
                }
                u.fail(problem(e.kind(), 0, e.field(), e.message()));
                return u;
            }
        };
        let mut u = Unwrapped::new(h.packet_type.name());
        if h.packet_type == PacketType::ConnectionRequest {
            self.request(d, &h, record, &mut u);
        } else {
            self.encrypted(d, &h, seen.get::<Seen>(), record, &mut u);
        }
        u
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `open` gives the datagram with its body decrypted, from the pass's plaintext of these
    /// very bytes or by opening them itself; bytes changed since the pass do not open.
    #[test]
    fn open_gives_the_plaintext_of_the_bytes_it_is_given_only() {
        let (client, server) = (
            SocketAddr::from(([10, 0, 0, 11], 50001)),
            SocketAddr::from(([10, 0, 0, 1], 40000)),
        );
        let keys = ClientKeys {
            protocol_id: 7,
            client_to_server: [3; 32],
            server_to_client: [4; 32],
        };
        let netcode = Netcode::new().with_keylog(HashMap::from([(client, keys)]));
        let prefix = 5 | 1 << 4;
        let mut body = b"hello".to_vec();
        let mac = seal_packet(&[3; 32], 9, &packet_ad(7, prefix), &mut body);
        let mut d = vec![prefix, 9];
        d.extend_from_slice(&body);
        d.extend_from_slice(&mac);
        let seen = netcode.tracker().observe(client, server, &d);
        assert!(seen.get::<Seen>().is_some_and(|s| s.opened.is_some()));
        let mut want = d.clone();
        want[2..7].copy_from_slice(b"hello");
        assert_eq!(netcode.open(&d, &seen), Some(want.clone()));
        assert_eq!(
            netcode.open(&d, &without_plaintext(seen.clone())),
            Some(want)
        );
        // A changed byte: the pass's plaintext is not for these bytes, and they do not open.
        let mut changed = d.clone();
        changed[3] ^= 1;
        assert_eq!(netcode.open(&changed, &seen), None);
        assert_eq!(netcode.open(&d[..10], &seen), None);
        assert_eq!(netcode.open(&d, &Observation::NONE), None);
    }
}
