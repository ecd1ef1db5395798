use bitlens_batch::{BatchStruct, MessageEnum};

#[derive(Debug, Default, BatchStruct)]
#[batch(message_type = 1)]
struct Hello {
    x: u8,
}

#[derive(Debug, MessageEnum)]
enum Messages {
    #[batch(message_type = 2)]
    Hello(Hello),
}

fn main() {}
