//! Fuzz harnesses for your own packet set: what bitlens's own fuzz targets check for its demo
//! protocol, generic over any [`Packet`] (feature `arbitrary`).
//!
//! Each harness is a plain function of the fuzz input that panics (a finding) when a property
//! breaks, so a cargo-fuzz target is one line, and the stable replay of the corpus in `cargo
//! test` ([`replay_corpus`]) runs exactly the same code on exactly the same bytes:
//!
//! ```ignore
//! // fuzz/fuzz_targets/packet_read.rs
//! #![no_main]
//! bitlens_fuzz_guard::guard_allocator!();
//! libfuzzer_sys::fuzz_target!(|data: &[u8]| bitlens_fuzz_guard::bounded(data, bitlens_codec::fuzzing::packet_read::<my_game::Packet>));
//! ```
//!
//! `bitlens fuzz-init` writes that crate (targets [`packet_read`], [`packet_roundtrip`] and
//! [`hostile_lengths`]) and the replay test for you; `bitlens seeds CAPTURE --port P DIR` turns
//! a capture's datagrams into a seed corpus. `bitlens-fuzz-guard` is the global allocator that
//! turns an allocation past its limits into a finding.
//!
//! # What is checked
//!
//! | harness | input | property |
//! |---|---|---|
//! | [`packet_read`] | raw bytes, then the same bytes with their CRC made valid | no panic; an accepted packet re-encodes to the identical bytes (or differs only where serialize 1.0 lets a writer send what writes back otherwise: [`assert_reencodes`]); the trace stream gives the same verdict, error and values; an error's bit lies within the data |
//! | [`packet_roundtrip`] | an `Arbitrary` packet | it counts exactly the bits it writes and measures at least them (the standard's measure is a bound), reads back equal, traces the same values and bits; over the MTU it is a `buffer_full` write error, nothing else |
//! | [`hostile_lengths`] | an `Arbitrary` packet, written, with one count, length or type field overwritten (CRC fixed) | the read fails with `out_of_range` or `past_end` naming that field |
//!
//! Random bytes almost never carry a valid CRC, so [`packet_read`] reads each input a second
//! time with its CRC recomputed ([`with_valid_crc`]): without it the fuzzer rarely gets past the
//! framing to your serialize functions.
//!
//! # What your types need
//!
//! `P: Packet + Default + Clone + PartialEq + Debug` for the read harness, and `Arbitrary` for
//! the other two. Your `Arbitrary` impl must respect the ranges your `serialize` declares
//! (strings within their `max_len` and without a NUL, compressed floats on a code: `spec.decode(code)`, counts
//! within their maximum): any write error other than `buffer_full` over the MTU is a finding,
//! because either the generator or the serialize function disagrees with the wire rules.
//!
//! Each property is stated through one function ([`assert_reencodes`], [`assert_measure`],
//! [`assert_count`], [`assert_round_trip`]), so the harnesses and your own tests check it the same way.
//!
//! # Example
//!
//! The harnesses are plain functions: a unit test can run them on chosen inputs too.
//!
//! ```
//! use bitlens_codec::{BitPacked, PacketSet, fuzzing};
//!
//! #[derive(BitPacked, Debug, Clone, Default, PartialEq, arbitrary::Arbitrary)]
//! struct Ping {
//!     sequence: u16,
//! }
//!
//! #[derive(PacketSet, Debug, Clone, PartialEq, arbitrary::Arbitrary)]
//! #[bitlens(protocol = "ping", id = 7, mtu = 64)]
//! enum Game {
//!     Ping(Ping),
//! }
//!
//! impl Default for Game {
//!     fn default() -> Self {
//!         Game::Ping(Ping::default())
//!     }
//! }
//!
//! fuzzing::round_trip(Game::Ping(Ping { sequence: 9 }));
//! for input in [&b""[..], b"\x01\x02\x03\x04\x05\x06", b"anything at all"] {
//!     fuzzing::packet_read::<Game>(input);
//!     fuzzing::packet_roundtrip::<Game>(input);
//!     fuzzing::hostile_lengths::<Game>(input);
//! }
//! ```

use crate::error::ErrorKind;
use crate::packet::{
    Packet, Protocol, count_packet, measure_packet, packet_crc, read_packet, serialize_packet,
    trace_packet, write_packet,
};
use crate::quantize::SmallestThree;
use crate::trace::{FieldKind, Trace, TraceField, Value};
use crate::write::WriteStream;
use arbitrary::{Arbitrary, Unstructured};
use std::fmt::Debug;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

/// A quaternion of a trace that does not write back as it was read: a near tie a seed-style
/// writer sends and readers accept ([`SmallestThree::reencodes`]).
#[derive(Debug, Clone)]
pub struct NearTie {
    /// The quaternion's path.
    pub path: String,
    /// Its smallest-three form, from the width of its components.
    pub spec: SmallestThree,
    /// The value read.
    pub value: [f32; 4],
}

/// The near-tie quaternions of `trace`, whatever their widths: a scope holding `largest` (0..=3)
/// then `a`, `b`, `c` of one width, whose codes do not write back as themselves.
pub fn near_ties(trace: &Trace) -> Vec<NearTie> {
    let int = |f: &TraceField| match f.value {
        Value::Int(v) => u32::try_from(v).ok(),
        _ => None,
    };
    let mut ties = Vec::new();
    for w in trace.fields.windows(5) {
        let [scope, l, a, b, c] = w else { continue };
        let Some(path) = l.path().strip_suffix(".largest") else {
            continue;
        };
        let parts = [(a, ".a"), (b, ".b"), (c, ".c")];
        if scope.path() != path
            || l.range != Some((0, 3))
            || !parts
                .iter()
                .all(|(f, end)| f.path().strip_suffix(end) == Some(path) && f.bits == a.bits)
        {
            continue;
        }
        let Ok(spec) = SmallestThree::new(a.bits as u32) else {
            continue;
        };
        let (Some(largest), Some(x), Some(y), Some(z)) = (int(l), int(a), int(b), int(c)) else {
            continue;
        };
        let Value::Floats(q) = &scope.value else {
            continue;
        };
        if let (Ok(value), false) = (
            <[f32; 4]>::try_from(q.as_slice()),
            spec.reencodes(largest, [x, y, z]),
        ) {
            ties.push(NearTie {
                path: path.to_string(),
                spec,
                value,
            });
        }
    }
    ties
}

/// The relative integers of `trace` sent in the absolute (32-bit) tier: the paths of their
/// scopes. A reader takes a small difference sent there too, which writes back in its own tier.
pub fn absolute_relatives(trace: &Trace) -> Vec<&str> {
    trace
        .fields
        .windows(2)
        .filter_map(|w| {
            let scope = w[1].path().strip_suffix(".value")?;
            (w[0].path().strip_suffix(".d<=69914") == Some(scope)).then_some(scope)
        })
        .collect()
}

/// The property "every packet a reader accepts re-encodes to the identical bytes", as far as
/// serialize 1.0 promises it: `accepted` (traced as `trace`) written back is `reencoded`. Where
/// they differ, the packet must hold what the standard lets a conforming writer send and a
/// reader take that writes back otherwise (a near-tie quaternion, [`near_ties`], or a relative
/// integer in the absolute tier, [`absolute_relatives`]); the writer's bytes must read, and
/// written once more they may differ again only where such a field explains it. Compressed
/// floats must be on stable ranges (the derive warns at compile time about the others, a schema
/// when it loads).
///
/// # Panics
/// When the bytes differ without such a field, or the writer's own bytes do not read.
pub fn assert_reencodes<P>(accepted: &[u8], reencoded: &[u8], trace: &Trace)
where
    P: Packet + Default + Clone + PartialEq + Debug,
{
    if reencoded == accepted {
        return;
    }
    assert!(
        !near_ties(trace).is_empty() || !absolute_relatives(trace).is_empty(),
        "an accepted packet re-encodes to other bytes, and no near-tie quaternion or \
         absolute-tier relative integer explains it"
    );
    // The writer's own bytes are read back; writing them once more may move only where such a
    // field explains it again (a quantized near tie can be a near tie itself: found by
    // packet_read, corpus/packet_read/regress_reencoding_settles.bin).
    let mut back = read_packet::<P>(reencoded)
        .unwrap_or_else(|e| panic!("the re-encoded packet does not read: {e}"));
    let (_, again) = trace_packet::<P>(reencoded);
    let mut buf = vec![0u8; P::protocol().mtu];
    let n = write_packet(&mut back, &mut buf).expect("a read packet writes");
    assert!(
        &buf[..n] == reencoded
            || !near_ties(&again).is_empty()
            || !absolute_relatives(&again).is_empty(),
        "the writer's own bytes re-encode to other bytes, and no near-tie quaternion or \
         absolute-tier relative integer explains it"
    );
}

/// The property "measure is a bound": serialize 1.0's measure stream counts at least the bits
/// the write stream writes (7 bits for every `align`, whatever the position); the count stream
/// ([`count_packet`]) counts them exactly.
///
/// # Panics
/// When the measure is below the bits written.
pub fn assert_measure(measured_bits: usize, written_bits: usize) {
    assert!(
        measured_bits >= written_bits,
        "measure {measured_bits} < {written_bits} bits written"
    );
}

/// The property "count == bits written": the count stream counts exactly what the write stream
/// writes.
///
/// # Panics
/// When the two differ.
pub fn assert_count(counted_bits: usize, written_bits: usize) {
    assert_eq!(counted_bits, written_bits, "count != bits written");
}

/// The property "read(write(x)) == x".
///
/// # Panics
/// When `back` differs from `sent`.
pub fn assert_round_trip<P: PartialEq + Debug>(sent: &P, back: &P) {
    assert_eq!(back, sent, "read(write(x)) != x");
}

/// `data` with its first 4 bytes replaced by the CRC that `protocol` expects; `None` when `data`
/// is shorter than a CRC or already carries the right one.
pub fn with_valid_crc(protocol: &Protocol, data: &[u8]) -> Option<Vec<u8>> {
    if data.len() < 4 {
        return None;
    }
    let mut fixed = data.to_vec();
    let crc = packet_crc(protocol.id, &fixed);
    fixed[..4].copy_from_slice(&crc.to_le_bytes());
    (fixed != data).then_some(fixed)
}

/// Fuzz target `packet_read`: raw bytes read as a `P` never panic; an accepted packet re-encodes
/// to the identical bytes; the trace stream reaches the same verdict, error and values. The same
/// holds for the bytes with their CRC made valid ([`with_valid_crc`]).
///
/// # Panics
/// When a property breaks (a finding).
pub fn packet_read<P>(data: &[u8])
where
    P: Packet + Default + Clone + PartialEq + Debug,
{
    check_read::<P>(data);
    if let Some(fixed) = with_valid_crc(P::protocol(), data) {
        check_read::<P>(&fixed);
    }
}

/// One read of [`packet_read`].
fn check_read<P>(data: &[u8])
where
    P: Packet + Default + Clone + PartialEq + Debug,
{
    let read = read_packet::<P>(data);
    let (traced, trace) = trace_packet::<P>(data);
    match &read {
        Ok(p) => {
            assert_eq!(traced.as_ref(), Some(p), "trace read other values");
            assert!(trace.error.is_none(), "trace failed where read succeeded");
            let mut p = p.clone();
            let mut buf = vec![0u8; P::protocol().mtu];
            let n = write_packet(&mut p, &mut buf).expect("an accepted packet re-encodes");
            assert_reencodes::<P>(data, &buf[..n], &trace);
        }
        Err(e) => {
            assert!(traced.is_none(), "trace accepted what read refused");
            assert_eq!(
                trace.error.as_ref(),
                Some(e),
                "trace and read disagree on the error"
            );
            assert!(e.bit() <= data.len() * 8, "error bit past the data: {e}");
        }
    }
}

/// Fuzz target `packet_roundtrip`: an arbitrary `P` (within its declared ranges) measures
/// exactly the bits it writes, reads back equal, and traces the same values and bits; a packet
/// over the MTU is a `buffer_full` write error, never a truncated packet.
///
/// # Panics
/// When a property breaks, or when an arbitrary packet fails to write for another reason than
/// the MTU (the generator produced a value the serialize function refuses).
pub fn packet_roundtrip<P>(data: &[u8])
where
    P: Packet + Default + Clone + PartialEq + Debug + for<'a> Arbitrary<'a>,
{
    let mut u = Unstructured::new(data);
    let Ok(packet) = P::arbitrary(&mut u) else {
        return;
    };
    round_trip(packet);
}

/// The round trip of [`packet_roundtrip`] for one packet (for your own property tests).
///
/// # Panics
/// As [`packet_roundtrip`].
pub fn round_trip<P>(mut packet: P)
where
    P: Packet + Default + Clone + PartialEq + Debug,
{
    let mtu = P::protocol().mtu;
    let bits = count_packet(&mut packet)
        .unwrap_or_else(|e| panic!("an arbitrary packet does not count: {e}: {packet:?}"));
    let bound = measure_packet(&mut packet)
        .unwrap_or_else(|e| panic!("an arbitrary packet does not measure: {e}: {packet:?}"));
    assert_measure(bound, bits);
    let mut buf = vec![0u8; mtu];
    let mut w = WriteStream::new(&mut buf);
    let written = serialize_packet(&mut w, &mut packet).map(|()| w.bits_written());
    let n = w.finish();
    match written {
        Ok(written) => {
            assert_count(bits, written);
            let back = read_packet::<P>(&buf[..n]).expect("a written packet reads");
            assert_round_trip(&packet, &back);
            let (traced, trace) = trace_packet::<P>(&buf[..n]);
            assert_eq!(traced.as_ref(), Some(&packet), "trace read other values");
            assert_eq!(
                trace.bits_read, written,
                "trace read other bits than written"
            );
        }
        Err(e) => {
            assert!(
                bits > mtu * 8,
                "an arbitrary packet of {bits} bits failed to write under the {mtu}-byte MTU: \
                 {e}: {packet:?}"
            );
            assert!(matches!(e.kind(), ErrorKind::BufferFull { .. }), "{e}");
        }
    }
}

/// A valid packet made hostile: one count, length or type field overwritten, the CRC fixed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hostile {
    /// Trace path of the overwritten field (`mice.len`, `packet_type`, ...).
    pub path: String,
    /// The raw value written into the field's bits.
    pub raw: u64,
    /// The whole packet, its CRC recomputed so that it cannot hide the damage.
    pub bytes: Vec<u8>,
}

/// Every hostile variant of the valid packet `valid`, for each count, length (trace paths
/// ending in `.len`) or type field: the field overwritten by the largest value its width holds
/// when that is out of range, or else by its largest count when even one bit per element (a
/// byte for a string) would not fit in the bits that follow it; the CRC fixed.
pub fn hostile_variants<P: Packet + Default>(valid: &[u8]) -> Vec<Hostile> {
    hostile_variants_with::<P>(valid, |_| 1)
}

/// [`hostile_variants`], with the fewest bits an element of each count's array takes
/// (`min_element_bits(path)`, for example 32 for an array of `i32`): more in-range counts are
/// then known to claim more than the bits that follow.
pub fn hostile_variants_with<P: Packet + Default>(
    valid: &[u8],
    min_element_bits: impl Fn(&str) -> usize,
) -> Vec<Hostile> {
    let (_, trace) = trace_packet::<P>(valid);
    let mut out = Vec::new();
    let attacked = trace.fields.iter().filter(|f| {
        f.kind == FieldKind::Value
            && f.bits > 0
            && (f.path().ends_with(".len") || f.path() == "packet_type")
    });
    for f in attacked {
        let Some((min, max)) = f.range else { continue };
        let span = u64::try_from(max.abs_diff(min)).unwrap_or(u64::MAX);
        let all_ones = if f.bits >= 64 {
            u64::MAX
        } else {
            (1u64 << f.bits) - 1
        };
        let raw = if all_ones > span {
            // The width holds an out-of-range value: send the largest one.
            all_ones
        } else {
            // Every value fits the range: claim the largest count, kept only when it must
            // exceed the bits that remain.
            let after = trace.total_bits - (f.bit + f.bits);
            // A string's length counts bytes.
            let string = f
                .path()
                .strip_suffix(".len")
                .is_some_and(|s| trace.get(&format!("{s}.utf8")).is_some());
            let element_bits = min_element_bits(f.path()).max(if string { 8 } else { 1 });
            let claimed =
                usize::try_from(span).map_or(usize::MAX, |s| s.saturating_mul(element_bits));
            if claimed <= after || f.path() == "packet_type" {
                continue;
            }
            span
        };
        let mut bytes = valid.to_vec();
        set_bits(&mut bytes, f.bit, f.bits, raw);
        let crc = packet_crc(P::protocol().id, &bytes);
        bytes[..4].copy_from_slice(&crc.to_le_bytes());
        out.push(Hostile {
            path: f.path().to_string(),
            raw,
            bytes,
        });
    }
    out
}

/// Writes the low `width` bits of `value` at bit `bit` of `data` (LSB first, as the bit packer).
fn set_bits(data: &mut [u8], bit: usize, width: usize, value: u64) {
    for k in 0..width {
        let b = bit + k;
        if let Some(byte) = data.get_mut(b / 8) {
            let mask = 1u8 << (b % 8);
            if (value >> k) & 1 == 1 {
                *byte |= mask;
            } else {
                *byte &= !mask;
            }
        }
    }
}

/// The hostile packet that [`hostile_lengths`] builds from `data`, if any: an arbitrary `P`,
/// written, and one of its [`hostile_variants`] chosen by the rest of the input.
pub fn hostile_case<P>(data: &[u8]) -> Option<Hostile>
where
    P: Packet + Default + for<'a> Arbitrary<'a>,
{
    hostile_case_with::<P>(data, |_| 1)
}

/// [`hostile_case`] over [`hostile_variants_with`].
pub fn hostile_case_with<P>(
    data: &[u8],
    min_element_bits: impl Fn(&str) -> usize,
) -> Option<Hostile>
where
    P: Packet + Default + for<'a> Arbitrary<'a>,
{
    let mut u = Unstructured::new(data);
    let mut packet = P::arbitrary(&mut u).ok()?;
    let mut buf = vec![0u8; P::protocol().mtu];
    let n = write_packet(&mut packet, &mut buf).ok()?;
    let mut variants = hostile_variants_with::<P>(&buf[..n], min_element_bits);
    if variants.is_empty() {
        return None;
    }
    let pick = u.choose_index(variants.len()).ok()?;
    Some(variants.swap_remove(pick))
}

/// Fuzz target `hostile_lengths`: a valid packet with one count, length or type field made
/// hostile ([`hostile_case`]) fails to read with `out_of_range` or `past_end` at that field
/// ([`assert_hostile_refused`]): a count is checked against its range and against the bits
/// that remain before anything is sized by it.
///
/// # Panics
/// When a hostile packet reads, or fails with another error or at another field.
pub fn hostile_lengths<P>(data: &[u8])
where
    P: Packet + Default + Debug + for<'a> Arbitrary<'a>,
{
    if let Some(h) = hostile_case::<P>(data) {
        assert_hostile_refused::<P>(&h);
    }
}

/// The property of [`hostile_lengths`] for one hostile packet.
///
/// # Panics
/// When `h` reads, or fails with another error than `out_of_range` / `past_end` at `h.path`
/// (a string's `past_end` names its bytes, `name.utf8`, for an overwritten `name.len`).
pub fn assert_hostile_refused<P: Packet + Default + Debug>(h: &Hostile) {
    let err = match read_packet::<P>(&h.bytes) {
        Ok(p) => panic!("hostile {} = {} was accepted: {p:?}", h.path, h.raw),
        Err(e) => e,
    };
    assert!(
        matches!(
            err.kind(),
            ErrorKind::OutOfRange { .. } | ErrorKind::PastEnd { .. }
        ),
        "hostile {} = {} gave {err}",
        h.path,
        h.raw
    );
    // A string's length is checked against what remains by its bytes field, before they are
    // sized: `name.len` claiming too much is refused as past_end at `name.utf8`.
    let string_bytes = h
        .path
        .strip_suffix(".len")
        .is_some_and(|s| err.field().strip_suffix(".utf8") == Some(s))
        && matches!(err.kind(), ErrorKind::PastEnd { .. });
    assert!(
        err.field() == h.path || string_bytes,
        "hostile {} = {} was refused at another field: {err}",
        h.path,
        h.raw
    );
}

/// Runs every file of the corpus folder `dir` through `harness`, as the fuzz target would, and
/// returns how many ran: the stable replay of a fuzz corpus in `cargo test`.
///
/// # Panics
/// When `dir` is missing or empty, or naming every file whose run panicked.
pub fn replay_corpus(dir: &Path, harness: impl Fn(&[u8])) -> usize {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("corpus folder {}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(
        !files.is_empty(),
        "corpus folder {} is empty",
        dir.display()
    );
    let mut failed = Vec::new();
    for file in &files {
        let data = std::fs::read(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        if catch_unwind(AssertUnwindSafe(|| harness(&data))).is_err() {
            failed.push(file.display().to_string());
        }
    }
    assert!(
        failed.is_empty(),
        "{} of {} corpus files failed (reproduce: cargo fuzz run TARGET FILE):\n{}",
        failed.len(),
        files.len(),
        failed.join("\n")
    );
    files.len()
}
