//! The `bitlens-vectors/1` format (see `codec/tests/vectors/README.md`): byte-exact vectors of
//! the bit-packed format, parsed into ops, and each vector run through the streams directly.
//!
//! A valid vector passes when writing its ops gives exactly its bytes and bit count, counting
//! gives the bit count, the measure bounds the bits written from every starting bit, reading the
//! bytes gives back every value and consumes the bit count, and tracing reaches the same values
//! (see [`run_vector`]). A reject vector passes when reading fails with its error kind.

use bitlens_codec::error::{Error, Result};
use bitlens_codec::fixed::FixedPoint;
use bitlens_codec::measure::MeasureStream;
use bitlens_codec::packet::{Protocol, ProtocolId, frame};
use bitlens_codec::quantize::{CompressedFloat, SmallestThree};
use bitlens_codec::read::{ReadStream, TraceStream};
use bitlens_codec::stream::Stream;
use bitlens_codec::write::{CountStream, WriteStream};
use serde_json::{Map, Value as Json};

/// One operation of a vector: a primitive and its arguments and value.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// `bits(value, n)`.
    Bits {
        /// Width 1..=64.
        n: u32,
        /// Value.
        value: u64,
    },
    /// `bool`.
    Bool(bool),
    /// `int(value, min, max)`.
    Int {
        /// Smallest value.
        min: i64,
        /// Largest value.
        max: i64,
        /// Value.
        value: i64,
    },
    /// `u64`.
    U64(u64),
    /// `float`, as its bit pattern.
    Float(u32),
    /// `double`, as its bit pattern.
    Double(u64),
    /// `compressed_float`.
    CompressedFloat {
        /// The range.
        spec: CompressedFloat,
        /// The input value's bit pattern (after a read: the decoded value's).
        value: u32,
        /// The expected code, if the vector gives it.
        code: Option<u32>,
        /// The expected decoded bit pattern, if the vector gives it.
        decoded: Option<u32>,
    },
    /// `align`.
    Align,
    /// `bytes`.
    Bytes(Vec<u8>),
    /// `string(value, max_len)`.
    Str {
        /// Longest length.
        max_len: usize,
        /// Value.
        value: String,
    },
    /// A relative object index.
    ObjectIndex {
        /// The sentinel.
        max_objects: i64,
        /// The previous index (-1 at the start).
        previous: i64,
        /// Value.
        value: i64,
    },
    /// A relative integer.
    IntRelative {
        /// The previous value.
        previous: i64,
        /// Value.
        value: i64,
    },
    /// `check(label)`.
    Check(String),
    /// The strict end of the data.
    End,
    /// A smallest-three quaternion (WIRE.md).
    Quaternion {
        /// The encoding (bits per component).
        spec: SmallestThree,
        /// The input `[x, y, z, w]` as bit patterns (after a read: the decoded ones).
        value: [u32; 4],
        /// The `[x, y, z, w]` bit patterns the reader must produce, if the vector gives them.
        decoded: Option<[u32; 4]>,
    },
    /// `int128(value, min, max)` (serialize 1.0's ranged 128-bit integer).
    Int128 {
        /// Smallest value.
        min: i128,
        /// Largest value.
        max: i128,
        /// Value.
        value: i128,
    },
    /// `u128` (serialize 1.0's `uint128`).
    U128(u128),
    /// `fixed(raw, spec)` (serialize 1.0's Q format).
    Fixed {
        /// The Q format and its bounds.
        spec: FixedPoint,
        /// The raw value.
        raw: i128,
        /// A decimal that must quantize (half away from zero) to `raw`, if the vector gives one.
        decimal: Option<String>,
        /// An `f64` bit pattern that must quantize to `raw`, if the vector gives one.
        f64_bits: Option<u64>,
    },
    /// `wstring(value, max_len)`: UTF-16 code units in 32-bit groups.
    WStr {
        /// Most code units (C's `buffer_size - 1`).
        max_len: usize,
        /// Value.
        value: String,
    },
    /// `compressed_float` given by its precomputed constants (`min`, `delta`,
    /// `max_integer_value`, `bits`): the same fields as [`Op::CompressedFloat`].
    CompressedFloatPrecomputed {
        /// The range.
        spec: CompressedFloat,
        /// The input value's bit pattern (after a read: the decoded value's).
        value: u32,
        /// The expected code, if the vector gives it.
        code: Option<u32>,
        /// The expected decoded bit pattern, if the vector gives it.
        decoded: Option<u32>,
    },
}

/// What a vector expects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expect {
    /// Valid: the ops take exactly this many bits.
    Bits(usize),
    /// Hostile: reading must fail with this error kind name.
    Reject(String),
}

/// Packet framing around a vector's ops.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PacketSpec {
    /// The framing parameters (type names are `0`, `1`, ...).
    pub protocol: Protocol,
    /// The packet type of a valid vector.
    pub packet_type: Option<u32>,
}

/// One conformance vector.
#[derive(Debug, Clone, PartialEq)]
pub struct Vector {
    /// Its name.
    pub name: String,
    /// The operations, in order.
    pub ops: Vec<Op>,
    /// The bytes.
    pub bytes: Vec<u8>,
    /// What must happen.
    pub expect: Expect,
    /// Framing, when the ops are a packet body.
    pub packet: Option<PacketSpec>,
    /// False for a vector a reader must accept whose values a writer sends as other bytes
    /// (`"write": false`): only the read is checked.
    pub write: bool,
    /// The bits serialize 1.0's measure must report for the ops, if the vector gives them.
    pub measure: Option<usize>,
}

fn field<'a>(o: &'a Map<String, Json>, key: &str, ctx: &str) -> Result<&'a Json, String> {
    o.get(key)
        .ok_or_else(|| format!("{ctx}: missing \"{key}\""))
}

fn as_u64(v: &Json, ctx: &str) -> Result<u64, String> {
    match v {
        Json::Number(n) => n
            .as_u64()
            .ok_or_else(|| format!("{ctx}: {n} is not an unsigned integer")),
        Json::String(s) => {
            parse_hex_u64(s).ok_or_else(|| format!("{ctx}: {s:?} is not a hex integer"))
        }
        other => Err(format!("{ctx}: expected an integer, found {other}")),
    }
}

fn as_i64(v: &Json, ctx: &str) -> Result<i64, String> {
    match v {
        Json::Number(n) => n
            .as_i64()
            .ok_or_else(|| format!("{ctx}: {n} is not an i64")),
        Json::String(s) => parse_hex_u64(s)
            .map(|u| u as i64)
            .ok_or_else(|| format!("{ctx}: {s:?} is not an integer")),
        other => Err(format!("{ctx}: expected an integer, found {other}")),
    }
}

fn as_f32(v: &Json, ctx: &str) -> Result<f32, String> {
    match v {
        // Through the shortest decimal that round-trips the f64, so "0.01" becomes the f32 nearest
        // 0.01 (not the f32 nearest the f64 nearest 0.01).
        Json::Number(n) => n
            .to_string()
            .parse::<f32>()
            .map_err(|e| format!("{ctx}: {e}")),
        Json::String(s) => s.parse::<f32>().map_err(|e| format!("{ctx}: {e}")),
        other => Err(format!("{ctx}: expected a number, found {other}")),
    }
}

fn parse_hex_u64(s: &str) -> Option<u64> {
    let t = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X"))?;
    u64::from_str_radix(t, 16).ok()
}

fn parse_op(o: &Map<String, Json>, ctx: &str, reject: bool) -> Result<Op, String> {
    let name = field(o, "op", ctx)?
        .as_str()
        .ok_or_else(|| format!("{ctx}: \"op\" is not a string"))?;
    let ctx = &format!("{ctx} ({name})");
    let get = |k: &str| field(o, k, ctx);
    // Reject vectors omit values; reading fills them in.
    let opt = |k: &str| o.get(k).filter(|_| !reject);
    let op = match name {
        "bits" => {
            let n = as_u64(get("bits")?, ctx)? as u32;
            let value = opt("value")
                .map(|v| as_u64(v, ctx))
                .transpose()?
                .unwrap_or(0);
            Op::Bits { n, value }
        }
        "bool" => Op::Bool(opt("value").and_then(Json::as_bool).unwrap_or(false)),
        "int" => {
            let min = as_i64(get("min")?, ctx)?;
            let max = as_i64(get("max")?, ctx)?;
            let value = opt("value")
                .map(|v| as_i64(v, ctx))
                .transpose()?
                .unwrap_or(min);
            Op::Int { min, max, value }
        }
        "u64" => Op::U64(
            opt("value")
                .map(|v| as_u64(v, ctx))
                .transpose()?
                .unwrap_or(0),
        ),
        "float" => Op::Float(
            opt("bits")
                .map(|v| as_u64(v, ctx))
                .transpose()?
                .unwrap_or(0) as u32,
        ),
        "double" => Op::Double(
            opt("bits")
                .map(|v| as_u64(v, ctx))
                .transpose()?
                .unwrap_or(0),
        ),
        "compressed_float" if o.contains_key("max_integer_value") => {
            return parse_compressed_precomputed(o, ctx, reject);
        }
        "compressed_float" => {
            let min = as_f32(get("min")?, ctx)?;
            let max = as_f32(get("max")?, ctx)?;
            let res = as_f32(get("res")?, ctx)?;
            let spec = CompressedFloat::new(min, max, res).map_err(|e| format!("{ctx}: {e}"))?;
            let value = opt("value_bits")
                .map(|v| as_u64(v, ctx))
                .transpose()?
                .unwrap_or(0) as u32;
            let code = opt("code")
                .map(|v| as_u64(v, ctx))
                .transpose()?
                .map(|c| c as u32);
            let decoded = opt("decoded_bits")
                .map(|v| as_u64(v, ctx))
                .transpose()?
                .map(|c| c as u32);
            Op::CompressedFloat {
                spec,
                value,
                code,
                decoded,
            }
        }
        "align" => Op::Align,
        "bytes" => match o.get("hex") {
            Some(h) => {
                let h = h
                    .as_str()
                    .ok_or_else(|| format!("{ctx}: \"hex\" is not a string"))?;
                Op::Bytes(hex::decode(h).map_err(|_| format!("{ctx}: bad hex {h:?}"))?)
            }
            None => {
                let len = as_u64(get("len")?, ctx)?;
                if len > 1 << 20 {
                    return Err(format!("{ctx}: bytes len {len} is beyond any vector"));
                }
                Op::Bytes(vec![0; len as usize])
            }
        },
        "string" => {
            let max_len = as_u64(get("max_len")?, ctx)? as usize;
            let value = opt("value").and_then(Json::as_str).unwrap_or("").to_owned();
            Op::Str { max_len, value }
        }
        "object_index" => {
            let max_objects = as_i64(get("max_objects")?, ctx)?;
            let previous = as_i64(get("previous")?, ctx)?;
            let value = opt("value")
                .map(|v| as_i64(v, ctx))
                .transpose()?
                .unwrap_or(previous + 1);
            Op::ObjectIndex {
                max_objects,
                previous,
                value,
            }
        }
        "int_relative" => {
            let previous = as_i64(get("previous")?, ctx)?;
            let value = opt("value")
                .map(|v| as_i64(v, ctx))
                .transpose()?
                .unwrap_or(previous + 1);
            Op::IntRelative { previous, value }
        }
        "check" => Op::Check(
            get("label")?
                .as_str()
                .ok_or_else(|| format!("{ctx}: label is not a string"))?
                .to_owned(),
        ),
        "end" => Op::End,
        "quaternion" => {
            let n = as_u64(get("bits")?, ctx)? as u32;
            let spec = SmallestThree::new(n).map_err(|e| format!("{ctx}: {e}"))?;
            let four = |key: &str| -> Result<Option<[u32; 4]>, String> {
                let Some(list) = opt(key) else {
                    return Ok(None);
                };
                let list = list
                    .as_array()
                    .filter(|l| l.len() == 4)
                    .ok_or_else(|| format!("{ctx}: {key} is not 4 bit patterns"))?;
                let mut out = [0u32; 4];
                for (slot, x) in out.iter_mut().zip(list) {
                    *slot = as_u64(x, ctx)? as u32;
                }
                Ok(Some(out))
            };
            Op::Quaternion {
                spec,
                value: four("value")?.unwrap_or([0; 4]),
                decoded: four("decoded")?,
            }
        }
        other => return parse_serialize1_op(other, o, ctx, reject),
    };
    Ok(op)
}

fn parse_packet(o: &Map<String, Json>, ctx: &str) -> Result<PacketSpec, String> {
    let id_json = field(o, "protocol_id", ctx)?;
    let id = as_u64(id_json, ctx)?;
    let width = o
        .get("protocol_id_bits")
        .map(|v| as_u64(v, ctx))
        .transpose()?
        .unwrap_or(32);
    let id = match width {
        32 => ProtocolId::U32(
            u32::try_from(id).map_err(|_| format!("{ctx}: protocol id {id:#x} needs 64 bits"))?,
        ),
        64 => ProtocolId::U64(id),
        w => return Err(format!("{ctx}: protocol_id_bits {w} is not 32 or 64")),
    };
    let types = as_u64(field(o, "types", ctx)?, ctx)?;
    if types == 0 || types > 1 << 16 {
        return Err(format!("{ctx}: {types} packet types"));
    }
    let packet_type = o
        .get("type")
        .map(|v| as_u64(v, ctx))
        .transpose()?
        .map(|t| t as u32);
    let protocol = Protocol {
        name: "vector".into(),
        id,
        packet_types: (0..types).map(|t| format!("T{t}")).collect(),
        mtu: usize::MAX,
    };
    Ok(PacketSpec {
        protocol,
        packet_type,
    })
}

/// Parses a `bitlens-vectors/1` document.
///
/// # Errors
/// A message naming the vector and op that could not be understood.
pub fn parse(text: &str) -> Result<Vec<Vector>, String> {
    let doc: Json = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let format = doc.get("format").and_then(Json::as_str);
    if format != Some("bitlens-vectors/1") {
        return Err(format!(
            "format is {format:?}, expected \"bitlens-vectors/1\""
        ));
    }
    let list = doc
        .get("vectors")
        .and_then(Json::as_array)
        .ok_or("missing \"vectors\" array")?;
    let mut out = Vec::with_capacity(list.len());
    for (i, v) in list.iter().enumerate() {
        let o = v
            .as_object()
            .ok_or_else(|| format!("vector {i} is not an object"))?;
        let name = o
            .get("name")
            .and_then(Json::as_str)
            .map_or_else(|| format!("#{i}"), str::to_owned);
        let ctx = format!("vector {name:?}");
        let hex = field(o, "hex", &ctx)?
            .as_str()
            .ok_or_else(|| format!("{ctx}: hex is not a string"))?;
        let bytes = hex::decode(hex).map_err(|_| format!("{ctx}: bad hex"))?;
        let expect = match (o.get("reject"), o.get("bits")) {
            (Some(k), _) => Expect::Reject(
                k.as_str()
                    .ok_or_else(|| format!("{ctx}: reject is not a string"))?
                    .to_owned(),
            ),
            (None, Some(b)) => Expect::Bits(as_u64(b, &ctx)? as usize),
            (None, None) => return Err(format!("{ctx}: neither \"bits\" nor \"reject\"")),
        };
        let reject = matches!(expect, Expect::Reject(_));
        let ops = field(o, "ops", &ctx)?
            .as_array()
            .ok_or_else(|| format!("{ctx}: ops is not an array"))?;
        let ops = ops
            .iter()
            .enumerate()
            .map(|(j, op)| {
                let octx = format!("{ctx} op {j}");
                parse_op(
                    op.as_object()
                        .ok_or_else(|| format!("{octx}: not an object"))?,
                    &octx,
                    reject,
                )
            })
            .collect::<Result<Vec<_>, _>>()?;
        let packet = match o.get("packet") {
            Some(p) => Some(parse_packet(
                p.as_object()
                    .ok_or_else(|| format!("{ctx}: packet is not an object"))?,
                &ctx,
            )?),
            None => None,
        };
        let write = match o.get("write") {
            None => true,
            Some(w) => w
                .as_bool()
                .ok_or_else(|| format!("{ctx}: write is not true or false"))?,
        };
        let measure = o
            .get("measure")
            .map(|m| as_u64(m, &ctx).map(|m| m as usize))
            .transpose()?;
        out.push(Vector {
            name,
            ops,
            bytes,
            expect,
            packet,
            write,
            measure,
        });
    }
    Ok(out)
}

/// Runs the ops on any stream (values are sent on write and filled in on read).
///
/// # Errors
/// The stream's first error.
pub fn drive<S: Stream>(s: &mut S, ops: &mut [Op]) -> Result<()> {
    for (i, op) in ops.iter_mut().enumerate() {
        let name = format!("op{i}");
        match op {
            Op::Bits { n, value } => s.bits(&name, value, *n)?,
            Op::Bool(v) => s.bool(&name, v)?,
            Op::Int { min, max, value } => s.int(&name, value, *min, *max)?,
            Op::U64(v) => s.u64(&name, v)?,
            Op::Float(b) => {
                let mut f = f32::from_bits(*b);
                s.f32(&name, &mut f)?;
                *b = f.to_bits();
            }
            Op::Double(b) => {
                let mut f = f64::from_bits(*b);
                s.f64(&name, &mut f)?;
                *b = f.to_bits();
            }
            Op::CompressedFloat { spec, value, .. } => {
                let mut f = f32::from_bits(*value);
                s.compressed_f32(&name, &mut f, spec)?;
                *value = f.to_bits();
            }
            Op::Align => s.align(&name)?,
            Op::Bytes(b) => s.bytes(&name, b)?,
            Op::Str { max_len, value } => s.string(&name, value, *max_len)?,
            Op::ObjectIndex {
                max_objects,
                previous,
                value,
            } => s.object_index(&name, *previous, value, *max_objects)?,
            Op::IntRelative { previous, value } => s.int_relative(&name, *previous, value)?,
            Op::Check(label) => s.check(label)?,
            Op::Quaternion { spec, value, .. } => {
                let mut q = value.map(f32::from_bits);
                s.quaternion(&name, &mut q, spec)?;
                *value = q.map(f32::to_bits);
            }
            Op::End => s.end()?,
            Op::Int128 { min, max, value } => s.int128(&name, value, *min, *max)?,
            Op::U128(v) => s.u128(&name, v)?,
            Op::Fixed { spec, raw, .. } => s.fixed(&name, raw, spec)?,
            Op::WStr { max_len, value } => s.wstring(&name, value, *max_len)?,
            Op::CompressedFloatPrecomputed { spec, value, .. } => {
                let mut f = f32::from_bits(*value);
                s.compressed_f32(&name, &mut f, spec)?;
                *value = f.to_bits();
            }
        }
    }
    Ok(())
}

/// The ops with every value reset, as a reader starts.
pub fn blank(ops: &[Op]) -> Vec<Op> {
    ops.iter()
        .map(|op| match op {
            Op::Bits { n, .. } => Op::Bits { n: *n, value: 0 },
            Op::Bool(_) => Op::Bool(false),
            Op::Int { min, max, .. } => Op::Int {
                min: *min,
                max: *max,
                value: *min,
            },
            Op::U64(_) => Op::U64(0),
            Op::Float(_) => Op::Float(0),
            Op::Double(_) => Op::Double(0),
            Op::CompressedFloat {
                spec,
                code,
                decoded,
                ..
            } => Op::CompressedFloat {
                spec: *spec,
                value: 0,
                code: *code,
                decoded: *decoded,
            },
            Op::Bytes(b) => Op::Bytes(vec![0; b.len()]),
            Op::Str { max_len, .. } => Op::Str {
                max_len: *max_len,
                value: String::new(),
            },
            Op::ObjectIndex {
                max_objects,
                previous,
                ..
            } => Op::ObjectIndex {
                max_objects: *max_objects,
                previous: *previous,
                value: 0,
            },
            Op::IntRelative { previous, .. } => Op::IntRelative {
                previous: *previous,
                value: 0,
            },
            Op::Quaternion { spec, decoded, .. } => Op::Quaternion {
                spec: *spec,
                value: [0; 4],
                decoded: *decoded,
            },
            Op::Int128 { min, max, .. } => Op::Int128 {
                min: *min,
                max: *max,
                value: *min,
            },
            Op::U128(_) => Op::U128(0),
            Op::Fixed {
                spec,
                decimal,
                f64_bits,
                ..
            } => Op::Fixed {
                spec: *spec,
                raw: spec.raw_min(),
                decimal: decimal.clone(),
                f64_bits: *f64_bits,
            },
            Op::WStr { max_len, .. } => Op::WStr {
                max_len: *max_len,
                value: String::new(),
            },
            Op::CompressedFloatPrecomputed {
                spec,
                code,
                decoded,
                ..
            } => Op::CompressedFloatPrecomputed {
                spec: *spec,
                value: 0,
                code: *code,
                decoded: *decoded,
            },
            other => other.clone(),
        })
        .collect()
}

/// The values a reader must produce: compressed floats and quaternions come back quantized.
pub fn expected_after_read(ops: &[Op]) -> Vec<Op> {
    ops.iter()
        .map(|op| match op {
            Op::CompressedFloat {
                spec,
                value,
                code,
                decoded,
            } => {
                let back = decoded
                    .unwrap_or_else(|| spec.decode(spec.encode(f32::from_bits(*value))).to_bits());
                Op::CompressedFloat {
                    spec: *spec,
                    value: back,
                    code: *code,
                    decoded: *decoded,
                }
            }
            Op::Quaternion {
                spec,
                value,
                decoded,
            } => {
                let back = decoded.unwrap_or_else(|| {
                    let (largest, codes) = spec.encode(value.map(f32::from_bits));
                    spec.decode(largest, codes)
                        .unwrap_or_default()
                        .map(f32::to_bits)
                });
                Op::Quaternion {
                    spec: *spec,
                    value: back,
                    decoded: *decoded,
                }
            }
            Op::CompressedFloatPrecomputed {
                spec,
                value,
                code,
                decoded,
            } => {
                let back = decoded
                    .unwrap_or_else(|| spec.decode(spec.encode(f32::from_bits(*value))).to_bits());
                Op::CompressedFloatPrecomputed {
                    spec: *spec,
                    value: back,
                    code: *code,
                    decoded: *decoded,
                }
            }
            other => other.clone(),
        })
        .collect()
}

fn run_on<S: Stream>(s: &mut S, v: &Vector, ops: &mut [Op], packet_type: &mut u32) -> Result<()> {
    match &v.packet {
        Some(p) => frame(s, &p.protocol, packet_type, |s, _| drive(s, ops)),
        None => drive(s, ops),
    }
}

/// The starting bits a vector's measure must cover: 0 to 7, or 0 alone for a framed vector
/// (its CRC must be the first field).
pub(crate) fn measure_starts(v: &Vector) -> std::ops::RangeInclusive<u32> {
    if v.packet.is_some() { 0..=0 } else { 0..=7 }
}

fn describe(e: &Error) -> String {
    format!("{} ({e})", e.kind().name())
}

/// The write side of a valid vector: compressed float codes, the bytes and bits written, the
/// exact count, and the measure (its given value, and at least the bits written from every
/// starting bit).
fn check_write(v: &Vector, bits: usize, t: &mut u32) -> Result<(), String> {
    for op in &v.ops {
        if let Op::CompressedFloat {
            spec,
            value,
            code: Some(code),
            ..
        } = op
        {
            let got = spec.encode(f32::from_bits(*value));
            if got != *code {
                return Err(format!(
                    "compressed float {:#010x}: code {got}, expected {code}",
                    value
                ));
            }
        }
        check_quantization(op)?;
    }
    // Write.
    let mut buf = vec![0u8; v.bytes.len() + 64];
    let mut ops = v.ops.clone();
    let mut w = WriteStream::new(&mut buf);
    run_on(&mut w, v, &mut ops, t).map_err(|e| format!("write failed: {}", describe(&e)))?;
    let written_bits = w.bits_written();
    let n = w.finish();
    if written_bits != bits {
        return Err(format!("bits: wrote {written_bits}, expected {bits}"));
    }
    if buf[..n] != v.bytes[..] {
        return Err(format!(
            "bytes: wrote {}, expected {}",
            hex::encode(&buf[..n]),
            hex::encode(&v.bytes)
        ));
    }
    // Count: exactly the bits written from bit 0.
    let mut ops = v.ops.clone();
    let mut c = CountStream::new();
    run_on(&mut c, v, &mut ops, t).map_err(|e| format!("count failed: {}", describe(&e)))?;
    if c.bits() != bits {
        return Err(format!("bits: counted {}, expected {bits}", c.bits()));
    }
    // Measure: a bound on the bits written from every starting bit (serialize 1.0).
    let mut ops = v.ops.clone();
    let mut m = MeasureStream::new();
    run_on(&mut m, v, &mut ops, t).map_err(|e| format!("measure failed: {}", describe(&e)))?;
    if let Some(want) = v.measure
        && m.bits() != want
    {
        return Err(format!(
            "bits: measured {}, the vector says {want}",
            m.bits()
        ));
    }
    for start in measure_starts(v) {
        let mut buf = vec![0u8; v.bytes.len() + 72];
        let mut w = WriteStream::new(&mut buf);
        let mut ops = v.ops.clone();
        let r = match start {
            0 => run_on(&mut w, v, &mut ops, t),
            k => w
                .bits("start", &mut 0, k)
                .and_then(|()| run_on(&mut w, v, &mut ops, t)),
        };
        r.map_err(|e| format!("write from bit {start} failed: {}", describe(&e)))?;
        let written = w.bits_written() - start as usize;
        if m.bits() < written {
            return Err(format!(
                "bits: measured {}, but {written} written from bit {start}",
                m.bits()
            ));
        }
    }
    Ok(())
}

/// Runs one vector.
///
/// # Errors
/// What differed, in one line.
pub fn run_vector(v: &Vector) -> Result<(), String> {
    match &v.expect {
        Expect::Reject(kind) => {
            let mut ops = blank(&v.ops);
            let mut t = 0;
            match run_on(&mut ReadStream::new(&v.bytes), v, &mut ops, &mut t) {
                Ok(()) => Err(format!(
                    "read accepted the bytes, expected error kind {kind}"
                )),
                Err(e) if e.kind().name() == kind => {
                    // The trace must reach the same verdict.
                    let mut ops = blank(&v.ops);
                    let mut ts = TraceStream::new(&v.bytes);
                    let r = run_on(&mut ts, v, &mut ops, &mut t);
                    match r {
                        Err(te) if te == e => Ok(()),
                        other => Err(format!(
                            "read failed with {}, trace ended with {other:?}",
                            describe(&e)
                        )),
                    }
                }
                Err(e) => Err(format!("error kind: expected {kind}, got {}", describe(&e))),
            }
        }
        Expect::Bits(bits) => {
            let mut t = v.packet.as_ref().and_then(|p| p.packet_type).unwrap_or(0);
            if v.write {
                check_write(v, *bits, &mut t)?;
            }
            // Read, then trace: the same values and the same bit count.
            let want = expected_after_read(&v.ops);
            for tracing in [false, true] {
                let what = if tracing { "trace" } else { "read" };
                let mut ops = blank(&v.ops);
                let mut t2 = 0;
                let (r, consumed) = if tracing {
                    let mut s = TraceStream::new(&v.bytes);
                    let r = run_on(&mut s, v, &mut ops, &mut t2);
                    (r, s.bits_read())
                } else {
                    let mut s = ReadStream::new(&v.bytes);
                    let r = run_on(&mut s, v, &mut ops, &mut t2);
                    (r, s.bits_read())
                };
                r.map_err(|e| format!("{what} failed: {}", describe(&e)))?;
                if let Some(i) = ops.iter().zip(&want).position(|(a, b)| a != b) {
                    return Err(format!(
                        "value of op {i}: {what} gave {:?}, expected {:?}",
                        ops[i], want[i]
                    ));
                }
                if consumed != *bits {
                    return Err(format!("bits: {what} consumed {consumed}, expected {bits}"));
                }
                if v.packet.is_some() && t2 != t {
                    return Err(format!("packet type: {what} gave {t2}, expected {t}"));
                }
            }
            Ok(())
        }
    }
}

fn as_i128(v: &Json, ctx: &str) -> Result<i128, String> {
    match v {
        Json::Number(n) => n
            .as_i64()
            .map(i128::from)
            .or(n.as_u64().map(i128::from))
            .ok_or_else(|| format!("{ctx}: {n} is not an integer")),
        Json::String(s) => bitlens_schema::parse_i128(s)
            .ok_or_else(|| format!("{ctx}: {s:?} is not a 128-bit integer")),
        other => Err(format!("{ctx}: expected an integer, found {other}")),
    }
}

/// The ops serialize 1.0 added (see `codec/tests/vectors/README.md`).
fn parse_serialize1_op(
    name: &str,
    o: &Map<String, Json>,
    ctx: &str,
    reject: bool,
) -> Result<Op, String> {
    let get = |k: &str| field(o, k, ctx);
    let opt = |k: &str| o.get(k).filter(|_| !reject);
    Ok(match name {
        "int64" => {
            let min = as_i64(get("min")?, ctx)?;
            let max = as_i64(get("max")?, ctx)?;
            let value = opt("value")
                .map(|v| as_i64(v, ctx))
                .transpose()?
                .unwrap_or(min);
            Op::Int { min, max, value }
        }
        "u8" | "u16" | "u32" => {
            let n = name[1..].parse().unwrap_or(32);
            let value = opt("value")
                .map(|v| as_u64(v, ctx))
                .transpose()?
                .unwrap_or(0);
            Op::Bits { n, value }
        }
        "int128" => {
            let min = as_i128(get("min")?, ctx)?;
            let max = as_i128(get("max")?, ctx)?;
            let value = opt("value")
                .map(|v| as_i128(v, ctx))
                .transpose()?
                .unwrap_or(min);
            Op::Int128 { min, max, value }
        }
        "uint128" | "u128" => {
            let value = match opt("value") {
                None => 0,
                Some(Json::Number(n)) => n
                    .as_u64()
                    .map(u128::from)
                    .ok_or_else(|| format!("{ctx}: {n} is not an unsigned integer"))?,
                Some(Json::String(s)) => bitlens_schema::parse_u128(s)
                    .ok_or_else(|| format!("{ctx}: {s:?} is not a 128-bit unsigned integer"))?,
                Some(other) => return Err(format!("{ctx}: expected an integer, found {other}")),
            };
            Op::U128(value)
        }
        "fixed" => {
            let bits = |k: &str| -> Result<u32, String> {
                u32::try_from(as_u64(get(k)?, ctx)?).map_err(|_| format!("{ctx}: {k} too large"))
            };
            let unsigned = o.get("unsigned").and_then(Json::as_bool).unwrap_or(false);
            let spec = FixedPoint::new(
                bits("integer_bits")?,
                bits("fraction_bits")?,
                !unsigned,
                as_i64(get("min")?, ctx)?,
                as_i64(get("max")?, ctx)?,
            )
            .map_err(|e| format!("{ctx}: {e}"))?;
            let raw = opt("raw")
                .map(|v| as_i128(v, ctx))
                .transpose()?
                .unwrap_or(spec.raw_min());
            let decimal = opt("decimal")
                .map(|v| {
                    v.as_str()
                        .map(str::to_owned)
                        .ok_or_else(|| format!("{ctx}: decimal is not a string"))
                })
                .transpose()?;
            let f64_bits = opt("f64_bits").map(|v| as_u64(v, ctx)).transpose()?;
            Op::Fixed {
                spec,
                raw,
                decimal,
                f64_bits,
            }
        }
        "wstring" => {
            let max_len = as_u64(get("max_len")?, ctx)? as usize;
            let value = opt("value").and_then(Json::as_str).unwrap_or("").to_owned();
            Op::WStr { max_len, value }
        }
        other => return Err(format!("{ctx}: unknown op {other:?}")),
    })
}

/// The precomputed form of a `compressed_float` op: `min`, `delta`, `max_integer_value` and
/// optional `bits`, instead of `max` and `res`.
fn parse_compressed_precomputed(
    o: &Map<String, Json>,
    ctx: &str,
    reject: bool,
) -> Result<Op, String> {
    let get = |k: &str| field(o, k, ctx);
    let opt = |k: &str| o.get(k).filter(|_| !reject);
    let min = as_f32(get("min")?, ctx)?;
    let delta = as_f32(get("delta")?, ctx)?;
    let m = u32::try_from(as_u64(get("max_integer_value")?, ctx)?)
        .map_err(|_| format!("{ctx}: max_integer_value beyond 32 bits"))?;
    let bits = match o.get("bits") {
        Some(b) => as_u64(b, ctx)? as u32,
        None => bitlens_codec::bits::bits_required(0, i64::from(m)),
    };
    let params = bitlens_codec::quantize::CompressedFloatParams {
        max_integer_value: m,
        bits,
        delta,
    };
    let spec = CompressedFloat::from_params(min, params).map_err(|e| format!("{ctx}: {e}"))?;
    let num = |k: &str| -> Result<Option<u32>, String> {
        opt(k).map(|v| as_u64(v, ctx).map(|x| x as u32)).transpose()
    };
    Ok(Op::CompressedFloatPrecomputed {
        spec,
        value: num("value_bits")?.unwrap_or(0),
        code: num("code")?,
        decoded: num("decoded_bits")?,
    })
}

/// A valid vector's quantization checks, before anything is written: a compressed float's
/// expected code, a fixed-point value's decimal or `f64` input quantized half away from zero.
fn check_quantization(op: &Op) -> Result<(), String> {
    match op {
        Op::CompressedFloatPrecomputed {
            spec,
            value,
            code: Some(code),
            ..
        } => {
            let got = spec.encode(f32::from_bits(*value));
            if got != *code {
                return Err(format!(
                    "compressed float {value:#010x}: code {got}, expected {code}"
                ));
            }
        }
        Op::Fixed {
            spec,
            raw,
            decimal,
            f64_bits,
        } => {
            if let Some(d) = decimal {
                let got = spec.from_decimal(d).map(|x| x.raw);
                if got != Ok(*raw) {
                    return Err(format!("fixed decimal {d}: raw {got:?}, expected {raw}"));
                }
            }
            if let Some(b) = f64_bits {
                let got = spec.from_f64(f64::from_bits(*b)).map(|x| x.raw);
                if got != Ok(*raw) {
                    return Err(format!("fixed f64 {b:#018x}: raw {got:?}, expected {raw}"));
                }
            }
        }
        _ => {}
    }
    Ok(())
}
