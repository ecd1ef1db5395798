use bitlens_batch::BatchStruct;

#[derive(BatchStruct, Default)]
struct Nothing {}

#[derive(BatchStruct)]
struct Many {
    #[batch(max_len = 100)]
    items: Vec<Nothing>,
}

fn main() {}
