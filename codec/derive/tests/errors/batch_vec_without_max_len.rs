use bitlens_batch::BatchStruct;

#[derive(BatchStruct)]
struct Scores {
    points: Vec<u32>,
}

fn main() {}
