//! `inspect CAPTURE`: the terminal UI (ratatui + crossterm), split as binsider and gitui
//! split theirs:
//!
//! - [`state`]: [`App`], a plain struct, and the queries on it;
//! - [`event`]: keys independent of the terminal, mapped from crossterm's;
//! - [`handler`]: what keys, clicks and resizes do to the state (no terminal access);
//! - [`layout`]: every pane's rectangle from the terminal size ([`Areas`]);
//! - [`ui`]: the drawing, a pure function of the state;
//! - [`live`]: the loop of a live session (`proxy --tui`), whose list grows as datagrams
//!   arrive ([`App::push_live`]).
//!
//! This module owns the terminal: it restores it on every exit path, panics included, and
//! feeds the app the verdicts a background thread computes (the list is usable at once, the
//! status counts fill in with a progress gauge).

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

/// Runs the inspector until the user quits (`program` names the program in its help). The
/// terminal is restored on return and on panic.
///
/// # Errors
/// Terminal I/O errors.
pub fn run(capture: Capture, dissectors: Dissectors, program: &str) -> Result<()> {
    let color = std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let capture = Arc::new(capture);
    let dissectors = Arc::new(dissectors);

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
        let mut app = App::new(capture, dissectors, color, (size.width, size.height));
        app.program = program.to_owned();
        let rx = spawn_summaries(
            Arc::clone(&app.capture),
            Arc::clone(&app.dissectors),
            Arc::clone(&app.seen),
        );
        let mut dirty = true;
        while !app.quit {
            while let Ok(batch) = rx.try_recv() {
                app.add_summaries(batch);
                dirty = true;
            }
            if dirty {
                terminal.draw(|f| ui::draw(&app, f))?;
                dirty = false;
            }
            if !terminal_event::poll(Duration::from_millis(50))? {
                continue;
            }
            match terminal_event::read()? {
                Event::Key(k) if k.kind != KeyEventKind::Release => {
                    if let Some(key) = map_key(k.code, k.modifiers) {
                        app.handle_key(key);
                    }
                }
                Event::Mouse(m) => match m.kind {
                    MouseEventKind::Down(_) => app.click(m.column, m.row),
                    MouseEventKind::ScrollDown => app.scroll(m.column, m.row, true),
                    MouseEventKind::ScrollUp => app.scroll(m.column, m.row, false),
                    _ => continue,
                },
                Event::Resize(w, h) => app.resize(w, h),
                _ => continue,
            }
            dirty = true;
        }
        Ok(())
    })();
    let _ = execute!(std::io::stdout(), DisableMouseCapture);
    ratatui::restore();
    result
}
