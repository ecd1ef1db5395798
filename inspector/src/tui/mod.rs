//! `bitlens inspect CAPTURE`: the terminal UI (ratatui + crossterm).
//!
//! [`App`] is a plain struct; [`App::handle_key`] changes it without touching the terminal; and
//! [`ui::draw`] renders it as a pure function. This module owns the terminal: it restores it on
//! every exit path, panics included, and feeds the app the verdicts a background thread computes
//! (the list is usable at once, the status counts fill in with a progress gauge).

pub mod app;
pub mod live;
pub mod ui;

pub use app::{App, Key, Live, Pane};

use crate::capture::Capture;
use crate::decode::{Decoders, Status};
use anyhow::Result;
use ratatui::crossterm::event::{
    self, DisableMouseCapture, EnableMouseCapture, Event, KeyCode, KeyEventKind, KeyModifiers,
    MouseEventKind,
};
use ratatui::crossterm::execute;
use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

/// Verdicts per message from the background thread.
type SummaryBatch = Vec<(usize, Status, Option<String>)>;

/// Maps a terminal key to an app key.
pub fn map_key(code: KeyCode, mods: KeyModifiers) -> Option<Key> {
    Some(match code {
        KeyCode::Char('c') if mods.contains(KeyModifiers::CONTROL) => Key::Char('q'),
        KeyCode::Char(c) => Key::Char(c),
        KeyCode::Enter => Key::Enter,
        KeyCode::Esc => Key::Esc,
        KeyCode::Tab => Key::Tab,
        KeyCode::BackTab => Key::BackTab,
        KeyCode::Up => Key::Up,
        KeyCode::Down => Key::Down,
        KeyCode::Left => Key::Left,
        KeyCode::Right => Key::Right,
        KeyCode::PageUp => Key::PageUp,
        KeyCode::PageDown => Key::PageDown,
        KeyCode::Home => Key::Home,
        KeyCode::End => Key::End,
        KeyCode::Backspace => Key::Backspace,
        _ => return None,
    })
}

/// Starts the background pass that computes every datagram's verdict, in chunks.
fn spawn_summaries(capture: Arc<Capture>, decoders: Arc<Decoders>) -> mpsc::Receiver<SummaryBatch> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        const CHUNK: usize = 20_000;
        let all = capture.datagrams();
        for (c, chunk) in all.chunks(CHUNK).enumerate() {
            let batch: SummaryBatch = chunk
                .iter()
                .enumerate()
                .map(|(k, d)| {
                    let v = decoders.verdict(&capture, d);
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

/// Runs the inspector until the user quits. The terminal is restored on return and on panic.
///
/// # Errors
/// Terminal I/O errors.
pub fn run(capture: Capture, decoders: Decoders) -> Result<()> {
    let color = std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let capture = Arc::new(capture);
    let decoders = Arc::new(decoders);
    let rx = spawn_summaries(Arc::clone(&capture), Arc::clone(&decoders));

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
        let mut app = App::new(capture, decoders, color, (size.width, size.height));
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
            if !event::poll(Duration::from_millis(50))? {
                continue;
            }
            match event::read()? {
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
