use bitlens_codec::BitPacked;

struct Opaque;

#[derive(BitPacked)]
struct Holder {
    inner: Opaque,
}

fn main() {}
