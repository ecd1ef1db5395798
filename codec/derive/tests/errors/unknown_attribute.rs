use bitlens_codec::BitPacked;

#[derive(BitPacked)]
struct Input {
    #[bitlens(rnage = 0..=63)]
    buttons: u8,
}

fn main() {}
