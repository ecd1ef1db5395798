//! The demo protocol's messages, sent in batches on UDP port [`PORT`]: the objects of
//! [`crate::demo`] as seed 002 messages, used by tests, fuzzing, benchmarks and the captures.
//!
//! | type | message | body |
//! |---|---|---|
//! | 1 | [`SpawnRoboCat`] | network id, stats, home base id, name, mice, location, rotation |
//! | 2 | [`MoveRigidBody`] | network id, a [`RigidBody`] as raw floats, velocities unless at rest |
//! | 3 | [`ChatText`] | player, up to [`MAX_CHAT`] bytes of UTF-8 |
//! | 4 | [`Ping`] | a [`PingStamp`] (plain old data, one copy) |
//! | 5 | [`Pong`] | the ping's [`PingStamp`], the time it was handled |
//! | 6 | [`Despawn`] | network id |
//!
//! Type 0 and types above 6 are unknown: readers skip them by their length.
//!
//! Network ids (the object a message is about, and references such as a cat's home base) lie in
//! `1..=`[`MAX_NETWORK_ID`], the message set's declared range and the one [`DemoWorld`]'s linking
//! context is built with: an id above it is `out_of_range`, on read and on write
//! (`bitlens_batch::link`).

use crate::demo::{LOCATION_LIMIT, MAX_MICE, MAX_MOUSE, MAX_NAME, RigidBody, RoboCat};
use arbitrary::{Arbitrary, Unstructured};
use bitlens_batch::dissect::{BatchDissector, dissect_batch};
use bitlens_batch::message::{BatchWriter, Message, MessageBody, NetworkContext, UpdateStage};
use bitlens_batch::stream::{InlineStr, InlineVec};
use bitlens_batch::{BatchStruct, MessageEnum, MessagesOf};
use bitlens_codec::dissect::Dissection;
use bitlens_codec::link::{self, LinkingContext, NetworkId};

/// The UDP port of batches in the demo captures.
pub const PORT: u16 = 40001;

/// The MTU of demo batches: the demo protocol's.
pub const MTU: usize = crate::demo::MTU;

/// Longest chat text, in bytes.
pub const MAX_CHAT: usize = 256;

/// The largest network id of the demo message set (the same as the bit-packed demo's): ids on
/// the wire lie in `0..=MAX_NETWORK_ID`, 0 for "no object".
pub const MAX_NETWORK_ID: u32 = crate::demo::MAX_NETWORK_ID;

/// Name of a demo message type, `None` for unknown types.
pub fn message_name(message_type: u8) -> Option<&'static str> {
    DemoMessage::message_name(message_type)
}

const ID_ONE: NetworkId = match NetworkId::new(1) {
    Some(id) => id,
    None => unreachable!(),
};

/// The game state demo messages act on: counts, the last values, and the linking context of
/// spawned cats (network id → local slot).
#[derive(Debug, Clone)]
pub struct DemoWorld {
    /// Messages handled, by type.
    pub handled: [u64; 7],
    /// Spawned objects.
    pub links: LinkingContext<u32>,
    /// Spawns whose home base did not resolve when they arrived.
    pub unresolved_home_bases: u64,
    /// The last body moved.
    pub last_move: Option<(NetworkId, RigidBody)>,
    /// The last chat line.
    pub last_chat: InlineStr<MAX_CHAT>,
    /// A pong owed for the last ping (the game loop sends it).
    pub pong_due: Option<Pong>,
    /// Round-trip time of the last pong, in milliseconds.
    pub rtt_ms: Option<u32>,
    /// The handler's clock, in milliseconds.
    pub now_ms: u32,
}

impl Default for DemoWorld {
    fn default() -> Self {
        DemoWorld {
            handled: [0; 7],
            links: LinkingContext::new(MAX_NETWORK_ID),
            unresolved_home_bases: 0,
            last_move: None,
            last_chat: InlineStr::new(),
            pong_due: None,
            rtt_ms: None,
            now_ms: 0,
        }
    }
}

/// Spawns a [`RoboCat`] (seed 004) under a network id; its home base is a linked reference.
#[derive(Debug, Clone, Copy, PartialEq, BatchStruct)]
#[batch(message_type = 1)]
pub struct SpawnRoboCat {
    /// The cat's network id.
    #[batch(max_id = MAX_NETWORK_ID)]
    pub network_id: NetworkId,
    /// Health, `0..=100`.
    #[batch(range = 0..=100)]
    pub health: u8,
    /// Meows so far, `0..=1_000_000`.
    #[batch(packed, range = 0..=1_000_000)]
    pub meow_count: u32,
    /// Network id of its home base, resolved by the receiver's linking context.
    #[batch(max_id = MAX_NETWORK_ID)]
    pub home_base: Option<NetworkId>,
    /// Name.
    pub name: InlineStr<MAX_NAME>,
    /// Mice tracked, at most [`MAX_MICE`], each `0..=MAX_MOUSE`.
    #[batch(element(range = 0..=MAX_MOUSE))]
    pub mice: InlineVec<u16, MAX_MICE>,
    /// Location in tenths of a unit, each within `±LOCATION_LIMIT` (one copy of 12 bytes).
    #[batch(abs_max = LOCATION_LIMIT)]
    pub location: [i32; 3],
    /// Rotation `[x, y, z, w]` as raw floats (one copy of 16 bytes).
    pub rotation: [f32; 4],
}

impl Default for SpawnRoboCat {
    fn default() -> Self {
        SpawnRoboCat {
            network_id: ID_ONE,
            health: 0,
            meow_count: 0,
            home_base: None,
            name: InlineStr::new(),
            mice: InlineVec::new(),
            location: [0; 3],
            rotation: [0.0, 0.0, 0.0, 1.0],
        }
    }
}

impl SpawnRoboCat {
    /// The spawn message of `cat` under `network_id`; `None` when a value is out of range.
    pub fn from_cat(network_id: NetworkId, cat: &RoboCat) -> Option<Self> {
        let mut mice = InlineVec::new();
        for &mouse in &cat.mice {
            let mouse = u16::try_from(mouse)
                .ok()
                .filter(|&x| i32::from(x) <= MAX_MOUSE)?;
            mice.try_push(mouse).ok()?;
        }
        let m = SpawnRoboCat {
            network_id,
            health: u8::try_from(cat.health).ok().filter(|h| *h <= 100)?,
            meow_count: u32::try_from(cat.meow_count).ok()?,
            home_base: cat.home_base,
            name: InlineStr::try_from_str(&cat.name)?,
            mice,
            location: cat.location,
            rotation: cat.rotation,
        };
        let in_range = m.meow_count <= 1_000_000
            && m.location
                .iter()
                .all(|l| l.unsigned_abs() <= LOCATION_LIMIT as u32);
        in_range.then_some(m)
    }

    /// The cat it spawns.
    pub fn to_cat(&self) -> RoboCat {
        RoboCat {
            health: i32::from(self.health),
            meow_count: self.meow_count as i32,
            home_base: self.home_base,
            name: self.name.as_str().to_owned(),
            mice: self.mice.iter().map(|&m| i32::from(m)).collect(),
            location: self.location,
            rotation: self.rotation,
        }
    }
}

impl Message for SpawnRoboCat {
    type Handler = DemoWorld;

    fn handle(&mut self, _: &NetworkContext, world: &mut DemoWorld) {
        world.handled[usize::from(Self::TYPE)] += 1;
        // The id was read as 1..=MAX_NETWORK_ID, the context's own range: never refused.
        let _ = world.links.insert(self.network_id, self.network_id.get());
        if let link::Reference::Unresolved(_) = world.links.resolve(self.home_base) {
            world.unresolved_home_bases += 1;
        }
    }
}

/// Moves a rigid body (seed 000's [`RigidBody`], as the batch struct `RigidBodyState`: raw
/// floats, velocities unless at rest) of a spawned object.
#[derive(Debug, Clone, PartialEq, BatchStruct)]
#[batch(message_type = 2)]
pub struct MoveRigidBody {
    /// The object's network id.
    #[batch(max_id = MAX_NETWORK_ID)]
    pub network_id: NetworkId,
    /// Its new state, as raw floats.
    pub body: RigidBody,
}

impl Default for MoveRigidBody {
    fn default() -> Self {
        MoveRigidBody {
            network_id: ID_ONE,
            body: RigidBody::default(),
        }
    }
}

impl Message for MoveRigidBody {
    type Handler = DemoWorld;

    fn handle(&mut self, _: &NetworkContext, world: &mut DemoWorld) {
        world.handled[usize::from(Self::TYPE)] += 1;
        world.last_move = Some((self.network_id, self.body.clone()));
    }
}

/// A line of chat.
#[derive(Debug, Clone, Copy, PartialEq, Default, BatchStruct)]
#[batch(message_type = 3)]
pub struct ChatText {
    /// Who says it.
    #[batch(packed)]
    pub player: u32,
    /// What they say.
    pub text: InlineStr<MAX_CHAT>,
}

impl Message for ChatText {
    type Handler = DemoWorld;

    fn handle(&mut self, _: &NetworkContext, world: &mut DemoWorld) {
        world.handled[usize::from(Self::TYPE)] += 1;
        world.last_chat = self.text;
    }
}

/// A ping's stamp: plain old data, sent in one copy of its 16 bytes (seed 002's `WriteValue`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, bytemuck::Pod, bytemuck::Zeroable, BatchStruct,
)]
#[repr(C)]
pub struct PingStamp {
    /// Ping sequence number.
    pub sequence: u32,
    /// Sender's clock when sent, in milliseconds.
    pub sent_ms: u32,
    /// Sender's frame number.
    pub frame: u64,
}

impl<'a> Arbitrary<'a> for PingStamp {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(PingStamp {
            sequence: u.arbitrary()?,
            sent_ms: u.arbitrary()?,
            frame: u.arbitrary()?,
        })
    }
}

/// A ping: the receiver owes a [`Pong`] with the same stamp.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, BatchStruct)]
#[batch(message_type = 4)]
pub struct Ping {
    /// The stamp.
    #[batch(pod)]
    pub stamp: PingStamp,
}

impl Message for Ping {
    type Handler = DemoWorld;

    fn handle(&mut self, _: &NetworkContext, world: &mut DemoWorld) {
        world.handled[usize::from(Self::TYPE)] += 1;
        world.pong_due = Some(Pong {
            stamp: self.stamp,
            handled_ms: world.now_ms,
        });
    }
}

/// The answer to a [`Ping`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, BatchStruct)]
#[batch(message_type = 5)]
pub struct Pong {
    /// The ping's stamp.
    #[batch(pod)]
    pub stamp: PingStamp,
    /// The answering side's clock when it handled the ping, in milliseconds.
    pub handled_ms: u32,
}

impl Message for Pong {
    type Handler = DemoWorld;

    fn handle(&mut self, _: &NetworkContext, world: &mut DemoWorld) {
        world.handled[usize::from(Self::TYPE)] += 1;
        world.rtt_ms = Some(world.now_ms.wrapping_sub(self.stamp.sent_ms));
    }
}

/// Removes a spawned object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, BatchStruct)]
#[batch(message_type = 6)]
pub struct Despawn {
    /// The object's network id.
    #[batch(max_id = MAX_NETWORK_ID)]
    pub network_id: NetworkId,
}

impl Default for Despawn {
    fn default() -> Self {
        Despawn { network_id: ID_ONE }
    }
}

impl Message for Despawn {
    type Handler = DemoWorld;

    fn handle(&mut self, _: &NetworkContext, world: &mut DemoWorld) {
        world.handled[usize::from(Self::TYPE)] += 1;
        world.links.remove_id(self.network_id);
    }
}

/// Any demo message: the demo's message set. `#[derive(MessageEnum)]` writes its decode, push,
/// encode and `[batch]` schema, [`DemoMessage::send`], and (`handler = DemoWorld`) the
/// [`Dispatch`](bitlens_batch::Dispatch) of [`DemoWorld`]: each message decoded and handled,
/// unknown types skipped by their length.
#[derive(Debug, Clone, PartialEq, MessageEnum)]
#[batch(handler = DemoWorld)]
pub enum DemoMessage {
    /// Type 1.
    Spawn(SpawnRoboCat),
    /// Type 2.
    Move(MoveRigidBody),
    /// Type 3.
    Chat(ChatText),
    /// Type 4.
    Ping(Ping),
    /// Type 5.
    Pong(Pong),
    /// Type 6.
    Despawn(Despawn),
}

impl<'a> Arbitrary<'a> for DemoMessage {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        let id = |u: &mut Unstructured<'a>| -> arbitrary::Result<NetworkId> {
            Ok(NetworkId::new(u.int_in_range(1..=MAX_NETWORK_ID)?).unwrap_or(ID_ONE))
        };
        Ok(match u.int_in_range(1..=6u8)? {
            1 => {
                let mut m = SpawnRoboCat {
                    network_id: id(u)?,
                    health: u.int_in_range(0..=100)?,
                    meow_count: u.int_in_range(0..=1_000_000)?,
                    home_base: NetworkId::new(u.int_in_range(0..=MAX_NETWORK_ID)?),
                    name: u.arbitrary()?,
                    ..SpawnRoboCat::default()
                };
                for _ in 0..u.int_in_range(0..=MAX_MICE)? {
                    let _ = m.mice.try_push(u.int_in_range(0..=MAX_MOUSE as u16)?);
                }
                for l in &mut m.location {
                    *l = u.int_in_range(-LOCATION_LIMIT..=LOCATION_LIMIT)?;
                }
                for r in &mut m.rotation {
                    *r = f32::from_bits(u.arbitrary()?);
                }
                DemoMessage::Spawn(m)
            }
            2 => {
                let mut body: RigidBody = u.arbitrary()?;
                if !body.at_rest && u.arbitrary()? {
                    // Raw floats travel bit-exact, whatever they hold.
                    body.linear_velocity[0] = f32::from_bits(u.arbitrary()?);
                }
                DemoMessage::Move(MoveRigidBody {
                    network_id: id(u)?,
                    body,
                })
            }
            3 => DemoMessage::Chat(ChatText {
                player: u.arbitrary()?,
                text: u.arbitrary()?,
            }),
            4 => DemoMessage::Ping(Ping {
                stamp: u.arbitrary()?,
            }),
            5 => DemoMessage::Pong(Pong {
                stamp: u.arbitrary()?,
                handled_ms: u.arbitrary()?,
            }),
            _ => DemoMessage::Despawn(Despawn { network_id: id(u)? }),
        })
    }
}

/// The demo protocol's batch messages as a [`bitlens_batch::MessageSet`]: what `bitlens`
/// dissects on port [`PORT`] (see [`dissector`]).
pub type DemoMessages = MessagesOf<DemoMessage>;

/// The dissector of demo batches, named `batch` (`--decode PORT=batch`).
pub fn dissector() -> BatchDissector<DemoMessages> {
    BatchDissector::new("batch", DemoMessages::new())
}

/// Dissects a demo batch for people: framing, and per message its type, stage, length, status
/// and fields, in one field tree (see [`bitlens_batch::dissect`]).
pub fn dissect(data: &[u8]) -> Dissection {
    dissect_batch(&DemoMessages::new(), data)
}

/// One of each demo message, with recognisable values (captures, seeds, examples).
pub fn samples() -> Vec<DemoMessage> {
    let cat = crate::demo::samples()
        .into_iter()
        .find_map(|p| match p {
            crate::demo::DemoPacket::RoboCat(c) => Some(c),
            _ => None,
        })
        .unwrap_or_default();
    let body = crate::demo::samples()
        .into_iter()
        .find_map(|p| match p {
            crate::demo::DemoPacket::RigidBody(b) => Some(b),
            _ => None,
        })
        .unwrap_or_default();
    let id = |n| NetworkId::new(n).unwrap_or(ID_ONE);
    let stamp = PingStamp {
        sequence: 7,
        sent_ms: 1000,
        frame: 420,
    };
    vec![
        DemoMessage::Spawn(SpawnRoboCat::from_cat(id(1001), &cat).unwrap_or_default()),
        DemoMessage::Move(MoveRigidBody {
            network_id: id(1001),
            body,
        }),
        DemoMessage::Chat(ChatText {
            player: 3,
            text: InlineStr::truncated("meow! the home base is under attack"),
        }),
        DemoMessage::Ping(Ping { stamp }),
        DemoMessage::Pong(Pong {
            stamp,
            handled_ms: 1016,
        }),
        DemoMessage::Despawn(Despawn {
            network_id: id(1001),
        }),
    ]
}

/// Every sample message in one batch of the demo MTU, stage `update`.
pub fn sample_batch() -> Vec<u8> {
    let mut buf = vec![0u8; MTU];
    let Ok(mut w) = BatchWriter::new(&mut buf) else {
        return Vec::new();
    };
    for mut m in samples() {
        let _ = m.push(&mut w, UpdateStage::UPDATE);
    }
    let n = w.finish();
    buf.truncate(n);
    buf
}

#[cfg(test)]
mod tests {
    use super::*;
    use bitlens_batch::error::{BatchErrorKind, Result};
    use bitlens_batch::read_batch;
    use bitlens_codec::dissect::{Dissector, MessageStatus, Status};
    use bitlens_codec::trace::{FieldKind, Value};

    /// A batch: a ping (stage 4) and a chat "hi" from player 2 (stage 4).
    const PING_CHAT: [u8; 33] = [
        33, 0, // total
        4, 4, 16, 0, // Ping, update, 16 bytes
        7, 0, 0, 0, 0xE8, 0x03, 0, 0, 0xA4, 0x01, 0, 0, 0, 0, 0, 0, // stamp 7, 1000, 420
        3, 4, 4, 0, // ChatText, update, 4 bytes
        2, 2, b'h', b'i', // player 2, "hi"
        0x63, 4, 0, // unknown type 99, stage 4, empty... (completed below)
    ];

    fn ping_chat() -> Vec<u8> {
        let mut b = PING_CHAT.to_vec();
        b.push(0); // type 99's length high byte
        b[0] = b.len() as u8;
        b
    }

    #[test]
    fn parse_static_batch() {
        let data = ping_chat();
        let msgs: Vec<_> = read_batch(&data).unwrap().collect::<Result<_>>().unwrap();
        assert_eq!(msgs.len(), 3);
        let ping: Ping = msgs[0].decode().unwrap();
        assert_eq!(
            ping.stamp,
            PingStamp {
                sequence: 7,
                sent_ms: 1000,
                frame: 420
            }
        );
        let chat: ChatText = msgs[1].decode().unwrap();
        assert_eq!((chat.player, chat.text.as_str()), (2, "hi"));
        assert_eq!(DemoMessage::decode(&msgs[2]).unwrap(), None);
    }

    #[test]
    fn emit_static_batch() {
        let mut buf = [0u8; MTU];
        let mut w = BatchWriter::new(&mut buf).unwrap();
        let stamp = PingStamp {
            sequence: 7,
            sent_ms: 1000,
            frame: 420,
        };
        assert!(w.push(UpdateStage::UPDATE, &mut Ping { stamp }).unwrap());
        let mut chat = ChatText {
            player: 2,
            text: InlineStr::truncated("hi"),
        };
        assert!(w.push(UpdateStage::UPDATE, &mut chat).unwrap());
        assert!(w.push_raw(99, UpdateStage::UPDATE, &[]).unwrap());
        let n = w.finish();
        assert_eq!(&buf[..n], ping_chat().as_slice());
    }

    #[test]
    fn dissection_names_types_and_fields() {
        let d = dissect(&ping_chat());
        assert_eq!(d.status, Status::Ok);
        let messages = d.messages.as_ref().unwrap();
        assert_eq!(
            (messages[0].message_type, messages[0].name),
            (4, Some("Ping"))
        );
        assert_eq!(messages[2].status, MessageStatus::UnknownType);
        let chat = &messages[1];
        let text = d.trace.fields[chat.body.clone()]
            .iter()
            .find(|f| f.path() == "[1].text" && f.bits == 16);
        let text = text.expect("text field");
        assert_eq!(text.value, Value::Str("hi".into()));
        assert_eq!((text.bit, text.depth), (28 * 8, 1));
        // The entry after the body's first: the string's length, a path of its own.
        let at = chat.body.start + 1;
        assert_eq!(d.path_in_message(at), "text.len");
        assert_eq!(d.path_in_message(at + 1), "text");
        assert!(
            d.trace.fields[chat.entries.clone()]
                .iter()
                .any(|f| f.path() == "[1].header.len" && f.bit == 24 * 8)
        );
        assert_eq!(
            d.trace.fields[chat.entries.start].value,
            Value::Str("ChatText".into())
        );
    }

    #[test]
    fn dissection_marks_the_failing_field() {
        let mut data = ping_chat();
        data[28] = 0xFF; // "hi" -> invalid UTF-8
        let d = dissect(&data);
        // The framing holds; one message does not: the datagram is an error.
        assert_eq!(d.status, Status::Error);
        let chat = &d.messages.as_ref().unwrap()[1];
        assert_eq!(chat.status, MessageStatus::Error);
        assert!(
            d.trace.fields[chat.body.clone()]
                .iter()
                .any(|f| f.failed && f.kind == FieldKind::Value)
        );
        let p = chat.problem.as_ref().unwrap();
        assert_eq!((p.field.as_str(), p.bit), ("[1].text", 28 * 8));
        assert_eq!(d.problem.as_ref(), Some(p));
        let dissector = dissector();
        let verdict = dissector.verdict(&data);
        assert_eq!(
            (verdict.status, verdict.problem.as_ref()),
            (Status::Error, Some(p))
        );
        // A body length past the end: framing error, the message is listed as corrupt.
        let mut data = ping_chat();
        data[24] = 40;
        let d = dissect(&data);
        assert_eq!(d.status, Status::Error);
        assert_eq!(d.problem.as_ref().unwrap().kind, "body_length");
        let last = d.messages.as_ref().unwrap().last().unwrap();
        assert_eq!(last.status, MessageStatus::Error);
        assert!(last.body.is_empty() && d.trace.fields[last.body.start - 1].failed);
    }

    /// Despawn of object 65535 (the largest id), then of object 65536: stage 4, 3-byte bodies.
    const DESPAWN_65535_65536: [u8; 16] = [
        16, 0, // total
        6, 4, 3, 0, 0x82, 0xFE, 0x7F, // Despawn, update, 3 bytes: varint 65535
        6, 4, 3, 0, 0x82, 0xFF, 0x00, // Despawn, update, 3 bytes: varint 65536
    ];

    #[test]
    fn network_ids_end_at_the_message_sets_max_id() {
        let msgs: Vec<_> = read_batch(&DESPAWN_65535_65536)
            .unwrap()
            .collect::<Result<_>>()
            .unwrap();
        let last: Despawn = msgs[0].decode().unwrap();
        assert_eq!(last.network_id.get(), MAX_NETWORK_ID);
        let e = msgs[1].decode::<Despawn>().unwrap_err();
        assert_eq!(
            *e.kind(),
            BatchErrorKind::OutOfRange {
                value: 65536,
                min: 1,
                max: 65535
            }
        );
        assert_eq!((e.offset(), e.field()), (13, "network_id"));
        // The trace names the same field at the same byte, after showing the value.
        let d = dissect(&DESPAWN_65535_65536);
        let second = &d.messages.as_ref().unwrap()[1];
        assert_eq!(second.status, MessageStatus::Error);
        assert_eq!(
            second.problem,
            Some(bitlens_codec::dissect::Problem::from(&e))
        );
        // Writing: the largest id gives the first message's bytes; one more is refused.
        let mut buf = [0u8; 32];
        let mut w = BatchWriter::new(&mut buf).unwrap();
        let mut ok = Despawn {
            network_id: NetworkId::new(65535).unwrap(),
        };
        assert!(w.push(UpdateStage::UPDATE, &mut ok).unwrap());
        let mut over = Despawn {
            network_id: NetworkId::new(65536).unwrap(),
        };
        let e = w.push(UpdateStage::UPDATE, &mut over).unwrap_err();
        assert!(matches!(
            e.kind(),
            BatchErrorKind::OutOfRange { value: 65536, .. }
        ));
        assert_eq!(w.finish(), 9);
        assert_eq!(&buf[2..9], &DESPAWN_65535_65536[2..9]);
        // A home base past the range is refused the same way.
        let mut spawn = SpawnRoboCat {
            home_base: NetworkId::new(70_000),
            ..SpawnRoboCat::default()
        };
        let mut buf = [0u8; MTU];
        let e = DemoMessage::Spawn(spawn).encode(&mut buf, UpdateStage::UPDATE);
        assert!(matches!(
            e.unwrap_err().kind(),
            BatchErrorKind::OutOfRange {
                value: 70_000,
                min: 0,
                max: 65535
            }
        ));
        spawn.home_base = NetworkId::new(65535);
        assert!(
            DemoMessage::Spawn(spawn)
                .encode(&mut buf, UpdateStage::UPDATE)
                .is_ok()
        );
    }

    #[test]
    fn samples_fit_one_batch_and_decode() {
        let b = sample_batch();
        assert!(b.len() <= MTU);
        let d = dissect(&b);
        assert_eq!(d.status, Status::Ok, "{d:?}");
        assert_eq!(d.messages.map(|m| m.len()), Some(samples().len()));
    }

    #[test]
    fn spawn_round_trips_a_robocat() {
        let cat = crate::demo::samples()
            .into_iter()
            .find_map(|p| match p {
                crate::demo::DemoPacket::RoboCat(c) => Some(c),
                _ => None,
            })
            .unwrap();
        let m = SpawnRoboCat::from_cat(NetworkId::new(5).unwrap(), &cat).unwrap();
        assert_eq!(m.to_cat(), cat);
    }
}
