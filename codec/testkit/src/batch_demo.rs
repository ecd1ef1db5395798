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
use bitlens_batch::dissect::{BatchDissector, MessageSet, dissect_batch};
use bitlens_batch::error::{BatchError, BatchErrorKind, Result};
use bitlens_batch::message::{
    BatchWriter, MAX_MTU, Message, NetworkContext, RawMessage, UpdateStage, encode_message,
    max_body,
};
use bitlens_batch::queue::{Dispatch, handle_raw};
use bitlens_batch::stream::{ByteStream, InlineStr, LittleEndian};
use bitlens_codec::dissect::Dissection;
use bitlens_codec::link::{self, AnyId, LinkingContext, NetworkId};
use bitlens_codec::trace::Tracer;

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
    Some(match message_type {
        SpawnRoboCat::TYPE => SpawnRoboCat::NAME,
        MoveRigidBody::TYPE => MoveRigidBody::NAME,
        ChatText::TYPE => ChatText::NAME,
        Ping::TYPE => Ping::NAME,
        Pong::TYPE => Pong::NAME,
        Despawn::TYPE => Despawn::NAME,
        _ => return None,
    })
}

fn ranged<S: ByteStream>(s: &mut S, name: &'static str, v: &mut u32, max: u32) -> Result<()> {
    let at = s.base() + s.position();
    if S::WRITING && *v > max {
        return Err(out_of_range(u64::from(*v), 0, u64::from(max), at, name));
    }
    s.packed_u32(name, v)?;
    if *v > max {
        return Err(out_of_range(u64::from(*v), 0, u64::from(max), at, name));
    }
    Ok(())
}

fn out_of_range(value: u64, min: u64, max: u64, at: usize, name: &'static str) -> BatchError {
    BatchError::new(BatchErrorKind::OutOfRange { value, min, max }, at, name)
}

/// The network id of the object the message is about: `1..=MAX_NETWORK_ID`.
fn object_id<S: ByteStream>(s: &mut S, name: &'static str, id: &mut NetworkId) -> Result<()> {
    bitlens_batch::link::serialize_object_id_bytes(s, name, id, MAX_NETWORK_ID)
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

impl Dispatch for DemoWorld {
    fn dispatch(&mut self, ctx: &NetworkContext, msg: &RawMessage<'_>) -> Result<()> {
        match msg.header.message_type {
            SpawnRoboCat::TYPE => handle_raw::<SpawnRoboCat>(msg, ctx, self),
            MoveRigidBody::TYPE => handle_raw::<MoveRigidBody>(msg, ctx, self),
            ChatText::TYPE => handle_raw::<ChatText>(msg, ctx, self),
            Ping::TYPE => handle_raw::<Ping>(msg, ctx, self),
            Pong::TYPE => handle_raw::<Pong>(msg, ctx, self),
            Despawn::TYPE => handle_raw::<Despawn>(msg, ctx, self),
            // Unknown types were skipped by their length.
            _ => Ok(()),
        }
    }
}

/// Spawns a [`RoboCat`] (seed 004) under a network id; its home base is a linked reference.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpawnRoboCat {
    /// The cat's network id.
    pub network_id: NetworkId,
    /// Health, `0..=100`.
    pub health: u8,
    /// Meows so far, `0..=1_000_000`.
    pub meow_count: u32,
    /// Network id of its home base, resolved by the receiver's linking context.
    pub home_base: Option<NetworkId>,
    /// Name.
    pub name: InlineStr<MAX_NAME>,
    /// Mice tracked: `mice[..mouse_count]`, each `0..=MAX_MOUSE`.
    pub mice: [u16; MAX_MICE],
    /// Number of mice, `0..=MAX_MICE`.
    pub mouse_count: u8,
    /// Location in tenths of a unit, each within `±LOCATION_LIMIT` (one copy of 12 bytes).
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
            mice: [0; MAX_MICE],
            mouse_count: 0,
            location: [0; 3],
            rotation: [0.0, 0.0, 0.0, 1.0],
        }
    }
}

impl SpawnRoboCat {
    /// The spawn message of `cat` under `network_id`; `None` when a value is out of range.
    pub fn from_cat(network_id: NetworkId, cat: &RoboCat) -> Option<Self> {
        let mut m = SpawnRoboCat {
            network_id,
            health: u8::try_from(cat.health).ok().filter(|h| *h <= 100)?,
            meow_count: u32::try_from(cat.meow_count).ok()?,
            home_base: cat.home_base,
            name: InlineStr::try_from_str(&cat.name)?,
            mouse_count: u8::try_from(cat.mice.len()).ok()?,
            location: cat.location,
            rotation: cat.rotation,
            ..Self::default()
        };
        for (slot, &mouse) in m.mice.iter_mut().zip(&cat.mice) {
            *slot = u16::try_from(mouse)
                .ok()
                .filter(|&x| i32::from(x) <= MAX_MOUSE)?;
        }
        let in_range = cat.mice.len() <= MAX_MICE
            && m.meow_count <= 1_000_000
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
            mice: self.mice[..usize::from(self.mouse_count)]
                .iter()
                .map(|&m| i32::from(m))
                .collect(),
            location: self.location,
            rotation: self.rotation,
        }
    }
}

impl Message for SpawnRoboCat {
    const TYPE: u8 = 1;
    const NAME: &'static str = "SpawnRoboCat";
    type Handler = DemoWorld;

    fn size_upper_bound(&self) -> usize {
        5 + 1 + 5 + 5 + (2 + MAX_NAME) + (1 + 2 * MAX_MICE) + 12 + 16
    }

    fn serialize<S: ByteStream>(&mut self, s: &mut S) -> Result<()> {
        object_id(s, "network_id", &mut self.network_id)?;
        let at = s.base() + s.position();
        s.u8("health", &mut self.health)?;
        if self.health > 100 {
            return Err(out_of_range(u64::from(self.health), 0, 100, at, "health"));
        }
        ranged(s, "meow_count", &mut self.meow_count, 1_000_000)?;
        bitlens_batch::link::serialize_id_bytes(
            s,
            "home_base",
            &mut self.home_base,
            MAX_NETWORK_ID,
            &AnyId,
        )?;
        s.text("name", &mut self.name)?;
        let mut n = usize::from(self.mouse_count);
        s.length("mice", &mut n, MAX_MICE, 2)?;
        self.mouse_count = n as u8;
        let mice = &mut self.mice[..n];
        s.scope("mice", |s| {
            for (i, m) in mice.iter_mut().enumerate() {
                let at = s.base() + s.position();
                s.index(i, |s| s.u16("", m))?;
                if i32::from(*m) > MAX_MOUSE {
                    return Err(out_of_range(u64::from(*m), 0, MAX_MOUSE as u64, at, "mice"));
                }
            }
            Ok(())
        })?;
        let at = s.base() + s.position();
        s.pod("location", &mut self.location)?;
        if self
            .location
            .iter()
            .any(|l| l.unsigned_abs() > LOCATION_LIMIT as u32)
        {
            let worst = self
                .location
                .iter()
                .map(|l| l.unsigned_abs())
                .max()
                .unwrap_or(0);
            return Err(out_of_range(
                u64::from(worst),
                0,
                LOCATION_LIMIT as u64,
                at,
                "location",
            ));
        }
        s.pod("rotation", &mut self.rotation)
    }

    fn handle(&mut self, _: &NetworkContext, world: &mut DemoWorld) {
        world.handled[usize::from(Self::TYPE)] += 1;
        // The id was read as 1..=MAX_NETWORK_ID, the context's own range: never refused.
        let _ = world.links.insert(self.network_id, self.network_id.get());
        if let link::Reference::Unresolved(_) = world.links.resolve(self.home_base) {
            world.unresolved_home_bases += 1;
        }
    }
}

/// Moves a rigid body (seed 000's [`RigidBody`]) of a spawned object.
#[derive(Debug, Clone, PartialEq)]
pub struct MoveRigidBody {
    /// The object's network id.
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
    const TYPE: u8 = 2;
    const NAME: &'static str = "MoveRigidBody";
    type Handler = DemoWorld;

    fn size_upper_bound(&self) -> usize {
        5 + 12 + 16 + 1 + 12 + 12
    }

    fn serialize<S: ByteStream>(&mut self, s: &mut S) -> Result<()> {
        object_id(s, "network_id", &mut self.network_id)?;
        let b = &mut self.body;
        s.scope("body", |s| {
            s.pod("position", &mut b.position)?;
            s.pod("orientation", &mut b.orientation)?;
            let at = s.base() + s.position();
            if S::WRITING
                && b.at_rest
                && (b.linear_velocity != [0.0; 3] || b.angular_velocity != [0.0; 3])
            {
                let why = "a body at rest has a non-zero velocity";
                return Err(BatchError::new(
                    BatchErrorKind::NonCanonical(why),
                    at,
                    "at_rest",
                ));
            }
            s.bool("at_rest", &mut b.at_rest)?;
            if b.at_rest {
                if S::READING {
                    b.linear_velocity = [0.0; 3];
                    b.angular_velocity = [0.0; 3];
                }
                return Ok(());
            }
            s.pod("linear_velocity", &mut b.linear_velocity)?;
            s.pod("angular_velocity", &mut b.angular_velocity)
        })
    }

    fn handle(&mut self, _: &NetworkContext, world: &mut DemoWorld) {
        world.handled[usize::from(Self::TYPE)] += 1;
        world.last_move = Some((self.network_id, self.body.clone()));
    }
}

/// A line of chat.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ChatText {
    /// Who says it.
    pub player: u32,
    /// What they say.
    pub text: InlineStr<MAX_CHAT>,
}

impl Message for ChatText {
    const TYPE: u8 = 3;
    const NAME: &'static str = "ChatText";
    type Handler = DemoWorld;

    fn size_upper_bound(&self) -> usize {
        5 + 2 + MAX_CHAT
    }

    fn serialize<S: ByteStream>(&mut self, s: &mut S) -> Result<()> {
        s.packed_u32("player", &mut self.player)?;
        s.text("text", &mut self.text)
    }

    fn handle(&mut self, _: &NetworkContext, world: &mut DemoWorld) {
        world.handled[usize::from(Self::TYPE)] += 1;
        world.last_chat = self.text;
    }
}

/// A ping's stamp: plain old data, sent in one copy of its 16 bytes (seed 002's `WriteValue`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, bytemuck::Pod, bytemuck::Zeroable)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Ping {
    /// The stamp.
    pub stamp: PingStamp,
}

impl Message for Ping {
    const TYPE: u8 = 4;
    const NAME: &'static str = "Ping";
    type Handler = DemoWorld;

    fn size_upper_bound(&self) -> usize {
        std::mem::size_of::<PingStamp>()
    }

    fn serialize<S: ByteStream>(&mut self, s: &mut S) -> Result<()> {
        s.pod("stamp", &mut self.stamp)
    }

    fn handle(&mut self, _: &NetworkContext, world: &mut DemoWorld) {
        world.handled[usize::from(Self::TYPE)] += 1;
        world.pong_due = Some(Pong {
            stamp: self.stamp,
            handled_ms: world.now_ms,
        });
    }
}

/// The answer to a [`Ping`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pong {
    /// The ping's stamp.
    pub stamp: PingStamp,
    /// The answering side's clock when it handled the ping, in milliseconds.
    pub handled_ms: u32,
}

impl Message for Pong {
    const TYPE: u8 = 5;
    const NAME: &'static str = "Pong";
    type Handler = DemoWorld;

    fn size_upper_bound(&self) -> usize {
        std::mem::size_of::<PingStamp>() + 4
    }

    fn serialize<S: ByteStream>(&mut self, s: &mut S) -> Result<()> {
        s.pod("stamp", &mut self.stamp)?;
        s.u32("handled_ms", &mut self.handled_ms)
    }

    fn handle(&mut self, _: &NetworkContext, world: &mut DemoWorld) {
        world.handled[usize::from(Self::TYPE)] += 1;
        world.rtt_ms = Some(world.now_ms.wrapping_sub(self.stamp.sent_ms));
    }
}

/// Removes a spawned object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Despawn {
    /// The object's network id.
    pub network_id: NetworkId,
}

impl Default for Despawn {
    fn default() -> Self {
        Despawn { network_id: ID_ONE }
    }
}

impl Message for Despawn {
    const TYPE: u8 = 6;
    const NAME: &'static str = "Despawn";
    type Handler = DemoWorld;

    fn size_upper_bound(&self) -> usize {
        5
    }

    fn serialize<S: ByteStream>(&mut self, s: &mut S) -> Result<()> {
        object_id(s, "network_id", &mut self.network_id)
    }

    fn handle(&mut self, _: &NetworkContext, world: &mut DemoWorld) {
        world.handled[usize::from(Self::TYPE)] += 1;
        world.links.remove_id(self.network_id);
    }
}

/// Any demo message.
#[derive(Debug, Clone, PartialEq)]
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

macro_rules! each {
    ($self:expr, $m:ident => $e:expr) => {
        match $self {
            DemoMessage::Spawn($m) => $e,
            DemoMessage::Move($m) => $e,
            DemoMessage::Chat($m) => $e,
            DemoMessage::Ping($m) => $e,
            DemoMessage::Pong($m) => $e,
            DemoMessage::Despawn($m) => $e,
        }
    };
}

fn type_of<M: Message>(_: &M) -> u8 {
    M::TYPE
}

impl DemoMessage {
    /// Its message type.
    pub fn message_type(&self) -> u8 {
        each!(self, m => type_of(m))
    }

    /// Its size upper bound.
    pub fn size_upper_bound(&self) -> usize {
        each!(self, m => m.size_upper_bound())
    }

    /// Decodes a raw message: `Ok(None)` for an unknown type.
    ///
    /// # Errors
    /// The decode error, naming the message.
    pub fn decode(raw: &RawMessage<'_>) -> Result<Option<Self>> {
        Ok(Some(match raw.header.message_type {
            SpawnRoboCat::TYPE => DemoMessage::Spawn(raw.decode()?),
            MoveRigidBody::TYPE => DemoMessage::Move(raw.decode()?),
            ChatText::TYPE => DemoMessage::Chat(raw.decode()?),
            Ping::TYPE => DemoMessage::Ping(raw.decode()?),
            Pong::TYPE => DemoMessage::Pong(raw.decode()?),
            Despawn::TYPE => DemoMessage::Despawn(raw.decode()?),
            _ => return Ok(None),
        }))
    }

    /// Appends it to a batch (`Ok(false)` when its bound does not fit).
    ///
    /// # Errors
    /// As [`BatchWriter::push`].
    pub fn push(&mut self, w: &mut BatchWriter<'_>, stage: UpdateStage) -> Result<bool> {
        each!(self, m => w.push(stage, m))
    }

    /// Encodes header and body at the start of `dst`, returning the bytes used.
    ///
    /// # Errors
    /// As [`encode_message`].
    pub fn encode(&mut self, dst: &mut [u8], stage: UpdateStage) -> Result<usize> {
        each!(self, m => encode_message(dst, 0, stage, m, max_body(MAX_MTU)))
    }

    /// Sends it through a [`bitlens_batch::MessageSystem`].
    ///
    /// # Errors
    /// As [`bitlens_batch::MessageSystem::send`].
    pub fn send(
        &mut self,
        system: &mut bitlens_batch::MessageSystem,
        to: &[bitlens_batch::ClientId],
        channel: bitlens_batch::Channel,
        stage: UpdateStage,
        world: &mut DemoWorld,
    ) -> Result<()> {
        each!(self, m => system.send(to, channel, stage, m, world))
    }
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
                    mouse_count: u.int_in_range(0..=MAX_MICE as u8)?,
                    ..SpawnRoboCat::default()
                };
                for mouse in &mut m.mice[..usize::from(m.mouse_count)] {
                    *mouse = u.int_in_range(0..=MAX_MOUSE as u16)?;
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

fn body<M: Message + Default, T: Tracer>(raw: &RawMessage<'_>, tracer: T) -> (Result<()>, T) {
    match raw.decode_traced(&mut M::default(), tracer) {
        Ok(tracer) => (Ok(()), tracer),
        Err((e, tracer)) => (Err(e), tracer),
    }
}

/// The demo protocol's batch messages as a [`MessageSet`]: what `bitlens` dissects on port
/// [`PORT`] (see [`dissector`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DemoMessages;

impl MessageSet for DemoMessages {
    fn message_name(&self, message_type: u8) -> Option<&'static str> {
        message_name(message_type)
    }

    fn read_body<T: Tracer>(&self, raw: &RawMessage<'_>, tracer: T) -> (Result<()>, T) {
        match raw.header.message_type {
            SpawnRoboCat::TYPE => body::<SpawnRoboCat, T>(raw, tracer),
            MoveRigidBody::TYPE => body::<MoveRigidBody, T>(raw, tracer),
            ChatText::TYPE => body::<ChatText, T>(raw, tracer),
            Ping::TYPE => body::<Ping, T>(raw, tracer),
            Pong::TYPE => body::<Pong, T>(raw, tracer),
            // Any other type is Despawn's wrong_type error (the set reads known types only).
            _ => body::<Despawn, T>(raw, tracer),
        }
    }
}

/// The dissector of demo batches, named `batch` (`--decode PORT=batch`).
pub fn dissector() -> BatchDissector<DemoMessages> {
    BatchDissector::new("batch", DemoMessages)
}

/// Dissects a demo batch for people: framing, and per message its type, stage, length, status
/// and fields, in one field tree (see [`bitlens_batch::dissect`]).
pub fn dissect(data: &[u8]) -> Dissection {
    dissect_batch(&DemoMessages, data)
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
        let at = chat.body.start + 1;
        assert_eq!(d.path_in_message(at), "text");
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
