//! A game's own protocol in bitlens: **skirmish**, a small arena shooter whose client and server
//! talk over UDP with bit-packed packets written by hand-written `serialize` functions over
//! [`bitlens_codec::Stream`]. Nothing here is bitlens's demo protocol: this crate is what a game
//! team writes, and shows what it gets for it (the repository README, "Your own protocol"):
//!
//! - the inspector's whole CLI for its captures (`src/main.rs`: `inspect`, `decode`, `check`,
//!   `decode-bytes`);
//! - the fuzz harnesses of [`bitlens_codec::fuzzing`] for its packets (`fuzz/`, written by
//!   `bitlens fuzz-init`; the corpus in `fuzz/corpus/` is replayed by `cargo test`);
//! - a capture of a session with labelled faults (`captures/custom.pcap`, written by the
//!   `session` module) and a schema describing the same protocol
//!   (`captures/custom.schema.toml`), which decodes it the same way.
//!
//! The inspector and the session need the `bitlens` crate: they sit behind the default feature
//! `inspector`, which the fuzz crate leaves out (only the codec and this protocol are built for
//! fuzzing).
//!
//! # The protocol
//!
//! Protocol id [`PROTOCOL_ID`] (ASCII `SKM1`), MTU [`MTU`] bytes, server port [`PORT`]. Packets
//! are framed as every bitlens packet (WIRE.md section 1): CRC32 with the protocol id folded
//! in, the type in 2 bits, the body, the check `"end of packet"`.
//!
//! | type | packet | from | body |
//! |---|---|---|---|
//! | 0 | [`Input`] | client | sequence, tick, button bits, movement and aim as compressed floats, weapon |
//! | 1 | [`Snapshot`] | server | tick, acknowledged input, players alive, check `header`, the changed entities by relative index (kind, compressed position, health, firing), check `entities` |
//! | 2 | [`Chat`] | both | sender slot, team flag, text of at most [`MAX_CHAT`] bytes |
//!
//! The types are plain structs with public fields, one `serialize` each, ranges as named
//! constants: the shape a derive can generate later.
//!
//! ```
//! use bitlens_codec::packet::{read_packet, write_packet};
//! use custom_protocol::{Chat, Packet};
//!
//! let mut chat = Packet::Chat(Chat { from: 3, team_only: false, text: "gg".into() });
//! let mut buf = [0u8; custom_protocol::MTU];
//! let n = write_packet(&mut chat, &mut buf)?;
//! assert_eq!(read_packet::<Packet>(&buf[..n])?, chat);
//! # Ok::<(), bitlens_codec::Error>(())
//! ```

use arbitrary::{Arbitrary, Unstructured};
use bitlens_codec::packet::{self, Protocol, ProtocolId};
use bitlens_codec::quantize::CompressedFloat;
use bitlens_codec::trace::Value;
use bitlens_codec::{Result, Stream};
use std::sync::LazyLock;

#[cfg(feature = "inspector")]
pub mod session;

/// The protocol id: ASCII "SKM1" read as a little-endian `u32`.
pub const PROTOCOL_ID: ProtocolId = ProtocolId::U32(u32::from_le_bytes(*b"SKM1"));

/// The largest datagram, in bytes.
pub const MTU: usize = 1024;

/// The server's UDP port.
pub const PORT: u16 = 28500;

/// Player slots: a chat sender is `0..MAX_PLAYERS`.
pub const MAX_PLAYERS: i32 = 64;

/// Entity slots of a [`Snapshot`]; index [`MAX_ENTITIES`] itself closes the list.
pub const MAX_ENTITIES: i64 = 256;

/// The most health an entity has.
pub const MAX_HEALTH: i32 = 200;

/// The longest chat text, in bytes of UTF-8.
pub const MAX_CHAT: usize = 120;

/// The number of button bits of an [`Input`].
pub const BUTTON_BITS: u32 = 6;

/// Movement axes (forward, strafe): -1..1 in steps of 1/64 (8 bits).
pub const MOVE_AXIS: CompressedFloat = range(-1.0, 1.0, 1.0 / 64.0);
/// Aim yaw in degrees: -180..180 in steps of 1/32 (14 bits).
pub const AIM_YAW: CompressedFloat = range(-180.0, 180.0, 1.0 / 32.0);
/// Aim pitch in degrees: -90..90 in steps of 1/32 (13 bits).
pub const AIM_PITCH: CompressedFloat = range(-90.0, 90.0, 1.0 / 32.0);
/// Entity positions in metres: -512..512 per axis in steps of 1/16 (15 bits).
pub const POSITION: CompressedFloat = range(-512.0, 512.0, 1.0 / 16.0);

/// A range checked at compile time (constants fold into the serialize functions).
const fn range(min: f32, max: f32, res: f32) -> CompressedFloat {
    CompressedFloat::new_const(min, max, res).expect("a valid range")
}

/// The framing parameters: name, id, packet types by number, MTU.
pub static PROTOCOL: LazyLock<Protocol> = LazyLock::new(|| Protocol {
    name: "skirmish".into(),
    id: PROTOCOL_ID,
    packet_types: ["Input", "Snapshot", "Chat"].map(String::from).to_vec(),
    mtu: MTU,
});

/// The buttons of an [`Input`], one bit each (bit 0 first).
pub mod buttons {
    /// Fire the weapon.
    pub const FIRE: u8 = 1 << 0;
    /// Secondary fire.
    pub const ALT_FIRE: u8 = 1 << 1;
    /// Jump.
    pub const JUMP: u8 = 1 << 2;
    /// Crouch.
    pub const CROUCH: u8 = 1 << 3;
    /// Reload.
    pub const RELOAD: u8 = 1 << 4;
    /// Use an object.
    pub const USE: u8 = 1 << 5;
}

/// An enum sent as `int(0, COUNT - 1)`; a reader annotates the trace with the value's name.
pub trait WireEnum: Sized + Copy {
    /// The names by number.
    const NAMES: &'static [&'static str];
    /// The number sent.
    fn to_index(self) -> i64;
    /// The value of a number in `0..NAMES.len()`.
    fn from_index(i: i64) -> Self;
}

/// Serializes a [`WireEnum`] as `int(0, N - 1)` named `name`.
///
/// # Errors
/// Out_of_range for a number past the last value; buffer full / past_end.
pub fn serialize_enum<S: Stream, E: WireEnum>(s: &mut S, name: &str, v: &mut E) -> Result<()> {
    let mut i = v.to_index();
    s.int(name, &mut i, 0, E::NAMES.len() as i64 - 1)?;
    if S::READING {
        *v = E::from_index(i);
        let n = E::NAMES[i as usize];
        s.annotate(|| Value::Str(n.to_owned()));
    }
    Ok(())
}

/// The weapon a player holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Weapon {
    /// 0.
    #[default]
    Fists,
    /// 1.
    Pistol,
    /// 2.
    Rifle,
    /// 3.
    Rocket,
}

impl WireEnum for Weapon {
    const NAMES: &'static [&'static str] = &["fists", "pistol", "rifle", "rocket"];
    fn to_index(self) -> i64 {
        self as i64
    }
    fn from_index(i: i64) -> Self {
        [Weapon::Fists, Weapon::Pistol, Weapon::Rifle, Weapon::Rocket][i as usize]
    }
}

/// What an entity of a [`Snapshot`] is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum EntityKind {
    /// 0.
    #[default]
    Player,
    /// 1.
    Rocket,
    /// 2.
    Pickup,
}

impl WireEnum for EntityKind {
    const NAMES: &'static [&'static str] = &["player", "rocket", "pickup"];
    fn to_index(self) -> i64 {
        self as i64
    }
    fn from_index(i: i64) -> Self {
        [EntityKind::Player, EntityKind::Rocket, EntityKind::Pickup][i as usize]
    }
}

/// A client's input for one tick (type 0).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Input {
    /// Input sequence number, for the server's acknowledgement.
    pub sequence: u16,
    /// The client's tick.
    pub tick: u32,
    /// Button bits ([`buttons`]), [`BUTTON_BITS`] of them.
    pub buttons: u8,
    /// Forward and strafe, [`MOVE_AXIS`] each.
    pub movement: [f32; 2],
    /// Yaw ([`AIM_YAW`]) and pitch ([`AIM_PITCH`]) in degrees.
    pub aim: [f32; 2],
    /// The weapon held.
    pub weapon: Weapon,
}

impl Input {
    /// Serializes on any stream.
    ///
    /// # Errors
    /// Whatever the stream reports; buttons past [`BUTTON_BITS`] are out_of_range.
    pub fn serialize<S: Stream>(&mut self, s: &mut S) -> Result<()> {
        s.int_as("sequence", &mut self.sequence, 0, u16::MAX)?;
        s.int_as("tick", &mut self.tick, 0, u32::MAX)?;
        let mut b = u64::from(self.buttons);
        s.bits("buttons", &mut b, BUTTON_BITS)?;
        self.buttons = b as u8;
        let m = &mut self.movement;
        s.scope("movement", |s| {
            s.compressed_f32("forward", &mut m[0], &MOVE_AXIS)?;
            s.compressed_f32("strafe", &mut m[1], &MOVE_AXIS)
        })?;
        let a = &mut self.aim;
        s.scope("aim", |s| {
            s.compressed_f32("yaw", &mut a[0], &AIM_YAW)?;
            s.compressed_f32("pitch", &mut a[1], &AIM_PITCH)
        })?;
        serialize_enum(s, "weapon", &mut self.weapon)
    }
}

/// One changed entity of a [`Snapshot`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Entity {
    /// Its slot, `0..MAX_ENTITIES`; strictly increasing within a snapshot.
    pub index: u16,
    /// What it is.
    pub kind: EntityKind,
    /// Where it is, [`POSITION`] per axis.
    pub position: [f32; 3],
    /// Its health, `0..=MAX_HEALTH`.
    pub health: i32,
    /// Whether it is firing.
    pub firing: bool,
}

impl Entity {
    /// The fewest bits an entity's fields take (after its index).
    pub const MIN_BITS: usize = 2 + 3 * 15 + 8 + 1;

    /// Serializes the entity's fields (its index is the snapshot's).
    ///
    /// # Errors
    /// Whatever the stream reports.
    pub fn serialize<S: Stream>(&mut self, s: &mut S) -> Result<()> {
        serialize_enum(s, "kind", &mut self.kind)?;
        s.compressed_vec3("position", &mut self.position, &POSITION)?;
        s.int_as("health", &mut self.health, 0, MAX_HEALTH)?;
        s.bool("firing", &mut self.firing)
    }
}

/// The server's view of the changed entities (type 1): seed 000's array subset, each entity by
/// relative index, the list closed by the index [`MAX_ENTITIES`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Snapshot {
    /// The server's tick.
    pub tick: u32,
    /// The last input sequence the server processed for this client.
    pub ack_sequence: u16,
    /// Players alive, `0..MAX_PLAYERS`.
    pub players_alive: u8,
    /// The changed entities, by strictly increasing index.
    pub entities: Vec<Entity>,
}

impl Snapshot {
    /// Serializes on any stream.
    ///
    /// # Errors
    /// Whatever the stream reports; indices that do not increase are out_of_range.
    pub fn serialize<S: Stream>(&mut self, s: &mut S) -> Result<()> {
        s.int_as("tick", &mut self.tick, 0, u32::MAX)?;
        s.int_as("ack_sequence", &mut self.ack_sequence, 0, u16::MAX)?;
        s.int_as("players_alive", &mut self.players_alive, 0, 63)?;
        s.check("header")?;
        let entities = &mut self.entities;
        s.scope("entities", |s| {
            let mut previous = -1i64;
            if S::WRITING {
                for (i, e) in entities.iter_mut().enumerate() {
                    s.index(i, |s| {
                        let mut current = i64::from(e.index);
                        s.object_index("index", previous, &mut current, MAX_ENTITIES)?;
                        e.serialize(s)
                    })?;
                    previous = i64::from(e.index);
                }
                let mut end = MAX_ENTITIES;
                return s.index(entities.len(), |s| {
                    s.object_index("index", previous, &mut end, MAX_ENTITIES)
                });
            }
            entities.clear();
            // Bounded: indices strictly increase up to the sentinel (at most MAX_ENTITIES
            // entities), and each entity takes at least Entity::MIN_BITS bits.
            loop {
                let done = s.index(entities.len(), |s| {
                    let mut current = 0;
                    s.object_index("index", previous, &mut current, MAX_ENTITIES)?;
                    if current == MAX_ENTITIES {
                        return Ok(true);
                    }
                    let mut e = Entity {
                        index: current as u16,
                        ..Entity::default()
                    };
                    e.serialize(s)?;
                    entities.push(e);
                    previous = current;
                    Ok(false)
                })?;
                if done {
                    return Ok(());
                }
            }
        })?;
        s.check("entities")
    }
}

/// A chat line (type 2).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Chat {
    /// The sender's player slot, `0..MAX_PLAYERS`.
    pub from: u8,
    /// Only for the sender's team.
    pub team_only: bool,
    /// The text, at most [`MAX_CHAT`] bytes of UTF-8.
    pub text: String,
}

impl Chat {
    /// Serializes on any stream.
    ///
    /// # Errors
    /// Whatever the stream reports; a text over [`MAX_CHAT`] bytes is out_of_range.
    pub fn serialize<S: Stream>(&mut self, s: &mut S) -> Result<()> {
        s.int_as("from", &mut self.from, 0, (MAX_PLAYERS - 1) as u8)?;
        s.bool("team_only", &mut self.team_only)?;
        s.string("text", &mut self.text, MAX_CHAT)
    }
}

/// Any skirmish packet.
#[derive(Debug, Clone, PartialEq)]
pub enum Packet {
    /// Type 0.
    Input(Input),
    /// Type 1.
    Snapshot(Snapshot),
    /// Type 2.
    Chat(Chat),
}

impl Default for Packet {
    fn default() -> Self {
        Packet::Input(Input::default())
    }
}

impl packet::Packet for Packet {
    fn protocol() -> &'static Protocol {
        &PROTOCOL
    }

    fn packet_type(&self) -> u32 {
        match self {
            Packet::Input(_) => 0,
            Packet::Snapshot(_) => 1,
            Packet::Chat(_) => 2,
        }
    }

    fn empty(t: u32) -> Option<Self> {
        Some(match t {
            0 => Packet::Input(Input::default()),
            1 => Packet::Snapshot(Snapshot::default()),
            2 => Packet::Chat(Chat::default()),
            _ => return None,
        })
    }

    fn serialize_body<S: Stream>(&mut self, s: &mut S) -> Result<()> {
        match self {
            Packet::Input(p) => p.serialize(s),
            Packet::Snapshot(p) => p.serialize(s),
            Packet::Chat(p) => p.serialize(s),
        }
    }
}

// ---- Arbitrary values within every declared range (the fuzz harnesses need them) ----

/// A value the codec reproduces exactly: the decoding of a random code.
fn arb_float(u: &mut Unstructured<'_>, spec: &CompressedFloat) -> arbitrary::Result<f32> {
    Ok(spec.decode(u.int_in_range(0..=spec.steps())?))
}

fn arb_enum<E: WireEnum>(u: &mut Unstructured<'_>) -> arbitrary::Result<E> {
    Ok(E::from_index(u.choose_index(E::NAMES.len())? as i64))
}

impl<'a> Arbitrary<'a> for Input {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(Input {
            sequence: u.arbitrary()?,
            tick: u.arbitrary()?,
            buttons: u.int_in_range(0..=(1 << BUTTON_BITS) - 1)?,
            movement: [arb_float(u, &MOVE_AXIS)?, arb_float(u, &MOVE_AXIS)?],
            aim: [arb_float(u, &AIM_YAW)?, arb_float(u, &AIM_PITCH)?],
            weapon: arb_enum(u)?,
        })
    }
}

impl<'a> Arbitrary<'a> for Entity {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(Entity {
            index: 0,
            kind: arb_enum(u)?,
            position: [
                arb_float(u, &POSITION)?,
                arb_float(u, &POSITION)?,
                arb_float(u, &POSITION)?,
            ],
            health: u.int_in_range(0..=MAX_HEALTH)?,
            firing: u.arbitrary()?,
        })
    }
}

impl<'a> Arbitrary<'a> for Snapshot {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        let tick = u.arbitrary()?;
        let ack_sequence = u.arbitrary()?;
        let players_alive = u.int_in_range(0..=63)?;
        let mut entities = Vec::new();
        let mut next = 0i64;
        // Up to 150 entities: more than the MTU holds, so over-MTU writes are exercised too.
        while entities.len() < 150 && next < MAX_ENTITIES && u.arbitrary::<bool>()? {
            let index = u.int_in_range(next..=(next + 40).min(MAX_ENTITIES - 1))?;
            entities.push(Entity {
                index: index as u16,
                ..u.arbitrary()?
            });
            next = index + 1;
        }
        Ok(Snapshot {
            tick,
            ack_sequence,
            players_alive,
            entities,
        })
    }
}

impl<'a> Arbitrary<'a> for Chat {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        let mut text: String = u.arbitrary()?;
        while text.len() > MAX_CHAT {
            text.pop();
        }
        Ok(Chat {
            from: u.int_in_range(0..=(MAX_PLAYERS - 1) as u8)?,
            team_only: u.arbitrary()?,
            text,
        })
    }
}

impl<'a> Arbitrary<'a> for Packet {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(match u.int_in_range(0..=2u8)? {
            0 => Packet::Input(u.arbitrary()?),
            1 => Packet::Snapshot(u.arbitrary()?),
            _ => Packet::Chat(u.arbitrary()?),
        })
    }
}
