//! probe
use mochi_benches::cases::functions as f;
use mochi_benches::cases::inputs::{Inputs, Scale};
fn main() {
    let i = Inputs::new(Scale::Full);
    let t = i.turing;
    let mut dt = vec![0.0; 2];
    let mut dd = vec![0.0; t.data.len()];
    let mut s = 0.0;
    for _ in 0..2000 {
        dt.fill(0.0);
        s += f::turing_log_joint::value_and_gradient_into(std::hint::black_box(&t.theta), &t.data, (&mut dt, &mut dd));
    }
    println!("{s} {}", dt[0]);
}
