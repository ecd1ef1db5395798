//! A recorded client/server session with labelled faults: `captures/custom.pcap` and
//! `captures/custom.labels.json` (one JSON line per fault, as `captures/faults.labels.json`).
//!
//! Two clients (10.0.0.21 and 10.0.0.22) play on a server (10.0.0.1, UDP [`PORT`]) for
//! [`TICKS`] ticks at 30 Hz: every tick each client sends an [`Input`] and the server sends each
//! client a [`Snapshot`]; players chat now and then. Six datagrams carry a fault of a kind the
//! inspector must catch:
//!
//! | fault | what was done | status |
//! |---|---|---|
//! | `desync_extra_bit` | a server build whose writer sends one extra bit after `players_alive`, the last header field before the byte-aligned `header` check | desync |
//! | `health_out_of_range` | an entity's health is 255 of `0..=200`, CRC recomputed | error (out_of_range) |
//! | `chat_too_long` | a chat's `text.len` is 127 of `0..=120`, CRC recomputed | error (out_of_range) |
//! | `truncated_datagram` | an input cut to 9 bytes, CRC recomputed | error (past_end) |
//! | `wrong_protocol_id` | an input from a client built with protocol id `SKM0` | error (crc_mismatch) |
//! | `snaplen_truncated` | a snapshot's frame cut by a 60-byte snap length | truncated |
//!
//! Deterministic: the same code writes the same bytes (`cargo test -p custom-protocol --test
//! capture` checks the committed files; `BITLENS_BLESS=1` rewrites them).

use crate::{
    AIM_PITCH, AIM_YAW, Aim, Chat, Entity, EntityKind, Input, MOVE_AXIS, MTU, Movement, POSITION,
    PROTOCOL_ID, Packet, Snapshot, Weapon, buttons,
};
use bitlens::capture::Timestamp;
use bitlens::capture::write::SynthDatagram;
use bitlens::faults::{DesyncedWriter, Fault, Rng};
use bitlens_codec::packet::{self, Packet as _, Protocol, ProtocolId, frame, packet_crc};
use bitlens_codec::{Result, WriteStream};
use std::net::SocketAddr;

pub use crate::PORT;

/// Ticks in the session.
pub const TICKS: u32 = 40;

/// The first capture time: 2026-01-01 00:00:00 UTC.
pub const START_SECS: i64 = 1_767_225_600;

/// One tick at 30 Hz, in nanoseconds.
const TICK_NS: i128 = 33_333_333;

/// The server's address.
pub fn server() -> SocketAddr {
    SocketAddr::from(([10, 0, 0, 1], PORT))
}

/// Client `c`'s address (0 or 1).
pub fn client(c: u8) -> SocketAddr {
    SocketAddr::from(([10, 0, 0, 21 + c], 50021 + u16::from(c)))
}

/// The session's datagrams in capture order, and the labels of its faults.
pub fn session() -> (Vec<SynthDatagram<'static>>, Vec<Fault>) {
    let mut s = Session {
        rng: Rng::new(7),
        out: Vec::new(),
        labels: Vec::new(),
        entities: initial_entities(),
    };
    for tick in 0..TICKS {
        s.tick(tick);
    }
    (s.out, s.labels)
}

struct Session {
    rng: Rng,
    out: Vec<SynthDatagram<'static>>,
    labels: Vec<Fault>,
    entities: Vec<Entity>,
}

/// The arena at the start: two players, a pickup, no rockets.
fn initial_entities() -> Vec<Entity> {
    let at = |x: f32, y: f32| {
        [
            POSITION.decode(POSITION.encode(x)),
            POSITION.decode(POSITION.encode(y)),
            0.0,
        ]
    };
    vec![
        Entity {
            index: 0,
            kind: EntityKind::Player,
            position: at(-20.0, 4.0),
            health: 200,
            firing: false,
        },
        Entity {
            index: 1,
            kind: EntityKind::Player,
            position: at(18.0, -6.0),
            health: 200,
            firing: false,
        },
        Entity {
            index: 40,
            kind: EntityKind::Pickup,
            position: at(0.0, 0.0),
            health: 0,
            firing: false,
        },
    ]
}

impl Session {
    fn time(&self, tick: u32, slot: i128) -> Timestamp {
        Timestamp::from_nanos(
            i128::from(START_SECS) * 1_000_000_000 + i128::from(tick) * TICK_NS + slot * 1_000_000,
        )
    }

    /// The frame number the next datagram gets (1-based; no datagram here is fragmented).
    fn next_frame(&self) -> u64 {
        self.out.len() as u64 + 1
    }

    fn push(&mut self, time: Timestamp, src: SocketAddr, dst: SocketAddr, bytes: Vec<u8>) {
        self.out.push(SynthDatagram::new(time, src, dst, bytes));
    }

    fn label(&mut self, fault: &'static str, expect: &'static str, detail: String) {
        let frame = self.next_frame();
        self.labels.push(Fault {
            frame,
            fault,
            expect,
            detail,
        });
    }

    fn tick(&mut self, tick: u32) {
        for c in 0..2u8 {
            let time = self.time(tick, i128::from(c));
            let mut input = Packet::Input(self.input(tick, c));
            let bytes = match (tick, c) {
                (26, 0) => {
                    let mut b = encode(&mut input, Packet::protocol());
                    b.truncate(9);
                    fix_crc(&mut b);
                    self.label(
                        "truncated_datagram",
                        "error",
                        "an input cut to 9 bytes, CRC recomputed: past_end".into(),
                    );
                    b
                }
                (30, 1) => {
                    let old = Protocol {
                        id: ProtocolId::U32(u32::from_le_bytes(*b"SKM0")),
                        ..Packet::protocol().clone()
                    };
                    self.label(
                        "wrong_protocol_id",
                        "error",
                        "an input from a client built with protocol id SKM0: crc_mismatch".into(),
                    );
                    encode(&mut input, &old)
                }
                _ => encode(&mut input, Packet::protocol()),
            };
            self.push(time, client(c), server(), bytes);
        }
        self.move_entities(tick);
        for c in 0..2u8 {
            let time = self.time(tick, 5 + i128::from(c));
            let mut snap = Packet::Snapshot(self.snapshot(tick, c));
            let datagram = match (tick, c) {
                (8, 0) => {
                    self.label(
                        "desync_extra_bit",
                        "desync",
                        "the writer sends one extra bit after players_alive, before the header \
                         check"
                            .into(),
                    );
                    SynthDatagram::new(time, server(), client(c), encode_desynced(&mut snap))
                }
                (14, 1) => {
                    let mut b = encode(&mut snap, Packet::protocol());
                    set_field(&mut b, "entities[1].health", 255);
                    self.label(
                        "health_out_of_range",
                        "error",
                        "entities[1].health = 255 of 0..=200, CRC recomputed: out_of_range".into(),
                    );
                    SynthDatagram::new(time, server(), client(c), b)
                }
                (34, 0) => {
                    self.label(
                        "snaplen_truncated",
                        "truncated",
                        "frame cut by a 60-byte snap length".into(),
                    );
                    SynthDatagram::new(
                        time,
                        server(),
                        client(c),
                        encode(&mut snap, Packet::protocol()),
                    )
                    .truncated(60)
                }
                _ => SynthDatagram::new(
                    time,
                    server(),
                    client(c),
                    encode(&mut snap, Packet::protocol()),
                ),
            };
            self.out.push(datagram);
        }
        if tick % 9 == 4 {
            let c = (tick / 9 % 2) as u8;
            let lines = [
                "gl hf",
                "rocket on the left",
                "need health",
                "gg wp",
                "rematch?",
            ];
            let text = lines[(tick / 9) as usize % lines.len()];
            let mut chat = Packet::Chat(Chat {
                from: c,
                team_only: tick.is_multiple_of(2),
                text: text.into(),
            });
            let time = self.time(tick, 10);
            let mut b = encode(&mut chat, Packet::protocol());
            if tick == 22 {
                set_field(&mut b, "text.len", 127);
                self.label(
                    "chat_too_long",
                    "error",
                    "text.len = 127 of 0..=120, CRC recomputed: out_of_range".into(),
                );
                self.push(time, client(c), server(), b);
            } else {
                // The server relays a chat it accepted to the other client.
                self.push(time, client(c), server(), b.clone());
                self.push(self.time(tick, 11), server(), client(1 - c), b);
            }
        }
    }

    fn input(&mut self, tick: u32, c: u8) -> Input {
        let r = &mut self.rng;
        let mut b = 0;
        if r.below(3) == 0 {
            b |= buttons::FIRE;
        }
        if r.below(10) == 0 {
            b |= buttons::JUMP;
        }
        if tick % 17 == 3 {
            b |= buttons::RELOAD;
        }
        Input {
            sequence: 100 + tick as u16,
            tick: 5000 + tick,
            buttons: b,
            movement: Movement {
                forward: MOVE_AXIS.decode(r.below(u64::from(MOVE_AXIS.steps()) + 1) as u32),
                strafe: MOVE_AXIS.decode(64),
            },
            aim: Aim {
                yaw: AIM_YAW.decode(r.below(u64::from(AIM_YAW.steps()) + 1) as u32),
                pitch: AIM_PITCH.decode(2880 + r.below(200) as u32),
            },
            weapon: if c == 0 {
                Weapon::Rifle
            } else {
                Weapon::Rocket
            },
        }
    }

    fn move_entities(&mut self, tick: u32) {
        for e in &mut self.entities {
            if e.kind == EntityKind::Player {
                let step =
                    POSITION.decode(POSITION.encode(0.25)) - POSITION.decode(POSITION.encode(0.0));
                e.position[0] = POSITION.decode(POSITION.encode(e.position[0] + step));
                e.firing = self.rng.below(3) == 0;
                if tick.is_multiple_of(5) {
                    e.health = (e.health - 7).max(0);
                }
            }
        }
        // A rocket in flight between ticks 10 and 20.
        self.entities.retain(|e| e.kind != EntityKind::Rocket);
        if (10..20).contains(&tick) {
            let x = -18.0 + (tick - 10) as f32 * 3.5;
            self.entities.insert(
                2,
                Entity {
                    index: 7,
                    kind: EntityKind::Rocket,
                    position: [
                        POSITION.decode(POSITION.encode(x)),
                        POSITION.decode(POSITION.encode(4.0)),
                        POSITION.decode(POSITION.encode(1.5)),
                    ],
                    health: 1,
                    firing: false,
                },
            );
        }
    }

    fn snapshot(&self, tick: u32, c: u8) -> Snapshot {
        Snapshot {
            tick: 5000 + tick,
            ack_sequence: 100 + tick as u16,
            players_alive: 2,
            // Each client gets every entity on even ticks, the players only on odd ones.
            entities: self
                .entities
                .iter()
                .filter(|e| tick.is_multiple_of(2) || e.kind == EntityKind::Player || c == 1)
                .cloned()
                .collect(),
        }
    }
}

/// Encodes `packet` framed with `protocol` (the session's own, or an old build's).
fn encode(packet: &mut Packet, protocol: &Protocol) -> Vec<u8> {
    try_encode(packet, protocol).expect("the session's packets are valid")
}

fn try_encode(packet: &mut Packet, protocol: &Protocol) -> Result<Vec<u8>> {
    let mut buf = vec![0u8; protocol.mtu];
    let mut s = WriteStream::new(&mut buf);
    let mut t = packet.packet_type();
    frame(&mut s, protocol, &mut t, |s, _| packet.serialize_body(s))?;
    let n = s.finish();
    buf.truncate(n);
    Ok(buf)
}

/// Encodes `packet` with a writer that adds one bit after `players_alive`.
fn encode_desynced(packet: &mut Packet) -> Vec<u8> {
    let mut buf = vec![0u8; MTU];
    let mut s = DesyncedWriter::new(&mut buf, "players_alive");
    let mut t = packet.packet_type();
    frame(&mut s, Packet::protocol(), &mut t, |s, _| {
        packet.serialize_body(s)
    })
    .expect("the session's packets are valid");
    let n = s.finish();
    buf.truncate(n);
    buf
}

fn fix_crc(bytes: &mut [u8]) {
    let crc = packet_crc(PROTOCOL_ID, bytes);
    bytes[..4].copy_from_slice(&crc.to_le_bytes());
}

/// Overwrites the field at trace path `path` of a valid packet with `value`, and fixes the CRC.
fn set_field(bytes: &mut [u8], path: &str, value: u64) {
    let (_, trace) = packet::trace_packet::<Packet>(bytes);
    let f = trace
        .get(path)
        .unwrap_or_else(|| panic!("the packet has no field {path}"));
    for k in 0..f.bits {
        let b = f.bit + k;
        if (value >> k) & 1 == 1 {
            bytes[b / 8] |= 1 << (b % 8);
        } else {
            bytes[b / 8] &= !(1 << (b % 8));
        }
    }
    fix_crc(bytes);
}

/// The fault labels as the JSON lines of `captures/custom.labels.json`.
pub fn labels_json(labels: &[Fault]) -> String {
    labels
        .iter()
        .map(|l| serde_json::to_string(l).expect("a label serializes") + "\n")
        .collect()
}
