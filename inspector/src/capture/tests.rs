//! Tests of the capture reader and writer over whole files.
