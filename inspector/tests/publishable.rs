//! Issue 31.5: `bitlens` and every crate it depends on can be published, so a user's
//! `cargo add bitlens` works: no normal dependency on an unpublished crate (the testkit), a
//! version beside every path, and the fields crates.io asks for. Read from the manifests, so it
//! fails here before `cargo publish` fails for the user.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use toml::{Table, Value};

fn manifest(path: &Path) -> Table {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.parse()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The workspace's packages by name: their folder and manifest.
fn packages(workspace: &Table) -> Vec<(String, PathBuf, Table)> {
    workspace["workspace"]["members"]
        .as_array()
        .expect("members")
        .iter()
        .map(|m| {
            let dir = root().join(m.as_str().expect("a member path"));
            let t = manifest(&dir.join("Cargo.toml"));
            let name = t["package"]["name"].as_str().expect("a name").to_owned();
            (name, dir, t)
        })
        .collect()
}

/// The `[dependencies]` of `t` (optional ones included: `cargo publish` needs those too),
/// with the workspace's entry for `dep.workspace = true`.
fn dependencies<'a>(t: &'a Table, workspace: &'a Table) -> Vec<(&'a str, &'a Value)> {
    let shared = workspace["workspace"]["dependencies"]
        .as_table()
        .expect("workspace dependencies");
    t.get("dependencies")
        .and_then(Value::as_table)
        .into_iter()
        .flatten()
        .map(|(name, spec)| {
            let inherited = spec.get("workspace").and_then(Value::as_bool) == Some(true);
            (name.as_str(), if inherited { &shared[name] } else { spec })
        })
        .collect()
}

#[test]
fn bitlens_and_what_it_depends_on_can_be_published() {
    let workspace = manifest(&root().join("Cargo.toml"));
    let all = packages(&workspace);
    let by_name = |n: &str| all.iter().find(|(name, ..)| name == n);
    // From bitlens through its normal dependencies, to every workspace crate reached.
    let mut todo = vec!["bitlens".to_owned()];
    let mut seen = BTreeSet::new();
    let mut problems = Vec::new();
    while let Some(name) = todo.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        let (_, dir, t) = by_name(&name).expect("a workspace package");
        let package = t["package"].as_table().expect("[package]");
        if package.get("publish").and_then(Value::as_bool) == Some(false) {
            problems.push(format!(
                "{name}: publish = false, but a published crate needs it"
            ));
        }
        for field in ["description", "license"] {
            if !package.contains_key(field) {
                problems.push(format!("{name}: no {field}"));
            }
        }
        if let Some(readme) = package.get("readme").and_then(Value::as_str)
            && !dir.join(readme).is_file()
        {
            problems.push(format!("{name}: readme {readme} is not in the package"));
        }
        for (dep, spec) in dependencies(t, &workspace) {
            if spec.get("path").is_some() {
                if spec.get("version").is_none() {
                    problems.push(format!("{name}: the path dependency {dep} has no version"));
                }
                todo.push(dep.to_owned());
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    for needed in [
        "bitlens-codec",
        "bitlens-demo",
        "bitlens-schema",
        "bitlens-netcode",
    ] {
        assert!(seen.contains(needed), "{needed} not reached: {seen:?}");
    }
    assert!(!seen.contains("bitlens-testkit"), "{seen:?}");
}
