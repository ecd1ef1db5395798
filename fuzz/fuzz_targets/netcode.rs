#![no_main]
bitlens_fuzz::guard_allocator!();
libfuzzer_sys::fuzz_target!(|data: &[u8]| bitlens_fuzz::bounded(
    data,
    bitlens_netcode::fuzzing::fuzz_netcode
));
