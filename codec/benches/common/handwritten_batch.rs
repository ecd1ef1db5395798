//! The demo's batch messages as they were written by hand before `#[derive(BatchStruct)]`
//! (commit c222e5e's `codec/testkit/src/batch_demo.rs`), over the same types: the baseline of
//! the batch derive's zero-cost check. `Hand(m)` sends a demo message with these functions; the
//! message itself sends with the derived ones. Both write the same bytes (the bench and the
//! count example assert it). The only change: the spawn's mice are an `InlineVec` now (they
//! were an array and a count), so both sides read the same type.

#![allow(dead_code)]

use bitlens_batch::error::{BatchError, BatchErrorKind, Result};
use bitlens_batch::{ByteStream, LittleEndian, MessageBody};
use bitlens_codec::link::AnyId;
use bitlens_testkit::batch_demo::{
    ChatText, DemoMessage, Despawn, MAX_CHAT, MAX_NETWORK_ID, MoveRigidBody, Ping, PingStamp, Pong,
    SpawnRoboCat, samples,
};
use bitlens_testkit::demo::{LOCATION_LIMIT, MAX_MICE, MAX_MOUSE, MAX_NAME};

/// A demo message sent by the hand-written functions.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Hand<M>(pub M);

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

impl MessageBody for Hand<SpawnRoboCat> {
    const TYPE: u8 = 1;
    const NAME: &'static str = "SpawnRoboCat";

    fn size_upper_bound(&self) -> usize {
        5 + 1 + 5 + 5 + (2 + MAX_NAME) + (1 + 2 * MAX_MICE) + 12 + 16
    }

    fn serialize<S: ByteStream>(&mut self, s: &mut S) -> Result<()> {
        let m = &mut self.0;
        bitlens_batch::link::serialize_object_id_bytes(
            s,
            "network_id",
            &mut m.network_id,
            MAX_NETWORK_ID,
        )?;
        let at = s.base() + s.position();
        s.u8("health", &mut m.health)?;
        if m.health > 100 {
            return Err(out_of_range(u64::from(m.health), 0, 100, at, "health"));
        }
        ranged(s, "meow_count", &mut m.meow_count, 1_000_000)?;
        bitlens_batch::link::serialize_id_bytes(
            s,
            "home_base",
            &mut m.home_base,
            MAX_NETWORK_ID,
            &AnyId,
        )?;
        s.text("name", &mut m.name)?;
        let mut n = m.mice.len();
        s.length("mice", &mut n, MAX_MICE, 2)?;
        if S::READING {
            m.mice.reset(n);
        }
        let mice = m.mice.as_mut_slice();
        s.scope("mice", |s| {
            for (i, mouse) in mice.iter_mut().enumerate() {
                let at = s.base() + s.position();
                s.index(i, |s| s.u16("", mouse))?;
                if i32::from(*mouse) > MAX_MOUSE {
                    return Err(out_of_range(
                        u64::from(*mouse),
                        0,
                        MAX_MOUSE as u64,
                        at,
                        "mice",
                    ));
                }
            }
            Ok(())
        })?;
        let at = s.base() + s.position();
        s.pod("location", &mut m.location)?;
        if m.location
            .iter()
            .any(|l| l.unsigned_abs() > LOCATION_LIMIT as u32)
        {
            let worst = m
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
        s.pod("rotation", &mut m.rotation)
    }
}

impl MessageBody for Hand<MoveRigidBody> {
    const TYPE: u8 = 2;
    const NAME: &'static str = "MoveRigidBody";

    fn size_upper_bound(&self) -> usize {
        5 + 12 + 16 + 1 + 12 + 12
    }

    fn serialize<S: ByteStream>(&mut self, s: &mut S) -> Result<()> {
        let m = &mut self.0;
        bitlens_batch::link::serialize_object_id_bytes(
            s,
            "network_id",
            &mut m.network_id,
            MAX_NETWORK_ID,
        )?;
        let b = &mut m.body;
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
}

impl MessageBody for Hand<ChatText> {
    const TYPE: u8 = 3;
    const NAME: &'static str = "ChatText";

    fn size_upper_bound(&self) -> usize {
        5 + 2 + MAX_CHAT
    }

    fn serialize<S: ByteStream>(&mut self, s: &mut S) -> Result<()> {
        s.packed_u32("player", &mut self.0.player)?;
        s.text("text", &mut self.0.text)
    }
}

impl MessageBody for Hand<Ping> {
    const TYPE: u8 = 4;
    const NAME: &'static str = "Ping";

    fn size_upper_bound(&self) -> usize {
        std::mem::size_of::<PingStamp>()
    }

    fn serialize<S: ByteStream>(&mut self, s: &mut S) -> Result<()> {
        s.pod("stamp", &mut self.0.stamp)
    }
}

impl MessageBody for Hand<Pong> {
    const TYPE: u8 = 5;
    const NAME: &'static str = "Pong";

    fn size_upper_bound(&self) -> usize {
        std::mem::size_of::<PingStamp>() + 4
    }

    fn serialize<S: ByteStream>(&mut self, s: &mut S) -> Result<()> {
        s.pod("stamp", &mut self.0.stamp)?;
        s.u32("handled_ms", &mut self.0.handled_ms)
    }
}

impl MessageBody for Hand<Despawn> {
    const TYPE: u8 = 6;
    const NAME: &'static str = "Despawn";

    fn size_upper_bound(&self) -> usize {
        5
    }

    fn serialize<S: ByteStream>(&mut self, s: &mut S) -> Result<()> {
        bitlens_batch::link::serialize_object_id_bytes(
            s,
            "network_id",
            &mut self.0.network_id,
            MAX_NETWORK_ID,
        )
    }
}

/// The demo's sample of each message, by a short name.
pub fn messages() -> Vec<(&'static str, DemoMessage)> {
    let names = ["spawn", "move", "chat", "ping", "pong", "despawn"];
    names.into_iter().zip(samples()).collect()
}
