//! What a stateful layer learns from the datagrams before a datagram, handed to the pure
//! per-datagram reading: an [`Observation`] made by a [`Tracker`] that saw the capture (or the
//! live traffic) in order.
//!
//! A transport such as netcode is stateful across datagrams (keys learned from a connection
//! request, replay windows), but the tools dissect datagrams in parallel and in any order. So the
//! state is split off: a [`Tracker`] runs once, cheaply, over the datagrams in capture order and
//! gives each datagram an [`Observation`] (the keys for its connection, whether its sequence
//! was seen before); the dissection of the datagram then needs nothing but its bytes and that
//! observation, on any thread. Formats without such state never make a tracker, and their
//! datagrams carry [`Observation::NONE`], which costs nothing.

use std::any::Any;
use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;

/// What a [`Tracker`] knew when one datagram went by: opaque to the tools, read back by the
/// layer that made it ([`Observation::get`]). Cheap to clone (a reference count).
///
/// Three words: a datagram's observation is kept for every datagram of a capture by some
/// owners (the TUI).
#[derive(Clone)]
pub struct Observation {
    /// The value, or the `Vec` of a batch's values ([`Observation::batch`]); `None`: nothing
    /// observed.
    value: Option<Arc<dyn Any + Send + Sync>>,
    /// [`ALONE`] when `value` is the value; else the value's index in the batch's `Vec`.
    index: usize,
}

/// [`Observation::index`] of an observation whose value is its own.
const ALONE: usize = usize::MAX;

impl Default for Observation {
    fn default() -> Self {
        Observation::NONE
    }
}

impl Observation {
    /// Nothing observed: what datagrams of formats without a tracker carry.
    pub const NONE: Observation = Observation {
        value: None,
        index: ALONE,
    };

    /// An observation holding `value`.
    pub fn new<T: Any + Send + Sync>(value: T) -> Self {
        Observation {
            value: Some(Arc::new(value)),
            index: ALONE,
        }
    }

    /// One observation per value of `values`, in order, all sharing one allocation: what a
    /// [`Tracker::observe_batch`] makes, so that the thread that drops a batch's observations
    /// (not the one that made them) frees one allocation, not one per datagram. Each reads
    /// back as [`Observation::new`]'s would.
    pub fn batch<T: Any + Send + Sync>(values: Vec<T>) -> impl Iterator<Item = Observation> {
        let n = values.len();
        let shared: Arc<dyn Any + Send + Sync> = Arc::new(values);
        (0..n).map(move |index| Observation {
            value: Some(Arc::clone(&shared)),
            index,
        })
    }

    /// The value, when it is a `T`.
    pub fn get<T: Any>(&self) -> Option<&T> {
        let value = self.value.as_deref()?;
        match self.index {
            ALONE => value.downcast_ref(),
            i => value.downcast_ref::<Vec<T>>()?.get(i),
        }
    }

    /// True when nothing was observed.
    pub fn is_none(&self) -> bool {
        self.value.is_none()
    }
}

impl fmt::Debug for Observation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.is_none() {
            "Observation::NONE"
        } else {
            "Observation(..)"
        })
    }
}

/// One datagram of a [`Tracker::observe_batch`]: its number (as for
/// [`Tracker::observe_numbered`]), its addresses and its UDP payload.
#[derive(Debug, Clone, Copy)]
pub struct Numbered<'a> {
    /// The datagram's number: a capture's frame number, or a live datagram's arrival count.
    pub number: u64,
    /// The sender.
    pub from: SocketAddr,
    /// The receiver.
    pub to: SocketAddr,
    /// The UDP payload.
    pub datagram: &'a [u8],
}

/// The sequential half of a stateful layer: sees every datagram of its ports once, in capture
/// (or arrival) order, and says what the per-datagram reading needs to know about it. It
/// should do only what needs that order (it runs on one thread: netcode's opens packets here
/// because its replay window moves only for packets that open, and hands the plaintext on so
/// that nothing is decrypted twice, a chunk's plaintexts in one buffer:
/// [`Tracker::observe_batch`]) and hold bounded memory whatever the traffic.
pub trait Tracker: Send {
    /// Takes note of the datagram from `from` to `to` whose UDP payload is `datagram`, and
    /// returns what the dissection of that datagram needs.
    fn observe(&mut self, from: SocketAddr, to: SocketAddr, datagram: &[u8]) -> Observation;

    /// [`Tracker::observe`] for the datagram the tools number `number`: a capture's frame
    /// number (from 1, as Wireshark numbers frames), or a live datagram's arrival count. A
    /// layer that reports which datagrams something came from (a reassembled packet or block)
    /// keeps the number; the default forgets it.
    fn observe_numbered(
        &mut self,
        number: u64,
        from: SocketAddr,
        to: SocketAddr,
        datagram: &[u8],
    ) -> Observation {
        let _ = number;
        self.observe(from, to, datagram)
    }

    /// [`Tracker::observe_numbered`] for each datagram of `batch`, in order, each observation
    /// appended to `out` (one per datagram). The tools hand a capture's datagrams in chunks
    /// (`decode`'s and `check`'s), observe them on one thread and dissect each chunk on
    /// another: a layer that hands on what it decrypted overrides this to put the whole
    /// chunk's bytes in one buffer that the chunk's observations share, so that the thread that
    /// dissects the chunk frees one buffer, not one per datagram (memory allocated on one
    /// thread and freed on another makes the allocator's threads wait on each other). What
    /// the pass decides must be the same as datagram by datagram. The default observes one
    /// datagram at a time.
    fn observe_batch(&mut self, batch: &[Numbered<'_>], out: &mut Vec<Observation>) {
        out.reserve(batch.len());
        for b in batch {
            out.push(self.observe_numbered(b.number, b.from, b.to, b.datagram));
        }
    }

    /// The traffic ended (the capture's last datagram was observed): what the layer still
    /// held unfinished (a fragmented packet or block whose other fragments never came), one
    /// line each naming it. The default holds nothing.
    fn finish(&mut self) -> Vec<String> {
        Vec::new()
    }

    /// Whether the observations this pass returns may carry what it decrypted (default: yes,
    /// for a tracker that decrypts anything), so that the dissection of the same bytes does not
    /// decrypt them again. An owner that keeps every observation of a capture (the TUI, a
    /// plaintext export: [`Observation`]s live as long as the capture) turns it off: its
    /// memory is then the capture's alone, and each dissection decrypts for itself. What the
    /// pass decides (replays, reassembly) is the same either way. Default: does nothing.
    fn keep_plaintext(&mut self, keep: bool) {
        let _ = keep;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_observation_gives_back_its_own_type_only() {
        let o = Observation::new(7u32);
        assert_eq!(o.get::<u32>(), Some(&7));
        assert_eq!(o.get::<u64>(), None);
        assert!(Observation::NONE.is_none() && !o.is_none());
        assert_eq!(Observation::NONE.get::<u32>(), None);
        assert_eq!(format!("{:?}", o.clone()), "Observation(..)");
    }

    #[test]
    fn a_batch_of_observations_reads_back_each_value() {
        let batch: Vec<Observation> = Observation::batch(vec![7u32, 8, 9]).collect();
        assert_eq!(batch.len(), 3);
        let got: Vec<Option<&u32>> = batch.iter().map(Observation::get::<u32>).collect();
        assert_eq!(got, [Some(&7), Some(&8), Some(&9)]);
        assert_eq!(batch[1].get::<u64>(), None);
        assert_eq!(batch[1].get::<Vec<u32>>(), None, "a value, not the batch");
        assert!(!batch[0].is_none());
        let kept = batch[2].clone();
        drop(batch);
        assert_eq!(kept.get::<u32>(), Some(&9));
        assert_eq!(Observation::batch(Vec::<u32>::new()).count(), 0);
        assert!(Observation::default().is_none());
        // No bigger than a value and an index: kept per datagram of a whole capture.
        assert!(std::mem::size_of::<Observation>() <= 3 * std::mem::size_of::<usize>());
    }
}
