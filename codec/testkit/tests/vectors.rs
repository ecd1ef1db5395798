//! The conformance vectors of the C++ reference implementation, run through every stream.

use bitlens_testkit::vectors;

#[test]
fn reference_vectors_pass() {
    vectors::assert_all_pass(include_str!("../../tests/vectors/bitpacked.json"), 24);
}

/// serialize 1.0's vectors (`serialize1-core.json`): the golden vector's prefix, the worked
/// examples, discriminating compressed floats, near-tie quaternions, int_relative and string
/// edges, and a vector for each refusal rule.
#[test]
fn serialize_1_0_vectors_pass() {
    vectors::assert_all_pass(include_str!("../../tests/vectors/serialize1-core.json"), 44);
}

/// Each valid vector fails when one of its bytes is flipped or its measure is off by one: the
/// runner can fail.
#[test]
fn serialize_1_0_vectors_discriminate() {
    let all =
        vectors::parse(include_str!("../../tests/vectors/serialize1-core.json")).expect("parses");
    let mut checked = 0;
    for v in all
        .iter()
        .filter(|v| matches!(v.expect, vectors::Expect::Bits(_)) && v.write)
    {
        for i in 0..v.bytes.len() {
            let mut bad = v.clone();
            bad.bytes[i] ^= 0x01;
            assert!(
                vectors::run_vector(&bad).is_err(),
                "{} passed with byte {i} flipped",
                v.name
            );
        }
        let mut bad = v.clone();
        bad.measure = v.measure.map(|m| m + 1);
        assert!(
            vectors::run_vector(&bad).is_err(),
            "{}: measure + 1 passed",
            v.name
        );
        checked += 1;
    }
    assert!(checked >= 15, "{checked}");
}

/// serialize 1.0: "conformance vectors must discriminate". Every compressed float of the
/// between-quanta vectors in `serialize1-core.json` (and of the worked example, but its 2.5 on a
/// quantum) gets another code from f64 arithmetic (the product and sum widened) or a fused
/// multiply-add, or another decoded value when the decode is fused or in f64.
#[test]
fn serialize_1_0_compressed_floats_discriminate() {
    use bitlens_testkit::vectors::Op;
    let all =
        vectors::parse(include_str!("../../tests/vectors/serialize1-core.json")).expect("parses");
    let (mut by_code, mut by_value) = (0, 0);
    for v in all.iter().filter(|v| {
        v.name.starts_with("compressed_float_between_quanta")
            || v.name == "compressed_float_worked_example"
    }) {
        for op in &v.ops {
            let Op::CompressedFloat {
                spec,
                value,
                decoded: Some(decoded),
                ..
            } = op
            else {
                continue;
            };
            let (min, m, delta) = (spec.min(), spec.steps(), spec.delta());
            let x = f32::from_bits(*value);
            if x == 2.5 {
                // The worked example's value on a quantum: agrees every way, by design.
                continue;
            }
            let n = ((x - min) / delta).clamp(0.0, 1.0);
            let code = spec.encode(x);
            let wide = (f64::from(n) * f64::from(m) + 0.5).floor() as u64;
            let fused = n.mul_add(m as f32, 0.5).floor() as u64;
            let q = code as f32 / m as f32;
            let fused_value = q.mul_add(delta, min).to_bits();
            let wide_value = ((f64::from(code) / f64::from(m) * f64::from(delta) + f64::from(min))
                as f32)
                .to_bits();
            let code_differs = wide != u64::from(code) || fused != u64::from(code);
            let value_differs = fused_value != *decoded || wide_value != *decoded;
            assert!(
                code_differs || value_differs,
                "{}: {x:e} (code {code}) agrees every way",
                v.name
            );
            by_code += usize::from(code_differs);
            by_value += usize::from(value_differs);
        }
    }
    assert!(
        by_code >= 30 && by_value >= 10,
        "{by_code} by code, {by_value} by value"
    );
}
