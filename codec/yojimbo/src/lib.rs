//! bitlens-yojimbo: what a yojimbo game puts inside netcode's encrypted payload, read field
//! by field.
//!
//! **Reference matched**: yojimbo 1.9.1, github:mas-bandwidth/yojimbo
//! `463dcd0df6872e0c8c0cd3efa8405ec6a74d12e8` (its vendored reliable 1.4.0 and serialize 1.6.0),
//! checked against its own samples' traffic (`captures/yojimbo-*.pcap`; `YOJIMBO-NOTES.md`
//! at the repository root has the byte layouts from those captures and the ten places where
//! yojimbo's STANDARD.md and its code disagree; where they do, this crate reads what the code
//! reads).
//!
//! # The stack in one netcode payload
//!
//! ```text
//! netcode type-5 payload (decrypted, 1..=1200 bytes) = one reliable.io packet:
//!   regular:  [prefix u8: bit 0 = 0, bits 1..4 = ack_bits byte i present, bit 5 = 1-byte ack]
//!             [sequence u16 LE] [ack u16 LE | sequence - ack u8] [present ack_bits bytes]
//!             then the connection packet (at least one byte)
//!   fragment: [prefix = 1] [sequence u16 LE] [fragment id u8] [num fragments - 1 u8]
//!             fragment 0 only: the whole packet's regular header, written canonically
//!             then fragment data: exactly fragment_size bytes, the last at most that
//! connection packet (a serialize bit stream, least significant bit first):
//!   int(numChannelEntries, 0, numChannels), then per entry:
//!     [int(channelIndex, 0, numChannels - 1) when numChannels > 1] bool(blockMessage)
//!     messages:  bool(hasMessages) [int(numMessages, 1, maxMessagesPerPacket)]
//!       reliable-ordered:    bits(id[0], 16), sequence_relative(id[i-1], id[i]) for the rest,
//!                            then per message [int(type, 0, maxType) when maxType > 0] body
//!       unreliable-unordered: per message [type] body [int(blockSize, 1, maxBlockSize)
//!                            align bytes(block)] (the block only on block message types)
//!     fragment:  bits(messageId, 16) [int(numFragments, 1, maxFragmentsPerBlock) when that
//!                is > 1] [int(fragmentId, 0, numFragments - 1) when numFragments > 1]
//!                int(fragmentSize, 1, blockFragmentSize) align bytes(fragment)
//!                fragment 0 only: [type] body (the type must be a block message)
//! ```
//!
//! # Reader rules (what is refused, [`Refusal`])
//!
//! reliable.io ([`reliable::read`]): a header shorter than it announces; a set bit 0 in a
//! regular prefix; a fragment prefix other than 1; more fragments than `max_fragments`; a
//! fragment id not below the count; fragment 0's header with another sequence or not canonical;
//! fragment data over `fragment_size`, or not exactly it on a fragment before the last; a
//! datagram over `max_packet_size + 14`, a connection packet over `max_packet_size`.
//!
//! Connection packet ([`packet::read`], [`packet::trace`]): every "Receiver Obligation" of
//! STANDARD.md as its own [`RefusalKind`] (too many entries, a channel index, a message count,
//! a block fragment with `disableBlocks`, a fragment id or count, fragment 0 of a non-block
//! type, a body that fails: the whole packet fails); the code's extra rules (a block fragment
//! on an unreliable-unordered channel, an empty connection packet); and everything the
//! serialize layer refuses (past the end, a type out of range, non-zero alignment bits, an
//! absolute relative id not above the previous one). Not refused, as in the code: entries out
//! of channel order or repeated; a block message type as an ordinary message on a
//! reliable-ordered channel; anything after the last bit read. `maxFragmentsPerBlock` is
//! rounded up (the code), not truncated (the standard).
//!
//! Reassembly ([`Receiver`], one per direction of a connection; [`Connections`] keeps up to
//! [`connections::MAX_CONNECTIONS`] of them): packet fragments by sequence, block fragments by channel and message id, duplicates, resends and fragments that
//! disagree reported as [`Note`]s, blocks reported once whole with the datagrams they came
//! from; memory bounded by [`receiver::PENDING_PACKETS`], [`receiver::PENDING_PACKET_BYTES`],
//! [`receiver::PENDING_BLOCKS`], [`receiver::PENDING_BLOCK_BYTES`] and the configuration limits
//! of [`config`].
//!
//! # Message bodies
//!
//! The wire does not say where a body ends: the [`Config`] gives each message type a
//! [`BodyReader`] (a hand-written [`Body`] through [`Typed`], a `#[derive(BitPacked)]` struct
//! through [`Derived`]). A traced read records the body's fields under
//! `entries[i].messages[j].body`, and every [`Message`] keeps its body's bits.
//!
//! # Wired into the tools
//!
//! [`Yojimbo`] ([`transport`]) is the layer as a bitlens transport over netcode:
//! `--decode PORT=yojimbo` (with netcode's `--netcode-key` / `--netcode-keylog`) in `decode`
//! (text, `--fields`, `--json`), `check` and `inspect`; from Rust, `bitlens::Cli::yojimbo`
//! registers a game's own [`Config`]. Its sequential pass decrypts each payload packet and
//! feeds [`Connections`] (one [`Receiver`] per client, server and direction); its pure
//! per-datagram reading traces netcode's header, the reliable.io header, the connection packet,
//! and on the datagram that completed them the reassembled packet and each complete block. Not
//! yet: the proxy's re-encoding of a mutated message ([`write::write`] already writes a read
//! packet back) and the profile's per-channel rows.
#![forbid(unsafe_code)]

pub mod config;
pub mod connections;
pub mod error;
pub mod fuzzing;
pub mod packet;
pub mod receiver;
pub mod reliable;
pub mod transport;
pub mod write;

pub use config::{
    Body, BodyReader, ChannelConfig, ChannelType, Config, ConfigError, Derived, MessageType,
    NoBody, ReliableConfig, Typed,
};
pub use connections::Connections;
pub use error::{Refusal, RefusalKind};
pub use packet::{Bits, BlockFragment, BlockHead, ConnectionPacket, Content, Entry, Message};
pub use receiver::{CompleteBlock, Datagram, Note, PacketRead, Receiver};
pub use reliable::{FragmentHeader, Header, Reliable};
pub use transport::Yojimbo;
