//! The profile as text tables, sorted by cost, fitted to a width (the terminal's, or 100
//! columns when stdout is not a terminal).

use super::{Profile, Row};
use std::fmt::Write as _;

/// The width of the table when stdout is not a terminal and no `--width` is given.
pub const DEFAULT_WIDTH: usize = 100;

/// The narrowest table drawn: the number columns and a few characters of the name.
const MIN_WIDTH: usize = 60;

/// The width to draw at: `width` when given, else the terminal's when stdout is one, else
/// [`DEFAULT_WIDTH`].
pub fn width(width: Option<usize>) -> usize {
    use std::io::IsTerminal;
    width
        .or_else(|| {
            std::io::stdout()
                .is_terminal()
                .then(|| ratatui::crossterm::terminal::size().ok())
                .flatten()
                .map(|(w, _)| usize::from(w))
        })
        .unwrap_or(DEFAULT_WIDTH)
        .max(MIN_WIDTH)
}

/// Characters of the number columns of a totals line, before the name.
const NUMBERS: usize = 53;

/// `s` cut to `width` characters, the last one `…` when cut.
fn fit(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        return s.to_owned();
    }
    let mut out: String = s.chars().take(width.saturating_sub(1)).collect();
    out.push('…');
    out
}

fn percent(share: f64) -> String {
    format!("{:.1}%", share * 100.0)
}

/// The number columns of a totals row and its name (fitted to the rest of `width`).
fn totals_line(out: &mut String, r: &Row, name: &str, width: usize) {
    let name_width = width.saturating_sub(NUMBERS);
    let _ = writeln!(
        out,
        "{:>12} {:>11} {:>6} {:>9} {:>9.1}  {}",
        r.bits,
        format!("{:.0}", r.bytes),
        percent(r.share),
        r.count,
        r.bits_per,
        fit(name, name_width)
    );
}

fn header(out: &mut String, title: &str) {
    let _ = writeln!(
        out,
        "\n{:>12} {:>11} {:>6} {:>9} {:>9}  {title}",
        "bits", "bytes", "share", "count", "bits/occ"
    );
}

/// The whole profile as text, `width` columns wide; `top` limits the fields table.
pub fn render(p: &Profile, name: &str, width: usize, top: Option<usize>) -> String {
    let mut out = String::new();
    let not_decoded: u64 = p.not_decoded.iter().map(|r| r.count).sum();
    let _ = writeln!(
        out,
        "{name}: {} over {:.2} s",
        crate::words::count(p.datagrams, "datagram"),
        p.duration_secs
    );
    let _ = writeln!(
        out,
        "{} decoded: {} bits ({:.0} bytes) with IP + UDP headers; {not_decoded} not decoded",
        p.decoded.count,
        p.decoded.bits,
        p.decoded.bits as f64 / 8.0
    );
    if let Some(l) = p.largest_datagram {
        let _ = writeln!(
            out,
            "largest datagram: {} of UDP payload (frame {})",
            crate::words::count(l.bytes, "byte"),
            l.frame
        );
    }
    let _ = writeln!(
        out,
        "\n{:>12} {:>11} {:>12} {:>9}  direction, server port",
        "bits", "bytes", "bytes/s", "datagrams"
    );
    for d in &p.directions {
        let _ = writeln!(
            out,
            "{:>12} {:>11} {:>12.1} {:>9}  {} {}",
            d.bits,
            d.bits / 8,
            d.bytes_per_sec,
            d.datagrams,
            d.direction,
            d.port
        );
    }
    if let Some(peak) = p.seconds.iter().max_by_key(|s| s.to_server + s.from_server) {
        let _ = writeln!(
            out,
            "busiest second: second {} of the capture, {} B to the server ports, {} B from them",
            peak.second,
            peak.to_server / 8,
            peak.from_server / 8
        );
    }
    header(&mut out, "packet type");
    for r in &p.packet_types {
        totals_line(&mut out, r, &r.name, width);
    }
    if !p.message_types.is_empty() {
        header(&mut out, "message type");
        for r in &p.message_types {
            totals_line(&mut out, r, &r.name, width);
        }
    }
    if !p.channels.is_empty() {
        header(&mut out, "channel");
        for r in &p.channels {
            totals_line(&mut out, r, &r.name, width);
        }
    }
    fields_table(&mut out, p, width, top);
    compressed_table(&mut out, p, width);
    if !p.not_decoded.is_empty() {
        let _ = writeln!(
            out,
            "\n{:>12} {:>11} {:>9}  not decoded (in no total above)",
            "bits", "bytes", "datagrams"
        );
        for r in &p.not_decoded {
            let _ = writeln!(
                out,
                "{:>12} {:>11} {:>9}  {}",
                r.bits,
                r.bits / 8,
                r.count,
                r.name
            );
        }
    }
    if !p.pending.is_empty() {
        // As `check` and `decode` say it: fragments whose packet or block never completed.
        let _ = writeln!(out);
        for line in &p.pending {
            let _ = writeln!(
                out,
                "note: still in reassembly when the capture ended: {line}"
            );
        }
    }
    // Every line fits: names were fitted already, long file names and headers are cut here.
    let mut fitted = String::with_capacity(out.len());
    for line in out.lines() {
        fitted.push_str(&fit(line, width));
        fitted.push('\n');
    }
    fitted
}

/// Fields and overhead rows in one table, by cost; hints after the name where there is room.
fn fields_table(out: &mut String, p: &Profile, width: usize, top: Option<usize>) {
    header(out, "field or overhead");
    let mut rows: Vec<&Row> = p
        .fields
        .iter()
        .map(|f| &f.totals)
        .chain(&p.overhead)
        .collect();
    rows.sort_by(|a, b| b.bits.cmp(&a.bits).then_with(|| a.name.cmp(&b.name)));
    let shown = top.unwrap_or(rows.len()).min(rows.len());
    for r in &rows[..shown] {
        totals_line(out, r, &r.name, width);
    }
    if shown < rows.len() {
        let _ = writeln!(out, "  ... {} more rows (--top)", rows.len() - shown);
    }
    let hints: Vec<(&str, &str)> = p
        .fields
        .iter()
        .filter_map(|f| Some((f.name.as_str(), f.hint.as_deref()?)))
        .collect();
    if !hints.is_empty() {
        let _ = writeln!(
            out,
            "\nrange hints (declared ranges wider than this capture's values):"
        );
        for (name, hint) in hints {
            let _ = writeln!(out, "  {}", fit(&format!("{name}: {hint}"), width - 2));
        }
    }
}

fn compressed_table(out: &mut String, p: &Profile, width: usize) {
    if p.compressed.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\n{:>9} {:>9} {:>9} {:>7}  compressed floats (raw: 32 bits each)",
        "count", "bits/occ", "raw/occ", "saved"
    );
    for c in &p.compressed {
        let per = |bits: u64| bits as f64 / c.count.max(1) as f64;
        let saved = if c.raw_bits == 0 {
            0.0
        } else {
            1.0 - c.bits as f64 / c.raw_bits as f64
        };
        let _ = writeln!(
            out,
            "{:>9} {:>9.1} {:>9.1} {:>7}  {}",
            c.count,
            per(c.bits),
            per(c.raw_bits),
            percent(saved),
            fit(&c.name, width.saturating_sub(40))
        );
    }
}

#[cfg(test)]
mod tests {
    use super::fit;

    #[test]
    fn long_names_are_cut_with_an_ellipsis() {
        assert_eq!(fit("objects[].position.x", 8), "objects…");
        assert_eq!(fit("short", 8), "short");
    }
}
