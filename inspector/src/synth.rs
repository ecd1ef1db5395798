//! Synthetic demo traffic for `bitlens synth`: several clients talking to a server at 60 Hz with
//! every packet type, and, on request, labelled faults of every kind the inspector must catch.
//!
//! Deterministic: the same options give the same bytes.

use crate::capture::Timestamp;
use crate::capture::write::SynthDatagram;
pub use crate::faults::{DesyncedWriter, Fault, Rng};
use arbitrary::{Arbitrary, Unstructured};
use bitlens_batch::{BatchWriter, UpdateStage};
use bitlens_codec::dissect::Status;
use bitlens_codec::packet::{Packet, Protocol, ProtocolId, frame, packet_crc};
use bitlens_codec::{Error, Result, WriteStream};
use bitlens_demo::batch_demo::{self as batch_demo, DemoMessage};
use bitlens_demo::demo::{self, DemoPacket, PacketB, RoboCat};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

/// The first capture time: 2023-11-14 22:13:20 UTC.
pub const START_SECS: i64 = 1_700_000_000;
const TICK_NS: i128 = 16_666_667;
const CLIENTS: u8 = 4;

/// Encodes a demo packet framed with `protocol` (possibly with another protocol id).
///
/// # Errors
/// When a value is out of range or the packet exceeds the MTU.
pub fn encode(packet: &mut DemoPacket, protocol: &Protocol) -> Result<Vec<u8>> {
    let mut buf = vec![0u8; protocol.mtu];
    let mut s = WriteStream::new(&mut buf);
    let mut t = packet.packet_type();
    frame(&mut s, protocol, &mut t, |s, _| packet.serialize_body(s))?;
    let n = s.finish();
    buf.truncate(n);
    Ok(buf)
}

/// Encodes `packet` with a [`DesyncedWriter`] that adds a bit after the field named `after`.
fn encode_desynced(packet: &mut DemoPacket, after: &'static str) -> Result<Vec<u8>, Error> {
    let mut buf = vec![0u8; demo::MTU];
    let mut s = DesyncedWriter::new(&mut buf, after);
    let mut t = packet.packet_type();
    frame(&mut s, &demo::PROTOCOL, &mut t, |s, _| {
        packet.serialize_body(s)
    })?;
    let n = s.finish();
    buf.truncate(n);
    Ok(buf)
}

fn fix_crc(bytes: &mut [u8]) {
    if bytes.len() >= 4 {
        let crc = packet_crc(demo::PROTOCOL_ID, bytes);
        bytes[..4].copy_from_slice(&crc.to_le_bytes());
    }
}

fn set_bits(bytes: &mut [u8], bit: usize, width: usize, value: u64) {
    for k in 0..width {
        let b = bit + k;
        if let Some(byte) = bytes.get_mut(b / 8) {
            if (value >> k) & 1 == 1 {
                *byte |= 1 << (b % 8);
            } else {
                *byte &= !(1 << (b % 8));
            }
        }
    }
}

/// Picks a packet for a sender: clients send small state packets, the server sends scene
/// updates and RoboCats. Every type appears.
fn random_packet(rng: &mut Rng, from_server: bool) -> DemoPacket {
    let mut noise = [0u8; 768];
    loop {
        rng.fill(&mut noise);
        let mut u = Unstructured::new(&noise);
        let roll = rng.below(100);
        let p = if from_server {
            match roll {
                0..=49 => u.arbitrary().map(DemoPacket::SceneUpdate),
                50..=89 => u.arbitrary().map(DemoPacket::RoboCat),
                _ => u.arbitrary().map(DemoPacket::B),
            }
        } else {
            match roll {
                0..=59 => u.arbitrary().map(DemoPacket::RigidBody),
                60..=79 => u.arbitrary().map(DemoPacket::A),
                _ => u.arbitrary().map(DemoPacket::C),
            }
        };
        let p = p.ok().filter(|p| {
            let mut p = p.clone();
            bitlens_codec::packet::count_packet(&mut p).is_ok_and(|bits| bits <= demo::MTU * 8)
        });
        if let Some(p) = p {
            return p;
        }
    }
}

/// Addresses of the server and the clients.
fn server() -> SocketAddr {
    SocketAddr::new(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)), demo::PORT)
}
fn client(i: u8) -> SocketAddr {
    SocketAddr::new(
        IpAddr::V4(Ipv4Addr::new(10, 0, 0, 11 + i)),
        50001 + u16::from(i),
    )
}

/// The batch port's addresses: the same hosts, the demo batch port on the server.
fn batch_server() -> SocketAddr {
    SocketAddr::new(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)), batch_demo::PORT)
}
fn batch_client(i: u8) -> SocketAddr {
    SocketAddr::new(
        IpAddr::V4(Ipv4Addr::new(10, 0, 0, 11 + i)),
        51001 + u16::from(i),
    )
}

/// A batch of 1 to 6 random demo messages at random update stages.
fn random_batch(rng: &mut Rng) -> Vec<u8> {
    let mut noise = [0u8; 1024];
    rng.fill(&mut noise);
    let mut u = Unstructured::new(&noise);
    let mut buf = vec![0u8; batch_demo::MTU];
    let Ok(mut w) = BatchWriter::new(&mut buf) else {
        return Vec::new();
    };
    let n = 1 + rng.below(6);
    for _ in 0..n {
        let Ok(mut m) = DemoMessage::arbitrary(&mut u) else {
            break;
        };
        let stage = UpdateStage(rng.below(7) as u8);
        if !matches!(m.push(&mut w, stage), Ok(true)) {
            break;
        }
    }
    let len = w.finish();
    buf.truncate(len);
    buf
}

/// The fault kinds, in the order `--faults` cycles through them.
pub const FAULT_KINDS: [&str; 10] = [
    "desync_extra_bit",
    "truncated_datagram",
    "bit_flip",
    "count_out_of_range",
    "health_out_of_range",
    "wrong_protocol_id",
    "corrupt_crc",
    "snaplen_truncated",
    "ip_fragment",
    "batch_length_past_end",
];

/// Generates `packets` datagrams (and with `faults`, one fault in every 25, cycling through
/// [`FAULT_KINDS`]). Returns the datagrams and the fault labels with their frame numbers.
///
/// Holds them all: for a capture file of any size, write [`datagrams`] as they come.
pub fn generate(
    packets: usize,
    seed: u64,
    faults: bool,
) -> (Vec<SynthDatagram<'static>>, Vec<Fault>) {
    let mut out = Vec::with_capacity(packets);
    let mut labels = Vec::new();
    for (d, fault) in datagrams(packets, seed, faults) {
        out.push(d);
        labels.extend(fault);
    }
    (out, labels)
}

/// The datagrams of [`generate`] one at a time, each with its fault label if it has one: the
/// same datagrams in the same order, made as they are asked for.
pub fn datagrams(packets: usize, seed: u64, faults: bool) -> Datagrams {
    Datagrams {
        rng: Rng::new(seed),
        next: 0,
        packets,
        faults,
        frame_no: 1,
    }
}

/// The iterator of [`datagrams`].
#[derive(Debug, Clone)]
pub struct Datagrams {
    rng: Rng,
    /// Index of the next datagram.
    next: usize,
    packets: usize,
    faults: bool,
    /// Frame number of the next datagram's first frame.
    frame_no: u64,
}

impl Iterator for Datagrams {
    type Item = (SynthDatagram<'static>, Option<Fault>);

    fn next(&mut self) -> Option<Self::Item> {
        let i = self.next;
        if i >= self.packets {
            return None;
        }
        self.next += 1;
        let rng = &mut self.rng;
        // Per tick: each client sends a packet, the server answers each, and two message batches
        // travel on the batch port (server -> client, client -> server).
        let per_tick = i128::from(CLIENTS) * 2 + 2;
        let tick = i as i128 / per_tick;
        let slot = i as i128 % per_tick;
        let nanos = i128::from(START_SECS) * 1_000_000_000
            + tick * TICK_NS
            + slot * (TICK_NS / per_tick)
            + i128::from(rng.below(1000) as u16);
        let time = Timestamp::from_nanos(nanos);
        let c = (slot as u8) % CLIENTS;
        let batch_slot = slot >= i128::from(CLIENTS) * 2;
        let from_server = slot >= i128::from(CLIENTS) && slot != per_tick - 1;
        let fault_kind =
            (self.faults && i % 25 == 12).then(|| FAULT_KINDS[(i / 25) % FAULT_KINDS.len()]);
        let on_batch_port = match fault_kind {
            Some(kind) => kind == "batch_length_past_end",
            None => batch_slot,
        };
        let (src, dst) = match (on_batch_port, from_server) {
            (true, true) => (batch_server(), batch_client((tick % 4) as u8)),
            (true, false) => (batch_client((tick % 4) as u8), batch_server()),
            (false, true) => (server(), client(c)),
            (false, false) => (client(c), server()),
        };
        if let Some(kind) = fault_kind {
            let (bytes, expect, detail, snap, frag) = make_fault(kind, rng);
            let mut d = SynthDatagram::new(time, src, dst, bytes);
            if let Some(s) = snap {
                d = d.truncated(s);
            }
            let mut frames = 1;
            if let Some(f) = frag {
                let size8 = u64::from(f / 8 * 8).max(8);
                frames = (8 + d.payload.len() as u64).div_ceil(size8);
                d = d.fragmented(f);
            }
            let label = Fault {
                frame: self.frame_no,
                fault: kind,
                expect: expect.name(),
                detail,
            };
            self.frame_no += frames;
            return Some((d, Some(label)));
        }
        self.frame_no += 1;
        let d = if on_batch_port {
            SynthDatagram::new(time, src, dst, random_batch(rng))
        } else {
            let mut packet = random_packet(rng, from_server);
            let bytes = encode(&mut packet, &demo::PROTOCOL).unwrap_or_default();
            SynthDatagram::new(time, src, dst, bytes)
        };
        Some((d, None))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.packets - self.next;
        (left, Some(left))
    }
}

type FaultBytes = (Vec<u8>, Status, String, Option<u32>, Option<u16>);

fn robocat(rng: &mut Rng) -> RoboCat {
    let mut noise = [0u8; 256];
    rng.fill(&mut noise);
    RoboCat::arbitrary(&mut Unstructured::new(&noise)).unwrap_or_default()
}

fn make_fault(kind: &'static str, rng: &mut Rng) -> FaultBytes {
    let valid = |rng: &mut Rng| {
        let mut p = DemoPacket::RoboCat(robocat(rng));
        encode(&mut p, &demo::PROTOCOL).unwrap_or_default()
    };
    match kind {
        "desync_extra_bit" => {
            let mut p = DemoPacket::RoboCat(robocat(rng));
            let bytes = encode_desynced(&mut p, "c").unwrap_or_default();
            let detail =
                "the writer sends one extra bit after rotation.c (the RoboCat's last field)";
            (bytes, Status::Desync, detail.into(), None, None)
        }
        "truncated_datagram" => {
            let mut bytes = valid(rng);
            let keep = bytes.len() / 2;
            bytes.truncate(keep.max(5));
            fix_crc(&mut bytes);
            (
                bytes,
                Status::Error,
                format!("cut to {} bytes, CRC recomputed: past_end", keep.max(5)),
                None,
                None,
            )
        }
        "bit_flip" => {
            let mut bytes = valid(rng);
            let bit = 32 + rng.below((bytes.len() as u64 - 4) * 8) as usize;
            bytes[bit / 8] ^= 1 << (bit % 8);
            (
                bytes,
                Status::Error,
                format!("bit {bit} flipped: crc_mismatch"),
                None,
                None,
            )
        }
        "count_out_of_range" => {
            let mut p = DemoPacket::B(PacketB {
                elements: vec![1, 2, 3],
            });
            let mut bytes = encode(&mut p, &demo::PROTOCOL).unwrap_or_default();
            // elements.len sits after the CRC (32 bits) and the type (3 bits): 9 bits of 0..=256.
            set_bits(&mut bytes, 35, 9, 511);
            fix_crc(&mut bytes);
            (
                bytes,
                Status::Error,
                "elements.len = 511 of 0..=256, CRC recomputed: out_of_range".into(),
                None,
                None,
            )
        }
        "health_out_of_range" => {
            let mut bytes = valid(rng);
            set_bits(&mut bytes, 35, 7, 127);
            fix_crc(&mut bytes);
            (
                bytes,
                Status::Error,
                "health = 127 of 0..=100, CRC recomputed: out_of_range".into(),
                None,
                None,
            )
        }
        "wrong_protocol_id" => {
            let mut other = demo::PROTOCOL.clone();
            other.id = ProtocolId::U32(0xDEAD_BEEF);
            let mut p = DemoPacket::RoboCat(robocat(rng));
            let bytes = encode(&mut p, &other).unwrap_or_default();
            (
                bytes,
                Status::Error,
                "written with protocol id 0xdeadbeef: crc_mismatch".into(),
                None,
                None,
            )
        }
        "corrupt_crc" => {
            let mut bytes = valid(rng);
            bytes[0] ^= 0x5A;
            (
                bytes,
                Status::Error,
                "CRC byte 0 corrupted: crc_mismatch".into(),
                None,
                None,
            )
        }
        "snaplen_truncated" => {
            let bytes = valid(rng);
            // Ethernet 14 + IPv4 20 + UDP 8 + 10 payload bytes.
            (
                bytes,
                Status::Truncated,
                "frame cut by a 52-byte snap length".into(),
                Some(52),
                None,
            )
        }
        "batch_length_past_end" => {
            let mut bytes = random_batch(rng);
            // The first message's body length (bytes 4..6) claims more than the batch holds.
            if bytes.len() >= 6 {
                bytes[4..6].copy_from_slice(&0xFFF0u16.to_le_bytes());
            }
            let detail = "first message claims 65520 body bytes: the batch iterator stops there";
            (bytes, Status::Error, detail.into(), None, None)
        }
        _ => {
            let mut p = DemoPacket::B(PacketB {
                elements: (0..40).collect(),
            });
            let bytes = encode(&mut p, &demo::PROTOCOL).unwrap_or_default();
            (
                bytes,
                Status::Fragment,
                "sent as IPv4 fragments of 64 bytes".into(),
                None,
                Some(64),
            )
        }
    }
}
