//! The client table: one upstream socket per client address, so that the server sees each
//! client as its own peer and its replies find their way back.
//!
//! A mapping lives while datagrams pass in either direction; after `idle` without any it is
//! removed (and its socket closed). The table holds at most `max` mappings: a new client when
//! it is full evicts the least recently active one. A flood of spoofed source addresses
//! therefore costs at most `max` sockets and never grows the table.
//!
//! Both maps hash with foldhash (every datagram looks a client up, and std's SipHash was 15% of
//! the relay's instructions). Clients choose their addresses, and a spoofer any it likes, so
//! the client map's hasher is foldhash's randomly seeded one: its seed is drawn per process
//! and per table, so addresses that collide cannot be worked out offline and sent; foldhash is
//! not a keyed PRF like SipHash, but the table holds at most `max` clients, so even a chain
//! of collisions costs one lookup at most `max` comparisons, not an unbounded walk. The id
//! map's keys are the relay's own counter.

use foldhash::fast::RandomState;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// One client's mapping.
#[derive(Debug)]
pub struct Mapping<S> {
    /// The client's address.
    pub client: SocketAddr,
    /// Its upstream socket (or whatever the relay keeps per client).
    pub socket: S,
    /// The last datagram in either direction.
    pub last_active: Instant,
}

/// Clients by address and by id (the relay's poll token).
#[derive(Debug)]
pub struct Mappings<S> {
    by_client: HashMap<SocketAddr, usize, RandomState>,
    by_id: HashMap<usize, Mapping<S>, RandomState>,
    next_id: usize,
    max: usize,
    idle: Duration,
}

impl<S> Mappings<S> {
    /// An empty table of at most `max` mappings (at least 1) that idle out after `idle`. Ids
    /// start at `first_id` and are never reused.
    pub fn new(max: usize, idle: Duration, first_id: usize) -> Self {
        Mappings {
            by_client: HashMap::default(),
            by_id: HashMap::default(),
            next_id: first_id,
            max: max.max(1),
            idle,
        }
    }

    /// How many clients are mapped.
    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    /// True when no client is mapped.
    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    /// The id of a client's mapping, marking it active at `now`.
    pub fn touch_client(&mut self, client: &SocketAddr, now: Instant) -> Option<usize> {
        let id = *self.by_client.get(client)?;
        if let Some(m) = self.by_id.get_mut(&id) {
            m.last_active = now;
        }
        Some(id)
    }

    /// The mapping `id`, marking it active at `now`.
    pub fn touch_id(&mut self, id: usize, now: Instant) -> Option<&mut Mapping<S>> {
        let m = self.by_id.get_mut(&id)?;
        m.last_active = now;
        Some(m)
    }

    /// The mapping `id`.
    pub fn get(&self, id: usize) -> Option<&Mapping<S>> {
        self.by_id.get(&id)
    }

    /// The mapping `id`, to change what the relay keeps in it.
    pub fn get_mut(&mut self, id: usize) -> Option<&mut Mapping<S>> {
        self.by_id.get_mut(&id)
    }

    /// The id the next [`Mappings::insert`] will give.
    pub fn next_id(&self) -> usize {
        self.next_id
    }

    /// Maps a new client; when the table is full, the least recently active mapping is evicted
    /// first and returned.
    pub fn insert(
        &mut self,
        client: SocketAddr,
        socket: S,
        now: Instant,
    ) -> (usize, Option<Mapping<S>>) {
        let evicted = if self.by_id.len() >= self.max {
            let oldest = self
                .by_id
                .iter()
                .min_by_key(|(id, m)| (m.last_active, **id))
                .map(|(id, _)| *id);
            oldest.and_then(|id| self.remove(id))
        } else {
            None
        };
        let id = self.next_id;
        self.next_id += 1;
        self.by_client.insert(client, id);
        self.by_id.insert(
            id,
            Mapping {
                client,
                socket,
                last_active: now,
            },
        );
        (id, evicted)
    }

    /// Removes the mapping `id`.
    pub fn remove(&mut self, id: usize) -> Option<Mapping<S>> {
        let m = self.by_id.remove(&id)?;
        self.by_client.remove(&m.client);
        Some(m)
    }

    /// Removes and returns the mappings idle since before `now - idle`.
    pub fn expire(&mut self, now: Instant) -> Vec<Mapping<S>> {
        let idle: Vec<usize> = self
            .by_id
            .iter()
            .filter(|(_, m)| now.saturating_duration_since(m.last_active) >= self.idle)
            .map(|(id, _)| *id)
            .collect();
        idle.into_iter().filter_map(|id| self.remove(id)).collect()
    }

    /// The idle timeout.
    pub fn idle(&self) -> Duration {
        self.idle
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(port: u16) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], port))
    }

    #[test]
    fn clients_map_idle_out_and_evict_the_least_active() {
        let t0 = Instant::now();
        let s = |n| t0 + Duration::from_secs(n);
        let mut m: Mappings<&str> = Mappings::new(2, Duration::from_secs(10), 1);
        let (a, none) = m.insert(addr(1), "a", s(0));
        assert!(none.is_none());
        let (b, _) = m.insert(addr(2), "b", s(1));
        assert_eq!((a, b), (1, 2));
        assert_eq!(m.touch_client(&addr(1), s(2)), Some(a));
        // Full: the least recently active (b, at 1 s) goes.
        let (c, evicted) = m.insert(addr(3), "c", s(3));
        assert_eq!(evicted.map(|e| e.socket), Some("b"));
        assert_eq!(c, 3);
        assert_eq!(m.touch_client(&addr(2), s(3)), None);
        assert_eq!(m.len(), 2);
        // Replies keep a mapping alive too.
        m.touch_id(c, s(12));
        let gone: Vec<_> = m.expire(s(12)).into_iter().map(|g| g.socket).collect();
        assert_eq!(gone, ["a"]);
        assert!(m.expire(s(21)).is_empty());
        assert_eq!(m.expire(s(22)).len(), 1);
        assert!(m.is_empty());
        assert_eq!(m.next_id(), 4);
    }
}
