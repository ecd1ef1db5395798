//! Receivers for many connections at once: one [`Receiver`] per key (a transport keys them by
//! client address, server address and direction), at most [`MAX_CONNECTIONS`] of them (the
//! least recently used is given up to make room, its pending packets and blocks reported).

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;
use std::sync::Arc;

use crate::config::{Config, ConfigError};
use crate::receiver::{Datagram, Note, Receiver};

/// Connections (directions) followed at once.
pub const MAX_CONNECTIONS: usize = 1024;

/// One [`Receiver`] per key, bounded.
pub struct Connections<K> {
    cfg: Arc<Config>,
    trace: bool,
    receivers: HashMap<K, Receiver>,
    /// Keys, least recently used first.
    order: VecDeque<K>,
    /// What the connections given up for room still held.
    evicted: Vec<(K, Vec<Note>)>,
}

impl<K: Eq + Hash + Clone> Connections<K> {
    /// Receivers under `cfg`; `trace` records every field.
    ///
    /// # Errors
    /// The configuration's first invalid setting.
    pub fn new(cfg: Arc<Config>, trace: bool) -> Result<Self, ConfigError> {
        cfg.validate()?;
        Ok(Connections {
            cfg,
            trace,
            receivers: HashMap::new(),
            order: VecDeque::new(),
            evicted: Vec::new(),
        })
    }

    /// Reads one netcode payload of the connection `key` ([`Receiver::receive`]).
    pub fn receive(&mut self, key: &K, datagram: u64, payload: &[u8]) -> Datagram {
        if let Some(i) = self.order.iter().position(|k| k == key) {
            if let Some(k) = self.order.remove(i) {
                self.order.push_back(k);
            }
        } else {
            if self.order.len() >= MAX_CONNECTIONS
                && let Some(old) = self.order.pop_front()
                && let Some(mut r) = self.receivers.remove(&old)
            {
                self.evicted.push((old, r.finish()));
            }
            self.order.push_back(key.clone());
        }
        let (cfg, trace) = (&self.cfg, self.trace);
        self.receivers
            .entry(key.clone())
            .or_insert_with(|| Receiver::validated(cfg.clone(), trace))
            .receive(datagram, payload)
    }

    /// Ends the connection `key` (a disconnect): what it still held, if it was followed.
    pub fn end(&mut self, key: &K) -> Option<Vec<Note>> {
        let i = self.order.iter().position(|k| k == key)?;
        self.order.remove(i);
        self.receivers.remove(key).map(|mut r| r.finish())
    }

    /// The connections given up for room since the last call, with what they still held.
    pub fn take_evicted(&mut self) -> Vec<(K, Vec<Note>)> {
        std::mem::take(&mut self.evicted)
    }

    /// Ends every connection: what each still held.
    pub fn finish(&mut self) -> Vec<(K, Vec<Note>)> {
        let mut out = self.take_evicted();
        while let Some(k) = self.order.pop_front() {
            if let Some(mut r) = self.receivers.remove(&k) {
                out.push((k, r.finish()));
            }
        }
        out
    }

    /// How many connections are followed.
    pub fn len(&self) -> usize {
        self.receivers.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.receivers.is_empty()
    }
}
