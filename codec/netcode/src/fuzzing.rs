//! The harness of the `netcode` fuzz target (fuzz/fuzz_targets/netcode.rs), which the stable
//! corpus replay also runs (inspector/tests/corpus_replay.rs).
//!
//! Input: a selector byte, then datagrams, each `[direction][length: u16 LE][bytes]` (a length
//! beyond the input takes what is left). Selector bit 0: the server's private key is
//! [`FUZZ_KEY`] (the key of `captures/netcode.key`, so seeds cut from that capture decrypt);
//! bit 1: the protocol id [`FUZZ_PROTOCOL_ID`] is expected; bit 2: a key log line gives the
//! client [`FUZZ_KEY`] both ways. Direction bit 0: client to server, else server to client.
//!
//! Every datagram goes through the tracker in order, then its verdict and dissection, which
//! must agree on status and problem; every trace entry must lie inside the datagram; the layer's
//! entries and payload must be where the layer view says; nothing may panic, loop or allocate
//! beyond the guard's budget.

use crate::{ClientKeys, Netcode};
use bitlens_codec::dissect::{Dissector, Status};
use bitlens_codec::transport::{Stack, Transport};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

/// The private key the harness gives with selector bit 0: `captures/netcode.key`'s.
pub const FUZZ_KEY: [u8; 32] = *b"bitlens netcode test private key";
/// The protocol id expected with selector bit 1: `captures/netcode.pcap`'s.
pub const FUZZ_PROTOCOL_ID: u64 = 0x6269_746c_656e_7331;
/// The client's address.
pub const FUZZ_CLIENT: ([u8; 4], u16) = ([127, 0, 0, 1], 50001);
/// The server's address.
pub const FUZZ_SERVER: ([u8; 4], u16) = ([127, 0, 0, 1], 5000);
/// Datagrams read from one input at most.
pub const MAX_DATAGRAMS: usize = 256;

/// A datagram of a harness input: sent to the server (else to the client), and its bytes.
pub type Directed<'a> = (bool, &'a [u8]);

/// Splits the harness input into (selector, datagrams with their direction).
pub fn split(data: &[u8]) -> Option<(u8, Vec<Directed<'_>>)> {
    let (&selector, mut rest) = data.split_first()?;
    let mut out = Vec::new();
    while let [dir, lo, hi, tail @ ..] = rest {
        if out.len() == MAX_DATAGRAMS {
            break;
        }
        let len = usize::from(u16::from_le_bytes([*lo, *hi])).min(tail.len());
        let (d, next) = tail.split_at(len);
        out.push((dir & 1 == 0, d));
        rest = next;
    }
    Some((selector, out))
}

/// Joins datagrams into a harness input (the seeds' writer).
pub fn join(selector: u8, datagrams: &[(bool, &[u8])]) -> Vec<u8> {
    let mut v = vec![selector];
    for (to_server, d) in datagrams {
        v.push(u8::from(!to_server));
        let len = u16::try_from(d.len()).unwrap_or(u16::MAX);
        v.extend_from_slice(&len.to_le_bytes());
        v.extend_from_slice(&d[..usize::from(len)]);
    }
    v
}

/// The harness (module docs).
pub fn fuzz_netcode(data: &[u8]) {
    let Some((selector, datagrams)) = split(data) else {
        return;
    };
    let client = SocketAddr::from(FUZZ_CLIENT);
    let server = SocketAddr::from(FUZZ_SERVER);
    let mut netcode = Netcode::new();
    if selector & 1 != 0 {
        netcode = netcode.with_private_key(FUZZ_KEY);
    }
    if selector & 2 != 0 {
        netcode = netcode.with_protocol_id(FUZZ_PROTOCOL_ID);
    }
    if selector & 4 != 0 {
        let keys = ClientKeys {
            protocol_id: FUZZ_PROTOCOL_ID,
            client_to_server: FUZZ_KEY,
            server_to_client: FUZZ_KEY,
        };
        netcode = netcode.with_keylog(HashMap::from([(client, keys)]));
    }
    let stack = Stack::new(Arc::new(netcode.clone()), None);
    let mut tracker = netcode.tracker();
    for (to_server, d) in datagrams {
        let (from, to) = if to_server {
            (client, server)
        } else {
            (server, client)
        };
        let seen = tracker.observe(from, to, d);
        let v = stack.verdict_seen(d, &seen);
        let x = stack.dissect_seen(d, &seen, false);
        assert_eq!(v.status, x.status, "verdict and dissection agree");
        assert_eq!(
            v.problem.as_ref().map(|p| (p.kind, p.bit)),
            x.problem.as_ref().map(|p| (p.kind, p.bit))
        );
        assert_eq!(
            x.status == Status::Error,
            x.problem.is_some() && x.status != Status::Encrypted
        );
        let bits = d.len() * 8;
        for f in &x.trace.fields {
            assert!(f.bit + f.bits <= bits, "{} outside the datagram", f.path());
        }
        let layer = &x.layers[0];
        assert!(
            layer.header.end <= layer.trailer.start && layer.trailer.end == x.trace.fields.len()
        );
        assert!(layer.payload_bits.end <= bits);
        if let Some(p) = &x.problem {
            assert!(p.bit <= bits && p.field.starts_with("netcode"));
        }
    }
}
