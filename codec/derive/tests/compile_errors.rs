//! Wrong attributes are compile errors at the attribute, saying the fix: each file of
//! `tests/errors/` must fail to compile with exactly the message beside it (`.stderr`).
//! `TRYBUILD=overwrite cargo test -p bitlens-codec-derive --test compile_errors` rewrites them.

#[test]
fn wrong_attributes_are_compile_errors() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/errors/*.rs");
}
