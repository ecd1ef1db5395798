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
//! # Example
//!
//! ```
//! use bitlens_batch as batch;
//! use bitlens_testkit::batch_demo::{self, ChatText, Ping, PingStamp};
//! use bitlens_batch::{BatchWriter, InlineStr, Message, RawMessage, UpdateStage};
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
//! let d = batch::dissect_batch(&batch_demo::DemoMessages, &buf[..n]);
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

pub use dissect::{
    BATCH, BatchDissector, MessageSet, check_batch, dissect_batch, dissect_batch_values,
};
pub use error::{BatchError, BatchErrorKind, MessageRef, Result};
pub use message::{
    BATCH_HEADER_LEN, BatchWriter, Channel, ClientId, MAX_MTU, MESSAGE_HEADER_LEN, Message,
    MessageHeader, Messages, NetworkContext, RawMessage, UpdateStage, encode_message, max_body,
    read_batch,
};
pub use queue::{Config, Dispatch, MessageSystem, ProcessReport, SendQueue, Stats, handle_raw};
pub use stream::{
    ByteCounter, ByteReader, ByteStream, ByteWriter, InlineStr, LittleEndian, SliceKind,
};
