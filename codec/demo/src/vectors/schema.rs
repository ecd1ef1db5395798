//! The conformance vectors through the schema interpreter: each vector's ops become an ad-hoc
//! schema (one struct, field `opN` per op, framed when the vector is a packet), run through
//! every stream and compared with the compiled runner's trace.

use crate::vectors::compiled::{
    Expect, Op, Vector, blank, drive, expected_after_read, measure_starts,
};
use bitlens_codec::fixed::Fixed;
use bitlens_codec::measure::MeasureStream;
use bitlens_codec::quantize::CompressedFloat;
use bitlens_codec::read::{ReadStream, TraceStream};
use bitlens_codec::stream::Stream;
use bitlens_codec::write::{CountStream, WriteStream};
use bitlens_schema::{DynStruct, DynValue, Schema};
use std::fmt::Write as _;

/// A resolution that rebuilds exactly `spec` (the vector's own is not kept once parsed).
fn resolution(spec: &CompressedFloat) -> Result<f32, String> {
    let delta = spec.max() - spec.min();
    let mut r = delta / spec.steps() as f32;
    for _ in 0..64 {
        match CompressedFloat::new(spec.min(), spec.max(), r) {
            Ok(c) if c == *spec => return Ok(r),
            Ok(c) if c.steps() > spec.steps() => r = f32::from_bits(r.to_bits() + 1),
            Ok(_) => r = f32::from_bits(r.to_bits() - 1),
            Err(e) => return Err(e),
        }
    }
    Err(format!("no resolution rebuilds {spec:?}"))
}

fn quote(s: &str) -> String {
    // A JSON string is a valid TOML basic string.
    serde_json::to_string(s).unwrap_or_default()
}

/// The ad-hoc schema of a vector (its TOML text) and the value its ops hold.
///
/// # Errors
/// An op no schema field can express.
pub fn schema_text(v: &Vector) -> Result<(String, DynValue), String> {
    let mut fields = String::new();
    let mut values = Vec::new();
    for (i, op) in v.ops.iter().enumerate() {
        let name = format!("op{i}");
        let (decl, value) = match op {
            Op::Bits { n, value } => (
                format!("type = \"bits\", bits = {n}"),
                Some(DynValue::U64(*value)),
            ),
            Op::Bool(b) => ("type = \"bool\"".into(), Some(DynValue::Bool(*b))),
            Op::Int { min, max, value } => (
                format!("type = \"int\", min = {min}, max = {max}"),
                Some(DynValue::Int(*value)),
            ),
            Op::U64(x) => ("type = \"u64\"".into(), Some(DynValue::U64(*x))),
            Op::Float(b) => (
                "type = \"f32\"".into(),
                Some(DynValue::F32(f32::from_bits(*b))),
            ),
            Op::Double(b) => (
                "type = \"f64\"".into(),
                Some(DynValue::F64(f64::from_bits(*b))),
            ),
            Op::CompressedFloat { spec, value, .. } => (
                format!(
                    "type = \"compressed_float\", min = {:?}, max = {:?}, resolution = {:?}",
                    spec.min(),
                    spec.max(),
                    resolution(spec)?
                ),
                Some(DynValue::F32(f32::from_bits(*value))),
            ),
            Op::Align => ("type = \"align\"".into(), None),
            Op::Bytes(b) => (
                format!("type = \"bytes\", len = {}", b.len()),
                Some(DynValue::Bytes(b.clone())),
            ),
            Op::Str { max_len, value } => (
                format!("type = \"string\", max_len = {max_len}"),
                Some(DynValue::Str(value.clone())),
            ),
            Op::ObjectIndex {
                max_objects,
                previous,
                value,
            } => (
                format!(
                    "type = \"object_index\", max_objects = {max_objects}, previous = {previous}"
                ),
                Some(DynValue::Int(*value)),
            ),
            Op::IntRelative { previous, value } => (
                format!("type = \"int_relative\", previous = {previous}"),
                Some(DynValue::Int(*value)),
            ),
            Op::Check(label) => {
                let _ = writeln!(
                    fields,
                    "  {{ type = \"check\", label = {} }},",
                    quote(label)
                );
                continue;
            }
            Op::End => ("type = \"end\"".into(), None),
            Op::Quaternion { spec, value, .. } => (
                format!("type = \"quaternion\", bits = {}", spec.bits()),
                Some(DynValue::Quat(value.map(f32::from_bits))),
            ),
            Op::Int128 { min, max, value } => (
                format!("type = \"int128\", min = \"{min}\", max = \"{max}\""),
                Some(DynValue::I128(*value)),
            ),
            Op::U128(x) => ("type = \"u128\"".into(), Some(DynValue::U128(*x))),
            Op::Fixed { spec, raw, .. } => (
                format!(
                    "type = \"fixed\", integer_bits = {}, fraction_bits = {}, min = {}, max = {}, unsigned = {}",
                    spec.integer_bits(),
                    spec.fraction_bits(),
                    spec.min(),
                    spec.max(),
                    !spec.signed()
                ),
                Some(DynValue::Fixed(Fixed::new(*raw, spec.fraction_bits()))),
            ),
            Op::WStr { max_len, value } => (
                format!("type = \"wstring\", max_len = {max_len}"),
                Some(DynValue::Str(value.clone())),
            ),
            Op::CompressedFloatPrecomputed { spec, value, .. } => {
                let p = spec.params();
                (
                    format!(
                        "type = \"compressed_float\", min = {:?}, delta = {:?}, max_integer_value = {}, bits = {}",
                        spec.min(),
                        p.delta,
                        p.max_integer_value,
                        p.bits
                    ),
                    Some(DynValue::F32(f32::from_bits(*value))),
                )
            }
        };
        let _ = writeln!(fields, "  {{ name = \"{name}\", {decl} }},");
        if let Some(value) = value {
            values.push((name, value));
        }
    }
    let mut text = String::new();
    let (id, id_bits, types) = match &v.packet {
        Some(p) => (
            p.protocol.id.value(),
            match p.protocol.id {
                bitlens_codec::packet::ProtocolId::U32(_) => 32,
                bitlens_codec::packet::ProtocolId::U64(_) => 64,
            },
            p.protocol.type_count(),
        ),
        None => (0, 32, 1),
    };
    let _ = writeln!(
        text,
        "[protocol]\nname = \"vector\"\nid = {}\nid_bits = {id_bits}\nmtu = {}\npackets = [",
        id as i64,
        i64::MAX
    );
    // Without framing, V is not a packet body (where `end` is refused): a placeholder is.
    let body = if v.packet.is_some() { "V" } else { "Unframed" };
    for t in 0..types {
        // Named as the compiled runner names them (compiled.rs): a name is an identifier.
        let _ = writeln!(text, "  {{ name = \"T{t}\", body = \"{body}\" }},");
    }
    let _ = writeln!(text, "]\n\n[struct.V]\nfields = [\n{fields}]");
    if v.packet.is_none() {
        let _ = writeln!(
            text,
            "\n[struct.Unframed]\nfields = [{{ name = \"x\", type = \"bool\" }}]"
        );
    }
    Ok((text, DynValue::Struct(DynStruct::new(values))))
}

/// Runs `ops`' schema on any stream: framed when the vector is a packet.
fn run_on<S: Stream>(
    schema: &Schema,
    s: &mut S,
    v: &Vector,
    value: &DynValue,
    packet_type: u32,
) -> bitlens_codec::Result<(u32, DynValue)> {
    match &v.packet {
        Some(_) => {
            let mut t = packet_type;
            let mut seen = None;
            let out = schema.framed(s, &mut t, value, &mut seen)?;
            Ok((t, out))
        }
        None => Ok((0, schema.serialize_struct(s, "V", value)?)),
    }
}

/// The compiled runner's trace of the vector's bytes, to compare with the interpreter's.
fn compiled_trace(v: &Vector) -> bitlens_codec::trace::Trace {
    let mut ops = blank(&v.ops);
    let mut s = TraceStream::new(&v.bytes);
    let mut t = 0;
    let r = match &v.packet {
        Some(p) => {
            bitlens_codec::packet::frame(&mut s, &p.protocol, &mut t, |s, _| drive(s, &mut ops))
        }
        None => drive(&mut s, &mut ops),
    };
    s.into_trace(r)
}

fn describe(e: &bitlens_codec::Error) -> String {
    format!("{} ({e})", e.kind().name())
}

/// The write side of a valid vector through the schema: bytes and bits written, the exact
/// count, and the measure (its given value, and at least the bits written from every start).
fn check_write(
    schema: &Schema,
    v: &Vector,
    value: &DynValue,
    t: u32,
    bits: usize,
) -> Result<(), String> {
    let mut buf = vec![0u8; v.bytes.len() + 64];
    let mut w = WriteStream::new(&mut buf);
    run_on(schema, &mut w, v, value, t).map_err(|e| format!("write failed: {}", describe(&e)))?;
    let written = w.bits_written();
    let n = w.finish();
    if written != bits || buf[..n] != v.bytes[..] {
        return Err(format!(
            "wrote {written} bits {}, expected {bits} bits {}",
            hex::encode(&buf[..n]),
            hex::encode(&v.bytes)
        ));
    }
    let mut c = CountStream::new();
    run_on(schema, &mut c, v, value, t).map_err(|e| format!("count failed: {}", describe(&e)))?;
    if c.bits() != bits {
        return Err(format!("counted {} bits, expected {bits}", c.bits()));
    }
    let mut m = MeasureStream::new();
    run_on(schema, &mut m, v, value, t).map_err(|e| format!("measure failed: {}", describe(&e)))?;
    if let Some(want) = v.measure
        && m.bits() != want
    {
        return Err(format!(
            "measured {} bits, the vector says {want}",
            m.bits()
        ));
    }
    for start in measure_starts(v) {
        let mut buf = vec![0u8; v.bytes.len() + 72];
        let mut w = WriteStream::new(&mut buf);
        if start > 0 {
            w.bits("start", &mut 0, start)
                .map_err(|e| format!("write failed: {}", describe(&e)))?;
        }
        run_on(schema, &mut w, v, value, t)
            .map_err(|e| format!("write from bit {start} failed: {}", describe(&e)))?;
        let written = w.bits_written() - start as usize;
        if m.bits() < written {
            return Err(format!(
                "measured {} bits, but {written} written from bit {start}",
                m.bits()
            ));
        }
    }
    Ok(())
}

/// Runs one vector through the schema interpreter: the same checks as the compiled runner,
/// and the same trace as the compiled ops give.
///
/// # Errors
/// What differed, in one line.
pub fn run_vector(v: &Vector) -> Result<(), String> {
    let (text, value) = schema_text(v)?;
    let schema = Schema::from_toml(&text, &v.name).map_err(|e| format!("ad-hoc schema: {e}"))?;
    let t = v.packet.as_ref().and_then(|p| p.packet_type).unwrap_or(0);

    let mut ts = TraceStream::new(&v.bytes);
    let r = run_on(&schema, &mut ts, v, &DynValue::Null, 0);
    let read_ok = r.as_ref().map(|_| ()).map_err(Clone::clone);
    let trace = ts.into_trace(read_ok);
    if trace != compiled_trace(v) {
        return Err("trace differs from the compiled ops' trace".into());
    }
    let read = run_on(
        &schema,
        &mut ReadStream::new(&v.bytes),
        v,
        &DynValue::Null,
        0,
    );
    if read.as_ref().err() != trace.error.as_ref() {
        return Err(format!("read and trace disagree: {read:?}"));
    }
    match &v.expect {
        Expect::Reject(kind) => match read {
            Ok(_) => Err(format!("read accepted the bytes, expected {kind}")),
            Err(e) if e.kind().name() == kind => Ok(()),
            Err(e) => Err(format!("error kind: expected {kind}, got {}", describe(&e))),
        },
        Expect::Bits(bits) => {
            if v.write {
                check_write(&schema, v, &value, t, *bits)?;
            }
            let (t2, got) = read.map_err(|e| format!("read failed: {}", describe(&e)))?;
            let (_, want) = schema_text(&Vector {
                ops: expected_after_read(&v.ops),
                ..v.clone()
            })?;
            if got != want {
                return Err(format!("read {got}, expected {want}"));
            }
            if trace.bits_read != *bits {
                return Err(format!("read {} bits, expected {bits}", trace.bits_read));
            }
            if v.packet.is_some() && t2 != t {
                return Err(format!("packet type: read {t2}, expected {t}"));
            }
            Ok(())
        }
    }
}
