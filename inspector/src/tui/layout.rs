//! The layout: every pane's rectangle, computed from the terminal size alone, so that key
//! handling (paging, scrolling the bit view) and mouse hit-testing use the very rectangles
//! the drawing uses.

use ratatui::layout::{Constraint, Layout, Rect};

/// Smallest usable terminal.
pub const MIN_SIZE: (u16, u16) = (40, 12);

/// The rectangles of every pane for a terminal size.
#[derive(Debug, Clone, Copy)]
pub struct Areas {
    /// Packet list (with border).
    pub list: Rect,
    /// Error / desync lines.
    pub info: Rect,
    /// Field tree (with border).
    pub tree: Rect,
    /// Hex and bit view (with border).
    pub bits: Rect,
    /// Status bar.
    pub status: Rect,
    /// Whether the terminal is big enough to draw anything.
    pub usable: bool,
}

impl Areas {
    /// The layout for a terminal of `(width, height)`.
    pub fn new((w, h): (u16, u16)) -> Self {
        let full = Rect::new(0, 0, w, h);
        let usable = w >= MIN_SIZE.0 && h >= MIN_SIZE.1;
        let [main, status] =
            Layout::vertical([Constraint::Min(1), Constraint::Length(1)]).areas(full);
        let [list, info, bottom] = Layout::vertical([
            Constraint::Percentage(38),
            Constraint::Length(2),
            Constraint::Min(4),
        ])
        .areas(main);
        let (tree, bits) = if w >= 110 {
            let [t, b] =
                Layout::horizontal([Constraint::Percentage(45), Constraint::Percentage(55)])
                    .areas(bottom);
            (t, b)
        } else {
            let [t, b] = Layout::vertical([Constraint::Percentage(50), Constraint::Percentage(50)])
                .areas(bottom);
            (t, b)
        };
        Areas {
            list,
            info,
            tree,
            bits,
            status,
            usable,
        }
    }

    /// Packet rows that fit the list pane (border and header excluded).
    pub fn list_rows(&self) -> usize {
        self.list.height.saturating_sub(3) as usize
    }

    /// Field rows that fit the tree pane.
    pub fn tree_rows(&self) -> usize {
        self.tree.height.saturating_sub(2) as usize
    }

    /// Bytes per line of the bit view: 8, 4, 2 or 1, whatever fits 12 columns per byte (hex and
    /// 8 bits) after a 6-column offset.
    pub fn bytes_per_line(&self) -> usize {
        let inner = self.bits.width.saturating_sub(2) as usize;
        let fits = inner.saturating_sub(7) / 12;
        [8, 4, 2, 1].into_iter().find(|&n| n <= fits).unwrap_or(1)
    }

    /// Payload lines the bit view shows at once (border and header excluded).
    pub fn bit_rows(&self) -> usize {
        self.bits.height.saturating_sub(3) as usize
    }

    /// Lines the bit view needs for `len` payload bytes.
    pub fn bit_lines(&self, len: usize) -> usize {
        len.div_ceil(self.bytes_per_line())
    }

    fn inside(r: Rect, col: u16, row: u16) -> bool {
        col >= r.x && col < r.x + r.width && row >= r.y && row < r.y + r.height
    }

    /// Which list row (0 = first visible) a cell is on.
    pub fn list_row_at(&self, col: u16, row: u16) -> Option<usize> {
        let first = self.list.y + 2; // border + header
        (Self::inside(self.list, col, row)
            && row >= first
            && row < self.list.y + self.list.height - 1)
            .then(|| (row - first) as usize)
    }

    /// Which tree row a cell is on.
    pub fn tree_row_at(&self, col: u16, row: u16) -> Option<usize> {
        let first = self.tree.y + 1;
        (Self::inside(self.tree, col, row)
            && row >= first
            && row < self.tree.y + self.tree.height - 1)
            .then(|| (row - first) as usize)
    }

    /// Whether a cell is in the list pane.
    pub fn in_list(&self, col: u16, row: u16) -> bool {
        Self::inside(self.list, col, row)
    }

    /// Whether a cell is in the tree pane.
    pub fn in_tree(&self, col: u16, row: u16) -> bool {
        Self::inside(self.tree, col, row)
    }

    /// Whether a cell is in the bit view.
    pub fn in_bits(&self, col: u16, row: u16) -> bool {
        Self::inside(self.bits, col, row)
    }
}
