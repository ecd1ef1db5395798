//! The capture writer against the reader: what a capture holds, written back with
//! [`write::write_capture`] and read again, gives the same datagrams. Part of `fuzz_ingest`.
//!
//! Each datagram is written with its time, addresses and the payload bytes present:
//!
//! - a whole datagram (and a fragment, whose piece the writer can only send whole) as a whole
//!   datagram: it reads back [`Status::Whole`] with the same bytes;
//! - a truncated one as a datagram one byte longer, cut by a snap length right after the bytes
//!   present: it reads back [`Status::Truncated`] with the same bytes (and ports 0 stay 0).
//!
//! Datagrams the format cannot hold are left out, and only those: a time before 1970, after the
//! format's last second (pcap: 2^32 - 1 seconds; pcapng at nanosecond resolution: 2^64 - 1 ns),
//! or a payload larger than UDP over IPv4 (65507 bytes) or IPv6 (65527) carries. Times are
//! written at nanosecond resolution, so they read back exactly.

use std::borrow::Cow;

use super::write::{PcapngResolution, SynthDatagram, WriteFormat, to_bytes};
use super::{Capture, Datagram, Status, Timestamp};

/// The formats a capture is written back in: pcap and pcapng with Ethernet frames, and pcap with
/// Linux cooked (SLL2) loopback frames, all at nanosecond resolution.
pub(crate) const FORMATS: [WriteFormat; 3] = [
    WriteFormat::PcapEthernet { nanos: true },
    WriteFormat::PcapngEthernet {
        resolution: PcapngResolution::Nano,
        ts_offset_secs: 0,
    },
    WriteFormat::PcapSll2Loopback { nanos: true },
];

/// Bytes of the link header the writer puts before the IP header.
fn link_len(format: WriteFormat) -> usize {
    match format {
        WriteFormat::PcapSll2Loopback { .. } => 20,
        _ => 14,
    }
}

/// True when `format` can hold a datagram with this time and payload length.
fn writable(format: WriteFormat, d: &Datagram, payload_len: usize) -> bool {
    let nanos = d.time.as_nanos();
    let time_ok = match format {
        WriteFormat::PcapngEthernet { .. } => (0..=i128::from(u64::MAX)).contains(&nanos),
        _ => (0..=i128::from(u32::MAX) * 1_000_000_000 + 999_999_999).contains(&nanos),
    };
    let max_payload = if d.src.is_ipv4() { 65507 } else { 65527 };
    time_ok && payload_len <= max_payload
}

/// A datagram read back: what must equal the original's.
#[derive(Debug, PartialEq, Eq)]
struct Seen<'a> {
    time: Timestamp,
    src: std::net::SocketAddr,
    dst: std::net::SocketAddr,
    status: Status,
    payload: &'a [u8],
}

/// Writes `capture`'s datagrams in `format`, reads the file again and checks that it holds the
/// same datagrams (module doc). Panics when it does not: a finding.
pub(crate) fn check_rewrite(capture: &Capture, format: WriteFormat) {
    let mut synth = Vec::new();
    let mut want = Vec::new();
    for d in capture.datagrams() {
        let payload = capture.payload(d);
        let truncated = d.status == Status::Truncated;
        if !writable(format, d, payload.len() + usize::from(truncated)) {
            continue;
        }
        let (s, status) = if truncated {
            let mut longer = payload.to_vec();
            longer.push(0);
            let ip_len = if d.src.is_ipv4() { 20 } else { 40 };
            let cut = link_len(format) + ip_len + 8 + payload.len();
            let s = SynthDatagram::new(d.time, d.src, d.dst, longer).truncated(cut as u32);
            (s, Status::Truncated)
        } else {
            let s = SynthDatagram::new(d.time, d.src, d.dst, Cow::Borrowed(payload));
            (s, Status::Whole)
        };
        synth.push(s);
        want.push(Seen {
            time: d.time,
            src: d.src,
            dst: d.dst,
            status,
            payload,
        });
    }
    if synth.is_empty() {
        return;
    }
    let bytes = match to_bytes(format, &synth) {
        Ok(b) => b,
        Err(e) => panic!("the writer refused datagrams it can hold ({format:?}): {e}"),
    };
    let again = match Capture::from_bytes("rewritten", bytes) {
        Ok(c) => c,
        Err(e) => panic!("the written capture ({format:?}) does not read: {e}"),
    };
    assert!(
        again.damage().is_none(),
        "damage in the written capture: {:?}",
        again.damage()
    );
    let got: Vec<Seen<'_>> = again
        .datagrams()
        .iter()
        .map(|d| Seen {
            time: d.time,
            src: d.src,
            dst: d.dst,
            status: d.status,
            payload: again.payload(d),
        })
        .collect();
    assert_eq!(
        got.len(),
        want.len(),
        "datagrams written and read again ({format:?})"
    );
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "datagram {i} differs once written ({format:?})");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::LinkType;

    fn addr(s: &str) -> std::net::SocketAddr {
        s.parse().unwrap()
    }

    /// A capture with a whole, a truncated, a fragmented (38 bytes of UDP in three fragments)
    /// and an IPv6 datagram, read from pcapng at nanosecond resolution.
    fn mixed() -> Capture {
        let t = |ns: i128| Timestamp::from_nanos(1_700_000_000_000_000_000 + ns);
        let out = [
            SynthDatagram::new(
                t(1),
                addr("10.0.0.1:5000"),
                addr("10.0.0.2:40000"),
                &b"whole"[..],
            ),
            SynthDatagram::new(
                t(2),
                addr("10.0.0.1:5000"),
                addr("10.0.0.2:40000"),
                &[7u8; 40][..],
            )
            .truncated(14 + 20 + 8 + 10),
            SynthDatagram::new(
                t(3),
                addr("10.0.0.1:5000"),
                addr("10.0.0.2:40000"),
                &[9u8; 30][..],
            )
            .fragmented(16),
            SynthDatagram::new(t(4), addr("[::1]:1"), addr("[::2]:2"), &b"v6"[..]),
        ];
        let format = WriteFormat::PcapngEthernet {
            resolution: PcapngResolution::Nano,
            ts_offset_secs: 0,
        };
        Capture::from_bytes("mixed", to_bytes(format, &out).unwrap()).unwrap()
    }

    #[test]
    fn a_capture_written_back_reads_to_the_same_datagrams() {
        let c = mixed();
        let statuses: Vec<Status> = c.datagrams().iter().map(|d| d.status).collect();
        assert_eq!(
            statuses,
            [
                Status::Whole,
                Status::Truncated,
                Status::Fragment,
                Status::Fragment,
                Status::Fragment,
                Status::Whole
            ]
        );
        for format in FORMATS {
            check_rewrite(&c, format);
        }
    }

    #[test]
    fn a_truncated_datagram_is_written_cut_after_the_bytes_present() {
        let c = mixed();
        let d = &c.datagrams()[1];
        assert_eq!(c.payload(d), &[7u8; 10]);
        // What check_rewrite writes for it, read back.
        let s = SynthDatagram::new(d.time, d.src, d.dst, [&[7u8; 10][..], &[0]].concat())
            .truncated(20 + 20 + 8 + 10);
        let format = WriteFormat::PcapSll2Loopback { nanos: true };
        let again = Capture::from_bytes("again", to_bytes(format, &[s]).unwrap()).unwrap();
        let back = &again.datagrams()[0];
        assert_eq!(
            (back.status, again.payload(back)),
            (Status::Truncated, &[7u8; 10][..])
        );
        assert_eq!(back.link_type, LinkType::LINUX_SLL2);
    }

    #[test]
    fn datagrams_a_format_cannot_hold_are_left_out() {
        let c = mixed();
        let mut d = c.datagrams()[0].clone();
        assert!(writable(FORMATS[0], &d, 5));
        assert!(!writable(FORMATS[0], &d, 65508), "IPv4 carries 65507 bytes");
        d.time = Timestamp::from_nanos(-1);
        assert!(!writable(FORMATS[1], &d, 5), "before 1970");
        d.time = Timestamp::from_nanos(i128::from(u32::MAX) * 1_000_000_000 + 1_000_000_000);
        assert!(!writable(FORMATS[0], &d, 5), "pcap seconds end at 2^32 - 1");
        assert!(writable(FORMATS[1], &d, 5), "pcapng nanoseconds go further");
    }
}
