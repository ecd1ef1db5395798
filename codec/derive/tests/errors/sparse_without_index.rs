use bitlens_codec::BitPacked;

#[derive(BitPacked, Default)]
struct Entity {
    #[bitlens(range = 0..=100)]
    health: u8,
}

#[derive(BitPacked)]
struct Scene {
    #[bitlens(sparse(max_objects = 64))]
    entities: Vec<Entity>,
}

fn main() {}
