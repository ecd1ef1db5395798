//! The inspector's state: a plain struct. Keys and mouse events change it (no terminal access
//! here); [`super::ui::draw`] renders it as a pure function.

use crate::capture::Capture;
use crate::decode::{Decoded, Decoders, Status};
use bitlens_codec::FieldKind;
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

/// A key, independent of the terminal library (so key handling is testable without one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// A printable character.
    Char(char),
    /// Enter.
    Enter,
    /// Escape.
    Esc,
    /// Tab.
    Tab,
    /// Shift-Tab.
    BackTab,
    /// Arrow up.
    Up,
    /// Arrow down.
    Down,
    /// Arrow left.
    Left,
    /// Arrow right.
    Right,
    /// Page up.
    PageUp,
    /// Page down.
    PageDown,
    /// Home.
    Home,
    /// End.
    End,
    /// Backspace.
    Backspace,
}

/// What is known about one datagram before it is opened: enough for the list, filters and n/N.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    /// The verdict.
    pub status: Status,
    /// Index into [`App::type_names`]; `u16::MAX` for none.
    pub packet_type: u16,
}

/// The packet under the cursor, fully traced, with the tree's state.
#[derive(Debug, Clone)]
pub struct Detail {
    /// Index of the datagram in the capture.
    pub datagram: usize,
    /// The decoded datagram.
    pub decoded: Decoded,
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
    fn new(datagram: usize, decoded: Decoded) -> Self {
        let mut d = Detail {
            datagram,
            decoded,
            collapsed: HashSet::new(),
            visible: Vec::new(),
            cursor: 0,
            offset: 0,
            bits_offset: 0,
        };
        d.refresh_visible();
        // Start on the field where the read stopped, if it failed.
        if let Some(i) = d.decoded.trace.fields.iter().rposition(|f| f.failed) {
            d.cursor = d.visible.iter().position(|&v| v == i).unwrap_or(0);
        }
        d
    }

    fn refresh_visible(&mut self) {
        let fields = &self.decoded.trace.fields;
        self.visible.clear();
        let mut hide_below: Option<usize> = None;
        for (i, f) in fields.iter().enumerate() {
            if let Some(depth) = hide_below {
                if f.depth > depth {
                    continue;
                }
                hide_below = None;
            }
            self.visible.push(i);
            if f.kind == FieldKind::Scope && self.collapsed.contains(&i) {
                hide_below = Some(f.depth);
            }
        }
        self.cursor = self.cursor.min(self.visible.len().saturating_sub(1));
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
                        .ok_or_else(|| format!("unknown status {s:?} (ok, error, desync, truncated, fragment, undecoded)"))?,
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
    /// The decoders per port.
    pub decoders: Arc<Decoders>,
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
}

impl App {
    /// A new inspector over a capture. Summaries start unknown; feed them with
    /// [`App::add_summaries`] (from a background pass) or [`App::summarize_all`].
    pub fn new(
        capture: Arc<Capture>,
        decoders: Arc<Decoders>,
        color: bool,
        size: (u16, u16),
    ) -> Self {
        let n = capture.datagrams().len();
        let mut app = App {
            capture,
            decoders,
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
                let v = self
                    .decoders
                    .verdict(&self.capture, &self.capture.datagrams()[i]);
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

    fn open_selected(&mut self) {
        let Some(i) = self.selected_datagram() else {
            self.detail = None;
            return;
        };
        if self.detail.as_ref().is_some_and(|d| d.datagram == i) {
            return;
        }
        let d = &self.capture.datagrams()[i];
        let decoded = self.decoders.decode(&self.capture, d);
        self.detail = Some(Detail::new(i, decoded));
        // Scroll the tree so the cursor (the failing field, if any) is on screen.
        let cursor = self.detail.as_ref().map_or(0, |d| d.cursor) as isize;
        self.move_tree(cursor);
    }

    /// Rows of the list pane that fit the screen (from the layout of the last size).
    pub fn list_height(&self) -> usize {
        super::ui::Areas::new(self.size).list_rows()
    }

    fn tree_height(&self) -> usize {
        super::ui::Areas::new(self.size).tree_rows()
    }

    fn select(&mut self, row: usize) {
        if self.rows.is_empty() {
            self.selected = 0;
            self.detail = None;
            return;
        }
        self.selected = row.min(self.rows.len() - 1);
        let h = self.list_height().max(1);
        if self.selected < self.list_offset {
            self.list_offset = self.selected;
        } else if self.selected >= self.list_offset + h {
            self.list_offset = self.selected + 1 - h;
        }
        self.open_selected();
    }

    fn move_tree(&mut self, to: isize) {
        let h = self.tree_height().max(1);
        if let Some(d) = &mut self.detail {
            if d.visible.is_empty() {
                return;
            }
            d.cursor = to.clamp(0, d.visible.len() as isize - 1) as usize;
            if d.cursor < d.offset {
                d.offset = d.cursor;
            } else if d.cursor >= d.offset + h {
                d.offset = d.cursor + 1 - h;
            }
        }
        self.follow_selection();
    }

    /// Scrolls the bit view so the selected field's first bits are on screen.
    fn follow_selection(&mut self) {
        let areas = super::ui::Areas::new(self.size);
        let (bpl, rows) = (areas.bytes_per_line(), areas.bit_rows().max(1));
        if let Some(d) = &mut self.detail
            && let Some(i) = d.selected_field()
        {
            let line = d.decoded.trace.fields[i].bit / 8 / bpl;
            if line < d.bits_offset || line >= d.bits_offset + rows {
                d.bits_offset = line.saturating_sub(rows / 2);
            }
        }
    }

    fn toggle_tree(&mut self) {
        if let Some(d) = &mut self.detail
            && let Some(i) = d.selected_field()
            && d.decoded.trace.fields[i].kind == FieldKind::Scope
        {
            if !d.collapsed.remove(&i) {
                d.collapsed.insert(i);
            }
            d.refresh_visible();
        }
    }

    fn set_collapsed(&mut self, collapse: bool) {
        if let Some(d) = &mut self.detail
            && let Some(i) = d.selected_field()
            && d.decoded.trace.fields[i].kind == FieldKind::Scope
        {
            if collapse {
                d.collapsed.insert(i);
            } else {
                d.collapsed.remove(&i);
            }
            d.refresh_visible();
        }
    }

    /// Moves to the next (`forward`) or previous problem packet among the rows.
    fn jump_problem(&mut self, forward: bool) {
        let n = self.rows.len();
        if n == 0 {
            return;
        }
        for step in 1..=n {
            let r = if forward {
                (self.selected + step) % n
            } else {
                (self.selected + n - step % n) % n
            };
            if self
                .summary(self.rows[r])
                .is_some_and(|s| s.status.is_problem())
            {
                self.select(r);
                self.message = None;
                return;
            }
        }
        self.message = Some(if self.fully_summarized() {
            "no problem packets".into()
        } else {
            "no problem packets decoded yet".into()
        });
    }

    /// Text of a row for free-word filters.
    fn row_text(&self, i: usize) -> String {
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

    fn matches(&self, i: usize) -> bool {
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

    /// Applies a filter and keeps the selected datagram selected if it still matches.
    pub fn apply_filter(&mut self, text: &str) {
        match Filter::parse(text) {
            Ok(f) => {
                let keep = self.selected_datagram();
                self.filter = f;
                self.filter_text = text.trim().to_owned();
                self.rows = (0..self.capture.datagrams().len())
                    .filter(|&i| self.matches(i))
                    .collect();
                // Everything that arrived while paused is in the new list.
                if let Some(live) = &mut self.live {
                    live.waiting = 0;
                }
                let row = keep
                    .and_then(|k| self.rows.binary_search(&k).ok())
                    .unwrap_or(0);
                self.list_offset = 0;
                self.select(row);
                self.message = (!self.fully_summarized() && !self.filter.is_empty())
                    .then(|| "filter applied to the packets decoded so far".into());
            }
            Err(e) => self.message = Some(format!("filter: {e}")),
        }
    }

    /// Appends a datagram that just arrived to a live session (the app must own its capture
    /// alone, as [`crate::tui::live`] gives it), with its verdict. Follows it when following;
    /// while paused it waits for `p`.
    pub fn push_live(
        &mut self,
        datagram: crate::capture::Datagram,
        payload: &[u8],
        status: Status,
        packet_type: Option<&str>,
    ) {
        let live = self.live.get_or_insert_with(Live::default);
        if self.summaries.len() >= LIVE_LIMIT {
            live.unlisted += 1;
            return;
        }
        let Some(capture) = Arc::get_mut(&mut self.capture) else {
            live.unlisted += 1;
            return;
        };
        capture.push(datagram, payload);
        let packet_type = self.type_id(packet_type);
        self.summaries.push(Some(Summary {
            status,
            packet_type,
        }));
        self.summarized += 1;
        let i = self.summaries.len() - 1;
        match &mut self.live {
            Some(live) if live.paused => live.waiting += 1,
            _ => self.list_new(i..i + 1),
        }
    }

    /// Lists the datagrams `new` that match the filter, then follows the last when following.
    fn list_new(&mut self, new: std::ops::Range<usize>) {
        let was_empty = self.rows.is_empty();
        for i in new {
            if self.matches(i) {
                self.rows.push(i);
            }
        }
        let follow = self.live.as_ref().is_some_and(|l| l.follow);
        if follow && !self.rows.is_empty() {
            self.select(self.rows.len() - 1);
        } else if was_empty && !self.rows.is_empty() {
            self.select(0);
        }
    }

    /// `f` and `p` of a live session.
    fn live_key(&mut self, key: Key) -> bool {
        let Some(live) = &mut self.live else {
            return false;
        };
        match key {
            Key::Char('f') => {
                live.follow = !live.follow;
                if live.follow && !self.rows.is_empty() {
                    self.select(self.rows.len() - 1);
                }
            }
            Key::Char('p') => {
                live.paused = !live.paused;
                if !live.paused {
                    let waiting = std::mem::take(&mut live.waiting);
                    let n = self.summaries.len();
                    self.list_new(n - waiting..n);
                }
            }
            _ => return false,
        }
        true
    }

    /// Handles one key.
    pub fn handle_key(&mut self, key: Key) {
        if let Some(input) = &mut self.filter_input {
            match key {
                Key::Enter => {
                    let text = std::mem::take(input);
                    self.filter_input = None;
                    self.apply_filter(&text);
                }
                Key::Esc => self.filter_input = None,
                Key::Backspace => {
                    input.pop();
                }
                Key::Char(c) => input.push(c),
                _ => {}
            }
            return;
        }
        if self.show_help {
            if matches!(key, Key::Esc | Key::Char('?') | Key::Char('q') | Key::Enter) {
                self.show_help = false;
            }
            return;
        }
        self.message = None;
        if self.live_key(key) {
            return;
        }
        let page = |h: usize| h.saturating_sub(1).max(1) as isize;
        match key {
            Key::Char('q') | Key::Esc => self.quit = true,
            Key::Char('?') => self.show_help = true,
            Key::Char('/') => self.filter_input = Some(self.filter_text.clone()),
            Key::Tab => {
                self.focus = match self.focus {
                    Pane::List => Pane::Tree,
                    Pane::Tree => Pane::Bits,
                    Pane::Bits => Pane::List,
                }
            }
            Key::BackTab => {
                self.focus = match self.focus {
                    Pane::List => Pane::Bits,
                    Pane::Tree => Pane::List,
                    Pane::Bits => Pane::Tree,
                }
            }
            Key::Char('n') => self.jump_problem(true),
            Key::Char('N') => self.jump_problem(false),
            _ => match self.focus {
                Pane::List => self.list_key(key, page(self.list_height())),
                Pane::Tree => self.tree_key(key, page(self.tree_height())),
                Pane::Bits => self.bits_key(key),
            },
        }
    }

    fn list_key(&mut self, key: Key, page: isize) {
        let cur = self.selected as isize;
        let to = match key {
            Key::Up | Key::Char('k') => cur - 1,
            Key::Down | Key::Char('j') => cur + 1,
            Key::PageUp => cur - page,
            Key::PageDown => cur + page,
            Key::Home | Key::Char('g') => 0,
            Key::End | Key::Char('G') => self.rows.len() as isize - 1,
            Key::Enter | Key::Char(' ') | Key::Right => {
                self.focus = Pane::Tree;
                return;
            }
            _ => return,
        };
        self.select(to.max(0) as usize);
    }

    fn tree_key(&mut self, key: Key, page: isize) {
        let cur = self.detail.as_ref().map_or(0, |d| d.cursor) as isize;
        match key {
            Key::Up | Key::Char('k') => self.move_tree(cur - 1),
            Key::Down | Key::Char('j') => self.move_tree(cur + 1),
            Key::PageUp => self.move_tree(cur - page),
            Key::PageDown => self.move_tree(cur + page),
            Key::Home | Key::Char('g') => self.move_tree(0),
            Key::End | Key::Char('G') => self.move_tree(isize::MAX / 2),
            Key::Enter | Key::Char(' ') => self.toggle_tree(),
            Key::Left | Key::Char('h') => self.set_collapsed(true),
            Key::Right | Key::Char('l') => self.set_collapsed(false),
            _ => {}
        }
    }

    fn bits_key(&mut self, key: Key) {
        let Some(d) = &mut self.detail else { return };
        let lines = super::ui::Areas::new(self.size).bit_lines(
            self.capture
                .payload(&self.capture.datagrams()[d.datagram])
                .len(),
        );
        let cur = d.bits_offset as isize;
        let to = match key {
            Key::Up | Key::Char('k') => cur - 1,
            Key::Down | Key::Char('j') => cur + 1,
            Key::PageUp => cur - 8,
            Key::PageDown => cur + 8,
            Key::Home | Key::Char('g') => 0,
            Key::End | Key::Char('G') => lines as isize,
            _ => return,
        };
        d.bits_offset = to.clamp(0, lines.saturating_sub(1) as isize) as usize;
    }

    /// Handles a mouse click at a terminal cell.
    pub fn click(&mut self, column: u16, row: u16) {
        let areas = super::ui::Areas::new(self.size);
        if let Some(r) = areas.list_row_at(column, row) {
            self.focus = Pane::List;
            let target = self.list_offset + r;
            if target < self.rows.len() {
                self.select(target);
            }
        } else if let Some(r) = areas.tree_row_at(column, row) {
            self.focus = Pane::Tree;
            let target = self.detail.as_ref().map_or(0, |d| d.offset + r);
            self.move_tree(target as isize);
        } else if areas.in_bits(column, row) {
            self.focus = Pane::Bits;
        }
    }

    /// Handles the mouse wheel over a terminal cell: `down` scrolls towards the end.
    pub fn scroll(&mut self, column: u16, row: u16, down: bool) {
        let areas = super::ui::Areas::new(self.size);
        let key = if down { Key::Down } else { Key::Up };
        let saved = self.focus;
        if areas.list_row_at(column, row).is_some() || areas.in_list(column, row) {
            self.focus = Pane::List;
            self.list_key(key, 1);
        } else if areas.tree_row_at(column, row).is_some() || areas.in_tree(column, row) {
            self.focus = Pane::Tree;
            self.tree_key(key, 1);
        } else if areas.in_bits(column, row) {
            self.focus = Pane::Bits;
            self.bits_key(key);
        }
        self.focus = saved;
    }

    /// Records a new terminal size and keeps the cursors on screen.
    pub fn resize(&mut self, width: u16, height: u16) {
        self.size = (width, height);
        let sel = self.selected;
        self.select(sel);
        let cur = self.detail.as_ref().map_or(0, |d| d.cursor) as isize;
        self.move_tree(cur);
    }
}
