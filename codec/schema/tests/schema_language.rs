//! Every construct of the schema language: round trips, count == bits written (measure >= them),
//! hostile input.

use bitlens_codec::{ErrorKind, Stream};
use bitlens_schema::{DynValue, Schema};
use serde_json::json;

/// The arena example of SCHEMA.md, taken from the document itself.
fn arena() -> Schema {
    let doc = include_str!("../../../SCHEMA.md");
    let start = doc
        .find("```toml\n[protocol]\nname = \"arena\"\nid")
        .expect("arena block");
    let body = &doc[start + "```toml\n".len()..];
    let end = body.find("```").expect("block end");
    Schema::from_toml(&body[..end], "SCHEMA.md").expect("the SCHEMA.md example parses")
}

fn s_write(schema: &Schema, ty: &str, v: &DynValue) -> Vec<u8> {
    let mut buf = vec![0u8; schema.protocol().mtu];
    let n = schema.write(ty, v, &mut buf).expect("writes");
    buf[..n].to_vec()
}

fn round_trip(schema: &Schema, ty: &str, json: serde_json::Value) -> Vec<u8> {
    let v = schema.value_from_json(ty, &json).expect("converts");
    let mut buf = vec![0u8; schema.protocol().mtu];
    let n = schema.write(ty, &v, &mut buf).expect("writes");
    let bytes = buf[..n].to_vec();
    let bits = schema.count(ty, &v).expect("counts");
    assert_eq!(bits.div_ceil(8), n, "count == bytes written");
    let bound = schema.measure(ty, &v).expect("measures");
    assert!(bound >= bits, "measure {bound} < count {bits}");
    let (t, back) = schema.read(&bytes).expect("reads back");
    assert_eq!(schema.protocol().type_name(t), Some(ty));
    // Lossy fields (quaternions) come back quantized; what comes back is stable.
    let again = s_write(schema, ty, &back);
    assert_eq!(
        again, bytes,
        "an accepted packet re-encodes to the same bytes"
    );
    let back_json = serde_json::to_value(&back).expect("serializes");
    assert_eq!(
        schema.value_from_json(ty, &back_json).as_ref(),
        Ok(&back),
        "JSON round trip"
    );
    if !json.to_string().contains("\"q\"") {
        assert_eq!(back, v, "read(write(x)) == x");
        assert_eq!(back_json, json);
    }
    let (tt, trace) = schema.trace(&bytes);
    assert_eq!(
        (tt, trace.error.clone(), trace.bits_read),
        (Some(t), None, bits)
    );
    for cut in 0..bytes.len() {
        assert!(
            schema.read(&bytes[..cut]).is_err(),
            "prefix of {cut} bytes accepted"
        );
    }
    bytes
}

#[test]
fn the_schema_md_example_round_trips() {
    let s = arena();
    round_trip(
        &s,
        "Input",
        json!({"sequence": 7, "buttons": 5, "aim_yaw": -180.0, "weapon": "rifle"}),
    );
    let bytes = round_trip(
        &s,
        "Snapshot",
        json!({"tick": 1200, "map": "dust", "players": [
            {"index": 0, "health": 100, "position": [0.0, 0.0, -1024.0], "dead": false},
            {"index": 7, "health": 0, "position": [0.0, 1024.0, 0.0], "dead": true, "respawn_ticks": 180}]}),
    );
    let (_, trace) = s.trace(&bytes);
    let paths: Vec<&str> = trace.fields.iter().map(|f| f.path()).collect();
    for p in [
        "players[1].index",
        "players[1].respawn_ticks",
        "players[0].position.z",
        "map.len",
        "header",
    ] {
        assert!(paths.contains(&p), "no {p} in {paths:?}");
    }
    assert!(!paths.contains(&"players[0].respawn_ticks"));
    let weapon = s.value_from_json(
        "Input",
        &json!({"sequence": 1, "buttons": 0, "aim_yaw": 0.0, "weapon": "laser"}),
    );
    assert!(weapon.unwrap_err().contains("no enum value \"laser\""));
}

const ALL: &str = r#"
[protocol]
name = "all"
id = -2
id_bits = 64
mtu = 4000
packets = ["All", { name = "Tiny", body = "Empty" }, "Rel"]

[enum.Team]
values = { red = 1, blue = 2, spectator = 7 }

[struct.Empty]
fields = []

[struct.Pair]
fields = [
  { name = "a", type = "i8" },
  { name = "b", type = "Team" },
]

[struct.All]
fields = [
  { name = "flag", type = "bool" },
  { name = "n", type = "int", min = -5, max = 5 },
  { name = "fixed", type = "int", min = 3, max = 3 },
  { name = "raw", type = "bits", bits = 64 },
  { name = "big", type = "u64" },
  { name = "f", type = "f32" },
  { name = "d", type = "f64" },
  { name = "cf", type = "compressed_float", min = 0.0, max = 1.0, resolution = 0.001 },
  { name = "q", type = "quaternion", bits = 9 },
  { name = "s", type = "string", max_len = 300 },
  { type = "align" },
  { name = "blob", type = "bytes", len = 3 },
  { name = "grid", type = "array", max_len = 3, element = { type = "array", max_len = 2, element = "u8" } },
  { name = "pairs", type = "array", max_len = 4, element = "Pair" },
  { name = "maybe", type = "Pair", if = "flag" },
  { name = "team", type = "Team" },
  { type = "check", label = "middle" },
  { name = "oi", type = "object_index", max_objects = 1000, previous = "n" },
  { type = "include", struct = "Pair" },
]

[struct.Rel]
fields = [
  { name = "first", type = "int_relative", previous = -1 },
  { name = "second", type = "int_relative", previous = "first" },
  { name = "objs", type = "sparse_array", max_objects = 200, element = "Empty", index_name = "slot" },
]
"#;

#[test]
fn every_construct_round_trips() {
    let s = Schema::from_toml(ALL, "all.toml").expect("parses");
    let all = json!({
        "flag": true, "n": -5, "fixed": 3, "raw": 18446744073709551615u64, "big": 1u64 << 40,
        "f": -0.0, "d": 1e300, "cf": 0.5, "q": [0.0, 0.0, 0.0, 1.0], "s": "ünïcode",
        "blob": "c0ffee", "grid": [[1, 2], [], [255]],
        "pairs": [{"a": -128, "b": "spectator"}, {"a": 127, "b": 3}],
        "maybe": {"a": 0, "b": "red"}, "team": "blue", "oi": 990, "a": 5, "b": "red"
    });
    round_trip(&s, "All", all.clone());
    let mut without = all.clone();
    without["flag"] = json!(false);
    without.as_object_mut().expect("object").remove("maybe");
    round_trip(&s, "All", without);
    round_trip(&s, "Tiny", json!({}));
    round_trip(
        &s,
        "Rel",
        json!({"first": 0, "second": 100000, "objs": [{"slot": 0}, {"slot": 199}]}),
    );
}

#[test]
fn invalid_values_are_write_errors_naming_the_field() {
    let s = Schema::from_toml(ALL, "all.toml").expect("parses");
    let v = s
        .value_from_json("Rel", &json!({"first": 5, "second": 5, "objs": []}))
        .expect("converts");
    let mut buf = [0u8; 64];
    let e = s.write("Rel", &v, &mut buf).unwrap_err();
    assert_eq!(e.field(), "second");
    assert!(matches!(e.kind(), ErrorKind::OutOfRange { .. }), "{e}");
    // A guarded field given while its flag says absent.
    let mut bad = DynValue::Null;
    if let Ok(DynValue::Struct(st)) = s.struct_from_json("Pair", &json!({"a": 1, "b": "red"})) {
        bad = DynValue::Struct(st);
    }
    let e = {
        let mut w = bitlens_codec::WriteStream::new(&mut buf);
        s.serialize_struct(&mut w, "Pair", &DynValue::Int(3))
            .unwrap_err()
    };
    assert!(e.to_string().contains("expected a struct"), "{e}");
    let mut m = bitlens_codec::MeasureStream::new();
    s.serialize_struct(&mut m, "Pair", &bad).expect("measures");
    assert_eq!(m.bit_position(), 8 + 3);
}

#[test]
fn hostile_counts_do_not_allocate_or_panic() {
    let s = Schema::from_toml(ALL, "all.toml").expect("parses");
    for seed in 0..20000u32 {
        let mut data = vec![0u8; (seed % 97) as usize];
        let mut x = seed.wrapping_mul(2_654_435_761);
        for b in &mut data {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            *b = x as u8;
        }
        let _ = s.read(&data);
        let mut r = bitlens_codec::ReadStream::new(&data);
        let _ = s.serialize_struct(&mut r, "All", &DynValue::Null);
        let mut r = bitlens_codec::ReadStream::new(&data);
        let _ = s.serialize_struct(&mut r, "Rel", &DynValue::Null);
    }
}

/// A relative array element is sent after its constant `previous`, each element on its own: the
/// bits of a loop calling `object_index` / `int_relative` with that constant per element. A
/// value at or below the constant is refused on write and cannot be read.
#[test]
fn relative_elements_are_sent_after_their_constant_previous() {
    use bitlens_codec::{ReadStream, WriteStream};
    let s = Schema::from_toml(
        r#"
        [protocol]
        name = "ids"
        id = 1
        mtu = 100
        packets = ["Ids"]

        [struct.Ids]
        fields = [
          { name = "ids", type = "array", max_len = 4, element = { type = "object_index", max_objects = 100, previous = 10 } },
          { name = "seqs", type = "array", max_len = 3, element = { type = "int_relative", previous = 1000 } },
          { name = "grid", type = "array", max_len = 2, element = { type = "array", max_len = 2, element = { type = "object_index", max_objects = 20, previous = 5 } } },
        ]
        "#,
        "ids.toml",
    )
    .expect("parses");
    let value = s
        .struct_from_json(
            "Ids",
            &json!({"ids": [11, 12, 100, 40], "seqs": [1001, 1200, 80000], "grid": [[6, 20], [7]]}),
        )
        .expect("converts");
    let mut buf = [0u8; 64];
    let mut w = WriteStream::new(&mut buf);
    s.serialize_struct(&mut w, "Ids", &value).expect("writes");
    let n = w.finish();
    // The same values through the core stream, each element after the constant.
    let mut want = [0u8; 64];
    let mut w = WriteStream::new(&mut want);
    let mut ids = vec![11i64, 12, 100, 40];
    w.array("ids", &mut ids, 4, 1, |w, x| w.object_index("", 10, x, 100))
        .unwrap();
    let mut seqs = vec![1001i64, 1200, 80000];
    w.array("seqs", &mut seqs, 3, 1, |w, x| w.int_relative("", 1000, x))
        .unwrap();
    let mut grid = vec![vec![6i64, 20], vec![7]];
    w.array("grid", &mut grid, 2, 2, |w, row| {
        w.array("", row, 2, 1, |w, x| w.object_index("", 5, x, 20))
    })
    .unwrap();
    let m = w.finish();
    assert_eq!(buf[..n], want[..m]);
    // d = 1 after 10 is the single bit 1: the first id takes one bit after the 3-bit count.
    assert_eq!(buf[0] & 0b1111, 0b1_100);
    let mut r = ReadStream::new(&buf[..n]);
    let back = s
        .serialize_struct(&mut r, "Ids", &DynValue::Null)
        .expect("reads");
    assert_eq!(back, value);
    // At or below the constant: refused on write, naming the element.
    for (json, field) in [
        (json!({"ids": [10], "seqs": [], "grid": []}), "ids[0]"),
        (
            json!({"ids": [], "seqs": [1001, 999], "grid": []}),
            "seqs[1]",
        ),
        (
            json!({"ids": [], "seqs": [], "grid": [[], [5]]}),
            "grid[1][0]",
        ),
    ] {
        let v = s.struct_from_json("Ids", &json).expect("converts");
        let e = s
            .serialize_struct(&mut WriteStream::new(&mut buf), "Ids", &v)
            .unwrap_err();
        assert_eq!(e.field(), field, "{e}");
        assert!(matches!(e.kind(), ErrorKind::OutOfRange { .. }), "{e}");
    }
}
