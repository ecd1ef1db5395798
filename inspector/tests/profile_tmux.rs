//! In a real terminal (tmux): `P` in `bitlens inspect` opens the profile of the filter in
//! force (the table and the bits-per-second chart) and Esc closes it; long work draws a
//! progress bar on a terminal's stderr; the live `proxy --tui` lists datagrams as they pass,
//! takes the mouse as `inspect` does, and gives the terminal back when it quits. Skipped
//! without tmux, except under CI, where it fails (`scripts/install-test-deps.sh` installs it).

use std::net::UdpSocket;
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

/// A mouse event as an xterm SGR sequence (1-based cell), typed into the pane as the terminal
/// would send it.
fn mouse(socket: &str, button: u8, column: u16, row: u16) {
    let press = format!("\x1b[<{button};{column};{row}M");
    tmux(socket, &["send-keys", "-t", "t", "-l", &press]);
    if button < 64 {
        let release = format!("\x1b[<{button};{column};{row}m");
        tmux(socket, &["send-keys", "-t", "t", "-l", &release]);
    }
}

#[test]
fn the_live_proxy_tui_lists_datagrams_takes_the_mouse_and_restores_the_terminal() {
    if !tmux_or_skip() {
        return;
    }
    let server = UdpSocket::bind("127.0.0.1:0").unwrap();
    // A free port for the proxy to listen on (it binds it again at once).
    let listen = UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    // The pane stays open after the proxy, to show what it printed once the terminal was back.
    let command = format!(
        "{} proxy --listen {listen} --upstream {} --tui; sleep 60",
        env!("CARGO_BIN_EXE_bitlens"),
        server.local_addr().unwrap()
    );
    in_tmux("live", &command, |socket| {
        expect(socket, &["Packets 0/0", "has no dissector"]);
        let client = UdpSocket::bind("127.0.0.1:0").unwrap();
        for payload in [&b"one"[..], b"two", b"three"] {
            client.send_to(payload, listen).unwrap();
        }
        // Following: the cursor is on the last datagram.
        expect(socket, &["Packets 3/3"]);
        // A click on the first row of the list selects it; the wheel moves down one.
        mouse(socket, 0, 10, 3);
        expect(socket, &["Packets 1/3"]);
        mouse(socket, 65, 10, 5);
        expect(socket, &["Packets 2/3"]);
        tmux(socket, &["send-keys", "-t", "t", "q"]);
        // The proxy's closing summary is on the normal screen: the terminal was given back.
        expect(socket, &["3 datagrams (3 to the server, 0 to clients)"]);
        let screen = wait_for(socket, &[]);
        assert!(!screen.contains("Packets 2/3"), "{screen}");
    });
}
