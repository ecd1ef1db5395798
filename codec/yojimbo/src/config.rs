//! What the wire does not carry: the reliable.io settings, the channels and the message types
//! a yojimbo connection was built with, and the game's message body readers.

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use bitlens_codec::{BitPacked, ReadStream, Result, Stream, TraceStream};

/// yojimbo's `MaxChannels`: a connection has 1 to 64 channels.
pub const MAX_CHANNELS: usize = 64;
/// The most message types a configuration may register (yojimbo has no limit; the type is
/// `serialize_int(type, 0, numTypes - 1)`, so this bounds its width at 16 bits).
pub const MAX_MESSAGE_TYPES: usize = 65_536;
/// The largest `maxMessagesPerPacket` a configuration may give (yojimbo's default is 256): it
/// bounds how many messages one channel entry may claim, and so what a read allocates for them.
pub const MAX_MESSAGES_PER_PACKET: u32 = 4096;
/// The largest `maxBlockSize` a configuration may give (yojimbo's default is 256 KiB): a
/// reassembled block is at most this large.
pub const MAX_BLOCK_SIZE: u32 = 16 << 20;
/// The largest reliable.io `max_packet_size` a configuration may give (yojimbo's default is
/// 8 KiB): a reassembled connection packet is at most this large.
pub const MAX_PACKET_SIZE: u32 = 1 << 20;
/// reliable.io sends `num_fragments - 1` in one byte: at most 256 fragments per packet.
pub const MAX_PACKET_FRAGMENTS: u32 = 256;

/// How a channel frames its messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChannelType {
    /// `CHANNEL_TYPE_RELIABLE_ORDERED`: message ids on the wire (all ids, then all types and
    /// bodies); blocks go as block fragments.
    ReliableOrdered,
    /// `CHANNEL_TYPE_UNRELIABLE_UNORDERED`: no ids on the wire (a message takes the reliable
    /// packet's sequence as its id); type, body and block interleaved per message.
    UnreliableUnordered,
}

/// One channel's settings (yojimbo's `ChannelConfig`, the fields that change the wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChannelConfig {
    /// The channel's type.
    pub kind: ChannelType,
    /// `maxMessagesPerPacket`: the range of an entry's message count, `1..=this`.
    pub max_messages_per_packet: u32,
    /// `maxBlockSize`: the largest block, in bytes.
    pub max_block_size: u32,
    /// `blockFragmentSize`: the largest block fragment, in bytes.
    pub block_fragment_size: u32,
    /// `disableBlocks`: a block fragment on this channel is refused.
    pub disable_blocks: bool,
}

impl ChannelConfig {
    /// yojimbo's `ChannelConfig` defaults with the given type: 256 messages per packet, 256 KiB
    /// blocks in 1 KiB fragments, blocks enabled.
    pub fn new(kind: ChannelType) -> Self {
        ChannelConfig {
            kind,
            max_messages_per_packet: 256,
            max_block_size: 256 * 1024,
            block_fragment_size: 1024,
            disable_blocks: false,
        }
    }

    /// `GetMaxFragmentsPerBlock`: `maxBlockSize / blockFragmentSize` rounded **up** (the code;
    /// STANDARD.md divides without rounding, see YOJIMBO-NOTES.md, disagreement 2).
    pub fn max_fragments_per_block(&self) -> u32 {
        self.max_block_size
            .div_ceil(self.block_fragment_size.max(1))
    }
}

/// reliable.io's settings that decide what a receiver accepts (yojimbo's `ClientServerConfig`:
/// `maxPacketSize`, `packetFragmentSize`, `maxPacketFragments`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReliableConfig {
    /// The largest connection packet, in bytes (after reassembly).
    pub max_packet_size: u32,
    /// The size of every fragment but the last one.
    pub fragment_size: u32,
    /// The most fragments one packet may have.
    pub max_fragments: u32,
}

impl Default for ReliableConfig {
    /// yojimbo's `ClientServerConfig` defaults: 8 KiB packets in 1 KiB fragments, 8 of them.
    fn default() -> Self {
        ReliableConfig {
            max_packet_size: 8192,
            fragment_size: 1024,
            max_fragments: 8,
        }
    }
}

/// Reads one message type's body: what the game's `Serialize` does with a read stream.
///
/// Object safe, so a configuration holds one per type; the codec's [`Stream`] is generic, so a
/// reader has two entry points, the plain read (a verdict) and the traced read (every field
/// recorded). Implement it through [`Typed`] (a hand-written [`Body`]) or [`Derived`] (a
/// `#[derive(BitPacked)]` struct), rarely by hand. A schema's message bodies would plug in the
/// same way: an implementation holding a compiled schema struct that reads it through the
/// schema interpreter on both streams.
pub trait BodyReader: Send + Sync {
    /// Reads the body, range-checking every value.
    ///
    /// # Errors
    /// Whatever the body's read refuses; the error names the bit and the field.
    fn read(&self, s: &mut ReadStream<'_>) -> Result<()>;

    /// Reads the body like [`BodyReader::read`], recording every field.
    ///
    /// # Errors
    /// As [`BodyReader::read`].
    fn trace(&self, s: &mut TraceStream<'_>) -> Result<()>;
}

/// A message body written as one `serialize` function over any [`Stream`], as yojimbo's own
/// messages are (`template <typename Stream> bool Serialize(Stream &)`).
pub trait Body: Default {
    /// Serializes the body on any stream.
    ///
    /// # Errors
    /// Whatever the stream refuses.
    fn serialize<S: Stream>(&mut self, s: &mut S) -> Result<()>;
}

/// The [`BodyReader`] of a hand-written [`Body`] type.
pub struct Typed<T>(PhantomData<fn() -> T>);

impl<T> Typed<T> {
    /// The reader of `T`'s bodies.
    pub fn new() -> Self {
        Typed(PhantomData)
    }
}

impl<T> Default for Typed<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Body> BodyReader for Typed<T> {
    fn read(&self, s: &mut ReadStream<'_>) -> Result<()> {
        T::default().serialize(s)
    }
    fn trace(&self, s: &mut TraceStream<'_>) -> Result<()> {
        T::default().serialize(s)
    }
}

/// The [`BodyReader`] of a `#[derive(BitPacked)]` type: its fields are the body.
pub struct Derived<T>(PhantomData<fn() -> T>);

impl<T> Derived<T> {
    /// The reader of `T`'s bodies.
    pub fn new() -> Self {
        Derived(PhantomData)
    }
}

impl<T> Default for Derived<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: BitPacked + Default> BodyReader for Derived<T> {
    fn read(&self, s: &mut ReadStream<'_>) -> Result<()> {
        T::default().serialize(s)
    }
    fn trace(&self, s: &mut TraceStream<'_>) -> Result<()> {
        T::default().serialize(s)
    }
}

/// A body of no bits (a message that is only its type).
#[derive(Debug, Default, Clone, Copy)]
pub struct NoBody;

impl BodyReader for NoBody {
    fn read(&self, _: &mut ReadStream<'_>) -> Result<()> {
        Ok(())
    }
    fn trace(&self, _: &mut TraceStream<'_>) -> Result<()> {
        Ok(())
    }
}

/// One registered message type.
#[derive(Clone)]
pub struct MessageType {
    /// Its name, for people (the trace uses the index).
    pub name: String,
    /// A block message (`YOJIMBO_MESSAGE_FACTORY` with `BlockMessage` as its base).
    pub block: bool,
    /// Reads its body.
    pub body: Arc<dyn BodyReader>,
}

impl MessageType {
    /// A message type.
    pub fn new(name: &str, block: bool, body: Arc<dyn BodyReader>) -> Self {
        MessageType {
            name: name.to_owned(),
            block,
            body,
        }
    }
}

impl fmt::Debug for MessageType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MessageType")
            .field("name", &self.name)
            .field("block", &self.block)
            .finish_non_exhaustive()
    }
}

/// A yojimbo connection's configuration: everything a reader needs that the wire leaves out.
#[derive(Debug, Clone)]
pub struct Config {
    /// reliable.io's receive limits.
    pub reliable: ReliableConfig,
    /// The channels, by index.
    pub channels: Vec<ChannelConfig>,
    /// The message factory's types, by index.
    pub message_types: Vec<MessageType>,
}

/// A configuration no yojimbo connection can have, or one past this crate's limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "yojimbo configuration: {}", self.0)
    }
}

impl std::error::Error for ConfigError {}

fn within(what: &str, v: u32, lo: u32, hi: u32) -> std::result::Result<(), ConfigError> {
    if (lo..=hi).contains(&v) {
        Ok(())
    } else {
        Err(ConfigError(format!(
            "{what} is {v}, not within {lo}..={hi}"
        )))
    }
}

impl Config {
    /// Checks every setting against yojimbo's rules and this crate's limits (the constants of
    /// this module), so that no read sizes anything by an unchecked setting.
    ///
    /// # Errors
    /// The first setting out of its range, named.
    pub fn validate(&self) -> std::result::Result<(), ConfigError> {
        let r = &self.reliable;
        within("max_packet_size", r.max_packet_size, 1, MAX_PACKET_SIZE)?;
        within("fragment_size", r.fragment_size, 1, 65_536)?;
        within("max_fragments", r.max_fragments, 1, MAX_PACKET_FRAGMENTS)?;
        if self.channels.is_empty() || self.channels.len() > MAX_CHANNELS {
            let n = self.channels.len();
            return Err(ConfigError(format!(
                "{n} channels, not within 1..={MAX_CHANNELS}"
            )));
        }
        if self.message_types.is_empty() || self.message_types.len() > MAX_MESSAGE_TYPES {
            let n = self.message_types.len();
            return Err(ConfigError(format!(
                "{n} message types, not within 1..={MAX_MESSAGE_TYPES}"
            )));
        }
        for (i, c) in self.channels.iter().enumerate() {
            let name = |f: &str| format!("channel {i} {f}");
            within(
                &name("max_messages_per_packet"),
                c.max_messages_per_packet,
                1,
                MAX_MESSAGES_PER_PACKET,
            )?;
            within(&name("max_block_size"), c.max_block_size, 1, MAX_BLOCK_SIZE)?;
            within(
                &name("block_fragment_size"),
                c.block_fragment_size,
                1,
                c.max_block_size,
            )?;
        }
        Ok(())
    }

    /// `maxMessageType`: the number of message types minus one (0: the type is not sent).
    pub fn max_message_type(&self) -> i64 {
        self.message_types.len() as i64 - 1
    }
}
