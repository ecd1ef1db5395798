use bitlens_batch::BatchStruct;

#[derive(BatchStruct)]
#[batch(message_type = 3)]
struct Chat {
    text: String,
}

fn main() {}
