//! Progress bars on stderr for long work (`decode`, `check`, `profile`, `synth`), drawn with
//! `indicatif` only when stderr is a terminal: never into a pipe or a file, and never when
//! the command writes JSON (whose readers take stderr for errors).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::Duration;

/// A progress bar, or nothing when stderr is not a terminal (or the caller said no).
#[derive(Debug)]
pub struct Progress(Option<ProgressBar>);

/// Inputs smaller than this many bytes draw no bar: the work ends before one would be seen.
const MIN_BYTES: u64 = 4 << 20;

/// Work of fewer items (datagrams) than this draws no bar.
const MIN_ITEMS: u64 = 100_000;

impl Progress {
    /// No bar.
    pub fn hidden() -> Self {
        Progress(None)
    }

    /// A bar over `total` bytes of input, labelled `what`, when `wanted`, stderr is a terminal
    /// and the input is large enough (4 MiB) to take a while.
    pub fn bytes(total: u64, what: &str, wanted: bool) -> Self {
        Self::new(
            total,
            total >= MIN_BYTES && wanted,
            what,
            "{bytes}/{total_bytes}",
        )
    }

    /// A bar over `total` items (datagrams), labelled `what`, when `wanted`, stderr is a
    /// terminal and there are enough of them to take a while.
    pub fn items(total: u64, what: &str, wanted: bool) -> Self {
        Self::new(total, total >= MIN_ITEMS && wanted, what, "{pos}/{len}")
    }

    fn new(total: u64, wanted: bool, what: &str, counts: &str) -> Self {
        if !wanted || !std::io::stderr().is_terminal() {
            return Progress(None);
        }
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        let template = format!("{{prefix}} [{{bar:40}}] {counts} ({{eta}} left)");
        if let Ok(style) = ProgressStyle::with_template(&template) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_prefix(what.to_owned());
        bar.enable_steady_tick(Duration::from_millis(200));
        Progress(Some(bar))
    }

    /// True when a bar is drawn.
    pub fn is_shown(&self) -> bool {
        self.0.is_some()
    }

    /// Moves the bar to `done`.
    pub fn set(&self, done: u64) {
        if let Some(bar) = &self.0 {
            bar.set_position(done);
        }
    }

    /// Moves the bar on by `n`.
    pub fn inc(&self, n: u64) {
        if let Some(bar) = &self.0 {
            bar.inc(n);
        }
    }

    /// Removes the bar from the terminal.
    pub fn finish(&self) {
        if let Some(bar) = &self.0 {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}
