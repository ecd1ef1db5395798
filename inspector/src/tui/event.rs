//! Input: keys independent of the terminal library (so that key handling is tested without a
//! terminal), and the mapping from crossterm's key events.

use ratatui::crossterm::event::{KeyCode, KeyModifiers};

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
    /// Ctrl-C: quits from anywhere, also from the filter prompt, the help and the profile.
    Interrupt,
    /// Ctrl-U: clears the filter prompt's text.
    ClearLine,
}

/// Maps a terminal key to an app key.
pub fn map_key(code: KeyCode, mods: KeyModifiers) -> Option<Key> {
    Some(match code {
        // A control key is never its letter: Ctrl-C typed into the filter prompt would
        // otherwise add a "q" there instead of quitting.
        KeyCode::Char('c') if mods.contains(KeyModifiers::CONTROL) => Key::Interrupt,
        KeyCode::Char('u') if mods.contains(KeyModifiers::CONTROL) => Key::ClearLine,
        KeyCode::Char(_) if mods.contains(KeyModifiers::CONTROL) => return None,
        KeyCode::Char(c) => Key::Char(c),
        KeyCode::Enter => Key::Enter,
        KeyCode::Esc => Key::Esc,
        KeyCode::Tab => Key::Tab,
        KeyCode::BackTab => Key::BackTab,
        KeyCode::Up => Key::Up,
        KeyCode::Down => Key::Down,
        KeyCode::Left => Key::Left,
        KeyCode::Right => Key::Right,
        KeyCode::PageUp => Key::PageUp,
        KeyCode::PageDown => Key::PageDown,
        KeyCode::Home => Key::Home,
        KeyCode::End => Key::End,
        KeyCode::Backspace => Key::Backspace,
        _ => return None,
    })
}
