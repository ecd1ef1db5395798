//! Schema errors name the file, line and column and say what to change.

use bitlens_codec::schema::Schema;

const HEAD: &str = "[protocol]\nname = \"t\"\nid = 7\nmtu = 1200\npackets = [\"P\"]\n";

/// The error for `body` appended to a valid protocol header.
fn error(body: &str) -> String {
    let text = format!("{HEAD}{body}");
    match Schema::from_toml(&text, "game.toml") {
        Ok(_) => panic!("schema accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

fn assert_error(body: &str, want: &str) {
    let got = error(body);
    assert!(got.starts_with(want), "got:  {got}\nwant: {want}...");
}

#[test]
fn unknown_type() {
    assert_error(
        "[struct.P]\nfields = [{ name = \"x\", type = \"i33\" }]\n",
        "game.toml:7:32: unknown type \"i33\" (use a built-in type: bool, int,",
    );
}

#[test]
fn min_above_max() {
    assert_error(
        "[struct.P]\nfields = [{ name = \"hp\", type = \"int\", min = 100, max = 0 }]\n",
        "game.toml:7:46: min 100 is greater than max 0 (swap them, or fix one)",
    );
    assert_error(
        "[struct.P]\nfields = [{ name = \"v\", type = \"compressed_float\", min = 5.0, max = -5.0, resolution = 0.1 }]\n",
        "game.toml:7:58: min 5 is greater than max -5",
    );
}

#[test]
fn counts_without_an_upper_bound() {
    assert_error(
        "[struct.P]\nfields = [{ name = \"mice\", type = \"array\", element = \"u8\" }]\n",
        "game.toml:7:11: array field without `max_len` (an array count needs an upper bound: add `max_len = 32`)",
    );
    assert_error(
        "[struct.P]\nfields = [{ name = \"name\", type = \"string\" }]\n",
        "game.toml:7:11: string field without `max_len` (a string's length needs an upper bound",
    );
}

#[test]
fn duplicate_names() {
    assert_error(
        "[struct.P]\nfields = [\n  { name = \"x\", type = \"u8\" },\n  { name = \"x\", type = \"u8\" },\n]\n",
        "game.toml:9:12: duplicate field name \"x\", first at 8:12 (rename one of them)",
    );
    assert_error(
        "[struct.P]\nfields = [{ name = \"x\", type = \"u8\" }]\n[enum.P]\nvalues = [\"a\"]\n",
        "game.toml:8:7: duplicate type name \"P\", first defined at 6:9 (rename one of them)",
    );
    assert_error(
        "[struct.P]\nfields = [{ name = \"x\", type = \"u8\" }]\n[struct.P]\nfields = []\n",
        "game.toml:8:",
    );
}

#[test]
fn struct_reference_cycles() {
    assert_error(
        "[struct.P]\nfields = [{ name = \"a\", type = \"A\" }]\n[struct.A]\nfields = [{ name = \"b\", type = \"B\" }]\n[struct.B]\nfields = [{ name = \"a\", type = \"A\" }]\n",
        "game.toml:11:32: struct reference cycle A -> B -> A (a struct cannot contain itself",
    );
    assert_error(
        "[struct.P]\nfields = [{ name = \"kids\", type = \"array\", max_len = 4, element = \"P\" }]\n",
        "game.toml:7:67: struct reference cycle P -> P",
    );
}

#[test]
fn other_mistakes_say_what_to_change() {
    assert_error(
        "[struct.P]\nfields = [{ name = \"x\", type = \"u8\", mni = 0 }]\n",
        "game.toml:7:38: unknown key \"mni\" for a field of type u8",
    );
    assert_error(
        "[struct.P]\nfields = [{ name = \"v\", type = \"u8\", if = \"flag\" }]\n",
        "game.toml:7:43: no earlier field \"flag\" in this struct",
    );
    assert_error(
        "[struct.P]\nfields = [{ name = \"x\", type = \"u8\" }, { name = \"v\", type = \"u8\", if = \"x\" }]\n",
        "game.toml:7:72: \"x\" is not a bool field",
    );
    assert_error(
        "[struct.Q]\nfields = []\n",
        "game.toml:5:12: packet body \"P\" is not a struct",
    );
    assert_error(
        "[struct.P]\nfields = [{ name = \"q\", type = \"quaternion\", bits = 40 }]\n",
        "game.toml:7:53: quaternion bits = 40",
    );
    let e = Schema::from_toml("[protocol\n", "broken.toml").unwrap_err();
    assert_eq!((e.line, e.col), (1, 10), "{e}");
    assert!(e.to_string().contains("(fix the TOML syntax)"), "{e}");
}

#[test]
fn load_names_the_file() {
    let e = Schema::load(std::path::Path::new("/nonexistent/x.toml")).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("/nonexistent/x.toml:1:1: cannot read"),
        "{e}"
    );
}
