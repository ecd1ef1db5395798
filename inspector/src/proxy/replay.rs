//! `bitlens replay LOG --upstream HOST:PORT`: the mutated datagrams of a proxy log sent to a
//! server again, byte for byte, to reproduce what they did to it.
//!
//! `LOG` is the proxy's `--mutation-log` or its NDJSON output (lines without a mutation are
//! skipped). Each datagram is rebuilt from its logged original bytes and edits
//! ([`super::mutate::apply_ops`]: no decoder is involved, and every edit checks the bits it
//! replaces) and must come out as the logged `sent` bytes; each logged client gets a socket of
//! its own, so the server sees as many peers as there were.

use super::Direction;
use super::mutate::{Mutation, apply_ops};
use serde::Deserialize;
use std::collections::HashMap;
use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::time::Duration;

#[derive(Deserialize)]
struct LogLine {
    frame: u64,
    direction: String,
    client: String,
    #[serde(default)]
    mutation: Option<Mutation>,
}

/// One datagram to replay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Its frame in the proxied session.
    pub frame: u64,
    /// Which way it went.
    pub direction: Direction,
    /// The client it came from or went to.
    pub client: String,
    /// The rule that made it.
    pub rule: String,
    /// The bytes, rebuilt from the original and the edits.
    pub bytes: Vec<u8>,
}

/// Reads a log: every line with a mutation, rebuilt and checked against its `sent` bytes.
///
/// # Errors
/// A line that is not a proxy log line, edits that do not fit their original bytes, rebuilt
/// bytes that differ from the logged ones: `NAME:LINE: ...`.
pub fn load(name: &str, text: &str) -> Result<Vec<Entry>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let at = format!("{name}:{}", i + 1);
        if line.trim().is_empty() {
            continue;
        }
        let l: LogLine = serde_json::from_str(line)
            .map_err(|e| format!("{at}: not a line of a bitlens proxy log ({e})"))?;
        let Some(m) = l.mutation else { continue };
        let direction = Direction::parse(&l.direction)
            .ok_or_else(|| format!("{at}: unknown direction {:?}", l.direction))?;
        let original = unhex(&m.original).map_err(|e| format!("{at}: original: {e}"))?;
        let sent = unhex(&m.sent).map_err(|e| format!("{at}: sent: {e}"))?;
        let bytes =
            apply_ops(&original, &m.ops).map_err(|e| format!("{at} (frame {}): {e}", l.frame))?;
        if bytes != sent {
            return Err(format!(
                "{at} (frame {}): the logged edits give other bytes than the logged `sent` ones",
                l.frame
            ));
        }
        out.push(Entry {
            frame: l.frame,
            direction,
            client: l.client,
            rule: m.rule,
            bytes,
        });
    }
    Ok(out)
}

/// The entries to replay: those of `direction`, and of the `frames` listed if any.
///
/// # Errors
/// A listed frame that is not in the log or went the other way, or nothing to send (an
/// empty log, or none of `direction`): the message says which, and how to replay the rest.
pub fn select<'a>(
    entries: &'a [Entry],
    direction: Direction,
    frames: &[u64],
) -> Result<Vec<&'a Entry>, String> {
    let flag = |d: Direction| match d {
        Direction::ToServer => "without --to-client",
        Direction::ToClient => "with --to-client",
    };
    let to = |d: Direction| match d {
        Direction::ToServer => "the server",
        Direction::ToClient => "a client",
    };
    for f in frames {
        match entries.iter().find(|e| e.frame == *f) {
            None => return Err(format!("frame {f} has no mutation in the log")),
            Some(e) if e.direction != direction => {
                return Err(format!(
                    "frame {f} went to {}: replay it {}",
                    to(e.direction),
                    flag(e.direction)
                ));
            }
            Some(_) => {}
        }
    }
    let chosen: Vec<&Entry> = entries
        .iter()
        .filter(|e| e.direction == direction && (frames.is_empty() || frames.contains(&e.frame)))
        .collect();
    if chosen.is_empty() {
        // Nothing of this direction was listed or logged: every entry went the other way.
        let other = entries.len();
        return Err(if other == 0 {
            "the log has no mutated datagram: nothing to replay".to_owned()
        } else {
            let back = match direction {
                Direction::ToServer => Direction::ToClient,
                Direction::ToClient => Direction::ToServer,
            };
            format!(
                "the log has no mutated datagram to {}; {other} went to {}: replay them {}",
                to(direction),
                to(back),
                flag(back)
            )
        });
    }
    Ok(chosen)
}

/// Sends `entries` (as [`select`] chose them) to `upstream`, `gap` apart, one socket per
/// logged client; writes a line per datagram to `out`. Returns how many were sent.
///
/// # Errors
/// A socket that cannot be opened, a send that fails.
pub fn send(
    entries: &[&Entry],
    upstream: SocketAddr,
    gap: Duration,
    out: &mut dyn Write,
) -> Result<usize, String> {
    let any = match upstream.ip() {
        IpAddr::V4(_) => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        IpAddr::V6(_) => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
    };
    let mut sockets: HashMap<&str, UdpSocket> = HashMap::new();
    let mut sent = 0;
    for e in entries {
        if sent > 0 && !gap.is_zero() {
            std::thread::sleep(gap);
        }
        let socket = match sockets.get(e.client.as_str()) {
            Some(s) => s,
            None => {
                let s = UdpSocket::bind(SocketAddr::new(any, 0))
                    .and_then(|s| s.connect(upstream).map(|()| s))
                    .map_err(|err| format!("cannot open a socket to {upstream}: {err}"))?;
                sockets.entry(e.client.as_str()).or_insert(s)
            }
        };
        socket
            .send(&e.bytes)
            .map_err(|err| format!("frame {}: cannot send to {upstream}: {err}", e.frame))?;
        sent += 1;
        let _ = writeln!(
            out,
            "frame {}: {} to {upstream} (rule {}, client {})",
            e.frame,
            crate::words::count(e.bytes.len() as u64, "byte"),
            e.rule,
            e.client
        );
    }
    Ok(sent)
}

/// The bytes a log's hex stands for, with the log's own words for what is wrong with it.
fn unhex(s: &str) -> Result<Vec<u8>, String> {
    hex::decode(s).map_err(|e| match e {
        hex::FromHexError::OddLength => "hex of odd length".to_owned(),
        hex::FromHexError::InvalidHexCharacter { index, .. } => {
            format!("not hex at character {}", index / 2 * 2)
        }
        other => other.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_s_hex_reads_back_and_its_faults_are_named() {
        assert_eq!(unhex("00abff"), Ok(vec![0, 0xab, 0xff]));
        assert_eq!(unhex(&hex::encode([7, 0x80])), Ok(vec![7, 0x80]));
        assert_eq!(unhex("0ab").unwrap_err(), "hex of odd length");
        assert_eq!(unhex("00zz").unwrap_err(), "not hex at character 2");
        assert_eq!(unhex("000z").unwrap_err(), "not hex at character 2");
    }

    #[test]
    fn a_log_line_is_rebuilt_and_checked() {
        // health (bit 35, 7 bits) 87 -> 120 on a two-byte-longer fake datagram.
        let line = r#"{"frame":7,"direction":"to_server","client":"127.0.0.1:5","mutation":{"rule":"r","packet_type":null,"crc":"stale","ops":[{"action":"set","field":"f","bit":4,"bits":4,"old":"0000","new":"1010"}],"original":"0000","sent":"a000"}}"#;
        let e = load("log", line).unwrap();
        assert_eq!(e[0].bytes, [0xa0, 0x00]);
        assert_eq!((e[0].frame, e[0].direction), (7, Direction::ToServer));
        let bad = line.replace("a000", "b000");
        assert!(load("log", &bad).unwrap_err().contains("other bytes"));
        assert!(
            load("log", "{}")
                .unwrap_err()
                .starts_with("log:1: not a line")
        );
        let plain = r#"{"frame":1,"direction":"to_client","client":"x","mutation":null}"#;
        assert!(load("log", plain).unwrap().is_empty());
    }

    #[test]
    fn a_selection_that_sends_nothing_says_why() {
        let entry = |frame, direction| Entry {
            frame,
            direction,
            client: "127.0.0.1:5".into(),
            rule: "r".into(),
            bytes: vec![1],
        };
        let log = [entry(3, Direction::ToServer), entry(4, Direction::ToClient)];
        let (up, down) = (Direction::ToServer, Direction::ToClient);
        assert_eq!(select(&log, up, &[]).unwrap(), [&log[0]]);
        assert_eq!(select(&log, down, &[4]).unwrap(), [&log[1]]);
        assert_eq!(
            select(&log, up, &[4]).unwrap_err(),
            "frame 4 went to a client: replay it with --to-client"
        );
        assert_eq!(
            select(&log, down, &[3]).unwrap_err(),
            "frame 3 went to the server: replay it without --to-client"
        );
        assert_eq!(
            select(&log, up, &[9]).unwrap_err(),
            "frame 9 has no mutation in the log"
        );
        assert_eq!(
            select(&[], up, &[]).unwrap_err(),
            "the log has no mutated datagram: nothing to replay"
        );
        assert_eq!(
            select(&log[1..], up, &[]).unwrap_err(),
            "the log has no mutated datagram to the server; 1 went to a client: replay them \
             with --to-client"
        );
    }
}
