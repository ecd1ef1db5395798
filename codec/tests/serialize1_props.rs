//! Properties of the serialize 1.0 operations bitlens added (`int128`, `u128`, `fixed`,
//! `wstring`, the `u8`/`u16`/`u32` forms): the encoder's and decoder's own `int128`/`u128`
//! agree with the trait's defaults (built from `bits`) on every input, the trace records each
//! as one field with its range, and the op-sequence harness holds over random sequences.

use bitlens_codec::{
    FieldKind, Fixed, FixedPoint, ProtocolId, ReadStream, Result, Stream, TraceStream, Value,
    WriteStream,
};
use bitlens_testkit::fuzzing;

/// A stream that passes the primitives to `S` and keeps the trait's defaults for the rest.
struct Defaults<S>(S);

impl<S: Stream> Stream for Defaults<S> {
    const READING: bool = S::READING;
    fn bits(&mut self, name: &str, v: &mut u64, n: u32) -> Result<()> {
        self.0.bits(name, v, n)
    }
    fn bool(&mut self, name: &str, v: &mut bool) -> Result<()> {
        self.0.bool(name, v)
    }
    fn int(&mut self, name: &str, v: &mut i64, min: i64, max: i64) -> Result<()> {
        self.0.int(name, v, min, max)
    }
    fn u64(&mut self, name: &str, v: &mut u64) -> Result<()> {
        self.0.u64(name, v)
    }
    fn f32(&mut self, name: &str, v: &mut f32) -> Result<()> {
        self.0.f32(name, v)
    }
    fn f64(&mut self, name: &str, v: &mut f64) -> Result<()> {
        self.0.f64(name, v)
    }
    fn align(&mut self, name: &str) -> Result<()> {
        self.0.align(name)
    }
    fn bytes(&mut self, name: &str, buf: &mut [u8]) -> Result<()> {
        self.0.bytes(name, buf)
    }
    fn check(&mut self, label: &str) -> Result<()> {
        self.0.check(label)
    }
    fn end(&mut self) -> Result<()> {
        self.0.end()
    }
    fn packet_crc(&mut self, id: ProtocolId) -> Result<()> {
        self.0.packet_crc(id)
    }
    fn bit_position(&self) -> usize {
        self.0.bit_position()
    }
    fn remaining_bits(&self) -> usize {
        self.0.remaining_bits()
    }
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn u128(&mut self) -> u128 {
        u128::from(self.next()) << 64 | u128::from(self.next())
    }
}

/// Ranges of every width 0..=128 (and the edges of i128).
fn ranges(r: &mut Rng) -> Vec<(i128, i128)> {
    let mut out = vec![
        (i128::MIN, i128::MAX),
        (i128::MAX - 2, i128::MAX),
        (i128::MIN, i128::MIN),
    ];
    for w in 0..=128u32 {
        let span = if w == 128 {
            u128::MAX
        } else {
            (1u128 << w) - 1 - (r.u128() % (1u128 << w)) / 2
        };
        let min = (r.u128() as i128) >> (r.next() % 128);
        let room = (i128::MAX as u128).wrapping_sub(min as u128);
        let span = span.min(room);
        out.push((min, (min as u128).wrapping_add(span) as i128));
    }
    out
}

#[test]
fn int128_and_u128_read_and_write_like_the_defaults() {
    let mut r = Rng(0x2545F4914F6CDD1D);
    for (min, max) in ranges(&mut r) {
        for lead in [0u32, 3] {
            // Random bytes (so offsets above the span too), every length up to the field's.
            for _ in 0..8 {
                let bytes: Vec<u8> = (0..17).map(|_| r.next() as u8).collect();
                for len in [0, 4, 8, 9, 12, 16, 17] {
                    let data = &bytes[..len];
                    // Values, or where and why the read stopped (the encoder's own path says
                    // how many bits the whole field needs, the default those of one piece).
                    let run = |s: &mut dyn FnMut(&mut i128, &mut u128) -> Result<()>| {
                        let (mut a, mut b) = (0i128, 0u128);
                        let res = s(&mut a, &mut b)
                            .map_err(|e| (e.kind().name(), e.bit(), e.field().to_owned()));
                        (res, a, b)
                    };
                    let mut fast = ReadStream::new(data);
                    let mut slow = Defaults(ReadStream::new(data));
                    let x = run(&mut |a, b| {
                        fast.bits("lead", &mut 0, lead.max(1))?;
                        fast.int128("v", a, min, max)?;
                        fast.u128("w", b)
                    });
                    let y = run(&mut |a, b| {
                        slow.bits("lead", &mut 0, lead.max(1))?;
                        slow.int128("v", a, min, max)?;
                        slow.u128("w", b)
                    });
                    assert_eq!(x, y, "{min}..={max} on {data:02x?}");
                    assert_eq!(fast.bit_position(), slow.bit_position());
                }
            }
            // Writes of in-range values, and of one past each end.
            let span = (max as u128).wrapping_sub(min as u128);
            let offset = if span == u128::MAX {
                r.u128()
            } else {
                r.u128() % (span + 1)
            };
            let v = (min as u128).wrapping_add(offset) as i128;
            for value in [v, min, max, min.wrapping_sub(1), max.wrapping_add(1)] {
                let w = r.u128();
                for len in [0usize, 8, 16, 40] {
                    let (mut a, mut b) = (vec![0u8; len], vec![0u8; len]);
                    let mut fast = WriteStream::new(&mut a);
                    let mut slow = Defaults(WriteStream::new(&mut b));
                    let ra = fast
                        .int128("v", &mut { value }, min, max)
                        .and_then(|()| fast.u128("w", &mut { w }));
                    let rb = slow
                        .int128("v", &mut { value }, min, max)
                        .and_then(|()| slow.u128("w", &mut { w }));
                    assert_eq!(ra.is_ok(), rb.is_ok(), "{value} in {min}..={max}");
                    if let (Err(ea), Err(eb)) = (&ra, &rb) {
                        assert_eq!(ea.kind(), eb.kind());
                        assert_eq!((ea.bit(), ea.field()), (eb.bit(), eb.field()));
                        continue;
                    }
                    let (na, nb) = (fast.finish(), slow.0.finish());
                    assert_eq!(a[..na], b[..nb], "{value} in {min}..={max}");
                }
            }
        }
    }
}

#[test]
fn the_trace_records_each_operation_as_one_field() {
    let q = FixedPoint::new(112, 16, true, -(1 << 57), 1 << 57).unwrap();
    let raw = -(98765432109i128 * 65536 + 4321);
    let mut buf = [0u8; 64];
    let mut w = WriteStream::new(&mut buf);
    w.int128("i", &mut -(1 << 100), -(1 << 100), 1 << 100)
        .unwrap();
    w.u128("u", &mut { u128::MAX }).unwrap();
    w.fixed("q", &mut { raw }, &q).unwrap();
    w.wstring("s", &mut "a\u{1F600}".into(), 7).unwrap();
    w.u16("h", &mut 0xBEEF).unwrap();
    let n = w.finish();
    let mut t = TraceStream::new(&buf[..n]);
    let (mut i, mut u, mut x, mut s, mut h) = (0, 0, 0, String::new(), 0u16);
    t.int128("i", &mut i, -(1 << 100), 1 << 100).unwrap();
    t.u128("u", &mut u).unwrap();
    t.fixed("q", &mut x, &q).unwrap();
    t.wstring("s", &mut s, 7).unwrap();
    t.u16("h", &mut h).unwrap();
    let trace = t.into_trace(Ok(()));
    let show: Vec<String> = trace
        .fields
        .iter()
        .map(|f| {
            format!(
                "{} @{}+{} = {} {:?} {:?} {}",
                f.path(),
                f.bit,
                f.bits,
                f.value,
                f.range,
                f.raw,
                matches!(f.kind, FieldKind::Scope)
            )
        })
        .collect();
    assert_eq!(
        show,
        [
            "i @0+102 = -1267650600228229401496703205376 Some((-1267650600228229401496703205376, 1267650600228229401496703205376)) None false",
            "u @102+128 = 340282366920938463463374607431768211455 None None false",
            "q @230+75 = -98765432109.0659332275390625 Some((-9444732965739290427392, 9444732965739290427392)) Some(-6472691358699745) false",
            "s @305+99 = \"a😀\" None None true",
            "s.len @305+3 = 3 Some((0, 7)) None false",
            "s.utf16 @308+96 =  None None true",
            "s.utf16[0] @308+32 = 97 Some((0, 65535)) None false",
            "s.utf16[1] @340+32 = 55357 Some((0, 65535)) None false",
            "s.utf16[2] @372+32 = 56832 Some((0, 65535)) None false",
            "h @404+16 = 48879 Some((0, 65535)) None false",
        ]
    );
    assert_eq!(trace.get("u").unwrap().value, Value::U128(u128::MAX));
    assert_eq!(
        trace.get("q").unwrap().value,
        Value::Fixed(Fixed::new(raw, 16))
    );
    // A refused offset is traced as the failed field, with the value read.
    let mut t = TraceStream::new(&[0xff]);
    let e = t.int128("i", &mut 0, 0, 200).unwrap_err();
    let trace = t.into_trace(Err(e.clone()));
    let f = trace.get("i").unwrap();
    assert!(f.failed);
    assert_eq!(
        (f.value.clone(), f.range),
        (Value::Int(255), Some((0, 200)))
    );
    assert_eq!(trace.error, Some(e));
    // A wide string's group above 0xFFFF: traced against the code units' range and failed;
    // the reader refuses it, and reads the same as the trace.
    let mut buf = [0u8; 12];
    let mut w = WriteStream::new(&mut buf);
    w.int("len", &mut 2, 0, 7).unwrap();
    w.bits("", &mut 0x41, 32).unwrap();
    w.bits("", &mut 0x1_0000, 32).unwrap();
    let n = w.finish();
    let mut t = TraceStream::new(&buf[..n]);
    let e = t.wstring("s", &mut String::new(), 7).unwrap_err();
    assert_eq!(
        e.to_string(),
        "bit 35 (field \"s.utf16[1]\"): 65536 out of range 0..=65535"
    );
    let r = ReadStream::new(&buf[..n]).wstring("s", &mut String::new(), 7);
    assert_eq!(r, Err(e.clone()));
    let trace = t.into_trace(Err(e));
    let units: Vec<_> = trace
        .fields
        .iter()
        .filter(|f| f.path().starts_with("s.utf16["))
        .map(|f| (f.path(), f.value.clone(), f.range, f.failed))
        .collect();
    assert_eq!(
        units,
        [
            ("s.utf16[0]", Value::Int(0x41), Some((0, 65535)), false),
            ("s.utf16[1]", Value::Int(0x1_0000), Some((0, 65535)), true),
        ]
    );
}

#[test]
fn op_sequences_with_the_new_operations_roundtrip() {
    // The fuzz target's harness over random inputs: write, measure, read and trace agree, and
    // reading hostile bytes never panics and reads like the trace.
    let mut r = Rng(0x9E3779B97F4A7C15);
    let mut kinds = std::collections::BTreeSet::new();
    for _ in 0..4000 {
        let len = (r.next() % 600) as usize;
        let data: Vec<u8> = (0..len).map(|_| r.next() as u8).collect();
        let mut u = arbitrary::Unstructured::new(&data);
        if let Ok(ops) = fuzzing::arb_ops(&mut u) {
            for op in &ops {
                let name = format!("{op:?}");
                kinds.insert(name[..name.find([' ', '(', '{']).unwrap_or(name.len())].to_owned());
            }
        }
        fuzzing::stream_ops(&data);
    }
    for kind in ["Int128", "U128", "Fixed", "WStr"] {
        assert!(kinds.contains(kind), "{kind} never generated: {kinds:?}");
    }
}
