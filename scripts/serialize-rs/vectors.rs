//! (Run by scripts/serialize-rs/run.sh.)
//! Runs bitlens-vectors/1 files through serialize.rs (the peer): for every vector whose ops the
//! peer has, the peer writes the same bytes, reads the same values, measures what the vector
//! says, and refuses every reject vector. Prints one line per vector that does not pass and a
//! summary. Usage: peer-vectors FILE...

use serde_json::Value;
use serialize::{MeasureStream, ReadStream, Stream, WriteStream};

fn u(v: &Value) -> u64 {
    match v {
        Value::Number(n) => n.as_u64().unwrap(),
        Value::String(s) => u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap(),
        _ => panic!("{v}"),
    }
}
fn i(v: &Value) -> i64 {
    match v {
        Value::Number(n) => n.as_i64().unwrap(),
        _ => u(v) as i64,
    }
}
fn f(v: &Value) -> f32 {
    v.to_string().trim_matches('"').parse::<f32>().unwrap()
}

/// One op as the peer sees it; values are filled in on read.
#[derive(Debug, Clone, PartialEq)]
enum Op {
    Bits(u32, u64),
    Bool(bool),
    Int(i32, i32, i32),
    U64(u64),
    Float(u32),
    Double(u64),
    Cf(f32, f32, f32, u32),
    Align,
    Bytes(Vec<u8>),
    Str(usize, String),
    Rel(i32, i32),
}

fn parse_op(o: &Value) -> Option<Op> {
    let get = |k: &str| o.get(k);
    Some(match o["op"].as_str()? {
        "bits" => Op::Bits(u(&o["bits"]) as u32, get("value").map_or(0, u)),
        "bool" => Op::Bool(get("value").and_then(Value::as_bool).unwrap_or(false)),
        "int" => {
            let (min, max) = (i(&o["min"]), i(&o["max"]));
            if i32::try_from(min).is_err() || i32::try_from(max).is_err() {
                return None;
            }
            Op::Int(min as i32, max as i32, get("value").map_or(min, i) as i32)
        }
        "u64" => Op::U64(get("value").map_or(0, u)),
        "float" => Op::Float(get("bits").map_or(0, u) as u32),
        "double" => Op::Double(get("bits").map_or(0, u)),
        // The precomputed form (min, delta, max_integer_value) is serialize1.json's, checked
        // against serialize.rs by its own harness: skipped here.
        "compressed_float" if o.get("max").is_none() => return None,
        "compressed_float" => Op::Cf(
            f(&o["min"]),
            f(&o["max"]),
            f(&o["res"]),
            get("value_bits").map_or(0, u) as u32,
        ),
        "align" => Op::Align,
        "bytes" => match get("hex") {
            Some(h) => Op::Bytes(hex::decode(h.as_str()?).ok()?),
            None => Op::Bytes(vec![0; u(&o["len"]) as usize]),
        },
        "string" => Op::Str(
            u(&o["max_len"]) as usize + 1,
            get("value")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
        ),
        "int_relative" => {
            let p = i32::try_from(i(&o["previous"])).ok()?;
            Op::Rel(p, get("value").map_or(0, i) as i32)
        }
        // object_index, check, end, quaternion: bitlens's own; int64, int128, uint128, fixed,
        // wstring, u8/u16/u32: serialize1.json's, checked against serialize.rs by the harness
        // that wrote them.
        _ => return None,
    })
}

fn drive<S: Stream>(s: &mut S, ops: &mut [Op]) -> Result<(), S::Error> {
    for op in ops {
        match op {
            Op::Bits(n, v) => {
                if *n <= 32 {
                    let mut x = *v as u32;
                    s.serialize_bits(&mut x, *n)?;
                    *v = u64::from(x);
                } else {
                    s.serialize_bits64(v, *n)?;
                }
            }
            Op::Bool(b) => s.serialize_bool(b)?,
            Op::Int(min, max, v) => s.serialize_int(v, *min, *max)?,
            Op::U64(v) => s.serialize_u64(v)?,
            Op::Float(b) => {
                let mut x = f32::from_bits(*b);
                s.serialize_f32(&mut x)?;
                *b = x.to_bits();
            }
            Op::Double(b) => {
                let mut x = f64::from_bits(*b);
                s.serialize_f64(&mut x)?;
                *b = x.to_bits();
            }
            Op::Cf(min, max, res, b) => {
                let mut x = f32::from_bits(*b);
                s.serialize_compressed_float(&mut x, *min, *max, *res)?;
                *b = x.to_bits();
            }
            Op::Align => s.serialize_align()?,
            Op::Bytes(b) => s.serialize_bytes(b)?,
            Op::Str(size, v) => s.serialize_string(v, *size)?,
            Op::Rel(p, v) => s.serialize_int_relative(*p, v)?,
        }
    }
    Ok(())
}

/// The values a reader must produce: decoded compressed floats where the vector pins them.
fn expected(raw: &[Value], ops: &[Op]) -> Vec<Op> {
    raw.iter()
        .zip(ops)
        .map(|(o, op)| match op {
            Op::Cf(a, b, c, _) => match o.get("decoded_bits") {
                Some(d) => Op::Cf(*a, *b, *c, u(d) as u32),
                None => op.clone(),
            },
            other => other.clone(),
        })
        .collect()
}

fn blank(ops: &[Op]) -> Vec<Op> {
    ops.iter()
        .map(|op| match op {
            Op::Bits(n, _) => Op::Bits(*n, 0),
            Op::Bool(_) => Op::Bool(false),
            Op::Int(a, b, _) => Op::Int(*a, *b, *a),
            Op::U64(_) => Op::U64(0),
            Op::Float(_) => Op::Float(0),
            Op::Double(_) => Op::Double(0),
            Op::Cf(a, b, c, _) => Op::Cf(*a, *b, *c, 0),
            Op::Align => Op::Align,
            Op::Bytes(b) => Op::Bytes(vec![0; b.len()]),
            Op::Str(n, _) => Op::Str(*n, String::new()),
            Op::Rel(p, _) => Op::Rel(*p, 0),
        })
        .collect()
}

fn main() {
    let (mut passed, mut skipped, mut failed) = (0, 0, 0);
    for file in std::env::args().skip(1) {
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        for v in doc["vectors"].as_array().unwrap() {
            let name = v["name"].as_str().unwrap();
            let raw = v["ops"].as_array().unwrap();
            let ops: Option<Vec<Op>> = raw.iter().map(parse_op).collect();
            let Some(ops) = ops else {
                skipped += 1;
                continue;
            };
            if v.get("packet").is_some() {
                skipped += 1;
                continue;
            }
            let bytes = hex::decode(v["hex"].as_str().unwrap()).unwrap();
            let mut data = bytes.clone();
            data.resize(bytes.len() + 8, 0);
            let mut problems = Vec::new();
            if let Some(kind) = v.get("reject") {
                let mut r = ReadStream::new(&data, bytes.len());
                let mut o = blank(&ops);
                if let Ok(()) = drive(&mut r, &mut o) {
                    problems.push(format!("accepted a vector to refuse ({kind}): {o:?}"));
                }
            } else {
                let write = v.get("write").and_then(Value::as_bool).unwrap_or(true);
                if write {
                    let mut buf = vec![0u8; (bytes.len() + 16).next_multiple_of(8)];
                    let mut w = WriteStream::new(&mut buf);
                    let mut o = ops.clone();
                    let Ok(()) = drive(&mut w, &mut o);
                    w.flush();
                    let n = w.bytes_processed() as usize;
                    let bits = w.bits_processed();
                    if buf[..n] != bytes[..] || bits != u(&v["bits"]) {
                        problems.push(format!(
                            "wrote {} ({bits} bits), the vector has {} ({} bits)",
                            hex::encode(&buf[..n]),
                            v["hex"].as_str().unwrap(),
                            v["bits"]
                        ));
                    }
                    if let Some(m) = v.get("measure") {
                        let mut ms = MeasureStream::new();
                        let mut o = ops.clone();
                        let Ok(()) = drive(&mut ms, &mut o);
                        if ms.bits_processed() != u(m) {
                            problems.push(format!(
                                "measured {} bits, the vector says {m}",
                                ms.bits_processed()
                            ));
                        }
                    }
                }
                let mut r = ReadStream::new(&data, bytes.len());
                let mut o = blank(&ops);
                match drive(&mut r, &mut o) {
                    Ok(()) => {
                        let want = expected(raw, &ops);
                        if o != want {
                            problems.push(format!("read {o:?}, the vector has {want:?}"));
                        }
                        if r.bits_processed() != u(&v["bits"]) {
                            problems.push(format!("read {} bits", r.bits_processed()));
                        }
                    }
                    Err(e) => problems.push(format!("read refused: {e}")),
                }
            }
            if problems.is_empty() {
                passed += 1;
            } else {
                failed += 1;
                println!("FAIL {file}: {name}: {}", problems.join(" | "));
            }
        }
    }
    println!(
        "peer: {passed} passed, {failed} failed, {skipped} skipped (bitlens's own operations \
         object_index, check, end, quaternion, framing; or serialize1.json's newer ones)"
    );
}
