use bitlens_batch::BatchStruct;

// A guard named by a string must name a field: the batch derive says so as the bit-packed one
// does (it shares its attribute parser).
#[derive(BatchStruct)]
struct Body {
    moving: bool,
    #[batch(if = "is moving")]
    velocity: [f32; 3],
}

fn main() {}
