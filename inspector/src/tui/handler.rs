//! Handlers: what keys, clicks, the wheel, resizes and a live session's arrivals do to the
//! [`App`] state. They change the state only (no terminal access), using the same [`Areas`] as
//! the drawing for paging and hit-testing.

use super::event::Key;
use super::layout::Areas;
use super::state::{App, Detail, Filter, LIVE_LIMIT, Live, Pane, Summary};
use crate::capture::Datagram;
use bitlens_codec::dissect::Status;
use bitlens_codec::observe::Observation;
use std::ops::Range;
use std::sync::Arc;

impl App {
    /// Dissects the datagram under the cursor for the tree and bit view (once per datagram).
    pub(super) fn open_selected(&mut self) {
        let Some(i) = self.selected_datagram() else {
            self.detail = None;
            return;
        };
        if self.detail.as_ref().is_some_and(|d| d.datagram == i) {
            return;
        }
        let d = &self.capture.datagrams()[i];
        let seen = crate::dissectors::seen_at(&self.seen, i);
        let payload = self.capture.payload(d);
        let (decoder, dissection) = self.dissectors.dissect_seen(d, payload, seen);
        let opened = self.dissectors.opened(d, payload, seen);
        self.detail = Some(Detail::new(i, decoder.to_owned(), dissection, opened));
        // Scroll the tree so the cursor (the failing field, if any) is on screen.
        let cursor = self.detail.as_ref().map_or(0, |d| d.cursor) as isize;
        self.move_tree(cursor);
    }

    /// Rows of the list pane that fit the screen (from the layout of the last size).
    pub fn list_height(&self) -> usize {
        Areas::new(self.size).list_rows()
    }

    fn tree_height(&self) -> usize {
        Areas::new(self.size).tree_rows()
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
        let areas = Areas::new(self.size);
        let (bpl, rows) = (areas.bytes_per_line(), areas.bit_rows().max(1));
        if let Some(d) = &mut self.detail
            && let Some(f) = d
                .selected_field()
                .and_then(|i| d.dissection.trace.fields.view(i))
        {
            let line = f.bit() / 8 / bpl;
            if line < d.bits_offset || line >= d.bits_offset + rows {
                d.bits_offset = line.saturating_sub(rows / 2);
            }
        }
    }

    fn toggle_tree(&mut self) {
        if let Some(d) = &mut self.detail
            && let Some(i) = d.selected_field()
            && d.is_scope(i)
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
            && d.is_scope(i)
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
    /// alone, as [`super::live`] gives it), with its verdict. Follows it when following; while
    /// paused it waits for `p`.
    pub fn push_live(
        &mut self,
        datagram: Datagram,
        payload: &[u8],
        status: Status,
        packet_type: Option<&str>,
    ) {
        self.push_live_seen(datagram, payload, status, packet_type, Observation::NONE);
    }

    /// [`App::push_live`] with what the session's transports observed of the datagram, which
    /// its dissection in the tree needs.
    pub fn push_live_seen(
        &mut self,
        datagram: Datagram,
        payload: &[u8],
        status: Status,
        packet_type: Option<&str>,
        observed: Observation,
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
        if !observed.is_none() || !self.seen.is_empty() {
            let at = self.summaries.len();
            let seen = Arc::make_mut(&mut self.seen);
            seen.resize(at, Observation::NONE);
            seen.push(observed);
        }
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
    fn list_new(&mut self, new: Range<usize>) {
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
        if key == Key::Interrupt {
            self.quit = true;
            return;
        }
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
                Key::ClearLine => input.clear(),
                Key::Char(c) => input.push(c),
                _ => {}
            }
            return;
        }
        if self.profile.is_some() {
            self.profile_key(key);
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
            Key::Char('q') => self.quit = true,
            Key::Esc => self.back(),
            Key::Char('?') => self.show_help = true,
            Key::Char('P') => self.open_profile(),
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

    /// Esc: one step back, as in a pager: from the tree or the bits to the list, then a
    /// filter in force is cleared (the whole capture listed again, the packet kept), and only
    /// then quit. Esc to leave a pane or undo a filter must not end the session.
    fn back(&mut self) {
        if self.focus != Pane::List {
            self.focus = Pane::List;
        } else if !self.filter_text.is_empty() {
            self.apply_filter("");
        } else {
            self.quit = true;
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
        let lines = Areas::new(self.size).bit_lines(
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
        let areas = Areas::new(self.size);
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
        let areas = Areas::new(self.size);
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

// The profile view (`P`): opening it and its keys (the view itself is `profile_view.rs`).
impl App {
    /// Opens the profile of the listed datagrams (`P`).
    pub fn open_profile(&mut self) {
        let datagrams = self.capture.datagrams();
        let profile = crate::profile::profile(
            &self.dissectors,
            self.capture.data(),
            self.rows.iter().filter_map(|&i| {
                let seen = self.seen.get(i).unwrap_or(&Observation::NONE);
                datagrams.get(i).map(|d| (d, seen))
            }),
        );
        self.profile = Some(super::profile_view::ProfileView {
            profile,
            filter: self.filter_text.clone(),
            offset: 0,
        });
    }

    /// Keys while the profile is shown: scroll, or close with `P`, `q` or Esc.
    pub(super) fn profile_key(&mut self, key: Key) {
        let Some(view) = &mut self.profile else {
            return;
        };
        let n = view.rows().len();
        let page = usize::from(self.size.1 / 2).max(1);
        view.offset = match key {
            Key::Char('P' | 'q') | Key::Esc => {
                self.profile = None;
                return;
            }
            Key::Down | Key::Char('j') => view.offset + 1,
            Key::Up | Key::Char('k') => view.offset.saturating_sub(1),
            Key::PageDown => view.offset + page,
            Key::PageUp => view.offset.saturating_sub(page),
            Key::Home | Key::Char('g') => 0,
            Key::End | Key::Char('G') => n,
            _ => view.offset,
        }
        .min(n.saturating_sub(1));
    }
}
