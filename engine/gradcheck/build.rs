//! Writes the batch of generated programs the `generated` test checks:
//! `MOCHI_GRADCHECK_SEED` (default 1) and `MOCHI_GRADCHECK_COUNT` (default 200).

#[path = "src/generator.rs"]
#[allow(dead_code)]
mod generator;

fn main() {
    println!("cargo:rerun-if-changed=src/generator.rs");
    println!("cargo:rerun-if-env-changed=MOCHI_GRADCHECK_SEED");
    println!("cargo:rerun-if-env-changed=MOCHI_GRADCHECK_COUNT");
    let number = |name: &str, default: u64| -> u64 {
        match std::env::var(name) {
            Ok(v) => v.trim().parse().unwrap_or_else(|_| {
                eprintln!("error: {name}={v:?} is not a whole number");
                std::process::exit(2)
            }),
            Err(_) => default,
        }
    };
    let seed = number("MOCHI_GRADCHECK_SEED", 1);
    let count = number("MOCHI_GRADCHECK_COUNT", 200) as usize;
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(out.join("programs.rs"), generator::generate(seed, count))
        .expect("OUT_DIR is writable");
}
