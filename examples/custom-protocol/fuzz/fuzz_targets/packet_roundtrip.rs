// an Arbitrary packet: measure == written, read(write(x)) == x, trace == read.
#![no_main]
bitlens_fuzz_guard::guard_allocator!();
libfuzzer_sys::fuzz_target!(|data: &[u8]| bitlens_fuzz_guard::bounded(data, bitlens_codec::fuzzing::packet_roundtrip::<custom_protocol::Packet>));
