//! The two checksums of packet framing (WIRE.md section 1): the CRC32 with the protocol id
//! folded in, and the hash of a check marker's label.

/// A protocol id: folded into every packet's CRC and never sent, so packets of another protocol
/// (or another version) fail the CRC instead of being misread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProtocolId {
    /// A 32-bit id: 4 little-endian bytes go into the CRC.
    U32(u32),
    /// A 64-bit id: 8 little-endian bytes go into the CRC.
    U64(u64),
}

impl From<u32> for ProtocolId {
    fn from(id: u32) -> Self {
        ProtocolId::U32(id)
    }
}

impl From<u64> for ProtocolId {
    fn from(id: u64) -> Self {
        ProtocolId::U64(id)
    }
}

impl ProtocolId {
    /// The id as an integer.
    pub fn value(self) -> u64 {
        match self {
            ProtocolId::U32(v) => u64::from(v),
            ProtocolId::U64(v) => v,
        }
    }
}

impl std::fmt::Display for ProtocolId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProtocolId::U32(v) => write!(f, "{v:#010x}"),
            ProtocolId::U64(v) => write!(f, "{v:#018x}"),
        }
    }
}

/// The hash of a check marker label: ASCII `a-z` upper-cased, then for each byte `b`:
/// `h += b; h += h << 10; h ^= h >> 6` (wrapping `u32`, seed 0, no final mixing).
///
/// `check_hash("end of packet") == 0x9908ACE2`, `check_hash("section") == 0x0B5A8A42`.
pub const fn check_hash(label: &str) -> u32 {
    let bytes = label.as_bytes();
    let mut h: u32 = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i].to_ascii_uppercase();
        h = h.wrapping_add(b as u32);
        h = h.wrapping_add(h << 10);
        h ^= h >> 6;
        i += 1;
    }
    h
}

/// The CRC32 of a packet: over the protocol id's little-endian bytes, then the packet with its
/// first 4 bytes (the CRC field) taken as zero. `packet` shorter than 4 bytes is taken as is.
pub fn packet_crc(id: ProtocolId, packet: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    match id {
        ProtocolId::U32(v) => h.update(&v.to_le_bytes()),
        ProtocolId::U64(v) => h.update(&v.to_le_bytes()),
    }
    let head = packet.len().min(4);
    h.update(&[0u8; 4][..head]);
    h.update(packet.get(4..).unwrap_or(&[]));
    h.finalize()
}

/// Stores the CRC32 of a framed packet ([`packet_crc`]) in its first 4 bytes, little-endian:
/// what a writer does last, and what re-signs a datagram whose bytes were changed after it was
/// written (the proxy's mutations). False, and nothing changed, for a packet shorter than 4 bytes.
pub fn seal_crc(id: ProtocolId, packet: &mut [u8]) -> bool {
    let crc = packet_crc(id, packet);
    match packet.first_chunk_mut::<4>() {
        Some(head) => {
            *head = crc.to_le_bytes();
            true
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_hashes_match_wire_md() {
        assert_eq!(check_hash("end of packet"), 0x9908_ACE2);
        assert_eq!(check_hash("section"), 0x0B5A_8A42);
        assert_eq!(check_hash("SECTION"), check_hash("section"));
    }

    #[test]
    fn crc_is_over_the_id_then_the_packet_with_a_zero_crc_field() {
        for id in [
            ProtocolId::U32(0x1234_5678),
            ProtocolId::U64(0x0102_0304_0506_0708),
        ] {
            for len in 0..40usize {
                let packet: Vec<u8> = (0..len as u8).map(|b| b.wrapping_mul(37)).collect();
                let mut plain = match id {
                    ProtocolId::U32(v) => v.to_le_bytes().to_vec(),
                    ProtocolId::U64(v) => v.to_le_bytes().to_vec(),
                };
                plain.extend(
                    packet
                        .iter()
                        .enumerate()
                        .map(|(i, &b)| if i < 4 { 0 } else { b }),
                );
                assert_eq!(
                    packet_crc(id, &packet),
                    crc32fast::hash(&plain),
                    "{id:?} {len}"
                );
            }
        }
    }

    #[test]
    fn a_sealed_packet_carries_its_crc() {
        let id = ProtocolId::U32(0xABCD_0123);
        let mut p = [9u8, 9, 9, 9, 1, 2, 3];
        assert!(seal_crc(id, &mut p));
        assert_eq!(p[..4], packet_crc(id, &p).to_le_bytes());
        assert_eq!(p[4..], [1, 2, 3]);
        let mut short = [1u8, 2, 3];
        assert!(!seal_crc(id, &mut short));
        assert_eq!(short, [1, 2, 3]);
    }

    #[test]
    fn crc_folds_the_protocol_id() {
        let p = [0xAAu8, 0xBB, 0xCC, 0xDD, 1, 2, 3];
        let a = packet_crc(ProtocolId::U32(1), &p);
        assert_ne!(a, packet_crc(ProtocolId::U32(2), &p));
        assert_ne!(a, packet_crc(ProtocolId::U64(1), &p));
        // The stored CRC bytes never influence the CRC.
        let q = [0u8, 0, 0, 0, 1, 2, 3];
        assert_eq!(a, packet_crc(ProtocolId::U32(1), &q));
        let mut h = crc32fast::Hasher::new();
        h.update(&[1, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3]);
        assert_eq!(a, h.finalize());
    }
}
