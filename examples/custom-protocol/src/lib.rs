//! A game's own protocol in bitlens: **skirmish**, a small arena shooter whose client and server
//! talk over UDP with bit-packed packets, described once with `#[derive(BitPacked)]` and
//! `#[derive(PacketSet)]`. Nothing here is bitlens's demo protocol: this crate is what a game
//! team writes, and shows what it gets for it (the repository README, "Your own protocol"):
//!
//! - the inspector's whole CLI for its captures: `src/main.rs`, the binary `skirmish`, is ten
//!   lines of `bitlens::Cli` (`inspect`, `decode`, `check`, `decode-bytes`, `proxy`, `replay`,
//!   `export-wireshark`, `seeds`, `fuzz-init`);
//! - the fuzz harnesses of [`bitlens_codec::fuzzing`] for its packets (`fuzz/`, written by
//!   `fuzz-init`; the corpus in `fuzz/corpus/` is replayed by `cargo test`);
//! - a capture of a session with labelled faults (`captures/custom.pcap`, written by the
//!   `session` module) and the protocol as a schema (`captures/custom.schema.toml`, the text
//!   of [`PacketSet::schema`]), which decodes it the same way.
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
//! Every packet's wire form is said by its attributes: nothing is a hand-written `serialize`.
//! The derived code writes the bytes the hand-written functions it replaced wrote, and reads
//! and traces them the same (`tests/wire_unchanged.rs` pins `decode --json` on the capture and
//! every fuzz corpus input). What stays by hand, and why:
//!
//! - the `Arbitrary` impls: the derive makes none, and the fuzz harnesses need values within
//!   the declared ranges (compressed floats on their grid, entity indices increasing); these
//!   also keep what each committed `packet_roundtrip` corpus file means;
//! - `Default` for [`Packet`]: std's `#[derive(Default)]` takes only a unit variant;
//! - the compressed float ranges are named constants ([`MOVE_AXIS`] ...) that the attributes
//!   name (`compressed = MOVE_AXIS`), because the session writer quantizes with them too.
//!
//! ```
//! use bitlens_codec::PacketSet;
//! use bitlens_codec::packet::{read_packet, write_packet};
//! use custom_protocol::{Chat, Packet};
//!
//! let mut chat = Packet::Chat(Chat { from: 3, team_only: false, text: "gg".into() });
//! let mut buf = [0u8; custom_protocol::MTU];
//! let n = write_packet(&mut chat, &mut buf)?;
//! assert_eq!(read_packet::<Packet>(&buf[..n])?, chat);
//! // A sender past the 64 player slots is refused on write, naming the field.
//! let mut bad = Packet::Chat(Chat { from: 64, team_only: false, text: "gg".into() });
//! let err = write_packet(&mut bad, &mut buf).unwrap_err();
//! assert!(err.to_string().contains("(field \"from\"): 64 out of range 0..=63"), "{err}");
//! // The same attributes are the schema `--schema` and `export-wireshark` read.
//! assert!(Packet::schema().contains("{ name = \"text\", type = \"string\", max_len = 120 }"));
//! # Ok::<(), bitlens_codec::Error>(())
//! ```

use arbitrary::{Arbitrary, Unstructured};
use bitlens_codec::packet::ProtocolId;
use bitlens_codec::quantize::CompressedFloat;
use bitlens_codec::{BitPacked, PacketSet};

#[cfg(feature = "inspector")]
pub mod session;

/// The protocol id: ASCII "SKM1" read as a little-endian `u32`.
pub const PROTOCOL_ID: ProtocolId = ProtocolId::U32(u32::from_le_bytes(*b"SKM1"));

/// The largest datagram, in bytes.
pub const MTU: usize = 1024;

/// The server's UDP port.
pub const PORT: u16 = 28500;

/// Player slots: a chat sender is `0..MAX_PLAYERS`.
pub const MAX_PLAYERS: u8 = 64;

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

/// The weapon a player holds: `int(0, 3)`, traced by its name.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, BitPacked)]
pub enum Weapon {
    /// 0.
    #[default]
    #[bitlens(name = "fists")]
    Fists,
    /// 1.
    #[bitlens(name = "pistol")]
    Pistol,
    /// 2.
    #[bitlens(name = "rifle")]
    Rifle,
    /// 3.
    #[bitlens(name = "rocket")]
    Rocket,
}

/// What an entity of a [`Snapshot`] is: `int(0, 2)`, traced by its name.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, BitPacked)]
pub enum EntityKind {
    /// 0.
    #[default]
    #[bitlens(name = "player")]
    Player,
    /// 1.
    #[bitlens(name = "rocket")]
    Rocket,
    /// 2.
    #[bitlens(name = "pickup")]
    Pickup,
}

/// Forward and strafe, [`MOVE_AXIS`] each.
#[derive(Debug, Clone, Copy, Default, PartialEq, BitPacked)]
pub struct Movement {
    /// Forward (positive) or back.
    #[bitlens(compressed = MOVE_AXIS)]
    pub forward: f32,
    /// Right (positive) or left.
    #[bitlens(compressed = MOVE_AXIS)]
    pub strafe: f32,
}

/// Where a player looks, in degrees.
#[derive(Debug, Clone, Copy, Default, PartialEq, BitPacked)]
pub struct Aim {
    /// Yaw, [`AIM_YAW`].
    #[bitlens(compressed = AIM_YAW)]
    pub yaw: f32,
    /// Pitch, [`AIM_PITCH`].
    #[bitlens(compressed = AIM_PITCH)]
    pub pitch: f32,
}

/// A client's input for one tick (type 0).
#[derive(Debug, Clone, Default, PartialEq, BitPacked)]
pub struct Input {
    /// Input sequence number, for the server's acknowledgement.
    pub sequence: u16,
    /// The client's tick.
    pub tick: u32,
    /// Button bits ([`buttons`]), [`BUTTON_BITS`] of them.
    #[bitlens(bits = BUTTON_BITS)]
    pub buttons: u8,
    /// Forward and strafe.
    pub movement: Movement,
    /// Yaw and pitch.
    pub aim: Aim,
    /// The weapon held.
    pub weapon: Weapon,
}

/// One changed entity of a [`Snapshot`].
#[derive(Debug, Clone, Default, PartialEq, BitPacked)]
pub struct Entity {
    /// Its slot, `0..MAX_ENTITIES`; strictly increasing within a snapshot (sent by the
    /// snapshot, as a relative object index).
    #[bitlens(sparse_index)]
    pub index: u16,
    /// What it is.
    pub kind: EntityKind,
    /// Where it is, [`POSITION`] per axis.
    #[bitlens(compressed = POSITION)]
    pub position: [f32; 3],
    /// Its health, `0..=MAX_HEALTH`.
    #[bitlens(range = 0..=MAX_HEALTH)]
    pub health: i32,
    /// Whether it is firing.
    pub firing: bool,
}

/// The server's view of the changed entities (type 1): seed 000's array subset, each entity by
/// relative index, the list closed by the index [`MAX_ENTITIES`], between the check markers
/// `header` and `entities`.
#[derive(Debug, Clone, Default, PartialEq, BitPacked)]
pub struct Snapshot {
    /// The server's tick.
    pub tick: u32,
    /// The last input sequence the server processed for this client.
    pub ack_sequence: u16,
    /// Players alive, `0..MAX_PLAYERS`.
    #[bitlens(range = 0..=MAX_PLAYERS - 1)]
    pub players_alive: u8,
    /// The changed entities, by strictly increasing index.
    #[bitlens(
        check = "header",
        sparse(max_objects = MAX_ENTITIES),
        check_after = "entities"
    )]
    pub entities: Vec<Entity>,
}

/// A chat line (type 2).
#[derive(Debug, Clone, Default, PartialEq, BitPacked)]
pub struct Chat {
    /// The sender's player slot, `0..MAX_PLAYERS`.
    #[bitlens(range = 0..=MAX_PLAYERS - 1)]
    pub from: u8,
    /// Only for the sender's team.
    pub team_only: bool,
    /// The text, at most [`MAX_CHAT`] bytes of UTF-8.
    #[bitlens(max_len = MAX_CHAT)]
    pub text: String,
}

/// Any skirmish packet: the packet set, numbered in declaration order (Input 0, Snapshot 1,
/// Chat 2).
#[derive(Debug, Clone, PartialEq, PacketSet)]
#[bitlens(protocol = "skirmish", id = PROTOCOL_ID, mtu = MTU)]
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

// ---- Arbitrary values within every declared range (the fuzz harnesses need them) ----

/// A value the codec reproduces exactly: the decoding of a random code.
fn arb_float(u: &mut Unstructured<'_>, spec: &CompressedFloat) -> arbitrary::Result<f32> {
    Ok(spec.decode(u.int_in_range(0..=spec.steps())?))
}

fn arb_weapon(u: &mut Unstructured<'_>) -> arbitrary::Result<Weapon> {
    Ok(*u.choose(&[Weapon::Fists, Weapon::Pistol, Weapon::Rifle, Weapon::Rocket])?)
}

fn arb_kind(u: &mut Unstructured<'_>) -> arbitrary::Result<EntityKind> {
    Ok(*u.choose(&[EntityKind::Player, EntityKind::Rocket, EntityKind::Pickup])?)
}

impl<'a> Arbitrary<'a> for Input {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(Input {
            sequence: u.arbitrary()?,
            tick: u.arbitrary()?,
            buttons: u.int_in_range(0..=(1 << BUTTON_BITS) - 1)?,
            movement: Movement {
                forward: arb_float(u, &MOVE_AXIS)?,
                strafe: arb_float(u, &MOVE_AXIS)?,
            },
            aim: Aim {
                yaw: arb_float(u, &AIM_YAW)?,
                pitch: arb_float(u, &AIM_PITCH)?,
            },
            weapon: arb_weapon(u)?,
        })
    }
}

impl<'a> Arbitrary<'a> for Entity {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(Entity {
            index: 0,
            kind: arb_kind(u)?,
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
        // serialize 1.0 refuses a NUL inside a string, on both sides.
        let mut text: String = u.arbitrary::<String>()?.replace('\0', "");
        while text.len() > MAX_CHAT {
            text.pop();
        }
        Ok(Chat {
            from: u.int_in_range(0..=MAX_PLAYERS - 1)?,
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
