//! Property tests of the tagged format: varints, round trips through the fuzz harnesses, and
//! reads of mutated documents.

use bitlens_tagged::{
    self as tagged,
    varint::{VarintRead, read_varint, unzigzag, varint_len, write_varint, zigzag},
};
use bitlens_testkit::fuzzing::tagged::{
    Rich, SaveV3, tagged_compat, tagged_read, tagged_roundtrip,
};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn varint_roundtrip(x in any::<u64>()) {
        let mut out = Vec::new();
        write_varint(&mut out, x);
        prop_assert_eq!(out.len(), varint_len(x));
        prop_assert_eq!(read_varint(&out), VarintRead::Ok(x, out.len()));
    }

    #[test]
    fn varint_order_matches_value_order(a in any::<u64>(), b in any::<u64>()) {
        // Big-endian with reduced redundancy: shorter is smaller, equal length compares bytewise.
        let (mut ea, mut eb) = (Vec::new(), Vec::new());
        write_varint(&mut ea, a);
        write_varint(&mut eb, b);
        prop_assert_eq!(a.cmp(&b), ea.len().cmp(&eb.len()).then(ea.cmp(&eb)));
    }

    #[test]
    fn zigzag_roundtrip(x in any::<i64>()) {
        prop_assert_eq!(unzigzag(zigzag(x)), x);
    }

    #[test]
    fn rich_roundtrip(data in proptest::collection::vec(any::<u8>(), 0..2048)) {
        tagged_roundtrip(&data);
    }

    #[test]
    fn versions_read_each_other(data in proptest::collection::vec(any::<u8>(), 0..1024)) {
        tagged_compat(&data);
    }

    #[test]
    fn arbitrary_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..512)) {
        tagged_read(&data);
    }

    #[test]
    fn mutated_documents_never_panic(
        data in proptest::collection::vec(any::<u8>(), 0..1024),
        flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..4),
    ) {
        let mut u = arbitrary::Unstructured::new(&data);
        let Ok(mut value) = <Rich as arbitrary::Arbitrary>::arbitrary(&mut u) else {
            return Ok(());
        };
        let mut doc = tagged::encode_document(&mut value).unwrap();
        for (at, byte) in flips {
            let len = doc.len();
            doc[at % len] ^= byte;
        }
        tagged_read(&doc);
    }
}

#[test]
fn harnesses_accept_the_example_save() {
    let doc = tagged::encode_document(&mut SaveV3::example()).unwrap();
    tagged_read(&doc);
    tagged_roundtrip(&doc);
    tagged_compat(&doc);
    tagged_read(&[]);
    tagged_roundtrip(&[]);
    tagged_compat(&[]);
}
