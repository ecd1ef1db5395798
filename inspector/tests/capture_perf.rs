//! Indexing speed and memory on a large capture (ignored by default: run with `--ignored`).

use bitlens::capture::Capture;
use bitlens::capture::Timestamp;
use bitlens::capture::write::{SynthDatagram, WriteFormat, to_bytes};

#[test]
#[ignore = "slow in debug builds; run with --release -- --ignored"]
fn one_million_datagrams_index_fast() {
    let payload = [0x5Au8; 40];
    let src = "10.0.0.1:5000".parse().unwrap();
    let dst = "10.0.0.2:40000".parse().unwrap();
    let out: Vec<SynthDatagram<'_>> = (0..1_000_000i128)
        .map(|i| {
            SynthDatagram::new(
                Timestamp::from_nanos(1_700_000_000_000_000_000 + i * 1000),
                src,
                dst,
                &payload[..],
            )
        })
        .collect();
    let bytes = to_bytes(WriteFormat::PcapEthernet { nanos: true }, &out).unwrap();
    drop(out);
    let size = bytes.len();
    let start = std::time::Instant::now();
    let c = Capture::from_bytes("big.pcap", bytes).unwrap();
    let took = start.elapsed();
    let index_bytes = c.datagrams().len() * std::mem::size_of_val(&c.datagrams()[0]);
    eprintln!(
        "{} datagrams, file {size} B, index {index_bytes} B, {took:?}",
        c.datagrams().len()
    );
    assert_eq!(c.datagrams().len(), 1_000_000);
    assert!(index_bytes + size < 3 * size);
}
