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
