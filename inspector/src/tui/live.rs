//! A live session (`bitlens proxy --tui`): the inspector on datagrams that arrive over a
//! channel, as [`Arrival`]s, while the session runs. Whoever receives them (the proxy's sink)
//! sends them; between frames the loop appends them to the app's growing capture
//! ([`App::push_live`]) with their verdicts.

use super::{App, Live, color, session};
use crate::capture::Capture;
use crate::dissectors::{Arrival, Dissectors};
use anyhow::Result;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::Receiver;

/// Most datagrams taken from the channel between two frames (the rest wait for the next).
pub const PER_FRAME: usize = 20_000;

/// Appends the datagrams waiting in `rx` to `app` (at most [`PER_FRAME`]), each with its
/// verdict by the app's dissectors; true if any came.
pub fn feed(app: &mut App, rx: &Receiver<Arrival>) -> bool {
    let mut any = false;
    for _ in 0..PER_FRAME {
        let Ok(a) = rx.try_recv() else { break };
        let v = app
            .dissectors
            .verdict_seen(&a.datagram, &a.payload, &a.observed);
        let (status, packet_type) = (v.status, v.packet_type.map(str::to_owned));
        // Kept as long as the session: without the plaintext the proxy's pass handed on.
        let observed = app.dissectors.to_keep(&a.datagram, a.observed);
        app.push_live_seen(
            a.datagram,
            &a.payload,
            status,
            packet_type.as_deref(),
            observed,
        );
        any = true;
    }
    any
}

/// Runs the inspector on a live session named `name` (the list's capture), decoding with
/// `dissectors`, until the user quits or `stop` is set; `message` (what the session does)
/// shows on the status line until the first key. The terminal is restored on return and on
/// panic; the datagrams still in `rx` are the caller's.
///
/// # Errors
/// Terminal I/O errors.
pub fn run(
    name: String,
    dissectors: Dissectors,
    program: &str,
    message: &str,
    rx: &Receiver<Arrival>,
    stop: &AtomicBool,
) -> Result<()> {
    session(
        |size| {
            let mut app = App::new(
                Arc::new(Capture::live(name)),
                Arc::new(dissectors),
                color(),
                size,
                program,
            );
            app.live = Some(Live {
                follow: true,
                ..Live::default()
            });
            app.message = Some(message.to_owned());
            (app, |app: &mut App| feed(app, rx))
        },
        stop,
    )
}
