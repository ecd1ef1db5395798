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
