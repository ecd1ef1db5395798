//! In a real terminal (tmux): `P` in `bitlens inspect` opens the profile of the filter in
//! force (the table and the bits-per-second chart) and Esc closes it; long work draws a
//! progress bar on a terminal's stderr. Skipped without tmux, except under CI, where it fails
//! (`scripts/install-test-deps.sh` installs it).

mod common;

use common::{BIN, tmux};

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
