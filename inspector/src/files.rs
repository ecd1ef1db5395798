//! Reading the files given on the command line (captures, schemas, rules, logs), with
//! one-line errors that name the file: the commands and the libraries below them (the proxy's
//! rules, the profile's budgets) read their inputs through these.

use anyhow::{Result, anyhow};
use std::io::ErrorKind;
use std::path::Path;

/// The one-line error for a path that does not exist or is a folder (the OS's own messages,
/// "Is a directory (os error 21)", are less clear), for the paths that a library reads itself
/// (captures, schemas); files the commands read themselves go through [`read_input`].
///
/// # Errors
/// `FILE: no such file`, `FILE: is a folder, not a file`.
pub fn must_exist(path: &Path) -> Result<()> {
    if !path.exists() {
        return Err(unreadable(path, &ErrorKind::NotFound.into()));
    }
    if path.is_dir() {
        return Err(unreadable(path, &ErrorKind::IsADirectory.into()));
    }
    Ok(())
}

/// Reads a file given on the command line, with the one-line errors of [`must_exist`] (or
/// `FILE: cannot read: REASON`).
///
/// # Errors
/// The file cannot be read.
pub fn read_input(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| unreadable(path, &e))
}

/// [`read_input`] for a text file.
///
/// # Errors
/// The file cannot be read or is not UTF-8 (`FILE: not UTF-8 text`).
pub fn read_text(path: &Path) -> Result<String> {
    String::from_utf8(read_input(path)?).map_err(|_| anyhow!("{}: not UTF-8 text", path.display()))
}

fn unreadable(path: &Path, e: &std::io::Error) -> anyhow::Error {
    match e.kind() {
        ErrorKind::NotFound => anyhow!("{}: no such file", path.display()),
        ErrorKind::IsADirectory => anyhow!("{}: is a folder, not a file", path.display()),
        _ => anyhow!("{}: cannot read: {e}", path.display()),
    }
}

/// The reason an output file at `path` cannot be created, said plainly, keeping the error's
/// kind: the OS's "No such file or directory (os error 2)" on creating a file means its folder
/// is missing (`cannot create: no such folder DIR`); a folder is `cannot create: is a folder,
/// not a file`; anything else `cannot create: REASON`. The caller names the file.
pub fn uncreatable(path: &Path, error: std::io::Error) -> std::io::Error {
    let why = match error.kind() {
        ErrorKind::NotFound => match path.parent().filter(|p| !p.as_os_str().is_empty()) {
            Some(folder) => format!("cannot create: no such folder {}", folder.display()),
            None => format!("cannot create: {error}"),
        },
        ErrorKind::IsADirectory => "cannot create: is a folder, not a file".to_string(),
        _ => format!("cannot create: {error}"),
    };
    std::io::Error::new(error.kind(), why)
}
