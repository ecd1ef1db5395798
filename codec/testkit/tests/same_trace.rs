//! `assert_same_trace` (the trace comparison of the `schema_vs_compiled` and `derive_vs_schema`
//! fuzz targets) compares views of the entries (issue 30, fifth pass): it must still find a
//! difference in any part of an entry, with the message it gave when it compared owned fields.

use bitlens_codec::packet::trace_packet;
use bitlens_codec::trace::{Entries, FieldKind, Trace, TraceField, Value};
use bitlens_testkit::demo::DemoPacket;
use bitlens_testkit::fuzzing::sample_packets;
use bitlens_testkit::fuzzing::schema::assert_same_trace;

/// The trace of every demo sample packet.
fn traces() -> Vec<Trace> {
    sample_packets()
        .iter()
        .map(|(_, bytes)| trace_packet::<DemoPacket>(bytes).1)
        .collect()
}

/// `trace` with its entries rebuilt by hand from their owned form, changed by `change` at
/// entry `i` (hand-made entries keep their full paths: nothing is shared with the original).
fn changed(trace: &Trace, i: usize, change: impl Fn(&mut TraceField)) -> Trace {
    let mut fields: Vec<TraceField> = trace.fields.to_vec();
    change(&mut fields[i]);
    Trace {
        fields: Entries::from(fields),
        error: trace.error.clone(),
        bits_read: trace.bits_read,
        total_bits: trace.total_bits,
    }
}

/// The panic message of `assert_same_trace(a, b)`, if it panics.
fn failure(a: &Trace, b: &Trace) -> Option<String> {
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| assert_same_trace(a, b)));
    r.err().map(|e| match e.downcast::<String>() {
        Ok(s) => *s,
        Err(e) => e
            .downcast::<&str>()
            .map(|s| s.to_string())
            .unwrap_or_default(),
    })
}

#[test]
fn equal_traces_compare_equal_also_rebuilt_by_hand() {
    for t in traces() {
        assert_same_trace(&t, &t);
        let rebuilt = changed(&t, 0, |_| {});
        assert_same_trace(&t, &rebuilt);
        assert_same_trace(&rebuilt, &t);
    }
}

#[test]
fn a_difference_in_any_part_of_an_entry_fails_naming_the_entry() {
    type Change = (&'static str, fn(&mut TraceField) -> bool);
    let changes: &[Change] = &[
        ("value", |f| match f.value {
            Value::Int(v) => {
                f.value = Value::Int(v + 1);
                true
            }
            _ => false,
        }),
        ("value kind", |f| match f.value {
            Value::Int(v) if v >= 0 => {
                f.value = Value::U128(v as u128);
                true
            }
            _ => false,
        }),
        ("float sign", |f| match f.value {
            Value::F32(x) => {
                f.value = Value::F32(-x);
                true
            }
            _ => false,
        }),
        ("range", |f| match f.range {
            Some((lo, hi)) => {
                f.range = Some((lo, hi + 1));
                true
            }
            None => false,
        }),
        ("no range", |f| f.range.take().is_some()),
        ("raw code", |f| match f.raw {
            Some(r) => {
                f.raw = Some(r ^ 1);
                true
            }
            None => {
                f.raw = Some(0);
                true
            }
        }),
        ("name", |f| {
            let mut g = TraceField::new(
                &format!("{}x", f.path()),
                f.depth,
                f.bit,
                f.bits,
                f.value.clone(),
                f.kind.clone(),
            );
            (g.raw, g.range, g.failed) = (f.raw, f.range, f.failed);
            *f = g;
            true
        }),
        ("bit", |f| {
            f.bit += 1;
            true
        }),
        ("width", |f| {
            f.bits += 1;
            true
        }),
        ("depth", |f| {
            f.depth += 1;
            true
        }),
        ("failed", |f| {
            f.failed = !f.failed;
            true
        }),
        ("kind", |f| {
            f.kind = match f.kind {
                FieldKind::Scope => FieldKind::Value,
                _ => FieldKind::Scope,
            };
            true
        }),
        ("check bits", |f| match &mut f.kind {
            FieldKind::Check { found, .. } => {
                *found ^= 1;
                true
            }
            _ => false,
        }),
    ];
    let traces = traces();
    // The expected panics, quietly (each is checked below).
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    for (what, change) in changes {
        let mut found = 0;
        for t in &traces {
            for i in 0..t.fields.len() {
                if found == 40 {
                    break;
                }
                let mut probe = t.fields[i].clone();
                if !change(&mut probe) {
                    continue;
                }
                let other = changed(t, i, |f| {
                    change(f);
                });
                let message = failure(t, &other)
                    .unwrap_or_else(|| panic!("a changed {what} at entry {i} compares equal"));
                assert!(
                    message.contains(&format!("trace field {i} differs")),
                    "{what}: {message}"
                );
                found += 1;
            }
        }
        assert!(found > 0, "no entry of the samples has a {what} to change");
    }
    std::panic::set_hook(hook);
}
