//! Linking (seed 004, "Referenced data"): objects that several others point to are sent once,
//! and each pointer to them travels as the object's network id.
//!
//! A [`LinkingContext`] maps network ids to objects and back. Objects are whatever handle the
//! game uses (`H`: an entity id, a slot index, ...). On the wire a reference is its id as an
//! integer, `0` for "no object":
//!
//! ```text
//! bit-packed   int(id, 0, max_id)             e.g. RoboCat.home_base: 16 bits for 0..=65535
//! batches      packed u32 (varint) <= max_id  1 to 5 bytes (bitlens_batch::link)
//! ```
//!
//! The range `1..=max_id` belongs to the protocol: its message set declares `max_id`, its
//! receivers build their contexts with it ([`LinkingContext::new`]), and every serializer
//! refuses a larger id on read and on write (`out_of_range`), so a context never holds an id it
//! could not send.
//!
//! An id that does not resolve is never a dangling index: the strict serializers fail with a
//! typed error ([`ErrorKind::Unresolved`] naming the id, the bit and the field), and
//! [`LinkingContext::resolve`] returns an explicit [`Reference::Unresolved`] for callers that
//! wait for the object to arrive.
//!
//! ```
//! use bitlens_codec::link::{LinkingContext, NetworkId};
//! use bitlens_codec::{ReadStream, WriteStream, ErrorKind};
//!
//! // The sender's world: base 7 is an object; it gets a network id.
//! let mut sender = LinkingContext::<u32>::new(65535);
//! let id = sender.get_or_assign(7).unwrap();
//! let mut buf = [0u8; 4];
//! let mut w = WriteStream::new(&mut buf);
//! sender.serialize_ref(&mut w, "home_base", &mut Some(7))?;
//! let n = w.finish();
//!
//! // The receiver knows the id under its own handle (70): the reference resolves to it.
//! let mut receiver = LinkingContext::<u32>::new(65535);
//! receiver.insert(id, 70)?;
//! let mut back = None;
//! receiver.serialize_ref(&mut ReadStream::new(&buf[..n]), "home_base", &mut back)?;
//! assert_eq!(back, Some(70));
//!
//! // A receiver that never heard of the id gets a typed error, not a dangling pointer.
//! let err = LinkingContext::<u32>::new(65535)
//!     .serialize_ref(&mut ReadStream::new(&buf[..n]), "home_base", &mut back)
//!     .unwrap_err();
//! assert_eq!(*err.kind(), ErrorKind::Unresolved { id: u64::from(id.get()) });
//! # Ok::<(), bitlens_codec::Error>(())
//! ```

use crate::error::{Error, ErrorKind, Result};
use crate::stream::Stream;
use std::collections::HashMap;
use std::hash::Hash;
use std::num::NonZeroU32;

/// A network id: a non-zero `u32` (0 on the wire means "no object").
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NetworkId(NonZeroU32);

impl NetworkId {
    /// The id `id`, `None` for 0.
    pub const fn new(id: u32) -> Option<Self> {
        match NonZeroU32::new(id) {
            Some(n) => Some(NetworkId(n)),
            None => None,
        }
    }

    /// The id as an integer.
    pub const fn get(self) -> u32 {
        self.0.get()
    }

    /// A reference as its wire integer: the id, or 0 for none.
    pub fn to_wire(id: Option<NetworkId>) -> u32 {
        id.map_or(0, NetworkId::get)
    }
}

impl std::fmt::Debug for NetworkId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "#{}", self.0)
    }
}

#[cfg(feature = "arbitrary")]
impl<'a> arbitrary::Arbitrary<'a> for NetworkId {
    fn arbitrary(u: &mut arbitrary::Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(NetworkId::new(u.int_in_range(1..=u32::MAX)?).unwrap_or(NetworkId(NonZeroU32::MIN)))
    }
}

/// Which network ids resolve: a [`LinkingContext`], or [`AnyId`] when decoding without a world
/// (a capture, a fuzzer).
pub trait Links {
    /// True when `id` names a known object.
    fn contains_id(&self, id: NetworkId) -> bool;
}

/// Accepts every id: for decoding data without the objects it refers to.
#[derive(Debug, Clone, Copy, Default)]
pub struct AnyId;

impl Links for AnyId {
    fn contains_id(&self, _: NetworkId) -> bool {
        true
    }
}

/// A reference after resolution: nothing, an object, or an id no object has (yet).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reference<H> {
    /// Id 0: no object.
    Null,
    /// The object the id names.
    Object(H),
    /// An id the context does not know: the object may not have arrived yet.
    Unresolved(NetworkId),
}

/// Maps network ids to object handles and back (the seed's `LinkingContext`).
#[derive(Debug, Clone)]
pub struct LinkingContext<H> {
    by_id: HashMap<NetworkId, H>,
    by_object: HashMap<H, NetworkId>,
    next: u32,
    max_id: u32,
}

impl<H: Copy + Eq + Hash> LinkingContext<H> {
    /// An empty context whose ids lie in `1..=max_id` (the wire range of its references).
    pub fn new(max_id: u32) -> Self {
        LinkingContext {
            by_id: HashMap::new(),
            by_object: HashMap::new(),
            next: 1,
            max_id: max_id.max(1),
        }
    }

    /// The largest id.
    pub fn max_id(&self) -> u32 {
        self.max_id
    }

    /// Objects linked.
    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    /// True when nothing is linked.
    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    /// The id of `object`, if it has one.
    pub fn id_of(&self, object: H) -> Option<NetworkId> {
        self.by_object.get(&object).copied()
    }

    /// The object `id` names, if any.
    pub fn object(&self, id: NetworkId) -> Option<H> {
        self.by_id.get(&id).copied()
    }

    /// The id of `object`, assigning the next free one if it has none (the sending side).
    /// `None` when all `max_id` ids are taken.
    pub fn get_or_assign(&mut self, object: H) -> Option<NetworkId> {
        if let Some(id) = self.id_of(object) {
            return Some(id);
        }
        if self.by_id.len() >= self.max_id as usize {
            return None;
        }
        // Some id is free, so this ends within len + 1 steps.
        loop {
            let candidate = NetworkId::new(self.next);
            self.next = if self.next >= self.max_id {
                1
            } else {
                self.next + 1
            };
            if let Some(id) = candidate.filter(|id| !self.by_id.contains_key(id)) {
                // `candidate` lies in 1..=max_id, so the insert cannot be refused.
                return self.insert(id, object).ok().map(|_| id);
            }
        }
    }

    /// Links `id` and `object` (the receiving side, where the sender chose the id), unlinking
    /// whatever either was linked to before. Returns the object `id` named before.
    ///
    /// # Errors
    /// Out_of_range (at bit 0, field `network_id`) for an id above [`LinkingContext::max_id`]:
    /// nothing is linked, since no reference to it could be sent.
    pub fn insert(&mut self, id: NetworkId, object: H) -> Result<Option<H>> {
        if id.get() > self.max_id {
            let kind = ErrorKind::OutOfRange {
                value: i128::from(id.get()),
                min: 1,
                max: i128::from(self.max_id),
            };
            return Err(Error::new(kind, 0, "network_id"));
        }
        if let Some(old_id) = self.by_object.insert(object, id)
            && old_id != id
        {
            self.by_id.remove(&old_id);
        }
        let previous = self.by_id.insert(id, object);
        if let Some(p) = previous.filter(|p| *p != object) {
            self.by_object.remove(&p);
        }
        Ok(previous)
    }

    /// Unlinks `object`, returning its id.
    pub fn remove_object(&mut self, object: H) -> Option<NetworkId> {
        let id = self.by_object.remove(&object)?;
        self.by_id.remove(&id);
        Some(id)
    }

    /// Unlinks `id`, returning its object.
    pub fn remove_id(&mut self, id: NetworkId) -> Option<H> {
        let object = self.by_id.remove(&id)?;
        self.by_object.remove(&object);
        Some(object)
    }

    /// Resolves a reference read from the wire.
    pub fn resolve(&self, id: Option<NetworkId>) -> Reference<H> {
        match id {
            None => Reference::Null,
            Some(id) => self
                .object(id)
                .map_or(Reference::Unresolved(id), Reference::Object),
        }
    }

    /// A reference to an object on a bit-packed stream: `int(id, 0, max_id)`, 0 for `None`.
    /// A reader resolves the id to the object.
    ///
    /// # Errors
    /// Unresolved when a reader finds an id no object has (at the field's bit); invalid_argument
    /// when a writer's object has no id; out_of_range, past_end, buffer full.
    pub fn serialize_ref<S: Stream>(
        &self,
        s: &mut S,
        name: &str,
        object: &mut Option<H>,
    ) -> Result<()> {
        let bit = s.bit_position();
        let mut id = None;
        if S::WRITING
            && let Some(o) = *object
        {
            id = Some(self.id_of(o).ok_or_else(|| {
                let why = "the object has no network id (link it first)".to_owned();
                Error::new(ErrorKind::InvalidArgument(why), bit, name)
            })?);
        }
        serialize_id(s, name, &mut id, self.max_id, self)?;
        if S::READING {
            *object = match self.resolve(id) {
                Reference::Object(o) => Some(o),
                // serialize_id already rejected ids this context does not know.
                Reference::Null | Reference::Unresolved(_) => None,
            };
        }
        Ok(())
    }
}

impl<H: Copy + Eq + Hash> Links for LinkingContext<H> {
    fn contains_id(&self, id: NetworkId) -> bool {
        self.by_id.contains_key(&id)
    }
}

/// A network id on a bit-packed stream: `int(id, 0, max_id)`, 0 for `None`; the id must
/// resolve in `links` (pass [`AnyId`] to accept any).
///
/// # Errors
/// Unresolved (written or read) when `links` does not know the id, at the field's first bit;
/// out_of_range when the id exceeds `max_id`; past_end, buffer full.
pub fn serialize_id<S: Stream>(
    s: &mut S,
    name: &str,
    id: &mut Option<NetworkId>,
    max_id: u32,
    links: &(impl Links + ?Sized),
) -> Result<()> {
    let bit = s.bit_position();
    let mut raw = NetworkId::to_wire(*id);
    s.int_as(name, &mut raw, 0, max_id)?;
    let read = NetworkId::new(raw);
    if let Some(found) = read.filter(|i| !links.contains_id(*i)) {
        let kind = ErrorKind::Unresolved {
            id: u64::from(found.get()),
        };
        return Err(Error::new(kind, bit, name));
    }
    *id = read;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::ReadStream;
    use crate::write::WriteStream;

    fn id(n: u32) -> NetworkId {
        NetworkId::new(n).unwrap()
    }

    #[test]
    fn ids_map_both_ways_and_relinking_unlinks() {
        let mut c = LinkingContext::<&str>::new(3);
        assert_eq!(c.get_or_assign("base"), Some(id(1)));
        assert_eq!(c.get_or_assign("cat"), Some(id(2)));
        assert_eq!(c.get_or_assign("base"), Some(id(1)));
        assert_eq!(c.object(id(2)), Some("cat"));
        // "cat" moves to id 3: id 2 no longer names anything.
        c.insert(id(3), "cat").unwrap();
        // An id beyond the context's range is refused, and nothing changes.
        let e = c.insert(id(4), "dog").unwrap_err();
        assert_eq!(
            e.to_string(),
            "bit 0 (field \"network_id\"): 4 out of range 1..=3"
        );
        assert_eq!(c.id_of("dog"), None);
        assert_eq!(c.object(id(2)), None);
        assert_eq!(c.resolve(Some(id(2))), Reference::Unresolved(id(2)));
        assert_eq!(c.resolve(None), Reference::Null);
        // All three ids: 1 and 3 taken, 2 free, then none.
        assert_eq!(c.get_or_assign("mouse"), Some(id(2)));
        assert_eq!(c.get_or_assign("dog"), None);
        assert_eq!(c.remove_object("base"), Some(id(1)));
        assert_eq!(c.remove_id(id(3)), Some("cat"));
        assert_eq!(c.len(), 1);
    }

    /// `home_base` = 42 in 16 bits: bytes 2A 00.
    const HOME_42: [u8; 2] = [0x2A, 0x00];

    #[test]
    fn references_are_ids_on_the_wire() {
        let mut c = LinkingContext::<u8>::new(65535);
        c.insert(id(42), 9).unwrap();
        let mut buf = [0u8; 2];
        let mut w = WriteStream::new(&mut buf);
        c.serialize_ref(&mut w, "home_base", &mut Some(9)).unwrap();
        assert_eq!(w.finish(), 2);
        assert_eq!(buf, HOME_42);
        let mut back = None;
        c.serialize_ref(&mut ReadStream::new(&HOME_42), "home_base", &mut back)
            .unwrap();
        assert_eq!(back, Some(9));
    }

    #[test]
    fn unresolved_ids_are_typed_errors_with_bit_and_field() {
        let c = LinkingContext::<u8>::new(65535);
        let e = c
            .serialize_ref(&mut ReadStream::new(&HOME_42), "home_base", &mut None)
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "bit 0 (field \"home_base\"): network id 42 does not resolve to an object"
        );
        let mut buf = [0u8; 2];
        let e = c
            .serialize_ref(&mut WriteStream::new(&mut buf), "home_base", &mut Some(1))
            .unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::InvalidArgument(_)));
        // Without a world every id is accepted, and 0 is no object.
        let mut got = None;
        serialize_id(
            &mut ReadStream::new(&HOME_42),
            "home_base",
            &mut got,
            65535,
            &AnyId,
        )
        .unwrap();
        assert_eq!(got, Some(id(42)));
        serialize_id(
            &mut ReadStream::new(&[0, 0]),
            "home_base",
            &mut got,
            65535,
            &AnyId,
        )
        .unwrap();
        assert_eq!(got, None);
    }
}
