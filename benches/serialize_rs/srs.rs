//! serialize.rs's side of its throughput workload, shared by `count.rs` and `placement.rs` (both
//! built by `benches/serialize_rs.sh`): the packet's fields through serialize.rs's `Stream`, the
//! same calls as the peers' harness (`../shared/peers/serialize-rs/`).

use crate::bl::Packet;

/// The packet's fields, inlined where it is called (each binary makes its own out-of-line
/// instance, as the harness does).
#[inline(always)]
pub fn fields<S: serialize::Stream>(p: &mut Packet, s: &mut S) -> serialize::Result<(), S::Error> {
    s.serialize_int(&mut p.a, -100, 100)?;
    s.serialize_int(&mut p.b, 0, 65535)?;
    s.serialize_int(&mut p.c, -1000000, 1000000)?;
    s.serialize_bits(&mut p.bits7, 7)?;
    s.serialize_bits(&mut p.bits13, 13)?;
    s.serialize_bits(&mut p.bits23, 23)?;
    s.serialize_bool(&mut p.flag)?;
    s.serialize_f32(&mut p.x)?;
    s.serialize_f32(&mut p.y)?;
    s.serialize_f32(&mut p.z)?;
    s.serialize_u64(&mut p.big)?;
    s.serialize_bytes(&mut p.blob)?;
    Ok(())
}
