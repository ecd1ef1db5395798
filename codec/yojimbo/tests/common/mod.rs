//! Test helper: the plaintext of the reference captures. A pcap read with `pcap-file` and
//! `etherparse`, netcode 1.02's header parsed just enough to decrypt (the connection request's
//! private token with XChaCha20-Poly1305 and the server's key, then every encrypted packet with
//! ChaCha20-Poly1305 and the token's session keys), all with RustCrypto's `chacha20poly1305`.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use chacha20poly1305::aead::{Aead, Payload};
use chacha20poly1305::{ChaCha20Poly1305, KeyInit, XChaCha20Poly1305};

/// The netcode server's port in both yojimbo captures.
pub const SERVER_PORT: u16 = 40000;

/// One datagram of a capture, decrypted.
pub struct Frame {
    /// 1-based, as in the labels.
    pub number: u64,
    /// Client to server.
    pub c2s: bool,
    /// netcode packet type (0..=6).
    pub kind: u8,
    /// netcode sequence (none for the request).
    pub sequence: u64,
    /// The plaintext (for type 5, the yojimbo payload).
    pub plaintext: Vec<u8>,
}

pub fn captures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../captures")
}

fn key_file(path: &Path) -> [u8; 32] {
    let text = std::fs::read_to_string(path).unwrap();
    let v = hex::decode(text.trim()).unwrap();
    v.try_into().unwrap()
}

fn udp_payloads(path: &Path) -> Vec<(u16, u16, Vec<u8>)> {
    let file = std::fs::File::open(path).unwrap();
    let mut reader = pcap_file::pcap::PcapReader::new(file).unwrap();
    let mut out = Vec::new();
    while let Some(p) = reader.next_packet() {
        let p = p.unwrap();
        let sliced = etherparse::SlicedPacket::from_ethernet(p.data()).unwrap();
        let Some(etherparse::TransportSlice::Udp(udp)) = sliced.transport else {
            panic!("not UDP");
        };
        out.push((
            udp.source_port(),
            udp.destination_port(),
            udp.payload().to_vec(),
        ));
    }
    out
}

const VERSION: &[u8; 13] = b"NETCODE 1.02\0";

/// Every datagram of `capture`, decrypted with the server key in `key`. Panics when a MAC does
/// not verify.
pub fn decrypt(capture: &str, key: &str) -> Vec<Frame> {
    let private = key_file(&captures().join(key));
    let mut session: Option<([u8; 32], [u8; 32], u64)> = None;
    let mut frames = Vec::new();
    for (i, (src, _dst, data)) in udp_payloads(&captures().join(capture))
        .into_iter()
        .enumerate()
    {
        let number = i as u64 + 1;
        let c2s = src != SERVER_PORT;
        let prefix = data[0];
        let kind = prefix & 0x0f;
        if kind == 0 {
            // request: prefix, version (13), protocol id, expire, nonce (24), token (1024)
            assert_eq!(data.len(), 1078, "frame {number}: request size");
            let protocol = u64::from_le_bytes(data[14..22].try_into().unwrap());
            let mut aad = Vec::from(&data[1..30]);
            aad.truncate(29);
            let nonce = &data[30..54];
            let cipher = XChaCha20Poly1305::new(&private.into());
            let token = cipher
                .decrypt(
                    nonce.into(),
                    Payload {
                        msg: &data[54..],
                        aad: &aad,
                    },
                )
                .unwrap_or_else(|_| panic!("frame {number}: the token does not decrypt"));
            // client id, timeout, address count, addresses, then the two keys
            let count = u32::from_le_bytes(token[12..16].try_into().unwrap()) as usize;
            let mut at = 16;
            for _ in 0..count {
                at += if token[at] == 1 {
                    1 + 4 + 2
                } else {
                    1 + 16 + 2
                };
            }
            let c2s_key: [u8; 32] = token[at..at + 32].try_into().unwrap();
            let s2c_key: [u8; 32] = token[at + 32..at + 64].try_into().unwrap();
            session = Some((c2s_key, s2c_key, protocol));
            frames.push(Frame {
                number,
                c2s,
                kind,
                sequence: 0,
                plaintext: token,
            });
            continue;
        }
        let (c2s_key, s2c_key, protocol) = session.expect("a request before encrypted packets");
        let n = usize::from(prefix >> 4);
        let mut seq = [0u8; 8];
        seq[..n].copy_from_slice(&data[1..1 + n]);
        let sequence = u64::from_le_bytes(seq);
        let mut nonce = [0u8; 12];
        nonce[4..].copy_from_slice(&seq);
        let mut aad = Vec::from(&VERSION[..]);
        aad.extend_from_slice(&protocol.to_le_bytes());
        aad.push(prefix);
        let key = if c2s { c2s_key } else { s2c_key };
        let cipher = ChaCha20Poly1305::new(&key.into());
        let plaintext = cipher
            .decrypt(
                (&nonce).into(),
                Payload {
                    msg: &data[1 + n..],
                    aad: &aad,
                },
            )
            .unwrap_or_else(|_| panic!("frame {number}: MAC does not verify"));
        frames.push(Frame {
            number,
            c2s,
            kind,
            sequence,
            plaintext,
        });
    }
    frames
}
