//! The reference samples' message types and configurations as a game would give them from
//! Rust (hand-written `Body` readers, from `shared.h`, `soak.cpp`, `client.cpp` and
//! `server.cpp` of yojimbo 1.9.1): one copy for every test that reads the committed captures
//! (`codec/yojimbo/tests/captures.rs`; by `#[path]`, `codec/schema/tests/schema_yojimbo_captures.rs`
//! and `inspector/tests/yojimbo.rs`).
#![allow(dead_code)] // each test uses its own part

use std::sync::Arc;

use bitlens_codec::{Error, ErrorKind, Result, Stream};
use bitlens_yojimbo::{
    Body, ChannelConfig, ChannelType, Config, MessageType, NoBody, ReliableConfig, Typed,
};

/// `shared.h`'s dummy bit counts, by `sequence % 21`.
pub const DUMMY_BITS: [u32; 21] = [
    1, 320, 120, 4, 256, 45, 11, 13, 101, 100, 84, 95, 203, 2, 3, 8, 512, 5, 3, 7, 50,
];

/// `TestMessage`: `sequence` in 16 bits, then its dummy bits (32 at a time, then the rest).
#[derive(Default)]
pub struct TestMessage {
    pub sequence: u64,
}

impl Body for TestMessage {
    fn serialize<S: Stream>(&mut self, s: &mut S) -> Result<()> {
        s.bits("sequence", &mut self.sequence, 16)?;
        let n = DUMMY_BITS[(self.sequence % 21) as usize];
        let mut dummy = 0u64;
        for _ in 0..n / 32 {
            s.bits("dummy", &mut dummy, 32)?;
        }
        if !n.is_multiple_of(32) {
            s.bits("dummy", &mut dummy, n % 32)?;
        }
        Ok(())
    }
}

/// `TestBlockMessage`: `sequence` in 16 bits.
#[derive(Default)]
pub struct TestBlockMessage {
    pub sequence: u64,
}

impl Body for TestBlockMessage {
    fn serialize<S: Stream>(&mut self, s: &mut S) -> Result<()> {
        s.bits("sequence", &mut self.sequence, 16)
    }
}

/// `TestSerializeFailOnReadMessage`: its reader always fails.
#[derive(Default)]
pub struct FailOnRead;

impl Body for FailOnRead {
    fn serialize<S: Stream>(&mut self, s: &mut S) -> Result<()> {
        if S::READING {
            let kind = ErrorKind::InvalidArgument("fails on read".to_owned());
            return Err(Error::new(kind, s.bit_position(), "fail"));
        }
        Ok(())
    }
}

pub fn message_types() -> Vec<MessageType> {
    vec![
        MessageType::new("TestMessage", false, Arc::new(Typed::<TestMessage>::new())),
        MessageType::new(
            "TestBlockMessage",
            true,
            Arc::new(Typed::<TestBlockMessage>::new()),
        ),
        MessageType::new(
            "TestSerializeFailOnReadMessage",
            false,
            Arc::new(Typed::<FailOnRead>::new()),
        ),
        MessageType::new(
            "TestExhaustStreamAllocatorOnReadMessage",
            false,
            Arc::new(NoBody),
        ),
    ]
}

/// `soak.cpp`'s configuration.
pub fn soak_config() -> Config {
    let mut unreliable = ChannelConfig::new(ChannelType::UnreliableUnordered);
    unreliable.max_block_size = 8192;
    let mut reliable = ChannelConfig::new(ChannelType::ReliableOrdered);
    reliable.max_block_size = 10240;
    Config {
        reliable: ReliableConfig {
            max_packet_size: 16384,
            fragment_size: 1024,
            max_fragments: 16,
        },
        channels: vec![unreliable, reliable],
        message_types: message_types(),
    }
}

/// `client.cpp` / `server.cpp`: `ClientServerConfig`'s defaults, two reliable-ordered channels.
pub fn client_server_config() -> Config {
    Config {
        reliable: ReliableConfig::default(),
        channels: vec![ChannelConfig::new(ChannelType::ReliableOrdered); 2],
        message_types: message_types(),
    }
}
