//! The inspector's TUI, driven without a terminal: key handling on the plain `App` state and
//! snapshots of `ui::draw` into ratatui's `TestBackend`.

use bitlens::Dissectors;
use bitlens::capture::write::{SynthDatagram, WriteFormat, to_bytes};
use bitlens::capture::{Capture, Timestamp};
use bitlens::tui::{App, Areas, Key, Pane, ui};
use bitlens_codec::dissect::Status;
use bitlens_testkit::{batch_demo, demo};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::Color;
use std::sync::Arc;

const SIZE: (u16, u16) = (120, 40);

/// A capture of 60 synthetic datagrams with labelled faults (the first fault, a desync, is
/// frame 13).
fn app(color: bool) -> App {
    let (datagrams, _) = bitlens::synth::generate(60, 7, true);
    let bytes = to_bytes(WriteFormat::PcapEthernet { nanos: true }, &datagrams).unwrap();
    app_for(
        Capture::from_bytes("synth.pcap", bytes).unwrap(),
        color,
        SIZE,
    )
}

/// The dissectors of the `bitlens` binary: the demo protocol on its ports.
fn shipped() -> Dissectors {
    let mut d = Dissectors::new();
    d.register(demo::PORT, Arc::new(demo::dissector()));
    d.register(batch_demo::PORT, Arc::new(batch_demo::dissector()));
    d
}

/// The TUI on `capture` with the shipped dissectors, every datagram summarized.
fn app_for(capture: Capture, color: bool, size: (u16, u16)) -> App {
    let mut app = App::new(
        Arc::new(capture),
        Arc::new(shipped()),
        color,
        size,
        "bitlens",
    );
    app.summarize_all();
    app
}

/// Row `y` of the rendered screen as text.
fn screen_row(t: &Terminal<TestBackend>, y: u16) -> String {
    let buf = t.backend().buffer();
    (0..buf.area.width)
        .map(|x| buf[(x, y)].symbol().to_owned())
        .collect()
}

fn render(app: &App) -> Terminal<TestBackend> {
    let mut t = Terminal::new(TestBackend::new(app.size.0, app.size.1)).unwrap();
    t.draw(|f| ui::draw(app, f)).unwrap();
    t
}

#[test]
fn packet_list() {
    let app = app(false);
    insta::assert_snapshot!(render(&app).backend());
}

#[test]
fn field_tree_of_a_robocat() {
    let mut app = app(false);
    // Frame 6 is a RoboCat from the server.
    for _ in 0..5 {
        app.handle_key(Key::Down);
    }
    app.handle_key(Key::Tab);
    assert_eq!(app.focus, Pane::Tree);
    let d = app.detail.as_ref().unwrap();
    assert_eq!(d.dissection.packet_type, Some("RoboCat"));
    insta::assert_snapshot!(render(&app).backend());
}

#[test]
fn bit_view_highlights_exactly_the_selected_bits() {
    let mut app = app(true);
    for _ in 0..5 {
        app.handle_key(Key::Down);
    }
    app.handle_key(Key::Tab);
    // Cursor to "health": crc32, packet_type, health.
    app.handle_key(Key::Down);
    app.handle_key(Key::Down);
    let d = app.detail.as_ref().unwrap();
    let f = &d.dissection.trace.fields[d.selected_field().unwrap()];
    assert_eq!((f.path(), f.bit, f.bits), ("health", 35, 7));
    let t = render(&app);
    let buf = t.backend().buffer();
    let areas = Areas::new(SIZE);
    // Walk every visible line of the bit view and collect the highlighted bit digits.
    let bpl = areas.bytes_per_line();
    let first_bit_col = areas.bits.x + 1 + 6 + (bpl as u16) * 3 + 1;
    let mut highlighted = Vec::new();
    for line in 0..areas.bits.height.saturating_sub(3) {
        let row = areas.bits.y + 2 + line;
        for byte in 0..bpl as u16 {
            for j in 0..8u16 {
                let cell = &buf[(first_bit_col + byte * 9 + j, row)];
                if cell.bg == Color::Yellow {
                    highlighted.push((line as usize * bpl + byte as usize) * 8 + j as usize);
                }
            }
        }
    }
    assert_eq!(
        highlighted,
        (35..42).collect::<Vec<_>>(),
        "exactly bits 35..42 are highlighted"
    );
    insta::assert_snapshot!(t.backend());
}

#[test]
fn desynced_packet_is_reached_with_n() {
    let mut app = app(false);
    app.handle_key(Key::Char('n'));
    let d = app.detail.as_ref().unwrap();
    assert_eq!(app.capture.datagrams()[d.datagram].frame, 13);
    assert_eq!(d.dissection.status, Status::Desync);
    // The tree cursor starts on the check that failed.
    let f = &d.dissection.trace.fields[d.selected_field().unwrap()];
    assert!(f.failed && f.check_failed(), "{f:?}");
    insta::assert_snapshot!(render(&app).backend());
}

#[test]
fn help_overlay() {
    let mut app = app(false);
    app.handle_key(Key::Char('?'));
    assert!(app.show_help);
    // Every way to quit is listed, Ctrl-C too (it works everywhere, the help said nothing).
    let t = render(&app);
    let screen: Vec<String> = (0..SIZE.1).map(|y| screen_row(&t, y)).collect();
    assert!(
        screen.iter().any(|row| row.contains(" Ctrl-C ")
            && row.contains("quit, from anywhere (this help, the filter prompt, the profile)")),
        "{}",
        screen.join("\n")
    );
    insta::assert_snapshot!(render(&app).backend());
    app.handle_key(Key::Esc);
    assert!(!app.show_help && !app.quit, "Esc closes the help first");
    app.handle_key(Key::Esc);
    assert!(app.quit);
}

#[test]
fn keys_move_page_and_wrap_problems() {
    let mut app = app(false);
    let h = app.list_height();
    app.handle_key(Key::PageDown);
    assert_eq!(app.selected, h - 1);
    app.handle_key(Key::Char('G'));
    assert_eq!(app.selected, app.rows.len() - 1);
    assert!(
        app.list_offset > 0,
        "the list scrolled to keep the cursor visible"
    );
    app.handle_key(Key::Char('g'));
    assert_eq!((app.selected, app.list_offset), (0, 0));
    app.handle_key(Key::Char('k'));
    assert_eq!(app.selected, 0, "no move above the first row");
    // N from the first row wraps to the last problem packet.
    app.handle_key(Key::Char('N'));
    let last_problem = (0..app.rows.len())
        .rev()
        .find(|&r| app.summary(app.rows[r]).unwrap().status.is_problem());
    assert_eq!(Some(app.selected), last_problem);
    app.handle_key(Key::Tab);
    app.handle_key(Key::Tab);
    assert_eq!(app.focus, Pane::Bits);
    app.handle_key(Key::BackTab);
    assert_eq!(app.focus, Pane::Tree);
}

#[test]
fn tree_collapse_and_expand() {
    let mut app = app(false);
    for _ in 0..5 {
        app.handle_key(Key::Down);
    }
    app.handle_key(Key::Tab);
    let before = app.detail.as_ref().unwrap().visible.len();
    // Walk to the first scope and collapse it.
    for _ in 0..before {
        let d = app.detail.as_ref().unwrap();
        if d.dissection.trace.fields[d.selected_field().unwrap()].kind
            == bitlens_codec::FieldKind::Scope
        {
            break;
        }
        app.handle_key(Key::Down);
    }
    app.handle_key(Key::Enter);
    let collapsed = app.detail.as_ref().unwrap().visible.len();
    assert!(collapsed < before);
    app.handle_key(Key::Char(' '));
    assert_eq!(app.detail.as_ref().unwrap().visible.len(), before);
}

#[test]
fn filter_by_status_type_and_port() {
    let mut app = app(false);
    app.handle_key(Key::Char('/'));
    for c in "status:desync".chars() {
        app.handle_key(Key::Char(c));
    }
    app.handle_key(Key::Enter);
    assert!(!app.rows.is_empty());
    assert!(
        app.rows
            .iter()
            .all(|&i| app.summary(i).unwrap().status == Status::Desync)
    );
    app.apply_filter("type:robo port:40000");
    assert!(!app.rows.is_empty());
    assert!(
        app.rows
            .iter()
            .all(|&i| app.type_names[app.summary(i).unwrap().packet_type as usize] == "RoboCat")
    );
    app.apply_filter("status:nonsense");
    assert!(app.message.as_deref().unwrap().contains("unknown status"));
    app.apply_filter("no-such-word");
    assert!(app.rows.is_empty());
    let t = render(&app);
    assert!(
        t.backend()
            .to_string()
            .contains("no packet matches the filter")
    );
    app.apply_filter("");
    assert_eq!(app.rows.len(), app.capture.datagrams().len());
}

#[test]
fn esc_steps_back_pane_then_filter_then_quits() {
    let mut app = app(false);
    app.apply_filter("type:robo");
    let filtered = app.rows.len();
    assert!(filtered > 0 && filtered < app.capture.datagrams().len());
    app.handle_key(Key::Down);
    let kept = app.selected_datagram();
    app.handle_key(Key::Tab);
    assert_eq!(app.focus, Pane::Tree);
    app.handle_key(Key::Esc);
    assert_eq!(
        (app.focus, app.quit, app.rows.len()),
        (Pane::List, false, filtered),
        "Esc leaves the tree for the list"
    );
    app.handle_key(Key::Esc);
    assert!(!app.quit, "Esc clears the filter, not the session");
    assert_eq!(app.rows.len(), app.capture.datagrams().len());
    assert_eq!(app.selected_datagram(), kept, "the packet stays selected");
    app.handle_key(Key::Esc);
    assert!(app.quit);
}

#[test]
fn mouse_click_selects_and_wheel_scrolls() {
    let mut app = app(false);
    let a = Areas::new(SIZE);
    // Third data row of the list.
    app.click(a.list.x + 3, a.list.y + 2 + 2);
    assert_eq!(app.selected, 2);
    app.scroll(a.list.x + 3, a.list.y + 4, true);
    assert_eq!(app.selected, 3);
    app.click(a.tree.x + 3, a.tree.y + 1 + 1);
    assert_eq!(app.focus, Pane::Tree);
    assert_eq!(app.detail.as_ref().unwrap().cursor, 1);
}

#[test]
fn tiny_and_resized_terminals_work() {
    let mut app = app(false);
    app.resize(30, 8);
    let t = render(&app);
    assert!(t.backend().to_string().contains("terminal too small"));
    app.resize(80, 24);
    app.handle_key(Key::Char('G'));
    let t = render(&app);
    let text = t.backend().to_string();
    assert!(text.contains("Packets 60/60"), "{text}");
    app.resize(200, 60);
    render(&app);
}

#[test]
fn bit_view_follows_the_selected_field_on_a_small_terminal() {
    let mut app = app(false);
    app.resize(70, 20);
    // The desynced RoboCat (frame 13); its last fields lie far past the first lines.
    app.handle_key(Key::Char('n'));
    app.handle_key(Key::Tab);
    app.handle_key(Key::Char('G'));
    let d = app.detail.as_ref().unwrap();
    let f = &d.dissection.trace.fields[d.selected_field().unwrap()];
    let a = Areas::new(app.size);
    let line = f.bit / 8 / a.bytes_per_line();
    assert!(
        f.bit >= 8 * a.bytes_per_line() * a.bit_rows(),
        "the field starts below the first screen"
    );
    assert!(
        (d.bits_offset..d.bits_offset + a.bit_rows()).contains(&line),
        "line {line} not in view from {}",
        d.bits_offset
    );
}

#[test]
fn damage_is_shown_in_full_in_an_empty_list_and_first_on_the_status_line() {
    let (datagrams, _) = bitlens::synth::generate(3, 7, false);
    let mut bytes = to_bytes(WriteFormat::PcapEthernet { nanos: true }, &datagrams).unwrap();
    // The first record's captured length (after the 24-byte file header and two timestamp
    // words) claims 2 GiB.
    bytes[32..36].copy_from_slice(&0x7fff_ffffu32.to_le_bytes());
    let capture = Capture::from_bytes("damaged.pcap", bytes).unwrap();
    assert!(capture.datagrams().is_empty() && capture.damage().is_some());
    // A narrow terminal: the damage does not fit one line.
    let size = (80, 30);
    let app = app_for(capture, false, size);
    let t = render(&app);
    let areas = Areas::new(size);
    let list: String = (areas.list.y + 2..areas.list.y + 5)
        .map(|y| screen_row(&t, y).replace('│', " ").trim().to_owned() + " ")
        .collect();
    assert!(
        list.contains(
            "no UDP datagrams before the damage: damaged.pcap: frame 1 at byte 24: record claims \
             2147483663 bytes with its header, more than the 16 MiB limit"
        ),
        "{list}"
    );
    let status = screen_row(&t, areas.status.y);
    assert!(
        status.starts_with(" damaged.pcap │ damaged: frame 1 at byte 24"),
        "{status}"
    );
}

#[test]
fn damage_part_way_says_where_on_the_status_line_and_why_under_the_list() {
    // Five datagrams, the file cut in the middle of the fourth record.
    let (datagrams, _) = bitlens::synth::generate(5, 7, false);
    let bytes = to_bytes(WriteFormat::PcapEthernet { nanos: true }, &datagrams).unwrap();
    let mut at = 24;
    for _ in 0..3 {
        let incl = u32::from_le_bytes(bytes[at + 8..at + 12].try_into().unwrap()) as usize;
        at += 16 + incl;
    }
    let capture = Capture::from_bytes("cut.pcap", bytes[..at + 20].to_vec()).unwrap();
    assert_eq!(capture.datagrams().len(), 3);
    let full = capture.damage().unwrap().to_string();
    let reason = full.strip_prefix("cut.pcap: ").unwrap();
    assert!(
        reason.starts_with("frame 4 at byte ") && reason.ends_with("(file cut short?)"),
        "{reason}"
    );
    let (at_text, _) = reason.split_once(": ").unwrap();
    let app = app_for(capture, false, SIZE);
    let t = render(&app);
    let areas = Areas::new(SIZE);
    // The status line: where, then the counts and the help, all on a 120-column terminal.
    let status = screen_row(&t, areas.status.y);
    assert!(
        status.starts_with(&format!(
            " cut.pcap │ damaged: {at_text} │ 3 datagrams ✓ 3 ok "
        )),
        "{status}"
    );
    assert!(status.trim_end().ends_with("? help  q quit"), "{status}");
    // The list's bottom border: the whole reason.
    let bottom = screen_row(&t, areas.list.y + areas.list.height - 1);
    assert!(bottom.contains(&format!(" damaged: {reason} ")), "{bottom}");
}

#[test]
fn len_column_shows_captured_of_declared_for_a_cut_datagram() {
    // 100 payload bytes, cut by a 60-byte snap length after 18 of them; then the same, whole.
    let payload = [0xAB; 100];
    let datagram = || {
        SynthDatagram::new(
            Timestamp::from_nanos(1_700_000_000_000_000_000),
            "10.0.0.1:5000".parse().unwrap(),
            "10.0.0.2:40000".parse().unwrap(),
            &payload[..],
        )
    };
    let bytes = to_bytes(
        WriteFormat::PcapEthernet { nanos: true },
        &[datagram().truncated(60), datagram()],
    )
    .unwrap();
    let app = app_for(Capture::from_bytes("cut.pcap", bytes).unwrap(), false, SIZE);
    let t = render(&app);
    let rows: Vec<String> = (0..SIZE.1).map(|y| screen_row(&t, y)).collect();
    let row = |frame: &str| {
        rows.iter()
            .find(|r| r.starts_with(&format!("│{frame} ")))
            .unwrap_or_else(|| panic!("no row for frame {frame}:\n{}", rows.join("\n")))
    };
    assert!(row("1").contains(" 18/100 "), "{}", row("1"));
    assert!(row("1").contains("truncated"), "{}", row("1"));
    assert!(
        row("2").contains(" 100 ") && !row("2").contains('/'),
        "{}",
        row("2")
    );
    // The selected (first) datagram's line above the field tree.
    assert!(
        rows.iter().any(|r| r.contains("100 bytes (18 captured)")),
        "{}",
        rows.join("\n")
    );
}

#[test]
fn a_lying_udp_length_is_named_under_the_list_not_blamed_on_the_snap_length() {
    let datagram = SynthDatagram::new(
        Timestamp::from_nanos(1_700_000_000_000_000_000),
        "10.0.0.1:5000".parse().unwrap(),
        "10.0.0.2:40000".parse().unwrap(),
        &b"hello"[..],
    );
    let mut bytes = to_bytes(WriteFormat::PcapEthernet { nanos: true }, &[datagram]).unwrap();
    // The UDP length field: file header, record header, Ethernet, IPv4, ports.
    let at = 24 + 16 + 14 + 20 + 4;
    bytes[at..at + 2].copy_from_slice(&300u16.to_be_bytes());
    let app = app_for(Capture::from_bytes("lie.pcap", bytes).unwrap(), false, SIZE);
    let rows: Vec<String> = (0..SIZE.1).map(|y| screen_row(&render(&app), y)).collect();
    let text = rows.join("\n");
    assert!(text.contains("5/292"), "{text}");
    assert!(
        text.contains(&format!(
            "✗ lie.pcap: frame 1 at byte {at}: UDP length 300 is more than the 13 bytes"
        )),
        "{text}"
    );
    assert!(!text.contains("snap length):"), "{text}");
}

/// A live session (`bitlens proxy --tui`): an app over a growing capture.
fn live_app() -> (App, Vec<bitlens::capture::write::SynthDatagram<'static>>) {
    let mut app = App::new(
        Arc::new(Capture::live("proxy 127.0.0.1:7777 → 10.0.0.1:40000")),
        Arc::new(shipped()),
        false,
        SIZE,
        "bitlens",
    );
    app.live = Some(bitlens::tui::Live {
        follow: true,
        ..Default::default()
    });
    let (datagrams, _) = bitlens::synth::generate(12, 3, false);
    (app, datagrams)
}

fn push(app: &mut App, datagrams: &[bitlens::capture::write::SynthDatagram<'static>], i: usize) {
    use bitlens::capture::Datagram;
    let s = &datagrams[i];
    let d = Datagram::detached(i as u64 + 1, s.time, s.src, s.dst, s.payload.len());
    let dissectors = shipped();
    let v = dissectors.verdict(&d, &s.payload);
    let t = v.packet_type.map(str::to_owned);
    app.push_live(d, &s.payload, v.status, t.as_deref());
}

#[test]
fn a_live_list_grows_follows_and_pauses() {
    let (mut app, datagrams) = live_app();
    assert!(app.rows.is_empty() && app.detail.is_none());
    for i in 0..5 {
        push(&mut app, &datagrams, i);
    }
    // Following: the newest datagram is selected and opened, decoded as from a file.
    assert_eq!((app.rows.len(), app.selected), (5, 4));
    let detail = app.detail.as_ref().unwrap();
    assert_eq!(detail.datagram, 4);
    assert!(!detail.dissection.trace.fields.is_empty());
    assert_eq!(app.status_counts()[Status::Ok as usize], 5);
    let status = screen_row(&render(&app), SIZE.1 - 1);
    assert!(
        status.contains("5 datagrams") && status.contains("LIVE following"),
        "{status}"
    );

    // Paused: arrivals wait, the list and the cursor stay.
    app.handle_key(Key::Char('p'));
    for i in 5..8 {
        push(&mut app, &datagrams, i);
    }
    assert_eq!((app.rows.len(), app.selected), (5, 4));
    let status = screen_row(&render(&app), SIZE.1 - 1);
    assert!(status.contains("PAUSED (3 new)"), "{status}");
    app.handle_key(Key::Char('p'));
    assert_eq!((app.rows.len(), app.selected), (8, 7));

    // Not following: the list grows under a cursor that stays put.
    app.handle_key(Key::Char('f'));
    app.handle_key(Key::Up);
    for i in 8..12 {
        push(&mut app, &datagrams, i);
    }
    assert_eq!((app.rows.len(), app.selected), (12, 6));
    let status = screen_row(&render(&app), SIZE.1 - 1);
    assert!(status.contains("LIVE not following"), "{status}");
    // A filter applies to arrivals too.
    app.apply_filter("port:1");
    assert!(app.rows.is_empty());
    app.handle_key(Key::Char('f'));
    assert!(app.rows.is_empty());
}

#[test]
fn p_profiles_the_filtered_rows_and_esc_closes_it() {
    let mut app = app(false);
    app.apply_filter("type:RoboCat");
    let listed = app.rows.len();
    app.handle_key(Key::Char('P'));
    let view = app.profile.as_ref().expect("P opens the profile");
    assert_eq!(view.filter, "type:RoboCat");
    let types: Vec<&str> = view
        .profile
        .packet_types
        .iter()
        .map(|r| r.name.as_str())
        .collect();
    assert_eq!(types, ["RoboCat"], "only the listed datagrams");
    let apart: u64 = view.profile.not_decoded.iter().map(|r| r.count).sum();
    assert_eq!(view.profile.decoded.count + apart, listed as u64);
    // Keys scroll the table and do not reach the list underneath.
    let selected = app.selected;
    app.handle_key(Key::Down);
    app.handle_key(Key::Down);
    assert_eq!(app.profile.as_ref().map(|v| v.offset), Some(2));
    assert_eq!(app.selected, selected);
    let t = render(&app);
    let top = screen_row(&t, 0);
    assert!(top.contains("profile of filter type:RoboCat"), "{top}");
    assert!(
        (0..SIZE.1).any(|y| screen_row(&t, y).contains("bits per second")),
        "the chart is drawn"
    );
    app.handle_key(Key::Esc);
    assert!(
        app.profile.is_none() && !app.quit,
        "Esc closes the profile only"
    );
}

#[test]
fn a_read_past_the_end_is_marked_where_it_stopped() {
    // Issue 29.9: a cut RoboCat (frame 38) whose mice do not fit: the tree starts on the count
    // that claims them, marked, and the bit view shows it.
    let mut app = app(false);
    for _ in 0..10 {
        app.handle_key(Key::Char('n'));
        let d = app.detail.as_ref().unwrap();
        if app.capture.datagrams()[d.datagram].frame == 38 {
            break;
        }
    }
    let d = app.detail.as_ref().unwrap();
    assert_eq!(app.capture.datagrams()[d.datagram].frame, 38);
    let e = d.dissection.trace.error.as_ref().expect("an error");
    assert_eq!(e.kind().name(), "past_end");
    let f = &d.dissection.trace.fields[d.selected_field().unwrap()];
    assert!(
        f.failed && f.path() == "mice.len" && f.bit == e.bit(),
        "{f:?} {e}"
    );
    let t = render(&app);
    let screen: Vec<String> = (0..SIZE.1).map(|y| screen_row(&t, y)).collect();
    assert!(
        screen
            .iter()
            .any(|r| r.contains("len = ") && r.contains("◀ read stopped here")),
        "{}",
        screen.join("\n")
    );
    // An empty datagram: no CRC to read, the row where it stopped is the CRC's, which no field
    // was recorded for. (The second datagram of a capture of its own: every.pcap, where it was
    // first seen, was regenerated with other edge traffic.)
    let mut datagrams = bitlens::synth::generate(1, 7, false).0;
    let (time, src, dst) = (datagrams[0].time, datagrams[0].src, datagrams[0].dst);
    datagrams.push(bitlens::capture::write::SynthDatagram::new(
        time,
        src,
        dst,
        Vec::new(),
    ));
    let bytes = to_bytes(WriteFormat::PcapEthernet { nanos: true }, &datagrams).unwrap();
    let mut app = app_for(
        Capture::from_bytes("empty.pcap", bytes).unwrap(),
        false,
        SIZE,
    );
    app.handle_key(Key::Down);
    let d = app.detail.as_ref().unwrap();
    assert_eq!(app.capture.datagrams()[d.datagram].payload_len(), 0);
    let f = &d.dissection.trace.fields[d.selected_field().unwrap()];
    assert!(f.failed && f.path() == "crc32" && f.bit == 0, "{f:?}");
    let t = render(&app);
    let screen: Vec<String> = (0..SIZE.1).map(|y| screen_row(&t, y)).collect();
    assert!(
        screen
            .iter()
            .any(|r| r.contains("crc32") && r.contains("◀ read stopped here")),
        "{}",
        screen.join("\n")
    );
}

#[test]
fn the_help_gives_the_registered_protocols_own_filter_example() {
    // Issue 29.11: a game's own binary showed the demo's `type:RoboCat port:40000`.
    let app = app(false);
    assert_eq!(
        ui::filter_example(&app),
        "filter: type:RoboCat status:desync port:40000 10.0.0.12"
    );
    // Another program's protocol (the showcase, on a port of its own), as a game's binary
    // registers it.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../captures/custom.pcap");
    let mut d = Dissectors::new();
    let showcase =
        bitlens_codec::dissect::PacketDissector::<bitlens_testkit::showcase::Showcase>::new(
            "showcase",
        );
    d.register(29000, Arc::new(showcase));
    let mut app = App::new(
        Arc::new(Capture::open(&root).unwrap()),
        Arc::new(d),
        false,
        SIZE,
        "mygame",
    );
    app.handle_key(Key::Char('?'));
    let example = ui::filter_example(&app);
    assert_eq!(
        example,
        "filter: type:Shapes status:desync port:29000 10.0.0.12"
    );
    let t = render(&app);
    let screen: Vec<String> = (0..SIZE.1).map(|y| screen_row(&t, y)).collect();
    let screen = screen.join("\n");
    assert!(screen.contains(&example), "{screen}");
    assert!(screen.contains(" mygame inspect: keys "), "{screen}");
    assert!(
        !screen.contains("RoboCat") && !screen.contains("bitlens"),
        "{screen}"
    );
}

/// The Type column is as wide as the longest type name on screen: netcode's
/// `connection_request` and `connection_payload` are told apart, not both `netcode.conn`.
#[test]
fn type_column_fits_long_type_names() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let bytes = std::fs::read(root.join("captures/netcode.pcap")).unwrap();
    let mut d = shipped();
    d.add_transport(Arc::new(bitlens_netcode::Netcode::new()));
    d.apply_override("5000=netcode+demo").unwrap();
    let capture = Capture::from_bytes("netcode.pcap", bytes).unwrap();
    let mut app = App::new(Arc::new(capture), Arc::new(d), false, (160, 45), "bitlens");
    app.summarize_all();
    let t = render(&app);
    let rows: Vec<String> = (0..45).map(|y| screen_row(&t, y)).collect();
    let row = |frame: &str| {
        rows.iter()
            .find(|r| r.starts_with(&format!("│{frame} ")))
            .unwrap_or_else(|| panic!("no row for frame {frame}:\n{}", rows.join("\n")))
            .clone()
    };
    assert!(
        row("1").contains("netcode.connection_request "),
        "{}",
        row("1")
    );
    assert!(
        row("2").contains("netcode.connection_challenge "),
        "{}",
        row("2")
    );
    assert!(
        row("7").contains("netcode.connection_payload "),
        "{}",
        row("7")
    );
}

/// The bit view of an encrypted packet shows the bytes its fields were read from: the
/// plaintext in place of the ciphertext (the header and the MAC as captured), and says so.
#[test]
fn the_bit_view_of_an_encrypted_packet_shows_its_plaintext() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let capture = Capture::open(root.join("captures/netcode.pcap")).unwrap();
    let mut app = App::new(
        Arc::new(capture),
        netcode_dissectors(),
        false,
        (160, 45),
        "bitlens",
    );
    // The detail's datagram, as captured and as the bit view shows it.
    let bytes = |app: &App, i: usize, why: &str| {
        let d = app.detail.as_ref().unwrap();
        assert_eq!(d.datagram, i);
        let captured = app.capture.payload(&app.capture.datagrams()[i]).to_vec();
        let opened = d.opened.clone().expect(why);
        assert_eq!(opened.len(), captured.len());
        (captured, opened)
    };
    // Frame 5: a payload packet (the demo's PacketA): the prefix byte and the sequence's
    // bytes, then the sealed payload and the MAC's 16 bytes.
    for _ in 0..4 {
        app.handle_key(Key::Down);
    }
    let (captured, opened) = bytes(&app, 4, "the key opens it");
    let body = 1 + usize::from(captured[0] >> 4);
    let mac = captured.len() - 16;
    assert_eq!(opened[..body], captured[..body], "the header as captured");
    assert_eq!(opened[mac..], captured[mac..], "the MAC as captured");
    assert_ne!(opened[body..mac], captured[body..mac], "the body decrypted");
    let screen: Vec<String> = {
        let t = render(&app);
        (0..45).map(|y| screen_row(&t, y)).collect()
    };
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<Vec<_>>();
    // The bit view's rows start with the offset, then the row's bytes in hex.
    let row = |off: usize| {
        screen
            .iter()
            .find_map(|r| {
                let at = r.find(&format!("│{off:04x}  "))?;
                Some(r[at..].split("  ").nth(1)?.to_owned())
            })
            .unwrap_or_else(|| panic!("no bit row {off:04x}:\n{}", screen.join("\n")))
    };
    let first = row(0);
    let shown: Vec<&str> = first.split(' ').collect();
    assert_eq!(shown, hex(&opened[..shown.len()]), "{first}");
    assert_ne!(shown, hex(&captured[..shown.len()]), "{first}");
    assert!(
        screen.iter().any(|r| r.contains(" Bits (decrypted): ")),
        "{}",
        screen.join("\n")
    );
    // The connection request (frame 1): its connect token opened with the server's key, in
    // place (client id 7 first), the MAC and all before it as captured.
    for _ in 0..4 {
        app.handle_key(Key::Up);
    }
    let (captured, opened) = bytes(&app, 0, "the server's key opens the token");
    let (token, mac) = (54, 54 + 1024 - 16);
    assert_eq!(opened[..token], captured[..token]);
    assert_eq!(opened[mac..], captured[mac..]);
    assert_eq!(opened[token..token + 8], 7u64.to_le_bytes(), "client_id");
    assert_ne!(opened[token..mac], captured[token..mac]);
    // A packet in the clear shows the capture's bytes and no such word.
    let plain = app_for(
        Capture::from_bytes(
            "demo.pcap",
            std::fs::read(root.join("captures/demo.pcap")).unwrap(),
        )
        .unwrap(),
        false,
        SIZE,
    );
    assert!(plain.detail.as_ref().unwrap().opened.is_none());
    let t = render(&plain);
    assert!((0..SIZE.1).all(|y| !screen_row(&t, y).contains("(decrypted)")));
}

/// The filter prompt's hint lists every status the filter takes, netcode's `encrypted` too.
#[test]
fn the_filter_prompt_lists_every_status() {
    let mut app = app(false);
    app.size = (160, 40);
    app.handle_key(Key::Char('/'));
    let t = render(&app);
    let last = screen_row(&t, 39);
    assert!(
        last.contains("fragment|undecoded|encrypted port:N"),
        "{last}"
    );
}

/// The help widens for its filter example when the protocol's type name is long (netcode's
/// `connection_request`), where the terminal has room: the example is not cut.
#[test]
fn the_help_fits_a_long_filter_example() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let bytes = std::fs::read(root.join("captures/netcode.pcap")).unwrap();
    let mut d = shipped();
    d.add_transport(Arc::new(bitlens_netcode::Netcode::new()));
    d.apply_override("5000=netcode+demo").unwrap();
    let capture = Capture::from_bytes("netcode.pcap", bytes).unwrap();
    let mut app = App::new(Arc::new(capture), Arc::new(d), false, (160, 45), "bitlens");
    app.summarize_all();
    let example = ui::filter_example(&app);
    assert!(example.chars().count() > 70, "{example}");
    app.handle_key(Key::Char('?'));
    let screen = render(&app).backend().to_string();
    assert!(screen.contains(&example), "{example}\n{screen}");
}

/// Ctrl-C quits from anywhere (it used to reach the filter prompt as the letter "q"); Ctrl-U
/// clears the prompt; other control keys type nothing.
#[test]
fn control_keys_are_not_letters() {
    use bitlens::tui::map_key;
    use ratatui::crossterm::event::{KeyCode, KeyModifiers};
    let ctrl = |c| map_key(KeyCode::Char(c), KeyModifiers::CONTROL);
    assert_eq!(ctrl('c'), Some(Key::Interrupt));
    assert_eq!(ctrl('u'), Some(Key::ClearLine));
    assert_eq!(ctrl('n'), None);
    assert_eq!(
        map_key(KeyCode::Char('q'), KeyModifiers::NONE),
        Some(Key::Char('q'))
    );
    // In the filter prompt: Ctrl-U empties it, Ctrl-C quits.
    let mut prompt = app(false);
    for key in "/type:Robo".chars().map(Key::Char) {
        prompt.handle_key(key);
    }
    prompt.handle_key(Key::ClearLine);
    for key in "port:40000".chars().map(Key::Char) {
        prompt.handle_key(key);
    }
    assert_eq!(prompt.filter_input.as_deref(), Some("port:40000"));
    prompt.handle_key(Key::Interrupt);
    assert!(prompt.quit, "Ctrl-C in the filter prompt quits");
    // In the help and in the profile, where q and Esc only close the overlay.
    let mut help = app(false);
    help.handle_key(Key::Char('?'));
    help.handle_key(Key::Interrupt);
    assert!(help.quit, "Ctrl-C in the help quits");
    let mut profile = app(false);
    profile.handle_key(Key::Char('P'));
    assert!(profile.profile.is_some(), "P opens the profile");
    profile.handle_key(Key::Interrupt);
    assert!(profile.quit, "Ctrl-C in the profile quits");
}

/// A live session's help lists its own keys, f and p (the status line's hint for them is cut
/// on a 120-column terminal); a capture's help does not.
#[test]
fn the_live_help_lists_follow_and_pause() {
    let screen = |app: &App| {
        let t = render(app);
        (0..SIZE.1)
            .map(|y| screen_row(&t, y))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let (mut live, _) = live_app();
    live.handle_key(Key::Char('?'));
    let text = screen(&live);
    assert!(text.contains("live: follow the newest datagram"), "{text}");
    assert!(text.contains("live: pause the list"), "{text}");
    assert!(
        text.contains("quit (Esc steps back first"),
        "the rest still fits: {text}"
    );
    let mut file = app(false);
    file.handle_key(Key::Char('?'));
    assert!(!screen(&file).contains("live: "));
}

/// A capture that ends with fragments still in reassembly (the yojimbo soak capture's first
/// 560 datagrams): the status bar says so, as `check` does; the whole capture, which ends with
/// disconnects, leaves nothing pending.
#[test]
fn the_status_bar_says_what_was_left_in_reassembly() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let d = soak_dissectors();
    let soak = std::fs::read(root.join("captures/yojimbo-soak.pcap")).unwrap();
    // The first 560 records of the pcap (24-byte file header, 16-byte record headers).
    let mut end = 24;
    for _ in 0..560 {
        end += 16 + u32::from_le_bytes(soak[end + 8..end + 12].try_into().unwrap()) as usize;
    }
    let cut = Capture::from_bytes("cut.pcap", soak[..end].to_vec()).unwrap();
    let mut app = App::new(Arc::new(cut), Arc::clone(&d), false, (400, 30), "bitlens");
    app.summarize_all();
    assert_eq!(app.pending.len(), 3, "{:?}", app.pending);
    let status = screen_row(&render(&app), 29);
    assert!(
        status.contains(
            "│ still in reassembly when the capture ended: yojimbo 127.0.0.1:50512 -> \
             127.0.0.1:40000: 29 fragmented packets incomplete (sequences 3, 5, "
        ),
        "{status}"
    );
    assert!(status.contains(", 94) (and 2 more) "), "{status}");
    let whole = Capture::from_bytes("soak.pcap", soak).unwrap();
    let mut app = App::new(Arc::new(whole), d, false, (400, 30), "bitlens");
    app.summarize_all();
    assert!(app.pending.is_empty(), "{:?}", app.pending);
    let status = screen_row(&render(&app), 29);
    assert!(!status.contains("still in reassembly"), "{status}");
}

/// The yojimbo soak capture's dissectors: yojimbo on 40000 with its key and configuration.
/// The shipped dissectors with netcode stacked over the demo on port 5000 and the server's key
/// of `captures/netcode.pcap`.
fn netcode_dissectors() -> Arc<Dissectors> {
    use bitlens::cmd::common::DecodeOpts;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let opts = DecodeOpts {
        decode: vec!["5000=netcode+demo".into()],
        netcode_key: Some(root.join("captures/netcode.key")),
        ..DecodeOpts::default()
    };
    Arc::new(
        opts.dissectors(&bitlens::Context::new("bitlens", &shipped()))
            .expect("valid options"),
    )
}

fn soak_dissectors() -> Arc<Dissectors> {
    use bitlens::cmd::common::DecodeOpts;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let opts = DecodeOpts {
        decode: vec!["40000=yojimbo".into()],
        schema: Some(root.join("captures/yojimbo.schema.toml")),
        netcode_key: Some(root.join("captures/yojimbo-reference.key")),
        ..DecodeOpts::default()
    };
    let none = Dissectors::new();
    Arc::new(
        opts.dissectors(&bitlens::Context::new("bitlens", &none))
            .expect("valid options"),
    )
}

/// The profile of the datagrams a filter keeps (the soak capture's reassembled packets, whose
/// messages came in fragments the filter leaves out): every row's share is of a whole that
/// holds it, at most 100%, and each table's shares add up to 100% at most.
#[test]
fn a_filtered_profile_s_shares_stay_within_their_whole() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let soak = std::fs::read(root.join("captures/yojimbo-soak.pcap")).unwrap();
    let capture = Capture::from_bytes("soak.pcap", soak).unwrap();
    let mut app = App::new(Arc::new(capture), soak_dissectors(), false, SIZE, "bitlens");
    app.summarize_all();
    for filter in ["type:yojimbo.packet", ""] {
        app.apply_filter(filter);
        app.open_profile();
        let view = app.profile.take().expect("the profile view");
        let p = &view.profile;
        assert!(
            !p.message_types.is_empty() && !p.channels.is_empty(),
            "{filter}"
        );
        for (word, r) in view.rows() {
            assert!(
                r.share <= 1.0 + 1e-9,
                "{filter}: {word}{} {}",
                r.name,
                r.share
            );
        }
        for (table, rows) in [
            ("message types", &p.message_types),
            ("channels", &p.channels),
            ("packet types", &p.packet_types),
        ] {
            let sum: f64 = rows.iter().map(|r| r.share).sum();
            assert!(sum <= 1.0 + 1e-9, "{filter}: {table} add up to {sum}");
        }
    }
}

/// A live session (`proxy --tui`) keeps every datagram's observation as long as it runs. The
/// proxy's pass hands each one its plaintext (the relay's own outputs read it); the live list
/// keeps it without (netcode's `Seen::opened` gone) and dissects every datagram the same, the
/// kept ones opening their datagram again: netcode with its key, yojimbo's soak.
#[test]
fn a_live_session_keeps_observations_without_plaintext_and_dissects_the_same() {
    use bitlens::dissectors::Arrival;
    use bitlens_codec::observe::Observation;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for (file, dissectors) in [
        ("netcode.pcap", netcode_dissectors()),
        ("yojimbo-soak.pcap", soak_dissectors()),
    ] {
        let capture = Capture::open(root.join("captures").join(file)).unwrap();
        // As the proxy observes: plaintext kept for the relay's outputs.
        let mut observer = dissectors.observer().expect("a transport's pass");
        let (tx, rx) = std::sync::mpsc::channel();
        let mut streamed = Vec::new();
        for d in capture.datagrams() {
            let payload = capture.payload(d);
            let observed = observer.observe(d, payload);
            streamed.push(observed.clone());
            let arrival = Arrival {
                datagram: d.clone(),
                payload: payload.to_vec(),
                observed,
            };
            tx.send(arrival).unwrap();
        }
        drop(tx);
        let mut app = App::new(
            Arc::new(Capture::live(format!("proxy {file}"))),
            Arc::clone(&dissectors),
            false,
            SIZE,
            "bitlens",
        );
        while bitlens::tui::live::feed(&mut app, &rx) {}
        let n = capture.datagrams().len();
        assert_eq!(
            app.seen.len(),
            n,
            "{file}: every datagram's observation kept"
        );
        let carried = |o: &Observation| {
            o.get::<bitlens_netcode::Seen>()
                .is_some_and(|s| s.opened.is_some())
        };
        if file == "netcode.pcap" {
            assert!(
                streamed.iter().any(carried),
                "{file}: the pass hands plaintext on"
            );
        }
        assert!(
            !app.seen.iter().any(carried),
            "{file}: the session keeps none"
        );
        let mut opened = 0;
        for (i, d) in capture.datagrams().iter().enumerate() {
            let payload = capture.payload(d);
            let mut json = |seen: &Observation| {
                let (name, dissection) = dissectors.dissect_seen(d, payload, seen);
                opened += usize::from(dissection.layers.iter().any(|l| l.plaintext.is_some()));
                let mut line = Vec::new();
                bitlens::output::write_json(&mut line, d, payload.len(), name, &dissection);
                line
            };
            let (a, b) = (json(&streamed[i]), json(&app.seen[i]));
            assert!(a == b, "{file}: frame {} dissects differently", d.frame);
        }
        assert!(opened > 0, "{file}: some payloads were opened");
    }
}

/// A capture from the repository's captures/, in the TUI with the shipped dissectors.
fn shipped_capture(name: &str, size: (u16, u16)) -> App {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../captures")
        .join(name);
    app_for(Capture::open(&path).unwrap(), true, size)
}

#[test]
fn opening_and_drawing_a_packet_never_builds_the_owned_field_list() {
    // Issue 30.1: the TUI reads the trace's views (no path string or owned value per field, per
    // packet); before, opening a detail built the whole owned list.
    // The first 260 datagrams of faults.pcap: one of each fault (a desync among them).
    let mut app = shipped_capture("faults.pcap", (150, 40));
    for k in 0..260 {
        if k > 0 {
            app.handle_key(Key::Char('j'));
        }
        render(&app);
        // The tree's keys: down a row, fold and unfold a scope, then back to the list.
        app.handle_key(Key::Tab);
        app.handle_key(Key::Char('j'));
        app.handle_key(Key::Enter);
        app.handle_key(Key::Enter);
        render(&app);
        app.handle_key(Key::BackTab);
        let d = app.detail.as_ref().unwrap();
        assert!(
            !d.dissection.trace.fields.owned_built(),
            "datagram {k}: the owned list was built"
        );
    }
}

/// Tallies of what the rows checked by [`expected_tree_row`] held.
#[derive(Default, Debug)]
struct Seen {
    checks_ok: usize,
    checks_bad: usize,
    padding: usize,
    ranges: usize,
    codes: usize,
    failed: usize,
    elements: usize,
    scope_values: usize,
}

/// A tree row as the TUI drew it from the owned list (`TraceField`s), before it read views.
fn expected_tree_row(f: &bitlens_codec::TraceField, collapsed: bool, seen: &mut Seen) -> String {
    use bitlens_codec::{FieldKind, Value};
    let value = |v: &Value| match v {
        Value::None => String::new(),
        other => other.to_string(),
    };
    let mut s = "  ".repeat(f.depth);
    match &f.kind {
        FieldKind::Scope => {
            s += if collapsed { "▸ " } else { "▾ " };
            s += f.name();
            let v = value(&f.value);
            if !v.is_empty() {
                seen.scope_values += 1;
                s += &format!(" = {v}");
            }
        }
        FieldKind::Check {
            label,
            expected,
            found,
        } => {
            if expected == found {
                seen.checks_ok += 1;
                s += &format!("✓ check \"{label}\"");
            } else {
                seen.checks_bad += 1;
                s += &format!("✗ check \"{label}\" expected {expected:#010x} found {found:#010x}");
            }
        }
        FieldKind::Padding => {
            seen.padding += 1;
            s += "(padding)";
        }
        FieldKind::Value => s += &format!("{} = {}", f.name(), value(&f.value)),
    }
    if f.name().starts_with('[') {
        seen.elements += 1;
    }
    s += &format!("  @{} ·{}", f.bit, f.bits);
    if let Some((lo, hi)) = f.range {
        seen.ranges += 1;
        s += &format!(" [{lo}..={hi}]");
    }
    if let Some(raw) = f.raw {
        seen.codes += 1;
        s += &format!(" code {raw}");
    }
    if f.failed {
        seen.failed += 1;
        s += "  ◀ read stopped here";
    }
    s
}

/// The foreground colour a bit of the bit view has, from the owned list (as the TUI coloured it
/// before it read views): selected, the error's bit, a check's, padding or unread, read.
fn expected_bit_colors(app: &App, nbits: usize) -> Vec<Color> {
    use bitlens_codec::FieldKind;
    let d = app.detail.as_ref().unwrap();
    let fields = &d.dissection.trace.fields[..];
    let mut color = vec![Color::DarkGray; nbits];
    for f in fields {
        let c = match &f.kind {
            FieldKind::Scope => continue,
            FieldKind::Value => Color::Reset,
            FieldKind::Padding => Color::DarkGray,
            FieldKind::Check {
                expected, found, ..
            } => {
                if expected == found {
                    Color::Green
                } else {
                    Color::Red
                }
            }
        };
        let end = (f.bit + f.bits).min(nbits);
        if f.bit < end {
            color[f.bit..end].fill(c);
        }
    }
    if let Some(p) = &d.dissection.problem
        && p.bit < nbits
    {
        color[p.bit] = Color::White;
    }
    if let Some(s) = d.selected_field().map(|i| &fields[i]) {
        let end = s.bit + s.bits.max(usize::from(s.kind != FieldKind::Scope));
        for c in color.iter_mut().take(end.min(nbits)).skip(s.bit) {
            *c = Color::Black;
        }
    }
    color
}

/// Checks the tree and the bit view on screen against the text and colours the owned list
/// gives, for the packet open in `app`.
fn check_against_owned_list(app: &App, t: &Terminal<TestBackend>, seen: &mut Seen) {
    let d = app.detail.as_ref().unwrap();
    let fields = &d.dissection.trace.fields[..];
    let a = Areas::new(app.size);
    let buf = t.backend().buffer();
    let text = |x0: u16, x1: u16, y: u16| -> String {
        (x0..x1).map(|x| buf[(x, y)].symbol().to_owned()).collect()
    };
    // The tree: every row shown, cut at the pane's inner width.
    let width = usize::from(a.tree.width - 2);
    let shown = d.visible.iter().skip(d.offset).take(a.tree_rows());
    for (k, &i) in shown.enumerate() {
        // Cut and laid out in cells as ratatui lays out a line (a wide character takes two).
        let row = expected_tree_row(&fields[i], d.collapsed.contains(&i), seen);
        let mut cells =
            ratatui::buffer::Buffer::empty(ratatui::layout::Rect::new(0, 0, a.tree.width - 2, 1));
        cells.set_stringn(0, 0, &row, width, ratatui::style::Style::new());
        let want: String = (cells.content.iter()).map(|c| c.symbol()).collect();
        let y = a.tree.y + 1 + k as u16;
        let got = text(a.tree.x + 1, a.tree.x + a.tree.width - 1, y);
        assert_eq!(
            got.trim_end(),
            want.trim_end(),
            "datagram {} row {k}",
            d.datagram
        );
    }
    // The bit view's title names the selected field, and each bit shown has its colour.
    if let Some(s) = d.selected_field().map(|i| &fields[i]) {
        let title = text(a.bits.x, a.bits.x + a.bits.width, a.bits.y);
        let want = if s.bits > 0 {
            format!(" Bits: {} = bits {}..{} ", s.path(), s.bit, s.bit + s.bits)
        } else {
            format!(" Bits: {} (0 bits, at bit {}) ", s.path(), s.bit)
        };
        assert!(title.contains(&want), "{title:?} lacks {want:?}");
    }
    let payload = app.capture.payload(&app.capture.datagrams()[d.datagram]);
    let colors = expected_bit_colors(app, payload.len() * 8);
    let bpl = a.bytes_per_line();
    let lines = payload.len().div_ceil(bpl);
    for line in d.bits_offset..(d.bits_offset + a.bit_rows()).min(lines) {
        let y = a.bits.y + 2 + (line - d.bits_offset) as u16;
        for k in 0..bpl.min(payload.len() - line * bpl) {
            for j in 0..8 {
                let x = a.bits.x + 1 + (6 + 3 * bpl + 1 + k * 9 + j) as u16;
                let b = (line * bpl + k) * 8 + j;
                assert_eq!(buf[(x, y)].fg, colors[b], "datagram {} bit {b}", d.datagram);
            }
        }
    }
}

#[test]
fn the_tree_and_bit_view_show_what_the_owned_field_list_says() {
    // Issue 30.1: the TUI reads views; what it draws must be what the owned list (TraceFields)
    // gave: names, values, checks, padding, ranges, codes, a failed read, array elements, the
    // bit view's colours and its title. Datagrams of two shipped captures, the tree at
    // its first row and at its last, and with the first scope folded. The first 260 datagrams
    // of faults.pcap hold one of each fault it cycles through (one in 25), and 60 of demo.pcap
    // batches of every message.
    let mut seen = Seen::default();
    for (name, n) in [("faults.pcap", 260), ("demo.pcap", 60)] {
        let mut app = shipped_capture(name, (220, 90));
        for k in 0..n.min(app.capture.datagrams().len()) {
            if k > 0 {
                app.handle_key(Key::Char('j'));
            }
            check_against_owned_list(&app, &render(&app), &mut seen);
            app.handle_key(Key::Tab);
            app.handle_key(Key::Home);
            check_against_owned_list(&app, &render(&app), &mut seen);
            app.handle_key(Key::End);
            check_against_owned_list(&app, &render(&app), &mut seen);
            app.handle_key(Key::Home);
            app.handle_key(Key::Enter);
            check_against_owned_list(&app, &render(&app), &mut seen);
            app.handle_key(Key::Enter);
            app.handle_key(Key::BackTab);
        }
    }
    // What the rows held: every kind of row the tree draws was compared.
    let s = &seen;
    assert!(
        s.checks_ok > 0
            && s.checks_bad > 0
            && s.padding > 0
            && s.ranges > 0
            && s.codes > 0
            && s.failed > 0
            && s.elements > 0,
        "{s:?}"
    );
}
