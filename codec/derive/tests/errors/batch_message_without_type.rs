// A variant of a #[derive(MessageEnum)] holds a message: a BatchStruct with
// `#[batch(message_type = N)]`. Without it, the error says to add it.
use bitlens_batch::{BatchStruct, MessageEnum};

#[derive(Debug, Default, BatchStruct)]
#[batch(message_type = 1)]
struct Hello {
    x: u8,
}

#[derive(Debug, Default, BatchStruct)]
struct Chat {
    x: u8,
}

#[derive(Debug, MessageEnum)]
enum Messages {
    Hello(Hello),
    Chat(Chat),
}

fn main() {}
