//! What the inspector's tests that run the `bitlens` binary share: the runner, the repository
//! root, the "installed or skipped" check for outside tools, and a tmux pane for the TUI.
//!
//! Each test file takes it with `mod common;` and uses the parts it needs.

// Every test file is its own crate and uses only some of these.
#![allow(dead_code)]

pub mod proxy;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::thread::sleep;
use std::time::{Duration, Instant};

/// The `bitlens` binary cargo built for these tests.
pub const BIN: &str = env!("CARGO_BIN_EXE_bitlens");

/// The repository's root (where `captures/` is).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the inspector is inside the repository")
        .to_path_buf()
}

/// `bitlens`, to run in the repository's root, with no arguments yet.
pub fn command() -> Command {
    let mut c = Command::new(BIN);
    c.current_dir(root());
    c
}

/// Runs `bitlens ARGS` in the repository's root and waits for it.
pub fn bitlens<S: AsRef<OsStr>>(args: &[S]) -> Output {
    command().args(args).output().expect("bitlens runs")
}

/// `bytes` as text, with any invalid UTF-8 replaced.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Whether `tool` runs (`tool VERSION_ARG` succeeds). Without it a test skips, saying so past
/// the harness's output capture, except under CI, where it fails:
/// `scripts/install-test-deps.sh` installs every tool the tests use.
pub fn installed_or_skip(tool: &str, version_arg: &str) -> bool {
    if Command::new(tool)
        .arg(version_arg)
        .output()
        .is_ok_and(|o| o.status.success())
    {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{tool} not installed: run scripts/install-test-deps.sh"
    );
    use std::io::Write as _;
    let _ = writeln!(
        std::io::stderr(),
        "skipped: {tool} not installed (run scripts/install-test-deps.sh)"
    );
    false
}

/// A terminal for the TUI tests: one tmux server of the test's own (`-L`), so no other session
/// is touched, with one 120x40 pane named `t`.
pub mod tmux {
    use super::*;

    /// Runs `tmux -L SOCKET ARGS`.
    pub fn run(socket: &str, args: &[&str]) -> Output {
        Command::new("tmux")
            .arg("-L")
            .arg(socket)
            .args(args)
            .output()
            .expect("tmux runs")
    }

    /// Whether tmux is installed (see [`installed_or_skip`]).
    pub fn or_skip() -> bool {
        installed_or_skip("tmux", "-V")
    }

    /// Types `keys` into the pane (tmux key names: `Enter`, `Escape`, ...).
    pub fn send_keys(socket: &str, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "t"];
        args.extend_from_slice(keys);
        run(socket, &args);
    }

    /// The pane's text once it contains every string of `want` (or what it shows after 30 s).
    pub fn wait_for(socket: &str, want: &[&str]) -> String {
        let start = Instant::now();
        loop {
            let o = run(socket, &["capture-pane", "-p", "-t", "t"]);
            let screen = text(&o.stdout);
            if want.iter().all(|w| screen.contains(w)) || start.elapsed() > Duration::from_secs(30)
            {
                return screen;
            }
            sleep(Duration::from_millis(100));
        }
    }

    /// Fails unless the pane comes to show every string of `want` within 30 s.
    pub fn expect(socket: &str, want: &[&str]) {
        let screen = wait_for(socket, want);
        for w in want {
            assert!(screen.contains(w), "{w:?} not on screen:\n{screen}");
        }
    }

    /// Runs the shell command `command` in the repository's root in a 120x40 pane of a server
    /// of its own, named after `name`, then `body` with the server's socket; always kills the
    /// server, and then fails if `body` did.
    pub fn session(name: &str, command: &str, body: impl FnOnce(&str) + std::panic::UnwindSafe) {
        let socket = format!("bitlens-{name}-{}", std::process::id());
        let root = root();
        let o = run(
            &socket,
            &[
                "new-session",
                "-d",
                "-s",
                "t",
                "-x",
                "120",
                "-y",
                "40",
                "-c",
                root.to_str().expect("a UTF-8 path"),
                command,
            ],
        );
        assert!(o.status.success(), "{}", text(&o.stderr));
        let s = socket.clone();
        let result = std::panic::catch_unwind(move || body(&s));
        let _ = run(&socket, &["kill-server"]);
        if let Err(panic) = result {
            std::panic::resume_unwind(panic);
        }
    }
}
