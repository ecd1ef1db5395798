use bitlens_codec::BitPacked;

// `sparse_index` takes only `name`: the array sends the index, so a wire form beside it was
// ignored before it was refused.
#[derive(BitPacked, Default)]
struct Entity {
    #[bitlens(sparse_index, wstring)]
    slot: u16,
    #[bitlens(range = 0..=100)]
    health: u8,
}

fn main() {}
