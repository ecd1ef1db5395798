#![no_main]
bitlens_fuzz::guard_allocator!();
libfuzzer_sys::fuzz_target!(|data: &[u8]| bitlens_testkit::fuzzing::receive::batch_receive(data));
