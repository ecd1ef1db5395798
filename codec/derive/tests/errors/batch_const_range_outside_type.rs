use bitlens_batch::BatchStruct;

const MAX_HEALTH: u32 = 300;

#[derive(BatchStruct)]
struct Player {
    #[batch(range = 0..=MAX_HEALTH)]
    health: u8,
}

fn main() {}
