// a valid packet with one count or length made hostile: refused at that field.
#![no_main]
bitlens_fuzz_guard::guard_allocator!();
libfuzzer_sys::fuzz_target!(|data: &[u8]| bitlens_fuzz_guard::bounded(data, bitlens_codec::fuzzing::hostile_lengths::<custom_protocol::Packet>));
