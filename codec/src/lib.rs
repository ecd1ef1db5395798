//! bitlens-codec: bit-packed serialization for real-time game protocols.
#![forbid(unsafe_code)]
#[doc(hidden)]
pub mod fuzzing;
pub mod tagged;
