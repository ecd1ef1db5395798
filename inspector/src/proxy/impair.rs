//! Impairment: drop, duplicate, delay with jitter and reorder, each with a probability and a
//! direction, drawn from a seeded generator so that a run repeats: each client has a stream
//! per direction ([`super::ClientDraws`]), so the replies interleaving otherwise with the
//! requests in another run changes no decision.
//!
//! Every enabled impairment draws exactly one number per datagram of its direction (the delay
//! one more for its jitter), whatever the others decided: the drop pattern of a seed does not
//! change when a delay is added. The order of application is drop (nothing else happens to a
//! dropped datagram), duplicate (the copy follows the original at once), delay (both copies),
//! reorder (held back until the next datagram of its client and direction has gone, at most
//! `hold_ms`). A delayed datagram is not also held back, and a flow holds one datagram at a
//! time (a second draw while one is held sends at once, and releases the held one behind it);
//! the NDJSON lines list what was drawn.
//!
//! Delayed and held datagrams wait in a [`Scheduler`] bounded in count and bytes: when it is
//! full a datagram that should wait is dropped and counted, never queued without bound.

use super::spec::Spec;
use super::{Direction, Directions};
use rand::Rng;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::hash::Hash;
use std::ops::{Index, IndexMut};
use std::time::{Duration, Instant};

/// A probability and the directions it applies to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Chance {
    /// Probability per datagram, 0..=1.
    pub p: f64,
    /// Directions it applies to.
    pub directions: Directions,
}

impl Chance {
    /// Draws for one datagram: `None` when the direction is not concerned (nothing drawn).
    fn roll(&self, dir: Direction, rng: &mut impl Rng) -> Option<bool> {
        self.directions
            .contains(dir)
            .then(|| rng.random::<f64>() < self.p)
    }
}

/// An impairment: what may happen to a datagram on its way. Adding one is a variant here and
/// its place in [`Impairment::ALL`]; the compiler then points at each match that must learn it
/// (its spec, its draw, its description, its command-line option).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Impairment {
    /// Not forwarded.
    Drop,
    /// Forwarded twice.
    Duplicate,
    /// Forwarded late.
    Delay,
    /// Held back behind the next datagram of its flow.
    Reorder,
}

impl Impairment {
    /// Every impairment, in the order they are drawn and applied (a variant's place here is
    /// its index in a [`PerImpairment`]).
    pub const ALL: [Impairment; 4] = [
        Impairment::Drop,
        Impairment::Duplicate,
        Impairment::Delay,
        Impairment::Reorder,
    ];

    /// Its name: the option (`--drop`), the key in a rules file's `[impair]`, the NDJSON
    /// lines' `impairments`.
    pub fn name(self) -> &'static str {
        match self {
            Impairment::Drop => "drop",
            Impairment::Duplicate => "duplicate",
            Impairment::Delay => "delay",
            Impairment::Reorder => "reorder",
        }
    }

    /// What happened to the datagrams it took, as the closing summary counts them.
    pub fn done(self) -> &'static str {
        match self {
            Impairment::Drop => "dropped",
            Impairment::Duplicate => "duplicated",
            Impairment::Delay => "delayed",
            Impairment::Reorder => "reordered",
        }
    }

    /// The impairment named `name` ([`Impairment::name`]).
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|i| i.name() == name)
    }
}

/// One value per [`Impairment`], indexed by it: the draws of a [`Decision`], the chances in
/// force of [`Impairments`], the relay's counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PerImpairment<T>([T; Impairment::ALL.len()]);

impl<T> Index<Impairment> for PerImpairment<T> {
    type Output = T;
    fn index(&self, i: Impairment) -> &T {
        &self.0[i as usize]
    }
}

impl<T> IndexMut<Impairment> for PerImpairment<T> {
    fn index_mut(&mut self, i: Impairment) -> &mut T {
        &mut self.0[i as usize]
    }
}

/// The impairments in force.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Impairments {
    /// Which datagrams each impairment takes; `None` for one not in force.
    pub chances: PerImpairment<Option<Chance>>,
    /// The delay's mean, in milliseconds: uniform in `delay_ms - jitter_ms ..= delay_ms +
    /// jitter_ms` (never below 0).
    pub delay_ms: f64,
    /// Half-width of the delay's uniform jitter, in milliseconds.
    pub jitter_ms: f64,
    /// The longest a reordered datagram is held when no other of its flow follows it.
    pub hold: Duration,
}

/// What happens to one datagram.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Decision {
    /// The impairments drawn for it (a dropped datagram: drop alone).
    pub drawn: PerImpairment<bool>,
    /// How long it waits when delayed.
    pub delay: Option<Duration>,
}

impl Decision {
    /// True when `kind` was drawn for the datagram.
    pub fn has(&self, kind: Impairment) -> bool {
        self.drawn[kind]
    }
}

const CHANCE_KEYS: &str = "p (or probability), dir (or direction)";

/// The longest delay, jitter or reorder hold a spec may ask for, in milliseconds: one hour.
/// Larger values are refused when the spec is read, so that no draw can overflow a
/// [`Duration`] or an [`Instant`].
pub const MAX_WAIT_MS: f64 = 3_600_000.0;

/// [`MAX_WAIT_MS`] as messages say it.
const MAX_WAIT_TEXT: &str = "3600000 (one hour)";

/// A duration of `ms` milliseconds, never panicking: below 0 (or NaN) is zero, above twice
/// [`MAX_WAIT_MS`] (a delay plus its jitter) is that.
fn millis(ms: f64) -> Duration {
    let ms = if ms.is_nan() {
        0.0
    } else {
        ms.clamp(0.0, 2.0 * MAX_WAIT_MS)
    };
    Duration::try_from_secs_f64(ms / 1000.0).unwrap_or(Duration::ZERO)
}

fn chance(
    spec: &mut Spec,
    default_dirs: Directions,
    default_p: Option<f64>,
) -> Result<Chance, String> {
    let p = spec.probability(&["p", "probability"])?.or(default_p);
    let Some(p) = p else {
        return Err(format!("{}: needs a probability, e.g. p=5%", spec.origin()));
    };
    let directions = spec
        .direction(&["dir", "direction"])?
        .unwrap_or(default_dirs);
    Ok(Chance { p, directions })
}

impl Impairments {
    /// Sets one impairment from its spec: `drop`, `duplicate`, `delay` or `reorder`.
    ///
    /// # Errors
    /// An unknown kind, a missing probability, an unknown key, a bad value.
    pub fn set(&mut self, kind: &str, mut spec: Spec) -> Result<(), String> {
        let Some(kind) = Impairment::parse(kind) else {
            let known: Vec<_> = Impairment::ALL.iter().map(|i| i.name()).collect();
            return Err(format!(
                "{}: unknown impairment (known: {})",
                spec.origin(),
                known.join(", ")
            ));
        };
        let keys = match kind {
            Impairment::Drop | Impairment::Duplicate => {
                self.chances[kind] = Some(chance(&mut spec, Directions::Both, None)?);
                CHANCE_KEYS.to_owned()
            }
            Impairment::Delay => {
                let ms = spec.number_at_most(&["ms"], MAX_WAIT_MS, MAX_WAIT_TEXT)?;
                let jitter_ms = spec
                    .number_at_most(&["jitter_ms", "jitter"], MAX_WAIT_MS, MAX_WAIT_TEXT)?
                    .unwrap_or(0.0);
                let c = chance(&mut spec, Directions::Both, Some(1.0))?;
                let Some(ms) = ms else {
                    return Err(format!("{}: needs ms=MILLISECONDS", spec.origin()));
                };
                self.chances[kind] = Some(c);
                self.delay_ms = ms;
                self.jitter_ms = jitter_ms;
                format!("ms, jitter_ms, {CHANCE_KEYS}")
            }
            Impairment::Reorder => {
                let hold_ms = spec
                    .number_at_most(&["hold_ms", "hold"], MAX_WAIT_MS, MAX_WAIT_TEXT)?
                    .unwrap_or(50.0);
                self.chances[kind] = Some(chance(&mut spec, Directions::Both, None)?);
                self.hold = millis(hold_ms);
                format!("hold_ms, {CHANCE_KEYS}")
            }
        };
        spec.finish(&keys)
    }

    /// True when nothing is impaired.
    pub fn is_empty(&self) -> bool {
        Impairment::ALL.iter().all(|&i| self.chances[i].is_none())
    }

    /// Decides the fate of one datagram of direction `dir`: each impairment in force whose
    /// directions hold `dir` draws, in the order of [`Impairment::ALL`].
    pub fn decide(&self, dir: Direction, rng: &mut impl Rng) -> Decision {
        let mut d = Decision::default();
        for kind in Impairment::ALL {
            let Some(hit) = self.chances[kind].and_then(|c| c.roll(dir, rng)) else {
                continue;
            };
            match kind {
                Impairment::Delay => {
                    // Bounded again here (a spec bounds them already): a jitter range wider
                    // than f64 can hold would make the draw fail.
                    let j = self.jitter_ms.min(MAX_WAIT_MS);
                    let jitter = if j > 0.0 {
                        rng.random_range(-j..=j)
                    } else {
                        0.0
                    };
                    d.delay = hit.then(|| millis(self.delay_ms + jitter));
                }
                Impairment::Drop | Impairment::Duplicate | Impairment::Reorder => {}
            }
            d.drawn[kind] = hit;
        }
        if d.has(Impairment::Drop) {
            // Nothing else happens to a dropped datagram.
            let mut drawn = PerImpairment::default();
            drawn[Impairment::Drop] = true;
            return Decision { drawn, delay: None };
        }
        d
    }

    /// A one-line description for the start-up message.
    pub fn describe(&self) -> String {
        let c = |c: &Chance| format!("{}% {}", c.p * 100.0, c.directions.name());
        let parts: Vec<String> = Impairment::ALL
            .into_iter()
            .filter_map(|kind| {
                let chance = self.chances[kind]?;
                Some(match kind {
                    Impairment::Drop | Impairment::Duplicate => {
                        format!("{} {}", kind.name(), c(&chance))
                    }
                    Impairment::Delay => format!(
                        "delay {}±{} ms {}",
                        self.delay_ms,
                        self.jitter_ms,
                        c(&chance)
                    ),
                    Impairment::Reorder => {
                        format!("reorder {} (hold {} ms)", c(&chance), self.hold.as_millis())
                    }
                })
            })
            .collect();
        parts.join(", ")
    }
}

struct Timed<T> {
    due: Instant,
    seq: u64,
    bytes: usize,
    item: T,
}

impl<T> PartialEq for Timed<T> {
    fn eq(&self, other: &Self) -> bool {
        (self.due, self.seq) == (other.due, other.seq)
    }
}
impl<T> Eq for Timed<T> {}
impl<T> PartialOrd for Timed<T> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Timed<T> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.due, self.seq).cmp(&(other.due, other.seq))
    }
}

/// Datagrams waiting to be sent: delayed ones by due time (first in, first out among equal
/// times) and at most one held back per flow for reordering. Bounded in count and bytes.
pub struct Scheduler<K, T> {
    delayed: BinaryHeap<Reverse<Timed<T>>>,
    held: HashMap<K, Timed<T>>,
    seq: u64,
    bytes: usize,
    max_len: usize,
    max_bytes: usize,
}

impl<K: Eq + Hash + Clone, T> Scheduler<K, T> {
    /// An empty scheduler holding at most `max_len` datagrams and `max_bytes` bytes.
    pub fn new(max_len: usize, max_bytes: usize) -> Self {
        Scheduler {
            delayed: BinaryHeap::new(),
            held: HashMap::new(),
            seq: 0,
            bytes: 0,
            max_len,
            max_bytes,
        }
    }

    /// Datagrams waiting.
    pub fn len(&self) -> usize {
        self.delayed.len() + self.held.len()
    }

    /// True when nothing waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn admit(&mut self, bytes: usize) -> bool {
        if self.len() >= self.max_len || self.bytes.saturating_add(bytes) > self.max_bytes {
            return false;
        }
        self.bytes += bytes;
        self.seq += 1;
        true
    }

    /// Queues `item` (of `bytes` bytes) until `due`.
    ///
    /// # Errors
    /// The item back when the scheduler is full.
    pub fn delay(&mut self, due: Instant, bytes: usize, item: T) -> Result<(), T> {
        if !self.admit(bytes) {
            return Err(item);
        }
        let seq = self.seq;
        self.delayed.push(Reverse(Timed {
            due,
            seq,
            bytes,
            item,
        }));
        Ok(())
    }

    /// True when `flow` has a datagram held back.
    pub fn is_holding(&self, flow: &K) -> bool {
        self.held.contains_key(flow)
    }

    /// Holds `item` back for `flow` until [`Scheduler::release`] or `deadline`.
    ///
    /// # Errors
    /// The item back when the scheduler is full or the flow already holds one.
    pub fn hold(&mut self, flow: K, deadline: Instant, bytes: usize, item: T) -> Result<(), T> {
        if self.held.contains_key(&flow) || !self.admit(bytes) {
            return Err(item);
        }
        let seq = self.seq;
        self.held.insert(
            flow,
            Timed {
                due: deadline,
                seq,
                bytes,
                item,
            },
        );
        Ok(())
    }

    /// Takes the datagram held back for `flow` (to be sent after the one going now).
    pub fn release(&mut self, flow: &K) -> Option<T> {
        let t = self.held.remove(flow)?;
        self.bytes -= t.bytes;
        Some(t.item)
    }

    /// Takes the next datagram whose time has come (delays first, then expired holds).
    pub fn pop_due(&mut self, now: Instant) -> Option<T> {
        if self.delayed.peek().is_some_and(|Reverse(t)| t.due <= now) {
            let Reverse(t) = self.delayed.pop()?;
            self.bytes -= t.bytes;
            return Some(t.item);
        }
        let flow = self
            .held
            .iter()
            .filter(|(_, t)| t.due <= now)
            .min_by_key(|(_, t)| (t.due, t.seq))
            .map(|(k, _)| k.clone())?;
        self.release(&flow)
    }

    /// When the next datagram falls due.
    pub fn next_due(&self) -> Option<Instant> {
        let d = self.delayed.peek().map(|Reverse(t)| t.due);
        let h = self.held.values().map(|t| t.due).min();
        match (d, h) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn spec(text: &str) -> Spec {
        Spec::from_cli("--test", text, Some("p")).unwrap()
    }

    #[test]
    fn specs_set_each_impairment() {
        let mut i = Impairments::default();
        assert!(i.is_empty());
        i.set("drop", spec("10%,dir=to_server")).unwrap();
        i.set("delay", spec("ms=40,jitter_ms=10")).unwrap();
        i.set("reorder", spec("p=0.5,hold_ms=20")).unwrap();
        assert_eq!(
            i.chances[Impairment::Drop].unwrap().directions,
            Directions::ToServer
        );
        assert_eq!(i.chances[Impairment::Delay].unwrap().p, 1.0);
        assert_eq!(i.hold, Duration::from_millis(20));
        assert!(
            i.set("delay", spec("jitter_ms=3"))
                .unwrap_err()
                .contains("ms=")
        );
        assert!(
            i.set("drop", spec("dir=both"))
                .unwrap_err()
                .contains("probability")
        );
        assert!(
            i.set("warp", spec("5%"))
                .unwrap_err()
                .contains("unknown impairment")
        );
        assert_eq!(
            i.describe(),
            "drop 10% to_server, delay 40±10 ms 100% both, reorder 50% both (hold 20 ms)"
        );
    }

    #[test]
    fn waits_are_bounded_when_read_and_never_panic_when_drawn() {
        let mut i = Impairments::default();
        for (kind, text, key) in [
            (
                "delay",
                "ms=1e300",
                "ms must be at most 3600000 (one hour) (found 1e300)",
            ),
            ("delay", "ms=1e22", "ms must be at most"),
            ("delay", "ms=5,jitter_ms=1e308", "jitter_ms must be at most"),
            ("reorder", "p=1,hold_ms=1e300", "hold_ms must be at most"),
            ("delay", "ms=3600001", "found 3600001"),
        ] {
            let e = i.set(kind, spec(text)).unwrap_err();
            assert!(e.contains(key), "{text}: {e}");
        }
        i.set("delay", spec("ms=3600000,jitter_ms=3600000"))
            .unwrap();
        i.set("reorder", spec("p=1,hold_ms=3600000")).unwrap();
        assert_eq!(i.hold, Duration::from_secs(3600));
        // Values no spec lets through, set directly: the draw clamps instead of panicking.
        for (ms, jitter_ms) in [
            (1e300, 0.0),
            (5.0, 1e308),
            (f64::INFINITY, f64::INFINITY),
            (f64::NAN, f64::NAN),
            (-1e300, 1e300),
        ] {
            i.chances[Impairment::Delay] = Some(Chance {
                p: 1.0,
                directions: Directions::Both,
            });
            (i.delay_ms, i.jitter_ms) = (ms, jitter_ms);
            let mut rng = ChaCha8Rng::seed_from_u64(1);
            let d = i.decide(Direction::ToServer, &mut rng).delay.unwrap();
            assert!(d <= Duration::from_secs(7200), "{ms} {jitter_ms}: {d:?}");
        }
    }

    #[test]
    fn a_seed_repeats_and_the_ratio_is_near_p() {
        let mut i = Impairments::default();
        i.set("drop", spec("p=0.2,dir=to_server")).unwrap();
        i.set("delay", spec("ms=10,jitter_ms=5,p=0.5")).unwrap();
        let run = |seed| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            (0..10_000)
                .map(|k| {
                    i.decide(
                        if k % 2 == 0 {
                            Direction::ToServer
                        } else {
                            Direction::ToClient
                        },
                        &mut rng,
                    )
                })
                .collect::<Vec<_>>()
        };
        let a = run(9);
        assert_eq!(a, run(9));
        assert_ne!(a, run(10));
        let dropped = |d: &&Decision| d.has(Impairment::Drop);
        let dropped_server = a.iter().step_by(2).filter(dropped).count();
        let dropped_client = a.iter().skip(1).step_by(2).filter(dropped).count();
        assert!((900..1100).contains(&dropped_server), "{dropped_server}");
        assert_eq!(dropped_client, 0);
        for d in a.iter().filter_map(|d| d.delay) {
            assert!(
                d >= Duration::from_millis(5) && d <= Duration::from_millis(15),
                "{d:?}"
            );
        }
    }

    #[test]
    fn impairments_are_indexed_in_the_order_of_all_and_named_once() {
        for (k, i) in Impairment::ALL.into_iter().enumerate() {
            assert_eq!(i as usize, k, "{i:?}");
            assert_eq!(Impairment::parse(i.name()), Some(i));
        }
        assert_eq!(Impairment::parse("warp"), None);
        // A dropped datagram has nothing else drawn, whatever else is in force.
        let mut i = Impairments::default();
        for (kind, text) in [
            ("drop", "p=1"),
            ("duplicate", "p=1"),
            ("delay", "ms=5,p=1"),
            ("reorder", "p=1"),
        ] {
            i.set(kind, spec(text)).unwrap();
        }
        let d = i.decide(Direction::ToClient, &mut ChaCha8Rng::seed_from_u64(3));
        let drawn: Vec<_> = Impairment::ALL.into_iter().filter(|&k| d.has(k)).collect();
        assert_eq!(drawn, [Impairment::Drop]);
        assert_eq!(d.delay, None);
    }

    #[test]
    fn the_scheduler_is_bounded_and_orders_by_time() {
        let t0 = Instant::now();
        let ms = |n| t0 + Duration::from_millis(n);
        let mut s: Scheduler<u8, &str> = Scheduler::new(3, 100);
        s.delay(ms(20), 10, "late").unwrap();
        s.delay(ms(10), 10, "early").unwrap();
        s.hold(1, ms(15), 10, "held").unwrap();
        assert_eq!(s.delay(ms(1), 1, "no room"), Err("no room"));
        assert_eq!(s.next_due(), Some(ms(10)));
        assert_eq!(s.pop_due(ms(5)), None);
        assert_eq!(s.pop_due(ms(30)), Some("early"));
        assert_eq!(s.pop_due(ms(30)), Some("late"));
        assert_eq!(s.pop_due(ms(30)), Some("held"));
        assert!(s.is_empty());
        let mut s: Scheduler<u8, &str> = Scheduler::new(10, 15);
        s.hold(1, ms(99), 10, "a").unwrap();
        assert_eq!(s.hold(2, ms(99), 10, "too big"), Err("too big"));
        assert_eq!(
            s.hold(1, ms(99), 1, "second for flow 1"),
            Err("second for flow 1")
        );
        assert_eq!(s.release(&1), Some("a"));
        s.hold(2, ms(99), 10, "fits now").unwrap();
    }
}
