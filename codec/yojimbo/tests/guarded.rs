//! The `yojimbo` harness under the fuzz targets' allocation guard, on stable: the corpus and
//! generated inputs, each within one allocation of at most 1 MiB and a total of 1 MiB plus 64
//! times its length (a reader that allocates by an unchecked length aborts this test binary).
//! One test only: the guard's counters are the process's.

bitlens_fuzz_guard::guard_allocator!();

use std::path::Path;

use bitlens_yojimbo::fuzzing;

#[test]
fn the_harness_stays_within_the_allocation_guard() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/yojimbo");
    let mut inputs: Vec<Vec<u8>> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| std::fs::read(e.unwrap().path()).unwrap())
        .collect();
    // Hostile shapes: huge claimed lengths, every prefix, long runs of 0xff.
    for config in 0..3u8 {
        for fill in [0x00u8, 0xff, 0x55] {
            let mut v = vec![config << 1, 0xff, 0xff];
            v.extend(std::iter::repeat_n(fill, 2000));
            inputs.push(v);
            let mut v = vec![config << 1 | 1];
            v.extend(std::iter::repeat_n(fill, 400));
            inputs.push(v);
        }
    }
    for data in &inputs {
        bitlens_fuzz_guard::bounded(data, fuzzing::yojimbo);
    }
}
