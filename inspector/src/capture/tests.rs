//! Tests of the capture reader and writer over whole files.

use super::write::{CaptureWriter, PcapngResolution, SynthDatagram, WriteFormat, to_bytes};
use super::*;

const T0: i128 = 1_700_000_000_123_456_789;

fn addr(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

fn sample() -> Vec<SynthDatagram<'static>> {
    vec![
        SynthDatagram::new(
            Timestamp::from_nanos(T0),
            addr("10.0.0.1:5000"),
            addr("10.0.0.2:40000"),
            &b"first"[..],
        ),
        SynthDatagram::new(
            Timestamp::from_nanos(T0 + 1_000_000_001),
            addr("[2001:db8::1]:40001"),
            addr("[2001:db8::2]:6000"),
            &b"second datagram"[..],
        ),
        SynthDatagram::new(
            Timestamp::from_nanos(T0 + 2_999_999_999),
            addr("127.0.0.1:1"),
            addr("127.0.0.1:2"),
            &b""[..],
        ),
    ]
}

/// Reads `bytes` and checks the datagrams are `sample()` with times truncated to `unit` ns.
fn check_sample(bytes: Vec<u8>, unit: i128, link: LinkType) -> Capture {
    let c = Capture::from_bytes("sample", bytes).unwrap();
    assert!(c.damage().is_none(), "{:?}", c.damage());
    assert_eq!(c.frames(), 3);
    assert_eq!(c.skipped().total(), 0);
    let want = sample();
    assert_eq!(c.datagrams().len(), want.len());
    for (i, (d, w)) in c.datagrams().iter().zip(&want).enumerate() {
        assert_eq!(d.frame, i as u64 + 1);
        assert_eq!(
            d.time.as_nanos(),
            w.time.as_nanos() / unit * unit,
            "frame {}",
            d.frame
        );
        assert_eq!((d.src, d.dst), (w.src, w.dst));
        assert_eq!(c.payload(d), &w.payload[..]);
        assert_eq!(d.status, Status::Whole);
        assert_eq!(d.link_type, link);
        assert_eq!(d.captured_len, d.original_len);
    }
    c
}

#[test]
fn pcap_ethernet_micro_and_nano() {
    let c = check_sample(
        to_bytes(WriteFormat::PcapEthernet { nanos: true }, &sample()).unwrap(),
        1,
        LinkType::ETHERNET,
    );
    assert_eq!(
        c.format(),
        FileFormat::Pcap {
            nanos: true,
            big_endian: false
        }
    );
    assert_eq!(c.datagrams()[0].time.to_string(), "1700000000.123456789");
    let c = check_sample(
        to_bytes(WriteFormat::PcapEthernet { nanos: false }, &sample()).unwrap(),
        1000,
        LinkType::ETHERNET,
    );
    assert_eq!(c.datagrams()[0].time.to_string(), "1700000000.123456000");
    assert_eq!(c.interfaces()[0].resolution, TimeResolution::Decimal(6));
}

/// Rewrites a little-endian pcap as big-endian (header fields and record headers swapped).
fn to_big_endian(le: &[u8]) -> Vec<u8> {
    let mut be = le.to_vec();
    let swap = |v: &mut Vec<u8>, at: usize, n: usize| v[at..at + n].reverse();
    swap(&mut be, 0, 4);
    swap(&mut be, 4, 2);
    swap(&mut be, 6, 2);
    for at in [8, 12, 16, 20] {
        swap(&mut be, at, 4);
    }
    let mut pos = 24;
    while pos < be.len() {
        let incl = u32::from_le_bytes(le[pos + 8..pos + 12].try_into().unwrap()) as usize;
        for at in [0, 4, 8, 12] {
            swap(&mut be, pos + at, 4);
        }
        pos += 16 + incl;
    }
    be
}

#[test]
fn pcap_big_endian_micro_and_nano() {
    for (nanos, unit) in [(true, 1), (false, 1000)] {
        let le = to_bytes(WriteFormat::PcapEthernet { nanos }, &sample()).unwrap();
        let c = check_sample(to_big_endian(&le), unit, LinkType::ETHERNET);
        assert_eq!(
            c.format(),
            FileFormat::Pcap {
                nanos,
                big_endian: true
            }
        );
    }
}

/// One writer for every file: a named interface and a comment per datagram (the live
/// proxy's recording) read back as the plain writer's file does, and an output that fails is
/// an I/O error, not a datagram that cannot be written.
#[test]
fn the_writer_names_its_interface_comments_frames_and_reports_io_errors_as_such() {
    let format = WriteFormat::PcapngEthernet {
        resolution: PcapngResolution::Nano,
        ts_offset_secs: 0,
    };
    let mut w = CaptureWriter::with_interface(Vec::new(), format, "bitlens-proxy").unwrap();
    for (i, d) in sample().iter().enumerate() {
        let comment = format!("bitlens note {i}");
        w.write_commented(d, (i != 1).then_some(comment.as_str()))
            .unwrap();
        w.flush().unwrap();
    }
    let bytes = w.finish().unwrap();
    let count = |needle: &[u8]| bytes.windows(needle.len()).filter(|w| *w == needle).count();
    assert_eq!(count(b"bitlens note 0"), 1);
    assert_eq!(count(b"bitlens note 1"), 0);
    assert_eq!(count(b"bitlens note 2"), 1);
    let c = check_sample(bytes, 1, LinkType::ETHERNET);
    assert_eq!(c.interfaces()[0].name.as_deref(), Some("bitlens-proxy"));

    /// Takes the file's headers, then fails.
    struct Full(usize);
    impl std::io::Write for Full {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.0 < buf.len() {
                return Err(std::io::ErrorKind::StorageFull.into());
            }
            self.0 -= buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let header_len = to_bytes(format, &[]).unwrap().len();
    let mut w = CaptureWriter::new(Full(header_len), format).unwrap();
    let e = w.write(&sample()[0]).unwrap_err();
    assert!(matches!(e, CaptureError::Io { .. }), "{e:?}");
}

#[test]
fn pcapng_resolutions_and_offset() {
    for (resolution, unit) in [(PcapngResolution::Nano, 1), (PcapngResolution::Micro, 1000)] {
        let format = WriteFormat::PcapngEthernet {
            resolution,
            ts_offset_secs: 0,
        };
        let c = check_sample(
            to_bytes(format, &sample()).unwrap(),
            unit,
            LinkType::ETHERNET,
        );
        assert_eq!(c.format(), FileFormat::Pcapng);
        assert_eq!(c.interfaces()[0].name.as_deref(), Some("bitlens0"));
    }
    let format = WriteFormat::PcapngEthernet {
        resolution: PcapngResolution::Micro,
        ts_offset_secs: 1_600_000_000,
    };
    let c = check_sample(
        to_bytes(format, &sample()).unwrap(),
        1000,
        LinkType::ETHERNET,
    );
    assert_eq!(c.interfaces()[0].ts_offset_secs, 1_600_000_000);
    assert_eq!(c.datagrams()[0].time.to_string(), "1700000000.123456000");
}

#[test]
fn pcapng_power_of_two_resolution() {
    // 2^-20 s units: 1 unit = 953.67431640625 ns. Times are floored to a unit, then to a ns.
    let format = WriteFormat::PcapngEthernet {
        resolution: PcapngResolution::PowerOfTwo(20),
        ts_offset_secs: 0,
    };
    let c = Capture::from_bytes("p2", to_bytes(format, &sample()).unwrap()).unwrap();
    assert_eq!(c.interfaces()[0].resolution, TimeResolution::Binary(20));
    for (d, w) in c.datagrams().iter().zip(sample()) {
        let units = w.time.as_nanos() * (1 << 20) / 1_000_000_000;
        assert_eq!(d.time.as_nanos(), units * 1_000_000_000 / (1 << 20));
    }
}

#[test]
fn loopback_formats() {
    let bytes = to_bytes(WriteFormat::PcapSll2Loopback { nanos: true }, &sample()).unwrap();
    check_sample(bytes, 1, LinkType::LINUX_SLL2);
    let bytes = to_bytes(
        WriteFormat::PcapEthernetLoopback { nanos: false },
        &sample(),
    )
    .unwrap();
    check_sample(bytes, 1000, LinkType::ETHERNET);
}

#[test]
fn truncated_and_fragmented_frames() {
    let payload = [0xAB; 100];
    let out = [
        SynthDatagram::new(
            Timestamp::from_nanos(T0),
            addr("10.0.0.1:1"),
            addr("10.0.0.2:2"),
            &payload[..],
        )
        .truncated(60),
        SynthDatagram::new(
            Timestamp::from_nanos(T0),
            addr("10.0.0.1:1"),
            addr("10.0.0.2:2"),
            &payload[..],
        )
        .fragmented(48),
        SynthDatagram::new(
            Timestamp::from_nanos(T0),
            addr("10.0.0.1:1"),
            addr("10.0.0.2:2"),
            &payload[..],
        ),
    ];
    let c = Capture::from_bytes(
        "t",
        to_bytes(WriteFormat::PcapEthernet { nanos: true }, &out).unwrap(),
    )
    .unwrap();
    let d = c.datagrams();
    // 1 truncated + 3 fragments (108 bytes of UDP in 48-byte pieces) + 1 whole.
    assert_eq!(d.len(), 5);
    assert_eq!(d[0].status, Status::Truncated);
    assert_eq!((d[0].captured_len, d[0].original_len), (60, 142));
    assert_eq!(c.payload(&d[0]), &payload[..60 - 42]);
    assert_eq!(d[1].status, Status::Fragment);
    assert_eq!(d[1].dst, addr("10.0.0.2:2"));
    assert_eq!(c.payload(&d[1]).len(), 40);
    assert_eq!(
        (d[2].status, d[2].dst.port(), c.payload(&d[2]).len()),
        (Status::Fragment, 0, 48)
    );
    assert_eq!(
        (d[3].status, d[3].dst.port(), c.payload(&d[3]).len()),
        (Status::Fragment, 0, 12)
    );
    assert_eq!((d[4].frame, d[4].status), (5, Status::Whole));
    assert_eq!(c.payload(&d[4]), &payload[..]);
}

/// A pcap of the given Ethernet frames (ns, little-endian).
fn pcap_of(frames: &[Vec<u8>]) -> Vec<u8> {
    let mut v = read::pcap_header(LinkType::ETHERNET, true);
    for (i, f) in frames.iter().enumerate() {
        let len = f.len() as u32;
        for word in [1_700_000_000, i as u32, len, len] {
            v.extend_from_slice(&u32::to_le_bytes(word));
        }
        v.extend_from_slice(f);
    }
    v
}

fn udp_frame(payload: &[u8]) -> Vec<u8> {
    let b = etherparse::PacketBuilder::ethernet2([2; 6], [4; 6])
        .ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64)
        .udp(7, 40000);
    let mut v = Vec::new();
    b.write(&mut v, payload).unwrap();
    v
}

#[test]
fn non_udp_frames_are_counted_and_numbered() {
    let mut arp = vec![0xFF; 6];
    arp.extend_from_slice(&[2; 6]);
    arp.extend_from_slice(&[0x08, 0x06]);
    arp.extend_from_slice(&[0; 28]);
    let tcp = {
        let b = etherparse::PacketBuilder::ethernet2([2; 6], [4; 6])
            .ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64)
            .tcp(1, 2, 3, 4);
        let mut v = Vec::new();
        b.write(&mut v, b"x").unwrap();
        v
    };
    let icmp = {
        let b = etherparse::PacketBuilder::ethernet2([2; 6], [4; 6])
            .ipv6([1; 16], [2; 16], 64)
            .icmpv6_echo_request(1, 1);
        let mut v = Vec::new();
        b.write(&mut v, b"x").unwrap();
        v
    };
    let frames = vec![
        arp,
        udp_frame(b"one"),
        tcp,
        icmp,
        vec![0; 10],
        udp_frame(b"two"),
    ];
    let c = Capture::from_bytes("mixed", pcap_of(&frames)).unwrap();
    assert_eq!(c.frames(), 6);
    let numbers: Vec<u64> = c.datagrams().iter().map(|d| d.frame).collect();
    assert_eq!(numbers, [2, 6]);
    assert_eq!(c.payload(&c.datagrams()[1]), b"two");
    assert_eq!(c.skipped().count(SkipReason::NotIp), 1);
    assert_eq!(c.skipped().count(SkipReason::NotUdp), 2);
    assert_eq!(c.skipped().count(SkipReason::TruncatedHeader), 1);
    assert_eq!(c.skipped().total(), 4);
    assert_eq!(c.skipped().iter().count(), 3);
}

#[test]
fn not_a_capture_is_an_error() {
    for bytes in [
        vec![],
        b"hello world, not a capture".to_vec(),
        vec![0xD4, 0xC3],
    ] {
        let e = Capture::from_bytes("notes.txt", bytes).unwrap_err();
        assert!(matches!(e, CaptureError::NotACapture { .. }), "{e}");
        assert!(
            e.to_string()
                .starts_with("notes.txt: not a pcap or pcapng file")
        );
    }
    // Too short to start with anything: the message says so rather than showing zero bytes.
    let e = Capture::from_bytes("empty.pcap", vec![]).unwrap_err();
    assert!(e.to_string().contains("(it is empty)"), "{e}");
    let e = Capture::from_bytes("tiny.pcap", vec![0xD4, 0xC3]).unwrap_err();
    assert!(e.to_string().contains("(only 2 bytes long)"), "{e}");
    let e = Capture::from_bytes("short.pcap", vec![0xD4, 0xC3, 0xB2, 0xA1, 2, 0]).unwrap_err();
    assert!(matches!(e, CaptureError::TruncatedHeader { .. }), "{e}");
    let e = Capture::open("/nonexistent/x.pcap").unwrap_err();
    assert!(e.to_string().starts_with("/nonexistent/x.pcap: "), "{e}");
}

#[test]
fn pcap_damage_keeps_packets_before_it() {
    let good = pcap_of(&[udp_frame(b"one"), udp_frame(b"two"), udp_frame(b"three")]);
    // Cut inside the third record.
    let cut = good[..good.len() - 3].to_vec();
    let c = Capture::from_bytes("cut.pcap", cut).unwrap();
    assert_eq!(c.datagrams().len(), 2);
    let e = c.damage().unwrap();
    assert!(matches!(e, CaptureError::TruncatedRecord { .. }));
    let third_at = 24 + 2 * (16 + udp_frame(b"one").len());
    assert_eq!(e.location().unwrap().frame, Some(3));
    assert_eq!(e.location().unwrap().offset, third_at as u64);
    assert!(
        e.to_string().starts_with(&format!(
            "cut.pcap: frame 3 at byte {third_at}: record claims"
        )),
        "{e}"
    );

    // An absurd length in the second record.
    let mut absurd = good.clone();
    let at = 24 + 16 + udp_frame(b"one").len();
    absurd[at + 8..at + 12].copy_from_slice(&u32::MAX.to_le_bytes());
    let c = Capture::from_bytes("captures/bad.pcap", absurd).unwrap();
    assert_eq!(c.datagrams().len(), 1);
    assert_eq!(
        c.damage().unwrap().to_string(),
        format!(
            "captures/bad.pcap: frame 2 at byte {at}: record claims 4294967311 bytes with its header, more than the 16 MiB limit"
        )
    );

    // Every prefix: no panic, the datagrams are a prefix of the whole file's.
    let full = Capture::from_bytes("good", good.clone()).unwrap();
    for n in 24..good.len() {
        let c = Capture::from_bytes("prefix", good[..n].to_vec()).unwrap();
        assert!(c.datagrams().len() <= full.datagrams().len());
        assert_eq!(c.datagrams(), &full.datagrams()[..c.datagrams().len()]);
        let boundary = (n - 24) % (16 + udp_frame(b"one").len()) == 0 && n <= third_at;
        assert_eq!(c.damage().is_some(), !boundary, "prefix {n}");
    }
}

fn pcapng_sample() -> Vec<u8> {
    let format = WriteFormat::PcapngEthernet {
        resolution: PcapngResolution::Nano,
        ts_offset_secs: 0,
    };
    to_bytes(format, &sample()).unwrap()
}

/// Byte offset of the `n`th block (0 = section header) of a little-endian pcapng.
fn block_at(bytes: &[u8], n: usize) -> usize {
    let mut pos = 0;
    for _ in 0..n {
        pos += u32::from_le_bytes(bytes[pos + 4..pos + 8].try_into().unwrap()) as usize;
    }
    pos
}

#[test]
fn pcapng_damage() {
    let good = pcapng_sample();
    // Block 0 SHB, 1 IDB, 2..=4 EPBs.
    let third = block_at(&good, 3);

    let mut unknown_if = good.clone();
    unknown_if[third + 8..third + 12].copy_from_slice(&7u32.to_le_bytes());
    let c = Capture::from_bytes("if.pcapng", unknown_if).unwrap();
    assert_eq!(c.datagrams().len(), 1);
    assert!(
        matches!(
            c.damage(),
            Some(CaptureError::UnknownInterface { interface: 7, .. })
        ),
        "{:?}",
        c.damage()
    );
    assert_eq!(c.damage().unwrap().location().unwrap().frame, Some(2));
    assert!(
        c.damage()
            .unwrap()
            .to_string()
            .starts_with(&format!("if.pcapng: frame 2 at byte {third}: "))
    );

    let mut absurd = good.clone();
    absurd[third + 4..third + 8].copy_from_slice(&0x7FFF_FFF0u32.to_le_bytes());
    let c = Capture::from_bytes("big.pcapng", absurd).unwrap();
    assert!(matches!(
        c.damage(),
        Some(CaptureError::RecordTooLong { .. })
    ));
    // A pcapng block length counts the whole block: no pcap "record ... with its header".
    assert_eq!(
        c.damage().unwrap().to_string(),
        format!(
            "big.pcapng: frame 2 at byte {third}: pcapng block claims 2147483632 bytes, \
             more than the 16 MiB limit"
        )
    );

    let cut = good[..third + 20].to_vec();
    let c = Capture::from_bytes("cut.pcapng", cut).unwrap();
    assert_eq!(
        c.damage().unwrap().to_string(),
        format!(
            "cut.pcapng: frame 2 at byte {third}: pcapng block claims {} bytes, only 20 left \
             (file cut short?)",
            block_at(&good, 4) - third
        )
    );

    let mut mismatch = good.clone();
    let trailer = block_at(&good, 4) - 4;
    mismatch[trailer] ^= 4;
    let c = Capture::from_bytes("trailer.pcapng", mismatch).unwrap();
    assert!(
        matches!(c.damage(), Some(CaptureError::MalformedBlock { .. })),
        "{:?}",
        c.damage()
    );
    // Issue 31.3: in bitlens's words (file, frame, byte, block, what is wrong), not
    // pcap-file's "Block length fields don't match: initial 48B, trailing 52B".
    let len = u32::from_le_bytes(good[third + 4..third + 8].try_into().unwrap());
    assert_eq!(
        c.damage().unwrap().to_string(),
        format!(
            "trailer.pcapng: frame 2 at byte {third}: malformed pcapng block: enhanced packet \
             block claims {len} bytes at its start and {} at its end (they must agree)",
            len ^ 4
        )
    );
    let mut unaligned = good.clone();
    unaligned[third + 4..third + 8].copy_from_slice(&(len - 1).to_le_bytes());
    let c = Capture::from_bytes("odd.pcapng", unaligned).unwrap();
    assert_eq!(
        c.damage().unwrap().to_string(),
        format!(
            "odd.pcapng: frame 2 at byte {third}: malformed pcapng block: enhanced packet \
             block claims {} bytes, not a multiple of 4",
            len - 1
        )
    );
    // Issue 31.5's singular count: a block that claims 1 byte says so.
    let mut one = good.clone();
    one[third + 4..third + 8].copy_from_slice(&1u32.to_le_bytes());
    let c = Capture::from_bytes("one.pcapng", one).unwrap();
    assert_eq!(
        c.damage().unwrap().to_string(),
        format!(
            "one.pcapng: frame 2 at byte {third}: malformed pcapng block: enhanced packet \
             block claims 1 byte, not a multiple of 4"
        )
    );

    // A second section with an unknown byte-order magic.
    let mut second = good.clone();
    let mut shb = good[..28].to_vec();
    shb[8..12].copy_from_slice(&[1, 2, 3, 4]);
    second.extend_from_slice(&shb);
    let c = Capture::from_bytes("magic.pcapng", second).unwrap();
    assert_eq!(c.datagrams().len(), 3);
    assert!(matches!(
        c.damage(),
        Some(CaptureError::BadMagic {
            magic: 0x0102_0304,
            ..
        })
    ));

    // A broken first section header is not a capture we can read at all.
    let mut first = good.clone();
    first[8..12].copy_from_slice(&[1, 2, 3, 4]);
    assert!(matches!(
        Capture::from_bytes("x", first),
        Err(CaptureError::BadMagic { .. })
    ));

    let full = Capture::from_bytes("good", good.clone()).unwrap();
    let boundaries: Vec<usize> = (1..=4).map(|b| block_at(&good, b)).collect();
    for n in 0..good.len() {
        match Capture::from_bytes("prefix", good[..n].to_vec()) {
            Ok(c) => {
                assert_eq!(c.datagrams(), &full.datagrams()[..c.datagrams().len()]);
                assert_eq!(c.damage().is_some(), !boundaries.contains(&n), "prefix {n}");
            }
            Err(e) => assert!(n < 28, "prefix {n}: {e}"),
        }
    }
}

#[test]
fn pcapng_sections_and_interfaces_of_different_link_types() {
    // Section 1: Ethernet interface; section 2: raw IPv4 interface, then SLL2. Interface ids
    // restart per section; ours run on.
    let mut file = pcapng_sample();
    let mut section = read::pcapng_prefix(LinkType::IPV4);
    section.extend_from_slice(&read::pcapng_prefix(LinkType::LINUX_SLL2)[28..]);
    let ip = {
        let b = etherparse::PacketBuilder::ipv4([1, 2, 3, 4], [5, 6, 7, 8], 9).udp(10, 11);
        let mut v = Vec::new();
        b.write(&mut v, b"raw!").unwrap();
        v
    };
    // EPB on interface 0 of section 2 (raw IPv4), default µs resolution: 1 unit = 1 µs.
    let mut epb = Vec::new();
    let body_len = 20 + ip.len();
    let total = 12 + body_len.div_ceil(4) * 4;
    for w in [
        6u32,
        total as u32,
        0,
        0,
        1_500_000,
        ip.len() as u32,
        ip.len() as u32,
    ] {
        epb.extend_from_slice(&w.to_le_bytes());
    }
    epb.extend_from_slice(&ip);
    epb.resize(total - 4, 0);
    epb.extend_from_slice(&(total as u32).to_le_bytes());
    section.extend_from_slice(&epb);
    file.extend_from_slice(&section);

    let c = Capture::from_bytes("two.pcapng", file).unwrap();
    assert!(c.damage().is_none(), "{:?}", c.damage());
    assert_eq!(c.interfaces().len(), 3);
    assert_eq!(c.interfaces()[2].link_type, LinkType::LINUX_SLL2);
    let d = c.datagrams().last().unwrap();
    assert_eq!((d.frame, d.interface, d.link_type), (4, 1, LinkType::IPV4));
    assert_eq!(d.time.to_string(), "1.500000000");
    assert_eq!(c.payload(d), b"raw!");
}

#[test]
fn pcapng_big_endian_section() {
    use pcap_file::pcapng::PcapNgWriter;
    use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
    use pcap_file::pcapng::blocks::interface_description::{
        InterfaceDescriptionBlock, InterfaceDescriptionOption, InterfaceTsResolution,
    };
    let mut w = PcapNgWriter::with_endianness(Vec::new(), pcap_file::Endianness::Big).unwrap();
    let mut idb = InterfaceDescriptionBlock::new(pcap_file::DataLink::ETHERNET, 0);
    idb.options = vec![InterfaceDescriptionOption::IfTsResol(
        InterfaceTsResolution::MICRO,
    )];
    w.write_pcapng_block(idb).unwrap();
    let frame = udp_frame(b"big end");
    let epb = EnhancedPacketBlock {
        interface_id: 0,
        timestamp: std::time::Duration::new(1_700_000_000, 654_321_000),
        original_len: frame.len() as u32,
        data: frame.as_slice().into(),
        options: vec![],
    };
    w.write_pcapng_block(epb).unwrap();
    let c = Capture::from_bytes("be.pcapng", w.into_inner()).unwrap();
    assert!(c.damage().is_none());
    let d = &c.datagrams()[0];
    assert_eq!(d.time.to_string(), "1700000000.654321000");
    assert_eq!(c.payload(d), b"big end");
}

#[test]
fn timestamp_display() {
    assert_eq!(Timestamp::from_nanos(0).to_string(), "0.000000000");
    assert_eq!(Timestamp::from_nanos(-1).to_string(), "-0.000000001");
    assert_eq!(
        Timestamp::from_secs_nanos(-2, 500_000_000).to_string(),
        "-1.500000000"
    );
    assert_eq!(
        Timestamp::from_secs_nanos(-2, 500_000_000).secs_nanos(),
        (-2, 500_000_000)
    );
    assert_eq!(
        Timestamp::from_nanos(T0).to_string(),
        "1700000000.123456789"
    );
}

#[test]
fn writer_rejects_what_it_cannot_write() {
    let bad = [SynthDatagram::new(
        Timestamp::from_nanos(0),
        addr("10.0.0.1:1"),
        addr("[::1]:2"),
        &b""[..],
    )];
    assert!(matches!(
        to_bytes(WriteFormat::PcapEthernet { nanos: true }, &bad),
        Err(CaptureError::Unwritable { index: 0, .. })
    ));
    let early = [SynthDatagram::new(
        Timestamp::from_nanos(-5),
        addr("10.0.0.1:1"),
        addr("10.0.0.2:2"),
        &b""[..],
    )];
    assert!(to_bytes(WriteFormat::PcapEthernet { nanos: true }, &early).is_err());
    let v6frag = [SynthDatagram::new(
        Timestamp::from_nanos(0),
        addr("[::1]:1"),
        addr("[::1]:2"),
        &b"x"[..],
    )
    .fragmented(8)];
    assert!(to_bytes(WriteFormat::PcapEthernet { nanos: true }, &v6frag).is_err());
    let before_offset = WriteFormat::PcapngEthernet {
        resolution: PcapngResolution::Nano,
        ts_offset_secs: 2_000_000_000,
    };
    assert!(to_bytes(before_offset, &sample()).is_err());
}

/// A small deterministic generator for the no-panic tests.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[cfg(feature = "fuzzing")]
#[test]
fn fuzz_ingest_survives_random_and_mutated_input() {
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    let seeds = [
        pcapng_sample(),
        to_bytes(WriteFormat::PcapEthernet { nanos: false }, &sample()).unwrap(),
        to_bytes(WriteFormat::PcapSll2Loopback { nanos: true }, &sample()).unwrap(),
        udp_frame(b"payload"),
    ];
    // More rounds: BITLENS_FUZZ_ROUNDS=300000 cargo test --release -p bitlens fuzz_ingest
    let rounds = std::env::var("BITLENS_FUZZ_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3000);
    for round in 0..rounds {
        let mut input = if round % 4 == 3 {
            (0..rng.next() % 200)
                .map(|_| rng.next() as u8)
                .collect::<Vec<u8>>()
        } else {
            seeds[round % seeds.len()].clone()
        };
        for _ in 0..1 + rng.next() % 8 {
            if input.is_empty() {
                break;
            }
            let at = (rng.next() as usize) % input.len();
            match rng.next() % 4 {
                0 => input[at] = rng.next() as u8,
                1 => input[at] ^= 0x80,
                2 => input.truncate(at),
                _ => input[at] = [0x00, 0xFF, 0x7F, 0x08][(rng.next() % 4) as usize],
            }
        }
        fuzz_ingest(&input);
    }
}

#[test]
fn times_display_as_epoch_seconds_with_nine_decimals() {
    for (nanos, text) in [
        (0i128, "0.000000000"),
        (1_700_000_000_123_456_789, "1700000000.123456789"),
        (-1, "-0.000000001"),
        (-500_000_000, "-0.500000000"),
        (-1_000_000_000, "-1.000000000"),
        (-1_500_000_001, "-1.500000001"),
        (
            i128::from(i64::MIN) * 1_000_000_000,
            "-9223372036854775808.000000000",
        ),
    ] {
        assert_eq!(Timestamp::from_nanos(nanos).to_string(), text);
    }
}

#[test]
fn seconds_and_nanoseconds_are_normalized() {
    let t = Timestamp::from_secs_nanos(5, 2_500_000_000);
    assert_eq!(t.secs_nanos(), (7, 500_000_000));
    assert_eq!(
        Timestamp::from_secs_nanos(-1, 999_999_999).to_string(),
        "-0.000000001"
    );
    assert_eq!(Timestamp::from_secs_nanos(3, 7).secs_nanos(), (3, 7));
}

#[test]
fn a_large_file_read_in_halves_is_the_whole_file() {
    // Above the size read on two threads: the halves must join into exactly the file.
    let frames: Vec<Vec<u8>> = (0..14_000u32)
        .map(|i| udp_frame(&[(i % 251) as u8; 1200]))
        .collect();
    let bytes = pcap_of(&frames);
    assert!(bytes.len() > 16 << 20);
    let dir = std::env::temp_dir().join(format!("bitlens-large-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("large.pcap");
    std::fs::write(&path, &bytes).unwrap();
    let opened = Capture::open(&path).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(opened.data() == bytes.as_slice());
    assert_eq!(opened.datagrams().len(), frames.len());
    assert_eq!(
        opened.payload(&opened.datagrams()[13_999]),
        &[(13_999 % 251) as u8; 1200]
    );
}

#[test]
fn a_scan_hands_over_every_datagram_in_order_in_chunks() {
    let frames: Vec<Vec<u8>> = (0..1000u32).map(|i| udp_frame(&i.to_le_bytes())).collect();
    let mut bytes = pcap_of(&frames);
    let whole = Capture::from_bytes("x.pcap", bytes.clone()).unwrap();
    for chunk in [1, 7, 1000, 5000] {
        let mut seen = Vec::new();
        let summary = super::scan("x.pcap", &bytes, chunk, |first, ds| {
            assert_eq!(first, seen.len());
            assert!(ds.len() <= chunk);
            seen.extend_from_slice(ds);
        })
        .unwrap();
        assert_eq!(seen, whole.datagrams());
        assert_eq!(summary.datagrams, 1000);
        assert_eq!(summary.frames, 1000);
        assert!(summary.damage.is_none());
    }
    // Cut inside the last record: the datagrams before the damage are handed over, and the
    // damage is the one `Capture` reports.
    bytes.truncate(bytes.len() - 3);
    let cut = Capture::from_bytes("x.pcap", bytes.clone()).unwrap();
    let mut seen = Vec::new();
    let summary = super::scan("x.pcap", &bytes, 64, |_, ds| seen.extend_from_slice(ds)).unwrap();
    assert_eq!(seen, cut.datagrams());
    assert_eq!(seen.len(), 999);
    assert_eq!(
        summary.damage.map(|d| d.to_string()),
        cut.damage().map(ToString::to_string)
    );
    assert!(super::scan("x.pcap", b"not a capture", 64, |_, _| unreachable!()).is_err());
}

/// Streams `bytes` through `read::stream_pcap` in windows of `window` bytes and checks that it
/// finds exactly what indexing the whole file finds.
fn assert_streams_like_the_whole(bytes: &[u8], window: usize) {
    let whole = Capture::from_bytes("x.pcap", bytes.to_vec()).unwrap();
    let mut seen: Vec<(Datagram, Vec<u8>)> = Vec::new();
    let mut input = std::io::Cursor::new(bytes);
    let indexed = super::read::stream_pcap("x.pcap", &mut input, window, &mut |first, ds, w| {
        assert_eq!(first, seen.len());
        seen.extend(ds.iter().map(|d| (d.clone(), d.payload(&w).to_vec())));
        // Another vector back (as `check` gives) must not change what the next window finds.
        drop(ds);
        (Vec::with_capacity(3), w)
    })
    .unwrap()
    .expect("a pcap file");
    assert_eq!(seen.len(), whole.datagrams().len(), "window {window}");
    for ((d, payload), w) in seen.iter().zip(whole.datagrams()) {
        assert_eq!(
            (d.frame, d.time, d.src, d.dst, d.status, d.captured_len),
            (w.frame, w.time, w.src, w.dst, w.status, w.captured_len)
        );
        // Flaw offsets are the file's, not the window's.
        assert_eq!(d.flaw, w.flaw, "frame {}", d.frame);
        assert_eq!(&payload[..], whole.payload(w), "frame {}", d.frame);
    }
    assert_eq!(indexed.frames, whole.frames(), "window {window}");
    assert_eq!(&indexed.skipped, whole.skipped());
    assert_eq!(
        indexed.damage.map(|d| d.to_string()),
        whole.damage().map(ToString::to_string),
        "window {window}"
    );
}

#[test]
fn a_streamed_pcap_is_the_whole_pcap_whatever_the_window() {
    let mut frames: Vec<Vec<u8>> = (0..300u32)
        .map(|i| udp_frame(&vec![(i % 251) as u8; (i as usize * 7) % 400]))
        .collect();
    frames.insert(17, vec![0xFF; 60]); // not UDP: counted, skipped
    // A lying UDP length and a lying IP length, far into the file.
    frames[200][14 + 20 + 4..14 + 20 + 6].copy_from_slice(&2000u16.to_be_bytes());
    frames[250][14 + 2..14 + 4].copy_from_slice(&3000u16.to_be_bytes());
    let bytes = pcap_of(&frames);
    for window in [
        1,
        7,
        16,
        24,
        100,
        1000,
        4096,
        bytes.len(),
        bytes.len() + 1,
        1 << 20,
    ] {
        assert_streams_like_the_whole(&bytes, window);
        // Cut inside a record header, inside a record body, and right after the file header.
        for cut in [bytes.len() - 3, bytes.len() - 300, 30, 24] {
            assert_streams_like_the_whole(&bytes[..cut], window);
        }
    }
    // Big-endian, and a record claiming more than MAX_RECORD_LEN.
    let le = to_bytes(WriteFormat::PcapEthernet { nanos: false }, &sample()).unwrap();
    assert_streams_like_the_whole(&to_big_endian(&le), 10);
    let mut liar = pcap_of(&frames[..3]);
    let at = liar.len();
    liar.extend_from_slice(&pcap_of(&frames[..1])[24..]);
    liar[at + 8..at + 12].copy_from_slice(&u32::MAX.to_le_bytes());
    assert_streams_like_the_whole(&liar, 50);
    // Not pcap: nothing is handed over.
    let ng = to_bytes(
        WriteFormat::PcapngEthernet {
            resolution: PcapngResolution::Nano,
            ts_offset_secs: 0,
        },
        &sample(),
    )
    .unwrap();
    let mut input = std::io::Cursor::new(&ng[..]);
    let none = super::read::stream_pcap("x", &mut input, 64, &mut |_, _, _| unreachable!());
    assert!(none.unwrap().is_none());
}

/// The record header of the first record after the pcap file header claims `incl_len` bytes.
fn with_first_incl_len(mut pcap: Vec<u8>, incl_len: u32) -> Vec<u8> {
    pcap[24 + 8..24 + 12].copy_from_slice(&incl_len.to_le_bytes());
    pcap
}

#[test]
fn a_record_too_long_and_a_record_cut_short_count_the_same_bytes() {
    let good = pcap_of(&[udp_frame(b"one")]);
    let available = good.len() - 24;
    // Over the limit with its 16-byte header, and cut short: the same count, header included.
    for (incl_len, want) in [
        (
            MAX_RECORD_LEN as u32 - 15,
            format!(
                "x.pcap: frame 1 at byte 24: record claims {} bytes with its header, more than \
                 the 16 MiB limit",
                MAX_RECORD_LEN + 1
            ),
        ),
        (
            MAX_RECORD_LEN as u32 - 16,
            format!(
                "x.pcap: frame 1 at byte 24: record claims {MAX_RECORD_LEN} bytes with its \
                 header, only {available} left (file cut short?)"
            ),
        ),
        (
            1000,
            format!(
                "x.pcap: frame 1 at byte 24: record claims 1016 bytes with its header, only \
                 {available} left (file cut short?)"
            ),
        ),
    ] {
        let c = Capture::from_bytes("x.pcap", with_first_incl_len(good.clone(), incl_len)).unwrap();
        assert_eq!(c.damage().unwrap().to_string(), want, "{incl_len}");
    }
}

#[test]
fn a_pcapng_captured_length_past_its_block_says_so() {
    let good = pcapng_sample();
    let first = block_at(&good, 2);
    let block_len = block_at(&good, 3) - first;
    for captured in [u32::MAX, block_len as u32 - 31] {
        let mut bad = good.clone();
        bad[first + 20..first + 24].copy_from_slice(&captured.to_le_bytes());
        let c = Capture::from_bytes("x.pcapng", bad).unwrap();
        assert!(c.datagrams().is_empty());
        assert_eq!(
            c.damage().unwrap().to_string(),
            format!(
                "x.pcapng: frame 1 at byte {first}: malformed pcapng block: enhanced packet \
                 block claims {captured} captured bytes, more than the {} its {block_len}-byte \
                 block holds for packet data",
                block_len - 32
            )
        );
    }
    // Exactly the room: the parser's own checks decide (here the original length, 8 bytes).
    let mut full = good.clone();
    full[first + 20..first + 24].copy_from_slice(&(block_len as u32 - 32).to_le_bytes());
    let damage = Capture::from_bytes("x.pcapng", full)
        .unwrap()
        .damage()
        .unwrap()
        .to_string();
    assert!(!damage.contains("captured bytes, more than"), "{damage}");
}

#[test]
fn lying_ip_and_udp_lengths_are_flaws_with_their_file_offset_and_a_cut_is_not() {
    // 1: whole; 2: UDP length 2000 in a 31-byte IP packet; 3: IPv4 total length 3000 around a
    // whole UDP datagram; 4: the frame of 3, cut by the snap length (on the wire it was longer).
    let mut frames = vec![udp_frame(b"one"), udp_frame(b"two"), udp_frame(b"three")];
    frames[1][14 + 20 + 4..14 + 20 + 6].copy_from_slice(&2000u16.to_be_bytes());
    frames[2][14 + 2..14 + 4].copy_from_slice(&3000u16.to_be_bytes());
    let mut bytes = pcap_of(&frames);
    let cut = frames[2].clone();
    bytes.extend_from_slice(&pcap_of(&[cut])[24..]);
    let last = bytes.len() - frames[2].len() - 16;
    bytes[last + 12..last + 16].copy_from_slice(&3014u32.to_le_bytes());
    let c = Capture::from_bytes("lies.pcap", bytes).unwrap();
    let d = c.datagrams();
    assert_eq!(d.len(), 4);
    let record = |n: usize| 24 + (n - 1) * (16 + frames[0].len()) + 16;
    assert_eq!(d[0].flaw, None);
    assert_eq!(d[1].status, Status::Truncated);
    assert_eq!(
        d[1].flaw.unwrap().message(c.name(), d[1].frame),
        format!(
            "lies.pcap: frame 2 at byte {}: UDP length 2000 is more than the 11 bytes the IP \
             header leaves for the datagram (a malformed UDP header, not a snap-length cut)",
            record(2) + 14 + 20 + 4
        )
    );
    assert_eq!((d[1].declared_len(), d[1].payload_len()), (1992, 3));
    assert_eq!(
        (d[2].status, c.payload(&d[2])),
        (Status::Whole, &b"three"[..])
    );
    assert_eq!(
        d[2].flaw.unwrap().message(c.name(), d[2].frame),
        format!(
            "lies.pcap: frame 3 at byte {}: IPv4 total length 3000 runs past the end of the \
             frame, which holds 33 bytes of the packet and was not cut by the snap length (a \
             malformed IP header)",
            record(3) + 14 + 2
        )
    );
    assert_eq!((d[3].original_len, d[3].flaw), (3014, None));
    // Every message is one line.
    for flaw in d.iter().filter_map(|d| d.flaw) {
        assert!(!flaw.message(c.name(), 1).contains('\n'));
    }
}
