//! The harness of the `capture_ingest` fuzz target, which the corpus replay and the capture
//! tests run too (feature `fuzzing`).

use super::{Capture, CaptureError, LinkType, read, rewrite};

/// Runs arbitrary bytes through the capture reader: as a file, as the records of a pcap, as the
/// blocks of a pcapng and as the frame of a pcap of each supported link type, touching every
/// payload; every capture read is written back with the capture writer and read again to the
/// same datagrams (in pcap, pcapng or SLL2 pcap, as the first byte picks). Must never panic; the
/// fuzz target and the regression tests call it.
#[doc(hidden)]
pub fn fuzz_ingest(data: &[u8]) {
    let selector = data.first().copied().unwrap_or(0);
    let format = rewrite::FORMATS[usize::from(selector >> 5) % rewrite::FORMATS.len()];
    let touch = |result: Result<Capture, CaptureError>| match result {
        Ok(capture) => {
            rewrite::check_rewrite(&capture, format);
            let mut sum = 0u64;
            for d in capture.datagrams() {
                sum = capture
                    .payload(d)
                    .iter()
                    .fold(sum, |s, &b| s.wrapping_add(u64::from(b)));
                sum = sum.wrapping_add(d.time.to_string().len() as u64);
                if let Some(flaw) = d.flaw {
                    sum = sum.wrapping_add(flaw.message(capture.name(), d.frame).len() as u64);
                }
            }
            if let Some(damage) = capture.damage() {
                sum = sum.wrapping_add(damage.to_string().len() as u64);
            }
            std::hint::black_box(sum);
        }
        Err(e) => {
            std::hint::black_box(e.to_string());
        }
    };
    const LINKS: [LinkType; 8] = [
        LinkType::ETHERNET,
        LinkType::LINUX_SLL2,
        LinkType::LINUX_SLL,
        LinkType::NULL,
        LinkType::LOOP,
        LinkType::RAW,
        LinkType::IPV4,
        LinkType::IPV6,
    ];
    let link = LINKS
        .get(usize::from(selector) % LINKS.len())
        .copied()
        .unwrap_or(LinkType::ETHERNET);
    let nanos = selector & 0x80 != 0;

    touch(Capture::from_bytes("fuzz", data.to_vec()));
    let as_pcap = [read::pcap_header(link, nanos).as_slice(), data].concat();
    // The streamed walk (check's) must find exactly what the whole-file walk finds, with a
    // window small enough that records straddle windows.
    let whole = Capture::from_bytes("fuzz.pcap", as_pcap.clone());
    let mut streamed = Vec::new();
    let mut input = std::io::Cursor::new(&as_pcap[..]);
    let summary = read::stream_pcap("fuzz.pcap", &mut input, 40, &mut |_, ds, window| {
        streamed.extend(
            ds.iter()
                .map(|d| (d.frame, d.flaw, d.payload(&window).to_vec())),
        );
        (ds, window)
    });
    match (&whole, summary) {
        (Ok(c), Ok(Some(s))) => {
            let want: Vec<_> = c
                .datagrams()
                .iter()
                .map(|d| (d.frame, d.flaw, c.payload(d).to_vec()))
                .collect();
            assert_eq!(streamed, want, "streamed datagrams differ");
            assert_eq!(s.frames, c.frames());
            assert_eq!(
                s.damage.map(|d| d.to_string()),
                c.damage().map(ToString::to_string)
            );
        }
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
        (a, b) => panic!("whole {:?} but streamed {:?}", a.as_ref().err(), b.err()),
    }
    touch(whole);
    touch(Capture::from_bytes(
        "fuzz.pcapng",
        [read::pcapng_prefix(link).as_slice(), data].concat(),
    ));
    for link in LINKS {
        touch(Capture::from_bytes(
            "fuzz-frame.pcap",
            read::single_frame_pcap(link, data),
        ));
    }
}
