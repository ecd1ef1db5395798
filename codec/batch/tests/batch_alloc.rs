//! Seed 002's promise, counted: after warm-up, sending, batching, receiving, decoding and
//! handling messages allocates nothing on the heap.
//!
//! One test in this binary, so no other test thread allocates while the region counts.

use bitlens_batch::{Channel, ClientId, Config, InlineStr, MessageSystem, UpdateStage, read_batch};
use bitlens_testkit::batch_demo::{
    ChatText, DemoMessage, DemoWorld, MoveRigidBody, Ping, SpawnRoboCat, samples,
};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};
use std::alloc::System;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const SERVER: ClientId = ClientId(0);
const CLIENTS: [ClientId; 3] = [ClientId(1), ClientId(2), ClientId(3)];

struct Game {
    server: MessageSystem,
    server_world: DemoWorld,
    client: MessageSystem,
    client_world: DemoWorld,
    spawn: SpawnRoboCat,
    mv: MoveRigidBody,
    frame: u64,
    datagrams: u64,
}

impl Game {
    fn new() -> Self {
        let mut server = MessageSystem::new(Config::default(), SERVER).unwrap();
        for c in CLIENTS {
            server.add_client(c).unwrap();
        }
        let mut client = MessageSystem::new(Config::default(), CLIENTS[0]).unwrap();
        client.add_client(SERVER).unwrap();
        let s = samples();
        let (DemoMessage::Spawn(spawn), DemoMessage::Move(mv)) = (s[0].clone(), s[1].clone())
        else {
            unreachable!()
        };
        Game {
            server,
            server_world: DemoWorld::default(),
            client,
            client_world: DemoWorld::default(),
            spawn,
            mv,
            frame: 0,
            datagrams: 0,
        }
    }

    /// One frame: 8 messages sent by the server (one to all three clients and itself, the
    /// others to one destination, three of them looped back), the client's datagrams received,
    /// decoded and handled, a pong sent back.
    fn frame(&mut self) {
        self.frame += 1;
        let (sv, w) = (&mut self.server, &mut self.server_world);
        let ch = Channel(0);
        sv.set_stage(UpdateStage::UPDATE);
        let everyone = [CLIENTS[0], CLIENTS[1], CLIENTS[2], SERVER];
        sv.send(&everyone, ch, UpdateStage::UPDATE, &mut self.mv, w)
            .unwrap();
        sv.send(
            &CLIENTS[..1],
            ch,
            UpdateStage::FIXED_UPDATE,
            &mut self.spawn,
            w,
        )
        .unwrap();
        let mut chat = ChatText {
            player: 7,
            text: InlineStr::truncated("steady state"),
        };
        sv.send(&CLIENTS[..1], Channel(1), UpdateStage::UPDATE, &mut chat, w)
            .unwrap();
        let stamp = bitlens_testkit::batch_demo::PingStamp {
            sequence: self.frame as u32,
            sent_ms: self.frame as u32 * 16,
            frame: self.frame,
        };
        sv.send(
            &CLIENTS[..1],
            ch,
            UpdateStage::EARLY_UPDATE,
            &mut Ping { stamp },
            w,
        )
        .unwrap();
        sv.send(
            &CLIENTS[1..2],
            ch,
            UpdateStage::UPDATE,
            &mut Ping { stamp },
            w,
        )
        .unwrap();
        // Loopback: later stage (this frame), earlier stage (next frame).
        sv.send(
            &[SERVER],
            ch,
            UpdateStage::PRE_LATE_UPDATE,
            &mut Ping { stamp },
            w,
        )
        .unwrap();
        sv.send(&[SERVER], ch, UpdateStage::EARLY_UPDATE, &mut chat, w)
            .unwrap();
        for stage in UpdateStage::ALL {
            sv.process(stage, w);
        }
        let (client, cw, datagrams) = (
            &mut self.client,
            &mut self.client_world,
            &mut self.datagrams,
        );
        self.server.end_frame(|to, channel, batch| {
            *datagrams += 1;
            if to == CLIENTS[0] {
                client.receive(SERVER, channel, batch).unwrap();
            } else {
                // Other clients: just walk the batch, as their transport would.
                for m in read_batch(batch).unwrap() {
                    m.unwrap();
                }
            }
        });
        cw.now_ms = self.frame as u32 * 16 + 5;
        for stage in UpdateStage::ALL {
            let r = client.process(stage, cw);
            assert_eq!(r.failed, 0);
        }
        if let Some(mut pong) = cw.pong_due.take() {
            client
                .send(&[SERVER], ch, UpdateStage::UPDATE, &mut pong, cw)
                .unwrap();
        }
        client.end_frame(|_, _, batch| assert!(read_batch(batch).is_ok()));
    }
}

#[test]
fn steady_state_messaging_allocates_nothing() {
    let mut game = Game::new();
    for _ in 0..3 {
        game.frame(); // warm-up: the linking context's first insert, the varint scratch
    }
    let handled_before: u64 = game.client_world.handled.iter().sum();
    let server_before: u64 = game.server_world.handled.iter().sum();
    let datagrams_before = game.datagrams;
    const FRAMES: u64 = 1000;
    const ROUNDS: u64 = 3;
    // The counting allocator sees every thread of the test process, and the test harness's own
    // threads may allocate now and then. A real per-message allocation shows as thousands in
    // every round; measure a few rounds and keep the quietest.
    let mut change = None;
    for _ in 0..ROUNDS {
        let region = Region::new(GLOBAL);
        for _ in 0..FRAMES {
            game.frame();
        }
        let c = region.change();
        if change.is_none_or(|best: stats_alloc::Stats| {
            c.allocations + c.reallocations < best.allocations + best.reallocations
        }) {
            change = Some(c);
        }
    }
    let change = change.unwrap();
    let handled = game.client_world.handled.iter().sum::<u64>() - handled_before;
    let server = game.server_world.handled.iter().sum::<u64>() - server_before;
    let datagrams = game.datagrams - datagrams_before;
    // The client handles 4 messages a frame (move, spawn, chat, ping), the server 3 looped back.
    assert_eq!(handled, 4 * FRAMES * ROUNDS);
    assert_eq!(server, 3 * FRAMES * ROUNDS);
    assert!(datagrams >= 3 * FRAMES * ROUNDS);
    assert_eq!(
        (change.allocations, change.reallocations),
        (0, 0),
        "{change:?} over {handled} received and {server} looped-back messages"
    );
    // The counter does count: one small vector is one allocation.
    let region = Region::new(GLOBAL);
    let v = std::hint::black_box(Vec::<u8>::with_capacity(8));
    assert_eq!(region.change().allocations, 1);
    drop(v);
}
