//! The public fuzz harnesses (`bitlens_codec::fuzzing`) on a packet set of this test's own: a
//! correct one passes every harness on random inputs, and each kind of bug a harness exists for
//! is caught.

use arbitrary::{Arbitrary, Unstructured};
use bitlens_codec::fuzzing::{self, Hostile};
use bitlens_codec::packet::{Packet, Protocol, ProtocolId, write_packet};
use bitlens_codec::{Result, Stream};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::LazyLock;

static PROTOCOL: LazyLock<Protocol> = LazyLock::new(|| Protocol {
    name: "fuzzing-api-test".into(),
    id: ProtocolId::U32(0x5445_5354),
    packet_types: vec!["Scores".into(), "Hello".into()],
    mtu: 200,
});

/// Which bug the packet set has.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
enum Bug {
    #[default]
    None,
    /// The reader loops over an unchecked count (no `Stream::array`).
    UncheckedCount,
    /// The reader keeps one bit fewer of a value than the writer sends.
    AsymmetricRead,
    /// The generator makes names longer than the serialize function allows.
    GeneratorOutOfRange,
}

thread_local! {
    static BUG: std::cell::Cell<Bug> = const { std::cell::Cell::new(Bug::None) };
}

fn bug() -> Bug {
    BUG.with(std::cell::Cell::get)
}

#[derive(Debug, Clone, PartialEq)]
enum Msg {
    Scores(Vec<u16>),
    Hello { name: String, level: u8 },
}

impl Default for Msg {
    fn default() -> Self {
        Msg::Scores(Vec::new())
    }
}

impl Packet for Msg {
    fn protocol() -> &'static Protocol {
        &PROTOCOL
    }
    fn packet_type(&self) -> u32 {
        match self {
            Msg::Scores(_) => 0,
            Msg::Hello { .. } => 1,
        }
    }
    fn empty(t: u32) -> Option<Self> {
        match t {
            0 => Some(Msg::Scores(Vec::new())),
            1 => Some(Msg::Hello {
                name: String::new(),
                level: 0,
            }),
            _ => None,
        }
    }
    fn serialize_body<S: Stream>(&mut self, s: &mut S) -> Result<()> {
        match self {
            Msg::Scores(v) if bug() == Bug::UncheckedCount => s.scope("scores", |s| {
                let mut n = v.len() as i64;
                s.int("len", &mut n, 0, 1000)?;
                if S::READING {
                    v.clear();
                    for i in 0..n as usize {
                        let mut x = 0;
                        s.index(i, |s| s.int_as("", &mut x, 0, 1000))?;
                        v.push(x);
                    }
                    Ok(())
                } else {
                    v.iter_mut()
                        .enumerate()
                        .try_for_each(|(i, x)| s.index(i, |s| s.int_as("", x, 0, 1000)))
                }
            }),
            Msg::Scores(v) => s.array("scores", v, 1000, 10, |s, x| s.int_as("", x, 0, 1000)),
            Msg::Hello { name, level } => {
                s.string("name", name, 15)?;
                if S::READING && bug() == Bug::AsymmetricRead {
                    let mut l = 0u64;
                    s.bits("level", &mut l, 7)?;
                    *level = l as u8;
                    Ok(())
                } else {
                    s.int_as("level", level, 0, 255)
                }
            }
        }
    }
}

impl<'a> Arbitrary<'a> for Msg {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        if u.arbitrary()? {
            let n = u.int_in_range(0..=30)?;
            let v = (0..n)
                .map(|_| u.int_in_range(0..=1000))
                .collect::<arbitrary::Result<_>>()?;
            Ok(Msg::Scores(v))
        } else {
            // serialize 1.0 refuses a NUL inside a string, on both sides.
            let mut name: String = u.arbitrary::<String>()?.replace('\0', "");
            let max = if bug() == Bug::GeneratorOutOfRange {
                64
            } else {
                15
            };
            while name.len() > max {
                name.pop();
            }
            if bug() == Bug::GeneratorOutOfRange {
                name = format!("{name:x<20}");
            }
            Ok(Msg::Hello {
                name,
                level: u.arbitrary()?,
            })
        }
    }
}

/// A xorshift generator of test inputs.
fn inputs(count: usize) -> Vec<Vec<u8>> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    (0..count)
        .map(|i| {
            (0..(i % 97) + 1)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect()
        })
        .collect()
}

fn with_bug<R>(b: Bug, f: impl FnOnce() -> R) -> R {
    BUG.with(|c| c.set(b));
    let r = f();
    BUG.with(|c| c.set(Bug::None));
    r
}

/// True when `f` panics (a harness finding).
fn finds(f: impl FnOnce()) -> bool {
    catch_unwind(AssertUnwindSafe(f)).is_err()
}

fn written(mut m: Msg) -> Vec<u8> {
    let mut buf = [0u8; 200];
    let n = write_packet(&mut m, &mut buf).expect("writes");
    buf[..n].to_vec()
}

#[test]
fn a_correct_packet_set_passes_every_harness() {
    for data in inputs(3000) {
        fuzzing::packet_read::<Msg>(&data);
        fuzzing::packet_roundtrip::<Msg>(&data);
        fuzzing::hostile_lengths::<Msg>(&data);
    }
}

#[test]
fn the_crc_is_made_valid_so_bodies_are_reached() {
    let good = written(Msg::Hello {
        name: "ann".into(),
        level: 9,
    });
    let mut bad = good.clone();
    bad[..4].copy_from_slice(&[0; 4]);
    assert_eq!(fuzzing::with_valid_crc(&PROTOCOL, &bad), Some(good.clone()));
    assert_eq!(fuzzing::with_valid_crc(&PROTOCOL, &good), None);
    assert_eq!(fuzzing::with_valid_crc(&PROTOCOL, &good[..3]), None);
}

#[test]
fn hostile_variants_cover_the_counts_and_the_type() {
    let bytes = written(Msg::Scores(vec![1, 2, 3]));
    let variants: Vec<Hostile> = fuzzing::hostile_variants::<Msg>(&bytes);
    let paths: Vec<&str> = variants.iter().map(|h| h.path.as_str()).collect();
    // The count's 10 bits hold 1023 > 1000; the type's single bit holds no bad value.
    assert_eq!(paths, ["scores.len"]);
    assert_eq!(variants[0].raw, 1023);
    for h in &variants {
        fuzzing::assert_hostile_refused::<Msg>(h);
    }
    // A string length in range but past the end is refused at its bytes.
    let bytes = written(Msg::Hello {
        name: String::new(),
        level: 1,
    });
    let h = &fuzzing::hostile_variants::<Msg>(&bytes)[0];
    assert_eq!((h.path.as_str(), h.raw), ("name.len", 15));
    fuzzing::assert_hostile_refused::<Msg>(h);
}

#[test]
fn an_unchecked_count_is_found() {
    // 1000 claimed, 3 present: the reader loops until it runs out, and fails at an element
    // rather than at the count.
    let bytes = written(Msg::Scores(vec![1, 2, 3]));
    let mut fixed = bytes.clone();
    // scores.len sits after the CRC (32 bits) and the type (1 bit): 10 bits at bit 33.
    for k in 0..10 {
        let b = 33 + k;
        if (1000u32 >> k) & 1 == 1 {
            fixed[b / 8] |= 1 << (b % 8);
        } else {
            fixed[b / 8] &= !(1 << (b % 8));
        }
    }
    let fixed = fuzzing::with_valid_crc(&PROTOCOL, &fixed).expect("the CRC changes");
    let h = Hostile {
        path: "scores.len".into(),
        raw: 1000,
        bytes: fixed,
    };
    fuzzing::assert_hostile_refused::<Msg>(&h);
    assert!(with_bug(Bug::UncheckedCount, || finds(|| {
        fuzzing::assert_hostile_refused::<Msg>(&h)
    })));
}

#[test]
fn an_asymmetric_read_is_found() {
    let hello = Msg::Hello {
        name: "zed".into(),
        level: 200,
    };
    fuzzing::round_trip(hello.clone());
    assert!(with_bug(Bug::AsymmetricRead, || finds(|| {
        fuzzing::round_trip(hello.clone())
    })));
}

#[test]
fn a_generator_outside_the_declared_ranges_is_found() {
    let found = with_bug(Bug::GeneratorOutOfRange, || {
        inputs(200)
            .iter()
            .filter(|d| finds(|| fuzzing::packet_roundtrip::<Msg>(d)))
            .count()
    });
    assert!(found > 0, "no generated name over 15 bytes was refused");
}

#[test]
fn replay_corpus_names_the_failing_files() {
    let dir = std::env::temp_dir().join(format!("bitlens-fuzzing-api-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("good.bin"), [1u8, 2, 3]).unwrap();
    std::fs::write(dir.join("bad.bin"), [0xFFu8]).unwrap();
    let harness = |d: &[u8]| assert_ne!(d, [0xFF]);
    let err = catch_unwind(AssertUnwindSafe(|| fuzzing::replay_corpus(&dir, harness)))
        .expect_err("a failing file fails the replay");
    let text = err.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        text.contains("bad.bin") && !text.contains("good.bin"),
        "{text}"
    );
    std::fs::remove_file(dir.join("bad.bin")).unwrap();
    assert_eq!(fuzzing::replay_corpus(&dir, harness), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}
