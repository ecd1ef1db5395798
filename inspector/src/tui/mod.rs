//! `inspect CAPTURE`: the terminal UI (ratatui + crossterm), split as binsider and gitui
//! split theirs:
//!
//! - [`state`]: [`App`], a plain struct, and the queries on it;
//! - [`event`]: keys independent of the terminal, mapped from crossterm's;
//! - [`handler`]: what keys, clicks and resizes do to the state (no terminal access);
//! - [`layout`]: every pane's rectangle from the terminal size ([`Areas`]);
//! - [`ui`]: the drawing, a pure function of the state;
//! - [`live`]: a live session (`proxy --tui`), whose list grows as datagrams arrive over a
//!   channel ([`App::push_live`]); the TUI knows nothing of where they come from.
//!
//! This module owns the terminal and its one event loop, for a capture and for a live session:
//! it restores the terminal on every exit path, panics included. On a capture it feeds the app
//! the verdicts a background thread computes (the list is usable at once, the status counts
//! fill in with a progress gauge).

pub mod event;
pub mod handler;
pub mod layout;
pub mod live;
pub mod profile_view;
pub mod state;
pub mod ui;

pub use event::{Key, map_key};
pub use layout::Areas;
pub use state::{App, Detail, Filter, Live, Pane, Summary};

use crate::capture::Capture;
use crate::dissectors::{Dissectors, seen_at};
use anyhow::Result;
use bitlens_codec::dissect::Status;
use bitlens_codec::observe::Observation;
use ratatui::crossterm::event::{
    self as terminal_event, DisableMouseCapture, EnableMouseCapture, Event, KeyEventKind,
    MouseEventKind,
};
use ratatui::crossterm::execute;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

/// Verdicts per message from the background thread.
type SummaryBatch = Vec<(usize, Status, Option<String>)>;

/// Starts the background pass that computes every datagram's verdict, in chunks.
fn spawn_summaries(
    capture: Arc<Capture>,
    dissectors: Arc<Dissectors>,
    seen: Arc<Vec<Observation>>,
) -> mpsc::Receiver<SummaryBatch> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        const CHUNK: usize = 20_000;
        let all = capture.datagrams();
        for (c, chunk) in all.chunks(CHUNK).enumerate() {
            let batch: SummaryBatch = chunk
                .iter()
                .enumerate()
                .map(|(k, d)| {
                    let i = c * CHUNK + k;
                    let v = dissectors.verdict_seen(d, capture.payload(d), seen_at(&seen, i));
                    (c * CHUNK + k, v.status, v.packet_type.map(str::to_owned))
                })
                .collect();
            if tx.send(batch).is_err() {
                return; // the UI quit
            }
        }
    });
    rx
}

/// Whether to draw in colour: yes unless `NO_COLOR` is set (and not empty).
fn color() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// Runs the inspector until the user quits (`program` names the program in its help). The
/// terminal is restored on return and on panic.
///
/// # Errors
/// Terminal I/O errors.
pub fn run(capture: Capture, dissectors: Dissectors, program: &str) -> Result<()> {
    let (capture, dissectors) = (Arc::new(capture), Arc::new(dissectors));
    let never = AtomicBool::new(false);
    session(
        |size| {
            let app = App::new(capture, dissectors, color(), size, program);
            let rx = spawn_summaries(
                Arc::clone(&app.capture),
                Arc::clone(&app.dissectors),
                Arc::clone(&app.seen),
            );
            let feed = move |app: &mut App| {
                let mut any = false;
                while let Ok(batch) = rx.try_recv() {
                    app.add_summaries(batch);
                    any = true;
                }
                any
            };
            (app, feed)
        },
        &never,
    )
}

/// The one event loop of the inspector, for a capture ([`run`]) and for a live session
/// ([`live::run`]): owns the terminal (raw mode, the alternate screen and the mouse, released
/// on every exit path, panics included), makes the app with `start` from the terminal's size,
/// and until the user quits or `stop` is set draws it, hands it keys, clicks, the wheel and
/// resizes, and between frames lets `feed` bring it what arrived (true when anything did).
fn session<F: FnMut(&mut App) -> bool>(
    start: impl FnOnce((u16, u16)) -> (App, F),
    stop: &AtomicBool,
) -> Result<()> {
    // ratatui::init installs a panic hook that leaves raw mode and the alternate screen; ours,
    // chained in front of it, also releases the mouse.
    let mut terminal = ratatui::init();
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let _ = execute!(std::io::stdout(), DisableMouseCapture);
        previous(info);
    }));
    let _ = execute!(std::io::stdout(), EnableMouseCapture);

    let result = (|| -> Result<()> {
        let size = terminal.size()?;
        let (mut app, mut feed) = start((size.width, size.height));
        let mut dirty = true;
        while !app.quit && !stop.load(Ordering::Relaxed) {
            dirty |= feed(&mut app);
            if dirty {
                terminal.draw(|f| ui::draw(&app, f))?;
                dirty = false;
            }
            if terminal_event::poll(Duration::from_millis(50))? {
                dirty = handle_event(&mut app, terminal_event::read()?);
            }
        }
        Ok(())
    })();
    let _ = execute!(std::io::stdout(), DisableMouseCapture);
    ratatui::restore();
    result
}

/// Hands one terminal event to the app; true when it may have changed what is drawn.
fn handle_event(app: &mut App, event: Event) -> bool {
    match event {
        Event::Key(k) if k.kind != KeyEventKind::Release => {
            if let Some(key) = map_key(k.code, k.modifiers) {
                app.handle_key(key);
            }
        }
        Event::Mouse(m) => match m.kind {
            MouseEventKind::Down(_) => app.click(m.column, m.row),
            MouseEventKind::ScrollDown => app.scroll(m.column, m.row, true),
            MouseEventKind::ScrollUp => app.scroll(m.column, m.row, false),
            _ => return false,
        },
        Event::Resize(w, h) => app.resize(w, h),
        _ => return false,
    }
    true
}
