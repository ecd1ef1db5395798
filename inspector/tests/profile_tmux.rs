//! In a real terminal (tmux): `P` in `bitlens inspect` opens the profile of the filter in
//! force (the table and the bits-per-second chart) and Esc closes it; long work draws a
//! progress bar on a terminal's stderr; the live `proxy --tui` lists datagrams as they pass,
//! takes the mouse as `inspect` does, and gives the terminal back when it quits. Skipped
//! without tmux, except under CI, where it fails (`scripts/install-test-deps.sh` installs it).

mod common;

use common::{BIN, tmux};
use std::net::UdpSocket;

#[test]
fn p_opens_the_profile_of_the_filter_and_esc_closes_it() {
    if !tmux::or_skip() {
        return;
    }
    let command = format!("{} inspect captures/demo.pcap", BIN);
    tmux::session("profile-view", &command, |socket| {
        tmux::expect(socket, &["Packets 1/2000"]);
        tmux::send_keys(socket, &["/", "type:Scene", "Enter"]);
        tmux::expect(socket, &["type:Scene"]);
        tmux::send_keys(socket, &["P"]);
        tmux::expect(
            socket,
            &[
                "profile of filter type:Scene: 397 decoded",
                "(IP + UDP headers)",
                "SceneUpdate.objects[].position.x",
                "bits per second",
            ],
        );
        let screen = tmux::wait_for(socket, &[]);
        assert!(
            !screen.contains("RigidBody.position"),
            "only the filter's:\n{screen}"
        );
        // Esc closes the profile, not the inspector.
        tmux::send_keys(socket, &["Escape"]);
        tmux::expect(socket, &["? help"]);
        let screen = tmux::wait_for(socket, &[]);
        assert!(!screen.contains("bits per second"), "{screen}");
        tmux::send_keys(socket, &["q"]);
    });
}

/// yojimbo's rows in the `P` view: the layer's overhead rows, a message type's field, then the
/// message types and channels (the soak capture, with its schema and key).
#[test]
fn p_shows_yojimbos_message_types_and_channels() {
    if !tmux::or_skip() {
        return;
    }
    let command = format!(
        "{} inspect captures/yojimbo-soak.pcap --decode 40000=yojimbo --netcode-key \
         captures/yojimbo-reference.key --schema captures/yojimbo.schema.toml",
        BIN
    );
    tmux::session("profile-yojimbo", &command, |socket| {
        tmux::expect(socket, &["Packets 1/618"]);
        tmux::send_keys(socket, &["P"]);
        tmux::expect(
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
        tmux::send_keys(socket, &["Escape"]);
        tmux::expect(socket, &["? help"]);
        tmux::send_keys(socket, &["q"]);
    });
}

#[test]
fn long_work_shows_a_progress_bar_on_a_terminal() {
    if !tmux::or_skip() {
        return;
    }
    let out = std::env::temp_dir().join(format!("bitlens-bar-{}.pcap", std::process::id()));
    // stdout to a file, stderr the terminal; the pane stays open after the command.
    let command = format!(
        "{} synth {} --packets 400000 > /dev/null; sleep 60",
        BIN,
        out.display()
    );
    tmux::session("progress", &command, |socket| {
        tmux::expect(socket, &["synth [", "/400000"]);
    });
    let _ = std::fs::remove_file(out);
}

/// A mouse event as an xterm SGR sequence (1-based cell), typed into the pane as the terminal
/// would send it.
fn mouse(socket: &str, button: u8, column: u16, row: u16) {
    let press = format!("\x1b[<{button};{column};{row}M");
    tmux::run(socket, &["send-keys", "-t", "t", "-l", &press]);
    if button < 64 {
        let release = format!("\x1b[<{button};{column};{row}m");
        tmux::run(socket, &["send-keys", "-t", "t", "-l", &release]);
    }
}

#[test]
fn the_live_proxy_tui_lists_datagrams_takes_the_mouse_and_restores_the_terminal() {
    if !tmux::or_skip() {
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
        BIN,
        server.local_addr().unwrap()
    );
    tmux::session("live", &command, |socket| {
        tmux::expect(socket, &["Packets 0/0", "has no dissector"]);
        let client = UdpSocket::bind("127.0.0.1:0").unwrap();
        for payload in [&b"one"[..], b"two", b"three"] {
            client.send_to(payload, listen).unwrap();
        }
        // Following: the cursor is on the last datagram.
        tmux::expect(socket, &["Packets 3/3"]);
        // A click on the first row of the list selects it; the wheel moves down one.
        mouse(socket, 0, 10, 3);
        tmux::expect(socket, &["Packets 1/3"]);
        mouse(socket, 65, 10, 5);
        tmux::expect(socket, &["Packets 2/3"]);
        tmux::run(socket, &["send-keys", "-t", "t", "q"]);
        // The proxy's closing summary is on the normal screen: the terminal was given back.
        tmux::expect(socket, &["3 datagrams (3 to the server, 0 to clients)"]);
        let screen = tmux::wait_for(socket, &[]);
        assert!(!screen.contains("Packets 2/3"), "{screen}");
    });
}
