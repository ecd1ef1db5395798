// raw bytes, then with a valid CRC: no panic, re-encodes identically, trace == read.
#![no_main]
bitlens_fuzz_guard::guard_allocator!();
libfuzzer_sys::fuzz_target!(|data: &[u8]| bitlens_fuzz_guard::bounded(data, bitlens_codec::fuzzing::packet_read::<custom_protocol::Packet>));
