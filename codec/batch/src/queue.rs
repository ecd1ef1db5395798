//! Sending and receiving of seed 002: fixed-capacity per-client send queues of MTU-sized
//! batches, loopback by update stage, and fixed-capacity incoming queues per stage.
//!
//! Every buffer is allocated when a [`MessageSystem`] is built or a client is added; in steady
//! state sending, receiving and handling a message allocates nothing (pinned by
//! `codec/batch/tests/batch_alloc.rs` with a counting global allocator).

use super::error::{BatchError, BatchErrorKind, Result};
use super::message::{
    BATCH_HEADER_LEN, Channel, ClientId, MAX_MTU, MESSAGE_HEADER_LEN, Message, MessageBody,
    MessageHeader, NetworkContext, RawMessage, UpdateStage, check_encoded, encode_message,
    finish_batch, max_body, read_batch,
};

/// Sizes of a [`MessageSystem`]'s fixed buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// The MTU: no batch is longer (6..=65535).
    pub mtu: usize,
    /// Batches each client's send queue holds per frame.
    pub send_batches: usize,
    /// Messages each stage's incoming queue holds per frame.
    pub incoming_per_stage: usize,
    /// Body bytes the incoming queues hold per frame.
    pub incoming_bytes: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            mtu: 1200,
            send_batches: 16,
            incoming_per_stage: 256,
            incoming_bytes: 64 * 1024,
        }
    }
}

fn invalid(why: &'static str) -> BatchError {
    BatchError::new(BatchErrorKind::InvalidConfig(why), 0, "")
}

/// One client's send queue: up to `capacity` batches of `mtu` bytes, in one buffer allocated
/// once. A message goes into the open batch when that batch is on the same channel and has room
/// for the message's upper bound; otherwise it opens the next batch (so a change of channel
/// closes the batch and order is kept).
#[derive(Debug, Clone)]
pub struct SendQueue {
    mtu: usize,
    bytes: Box<[u8]>,
    lens: Box<[usize]>,
    channels: Box<[Channel]>,
    used: usize,
}

impl SendQueue {
    /// A queue of `capacity` batches of `mtu` bytes.
    ///
    /// # Errors
    /// Invalid_config for an MTU outside 6..=65535 or a zero capacity.
    pub fn new(mtu: usize, capacity: usize) -> Result<Self> {
        if !(BATCH_HEADER_LEN + MESSAGE_HEADER_LEN..=MAX_MTU).contains(&mtu) {
            return Err(invalid("the MTU must lie in 6..=65535 bytes"));
        }
        if capacity == 0 {
            return Err(invalid("a send queue needs at least one batch"));
        }
        Ok(SendQueue {
            mtu,
            bytes: vec![0; mtu * capacity].into_boxed_slice(),
            lens: vec![BATCH_HEADER_LEN; capacity].into_boxed_slice(),
            channels: vec![Channel::default(); capacity].into_boxed_slice(),
            used: 0,
        })
    }

    /// Batches it holds per frame.
    pub fn capacity(&self) -> usize {
        self.lens.len()
    }

    /// Batches in use.
    pub fn batches(&self) -> usize {
        self.used
    }

    /// The batch that takes `needed` more bytes on `channel`: the open one or the next.
    fn slot(&self, channel: Channel, needed: usize) -> Result<usize> {
        if let Some(last) = self.used.checked_sub(1)
            && self.channels[last] == channel
            && self.mtu - self.lens[last] >= needed
        {
            return Ok(last);
        }
        if self.used == self.capacity() {
            let kind = BatchErrorKind::QueueFull {
                capacity: self.capacity(),
            };
            return Err(BatchError::new(kind, 0, ""));
        }
        Ok(self.used)
    }

    fn commit(&mut self, slot: usize, channel: Channel, n: usize) {
        if slot == self.used {
            self.used += 1;
            self.channels[slot] = channel;
            self.lens[slot] = BATCH_HEADER_LEN;
        }
        self.lens[slot] += n;
    }

    /// Serializes `msg` into the queue.
    ///
    /// # Errors
    /// Too_large (bound over MTU - 6), queue_full, bound_exceeded, whatever `serialize`
    /// returns. A refused message leaves nothing in the queue.
    pub fn push<M: MessageBody>(
        &mut self,
        channel: Channel,
        stage: UpdateStage,
        msg: &mut M,
    ) -> Result<()> {
        let limit = max_body(self.mtu);
        let bound = msg.size_upper_bound();
        if bound > limit {
            let kind = BatchErrorKind::TooLarge { bound, limit };
            return Err(BatchError::new(kind, 0, M::NAME));
        }
        let slot = self.slot(channel, MESSAGE_HEADER_LEN + bound)?;
        let len = if slot == self.used {
            BATCH_HEADER_LEN
        } else {
            self.lens[slot]
        };
        let dst = &mut self.bytes[slot * self.mtu + len..(slot + 1) * self.mtu];
        let n = encode_message(dst, len, stage, msg, limit)?;
        self.commit(slot, channel, n);
        Ok(())
    }

    /// Copies an already encoded message (header and body) into the queue.
    ///
    /// # Errors
    /// Body_length when `encoded` is not one whole message; too_large; queue_full.
    pub fn push_encoded(&mut self, channel: Channel, encoded: &[u8]) -> Result<()> {
        check_encoded(encoded)?;
        let limit = max_body(self.mtu);
        let body = encoded.len() - MESSAGE_HEADER_LEN;
        if body > limit {
            let kind = BatchErrorKind::TooLarge { bound: body, limit };
            return Err(BatchError::new(kind, 0, ""));
        }
        let slot = self.slot(channel, encoded.len())?;
        let len = if slot == self.used {
            BATCH_HEADER_LEN
        } else {
            self.lens[slot]
        };
        let at = slot * self.mtu + len;
        self.bytes[at..at + encoded.len()].copy_from_slice(encoded);
        self.commit(slot, channel, encoded.len());
        Ok(())
    }

    /// Finishes every batch in order, hands each to `send` with its channel, and empties the
    /// queue (end of frame).
    pub fn flush(&mut self, mut send: impl FnMut(Channel, &[u8])) {
        for slot in 0..self.used {
            let batch = &mut self.bytes[slot * self.mtu..(slot + 1) * self.mtu];
            let len = self.lens[slot];
            finish_batch(batch, len);
            send(self.channels[slot], &batch[..len]);
            self.lens[slot] = BATCH_HEADER_LEN;
        }
        self.used = 0;
    }
}

/// Decodes a received message by its type and handles it: implemented by the game state (seed
/// 002's handler table, a `match` on the type here). Unknown types should be skipped with
/// `Ok(())`: the batch reader has already stepped over them by their length.
pub trait Dispatch {
    /// Decodes and handles one message.
    ///
    /// # Errors
    /// The decode error, naming the message.
    fn dispatch(&mut self, ctx: &NetworkContext, msg: &RawMessage<'_>) -> Result<()>;
}

/// Decodes `raw` as `M` (on the stack) and calls its handler: one arm of a [`Dispatch`].
///
/// # Errors
/// As [`RawMessage::decode`].
pub fn handle_raw<M: Message + Default>(
    raw: &RawMessage<'_>,
    ctx: &NetworkContext,
    handler: &mut M::Handler,
) -> Result<()> {
    let mut m: M = raw.decode()?;
    m.handle(ctx, handler);
    Ok(())
}

#[derive(Debug, Clone, Copy)]
struct Item {
    header: MessageHeader,
    sender: ClientId,
    channel: Channel,
    timestamp: f64,
    start: usize,
}

/// One frame's incoming messages: a fixed-capacity queue per stage and a fixed byte arena.
#[derive(Debug, Clone)]
struct Incoming {
    queues: Box<[Vec<Item>]>,
    per_stage: usize,
    bytes: Vec<u8>,
    byte_limit: usize,
}

impl Incoming {
    fn new(config: &Config) -> Self {
        Incoming {
            queues: (0..UpdateStage::COUNT)
                .map(|_| Vec::with_capacity(config.incoming_per_stage))
                .collect(),
            per_stage: config.incoming_per_stage,
            bytes: Vec::with_capacity(config.incoming_bytes),
            byte_limit: config.incoming_bytes,
        }
    }

    /// Queues a message, or says why it was dropped.
    fn push(&mut self, item: Item, body: &[u8]) -> std::result::Result<(), Dropped> {
        let Some(q) = self.queues.get_mut(usize::from(item.header.stage.0)) else {
            return Err(Dropped::UnknownStage);
        };
        if q.len() >= self.per_stage || self.bytes.len() + body.len() > self.byte_limit {
            return Err(Dropped::Full);
        }
        let start = self.bytes.len();
        // Within the capacity reserved at construction: never reallocates.
        self.bytes.extend_from_slice(body);
        q.push(Item { start, ..item });
        Ok(())
    }

    fn clear(&mut self) -> usize {
        let mut left = 0;
        for q in self.queues.iter_mut() {
            left += q.len();
            q.clear();
        }
        self.bytes.clear();
        left
    }
}

enum Dropped {
    Full,
    UnknownStage,
}

/// Counters of a [`MessageSystem`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Messages serialized for sending (once per message, however many destinations).
    pub serialized: u64,
    /// Messages handled on the spot by loopback, without serialization.
    pub handled_immediately: u64,
    /// Messages queued for handling (received or looped back).
    pub queued: u64,
    /// Messages dropped because an incoming queue (or its byte arena) was full.
    pub dropped_full: u64,
    /// Messages dropped because their update stage has no queue.
    pub dropped_unknown_stage: u64,
    /// Queued messages never processed before the frame ended.
    pub dropped_unprocessed: u64,
    /// Received batches that stopped at a corrupt message.
    pub corrupt_batches: u64,
    /// Messages whose dispatch failed.
    pub failed: u64,
}

/// What [`MessageSystem::process`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProcessReport {
    /// Messages handled.
    pub handled: usize,
    /// Messages whose dispatch failed.
    pub failed: usize,
    /// The first failure.
    pub first_error: Option<BatchError>,
}

/// The message system of seed 002: per-client send queues, loopback by update stage, incoming
/// queues per stage for this frame and the next.
///
/// A frame: [`MessageSystem::receive`] each datagram, then for each stage
/// [`MessageSystem::process`] it (messages sent meanwhile are queued or handled as their stage
/// says), then [`MessageSystem::end_frame`] hands the batches to the transport.
#[derive(Debug, Clone)]
pub struct MessageSystem {
    config: Config,
    local: ClientId,
    clients: Vec<(ClientId, SendQueue)>,
    scratch: Box<[u8]>,
    current: Incoming,
    next: Incoming,
    stage: UpdateStage,
    time: f64,
    stats: Stats,
}

impl MessageSystem {
    /// A system for the local client `local`, with no remote clients yet.
    ///
    /// # Errors
    /// Invalid_config for an MTU outside 6..=65535 or a zero capacity.
    pub fn new(config: Config, local: ClientId) -> Result<Self> {
        SendQueue::new(config.mtu, config.send_batches)?;
        if config.incoming_per_stage == 0 {
            return Err(invalid("incoming queues need a capacity"));
        }
        Ok(MessageSystem {
            config,
            local,
            clients: Vec::new(),
            scratch: vec![0; config.mtu].into_boxed_slice(),
            current: Incoming::new(&config),
            next: Incoming::new(&config),
            stage: UpdateStage::INITIALIZATION,
            time: 0.0,
            stats: Stats::default(),
        })
    }

    /// The local client (loopback destination).
    pub fn local(&self) -> ClientId {
        self.local
    }

    /// Adds a remote client with its send queue (allocates; do it at connect time).
    ///
    /// # Errors
    /// Invalid_config when it is the local client or already added.
    pub fn add_client(&mut self, client: ClientId) -> Result<()> {
        if client == self.local || self.queue_index(client).is_some() {
            return Err(invalid("client already present"));
        }
        let q = SendQueue::new(self.config.mtu, self.config.send_batches)?;
        self.clients.push((client, q));
        Ok(())
    }

    /// Removes a remote client and its unsent batches.
    pub fn remove_client(&mut self, client: ClientId) {
        self.clients.retain(|(c, _)| *c != client);
    }

    /// The update stage being processed.
    pub fn stage(&self) -> UpdateStage {
        self.stage
    }

    /// Sets the current update stage (loopback compares against it).
    pub fn set_stage(&mut self, stage: UpdateStage) {
        self.stage = stage;
    }

    /// Sets the time stamped on received and looped-back messages.
    pub fn set_time(&mut self, time: f64) {
        self.time = time;
    }

    /// The counters.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    fn queue_index(&self, client: ClientId) -> Option<usize> {
        self.clients.iter().position(|(c, _)| *c == client)
    }

    /// Sends `msg` to `to` (remote clients and/or the local one) on `channel`, to be handled in
    /// `stage`.
    ///
    /// One destination: serialized straight into its queue, or for the local client handled on
    /// the spot when `stage` is the current stage (no serialization at all), else queued for
    /// this frame (a later stage) or the next (an earlier one). Several destinations: serialized
    /// once, then copied into each queue.
    ///
    /// # Errors
    /// Unknown_client (checked first: then nothing is sent), too_large, bound_exceeded, the
    /// message's own errors; queue_full for a destination whose queue is full (the others still
    /// get the message; the first such error is returned).
    pub fn send<M: Message>(
        &mut self,
        to: &[ClientId],
        channel: Channel,
        stage: UpdateStage,
        msg: &mut M,
        handler: &mut M::Handler,
    ) -> Result<()> {
        for &c in to {
            if c != self.local && self.queue_index(c).is_none() {
                let kind = BatchErrorKind::UnknownClient { client: c.0 };
                return Err(BatchError::new(kind, 0, M::NAME));
            }
        }
        let ctx = NetworkContext {
            sender: self.local,
            channel,
            message_type: M::TYPE,
            stage,
            timestamp: self.time,
        };
        match to {
            [] => Ok(()),
            [one] if *one == self.local && stage == self.stage => {
                self.stats.handled_immediately += 1;
                msg.handle(&ctx, handler);
                Ok(())
            }
            [one] if *one != self.local => {
                let i = self.queue_index(*one).unwrap_or_default();
                self.clients[i].1.push(channel, stage, msg)?;
                self.stats.serialized += 1;
                Ok(())
            }
            _ => {
                let limit = max_body(self.config.mtu);
                let n = encode_message(&mut self.scratch, 0, stage, msg, limit)?;
                self.stats.serialized += 1;
                let mut first = Ok(());
                for &c in to {
                    let r = if c == self.local {
                        if stage == self.stage {
                            self.stats.handled_immediately += 1;
                            msg.handle(&ctx, handler);
                            Ok(())
                        } else {
                            self.loopback(&ctx, n)
                        }
                    } else {
                        let i = self.queue_index(c).unwrap_or_default();
                        self.clients[i].1.push_encoded(channel, &self.scratch[..n])
                    };
                    if first.is_ok() {
                        first = r;
                    }
                }
                first
            }
        }
    }

    /// Queues the message in `scratch[..n]` for the local client.
    fn loopback(&mut self, ctx: &NetworkContext, n: usize) -> Result<()> {
        let header = MessageHeader {
            message_type: ctx.message_type,
            stage: ctx.stage,
            len: (n - MESSAGE_HEADER_LEN) as u16,
        };
        let item = Item {
            header,
            sender: ctx.sender,
            channel: ctx.channel,
            timestamp: ctx.timestamp,
            start: 0,
        };
        // A later stage runs this frame; an earlier one already ran, so next frame.
        let frame = if ctx.stage > self.stage {
            &mut self.current
        } else {
            &mut self.next
        };
        let capacity = frame.per_stage;
        match frame.push(item, &self.scratch[MESSAGE_HEADER_LEN..n]) {
            Ok(()) => {
                self.stats.queued += 1;
                Ok(())
            }
            Err(Dropped::Full) => {
                self.stats.dropped_full += 1;
                Err(BatchError::new(
                    BatchErrorKind::QueueFull { capacity },
                    0,
                    "",
                ))
            }
            Err(Dropped::UnknownStage) => {
                self.stats.dropped_unknown_stage += 1;
                Ok(())
            }
        }
    }

    /// Takes in a datagram from `from`: every message goes to the incoming queue of its stage
    /// for this frame; a full queue drops (and counts) what overflows, as does an unknown stage.
    /// Returns the messages queued.
    ///
    /// # Errors
    /// The batch's framing error, or the first corrupt message's (the messages before it stay
    /// queued: their lengths were consistent).
    pub fn receive(&mut self, from: ClientId, channel: Channel, datagram: &[u8]) -> Result<usize> {
        let messages = read_batch(datagram).inspect_err(|_| self.stats.corrupt_batches += 1)?;
        let mut queued = 0;
        for m in messages {
            let m = m.inspect_err(|_| self.stats.corrupt_batches += 1)?;
            let item = Item {
                header: m.header,
                sender: from,
                channel,
                timestamp: self.time,
                start: 0,
            };
            match self.current.push(item, m.body) {
                Ok(()) => {
                    // Counted as it is queued: a corrupt message later in the batch returns
                    // early, and the messages before it stay queued.
                    queued += 1;
                    self.stats.queued += 1;
                }
                Err(Dropped::Full) => self.stats.dropped_full += 1,
                Err(Dropped::UnknownStage) => self.stats.dropped_unknown_stage += 1,
            }
        }
        Ok(queued)
    }

    /// Makes `stage` current and hands each of its queued messages to `d`, in arrival order.
    pub fn process<D: Dispatch + ?Sized>(
        &mut self,
        stage: UpdateStage,
        d: &mut D,
    ) -> ProcessReport {
        self.stage = stage;
        let mut report = ProcessReport::default();
        let Some(queue) = self.current.queues.get(usize::from(stage.0)) else {
            return report;
        };
        for (index, item) in queue.iter().enumerate() {
            let len = usize::from(item.header.len);
            let raw = RawMessage {
                index,
                offset: 0,
                header: item.header,
                body: &self.current.bytes[item.start..item.start + len],
            };
            let ctx = NetworkContext {
                sender: item.sender,
                channel: item.channel,
                message_type: item.header.message_type,
                stage,
                timestamp: item.timestamp,
            };
            match d.dispatch(&ctx, &raw) {
                Ok(()) => report.handled += 1,
                Err(e) => {
                    report.failed += 1;
                    report.first_error.get_or_insert(e);
                }
            }
        }
        self.stats.failed += report.failed as u64;
        if let Some(q) = self.current.queues.get_mut(usize::from(stage.0)) {
            q.clear();
        }
        report
    }

    /// Ends the frame: every client's batches go to `send` in order (client by client), the
    /// queues empty, and the messages looped back for the next frame become this frame's.
    pub fn end_frame(&mut self, mut send: impl FnMut(ClientId, Channel, &[u8])) {
        for (client, q) in &mut self.clients {
            let client = *client;
            q.flush(|channel, batch| send(client, channel, batch));
        }
        self.stats.dropped_unprocessed += self.current.clear() as u64;
        std::mem::swap(&mut self.current, &mut self.next);
        self.stage = UpdateStage::INITIALIZATION;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::ByteStream;

    /// A message of `size` zero bytes, for batching arithmetic.
    #[derive(Debug, Default)]
    struct Blob {
        size: usize,
        bound: usize,
    }

    impl MessageBody for Blob {
        const TYPE: u8 = 200;
        const NAME: &'static str = "Blob";
        fn size_upper_bound(&self) -> usize {
            self.bound
        }
        fn serialize<S: ByteStream>(&mut self, s: &mut S) -> Result<()> {
            let mut zeros = [0u8; 64];
            s.slice(
                "blob",
                &mut zeros[..self.size],
                super::super::SliceKind::Bytes,
            )
        }
    }

    impl Message for Blob {
        type Handler = Vec<usize>;
        fn handle(&mut self, _: &NetworkContext, seen: &mut Vec<usize>) {
            seen.push(self.size);
        }
    }

    fn blob(size: usize) -> Blob {
        Blob { size, bound: size }
    }

    #[test]
    fn batches_fill_to_the_mtu_and_channel_changes_close_them() {
        let mut q = SendQueue::new(32, 4).unwrap();
        let (a, b) = (Channel(0), Channel(1));
        let s = UpdateStage::UPDATE;
        q.push(a, s, &mut blob(10)).unwrap(); // 2 + 14
        q.push(a, s, &mut blob(10)).unwrap(); // + 14 = 30
        q.push(a, s, &mut blob(0)).unwrap(); // needs 4, 2 left: new batch
        q.push(b, s, &mut blob(0)).unwrap(); // channel change
        q.push(a, s, &mut blob(0)).unwrap(); // and back
        assert_eq!(q.batches(), 4);
        let e = q.push(a, s, &mut blob(26)).unwrap_err(); // a fifth batch: none left
        assert!(matches!(
            e.kind(),
            BatchErrorKind::QueueFull { capacity: 4 }
        ));
        let mut out = Vec::new();
        q.flush(|c, b| out.push((c, b.to_vec())));
        let lens: Vec<_> = out.iter().map(|(c, b)| (c.0, b.len())).collect();
        assert_eq!(lens, [(0, 30), (0, 6), (1, 6), (0, 6)]);
        for (_, b) in &out {
            assert!(b.len() <= 32);
            assert_eq!(usize::from(u16::from_le_bytes([b[0], b[1]])), b.len());
            assert!(read_batch(b).unwrap().all(|m| m.is_ok()));
        }
        assert_eq!(q.batches(), 0);
    }

    #[test]
    fn oversized_and_lying_messages_are_refused_and_not_sent() {
        let mut q = SendQueue::new(32, 4).unwrap();
        let s = UpdateStage::UPDATE;
        let e = q.push(Channel(0), s, &mut blob(27)).unwrap_err();
        assert!(matches!(
            e.kind(),
            BatchErrorKind::TooLarge {
                bound: 27,
                limit: 26
            }
        ));
        let mut liar = Blob { size: 9, bound: 4 };
        let e = q.push(Channel(0), s, &mut liar).unwrap_err();
        assert!(matches!(
            e.kind(),
            BatchErrorKind::BoundExceeded { bound: 4 }
        ));
        assert_eq!(q.batches(), 0);
        let mut n = 0;
        q.flush(|_, _| n += 1);
        assert_eq!(n, 0);
    }

    struct Seen(Vec<(u8, usize)>);

    impl Dispatch for Seen {
        fn dispatch(&mut self, ctx: &NetworkContext, msg: &RawMessage<'_>) -> Result<()> {
            self.0.push((ctx.stage.0, msg.body.len()));
            Ok(())
        }
    }

    #[test]
    fn loopback_by_stage_now_this_frame_next_frame() {
        let cfg = Config {
            mtu: 64,
            ..Config::default()
        };
        let me = ClientId(1);
        let mut sys = MessageSystem::new(cfg, me).unwrap();
        let mut handled = Vec::new();
        sys.set_stage(UpdateStage::UPDATE);
        let ch = Channel(0);
        sys.send(&[me], ch, UpdateStage::UPDATE, &mut blob(1), &mut handled)
            .unwrap();
        assert_eq!(handled, [1]); // on the spot
        sys.send(
            &[me],
            ch,
            UpdateStage::PRE_LATE_UPDATE,
            &mut blob(2),
            &mut handled,
        )
        .unwrap();
        sys.send(
            &[me],
            ch,
            UpdateStage::EARLY_UPDATE,
            &mut blob(3),
            &mut handled,
        )
        .unwrap();
        let mut seen = Seen(Vec::new());
        sys.process(UpdateStage::PRE_LATE_UPDATE, &mut seen);
        assert_eq!(seen.0, [(5, 2)]); // this frame
        sys.process(UpdateStage::EARLY_UPDATE, &mut seen);
        assert_eq!(seen.0.len(), 1); // not yet
        sys.end_frame(|_, _, _| {});
        sys.process(UpdateStage::EARLY_UPDATE, &mut seen);
        assert_eq!(seen.0, [(5, 2), (1, 3)]); // next frame
        assert_eq!(sys.stats().handled_immediately, 1);
        assert_eq!(sys.stats().serialized, 2);
    }

    #[test]
    fn many_destinations_serialize_once() {
        let me = ClientId(0);
        let mut sys = MessageSystem::new(Config::default(), me).unwrap();
        for c in 1..=3 {
            sys.add_client(ClientId(c)).unwrap();
        }
        let mut handled = Vec::new();
        let to = [ClientId(1), ClientId(2), ClientId(3), me];
        sys.set_stage(UpdateStage::UPDATE);
        sys.send(
            &to,
            Channel(0),
            UpdateStage::UPDATE,
            &mut blob(5),
            &mut handled,
        )
        .unwrap();
        assert_eq!(sys.stats().serialized, 1);
        assert_eq!(handled, [5]);
        let mut out = Vec::new();
        sys.end_frame(|c, _, b| out.push((c, b.to_vec())));
        assert_eq!(out.len(), 3);
        assert!(out.windows(2).all(|w| w[0].1 == w[1].1));
        let e = sys
            .send(
                &[ClientId(9)],
                Channel(0),
                UpdateStage::UPDATE,
                &mut blob(5),
                &mut handled,
            )
            .unwrap_err();
        assert!(matches!(
            e.kind(),
            BatchErrorKind::UnknownClient { client: 9 }
        ));
    }

    /// Found by the `batch_receive` fuzz target: the messages queued before a corrupt one were
    /// handled later but never counted as queued.
    #[test]
    fn messages_queued_before_a_corrupt_one_are_counted() {
        let mut sys = MessageSystem::new(Config::default(), ClientId(0)).unwrap();
        // Two empty messages for stage 4, then a header claiming 9 body bytes of 0.
        let batch = [14, 0, 1, 4, 0, 0, 1, 4, 0, 0, 1, 4, 9, 0];
        let e = sys.receive(ClientId(5), Channel(0), &batch).unwrap_err();
        assert!(matches!(
            e.kind(),
            BatchErrorKind::BodyLength { declared: 9, .. }
        ));
        assert_eq!(sys.stats().queued, 2);
        assert_eq!(sys.stats().corrupt_batches, 1);
        let r = sys.process(UpdateStage::UPDATE, &mut Seen(Vec::new()));
        assert_eq!(r.handled, 2);
        // Every queued message is handled, failed or dropped unprocessed.
        sys.end_frame(|_, _, _| {});
        let s = sys.stats();
        assert_eq!(
            s.queued,
            r.handled as u64 + s.failed + s.dropped_unprocessed
        );
    }

    #[test]
    fn incoming_queues_drop_and_count_overflow() {
        let cfg = Config {
            incoming_per_stage: 2,
            ..Config::default()
        };
        let mut sys = MessageSystem::new(cfg, ClientId(0)).unwrap();
        // Three messages for stage 4, one for the unknown stage 9.
        let batch = [18, 0, 1, 4, 0, 0, 1, 4, 0, 0, 1, 4, 0, 0, 1, 9, 0, 0];
        assert_eq!(sys.receive(ClientId(5), Channel(0), &batch).unwrap(), 2);
        assert_eq!(sys.stats().dropped_full, 1);
        assert_eq!(sys.stats().dropped_unknown_stage, 1);
        let mut seen = Seen(Vec::new());
        let r = sys.process(UpdateStage::UPDATE, &mut seen);
        assert_eq!(r.handled, 2);
        assert!(sys.receive(ClientId(5), Channel(0), &batch[..17]).is_err());
        assert_eq!(sys.stats().corrupt_batches, 1);
    }
}
