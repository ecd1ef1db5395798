// A reader makes each element of a Vec as `Default::default()` before reading it into place: a
// tagged union in a Vec needs `Default` (derive it and mark a variant `#[default]`). The derive
// says so at the element type, not as a bare bound of `Stream::array`.
use bitlens_codec::BitPacked;

#[derive(BitPacked)]
enum Shape {
    Dot,
    Circle(#[bitlens(range = 0..=100)] u8),
}

#[derive(BitPacked, Default)]
struct Scene {
    #[bitlens(max_len = 8)]
    shapes: Vec<Shape>,
}

fn main() {}
