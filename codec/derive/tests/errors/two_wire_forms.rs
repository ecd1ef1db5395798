use bitlens_codec::BitPacked;

#[derive(BitPacked)]
struct Input {
    #[bitlens(range = 0..=63, bits = 6)]
    buttons: u8,
}

fn main() {}
