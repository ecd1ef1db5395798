use bitlens_codec::BitPacked;

#[derive(BitPacked)]
struct Input {
    #[bitlens(bits = 9)]
    buttons: u8,
}

fn main() {}
