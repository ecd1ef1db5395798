//! What writers that follow serialize 1.0 (or seed 000's smallest-three writer) send, read as
//! the standard says: compressed float codes between f32 values, near-tie quaternions and
//! relative integers are accepted (issue 21's reproductions: bitlens once refused them as
//! `non_canonical`); strings with a NUL or invalid UTF-8 are refused.

use bitlens_codec::{read_packet, trace_packet, write_packet};
use bitlens_schema::{DynStruct, DynValue, Schema};
use bitlens_testkit::demo::{DemoPacket, ORIENTATION};
use bitlens_testkit::fuzzing::quantize::standard_value;
use bitlens_testkit::fuzzing::schema::{DEMO, same_verdict};
use bitlens_testkit::fuzzing::{assert_reencodes, near_tie_spans};

/// A one-type protocol with id 0x534B524D and the given fields.
fn one_field(field: &str) -> Schema {
    let text = format!(
        "[protocol]\nname = \"issue21\"\nid = 0x534B524D\nmtu = 1200\npackets = [\"P\"]\n\n\
         [struct.P]\nfields = [ {field} ]\n"
    );
    Schema::from_toml(&text, "issue21.toml").expect("the schema loads")
}

fn hex(s: &str) -> Vec<u8> {
    hex::decode(s).expect("hex")
}

fn field(value: &DynValue, name: &str) -> DynValue {
    match value {
        DynValue::Struct(s) => s.get(name).cloned().expect("the field"),
        other => panic!("not a struct: {other:?}"),
    }
}

#[test]
fn a_compressed_float_code_between_f32_values_is_accepted_and_written() {
    let s = one_field(
        "{ name = \"v\", type = \"compressed_float\", min = 0.0, max = 12582911.0, resolution = 1.0 }",
    );
    // The standard's writer: 7991359.5 -> n * M = 7991359.5 -> + 0.5 = 7991360.
    let packet = hex("d3c1a77e40f079e2ac0899");
    let (_, value) = s.read(&packet).expect("the standard's code is accepted");
    // The standard's value for the code: (7991360 / M) * 12582911 + 0, each step in f32.
    let want = standard_value(0.0, 12_582_911.0, 1.0, 7_991_360);
    assert_eq!(want, 7_991_360.5);
    assert_eq!(field(&value, "v"), DynValue::F32(want));
    let v = DynValue::Struct(DynStruct::new([("v", DynValue::F32(7_991_359.5))]));
    let mut buf = [0u8; 64];
    let n = s.write("P", &v, &mut buf).expect("writes");
    assert_eq!(&buf[..n], &packet[..], "bitlens writes the standard's code");
    // What bitlens wrote before (7991361) is a code up to M too: accepted, with its value.
    let (_, old) = s.read(&hex("67cad0d841f079e2ac0899")).expect("accepted");
    let want = standard_value(0.0, 12_582_911.0, 1.0, 7_991_361);
    assert_eq!(field(&old, "v"), DynValue::F32(want));
    // The range is not stable, and the schema says so when it loads.
    assert_eq!(s.warnings().len(), 1, "{:?}", s.warnings());
    let w = s.warnings()[0].to_string();
    assert!(
        w.starts_with("issue21.toml:8:59: ")
            && w.contains("warning: compressed float 0..=12582911 at 1 is not stable")
            && w.contains("a resolution of 12 or coarser is stable"),
        "{w}"
    );
}

#[test]
fn the_demo_rigid_body_with_a_near_tie_decodes() {
    let packet = hex("bd6750af2343868c8c251930ff1d778eb38dc2e2ac0899");
    let compiled = read_packet::<DemoPacket>(&packet).expect("the compiled reader accepts");
    let DemoPacket::RigidBody(body) = &compiled else {
        panic!("{compiled:?}");
    };
    let q = body.orientation;
    let norm: f32 = q.iter().map(|c| c * c).sum();
    assert!((norm - 1.0).abs() < 1e-2, "{q:?}");
    let (_, value) = DEMO.read(&packet).expect("the schema reader accepts");
    assert_eq!(field(&value, "orientation"), DynValue::Quat(q));
    same_verdict(&packet);
    // Written back, only the quaternion (and the CRC) differ: the seed's writer picks the
    // largest of the values read, a different component.
    let (_, trace) = trace_packet::<DemoPacket>(&packet);
    let spans = near_tie_spans(&trace, &ORIENTATION);
    assert_eq!(spans.len(), 1, "one near tie");
    let mut p = compiled.clone();
    let mut buf = [0u8; 64];
    let n = write_packet(&mut p, &mut buf).expect("writes");
    assert_ne!(&buf[..n], &packet[..]);
    assert_reencodes(&packet, &buf[..n], &trace);
}

#[test]
fn a_ten_bit_quaternion_with_a_near_tie_decodes() {
    let s = one_field("{ name = \"q\", type = \"quaternion\", bits = 10 }");
    let packet = hex("12091539c0fc77dce2ac0899");
    let (_, value) = s.read(&packet).expect("accepted");
    let DynValue::Quat(q) = field(&value, "q") else {
        panic!("{value:?}");
    };
    // normalize(0.53, 0.42, 0.53, 0.51): x was sent as the largest, z comes out larger.
    let want = [0.53f32, 0.42, 0.53, 0.51];
    let norm = want.iter().map(|c| c * c).sum::<f32>().sqrt();
    for (got, w) in q.iter().zip(want) {
        assert!((got - w / norm).abs() < 2e-3, "{q:?}");
    }
    assert!(q[2] > q[0], "{q:?}");
    let (_, trace) = s.trace(&packet);
    assert_eq!(
        trace.get("q.largest").map(|f| f.value.clone()),
        Some(bitlens_codec::Value::Int(0))
    );
}

#[test]
fn steps_finer_than_f32_resolves_warn_and_stable_ranges_do_not() {
    // Steps of half an ulp at 1000: two codes can share a value, so some cannot come back.
    let s = one_field(
        "{ name = \"v\", type = \"compressed_float\", min = 1000.0, max = 1001.0, resolution = 3e-5 }",
    );
    let w: Vec<String> = s.warnings().iter().map(ToString::to_string).collect();
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].contains(
            "is not stable (some of its 33334 codes read back as a value that writes another code)"
        ),
        "{w:?}"
    );
    // Its suggestion is stable.
    let ok = one_field(
        "{ name = \"v\", type = \"compressed_float\", min = 1000.0, max = 1001.0, resolution = 0.00025 }",
    );
    assert!(ok.warnings().is_empty(), "{:?}", ok.warnings());
    assert!(
        w[0].contains("a resolution of 0.00025 or coarser is stable"),
        "{w:?}"
    );
    assert!(DEMO.warnings().is_empty(), "{:?}", DEMO.warnings());
}

/// Reads `data` as one `int_relative` after `previous`.
fn read_relative(data: &[u8], previous: i64) -> bitlens_codec::Result<i64> {
    use bitlens_codec::{ReadStream, Stream};
    let mut current = 0;
    ReadStream::new(data).int_relative("v", previous, &mut current)?;
    Ok(current)
}

/// The four disagreements with serialize.rs that issue 21 lists, settled by serialize 1.0's
/// `int_relative`: i32 values, strictly increasing, no wrapping, any absolute value above
/// `previous` accepted.
#[test]
fn int_relative_follows_the_standard() {
    use bitlens_codec::{ErrorKind, Stream, WriteStream};
    // The absolute tier carries 150 after 100 (a tier could have): accepted.
    assert_eq!(read_relative(&hex("8025000000"), 100), Ok(150));
    // The absolute tier is two's complement: 0xCF389048 is -482459360, not above 941.
    let e = read_relative(&hex("004890cf38"), 941).unwrap_err();
    assert!(
        matches!(
            e.kind(),
            ErrorKind::OutOfRange {
                value: -482_459_360,
                ..
            }
        ),
        "{e}"
    );
    // Negative values write, as the peer writes them.
    let mut buf = [0u8; 8];
    let mut w = WriteStream::new(&mut buf);
    w.int_relative("v", -475_555_146, &mut -475_384_423)
        .expect("writes");
    let n = w.finish();
    assert_eq!(&buf[..n], &hex("40668dea38")[..]);
    assert_eq!(read_relative(&buf[..n], -475_555_146), Ok(-475_384_423));
    // No wrapping: after i32::MAX, d = 1 is refused (the peer gives i32::MIN).
    let e = read_relative(&[0x01], i64::from(i32::MAX)).unwrap_err();
    assert!(
        matches!(
            e.kind(),
            ErrorKind::OutOfRange {
                value: 2_147_483_648,
                ..
            }
        ),
        "{e}"
    );
    // And a writer refuses what a reader would.
    let mut w = WriteStream::new(&mut buf);
    assert!(w.int_relative("v", 0, &mut 2_147_483_648).is_err());
    assert!(w.int_relative("v", 5, &mut 5).is_err());
    let e = w.int_relative("v", -2_147_483_649, &mut 0).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::InvalidArgument(_)), "{e}");
}

/// serialize 1.0's two string refusals, with the length as `int(len, 0, buffer_size - 1)`.
#[test]
fn strings_refuse_a_nul_and_invalid_utf8() {
    use bitlens_codec::{ErrorKind, ReadStream, Stream, WriteStream};
    let read = |data: &[u8], max_len: usize| {
        let mut s = String::new();
        ReadStream::new(data)
            .string("s", &mut s, max_len)
            .map(|()| s)
    };
    // buffer_size 4 (max_len 3): length 1 in 2 bits, align, one NUL byte.
    let e = read(&[0x01, 0x00], 3).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::InteriorNul);
    assert_eq!((e.bit(), e.field()), (8, "s.utf8"), "{e}");
    // The NUL's own bit, further in.
    let e = read(&[0x03, b'a', b'b', 0], 3).unwrap_err();
    assert_eq!((e.kind(), e.bit()), (&ErrorKind::InteriorNul, 24), "{e}");
    let e = read(&[0x01, 0xFF], 3).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::InvalidUtf8);
    assert_eq!(read(&[0x01, b'a'], 3), Ok("a".to_owned()));
    // A writer refuses a NUL too.
    let mut buf = [0u8; 8];
    let e = WriteStream::new(&mut buf)
        .string("s", &mut "a\0".to_owned(), 3)
        .unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::InteriorNul);
    // The length is serialize_int(len, 0, buffer_size - 1): buffer_size 4 takes 2 bits.
    let mut w = WriteStream::new(&mut buf);
    w.string("s", &mut "abc".to_owned(), 3).unwrap();
    assert_eq!(w.bits_written(), 2 + 6 + 24);
}
