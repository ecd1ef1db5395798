//! In a real terminal (tmux): `P` in `bitlens inspect` opens the profile of the filter in
//! force (the table and the bits-per-second chart) and Esc closes it; long work draws a
//! progress bar on a terminal's stderr. Skipped without tmux, except under CI, where it fails
//! (`scripts/install-test-deps.sh` installs it).

use std::path::{Path, PathBuf};
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

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The pane's text once it contains every string of `want` (or what it shows after 30 s).
fn wait_for(socket: &str, want: &[&str]) -> String {
    let start = Instant::now();
    loop {
        let o = tmux(socket, &["capture-pane", "-p", "-t", "t"]);
        let screen = String::from_utf8_lossy(&o.stdout).into_owned();
        if want.iter().all(|w| screen.contains(w)) || start.elapsed() > Duration::from_secs(30) {
            return screen;
        }
        sleep(Duration::from_millis(100));
    }
}

fn expect(socket: &str, want: &[&str]) {
    let screen = wait_for(socket, want);
    for w in want {
        assert!(screen.contains(w), "{w:?} not on screen:\n{screen}");
    }
}

/// Runs `command` in a 120x40 tmux pane of a server of its own, then `body`; always kills the
/// server.
fn in_tmux(name: &str, command: &str, body: impl FnOnce(&str) + std::panic::UnwindSafe) {
    let socket = format!("bitlens-{name}-{}", std::process::id());
    let o = tmux(
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
            root().to_str().expect("a UTF-8 path"),
            command,
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s = socket.clone();
    let result = std::panic::catch_unwind(move || body(&s));
    let _ = tmux(&socket, &["kill-server"]);
    if let Err(panic) = result {
        std::panic::resume_unwind(panic);
    }
}

#[test]
fn p_opens_the_profile_of_the_filter_and_esc_closes_it() {
    if !tmux_or_skip() {
        return;
    }
    let command = format!(
        "{} inspect captures/demo.pcap",
        env!("CARGO_BIN_EXE_bitlens")
    );
    in_tmux("profile-view", &command, |socket| {
        expect(socket, &["Packets 1/2000"]);
        tmux(
            socket,
            &["send-keys", "-t", "t", "/", "type:Scene", "Enter"],
        );
        expect(socket, &["type:Scene"]);
        tmux(socket, &["send-keys", "-t", "t", "P"]);
        expect(
            socket,
            &[
                "profile of filter type:Scene: 397 decoded",
                "(IP + UDP headers)",
                "SceneUpdate.objects[].position.x",
                "bits per second",
            ],
        );
        let screen = wait_for(socket, &[]);
        assert!(
            !screen.contains("RigidBody.position"),
            "only the filter's:\n{screen}"
        );
        // Esc closes the profile, not the inspector.
        tmux(socket, &["send-keys", "-t", "t", "Escape"]);
        expect(socket, &["? help"]);
        let screen = wait_for(socket, &[]);
        assert!(!screen.contains("bits per second"), "{screen}");
        tmux(socket, &["send-keys", "-t", "t", "q"]);
    });
}

/// yojimbo's rows in the `P` view: the layer's overhead rows, a message type's field, then the
/// message types and channels (the soak capture, with its schema and key).
#[test]
fn p_shows_yojimbos_message_types_and_channels() {
    if !tmux_or_skip() {
        return;
    }
    let command = format!(
        "{} inspect captures/yojimbo-soak.pcap --decode 40000=yojimbo --netcode-key \
         captures/yojimbo-reference.key --schema captures/yojimbo.schema.toml",
        env!("CARGO_BIN_EXE_bitlens")
    );
    in_tmux("profile-yojimbo", &command, |socket| {
        expect(socket, &["Packets 1/618"]);
        tmux(socket, &["send-keys", "-t", "t", "P"]);
        expect(
            socket,
            &[
                "618 decoded",
                "(reliable.io headers)",
                "(channel framing)",
                "(packet fragments)",
                "TestMessage.sequence",
                "message TestMessage",
                "message TestBlockMessage",
                "channel 1",
            ],
        );
        tmux(socket, &["send-keys", "-t", "t", "Escape"]);
        expect(socket, &["? help"]);
        tmux(socket, &["send-keys", "-t", "t", "q"]);
    });
}

#[test]
fn long_work_shows_a_progress_bar_on_a_terminal() {
    if !tmux_or_skip() {
        return;
    }
    let out = std::env::temp_dir().join(format!("bitlens-bar-{}.pcap", std::process::id()));
    // stdout to a file, stderr the terminal; the pane stays open after the command.
    let command = format!(
        "{} synth {} --packets 400000 > /dev/null; sleep 60",
        env!("CARGO_BIN_EXE_bitlens"),
        out.display()
    );
    in_tmux("progress", &command, |socket| {
        expect(socket, &["synth [", "/400000"]);
    });
    let _ = std::fs::remove_file(out);
}
