//! Every construct `#[differentiable]` rejects gives one error at its span that says
//! what to do instead.

#[test]
fn rejected_constructs() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
