//! The `[yojimbo]` section (issue 27): what it loads, what it refuses (one line naming the key),
//! and the yojimbo layer reading message bodies through the schema interpreter.

use std::sync::Arc;

use bitlens_codec::Stream;
use bitlens_codec::trace::Value;
use bitlens_codec::write::WriteStream;
use bitlens_schema::{DynValue, Schema, yojimbo};
use bitlens_yojimbo::packet::{self, Bits, ConnectionPacket, Content, Entry, Message};
use bitlens_yojimbo::{ChannelConfig, ChannelType, RefusalKind, ReliableConfig};

const GAME: &str = r#"
[yojimbo]
max_packet_size = 4096
fragment_size = 512
max_fragments = 8
channels = [
  { type = "unreliable_unordered", max_block_size = 2048, block_fragment_size = 256 },
  { max_messages_per_packet = 32, disable_blocks = true },
]
messages = [
  "Move",
  { name = "Ping", body = false },
  { name = "Blob", body = "Move", block = true },
]

[struct.Move]
fields = [
  { name = "x", type = "int", min = 0, max = 1000 },
  { name = "jump", type = "bool" },
  { name = "height", type = "int", min = 0, max = 7, if = "jump" },
  { name = "who", type = "u8" },
]
"#;

fn game() -> Arc<Schema> {
    Arc::new(Schema::from_toml(GAME, "game.toml").unwrap())
}

/// The bits of a `Move` body written by the schema.
fn move_body(schema: &Schema, json: serde_json::Value) -> Bits {
    let value = schema.struct_from_json("Move", &json).unwrap();
    let mut buf = [0u8; 64];
    let mut s = WriteStream::new(&mut buf);
    schema.serialize_struct(&mut s, "Move", &value).unwrap();
    let n = s.bit_position();
    s.finish();
    Bits::copy(&buf, 0, n)
}

#[test]
fn section_loads_with_yojimbo_defaults_and_without_protocol() {
    let schema = game();
    assert!(!schema.has_protocol());
    let cfg = yojimbo::config(&schema).unwrap();
    cfg.validate().unwrap();
    assert_eq!(
        cfg.reliable,
        ReliableConfig {
            max_packet_size: 4096,
            fragment_size: 512,
            max_fragments: 8
        }
    );
    let mut unreliable = ChannelConfig::new(ChannelType::UnreliableUnordered);
    unreliable.max_block_size = 2048;
    unreliable.block_fragment_size = 256;
    let mut reliable = ChannelConfig::new(ChannelType::ReliableOrdered);
    reliable.max_messages_per_packet = 32;
    reliable.disable_blocks = true;
    assert_eq!(cfg.channels, vec![unreliable, reliable]);
    let types: Vec<(&str, bool)> = cfg
        .message_types
        .iter()
        .map(|m| (m.name.as_str(), m.block))
        .collect();
    assert_eq!(types, [("Move", false), ("Ping", false), ("Blob", true)]);
    let section = yojimbo::section(&schema).unwrap();
    assert_eq!(section.messages[1].body, None);
    assert_eq!(section.messages[2].body.as_deref(), Some("Move"));

    // Everything left out: yojimbo's ClientServerConfig and ChannelConfig defaults (two
    // reliable-ordered channels).
    let text = "[yojimbo]\nmessages = [{ name = \"Hello\", body = false }]\n";
    let minimal = Arc::new(Schema::from_toml(text, "m.toml").unwrap());
    let cfg = yojimbo::config(&minimal).unwrap();
    assert_eq!(cfg.reliable, ReliableConfig::default());
    assert_eq!(
        cfg.channels,
        vec![ChannelConfig::new(ChannelType::ReliableOrdered); 2]
    );
    // A schema without the section has no configuration; one of only the section refuses
    // every bitlens packet read, with a message.
    let plain = "[protocol]\nname = \"plain\"\nid = 1\nmtu = 1200\npackets = [\"A\"]\n[struct.A]\nfields = [{ name = \"x\", type = \"bool\" }]\n";
    let plain = Arc::new(Schema::from_toml(plain, "p.toml").unwrap());
    assert!(plain.has_protocol());
    assert!(yojimbo::config(&plain).is_none());
    let err = minimal.read(&[0; 8]).unwrap_err();
    assert!(err.to_string().contains("no [protocol] section"), "{err}");
    assert!(minimal.trace(&[0; 8]).1.error.is_some());
}

#[test]
fn message_bodies_are_read_and_traced_through_the_schema() {
    let schema = game();
    let cfg = yojimbo::config(&schema).unwrap();
    let a = move_body(
        &schema,
        serde_json::json!({"x": 700, "jump": true, "height": 5, "who": 65}),
    );
    let b = move_body(
        &schema,
        serde_json::json!({"x": 3, "jump": false, "who": 0}),
    );
    let msg = |id, message_type, body: &Bits, on_wire| Message {
        id,
        id_on_wire: on_wire,
        message_type,
        body: body.clone(),
        block: None,
    };
    let packet = ConnectionPacket {
        entries: vec![
            Entry {
                channel: 0,
                content: Content::Messages(vec![
                    msg(77, 0, &b, false),
                    msg(77, 1, &Bits::default(), false),
                ]),
            },
            Entry {
                channel: 1,
                content: Content::Messages(vec![
                    msg(9, 0, &a, true),
                    msg(10, 1, &Bits::default(), true),
                ]),
            },
        ],
        bits: 0,
    };
    let mut buf = [0u8; 256];
    let n = bitlens_yojimbo::write::write(&cfg, &packet, &mut buf).unwrap();
    let read = packet::read(&cfg, &buf[..n], 77).unwrap();
    assert_eq!(read.entries, packet.entries);
    let (traced, trace) = packet::trace(&cfg, &buf[..n], 77);
    assert_eq!(traced.unwrap().entries, packet.entries);
    assert!(trace.error.is_none());
    let get = |path: &str| {
        trace
            .get(path)
            .unwrap_or_else(|| panic!("no {path}"))
            .value
            .clone()
    };
    // The body's fields, as the struct names them, under the message's body scope.
    assert_eq!(get("entries[1].messages[0].body.x"), Value::Int(700));
    assert_eq!(get("entries[1].messages[0].body.height"), Value::Int(5));
    assert_eq!(get("entries[0].messages[0].body.x"), Value::Int(3));
    assert!(trace.get("entries[0].messages[0].body.height").is_none());
    assert!(trace.get("entries[1].messages[1].body.x").is_none());

    // A body the struct refuses (x = 1023 > 1000) fails the packet, naming the body's field.
    let mut bad = a.clone();
    bad.data[0] = 0xff;
    bad.data[1] |= 0x03;
    let packet = ConnectionPacket {
        entries: vec![Entry {
            channel: 1,
            content: Content::Messages(vec![msg(9, 0, &bad, true)]),
        }],
        bits: 0,
    };
    let n = bitlens_yojimbo::write::write(&cfg, &packet, &mut buf).unwrap();
    let refusal = packet::read(&cfg, &buf[..n], 1).unwrap_err();
    assert_eq!(refusal.field, "entries[0].messages[0].body.x", "{refusal}");
    let (r, trace) = packet::trace(&cfg, &buf[..n], 1);
    assert_eq!(r.unwrap_err(), refusal);
    assert!(trace.error.is_some());
    assert!(!matches!(refusal.kind, RefusalKind::TooManyEntries { .. }));
}

#[test]
fn value_of_a_body_reads_back() {
    // The schema's own reader gives the body the layer skipped over, field by field.
    let schema = game();
    let body = move_body(
        &schema,
        serde_json::json!({"x": 12, "jump": true, "height": 1, "who": 90}),
    );
    let mut s = bitlens_codec::read::ReadStream::new(&body.data);
    let v = schema
        .serialize_struct(&mut s, "Move", &DynValue::Null)
        .unwrap();
    assert_eq!(v.to_string(), r#"{"x":12,"jump":true,"height":1,"who":90}"#);
}

/// Each new key's refusal: one line, naming the file, line, column and the key.
#[test]
fn section_refusals_name_the_key() {
    let body = "\n[struct.M]\nfields = [{ name = \"x\", type = \"bool\" }]\n";
    let cases: &[(&str, &str)] = &[
        (
            "[yojimbo]\nmessages = [\"M\"]\nmtu = 3",
            "3:1: unknown key \"mtu\" in [yojimbo]",
        ),
        (
            "[yojimbo]\nchannels = []\nmessages = [\"M\"]",
            "has 0 channels, not within 1..=64",
        ),
        (
            "[yojimbo]\nmessages = []",
            "has 0 message types, not within 1..=65536",
        ),
        (
            "[yojimbo]\nchannels = 3\nmessages = [\"M\"]",
            "channels must be an array",
        ),
        (
            "[yojimbo]\nmax_packet_size = 0\nmessages = [\"M\"]",
            "2:19: [yojimbo] max_packet_size = 0 is not within 1..=1048576",
        ),
        (
            "[yojimbo]\nmax_packet_size = 2000000\nmessages = [\"M\"]",
            "max_packet_size = 2000000 is not within 1..=1048576",
        ),
        (
            "[yojimbo]\nfragment_size = 70000\nmessages = [\"M\"]",
            "fragment_size = 70000 is not within 1..=65536",
        ),
        (
            "[yojimbo]\nmax_fragments = 257\nmessages = [\"M\"]",
            "max_fragments = 257 is not within 1..=256",
        ),
        (
            "[yojimbo]\nmax_packet_size = 16384\nmessages = [\"M\"]",
            "max_fragments = 8 cannot hold a packet of max_packet_size = 16384 in fragments of 1024 bytes (yojimbo's ClientServerConfig::Validate refuses it: set max_fragments = 16)",
        ),
        (
            "[yojimbo]\nmax_packet_size = \"big\"\nmessages = [\"M\"]",
            "max_packet_size must be an integer",
        ),
        (
            "[yojimbo]\nchannels = [{ type = \"fast\" }]\nmessages = [\"M\"]",
            "2:22: [yojimbo] channel 0 type \"fast\" is not a yojimbo channel type",
        ),
        (
            "[yojimbo]\nchannels = [{}, { kind = 1 }]\nmessages = [\"M\"]",
            "unknown key \"kind\" in [yojimbo] channel 1",
        ),
        (
            "[yojimbo]\nchannels = [{ max_messages_per_packet = 0 }]\nmessages = [\"M\"]",
            "channel 0 max_messages_per_packet = 0 is not within 1..=4096",
        ),
        (
            "[yojimbo]\nchannels = [{ max_messages_per_packet = 4097 }]\nmessages = [\"M\"]",
            "max_messages_per_packet = 4097 is not within 1..=4096",
        ),
        (
            "[yojimbo]\nchannels = [{ max_block_size = 16777217 }]\nmessages = [\"M\"]",
            "channel 0 max_block_size = 16777217 is not within 1..=16777216",
        ),
        (
            "[yojimbo]\nchannels = [{ max_block_size = 100, block_fragment_size = 101 }]\nmessages = [\"M\"]",
            "block_fragment_size = 101 is not within 1..=100",
        ),
        (
            "[yojimbo]\nchannels = [{ disable_blocks = 1 }]\nmessages = [\"M\"]",
            "channel 0 disable_blocks must be true or false",
        ),
        (
            "[yojimbo]\nchannels = [3]\nmessages = [\"M\"]",
            "[yojimbo] channel 0 must be a table",
        ),
        ("[yojimbo]\nchannels = [{}]", "[yojimbo] has no `messages`"),
        (
            "[yojimbo]\nmessages = [\"Nope\"]",
            "message type \"Nope\": body \"Nope\" is not a struct defined in this file",
        ),
        (
            "[yojimbo]\nmessages = [{ name = \"A\", body = \"Nope\" }]",
            "body \"Nope\" is not a struct",
        ),
        (
            "[yojimbo]\nmessages = [{ name = \"A\", body = true }]",
            "a message body is a struct name or false",
        ),
        (
            "[yojimbo]\nmessages = [{ body = \"M\" }]",
            "message type has no name",
        ),
        (
            "[yojimbo]\nmessages = [{ name = \"M\", block = \"yes\" }]",
            "block must be true or false",
        ),
        (
            "[yojimbo]\nmessages = [{ name = \"M\", size = 3 }]",
            "unknown key \"size\" in a [yojimbo] message type",
        ),
        (
            "[yojimbo]\nmessages = [\"M\", { name = \"M\", body = false }]",
            "duplicate message type name \"M\"",
        ),
        (
            "[yojimbo]\nmessages = [{ name = \"a.b\", body = false }]",
            "message type name \"a.b\" is not a plain identifier",
        ),
        (
            "[yojimbo]\nmessages = [3]",
            "neither a struct name nor a table",
        ),
        ("[yojimbo]\nmessages = \"M\"", "messages must be an array"),
        (
            "[yojimbo]\nmessages = [\"E\"]\n[struct.E]\nfields = [{ type = \"end\" }]",
            "`end` inside the body of message type \"E\"",
        ),
        ("yojimbo = 3", "[yojimbo] must be a table"),
        (
            "[yojimb]\nmessages = [\"M\"]",
            "unknown section [yojimb] (expected [protocol], [struct.NAME], [enum.NAME], [union.NAME], [batch] or [yojimbo])",
        ),
        // A [batch] still needs [protocol] (its exported dissector is named after it).
        (
            "[yojimbo]\nmessages = [\"M\"]\n[batch]\nmessages = []",
            "no [protocol] section",
        ),
        (
            "[struct.N]\nfields = [{ name = \"x\", type = \"bool\" }]",
            "no [protocol] section (add `[protocol]` with name, id, mtu and packets; a schema of a yojimbo game has a [yojimbo] section instead)",
        ),
    ];
    for (text, want) in cases {
        let text = format!("{text}{body}");
        let err = match Schema::from_toml(&text, "y.toml") {
            Ok(_) => panic!("loaded: {text}"),
            Err(e) => e.to_string(),
        };
        assert!(err.starts_with("y.toml:"), "{err}");
        assert!(err.contains(want), "{text}\n got: {err}\nwant: {want}");
        assert!(!err.contains('\n'), "{err}");
    }
}

// ---- bit_run: a length chosen by a table on a field ----------------------------------------

const RUNS: &str = r#"
[protocol]
name = "runs"
id = 7
mtu = 1200
packets = ["P"]

[struct.Head]
fields = [{ name = "k", type = "int", min = -5, max = 100 }]

[struct.P]
fields = [
  { type = "include", struct = "Head" },
  { name = "pad", type = "bit_run", by = "k", table = [0, 3, 32, 70] },
  { name = "tail", type = "bool" },
]
"#;

fn runs() -> Schema {
    Schema::from_toml(RUNS, "runs.toml").unwrap()
}

fn round_trip(schema: &Schema, json: serde_json::Value) -> (Vec<u8>, bitlens_codec::Trace) {
    let value = schema.value_from_json("P", &json).unwrap();
    let mut buf = [0u8; 64];
    let n = schema.write("P", &value, &mut buf).unwrap();
    let (t, back) = schema.read(&buf[..n]).unwrap();
    assert_eq!((t, &back), (0, &value));
    assert_eq!(back.to_string(), json.to_string());
    (buf[..n].to_vec(), schema.trace(&buf[..n]).1)
}

#[test]
fn a_bit_run_is_its_tables_count_in_32_bit_groups_then_the_rest() {
    let schema = runs();
    // k = 3 picks 70 bits: two groups of 32, then 6.
    let json = serde_json::json!({"k": 3, "pad": [1, 4294967295u64, 63], "tail": true});
    let (_, trace) = round_trip(&schema, json.clone());
    assert!(trace.error.is_none());
    let f = |p: &str| trace.get(p).unwrap_or_else(|| panic!("no {p}"));
    assert_eq!(f("pad").bits, 70);
    let groups: Vec<(usize, Value)> = (0..3)
        .map(|i| {
            (
                f(&format!("pad[{i}]")).bits,
                f(&format!("pad[{i}]")).value.clone(),
            )
        })
        .collect();
    assert_eq!(
        groups,
        [
            (32, Value::Int(1)),
            (32, Value::Int(4294967295)),
            (6, Value::Int(63))
        ]
    );
    assert!(trace.get("pad[3]").is_none());
    let v = schema.value_from_json("P", &json).unwrap();
    // CRC 32 + k 7 + 70 + tail 1 + the end check (32 after alignment: 110 -> 112).
    assert_eq!(schema.count("P", &v).unwrap(), 32 + 7 + 70 + 1 + 2 + 32);
    // The index is taken modulo the table, never negative: -1 -> 3 (70 bits), 5 -> 1 (3 bits),
    // 0 -> no bits at all, 2 -> one whole group.
    round_trip(
        &schema,
        serde_json::json!({"k": -1, "pad": [0, 0, 0], "tail": false}),
    );
    let (_, t) = round_trip(
        &schema,
        serde_json::json!({"k": 5, "pad": [7], "tail": false}),
    );
    assert_eq!(t.get("pad[0]").unwrap().bits, 3);
    let (_, t) = round_trip(
        &schema,
        serde_json::json!({"k": 0, "pad": [], "tail": true}),
    );
    assert_eq!(t.get("pad").unwrap().bits, 0);
    round_trip(
        &schema,
        serde_json::json!({"k": 2, "pad": [9], "tail": true}),
    );
}

#[test]
fn a_bit_run_refuses_a_wrong_value_and_stops_at_the_end_of_the_data() {
    let schema = runs();
    let mut buf = [0u8; 64];
    let write = |json: serde_json::Value, buf: &mut [u8]| {
        let v = schema.value_from_json("P", &json).unwrap();
        schema.write("P", &v, buf).unwrap_err().to_string()
    };
    let e = write(
        serde_json::json!({"k": 3, "pad": [1], "tail": true}),
        &mut buf,
    );
    assert!(
        e.contains("a run of 70 bits is 3 groups (32 bits each, then the rest), not 1"),
        "{e}"
    );
    assert!(e.contains("pad"), "{e}");
    let e = write(
        serde_json::json!({"k": 1, "pad": [8], "tail": true}),
        &mut buf,
    );
    assert!(e.contains("pad[0]"), "{e}");
    let e = schema
        .value_from_json("P", &serde_json::json!({"k": 1, "pad": 3, "tail": true}))
        .unwrap_err();
    assert!(e.contains("a list of bit groups"), "{e}");

    // k = 3 (raw 8 in 7 bits) and 9 more bits: the first group is past the end; the read
    // stops there, naming the group, without sizing anything by the run's length.
    let data = [8u8, 0];
    let mut s = bitlens_codec::read::ReadStream::new(&data);
    let e = schema
        .serialize_struct(&mut s, "P", &DynValue::Null)
        .unwrap_err();
    assert_eq!(e.bit(), 7);
    assert_eq!(e.field().to_string(), "pad[0]");
    assert!(
        matches!(
            e.kind(),
            bitlens_codec::ErrorKind::PastEnd {
                needed: 32,
                remaining: 9
            }
        ),
        "{e}"
    );
    let mut s = bitlens_codec::read::TraceStream::new(&data);
    assert!(
        schema
            .serialize_struct(&mut s, "P", &DynValue::Null)
            .is_err()
    );
}

#[test]
fn bit_run_refusals_name_the_key() {
    let head = "[protocol]\nname = \"runs\"\nid = 7\nmtu = 1200\npackets = [\"P\"]\n[struct.P]\nfields = [\n{ name = \"k\", type = \"u8\" },\n{ name = \"b\", type = \"bool\" },\n";
    let cases: &[(&str, &str)] = &[
        (
            "{ name = \"r\", type = \"bit_run\", table = [1] }",
            "10:1: bit_run field without `by`",
        ),
        (
            "{ name = \"r\", type = \"bit_run\", by = \"k\" }",
            "bit_run field without `table`",
        ),
        (
            "{ name = \"r\", type = \"bit_run\", by = \"k\", table = 3 }",
            "`table` must be an array of bit counts",
        ),
        (
            "{ name = \"r\", type = \"bit_run\", by = \"k\", table = [] }",
            "`table` is empty",
        ),
        (
            "{ name = \"r\", type = \"bit_run\", by = \"k\", table = [1, -1] }",
            "bit count -1 is not within 0..=4294967295",
        ),
        (
            "{ name = \"r\", type = \"bit_run\", by = \"k\", table = [4294967296] }",
            "bit count 4294967296 is not within",
        ),
        (
            "{ name = \"r\", type = \"bit_run\", by = \"k\", table = [\"1\"] }",
            "a bit count must be an integer",
        ),
        (
            "{ name = \"r\", type = \"bit_run\", by = \"z\", table = [1] }",
            "no earlier field \"z\" in this struct",
        ),
        (
            "{ name = \"r\", type = \"bit_run\", by = \"b\", table = [1] }",
            "\"b\" is not an integer field that is always present",
        ),
        (
            "{ name = \"g\", type = \"u8\", if = \"b\" },\n{ name = \"r\", type = \"bit_run\", by = \"g\", table = [1] }",
            "\"g\" is not an integer field that is always present",
        ),
        (
            "{ name = \"r\", type = \"bit_run\", by = \"r\", table = [1] }",
            "no earlier field \"r\"",
        ),
        (
            "{ name = \"r\", type = \"bit_run\", by = \"k\", table = [1], len = 3 }",
            "unknown key \"len\" for a field of type bit_run (expected one of name, type, if, unless, doc, by, table)",
        ),
        (
            "{ name = \"r\", type = \"array\", max_len = 3, element = { type = \"bit_run\", by = \"k\", table = [1] } }",
            "an array element cannot be a bit_run",
        ),
    ];
    for (field, want) in cases {
        let text = format!("{head}{field}\n]\n");
        let err = match Schema::from_toml(&text, "r.toml") {
            Ok(_) => panic!("loaded: {text}"),
            Err(e) => e.to_string(),
        };
        assert!(err.contains(want), "{field}\n got: {err}\nwant: {want}");
        assert!(!err.contains('\n'), "{err}");
    }
}

#[test]
fn the_wireshark_export_takes_a_bit_run_and_refuses_what_lua_cannot_do() {
    use bitlens_schema::WiresharkOptions;
    let lua = runs().wireshark_lua(&WiresharkOptions::default()).unwrap();
    assert!(lua.contains("local function bitrun(R, N, leaf, by, T)"));
    assert!(lua.contains("bitrun(R, F[2], \"pad\", v[1], "), "{lua}");
    // A length picked by a 64-bit field: Lua numbers cannot take it modulo the table exactly.
    let wide = RUNS.replace(
        "{ name = \"k\", type = \"int\", min = -5, max = 100 }",
        "{ name = \"k\", type = \"u64\" }",
    );
    let wide = Schema::from_toml(&wide, "w.toml").unwrap();
    let e = wide
        .wireshark_lua(&WiresharkOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("bit_run \"pad\" takes its length from a field of more than 51 bits"),
        "{e}"
    );
    // The yojimbo layer is inside netcode's encryption: a schema of only [yojimbo] exports nothing.
    let e = game()
        .wireshark_lua(&WiresharkOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("no [protocol] section") && e.contains("cannot decrypt"),
        "{e}"
    );
    assert!(!e.contains('\n'));
}

/// SCHEMA.md's `[yojimbo]` example loads (with its body structs) and says what it claims.
#[test]
fn the_documented_example_loads() {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../SCHEMA.md")).unwrap();
    let from = doc.find("## yojimbo games").unwrap();
    let start = from + doc[from..].find("```toml\n").unwrap() + 8;
    let end = start + doc[start..].find("```").unwrap();
    let text = format!(
        "{}\n[struct.TestMessage]\nfields = [{{ name = \"sequence\", type = \"bits\", bits = 16 }}]\n[struct.TestBlockMessage]\nfields = [{{ name = \"sequence\", type = \"bits\", bits = 16 }}]\n[struct.SomeStruct]\nfields = [{{ name = \"x\", type = \"bool\" }}]\n",
        &doc[start..end]
    );
    let schema = Arc::new(Schema::from_toml(&text, "SCHEMA.md").unwrap());
    let cfg = yojimbo::config(&schema).unwrap();
    assert_eq!(cfg.reliable.max_fragments, 16);
    assert_eq!(cfg.channels[0].kind, ChannelType::UnreliableUnordered);
    assert_eq!(cfg.channels[1].max_block_size, 10240);
    let section = yojimbo::section(&schema).unwrap();
    let bodies: Vec<Option<&str>> = section.messages.iter().map(|m| m.body.as_deref()).collect();
    assert_eq!(
        bodies,
        [
            Some("TestMessage"),
            Some("TestBlockMessage"),
            None,
            Some("SomeStruct")
        ]
    );
    assert!(section.messages[1].block);
}
