//! `bitlens`: inspect, decode and check captures of bit-packed game traffic.
fn main() {}
