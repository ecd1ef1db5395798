//! Seed 004's linking on the demo protocol: RoboCat's home base is a network id that resolves
//! through a linking context, with the wire format unchanged (an int in 0..=65535).

use bitlens_codec::link::{AnyId, LinkingContext, NetworkId, Reference};
use bitlens_codec::{
    ErrorKind, ReadStream, TraceStream, WriteStream, read_packet, trace_packet, write_packet,
};
use bitlens_testkit::demo::{DemoPacket, MAX_NETWORK_ID, RoboCat, samples};

fn cat() -> RoboCat {
    samples()
        .into_iter()
        .find_map(|p| match p {
            DemoPacket::RoboCat(c) => Some(c),
            _ => None,
        })
        .unwrap()
}

#[test]
fn home_base_is_still_a_16_bit_int_on_the_wire() {
    let mut buf = [0u8; 1200];
    let n = write_packet(&mut DemoPacket::RoboCat(cat()), &mut buf).unwrap();
    let (back, trace) = trace_packet::<DemoPacket>(&buf[..n]);
    assert_eq!(back, Some(DemoPacket::RoboCat(cat())));
    let f = trace
        .fields
        .iter()
        .find(|f| f.path() == "home_base")
        .unwrap();
    assert_eq!(f.bits, 16);
    assert_eq!(f.range, Some((0, i128::from(MAX_NETWORK_ID))));
    assert_eq!(f.value, bitlens_codec::Value::Int(42));
    // 0 still means no home base.
    let mut homeless = cat();
    homeless.home_base = None;
    let n = write_packet(&mut DemoPacket::RoboCat(homeless.clone()), &mut buf).unwrap();
    assert_eq!(
        read_packet::<DemoPacket>(&buf[..n]).unwrap(),
        DemoPacket::RoboCat(homeless)
    );
}

#[test]
fn a_world_resolves_the_home_base_or_names_the_missing_id() {
    let mut buf = [0u8; 1200];
    let mut w = WriteStream::new(&mut buf);
    cat().serialize(&mut w).unwrap();
    let n = w.finish();

    // The receiving world knows base 42 as its object "barn".
    let mut world = LinkingContext::<&str>::new(MAX_NETWORK_ID);
    world.insert(NetworkId::new(42).unwrap(), "barn").unwrap();
    let mut got = RoboCat::default();
    got.serialize_linked(&mut ReadStream::new(&buf[..n]), &world)
        .unwrap();
    assert_eq!(world.resolve(got.home_base), Reference::Object("barn"));

    // A world without it: a typed error at the field's bit, never a dangling reference.
    let empty = LinkingContext::<&str>::new(MAX_NETWORK_ID);
    let e = RoboCat::default()
        .serialize_linked(&mut ReadStream::new(&buf[..n]), &empty)
        .unwrap_err();
    assert_eq!(*e.kind(), ErrorKind::Unresolved { id: 42 });
    assert_eq!(e.field(), "home_base");
    assert_eq!(e.bit(), 7 + 20); // after health (7 bits) and meow_count (20 bits)
    // The trace stream stops at the same place.
    let r = RoboCat::default().serialize_linked(&mut TraceStream::new(&buf[..n]), &empty);
    assert_eq!(r.unwrap_err(), e);
    // Or, decoded without a world, an explicit unresolved reference to wait on.
    let mut free = RoboCat::default();
    free.serialize_linked(&mut ReadStream::new(&buf[..n]), &AnyId)
        .unwrap();
    assert_eq!(
        empty.resolve(free.home_base),
        Reference::Unresolved(NetworkId::new(42).unwrap())
    );
}

#[test]
fn spawn_messages_link_cats_in_the_demo_world() {
    use bitlens_batch::{BatchWriter, Dispatch, NetworkContext, UpdateStage, read_batch};
    use bitlens_testkit::batch_demo::{DemoWorld, SpawnRoboCat};
    let base = NetworkId::new(42).unwrap();
    let mut home = SpawnRoboCat::from_cat(
        base,
        &RoboCat {
            home_base: None,
            ..cat()
        },
    )
    .unwrap();
    let mut cat_msg = SpawnRoboCat::from_cat(NetworkId::new(7).unwrap(), &cat()).unwrap();
    let mut buf = [0u8; 1200];
    let mut w = BatchWriter::new(&mut buf).unwrap();
    // The cat first: its home base is not there yet.
    w.push(UpdateStage::UPDATE, &mut cat_msg).unwrap();
    w.push(UpdateStage::UPDATE, &mut home).unwrap();
    w.push(UpdateStage::UPDATE, &mut cat_msg).unwrap();
    let n = w.finish();
    let mut world = DemoWorld::default();
    for m in read_batch(&buf[..n]).unwrap() {
        world
            .dispatch(&NetworkContext::default(), &m.unwrap())
            .unwrap();
    }
    assert_eq!(world.unresolved_home_bases, 1);
    assert_eq!(world.links.resolve(Some(base)), Reference::Object(42));
}
