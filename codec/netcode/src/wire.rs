//! netcode 1.02's wire layout (STANDARD.md of mas-bandwidth/netcode): sizes, packet types, the
//! prefix byte and the sequence number, and the standard's reader rules for them.

/// `"NETCODE 1.02"` with its null terminator: the first 13 bytes of a connection request, and of
/// every associated data.
pub const VERSION_INFO: &[u8; 13] = b"NETCODE 1.02\0";
/// Bytes of a connection request: prefix, version info, protocol id, expire timestamp, nonce,
/// encrypted private connect token.
pub const REQUEST_BYTES: usize = 1 + 13 + 8 + 8 + 24 + TOKEN_BYTES;
/// Bytes of the encrypted private connect token, its MAC included.
pub const TOKEN_BYTES: usize = 1024;
/// Offset of the encrypted private connect token in a connection request.
pub const TOKEN_OFFSET: usize = 1 + 13 + 8 + 8 + 24;
/// Offset of the connect token's nonce in a connection request.
pub const NONCE_OFFSET: usize = 1 + 13 + 8 + 8;
/// Bytes of a MAC (Poly1305 tag).
pub const MAC_BYTES: usize = 16;
/// Bytes of an encrypted challenge token, its MAC included.
pub const CHALLENGE_TOKEN_BYTES: usize = 300;
/// The smallest encrypted packet the standard reads.
pub const MIN_ENCRYPTED_BYTES: usize = 18;
/// The largest payload read: the standard's 1200, raised to renetcode's 1300
/// (`NETCODE_MAX_PAYLOAD_BYTES`), which real renet games send (NETCODE.md, deviations).
pub const MAX_PAYLOAD_BYTES: usize = 1300;

/// The seven packet types, by their number (the prefix byte's low 4 bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PacketType {
    /// 0: the client's request, with the encrypted private connect token; not encrypted itself.
    ConnectionRequest,
    /// 1: the server refuses (no payload).
    ConnectionDenied,
    /// 2: server to client: a challenge token sequence and token.
    ConnectionChallenge,
    /// 3: client to server: the challenge token sent back.
    ConnectionResponse,
    /// 4: client index and max clients.
    KeepAlive,
    /// 5: the game's payload.
    ConnectionPayload,
    /// 6: disconnect (no payload).
    Disconnect,
}

impl PacketType {
    /// The type numbered `n`, if it is one.
    pub fn from_number(n: u8) -> Option<Self> {
        Some(match n {
            0 => PacketType::ConnectionRequest,
            1 => PacketType::ConnectionDenied,
            2 => PacketType::ConnectionChallenge,
            3 => PacketType::ConnectionResponse,
            4 => PacketType::KeepAlive,
            5 => PacketType::ConnectionPayload,
            6 => PacketType::Disconnect,
            _ => return None,
        })
    }

    /// The name dissections give it: `netcode.keep_alive`.
    pub fn name(self) -> &'static str {
        match self {
            PacketType::ConnectionRequest => "netcode.connection_request",
            PacketType::ConnectionDenied => "netcode.connection_denied",
            PacketType::ConnectionChallenge => "netcode.connection_challenge",
            PacketType::ConnectionResponse => "netcode.connection_response",
            PacketType::KeepAlive => "netcode.keep_alive",
            PacketType::ConnectionPayload => "netcode.connection_payload",
            PacketType::Disconnect => "netcode.disconnect",
        }
    }

    /// Whether replay protection applies (keep-alive, payload, disconnect).
    pub fn replay_protected(self) -> bool {
        matches!(
            self,
            PacketType::KeepAlive | PacketType::ConnectionPayload | PacketType::Disconnect
        )
    }

    /// The decrypted sizes the standard accepts for it, as an inclusive range.
    pub fn plaintext_sizes(self) -> (usize, usize) {
        match self {
            PacketType::ConnectionRequest => (0, 0),
            PacketType::ConnectionDenied | PacketType::Disconnect => (0, 0),
            PacketType::ConnectionChallenge | PacketType::ConnectionResponse => {
                (8 + CHALLENGE_TOKEN_BYTES, 8 + CHALLENGE_TOKEN_BYTES)
            }
            PacketType::KeepAlive => (8, 8),
            PacketType::ConnectionPayload => (1, MAX_PAYLOAD_BYTES),
        }
    }
}

/// Why a datagram is not a readable netcode packet, by the standard's reader rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderError {
    /// Empty datagram.
    Empty,
    /// Packet type 7..=15.
    PacketType(u8),
    /// A connection request of another size than 1078 bytes.
    RequestSize(usize),
    /// An encrypted packet of fewer than 18 bytes.
    TooSmall(usize),
    /// Sequence bytes outside 0..=8 (0: see [`Header::sequence_bytes`]).
    SequenceBytes(u8),
    /// Fewer bytes than prefix + sequence + MAC.
    Cut {
        /// The datagram's length.
        len: usize,
        /// The least it must have.
        need: usize,
    },
}

impl HeaderError {
    /// The problem kind: `too_small`, `packet_type`, ...
    pub fn kind(self) -> &'static str {
        match self {
            HeaderError::Empty | HeaderError::TooSmall(_) | HeaderError::Cut { .. } => "too_small",
            HeaderError::PacketType(_) => "packet_type",
            HeaderError::RequestSize(_) => "request_size",
            HeaderError::SequenceBytes(_) => "sequence_bytes",
        }
    }

    /// The field it is about.
    pub fn field(self) -> &'static str {
        match self {
            HeaderError::PacketType(_) => "netcode.packet_type",
            HeaderError::SequenceBytes(_) => "netcode.sequence_bytes",
            _ => "netcode.prefix",
        }
    }

    /// The one-line message.
    pub fn message(self) -> String {
        match self {
            HeaderError::Empty => "netcode: empty datagram".to_owned(),
            HeaderError::PacketType(t) => {
                format!("netcode.packet_type: {t} is not a packet type (0..=6)")
            }
            HeaderError::RequestSize(n) => format!(
                "netcode: connection request of {n} bytes, not {REQUEST_BYTES} (cut or padded)"
            ),
            HeaderError::TooSmall(n) => format!(
                "netcode: {n} bytes, fewer than the {MIN_ENCRYPTED_BYTES} of the smallest \
                 encrypted packet (cut)"
            ),
            HeaderError::SequenceBytes(n) => {
                format!("netcode.sequence_bytes: {n}, not in 1..=8")
            }
            HeaderError::Cut { len, need } => format!(
                "netcode: {len} bytes, fewer than prefix, sequence and MAC need ({need}) (cut)"
            ),
        }
    }
}

/// An encrypted packet's header: what can be read before decrypting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// The prefix byte.
    pub prefix: u8,
    /// The packet type.
    pub packet_type: PacketType,
    /// Bytes of the sequence number: 1..=8 by the standard; 0 (meaning sequence 0) is read too,
    /// because renetcode writes no sequence byte for sequence 0 (NETCODE.md, deviations).
    pub sequence_bytes: usize,
    /// The sequence number.
    pub sequence: u64,
}

impl Header {
    /// Byte offset of the encrypted per-packet data.
    pub fn body_offset(&self) -> usize {
        1 + self.sequence_bytes
    }
}

/// What a datagram is: a connection request (its type alone says so) or an encrypted packet
/// with its header; or why it is neither.
///
/// # Errors
/// The first reader rule the datagram breaks.
pub fn read_header(d: &[u8]) -> Result<Header, HeaderError> {
    let &prefix = d.first().ok_or(HeaderError::Empty)?;
    let number = prefix & 0x0f;
    let packet_type = PacketType::from_number(number).ok_or(HeaderError::PacketType(number))?;
    if packet_type == PacketType::ConnectionRequest {
        if d.len() != REQUEST_BYTES {
            return Err(HeaderError::RequestSize(d.len()));
        }
        return Ok(Header {
            prefix,
            packet_type,
            sequence_bytes: 0,
            sequence: 0,
        });
    }
    if d.len() < MIN_ENCRYPTED_BYTES {
        return Err(HeaderError::TooSmall(d.len()));
    }
    let n = prefix >> 4;
    if n > 8 {
        return Err(HeaderError::SequenceBytes(n));
    }
    let sequence_bytes = usize::from(n);
    let need = 1 + sequence_bytes + MAC_BYTES;
    if d.len() < need {
        return Err(HeaderError::Cut { len: d.len(), need });
    }
    let mut seq = [0u8; 8];
    seq[..sequence_bytes].copy_from_slice(&d[1..1 + sequence_bytes]);
    Ok(Header {
        prefix,
        packet_type,
        sequence_bytes,
        sequence: u64::from_le_bytes(seq),
    })
}

/// Bytes `at..at + N` of `d`, if there.
pub fn bytes_at<const N: usize>(d: &[u8], at: usize) -> Option<[u8; N]> {
    d.get(at..)?.first_chunk::<N>().copied()
}

/// The little-endian `u64` at byte `at`.
pub fn u64_at(d: &[u8], at: usize) -> Option<u64> {
    bytes_at::<8>(d, at).map(u64::from_le_bytes)
}

/// The little-endian `u32` at byte `at`.
pub fn u32_at(d: &[u8], at: usize) -> Option<u32> {
    bytes_at::<4>(d, at).map(u32::from_le_bytes)
}

/// The protocol id of a connection request (bytes 14..22).
pub fn request_protocol_id(d: &[u8]) -> Option<u64> {
    u64_at(d, 14)
}

/// The expire timestamp of a connection request (bytes 22..30).
pub fn request_expire_timestamp(d: &[u8]) -> Option<u64> {
    u64_at(d, 22)
}

/// The sequence bytes netcode's C reference writes for `sequence`: the fewest that hold it,
/// at least 1.
pub fn sequence_bytes_for(sequence: u64) -> usize {
    (8 - sequence.leading_zeros() as usize / 8).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_follow_the_reader_rules() {
        assert_eq!(read_header(&[]), Err(HeaderError::Empty));
        assert_eq!(read_header(&[7; 40]), Err(HeaderError::PacketType(7)));
        assert_eq!(read_header(&[0; 1077]), Err(HeaderError::RequestSize(1077)));
        assert!(read_header(&[0; REQUEST_BYTES]).is_ok());
        assert_eq!(read_header(&[0x15; 17]), Err(HeaderError::TooSmall(17)));
        assert_eq!(read_header(&[0x95; 40]), Err(HeaderError::SequenceBytes(9)));
        assert_eq!(
            read_header(&[0x85; 20]),
            Err(HeaderError::Cut { len: 20, need: 25 })
        );
        let mut d = vec![0x25, 0xe8, 0x03];
        d.extend([0; 16]);
        let h = read_header(&d).unwrap();
        assert_eq!(
            (h.packet_type, h.sequence_bytes, h.sequence, h.body_offset()),
            (PacketType::ConnectionPayload, 2, 1000, 3)
        );
        let h = read_header(&[0x04; 18]).unwrap();
        assert_eq!((h.sequence_bytes, h.sequence), (0, 0));
        assert_eq!(sequence_bytes_for(0), 1);
        assert_eq!(sequence_bytes_for(1000), 2);
        assert_eq!(sequence_bytes_for(u64::MAX), 8);
    }
}
