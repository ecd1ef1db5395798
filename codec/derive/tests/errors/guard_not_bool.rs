use bitlens_codec::BitPacked;

#[derive(BitPacked)]
struct Player {
    lives: u8,
    #[bitlens(if = lives, range = 0..=600)]
    respawn: u16,
}

fn main() {}
