//! bitlens-codec: bit-packed serialization for real-time game protocols.
#![forbid(unsafe_code)]
