//! The demo protocol's packets as they were written by hand before the derive (commit e163a44's
//! `codec/testkit/src/demo.rs`), over the same types: the baseline of the derive's zero-cost
//! check. `Hand` frames a `DemoPacket` with these functions; `DemoPacket` itself frames with the
//! derived ones. Both write the same bytes (the bench and the count example assert it).

#![allow(dead_code)]

use bitlens_codec::error::{Error, ErrorKind, Result};
use bitlens_codec::packet::{Packet, Protocol};
use bitlens_codec::stream::Stream;
use bitlens_testkit::demo::{
    ANGULAR_VELOCITY, DemoPacket, LINEAR_VELOCITY, MAX_ELEMENTS, MAX_OBJECTS, ORIENTATION,
    POSITION, PacketA, PacketB, PacketC, RigidBody, SceneObject, SceneUpdate,
};

fn packet_a<S: Stream>(p: &mut PacketA, s: &mut S) -> Result<()> {
    s.int_as("x", &mut p.x, i32::MIN, i32::MAX)?;
    s.int_as("y", &mut p.y, i32::MIN, i32::MAX)?;
    s.int_as("z", &mut p.z, i32::MIN, i32::MAX)
}

fn packet_b<S: Stream>(p: &mut PacketB, s: &mut S) -> Result<()> {
    s.array("elements", &mut p.elements, MAX_ELEMENTS, 32, |s, e| {
        s.int_as("", e, i32::MIN, i32::MAX)
    })
}

fn packet_c<S: Stream>(p: &mut PacketC, s: &mut S) -> Result<()> {
    s.bool("a", &mut p.a)?;
    s.int_as("b", &mut p.b, i16::MIN, i16::MAX)?;
    s.int_as("c", &mut p.c, i32::MIN, i32::MAX)
}

fn rigid_body<S: Stream>(b: &mut RigidBody, s: &mut S) -> Result<()> {
    s.compressed_vec3("position", &mut b.position, &POSITION)?;
    s.quaternion("orientation", &mut b.orientation, &ORIENTATION)?;
    if S::WRITING && b.at_rest && (b.linear_velocity != [0.0; 3] || b.angular_velocity != [0.0; 3])
    {
        let why = "a body at rest has a non-zero velocity".to_owned();
        return Err(Error::new(
            ErrorKind::InvalidArgument(why),
            s.bit_position(),
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
    s.compressed_vec3("linear_velocity", &mut b.linear_velocity, &LINEAR_VELOCITY)?;
    s.compressed_vec3(
        "angular_velocity",
        &mut b.angular_velocity,
        &ANGULAR_VELOCITY,
    )
}

fn scene_update<S: Stream>(u: &mut SceneUpdate, s: &mut S) -> Result<()> {
    s.int_as("sequence", &mut u.sequence, 0, u16::MAX)?;
    s.check("header")?;
    let objects = &mut u.objects;
    s.scope("objects", |s| {
        let mut previous = -1i64;
        if S::WRITING {
            for (i, o) in objects.iter_mut().enumerate() {
                s.index(i, |s| {
                    let mut current = i64::from(o.index);
                    s.object_index("index", previous, &mut current, MAX_OBJECTS)?;
                    rigid_body(&mut o.body, s)
                })?;
                previous = i64::from(o.index);
            }
            let mut end = MAX_OBJECTS;
            return s.index(objects.len(), |s| {
                s.object_index("index", previous, &mut end, MAX_OBJECTS)
            });
        }
        objects.clear();
        loop {
            let i = objects.len();
            let done = s.index(i, |s| {
                let mut current = 0;
                s.object_index("index", previous, &mut current, MAX_OBJECTS)?;
                if current == MAX_OBJECTS {
                    return Ok(true);
                }
                let mut o = SceneObject {
                    index: current as u16,
                    body: RigidBody::default(),
                };
                rigid_body(&mut o.body, s)?;
                objects.push(o);
                previous = current;
                Ok(false)
            })?;
            if done {
                return Ok(());
            }
        }
    })?;
    s.check("objects")
}

/// A demo packet framed with the hand-written serialize functions.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Hand(pub DemoPacket);

impl Packet for Hand {
    fn protocol() -> &'static Protocol {
        DemoPacket::protocol()
    }

    fn packet_type(&self) -> u32 {
        match self.0 {
            DemoPacket::A(_) => 0,
            DemoPacket::B(_) => 1,
            DemoPacket::C(_) => 2,
            DemoPacket::RigidBody(_) => 3,
            DemoPacket::SceneUpdate(_) => 4,
            DemoPacket::RoboCat(_) => 5,
        }
    }

    fn empty(t: u32) -> Option<Self> {
        Some(Hand(match t {
            0 => DemoPacket::A(PacketA::default()),
            1 => DemoPacket::B(PacketB::default()),
            2 => DemoPacket::C(PacketC::default()),
            3 => DemoPacket::RigidBody(RigidBody::default()),
            4 => DemoPacket::SceneUpdate(SceneUpdate::default()),
            5 => DemoPacket::RoboCat(Default::default()),
            _ => return None,
        }))
    }

    fn serialize_body<S: Stream>(&mut self, s: &mut S) -> Result<()> {
        match &mut self.0 {
            DemoPacket::A(p) => packet_a(p, s),
            DemoPacket::B(p) => packet_b(p, s),
            DemoPacket::C(p) => packet_c(p, s),
            DemoPacket::RigidBody(p) => {
                rigid_body(p, s)?;
                s.check("rigid body")
            }
            DemoPacket::SceneUpdate(p) => scene_update(p, s),
            DemoPacket::RoboCat(p) => p.serialize(s),
        }
    }
}

/// The packets of the comparison: a scene update and a PacketB that fill the MTU, and one rigid
/// body, PacketA and PacketC (the samples').
pub fn packets() -> Vec<(&'static str, DemoPacket)> {
    use bitlens_codec::packet::measure_packet;
    use bitlens_testkit::demo::{MTU, samples};
    let s = samples();
    let body = match &s[3] {
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
        if measure_packet(&mut p).unwrap_or(usize::MAX) > MTU * 8 {
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
        ("rigid_body", s[3].clone()),
        ("packet_a", s[0].clone()),
        ("packet_c", s[2].clone()),
    ]
}
