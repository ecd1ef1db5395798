//! `skirmish inspect captures/custom.pcap` in a real terminal (tmux): the TUI of the game's
//! own inspector opens on skirmish's packets, jumps to the first problem with `n`, and quits
//! with `q`. Skipped without tmux, except under CI, where it fails
//! (`scripts/install-test-deps.sh` installs it).

use std::path::Path;
use std::process::{Command, Output};
use std::thread::sleep;
use std::time::{Duration, Instant};

/// One tmux server of this test's own (`-L`), so no other session is touched.
fn tmux(socket: &str, args: &[&str]) -> Output {
    Command::new("tmux")
        .arg("-L")
        .arg(socket)
        .args(args)
        .output()
        .expect("tmux runs")
}

fn tmux_or_skip() -> bool {
    if Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "tmux not installed: run scripts/install-test-deps.sh"
    );
    eprintln!("skipped: tmux not installed (run scripts/install-test-deps.sh)");
    false
}

/// The pane's text once it contains every string of `want` (or what it shows after 20 s: a
/// frame may be caught half drawn).
fn wait_for(socket: &str, want: &[&str]) -> String {
    let start = Instant::now();
    loop {
        let o = tmux(socket, &["capture-pane", "-p", "-t", "skirmish"]);
        let screen = String::from_utf8_lossy(&o.stdout).into_owned();
        if want.iter().all(|w| screen.contains(w)) || start.elapsed() > Duration::from_secs(20) {
            return screen;
        }
        sleep(Duration::from_millis(100));
    }
}

#[test]
fn the_games_inspector_opens_its_capture_in_a_terminal() {
    if !tmux_or_skip() {
        return;
    }
    let socket = format!("skirmish-test-{}", std::process::id());
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let command = format!(
        "{} inspect captures/custom.pcap",
        env!("CARGO_BIN_EXE_skirmish")
    );
    let o = tmux(
        &socket,
        &[
            "new-session",
            "-d",
            "-s",
            "skirmish",
            "-x",
            "160",
            "-y",
            "45",
            "-c",
            root.to_str().expect("a UTF-8 path"),
            &command,
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let result = std::panic::catch_unwind(|| {
        let first = ["Packets 1/167", "Input", "Snapshot", "decoder skirmish"];
        let screen = wait_for(&socket, &first);
        for want in first {
            assert!(screen.contains(want), "{want} not on screen:\n{screen}");
        }
        // The first problem: the desync of frame 37, at its check marker.
        tmux(&socket, &["send-keys", "-t", "skirmish", "n"]);
        let problem = [
            "Packets 37/167",
            "frame 37",
            "\u{2260} desync",
            "check \"header\" expected 0xee4ba44d found 0x4ba44d01",
        ];
        let screen = wait_for(&socket, &problem);
        for want in problem {
            assert!(screen.contains(want), "{want} not on screen:\n{screen}");
        }
        tmux(&socket, &["send-keys", "-t", "skirmish", "q"]);
        let start = Instant::now();
        while tmux(&socket, &["has-session", "-t", "skirmish"])
            .status
            .success()
        {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "q did not quit the inspector"
            );
            sleep(Duration::from_millis(100));
        }
    });
    let _ = tmux(&socket, &["kill-server"]);
    if let Err(panic) = result {
        std::panic::resume_unwind(panic);
    }
}
