//! `bitlens fuzz-init --packet my_game::Packet [--crate-dir DIR] [--bitlens PATH]`: writes the
//! cargo-fuzz crate and the corpus replay test for a game's own packet set.
//!
//! In the crate at `DIR` (default `.`), whose packet set `P` implements
//! `bitlens_codec::packet::Packet`, `Default`, `Clone`, `PartialEq`, `Debug` and `Arbitrary`:
//!
//! | file | what |
//! |---|---|
//! | `fuzz/Cargo.toml` | a cargo-fuzz crate with its own workspace, depending on `DIR`'s crate, `libfuzzer-sys`, `bitlens-codec` (feature `arbitrary`) and `bitlens-fuzz-guard` |
//! | `fuzz/fuzz_targets/<target>.rs` | one line each: `bitlens_codec::fuzzing::<target>::<P>` under the guard allocator, for the targets [`TARGETS`] |
//! | `fuzz/.gitignore` | cargo-fuzz's build output and findings (the corpus is kept) |
//! | `tests/fuzz_corpus.rs` | `cargo test` replays `fuzz/corpus/<target>/` through the same harnesses, on stable |
//!
//! Existing files are left alone unless `--force`. The corpus folders are seeded from a capture
//! by `bitlens seeds CAPTURE --port P fuzz/corpus/<target>` (or the game's own binary's `seeds`; the
//! replay fails on an empty one).

use super::common::{Context as Ctx, Exit};
use anyhow::{Context, Result, bail};
use clap::Parser;
use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

/// Write the cargo-fuzz crate (fuzz/) and the corpus replay test (tests/fuzz_corpus.rs) for your
/// own packet set: targets packet_read, packet_roundtrip and hostile_lengths over
/// bitlens_codec::fuzzing.
#[derive(Parser, Debug)]
pub struct FuzzInitArgs {
    /// Your packet set's type path, e.g. my_game::Packet; it implements
    /// bitlens_codec::packet::Packet, Default, Clone, PartialEq, Debug and Arbitrary.
    #[arg(long, value_name = "PATH")]
    pub packet: String,
    /// The crate that defines it.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub crate_dir: PathBuf,
    /// Depend on a bitlens checkout by path instead of the published crates.
    #[arg(long, value_name = "DIR")]
    pub bitlens: Option<PathBuf>,
    /// Depend on the crate without its default features (keep a CLI or a game engine out of
    /// the fuzz build).
    #[arg(long)]
    pub no_default_features: bool,
    /// Features of the crate the fuzz targets need (comma-separated, e.g. arbitrary).
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub features: Vec<String>,
    /// Overwrite files that exist.
    #[arg(long)]
    pub force: bool,
}

impl FuzzInitArgs {
    /// The options these arguments give to `program` (as `Cli::new` names it: the files and
    /// the next steps name it).
    pub fn options(&self, program: &str) -> Options {
        Options {
            crate_dir: self.crate_dir.clone(),
            packet: self.packet.clone(),
            bitlens: self.bitlens.clone(),
            default_features: !self.no_default_features,
            features: self.features.clone(),
            program: program.to_owned(),
        }
    }
}

/// The subcommand: writes the files and prints what it wrote and the next steps.
///
/// # Errors
/// As [`run`].
pub fn command(args: FuzzInitArgs, ctx: &Ctx<'_>) -> Result<Exit> {
    let opts = args.options(ctx.program());
    let summary = run(&opts, args.force)?;
    crate::files::print_line(&summary)?;
    Ok(Exit::Ok)
}

/// The fuzz targets written, each a harness of `bitlens_codec::fuzzing`, with what it checks.
pub const TARGETS: &[(&str, &str)] = &[
    (
        "packet_read",
        "raw bytes, then with a valid CRC: no panic, re-encodes identically, trace == read",
    ),
    (
        "packet_roundtrip",
        "an Arbitrary packet: measure == written, read(write(x)) == x, trace == read",
    ),
    (
        "hostile_lengths",
        "a valid packet with one count or length made hostile: refused at that field",
    ),
];

/// What to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// The crate whose packet set is fuzzed (holds its `Cargo.toml`).
    pub crate_dir: PathBuf,
    /// The packet set's Rust path, e.g. `my_game::Packet`.
    pub packet: String,
    /// A bitlens checkout to depend on by path (else the published versions).
    pub bitlens: Option<PathBuf>,
    /// Whether the fuzz crate takes the crate's default features.
    pub default_features: bool,
    /// The crate's features the fuzz crate enables.
    pub features: Vec<String>,
    /// The program the next steps name for `seeds` (`bitlens`, or a game's own binary built
    /// with `bitlens::Cli`).
    pub program: String,
}

impl Options {
    /// Options for the crate at `crate_dir` and the packet set `packet`, written by `program`
    /// (`bitlens`, or a game's own binary), with the crate's default features and the
    /// published bitlens crates.
    pub fn new(crate_dir: impl Into<PathBuf>, packet: impl Into<String>, program: &str) -> Self {
        Options {
            crate_dir: crate_dir.into(),
            packet: packet.into(),
            bitlens: None,
            default_features: true,
            features: Vec::new(),
            program: program.to_owned(),
        }
    }

    /// The dependency on the crate, as `fuzz/Cargo.toml` writes it.
    fn crate_dependency(&self) -> String {
        let mut spec = String::from("path = \"..\"");
        if !self.default_features {
            spec.push_str(", default-features = false");
        }
        if !self.features.is_empty() {
            let list: Vec<String> = self.features.iter().map(|f| format!("{f:?}")).collect();
            let _ = write!(spec, ", features = [{}]", list.join(", "));
        }
        format!("{{ {spec} }}")
    }
}

/// One file to write: its path relative to the crate, and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct File {
    /// Relative to [`Options::crate_dir`].
    pub path: PathBuf,
    /// The contents.
    pub text: String,
}

/// The package name in `crate_dir/Cargo.toml`.
///
/// # Errors
/// A missing or unreadable manifest, or one without `[package] name`.
pub fn package_name(crate_dir: &Path) -> Result<String> {
    let manifest = crate_dir.join("Cargo.toml");
    let text = super::common::read_text(&manifest)?;
    let doc: toml::Table = text
        .parse()
        .with_context(|| format!("{}: not a Cargo manifest", manifest.display()))?;
    doc.get("package")
        .and_then(|p| p.get("name"))
        .and_then(|n| n.as_str())
        .map(str::to_owned)
        .with_context(|| {
            format!(
                "{}: no [package] name (give the crate of your packet set with --crate-dir)",
                manifest.display()
            )
        })
}

/// Whether `crate_dir/Cargo.toml` already depends on `bitlens-codec` with feature `arbitrary`
/// (as a dependency or a dev-dependency), which the written `tests/fuzz_corpus.rs` needs.
///
/// # Errors
/// As [`package_name`].
pub fn has_arbitrary_codec(crate_dir: &Path) -> Result<bool> {
    let manifest = crate_dir.join("Cargo.toml");
    let text = super::common::read_text(&manifest)?;
    let doc: toml::Table = text
        .parse()
        .with_context(|| format!("{}: not a Cargo manifest", manifest.display()))?;
    Ok(["dependencies", "dev-dependencies"].iter().any(|section| {
        doc.get(*section)
            .and_then(|deps| deps.get("bitlens-codec"))
            .and_then(|dep| dep.get("features"))
            .and_then(|f| f.as_array())
            .is_some_and(|f| f.iter().any(|x| x.as_str() == Some("arbitrary")))
    }))
}

/// Checks that `packet` is a Rust type path (`a::b::Packet`, generics allowed after the last
/// segment are not: name a type alias instead).
///
/// # Errors
/// When it is not.
fn check_packet_path(packet: &str) -> Result<()> {
    let ident = |s: &str| {
        let mut c = s.chars();
        c.next()
            .is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
            && c.all(|x| x.is_ascii_alphanumeric() || x == '_')
    };
    if packet.split("::").all(ident) {
        Ok(())
    } else {
        bail!(
            "--packet {packet:?} is not a Rust type path (like my_game::Packet; for a generic \
             type, name a type alias)"
        )
    }
}

/// `path` relative to `from` (both relative to the same folder, or both absolute), with `..`
/// where needed: the dependency path written in `fuzz/Cargo.toml`.
fn relative_to(path: &Path, from: &Path) -> PathBuf {
    let a: Vec<Component<'_>> = path.components().collect();
    let b: Vec<Component<'_>> = from.components().collect();
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut out = PathBuf::new();
    for _ in common..b.len() {
        out.push("..");
    }
    for c in &a[common..] {
        out.push(c);
    }
    out
}

/// The dependency lines of the bitlens crates.
fn bitlens_deps(opts: &Options) -> Result<String> {
    let Some(checkout) = &opts.bitlens else {
        let v = env!("CARGO_PKG_VERSION");
        let codec = format!("bitlens-codec = {{ version = \"{v}\", features = [\"arbitrary\"] }}");
        return Ok(format!("{codec}\nbitlens-fuzz-guard = \"{v}\"\n"));
    };
    if !checkout.join("codec/fuzz-guard/Cargo.toml").is_file() {
        bail!(
            "--bitlens {}: not a bitlens checkout (no codec/fuzz-guard/Cargo.toml)",
            checkout.display()
        );
    }
    let canonical = |p: &Path| std::fs::canonicalize(p).with_context(|| format!("{}", p.display()));
    let fuzz = canonical(&opts.crate_dir)?.join("fuzz");
    let root = relative_to(&canonical(checkout)?, &fuzz);
    let path = |sub: &str| root.join(sub).display().to_string().replace('\\', "/");
    let codec = path("codec");
    let guard = path("codec/fuzz-guard");
    let codec = format!("bitlens-codec = {{ path = \"{codec}\", features = [\"arbitrary\"] }}");
    Ok(format!(
        "{codec}\nbitlens-fuzz-guard = {{ path = \"{guard}\" }}\n"
    ))
}

/// `fuzz/Cargo.toml` up to its `[[bin]]` sections.
const MANIFEST: &str = include_str!("fuzz_init/manifest.toml.in");
/// `fuzz/fuzz_targets/<target>.rs`.
const TARGET: &str = include_str!("fuzz_init/target.rs.in");
/// `tests/fuzz_corpus.rs`.
const FUZZ_CORPUS: &str = include_str!("fuzz_init/fuzz_corpus.rs.in");

/// `template` with each `@key@` of `values` replaced by its value, in one pass: the values'
/// own text is not looked at again.
fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(at) = rest.find('@') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let key = values.iter().find(|(k, _)| {
            after
                .strip_prefix(k)
                .is_some_and(|tail| tail.starts_with('@'))
        });
        match key {
            Some((k, v)) => {
                out.push_str(v);
                rest = &after[k.len() + 1..];
            }
            None => {
                out.push('@');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The files `fuzz-init` writes for `opts`, without writing them.
///
/// # Errors
/// A crate without a readable manifest, a bad `--packet`, a `--bitlens` that is no checkout.
pub fn files(opts: &Options) -> Result<Vec<File>> {
    check_packet_path(&opts.packet)?;
    let name = package_name(&opts.crate_dir)?;
    let packet = &opts.packet;
    let program = &opts.program;
    let dependency = opts.crate_dependency();
    let bitlens_deps = bitlens_deps(opts)?;
    let mut manifest = fill(
        MANIFEST,
        &[
            ("program", program),
            ("packet", packet),
            ("name", &name),
            ("dependency", &dependency),
            ("bitlens_deps", &bitlens_deps),
        ],
    );
    let mut out = Vec::new();
    for (target, what) in TARGETS {
        let _ = write!(
            manifest,
            "\n[[bin]]\nname = \"{target}\"\npath = \"fuzz_targets/{target}.rs\"\ntest = false\ndoc = false\nbench = false\n"
        );
        out.push(File {
            path: PathBuf::from(format!("fuzz/fuzz_targets/{target}.rs")),
            text: fill(
                TARGET,
                &[("what", what), ("target", target), ("packet", packet)],
            ),
        });
    }
    out.insert(
        0,
        File {
            path: PathBuf::from("fuzz/Cargo.toml"),
            text: manifest,
        },
    );
    out.push(File {
        path: PathBuf::from("fuzz/.gitignore"),
        text: "target\nartifacts\ncoverage\n".into(),
    });
    let mut table = String::new();
    for (target, _) in TARGETS {
        let _ = writeln!(table, "    (\"{target}\", fuzzing::{target}::<P>),");
    }
    out.push(File {
        path: PathBuf::from("tests/fuzz_corpus.rs"),
        text: fill(
            FUZZ_CORPUS,
            &[("program", program), ("packet", packet), ("table", &table)],
        ),
    });
    Ok(out)
}

/// Writes the files of [`files`] under `opts.crate_dir` (and the empty corpus folders); returns
/// a summary with the next steps.
///
/// # Errors
/// As [`files`]; a file that exists (without `force`) or cannot be written.
pub fn run(opts: &Options, force: bool) -> Result<String> {
    let files = files(opts)?;
    if !force {
        let existing: Vec<String> = files
            .iter()
            .map(|f| opts.crate_dir.join(&f.path))
            .filter(|p| p.exists())
            .map(|p| p.display().to_string())
            .collect();
        if !existing.is_empty() {
            bail!(
                "{} already exist (--force overwrites them)",
                existing.join(", ")
            );
        }
    }
    let mut summary = String::new();
    for f in &files {
        let path = opts.crate_dir.join(&f.path);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("{}: cannot create", dir.display()))?;
        }
        std::fs::write(&path, &f.text)
            .with_context(|| format!("{}: cannot write", path.display()))?;
        let _ = writeln!(summary, "wrote {}", path.display());
    }
    for (target, _) in TARGETS {
        let dir = opts.crate_dir.join("fuzz/corpus").join(target);
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("{}: cannot create", dir.display()))?;
    }
    let mut steps = Vec::new();
    if !has_arbitrary_codec(&opts.crate_dir)? {
        steps.push(format!(
            "give {} a dev-dependency on bitlens-codec with features = [\"arbitrary\"] (tests/fuzz_corpus.rs uses it)",
            package_name(&opts.crate_dir)?
        ));
    }
    steps.push(format!(
        "seed each corpus from a capture: {} seeds CAPTURE --port PORT fuzz/corpus/<target> ({})",
        opts.program,
        TARGETS
            .iter()
            .map(|(t, _)| *t)
            .collect::<Vec<_>>()
            .join(", ")
    ));
    let fuzz_dir = opts.crate_dir.join("fuzz");
    if opts.features.is_empty() {
        steps.push(format!(
            "cargo test (replays the corpus); cargo +nightly fuzz run packet_read (in {})",
            fuzz_dir.display()
        ));
    } else {
        // The Arbitrary impl is behind these features: without them the replay test does not
        // compile (E0277: the packet set does not implement Arbitrary).
        let list = opts.features.join(",");
        let quoted: Vec<String> = opts.features.iter().map(|f| format!("{f:?}")).collect();
        steps.push(format!(
            "cargo test --features {list} (replays the corpus; tests/fuzz_corpus.rs needs the \
             Arbitrary impl those features enable: plain cargo test fails with E0277 until \
             Cargo.toml says [[test]] name = \"fuzz_corpus\" required-features = [{}], which \
             skips it without them)",
            quoted.join(", ")
        ));
        steps.push(format!(
            "cargo +nightly fuzz run packet_read (in {}: fuzz/Cargo.toml enables the features)",
            fuzz_dir.display()
        ));
    }
    summary.push_str("next:");
    for (i, step) in steps.iter().enumerate() {
        let _ = write!(summary, "\n  {}. {step}", i + 1);
    }
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_crate(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("bitlens-fuzz-init-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("Cargo.toml"),
            "[package]\nname = \"my-game\"\nversion = \"0.1.0\"\n",
        )
        .unwrap();
        dir
    }

    #[test]
    fn templates_are_filled_in_one_pass() {
        let values = [("packet", "a@packet@b"), ("name", "n")];
        assert_eq!(
            fill("@name@: @packet@ @other@ x@y", &values),
            "n: a@packet@b @other@ x@y"
        );
    }

    #[test]
    fn relative_paths_climb_out_of_the_fuzz_folder() {
        assert_eq!(
            relative_to(Path::new("/r"), Path::new("/r/examples/x/fuzz")),
            PathBuf::from("../../..")
        );
        assert_eq!(
            relative_to(Path::new("/src/bitlens"), Path::new("/src/game/fuzz")),
            PathBuf::from("../../bitlens")
        );
    }

    #[test]
    fn writes_the_targets_and_the_replay_for_the_packet_set() {
        let dir = temp_crate("write");
        let opts = Options::new(&dir, "my_game::net::Packet", "bitlens");
        let summary = run(&opts, false).unwrap();
        assert!(summary.contains("fuzz/Cargo.toml"), "{summary}");
        let manifest = std::fs::read_to_string(dir.join("fuzz/Cargo.toml")).unwrap();
        let doc: toml::Table = manifest.parse().unwrap();
        assert_eq!(doc["package"]["name"].as_str(), Some("my-game-fuzz"));
        assert_eq!(doc["dependencies"]["my-game"]["path"].as_str(), Some(".."));
        let v = env!("CARGO_PKG_VERSION");
        assert_eq!(doc["dependencies"]["bitlens-fuzz-guard"].as_str(), Some(v));
        let bins = doc["bin"].as_array().unwrap();
        assert_eq!(bins.len(), 3);
        let target =
            std::fs::read_to_string(dir.join("fuzz/fuzz_targets/hostile_lengths.rs")).unwrap();
        assert!(target.contains(
            "bitlens_fuzz_guard::bounded(data, bitlens_codec::fuzzing::hostile_lengths::<my_game::net::Packet>)"
        ));
        let replay = std::fs::read_to_string(dir.join("tests/fuzz_corpus.rs")).unwrap();
        assert!(replay.contains("type P = my_game::net::Packet;"));
        assert!(replay.contains("(\"packet_roundtrip\", fuzzing::packet_roundtrip::<P>),"));
        assert!(dir.join("fuzz/corpus/packet_read").is_dir());
        // A second run refuses to overwrite, and names what exists.
        let err = run(&opts, false).unwrap_err().to_string();
        assert!(
            err.contains("fuzz_targets/packet_read.rs") && err.contains("--force"),
            "{err}"
        );
        run(&opts, true).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_bitlens_checkout_is_a_path_dependency() {
        let dir = temp_crate("path");
        let checkout = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let opts = Options {
            bitlens: Some(checkout.clone()),
            default_features: false,
            features: vec!["arbitrary".into(), "net".into()],
            ..Options::new(&dir, "my_game::Packet", "bitlens")
        };
        let f = files(&opts).unwrap();
        let doc: toml::Table = f[0].text.parse().unwrap();
        let game = &doc["dependencies"]["my-game"];
        assert_eq!(game["default-features"].as_bool(), Some(false));
        assert_eq!(game["features"].as_array().unwrap().len(), 2);
        let guard = doc["dependencies"]["bitlens-fuzz-guard"]["path"]
            .as_str()
            .unwrap();
        std::fs::create_dir_all(dir.join("fuzz")).unwrap();
        let resolved = dir.join("fuzz").join(guard);
        assert_eq!(
            std::fs::canonicalize(resolved).unwrap(),
            std::fs::canonicalize(checkout.join("codec/fuzz-guard")).unwrap()
        );
        let not = Options {
            bitlens: Some(dir.clone()),
            ..opts
        };
        assert!(
            files(&not)
                .unwrap_err()
                .to_string()
                .contains("not a bitlens checkout")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_games_own_binary_and_features_are_in_the_files_and_next_steps() {
        // Issue 29.11 and 29.13: the files named `bitlens` in a game's binary, and the next
        // steps said plain `cargo test`, which fails with E0277 when the Arbitrary impl is
        // behind a feature.
        let dir = temp_crate("program");
        let opts = Options {
            features: vec!["fuzzing".into()],
            ..Options::new(&dir, "my_game::Packet", "skirmish")
        };
        let summary = run(&opts, false).unwrap();
        assert!(
            summary.contains("cargo test --features fuzzing (replays the corpus;"),
            "{summary}"
        );
        assert!(
            summary.contains("[[test]] name = \"fuzz_corpus\" required-features = [\"fuzzing\"]"),
            "{summary}"
        );
        assert!(summary.contains("skirmish seeds CAPTURE"), "{summary}");
        let manifest = std::fs::read_to_string(dir.join("fuzz/Cargo.toml")).unwrap();
        assert!(
            manifest.starts_with("# Written by `skirmish fuzz-init --packet my_game::Packet`"),
            "{manifest}"
        );
        let replay = std::fs::read_to_string(dir.join("tests/fuzz_corpus.rs")).unwrap();
        assert!(
            replay.contains("//! Written by `skirmish fuzz-init --packet my_game::Packet`")
                && replay.contains("`skirmish seeds CAPTURE"),
            "{replay}"
        );
        assert!(!replay.contains("bitlens seeds") && !manifest.contains("bitlens fuzz-init"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn bad_arguments_are_named() {
        let dir = temp_crate("bad");
        let opts = |packet: &str| Options::new(&dir, packet, "bitlens");
        let err = files(&opts("Vec<u8>")).unwrap_err().to_string();
        assert!(err.contains("not a Rust type path"), "{err}");
        let err = files(&Options {
            crate_dir: dir.join("nowhere"),
            ..opts("a::B")
        })
        .unwrap_err()
        .to_string();
        assert!(err.contains("Cargo.toml: no such file"), "{err}");
        std::fs::write(dir.join("Cargo.toml"), "[workspace]\n").unwrap();
        let err = files(&opts("a::B")).unwrap_err().to_string();
        assert!(err.contains("no [package] name"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
