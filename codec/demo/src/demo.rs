//! The demo protocol: the reference protocol that tests, fuzzing, the demo captures and the
//! inspector all use, built from the seeds' own examples.
//!
//! | type | packet | from |
//! |---|---|---|
//! | 0 | [`PacketA`]: three full-range `i32`s | seed 000 |
//! | 1 | [`PacketB`]: a ranged count of `i32` elements | seed 000 |
//! | 2 | [`PacketC`]: bool, `i16`, `i32` | seed 000 |
//! | 3 | [`RigidBody`]: compressed position, smallest-three orientation, at-rest bit | seed 000 |
//! | 4 | [`SceneUpdate`]: a sparse subset of up to 4096 objects by relative object index | seed 000 |
//! | 5 | [`RoboCat`]: health, meows, home base network id, name, mice, fixed-point location | seed 004 |
//!
//! Protocol id [`PROTOCOL_ID`] (32 bits), MTU [`MTU`] bytes. Check markers separate the sections
//! of the larger packets, and `"end of packet"` closes every one.

use arbitrary::{Arbitrary, Unstructured};
use bitlens_codec::bits::bits_required;
use bitlens_codec::dissect::PacketDissector;
use bitlens_codec::error::Result;
use bitlens_codec::link::{self, AnyId, Links, NetworkId};
use bitlens_codec::packed::{self, SchemaWriter};
use bitlens_codec::packet::{Packet, Protocol, ProtocolId};
use bitlens_codec::quantize::{CompressedFloat, SmallestThree};
use bitlens_codec::stream::Stream;
use bitlens_codec::{BitPacked, PacketSet};
use std::sync::LazyLock;

/// The demo protocol's id: ASCII "BLd1" read as a little-endian `u32`.
pub const PROTOCOL_ID: ProtocolId = ProtocolId::U32(u32::from_le_bytes(*b"BLd1"));

/// The demo protocol's MTU in bytes.
pub const MTU: usize = 1200;

/// The UDP port the demo captures use for bit-packed packets.
pub const PORT: u16 = 40000;

/// Largest element count of [`PacketB`].
pub const MAX_ELEMENTS: usize = 256;

/// Object slots of a [`SceneUpdate`]; index [`MAX_OBJECTS`] itself is the end-of-list sentinel.
pub const MAX_OBJECTS: i64 = 4096;

/// Longest [`RoboCat`] name, in bytes.
pub const MAX_NAME: usize = 127;

/// Most mice a [`RoboCat`] tracks.
pub const MAX_MICE: usize = 32;

/// Largest mouse index.
pub const MAX_MOUSE: i32 = 4095;

/// Largest network id (0 means "no object").
pub const MAX_NETWORK_ID: u32 = 65535;

/// Fixed-point location bound: ±2000 game units at 0.1, as tenths.
pub const LOCATION_LIMIT: i32 = 20000;

/// The dissector of the demo protocol's packets, named `demo` (`--decode PORT=demo`).
pub fn dissector() -> PacketDissector<DemoPacket> {
    PacketDissector::new("demo")
}

/// The framing parameters of the demo protocol: [`DemoPacket`]'s (derived).
pub static PROTOCOL: LazyLock<Protocol> = LazyLock::new(|| DemoPacket::protocol().clone());

/// Rigid body position: ±512 at 0.01 (17 bits per axis).
pub const POSITION: CompressedFloat = cf(-512.0, 512.0, 0.01);
/// Rigid body linear velocity: ±32 at 0.01 (13 bits per axis).
pub const LINEAR_VELOCITY: CompressedFloat = cf(-32.0, 32.0, 0.01);
/// Rigid body angular velocity: ±16 at 0.01 (12 bits per axis).
pub const ANGULAR_VELOCITY: CompressedFloat = cf(-16.0, 16.0, 0.01);
/// Orientations: smallest three at 10 bits per component (32 bits).
pub const ORIENTATION: SmallestThree = match SmallestThree::new_const(10) {
    Some(q) => q,
    None => unreachable!(),
};

/// A demo range, checked at compile time: constants, so the compiler folds each range's width
/// and factors into the serialize functions; and stable, so that every accepted demo packet
/// re-encodes to the same bytes (quaternion near ties aside: [`SmallestThree`]).
const fn cf(min: f32, max: f32, res: f32) -> CompressedFloat {
    let range = CompressedFloat::new_const(min, max, res).expect("a valid demo range");
    assert!(
        range.is_stable(),
        "a demo range loses codes through read then write"
    );
    range
}

/// Seed 000's first example: three integers.
#[derive(Debug, Clone, Default, PartialEq, Eq, BitPacked)]
pub struct PacketA {
    /// Full-range `i32`.
    pub x: i32,
    /// Full-range `i32`.
    pub y: i32,
    /// Full-range `i32`.
    pub z: i32,
}

/// Seed 000's variable-length array: a count in `0..=MAX_ELEMENTS`, then the elements.
#[derive(Debug, Clone, Default, PartialEq, Eq, BitPacked)]
pub struct PacketB {
    /// Full-range elements; a count over [`MAX_ELEMENTS`] is out_of_range.
    #[bitlens(max_len = MAX_ELEMENTS)]
    pub elements: Vec<i32>,
}

/// Seed 000's mixed packet: a bool, a 16-bit and a 32-bit integer.
#[derive(Debug, Clone, Default, PartialEq, Eq, BitPacked)]
pub struct PacketC {
    /// A flag.
    pub a: bool,
    /// Full-range `i16`.
    pub b: i16,
    /// Full-range `i32`.
    pub c: i32,
}

/// Seed 000's rigid body: position and orientation always, velocities only when not at rest.
///
/// Writing a body at rest with a non-zero velocity is invalid_argument (the velocity would be
/// lost); reading one at rest gives zero velocities.
///
/// In batches (`crate::batch_demo::MoveRigidBody`) the same struct is the byte-aligned batch
/// struct `RigidBodyState`: raw little-endian floats, velocities unless at rest (its
/// `#[batch(...)]` attributes).
#[derive(Debug, Clone, Default, PartialEq, BitPacked, bitlens_batch::BatchStruct)]
#[batch(name = "RigidBodyState")]
pub struct RigidBody {
    /// Position, [`POSITION`] per axis.
    #[bitlens(compressed = POSITION)]
    pub position: [f32; 3],
    /// Orientation `[x, y, z, w]`, [`ORIENTATION`].
    #[bitlens(quaternion = ORIENTATION)]
    pub orientation: [f32; 4],
    /// The at-rest bit: when set, no velocities are sent and both read as zero.
    pub at_rest: bool,
    /// Linear velocity, [`LINEAR_VELOCITY`] per axis.
    #[bitlens(compressed = LINEAR_VELOCITY, unless = at_rest)]
    #[batch(unless = at_rest)]
    pub linear_velocity: [f32; 3],
    /// Angular velocity, [`ANGULAR_VELOCITY`] per axis.
    #[bitlens(compressed = ANGULAR_VELOCITY, unless = at_rest)]
    #[batch(unless = at_rest)]
    pub angular_velocity: [f32; 3],
}

/// One changed object of a [`SceneUpdate`]: its index (sent by the update's sparse array), then
/// the body's fields.
#[derive(Debug, Clone, Default, PartialEq, BitPacked)]
pub struct SceneObject {
    /// Its slot, `0..MAX_OBJECTS`; strictly increasing within an update.
    #[bitlens(sparse_index)]
    pub index: u16,
    /// Its state.
    #[bitlens(flatten)]
    pub body: RigidBody,
}

/// Seed 000's array subset: the changed objects of a scene, each by relative object index,
/// closed by the sentinel index [`MAX_OBJECTS`].
///
/// Bounded on read: indices strictly increase up to the sentinel, so at most [`MAX_OBJECTS`]
/// entries, each of at least `RigidBody::MIN_BITS` bits.
#[derive(Debug, Clone, Default, PartialEq, BitPacked)]
pub struct SceneUpdate {
    /// Update sequence number.
    #[bitlens(check_after = "header")]
    pub sequence: u16,
    /// Changed objects, by strictly increasing index (others are out_of_range).
    #[bitlens(sparse(max_objects = MAX_OBJECTS), check_after = "objects")]
    pub objects: Vec<SceneObject>,
}

/// Seed 004's RoboCat, with the seed's fixes: the home base as a network id (linking), the mice
/// as a ranged vector, the location in fixed point.
///
/// Its serialize function is written by hand: it takes the receiving world's linking context,
/// and its location is an array sent as three named fields, which no attribute says.
/// [`BitPacked`] is implemented by hand over it, so the packet set nests it like any other.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RoboCat {
    /// Health, `0..=100`.
    pub health: i32,
    /// Meows so far, `0..=1_000_000`.
    pub meow_count: i32,
    /// Network id of the home base, `None` for none: a linked reference (seed 004), on the
    /// wire `int(id, 0, MAX_NETWORK_ID)` with 0 for none (see [`bitlens_codec::link`]).
    pub home_base: Option<NetworkId>,
    /// Name, at most [`MAX_NAME`] bytes of UTF-8.
    pub name: String,
    /// Indices of the mice it tracks: at most [`MAX_MICE`], each `0..=MAX_MOUSE`.
    pub mice: Vec<i32>,
    /// Location in tenths of a game unit on `±LOCATION_LIMIT` (±2000 units at 0.1).
    pub location: [i32; 3],
    /// Rotation `[x, y, z, w]`, [`ORIENTATION`].
    pub rotation: [f32; 4],
}

impl RoboCat {
    /// Serializes on any stream, accepting any home base id.
    ///
    /// # Errors
    /// Whatever the stream reports.
    pub fn serialize<S: Stream>(&mut self, s: &mut S) -> Result<()> {
        self.serialize_linked(s, &AnyId)
    }

    /// Serializes on any stream, insisting that the home base resolves in `links` (a
    /// [`bitlens_codec::link::LinkingContext`] of the receiving world).
    ///
    /// # Errors
    /// Whatever the stream reports; unresolved when the home base id is not in `links`.
    pub fn serialize_linked<S: Stream>(
        &mut self,
        s: &mut S,
        links: &(impl Links + ?Sized),
    ) -> Result<()> {
        s.int_as("health", &mut self.health, 0, 100)?;
        s.int_as("meow_count", &mut self.meow_count, 0, 1_000_000)?;
        link::serialize_id(s, "home_base", &mut self.home_base, MAX_NETWORK_ID, links)?;
        s.check("stats")?;
        s.string("name", &mut self.name, MAX_NAME)?;
        s.array("mice", &mut self.mice, MAX_MICE, 12, |s, m| {
            s.int_as("", m, 0, MAX_MOUSE)
        })?;
        s.check("mice")?;
        let loc = &mut self.location;
        s.scope("location", |s| {
            s.int_as("x", &mut loc[0], -LOCATION_LIMIT, LOCATION_LIMIT)?;
            s.int_as("y", &mut loc[1], -LOCATION_LIMIT, LOCATION_LIMIT)?;
            s.int_as("z", &mut loc[2], -LOCATION_LIMIT, LOCATION_LIMIT)
        })?;
        s.quaternion("rotation", &mut self.rotation, &ORIENTATION)
    }

    /// The location in game units.
    pub fn location_units(&self) -> [f32; 3] {
        self.location.map(|t| t as f32 / 10.0)
    }
}

impl BitPacked for RoboCat {
    const MIN_BITS: usize = bits_required(0, 100) as usize
        + bits_required(0, 1_000_000) as usize
        + bits_required(0, MAX_NETWORK_ID as i64) as usize
        + 32
        + bits_required(0, MAX_NAME as i64) as usize
        + bits_required(0, MAX_MICE as i64) as usize
        + 32
        + 3 * bits_required(-LOCATION_LIMIT as i64, LOCATION_LIMIT as i64) as usize
        + ORIENTATION.width() as usize;
    const FIELDS: bool = true;

    /// [`RoboCat::serialize`]: [`RoboCat::serialize_linked`] accepting any home base id.
    fn serialize<S: Stream>(&mut self, s: &mut S) -> Result<()> {
        RoboCat::serialize(self, s)
    }

    fn schema_type(w: &mut SchemaWriter) -> String {
        let name = w.define::<Self>("RoboCat", |w, name| {
            let location = w.define::<[i32; 3]>("Location", |_, name| {
                let axis = |a: &str| {
                    format!("name = \"{a}\", type = \"int\", min = {}, max = {LOCATION_LIMIT}", -LOCATION_LIMIT)
                };
                packed::struct_text(name, &[axis("x"), axis("y"), axis("z")])
            });
            let fields = [
                "name = \"health\", type = \"int\", min = 0, max = 100".to_owned(),
                "name = \"meow_count\", type = \"int\", min = 0, max = 1000000".to_owned(),
                format!("name = \"home_base\", type = \"int\", min = 0, max = {MAX_NETWORK_ID}"),
                "type = \"check\", label = \"stats\"".to_owned(),
                format!("name = \"name\", type = \"string\", max_len = {MAX_NAME}"),
                format!(
                    "name = \"mice\", type = \"array\", max_len = {MAX_MICE}, element = {{ type = \"int\", min = 0, max = {MAX_MOUSE} }}"
                ),
                "type = \"check\", label = \"mice\"".to_owned(),
                format!("name = \"location\", type = {}", packed::toml_str(&location)),
                format!("name = \"rotation\", type = \"quaternion\", bits = {}", ORIENTATION.bits()),
            ];
            packed::struct_text(name, &fields)
        });
        format!("type = {}", packed::toml_str(&name))
    }
}

/// Any packet of the demo protocol: the packet set (type numbers in declaration order, names,
/// protocol id, MTU) is derived.
#[derive(Debug, Clone, PartialEq, PacketSet)]
#[bitlens(protocol = "demo", id = PROTOCOL_ID, mtu = MTU)]
pub enum DemoPacket {
    /// Type 0.
    #[bitlens(name = "PacketA")]
    A(PacketA),
    /// Type 1.
    #[bitlens(name = "PacketB")]
    B(PacketB),
    /// Type 2.
    #[bitlens(name = "PacketC")]
    C(PacketC),
    /// Type 3: a rigid body, then a check marker.
    #[bitlens(check_after = "rigid body")]
    RigidBody(RigidBody),
    /// Type 4.
    SceneUpdate(SceneUpdate),
    /// Type 5.
    RoboCat(RoboCat),
}

impl Default for DemoPacket {
    fn default() -> Self {
        DemoPacket::A(PacketA::default())
    }
}

// ---- Arbitrary values that respect every declared range (for property tests and fuzzing) ----

/// A value the codec reproduces exactly: the decoding of a random code.
fn arb_compressed(u: &mut Unstructured<'_>, spec: &CompressedFloat) -> arbitrary::Result<f32> {
    Ok(spec.decode(u.int_in_range(0..=spec.steps())?))
}

fn arb_vec3(u: &mut Unstructured<'_>, spec: &CompressedFloat) -> arbitrary::Result<[f32; 3]> {
    Ok([
        arb_compressed(u, spec)?,
        arb_compressed(u, spec)?,
        arb_compressed(u, spec)?,
    ])
}

/// A rotation the codec reproduces exactly: the decoding of a canonical random encoding.
pub fn arb_rotation(u: &mut Unstructured<'_>) -> arbitrary::Result<[f32; 4]> {
    let max = ORIENTATION.max_code();
    let largest = u.int_in_range(0..=3)?;
    let mut codes = [0u32; 3];
    for c in &mut codes {
        // Keep components modest so the rebuilt largest stays the largest.
        *c = u.int_in_range(max / 4..=max - max / 4)?;
    }
    let q = ORIENTATION.decode(largest, codes);
    Ok(q.unwrap_or([0.0, 0.0, 0.0, 1.0]))
}

impl<'a> Arbitrary<'a> for PacketA {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(PacketA {
            x: u.arbitrary()?,
            y: u.arbitrary()?,
            z: u.arbitrary()?,
        })
    }
}

impl<'a> Arbitrary<'a> for PacketB {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        let n = u.int_in_range(0..=MAX_ELEMENTS)?;
        let elements = (0..n)
            .map(|_| u.arbitrary())
            .collect::<arbitrary::Result<_>>()?;
        Ok(PacketB { elements })
    }
}

impl<'a> Arbitrary<'a> for PacketC {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(PacketC {
            a: u.arbitrary()?,
            b: u.arbitrary()?,
            c: u.arbitrary()?,
        })
    }
}

impl<'a> Arbitrary<'a> for RigidBody {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        let position = arb_vec3(u, &POSITION)?;
        let orientation = arb_rotation(u)?;
        let at_rest = u.arbitrary()?;
        let (linear_velocity, angular_velocity) = if at_rest {
            ([0.0; 3], [0.0; 3])
        } else {
            (
                arb_vec3(u, &LINEAR_VELOCITY)?,
                arb_vec3(u, &ANGULAR_VELOCITY)?,
            )
        };
        Ok(RigidBody {
            position,
            orientation,
            at_rest,
            linear_velocity,
            angular_velocity,
        })
    }
}

impl<'a> Arbitrary<'a> for SceneUpdate {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        let sequence = u.arbitrary()?;
        let mut objects = Vec::new();
        let mut next = 0i64;
        // Up to 24 objects: a full update of that many moving bodies still fits the MTU.
        while objects.len() < 24 && next < MAX_OBJECTS && u.arbitrary::<bool>()? {
            let index = u.int_in_range(next..=(next + 300).min(MAX_OBJECTS - 1))?;
            objects.push(SceneObject {
                index: index as u16,
                body: u.arbitrary()?,
            });
            next = index + 1;
        }
        Ok(SceneUpdate { sequence, objects })
    }
}

impl<'a> Arbitrary<'a> for RoboCat {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        let health = u.int_in_range(0..=100)?;
        let meow_count = u.int_in_range(0..=1_000_000)?;
        let home_base = NetworkId::new(u.int_in_range(0..=MAX_NETWORK_ID)?);
        let mut name: String = u.arbitrary()?;
        // No NUL: serialize 1.0 refuses one in a string, and so does a writer.
        name.retain(|c| c != '\0');
        while name.len() > MAX_NAME {
            name.pop();
        }
        let n = u.int_in_range(0..=MAX_MICE)?;
        let mice = (0..n)
            .map(|_| u.int_in_range(0..=MAX_MOUSE))
            .collect::<arbitrary::Result<_>>()?;
        let mut location = [0; 3];
        for l in &mut location {
            *l = u.int_in_range(-LOCATION_LIMIT..=LOCATION_LIMIT)?;
        }
        Ok(RoboCat {
            health,
            meow_count,
            home_base,
            name,
            mice,
            location,
            rotation: arb_rotation(u)?,
        })
    }
}

impl<'a> Arbitrary<'a> for DemoPacket {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(match u.int_in_range(0..=5u8)? {
            0 => DemoPacket::A(u.arbitrary()?),
            1 => DemoPacket::B(u.arbitrary()?),
            2 => DemoPacket::C(u.arbitrary()?),
            3 => DemoPacket::RigidBody(u.arbitrary()?),
            4 => DemoPacket::SceneUpdate(u.arbitrary()?),
            _ => DemoPacket::RoboCat(u.arbitrary()?),
        })
    }
}

/// One valid packet of every type, with recognisable values (seed files, examples, captures).
pub fn samples() -> Vec<DemoPacket> {
    let body = RigidBody {
        position: [
            POSITION.decode(51200 + 150),
            POSITION.decode(51200),
            POSITION.decode(51200 - 2500),
        ],
        orientation: ORIENTATION
            .decode(3, [511, 600, 511])
            .unwrap_or([0.0, 0.0, 0.0, 1.0]),
        at_rest: false,
        linear_velocity: [
            LINEAR_VELOCITY.decode(3300),
            LINEAR_VELOCITY.decode(3200),
            LINEAR_VELOCITY.decode(3100),
        ],
        angular_velocity: [
            ANGULAR_VELOCITY.decode(1600),
            ANGULAR_VELOCITY.decode(1700),
            ANGULAR_VELOCITY.decode(1600),
        ],
    };
    let resting = RigidBody {
        at_rest: true,
        linear_velocity: [0.0; 3],
        angular_velocity: [0.0; 3],
        ..body.clone()
    };
    vec![
        DemoPacket::A(PacketA {
            x: 1,
            y: -2,
            z: 300_000,
        }),
        DemoPacket::B(PacketB {
            elements: vec![10, 20, 30, -40],
        }),
        DemoPacket::C(PacketC {
            a: true,
            b: -1234,
            c: 56789,
        }),
        DemoPacket::RigidBody(body.clone()),
        DemoPacket::SceneUpdate(SceneUpdate {
            sequence: 77,
            objects: vec![
                SceneObject {
                    index: 0,
                    body: resting.clone(),
                },
                SceneObject {
                    index: 5,
                    body: body.clone(),
                },
                SceneObject {
                    index: 4095,
                    body: resting,
                },
            ],
        }),
        DemoPacket::RoboCat(RoboCat {
            health: 87,
            meow_count: 12,
            home_base: NetworkId::new(42),
            name: "Mittens".into(),
            mice: vec![3, 17, 4095],
            location: [-12345, 0, 19999],
            rotation: ORIENTATION
                .decode(3, [511, 511, 700])
                .unwrap_or([0.0, 0.0, 0.0, 1.0]),
        }),
    ]
}
