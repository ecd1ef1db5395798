//! The profile view (`P`): where the bits of the listed datagrams (the filter in force) go, as
//! a table sorted by cost, and their bits per second over time as a chart.

use crate::profile::{Profile, Row};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Block, Borders, Chart, Clear, Dataset, GraphType, Paragraph};

/// The profile shown over the inspector, and where its table is scrolled.
#[derive(Debug, Clone)]
pub struct ProfileView {
    /// The profile of the listed datagrams.
    pub profile: Profile,
    /// The filter it was made with (empty: every datagram).
    pub filter: String,
    /// First table row shown.
    pub offset: usize,
}

impl ProfileView {
    /// The table's rows: fields and overhead, by cost; then the message types (yojimbo's, a
    /// batch's) and yojimbo's channels, each with the word its name is shown after (`message
    /// TestMessage`; a channel's name says it).
    pub fn rows(&self) -> Vec<(&'static str, &Row)> {
        let mut rows: Vec<&Row> = self
            .profile
            .fields
            .iter()
            .map(|f| &f.totals)
            .chain(&self.profile.overhead)
            .collect();
        rows.sort_by(|a, b| b.bits.cmp(&a.bits).then_with(|| a.name.cmp(&b.name)));
        let mut rows: Vec<(&'static str, &Row)> = rows.into_iter().map(|r| ("", r)).collect();
        rows.extend(self.profile.message_types.iter().map(|r| ("message ", r)));
        rows.extend(self.profile.channels.iter().map(|r| ("", r)));
        rows
    }
}

fn fg(color: bool, c: Color) -> Style {
    if color {
        Style::new().fg(c)
    } else {
        Style::new()
    }
}

/// Draws the profile view over the whole of `area`.
pub fn draw(view: &ProfileView, color: bool, f: &mut Frame, area: Rect) {
    f.render_widget(Clear, area);
    let p = &view.profile;
    let [head, table, chart] = Layout::vertical([
        Constraint::Length(2),
        Constraint::Min(3),
        Constraint::Length((area.height / 3).max(6)),
    ])
    .areas(area);
    let apart: u64 = p.not_decoded.iter().map(|r| r.count).sum();
    let filter = if view.filter.is_empty() {
        "all datagrams".to_owned()
    } else {
        format!("filter {}", view.filter)
    };
    let title = format!(
        " profile of {filter}: {} decoded, {} bytes with IP + UDP headers; {apart} not decoded ",
        p.decoded.count,
        p.decoded.bits / 8
    );
    let header = format!(
        "{:>10} {:>6} {:>8} {:>8}  field or overhead        ↑↓ PgUp PgDn scroll, P or Esc closes",
        "bits", "share", "count", "bits/occ"
    );
    f.render_widget(
        Paragraph::new(vec![
            Line::from(Span::styled(
                title,
                Style::new().add_modifier(Modifier::BOLD),
            )),
            Line::from(Span::styled(header, fg(color, Color::Cyan))),
        ]),
        head,
    );
    let rows = view.rows();
    let lines: Vec<Line> = rows
        .iter()
        .skip(view.offset)
        .take(usize::from(table.height))
        .map(|(what, r)| {
            Line::from(format!(
                "{:>10} {:>5.1}% {:>8} {:>8.1}  {what}{}",
                r.bits,
                r.share * 100.0,
                r.count,
                r.bits_per,
                r.name
            ))
        })
        .collect();
    f.render_widget(Paragraph::new(lines), table);
    draw_chart(p, color, f, chart);
}

/// Bits per second over time, to and from the server ports.
fn draw_chart(p: &Profile, color: bool, f: &mut Frame, area: Rect) {
    let to: Vec<(f64, f64)> = p
        .seconds
        .iter()
        .map(|s| (s.second as f64, s.to_server as f64))
        .collect();
    let from: Vec<(f64, f64)> = p
        .seconds
        .iter()
        .map(|s| (s.second as f64, s.from_server as f64))
        .collect();
    let (x0, x1) = match (p.seconds.first(), p.seconds.last()) {
        (Some(a), Some(b)) => (
            a.second as f64,
            (b.second as f64).max(a.second as f64 + 1.0),
        ),
        _ => (0.0, 1.0),
    };
    let top = p
        .seconds
        .iter()
        .map(|s| s.to_server.max(s.from_server))
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    let datasets = vec![
        Dataset::default()
            .name("to server")
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(fg(color, Color::Cyan))
            .data(&to),
        Dataset::default()
            .name("from server")
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(fg(color, Color::Yellow))
            .data(&from),
    ];
    let chart = Chart::new(datasets)
        .block(
            Block::new()
                .borders(Borders::TOP)
                .title(" bits per second "),
        )
        .x_axis(
            Axis::default()
                .title("s")
                .bounds([x0, x1])
                .labels([format!("{x0:.0}"), format!("{x1:.0}")]),
        )
        .y_axis(
            Axis::default()
                .bounds([0.0, top * 1.1])
                .labels(["0".to_owned(), format!("{top:.0}")]),
        );
    f.render_widget(chart, area);
}
