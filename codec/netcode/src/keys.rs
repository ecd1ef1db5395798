//! Where keys come from: the server's private key (a file of 64 hex digits), and a key log (one
//! line per client, written by the game: [`KeyLog`]).
//!
//! # Key log format
//!
//! A text file; blank lines and lines starting with `#` are ignored; every other line is
//!
//! ```text
//! NETCODE_CLIENT <client address> <protocol id> <client-to-server key> <server-to-client key>
//! ```
//!
//! with the client's UDP address as the server sees it (`127.0.0.1:50000`, `[::1]:50000`), the
//! protocol id in decimal or `0x` hex (the packets' associated data holds it), and the two
//! session keys of its connect token as 64 hex digits each. A later line for the same address
//! replaces an earlier one (a client that reconnected).

use crate::crypto::Key;
use std::collections::HashMap;
use std::fmt;
use std::io::Write;
use std::net::SocketAddr;

/// The first word of a key log line.
pub const KEYLOG_LABEL: &str = "NETCODE_CLIENT";
/// The most lines a key log may hold: its map is bounded like every other state.
pub const MAX_KEYLOG_CLIENTS: usize = 1 << 16;

/// One client's keys, from a key log line.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ClientKeys {
    /// The protocol id the client's packets are signed with.
    pub protocol_id: u64,
    /// Encrypts the client's packets to the server.
    pub client_to_server: Key,
    /// Encrypts the server's packets to the client.
    pub server_to_client: Key,
}

impl fmt::Debug for ClientKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Keys are never printed unless asked.
        f.debug_struct("ClientKeys")
            .field("protocol_id", &self.protocol_id)
            .finish_non_exhaustive()
    }
}

/// Why a key file or key log does not read: a one-line message (the caller adds the file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyError(pub String);

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for KeyError {}

/// 64 hex digits as a key.
///
/// # Errors
/// Another length, or a character that is not a hex digit.
pub fn parse_key(text: &str) -> Result<Key, KeyError> {
    let text = text.trim();
    if text.len() != 64 || !text.is_ascii() {
        return Err(KeyError(format!(
            "expected a key of 64 hex digits, found {} characters",
            text.chars().count()
        )));
    }
    let mut key = [0u8; 32];
    for (i, byte) in key.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16)
            .map_err(|_| KeyError(format!("{:?} is not a hex byte", &text[2 * i..2 * i + 2])))?;
    }
    Ok(key)
}

/// A protocol id in decimal or `0x` hex.
///
/// # Errors
/// Not a number.
pub fn parse_protocol_id(text: &str) -> Result<u64, KeyError> {
    let r = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse(),
    };
    r.map_err(|_| KeyError(format!("protocol id {text:?} is not a number")))
}

fn hex(key: &Key) -> String {
    key.iter().map(|b| format!("{b:02x}")).collect()
}

/// Reads a key log (module docs) into the keys per client address.
///
/// # Errors
/// The first bad line: `line N: ...`.
pub fn parse_keylog(text: &str) -> Result<HashMap<SocketAddr, ClientKeys>, KeyError> {
    let mut clients = HashMap::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at = |e: KeyError| KeyError(format!("line {}: {e}", n + 1));
        let words: Vec<&str> = line.split_whitespace().collect();
        let [label, addr, id, c2s, s2c] = words[..] else {
            return Err(at(KeyError(format!(
                "expected `{KEYLOG_LABEL} ADDRESS PROTOCOL_ID KEY KEY`, found {} word{}",
                words.len(),
                if words.len() == 1 { "" } else { "s" }
            ))));
        };
        if label != KEYLOG_LABEL {
            return Err(at(KeyError(format!("{label:?} is not {KEYLOG_LABEL}"))));
        }
        let addr: SocketAddr = addr
            .parse()
            .map_err(|_| at(KeyError(format!("{addr:?} is not an address and port"))))?;
        let keys = ClientKeys {
            protocol_id: parse_protocol_id(id).map_err(at)?,
            client_to_server: parse_key(c2s).map_err(at)?,
            server_to_client: parse_key(s2c).map_err(at)?,
        };
        if clients.len() >= MAX_KEYLOG_CLIENTS && !clients.contains_key(&addr) {
            return Err(at(KeyError(format!(
                "more than {MAX_KEYLOG_CLIENTS} clients"
            ))));
        }
        clients.insert(addr, keys);
    }
    Ok(clients)
}

/// A key log writer for a game (module docs): one call per client that connects.
///
/// ```no_run
/// # fn main() -> std::io::Result<()> {
/// // Where the game has a connect token (renetcode's `ConnectToken` has the two keys as public
/// // fields) and knows the client's address (renetcode's `NetcodeServer::client_addr`):
/// let mut log = bitlens_netcode::KeyLog::append("keys.log")?;
/// # let (addr, protocol_id, c2s, s2c) = ("127.0.0.1:5000".parse().unwrap(), 7, [0u8; 32], [1u8; 32]);
/// log.client(addr, protocol_id, &c2s, &s2c)?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct KeyLog<W: Write> {
    out: W,
}

impl KeyLog<std::fs::File> {
    /// Opens `path` for appending (created if missing).
    ///
    /// # Errors
    /// The file cannot be opened.
    pub fn append(path: impl AsRef<std::path::Path>) -> std::io::Result<Self> {
        let out = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(KeyLog { out })
    }
}

impl<W: Write> KeyLog<W> {
    /// A key log written to `out`.
    pub fn new(out: W) -> Self {
        KeyLog { out }
    }

    /// Writes (and flushes) the line of the client at `addr`.
    ///
    /// # Errors
    /// The write fails.
    pub fn client(
        &mut self,
        addr: SocketAddr,
        protocol_id: u64,
        client_to_server: &Key,
        server_to_client: &Key,
    ) -> std::io::Result<()> {
        writeln!(
            self.out,
            "{KEYLOG_LABEL} {addr} {protocol_id:#018x} {} {}",
            hex(client_to_server),
            hex(server_to_client)
        )?;
        self.out.flush()
    }

    /// The writer back.
    pub fn into_inner(self) -> W {
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_key_log_reads_back_and_bad_lines_say_where() {
        let mut log = KeyLog::new(Vec::new());
        let addr: SocketAddr = "[::1]:40000".parse().unwrap();
        log.client(addr, 0x1234, &[1; 32], &[2; 32]).unwrap();
        let text = String::from_utf8(log.into_inner()).unwrap();
        let text = format!("# keys\n\n{text}");
        let keys = parse_keylog(&text).unwrap();
        let k = keys[&addr];
        assert_eq!(
            (k.protocol_id, k.client_to_server, k.server_to_client),
            (0x1234, [1; 32], [2; 32])
        );
        assert!(!format!("{k:?}").contains("01"), "keys are not printed");
        let e = parse_keylog("NETCODE_CLIENT 1.2.3.4:5 7 00 00").unwrap_err();
        assert!(
            e.0.starts_with("line 1: expected a key of 64 hex digits"),
            "{e}"
        );
        assert!(
            parse_keylog("X 1.2.3.4:5 7 a b")
                .unwrap_err()
                .0
                .contains("not NETCODE_CLIENT")
        );
        assert!(
            parse_keylog("NETCODE_CLIENT nowhere 7 a b")
                .unwrap_err()
                .0
                .contains("address")
        );
        // A word count in words: "1 word", not "1 words" (trial31).
        assert_eq!(
            parse_keylog("zz").unwrap_err().0,
            "line 1: expected `NETCODE_CLIENT ADDRESS PROTOCOL_ID KEY KEY`, found 1 word"
        );
        assert!(
            parse_keylog("NETCODE_CLIENT 1.2.3.4:5")
                .unwrap_err()
                .0
                .ends_with("found 2 words")
        );
        assert!(parse_key(&"g".repeat(64)).is_err());
        assert!(parse_key(&"é".repeat(32)).is_err());
        assert_eq!(parse_key(&"ab".repeat(32)), Ok([0xab; 32]));
        assert_eq!(parse_protocol_id("0x10"), Ok(16));
    }
}
