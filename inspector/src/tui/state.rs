//! The inspector's state: a plain struct and the queries on it. The handlers
//! (`super::handler`) change it; the drawing (`super::ui`) renders it as a pure function.

use crate::capture::Capture;
use crate::dissectors::{Dissectors, seen_at};
use bitlens_codec::dissect::{Dissection, Status};
use bitlens_codec::observe::Observation;
use bitlens_codec::trace::EntryKind;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// Which pane has the keyboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pane {
    /// The packet list.
    List,
    /// The field tree.
    Tree,
    /// The hex and bit view.
    Bits,
}

/// What is known about one datagram before it is opened: enough for the list, filters and n/N.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    /// The verdict.
    pub status: Status,
    /// Index into [`App::type_names`]; `u16::MAX` for none.
    pub packet_type: u16,
}

/// The packet under the cursor, fully dissected, with the tree's state.
#[derive(Debug, Clone)]
pub struct Detail {
    /// Index of the datagram in the capture.
    pub datagram: usize,
    /// The name of its dissector (`none` without one).
    pub decoder: String,
    /// The dissected datagram.
    pub dissection: Dissection,
    /// The datagram as its transport opened it (plaintext in place of the ciphertext), which
    /// the bit view shows: the bits of the fields inside an encrypted payload are its bits.
    /// `None` when the capture's bytes are the ones read.
    pub opened: Option<Vec<u8>>,
    /// Trace field indices of collapsed scopes.
    pub collapsed: HashSet<usize>,
    /// Trace field indices currently visible in the tree, in order.
    pub visible: Vec<usize>,
    /// Cursor in `visible`.
    pub cursor: usize,
    /// First visible tree row.
    pub offset: usize,
    /// First visible line of the bit view.
    pub bits_offset: usize,
}

impl Detail {
    /// The detail of datagram `datagram`, with the tree cursor on the field where the read
    /// stopped, if it failed.
    pub fn new(
        datagram: usize,
        decoder: String,
        mut dissection: Dissection,
        opened: Option<Vec<u8>>,
    ) -> Self {
        // A read past the end at a field with too few bits to read: a row where it stopped.
        if let Some(stop) = dissection.trace.past_end_entry() {
            dissection.trace.fields.push(stop);
        }
        let mut d = Detail {
            datagram,
            decoder,
            dissection,
            opened,
            collapsed: HashSet::new(),
            visible: Vec::new(),
            cursor: 0,
            offset: 0,
            bits_offset: 0,
        };
        d.refresh_visible();
        // Start on the field where the read stopped, if it failed.
        if let Some(i) = d.dissection.trace.fields.views().rposition(|f| f.failed()) {
            d.cursor = d.visible.iter().position(|&v| v == i).unwrap_or(0);
        }
        d
    }

    /// Recomputes the visible rows from the collapsed scopes.
    pub fn refresh_visible(&mut self) {
        let fields = &self.dissection.trace.fields;
        self.visible.clear();
        let mut hide_below: Option<usize> = None;
        for (i, f) in fields.views().enumerate() {
            if let Some(depth) = hide_below {
                if f.depth() > depth {
                    continue;
                }
                hide_below = None;
            }
            self.visible.push(i);
            if f.kind() == EntryKind::Scope && self.collapsed.contains(&i) {
                hide_below = Some(f.depth());
            }
        }
        self.cursor = self.cursor.min(self.visible.len().saturating_sub(1));
    }

    /// Whether trace entry `i` is a scope (a struct or array the tree can fold).
    pub fn is_scope(&self, i: usize) -> bool {
        (self.dissection.trace.fields.view(i)).is_some_and(|f| f.kind() == EntryKind::Scope)
    }

    /// The trace field under the tree cursor.
    pub fn selected_field(&self) -> Option<usize> {
        self.visible.get(self.cursor).copied()
    }
}

/// The filter typed after `/`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// `type:NAME`, matched case-insensitively as a prefix.
    pub packet_type: Option<String>,
    /// `status:NAME`.
    pub status: Option<Status>,
    /// `port:N`, either side.
    pub port: Option<u16>,
    /// Free words: each must appear in the row's text (addresses, type, status).
    pub words: Vec<String>,
}

impl Filter {
    /// Parses the filter syntax: `type:RoboCat status:error port:40000 10.0.0.12`.
    ///
    /// # Errors
    /// A message naming the bad term.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut f = Filter::default();
        for term in text.split_whitespace() {
            if let Some(t) = term.strip_prefix("type:") {
                f.packet_type = Some(t.to_lowercase());
            } else if let Some(s) = term.strip_prefix("status:") {
                let s = s.to_lowercase();
                f.status = Some(
                    Status::ALL
                        .into_iter()
                        .find(|st| st.name() == s)
                        .ok_or_else(|| format!("unknown status {s:?} (ok, error, desync, truncated, fragment, undecoded, encrypted)"))?,
                );
            } else if let Some(p) = term.strip_prefix("port:") {
                f.port = Some(p.parse().map_err(|_| format!("{p:?} is not a port"))?);
            } else {
                f.words.push(term.to_lowercase());
            }
        }
        Ok(f)
    }

    /// True when nothing is filtered.
    pub fn is_empty(&self) -> bool {
        *self == Filter::default()
    }
}

/// Most datagrams a live session's list holds; later ones are counted, not listed (the
/// recording has them all).
pub const LIVE_LIMIT: usize = 1_000_000;

/// The state of a live session (`bitlens proxy --tui`): the list grows as datagrams arrive.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Live {
    /// The cursor jumps to each new datagram (`f` toggles).
    pub follow: bool,
    /// The list does not grow (`p` toggles); arrivals wait in the capture.
    pub paused: bool,
    /// Datagrams that arrived while paused.
    pub waiting: usize,
    /// Datagrams not listed because the list reached [`LIVE_LIMIT`].
    pub unlisted: u64,
}

/// The whole state of the inspector.
#[derive(Debug)]
pub struct App {
    /// The capture.
    pub capture: Arc<Capture>,
    /// The dissectors per port.
    pub dissectors: Arc<Dissectors>,
    /// What the transports' sequential pass observed of each datagram (empty without
    /// transports), so that any datagram can be dissected on its own, in any order.
    pub seen: Arc<Vec<Observation>>,
    /// What the transports still held in reassembly when the capture ended (fragments whose
    /// packet or block never completed), one line each; the status bar says it.
    pub pending: Vec<String>,
    /// What is known of each datagram (`None` until the background pass reaches it).
    pub summaries: Vec<Option<Summary>>,
    /// Packet type names, indexed by [`Summary::packet_type`].
    pub type_names: Vec<String>,
    type_ids: HashMap<String, u16>,
    /// How many summaries are known.
    pub summarized: usize,
    /// Datagram indices shown in the list (all, or the filter's matches).
    pub rows: Vec<usize>,
    /// Cursor in `rows`.
    pub selected: usize,
    /// First visible list row.
    pub list_offset: usize,
    /// The focused pane.
    pub focus: Pane,
    /// The packet under the cursor.
    pub detail: Option<Detail>,
    /// The filter in force.
    pub filter: Filter,
    /// The filter text in force (for the status bar).
    pub filter_text: String,
    /// The filter being typed, while `/` is active.
    pub filter_input: Option<String>,
    /// A message for the status bar (filter errors and the like).
    pub message: Option<String>,
    /// Whether the help overlay is shown.
    pub show_help: bool,
    /// Colours (off with `NO_COLOR`).
    pub color: bool,
    /// Set when the user asked to quit.
    pub quit: bool,
    /// Terminal size, as of the last resize.
    pub size: (u16, u16),
    /// Set for a live session ([`App::push_live`]).
    pub live: Option<Live>,
    /// The profile view, while it is open (`P`).
    pub profile: Option<super::profile_view::ProfileView>,
    /// The program that runs, as the help names it (`bitlens`, or a game's own binary).
    pub program: String,
}

impl App {
    /// A new inspector over a capture, run by `program` (as `Cli::new` names it: its help
    /// says `PROGRAM inspect: keys`). Summaries start unknown; feed them with
    /// [`App::add_summaries`] (from a background pass) or [`App::summarize_all`].
    pub fn new(
        capture: Arc<Capture>,
        dissectors: Arc<Dissectors>,
        color: bool,
        size: (u16, u16),
        program: &str,
    ) -> Self {
        let n = capture.datagrams().len();
        let (seen, pending) = dissectors
            .observe_all_finished(capture.datagrams().iter().map(|d| (d, capture.payload(d))));
        let mut app = App {
            capture,
            dissectors,
            seen: Arc::new(seen),
            pending,
            summaries: vec![None; n],
            type_names: Vec::new(),
            type_ids: HashMap::new(),
            summarized: 0,
            rows: (0..n).collect(),
            selected: 0,
            list_offset: 0,
            focus: Pane::List,
            detail: None,
            filter: Filter::default(),
            filter_text: String::new(),
            filter_input: None,
            message: None,
            show_help: false,
            color,
            quit: false,
            size,
            live: None,
            profile: None,
            program: program.to_owned(),
        };
        app.open_selected();
        app
    }

    /// The interned id of a packet type name.
    pub fn type_id(&mut self, name: Option<&str>) -> u16 {
        let Some(name) = name else { return u16::MAX };
        if let Some(&id) = self.type_ids.get(name) {
            return id;
        }
        let id = self.type_names.len().min(u16::MAX as usize - 1) as u16;
        self.type_names.push(name.to_owned());
        self.type_ids.insert(name.to_owned(), id);
        id
    }

    /// The summary of datagram `i`, computing it now if the background pass has not.
    pub fn summary(&self, i: usize) -> Option<Summary> {
        self.summaries.get(i).copied().flatten()
    }

    /// Records summaries computed elsewhere: `(datagram index, status, packet type name)`.
    pub fn add_summaries(&mut self, batch: Vec<(usize, Status, Option<String>)>) {
        for (i, status, t) in batch {
            let packet_type = self.type_id(t.as_deref());
            if let Some(slot) = self.summaries.get_mut(i) {
                if slot.is_none() {
                    self.summarized += 1;
                }
                *slot = Some(Summary {
                    status,
                    packet_type,
                });
            }
        }
    }

    /// Computes every summary now (tests, small captures).
    pub fn summarize_all(&mut self) {
        let batch: Vec<_> = (0..self.capture.datagrams().len())
            .map(|i| {
                let d = &self.capture.datagrams()[i];
                let seen = seen_at(&self.seen, i);
                let v = self
                    .dissectors
                    .verdict_seen(d, self.capture.payload(d), seen);
                (i, v.status, v.packet_type.map(str::to_owned))
            })
            .collect();
        self.add_summaries(batch);
    }

    /// Whether the background pass is done.
    pub fn fully_summarized(&self) -> bool {
        self.summarized == self.summaries.len()
    }

    /// Counts of summaries per status.
    pub fn status_counts(&self) -> [usize; Status::ALL.len()] {
        let mut c = [0; Status::ALL.len()];
        for s in self.summaries.iter().flatten() {
            c[s.status as usize] += 1;
        }
        c
    }

    /// The datagram index under the cursor.
    pub fn selected_datagram(&self) -> Option<usize> {
        self.rows.get(self.selected).copied()
    }

    /// Text of a row for free-word filters.
    pub fn row_text(&self, i: usize) -> String {
        let d = &self.capture.datagrams()[i];
        let (status, t) = match self.summary(i) {
            Some(s) => (
                s.status.name(),
                self.type_names
                    .get(s.packet_type as usize)
                    .map_or("", String::as_str),
            ),
            None => ("", ""),
        };
        format!("{} {} {} {} {}", d.frame, d.src, d.dst, t, status).to_lowercase()
    }

    /// Whether datagram `i` passes the filter in force.
    pub fn matches(&self, i: usize) -> bool {
        let f = &self.filter;
        let d = &self.capture.datagrams()[i];
        if let Some(p) = f.port
            && d.src.port() != p
            && d.dst.port() != p
        {
            return false;
        }
        let s = self.summary(i);
        if let Some(st) = f.status
            && s.is_none_or(|s| s.status != st)
        {
            return false;
        }
        if let Some(t) = &f.packet_type {
            let name = s.and_then(|s| self.type_names.get(s.packet_type as usize));
            if !name.is_some_and(|n| n.to_lowercase().starts_with(t.as_str())) {
                return false;
            }
        }
        if !f.words.is_empty() {
            let text = self.row_text(i);
            if !f.words.iter().all(|w| text.contains(w.as_str())) {
                return false;
            }
        }
        true
    }
}
