//! Network ids in batch messages (seed 004, "Referenced data"): a reference travels as its
//! object's id, a packed `u32` (varint, 1 to 5 bytes), 0 for "no object". The bit-packed form
//! and the [`LinkingContext`](bitlens_codec::link::LinkingContext) are in `bitlens_codec::link`.

use crate::error::{BatchError, BatchErrorKind, Result};
use crate::stream::ByteStream;
use bitlens_codec::link::{Links, NetworkId};

/// A network id in a batch message: a packed `u32` (varint), 0 for `None`; the id must resolve
/// in `links`.
///
/// # Errors
/// Unresolved (at the field's byte offset), out_of_range, past_end, invalid_varint.
pub fn serialize_id_bytes<S: ByteStream>(
    s: &mut S,
    name: &'static str,
    id: &mut Option<NetworkId>,
    links: &(impl Links + ?Sized),
) -> Result<()> {
    let at = s.base() + s.position();
    let mut raw = NetworkId::to_wire(*id);
    s.packed_u32(name, &mut raw)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::{ByteReader, ByteWriter};
    use bitlens_codec::link::LinkingContext;

    fn id(n: u32) -> NetworkId {
        NetworkId::new(n).unwrap()
    }

    #[test]
    fn byte_references() {
        let mut c = LinkingContext::<u8>::new(u32::MAX);
        c.insert(id(300), 1);
        let mut buf = [0u8; 5];
        let mut w = ByteWriter::new(&mut buf);
        serialize_id_bytes(&mut w, "target", &mut Some(id(300)), &c).unwrap();
        let n = w.finish();
        assert_eq!(&buf[..n], &[0x81, 0x2C]); // 300 as a reduced-redundancy varint
        let mut got = None;
        serialize_id_bytes(&mut ByteReader::new(&buf[..n]), "target", &mut got, &c).unwrap();
        assert_eq!(got, Some(id(300)));
        let e = serialize_id_bytes(
            &mut ByteReader::new(&buf[..n]),
            "target",
            &mut got,
            &LinkingContext::<u8>::new(9),
        )
        .unwrap_err();
        assert_eq!(*e.kind(), BatchErrorKind::Unresolved { id: 300 });
    }
}
