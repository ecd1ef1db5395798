//! Where the code sits, and what it does to serialize.rs's throughput workload (built and run by
//! `benches/serialize_rs.sh placement`, which says how).
//!
//! On this machine one loop of identical instructions runs at two speeds depending on where it
//! falls against 64-byte boundaries, 30% apart, and which of the two a build gets is decided by
//! everything else in the binary: the peers' harness gave bitlens's bitpacker read 0.75x and
//! 1.12x serialize.rs's time in two builds whose read loop had the same instructions. One build
//! is therefore one sample of placement. This binary takes sixteen: every function is aligned to
//! 64 bytes (the script's RUSTFLAGS), loops are not aligned, and each measured function starts
//! with a jump over `P` bytes (`P` = 0, 4, ..., 60), which moves its code by `P` within the
//! 64-byte line. Both libraries get the same jump, so it adds the same to both; the bitpacker
//! loops take it once per 64 KiB pass, the packet functions once per packet.
//!
//! For each placement and workload, both libraries' best of 7 trials, interleaved; then per
//! workload the median bitlens / serialize.rs ratio over the placements, and the range.

#[cfg(not(target_arch = "x86_64"))]
compile_error!("the placement study moves code with x86-64 assembly");

use serialize::Stream as _;
use std::hint::black_box;
use std::time::Instant;

#[path = "../../codec/benches/common/throughput.rs"]
#[allow(dead_code)]
mod bl;
use bl::{BP_SIZE, Packet, VARIANTS};

#[path = "srs.rs"]
mod srs;

/// Jumps over `$p` bytes of `int3`, moving the code after it by `$p`.
macro_rules! skip {
    ($p:expr) => {
        // SAFETY: the jump skips the padding (never executed); no operands, memory or stack.
        unsafe {
            core::arch::asm!(
                "jmp 2f",
                ".fill {n}, 1, 0xcc",
                "2:",
                n = const $p,
                options(nomem, nostack, preserves_flags)
            )
        }
    };
}

#[inline(never)]
fn bl_bp_write<const P: usize>(buf: &mut [u8], values: &[u32; 16]) -> usize {
    skip!(P);
    bl::bp_write_pass(buf, values)
}

#[inline(never)]
fn srs_bp_write<const P: usize>(buf: &mut [u8], values: &[u32; 16]) -> u64 {
    skip!(P);
    srs::bp_write(buf, values)
}

#[inline(never)]
fn bl_bp_read<const P: usize>(buf: &[u8]) -> u64 {
    skip!(P);
    bl::bp_read_pass(buf)
}

#[inline(never)]
fn srs_bp_read<const P: usize>(buf: &[u8]) -> u64 {
    skip!(P);
    srs::bp_read(buf)
}

#[inline(never)]
fn bl_ser<const P: usize, S: bitlens_codec::Stream>(
    p: &mut Packet,
    s: &mut S,
) -> bitlens_codec::Result<()> {
    skip!(P);
    p.fields(s)
}

#[inline(never)]
fn srs_ser<const P: usize, S: serialize::Stream>(
    p: &mut Packet,
    s: &mut S,
) -> serialize::Result<(), S::Error> {
    skip!(P);
    srs::fields(p, s)
}

const PACKETS: u64 = 500_000;

fn bl_write<const P: usize>(p: &mut Packet, out: &mut [u8; 256]) {
    let mut rng = 1u64;
    for _ in 0..PACKETS {
        rng = p.vary(rng);
        let mut s = bitlens_codec::WriteStream::new(out);
        bl_ser::<P, _>(p, &mut s).unwrap();
        black_box(s.finish());
        black_box(&out);
    }
}

fn srs_write<const P: usize>(p: &mut Packet, out: &mut [u8; 256]) {
    let mut rng = 1u64;
    for _ in 0..PACKETS {
        rng = p.vary(rng);
        let mut s = serialize::WriteStream::new(out);
        srs_ser::<P, _>(p, &mut s).unwrap();
        s.flush();
        black_box(s.bytes_processed());
        black_box(&out);
    }
}

fn bl_read<const P: usize>(bufs: &[[u8; 256]], len: usize) {
    for i in 0..PACKETS as usize {
        let mut s = bitlens_codec::ReadStream::new(&bufs[i & (VARIANTS - 1)][..len]);
        let mut q = Packet::default();
        bl_ser::<P, _>(&mut q, &mut s).unwrap();
        black_box(&q);
    }
}

fn srs_read<const P: usize>(bufs: &[[u8; 256]], len: usize) {
    for i in 0..PACKETS as usize {
        let mut s = serialize::ReadStream::new(&bufs[i & (VARIANTS - 1)], len);
        let mut q = Packet::default();
        srs_ser::<P, _>(&mut q, &mut s).unwrap();
        black_box(&q);
    }
}

/// The best of 7 trials of `f`, in seconds.
fn best(mut f: impl FnMut()) -> f64 {
    (0..7)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::MAX, f64::min)
}

const WORKLOADS: [&str; 4] = [
    "bitpacker write",
    "bitpacker read",
    "packet write",
    "packet read",
];
const PASSES: usize = 256;

/// bitlens / serialize.rs time of each workload with the code moved by `P`.
fn ratios<const P: usize>(
    values: [u32; 16],
    bp: &[u8],
    bufs: &[[u8; 256]],
    len: usize,
) -> [f64; 4] {
    let mut scratch = vec![0u8; BP_SIZE + 8];
    let mut out = [0u8; 256];
    let mut p = Packet::init();
    let pairs: [(f64, f64); 4] = [
        (
            best(|| {
                (0..PASSES).for_each(|_| _ = black_box(bl_bp_write::<P>(&mut scratch, &values)))
            }),
            best(|| {
                (0..PASSES).for_each(|_| _ = black_box(srs_bp_write::<P>(&mut scratch, &values)))
            }),
        ),
        (
            best(|| (0..PASSES).for_each(|_| _ = black_box(bl_bp_read::<P>(black_box(bp))))),
            best(|| (0..PASSES).for_each(|_| _ = black_box(srs_bp_read::<P>(black_box(bp))))),
        ),
        (
            best(|| bl_write::<P>(&mut p, &mut out)),
            best(|| srs_write::<P>(&mut p, &mut out)),
        ),
        (
            best(|| bl_read::<P>(bufs, len)),
            best(|| srs_read::<P>(bufs, len)),
        ),
    ];
    pairs.map(|(b, s)| b / s)
}

fn main() {
    let values = bl::bp_values();
    let mut bp = vec![0u8; BP_SIZE + 8];
    let n = bl_bp_write::<0>(&mut bp, &values);
    let mut check = vec![0u8; BP_SIZE + 8];
    srs_bp_write::<0>(&mut check, &values);
    assert_eq!(
        bp[..n - 8],
        check[..n - 8],
        "the two bitpackers wrote different bytes"
    );
    let (bufs, len) = bl::variants();

    let rows: Vec<(usize, [f64; 4])> = vec![
        (0, ratios::<0>(values, &bp, &bufs, len)),
        (4, ratios::<4>(values, &bp, &bufs, len)),
        (8, ratios::<8>(values, &bp, &bufs, len)),
        (12, ratios::<12>(values, &bp, &bufs, len)),
        (16, ratios::<16>(values, &bp, &bufs, len)),
        (20, ratios::<20>(values, &bp, &bufs, len)),
        (24, ratios::<24>(values, &bp, &bufs, len)),
        (28, ratios::<28>(values, &bp, &bufs, len)),
        (32, ratios::<32>(values, &bp, &bufs, len)),
        (36, ratios::<36>(values, &bp, &bufs, len)),
        (40, ratios::<40>(values, &bp, &bufs, len)),
        (44, ratios::<44>(values, &bp, &bufs, len)),
        (48, ratios::<48>(values, &bp, &bufs, len)),
        (52, ratios::<52>(values, &bp, &bufs, len)),
        (56, ratios::<56>(values, &bp, &bufs, len)),
        (60, ratios::<60>(values, &bp, &bufs, len)),
    ];
    println!("bitlens / serialize.rs time, code moved by P bytes:");
    println!(
        "{:>3} {}",
        "P",
        WORKLOADS.map(|w| format!("{w:>16}")).join("")
    );
    for (pad, r) in &rows {
        println!("{pad:>3} {}", r.map(|x| format!("{x:>16.2}")).join(""));
    }
    println!();
    println!("| workload | median | min | max | placements below 1.0 |");
    println!("|---|---|---|---|---|");
    for (i, w) in WORKLOADS.iter().enumerate() {
        let mut col: Vec<f64> = rows.iter().map(|(_, r)| r[i]).collect();
        col.sort_by(f64::total_cmp);
        let median = (col[7] + col[8]) / 2.0;
        let below = col.iter().filter(|&&x| x < 1.0).count();
        println!(
            "| {w} | {median:.2} | {:.2} | {:.2} | {below} of {} |",
            col[0],
            col[col.len() - 1],
            col.len()
        );
    }
}
