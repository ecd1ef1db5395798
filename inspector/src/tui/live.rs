//! `bitlens proxy --tui`: the inspector on a live session. The relay runs on a thread of its
//! own ([`Proxy::run`]); the sink hands each datagram over a bounded channel, and this loop
//! appends it to the app's growing capture ([`App::push_live`]) with its verdict, between
//! frames. The recording and the mutation log are written as in the headless mode.

use super::{App, Live, map_key, ui};
use crate::capture::Datagram;
use crate::proxy::output::Outputs;
use crate::proxy::relay::Report;
use crate::proxy::{CHANNEL, Proxy, Seen};
use anyhow::{Result, anyhow};
use ratatui::crossterm::event::{self, Event, KeyEventKind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, sync_channel};
use std::time::Duration;

/// Most datagrams taken from the channel between two frames (the rest wait for the next).
pub const PER_FRAME: usize = 20_000;

/// Appends the datagrams waiting in `rx` to `app` (at most [`PER_FRAME`]); true if any came.
pub fn feed(app: &mut App, rx: &Receiver<Seen>, dis: &crate::proxy::SessionDissector) -> bool {
    let mut any = false;
    for _ in 0..PER_FRAME {
        let Ok(seen) = rx.try_recv() else { break };
        let (src, dst) = seen.endpoints();
        let d = Datagram::detached(seen.frame, seen.time, src, dst, seen.bytes.len());
        let v = dis
            .dissectors()
            .verdict_seen(&d, &seen.bytes, &seen.observed);
        let (status, packet_type) = (v.status, v.packet_type.map(str::to_owned));
        let observed = seen.observed.clone();
        app.push_live_seen(d, &seen.bytes, status, packet_type.as_deref(), observed);
        any = true;
    }
    any
}

/// Runs the proxy with the inspector on its session until the user quits (or SIGINT); the
/// terminal is restored on return.
///
/// # Errors
/// Terminal I/O errors; polling errors of the relay.
pub fn run(
    proxy: Proxy,
    mut outputs: Outputs,
    stop: Arc<AtomicBool>,
    summary: &str,
) -> Result<Report> {
    let (tx, rx) = sync_channel::<Seen>(CHANNEL);
    outputs.live = Some(tx);
    let dis = proxy.dissector();
    let name = format!("proxy {} → {}", proxy.local_addr(), proxy.upstream());
    let relay_stop = Arc::clone(&stop);
    let relay = std::thread::Builder::new()
        .name("bitlens-relay".into())
        .spawn(move || proxy.run(outputs, relay_stop))?;

    let color = std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let mut terminal = ratatui::init();
    let result = (|| -> Result<()> {
        let size = terminal.size()?;
        let mut app = App::new(
            Arc::new(crate::capture::Capture::live(name)),
            Arc::new(dis.dissectors().clone()),
            color,
            (size.width, size.height),
        );
        app.live = Some(Live {
            follow: true,
            ..Live::default()
        });
        // What the proxy does, until the first key clears it.
        app.message = Some(summary.to_owned());
        let mut dirty = true;
        while !app.quit && !stop.load(Ordering::Relaxed) {
            dirty |= feed(&mut app, &rx, &dis);
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
                Event::Resize(w, h) => app.resize(w, h),
                _ => continue,
            }
            dirty = true;
        }
        Ok(())
    })();
    ratatui::restore();
    stop.store(true, Ordering::Relaxed);
    // The sink may be blocked handing a datagram to the list: let it finish.
    let drain = std::thread::spawn(move || while rx.recv().is_ok() {});
    let report = relay
        .join()
        .map_err(|_| anyhow!("the relay thread panicked"))??;
    let _ = drain.join();
    result.map(|()| report)
}
