use bitlens_batch::BatchStruct;

#[derive(BatchStruct)]
struct Body {
    moving: u8,
    #[batch(if = moving)]
    velocity: [f32; 3],
}

fn main() {}
