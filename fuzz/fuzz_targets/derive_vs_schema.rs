#![no_main]
bitlens_fuzz::guard_allocator!();
libfuzzer_sys::fuzz_target!(|data: &[u8]| bitlens_fuzz::bounded_with(
    data,
    bitlens_testkit::fuzzing::traced_budget(data.len()),
    bitlens_testkit::fuzzing::derive::derive_vs_schema
));
