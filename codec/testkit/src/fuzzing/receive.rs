//! `batch_receive`: the game server's side of seed 002 — a [`MessageSystem`] fed hostile and
//! well-formed datagrams, processed stage by stage and frame by frame, with loopback and remote
//! sends in between — checked step by step against a small model of what the system must do.
//!
//! The model is the documentation of [`MessageSystem`] written as plain vectors: a datagram's
//! messages go to the incoming queue of their stage for this frame, up to the per-stage capacity
//! and the per-frame byte budget (a full queue drops and counts, as does a stage past the named
//! ones); a corrupt batch keeps the messages before the corrupt one; [`MessageSystem::process`]
//! hands a stage's messages to the dispatcher in arrival order and empties that queue; a
//! loopback send is handled on the spot (the current stage), queued for this frame (a later
//! stage) or for the next (an earlier one); [`MessageSystem::end_frame`] sends every client's
//! batches in order and drops what was never processed. After every step the system's counters,
//! what the dispatcher saw (message, sender, channel, stage, time, verdict) and the demo world's
//! linked objects must be the model's.

use crate::batch_demo::{DemoMessage, DemoWorld, MAX_NETWORK_ID, message_name};
use arbitrary::{Arbitrary, Unstructured};
use bitlens_batch::{
    BATCH_HEADER_LEN, BatchError, BatchErrorKind, BatchWriter, Channel, ClientId, Config, Dispatch,
    MESSAGE_HEADER_LEN, MessageHeader, MessageSystem, NetworkContext, ProcessReport, RawMessage,
    Result, Stats, UpdateStage, max_body, read_batch,
};
use bitlens_codec::link::NetworkId;
use std::collections::BTreeSet;

/// The local client (the server itself: the loopback destination).
const LOCAL: ClientId = ClientId(0);

/// One step of a game loop.
#[derive(Debug, Clone)]
enum Step {
    /// A datagram arrives from a client on a channel.
    Receive {
        from: ClientId,
        channel: Channel,
        datagram: Vec<u8>,
    },
    /// A stage runs: its queued messages are handled.
    Process(UpdateStage),
    /// The frame ends: batches go out, the next frame's loopback becomes this frame's.
    EndFrame,
    /// The game moves to a stage without processing it.
    SetStage(UpdateStage),
    /// The clock moves (any value: NaN included).
    SetTime(f64),
    /// A message is sent to some clients (the local one included: loopback).
    Send {
        to: Vec<ClientId>,
        channel: Channel,
        stage: UpdateStage,
        message: Box<DemoMessage>,
    },
    /// A client connects.
    AddClient(ClientId),
    /// A client leaves, with its unsent batches.
    RemoveClient(ClientId),
}

fn stage(u: &mut Unstructured<'_>) -> arbitrary::Result<UpdateStage> {
    // Mostly the named stages and the first unknown one; sometimes any byte.
    Ok(UpdateStage(if u.ratio(7, 8)? {
        u.int_in_range(0..=7)?
    } else {
        u.arbitrary()?
    }))
}

fn client(u: &mut Unstructured<'_>) -> arbitrary::Result<ClientId> {
    Ok(ClientId(u.int_in_range(0..=3)?))
}

/// A datagram: raw bytes, or a batch of demo messages and unknown types, maybe damaged.
fn datagram(u: &mut Unstructured<'_>) -> arbitrary::Result<Vec<u8>> {
    if u.ratio(1, 4)? {
        let n = u.int_in_range(0..=48)?;
        return Ok(u.bytes(n)?.to_vec());
    }
    let mut buf = vec![0u8; crate::batch_demo::MTU];
    let Ok(mut w) = BatchWriter::new(&mut buf) else {
        return Ok(Vec::new());
    };
    for _ in 0..u.int_in_range(0..=6)? {
        let s = stage(u)?;
        if u.ratio(3, 4)? {
            let _ = DemoMessage::arbitrary(u)?.push(&mut w, s);
        } else {
            let n = u.int_in_range(0..=24)?;
            let _ = w.push_raw(u.arbitrary()?, s, u.bytes(n)?);
        }
    }
    let n = w.finish();
    buf.truncate(n);
    match u.int_in_range(0..=5)? {
        0 if !buf.is_empty() => {
            // One byte changed: a type, a stage, a length or a body byte.
            let i = u.choose_index(buf.len())?;
            buf[i] ^= u.int_in_range(1..=255)?;
        }
        1 if !buf.is_empty() => {
            // Cut short, its header fixed so that the cut shows inside the messages.
            let cut = u.choose_index(buf.len())?.max(BATCH_HEADER_LEN);
            buf.truncate(cut);
            let len = (buf.len() as u16).to_le_bytes();
            buf[..BATCH_HEADER_LEN].copy_from_slice(&len);
        }
        _ => {}
    }
    Ok(buf)
}

fn step(u: &mut Unstructured<'_>) -> arbitrary::Result<Step> {
    Ok(match u.int_in_range(0..=9)? {
        0..=2 => Step::Receive {
            from: client(u)?,
            channel: Channel(u.int_in_range(0..=2)?),
            datagram: datagram(u)?,
        },
        3 | 4 => Step::Process(stage(u)?),
        5 => Step::EndFrame,
        6 => {
            if u.arbitrary()? {
                Step::SetStage(stage(u)?)
            } else {
                Step::SetTime(u.arbitrary()?)
            }
        }
        7 | 8 => {
            let n = u.int_in_range(0..=3)?;
            let mut to = Vec::with_capacity(n);
            for _ in 0..n {
                to.push(client(u)?);
            }
            Step::Send {
                to,
                channel: Channel(u.int_in_range(0..=2)?),
                stage: stage(u)?,
                message: Box::new(DemoMessage::arbitrary(u)?),
            }
        }
        _ => {
            if u.arbitrary()? {
                Step::AddClient(client(u)?)
            } else {
                Step::RemoveClient(client(u)?)
            }
        }
    })
}

/// A message as the dispatcher saw it (or must see it).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Delivery {
    sender: ClientId,
    channel: Channel,
    message_type: u8,
    stage: UpdateStage,
    /// The timestamp's bits (NaN compares equal to itself this way).
    time: u64,
    index: usize,
    header: MessageHeader,
    body: Vec<u8>,
    result: Result<()>,
}

/// The dispatcher under test: the demo world, recording what it is handed.
struct Recording<'w> {
    world: &'w mut DemoWorld,
    seen: Vec<Delivery>,
}

impl Dispatch for Recording<'_> {
    fn dispatch(&mut self, ctx: &NetworkContext, msg: &RawMessage<'_>) -> Result<()> {
        let result = self.world.dispatch(ctx, msg);
        self.seen.push(Delivery {
            sender: ctx.sender,
            channel: ctx.channel,
            message_type: ctx.message_type,
            stage: ctx.stage,
            time: ctx.timestamp.to_bits(),
            index: msg.index,
            header: msg.header,
            body: msg.body.to_vec(),
            result,
        });
        result
    }
}

/// A queued message, as the model keeps it.
#[derive(Debug, Clone)]
struct Queued {
    header: MessageHeader,
    sender: ClientId,
    channel: Channel,
    time: u64,
    body: Vec<u8>,
}

enum Dropped {
    Full,
    UnknownStage,
}

/// One frame's incoming queues: a queue per named stage and the bytes taken this frame.
#[derive(Debug, Clone)]
struct Frame {
    queues: Vec<Vec<Queued>>,
    bytes: usize,
}

impl Frame {
    fn new() -> Self {
        Frame {
            queues: vec![Vec::new(); UpdateStage::COUNT],
            bytes: 0,
        }
    }

    fn push(&mut self, config: &Config, q: Queued) -> std::result::Result<(), Dropped> {
        let Some(queue) = self.queues.get_mut(usize::from(q.header.stage.0)) else {
            return Err(Dropped::UnknownStage);
        };
        if queue.len() >= config.incoming_per_stage
            || self.bytes + q.body.len() > config.incoming_bytes
        {
            return Err(Dropped::Full);
        }
        self.bytes += q.body.len();
        queue.push(q);
        Ok(())
    }

    fn clear(&mut self) -> usize {
        let left = self.queues.iter().map(Vec::len).sum();
        *self = Frame::new();
        left
    }
}

/// A client's send queue: batches of `mtu` bytes on one channel each, and the messages in order.
#[derive(Debug, Clone)]
struct Outgoing {
    client: ClientId,
    batches: Vec<(Channel, usize)>,
    messages: Vec<(Channel, Vec<u8>)>,
}

impl Outgoing {
    /// The batch that takes `needed` more bytes on `channel`: the last one if it is on that
    /// channel and has room, else a new one; `None` when every batch of the frame is used.
    fn slot(&self, config: &Config, channel: Channel, needed: usize) -> Option<usize> {
        if let Some((c, len)) = self.batches.last()
            && *c == channel
            && config.mtu - len >= needed
        {
            return Some(self.batches.len() - 1);
        }
        (self.batches.len() < config.send_batches).then_some(self.batches.len())
    }

    fn push(&mut self, slot: usize, channel: Channel, encoded: Vec<u8>) {
        if slot == self.batches.len() {
            self.batches.push((channel, BATCH_HEADER_LEN));
        }
        self.batches[slot].1 += encoded.len();
        self.messages.push((channel, encoded));
    }
}

/// What the system must do, written as plain vectors.
struct Model {
    config: Config,
    clients: Vec<Outgoing>,
    current: Frame,
    next: Frame,
    stage: UpdateStage,
    time: f64,
    stats: Stats,
    /// Network ids the demo world must have linked (spawned, not despawned).
    linked: BTreeSet<u32>,
}

fn error(kind: BatchErrorKind, field: &'static str) -> BatchError {
    BatchError::new(kind, 0, field)
}

impl Model {
    fn new(config: Config) -> Self {
        Model {
            config,
            clients: Vec::new(),
            current: Frame::new(),
            next: Frame::new(),
            stage: UpdateStage::INITIALIZATION,
            time: 0.0,
            stats: Stats::default(),
            linked: BTreeSet::new(),
        }
    }

    /// A message's effect on the world's links, as its handler has it.
    fn handled(&mut self, m: &DemoMessage) {
        match m {
            DemoMessage::Spawn(s) => {
                self.linked.insert(s.network_id.get());
            }
            DemoMessage::Despawn(d) => {
                self.linked.remove(&d.network_id.get());
            }
            _ => {}
        }
    }

    fn receive(&mut self, from: ClientId, channel: Channel, datagram: &[u8]) -> Result<usize> {
        let messages = read_batch(datagram).inspect_err(|_| self.stats.corrupt_batches += 1)?;
        let mut queued = 0;
        for m in messages {
            let m = m.inspect_err(|_| self.stats.corrupt_batches += 1)?;
            let q = Queued {
                header: m.header,
                sender: from,
                channel,
                time: self.time.to_bits(),
                body: m.body.to_vec(),
            };
            match self.current.push(&self.config, q) {
                Ok(()) => {
                    queued += 1;
                    self.stats.queued += 1;
                }
                Err(Dropped::Full) => self.stats.dropped_full += 1,
                Err(Dropped::UnknownStage) => self.stats.dropped_unknown_stage += 1,
            }
        }
        Ok(queued)
    }

    fn process(&mut self, stage: UpdateStage) -> (ProcessReport, Vec<Delivery>) {
        self.stage = stage;
        let mut report = ProcessReport::default();
        let mut seen = Vec::new();
        let Some(queue) = self.current.queues.get_mut(usize::from(stage.0)) else {
            return (report, seen);
        };
        let items = std::mem::take(queue);
        for (index, q) in items.into_iter().enumerate() {
            let raw = RawMessage {
                index,
                offset: 0,
                header: q.header,
                body: &q.body,
            };
            let result = match DemoMessage::decode(&raw) {
                Ok(Some(m)) => {
                    self.handled(&m);
                    Ok(())
                }
                Ok(None) => Ok(()),
                Err(e) => Err(e),
            };
            match result {
                Ok(()) => report.handled += 1,
                Err(e) => {
                    report.failed += 1;
                    report.first_error.get_or_insert(e);
                }
            }
            seen.push(Delivery {
                sender: q.sender,
                channel: q.channel,
                message_type: q.header.message_type,
                stage,
                time: q.time,
                index,
                header: q.header,
                body: q.body,
                result,
            });
        }
        self.stats.failed += report.failed as u64;
        (report, seen)
    }

    /// The frame's batches per client (taken from the queues), then the frame's end.
    fn end_frame(&mut self) -> Vec<Outgoing> {
        let sent = self
            .clients
            .iter_mut()
            .map(|o| Outgoing {
                client: o.client,
                batches: std::mem::take(&mut o.batches),
                messages: std::mem::take(&mut o.messages),
            })
            .collect();
        self.stats.dropped_unprocessed += self.current.clear() as u64;
        std::mem::swap(&mut self.current, &mut self.next);
        self.stage = UpdateStage::INITIALIZATION;
        sent
    }

    fn add_client(&mut self, c: ClientId) -> Result<()> {
        if c == LOCAL || self.clients.iter().any(|o| o.client == c) {
            return Err(error(
                BatchErrorKind::InvalidConfig("client already present"),
                "",
            ));
        }
        self.clients.push(Outgoing {
            client: c,
            batches: Vec::new(),
            messages: Vec::new(),
        });
        Ok(())
    }

    fn send(
        &mut self,
        to: &[ClientId],
        channel: Channel,
        stage: UpdateStage,
        m: &DemoMessage,
    ) -> Result<()> {
        let name = message_name(m.message_type()).unwrap_or("");
        if let Some(c) = to
            .iter()
            .find(|c| **c != LOCAL && !self.clients.iter().any(|o| o.client == **c))
        {
            let kind = BatchErrorKind::UnknownClient { client: c.0 };
            return Err(error(kind, name));
        }
        let limit = max_body(self.config.mtu);
        let bound = m.size_upper_bound();
        let encode = |m: &DemoMessage| -> Result<Vec<u8>> {
            if bound > limit {
                let kind = BatchErrorKind::TooLarge { bound, limit };
                return Err(error(kind, name));
            }
            let mut buf = vec![0u8; bitlens_batch::MAX_MTU];
            let n = m.clone().encode(&mut buf, stage)?;
            buf.truncate(n);
            Ok(buf)
        };
        match to {
            [] => Ok(()),
            [one] if *one == LOCAL && stage == self.stage => {
                self.stats.handled_immediately += 1;
                self.handled(m);
                Ok(())
            }
            [one] if *one != LOCAL => {
                // As `SendQueue::push`: the bound, then a batch with room for it, then the body.
                if bound > limit {
                    return Err(error(BatchErrorKind::TooLarge { bound, limit }, name));
                }
                let config = self.config;
                let out = self.clients.iter_mut().find(|o| o.client == *one);
                let Some(out) = out else { return Ok(()) };
                let Some(slot) = out.slot(&config, channel, MESSAGE_HEADER_LEN + bound) else {
                    let kind = BatchErrorKind::QueueFull {
                        capacity: config.send_batches,
                    };
                    return Err(error(kind, ""));
                };
                let encoded = encode(m)?;
                out.push(slot, channel, encoded);
                self.stats.serialized += 1;
                Ok(())
            }
            _ => {
                let encoded = encode(m)?;
                self.stats.serialized += 1;
                let mut first = Ok(());
                for &c in to {
                    let r = if c == LOCAL {
                        self.loopback(channel, stage, m, &encoded)
                    } else {
                        let config = self.config;
                        match self.clients.iter_mut().find(|o| o.client == c) {
                            Some(out) => match out.slot(&config, channel, encoded.len()) {
                                Some(slot) => {
                                    out.push(slot, channel, encoded.clone());
                                    Ok(())
                                }
                                None => Err(error(
                                    BatchErrorKind::QueueFull {
                                        capacity: config.send_batches,
                                    },
                                    "",
                                )),
                            },
                            None => Ok(()),
                        }
                    };
                    if first.is_ok() {
                        first = r;
                    }
                }
                first
            }
        }
    }

    fn loopback(
        &mut self,
        channel: Channel,
        stage: UpdateStage,
        m: &DemoMessage,
        encoded: &[u8],
    ) -> Result<()> {
        if stage == self.stage {
            self.stats.handled_immediately += 1;
            self.handled(m);
            return Ok(());
        }
        let q = Queued {
            header: MessageHeader {
                message_type: m.message_type(),
                stage,
                len: (encoded.len() - MESSAGE_HEADER_LEN) as u16,
            },
            sender: LOCAL,
            channel,
            time: self.time.to_bits(),
            body: encoded[MESSAGE_HEADER_LEN..].to_vec(),
        };
        let config = self.config;
        let frame = if stage > self.stage {
            &mut self.current
        } else {
            &mut self.next
        };
        match frame.push(&config, q) {
            Ok(()) => {
                self.stats.queued += 1;
                Ok(())
            }
            Err(Dropped::Full) => {
                self.stats.dropped_full += 1;
                let kind = BatchErrorKind::QueueFull {
                    capacity: config.incoming_per_stage,
                };
                Err(error(kind, ""))
            }
            Err(Dropped::UnknownStage) => {
                self.stats.dropped_unknown_stage += 1;
                Ok(())
            }
        }
    }
}

/// The system's sizes, small enough that queues fill: 1 to 3 batches per client, 1 to 8
/// messages per stage, up to 2 KiB of bodies per frame, an MTU from the smallest to the demo's.
fn config(u: &mut Unstructured<'_>) -> arbitrary::Result<Config> {
    Ok(Config {
        mtu: u.int_in_range(6..=crate::batch_demo::MTU)?,
        send_batches: u.int_in_range(1..=3)?,
        incoming_per_stage: u.int_in_range(1..=8)?,
        incoming_bytes: u.int_in_range(0..=2048)?,
    })
}

/// Only the kind and field of a send's error are compared: the offset of a message's own error
/// depends on where in its batch it was being written.
fn same_verdict(got: &Result<()>, want: &Result<()>) -> bool {
    match (got, want) {
        (Ok(()), Ok(())) => true,
        (Err(a), Err(b)) => a.kind() == b.kind() && a.field() == b.field(),
        _ => false,
    }
}

fn check_world(world: &DemoWorld, model: &Model, step: usize) {
    assert_eq!(
        world.links.len(),
        model.linked.len(),
        "step {step}: the world links {} objects, the model {:?}",
        world.links.len(),
        model.linked
    );
    for &id in &model.linked {
        let nid = NetworkId::new(id).filter(|_| id <= MAX_NETWORK_ID);
        let nid = nid.unwrap_or_else(|| panic!("step {step}: linked id {id} outside 1..=65535"));
        assert_eq!(world.links.object(nid), Some(id), "step {step}: id {id}");
    }
}

/// `batch_receive`: an arbitrary game loop (datagrams received, stages processed, frames ended,
/// loopback and remote sends, clients joining and leaving) on a [`MessageSystem`] with small
/// queues and the demo world as its dispatcher: every step's result, the counters, what the
/// dispatcher is handed and the world's linked objects agree with the model (module doc).
pub fn batch_receive(data: &[u8]) {
    batch_receive_run(data);
}

/// [`batch_receive`], returning the system's counters at the end (`None` when the input holds
/// no configuration): what the seeds of its corpus are named after.
pub fn batch_receive_run(data: &[u8]) -> Option<Stats> {
    let mut u = Unstructured::new(data);
    let config = config(&mut u).ok()?;
    let mut system = MessageSystem::new(config, LOCAL).expect("a valid configuration");
    let mut model = Model::new(config);
    let mut world = DemoWorld::default();
    for i in 0..64 {
        if u.is_empty() {
            break;
        }
        let Ok(s) = step(&mut u) else { break };
        match s {
            Step::Receive {
                from,
                channel,
                datagram,
            } => {
                let got = system.receive(from, channel, &datagram);
                let want = model.receive(from, channel, &datagram);
                assert_eq!(got, want, "step {i}: receive");
            }
            Step::Process(stage) => {
                let mut rec = Recording {
                    world: &mut world,
                    seen: Vec::new(),
                };
                let got = system.process(stage, &mut rec);
                let (want, seen) = model.process(stage);
                assert_eq!(
                    rec.seen, seen,
                    "step {i}: the dispatcher saw other messages"
                );
                assert_eq!(got, want, "step {i}: process report");
            }
            Step::EndFrame => {
                let mut got: Vec<(ClientId, Channel, Vec<u8>)> = Vec::new();
                system.end_frame(|c, channel, batch| got.push((c, channel, batch.to_vec())));
                let want = model.end_frame();
                let mut i_got = 0;
                for Outgoing {
                    client,
                    batches,
                    messages,
                } in want
                {
                    let mine: Vec<_> = got[i_got..]
                        .iter()
                        .take_while(|(c, _, _)| *c == client)
                        .collect();
                    i_got += mine.len();
                    let shape: Vec<(Channel, usize)> =
                        mine.iter().map(|(_, ch, b)| (*ch, b.len())).collect();
                    assert_eq!(shape, batches, "step {i}: batches to {client:?}");
                    let mut back = Vec::new();
                    for (_, ch, b) in &mine {
                        assert!(b.len() <= config.mtu, "a batch over the MTU");
                        for m in read_batch(b).expect("a sent batch reads") {
                            let m = m.expect("a sent message reads");
                            let end = m.body_offset() + m.body.len();
                            back.push((*ch, b[m.offset..end].to_vec()));
                        }
                    }
                    assert_eq!(back, messages, "step {i}: messages to {client:?}");
                }
                assert_eq!(i_got, got.len(), "step {i}: batches to unknown clients");
            }
            Step::SetStage(stage) => {
                system.set_stage(stage);
                model.stage = stage;
            }
            Step::SetTime(t) => {
                system.set_time(t);
                model.time = t;
            }
            Step::Send {
                to,
                channel,
                stage,
                mut message,
            } => {
                let want = model.send(&to, channel, stage, &message);
                let got = message.send(&mut system, &to, channel, stage, &mut world);
                assert!(
                    same_verdict(&got, &want),
                    "step {i}: send {to:?} gave {got:?}, the model {want:?}"
                );
            }
            Step::AddClient(c) => {
                let got = system.add_client(c);
                assert_eq!(got, model.add_client(c), "step {i}: add_client");
            }
            Step::RemoveClient(c) => {
                system.remove_client(c);
                model.clients.retain(|o| o.client != c);
            }
        }
        assert_eq!(system.stats(), model.stats, "step {i}: counters");
        assert_eq!(system.stage(), model.stage, "step {i}: stage");
        check_world(&world, &model, i);
    }
    Some(system.stats())
}
