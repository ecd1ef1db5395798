//! serialize.rs's side of its throughput workload, shared by `count.rs` and `placement.rs` (both
//! built by `benches/serialize_rs.sh`): the packet's fields through serialize.rs's `Stream`, the
//! same calls as the peers' harness (`../shared/peers/serialize-rs/`).

use crate::bl::{BP_SIZE, BP_WIDTHS, Packet};

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

/// One pass of the bitpacker write through serialize.rs, inlined where it is called: groups
/// while 256 bits are free, then the flush; the bytes written.
#[inline(always)]
pub fn bp_write(a: &mut [u8], values: &[u32; 16]) -> u64 {
    let mut w = serialize::BitWriter::new(&mut a[..BP_SIZE]);
    while w.bits_available() >= 256 {
        for (&v, n) in values.iter().zip(BP_WIDTHS) {
            w.write_bits(v, n);
        }
    }
    w.flush_bits();
    w.bytes_written()
}

/// One pass of the bitpacker read through serialize.rs, inlined where it is called: groups
/// while 256 bits remain; the sum of the values.
#[inline(always)]
pub fn bp_read(a: &[u8]) -> u64 {
    let mut r = serialize::BitReader::new(a, BP_SIZE);
    let mut sum = 0u64;
    while r.bits_remaining() >= 256 {
        for n in BP_WIDTHS {
            sum += u64::from(r.read_bits(n));
        }
    }
    sum
}
