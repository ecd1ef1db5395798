use bitlens_batch::BatchStruct;
use bitlens_codec::link::NetworkId;

#[derive(BatchStruct)]
#[batch(message_type = 6)]
struct Despawn {
    network_id: NetworkId,
}

fn main() {}
