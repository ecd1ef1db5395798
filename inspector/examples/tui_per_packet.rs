//! The TUI's work per packet, as a user drives it, for BENCHMARKS.md ("The trace entry": the
//! TUI per packet): opens CAPTURE in the inspector's [`App`] (the transports' pass and every
//! datagram's summary), then for each of the first MOVES datagrams (all by default) presses `j`
//! in the packet list (the handler dissects the datagram and opens its detail: the field tree
//! and the bit view) and draws one frame into a 150x40 ratatui `TestBackend`. Prints the moves,
//! the last row and a checksum of the frames (every 64th and the last), which is the same
//! wherever the screens are.
//!
//! ```text
//! cargo build --release -p bitlens --example tui_per_packet
//! valgrind --tool=callgrind --dump-instr=no --callgrind-out-file=tui.out \
//!     target/release/examples/tui_per_packet /tmp/synth-20k.pcap [MOVES]
//! ```
//!
//! Run with MOVES = 1 for the start-up alone; the difference is the per-packet part.

use bitlens::Dissectors;
use bitlens::capture::Capture;
use bitlens::tui::{App, Key, ui};
use bitlens_testkit::{batch_demo, demo};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::sync::Arc;

/// The terminal drawn into.
const SIZE: (u16, u16) = (150, 40);

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: tui_per_packet CAPTURE [MOVES]");
        std::process::exit(2);
    };
    let moves = match args.next().map(|m| m.parse::<usize>()) {
        None => usize::MAX,
        Some(Ok(m)) => m,
        Some(Err(_)) => {
            eprintln!("tui_per_packet: MOVES is not a number");
            std::process::exit(2);
        }
    };
    let capture = match Capture::open(&path) {
        Ok(c) => Arc::new(c),
        Err(e) => {
            eprintln!("tui_per_packet: {e}");
            std::process::exit(2);
        }
    };
    let mut d = Dissectors::new();
    d.register(demo::PORT, Arc::new(demo::dissector()));
    d.register(batch_demo::PORT, Arc::new(batch_demo::dissector()));
    let moves = moves.min(capture.datagrams().len());
    let mut app = App::new(capture, Arc::new(d), true, SIZE, "bitlens");
    app.summarize_all();
    let mut t = Terminal::new(TestBackend::new(SIZE.0, SIZE.1)).expect("a test backend");
    let mut sum = 0u64;
    for k in 0..moves {
        if k > 0 {
            app.handle_key(Key::Char('j'));
        }
        t.draw(|f| ui::draw(&app, f)).expect("a test backend");
        if k % 64 == 0 || k + 1 == moves {
            for c in &t.backend().buffer().content {
                for b in c.symbol().bytes() {
                    sum = sum.wrapping_mul(31).wrapping_add(u64::from(b));
                }
            }
        }
    }
    let rows = app.detail.as_ref().map_or(0, |d| d.visible.len());
    println!(
        "{moves} moves, selected {:?}, {rows} rows, checksum {sum:016x}",
        app.selected_datagram()
    );
}
