//! From a [`Profiler`]'s accumulators to the rows of a [`Profile`].

use super::{
    Class, CompressedRow, DirectionRow, FieldAcc, FieldRow, Largest, Overhead, Profile, Profiler,
    Row, SecondRow, Tally,
};

/// A row of `tally` as a share of `total` bits.
pub(super) fn row(name: impl Into<String>, tally: Tally, total: u64) -> Row {
    Row {
        name: name.into(),
        count: tally.count,
        bits: tally.bits,
        bytes: tally.bits as f64 / 8.0,
        share: if total == 0 {
            0.0
        } else {
            tally.bits as f64 / total as f64
        },
        bits_per: if tally.count == 0 {
            0.0
        } else {
            tally.bits as f64 / tally.count as f64
        },
    }
}

/// Bits that hold every integer of `0..=n`.
fn bits_for(n: u128) -> u32 {
    128 - n.leading_zeros()
}

/// The hint of a ranged field sent in a fixed width: the width the values of this capture need.
fn hint(acc: &FieldAcc) -> Option<String> {
    let (lo, hi) = acc.range?;
    let (a, b) = acc.seen?;
    if acc.min_bits != acc.max_bits || acc.tally.count == 0 {
        return None;
    }
    let width = acc.max_bits;
    let needed = u64::from(bits_for(b.abs_diff(a)));
    (needed < width).then(|| {
        format!("sent in {width} bits, values here need {needed} ({a}..={b} of {lo}..={hi})")
    })
}

/// `Type.path`, or `Message.path` inside a batch message.
fn display_name(acc: &FieldAcc) -> String {
    format!("{}.{}", acc.message.unwrap_or(acc.packet_type), acc.path)
}

/// The flame graph's stack of a row: `type;message;segment;segment`.
fn stack(acc: &FieldAcc) -> String {
    let mut s = String::from(acc.packet_type);
    if let Some(m) = acc.message {
        s.push(';');
        s.push_str(m);
    }
    match acc.class {
        Class::Overhead(o) => {
            s.push(';');
            s.push_str(o.label());
        }
        Class::Field => {
            for segment in acc.path.split('.') {
                s.push(';');
                s.push_str(segment);
            }
        }
        Class::Reassembled => {}
    }
    // Folded stacks end with a space and the count: no other space or semicolon may be in a
    // frame's name.
    s.replace(' ', "\u{a0}")
}

fn by_bits<T>(rows: &mut [T], bits: impl Fn(&T) -> u64, name: impl Fn(&T) -> &str) {
    rows.sort_by(|a, b| bits(b).cmp(&bits(a)).then_with(|| name(a).cmp(name(b))));
}

pub(super) fn profile(p: Profiler<'_>) -> Profile {
    let total = p.decoded.bits;
    let duration = match (p.first, p.last) {
        (Some(f), Some(l)) => (l.as_nanos() - f.as_nanos()) as f64 / 1e9,
        _ => 0.0,
    };
    let per_sec = duration.max(1.0);
    let directions = p
        .directions
        .iter()
        .map(|(&(port, to), t)| DirectionRow {
            direction: if to { "to" } else { "from" },
            port,
            datagrams: t.count,
            bits: t.bits,
            bytes_per_sec: t.bits as f64 / 8.0 / per_sec,
        })
        .collect();
    let mut packet_types: Vec<Row> = p
        .packet_types
        .iter()
        .map(|(n, t)| row(*n, *t, total))
        .collect();
    by_bits(&mut packet_types, |r| r.bits, |r| &r.name);
    // Message types and channels count yojimbo's reassembled packets on the datagram that
    // completed them, whose fragments came in others (which a TUI filter may leave out): their
    // shares are of their own table's bits, a whole that holds them, not of the datagrams'.
    let messages_total = p.messages.values().map(|t| t.bits).sum();
    let mut message_types: Vec<Row> = p
        .messages
        .iter()
        .map(|(n, t)| row(*n, *t, messages_total))
        .collect();
    by_bits(&mut message_types, |r| r.bits, |r| &r.name);
    let channels_total = p.channels.values().map(|t| t.bits).sum();
    let mut channels: Vec<Row> = p
        .channels
        .iter()
        .map(|(c, t)| row(format!("channel {c}"), *t, channels_total))
        .collect();
    by_bits(&mut channels, |r| r.bits, |r| &r.name);
    let mut overhead_totals = [Tally::default(); Overhead::ALL.len()];
    let mut fields = Vec::new();
    let mut stacks = Vec::new();
    for acc in &p.fields {
        stacks.push((stack(acc), acc.tally.bits));
        match acc.class {
            Class::Overhead(o) => {
                let t = &mut overhead_totals[o as usize];
                t.count += acc.tally.count;
                t.bits += acc.tally.bits;
            }
            Class::Field => fields.push(FieldRow {
                name: display_name(acc),
                kind: "field".to_owned(),
                totals: row(display_name(acc), acc.tally, total),
                hint: hint(acc),
            }),
            // Never a row: the walk counts no such leaf.
            Class::Reassembled => {}
        }
    }
    by_bits(&mut fields, |r| r.totals.bits, |r| &r.name);
    let mut overhead: Vec<Row> = Overhead::ALL
        .iter()
        .zip(overhead_totals)
        .filter(|(_, t)| t.count > 0)
        .map(|(o, t)| row(o.label(), t, total))
        .collect();
    by_bits(&mut overhead, |r| r.bits, |r| &r.name);
    let mut compressed: Vec<CompressedRow> = p
        .packed
        .iter()
        .map(|a| CompressedRow {
            name: a.name.to_string(),
            count: a.tally.count,
            bits: a.tally.bits,
            raw_bits: a.raw_bits,
        })
        .collect();
    by_bits(
        &mut compressed,
        |r| r.raw_bits - r.bits.min(r.raw_bits),
        |r| &r.name,
    );
    let not_decoded = p
        .not_decoded
        .iter()
        .map(|(s, t)| row(s.name(), *t, total))
        .collect();
    Profile {
        datagrams: p.datagrams,
        decoded: p.decoded,
        header_bits: p.header_bits,
        duration_secs: duration,
        directions,
        packet_types,
        message_types,
        channels,
        fields,
        overhead,
        compressed,
        seconds: p
            .seconds
            .iter()
            .map(|(&second, &[to_server, from_server])| SecondRow {
                second,
                to_server,
                from_server,
            })
            .collect(),
        not_decoded,
        largest_datagram: p.largest.map(|(frame, bytes)| Largest { frame, bytes }),
        stacks,
        pending: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::bits_for;

    #[test]
    fn bits_for_counts_the_width_of_a_span() {
        assert_eq!(
            [0, 1, 2, 255, 256].map(bits_for),
            [0, 1, 2, 8, 9],
            "a constant needs no bits, 0..=256 nine"
        );
    }
}
