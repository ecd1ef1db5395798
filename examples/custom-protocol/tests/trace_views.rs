//! The trace as a game's own tools read it, through bitlens's public API: the walk of compact
//! entries (views and full paths, what a fast writer uses) gives what the owned `TraceField`s
//! say, for every datagram of `captures/custom.pcap`, faults included.

use bitlens::capture::Capture;
use bitlens_codec::packet::trace_packet;
use custom_protocol::Packet;
use std::path::PathBuf;

#[test]
fn walked_views_say_what_the_owned_fields_say() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../captures/custom.pcap");
    let capture = Capture::open(&path).unwrap_or_else(|e| panic!("{e}"));
    let (mut entries, mut failed_checks) = (0, 0);
    for d in capture.datagrams() {
        let (_, trace) = trace_packet::<Packet>(capture.payload(d));
        let owned = trace.fields.to_vec();
        let mut walk = trace.fields.walk();
        let mut i = 0;
        while let Some((view, path)) = walk.next() {
            let f = &owned[i];
            let at = format!("frame {} entry {i} ({path})", d.frame);
            assert_eq!(path, f.path(), "{at}");
            assert_eq!(view.name(), f.name(), "{at}");
            assert_eq!(
                (view.depth(), view.bit(), view.bits()),
                (f.depth, f.bit, f.bits),
                "{at}"
            );
            assert_eq!(view.value().to_value(), f.value, "{at}");
            assert_eq!(view.value(), f.value.as_ref(), "{at}");
            assert_eq!((view.raw(), view.range()), (f.raw, f.range), "{at}");
            assert_eq!(view.check_failed(), f.check_failed(), "{at}");
            assert_eq!(view.failed(), f.failed, "{at}");
            i += 1;
        }
        assert_eq!(i, owned.len(), "frame {}: every entry walked", d.frame);
        entries += i;
        failed_checks += trace.checks().filter(|c| c.check_failed()).count();
    }
    assert!(entries > 1000, "{entries} entries");
    assert!(
        failed_checks > 0,
        "the capture's desyncs show as failed checks"
    );
}
