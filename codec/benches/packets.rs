//! Demo packets near the MTU: µs per packet written, read and traced (issue 2's speed check and
//! issue 8's group 3). `cargo bench -p bitlens-codec --bench packets`

use bitlens_codec::packet::{
    count_packet, measure_packet, read_packet, trace_packet, write_packet,
};
use bitlens_testkit::demo::{DemoPacket, MTU, PacketB, RigidBody, SceneObject, SceneUpdate};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

/// Packets that fill most of the MTU: a scene update with as many moving bodies as fit, and a
/// full PacketB.
fn packets() -> Vec<(&'static str, DemoPacket)> {
    let body = match &bitlens_testkit::demo::samples()[3] {
        DemoPacket::RigidBody(b) => b.clone(),
        _ => RigidBody::default(),
    };
    let mut scene = SceneUpdate {
        sequence: 9,
        objects: Vec::new(),
    };
    for i in 0.. {
        scene.objects.push(SceneObject {
            index: (i * 7) as u16,
            body: body.clone(),
        });
        let mut p = DemoPacket::SceneUpdate(scene.clone());
        if count_packet(&mut p).unwrap() > MTU * 8 {
            scene.objects.pop();
            break;
        }
    }
    let b = PacketB {
        elements: (0..256).map(|i| i * 7919 - 1_000_000).collect(),
    };
    vec![
        ("scene_update", DemoPacket::SceneUpdate(scene)),
        ("packet_b_256", DemoPacket::B(b)),
    ]
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("demo_packets_mtu");
    for (name, packet) in packets() {
        let mut buf = [0u8; MTU];
        let mut p = packet.clone();
        let n = write_packet(&mut p, &mut buf).unwrap();
        let bytes = buf[..n].to_vec();
        g.throughput(Throughput::Bytes(n as u64));
        g.bench_function(BenchmarkId::new("write", format!("{name}_{n}B")), |b| {
            let mut p = packet.clone();
            let mut out = [0u8; MTU];
            b.iter(|| black_box(write_packet(&mut p, &mut out).unwrap()))
        });
        g.bench_function(BenchmarkId::new("read", format!("{name}_{n}B")), |b| {
            b.iter(|| black_box(read_packet::<DemoPacket>(black_box(&bytes)).unwrap()))
        });
        g.bench_function(BenchmarkId::new("trace", format!("{name}_{n}B")), |b| {
            b.iter(|| black_box(trace_packet::<DemoPacket>(black_box(&bytes)).1.fields.len()))
        });
        g.bench_function(BenchmarkId::new("measure", format!("{name}_{n}B")), |b| {
            let mut p = packet.clone();
            b.iter(|| black_box(measure_packet(&mut p).unwrap()))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
