use bitlens_batch::BatchStruct;

#[derive(Clone, Copy, Default, bytemuck::Pod, bytemuck::Zeroable, BatchStruct)]
#[repr(C)]
struct Inner {
    #[batch(range = 0..=10)]
    level: u32,
}

#[derive(BatchStruct)]
struct Outer {
    #[batch(pod)]
    inner: Inner,
}

fn main() {}
