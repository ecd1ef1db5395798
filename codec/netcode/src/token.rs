//! The private connect token, decrypted: its fields and where each sits (the token is
//! encrypted with a stream cipher, so plaintext byte `i` is where ciphertext byte `i` was).

use crate::crypto::Key;
use crate::wire::{bytes_at, u32_at, u64_at};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// Most server addresses a token may list.
pub const MAX_SERVER_ADDRESSES: u32 = 32;

/// One field of a decrypted token: its name under `netcode.token.`, byte offset in the
/// plaintext, length, and value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenField {
    /// The name (`client_id`, `server_addresses[0]`, `client_to_server_key`).
    pub name: String,
    /// Byte offset in the token's plaintext.
    pub offset: usize,
    /// Bytes.
    pub len: usize,
    /// The value as text (numbers, addresses) or bytes (keys, user data).
    pub value: TokenValue,
}

/// A token field's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenValue {
    /// A number.
    Int(i128),
    /// An address.
    Addr(String),
    /// Raw bytes.
    Bytes(Vec<u8>),
}

/// A decrypted private connect token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrivateToken {
    /// The client's id.
    pub client_id: u64,
    /// Encrypts the client's packets.
    pub client_to_server: Key,
    /// Encrypts the server's packets.
    pub server_to_client: Key,
    /// Every field in order, for the trace.
    pub fields: Vec<TokenField>,
}

/// Why a decrypted token does not read (the standard: ignore the packet).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenError {
    /// Byte offset in the plaintext.
    pub offset: usize,
    /// What is wrong.
    pub message: String,
}

/// Reads a decrypted private connect token (the standard's layout; addresses as renetcode and
/// the C reference write them: an IPv6 address as its 16 bytes in network order).
///
/// # Errors
/// A server address count outside 1..=32, an address type other than 1 or 2, or a token
/// shorter than its fields.
pub fn read_token(plain: &[u8]) -> Result<PrivateToken, TokenError> {
    let cut = |offset: usize| TokenError {
        offset,
        message: "token ends inside its fields".to_owned(),
    };
    let mut fields = Vec::new();
    let mut push = |name: String, offset: usize, len: usize, value: TokenValue| {
        fields.push(TokenField {
            name,
            offset,
            len,
            value,
        });
    };
    let client_id = u64_at(plain, 0).ok_or_else(|| cut(0))?;
    push("client_id".into(), 0, 8, TokenValue::Int(client_id.into()));
    let timeout = u32_at(plain, 8).ok_or_else(|| cut(8))? as i32;
    push(
        "timeout_seconds".into(),
        8,
        4,
        TokenValue::Int(timeout.into()),
    );
    let count = u32_at(plain, 12).ok_or_else(|| cut(12))?;
    push(
        "num_server_addresses".into(),
        12,
        4,
        TokenValue::Int(count.into()),
    );
    if !(1..=MAX_SERVER_ADDRESSES).contains(&count) {
        return Err(TokenError {
            offset: 12,
            message: format!("{count} server addresses, not 1..=32"),
        });
    }
    let mut at = 16;
    for i in 0..count {
        let kind = *plain.get(at).ok_or_else(|| cut(at))?;
        let (addr, len) = match kind {
            1 => {
                let b = bytes_at::<6>(plain, at + 1).ok_or_else(|| cut(at))?;
                let ip = IpAddr::V4(Ipv4Addr::new(b[0], b[1], b[2], b[3]));
                (SocketAddr::new(ip, u16::from_le_bytes([b[4], b[5]])), 7)
            }
            2 => {
                let b = bytes_at::<18>(plain, at + 1).ok_or_else(|| cut(at))?;
                let ip: [u8; 16] = b[..16].try_into().unwrap_or([0; 16]);
                let ip = IpAddr::V6(Ipv6Addr::from(ip));
                (SocketAddr::new(ip, u16::from_le_bytes([b[16], b[17]])), 19)
            }
            other => {
                return Err(TokenError {
                    offset: at,
                    message: format!("address type {other}, not 1 (IPv4) or 2 (IPv6)"),
                });
            }
        };
        push(
            format!("server_addresses[{i}]"),
            at,
            len,
            TokenValue::Addr(addr.to_string()),
        );
        at += len;
    }
    let c2s = bytes_at::<32>(plain, at).ok_or_else(|| cut(at))?;
    push(
        "client_to_server_key".into(),
        at,
        32,
        TokenValue::Bytes(c2s.to_vec()),
    );
    let s2c = bytes_at::<32>(plain, at + 32).ok_or_else(|| cut(at + 32))?;
    push(
        "server_to_client_key".into(),
        at + 32,
        32,
        TokenValue::Bytes(s2c.to_vec()),
    );
    let user = plain
        .get(at + 64..at + 64 + 256)
        .ok_or_else(|| cut(at + 64))?;
    push(
        "user_data".into(),
        at + 64,
        256,
        TokenValue::Bytes(user.to_vec()),
    );
    Ok(PrivateToken {
        client_id,
        client_to_server: c2s,
        server_to_client: s2c,
        fields,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_reads_and_its_counts_and_types_are_checked() {
        let mut t = vec![0u8; 1008];
        t[..8].copy_from_slice(&42u64.to_le_bytes());
        t[8..12].copy_from_slice(&15u32.to_le_bytes());
        t[12..16].copy_from_slice(&1u32.to_le_bytes());
        t[16] = 1;
        t[17..21].copy_from_slice(&[127, 0, 0, 1]);
        t[21..23].copy_from_slice(&40000u16.to_le_bytes());
        t[23..55].fill(5);
        t[55..87].fill(6);
        let tok = read_token(&t).unwrap();
        assert_eq!(
            (tok.client_id, tok.client_to_server, tok.server_to_client),
            (42, [5; 32], [6; 32])
        );
        assert_eq!(
            tok.fields[3].value,
            TokenValue::Addr("127.0.0.1:40000".into())
        );
        t[16] = 3;
        assert_eq!(read_token(&t).unwrap_err().offset, 16);
        t[12..16].copy_from_slice(&33u32.to_le_bytes());
        assert_eq!(read_token(&t).unwrap_err().offset, 12);
        assert!(read_token(&t[..10]).is_err());
        t[12..16].copy_from_slice(&32u32.to_le_bytes());
        t[16] = 2;
        assert!(
            read_token(&t[..100]).is_err(),
            "32 addresses do not fit 100 bytes"
        );
    }
}
