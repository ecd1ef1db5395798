// An unstable compressed float range is a warning (made an error here to pin it): past 2^23 + 1
// steps no range is stable; a step narrower than an ulp of the bounds loses codes too; a range
// too large to check at compile time says so. A stable range says nothing.
#![deny(deprecated)]

use bitlens_codec::BitPacked;

#[derive(BitPacked)]
struct Fine {
    #[bitlens(compressed(min = 0.0, max = 100000.0, resolution = 0.001))]
    far: f32,
    #[bitlens(compressed(min = 1000000.0, max = 1001000.0, resolution = 0.05))]
    below_an_ulp: f32,
    #[bitlens(compressed(min = 1000.0, max = 2000.0, resolution = 0.0002))]
    undecided: f32,
    #[bitlens(compressed(min = -512.0, max = 512.0, resolution = 0.01))]
    stable: [f32; 3],
}

fn main() {}
