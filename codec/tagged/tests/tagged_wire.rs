//! Golden vectors from seed 001, error cases with offsets and field ids, and hostile input.

use std::collections::BTreeMap;

use bitlens_tagged::{
    self as tagged, self, Error, MAX_DEPTH, Reporter, Tagged, WireType, raw, varint::write_varint,
};
use bitlens_testkit::fuzzing::tagged::{Rich, SaveV3};

#[derive(Tagged, Default, Debug, PartialEq)]
struct Bar {
    #[tag(0)]
    a: u32,
    #[tag(1)]
    b: u8,
    #[tag(2)]
    c: u8,
}

/// Seed 001: "Bar{ a: 129, b: 255, c: 6} is serialized to 0x02 80 01 00 FF 00 06".
#[test]
fn seed_bar_fields() {
    let doc = tagged::encode_document(&mut Bar {
        a: 129,
        b: 255,
        c: 6,
    })
    .unwrap();
    assert_eq!(doc[0], 7, "size prefix");
    assert_eq!(&doc[1..], [0x02, 0x80, 0x01, 0x00, 0xFF, 0x00, 0x06]);
    assert_eq!(
        tagged::decode_document::<Bar>(&doc).unwrap(),
        Bar {
            a: 129,
            b: 255,
            c: 6
        }
    );
}

#[test]
fn seed_varints_as_field_values() {
    // a = 16511 is FF 7F, a = 16512 is 80 80 00 (seed 001's reduced-redundancy table).
    for (a, bytes) in [
        (127u32, &[0x7F][..]),
        (128, &[0x80, 0x00]),
        (16511, &[0xFF, 0x7F]),
        (16512, &[0x80, 0x80, 0x00]),
    ] {
        let doc = tagged::encode_document(&mut Bar { a, b: 0, c: 0 }).unwrap();
        assert_eq!(&doc[2..], bytes, "a = {a}");
        assert_eq!(tagged::decode_document::<Bar>(&doc).unwrap().a, a);
    }
}

#[test]
fn zero_fields_are_omitted_and_ids_delta_coded() {
    // Only c: first written field, so its delta is its id, 2: header 2 << 2 | byte = 08.
    let doc = tagged::encode_document(&mut Bar { a: 0, b: 0, c: 6 }).unwrap();
    assert_eq!(doc, [0x02, 0x08, 0x06]);
    assert_eq!(
        tagged::encode_document(&mut Bar::default()).unwrap(),
        [0x00]
    );
    assert_eq!(
        tagged::decode_document::<Bar>(&[0x00]).unwrap(),
        Bar::default()
    );
}

#[derive(Tagged, Default, Debug, PartialEq)]
struct Kinds {
    #[tag(0)]
    flag: bool,
    #[tag(1)]
    neg: i8,
    #[tag(2)]
    signed: i32,
    #[tag(3)]
    float: f32,
    #[tag(4)]
    text: String,
    #[tag(5)]
    list: Vec<u16>,
    #[tag(6)]
    fixed: [u8; 2],
    #[tag(7)]
    present: Option<u64>,
    #[tag(8)]
    map: BTreeMap<u8, bool>,
}

#[test]
fn every_wire_type_layout() {
    let mut v = Kinds {
        flag: true,
        neg: -2,
        signed: -3,
        float: 1.5,
        text: "hi".into(),
        list: vec![1, 300],
        fixed: [9, 0],
        present: Some(0),
        map: [(4, true)].into_iter().collect(),
    };
    let doc = tagged::encode_document(&mut v).unwrap();
    let mut expect = vec![
        0x00, 0x01, // 0 flag: byte 1
        0x00, 0xFE, // 1 neg: byte, two's complement
        0x02, 0x05, // 2 signed: varint, zig-zag(-3) = 5
        0x01, 0, 0, 0, 0, 0, 0, 0xF8, 0x3F, // 3 float: octet, 1.5 as f64 LE
        0x03, 0x02, b'h', b'i', // 4 text: sized
        0x03, 0x03, 0x01, 0x81, 0x2C, // 5 list: sized, varints 1 and 300 (= 81 2C)
        0x03, 0x02, 0x09, 0x00, // 6 fixed: sized, two bytes
        0x02, 0x00, // 7 present: Some(0) is written
        0x03, 0x05, 0x04, 0x00, 0x04, 0x00, 0x01, // 8 map: [pair {0: 4, 1: true}]
    ];
    expect.insert(0, expect.len() as u8);
    assert_eq!(doc, expect);
    assert_eq!(tagged::decode_document::<Kinds>(&doc).unwrap(), v);
}

#[test]
fn float_bits_survive() {
    #[derive(Tagged, Default, Debug)]
    struct F {
        #[tag(0)]
        d: f64,
        #[tag(1)]
        s: f32,
    }
    for bits in [0x8000_0000_0000_0000u64, 0x7FF8_0000_0000_0001, 1] {
        let mut f = F {
            d: f64::from_bits(bits),
            s: -0.0,
        };
        let doc = tagged::encode_document(&mut f).unwrap();
        let back = tagged::decode_document::<F>(&doc).unwrap();
        assert_eq!(back.d.to_bits(), bits);
        assert_eq!(back.s.to_bits(), (-0.0f32).to_bits());
    }
}

#[test]
fn unknown_fields_of_every_wire_type_are_skipped() {
    // ids 0..=3 unknown to Only4 (byte, octet, varint, sized), then id 4 = 42.
    #[derive(Tagged, Default, Debug, PartialEq)]
    struct Only4 {
        #[tag(4)]
        x: u32,
    }
    let body = [
        0x00, 0xAA, // 0 byte
        0x01, 1, 2, 3, 4, 5, 6, 7, 8, // 1 octet
        0x02, 0xFF, 0x7F, // 2 varint
        0x03, 0x02, 0xFF, 0xFF, // 3 sized
        0x02, 42, // 4 varint
        0x7F, 1, 2, 3, 4, 5, 6, 7, 8, // an unknown octet after the last known id
    ];
    let mut doc = vec![body.len() as u8];
    doc.extend_from_slice(&body);
    assert_eq!(
        tagged::decode_document::<Only4>(&doc).unwrap(),
        Only4 { x: 42 }
    );
}

fn doc_of(body: &[u8]) -> Vec<u8> {
    let mut doc = Vec::new();
    write_varint(&mut doc, body.len() as u64);
    doc.extend_from_slice(body);
    doc
}

fn read_err<T: Tagged + std::fmt::Debug>(body: &[u8]) -> Error {
    tagged::decode_document::<T>(&doc_of(body)).unwrap_err()
}

#[test]
fn errors_carry_offset_and_field_id() {
    // Wrong wire type: field 0 of Bar is a varint, here a byte.
    let e = read_err::<Bar>(&[0x00, 0x05]);
    assert_eq!(
        e,
        Error::WireMismatch {
            offset: 1,
            field: Some(0),
            expected: WireType::Varint,
            found: WireType::Byte
        }
    );
    assert_eq!(
        e.to_string(),
        "byte 1 (field 0): wire type byte where the field's type uses varint"
    );

    // A sized length far beyond the input, before any allocation.
    let e = read_err::<Kinds>(&[0x13, 0x80, 0x80, 0x80, 0x80, 0x00, 0x61]);
    assert!(
        matches!(
            e,
            Error::SizedTooLong {
                offset: 2,
                field: Some(4),
                remaining: 1,
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(e.offset(), 2);
    assert_eq!(e.field(), Some(4));

    // Out of range: 70000 does not fit u16 (list element of field 5).
    let e = read_err::<Kinds>(&[0x17, 0x03, 0x83, 0xA1, 0x70]);
    assert!(
        matches!(
            e,
            Error::OutOfRange {
                offset: 3,
                field: Some(5),
                ty: "u16",
                ..
            }
        ),
        "{e:?}"
    );

    // Invalid bool byte.
    let e = read_err::<Kinds>(&[0x00, 0x02]);
    assert_eq!(
        e.to_string(),
        "byte 2 (field 0): bool byte is 0x02, expected 0x00 or 0x01"
    );

    // Invalid UTF-8 in field 4, at its second byte.
    let e = read_err::<Kinds>(&[0x13, 0x02, b'a', 0xFF]);
    assert_eq!(
        e,
        Error::InvalidUtf8 {
            offset: 4,
            field: Some(4)
        }
    );

    // Fixed array of 2 holding 3.
    let e = read_err::<Kinds>(&[0x1B, 0x03, 1, 2, 3]);
    assert!(matches!(
        e,
        Error::ArrayLength {
            expected: 2,
            found: 3,
            field: Some(6),
            ..
        }
    ));

    // Fixed array of 2 holding 1 (read in place since issue 30: still refused).
    let e = read_err::<Kinds>(&[0x1B, 0x01, 1]);
    assert!(matches!(
        e,
        Error::ArrayLength {
            expected: 2,
            found: 1,
            field: Some(6),
            ..
        }
    ));

    // Varint header too long and overflowing.
    let e = read_err::<Bar>(&[0x80; 11]);
    assert_eq!(
        e,
        Error::VarintTooLong {
            offset: 1,
            field: None
        }
    );
    let e = read_err::<Bar>(&[0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F]);
    assert_eq!(
        e,
        Error::VarintOverflow {
            offset: 1,
            field: None
        }
    );

    // Ids overflowing u64 through deltas.
    // Each header: the largest delta (2^62 - 1), wire type byte; the fifth id passes u64::MAX.
    let header = (u64::MAX >> 2) << 2;
    let mut body = Vec::new();
    for _ in 0..5 {
        write_varint(&mut body, header);
        body.push(0);
    }
    let e = read_err::<Bar>(&body);
    assert!(matches!(e, Error::IdOverflow { .. }), "{e:?}");

    // Bytes after the document.
    let mut doc = doc_of(&[]);
    doc.push(0);
    assert_eq!(
        tagged::decode_document::<Bar>(&doc)
            .unwrap_err()
            .to_string(),
        "byte 1 (document): 1 bytes follow the end of the document"
    );
}

#[test]
fn display_matches_the_documented_shape() {
    let e = Error::SizedTooLong {
        offset: 17,
        field: Some(3),
        len: 4000,
        remaining: 12,
    };
    assert_eq!(
        e.to_string(),
        "byte 17 (field 3): sized length 4000 exceeds the 12 bytes that remain"
    );
}

/// A recursive type: its nesting is bounded by the data, so by MAX_DEPTH.
#[derive(Tagged, Default, Debug)]
struct Node {
    #[tag(0)]
    children: Vec<Node>,
}

fn deep_document(levels: usize) -> Vec<u8> {
    let mut body: Vec<u8> = Vec::new();
    for _ in 0..levels {
        // node = { field 0: sized [ sized(node body) ] }
        let mut elem = Vec::new();
        write_varint(&mut elem, body.len() as u64);
        elem.extend_from_slice(&body);
        let mut next = vec![0x03];
        write_varint(&mut next, elem.len() as u64);
        next.extend_from_slice(&elem);
        body = next;
    }
    doc_of(&body)
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    // 31 nodes nest 62 sized regions (plus the document's): fine.
    assert!(tagged::decode_document::<Node>(&deep_document(31)).is_ok());
    let e = tagged::decode_document::<Node>(&deep_document(5000)).unwrap_err();
    assert!(
        matches!(
            e,
            Error::TooDeep {
                limit: MAX_DEPTH,
                field: Some(0),
                ..
            }
        ),
        "{e:?}"
    );
    // The schema-less walk stops opening structs at the limit and shows bytes instead.
    assert!(raw::parse_document(&deep_document(5000)).is_ok());

    // Writing a value nested too deep is an error too.
    let mut node = Node::default();
    for _ in 0..40 {
        node = Node {
            children: vec![node],
        };
    }
    let e = tagged::encode_document(&mut node).unwrap_err();
    assert!(matches!(e, Error::TooDeep { .. }), "{e:?}");
}

#[test]
fn every_prefix_of_a_document_is_rejected() {
    let docs = [
        tagged::encode_document(&mut SaveV3::example()).unwrap(),
        tagged::encode_document(&mut Bar {
            a: 129,
            b: 255,
            c: 6,
        })
        .unwrap(),
    ];
    for doc in docs {
        for n in 0..doc.len() {
            assert!(
                tagged::decode_document::<SaveV3>(&doc[..n]).is_err(),
                "prefix {n}"
            );
            assert!(
                tagged::decode_document::<Rich>(&doc[..n]).is_err(),
                "prefix {n}"
            );
            assert!(raw::parse_document(&doc[..n]).is_err(), "prefix {n}");
        }
    }
}

#[test]
fn report_out_of_order_is_an_error() {
    #[derive(Default, Debug)]
    struct Backwards {
        a: u8,
        b: u8,
    }
    impl Tagged for Backwards {
        fn report<R: Reporter>(&mut self, r: &mut R) -> Result<(), Error> {
            r.field(2, "a", &mut self.a)?;
            r.field(1, "b", &mut self.b)
        }
    }
    let e = tagged::encode_document(&mut Backwards { a: 1, b: 1 }).unwrap_err();
    assert!(matches!(
        e,
        Error::IdsNotIncreasing {
            field: Some(1),
            previous: 2,
            ..
        }
    ));
}

#[test]
fn none_cannot_be_an_array_element() {
    #[derive(Tagged, Default)]
    struct Holes {
        #[tag(0)]
        items: Vec<Option<u8>>,
    }
    let mut h = Holes {
        items: vec![Some(1), None],
    };
    let e = tagged::encode_document(&mut h).unwrap_err();
    assert!(matches!(e, Error::NoneInSequence { field: Some(0), .. }));
}

#[test]
fn derive_options() {
    /// Tuple struct, skipped field, removed ids.
    #[derive(Tagged, Default, Debug, PartialEq)]
    #[tag(removed(1, 3))]
    struct Pair(#[tag(0)] u32, #[tag(skip)] u32, #[tag(2)] String);
    assert_eq!(<Pair as Tagged>::REMOVED_IDS, &[1, 3]);
    let doc = tagged::encode_document(&mut Pair(5, 99, "x".into())).unwrap();
    assert_eq!(doc, [0x05, 0x02, 0x05, 0x07, 0x01, b'x']);
    assert_eq!(
        tagged::decode_document::<Pair>(&doc).unwrap(),
        Pair(5, 0, "x".into())
    );
}

#[test]
fn typed_dump_lists_every_field() {
    let dump = tagged::dump(&mut Bar { a: 129, b: 0, c: 6 });
    assert_eq!(
        dump.to_string(),
        "0 a (varint): 129\n1 b (byte): 0\n2 c (byte): 6\n"
    );
}

#[derive(Tagged, Default, Debug, PartialEq)]
struct InnerFlag {
    #[tag(0)]
    a: u8,
    #[tag(5)]
    flag: bool,
}

#[derive(Tagged, Default, Debug, PartialEq)]
struct OuterList {
    #[tag(2)]
    items: Vec<InnerFlag>,
    #[tag(3)]
    maybe: Vec<Option<u8>>,
}

/// An error inside a nested value names the innermost field being read or written, and one in
/// a nested struct's own framing (a header cut short) names the field holding that struct. The
/// reader and writer no longer track the field per value (issue 30.3): the id is added as the
/// error leaves the field, and these pin that the ids did not change.
#[test]
fn nested_errors_name_the_innermost_field() {
    // items = [InnerFlag { flag: byte 2 }]: the bool is refused at byte 5, in field 5.
    let e = tagged::decode_document::<OuterList>(&[0x05, 0x0B, 0x03, 0x02, 0x14, 0x02]);
    assert_eq!(
        e,
        Err(Error::InvalidBool {
            offset: 5,
            field: Some(5),
            byte: 2
        })
    );
    // items = [a struct whose first header is cut by its region's end]: field 2 holds it.
    let e = tagged::decode_document::<OuterList>(&[0x04, 0x0B, 0x02, 0x01, 0x80]);
    assert!(
        matches!(
            e,
            Err(Error::PastEnd {
                offset: 4,
                field: Some(2),
                ..
            })
        ),
        "{e:?}"
    );
    // A skipped unknown field (id 1, a sized value too long) names its own id.
    let e = tagged::decode_document::<OuterList>(&[0x02, 0x07, 0x05]);
    assert!(
        matches!(
            e,
            Err(Error::SizedTooLong {
                offset: 2,
                field: Some(1),
                ..
            })
        ),
        "{e:?}"
    );
    // Writing: None inside the list of field 3.
    let mut v = OuterList {
        items: vec![],
        maybe: vec![Some(1), None],
    };
    assert!(matches!(
        tagged::encode_document(&mut v),
        Err(Error::NoneInSequence { field: Some(3), .. })
    ));
}
