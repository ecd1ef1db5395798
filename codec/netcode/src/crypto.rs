//! netcode's two AEADs, through RustCrypto's `chacha20poly1305`: packets (ChaCha20-Poly1305
//! IETF, nonce from the sequence, associated data version info + protocol id + prefix byte)
//! and the private connect token (XChaCha20-Poly1305, associated data version info + protocol
//! id + expire timestamp).

use crate::wire::{MAC_BYTES, VERSION_INFO};
use chacha20poly1305::aead::AeadInPlace;
use chacha20poly1305::{ChaCha20Poly1305, KeyInit, Nonce, Tag, XChaCha20Poly1305, XNonce};

/// A 32-byte key.
pub type Key = [u8; 32];

/// The 96-bit nonce of a packet: four zero bytes, then the sequence little-endian.
fn packet_nonce(sequence: u64) -> Nonce {
    let mut n = [0u8; 12];
    n[4..].copy_from_slice(&sequence.to_le_bytes());
    Nonce::from(n)
}

/// The associated data of an encrypted packet.
pub fn packet_ad(protocol_id: u64, prefix: u8) -> [u8; 22] {
    let mut ad = [0u8; 22];
    ad[..13].copy_from_slice(VERSION_INFO);
    ad[13..21].copy_from_slice(&protocol_id.to_le_bytes());
    ad[21] = prefix;
    ad
}

/// The associated data of a private connect token.
pub fn token_ad(protocol_id: u64, expire_timestamp: u64) -> [u8; 29] {
    let mut ad = [0u8; 29];
    ad[..13].copy_from_slice(VERSION_INFO);
    ad[13..21].copy_from_slice(&protocol_id.to_le_bytes());
    ad[21..].copy_from_slice(&expire_timestamp.to_le_bytes());
    ad
}

/// Decrypts `sealed` (ciphertext then its 16-byte MAC) of a packet; the plaintext, or `None`
/// when the MAC does not verify (or `sealed` is shorter than a MAC).
pub fn open_packet(key: &Key, sequence: u64, ad: &[u8], sealed: &[u8]) -> Option<Vec<u8>> {
    let split = sealed.len().checked_sub(MAC_BYTES)?;
    let (body, tag) = sealed.split_at(split);
    let mut plain = body.to_vec();
    ChaCha20Poly1305::new(key.into())
        .decrypt_in_place_detached(
            &packet_nonce(sequence),
            ad,
            &mut plain,
            Tag::from_slice(tag),
        )
        .ok()?;
    Some(plain)
}

/// Decrypts the ciphertext `body` of a packet in place, with its MAC `tag` (16 bytes): true
/// when the MAC verifies (then `body` holds the plaintext); false otherwise (a tag of another
/// size, or a MAC that does not verify: `body` is then left as it was).
pub fn open_packet_in_place(
    key: &Key,
    sequence: u64,
    ad: &[u8],
    body: &mut [u8],
    tag: &[u8],
) -> bool {
    tag.len() == MAC_BYTES
        && ChaCha20Poly1305::new(key.into())
            .decrypt_in_place_detached(&packet_nonce(sequence), ad, body, Tag::from_slice(tag))
            .is_ok()
}

/// Encrypts `plain` in place for a packet and returns its MAC (the proxy's re-encryption, the
/// tests' faults).
pub fn seal_packet(key: &Key, sequence: u64, ad: &[u8], plain: &mut [u8]) -> [u8; MAC_BYTES] {
    ChaCha20Poly1305::new(key.into())
        .encrypt_in_place_detached(&packet_nonce(sequence), ad, plain)
        // Encryption fails only beyond 256 GiB of plaintext; a datagram is never that long.
        .map_or([0; MAC_BYTES], Into::into)
}

/// Decrypts a private connect token (1008 bytes then its MAC) with the server's key.
pub fn open_token(key: &Key, nonce: &[u8; 24], ad: &[u8], sealed: &[u8]) -> Option<Vec<u8>> {
    let split = sealed.len().checked_sub(MAC_BYTES)?;
    let (body, tag) = sealed.split_at(split);
    let mut plain = body.to_vec();
    XChaCha20Poly1305::new(key.into())
        .decrypt_in_place_detached(
            XNonce::from_slice(nonce),
            ad,
            &mut plain,
            Tag::from_slice(tag),
        )
        .ok()?;
    Some(plain)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_packet_opens_with_its_key_sequence_and_ad_only() {
        let key = [7u8; 32];
        let ad = packet_ad(0x1122, 0x15);
        let mut body = b"hello".to_vec();
        let mac = seal_packet(&key, 9, &ad, &mut body);
        body.extend(mac);
        assert_eq!(
            open_packet(&key, 9, &ad, &body).as_deref(),
            Some(&b"hello"[..])
        );
        assert_eq!(open_packet(&key, 8, &ad, &body), None);
        assert_eq!(open_packet(&[8; 32], 9, &ad, &body), None);
        assert_eq!(open_packet(&key, 9, &packet_ad(0x1123, 0x15), &body), None);
        assert_eq!(open_packet(&key, 9, &ad, &body[..10]), None);
        assert_eq!(open_packet(&key, 9, &ad, &[]), None);
        // In place: the same answers, and a refused body left as it was.
        let (sealed, tag) = body.split_at(body.len() - MAC_BYTES);
        let mut b = sealed.to_vec();
        assert!(!open_packet_in_place(&key, 8, &ad, &mut b, tag));
        assert_eq!(b, sealed);
        assert!(!open_packet_in_place(&key, 9, &ad, &mut b, &tag[1..]));
        assert!(open_packet_in_place(&key, 9, &ad, &mut b, tag));
        assert_eq!(b, b"hello");
    }
}
