use bitlens_batch::BatchStruct;

#[derive(BatchStruct)]
#[batch(name = "My Message")]
struct Mine {
    x: u8,
}

fn main() {}
