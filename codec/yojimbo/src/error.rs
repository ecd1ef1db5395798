//! Why a reliable.io header or a connection packet is refused: every refusal names the field
//! (its trace path), the bit (from the start of the data it was read from) and the rule.

use std::fmt;

/// What rule a refusal applies.
#[derive(Debug, Clone, PartialEq)]
pub enum RefusalKind {
    /// The serialize layer refused a field (past the end, a value out of its range, non-zero
    /// alignment bits, a relative id that does not increase): the codec's own error.
    Wire(bitlens_codec::ErrorKind),
    /// Receiver obligation: `numChannelEntries > numChannels`.
    TooManyEntries {
        /// The count found.
        value: i128,
        /// `numChannels`.
        max: i128,
    },
    /// Receiver obligation: a `channelIndex` outside `0..=numChannels - 1`.
    ChannelIndex {
        /// The index found.
        value: i128,
        /// `numChannels - 1`.
        max: i128,
    },
    /// Receiver obligation: `numMessages` outside `1..=maxMessagesPerPacket`.
    MessageCount {
        /// The count found.
        value: i128,
        /// `maxMessagesPerPacket`.
        max: i128,
    },
    /// Receiver obligation: a block fragment on a channel with `disableBlocks`.
    BlocksDisabled {
        /// The channel.
        channel: usize,
    },
    /// Receiver obligation: `fragmentId >= numFragments`.
    FragmentId {
        /// The id found.
        value: i128,
        /// `numFragments`.
        num_fragments: i128,
    },
    /// Receiver obligation: `numFragments` outside `1..=maxFragmentsPerBlock`.
    FragmentCount {
        /// The count found.
        value: i128,
        /// `maxFragmentsPerBlock`.
        max: i128,
    },
    /// Receiver obligation: fragment 0 names a message type that is not a block message.
    NotABlockMessage {
        /// The type found.
        message_type: u32,
    },
    /// Receiver obligation: a message body failed to read; the packet fails as a whole.
    Body {
        /// The message's type.
        message_type: u32,
        /// What the body's reader refused.
        error: bitlens_codec::ErrorKind,
    },
    /// The code's rule (not in STANDARD.md): a block fragment on an unreliable-unordered
    /// channel (`UnreliableUnorderedChannel::ProcessPacketData` puts the channel in error).
    BlockOnUnreliableChannel {
        /// The channel.
        channel: usize,
    },
    /// The code's rule: a reliable packet with no byte after its header (`ProcessPacket`).
    EmptyPacket,
    /// reliable.io: a datagram too short for the header it announces.
    ReliableTooShort {
        /// Bytes the header needs.
        needed: usize,
        /// Bytes there are.
        bytes: usize,
    },
    /// reliable.io: a fragment's prefix byte is not exactly 1.
    FragmentPrefix {
        /// The prefix found.
        prefix: u8,
    },
    /// reliable.io: more packet fragments than `max_fragments`.
    PacketFragmentCount {
        /// The count found.
        value: u32,
        /// `max_fragments`.
        max: u32,
    },
    /// reliable.io: a fragment id not below the fragment count.
    PacketFragmentId {
        /// The id found.
        value: u32,
        /// The fragment count.
        num_fragments: u32,
    },
    /// reliable.io: fragment 0's packet header carries another sequence than its fragment header.
    FragmentSequence {
        /// The fragment header's sequence.
        fragment: u16,
        /// The packet header's sequence.
        packet: u16,
    },
    /// reliable.io: fragment 0's packet header is not written the one way the writer writes it
    /// (the reassembler re-encodes it).
    NonCanonicalHeader,
    /// reliable.io: fragment data larger than `fragment_size`, or a fragment other than the
    /// last one not exactly `fragment_size`.
    FragmentSize {
        /// The bytes found.
        bytes: usize,
        /// `fragment_size`.
        fragment_size: usize,
        /// Whether it is the last fragment.
        last: bool,
    },
    /// reliable.io: a connection packet larger than `max_packet_size`.
    PacketTooLarge {
        /// Its bytes.
        bytes: usize,
        /// `max_packet_size`.
        max: usize,
    },
}

/// A refusal: the rule, the bit and the field.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    /// The rule.
    pub kind: RefusalKind,
    /// The bit where the refused field starts, from the start of the data read (the datagram's
    /// netcode payload for reliable.io's fields, the connection packet for the rest).
    pub bit: usize,
    /// The refused field's trace path (`entries[0].channel`, `reliable.prefix`).
    pub field: String,
}

impl Refusal {
    /// A refusal of `field` at `bit`.
    pub fn new(kind: RefusalKind, bit: usize, field: &str) -> Self {
        Refusal {
            kind,
            bit,
            field: field.to_owned(),
        }
    }

    /// The codec's error as a refusal: its bit, field and kind.
    pub fn wire(e: &bitlens_codec::Error) -> Self {
        Refusal::new(RefusalKind::Wire(e.kind().clone()), e.bit(), e.field())
    }

    /// This refusal as a codec error (for a [`bitlens_codec::Trace`]'s verdict): the codec's
    /// own kind for a wire refusal, else an invalid-argument error carrying this text.
    pub fn to_codec(&self) -> bitlens_codec::Error {
        let kind = match &self.kind {
            RefusalKind::Wire(k) => k.clone(),
            _ => bitlens_codec::ErrorKind::InvalidArgument(self.rule()),
        };
        bitlens_codec::Error::new(kind, self.bit, &self.field)
    }

    /// Whether STANDARD.md lists the rule among its "Receiver Obligations".
    pub fn is_obligation(&self) -> bool {
        matches!(
            self.kind,
            RefusalKind::TooManyEntries { .. }
                | RefusalKind::ChannelIndex { .. }
                | RefusalKind::MessageCount { .. }
                | RefusalKind::BlocksDisabled { .. }
                | RefusalKind::FragmentId { .. }
                | RefusalKind::FragmentCount { .. }
                | RefusalKind::NotABlockMessage { .. }
                | RefusalKind::Body { .. }
        )
    }

    /// The rule, in words, without the place.
    pub fn rule(&self) -> String {
        use RefusalKind as K;
        match &self.kind {
            K::Wire(k) => k.to_string(),
            K::TooManyEntries { value, max } => {
                format!("{value} channel entries, more than the {max} channels")
            }
            K::ChannelIndex { value, max } => format!("channel index {value} outside 0..={max}"),
            K::MessageCount { value, max } => format!("{value} messages outside 1..={max}"),
            K::BlocksDisabled { channel } => {
                format!("block fragment on channel {channel}, which has disableBlocks")
            }
            K::FragmentId {
                value,
                num_fragments,
            } => format!("fragment id {value} not below numFragments {num_fragments}"),
            K::FragmentCount { value, max } => {
                format!("numFragments {value} outside 1..={max} (maxFragmentsPerBlock)")
            }
            K::NotABlockMessage { message_type } => {
                format!("fragment 0 carries message type {message_type}, not a block message")
            }
            K::Body {
                message_type,
                error,
            } => format!(
                "body of message type {message_type} fails to read ({error}): the packet fails"
            ),
            K::BlockOnUnreliableChannel { channel } => {
                format!("block fragment on unreliable-unordered channel {channel}")
            }
            K::EmptyPacket => "no connection packet after the reliable header".to_owned(),
            K::ReliableTooShort { needed, bytes } => {
                format!("{bytes} bytes, the header needs {needed}")
            }
            K::FragmentPrefix { prefix } => format!("fragment prefix {prefix:#04x}, not 0x01"),
            K::PacketFragmentCount { value, max } => {
                format!("{value} fragments, more than max_fragments {max}")
            }
            K::PacketFragmentId {
                value,
                num_fragments,
            } => format!("fragment {value} of {num_fragments}"),
            K::FragmentSequence { fragment, packet } => {
                format!("packet header sequence {packet}, fragment header {fragment}")
            }
            K::NonCanonicalHeader => "fragment 0's packet header is not canonical".to_owned(),
            K::FragmentSize {
                bytes,
                fragment_size,
                last,
            } => {
                if *last {
                    format!("last fragment of {bytes} bytes, more than {fragment_size}")
                } else {
                    format!("fragment of {bytes} bytes, not {fragment_size}")
                }
            }
            K::PacketTooLarge { bytes, max } => {
                format!("connection packet of {bytes} bytes, more than max_packet_size {max}")
            }
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "bit {} (field {:?}): {}",
            self.bit,
            self.field,
            self.rule()
        )
    }
}

impl std::error::Error for Refusal {}
