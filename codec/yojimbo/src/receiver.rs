//! One direction of one connection, as a passive observer sees it: reliable.io's header or
//! fragment per netcode payload, packet fragments reassembled, each connection packet read,
//! block fragments collected per channel and message id until a block is whole.
//!
//! Memory is bounded: at most [`PENDING_PACKETS`] packets holding at most
//! [`PENDING_PACKET_BYTES`] and [`PENDING_BLOCKS`] blocks holding at most
//! [`PENDING_BLOCK_BYTES`] are in reassembly at once (the oldest is given up, and reported
//! incomplete, to make room), a pending packet holds at most `max_fragments` fragments of at
//! most `fragment_size` bytes, a pending block at most `maxFragmentsPerBlock` fragments of at
//! most `blockFragmentSize` bytes and at most `maxBlockSize` in all, every fragment is kept in
//! a map by its id (a hostile fragment count allocates nothing), and every byte held is a byte
//! received.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use bitlens_codec::{ReadStream, Trace, TraceStream};

use crate::config::{Config, ConfigError};
use crate::error::{Refusal, RefusalKind};
use crate::packet::{self, Bits, BlockFragment, ConnectionPacket, Content};
use crate::reliable::{self, Reliable};

/// Packets in fragment reassembly at once, per receiver (reliable.io's own buffer holds 64).
pub const PENDING_PACKETS: usize = 64;
/// Bytes of packet fragments held at once, per receiver (at least four of the largest packets
/// a configuration may allow, `config::MAX_PACKET_SIZE`).
pub const PENDING_PACKET_BYTES: usize = 4 << 20;
/// Blocks in reassembly at once, per receiver (all channels together).
pub const PENDING_BLOCKS: usize = 16;
/// Bytes of block fragments held at once, per receiver (at least two of the largest blocks a
/// configuration may allow, `config::MAX_BLOCK_SIZE`).
pub const PENDING_BLOCK_BYTES: usize = 32 << 20;
/// Reliable sequences remembered as received (reliable.io's received-packets buffer).
pub const RECEIVED_WINDOW: usize = 256;
/// Completed blocks remembered, so that their resent fragments are reported as repeats.
pub const COMPLETED_BLOCKS: usize = 64;

/// Something a receiver noticed that is not a refusal of the datagram.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Note {
    /// A reliable sequence already received: read and shown, not applied (reliable.io drops it).
    DuplicatePacket {
        /// The sequence.
        sequence: u16,
    },
    /// A reliable sequence older than the received window: read and shown, not applied.
    StalePacket {
        /// The sequence.
        sequence: u16,
    },
    /// A packet fragment received before.
    DuplicateFragment {
        /// The packet's sequence.
        sequence: u16,
        /// The fragment.
        fragment_id: u32,
    },
    /// A fragment of a packet already received whole: ignored (as reliable.io does).
    FragmentOfReceivedPacket {
        /// The packet's sequence.
        sequence: u16,
        /// The fragment.
        fragment_id: u32,
    },
    /// A packet fragment that disagrees with the ones before it: ignored.
    InconsistentFragment {
        /// The packet's sequence.
        sequence: u16,
        /// The fragment.
        fragment_id: u32,
        /// How it disagrees.
        why: String,
    },
    /// A packet whose fragments never all arrived (given up for room, or at the end).
    PacketIncomplete {
        /// The packet's sequence.
        sequence: u16,
        /// Its fragment count.
        num_fragments: u32,
        /// The fragments that did arrive (the others are missing).
        received: Vec<u32>,
        /// The datagrams its received fragments came in.
        datagrams: Vec<u64>,
    },
    /// A block fragment received before.
    DuplicateBlockFragment {
        /// The channel.
        channel: usize,
        /// The block message's id.
        message_id: u16,
        /// The fragment.
        fragment_id: u32,
    },
    /// A fragment of a block already complete (a resend): ignored.
    FragmentOfCompleteBlock {
        /// The channel.
        channel: usize,
        /// The block message's id.
        message_id: u16,
        /// The fragment.
        fragment_id: u32,
    },
    /// A block fragment that disagrees with the block's other fragments, or with the channel's
    /// limits: yojimbo's channel goes to `CHANNEL_ERROR_DESYNC` (a fault of the sender).
    InconsistentBlockFragment {
        /// The channel.
        channel: usize,
        /// The block message's id.
        message_id: u16,
        /// The fragment.
        fragment_id: u32,
        /// How it disagrees.
        why: String,
    },
    /// A block whose fragments never all arrived (given up for room, or at the end).
    BlockIncomplete {
        /// The channel.
        channel: usize,
        /// The block message's id.
        message_id: u16,
        /// Its fragment count.
        num_fragments: u32,
        /// The fragments that did arrive (the others are missing).
        received: Vec<u32>,
        /// The datagrams its received fragments came in.
        datagrams: Vec<u64>,
    },
}

impl Note {
    /// Whether the note is a fault of the sender (inconsistent fragments), not ordinary loss,
    /// duplication or resending.
    pub fn is_fault(&self) -> bool {
        matches!(
            self,
            Note::InconsistentFragment { .. } | Note::InconsistentBlockFragment { .. }
        )
    }
}

/// A connection packet read from one datagram, or reassembled from several.
#[derive(Debug, Clone)]
pub struct PacketRead {
    /// Its reliable sequence.
    pub sequence: u16,
    /// Its size in bytes (without the reliable header).
    pub bytes: usize,
    /// The datagrams it came in, ascending (one for a regular packet).
    pub datagrams: Vec<u64>,
    /// Read but not applied: a duplicate or stale sequence.
    pub duplicate: bool,
    /// What was read.
    pub result: Result<ConnectionPacket, Refusal>,
    /// Its trace, when the receiver traces.
    pub trace: Option<Trace>,
}

/// A block whose fragments all arrived.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompleteBlock {
    /// The channel.
    pub channel: usize,
    /// The block message's id.
    pub message_id: u16,
    /// The block message's type (from fragment 0).
    pub message_type: u32,
    /// The block message's body bits (from fragment 0).
    pub body: Bits,
    /// The block.
    pub data: Vec<u8>,
    /// The datagrams its fragments came in, ascending (of each fragment's first arrival).
    pub datagrams: Vec<u64>,
}

/// What one datagram (one netcode payload) held.
#[derive(Debug, Clone)]
pub struct Datagram {
    /// reliable.io's header or fragment header, or why it was refused.
    pub reliable: Result<Reliable, Refusal>,
    /// The reliable.io fields (when the receiver traces).
    pub header_trace: Option<Trace>,
    /// The connection packet this datagram carried, or completed.
    pub packet: Option<PacketRead>,
    /// When this datagram completed a fragmented packet: the reassembled connection packet's
    /// bytes (what [`Datagram::packet`] was read from), for a reader that traces it later.
    pub reassembled: Option<Vec<u8>>,
    /// Blocks this datagram completed.
    pub blocks: Vec<CompleteBlock>,
    /// What else was noticed.
    pub notes: Vec<Note>,
}

impl Datagram {
    /// The refusal of this datagram, if any: its reliable.io part's or its connection packet's.
    pub fn refusal(&self) -> Option<&Refusal> {
        match (&self.reliable, &self.packet) {
            (Err(e), _) => Some(e),
            (Ok(_), Some(p)) => p.result.as_ref().err(),
            _ => None,
        }
    }
}

struct PendingPacket {
    sequence: u16,
    num_fragments: u32,
    fragments: BTreeMap<u32, (Vec<u8>, u64)>,
}

struct PendingBlock {
    channel: usize,
    message_id: u16,
    num_fragments: u32,
    head: Option<(u32, Bits)>,
    fragments: BTreeMap<u32, (Vec<u8>, Vec<u64>)>,
}

/// One direction of one connection.
pub struct Receiver {
    cfg: Arc<Config>,
    trace: bool,
    /// The received window: slot `sequence % RECEIVED_WINDOW`.
    received: Vec<Option<u16>>,
    /// The newest sequence received, if any.
    newest: Option<u16>,
    packets: VecDeque<PendingPacket>,
    /// Bytes the pending packets hold.
    packet_bytes: usize,
    blocks: VecDeque<PendingBlock>,
    /// Bytes the pending blocks hold.
    block_bytes: usize,
    completed: VecDeque<(usize, u16)>,
}

/// `a` after `b` in sequence order (reliable.io's `reliable_sequence_greater_than`).
fn newer(a: u16, b: u16) -> bool {
    (a > b && a - b <= 32768) || (a < b && b - a > 32768)
}

impl Receiver {
    /// A receiver under `cfg`; `trace` records every field of every datagram.
    ///
    /// # Errors
    /// The configuration's first invalid setting.
    pub fn new(cfg: Arc<Config>, trace: bool) -> Result<Self, ConfigError> {
        cfg.validate()?;
        Ok(Receiver::validated(cfg, trace))
    }

    /// A receiver under a configuration already validated.
    pub(crate) fn validated(cfg: Arc<Config>, trace: bool) -> Self {
        Receiver {
            cfg,
            trace,
            received: vec![None; RECEIVED_WINDOW],
            newest: None,
            packets: VecDeque::new(),
            packet_bytes: 0,
            blocks: VecDeque::new(),
            block_bytes: 0,
            completed: VecDeque::new(),
        }
    }

    /// Reads one netcode payload (the plaintext of a type-5 packet), `datagram` naming it in
    /// what the receiver reports.
    pub fn receive(&mut self, datagram: u64, payload: &[u8]) -> Datagram {
        let cfg = self.cfg.clone();
        let (reliable, header_trace) = if self.trace {
            let mut s = TraceStream::new(payload);
            let r = reliable::read(&mut s, payload, &cfg.reliable);
            let verdict = r.as_ref().map(|_| ()).map_err(Refusal::to_codec);
            (r, Some(s.into_trace(verdict)))
        } else {
            let mut s = ReadStream::new(payload);
            (reliable::read(&mut s, payload, &cfg.reliable), None)
        };
        let mut out = Datagram {
            reliable,
            header_trace,
            packet: None,
            reassembled: None,
            blocks: Vec::new(),
            notes: Vec::new(),
        };
        match out.reliable {
            Ok(Reliable::Regular(h)) => {
                let body = &payload[h.bytes..];
                out.packet = Some(self.process(h.sequence, body, vec![datagram], &mut out));
            }
            Ok(Reliable::Fragment(f)) => {
                let data = &payload[f.data_start..];
                if let Some((bytes, datagrams)) = self.fragment(f, data, datagram, &mut out.notes) {
                    let p = self.process(f.sequence, &bytes, datagrams, &mut out);
                    out.packet = Some(p);
                    out.reassembled = Some(bytes);
                }
            }
            Err(_) => {}
        }
        out
    }

    /// Gives up every packet and block still in reassembly, reporting each as incomplete.
    pub fn finish(&mut self) -> Vec<Note> {
        let mut notes = Vec::new();
        self.packet_bytes = 0;
        self.block_bytes = 0;
        while let Some(p) = self.packets.pop_front() {
            notes.push(incomplete_packet(p));
        }
        while let Some(b) = self.blocks.pop_front() {
            notes.push(incomplete_block(b));
        }
        notes
    }

    fn is_received(&self, sequence: u16) -> bool {
        self.received[sequence as usize % RECEIVED_WINDOW] == Some(sequence)
    }

    fn is_stale(&self, sequence: u16) -> bool {
        let Some(newest) = self.newest else {
            return false;
        };
        let oldest = newest.wrapping_add(1).wrapping_sub(RECEIVED_WINDOW as u16);
        newer(oldest, sequence)
    }

    fn mark_received(&mut self, sequence: u16) {
        match self.newest {
            Some(n) if !newer(sequence, n) => {}
            Some(n) => {
                // Clear the slots the window moves past.
                let mut s = n.wrapping_add(1);
                let mut cleared = 0;
                while s != sequence && cleared < RECEIVED_WINDOW {
                    self.received[s as usize % RECEIVED_WINDOW] = None;
                    s = s.wrapping_add(1);
                    cleared += 1;
                }
                self.newest = Some(sequence);
            }
            None => self.newest = Some(sequence),
        }
        self.received[sequence as usize % RECEIVED_WINDOW] = Some(sequence);
    }

    /// One packet fragment; the reassembled connection packet and its datagrams when it
    /// completes the packet.
    fn fragment(
        &mut self,
        f: reliable::FragmentHeader,
        data: &[u8],
        datagram: u64,
        notes: &mut Vec<Note>,
    ) -> Option<(Vec<u8>, Vec<u64>)> {
        let sequence = f.sequence;
        let fragment_id = f.fragment_id;
        if self.is_received(sequence) {
            notes.push(Note::FragmentOfReceivedPacket {
                sequence,
                fragment_id,
            });
            return None;
        }
        let at = match self.packets.iter().position(|p| p.sequence == sequence) {
            Some(at) => at,
            None => {
                if self.packets.len() >= PENDING_PACKETS
                    && let Some(old) = self.packets.pop_front()
                {
                    self.packet_bytes -= held(old.fragments.values().map(|(d, _)| d));
                    notes.push(incomplete_packet(old));
                }
                self.packets.push_back(PendingPacket {
                    sequence,
                    num_fragments: f.num_fragments,
                    fragments: BTreeMap::new(),
                });
                self.packets.len() - 1
            }
        };
        let p = &mut self.packets[at];
        if p.num_fragments != f.num_fragments {
            notes.push(Note::InconsistentFragment {
                sequence,
                fragment_id,
                why: format!(
                    "{} fragments, the packet's first fragment said {}",
                    f.num_fragments, p.num_fragments
                ),
            });
            return None;
        }
        if let Some((old, _)) = p.fragments.get(&fragment_id) {
            if old[..] != data[..] {
                notes.push(Note::InconsistentFragment {
                    sequence,
                    fragment_id,
                    why: "other bytes than the first copy".to_owned(),
                });
            } else {
                notes.push(Note::DuplicateFragment {
                    sequence,
                    fragment_id,
                });
            }
            return None;
        }
        // Room for the fragment: the oldest other packets are given up.
        while self.packet_bytes + data.len() > PENDING_PACKET_BYTES {
            let Some(i) = self.packets.iter().position(|p| p.sequence != sequence) else {
                break;
            };
            let old = self.packets.remove(i)?;
            self.packet_bytes -= held(old.fragments.values().map(|(d, _)| d));
            notes.push(incomplete_packet(old));
        }
        let at = self.packets.iter().position(|p| p.sequence == sequence)?;
        let p = &mut self.packets[at];
        p.fragments.insert(fragment_id, (data.to_vec(), datagram));
        self.packet_bytes += data.len();
        if p.fragments.len() as u32 != p.num_fragments {
            return None;
        }
        let p = self.packets.remove(at)?;
        self.packet_bytes -= held(p.fragments.values().map(|(d, _)| d));
        let mut bytes = Vec::new();
        let mut datagrams = Vec::new();
        for (_, (d, g)) in p.fragments {
            bytes.extend_from_slice(&d);
            datagrams.push(g);
        }
        datagrams.sort_unstable();
        Some((bytes, datagrams))
    }

    /// Reads a whole connection packet and applies it.
    fn process(
        &mut self,
        sequence: u16,
        bytes: &[u8],
        datagrams: Vec<u64>,
        out: &mut Datagram,
    ) -> PacketRead {
        let cfg = self.cfg.clone();
        let duplicate = self.is_received(sequence) || self.is_stale(sequence);
        if self.is_received(sequence) {
            out.notes.push(Note::DuplicatePacket { sequence });
        } else if self.is_stale(sequence) {
            out.notes.push(Note::StalePacket { sequence });
        }
        let max = cfg.reliable.max_packet_size as usize;
        let early = if bytes.is_empty() {
            Some(Refusal::new(RefusalKind::EmptyPacket, 0, "num_entries"))
        } else if bytes.len() > max {
            let kind = RefusalKind::PacketTooLarge {
                bytes: bytes.len(),
                max,
            };
            Some(Refusal::new(kind, 0, "num_entries"))
        } else {
            None
        };
        let (result, trace) = match early {
            Some(e) => (Err(e), None),
            None if self.trace => {
                let (r, t) = packet::trace(&cfg, bytes, sequence);
                (r, Some(t))
            }
            None => (packet::read(&cfg, bytes, sequence), None),
        };
        if let (Ok(p), false) = (&result, duplicate) {
            self.mark_received(sequence);
            for e in &p.entries {
                if let Content::Fragment(f) = &e.content {
                    self.block_fragment(e.channel, f, &datagrams, out);
                }
            }
        }
        PacketRead {
            sequence,
            bytes: bytes.len(),
            datagrams,
            duplicate,
            result,
            trace,
        }
    }

    fn block_fragment(
        &mut self,
        channel: usize,
        f: &BlockFragment,
        datagrams: &[u64],
        out: &mut Datagram,
    ) {
        let cc = self.cfg.channels[channel];
        let (message_id, fragment_id) = (f.message_id, f.fragment_id);
        if self.completed.contains(&(channel, message_id)) {
            out.notes.push(Note::FragmentOfCompleteBlock {
                channel,
                message_id,
                fragment_id,
            });
            return;
        }
        let inconsistent = |why: String| Note::InconsistentBlockFragment {
            channel,
            message_id,
            fragment_id,
            why,
        };
        let bfs = cc.block_fragment_size as u64;
        let end = u64::from(fragment_id) * bfs + f.data.len() as u64;
        if end > u64::from(cc.max_block_size) {
            let why = format!(
                "ends at byte {end}, past maxBlockSize {}",
                cc.max_block_size
            );
            out.notes.push(inconsistent(why));
            return;
        }
        if fragment_id + 1 < f.num_fragments && f.data.len() as u64 != bfs {
            // yojimbo copies it and leaves a gap; the block is still reported when whole.
            let why = format!("{} bytes, not blockFragmentSize {bfs}", f.data.len());
            out.notes.push(inconsistent(why));
        }
        let at = self
            .blocks
            .iter()
            .position(|b| b.channel == channel && b.message_id == message_id);
        let at = match at {
            Some(at) => at,
            None => {
                if self.blocks.len() >= PENDING_BLOCKS
                    && let Some(old) = self.blocks.pop_front()
                {
                    self.block_bytes -= held(old.fragments.values().map(|(d, _)| d));
                    out.notes.push(incomplete_block(old));
                }
                self.blocks.push_back(PendingBlock {
                    channel,
                    message_id,
                    num_fragments: f.num_fragments,
                    head: None,
                    fragments: BTreeMap::new(),
                });
                self.blocks.len() - 1
            }
        };
        let b = &mut self.blocks[at];
        if b.num_fragments != f.num_fragments {
            let why = format!(
                "{} fragments, the block's first fragment said {}",
                f.num_fragments, b.num_fragments
            );
            out.notes.push(inconsistent(why));
            return;
        }
        if let Some((old, _)) = b.fragments.get(&fragment_id) {
            out.notes.push(if old[..] != f.data[..] {
                inconsistent("other bytes than the first copy".to_owned())
            } else {
                Note::DuplicateBlockFragment {
                    channel,
                    message_id,
                    fragment_id,
                }
            });
            return;
        }
        let head = f.head.as_ref().map(|h| (h.message_type, h.body.clone()));
        // Room for the fragment: the oldest other blocks are given up.
        let this = |b: &PendingBlock| b.channel == channel && b.message_id == message_id;
        while self.block_bytes + f.data.len() > PENDING_BLOCK_BYTES {
            let Some(i) = self.blocks.iter().position(|b| !this(b)) else {
                break;
            };
            let Some(old) = self.blocks.remove(i) else {
                break;
            };
            self.block_bytes -= held(old.fragments.values().map(|(d, _)| d));
            out.notes.push(incomplete_block(old));
        }
        let Some(at) = self.blocks.iter().position(this) else {
            return;
        };
        let b = &mut self.blocks[at];
        if head.is_some() {
            b.head = head;
        }
        b.fragments
            .insert(fragment_id, (f.data.clone(), datagrams.to_vec()));
        self.block_bytes += f.data.len();
        if b.fragments.len() as u32 != b.num_fragments {
            return;
        }
        let Some(b) = self.blocks.remove(at) else {
            return;
        };
        self.block_bytes -= held(b.fragments.values().map(|(d, _)| d));
        out.blocks.push(assemble(b, bfs as usize));
        if self.completed.len() >= COMPLETED_BLOCKS {
            self.completed.pop_front();
        }
        self.completed.push_back((channel, message_id));
    }
}

/// The bytes a pending item's fragments hold.
fn held<'a>(fragments: impl Iterator<Item = &'a Vec<u8>>) -> usize {
    fragments.map(Vec::len).sum()
}

fn assemble(b: PendingBlock, bfs: usize) -> CompleteBlock {
    let last = b.fragments.values().next_back().map_or(0, |(d, _)| d.len());
    let size = (b.num_fragments as usize - 1) * bfs + last;
    let mut data = vec![0u8; size];
    let mut datagrams = Vec::new();
    for (id, (d, g)) in b.fragments {
        let at = id as usize * bfs;
        data[at..at + d.len()].copy_from_slice(&d);
        datagrams.extend(g);
    }
    datagrams.sort_unstable();
    datagrams.dedup();
    let (message_type, body) = b.head.unwrap_or_default();
    CompleteBlock {
        channel: b.channel,
        message_id: b.message_id,
        message_type,
        body,
        data,
        datagrams,
    }
}

fn incomplete_packet(p: PendingPacket) -> Note {
    let received = p.fragments.keys().copied().collect();
    let mut datagrams: Vec<u64> = p.fragments.values().map(|(_, g)| *g).collect();
    datagrams.sort_unstable();
    Note::PacketIncomplete {
        sequence: p.sequence,
        num_fragments: p.num_fragments,
        received,
        datagrams,
    }
}

fn incomplete_block(b: PendingBlock) -> Note {
    let received = b.fragments.keys().copied().collect();
    let mut datagrams: Vec<u64> = b.fragments.values().flat_map(|(_, g)| g.clone()).collect();
    datagrams.sort_unstable();
    datagrams.dedup();
    Note::BlockIncomplete {
        channel: b.channel,
        message_id: b.message_id,
        num_fragments: b.num_fragments,
        received,
        datagrams,
    }
}
