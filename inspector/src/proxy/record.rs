//! `--record FILE.pcapng`: the session as a capture file that tshark, Wireshark and
//! `bitlens inspect` read.
//!
//! One Ethernet interface (`if_name` "PROGRAM-proxy": "bitlens-proxy", or a game's own
//! binary's name) with nanosecond timestamps
//! (`if_tsresol` 9); each datagram the proxy received is one Enhanced Packet Block, frame `N`
//! for the proxy's frame `N`: synthesized Ethernet, IPv4 (or IPv6) and UDP headers with correct
//! checksums, the client's and the server's addresses and ports (a client and a server of
//! different IP versions are both written as IPv6, the IPv4 one as `::ffff:a.b.c.d`), the bytes
//! forwarded, and a comment (`frame.comment` in tshark) saying the direction and what the proxy
//! did, after the program's name: `bitlens to_server client 127.0.0.1:50001; drop` or
//! `...; mutation aim-oob`.

use super::Seen;
use crate::capture::CaptureError;
use crate::capture::write::{CaptureWriter, PcapngResolution, SynthDatagram, WriteFormat};
use std::fmt::Write as _;
use std::fs::File;
use std::io::BufWriter;
use std::net::{IpAddr, SocketAddr};
use std::path::Path;

/// pcapng, one Ethernet interface with nanosecond timestamps.
const FORMAT: WriteFormat = WriteFormat::PcapngEthernet {
    resolution: PcapngResolution::Nano,
    ts_offset_secs: 0,
};

/// A recording being written.
pub struct Recording {
    writer: CaptureWriter<BufWriter<File>>,
    name: String,
    /// The program that records (each comment starts with it).
    program: String,
}

impl Recording {
    /// Creates (or truncates) the file and writes its headers, for `program` (the name the CLI
    /// was run as: `bitlens`, or a game's own binary), which names the interface and starts
    /// each comment.
    ///
    /// # Errors
    /// A file that cannot be created, with its name.
    pub fn create(path: &Path, program: &str) -> Result<Self, String> {
        let name = path.display().to_string();
        let file = File::create(path).map_err(|e| format!("{name}: cannot create: {e}"))?;
        let out = BufWriter::with_capacity(1 << 16, file);
        let writer = CaptureWriter::with_interface(out, FORMAT, &format!("{program}-proxy"))
            .map_err(|e| format!("{name}: {e}"))?;
        Ok(Recording {
            writer,
            name,
            program: program.to_owned(),
        })
    }

    /// Appends one datagram: true when it was written, false when the format cannot hold it
    /// (it is skipped).
    ///
    /// # Errors
    /// A write error, with the file's name.
    pub fn write(&mut self, seen: &Seen) -> Result<bool, String> {
        let (src, dst) = same_family(seen.endpoints());
        let mut comment = format!(
            "{} {} client {}",
            self.program,
            seen.direction.name(),
            seen.client
        );
        for name in seen.fate.names() {
            let _ = write!(comment, "; {name}");
        }
        if let Some(m) = &seen.mutation {
            let _ = write!(comment, "; mutation {}", m.rule);
        }
        let d = SynthDatagram::new(seen.time, src, dst, &seen.bytes[..]);
        match self.writer.write_commented(&d, Some(&comment)) {
            Ok(()) => Ok(true),
            // A datagram the format cannot hold is skipped, not the end of the recording.
            Err(CaptureError::Unwritable { .. }) => Ok(false),
            Err(e) => Err(format!("{}: {e}", self.name)),
        }
    }

    /// Writes out what is buffered.
    ///
    /// # Errors
    /// A write error, with the file's name.
    pub fn flush(&mut self) -> Result<(), String> {
        self.writer
            .flush()
            .map_err(|e| format!("{}: {e}", self.name))
    }
}

/// Both addresses in one IP version: IPv4 ones become IPv4-mapped IPv6 when the other is IPv6.
fn same_family((src, dst): (SocketAddr, SocketAddr)) -> (SocketAddr, SocketAddr) {
    let v6 = |a: SocketAddr| match a.ip() {
        IpAddr::V4(v4) => SocketAddr::new(IpAddr::V6(v4.to_ipv6_mapped()), a.port()),
        IpAddr::V6(_) => a,
    };
    if src.is_ipv4() == dst.is_ipv4() {
        (src, dst)
    } else {
        (v6(src), v6(dst))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mixed_families_become_ipv6() {
        let a: SocketAddr = "127.0.0.1:5".parse().unwrap();
        let b: SocketAddr = "[::1]:6".parse().unwrap();
        let (x, y) = same_family((a, b));
        assert_eq!(x.to_string(), "[::ffff:127.0.0.1]:5");
        assert_eq!(y, b);
        assert_eq!(same_family((a, a)), (a, a));
    }

    /// A game's own binary records under its own name: the interface and every comment.
    #[test]
    fn the_recording_names_the_program_that_made_it() {
        let path =
            std::env::temp_dir().join(format!("bitlens-record-{}.pcapng", std::process::id()));
        let mut r = Recording::create(&path, "mygame").unwrap();
        let client: SocketAddr = "127.0.0.1:50001".parse().unwrap();
        let seen = Seen {
            frame: 1,
            time: crate::capture::Timestamp::from_nanos(1_000_000_000),
            direction: super::super::Direction::ToServer,
            client,
            server: "127.0.0.1:40000".parse().unwrap(),
            bytes: vec![1, 2, 3],
            fate: super::super::Fate::default(),
            mutation: None,
            observed: bitlens_codec::observe::Observation::NONE,
        };
        assert!(r.write(&seen).unwrap());
        r.flush().unwrap();
        drop(r);
        let bytes = std::fs::read(&path).unwrap();
        let has = |needle: &[u8]| bytes.windows(needle.len()).any(|w| w == needle);
        assert!(has(b"mygame to_server client 127.0.0.1:50001"));
        assert!(!has(b"bitlens"), "no other program's name");
        let c = crate::capture::Capture::open(&path).unwrap();
        assert_eq!(c.interfaces()[0].name.as_deref(), Some("mygame-proxy"));
        let _ = std::fs::remove_file(&path);
    }
}
