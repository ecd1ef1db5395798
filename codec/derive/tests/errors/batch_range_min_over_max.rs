use bitlens_batch::BatchStruct;

#[derive(BatchStruct)]
struct Player {
    #[batch(range = 100..=1)]
    health: u8,
}

fn main() {}
