//! The one rule for names in a schema (SCHEMA.md, "Names"), and the extra rule for the protocol
//! name, which the Wireshark export registers as a protocol filter name.
//!
//! A name is a plain identifier: ASCII letters, digits and `_`, at least one and at most
//! [`MAX_NAME_LEN`] bytes (a digit may come first: a derived tuple struct's fields are `0`,
//! `1`, ...). Names reach traces, JSON keys, filter paths, error messages and
//! the exported Lua's display labels; a quote, a newline, a NUL or a line separator in one would
//! forge lines in `tshark -V` or break a path such as `players[3].x`.

use crate::bounds::MAX_NAME_LEN;

/// The names Wireshark 4.0 already registers as protocols (filter names and short names,
/// lower-cased, sorted bytewise; `scripts/wireshark-protocols.sh` writes the file).
const TAKEN: &str = include_str!("wireshark/taken.txt");

/// Names Wireshark registers that must stay refused whatever version wrote [`TAKEN`]: the
/// layers below every bitlens packet and Wireshark's own pseudo-protocols.
const ALWAYS_TAKEN: &[&str] = &[
    "data", "eth", "frame", "ip", "ipv6", "sll", "tcp", "udp", "udplite", "_ws",
];

/// The name as an error shows it: quoted and escaped, cut after 40 characters.
pub(crate) fn shown(name: &str) -> String {
    let mut cut: String = name.chars().take(40).collect();
    if cut.len() < name.len() {
        cut.push('…');
        format!("{cut:?} ({} bytes)", name.len())
    } else {
        format!("{cut:?}")
    }
}

/// Why `name` is not a plain identifier, or `None` when it is.
pub(crate) fn identifier(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("is empty".into());
    }
    if name.len() > MAX_NAME_LEN {
        return Some(format!("is longer than {MAX_NAME_LEN} bytes"));
    }
    if !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return Some("is not a plain identifier".into());
    }
    None
}

/// What a name must be, for the errors' hint.
pub(crate) const IDENTIFIER_RULE: &str = "use ASCII letters, digits and _, at most 128 bytes";

/// Why a check marker's label cannot be used, or `None`. A label is hashed onto the wire, so it
/// is free text (`"end of packet"`), but it is shown as a field name: no control character and
/// no line or paragraph separator, at most [`MAX_NAME_LEN`] bytes, not empty.
pub(crate) fn label(text: &str) -> Option<String> {
    if text.is_empty() {
        return Some("is empty".into());
    }
    if text.len() > MAX_NAME_LEN {
        return Some(format!("is longer than {MAX_NAME_LEN} bytes"));
    }
    if text
        .chars()
        .any(|c| c.is_control() || c == '\u{2028}' || c == '\u{2029}')
    {
        return Some("holds a control character or a line separator".into());
    }
    None
}

/// Why `name` cannot name a protocol, or `None`: it must be a Wireshark protocol filter name
/// (`proto_register_protocol`: at least two characters of lower-case letters, digits, `-`, `_`
/// and `.`, no leading, trailing or doubled `.`; here also starting with a letter, since a
/// display filter cannot start with a digit, and at most [`MAX_NAME_LEN`] bytes) that Wireshark
/// does not register already. `batch` also checks `{name}_batch`, the batch dissector's name.
pub(crate) fn protocol(name: &str, batch: bool) -> Option<String> {
    if name.len() < 2 {
        return Some("is shorter than 2 characters (Wireshark refuses such a filter name)".into());
    }
    if name.len() > MAX_NAME_LEN {
        return Some(format!("is longer than {MAX_NAME_LEN} bytes"));
    }
    let chars_ok = name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'_' | b'-' | b'.'));
    if !chars_ok || !name.starts_with(|c: char| c.is_ascii_lowercase()) {
        return Some(
            "is not a Wireshark filter name (use lower-case letters, digits, _, - and ., \
             starting with a letter)"
                .into(),
        );
    }
    if name.ends_with('.') || name.contains("..") {
        return Some("ends with . or holds .. (Wireshark refuses such a filter name)".into());
    }
    let batch_name = format!("{name}_batch");
    for n in std::iter::once(name).chain(batch.then_some(batch_name.as_str())) {
        if is_taken(n) {
            return Some(format!(
                "is a protocol Wireshark already has{} (its dissector would not register: \
                 pick another name)",
                if n == name {
                    String::new()
                } else {
                    format!(" (\"{n}\", the batch dissector's name)")
                }
            ));
        }
    }
    None
}

/// Whether Wireshark already registers a protocol named `name`.
pub(crate) fn is_taken(name: &str) -> bool {
    ALWAYS_TAKEN.contains(&name) || taken().binary_search(&name).is_ok()
}

fn taken() -> &'static [&'static str] {
    static LIST: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    LIST.get_or_init(|| {
        let mut v: Vec<&str> = TAKEN
            .lines()
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .collect();
        v.sort_unstable();
        v
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers() {
        for ok in [
            "x",
            "_x",
            "0",
            "Player2",
            "linear_velocity",
            &"a".repeat(128),
        ] {
            assert_eq!(identifier(ok), None, "{ok}");
        }
        for bad in [
            "",
            "a b",
            "a\"b",
            "a\nb",
            "a\0b",
            "a\u{2028}b",
            "a-b",
            "a.b",
            "a[0]",
            "é",
            &"a".repeat(129),
        ] {
            assert!(identifier(bad).is_some(), "{bad:?}");
        }
    }

    #[test]
    fn protocol_names_are_wireshark_filter_names_not_taken() {
        for ok in [
            "demo", "arena", "my-game", "game.v2", "t2", "showcase", "skirmish",
        ] {
            assert_eq!(protocol(ok, true), None, "{ok}");
        }
        for bad in [
            "p", "", "Demo", "2x", "a b", "a..b", "a.", "udp", "frame", "data", "ip", "eth", "tcp",
            "quake", "my\ngame",
        ] {
            assert!(protocol(bad, false).is_some(), "{bad:?}");
        }
        assert!(taken().len() > 2000, "the list is read");
    }

    #[test]
    fn long_names_are_cut_in_messages() {
        let s = shown(&"x".repeat(100_000));
        assert!(s.len() < 80 && s.contains("100000 bytes"), "{s}");
        assert_eq!(shown("a\nb"), "\"a\\nb\"");
    }
}
