//! The drawing: a pure function of [`App`], into the rectangles of [`Areas`].

use super::layout::{Areas, MIN_SIZE};
use super::state::{App, Detail, Pane};
use crate::capture::Datagram;
use bitlens_codec::dissect::Status;
use bitlens_codec::trace::{EntryKind, Field};
use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Clear, Paragraph, Row, Table, Wrap};

/// A one-character glyph for a status, in the list, the info line and the status bar.
pub fn glyph(status: Status) -> &'static str {
    match status {
        Status::Ok => "✓",
        Status::Error => "✗",
        Status::Desync => "≠",
        Status::Truncated => "…",
        Status::Fragment => "¦",
        Status::Undecoded => "·",
        Status::Encrypted => "◊",
    }
}

/// Styles, with or without colour (`NO_COLOR`).
struct Theme {
    color: bool,
}

impl Theme {
    fn fg(&self, c: Color) -> Style {
        if self.color {
            Style::new().fg(c)
        } else {
            Style::new()
        }
    }
    fn status(&self, s: Status) -> Style {
        match s {
            Status::Ok => self.fg(Color::Green),
            Status::Error => self.fg(Color::Red).add_modifier(Modifier::BOLD),
            Status::Desync => self.fg(Color::Magenta).add_modifier(Modifier::BOLD),
            Status::Truncated | Status::Fragment => self.fg(Color::Yellow),
            Status::Undecoded => self.fg(Color::DarkGray),
            Status::Encrypted => self.fg(Color::Cyan),
        }
    }
    fn ok(&self) -> Style {
        self.fg(Color::Green)
    }
    fn bad(&self) -> Style {
        if self.color {
            Style::new().fg(Color::Red).add_modifier(Modifier::BOLD)
        } else {
            Style::new().add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
        }
    }
    fn selected(&self) -> Style {
        if self.color {
            Style::new()
                .bg(Color::Yellow)
                .fg(Color::Black)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::new().add_modifier(Modifier::REVERSED)
        }
    }
    fn error_bit(&self) -> Style {
        if self.color {
            Style::new()
                .bg(Color::Red)
                .fg(Color::White)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::new().add_modifier(Modifier::REVERSED | Modifier::UNDERLINED)
        }
    }
    fn dim(&self) -> Style {
        if self.color {
            Style::new().fg(Color::DarkGray)
        } else {
            Style::new().add_modifier(Modifier::DIM)
        }
    }
    fn border(&self, focused: bool) -> Style {
        if focused {
            self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
        } else {
            Style::new()
        }
    }
}

/// Draws the whole inspector.
pub fn draw(app: &App, f: &mut Frame) {
    let area = f.area();
    let areas = Areas::new((area.width, area.height));
    let theme = Theme { color: app.color };
    if !areas.usable {
        let msg = format!(
            "terminal too small ({}x{}): bitlens needs {}x{}. q quits.",
            area.width, area.height, MIN_SIZE.0, MIN_SIZE.1
        );
        f.render_widget(Paragraph::new(msg).wrap(Wrap { trim: true }), area);
        return;
    }
    draw_list(app, f, &areas, &theme);
    draw_info(app, f, &areas, &theme);
    draw_tree(app, f, &areas, &theme);
    draw_bits(app, f, &areas, &theme);
    draw_status(app, f, &areas, &theme);
    if app.show_help {
        draw_help(app, f, area, &theme);
    }
    if let Some(view) = &app.profile {
        super::profile_view::draw(view, app.color, f, area);
    }
}

fn draw_list(app: &App, f: &mut Frame, a: &Areas, t: &Theme) {
    let h = a.list_rows();
    let first_time = app
        .capture
        .datagrams()
        .first()
        .map_or(0, |d| d.time.as_nanos());
    let end = (app.list_offset + h).min(app.rows.len());
    let shown = &app.rows[app.list_offset.min(end)..end];
    // The Len column widens for the rows on screen that show `captured/len`.
    let len_width = shown
        .iter()
        .map(|&i| len_cell(&app.capture.datagrams()[i]).len())
        .max()
        .unwrap_or(0)
        .max(5);
    // The Type column widens for the longest type name on screen (12 to 32 characters), so
    // that `netcode.connection_request` and `netcode.connection_payload` differ.
    let type_width = shown
        .iter()
        .map(|&i| type_cell(app, i).chars().count())
        .max()
        .unwrap_or(0)
        .clamp(12, 32);
    let rows = shown.iter().enumerate().map(|(k, &i)| {
        let d = &app.capture.datagrams()[i];
        let rel = (d.time.as_nanos() - first_time) as f64 / 1e9;
        let ty = type_cell(app, i);
        let status = app.summary(i).map(|s| s.status);
        let status_cell = match status {
            Some(s) => Cell::from(format!("{} {}", glyph(s), s.name())).style(t.status(s)),
            None => Cell::from("… pending").style(t.dim()),
        };
        let row = Row::new(vec![
            Cell::from(d.frame.to_string()),
            Cell::from(format!("{rel:.6}")),
            Cell::from(format!("{} → {}", d.src, d.dst)),
            Cell::from(len_cell(d)),
            Cell::from(ty),
            status_cell,
        ]);
        if app.list_offset + k == app.selected {
            row.style(if app.focus == Pane::List {
                t.selected()
            } else {
                Style::new().add_modifier(Modifier::REVERSED)
            })
        } else {
            row
        }
    });
    let title = if app.filter.is_empty() {
        format!(
            " Packets {}/{} ",
            if app.rows.is_empty() {
                0
            } else {
                app.selected + 1
            },
            app.rows.len()
        )
    } else {
        format!(
            " Packets {}/{} (filter: {}) ",
            if app.rows.is_empty() {
                0
            } else {
                app.selected + 1
            },
            app.rows.len(),
            app.filter_text
        )
    };
    let table = Table::new(
        rows,
        [
            Constraint::Length(8),
            Constraint::Length(11),
            Constraint::Min(24),
            Constraint::Length(u16::try_from(len_width).unwrap_or(u16::MAX)),
            Constraint::Length(u16::try_from(type_width).unwrap_or(32)),
            Constraint::Length(11),
        ],
    )
    .header(
        Row::new([
            "No.",
            "Time",
            "Source → Destination",
            "Len",
            "Type",
            "Status",
        ])
        .style(Style::new().add_modifier(Modifier::BOLD)),
    )
    .block({
        let block = Block::new()
            .borders(Borders::ALL)
            .title(title)
            .border_style(t.border(app.focus == Pane::List));
        // A capture damaged part way: the whole reason under the datagrams read before it (the
        // status line has room only for where).
        match damage_text(app) {
            Some((_, full)) if !app.capture.datagrams().is_empty() => {
                block.title_bottom(Span::styled(format!(" damaged: {full} "), t.bad()))
            }
            _ => block,
        }
    });
    f.render_widget(table, a.list);
    if app.rows.is_empty() {
        let inner = Rect::new(
            a.list.x + 2,
            a.list.y + 2,
            a.list.width.saturating_sub(4),
            a.list.height.saturating_sub(3).min(3),
        );
        // A capture damaged before its first datagram says why here, in full (wrapped), as
        // well as on the status line, which a narrow terminal cuts off.
        let msg = match (app.capture.datagrams().is_empty(), app.capture.damage()) {
            (true, Some(damage)) => format!("no UDP datagrams before the damage: {damage}"),
            (true, None) => "no UDP datagrams in this capture".to_owned(),
            (false, _) => "no packet matches the filter (/ to change it)".to_owned(),
        };
        f.render_widget(
            Paragraph::new(msg).style(t.dim()).wrap(Wrap { trim: true }),
            inner,
        );
    }
}

/// The Type column of datagram `i`: its packet type's name, `-` without one, `…` while it is
/// not yet summarized.
fn type_cell(app: &App, i: usize) -> String {
    match app.summary(i) {
        Some(s) => app
            .type_names
            .get(s.packet_type as usize)
            .cloned()
            .unwrap_or_else(|| "-".into()),
        None => "…".into(),
    }
}

/// The Len column: the UDP payload length its header declares, as `captured/len` when the
/// capture holds only part of it.
fn len_cell(d: &Datagram) -> String {
    if d.payload_len() == d.declared_len() {
        d.declared_len().to_string()
    } else {
        format!("{}/{}", d.payload_len(), d.declared_len())
    }
}

fn draw_info(app: &App, f: &mut Frame, a: &Areas, t: &Theme) {
    let mut lines = Vec::new();
    if let Some(d) = &app.detail {
        let dg = &app.capture.datagrams()[d.datagram];
        let head = format!(
            " frame {}  {}  {} → {}  {}{}  decoder {}  ",
            dg.frame,
            dg.time,
            dg.src,
            dg.dst,
            crate::words::count(dg.declared_len() as u64, "byte"),
            dg.captured_note(),
            d.decoder
        );
        lines.push(Line::from(vec![
            Span::raw(head),
            Span::styled(
                format!("{} {}", glyph(d.dissection.status), d.dissection.status),
                t.status(d.dissection.status),
            ),
        ]));
        // A lying IP or UDP length, rather than a snap-length cut or a clean verdict.
        let flaw = dg.flaw.map(|f| f.message(app.capture.name(), dg.frame));
        let second = match (&d.dissection.desync, &d.dissection.problem, flaw) {
            (Some(ds), ..) => Line::from(Span::styled(format!(" ≠ {}", ds.message()), t.bad())),
            (None, Some(p), _) => Line::from(Span::styled(format!(" ✗ {}", p.message), t.bad())),
            (None, None, Some(flaw)) => Line::from(Span::styled(format!(" ✗ {flaw}"), t.bad())),
            (None, None, None) => match d.dissection.status {
                Status::Ok if d.dissection.messages.is_some() => {
                    let n = d.dissection.messages.as_ref().map_or(0, Vec::len);
                    Line::from(Span::styled(
                        format!(" ✓ batch framing valid; {n} messages, every length checked"),
                        t.ok(),
                    ))
                }
                Status::Ok => Line::from(Span::styled(
                    " ✓ every check marker agrees; the packet ends where it should",
                    t.ok(),
                )),
                Status::Truncated => {
                    Line::from(" the capture cut this datagram short (snap length): not decoded")
                }
                Status::Fragment => Line::from(" an IP fragment: not decoded (no reassembly)"),
                Status::Undecoded => {
                    Line::from(" no decoder for these ports: use --decode PORT=NAME")
                }
                Status::Encrypted => Line::from(
                    " header read; payload encrypted and no key for this connection \
                     (--netcode-key FILE or --netcode-keylog FILE)",
                ),
                _ => Line::from(""),
            },
        };
        lines.push(second);
    }
    f.render_widget(Paragraph::new(lines), a.info);
}

/// Row `k` of the tree: trace entry `i`, as `fl`.
fn tree_row<'a>(
    d: &Detail,
    i: usize,
    k: usize,
    fl: Field<'_>,
    focused: bool,
    t: &Theme,
) -> Line<'a> {
    let indent = "  ".repeat(fl.depth());
    let mut spans = vec![Span::raw(indent)];
    match (fl.kind(), fl.check()) {
        (_, Some((label, expected, found))) => {
            if expected == found {
                spans.push(Span::styled(format!("✓ check \"{label}\""), t.ok()));
            } else {
                spans.push(Span::styled(
                    format!("✗ check \"{label}\" expected {expected:#010x} found {found:#010x}"),
                    t.bad(),
                ));
            }
        }
        (EntryKind::Scope, None) => {
            let marker = if d.collapsed.contains(&i) {
                "▸ "
            } else {
                "▾ "
            };
            spans.push(Span::raw(marker));
            spans.push(Span::styled(
                fl.name().into_owned(),
                Style::new().add_modifier(Modifier::BOLD),
            ));
            if fl.has_value() {
                let v = fl.value().to_string();
                if !v.is_empty() {
                    spans.push(Span::raw(format!(" = {v}")));
                }
            }
        }
        (EntryKind::Padding, None) => spans.push(Span::styled("(padding)", t.dim())),
        (EntryKind::Value | EntryKind::Check, None) => {
            spans.push(Span::raw(format!("{} = {}", fl.name(), fl.value())));
        }
    }
    let mut meta = format!("  @{} ·{}", fl.bit(), fl.bits());
    if let Some((lo, hi)) = fl.range() {
        meta.push_str(&format!(" [{lo}..={hi}]"));
    }
    if let Some(raw) = fl.raw() {
        meta.push_str(&format!(" code {raw}"));
    }
    spans.push(Span::styled(meta, t.dim()));
    if fl.failed() {
        spans.push(Span::styled("  ◀ read stopped here", t.bad()));
    }
    let mut line = Line::from(spans);
    if k == d.cursor {
        line = line.style(if focused {
            t.selected()
        } else {
            Style::new().add_modifier(Modifier::REVERSED)
        });
    } else if fl.failed() {
        line = line.style(t.bad());
    }
    line
}

fn draw_tree(app: &App, f: &mut Frame, a: &Areas, t: &Theme) {
    let focused = app.focus == Pane::Tree;
    let block = Block::new()
        .borders(Borders::ALL)
        .border_style(t.border(focused));
    let Some(d) = &app.detail else {
        f.render_widget(Paragraph::new("").block(block.title(" Fields ")), a.tree);
        return;
    };
    let h = a.tree_rows();
    // Views of the rows shown: no owned list of every field (paths, values) per packet.
    let fields = &d.dissection.trace.fields;
    let mut lines = Vec::with_capacity(h);
    for (k, &i) in d.visible.iter().enumerate().skip(d.offset).take(h) {
        let Some(fl) = fields.view(i) else { continue };
        lines.push(tree_row(d, i, k, fl, focused, t));
    }
    if fields.is_empty() {
        lines.push(Line::from(Span::styled("nothing decoded", t.dim())));
    }
    let title = format!(
        " Fields: {} {} ",
        d.dissection.packet_type.unwrap_or("?"),
        if d.visible.is_empty() {
            String::new()
        } else {
            format!("{}/{}", d.cursor + 1, d.visible.len())
        }
    );
    f.render_widget(Paragraph::new(lines).block(block.title(title)), a.tree);
}

/// What one payload bit is, for colouring.
#[derive(Clone, Copy, PartialEq, Eq)]
enum BitClass {
    Unread,
    Read,
    Padding,
    CheckOk,
    CheckBad,
}

fn draw_bits(app: &App, f: &mut Frame, a: &Areas, t: &Theme) {
    let focused = app.focus == Pane::Bits;
    let block = Block::new()
        .borders(Borders::ALL)
        .border_style(t.border(focused));
    let Some(d) = &app.detail else {
        f.render_widget(Paragraph::new("").block(block.title(" Bits ")), a.bits);
        return;
    };
    // The bytes the fields were read from: an encrypted payload's plaintext, in place.
    let payload = match &d.opened {
        Some(opened) => opened.as_slice(),
        None => app.capture.payload(&app.capture.datagrams()[d.datagram]),
    };
    let nbits = payload.len() * 8;
    let mut class = vec![BitClass::Unread; nbits];
    for fl in d.dissection.trace.fields.views() {
        let c = match (fl.kind(), fl.check()) {
            (_, Some((_, expected, found))) => {
                if expected == found {
                    BitClass::CheckOk
                } else {
                    BitClass::CheckBad
                }
            }
            (EntryKind::Scope, None) => continue,
            (EntryKind::Value | EntryKind::Check, None) => BitClass::Read,
            (EntryKind::Padding, None) => BitClass::Padding,
        };
        let end = (fl.bit() + fl.bits()).min(nbits);
        if fl.bit() < end {
            class[fl.bit()..end].fill(c);
        }
    }
    let selected = d
        .selected_field()
        .and_then(|i| d.dissection.trace.fields.view(i));
    let sel = selected.map_or(0..0, |s| {
        s.bit()
            ..s.bit()
                + s.bits()
                    .max(if s.kind() == EntryKind::Scope { 0 } else { 1 })
    });
    let error_bit = d.dissection.problem.as_ref().map(|p| p.bit);
    let bpl = a.bytes_per_line();
    let h = a.bit_rows();
    let mut lines = vec![Line::from(Span::styled(
        format!(
            "{:<6}{:<w$}bits in stream order (bit 0 of each byte first)",
            "off",
            "hex",
            w = bpl * 3 + 1
        ),
        t.dim(),
    ))];
    let total_lines = payload.len().div_ceil(bpl);
    for line_no in d.bits_offset..(d.bits_offset + h).min(total_lines) {
        let start = line_no * bpl;
        let end = (start + bpl).min(payload.len());
        let mut spans = vec![Span::styled(format!("{start:04x}  "), t.dim())];
        for (k, byte) in payload[start..end].iter().enumerate() {
            let b0 = (start + k) * 8;
            let in_sel = (b0..b0 + 8).any(|b| sel.contains(&b));
            let style = if in_sel { t.selected() } else { Style::new() };
            spans.push(Span::styled(format!("{byte:02x}"), style));
            spans.push(Span::raw(" "));
        }
        for _ in end..start + bpl {
            spans.push(Span::raw("   "));
        }
        spans.push(Span::raw(" "));
        for (k, byte) in payload[start..end].iter().enumerate() {
            for j in 0..8 {
                let b = (start + k) * 8 + j;
                let ch = if byte >> j & 1 == 1 { "1" } else { "0" };
                let style = if sel.contains(&b) {
                    t.selected()
                } else if error_bit == Some(b) {
                    t.error_bit()
                } else {
                    match class[b] {
                        BitClass::CheckOk => t.ok(),
                        BitClass::CheckBad => t.bad(),
                        BitClass::Padding | BitClass::Unread => t.dim(),
                        BitClass::Read => Style::new(),
                    }
                };
                spans.push(Span::styled(ch, style));
            }
            spans.push(Span::raw(" "));
        }
        lines.push(Line::from(spans));
    }
    let shown = if d.opened.is_some() {
        " (decrypted)"
    } else {
        ""
    };
    let title = match selected {
        Some(s) if s.bits() > 0 => {
            format!(
                " Bits{shown}: {} = bits {}..{} ",
                s.path(),
                s.bit(),
                s.bit() + s.bits()
            )
        }
        Some(s) => format!(" Bits{shown}: {} (0 bits, at bit {}) ", s.path(), s.bit()),
        None => format!(" Bits{shown} "),
    };
    f.render_widget(Paragraph::new(lines).block(block.title(title)), a.bits);
}

/// The capture's damage without the file name the status line starts with: where (`frame 31 at
/// byte 4930`), and the whole message (where and why).
fn damage_text(app: &App) -> Option<(String, String)> {
    let text = app.capture.damage()?.to_string();
    let prefix = format!("{}: ", app.capture.name());
    let full = text.strip_prefix(&prefix).unwrap_or(&text).to_owned();
    let at = full
        .split_once(": ")
        .map_or(full.as_str(), |(at, _)| at)
        .to_owned();
    Some((at, full))
}

fn draw_status(app: &App, f: &mut Frame, a: &Areas, t: &Theme) {
    if let Some(input) = &app.filter_input {
        let line = Line::from(vec![
            Span::styled("/", Style::new().add_modifier(Modifier::BOLD)),
            Span::raw(input.clone()),
            Span::styled("█", Style::new().add_modifier(Modifier::SLOW_BLINK)),
            Span::styled(
                "   type:NAME status:ok|error|desync|truncated|fragment|undecoded|encrypted port:N words · Enter \
                 applies · Esc cancels",
                t.dim(),
            ),
        ]);
        f.render_widget(Paragraph::new(line), a.status);
        return;
    }
    let counts = app.status_counts();
    let mut spans = vec![Span::styled(
        format!(" {} ", app.capture.name()),
        Style::new().add_modifier(Modifier::BOLD),
    )];
    // Messages first: on a narrow terminal the end of the bar is cut off.
    if let Some(m) = &app.message {
        spans.push(Span::styled(format!("│ {m} "), t.fg(Color::Yellow)));
    }
    if let Some((at, _)) = damage_text(app) {
        // Where only, so that the counts and the help still fit a normal terminal; the reason is
        // under the list (or in it, when no datagram came before the damage).
        spans.push(Span::styled(format!("│ damaged: {at} "), t.bad()));
    }
    spans.push(Span::raw(format!(
        "│ {} ",
        crate::words::count(app.capture.datagrams().len() as u64, "datagram")
    )));
    for st in [
        Status::Ok,
        Status::Error,
        Status::Desync,
        Status::Truncated,
        Status::Fragment,
        Status::Encrypted,
    ] {
        let n = counts[st as usize];
        if n > 0 || st == Status::Ok {
            spans.push(Span::styled(
                format!("{} {n} {} ", glyph(st), st.name()),
                t.status(st),
            ));
        }
    }
    spans.push(Span::raw(format!("│ {} ", app.dissectors.describe())));
    if let Some(first) = app.pending.first() {
        // What a reader of the capture would miss, as `check` lists it (after the counts: a
        // narrow terminal cuts this off, not them).
        let more = match app.pending.len() {
            1 => String::new(),
            n => format!(" (and {} more)", n - 1),
        };
        spans.push(Span::styled(
            format!("│ still in reassembly when the capture ended: {first}{more} "),
            t.fg(Color::Yellow),
        ));
    }
    if let Some(live) = &app.live {
        let mode = match (live.paused, live.follow) {
            (true, _) => format!("PAUSED ({} new)", live.waiting),
            (false, true) => "following".to_owned(),
            (false, false) => "not following".to_owned(),
        };
        let unlisted = if live.unlisted > 0 {
            format!(", {} not listed", live.unlisted)
        } else {
            String::new()
        };
        spans.push(Span::styled(
            format!("│ LIVE {mode}{unlisted} · f follow · p pause "),
            t.fg(Color::Cyan),
        ));
    } else if !app.fully_summarized() {
        let pct = app.summarized * 100 / app.summaries.len().max(1);
        let filled = pct / 10;
        spans.push(Span::styled(
            format!(
                "│ decoding {}{} {pct}% ",
                "█".repeat(filled),
                "░".repeat(10 - filled)
            ),
            t.fg(Color::Cyan),
        ));
    }
    spans.push(Span::styled("│ ? help  q quit", t.dim()));
    f.render_widget(Paragraph::new(Line::from(spans)), a.status);
}

/// The keys, as the help overlay lists them.
pub const HELP: &[(&str, &str)] = &[
    ("↑ ↓  j k", "move in the focused pane"),
    ("PgUp PgDn", "page"),
    ("g  G", "first / last"),
    (
        "Tab  Shift-Tab",
        "next / previous pane (packets, fields, bits)",
    ),
    (
        "Enter  Space",
        "open the packet / expand or collapse a struct",
    ),
    ("← →  h l", "collapse / expand a struct"),
    (
        "n  N",
        "next / previous problem packet (error, desync, truncated, fragment)",
    ),
    // The example is the registered protocol's own: see `filter_example`.
    ("/", "filter: type:NAME status:desync port:PORT ADDRESS"),
    (
        "P",
        "profile of the listed packets: bits by field, per second",
    ),
    ("mouse", "click selects, wheel scrolls"),
    ("?", "this help"),
    (
        "q  Esc",
        "quit (Esc steps back first: help, prompt, tree to list, filter)",
    ),
    (
        "Ctrl-C",
        "quit, from anywhere (this help, the filter prompt, the profile)",
    ),
];

/// The keys of a live session (`proxy --tui`), listed after [`HELP`] there.
pub const LIVE_HELP: &[(&str, &str)] = &[
    ("f", "live: follow the newest datagram, on / off"),
    ("p", "live: pause the list (arrivals wait) / resume"),
];

/// The filter example of the help: a packet type and the port of the protocol the program
/// registered first (by port), so that a game's own binary shows its own
/// (`type:RoboCat status:desync port:40000 10.0.0.12` for the demo).
pub fn filter_example(app: &App) -> String {
    let mut example = String::from("filter:");
    let first = app.dissectors.ports().next();
    let packet_type = first
        .and_then(|(_, name)| app.dissectors.by_name(name))
        .and_then(|d| d.protocol().and_then(|p| p.packet_types.last().cloned()))
        .or_else(|| app.type_names.first().cloned());
    if let Some(t) = packet_type {
        example.push_str(&format!(" type:{t}"));
    }
    example.push_str(" status:desync");
    if let Some((port, _)) = first {
        example.push_str(&format!(" port:{port}"));
    }
    example.push_str(" 10.0.0.12");
    example
}

fn draw_help(app: &App, f: &mut Frame, area: Rect, t: &Theme) {
    let filter = filter_example(app);
    // Wide enough for the filter example, whose packet type may be long
    // (`netcode.connection_request`): 1 + 16 columns of keys, the text, 2 borders.
    let need = u16::try_from(filter.chars().count() + 19).unwrap_or(u16::MAX);
    let w = area.width.min(need.max(86));
    let live: &[(&str, &str)] = if app.live.is_some() { LIVE_HELP } else { &[] };
    let h = ((HELP.len() + live.len()) as u16 + 6).min(area.height);
    let popup = Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    );
    let mut lines: Vec<Line> = HELP
        .iter()
        .chain(live)
        .map(|(k, v)| {
            let v = if *k == "/" { filter.as_str() } else { v };
            Line::from(vec![
                Span::styled(
                    format!(" {k:<16}"),
                    Style::new().add_modifier(Modifier::BOLD),
                ),
                Span::raw(v.to_owned()),
            ])
        })
        .collect();
    lines.push(Line::from(""));
    lines.push(Line::from(vec![
        Span::raw(" Check markers: "),
        Span::styled("✓ reader and writer agree", t.ok()),
        Span::raw("  "),
        Span::styled("✗ desynced", t.bad()),
    ]));
    lines.push(Line::from(Span::styled(
        " Bits: selected field highlighted; padding and unread bits dim.",
        t.dim(),
    )));
    f.render_widget(Clear, popup);
    f.render_widget(
        Paragraph::new(lines).block(
            Block::new()
                .borders(Borders::ALL)
                .title(format!(" {} inspect: keys ", app.program))
                .border_style(t.border(true)),
        ),
        popup,
    );
}
