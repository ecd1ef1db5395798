//! The small captures in `tests/data/` (made by Wireshark's tools) read as tshark reads them.

use bitlens::capture::{Capture, FileFormat, LinkType, Status, TimeResolution};

fn open(name: &str) -> Capture {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    let c = Capture::open(path).unwrap();
    assert!(c.damage().is_none(), "{name}: {:?}", c.damage());
    c
}

/// (frame, time, src, dst, payload) of every datagram.
fn rows(c: &Capture) -> Vec<(u64, String, String, String, Vec<u8>)> {
    c.datagrams()
        .iter()
        .inspect(|d| assert_eq!(d.status, Status::Whole))
        .map(|d| {
            (
                d.frame,
                d.time.to_string(),
                d.src.to_string(),
                d.dst.to_string(),
                c.payload(d).to_vec(),
            )
        })
        .collect()
}

fn row(
    frame: u64,
    time: &str,
    src: &str,
    dst: &str,
    payload: &[u8],
) -> (u64, String, String, String, Vec<u8>) {
    (frame, time.into(), src.into(), dst.into(), payload.to_vec())
}

#[test]
fn ethernet_ns_pcap() {
    let c = open("eth-ns.pcap");
    assert_eq!(
        c.format(),
        FileFormat::Pcap {
            nanos: true,
            big_endian: false
        }
    );
    assert_eq!(
        rows(&c),
        [
            row(
                1,
                "1700000000.123456789",
                "10.0.0.1:5000",
                "10.0.0.2:40000",
                b"hello"
            ),
            row(
                2,
                "1700000001.000000001",
                "10.0.0.1:5000",
                "10.0.0.2:40000",
                b"world!"
            ),
        ]
    );
}

#[test]
fn sll2_loopback_pcap() {
    let c = open("sll2-lo.pcap");
    assert_eq!(c.interfaces()[0].link_type, LinkType::LINUX_SLL2);
    assert_eq!(
        rows(&c),
        [row(
            1,
            "1700000000.000001000",
            "127.0.0.1:40000",
            "127.0.0.1:40001",
            b"ping"
        )]
    );
}

#[test]
fn merged_pcapng_with_two_link_types_and_resolutions() {
    let c = open("merged.pcapng");
    let links: Vec<_> = c
        .interfaces()
        .iter()
        .map(|i| (i.link_type, i.resolution))
        .collect();
    assert_eq!(
        links,
        [
            (LinkType::ETHERNET, TimeResolution::Decimal(9)),
            (LinkType::LINUX_SLL2, TimeResolution::Decimal(6))
        ]
    );
    assert_eq!(
        rows(&c),
        [
            row(
                1,
                "1700000000.000001000",
                "127.0.0.1:40000",
                "127.0.0.1:40001",
                b"ping"
            ),
            row(
                2,
                "1700000000.123456789",
                "10.0.0.1:5000",
                "10.0.0.2:40000",
                b"hello"
            ),
            row(
                3,
                "1700000001.000000001",
                "10.0.0.1:5000",
                "10.0.0.2:40000",
                b"world!"
            ),
        ]
    );
    assert_eq!(c.datagrams()[0].interface, 1);
}
