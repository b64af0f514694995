//! Writes random `#[differentiable]` programs, each twice: once over `f64` (the function
//! under test) and once over `Dual<1>` (the forward-mode oracle), from one syntax tree.
//!
//! Std only: `build.rs` includes this file by path, and `cargo xtask gradcheck` reaches
//! it through the library.
//!
//! Every program has the signature `(x: &[f64], a: f64, b: f64) -> f64` with
//! `x.len() == N`. The grammar covers scalars, `Vec` and ndarray buffers (constant- or
//! argument-initialised), `for` and `while` loops, branches on values, early returns,
//! `&mut` helpers that read and write, helpers returning values (whose `mut` parameter
//! taken by value they write), struct fields written
//! by a helper, closures in adapters, `iter_mut` loops, `std::mem::swap`, and calls
//! between generated functions.

use std::fmt::Write;

/// The length of every program's `x`.
pub const N: usize = 4;

/// The forms of [`E::Chain`].
const CHAIN_KINDS: usize = 10;

/// A small deterministic generator (SplitMix64), so a seed names a program forever.
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(seed ^ 0x9e37_79b9_7f4a_7c15)
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    /// Uniform in `[lo, hi)`.
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64)
    }
    fn chance(&mut self, p: f64) -> bool {
        self.uniform(0.0, 1.0) < p
    }
    fn lit(&mut self) -> f64 {
        (self.uniform(-2.0, 2.0) * 4.0).round() / 4.0 + 0.125
    }
}

/// A scalar expression.
#[derive(Clone)]
enum E {
    Lit(f64),
    Var(String),
    /// `v[i]` with a constant or loop index.
    Elem(String, String),
    Field(String, &'static str),
    Bin(Box<E>, char, Box<E>),
    /// `(e).method()`
    Call(Box<E>, &'static str),
    /// `e / (1.0 + e * e)`: division that never blows up.
    SafeDiv(Box<E>, Box<E>),
    /// `x.iter().map(|&xi| f(xi)).sum()` over a sequence, `f` using `xi` and `a`.
    MapSum(String, Box<E>),
    /// `v.mapv(|e| f(e)).sum()` over an ndarray buffer.
    MapvSum(String, Box<E>),
    /// `helper(&v, s)`: a generated function returning a value.
    Helper(String, String, Box<E>),
    /// An iterator chain over `x` ending in a sum or a fold; the closure body uses
    /// `xi` (and `xj` for pairs).
    Chain(usize, Box<E>),
    /// `f(e)` of the local closure `f` (see [`S::LetClosure`]).
    LocalCall(String, Box<E>),
}

struct P {
    dual: bool,
}

impl P {
    fn ty(&self) -> &'static str {
        if self.dual {
            "D"
        } else {
            "f64"
        }
    }
    fn lit(&self, v: f64) -> String {
        if self.dual {
            format!("c({v:?})")
        } else {
            format!("{v:?}")
        }
    }
    fn e(&self, e: &E) -> String {
        match e {
            E::Lit(v) => {
                if self.dual {
                    self.lit(*v)
                } else if *v < 0.0 {
                    format!("({v:?})")
                } else {
                    format!("{v:?}")
                }
            }
            E::Var(n) => n.clone(),
            E::Elem(v, i) => format!("{v}[{i}]"),
            E::Field(s, f) => format!("{s}.{f}"),
            E::Bin(l, op, r) => format!("({} {op} {})", self.e(l), self.e(r)),
            // A method of a bare literal is ambiguous Rust (`{float}`): type it.
            E::Call(x, m) if matches!(**x, E::Lit(_)) && !self.dual => {
                let E::Lit(v) = **x else { unreachable!() };
                let typed = E::Var(format!("({v:?}_f64)"));
                self.e(&E::Call(Box::new(typed), m))
            }
            E::Call(x, m) => match *m {
                "powi" => format!("{}.powi(2)", self.e(x)),
                "sqrt1" => format!("({0} * {0} + {1}).sqrt()", self.e(x), self.lit(1.0)),
                "ln1" => format!("({0} * {0} + {1}).ln()", self.e(x), self.lit(1.0)),
                "exp" => format!("{}.tanh().exp()", self.e(x)),
                m => format!("{}.{m}()", self.e(x)),
            },
            E::SafeDiv(l, r) => format!(
                "({} / ({} + {2} * {2}))",
                self.e(l),
                self.lit(1.0),
                self.e(r)
            ),
            E::MapSum(seq, f) => format!(
                "{seq}.iter().map(|&xi| {}).sum::<{}>()",
                self.e(f),
                self.ty()
            ),
            E::MapvSum(v, f) => format!("{v}.mapv(|xi| {}).sum()", self.e(f)),
            E::Helper(h, v, s) => {
                let h = if self.dual {
                    format!("{h}_d")
                } else {
                    h.clone()
                };
                format!("{h}(&{v}, {})", self.e(s))
            }
            E::Chain(kind, f) => {
                let (t, f) = (self.ty(), self.e(f));
                let idx = if self.dual {
                    "c(i as f64)"
                } else {
                    "(i as f64)"
                };
                let data = format!(
                    "let w = [{}, {}, {}];",
                    self.lit(0.5),
                    self.lit(-1.25),
                    self.lit(2.0)
                );
                match kind % CHAIN_KINDS {
                    // The `f64` program takes the elements by reference, as users write.
                    0 if self.dual => format!(
                        "x.iter().zip(x.iter().skip(1)).map(|(&xi, &xj)| {f} * xj).sum::<{t}>()"
                    ),
                    0 => format!(
                        "x.iter().zip(x.iter().skip(1)).map(|(xi, xj)| {f} * xj).sum::<{t}>()"
                    ),
                    1 => format!("(0..{N}).map(|i| {{ let xi = x[i]; {f} * {idx} }}).sum::<{t}>()"),
                    2 => format!("x.iter().enumerate().map(|(i, &xi)| {f} + {idx}).sum::<{t}>()"),
                    3 => format!(
                        "x.iter().map(|&xi| {f}).fold({}, |m, v| m.max(v))",
                        self.lit(-10.0)
                    ),
                    4 => format!("x[1..].iter().map(|&xi| {f}).sum::<{t}>()"),
                    5 => format!(
                        "x.iter().filter(|v| **v > {}).map(|&xi| {f}).sum::<{t}>()",
                        self.lit(-0.5)
                    ),
                    // Constant data, a block binding a differentiable capture as an
                    // operand, an `if` branch binding one, and a local closure that
                    // captures nothing called with a differentiable argument (each a
                    // silent zero derivative before 2026-12-05).
                    7 => format!(
                        "{{ {data} w.iter().map(|&wi| wi * {{ let xi = x[1] * wi; {f} }}).sum::<{t}>() }}"
                    ),
                    8 => format!(
                        "{{ {data} w.iter().map(|&wi| if wi > {} {{ let xi = x[2] + wi; {f} }} else {{ wi }}).sum::<{t}>() }}",
                        self.lit(0.0)
                    ),
                    9 => format!(
                        "{{ {data} let g = |xi: {t}| {f}; w.iter().map(|&wi| g(wi + x[0])).sum::<{t}>() }}"
                    ),
                    // Constant data, the closure a block whose value is bound inside it
                    // from a differentiable capture.
                    _ => format!(
                        "{{ {data} w.iter().map(|&wi| {{ let xi = x[1] * wi; let r = {f}; r }}).sum::<{t}>() }}"
                    ),
                }
            }
            E::LocalCall(f, e) => format!("{f}({})", self.e(e)),
        }
    }
}

#[derive(Clone, Copy, PartialEq)]
enum BufKind {
    Vec,
    Array,
}

/// A statement.
enum S {
    LetScalar(String, E),
    Assign(String, E),
    AddAssign(String, E),
    LetBuf(String, BufKind, BufInit),
    /// `for i in 0..N { v[i] = / += e(i) }`
    FillLoop(String, bool, E),
    /// `for i in 0..N { s += e(i) }`
    SumLoop(String, E),
    /// `let mut k = 0; while k < n { s = s * 0.5 + e; k += 1; }`
    While(String, usize, String, E),
    If(E, Vec<S>, Vec<S>),
    EarlyReturn(E, E),
    /// `helper(&mut v, &w or x, s)`
    MutHelper(String, String, String, E),
    LetStruct(String, E),
    StepStruct(String, String, E),
    /// `for e in v.iter_mut() { *e = *e * k + f }`
    IterMut(String, E, E),
    Swap(String, String),
    /// `'o: for i in 0..N { for j in 0..N { s = s * 0.5 + e; if c > 1 { break 'o; } } }`
    Labelled(String, E, E),
    /// `let f = |v: T| e(v);`
    LetClosure(String, E),
    /// `for w in x.windows(2) { s += w[0] * w[1] * e; }`
    Windows(String, E),
    /// `v.swap(i, j)` on a `Vec` buffer.
    SwapElems(String, usize, usize),
    /// `let mut v = vec![e0, e1, e2, e3];`
    LetVecLit(String, Vec<E>),
    /// `let j = i1; s += x[j] * e; let j = i2; s += x[j];` — a shadowed index.
    ShadowIndex(String, usize, usize, E),
}

enum BufInit {
    Zeros,
    FromX,
}

/// The generated helpers (shared by all programs of one batch, named per program).
struct Helper {
    name: String,
    /// `fn h(v: &mut [T], g: &[T], s: T)`: `v[i] = v[i] * k(s) + g[i] * f`
    mutating: bool,
    body: E,
}

struct Ctx<'a> {
    rng: &'a mut Rng,
    scalars: Vec<String>,
    bufs: Vec<(String, BufKind)>,
    structs: Vec<String>,
    helpers: Vec<Helper>,
    prefix: String,
    next: usize,
    in_loop: bool,
    /// Local closures `let f = |v| …;` in scope.
    closures: Vec<String>,
}

impl Ctx<'_> {
    /// The names of the buffers of one kind.
    fn bufs_of(&self, kind: BufKind) -> Vec<String> {
        self.bufs
            .iter()
            .filter(|(_, k)| *k == kind)
            .map(|(n, _)| n.clone())
            .collect()
    }

    fn fresh(&mut self, p: &str) -> String {
        self.next += 1;
        format!("{p}{}", self.next)
    }

    fn leaf(&mut self) -> E {
        let r = self.rng.below(10);
        match r {
            0 => E::Lit(self.rng.lit()),
            1 => E::Var("a".into()),
            2 => E::Var("b".into()),
            3 | 4 => {
                let i = if self.in_loop && self.rng.chance(0.6) {
                    "i".to_string()
                } else {
                    self.rng.below(N).to_string()
                };
                E::Elem("x".into(), i)
            }
            5 | 6 if !self.scalars.is_empty() => {
                let k = self.rng.below(self.scalars.len());
                E::Var(self.scalars[k].clone())
            }
            7 | 8 if !self.bufs.is_empty() => {
                let k = self.rng.below(self.bufs.len());
                let i = if self.in_loop && self.rng.chance(0.5) {
                    "i".to_string()
                } else {
                    self.rng.below(N).to_string()
                };
                E::Elem(self.bufs[k].0.clone(), i)
            }
            9 if !self.structs.is_empty() => {
                let k = self.rng.below(self.structs.len());
                let f = if self.rng.chance(0.5) { "p" } else { "q" };
                E::Field(self.structs[k].clone(), f)
            }
            _ => E::Var("a".into()),
        }
    }

    fn expr(&mut self, depth: usize) -> E {
        if depth == 0 || self.rng.chance(0.25) {
            return self.leaf();
        }
        match self.rng.below(14) {
            0..=2 => {
                let op = ['+', '-', '*'][self.rng.below(3)];
                E::Bin(
                    Box::new(self.expr(depth - 1)),
                    op,
                    Box::new(self.expr(depth - 1)),
                )
            }
            3 | 4 => {
                let m = ["sin", "cos", "tanh", "exp", "powi", "sqrt1", "ln1"][self.rng.below(7)];
                E::Call(Box::new(self.expr(depth - 1)), m)
            }
            5 => E::SafeDiv(
                Box::new(self.expr(depth - 1)),
                Box::new(self.expr(depth - 1)),
            ),
            6 if !self.in_loop => {
                let f = self.closure_body(depth);
                if self.rng.chance(0.5) {
                    E::MapSum("x".into(), Box::new(f))
                } else {
                    let kind = self.rng.below(CHAIN_KINDS);
                    let f = match kind {
                        0 => add_xj(f),
                        // the local closure's body sees its parameter only
                        9 => strip_x(f, &["xi"]),
                        _ => f,
                    };
                    E::Chain(kind, Box::new(f))
                }
            }
            9 if !self.closures.is_empty() => {
                let k = self.rng.below(self.closures.len());
                let f = self.closures[k].clone();
                E::LocalCall(f, Box::new(self.expr(depth - 1)))
            }
            7 if !self.in_loop => {
                let arrays = self.bufs_of(BufKind::Array);
                if arrays.is_empty() {
                    return self.leaf();
                }
                let v = arrays[self.rng.below(arrays.len())].clone();
                let f = self.closure_body(depth);
                E::MapvSum(v, Box::new(f))
            }
            8 if !self.in_loop => {
                let vecs = self.bufs_of(BufKind::Vec);
                let v = if vecs.is_empty() || self.rng.chance(0.3) {
                    "x".to_string()
                } else {
                    vecs[self.rng.below(vecs.len())].clone()
                };
                let h = self.reading_helper();
                let s = self.expr(depth - 1);
                E::Helper(h, v, Box::new(s))
            }
            _ => E::Bin(
                Box::new(self.expr(depth - 1)),
                ['+', '*'][self.rng.below(2)],
                Box::new(self.leaf()),
            ),
        }
    }

    /// A closure body over `xi`, `a` and `b` only.
    fn closure_body(&mut self, depth: usize) -> E {
        // Inside a closure: captured values only (no helper calls, no buffers).
        let in_loop = std::mem::replace(&mut self.in_loop, true);
        let closures = std::mem::take(&mut self.closures);
        let saved = (
            std::mem::take(&mut self.scalars),
            std::mem::take(&mut self.bufs),
            std::mem::take(&mut self.structs),
        );
        self.scalars.push("xi".into());
        let f = E::Call(Box::new(self.expr(depth.min(2))), "tanh");
        self.scalars = saved.0;
        self.bufs = saved.1;
        self.structs = saved.2;
        self.in_loop = in_loop;
        self.closures = closures;
        strip_i(f)
    }

    /// Helpers see only their own parameters.
    fn helper_expr(&mut self, names: &[&str], depth: usize) -> E {
        let closures = std::mem::take(&mut self.closures);
        let saved = (
            std::mem::take(&mut self.scalars),
            std::mem::take(&mut self.bufs),
            std::mem::take(&mut self.structs),
            self.in_loop,
        );
        self.scalars = names.iter().map(|s| s.to_string()).collect();
        self.in_loop = false;
        let mut e = self.expr(depth);
        // Keep parameters in play: a helper that ignores them is a weak test.
        e = E::Bin(Box::new(e), '+', Box::new(E::Var(names[0].to_string())));
        self.scalars = saved.0;
        self.bufs = saved.1;
        self.structs = saved.2;
        self.in_loop = saved.3;
        self.closures = closures;
        // `x` inside a helper means the helper's own inputs only.
        strip_x(e, names)
    }

    fn reading_helper(&mut self) -> String {
        let h = self.fresh("h");
        let name = format!("{}_{h}", self.prefix);
        let body = self.helper_expr(&["vi", "s"], 2);
        self.helpers.push(Helper {
            name: name.clone(),
            mutating: false,
            body,
        });
        name
    }

    fn mutating_helper(&mut self) -> String {
        let h = self.fresh("h");
        let name = format!("{}_{h}", self.prefix);
        let body = self.helper_expr(&["vi", "gi", "s"], 2);
        self.helpers.push(Helper {
            name: name.clone(),
            mutating: true,
            body,
        });
        name
    }

    fn stmt(&mut self, depth: usize, top: bool) -> Option<S> {
        let r = self.rng.below(if top { 16 } else { 7 });
        Some(match r {
            0 | 1 if !self.scalars.is_empty() => {
                let k = self.rng.below(self.scalars.len());
                let s = self.scalars[k].clone();
                let e = self.expr(3);
                if self.rng.chance(0.5) {
                    S::Assign(
                        s.clone(),
                        E::Bin(
                            Box::new(E::Var(s)),
                            '*',
                            Box::new(E::Call(Box::new(e), "tanh")),
                        ),
                    )
                } else {
                    S::AddAssign(s, e)
                }
            }
            2 if !self.bufs.is_empty() => {
                let k = self.rng.below(self.bufs.len());
                let v = self.bufs[k].0.clone();
                self.in_loop = true;
                let e = self.expr(3);
                self.in_loop = false;
                S::FillLoop(v, self.rng.chance(0.5), e)
            }
            3 if !self.scalars.is_empty() => {
                let k = self.rng.below(self.scalars.len());
                let s = self.scalars[k].clone();
                self.in_loop = true;
                let e = E::Call(Box::new(self.expr(2)), "tanh");
                self.in_loop = false;
                S::SumLoop(s, e)
            }
            4 if !self.scalars.is_empty() && depth > 0 => {
                let c = self.expr(2);
                let n_then = 1 + self.rng.below(2);
                let then: Vec<S> = (0..n_then)
                    .filter_map(|_| self.stmt(depth - 1, false))
                    .collect();
                let els: Vec<S> = (0..self.rng.below(2))
                    .filter_map(|_| self.stmt(depth - 1, false))
                    .collect();
                S::If(c, then, els)
            }
            5 if !self.scalars.is_empty() => {
                let k = self.rng.below(self.scalars.len());
                let s = self.scalars[k].clone();
                let counter = self.fresh("k");
                let e = E::Call(Box::new(self.expr(2)), "tanh");
                S::While(counter, 1 + self.rng.below(3), s, e)
            }
            6 if self.bufs.iter().any(|(_, k)| *k == BufKind::Vec) => {
                let vecs = self.bufs_of(BufKind::Vec);
                let v = vecs[self.rng.below(vecs.len())].clone();
                let g = if vecs.len() > 1 && self.rng.chance(0.5) {
                    let w = vecs[self.rng.below(vecs.len())].clone();
                    if w == v {
                        "x".to_string()
                    } else {
                        w
                    }
                } else {
                    "x".to_string()
                };
                let h = self.mutating_helper();
                let s = self.expr(2);
                S::MutHelper(h, v, g, s)
            }
            7 | 8 => {
                let s = self.fresh("s");
                let e = if self.rng.chance(0.3) {
                    E::Lit(self.rng.lit())
                } else {
                    self.expr(3)
                };
                self.scalars.push(s.clone());
                S::LetScalar(s, e)
            }
            9 => {
                let v = self.fresh("v");
                let kind = if self.rng.chance(0.6) {
                    BufKind::Vec
                } else {
                    BufKind::Array
                };
                let init = if self.rng.chance(0.6) {
                    BufInit::Zeros
                } else {
                    BufInit::FromX
                };
                self.bufs.push((v.clone(), kind));
                S::LetBuf(v, kind, init)
            }
            10 if !self.scalars.is_empty() => {
                let c = self.expr(2);
                let r = self.expr(2);
                S::EarlyReturn(c, r)
            }
            11 => {
                if self.structs.is_empty() || self.rng.chance(0.3) {
                    let st = self.fresh("st");
                    let e = self.expr(2);
                    self.structs.push(st.clone());
                    S::LetStruct(st, e)
                } else {
                    let st = self.structs[self.rng.below(self.structs.len())].clone();
                    let h = format!("{}_step{}", self.prefix, self.next);
                    self.next += 1;
                    let e = self.expr(2);
                    S::StepStruct(h, st, e)
                }
            }
            12 if !self.bufs.is_empty() => {
                let vecs = self.bufs_of(BufKind::Vec);
                if vecs.is_empty() {
                    return None;
                }
                let v = vecs[self.rng.below(vecs.len())].clone();
                let k = E::Call(Box::new(self.expr(1)), "tanh");
                let f = self.expr(2);
                S::IterMut(v, k, f)
            }
            14 if !self.scalars.is_empty() => {
                let s = self.scalars[self.rng.below(self.scalars.len())].clone();
                match self.rng.below(5) {
                    0 => {
                        self.in_loop = true;
                        let e = E::Call(Box::new(self.expr(2)), "tanh");
                        self.in_loop = false;
                        let c = self.expr(2);
                        S::Labelled(s, e, c)
                    }
                    1 => {
                        let f = self.fresh("f");
                        // Captures only what is never written (the arguments).
                        let saved = (
                            std::mem::replace(&mut self.scalars, vec!["w".into()]),
                            std::mem::take(&mut self.bufs),
                            std::mem::take(&mut self.structs),
                            std::mem::take(&mut self.closures),
                        );
                        let body = E::Call(Box::new(self.expr(2)), "sin");
                        self.scalars = saved.0;
                        self.bufs = saved.1;
                        self.structs = saved.2;
                        self.closures = saved.3;
                        let body = strip_i(body);
                        self.closures.push(f.clone());
                        S::LetClosure(f, body)
                    }
                    2 => {
                        let e = E::Call(Box::new(self.expr(1)), "tanh");
                        S::Windows(s, e)
                    }
                    4 if self.rng.chance(0.3) => {
                        let e = self.expr(1);
                        S::ShadowIndex(s, self.rng.below(N), self.rng.below(N), e)
                    }
                    3 if !self.bufs_of(BufKind::Vec).is_empty() => {
                        let vecs = self.bufs_of(BufKind::Vec);
                        let v = vecs[self.rng.below(vecs.len())].clone();
                        S::SwapElems(v, self.rng.below(N), self.rng.below(N))
                    }
                    _ => {
                        let v = self.fresh("v");
                        let elems = (0..N).map(|_| self.expr(2)).collect();
                        self.bufs.push((v.clone(), BufKind::Vec));
                        S::LetVecLit(v, elems)
                    }
                }
            }
            13 if self.scalars.len() >= 2 => {
                let i = self.rng.below(self.scalars.len());
                let mut j = self.rng.below(self.scalars.len());
                if i == j {
                    j = (i + 1) % self.scalars.len();
                }
                S::Swap(self.scalars[i].clone(), self.scalars[j].clone())
            }
            _ => return None,
        })
    }
}

/// A pair chain's closure also reads the next element `xj`.
fn add_xj(f: E) -> E {
    E::Bin(Box::new(f), '+', Box::new(E::Var("xj".into())))
}

/// A loop index `i` outside a loop (in a closure body) becomes a constant index.
fn strip_i(e: E) -> E {
    let f = |b: Box<E>| Box::new(strip_i(*b));
    match e {
        E::Elem(v, i) if i == "i" => E::Elem(v, "1".into()),
        E::Bin(l, op, r) => E::Bin(f(l), op, f(r)),
        E::Call(x, m) => E::Call(f(x), m),
        E::SafeDiv(l, r) => E::SafeDiv(f(l), f(r)),
        other => other,
    }
}

/// Replaces what a helper cannot see (`x[..]`, `a`, `b`, adapters) by its parameters.
fn strip_x(e: E, names: &[&str]) -> E {
    let first = names[0];
    let last = names[names.len() - 1];
    let f = |b: Box<E>| Box::new(strip_x(*b, names));
    match e {
        E::Elem(v, _) if v == "x" => E::Var(first.to_string()),
        E::Var(v) if v == "a" => E::Var(last.to_string()),
        E::Var(v) if v == "b" => E::Var(first.to_string()),
        E::Bin(l, op, r) => E::Bin(f(l), op, f(r)),
        E::Call(x, m) => E::Call(f(x), m),
        E::SafeDiv(l, r) => E::SafeDiv(f(l), f(r)),
        E::MapSum(..) | E::MapvSum(..) | E::Helper(..) | E::Chain(..) | E::LocalCall(..) => {
            E::Var(first.to_string())
        }
        other => other,
    }
}

/// One generated program: its statements and final expression.
struct Program {
    name: String,
    stmts: Vec<S>,
    result: E,
    helpers: Vec<Helper>,
    steps: Vec<String>,
}

fn program(rng: &mut Rng, index: usize) -> Program {
    let prefix = format!("p{index}");
    let mut cx = Ctx {
        rng,
        scalars: Vec::new(),
        bufs: Vec::new(),
        structs: Vec::new(),
        helpers: Vec::new(),
        prefix: prefix.clone(),
        next: 0,
        in_loop: false,
        closures: Vec::new(),
    };
    let n = 3 + cx.rng.below(7);
    let mut stmts = Vec::new();
    // Start with something to work on.
    let s0 = cx.fresh("s");
    let e0 = cx.expr(2);
    cx.scalars.push(s0.clone());
    stmts.push(S::LetScalar(s0, e0));
    for _ in 0..n {
        if let Some(s) = cx.stmt(2, true) {
            stmts.push(s);
        }
    }
    // The result reads everything that was built.
    let mut result = cx.expr(2);
    for s in cx.scalars.clone() {
        result = E::Bin(Box::new(result), '+', Box::new(E::Var(s)));
    }
    for (v, _) in cx.bufs.clone() {
        let i = cx.rng.below(N).to_string();
        let j = cx.rng.below(N).to_string();
        result = E::Bin(
            Box::new(result),
            '+',
            Box::new(E::Bin(
                Box::new(E::Elem(v.clone(), i)),
                '*',
                Box::new(E::Elem(v, j)),
            )),
        );
    }
    for st in cx.structs.clone() {
        result = E::Bin(
            Box::new(result),
            '+',
            Box::new(E::Bin(
                Box::new(E::Field(st.clone(), "p")),
                '*',
                Box::new(E::Field(st, "q")),
            )),
        );
    }
    let steps = stmts
        .iter()
        .flat_map(collect_steps)
        .collect::<Vec<String>>();
    let helpers = std::mem::take(&mut cx.helpers);
    Program {
        name: prefix,
        stmts,
        result,
        helpers,
        steps,
    }
}

fn collect_steps(s: &S) -> Vec<String> {
    match s {
        S::StepStruct(h, ..) => vec![h.clone()],
        S::If(_, t, e) => t.iter().chain(e).flat_map(collect_steps).collect(),
        _ => Vec::new(),
    }
}

fn write_stmts(out: &mut String, p: &P, stmts: &[S], indent: usize) {
    let pad = "    ".repeat(indent);
    let t = p.ty();
    for s in stmts {
        match s {
            S::LetScalar(n, e) => {
                let _ = writeln!(out, "{pad}let mut {n}: {t} = {};", p.e(e));
            }
            S::Assign(n, e) => {
                let _ = writeln!(out, "{pad}{n} = {};", p.e(e));
            }
            S::AddAssign(n, e) => {
                let _ = writeln!(out, "{pad}{n} += {};", p.e(e));
            }
            S::LetBuf(v, kind, init) => {
                let z = p.lit(0.0);
                let line = match (kind, init) {
                    (BufKind::Vec, BufInit::Zeros) => format!("let mut {v} = vec![{z}; {N}];"),
                    (BufKind::Vec, BufInit::FromX) => format!("let mut {v} = x.to_vec();"),
                    (BufKind::Array, BufInit::Zeros) => {
                        format!("let mut {v} = Array1::<{t}>::zeros({N});")
                    }
                    (BufKind::Array, BufInit::FromX) => format!(
                        "let mut {v} = Array1::<{t}>::zeros({N});\n{pad}for i in 0..{N} {{ {v}[i] = x[i]; }}"
                    ),
                };
                let _ = writeln!(out, "{pad}{line}");
            }
            S::FillLoop(v, add, e) => {
                // `v[i] += v[0]` does not borrow-check on a `Vec`; spell it out.
                let old = if *add {
                    format!("{v}[i] + ")
                } else {
                    String::new()
                };
                let _ = writeln!(out, "{pad}for i in 0..{N} {{ {v}[i] = {old}{}; }}", p.e(e));
            }
            S::SumLoop(s, e) => {
                let _ = writeln!(out, "{pad}for i in 0..{N} {{ {s} += {}; }}", p.e(e));
            }
            S::While(k, n, s, e) => {
                let _ = writeln!(
                    out,
                    "{pad}let mut {k} = 0;\n{pad}while {k} < {n} {{ {s} = {s} * {} + {}; {k} += 1; }}",
                    p.lit(0.5),
                    p.e(e)
                );
            }
            S::If(c, th, el) => {
                let _ = writeln!(out, "{pad}if {} > {} {{", p.e(c), p.lit(0.0));
                write_stmts(out, p, th, indent + 1);
                if el.is_empty() {
                    let _ = writeln!(out, "{pad}}}");
                } else {
                    let _ = writeln!(out, "{pad}}} else {{");
                    write_stmts(out, p, el, indent + 1);
                    let _ = writeln!(out, "{pad}}}");
                }
            }
            S::EarlyReturn(c, r) => {
                let _ = writeln!(
                    out,
                    "{pad}if {} > {} {{ return {}; }}",
                    p.e(c),
                    p.lit(1.5),
                    p.e(r)
                );
            }
            S::MutHelper(h, v, g, s) => {
                let h = if p.dual { format!("{h}_d") } else { h.clone() };
                let _ = writeln!(
                    out,
                    "{pad}let arg: {t} = {};\n{pad}{h}(&mut {v}, &{g}, arg);",
                    p.e(s)
                );
            }
            S::LetStruct(st, e) => {
                let sty = if p.dual { "StD" } else { "St" };
                let _ = writeln!(
                    out,
                    "{pad}let mut {st} = {sty} {{ p: {}, q: {} }};",
                    p.e(e),
                    p.lit(0.0)
                );
            }
            S::StepStruct(h, st, e) => {
                let h = if p.dual { format!("{h}_d") } else { h.clone() };
                let _ = writeln!(
                    out,
                    "{pad}let arg: {t} = {};\n{pad}{h}(&mut {st}, arg);",
                    p.e(e)
                );
            }
            S::IterMut(v, k, f) => {
                let _ = writeln!(
                    out,
                    "{pad}let (k, f): ({t}, {t}) = ({}, {});\n{pad}for e in {v}.iter_mut() {{ *e = *e * k + f; }}",
                    p.e(k),
                    p.e(f)
                );
            }
            S::Swap(a, b) => {
                let _ = writeln!(out, "{pad}std::mem::swap(&mut {a}, &mut {b});");
            }
            S::Labelled(s, e, c) => {
                let _ = writeln!(
                    out,
                    "{pad}'o: for i in 0..{N} {{\n{pad}    for _j in 0..2 {{\n{pad}        {s} = {s} * {} + {};\n{pad}        if {} > {} {{ break 'o; }}\n{pad}    }}\n{pad}}}",
                    p.lit(0.5),
                    p.e(e),
                    p.e(c),
                    p.lit(1.0)
                );
            }
            S::LetClosure(f, body) => {
                let _ = writeln!(out, "{pad}let {f} = |w: {t}| {};", p.e(body));
            }
            S::Windows(s, e) => {
                let _ = writeln!(
                    out,
                    "{pad}for w in x.windows(2) {{ {s} += w[0] * w[1] * {}; }}",
                    p.e(e)
                );
            }
            S::SwapElems(v, i, j) => {
                let _ = writeln!(out, "{pad}{v}.swap({i}, {j});");
            }
            S::ShadowIndex(s, i, j, e) => {
                let _ = writeln!(
                    out,
                    "{pad}let j = {i};\n{pad}{s} += x[j] * {};\n{pad}let j = {j};\n{pad}{s} += x[j];",
                    p.e(e)
                );
            }
            S::LetVecLit(v, elems) => {
                let es: Vec<String> = elems.iter().map(|e| p.e(e)).collect();
                let _ = writeln!(out, "{pad}let mut {v} = vec![{}];", es.join(", "));
            }
        }
    }
}

fn write_program(out: &mut String, prog: &Program, p: &P) {
    let t = p.ty();
    let sfx = if p.dual { "_d" } else { "" };
    let attr = if p.dual { "" } else { "#[differentiable]\n" };
    for h in &prog.helpers {
        if h.mutating {
            let _ = writeln!(
                out,
                "{attr}fn {}{sfx}(v: &mut [{t}], g: &[{t}], s: {t}) {{\n    for i in 0..v.len() {{\n        let vi = v[i];\n        let gi = g[i];\n        v[i] = {};\n    }}\n}}",
                h.name,
                p.e(&h.body)
            );
        } else {
            let _ = writeln!(
                out,
                "{attr}fn {}{sfx}(v: &[{t}], mut s: {t}) -> {t} {{\n    let mut acc = {};\n    for i in 0..v.len() {{\n        let vi = v[i];\n        acc += {};\n        s = s * {} + vi * {};\n    }}\n    acc + s\n}}",
                h.name,
                p.lit(0.0),
                p.e(&h.body),
                p.lit(0.5),
                p.lit(0.25)
            );
        }
    }
    let sty = if p.dual { "StD" } else { "St" };
    for h in &prog.steps {
        let _ = writeln!(
            out,
            "{attr}fn {h}{sfx}(st: &mut {sty}, f: {t}) {{\n    st.q += f * {};\n    st.p += st.q * {};\n}}",
            p.lit(0.3),
            p.lit(0.5)
        );
    }
    let _ = writeln!(
        out,
        "{attr}#[allow(unused_mut, unused_variables)]\npub fn {}{sfx}(x: &[{t}], a: {t}, b: {t}) -> {t} {{",
        prog.name
    );
    write_stmts(out, p, &prog.stmts, 1);
    let _ = writeln!(out, "    {}\n}}\n", p.e(&prog.result));
}

const PREAMBLE: &str = "// Generated by mochi-gradcheck's generator; do not edit.
use mochi::{prelude::*, Real};
use mochi_gradcheck::{c, Program, St, StD, D};
use ndarray::Array1;

";

/// The source of `count` programs from `seed`: each as `pK` (differentiable, `f64`) and
/// `pK_d` (`Dual<1>`), with a table `PROGRAMS` of them and their sources.
pub fn generate(seed: u64, count: usize) -> String {
    let mut rng = Rng::new(seed);
    let mut out = String::from(PREAMBLE);
    let mut table = String::new();
    for k in 0..count {
        let prog = program(&mut rng, k);
        let mut src = String::new();
        write_program(&mut src, &prog, &P { dual: false });
        let mut dual = String::new();
        write_program(&mut dual, &prog, &P { dual: true });
        out.push_str(&src);
        out.push_str(&dual);
        let _ = writeln!(
            table,
            "    Program {{ name: \"{0}\", seed: {seed}, source: {1:?}, primal: {0}, gradient: |x, a, b| {{ let (y, (dx, da, db)) = {0}::value_and_gradient(x, a, b); (y, dx, da, db) }}, dual: {0}_d }},",
            prog.name, src
        );
    }
    let _ = writeln!(
        out,
        "/// The generated programs.\npub const PROGRAMS: &[Program] = &[\n{table}];"
    );
    out
}

/// The source of `count` programs from `seed` over `f64` alone, as a library crate's
/// `lib.rs`, for measuring compile time: with `attribute`, each function carries
/// `#[differentiable]` and the struct derives `Tangent`; without, the same code with
/// neither (the baseline build).
pub fn generate_plain(seed: u64, count: usize, attribute: bool) -> String {
    let mut rng = Rng::new(seed);
    let derive = if attribute { ", Tangent" } else { "" };
    let mut out = format!(
        "// Generated by mochi-gradcheck's generator; do not edit.\n\
         #![allow(dead_code, unused_imports, clippy::all)]\n\
         use mochi::prelude::*;\n\
         use mochi::Real;\n\
         use ndarray::Array1;\n\n\
         #[derive(Clone, Debug, PartialEq{derive})]\n\
         pub struct St {{\n    pub p: f64,\n    pub q: f64,\n}}\n\n"
    );
    for k in 0..count {
        let prog = program(&mut rng, k);
        let mut src = String::new();
        write_program(&mut src, &prog, &P { dual: false });
        if !attribute {
            src = src.replace("#[differentiable]\n", "");
        }
        out.push_str(&src);
    }
    out
}
