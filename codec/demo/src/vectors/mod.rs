//! The conformance vector runner for files in the `bitlens-vectors/1` format (see
//! `codec/tests/vectors/README.md`): byte-exact vectors of the bit-packed format, run through
//! the compiled streams ([`compiled`]) and through the schema interpreter ([`schema`]).
//!
//! A valid vector passes when writing its ops gives exactly its bytes and bit count, counting
//! them gives the bit count, measuring them (serialize 1.0's bound) gives at least the bits
//! written from every starting bit (and the vector's `measure` when it has one), reading the
//! bytes gives back every value and consumes the bit count, and tracing reaches the same values;
//! a `"write": false` vector checks the read alone. A reject vector passes when reading fails
//! with its error kind.

pub mod compiled;
pub mod schema;

pub use compiled::{Expect, Op, PacketSpec, Vector, drive, parse, run_vector};

/// The result of running a file of vectors.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// Names of the vectors that passed.
    pub passed: Vec<String>,
    /// Names of the vectors that failed, each with what differed.
    pub failed: Vec<(String, String)>,
}

/// Parses and runs a whole `bitlens-vectors/1` document through both engines: the ops driven
/// directly ([`compiled::run_vector`]) and the ops as an ad-hoc schema through the schema interpreter
/// ([`schema::run_vector`]). A vector passes when both pass.
///
/// # Errors
/// When the document itself cannot be understood.
pub fn run(text: &str) -> Result<Report, String> {
    let mut report = Report::default();
    for v in parse(text)? {
        let result = run_vector(&v).and_then(|()| {
            schema::run_vector(&v).map_err(|why| format!("schema interpreter: {why}"))
        });
        match result {
            Ok(()) => report.passed.push(v.name),
            Err(why) => report.failed.push((v.name, why)),
        }
    }
    Ok(report)
}

/// Runs a vector file and asserts that every vector passes and that at least `at_least` ran
/// (a file that silently lost its vectors fails too): the check of the vector tests.
///
/// # Panics
/// When the file does not parse, a vector fails, or fewer than `at_least` passed.
pub fn assert_all_pass(text: &str, at_least: usize) {
    let report = run(text).expect("vector file parses");
    assert!(
        report.failed.is_empty(),
        "failed vectors: {:#?}",
        report.failed
    );
    assert!(
        report.passed.len() >= at_least,
        "only {} vectors ran",
        report.passed.len()
    );
}
