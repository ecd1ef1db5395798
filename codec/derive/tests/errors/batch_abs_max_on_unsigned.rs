use bitlens_batch::BatchStruct;

#[derive(BatchStruct)]
struct Position {
    #[batch(abs_max = 100)]
    x: u32,
    #[batch(range = 0..=100)]
    y: i32,
}

fn main() {}
