//! Message batches of seed 002 (Unity's serialization RFC): many small byte-aligned messages per
//! frame, packed into MTU-sized batches without a heap allocation per message (WIRE.md
//! section 3).
//!
//! # Wire layout
//!
//! ```text
//! batch   = total:u16le message*            total counts every byte, these 2 included
//! message = type:u8 stage:u8 len:u16le body  len counts the body only
//!
//!  0     1     2     3     4     5     6 ...          6+len
//! +-----+-----+-----+-----+-----+-----+-----------+----- ...
//! |  total    | type|stage|   len     | body      | next message header ...
//! +-----+-----+-----+-----+-----+-----+-----------+----- ...
//! ```
//!
//! Bodies are written by [`ByteWriter`] and read by [`ByteReader`] through one serialize
//! function per [`Message`] (see [`stream`] for every primitive's layout): little-endian values,
//! whole plain-old-data structs in one copy (`bytemuck`), packed integers as the tagged
//! format's varints, strings with a packed length.
//!
//! # Guarantees
//!
//! - **Reading never panics and never allocates by an unchecked length.** A batch's declared
//!   length must equal the datagram's; every message length is checked against what remains;
//!   [`read_batch`] yields `Result<RawMessage>` and stops at the first corrupt message, naming
//!   it (index, byte offset, type). Unknown types are skipped by their length. Decoding a body
//!   must consume it exactly, so every accepted batch re-encodes to the same bytes.
//! - **Writing never exceeds the MTU.** A message whose size upper bound exceeds MTU - 6 is
//!   refused ([`BatchErrorKind::TooLarge`]) and not sent; a message that writes more than its
//!   bound fails ([`BatchErrorKind::BoundExceeded`]) and leaves nothing behind.
//! - **No heap allocation per message in steady state**: send queues, the scratch buffer and
//!   the incoming queues are allocated once, when the [`MessageSystem`] is built and clients
//!   are added; errors are `Copy`. `codec/batch/tests/batch_alloc.rs` counts allocations to prove it.
//! - Errors are [`BatchError`]s: the kind, the **byte** offset (within the datagram when
//!   reading a batch), the field name and the message. This layer has its own error type,
//!   rather than the bit-packed [`bitlens_codec::Error`], because that one allocates its field path.
//!
//! # Your messages: `#[derive(BatchStruct)]` and `#[derive(MessageEnum)]`
//!
//! One description per message: the derive writes its serialize function (every read
//! range-checked, the error naming the field and its byte), its size upper bound, and its
//! definition in the schema language (`[batch.struct.NAME]`, SCHEMA.md), so the compiled set,
//! `bitlens --schema` and the Wireshark export read the same bytes the same way.
//!
//! ```
//! use bitlens_batch::{
//!     BatchStruct, BatchWriter, InlineStr, InlineVec, Message, MessageEnum, MessagesOf,
//!     NetworkContext, UpdateStage, read_batch,
//! };
//! use bitlens_codec::link::NetworkId;
//!
//! #[derive(Debug, Clone, PartialEq, BatchStruct)]
//! #[batch(message_type = 1)]
//! struct Spawn {
//!     #[batch(max_id = 65535)]
//!     id: NetworkId,
//!     #[batch(range = 0..=100)]
//!     health: u8,
//!     name: InlineStr<16>,
//!     #[batch(element(range = 0..=4095))]
//!     loadout: InlineVec<u16, 8>,
//!     #[batch(abs_max = 20_000)]
//!     location: [i32; 3],
//! }
//!
//! impl Default for Spawn {
//!     fn default() -> Self {
//!         let id = NetworkId::new(1).expect("1 is an id");
//!         Spawn { id, health: 0, name: InlineStr::new(), loadout: InlineVec::new(), location: [0; 3] }
//!     }
//! }
//!
//! #[derive(Debug, Clone, PartialEq, Default, BatchStruct)]
//! #[batch(message_type = 2)]
//! struct Chat {
//!     #[batch(packed)]
//!     player: u32,
//!     #[batch(max_len = 120)]
//!     text: String,
//! }
//!
//! /// The game's state, and what each message does to it (the handlers stay hand-written).
//! #[derive(Default)]
//! struct World { chat: Vec<String> }
//!
//! impl Message for Spawn {
//!     type Handler = World;
//!     fn handle(&mut self, _: &NetworkContext, _: &mut World) {}
//! }
//! impl Message for Chat {
//!     type Handler = World;
//!     fn handle(&mut self, _: &NetworkContext, w: &mut World) { w.chat.push(self.text.clone()) }
//! }
//!
//! /// The set: decode, push, encode and its `[batch]` schema; `handler` adds `World`'s
//! /// `Dispatch` (each message decoded and handled, unknown types skipped by their length).
//! #[derive(Debug, Clone, PartialEq, MessageEnum)]
//! #[batch(handler = World)]
//! enum GameMessage {
//!     Spawn(Spawn),
//!     Chat(Chat),
//! }
//!
//! let mut buf = [0u8; 1200];
//! let mut w = BatchWriter::new(&mut buf)?;
//! let mut chat = GameMessage::Chat(Chat { player: 2, text: "gg".into() });
//! chat.push(&mut w, UpdateStage::UPDATE)?;
//! let n = w.finish();
//! for m in read_batch(&buf[..n])? {
//!     assert_eq!(GameMessage::decode(&m?)?, Some(chat.clone()));
//! }
//! // A health of 101 is refused on write, naming the field.
//! let mut bad = GameMessage::Spawn(Spawn { health: 101, ..Spawn::default() });
//! let e = bad.encode(&mut buf, UpdateStage::UPDATE).unwrap_err();
//! assert_eq!((e.kind().name(), e.field()), ("out_of_range", "health"));
//! // The same set in the schema language, and as the inspector's message set.
//! assert!(GameMessage::schema().contains(
//!     "{ name = \"loadout\", type = \"array\", max_len = 8, element = { type = \"u16\", min = 0, max = 4095 } }"
//! ));
//! let _dissector = bitlens_batch::BatchDissector::new("game-batch", MessagesOf::<GameMessage>::new());
//! # Ok::<(), bitlens_batch::BatchError>(())
//! ```
//!
//! A field's Rust type picks its wire form, and `#[batch(...)]` adds to it:
//!
//! | field type | attributes | wire (schema type) |
//! |---|---|---|
//! | `bool` | | 1 byte, 0 or 1 (`bool`) |
//! | `u8` `u16` `u32` `u64` | `range = MIN..=MAX` | little-endian (`u8` ... `u64`, `min`, `max`) |
//! | `i8` `i16` `i32` `i64` | `abs_max = N` | little-endian, `\|v\| <= N` (`i8` ... `i64`, `abs_max`) |
//! | `f32` `f64` | | raw IEEE-754 bits |
//! | `u32` `u64` `i32` `i64` | `packed` (and `range` / `abs_max`) | varint; zig-zag for signed (`packed_u32` ...) |
//! | `String` | `max_len = N` (required) | packed length, UTF-8 (`string`) |
//! | `InlineStr<N>` | | the same, `max_len = N`, never allocates |
//! | `Vec<u8>` | `max_len = N` (required) | packed length, bytes (`bytes`, `max_len`) |
//! | `[u8; N]` | | `N` raw bytes (`bytes`, `len`) |
//! | `[T; N]`, `T` a number | `range` / `abs_max` on every element | one copy of `N` little-endian values (`pod`, implied) |
//! | `Vec<T>` | `max_len = N` (required), `element(...)` | packed count, each element (`array`) |
//! | `InlineVec<T, N>` | `element(...)` | the same, `max_len = N`, never allocates |
//! | `NetworkId` | `max_id = N` (required) | packed id in `1..=N` (`packed_u32`, `min = 1`) |
//! | `Option<NetworkId>` | `max_id = N` (required) | packed id in `0..=N`, 0 for `None` |
//! | a `BatchStruct` | | its fields in a scope named after the field |
//! | a `BatchStruct` that is `bytemuck::Pod` | `pod` | one unchecked copy (`pod`, `element = "Name"`) |
//!
//! On any field: `name = "wire"` (its name in traces, errors and the schema), `if = flag` /
//! `unless = flag` (sent only when the earlier bool `flag` says so; absent it reads as
//! `Default`, and writing another value is refused, `invalid_value`), `skip` (not sent, reads
//! as `Default`). On the struct: `message_type = N` (a message: it also gets [`MessageBody`],
//! whose size upper bound is the constant `MAX_BYTES`), `exact_size` (the bound is the value's
//! counted size instead: for a message whose fields may take more than a datagram but whose
//! values are small; needs `Clone`), `name = "..."` (its schema name: letters, digits, `_`),
//! `crate = "path"`. On the enum: `handler = Type`.
//!
//! Wrong attributes are compile errors at the attribute that say the fix (a range whose minimum
//! exceeds its maximum or starts below 0 on an unsigned type, a `Vec` or `String` without
//! `max_len`, `abs_max` on an unsigned type, a guard that is not an earlier bool, a `NetworkId`
//! without `max_id`, a struct name that is not a TOML key); bounds given as constants are checked
//! by compile-time assertions at the field (a range outside its type, a `max_id` outside `u32`,
//! an array element that can take no bytes, a `Vec` element whose memory its wire bytes do not
//! pay for at 64 per byte, a `pod` struct with checks, guards, nested structs or padding, a
//! message that can exceed the largest body); two structs of one name with other fields, or two
//! messages of one name or type, are refused when the schema text is built or at compile time.
//! The schema loader's own bounds on the work a struct makes a reader do (SCHEMA.md "Bounds":
//! entries per byte, nesting depth) are not checked by the derive: compiled code reads such a
//! struct in time linear in its bytes, but `--schema` refuses its text. What the attributes
//! cannot say (a check across fields, a value computed on write) stays a hand-written
//! [`MessageBody`].
//!
//! # Example
//!
//! ```
//! use bitlens_batch as batch;
//! use bitlens_testkit::batch_demo::{self, ChatText, Ping, PingStamp};
//! use bitlens_batch::{BatchWriter, InlineStr, MessageBody, RawMessage, UpdateStage};
//!
//! let mut buf = [0u8; 1200];
//! let mut w = BatchWriter::new(&mut buf)?;
//! let stamp = PingStamp { sequence: 1, sent_ms: 500, frame: 30 };
//! w.push(UpdateStage::UPDATE, &mut Ping { stamp })?;
//! w.push(UpdateStage::UPDATE, &mut ChatText { player: 2, text: InlineStr::truncated("gg") })?;
//! let n = w.finish();
//! assert_eq!(&buf[..2], &(n as u16).to_le_bytes());
//!
//! for m in batch::read_batch(&buf[..n])? {
//!     let m: RawMessage = m?;
//!     match m.header.message_type {
//!         Ping::TYPE => assert_eq!(m.decode::<Ping>()?.stamp, stamp),
//!         ChatText::TYPE => assert_eq!(m.decode::<ChatText>()?.text.as_str(), "gg"),
//!         _ => {} // unknown types: skipped by their length
//!     }
//! }
//!
//! // A truncated batch is refused before any message is read.
//! assert!(batch::read_batch(&buf[..n - 1]).is_err());
//! // The same batch for people (`bitlens decode --json` prints this): one field tree, and
//! // per message its header and its range of the tree.
//! let d = batch::dissect_batch(&batch_demo::DemoMessages::new(), &buf[..n]);
//! let chat = &d.messages.as_ref().expect("a batch lists its messages")[1];
//! assert_eq!(chat.name, Some("ChatText"));
//! assert_eq!(d.trace.fields[chat.body.start].path(), "[1].player");
//! # Ok::<(), batch::BatchError>(())
//! ```

#![forbid(unsafe_code)]

pub mod dissect;
pub mod error;
pub mod link;
pub mod message;
pub mod queue;
pub mod stream;
pub mod structs;

pub use dissect::{
    BATCH, BatchDissector, MessageSet, check_batch, dissect_batch, dissect_batch_values,
};
pub use error::{BatchError, BatchErrorKind, MessageRef, Result};
pub use message::{
    BATCH_HEADER_LEN, BatchWriter, Channel, ClientId, MAX_MTU, MESSAGE_HEADER_LEN, Message,
    MessageBody, MessageHeader, Messages, NetworkContext, RawMessage, UpdateStage, encode_message,
    max_body, read_batch,
};
pub use queue::{Config, Dispatch, MessageSystem, ProcessReport, SendQueue, Stats, handle_raw};
/// What derived code names; not part of the API.
#[doc(hidden)]
pub mod __derive {
    pub use bitlens_codec::link::AnyId;
    pub use bitlens_codec::trace::Tracer;
}

#[cfg(feature = "derive")]
pub use bitlens_codec_derive::{BatchStruct, MessageEnum};
pub use stream::{
    ArrayStorage, ByteCounter, ByteReader, ByteStream, ByteWriter, InlineStr, InlineVec,
    LittleEndian, SliceKind,
};
pub use structs::{BatchStruct, MessageEnum, MessagesOf, SchemaWriter};
