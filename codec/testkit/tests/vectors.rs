//! The conformance vectors of the C++ reference implementation, run through every stream.

use bitlens_testkit::vectors;

#[test]
fn reference_vectors_pass() {
    let text = include_str!("../../tests/vectors/bitpacked.json");
    let report = vectors::run(text).expect("vector file parses");
    assert!(
        report.failed.is_empty(),
        "failed vectors: {:#?}",
        report.failed
    );
    assert!(
        report.passed.len() >= 24,
        "only {} vectors ran",
        report.passed.len()
    );
}

/// serialize 1.0's vectors (`serialize-1.0.json`): the golden vector's prefix, the worked
/// examples, discriminating compressed floats, near-tie quaternions, int_relative and string
/// edges, and a vector for each refusal rule.
#[test]
fn serialize_1_0_vectors_pass() {
    let text = include_str!("../../tests/vectors/serialize-1.0.json");
    let report = vectors::run(text).expect("vector file parses");
    assert!(
        report.failed.is_empty(),
        "failed vectors: {:#?}",
        report.failed
    );
    assert!(
        report.passed.len() >= 44,
        "only {} vectors ran",
        report.passed.len()
    );
}

/// Each valid vector fails when one of its bytes is flipped or its measure is off by one: the
/// runner can fail.
#[test]
fn serialize_1_0_vectors_discriminate() {
    let all =
        vectors::parse(include_str!("../../tests/vectors/serialize-1.0.json")).expect("parses");
    let mut checked = 0;
    for v in all
        .iter()
        .filter(|v| matches!(v.expect, vectors::Expect::Bits(_)) && v.write)
    {
        for i in 0..v.bytes.len() {
            let mut bad = v.clone();
            bad.bytes[i] ^= 0x01;
            assert!(
                vectors::run_vector(&bad).is_err(),
                "{} passed with byte {i} flipped",
                v.name
            );
        }
        let mut bad = v.clone();
        bad.measure = v.measure.map(|m| m + 1);
        assert!(
            vectors::run_vector(&bad).is_err(),
            "{}: measure + 1 passed",
            v.name
        );
        checked += 1;
    }
    assert!(checked >= 15, "{checked}");
}
