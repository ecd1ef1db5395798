//! The serialize 1.0 operations' conformance vectors (`vectors/serialize1.json`: int64, int128,
//! uint128, the u8/u16/u32 forms, wide bits, fixed, wstring, precomputed compressed floats,
//! serialize.rs's golden vector, and a reject vector for each refusal rule), run through every
//! stream and through the schema interpreter.

use bitlens_testkit::vectors;

#[test]
fn serialize1_vectors_pass() {
    vectors::assert_all_pass(include_str!("../../tests/vectors/serialize1.json"), 41);
}

#[test]
fn a_reader_refusing_more_fails_the_reject_vectors_kind_check() {
    // The runner compares error kinds: a vector naming another kind fails, so each reject
    // vector pins its rule, not just "some error".
    let text = include_str!("../../tests/vectors/serialize1.json").replace(
        "\"reject\": \"interior_nul\"",
        "\"reject\": \"invalid_utf16\"",
    );
    let report = vectors::run(&text).expect("vector file parses");
    assert_eq!(
        report
            .failed
            .iter()
            .map(|(name, _)| name.as_str())
            .collect::<Vec<_>>(),
        ["wstring_interior_nul"]
    );
}
