use bitlens_batch::{BatchStruct, InlineVec};

#[derive(BatchStruct)]
struct Inventory {
    #[batch(max_len = 100)]
    shelves: Vec<InlineVec<u64, 4096>>,
}

fn main() {}
