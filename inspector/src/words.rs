//! Counts in the human-readable text: `1 byte`, `2 bytes`. Only for text meant to be read (the
//! summaries, the TUI); JSON keys and machine formats keep their own words.

/// `noun` as a count of `n` says it: the noun itself for 1, with an `s` otherwise (every noun
/// the text counts — byte, datagram, client, frame — takes one).
pub fn plural(n: u64, noun: &str) -> String {
    if n == 1 {
        noun.to_owned()
    } else {
        format!("{noun}s")
    }
}

/// `n` and `noun` for it: `1 datagram`, `0 datagrams`, `2 datagrams`.
pub fn count(n: u64, noun: &str) -> String {
    format!("{n} {}", plural(n, noun))
}

#[cfg(test)]
mod tests {
    use super::{count, plural};

    #[test]
    fn one_is_singular_and_every_other_count_plural() {
        assert_eq!(count(1, "byte"), "1 byte");
        assert_eq!(count(0, "byte"), "0 bytes");
        assert_eq!(count(2, "UDP datagram"), "2 UDP datagrams");
        assert_eq!(plural(11, "client"), "clients");
        assert_eq!(plural(1, "client"), "client");
    }
}
