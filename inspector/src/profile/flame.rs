//! The profile as a flame graph (SVG): bits by packet type, message type and field path, drawn
//! by `inferno` from folded stacks (`SceneUpdate;objects[];position;x 17000`).

use super::Profile;
use std::io::Write;

/// The folded stacks of a profile, one line each (`type;field;subfield bits`), for rows with
/// bits.
pub fn folded(p: &Profile) -> Vec<String> {
    p.stacks
        .iter()
        .filter(|(_, bits)| *bits > 0)
        .map(|(stack, bits)| format!("{stack} {bits}"))
        .collect()
}

/// Writes the flame graph of `p` as SVG, titled with `title`.
///
/// # Errors
/// When the output cannot be written, or the profile has no decoded bits to draw.
pub fn write_svg(p: &Profile, title: &str, out: impl Write) -> std::io::Result<()> {
    let lines = folded(p);
    if lines.is_empty() {
        return Err(std::io::Error::other(
            "no decoded datagram to draw: the flame graph would be empty",
        ));
    }
    let mut options = inferno::flamegraph::Options::default();
    options.title = format!("Where the bits go: {title}");
    options.count_name = "bits".to_owned();
    options.name_type = "Field:".to_owned();
    options.deterministic = true;
    // Names keep their beginning when cut (`SceneUpd..`, not `..eUpdate`), and the picture is
    // wide enough for a protocol's fields.
    options.text_truncate_direction = inferno::flamegraph::TextTruncateDirection::Right;
    options.image_width = Some(1600);
    options.hash = true;
    inferno::flamegraph::from_lines(&mut options, lines.iter().map(String::as_str), out)
}
