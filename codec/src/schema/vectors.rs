//! Conformance vectors through the schema interpreter (filled in below).
