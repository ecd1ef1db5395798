//! The tools of a capture with labelled faults, for any protocol: the label ([`Fault`], one
//! JSON line each in `NAME.labels.json`), a deterministic generator ([`Rng`]) and a writer with
//! a read/write mismatch ([`DesyncedWriter`]). `bitlens synth` makes the demo's faults with
//! them; `examples/custom-protocol` makes a game's own.

use bitlens_codec::packet::ProtocolId;
use bitlens_codec::{Result, Stream, WriteStream};
use serde::Serialize;

/// A labelled fault in a capture.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Fault {
    /// Its first frame number.
    pub frame: u64,
    /// What was done to it.
    pub fault: &'static str,
    /// The status the inspector must give it.
    pub expect: &'static str,
    /// Details.
    pub detail: String,
}

/// A small deterministic generator (splitmix64).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// A number below `n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
    /// Fills `buf` with random bytes.
    pub fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            let v = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
    }
}

/// A write stream with a bug: after the integer or bool field named `after` it writes one extra
/// 1 bit — the kind of read/write mismatch check markers exist to catch.
///
/// Not every such bug is caught by a check marker: when the bits before the next marker leave
/// alignment slack, the extra bit disappears into the padding and only the values in between
/// are wrong; and garbage read after the bug often trips a range check first (an `error`, not a
/// `desync`). RoboCat's rotation ends exactly on a byte boundary before `end of packet`, so a bit
/// after its last component (`c`) always shows as a desync.
pub struct DesyncedWriter<'a> {
    inner: WriteStream<'a>,
    after: &'static str,
    done: bool,
}

impl<'a> DesyncedWriter<'a> {
    /// A buggy writer over `buf` that adds its bit after the field named `after`.
    pub fn new(buf: &'a mut [u8], after: &'static str) -> Self {
        DesyncedWriter {
            inner: WriteStream::new(buf),
            after,
            done: false,
        }
    }

    /// Finishes the packet (fills in the CRC) and returns its length.
    pub fn finish(self) -> usize {
        self.inner.finish()
    }

    fn tick(&mut self, name: &str) -> Result<()> {
        if name == self.after && !self.done {
            self.done = true;
            self.inner.bool("bug", &mut true)?;
        }
        Ok(())
    }
}

impl Stream for DesyncedWriter<'_> {
    const READING: bool = false;
    fn bits(&mut self, name: &str, v: &mut u64, n: u32) -> Result<()> {
        self.inner.bits(name, v, n)
    }
    fn bool(&mut self, name: &str, v: &mut bool) -> Result<()> {
        self.inner.bool(name, v)?;
        self.tick(name)
    }
    fn int(&mut self, name: &str, v: &mut i64, min: i64, max: i64) -> Result<()> {
        self.inner.int(name, v, min, max)?;
        self.tick(name)
    }
    fn u64(&mut self, name: &str, v: &mut u64) -> Result<()> {
        self.inner.u64(name, v)
    }
    fn f32(&mut self, name: &str, v: &mut f32) -> Result<()> {
        self.inner.f32(name, v)
    }
    fn f64(&mut self, name: &str, v: &mut f64) -> Result<()> {
        self.inner.f64(name, v)
    }
    fn align(&mut self, name: &str) -> Result<()> {
        self.inner.align(name)
    }
    fn bytes(&mut self, name: &str, buf: &mut [u8]) -> Result<()> {
        self.inner.bytes(name, buf)
    }
    fn check(&mut self, label: &str) -> Result<()> {
        self.inner.check(label)
    }
    fn end(&mut self) -> Result<()> {
        self.inner.end()
    }
    fn packet_crc(&mut self, protocol_id: ProtocolId) -> Result<()> {
        self.inner.packet_crc(protocol_id)
    }
    fn bit_position(&self) -> usize {
        self.inner.bit_position()
    }
    fn remaining_bits(&self) -> usize {
        self.inner.remaining_bits()
    }
}
