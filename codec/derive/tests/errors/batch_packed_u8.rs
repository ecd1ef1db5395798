use bitlens_batch::BatchStruct;

#[derive(BatchStruct)]
struct Small {
    #[batch(packed)]
    level: u8,
}

fn main() {}
