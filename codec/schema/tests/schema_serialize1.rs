//! The serialize 1.0 operations in the schema language (`int64`, `int128`, `u128`, `fixed`,
//! `wstring`, precomputed `compressed_float`), their JSON values, NaN and infinities in JSON,
//! and `end` refused in a packet body.

use bitlens_codec::{
    CompressedFloat, CompressedFloatParams, FixedPoint, ReadStream, Result, Stream, WriteStream,
};
use bitlens_schema::{DynStruct, DynValue, Schema};
use serde_json::json;

const SCHEMA: &str = r#"
[protocol]
name = "ops"
id = 0x534B524D
mtu = 1200
packets = ["All"]

[struct.All]
fields = [
  { name = "a", type = "int64", min = -5000000000, max = 5000000000 },
  { name = "b", type = "int128", min = "-1180591620717411303424", max = "1180591620717411303424" },
  { name = "c", type = "u128" },
  { name = "d", type = "fixed", integer_bits = 8, fraction_bits = 8, min = -100, max = 100 },
  { name = "e", type = "fixed", integer_bits = 64, fraction_bits = 64, min = -9223372036854775808, max = 9223372036854775807 },
  { name = "f", type = "fixed", integer_bits = 16, fraction_bits = 16, min = 0, max = 30000, unsigned = true },
  { name = "g", type = "wstring", max_len = 7 },
  { name = "h", type = "compressed_float", min = -100.0, delta = 200.0, max_integer_value = 20000, bits = 15 },
  { name = "i", type = "f32" },
  { name = "j", type = "f64" },
  { name = "k", type = "compressed_vector", min = 0.0, delta = 10.0, max_integer_value = 1000 },
]
"#;

/// The same fields through `Stream` directly: what the schema must match byte for byte.
fn compiled<S: Stream>(s: &mut S, v: &mut Compiled) -> Result<()> {
    let q8 = FixedPoint::new(8, 8, true, -100, 100).unwrap();
    let q64 = FixedPoint::new(64, 64, true, i64::MIN, i64::MAX).unwrap();
    let uq16 = FixedPoint::new(16, 16, false, 0, 30000).unwrap();
    let params = CompressedFloatParams {
        max_integer_value: 20000,
        bits: 15,
        delta: 200.0,
    };
    let cf = CompressedFloat::from_params(-100.0, params).unwrap();
    let cv = CompressedFloat::new(0.0, 10.0, 0.01).unwrap();
    s.int64("a", &mut v.a, -5000000000, 5000000000)?;
    s.int128("b", &mut v.b, -(1 << 70), 1 << 70)?;
    s.u128("c", &mut v.c)?;
    s.fixed("d", &mut v.d, &q8)?;
    s.fixed("e", &mut v.e, &q64)?;
    s.fixed("f", &mut v.f, &uq16)?;
    s.wstring("g", &mut v.g, 7)?;
    s.compressed_f32("h", &mut v.h, &cf)?;
    s.f32("i", &mut v.i)?;
    s.f64("j", &mut v.j)?;
    s.compressed_vec3("k", &mut v.k, &cv)
}

#[derive(Debug, Default, Clone, PartialEq)]
struct Compiled {
    a: i64,
    b: i128,
    c: u128,
    d: i128,
    e: i128,
    f: i128,
    g: String,
    h: f32,
    i: f32,
    j: f64,
    k: [f32; 3],
}

fn value_json() -> serde_json::Value {
    json!({
        "a": -5000000000i64,
        "b": "-1180591620717411303424",
        "c": "0xffffffffffffffffffffffffffffffff",
        "d": "-3.126953125",
        "e": "-1.0000000000000000000542101086242752217003726400434970855712890625",
        "f": 29999.5,
        "g": "a\u{1F600}",
        "h": -33.34,
        "i": "nan:0xffc00001",
        "j": "-inf",
        "k": [0.005, "9.995", 0.105],
    })
}

#[test]
fn the_new_types_write_what_the_stream_calls_write() {
    let schema = Schema::from_toml(SCHEMA, "ops.toml").unwrap();
    let value = schema.value_from_json("All", &value_json()).unwrap();
    let mut buf = [0u8; 1200];
    let n = schema.write("All", &value, &mut buf).unwrap();
    let packet = &buf[..n];

    // The body, written by hand: the schema's bytes after the 32-bit CRC (one packet type: no
    // type field), up to the end-of-packet check.
    let mut v = Compiled {
        a: -5000000000,
        b: -(1 << 70),
        c: u128::MAX,
        d: -801, // the tie -800.5 rounds away from zero
        e: -(1 << 64) - 1,
        f: 29999 * 65536 + 32768,
        g: "a\u{1F600}".into(),
        h: -33.34,
        i: f32::from_bits(0xffc00001),
        j: f64::NEG_INFINITY,
        k: [0.005, 9.995, 0.105],
    };
    let mut body = [0u8; 1200];
    let mut w = WriteStream::new(&mut body);
    w.bits("crc", &mut 0, 32).unwrap();
    compiled(&mut w, &mut v).unwrap();
    let bits = w.bits_written();
    let m = w.finish();
    assert_eq!(packet[4..m - 1], body[4..m - 1]);
    // The last body byte shares bits with the check that follows it.
    let tail = bits % 8;
    let mask = if tail == 0 { 0xff } else { (1u8 << tail) - 1 };
    assert_eq!(packet[m - 1] & mask, body[m - 1] & mask);

    // Read back: every value, NaN payload and -inf bit-exact.
    let (t, back) = schema.read(packet).unwrap();
    assert_eq!(t, 0);
    let mut read = Compiled::default();
    let mut r = ReadStream::new(&packet[..m]);
    r.bits("crc", &mut 0, 32).unwrap();
    compiled(&mut r, &mut read).unwrap();
    assert_eq!(read.i.to_bits(), 0xffc00001);
    assert_eq!(read.j.to_bits(), f64::NEG_INFINITY.to_bits());
    assert_eq!(back.get("g"), Some(&DynValue::Str("a\u{1F600}".into())));

    // The JSON of what was read, exact: strings where JSON numbers would lose bits.
    let text = back.to_string();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["a"], json!(-5000000000i64));
    assert_eq!(doc["b"], json!("-1180591620717411303424"));
    assert_eq!(doc["c"], json!("340282366920938463463374607431768211455"));
    assert_eq!(doc["d"], json!(-3.12890625));
    assert_eq!(
        doc["e"],
        json!("-1.0000000000000000000542101086242752217003726400434970855712890625")
    );
    assert_eq!(doc["f"], json!(29999.5));
    assert_eq!(doc["i"], json!("nan:0xffc00001"));
    assert_eq!(doc["j"], json!("-inf"));

    // ... and that JSON encodes to the same packet: decode then encode is the identity.
    let again = schema.value_from_json("All", &doc).unwrap();
    assert_eq!(again, back);
    let mut buf2 = [0u8; 1200];
    let n2 = schema.write("All", &again, &mut buf2).unwrap();
    assert_eq!(&buf2[..n2], packet);
}

#[test]
fn nan_payloads_and_negative_zero_round_trip_through_json() {
    let schema = Schema::from_toml(
        r#"
[protocol]
name = "floats1"
id = 1
mtu = 100
packets = ["F"]
[struct.F]
fields = [
  { name = "x", type = "f32" },
  { name = "y", type = "f64" },
  { name = "v", type = "array", max_len = 8, element = "f32" },
]
"#,
        "f.toml",
    )
    .unwrap();
    let f32s = [
        f32::NAN,
        -f32::NAN,
        f32::from_bits(0x7f800001),
        f32::INFINITY,
        f32::NEG_INFINITY,
        -0.0,
        f32::from_bits(1),
    ];
    let f64s = [
        f64::NAN,
        f64::from_bits(0xfff0000000000001),
        f64::INFINITY,
        -0.0,
    ];
    for (i, x) in f32s.iter().enumerate() {
        let y = f64s[i % f64s.len()];
        let value = DynValue::Struct(DynStruct::new([
            ("x", DynValue::F32(*x)),
            ("y", DynValue::F64(y)),
            (
                "v",
                DynValue::Array(f32s.iter().map(|f| DynValue::F32(*f)).collect()),
            ),
        ]));
        let mut buf = [0u8; 100];
        let n = schema.write("F", &value, &mut buf).unwrap();
        let (_, back) = schema.read(&buf[..n]).unwrap();
        assert_eq!(back, value, "bits survive the wire");
        let json: serde_json::Value = serde_json::from_str(&back.to_string()).unwrap();
        let again = schema.value_from_json("F", &json).unwrap();
        assert_eq!(again, value, "bits survive the JSON: {json}");
    }
    // The spellings, and null is still refused.
    let json = json!({"x": "nan", "y": "inf", "v": ["-inf", -0.0]});
    let v = schema.value_from_json("F", &json).unwrap();
    assert_eq!(v.to_string(), r#"{"x":"nan","y":"inf","v":["-inf",-0.0]}"#);
    let e = schema
        .value_from_json("F", &json!({"x": null, "y": 1.0, "v": []}))
        .unwrap_err();
    assert!(e.starts_with("x: expected a number"), "{e}");
    let e = schema
        .value_from_json("F", &json!({"x": "nan:0x3f800000", "y": 1.0, "v": []}))
        .unwrap_err();
    assert!(e.contains("nan:0x"), "{e}");
}

#[test]
fn fixed_json_input_rounds_half_away_from_zero() {
    let schema = Schema::from_toml(
        r#"
[protocol]
name = "qq"
id = 1
mtu = 100
packets = ["Q"]
[struct.Q]
fields = [{ name = "x", type = "fixed", integer_bits = 8, fraction_bits = 8, min = -100, max = 100 }]
"#,
        "q.toml",
    )
    .unwrap();
    for (input, raw) in [
        (json!(-3.126953125), -801),
        (json!("-3.126953125"), -801),
        (json!(3.126953125), 801),
        (json!("-3.12695312"), -800),
        (json!(-3), -768),
        (json!("100"), 25600),
        (json!(0.1), 26),
    ] {
        let v = schema.value_from_json("Q", &json!({ "x": input })).unwrap();
        assert_eq!(
            v.get("x"),
            Some(&DynValue::Fixed(bitlens_codec::Fixed::new(raw, 8))),
            "{input}"
        );
    }
    // Out of range is the writer's error, naming the raw bounds.
    let v = schema.value_from_json("Q", &json!({"x": 100.5})).unwrap();
    let e = schema.write("Q", &v, &mut [0u8; 100]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "bit 32 (field \"x\"): 25728 out of range -25600..=25600"
    );
    for bad in [json!("x"), json!(null), json!("1e999"), json!([1])] {
        assert!(
            schema.value_from_json("Q", &json!({ "x": bad })).is_err(),
            "{bad}"
        );
    }
}

fn load_err(body: &str) -> String {
    let text = format!("[protocol]\nname = \"ee\"\nid = 1\nmtu = 100\npackets = [\"P\"]\n\n{body}");
    Schema::from_toml(&text, "e.toml").unwrap_err().to_string()
}

#[test]
fn end_in_a_packet_body_is_refused_at_load() {
    // Directly in the body.
    let e = load_err(
        "[struct.P]\nfields = [\n  { name = \"x\", type = \"bool\" },\n  { type = \"end\" },\n]\n",
    );
    assert!(
        e.starts_with("e.toml:10:3: `end` inside the body of packet \"P\""),
        "{e}"
    );
    assert!(e.contains("remove this field"), "{e}");
    // In a struct inside the body, in an array's element, through an include.
    for body in [
        "[struct.P]\nfields = [{ name = \"s\", type = \"S\" }]\n[struct.S]\nfields = [{ type = \"end\" }]\n",
        "[struct.P]\nfields = [{ name = \"s\", type = \"array\", max_len = 2, element = \"S\" }]\n[struct.S]\nfields = [{ name = \"b\", type = \"bool\" }, { type = \"end\" }]\n",
        "[struct.P]\nfields = [{ type = \"include\", struct = \"S\" }]\n[struct.S]\nfields = [{ name = \"b\", type = \"bool\" }, { type = \"end\" }]\n",
        "[struct.P]\nfields = [{ name = \"s\", type = \"sparse_array\", max_objects = 8, element = \"S\" }]\n[struct.S]\nfields = [{ name = \"b\", type = \"bool\" }, { type = \"end\" }]\n",
    ] {
        let e = load_err(body);
        assert!(e.contains("`end` inside the body of packet \"P\""), "{e}");
        // The place named is the `end` field itself, in struct S on line 10.
        assert!(e.starts_with("e.toml:10:"), "{e}");
    }
    // A struct that is not a packet body may still end the data (a message body read with
    // Schema::serialize_struct).
    let text = "[protocol]\nname = \"ee\"\nid = 1\nmtu = 100\npackets = [\"P\"]\n[struct.P]\nfields = [{ name = \"b\", type = \"bool\" }]\n[struct.M]\nfields = [{ name = \"b\", type = \"bool\" }, { type = \"end\" }]\n";
    let schema = Schema::from_toml(text, "e.toml").unwrap();
    let e = schema
        .serialize_struct(&mut ReadStream::new(&[0x01, 0x00]), "M", &DynValue::Null)
        .unwrap_err();
    assert_eq!(e.kind().name(), "trailing_data");
}

#[test]
fn new_type_errors_name_the_place_and_the_fix() {
    for (fields, want) in [
        (
            r#"{ name = "x", type = "fixed", integer_bits = 16, fraction_bits = 8, min = 0, max = 1 }"#,
            "e.toml:8:56: Q16.8 takes 24 bits of storage",
        ),
        (
            r#"{ name = "x", type = "fixed", integer_bits = 8, fraction_bits = 8, min = -200, max = 1 }"#,
            "Q8.8 cannot hold the bounds -200..=1",
        ),
        (
            r#"{ name = "x", type = "fixed", fraction_bits = 8, min = 0, max = 1 }"#,
            "fixed field without `integer_bits`",
        ),
        (
            r#"{ name = "x", type = "int128", min = "abc", max = 1 }"#,
            "min \"abc\" is not a 128-bit integer",
        ),
        (
            r#"{ name = "x", type = "int128", min = 5, max = "0x1" }"#,
            "min 5 is greater than max 1",
        ),
        (
            r#"{ name = "x", type = "wstring" }"#,
            "wstring field without `max_len`",
        ),
        (
            r#"{ name = "x", type = "compressed_float", min = 0.0, delta = 10.0, max_integer_value = 1000, bits = 11 }"#,
            "compressed float bits 11 for max_integer_value 1000 (it takes 10)",
        ),
        (
            r#"{ name = "x", type = "compressed_float", min = 0.0, max = 10.0, delta = 10.0, max_integer_value = 1000 }"#,
            "`max` with `max_integer_value`",
        ),
        (
            r#"{ name = "x", type = "compressed_float", min = 0.0, max = 10.0, resolution = 0.01, bits = 10 }"#,
            "`bits` is a precomputed constant",
        ),
    ] {
        let e = load_err(&format!("[struct.P]\nfields = [{fields}]\n"));
        assert!(e.contains(want), "{e}\n  wanted: {want}");
        assert!(e.starts_with("e.toml:8:"), "{e}");
    }
}

#[test]
fn precomputed_and_derived_compressed_floats_are_the_same_field() {
    let derived =
        "{ name = \"x\", type = \"compressed_float\", min = 0.0, max = 10.0, resolution = 0.01 }";
    let pre = "{ name = \"x\", type = \"compressed_float\", min = 0.0, delta = 10.0, max_integer_value = 1000 }";
    let mk = |f: &str| {
        Schema::from_toml(
            &format!(
                "[protocol]\nname = \"cfloats\"\nid = 7\nmtu = 100\npackets = [\"P\"]\n[struct.P]\nfields = [{f}]\n"
            ),
            "c.toml",
        )
        .unwrap()
    };
    let (a, b) = (mk(derived), mk(pre));
    for x in [0.005f32, 0.025, 0.105, 9.995, 5.0, -1.0, 11.0] {
        let v = a.value_from_json("P", &json!({ "x": x })).unwrap();
        let (mut ba, mut bb) = ([0u8; 100], [0u8; 100]);
        let na = a.write("P", &v, &mut ba).unwrap();
        let nb = b.write("P", &v, &mut bb).unwrap();
        assert_eq!(ba[..na], bb[..nb], "{x}");
        assert_eq!(a.read(&ba[..na]).unwrap(), b.read(&bb[..nb]).unwrap());
    }
}

#[test]
fn every_float_bit_pattern_survives_decode_then_encode_json() {
    // Random f32 and f64 bit patterns (NaNs with payloads, infinities, subnormals, -0 among
    // them) through the JSON a decode prints and encode reads: the same bits. Finite f64s need
    // serde_json's float_roundtrip parsing (without it, 30% of random f64s came back one ulp off).
    let schema = Schema::from_toml(
        "[protocol]\nname = \"floats2\"\nid = 1\nmtu = 100\npackets = [\"F\"]\n[struct.F]\nfields = [{ name = \"x\", type = \"f32\" }, { name = \"y\", type = \"f64\" }]\n",
        "f.toml",
    )
    .unwrap();
    let mut s = 0x9E3779B97F4A7C15u64;
    for i in 0..20_000 {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        // Every 16th pattern is a NaN or infinity with a random payload.
        let (x, y) = if i % 16 == 0 {
            (s as u32 | 0x7f80_0000, s | 0x7ff0_0000_0000_0000)
        } else {
            (s as u32, s.rotate_left(17))
        };
        let value = DynValue::Struct(DynStruct::new([
            ("x", DynValue::F32(f32::from_bits(x))),
            ("y", DynValue::F64(f64::from_bits(y))),
        ]));
        let json: serde_json::Value = serde_json::from_str(&value.to_string()).unwrap();
        let back = schema.value_from_json("F", &json).unwrap();
        assert_eq!(back, value, "{x:#010x} {y:#018x}: {json}");
    }
}

/// A compressed float at resolution `+inf` (issue 29.15) is the standard's `M = 1`: 7.0 in
/// [0, 10] is the one bit `1`, as serialize.rs writes it (WIRE.md). Refused at load before.
#[test]
fn an_infinite_resolution_is_a_one_bit_compressed_float() {
    let schema = Schema::from_toml(
        "[protocol]\nname = \"coarse\"\nid = 1\nmtu = 100\npackets = [\"P\"]\n[struct.P]\nfields = [{ name = \"v\", type = \"compressed_float\", min = 0.0, max = 10.0, resolution = inf }, { name = \"b\", type = \"bool\" }]\n",
        "inf.toml",
    )
    .unwrap();
    assert!(schema.warnings().is_empty());
    let v = schema
        .value_from_json("P", &json!({"v": 7.0, "b": false}))
        .unwrap();
    let mut buf = [0u8; 100];
    let n = schema.write("P", &v, &mut buf).unwrap();
    let (_, trace) = schema.trace(&buf[..n]);
    let f = trace.get("v").unwrap();
    assert_eq!(f.bits, 1);
    assert_eq!(buf[f.bit / 8] >> (f.bit % 8) & 1, 1, "the code 1");
    let (_, back) = schema.read(&buf[..n]).unwrap();
    assert_eq!(back.get("v"), Some(&DynValue::F32(10.0)));
    assert_eq!(back.get("b"), Some(&DynValue::Bool(false)));
}

/// Unsigned Q1.127 over [0, 1] (issue 29.14): serialize.rs writes 1.0 (raw 2^127) as fifteen
/// `00` then `80`; bitlens holds raw values as i128 and refuses the declaration, naming the
/// deviation (WIRE.md, "Deviations from serialize 1.0", 3) and the `max` that would fit.
#[test]
fn unsigned_128_bit_fixed_point_past_2_pow_127_is_a_named_deviation() {
    let text = "[protocol]\nname = \"wide\"\nid = 1\nmtu = 100\npackets = [\"P\"]\n[struct.P]\nfields = [{ name = \"q\", type = \"fixed\", integer_bits = 1, fraction_bits = 127, min = 0, max = 1, unsigned = true }]\n";
    let e = Schema::from_toml(text, "q.toml").unwrap_err().to_string();
    assert!(
        e.starts_with(
            "q.toml:7:56: unsigned Q1.127 over 0..=1 has raw values of 2^127 or more, which \
             bitlens does not support: its raw values are i128 (WIRE.md, \"Deviations from \
             serialize 1.0\", 3) (keep max below 1"
        ),
        "{e}"
    );
    // Up to 2^127 - 1 the same storage loads: Q1.127 over 0..=0, Q2.126 over 0..=1.
    assert!(Schema::from_toml(&text.replace("max = 1,", "max = 0,"), "q.toml").is_ok());
    let q2 = text
        .replace("integer_bits = 1", "integer_bits = 2")
        .replace("fraction_bits = 127", "fraction_bits = 126");
    assert!(Schema::from_toml(&q2, "q.toml").is_ok());
}
