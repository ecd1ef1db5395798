//! Which dissector reads which UDP port, like Wireshark's "Decode As": the inspector's only
//! knowledge of protocols. Every format (compiled packet sets, batch message sets, schemas) is
//! a [`Dissector`]; nothing here or in the outputs, `check` or the TUI branches on a format.
//!
//! The capture decides first: a datagram cut short by the snap length is
//! [`Status::Truncated`], an IP fragment [`Status::Fragment`], one on ports without a
//! dissector [`Status::Undecoded`]; every other datagram gets its dissector's verdict or
//! dissection. Both agree on the status (`bitlens_codec::dissect`), so text, JSON, `check`
//! and the TUI show every datagram with one status.

use crate::capture::{Datagram, Status as CaptureStatus};
use bitlens_codec::ProtocolId;
use bitlens_codec::dissect::{Dissection, Dissector, Layout, Status, Verdict};
use bitlens_codec::observe::{Numbered, Observation, Tracker};
use bitlens_codec::transport::{Stack, Transport};
use bitlens_netcode::Netcode;
use bitlens_schema::Schema;
use bitlens_schema::dissect::{SchemaDissector, batch_dissector};
use bitlens_yojimbo::{Config as YojimboConfig, Yojimbo};
use std::collections::BTreeMap;
use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;

/// The names of the decoders a schema file makes known ([`Dissectors::set_schema`]): its
/// packets, and its `[batch]` section's batches. `--decode PORT=NAME` takes them with
/// `--schema FILE`.
pub const SCHEMA_DECODERS: [&str; 2] = ["schema", "schema-batch"];

/// The dissectors per UDP port, and every dissector `--decode PORT=NAME` can name.
#[derive(Clone, Default)]
pub struct Dissectors {
    by_port: BTreeMap<u16, Arc<dyn Dissector>>,
    /// By name, in the order they were added (the first is `decode-bytes`' default).
    known: Vec<Arc<dyn Dissector>>,
    /// Transports `--decode PORT=TRANSPORT+NAME` can stack over a known dissector.
    transports: Vec<Arc<dyn Transport>>,
    /// The program's own yojimbo configuration ([`Dissectors::set_yojimbo_config`]).
    yojimbo: Option<Arc<YojimboConfig>>,
    /// The configuration the `yojimbo` transport reads with (the schema's or the program's).
    yojimbo_read: Option<Arc<YojimboConfig>>,
}

impl fmt::Debug for Dissectors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dissectors")
            .field("ports", &self.describe())
            .field("known", &self.names().collect::<Vec<_>>())
            .finish()
    }
}

impl Dissectors {
    /// No dissector on any port.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets `dissector` on `port` and makes it known by its name (replacing a known one of the
    /// same name).
    pub fn register(&mut self, port: u16, dissector: Arc<dyn Dissector>) {
        self.add_known(Arc::clone(&dissector));
        self.by_port.insert(port, dissector);
    }

    /// Makes `dissector` known by its name, on no port (`--decode PORT=NAME` can set it).
    pub fn add_known(&mut self, dissector: Arc<dyn Dissector>) {
        match self.known.iter_mut().find(|k| k.name() == dissector.name()) {
            Some(k) => *k = dissector,
            None => self.known.push(dissector),
        }
    }

    /// The dissector named `name`.
    pub fn by_name(&self, name: &str) -> Option<&Arc<dyn Dissector>> {
        self.known.iter().find(|k| k.name() == name)
    }

    /// Makes `transport` known by its name (replacing a known one of the same name, and
    /// re-stacking the ports that read with it), so that `--decode PORT=NAME` and `--decode
    /// PORT=NAME+INNER` can name it.
    pub fn add_transport(&mut self, transport: Arc<dyn Transport>) {
        match self
            .transports
            .iter_mut()
            .find(|t| t.name() == transport.name())
        {
            Some(t) => *t = Arc::clone(&transport),
            None => self.transports.push(Arc::clone(&transport)),
        }
        // Stacks already made with a transport of that name take the new one (its keys).
        let restack = |d: &Arc<dyn Dissector>, known: &[Arc<dyn Dissector>]| {
            let (t, inner) = match d.name().split_once('+') {
                Some((t, inner)) => (t, Some(inner)),
                None => (d.name(), None),
            };
            if t != transport.name() {
                return None;
            }
            let inner = match inner {
                Some(n) => Some(Arc::clone(known.iter().find(|k| k.name() == n)?)),
                None => None,
            };
            Some(Arc::new(Stack::new(Arc::clone(&transport), inner)) as Arc<dyn Dissector>)
        };
        let known = self.known.clone();
        for d in self.by_port.values_mut().chain(self.known.iter_mut()) {
            if let Some(new) = restack(d, &known) {
                *d = new;
            }
        }
    }

    /// Makes `config` the program's yojimbo configuration (its channels and message types,
    /// [`Cli::yojimbo`](crate::Cli::yojimbo)), and the `yojimbo` transport (over netcode
    /// without keys) read with it.
    ///
    /// # Errors
    /// The configuration's first invalid setting.
    pub fn set_yojimbo_config(&mut self, config: YojimboConfig) -> Result<(), String> {
        self.yojimbo = Some(Arc::new(config));
        self.set_yojimbo(Netcode::new(), None)
    }

    /// Makes the `yojimbo` transport known over `netcode` (with its keys), with THE yojimbo
    /// configuration: the schema's `[yojimbo]` section when `schema` has one, else the
    /// program's own ([`Dissectors::set_yojimbo_config`]), else none (the layer then reads
    /// the reliable.io header and says the configuration is missing). Every tool gets its
    /// configuration here and nowhere else.
    ///
    /// # Errors
    /// A schema section or configuration that does not make a valid yojimbo configuration.
    pub fn set_yojimbo(
        &mut self,
        netcode: Netcode,
        schema: Option<&Arc<Schema>>,
    ) -> Result<(), String> {
        let config = schema
            .and_then(yojimbo_config_of_schema)
            .or_else(|| self.yojimbo.clone());
        self.yojimbo_read.clone_from(&config);
        let y = Yojimbo::new(netcode, config).map_err(|e| e.to_string())?;
        self.add_transport(Arc::new(y));
        Ok(())
    }

    /// The yojimbo configuration the `yojimbo` transport reads with (its channels and message
    /// types: the profile names message types by it), if it has one.
    pub fn yojimbo_config(&self) -> Option<&Arc<YojimboConfig>> {
        self.yojimbo_read.as_ref()
    }

    /// The known transports' names.
    pub fn transport_names(&self) -> impl Iterator<Item = &str> {
        self.transports.iter().map(|t| t.name())
    }

    /// What `--decode PORT=NAME` takes for each transport: `netcode, netcode+NAME` for one that
    /// goes in front of a protocol, `yojimbo` for one that reads its own.
    pub fn transport_choices(&self) -> impl Iterator<Item = String> + '_ {
        self.transports.iter().map(|t| match t.takes_inner() {
            true => format!("{0}, {0}+NAME", t.name()),
            false => t.name().to_owned(),
        })
    }

    /// `TRANSPORT+INNER` (or `TRANSPORT` alone: the payload as bytes) as a stacked dissector.
    fn stacked(&self, name: &str) -> Result<Arc<dyn Dissector>, String> {
        let (t, inner) = match name.split_once('+') {
            Some((t, inner)) => (t.trim(), Some(inner.trim())),
            None => (name, None),
        };
        let transport = self
            .transports
            .iter()
            .find(|x| x.name() == t)
            .ok_or_else(|| self.unknown(name))?;
        let inner = match inner {
            Some(_) if !transport.takes_inner() => {
                return Err(format!(
                    "the {t} layer reads its payload itself (its messages come from its \
                     configuration): name it alone, as in --decode PORT={t}"
                ));
            }
            Some(n) => Some(Arc::clone(self.by_name(n).ok_or_else(|| self.unknown(n))?)),
            None => None,
        };
        Ok(Arc::new(Stack::new(Arc::clone(transport), inner)))
    }

    /// The sequential pass over a capture's datagrams, when a dissector on some port has one
    /// (a transport); `None` otherwise, and then no tool runs a pass at all.
    pub fn observer(&self) -> Option<Observer> {
        let mut trackers: Vec<(usize, Box<dyn Tracker>)> = Vec::new();
        for d in self.by_port.values() {
            let id = Arc::as_ptr(d) as *const () as usize;
            if trackers.iter().any(|(k, _)| *k == id) {
                continue;
            }
            if let Some(t) = d.tracker() {
                trackers.push((id, t));
            }
        }
        (!trackers.is_empty()).then(|| Observer {
            dissectors: self.clone(),
            trackers,
            live: 0,
        })
    }

    /// Every datagram's observation, in order (empty when no dissector has a tracker: then
    /// [`seen_at`] gives [`Observation::NONE`] for all).
    pub fn observe_all<'a>(
        &self,
        datagrams: impl IntoIterator<Item = (&'a Datagram, &'a [u8])>,
    ) -> Vec<Observation> {
        self.observe_all_finished(datagrams).0
    }

    /// [`Dissectors::observe_all`], and what the transports still held unfinished when the
    /// last datagram was observed ([`Observer::finish`], one line each).
    ///
    /// The observations do not carry what the transports decrypted
    /// ([`Observer::keep_plaintext`]): kept for the whole capture, they would hold a second copy
    /// of every encrypted payload (two, with the sealed bytes they came from). Each dissection
    /// decrypts its datagram again instead.
    pub fn observe_all_finished<'a>(
        &self,
        datagrams: impl IntoIterator<Item = (&'a Datagram, &'a [u8])>,
    ) -> (Vec<Observation>, Vec<String>) {
        match self.observer() {
            Some(mut o) => {
                o.keep_plaintext(false);
                let seen = datagrams
                    .into_iter()
                    .map(|(d, payload)| o.observe(d, payload))
                    .collect();
                (seen, o.finish())
            }
            None => (Vec::new(), Vec::new()),
        }
    }

    /// The names of the known dissectors, in the order they were added.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.known.iter().map(|k| k.name())
    }

    /// The first dissector added (the one `decode-bytes` uses unless told otherwise).
    pub fn first(&self) -> Option<&Arc<dyn Dissector>> {
        self.known.first()
    }

    /// The ports with a dissector, and its name, in port order.
    pub fn ports(&self) -> impl Iterator<Item = (u16, &str)> {
        self.by_port.iter().map(|(p, d)| (*p, d.name()))
    }

    /// Loads a schema: `schema` (and, when it has a `[batch]` section, `schema-batch`) become
    /// known, and they replace the dissectors of their layout on every port (`schema` where
    /// framed packets were read, `schema-batch` where batches were), unless `--decode
    /// PORT=NAME` says otherwise later. A schema of only a `[yojimbo]` section has no packets:
    /// it replaces nothing (its configuration is the yojimbo layer's,
    /// [`Dissectors::set_yojimbo`]).
    pub fn set_schema(&mut self, schema: impl Into<Arc<Schema>>) {
        let schema: Arc<Schema> = schema.into();
        if !schema.has_protocol() && bitlens_schema::yojimbo::section(&schema).is_some() {
            return;
        }
        let packets: Arc<dyn Dissector> = Arc::new(SchemaDissector::new(Arc::clone(&schema)));
        let batches = batch_dissector(schema).map(|d| Arc::new(d) as Arc<dyn Dissector>);
        for d in self.by_port.values_mut() {
            let with = match d.layout() {
                Layout::Packets => Some(&packets),
                Layout::Batches => batches.as_ref(),
                Layout::Other => None,
            };
            if let Some(with) = with {
                *d = Arc::clone(with);
            }
        }
        self.add_known(packets);
        if let Some(b) = batches {
            self.add_known(b);
        }
    }

    /// Parses and applies one `PORT=NAME` override (`NAME` a known dissector, or `none` to
    /// remove the port's dissector).
    ///
    /// # Errors
    /// A message saying what is wrong with the argument.
    pub fn apply_override(&mut self, arg: &str) -> Result<(), String> {
        let example = self.names().next().unwrap_or("NAME");
        let (port, name) = arg
            .split_once('=')
            .ok_or_else(|| format!("--decode {arg:?}: expected PORT=NAME, e.g. 40000={example}"))?;
        let port: u16 = port
            .trim()
            .parse()
            .map_err(|_| format!("--decode {arg:?}: {port:?} is not a UDP port"))?;
        // Port 0 is reserved: no datagram of a capture is addressed to it or from it.
        if port == 0 {
            return Err(format!(
                "--decode {arg:?}: port 0 is not a UDP port a datagram can have (1 to 65535)"
            ));
        }
        let name = name.trim();
        if name == "none" {
            self.by_port.remove(&port);
            return Ok(());
        }
        let d = match self.by_name(name) {
            Some(d) => Arc::clone(d),
            None if name.contains('+') || self.transport_names().any(|t| t == name) => {
                let d = self
                    .stacked(name)
                    .map_err(|e| format!("--decode {arg:?}: {e}"))?;
                self.add_known(Arc::clone(&d));
                d
            }
            None => return Err(format!("--decode {arg:?}: {}", self.unknown(name))),
        };
        self.by_port.insert(port, d);
        Ok(())
    }

    /// Why `name` names no dissector, and which names do.
    pub fn unknown(&self, name: &str) -> String {
        match name {
            "schema" | "schema-batch" if self.by_name("schema").is_none() => {
                format!("the {name} decoder needs --schema FILE")
            }
            "schema-batch" => {
                "the schema-batch decoder needs a [batch] section in the schema (see SCHEMA.md)"
                    .to_owned()
            }
            // A transport named where a protocol belongs (`netcode+netcode`, `--as netcode`):
            // it is known, so "unknown" would contradict the list of known names.
            _ if self
                .transports
                .iter()
                .any(|t| t.name() == name && !t.takes_inner()) =>
            {
                format!(
                    "{name:?} is a transport that reads its own payload, not a protocol: name \
                     it alone, as in --decode PORT={name}"
                )
            }
            _ if self.transport_names().any(|t| t == name) => format!(
                "{name:?} is a transport, not a protocol: it goes in front of one, as in \
                 --decode PORT={name}+NAME"
            ),
            _ if name
                .split_once('+')
                .is_some_and(|(t, _)| self.transport_names().any(|x| x == t.trim())) =>
            {
                let inner = name.split_once('+').map_or(name, |(_, i)| i.trim());
                format!(
                    "{name:?} is a protocol behind a transport: name the protocol here ({inner:?}); \
                     the transport goes only in --decode PORT={name}"
                )
            }
            _ => {
                let known: Vec<String> = self
                    .names()
                    .filter(|n| !n.contains('+'))
                    .map(str::to_owned)
                    .chain(self.transport_choices())
                    .collect();
                // The schema's decoders are known once --schema loads one; before, say how.
                let later: Vec<&str> = SCHEMA_DECODERS
                    .into_iter()
                    .filter(|s| self.by_name(s).is_none())
                    .collect();
                let later = match later.is_empty() {
                    true => String::new(),
                    false => format!("; with --schema: {}", later.join(", ")),
                };
                format!(
                    "unknown decoder {name:?} (known: {}, none{later})",
                    known.join(", ")
                )
            }
        }
    }

    /// Checks CRCs with another protocol id (`--protocol-id`): every dissector that frames
    /// packets with a protocol id is replaced by the same dissector with `id`.
    pub fn set_protocol_id(&mut self, id: ProtocolId) {
        let swap = |d: &mut Arc<dyn Dissector>| {
            if let Some(other) = d.with_protocol_id(id) {
                *d = other;
            }
        };
        self.by_port.values_mut().for_each(swap);
        self.known.iter_mut().for_each(swap);
    }

    /// The dissector for a datagram: its destination port's first, then its source port's.
    pub fn for_datagram(&self, d: &Datagram) -> Option<&Arc<dyn Dissector>> {
        self.for_ports(d.src.port(), d.dst.port())
    }

    /// The dissector for a datagram from UDP port `src` to UDP port `dst` (a live one, say):
    /// the destination port's first, then the source port's.
    pub fn for_ports(&self, src: u16, dst: u16) -> Option<&Arc<dyn Dissector>> {
        self.by_port.get(&dst).or_else(|| self.by_port.get(&src))
    }

    /// The server port of a datagram, as `profile` sees traffic: the port whose dissector reads
    /// it ([`Dissectors::for_datagram`]: the destination port when it has a dissector, else the
    /// source port), and whether the datagram goes to that port (`true`) or comes from it.
    /// `None` when neither port has a dissector.
    pub fn server_port(&self, d: &Datagram) -> Option<(u16, bool)> {
        let (src, dst) = (d.src.port(), d.dst.port());
        if self.by_port.contains_key(&dst) {
            Some((dst, true))
        } else if self.by_port.contains_key(&src) {
            Some((src, false))
        } else {
            None
        }
    }

    /// The name of a datagram's dissector (`none` without one), as JSON's `decoder` shows it.
    pub fn decoder_name(&self, d: &Datagram) -> &str {
        self.for_datagram(d).map_or("none", |x| x.name())
    }

    /// What the capture says before any dissector runs: truncated, a fragment, or no
    /// dissector; `None` when the dissector should read the payload.
    fn before_reading(&self, d: &Datagram) -> Result<&Arc<dyn Dissector>, Status> {
        let dissector = self.for_datagram(d).ok_or(Status::Undecoded)?;
        match d.status {
            CaptureStatus::Truncated => Err(Status::Truncated),
            CaptureStatus::Fragment => Err(Status::Fragment),
            CaptureStatus::Whole => Ok(dissector),
        }
    }

    /// Datagram `d` (payload `payload`) as its transport opened it: the plaintext in place of
    /// the ciphertext (a netcode request's connect token too), the same length, so that the
    /// bits of its dissection's fields are bits of these bytes ([`Dissector::shown_seen`]);
    /// `None` without a transport that opens it (no key, no transport, a packet that does not
    /// open): then they are the capture's bytes.
    pub fn opened(&self, d: &Datagram, payload: &[u8], seen: &Observation) -> Option<Vec<u8>> {
        self.before_reading(d).ok()?.shown_seen(payload, seen)
    }

    /// What of the observation `seen` of datagram `d` an owner keeps for a whole session (the
    /// live TUI keeps every datagram's): without what its transport decrypted
    /// ([`Dissector::to_keep`]), so that the session's memory is its datagrams' alone; each
    /// dissection opens its datagram again.
    pub fn to_keep(&self, d: &Datagram, seen: Observation) -> Observation {
        match self.before_reading(d) {
            Ok(dissector) if !seen.is_none() => dissector.to_keep(seen),
            _ => seen,
        }
    }

    /// The verdict on a datagram whose payload is `payload`, read without recording anything.
    pub fn verdict(&self, d: &Datagram, payload: &[u8]) -> Verdict<'_> {
        self.verdict_seen(d, payload, &Observation::NONE)
    }

    /// [`Dissectors::verdict`] with what the sequential pass observed ([`Dissectors::observer`]).
    pub fn verdict_seen(&self, d: &Datagram, payload: &[u8], seen: &Observation) -> Verdict<'_> {
        match self.before_reading(d) {
            Ok(dissector) if seen.is_none() => dissector.verdict(payload),
            Ok(dissector) => dissector.verdict_seen(payload, seen),
            Err(status) => Verdict::not_decoded(status),
        }
    }

    /// The full dissection of a datagram whose payload is `payload`, and the name of the
    /// dissector that made it (`none` without one), as JSON's `decoder` shows it.
    pub fn dissect(&self, d: &Datagram, payload: &[u8]) -> (&str, Dissection) {
        self.dissect_seen(d, payload, &Observation::NONE)
    }

    /// [`Dissectors::dissect`] with what the sequential pass observed.
    pub fn dissect_seen(
        &self,
        d: &Datagram,
        payload: &[u8],
        seen: &Observation,
    ) -> (&str, Dissection) {
        self.dissect_observed(d, payload, seen, false)
    }

    /// [`Dissectors::dissect`] through [`Dissector::dissect_values`]: without the entries only
    /// a field tree shows (a batch's message headers), for `decode --json`.
    pub fn dissect_values(&self, d: &Datagram, payload: &[u8]) -> (&str, Dissection) {
        self.dissect_values_seen(d, payload, &Observation::NONE)
    }

    /// [`Dissectors::dissect_values`] with what the sequential pass observed.
    pub fn dissect_values_seen(
        &self,
        d: &Datagram,
        payload: &[u8],
        seen: &Observation,
    ) -> (&str, Dissection) {
        self.dissect_observed(d, payload, seen, true)
    }

    /// The dissection of a datagram, with or without only-the-tree entries (`values`), through
    /// the transports when the sequential pass observed something of it.
    fn dissect_observed(
        &self,
        d: &Datagram,
        payload: &[u8],
        seen: &Observation,
        values: bool,
    ) -> (&str, Dissection) {
        self.dissect_with(d, payload, |dissector, payload| {
            match (seen.is_none(), values) {
                (true, false) => dissector.dissect(payload),
                (true, true) => dissector.dissect_values(payload),
                (false, _) => dissector.dissect_seen(payload, seen, values),
            }
        })
    }

    fn dissect_with(
        &self,
        d: &Datagram,
        payload: &[u8],
        dissect: impl FnOnce(&dyn Dissector, &[u8]) -> Dissection,
    ) -> (&str, Dissection) {
        let Some(dissector) = self.for_datagram(d) else {
            return ("none", Dissection::not_decoded(Status::Undecoded));
        };
        let dissection = match d.status {
            CaptureStatus::Truncated => Dissection::not_decoded(Status::Truncated),
            CaptureStatus::Fragment => Dissection::not_decoded(Status::Fragment),
            CaptureStatus::Whole => dissect(dissector.as_ref(), payload),
        };
        (dissector.name(), dissection)
    }

    /// `port=name` pairs, for the status bar and summaries.
    pub fn describe(&self) -> String {
        self.ports()
            .map(|(p, n)| format!("{p}={n}"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// The yojimbo configuration a loaded schema gives: its `[yojimbo]` section's channels and
/// message types, each body a schema struct read through the interpreter (SCHEMA.md, "yojimbo
/// games"); `None` without the section.
fn yojimbo_config_of_schema(schema: &Arc<Schema>) -> Option<Arc<YojimboConfig>> {
    bitlens_schema::yojimbo::config(schema)
}

/// The observation of datagram `i` in `seen` ([`Dissectors::observe_all`]): none when the pass
/// did not run.
pub fn seen_at(seen: &[Observation], i: usize) -> &Observation {
    seen.get(i).unwrap_or(&Observation::NONE)
}

/// A datagram that has just arrived in a live session (the proxy's, shown by the TUI): the
/// datagram, its own bytes, and what the transports' sequential pass observed of it, which its
/// verdict and dissection need ([`Dissectors::verdict_seen`]).
#[derive(Debug, Clone)]
pub struct Arrival {
    /// The datagram (its payload is [`Arrival::payload`], not in a capture's data).
    pub datagram: Datagram,
    /// Its UDP payload.
    pub payload: Vec<u8>,
    /// What the transports observed of it ([`Observation::NONE`] without a transport).
    pub observed: Observation,
}

/// The sequential pass of the transports on a capture's ports ([`Dissectors::observer`]): one
/// [`Tracker`] per stacked dissector, fed the datagrams in capture order.
pub struct Observer {
    dissectors: Dissectors,
    /// (the dissector's address, its tracker).
    trackers: Vec<(usize, Box<dyn Tracker>)>,
    /// Live datagrams observed so far: a live datagram's number.
    live: u64,
}

impl fmt::Debug for Observer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Observer")
            .field("trackers", &self.trackers.len())
            .finish()
    }
}

impl Observer {
    /// Feeds the next datagram in order to the tracker of its dissector; what it observed
    /// ([`Observation::NONE`] for datagrams of other dissectors, cut or fragmented ones).
    pub fn observe(&mut self, d: &Datagram, payload: &[u8]) -> Observation {
        if d.status != CaptureStatus::Whole {
            return Observation::NONE;
        }
        let Some(dissector) = self.dissectors.for_datagram(d) else {
            return Observation::NONE;
        };
        let id = Arc::as_ptr(dissector) as *const () as usize;
        match self.trackers.iter_mut().find(|(k, _)| *k == id) {
            Some((_, t)) => t.observe_numbered(d.frame, d.src, d.dst, payload),
            None => Observation::NONE,
        }
    }

    /// [`Observer::observe`] for each datagram of a chunk of the capture `file` in order,
    /// through [`Tracker::observe_batch`]: each transport's datagrams of the chunk in one batch,
    /// so that what it decrypted for the chunk is in one buffer, freed at once by the thread
    /// that dissects the chunk. The observations are the same as datagram by datagram.
    pub fn observe_chunk(&mut self, datagrams: &[Datagram], file: &[u8]) -> Vec<Observation> {
        let mut seen = vec![Observation::NONE; datagrams.len()];
        // Which tracker observes each datagram, if any.
        let which: Vec<Option<usize>> = datagrams
            .iter()
            .map(|d| {
                if d.status != CaptureStatus::Whole {
                    return None;
                }
                let id = Arc::as_ptr(self.dissectors.for_datagram(d)?) as *const () as usize;
                self.trackers.iter().position(|(k, _)| *k == id)
            })
            .collect();
        let (mut batch, mut out) = (Vec::new(), Vec::new());
        for (t, (_, tracker)) in self.trackers.iter_mut().enumerate() {
            batch.clear();
            batch.extend(
                datagrams
                    .iter()
                    .zip(&which)
                    .filter(|(_, w)| **w == Some(t))
                    .map(|(d, _)| Numbered {
                        number: d.frame,
                        from: d.src,
                        to: d.dst,
                        datagram: d.payload(file),
                    }),
            );
            if batch.is_empty() {
                continue;
            }
            out.clear();
            tracker.observe_batch(&batch, &mut out);
            let at = which.iter().enumerate().filter(|(_, w)| **w == Some(t));
            for ((i, _), o) in at.zip(out.drain(..)) {
                seen[i] = o;
            }
        }
        seen
    }

    /// The traffic ended: what each transport still held unfinished ([`Tracker::finish`]),
    /// one line each.
    pub fn finish(&mut self) -> Vec<String> {
        self.trackers
            .iter_mut()
            .flat_map(|(_, t)| t.finish())
            .collect()
    }

    /// Whether observations carry what the transports decrypted ([`Tracker::keep_plaintext`]:
    /// yes unless told otherwise). Off for an owner that keeps every observation.
    pub fn keep_plaintext(&mut self, keep: bool) {
        for (_, t) in &mut self.trackers {
            t.keep_plaintext(keep);
        }
    }

    /// [`Observer::observe`] for a live datagram from `src` to `dst` (the proxy).
    pub fn observe_live(
        &mut self,
        src: SocketAddr,
        dst: SocketAddr,
        payload: &[u8],
    ) -> Observation {
        self.live += 1;
        let Some(dissector) = self.dissectors.for_ports(src.port(), dst.port()) else {
            return Observation::NONE;
        };
        let id = Arc::as_ptr(dissector) as *const () as usize;
        match self.trackers.iter_mut().find(|(k, _)| *k == id) {
            Some((_, t)) => t.observe_numbered(self.live, src, dst, payload),
            None => Observation::NONE,
        }
    }
}

/// The `bitlens` binary's dissectors (the demo's packets on 40000, its batches on 40001), for
/// the unit tests of every module.
#[cfg(test)]
pub(crate) fn shipped() -> Dissectors {
    use bitlens_testkit::{batch_demo, demo};
    let mut d = Dissectors::new();
    d.register(demo::PORT, Arc::new(demo::dissector()));
    d.register(batch_demo::PORT, Arc::new(batch_demo::dissector()));
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_parse() {
        let mut d = shipped();
        d.apply_override("5000=demo").unwrap();
        assert!(d.apply_override("5000").is_err());
        assert!(
            d.apply_override("x=demo")
                .unwrap_err()
                .contains("not a UDP port")
        );
        assert!(
            d.apply_override("1=nope")
                .unwrap_err()
                .contains("known: demo, batch")
        );
        d.apply_override("40000=none").unwrap();
        assert_eq!(d.describe(), "5000=demo 40001=batch");
        // The destination port first, then the source port.
        let name = |src, dst| d.for_ports(src, dst).map(|x| x.name().to_owned());
        assert_eq!(name(40001, 5000).as_deref(), Some("demo"));
        assert_eq!(name(5000, 40001).as_deref(), Some("batch"));
        assert_eq!(name(5000, 7).as_deref(), Some("demo"));
        assert_eq!(name(40000, 7), None);
        assert!(
            d.apply_override("7=schema")
                .unwrap_err()
                .contains("--schema")
        );
    }

    #[test]
    fn port_0_is_refused() {
        let mut d = shipped();
        let e = d.apply_override("0=demo").unwrap_err();
        assert!(e.contains("port 0 is not a UDP port"), "{e}");
        assert!(d.apply_override(" 0 =none").is_err());
        assert_eq!(d.describe(), "40000=demo 40001=batch");
    }

    /// netcode.pcap with its server key, and yojimbo's soak sample with its key and schema.
    fn encrypted() -> Vec<(&'static str, Dissectors)> {
        let captures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../captures");
        let key = |file: &str| {
            let text = std::fs::read_to_string(captures.join(file)).unwrap();
            bitlens_netcode::parse_key(&text).unwrap()
        };
        let mut netcode = shipped();
        netcode.add_transport(Arc::new(
            Netcode::new().with_private_key(key("netcode.key")),
        ));
        netcode.apply_override("5000=netcode+demo").unwrap();
        let mut yojimbo = shipped();
        let file = "yojimbo.schema.toml";
        let text = std::fs::read_to_string(captures.join(file)).unwrap();
        let schema = Arc::new(Schema::from_toml(&text, file).unwrap());
        let with_key = Netcode::new().with_private_key(key("yojimbo-reference.key"));
        yojimbo.set_yojimbo(with_key, Some(&schema)).unwrap();
        yojimbo.apply_override("40000=yojimbo").unwrap();
        vec![("netcode.pcap", netcode), ("yojimbo-soak.pcap", yojimbo)]
    }

    /// `decode`'s and `check`'s pass, a chunk at a time: the same observations as datagram by
    /// datagram (the same JSON for every datagram), the plaintext carried along.
    #[test]
    fn a_chunk_observed_at_once_dissects_as_datagram_by_datagram() {
        let captures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../captures");
        for (file, d) in encrypted() {
            let capture = crate::capture::Capture::open(captures.join(file)).unwrap();
            let all = capture.datagrams();
            let mut one = d.observer().expect("a transport's tracker");
            let single: Vec<Observation> = all
                .iter()
                .map(|x| one.observe(x, capture.payload(x)))
                .collect();
            for size in [1, 7, 256] {
                let mut chunked = d.observer().expect("a transport's tracker");
                let batched: Vec<Observation> = all
                    .chunks(size)
                    .flat_map(|c| chunked.observe_chunk(c, capture.data()))
                    .collect();
                assert_eq!(batched.len(), all.len());
                if file == "netcode.pcap" {
                    let carried = batched.iter().filter(|o| {
                        o.get::<bitlens_netcode::Seen>()
                            .is_some_and(|s| s.opened.is_some())
                    });
                    assert!(carried.count() > all.len() / 2, "{file}: plaintext carried");
                }
                for (i, x) in all.iter().enumerate() {
                    let p = capture.payload(x);
                    let json = |seen: &Observation| {
                        let (name, dissection) = d.dissect_seen(x, p, seen);
                        let mut line = Vec::new();
                        crate::output::write_json(&mut line, x, p.len(), name, &dissection);
                        line
                    };
                    let (a, b) = (json(&single[i]), json(&batched[i]));
                    assert!(
                        a == b,
                        "{file}, chunks of {size}: frame {} differs",
                        x.frame
                    );
                }
            }
        }
    }

    #[test]
    fn observations_kept_for_a_whole_capture_hold_no_plaintext_and_dissect_the_same() {
        let captures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../captures");
        for (file, d) in encrypted() {
            let capture = crate::capture::Capture::open(captures.join(file)).unwrap();
            let datagrams = || capture.datagrams().iter().map(|x| (x, capture.payload(x)));
            // As decode streams them: the plaintext each packet opened to comes along.
            let mut observer = d.observer().expect("a transport's tracker");
            let streamed: Vec<Observation> =
                datagrams().map(|(x, p)| observer.observe(x, p)).collect();
            let kept = d.observe_all(datagrams());
            assert_eq!(streamed.len(), kept.len());
            let carried = |o: &Observation| {
                o.get::<bitlens_netcode::Seen>()
                    .is_some_and(|s| s.opened.is_some())
            };
            if file == "netcode.pcap" {
                assert!(
                    streamed.iter().any(carried),
                    "{file}: the stream carries plaintext"
                );
            }
            assert!(
                !kept.iter().any(carried),
                "{file}: kept observations hold none"
            );
            // Each datagram dissects to the same JSON either way (the kept ones decrypt again).
            let mut opened = 0;
            for (i, (x, p)) in datagrams().enumerate() {
                let mut json = |seen: &Observation| {
                    let (name, dissection) = d.dissect_seen(x, p, seen);
                    let mut line = Vec::new();
                    crate::output::write_json(&mut line, x, p.len(), name, &dissection);
                    opened += usize::from(dissection.layers.iter().any(|l| l.plaintext.is_some()));
                    line
                };
                let a = json(&streamed[i]);
                let b = json(&kept[i]);
                assert!(a == b, "{file}: frame {} differs", x.frame);
            }
            assert!(opened > 0, "{file}: some payloads were opened");
        }
    }

    #[test]
    fn the_unknown_decoder_error_lists_every_name_a_decode_takes() {
        let mut d = shipped();
        d.add_transport(Arc::new(bitlens_netcode::Netcode::new()));
        let e = d.apply_override("1=nope").unwrap_err();
        assert!(
            e.ends_with(
                "(known: demo, batch, netcode, netcode+NAME, none; with --schema: schema, \
                 schema-batch)"
            ),
            "{e}"
        );
        // Once a schema is loaded its decoders are known like the others.
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../captures/demo.schema.toml"
        ))
        .unwrap();
        d.set_schema(Schema::from_toml(&text, "demo.schema.toml").unwrap());
        let e = d.unknown("nope");
        assert!(
            e.ends_with("(known: demo, batch, schema, schema-batch, netcode, netcode+NAME, none)"),
            "{e}"
        );
    }

    #[test]
    fn transports_stack_over_known_dissectors_and_take_new_keys() {
        let mut d = shipped();
        assert!(
            d.apply_override("5000=netcode+demo")
                .unwrap_err()
                .contains("unknown decoder")
        );
        d.add_transport(Arc::new(bitlens_netcode::Netcode::new()));
        d.apply_override("5000=netcode+demo").unwrap();
        d.apply_override("5001=netcode").unwrap();
        assert_eq!(
            d.describe(),
            "5000=netcode+demo 5001=netcode 40000=demo 40001=batch"
        );
        assert!(
            d.apply_override("1=netcode+nope")
                .unwrap_err()
                .contains("nope")
        );
        assert!(
            d.apply_override("1=nope")
                .unwrap_err()
                .contains("netcode, netcode+NAME"),
            "the error lists the transports"
        );
        // A transport where a protocol belongs is named as one, not called unknown.
        let mut fresh = shipped();
        fresh.add_transport(Arc::new(bitlens_netcode::Netcode::new()));
        let twice = fresh.apply_override("1=netcode+netcode").unwrap_err();
        assert!(twice.contains("\"netcode\" is a transport"), "{twice}");
        assert!(!twice.contains("unknown"), "{twice}");
        assert!(d.unknown("netcode+demo").contains("(\"demo\")"));
        assert!(d.unknown("nope").contains("unknown decoder"));
        // A transport with keys replaces the stacks of its name, which keep their inner.
        let before = Arc::clone(d.for_ports(1, 5000).unwrap());
        d.add_transport(Arc::new(
            bitlens_netcode::Netcode::new().with_private_key([0; 32]),
        ));
        let after = d.for_ports(1, 5000).unwrap();
        assert!(!Arc::ptr_eq(&before, after));
        assert_eq!(after.name(), "netcode+demo");
        // Only stacks have a tracker: without them there is no sequential pass.
        assert!(d.observer().is_some());
        assert!(shipped().observer().is_none());
    }

    #[test]
    fn a_schema_replaces_dissectors_of_its_layout_and_a_protocol_id_reframes() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../captures/demo.schema.toml"
        ))
        .unwrap();
        let mut d = shipped();
        d.set_schema(Schema::from_toml(&text, "demo.schema.toml").unwrap());
        assert_eq!(d.describe(), "40000=schema 40001=schema-batch");
        assert_eq!(
            d.names().collect::<Vec<_>>(),
            ["demo", "batch", "schema", "schema-batch"]
        );
        assert!(
            d.names().skip(2).eq(SCHEMA_DECODERS),
            "the names schemas register"
        );
        let id = ProtocolId::U32(7);
        d.set_protocol_id(id);
        for name in ["demo", "schema"] {
            let p = d.by_name(name).and_then(|x| x.protocol().cloned());
            assert_eq!(p.map(|p| p.id), Some(id), "{name}");
        }
        assert_eq!(
            d.by_name("batch").map(|b| b.protocol().is_none()),
            Some(true)
        );
    }
}
