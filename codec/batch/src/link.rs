//! Network ids in batch messages (seed 004, "Referenced data"): a reference travels as its
//! object's id, a packed `u32` (varint, 1 to 5 bytes), 0 for "no object". The bit-packed form
//! and the [`LinkingContext`](bitlens_codec::link::LinkingContext) are in `bitlens_codec::link`.
//!
//! # Wire rule
//!
//! The range of ids belongs to the protocol, not to the varint: a message set declares its
//! `max_id` (the same number its receivers' linking contexts are built with, e.g. 65535 for the
//! demo), and every id on the wire lies in `0..=max_id` (`1..=max_id` where an object is
//! required). A reader refuses a larger id with `out_of_range` at the field's first byte, after
//! the varint was read and traced, before the id is resolved; a writer refuses it before writing
//! anything. So an id that a receiver's context could never hold is never accepted, and the
//! varint's width is an encoding detail: 65535 takes 3 bytes whatever `max_id` is.
//!
//! ```text
//! reference   packed u32 in 0..=max_id     0 = no object
//! object id   packed u32 in 1..=max_id     the object a message is about
//! ```

use crate::error::{BatchError, BatchErrorKind, Result};
use crate::stream::ByteStream;
use bitlens_codec::link::{Links, NetworkId};

fn out_of_range(value: u32, min: u32, max_id: u32, at: usize, name: &'static str) -> BatchError {
    BatchError::out_of_range(value.into(), min.into(), max_id.into(), at, name)
}

/// A reference in a batch message: a packed `u32` (varint) in `0..=max_id`, 0 for `None`; the id
/// must resolve in `links` (pass [`AnyId`](bitlens_codec::link::AnyId) to accept any id in range).
///
/// # Errors
/// Out_of_range (an id above `max_id`, read or given) and unresolved, both at the field's first
/// byte; past_end, invalid_varint, buffer_full.
pub fn serialize_id_bytes<S: ByteStream>(
    s: &mut S,
    name: &'static str,
    id: &mut Option<NetworkId>,
    max_id: u32,
    links: &(impl Links + ?Sized),
) -> Result<()> {
    let at = s.base() + s.position();
    let mut raw = NetworkId::to_wire(*id);
    if S::WRITING && raw > max_id {
        return Err(out_of_range(raw, 0, max_id, at, name));
    }
    // As the schema's `max = max_id`: the type's whole range is no range.
    if max_id < u32::MAX {
        s.trace_range(0, max_id.into());
    }
    s.packed_u32(name, &mut raw)?;
    if raw > max_id {
        return Err(out_of_range(raw, 0, max_id, at, name));
    }
    let read = NetworkId::new(raw);
    if let Some(found) = read.filter(|i| !links.contains_id(*i)) {
        let kind = BatchErrorKind::Unresolved {
            id: u64::from(found.get()),
        };
        return Err(BatchError::new(kind, at, name));
    }
    *id = read;
    Ok(())
}

/// The id of the object a message is about: a packed `u32` (varint) in `1..=max_id` (0, "no
/// object", is out of range: the message needs one).
///
/// # Errors
/// Out_of_range (0 or an id above `max_id`, read or given) at the field's first byte; past_end,
/// invalid_varint, buffer_full.
pub fn serialize_object_id_bytes<S: ByteStream>(
    s: &mut S,
    name: &'static str,
    id: &mut NetworkId,
    max_id: u32,
) -> Result<()> {
    let at = s.base() + s.position();
    let mut raw = id.get();
    if S::WRITING && raw > max_id {
        return Err(out_of_range(raw, 1, max_id, at, name));
    }
    s.trace_range(1, max_id.into());
    s.packed_u32(name, &mut raw)?;
    match NetworkId::new(raw).filter(|_| raw <= max_id) {
        Some(read) => {
            *id = read;
            Ok(())
        }
        None => Err(out_of_range(raw, 1, max_id, at, name)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::{ByteReader, ByteWriter};
    use bitlens_codec::link::{AnyId, LinkingContext};

    fn id(n: u32) -> NetworkId {
        NetworkId::new(n).unwrap()
    }

    /// 65535 and 65536 as reduced-redundancy varints (3 bytes each).
    const ID_65535: [u8; 3] = [0x82, 0xFE, 0x7F];
    const ID_65536: [u8; 3] = [0x82, 0xFF, 0x00];

    #[test]
    fn byte_references() {
        let mut c = LinkingContext::<u8>::new(u32::MAX);
        c.insert(id(300), 1).unwrap();
        let mut buf = [0u8; 5];
        let mut w = ByteWriter::new(&mut buf);
        serialize_id_bytes(&mut w, "target", &mut Some(id(300)), u32::MAX, &c).unwrap();
        let n = w.finish();
        assert_eq!(&buf[..n], &[0x81, 0x2C]); // 300 as a reduced-redundancy varint
        let mut got = None;
        serialize_id_bytes(
            &mut ByteReader::new(&buf[..n]),
            "target",
            &mut got,
            u32::MAX,
            &c,
        )
        .unwrap();
        assert_eq!(got, Some(id(300)));
        let e = serialize_id_bytes(
            &mut ByteReader::new(&buf[..n]),
            "target",
            &mut got,
            u32::MAX,
            &LinkingContext::<u8>::new(9),
        )
        .unwrap_err();
        assert_eq!(*e.kind(), BatchErrorKind::Unresolved { id: 300 });
    }

    #[test]
    fn ids_above_the_protocols_max_id_are_refused_on_read_and_write() {
        let mut got = None;
        serialize_id_bytes(
            &mut ByteReader::new(&ID_65535),
            "home_base",
            &mut got,
            65535,
            &AnyId,
        )
        .unwrap();
        assert_eq!(got, Some(id(65535)));
        let e = serialize_id_bytes(
            &mut ByteReader::with_tracer(&ID_65536, 10, bitlens_codec::trace::NoTrace),
            "home_base",
            &mut got,
            65535,
            &AnyId,
        )
        .unwrap_err();
        let want = BatchErrorKind::OutOfRange {
            value: 65536,
            min: 0,
            max: 65535,
        };
        assert_eq!((*e.kind(), e.offset(), e.field()), (want, 10, "home_base"));
        assert_eq!(got, Some(id(65535)), "a refused id is not stored");

        let mut buf = [0u8; 5];
        let mut w = ByteWriter::new(&mut buf);
        let e = serialize_id_bytes(&mut w, "home_base", &mut Some(id(65536)), 65535, &AnyId)
            .unwrap_err();
        assert_eq!(*e.kind(), want);
        assert_eq!(w.finish(), 0, "nothing written");

        // An object id: 0 is out of range too.
        let mut object = id(7);
        let e = serialize_object_id_bytes(&mut ByteReader::new(&[0]), "network_id", &mut object, 9)
            .unwrap_err();
        assert_eq!(
            *e.kind(),
            BatchErrorKind::OutOfRange {
                value: 0,
                min: 1,
                max: 9
            }
        );
        let e = serialize_object_id_bytes(
            &mut ByteReader::new(&ID_65536),
            "network_id",
            &mut object,
            65535,
        )
        .unwrap_err();
        assert!(matches!(
            e.kind(),
            BatchErrorKind::OutOfRange { value: 65536, .. }
        ));
        serialize_object_id_bytes(
            &mut ByteReader::new(&ID_65535),
            "network_id",
            &mut object,
            65535,
        )
        .unwrap();
        assert_eq!(object, id(65535));
        let mut w = ByteWriter::new(&mut buf);
        serialize_object_id_bytes(&mut w, "network_id", &mut id(65535), 65535).unwrap();
        let n = w.finish();
        assert_eq!(&buf[..n], &ID_65535);
    }
}
