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

/// The start of the one-line error for standard output that cannot be written.
const STDOUT_UNWRITABLE: &str = "cannot write to standard output";

/// Standard output that names itself when it cannot be written: every error but a closed
/// pipe (`BrokenPipe`, kept as it is so that `| head` still ends quietly) becomes one of the
/// same kind whose message is `cannot write to standard output: REASON`, so that a full disk
/// (`> /dev/full`) is not blamed on a file the command reads. What the subcommands write their
/// results to.
pub struct Stdout(std::io::StdoutLock<'static>);

/// [`Stdout`], locked for the subcommand.
pub fn stdout() -> Stdout {
    Stdout(std::io::stdout().lock())
}

/// `println!` through [`Stdout`]: `line` and a newline, or the error that names standard
/// output (not `println!`'s panic).
///
/// # Errors
/// Standard output cannot be written.
pub fn print_line(line: impl std::fmt::Display) -> std::io::Result<()> {
    use std::io::Write as _;
    writeln!(stdout(), "{line}")
}

/// The reason `e` gives, without the OS's error number: `No space left on device`.
pub fn reason(e: &std::io::Error) -> String {
    let text = e.to_string();
    match e.raw_os_error() {
        Some(code) => text
            .strip_suffix(&format!(" (os error {code})"))
            .map_or_else(|| text.clone(), str::to_owned),
        None => text,
    }
}

/// The error `Stdout` returns for `e` (see [`Stdout`]).
fn on_stdout(e: std::io::Error) -> std::io::Error {
    if e.kind() == ErrorKind::BrokenPipe {
        return e;
    }
    std::io::Error::new(e.kind(), format!("{STDOUT_UNWRITABLE}: {}", reason(&e)))
}

/// Whether `e` is standard output's error ([`Stdout`]), also behind a `serde_json::Error`
/// or a context: then its own message is the whole story, and [`crate::cli`] says only it.
pub fn stdout_failure(e: &anyhow::Error) -> Option<String> {
    e.chain().find_map(|c| {
        let text = if let Some(io) = c.downcast_ref::<std::io::Error>() {
            io.to_string()
        } else {
            let json = c.downcast_ref::<serde_json::Error>()?;
            json.io_error_kind()?;
            json.to_string()
        };
        text.starts_with(STDOUT_UNWRITABLE).then_some(text)
    })
}

impl std::io::Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(buf).map_err(on_stdout)
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.0.write_all(buf).map_err(on_stdout)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush().map_err(on_stdout)
    }
}

#[cfg(test)]
mod tests {
    use super::{on_stdout, stdout_failure};
    use std::io::{Error, ErrorKind};

    #[test]
    fn standard_output_is_named_and_a_closed_pipe_is_kept() {
        let full = on_stdout(Error::from_raw_os_error(28));
        assert_eq!(full.kind(), ErrorKind::StorageFull);
        let said = "cannot write to standard output: No space left on device";
        assert_eq!(full.to_string(), said);
        let pipe = on_stdout(Error::new(ErrorKind::BrokenPipe, "pipe"));
        assert_eq!(pipe.kind(), ErrorKind::BrokenPipe);
        assert_eq!(pipe.to_string(), "pipe");
        let json = anyhow::Error::from(serde_json::Error::io(on_stdout(Error::from_raw_os_error(
            28,
        ))));
        assert_eq!(
            stdout_failure(&json.context("the profile")).as_deref(),
            Some(said)
        );
        let file = anyhow::Error::from(Error::from_raw_os_error(28));
        assert_eq!(stdout_failure(&file), None);
    }
}
