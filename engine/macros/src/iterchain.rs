//! Iterator chains over differentiable sequences, rewritten as index loops.
//!
//! `x.iter().zip(x.iter().skip(1)).map(|(a, b)| (b - a).powi(2)).sum()` becomes
//!
//! ```text
//! { let mut acc = 0.0; for k in 0..n { let a = x[k]; let b = x[k + 1]; acc += (b - a).powi(2); } acc }
//! ```
//!
//! which the lowering reverses like any loop. Sources: `x.iter()` (also `.copied()`,
//! `.cloned()`, `into_iter()`, `&x[a..b]`-style sub-slices), ranges `a..b`. Adapters:
//! `map`, `filter` and `filter_map` (last positional adapter only), `enumerate`, `zip`, `skip`, `take`,
//! `rev`, `copied`, `cloned`. Consumers: `sum`, `product`, `fold`, `collect` into a
//! `Vec` (without `filter`), `for_each`, and `for` loops. Elements are bound by value:
//! `*v` of an element reference becomes `v`.

use crate::rewrite::UnDeref;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote_spanned};
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::{Expr, Pat};

/// One stage of a chain, from the source outwards.
#[derive(Clone)]
enum Stage {
    /// `seq[start + k]`, by reference (`iter()`) or by value (`copied()`).
    Seq {
        seq: Expr,
        start: Option<Expr>,
        end: Option<Expr>,
        by_ref: bool,
    },
    /// `start + k` of a range `start..end`, or of `start..` when `end` is `None`.
    Range {
        start: Expr,
        end: Option<Expr>,
    },
    /// `seq.windows(size)`, `seq.chunks_exact(size)`, `seq.chunks(size)`: the window or
    /// chunk at position `k`, used through `w[j]`, `w.len()`, `w.iter()` or as a call
    /// argument.
    Windows {
        seq: Expr,
        start: Option<Expr>,
        end: Option<Expr>,
        size: Expr,
        kind: Pieces,
    },
    /// `std::iter::repeat(v)` (`count` `None`: unbounded), `repeat_n(v, n)`,
    /// `once(v)`: the value `v` at every position, by value.
    Repeat {
        value: Expr,
        count: Option<Expr>,
    },
    /// `cycle()`: position `k` is `k % n` of the `n` elements before it.
    Cycle,
    /// `step_by(s)`: position `k` is `k * s` of the stream before it.
    StepBy(Expr),
    /// The subviews of an array: `a.axis_iter(axis)`, `a.outer_iter()` (`index_axis`),
    /// `a.rows()` (`row`), `a.columns()` (`column`); each a view, by value.
    Lines {
        seq: Expr,
        line: Line,
    },
    Copied,
    Skip(Expr),
    Take(Expr),
    Rev,
    Enumerate,
    Zip(Vec<Stage>),
    /// `a.chain(b)`: the elements of `a`, then those of `b` (both by value or both by
    /// reference, as `Iterator::chain` requires).
    Chain(Vec<Stage>),
    Map(syn::ExprClosure),
    Filter(syn::ExprClosure),
    /// `filter_map(|v| …)`, its closure's `Some(e)` made `e` and its `None` a
    /// `continue` (see [`options_as_continue`]): a `map` that skips, positions changed
    /// as by `filter`.
    FilterMap(syn::ExprClosure),
    /// `scan(init, |s, v| { …; Some(e) })`: a state updated at every element, in order.
    Scan(Expr, syn::ExprClosure),
}

/// An element: a value (and whether the iterator yields it by reference) or a tuple.
#[derive(Clone)]
enum Item {
    Leaf(Expr, bool),
    Tuple(Vec<Item>),
    /// A window `seq[base..base + len]`, used only as `w[j]`, `w.len()`, `w.iter()` or
    /// a call argument.
    Window {
        seq: Box<Expr>,
        base: TokenStream,
        len: TokenStream,
    },
}

/// Is `it` a window or a tuple holding one?
fn contains_window(it: &Item) -> bool {
    match it {
        Item::Window { .. } => true,
        Item::Tuple(items) => items.iter().any(contains_window),
        Item::Leaf(..) => false,
    }
}

/// The names `it` is read through (the sequence, start and length of a window, the
/// expression of an element).
fn item_names(it: &Item, out: &mut std::collections::HashSet<String>) {
    let idents = crate::activity::token_idents;
    match it {
        Item::Leaf(e, _) => idents(quote::quote!(#e), out),
        Item::Tuple(items) => items.iter().for_each(|i| item_names(i, out)),
        Item::Window { seq, base, len } => {
            idents(quote::quote!(#seq), out);
            idents(base.clone(), out);
            idents(len.clone(), out);
        }
    }
}

/// Whether a pattern of `c` (its parameters, or a binding inside its body) binds one of
/// `names`.
fn closure_binds_any(c: &syn::ExprClosure, names: &std::collections::HashSet<String>) -> bool {
    struct Binds<'a>(&'a std::collections::HashSet<String>, bool);
    impl<'a> syn::visit::Visit<'a> for Binds<'_> {
        fn visit_pat_ident(&mut self, p: &'a syn::PatIdent) {
            self.1 |= self.0.contains(&p.ident.to_string());
            syn::visit::visit_pat_ident(self, p);
        }
        fn visit_item(&mut self, _: &'a syn::Item) {}
    }
    let mut b = Binds(names, false);
    syn::visit::visit_expr_closure(&mut b, c);
    b.1
}

/// A `for` loop (or a `while let`) whose pattern or body binds a name its sequence is read through (`for
/// (w, x) in x.windows(2).zip(x.windows(5))`, `for w in x.windows(2) { let x = ..; }`):
/// those bindings renamed in their scopes (see [`Unshadow`]), so that the rewrites that
/// read the loop's pieces and elements from the sequence by name read the sequence.
pub(crate) struct UnshadowedLoops;

impl VisitMut for UnshadowedLoops {
    fn visit_expr_for_loop_mut(&mut self, f: &mut syn::ExprForLoop) {
        syn::visit_mut::visit_expr_for_loop_mut(self, f);
        unshadow_scope(&f.expr, &mut f.pat, &mut f.body);
        unshadow_element_names(&f.pat, &mut f.body);
    }
    // (`while let Some(x) = x.pop()`: the element named as the stack, renamed in the
    // body, as a `for`'s.)
    fn visit_expr_while_mut(&mut self, w: &mut syn::ExprWhile) {
        syn::visit_mut::visit_expr_while_mut(self, w);
        if let Expr::Let(l) = &mut *w.cond {
            unshadow_scope(&l.expr, &mut l.pat, &mut w.body);
        }
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// The bindings in a loop's body of names its pattern binds (`for (i, (v, w)) in
/// verts.iter().zip(..) { ..; let v = skinned; .. }`), renamed in their scopes: the
/// derivation tells values with a derivative by name, and the element (a constant here)
/// and the body's `v` (a value with one) are two values (before, `*v` of the element
/// was read as the body's `v`, a reference: "expected `[f64; 3]`, found `&[f64; 3]`").
fn unshadow_element_names(pat: &Pat, body: &mut syn::Block) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let mut found = Vec::new();
    crate::activity::pat_names(pat, &mut found);
    // (Only `let`s: an arm's or a closure's parameter named as the element, `match v
    // { v if v < 0.0 => .. }`, is bound in every arm alike and read as written.)
    struct Lets(std::collections::HashSet<String>);
    impl<'a> syn::visit::Visit<'a> for Lets {
        fn visit_local(&mut self, l: &'a syn::Local) {
            let mut names = Vec::new();
            crate::activity::pat_names(&l.pat, &mut names);
            self.0.extend(names);
            syn::visit::visit_local(self, l);
        }
        fn visit_item(&mut self, _: &'a syn::Item) {}
    }
    let mut lets = Lets(Default::default());
    syn::visit::Visit::visit_block(&mut lets, body);
    let names: std::collections::HashSet<String> =
        found.into_iter().filter(|n| lets.0.contains(n)).collect();
    if names.is_empty() {
        return;
    }
    // (Numbered apart from the renames of other loops: two loops' body names renamed
    // alike would be one name again.)
    let mut u = Unshadow {
        names: &names,
        next: NEXT.fetch_add(1 << 16, Ordering::Relaxed) + (1 << 20),
        lets_only: true,
    };
    u.visit_block_mut(body);
}

/// The bindings of `pat` (over `body`) and of `body` named as something `read` names,
/// renamed in their scopes.
fn unshadow_scope(read: &Expr, pat: &mut Pat, body: &mut syn::Block) {
    let mut names = std::collections::HashSet::new();
    item_names(&Item::Leaf(read.clone(), false), &mut names);
    let c: syn::ExprClosure = syn::parse_quote!(|#pat| #body);
    if !closure_binds_any(&c, &names) {
        return;
    }
    let mut u = Unshadow {
        names: &names,
        next: 0,
        lets_only: false,
    };
    for (from, to) in &u.rename_pat(pat) {
        crate::twin::Renamed { from, to }.visit_block_mut(body);
    }
    u.visit_block_mut(body);
}

/// Every binding of one of `names` (a closure's parameter, a `let`, a `for`, a `match`
/// arm, an `if let` or `while let`) renamed in its scope (`__mochi_unshadowed0_x`), so
/// that the names mean what they mean outside.
struct Unshadow<'a> {
    names: &'a std::collections::HashSet<String>,
    next: usize,
    /// Only `let`s renamed (the other bindings kept as written, their bodies visited).
    lets_only: bool,
}

impl Unshadow<'_> {
    /// The renames of `p`'s bindings of `names`, applied to `p` (none but a `let`'s
    /// with `lets_only`).
    fn rename_pat(&mut self, p: &mut Pat) -> Vec<(String, syn::Ident)> {
        if self.lets_only {
            return Vec::new();
        }
        self.rename_let_pat(p)
    }

    /// The renames of a `let`'s pattern `p`, applied to it.
    fn rename_let_pat(&mut self, p: &mut Pat) -> Vec<(String, syn::Ident)> {
        let mut found = Vec::new();
        crate::activity::pat_names(p, &mut found);
        let mut renames = Vec::new();
        for n in found.into_iter().filter(|n| self.names.contains(n)) {
            let to = format_ident!("__mochi_unshadowed{}_{}", self.next, n);
            self.next += 1;
            crate::twin::Renamed { from: &n, to: &to }.visit_pat_mut(p);
            renames.push((n, to));
        }
        renames
    }
}

impl VisitMut for Unshadow<'_> {
    fn visit_expr_closure_mut(&mut self, c: &mut syn::ExprClosure) {
        let mut renames = Vec::new();
        for p in c.inputs.iter_mut() {
            renames.extend(self.rename_pat(p));
        }
        for (from, to) in &renames {
            crate::twin::Renamed { from, to }.visit_expr_mut(&mut c.body);
        }
        self.visit_expr_mut(&mut c.body);
    }
    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        for k in 0..b.stmts.len() {
            if let syn::Stmt::Local(l) = &mut b.stmts[k] {
                if let Some(init) = l.init.as_mut() {
                    self.visit_expr_mut(&mut init.expr);
                    if let Some((_, d)) = init.diverge.as_mut() {
                        self.visit_expr_mut(d);
                    }
                }
                let renames = self.rename_let_pat(&mut l.pat);
                for (from, to) in &renames {
                    for st in &mut b.stmts[k + 1..] {
                        crate::twin::Renamed { from, to }.visit_stmt_mut(st);
                    }
                }
                continue;
            }
            self.visit_stmt_mut(&mut b.stmts[k]);
        }
    }
    fn visit_expr_for_loop_mut(&mut self, f: &mut syn::ExprForLoop) {
        self.visit_expr_mut(&mut f.expr);
        for (from, to) in &self.rename_pat(&mut f.pat) {
            crate::twin::Renamed { from, to }.visit_block_mut(&mut f.body);
        }
        self.visit_block_mut(&mut f.body);
    }
    fn visit_arm_mut(&mut self, a: &mut syn::Arm) {
        for (from, to) in &self.rename_pat(&mut a.pat) {
            let mut r = crate::twin::Renamed { from, to };
            if let Some((_, g)) = a.guard.as_mut() {
                r.visit_expr_mut(g);
            }
            r.visit_expr_mut(&mut a.body);
        }
        if let Some((_, g)) = a.guard.as_mut() {
            self.visit_expr_mut(g);
        }
        self.visit_expr_mut(&mut a.body);
    }
    fn visit_expr_if_mut(&mut self, i: &mut syn::ExprIf) {
        if let Expr::Let(l) = &mut *i.cond {
            self.visit_expr_mut(&mut l.expr);
            for (from, to) in &self.rename_pat(&mut l.pat) {
                crate::twin::Renamed { from, to }.visit_block_mut(&mut i.then_branch);
            }
        } else {
            self.visit_expr_mut(&mut i.cond);
        }
        self.visit_block_mut(&mut i.then_branch);
        if let Some((_, e)) = i.else_branch.as_mut() {
            self.visit_expr_mut(e);
        }
    }
    fn visit_expr_while_mut(&mut self, w: &mut syn::ExprWhile) {
        if let Expr::Let(l) = &mut *w.cond {
            self.visit_expr_mut(&mut l.expr);
            for (from, to) in &self.rename_pat(&mut l.pat) {
                crate::twin::Renamed { from, to }.visit_block_mut(&mut w.body);
            }
        } else {
            self.visit_expr_mut(&mut w.cond);
        }
        self.visit_block_mut(&mut w.body);
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// Which subviews of an array a chain walks.
#[derive(Clone)]
enum Line {
    /// `a.index_axis(axis, k)` for `k` in `0..a.len_of(axis)`.
    Along(Expr),
    /// `a.row(k)` for `k` in `0..a.nrows()` (two-dimensional arrays).
    Row,
    /// `a.column(k)` for `k` in `0..a.ncols()`.
    Column,
    /// `a.indexed_iter()`: `(index, &a[index])` for the multi-index of every element in
    /// logical order (`unravel` of `k` in `0..a.len()`).
    Indexed,
    /// `a.axis_chunks_iter(axis, size)`: `a.slice_axis(axis, ..)` of the `k`-th piece of
    /// `size` along `axis`, the last one shorter when `size` does not divide the length.
    Chunks(Expr, Expr),
}

/// `a.axis_iter(axis)`, `a.outer_iter()`, `a.rows()`, `a.columns()` (also followed by
/// `.into_iter()`), of a variable or field `a`.
fn lines(e: &Expr) -> Option<Stage> {
    let Expr::MethodCall(m) = e else { return None };
    let name = m.method.to_string();
    if name == "into_iter" && m.args.is_empty() {
        return lines(&m.receiver);
    }
    let (seq, None, None) = sequence(&m.receiver)? else {
        return None;
    };
    let line = match (name.as_str(), m.args.len()) {
        ("axis_iter", 1) => Line::Along(m.args[0].clone()),
        ("outer_iter", 0) => Line::Along(syn::parse_quote!(::mochi::__private::axis(0))),
        ("rows", 0) => Line::Row,
        ("columns", 0) => Line::Column,
        // `lanes(axis)` of a matrix: the lanes along `axis` are its subviews across it
        // (rows for `Axis(1)`); `across` refuses another rank at run time, saying so.
        ("lanes", 1) => {
            let a = &m.args[0];
            Line::Along(syn::parse_quote!(::mochi::__private::across(#a)))
        }
        ("indexed_iter", 0) => Line::Indexed,
        ("axis_chunks_iter", 2) => Line::Chunks(m.args[0].clone(), m.args[1].clone()),
        _ => return None,
    };
    Some(Stage::Lines { seq, line })
}

/// How a sequence is cut into pieces.
#[derive(Clone, Copy, PartialEq)]
pub enum Pieces {
    /// `windows(m)`: overlapping, starting at every position.
    Windows,
    /// `chunks_exact(m)`: disjoint, a shorter tail dropped.
    ChunksExact,
    /// `chunks(m)`: disjoint, the last one shorter when `m` does not divide the length.
    Chunks,
    /// `rchunks_exact(m)`: disjoint, from the end, a shorter head dropped.
    RChunksExact,
    /// `rchunks(m)`: disjoint, from the end, the last one (the sequence's head) shorter
    /// when `m` does not divide the length.
    RChunks,
}

impl Pieces {
    fn of(method: &str) -> Option<Pieces> {
        match method {
            "windows" => Some(Pieces::Windows),
            "chunks_exact" => Some(Pieces::ChunksExact),
            "chunks" => Some(Pieces::Chunks),
            "rchunks_exact" => Some(Pieces::RChunksExact),
            "rchunks" => Some(Pieces::RChunks),
            _ => None,
        }
    }

    /// The number of pieces of a sequence of length `n`.
    fn count(self, n: &TokenStream, size: &Expr, span: Span) -> TokenStream {
        let n = match self {
            // (By `usize::`: the length may be a literal, a window's size, `w.windows(2)`
            // in a `for` over `x.windows(3)`, whose type a method call would not fix.)
            Pieces::Windows => quote_spanned!(span=> usize::saturating_sub(#n + 1, #size)),
            Pieces::ChunksExact | Pieces::RChunksExact => quote_spanned!(span=> #n / (#size)),
            Pieces::Chunks | Pieces::RChunks => quote_spanned!(span=> usize::div_ceil(#n, #size)),
        };
        // A count has no derivative (`div_ceil` of a sequence's length has no rule).
        quote_spanned!(span=> ::mochi::no_grad(#n))
    }

    /// The start and the length of piece `k` of a sequence of length `n`.
    fn bounds(
        self,
        n: &TokenStream,
        size: &Expr,
        k: &TokenStream,
        span: Span,
    ) -> (TokenStream, TokenStream) {
        let (base, len) = match self {
            // `k` may be a sum (after `skip`, in a `chain`'s second part): parenthesised.
            Pieces::Windows => (quote_spanned!(span=> (#k)), quote_spanned!(span=> (#size))),
            Pieces::ChunksExact => (
                quote_spanned!(span=> (#k) * (#size)),
                quote_spanned!(span=> (#size)),
            ),
            Pieces::Chunks => (
                quote_spanned!(span=> (#k) * (#size)),
                quote_spanned!(span=> ::core::cmp::min(#size, #n - (#k) * (#size))),
            ),
            Pieces::RChunksExact => (
                quote_spanned!(span=> #n - ((#k) + 1) * (#size)),
                quote_spanned!(span=> (#size)),
            ),
            Pieces::RChunks => (
                quote_spanned!(span=> usize::saturating_sub(#n - (#k) * (#size), #size)),
                quote_spanned!(span=> ::core::cmp::min(#size, #n - (#k) * (#size))),
            ),
        };
        // The bounds have no derivative (`cmp::min` has no rule).
        (
            quote_spanned!(span=> ::mochi::no_grad(#base)),
            quote_spanned!(span=> ::mochi::no_grad(#len)),
        )
    }
}

/// Parses `e` as a chain of stages ending at a source.
fn stages(e: &Expr, out: &mut Vec<Stage>) -> bool {
    match e {
        Expr::Paren(p) => stages(&p.expr, out),
        // `&x[a..]`: a sub-slice iterates by reference (`&x` alone the lowering handles).
        Expr::Reference(r) if r.mutability.is_none() => match sequence(&r.expr) {
            Some((seq, start, end)) if start.is_some() || end.is_some() => push(
                out,
                Stage::Seq {
                    seq,
                    start,
                    end,
                    by_ref: true,
                },
            ),
            _ => false,
        },
        // `a..b`, and `a..` (bounded by what it is zipped with or by a `take`).
        Expr::Range(r) if r.limits == syn::RangeLimits::HalfOpen(Default::default()) => {
            let Some(a) = &r.start else {
                return false;
            };
            out.push(Stage::Range {
                start: (**a).clone(),
                end: r.end.as_ref().map(|b| (**b).clone()),
            });
            true
        }
        Expr::Call(c) => match repeat_source(c) {
            Some(st) => push(out, st),
            None => false,
        },
        Expr::MethodCall(m) => {
            if let Some(l) = lines(e) {
                return push(out, l);
            }
            let name = m.method.to_string();
            let args = &m.args;
            match (name.as_str(), args.len()) {
                // `a.windows(2).into_iter()` of an ndarray array (whose windows are a
                // producer, not an iterator): the windows.
                ("into_iter", 0)
                    if matches!(&*m.receiver, Expr::MethodCall(w)
                        if Pieces::of(&w.method.to_string()) == Some(Pieces::Windows)) =>
                {
                    stages(&m.receiver, out)
                }
                ("iter" | "into_iter", 0) => match sequence(&m.receiver) {
                    Some((seq, start, end)) => {
                        out.push(Stage::Seq {
                            seq,
                            start,
                            end,
                            by_ref: name == "iter",
                        });
                        true
                    }
                    None => false,
                },
                ("windows" | "chunks_exact" | "chunks" | "rchunks_exact" | "rchunks", 1) => {
                    // (of a sub-slice too: `x[1..].windows(2)`)
                    match sequence(&m.receiver) {
                        Some((seq, start, end)) => push(
                            out,
                            Stage::Windows {
                                seq,
                                start,
                                end,
                                size: args[0].clone(),
                                kind: Pieces::of(&name).expect("a piece method"),
                            },
                        ),
                        _ => false,
                    }
                }
                ("step_by", 1) => {
                    stages(&m.receiver, out) && push(out, Stage::StepBy(args[0].clone()))
                }
                ("copied" | "cloned", 0) => stages(&m.receiver, out) && push(out, Stage::Copied),
                ("cycle", 0) => stages(&m.receiver, out) && push(out, Stage::Cycle),
                ("skip", 1) => stages(&m.receiver, out) && push(out, Stage::Skip(args[0].clone())),
                ("take", 1) => stages(&m.receiver, out) && push(out, Stage::Take(args[0].clone())),
                ("rev", 0) => stages(&m.receiver, out) && push(out, Stage::Rev),
                ("enumerate", 0) => stages(&m.receiver, out) && push(out, Stage::Enumerate),
                ("zip", 1) => {
                    let mut other = Vec::new();
                    let ok = match &args[0] {
                        Expr::Reference(r) if r.mutability.is_none() => match sequence(&r.expr) {
                            Some((seq, start, end)) => push(
                                &mut other,
                                Stage::Seq {
                                    seq,
                                    start,
                                    end,
                                    by_ref: true,
                                },
                            ),
                            None => false,
                        },
                        // `x.iter().zip(w)` with `w: &[T]`: a slice iterates by reference.
                        a @ (Expr::Path(_) | Expr::Field(_)) => push(
                            &mut other,
                            Stage::Seq {
                                seq: a.clone(),
                                start: None,
                                end: None,
                                by_ref: true,
                            },
                        ),
                        a => stages(a, &mut other),
                    };
                    ok && stages(&m.receiver, out) && push(out, Stage::Zip(other))
                }
                // `skip_while(p)`, `take_while(p)`: how many elements the predicate
                // passes, counted without a derivative on the chain as written, then
                // `skip(n)`, `take(n)`.
                ("skip_while" | "take_while", 1) => {
                    let (pre, p) = (&m.receiver, &args[0]);
                    let n: Expr = if name == "skip_while" {
                        syn::parse_quote!(::mochi::no_grad(
                            ::core::iter::Iterator::count(#pre)
                                - ::core::iter::Iterator::count(
                                    ::core::iter::Iterator::skip_while(#pre, #p)
                                )
                        ))
                    } else {
                        syn::parse_quote!(::mochi::no_grad(::core::iter::Iterator::count(
                            ::core::iter::Iterator::take_while(#pre, #p)
                        )))
                    };
                    stages(&m.receiver, out)
                        && push(
                            out,
                            if name == "skip_while" {
                                Stage::Skip(n)
                            } else {
                                Stage::Take(n)
                            },
                        )
                }
                ("chain", 1) => {
                    let mut other = Vec::new();
                    if stages(&args[0], &mut other) {
                        return stages(&m.receiver, out) && push(out, Stage::Chain(other));
                    }
                    // `a.into_iter().chain(b)`, `x.iter().chain(&y)`: a sequence given as
                    // it is (`IntoIterator`), walked as the receiver's elements are, by
                    // value or by reference.
                    let (given, by_ref) = match &args[0] {
                        Expr::Reference(r) if r.mutability.is_none() => (&*r.expr, Some(true)),
                        e => (e, None),
                    };
                    let Some((seq, start, end)) = sequence(given) else {
                        return false;
                    };
                    if !stages(&m.receiver, out) {
                        return false;
                    }
                    let Some(Stage::Seq { by_ref: walked, .. }) = out.first() else {
                        return false;
                    };
                    let by_ref = by_ref.unwrap_or(*walked);
                    if by_ref != *walked {
                        return false;
                    }
                    other.push(Stage::Seq {
                        seq,
                        start,
                        end,
                        by_ref,
                    });
                    push(out, Stage::Chain(other))
                }
                ("map", 1) => {
                    let Some(c) = closure(&args[0], 1) else {
                        return false;
                    };
                    stages(&m.receiver, out) && push(out, Stage::Map(c))
                }
                ("filter", 1) => {
                    let Some(c) = closure(&args[0], 1) else {
                        return false;
                    };
                    stages(&m.receiver, out) && push(out, Stage::Filter(c))
                }
                // `map_while(|v| …)`: as `filter_map`, its `None` ending the walk (a
                // `break` for the `continue`).
                ("filter_map" | "map_while", 1) => {
                    let Expr::Closure(c) = &args[0] else {
                        return false;
                    };
                    let Some(mut body) = options_as_continue(&c.body) else {
                        return false;
                    };
                    if name == "map_while" {
                        ContinueAsBreak.visit_expr_mut(&mut body);
                    }
                    let mut c = c.clone();
                    *c.body = body;
                    let Some(c) = closure(&Expr::Closure(c), 1) else {
                        return false;
                    };
                    stages(&m.receiver, out) && push(out, Stage::FilterMap(c))
                }
                ("scan", 2) => {
                    let Some(c) = closure(&args[1], 2) else {
                        return false;
                    };
                    if scan_parts(&c).is_none() {
                        return false;
                    }
                    stages(&m.receiver, out) && push(out, Stage::Scan(args[0].clone(), c))
                }
                _ => false,
            }
        }
        _ => false,
    }
}

/// `std::iter::repeat(v)`, `iter::repeat_n(v, n)`, `once(v)` (by any path ending in
/// `iter::` or by the bare name).
fn repeat_source(c: &syn::ExprCall) -> Option<Stage> {
    let Expr::Path(p) = &*c.func else { return None };
    let segs = crate::rewrite::path_segments(&p.path);
    let (name, module) = segs.split_last()?;
    if !(module.is_empty() || module.last().is_some_and(|m| m == "iter")) {
        return None;
    }
    let args: Vec<&Expr> = c.args.iter().collect();
    let (value, count) = match (name.as_str(), &args[..]) {
        ("repeat", [v]) => ((*v).clone(), None),
        ("repeat_n", [v, n]) => ((*v).clone(), Some((*n).clone())),
        ("once", [v]) => ((*v).clone(), Some(syn::parse_quote!(1usize))),
        _ => return None,
    };
    Some(Stage::Repeat { value, count })
}

/// Is `e` an iterator chain over a sequence or a range that the rewrite reads
/// (`x.iter().map(..)`, `(0..n).filter(..)`, `x.windows(2)`)?
pub fn is_chain(e: &Expr) -> bool {
    let mut st = Vec::new();
    matches!(e, Expr::MethodCall(_)) && stages(e, &mut st)
}

fn push(out: &mut Vec<Stage>, s: Stage) -> bool {
    out.push(s);
    true
}

/// `x`, `x.field`, `x[a..b]`, `x[a..]`, `x[..b]` (the sequence and its bounds).
fn sequence(e: &Expr) -> Option<(Expr, Option<Expr>, Option<Expr>)> {
    match e {
        Expr::Path(p) if p.path.get_ident().is_some() => Some((e.clone(), None, None)),
        Expr::Field(_) => Some((e.clone(), None, None)),
        Expr::Paren(p) => sequence(&p.expr),
        Expr::Index(i) => match &*i.index {
            Expr::Range(r) if r.limits == syn::RangeLimits::HalfOpen(Default::default()) => {
                let (seq, None, None) = sequence(&i.expr)? else {
                    return None;
                };
                Some((
                    seq,
                    r.start.as_ref().map(|s| (**s).clone()),
                    r.end.as_ref().map(|s| (**s).clone()),
                ))
            }
            // `rows[i]`, `m[i][j]`: a row of a `Vec<Vec<f64>>` (its index computed once,
            // before the loop: `hoist_counts`).
            _ => {
                let (_, None, None) = sequence(&i.expr)? else {
                    return None;
                };
                Some((e.clone(), None, None))
            }
        },
        _ => None,
    }
}

/// Whether `e`'s leftmost operand is a block-like expression (`{ .. }`, `if`, `match`,
/// a loop, `unsafe { .. }`) that `e` continues (`{ .. } + 1.0`, `match c { .. }.abs()`).
pub(crate) fn starts_with_block(e: &Expr) -> bool {
    let left = match e {
        Expr::Binary(b) => &*b.left,
        Expr::Cast(c) => &*c.expr,
        Expr::MethodCall(m) => &*m.receiver,
        Expr::Field(f) => &*f.base,
        Expr::Index(i) => &*i.expr,
        Expr::Try(t) => &*t.expr,
        _ => return false,
    };
    crate::lower::is_control_flow_stmt(left)
        || matches!(left, Expr::Unsafe(_))
        || starts_with_block(left)
}

/// `{ e }` (`{ e; }` with `semi`), `e` in parentheses where it begins with a block
/// that it continues (`{ (match c { .. } + 1.0) }`): printed and read again, the
/// statement would otherwise end at the block.
pub(crate) fn block_of(e: &Expr, semi: bool) -> syn::Block {
    syn::Block {
        brace_token: Default::default(),
        stmts: vec![syn::Stmt::Expr(
            parenthesised_if_block(e.clone()),
            semi.then(Default::default),
        )],
    }
}

/// `e`, in parentheses where it begins with a block that it continues (see
/// [`starts_with_block`]).
fn parenthesised_if_block(e: Expr) -> Expr {
    if starts_with_block(&e) {
        syn::parse_quote!((#e))
    } else {
        e
    }
}

/// The length of `seq[start..end]`, either bound absent.
fn sub_len(seq: &Expr, start: &Option<Expr>, end: &Option<Expr>, span: Span) -> TokenStream {
    let end = match end {
        Some(e) => quote_spanned!(span=> (#e)),
        None => quote_spanned!(span=> #seq.len()),
    };
    match start {
        // (`usize::` types literal bounds: `x[1..3]`.)
        Some(s) => quote_spanned!(span=> usize::saturating_sub(#end, #s)),
        None => end,
    }
}

/// A closure of `n` parameters, or a function path `f` as `|a| f(a)`.
fn closure(e: &Expr, n: usize) -> Option<syn::ExprClosure> {
    match e {
        Expr::Closure(c) if c.inputs.len() == n && c.asyncness.is_none() => {
            let mut c = c.clone();
            if contains_return(&c.body) {
                *c.body = returns_as_breaks(&c.body);
            }
            // Inlined into a loop, the parameters become `let`s in its body: renamed, so
            // that `x.iter().map(|x| …)` does not hide the sequence `x` from the stages
            // and the code after it.
            let mut names = Vec::new();
            for p in &c.inputs {
                crate::activity::pat_names(p, &mut names);
            }
            let renames: Vec<(syn::Ident, syn::Ident)> = names
                .iter()
                .map(|n| {
                    let from = syn::Ident::new(n, Span::call_site());
                    let to = fresh_param(n);
                    (from, to)
                })
                .collect();
            let mut rename = crate::desugar::RenameIdents(&renames);
            for p in c.inputs.iter_mut() {
                rename.visit_pat_mut(p);
            }
            rename.visit_expr_mut(&mut c.body);
            // (A name under `&` in the pattern, `|(&t, &y)|`, is a value.)
            let mut by_value = Vec::new();
            for p in &c.inputs {
                referenced_names(p, false, &mut by_value);
            }
            for (_, to) in &renames {
                if by_value.contains(&to.to_string()) {
                    continue;
                }
                if read_as_sequence(&c.body, to) {
                    SEQ_PARAMS.with(|s| s.borrow_mut().insert(to.clone()));
                } else if read_as_receiver(&c.body, to) {
                    CLONED_PARAMS.with(|s| s.borrow_mut().insert(to.clone()));
                }
            }
            Some(c)
        }
        Expr::Path(p) => {
            let args: Vec<syn::Ident> = (0..n).map(|i| format_ident!("__mochi_a{}", i)).collect();
            Some(syn::parse_quote!(|#(#args),*| #p(#(#args),*)))
        }
        _ => None,
    }
}

/// An element as a reference to it reads (every value in it by reference).
fn by_ref(it: &Item) -> Item {
    match it {
        Item::Leaf(e, _) => Item::Leaf(e.clone(), true),
        Item::Tuple(items) => Item::Tuple(items.iter().map(by_ref).collect()),
        w @ Item::Window { .. } => w.clone(),
    }
}

/// A stage that drops elements (`filter`, `filter_map`): the positions after it are not
/// the positions before.
fn skips(s: &Stage) -> bool {
    matches!(s, Stage::Filter(_) | Stage::FilterMap(_))
}

/// The body of a `filter_map` closure as the body of a loop that `continue`s where the
/// closure gives `None`: in tail position (through blocks, `if`/`else`, `match` arms and
/// parentheses) `Some(e)` becomes `e`, `None` becomes `continue`, and `c.then(|| e)` and
/// `c.then_some(e)` become `if c { e } else { continue }`; `return Some(e)` becomes
/// `return e` and `return None` a `continue` (not inside a loop of the closure, where
/// `continue` would mean that loop). Any other tail (an `Option` from a call, `?`) is not
/// rewritten: `None`, and the chain is not rewritten.
fn options_as_continue(body: &Expr) -> Option<Expr> {
    struct Returns {
        depth: usize,
        ok: bool,
    }
    impl VisitMut for Returns {
        fn visit_expr_mut(&mut self, e: &mut Expr) {
            match e {
                Expr::Closure(_) => {}
                Expr::Try(_) => self.ok = false,
                Expr::ForLoop(_) | Expr::While(_) | Expr::Loop(_) => {
                    self.depth += 1;
                    syn::visit_mut::visit_expr_mut(self, e);
                    self.depth -= 1;
                }
                Expr::Return(r) => {
                    let v = r.expr.as_deref().and_then(option_value);
                    match v {
                        Some(Some(mut v)) => {
                            self.visit_expr_mut(&mut v);
                            *e = syn::parse_quote!(return #v);
                        }
                        Some(None) if self.depth == 0 => *e = syn::parse_quote!(continue),
                        _ => self.ok = false,
                    }
                }
                _ => syn::visit_mut::visit_expr_mut(self, e),
            }
        }
    }
    let mut body = body.clone();
    let mut r = Returns { depth: 0, ok: true };
    r.visit_expr_mut(&mut body);
    if !r.ok {
        return None;
    }
    tail_option(&body)
}

/// `Some(e)` → `Some(Some(e))`, `None` → `Some(None)`, anything else → `None`.
fn option_value(e: &Expr) -> Option<Option<Expr>> {
    match e {
        Expr::Paren(p) => option_value(&p.expr),
        Expr::Path(p) if p.qself.is_none() && p.path.is_ident("None") => Some(None),
        Expr::Call(c) if c.args.len() == 1 => match &*c.func {
            Expr::Path(p) if p.qself.is_none() && p.path.is_ident("Some") => {
                Some(Some(c.args[0].clone()))
            }
            _ => None,
        },
        _ => None,
    }
}

/// `continue` → `break`, outside the loops and closures of the body it is given.
struct ContinueAsBreak;

impl VisitMut for ContinueAsBreak {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        match e {
            Expr::Closure(_) | Expr::ForLoop(_) | Expr::While(_) | Expr::Loop(_) => {}
            Expr::Continue(c) if c.label.is_none() => *e = syn::parse_quote!(break),
            _ => syn::visit_mut::visit_expr_mut(self, e),
        }
    }
}

/// The tail rewrite of [`options_as_continue`].
fn tail_option(e: &Expr) -> Option<Expr> {
    if let Some(v) = option_value(e) {
        return Some(match v {
            Some(v) => v,
            None => syn::parse_quote!(continue),
        });
    }
    Some(match e {
        Expr::Paren(p) => tail_option(&p.expr)?,
        Expr::Block(b) if b.label.is_none() => {
            let mut b = b.clone();
            match b.block.stmts.last_mut() {
                Some(syn::Stmt::Expr(t, None)) => *t = tail_option(t)?,
                _ => return None,
            }
            Expr::Block(b)
        }
        Expr::If(i) => {
            let mut i = i.clone();
            let (_, other) = i.else_branch.as_mut()?;
            **other = tail_option(other)?;
            let then = tail_option(&Expr::Block(syn::ExprBlock {
                attrs: Vec::new(),
                label: None,
                block: i.then_branch.clone(),
            }))?;
            let Expr::Block(then) = then else {
                return None;
            };
            i.then_branch = then.block;
            Expr::If(i)
        }
        Expr::Match(m) => {
            let mut m = m.clone();
            for arm in &mut m.arms {
                *arm.body = tail_option(&arm.body)?;
            }
            Expr::Match(m)
        }
        // `c.then(|| e)`, `c.then_some(e)`.
        Expr::MethodCall(mc) if mc.args.len() == 1 => {
            let cond = &mc.receiver;
            let v = match (mc.method.to_string().as_str(), &mc.args[0]) {
                ("then_some", v) => v.clone(),
                ("then", Expr::Closure(c)) if c.inputs.is_empty() => (*c.body).clone(),
                _ => return None,
            };
            syn::parse_quote!(if #cond { #v } else { continue })
        }
        _ => return None,
    })
}

thread_local! {
    /// The counter behind [`fresh_param`], set back to 0 for each function expanded, so
    /// that an expansion does not depend on the ones before it.
    static NEXT_PARAM: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// The renamed closure parameters whose body reads them as sequences (a row of a
    /// `Vec<Vec<f64>>`: `row.iter()`, `row[j]`, `dot(row, x)`) or as a map's keys
    /// (`counts[l]`): bound by reference.
    static SEQ_PARAMS: std::cell::RefCell<std::collections::HashSet<syn::Ident>> =
        std::cell::RefCell::new(std::collections::HashSet::new());
    /// The renamed closure parameters read only as receivers of the user's methods
    /// (`layer.apply(&h)`, see `read_as_receiver`): an element bound by value as a
    /// clone, since it may not be `Copy`.
    static CLONED_PARAMS: std::cell::RefCell<std::collections::HashSet<syn::Ident>> =
        std::cell::RefCell::new(std::collections::HashSet::new());
    /// The names that hold sequences of the user's structs (`pts: &[V2]`, `let pts:
    /// Vec<V2> = ..`): their chains are index loops, not the rules of float sequences.
    static STRUCT_SEQS: std::cell::RefCell<std::collections::HashSet<String>> =
        std::cell::RefCell::new(std::collections::HashSet::new());
    /// The names known to hold a slice, an array or a `Vec` (a parameter of such a
    /// type, `let v = vec![..]`, `let v: Vec<f64> = .. .collect()`): their chains read
    /// element `k` as `v[k]`; others through `__private::Flat`.
    static LINEAR_SEQS: std::cell::RefCell<std::collections::HashSet<String>> =
        std::cell::RefCell::new(std::collections::HashSet::new());
    /// The type of the elements of those of `STRUCT_SEQS` whose type is known (`layers:
    /// &[Dense]`, `let layers = vec![Dense { .. }, ..]`): `for l in &layers` binds a value
    /// of it, whose methods (`l.forward(&h)`) are the type's.
    static STRUCT_SEQ_TYPES: std::cell::RefCell<std::collections::HashMap<String, syn::Ident>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

/// Starts the names of [`fresh_param`] over (at the start of an expansion).
pub fn reset_fresh_params() {
    NEXT_PARAM.with(|c| c.set(0));
    SEQ_PARAMS.with(|s| s.borrow_mut().clear());
    CLONED_PARAMS.with(|s| s.borrow_mut().clear());
    STRUCT_SEQS.with(|s| s.borrow_mut().clear());
    LINEAR_SEQS.with(|s| s.borrow_mut().clear());
    STRUCT_SEQ_TYPES.with(|s| s.borrow_mut().clear());
}

/// Notes the type of the elements of `name`'s sequence of the user's structs, or that it
/// is not known (see `STRUCT_SEQ_TYPES`).
pub fn note_struct_seq_type(name: &str, ty: Option<syn::Ident>) {
    STRUCT_SEQ_TYPES.with(|s| match ty {
        Some(t) => {
            s.borrow_mut().insert(name.to_string(), t);
        }
        None => {
            s.borrow_mut().remove(name);
        }
    });
}

/// The type of the elements of `name`'s sequence of the user's structs, if known.
pub fn struct_seq_type(name: &str) -> Option<syn::Ident> {
    STRUCT_SEQ_TYPES.with(|s| s.borrow().get(name).cloned())
}

/// Notes whether `name` is known to hold a slice, an array or a `Vec` (see
/// `LINEAR_SEQS`).
pub fn note_linear_seq(name: &str, is: bool) {
    note_in(&LINEAR_SEQS, name, is);
}

/// `name` put into or taken out of one of the sets above.
fn note_in(
    set: &'static std::thread::LocalKey<std::cell::RefCell<std::collections::HashSet<String>>>,
    name: &str,
    is: bool,
) {
    set.with(|s| {
        if is {
            s.borrow_mut().insert(name.to_string());
        } else {
            s.borrow_mut().remove(name);
        }
    });
}

/// Whether the sequence `seq` of a chain is known to be indexed by its position: a
/// name of [`LINEAR_SEQS`] or a row `rows[i]` (a field's type is not seen).
fn known_linear(seq: &Expr) -> bool {
    match seq {
        Expr::Path(p) => p.path.get_ident().is_some_and(|i| {
            LINEAR_SEQS.with(|s| s.borrow().contains(&i.to_string()))
                || SEQ_PARAMS.with(|s| s.borrow().contains(i))
        }),
        Expr::Index(_) => true,
        _ => false,
    }
}

/// The position of element `k` of `seq` in the order `iter()` visits it: `k` where `seq`
/// is known to be a slice, an array or a `Vec`, else the multi-index `__private::Flat`
/// gives (`k` itself but for an ndarray array of two or more dimensions).
pub(crate) fn flat_index(seq: &Expr, k: &TokenStream, span: Span) -> TokenStream {
    if known_linear(seq) {
        return k.clone();
    }
    quote_spanned!(span=> ::mochi::no_grad({
        #[allow(unused_imports)]
        use ::mochi::__private::{FlatArray as _, FlatOther as _};
        ::mochi::__private::Flat(&#seq).at(#k)
    }))
}

/// The sequence and the position of a [`flat_index`] that is not the position itself.
pub(crate) fn flat_index_of(e: &Expr) -> Option<(&Expr, &Expr)> {
    let Expr::Call(c) = e else { return None };
    let Expr::Path(f) = &*c.func else { return None };
    if c.args.len() != 1 || f.path.segments.last().is_none_or(|s| s.ident != "no_grad") {
        return None;
    }
    let Expr::Block(b) = &c.args[0] else {
        return None;
    };
    let Some(syn::Stmt::Expr(Expr::MethodCall(at), None)) = b.block.stmts.last() else {
        return None;
    };
    let Expr::Call(flat) = &*at.receiver else {
        return None;
    };
    let Expr::Path(fp) = &*flat.func else {
        return None;
    };
    if at.method != "at"
        || at.args.len() != 1
        || flat.args.len() != 1
        || fp.path.segments.last().is_none_or(|s| s.ident != "Flat")
    {
        return None;
    }
    let Expr::Reference(r) = &flat.args[0] else {
        return None;
    };
    Some((&r.expr, &at.args[0]))
}

/// Whether a type is a slice, an array or a `Vec` (behind any references).
pub fn linear_type(t: &syn::Type) -> bool {
    match t {
        syn::Type::Reference(r) => linear_type(&r.elem),
        syn::Type::Paren(p) => linear_type(&p.elem),
        syn::Type::Slice(_) | syn::Type::Array(_) => true,
        syn::Type::Path(_) => vec_elem(t).is_some(),
        _ => false,
    }
}

/// Whether a binding's initial value is surely a slice, an array or a `Vec`: `vec![..]`,
/// an array literal, `.collect()`, `.to_vec()`, `Vec::new()`, `Vec::with_capacity(n)`.
pub fn linear_init(e: &Expr) -> bool {
    match crate::desugar::unparen(e) {
        Expr::Macro(m) => m.mac.path.is_ident("vec"),
        Expr::Array(_) | Expr::Repeat(_) => true,
        Expr::MethodCall(m) => {
            (m.method == "collect" && m.turbofish.as_ref().is_none_or(|t| {
                t.args.iter().all(|a| matches!(a, syn::GenericArgument::Type(t) if linear_type(t) || matches!(t, syn::Type::Infer(_))))
            })) || m.method == "to_vec"
        }
        Expr::Call(c) => matches!(&*c.func, Expr::Path(p) if {
            let segs = crate::twin::segments(&p.path);
            segs.len() == 2 && segs[0] == "Vec"
        }),
        _ => false,
    }
}

/// Notes whether `name` holds a sequence of the user's structs (see `STRUCT_SEQS`).
pub fn note_struct_seq(name: &str, is: bool) {
    note_in(&STRUCT_SEQS, name, is);
}

/// Methods of slices and `Vec`s, not of floats: a closure parameter that is their
/// receiver is a sequence.
const SEQUENCE_METHODS: &[&str] = &[
    "iter",
    "into_iter",
    "len",
    "is_empty",
    "to_vec",
    "first",
    "last",
    "get",
    "windows",
    "chunks",
    "chunks_exact",
    "split_at",
    "split_first",
    "split_last",
    "as_slice",
    "contains",
    "concat",
];

/// The names bound under a `&` in `p` (`|(&t, &y)|`, `|&v|`).
fn referenced_names(p: &Pat, under: bool, out: &mut Vec<String>) {
    match p {
        Pat::Reference(r) => referenced_names(&r.pat, true, out),
        Pat::Type(t) => referenced_names(&t.pat, under, out),
        Pat::Paren(q) => referenced_names(&q.pat, under, out),
        Pat::Tuple(t) => t.elems.iter().for_each(|q| referenced_names(q, under, out)),
        Pat::Ident(i) if under => out.push(i.ident.to_string()),
        _ => {}
    }
}

/// `Type::m(name, ..)` (also `&name`, `receiver(&name)`) of a method `m` only the crate's
/// enums have: `name` read as an enum's receiver (in a generic form the call is
/// `Type::m__twin_needs_differentiable_higher_order(receiver(&name), ..)`).
fn enum_method_by_path(c: &syn::ExprCall, name: &syn::Ident) -> bool {
    let Expr::Path(p) = &*c.func else {
        return false;
    };
    if p.qself.is_some() || p.path.segments.len() != 2 {
        return false;
    }
    let m = p.path.segments[1].ident.to_string();
    let method = crate::twin::method_of_twin(&m).unwrap_or(&m);
    let first = match c.args.first() {
        Some(Expr::Call(r))
            if r.args.len() == 1
                && matches!(&*r.func, Expr::Path(rp)
                    if rp.path.segments.last().is_some_and(|s| s.ident == "receiver")) =>
        {
            &r.args[0]
        }
        Some(a) => a,
        None => return false,
    };
    let first = match first {
        Expr::Reference(r) if r.mutability.is_none() => &*r.expr,
        other => other,
    };
    matches!(first, Expr::Path(q) if q.qself.is_none() && q.path.is_ident(name))
        && crate::twin::only_enums_have(method)
}

/// Does `body` read `name` as a sequence: indexed (`row[j]`), the receiver of a slice
/// method (`row.iter()`), iterated by a `for`, or an argument as it is (`dot(row, x)`:
/// a reference in Rust, which a by-value binding would not be)? Or as a map's key, the
/// index as it is (`counts[l]` of a `HashMap<usize, _>`, which a slice cannot be indexed
/// by): a reference too.
fn read_as_sequence(body: &Expr, name: &syn::Ident) -> bool {
    struct Find<'a> {
        name: &'a syn::Ident,
        found: bool,
    }
    impl Find<'_> {
        fn is(&self, e: &Expr) -> bool {
            matches!(e, Expr::Path(p) if p.qself.is_none() && p.path.is_ident(self.name))
        }
    }
    impl<'ast> syn::visit::Visit<'ast> for Find<'_> {
        fn visit_expr(&mut self, e: &'ast Expr) {
            let hit = match e {
                Expr::Index(i) => self.is(&i.expr) || self.is(&i.index),
                Expr::MethodCall(m) => {
                    (self.is(&m.receiver)
                        && SEQUENCE_METHODS.contains(&m.method.to_string().as_str()))
                        || m.args.iter().any(|a| self.is(a))
                }
                Expr::Call(c) => {
                    !enum_method_by_path(c, self.name) && c.args.iter().any(|a| self.is(a))
                }
                Expr::ForLoop(f) => self.is(&f.expr),
                _ => false,
            };
            self.found |= hit;
            syn::visit::visit_expr(self, e);
        }
    }
    let mut f = Find { name, found: false };
    syn::visit::Visit::visit_expr(&mut f, body);
    f.found
}

/// Whether `name` is read only as the receiver of marked methods that only the crate's
/// enums have (`layer.apply(&h)`), at least once: an element that may not be `Copy`
/// (an enum whose variants hold `Vec`s), bound as a clone (an enum carries no
/// derivative).
fn read_as_receiver(body: &Expr, name: &syn::Ident) -> bool {
    struct Find<'a> {
        name: &'a syn::Ident,
        methods: usize,
        other: bool,
    }
    impl Find<'_> {
        fn is(&self, e: &Expr) -> bool {
            matches!(e, Expr::Path(p) if p.qself.is_none() && p.path.is_ident(self.name))
        }
    }
    impl<'ast> syn::visit::Visit<'ast> for Find<'_> {
        fn visit_expr(&mut self, e: &'ast Expr) {
            match e {
                Expr::MethodCall(m) if self.is(&m.receiver) => {
                    let name = m.method.to_string();
                    if !crate::twin::only_enums_have(&name) {
                        self.other = true;
                    } else {
                        self.methods += 1;
                    }
                    for a in &m.args {
                        self.visit_expr(a);
                    }
                }
                // (`Layer::apply(l, h)`, and in a generic form `Layer::apply__twin(
                // receiver(&l), h)`: a method of an enum's called by its path, the same
                // read.)
                Expr::Call(c) if enum_method_by_path(c, self.name) => {
                    self.methods += 1;
                    for a in c.args.iter().skip(1) {
                        self.visit_expr(a);
                    }
                }
                _ if self.is(e) => self.other = true,
                _ => syn::visit::visit_expr(self, e),
            }
        }
    }
    let mut f = Find {
        name,
        methods: 0,
        other: false,
    };
    syn::visit::Visit::visit_expr(&mut f, body);
    f.methods > 0 && !f.other
}

/// The name as the user wrote it: `f` for a closure parameter renamed by
/// [`fresh_param`] (`__mochi_f_0`), any other name as it is.
pub fn written_name(name: &str) -> &str {
    name.strip_prefix("__mochi_")
        .and_then(|rest| rest.rsplit_once('_'))
        .filter(|(n, k)| !n.is_empty() && k.chars().all(|c| c.is_ascii_digit()) && !k.is_empty())
        .map_or(name, |(n, _)| n)
}

/// A name for a closure parameter `n` inlined into a loop, unique in the expansion.
fn fresh_param(n: &str) -> syn::Ident {
    let k = NEXT_PARAM.with(|c| {
        let k = c.get();
        c.set(k + 1);
        k
    });
    format_ident!("__mochi_{}_{}", n, k)
}

/// A closure body with `return`s, to be inlined into a loop or a block, where its
/// `return e` would leave the function: `'__mochi_ret: { … break '__mochi_ret e; … }`
/// keeps it the closure's value (the desugaring makes the labelled block a loop).
pub fn returns_as_breaks(body: &Expr) -> Expr {
    let mut body = body.clone();
    ReturnToBreak.visit_expr_mut(&mut body);
    let stmts = match &body {
        Expr::Block(b) if b.label.is_none() => b.block.stmts.clone(),
        other => vec![syn::Stmt::Expr(other.clone(), None)],
    };
    syn::parse_quote!('__mochi_ret: { #(#stmts)* })
}

/// `return e` → `break '__mochi_ret (e)` (not inside inner closures).
struct ReturnToBreak;

impl VisitMut for ReturnToBreak {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        match e {
            Expr::Closure(_) => {}
            Expr::Return(r) => {
                if let Some(v) = r.expr.as_mut() {
                    self.visit_expr_mut(v);
                }
                *e = match &r.expr {
                    Some(v) => syn::parse_quote!(break '__mochi_ret (#v)),
                    None => syn::parse_quote!(break '__mochi_ret),
                };
            }
            _ => syn::visit_mut::visit_expr_mut(self, e),
        }
    }
}

/// Does a closure body `return` (which a loop body would mean differently)?
pub fn contains_return(e: &Expr) -> bool {
    struct R(bool);
    impl<'ast> syn::visit::Visit<'ast> for R {
        fn visit_expr_return(&mut self, _: &'ast syn::ExprReturn) {
            self.0 = true;
        }
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
    }
    let mut r = R(false);
    syn::visit::Visit::visit_expr(&mut r, e);
    r.0
}

/// The chains the lowering reverses by itself, with rules made for them (faster than
/// an index loop): `x.iter()[.copied()].sum()`/`.product()`, `x.iter().map(f).sum()`,
/// `x.iter().zip(y.iter()).map(f).sum()`, `x.iter().fold(init, f)`.
fn lowering_handles(e: &syn::ExprMethodCall, st: &[Stage]) -> bool {
    let plain_seq = |s: &Stage| match s {
        Stage::Seq {
            start: None,
            end: None,
            seq: Expr::Path(p),
            ..
        } => !p
            .path
            .get_ident()
            .is_some_and(|i| STRUCT_SEQS.with(|s| s.borrow().contains(&i.to_string()))),
        _ => false,
    };
    let consumer = e.method.to_string();
    // The sequence rules hold floats (or rows of them): elements whose fields the
    // closure reads (structs) go through an index loop.
    // Elements destructured as tuples (`|(a, b)|` over a `Vec<(f64, f64)>`) likewise.
    let floats = |c: &syn::ExprClosure| {
        let tuple = |p: &Pat| {
            let mut p = p;
            loop {
                match p {
                    Pat::Reference(r) => p = &r.pat,
                    Pat::Type(t) => p = &t.pat,
                    Pat::Paren(q) => p = &q.pat,
                    Pat::Tuple(_) | Pat::TupleStruct(_) | Pat::Struct(_) | Pat::Slice(_) => {
                        return true
                    }
                    _ => return false,
                }
            }
        };
        !reads_fields(c)
            && !c.inputs.iter().any(tuple)
            && !indexes_with_param(c)
            && !casts_param(c)
            && !hands_param_on(c)
            && !holds_loop_chain(c)
    };
    match (consumer.as_str(), st) {
        ("sum" | "product", [s]) | ("sum" | "product", [s, Stage::Copied]) => plain_seq(s),
        ("sum", [s, Stage::Map(c)]) | ("sum", [s, Stage::Copied, Stage::Map(c)]) => {
            plain_seq(s) && floats(c)
        }
        ("sum", [s, Stage::Zip(o), Stage::Map(c)]) => {
            plain_seq(s) && matches!(&o[..], [t] if plain_seq(t)) && floats(c)
        }
        // (A fold from a struct, `fold(V2::zero(), |acc, &q| acc + q)`, is over structs.)
        ("fold", [s]) | ("fold", [s, Stage::Copied]) => {
            plain_seq(s)
                && matches!(e.args.get(1), Some(Expr::Closure(c)) if floats(c))
                && !e.args.first().is_some_and(builds_struct)
        }
        _ => false,
    }
}

/// A value built as a struct: a struct literal, `T(..)` or `T::f(..)` of a capitalised
/// type that is not a float's (`V2::zero()`, `P2(a, b)`).
fn builds_struct(e: &Expr) -> bool {
    struct_built_by(e).is_some()
}

/// The struct type a value is built as: a struct literal's path, the type of `T(..)` or
/// `T::f(..)` of a capitalised type that is not a variant or a library container
/// (`V2::zero()`, `P2(a, b)`), also lifted in a generic form (`lift_value::<T,
/// _>(V2::zero())`).
fn struct_built_by(e: &Expr) -> Option<syn::Path> {
    match crate::desugar::unparen(e) {
        Expr::Struct(st) if st.qself.is_none() => Some(st.path.clone()),
        Expr::Call(c) => match &*c.func {
            Expr::Path(p)
                if p.path
                    .segments
                    .last()
                    .is_some_and(|s| s.ident == "lift_value") =>
            {
                c.args.first().and_then(struct_built_by)
            }
            Expr::Path(p) if p.qself.is_none() && (1..=2).contains(&p.path.segments.len()) => {
                let ty = &p.path.segments[0].ident;
                let name = ty.to_string();
                (name.starts_with(|ch: char| ch.is_ascii_uppercase())
                    && !matches!(name.as_str(), "Some" | "Ok" | "Err" | "Vec" | "Box"))
                .then(|| ty.clone().into())
            }
            _ => None,
        },
        // (An associated constant of a capitalised type, `V2::ZERO`.)
        Expr::Path(p) if p.qself.is_none() && p.path.segments.len() == 2 => {
            let (ty, c) = (&p.path.segments[0].ident, &p.path.segments[1].ident);
            (ty.to_string()
                .starts_with(|ch: char| ch.is_ascii_uppercase())
                && crate::twin::is_constant_name(&c.to_string()))
            .then(|| ty.clone().into())
        }
        _ => None,
    }
}

/// `x.iter().copied().map(f).sum()` (also `cloned()`, `v.into_iter()`, and `f` a
/// function's path) as `x.iter().map(|&v| f(v)).sum()`: the rule the lowering calls hands the closure each
/// element by reference, so a by-value parameter passed on to a function (`sp(v)`) was
/// a `&f64` where `f64` is expected.
fn copied_into_map(e: &syn::ExprMethodCall) -> Option<Expr> {
    let Expr::MethodCall(map) = &*e.receiver else {
        return None;
    };
    let Expr::MethodCall(copied) = &*map.receiver else {
        return None;
    };
    // (`v.into_iter()` of a `Vec` yields values too.)
    if map.method != "map"
        || map.args.len() != 1
        || !matches!(
            copied.method.to_string().as_str(),
            "copied" | "cloned" | "into_iter"
        )
        || !copied.args.is_empty()
    {
        return None;
    }
    let f: syn::ExprClosure = match &map.args[0] {
        // (A closure over `into_iter()` may take rows by value: left as written, unless
        // it stands for a function's path, `|__mochi_fa| f(__mochi_fa)`, or types its
        // parameter with a plain name, `|v: f64|`.)
        Expr::Closure(c)
            if c.inputs.len() == 1
                && (copied.method != "into_iter"
                    || matches!(&c.inputs[0], Pat::Ident(i) if i.ident == "__mochi_fa")
                    || matches!(&c.inputs[0], Pat::Type(t) if matches!(&*t.ty, syn::Type::Path(p) if p.qself.is_none() && p.path.get_ident().is_some()))) =>
        {
            let mut c = c.clone();
            let p = c.inputs[0].clone();
            let plain =
                |p: &Pat| matches!(p, Pat::Ident(i) if i.by_ref.is_none() && i.subpat.is_none());
            c.inputs[0] = match &p {
                p if plain(p) => syn::parse_quote!(&#p),
                // `|v: f64|` (a local closure inlined where it was passed by name).
                Pat::Type(t) if plain(&t.pat) => {
                    let (q, ty) = (&t.pat, &t.ty);
                    let mut t = t.clone();
                    *t.pat = syn::parse_quote!(&#q);
                    *t.ty = syn::parse_quote!(&#ty);
                    Pat::Type(t)
                }
                _ => return None,
            };
            c
        }
        Expr::Path(p) => syn::parse_quote!(|&__mochi_a0| #p(__mochi_a0)),
        _ => return None,
    };
    let src = &copied.receiver;
    let mut out = e.clone();
    *out.receiver = if copied.method == "into_iter" {
        syn::parse_quote!(#src.iter().map(#f))
    } else {
        syn::parse_quote!(#src.map(#f))
    };
    Some(Expr::MethodCall(out))
}

/// Whether the closure reads a field of a parameter (`|p| p.a * p.b`), or calls a method
/// of the user's on one (`|l| l.forward(x)`): its elements are structs.
/// Does `c`'s body hold a chain with an adapter that becomes an index loop
/// (`A.iter().rev().fold(..)`, `skip`, `zip`, …)? Only in a loop are the closure's
/// parameters known to carry derivatives, so the chain around `c` must be one too.
fn holds_loop_chain(c: &syn::ExprClosure) -> bool {
    struct H(bool);
    impl<'ast> syn::visit::Visit<'ast> for H {
        fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
            if matches!(
                m.method.to_string().as_str(),
                "sum" | "product" | "fold" | "collect" | "for_each"
            ) {
                let mut st = Vec::new();
                if stages(&m.receiver, &mut st)
                    && st.iter().any(|s| {
                        !matches!(
                            s,
                            Stage::Seq { .. } | Stage::Range { .. } | Stage::Copied | Stage::Map(_)
                        )
                    })
                    && !lowering_handles(m, &st)
                {
                    self.0 = true;
                }
            }
            syn::visit::visit_expr_method_call(self, m);
        }
    }
    let mut h = H(false);
    syn::visit::Visit::visit_expr(&mut h, &c.body);
    h.0
}

/// Does the closure index with one of its parameters (`|&i| x[i] * x[i]` over indices
/// `&[usize]`)? Its elements are then integers, which the sequence rules (of floats) do
/// not take.
fn indexes_with_param(c: &syn::ExprClosure) -> bool {
    let mut params = Vec::new();
    for p in &c.inputs {
        crate::activity::pat_names(p, &mut params);
    }
    struct I<'a>(&'a [String], bool);
    impl<'ast> syn::visit::Visit<'ast> for I<'_> {
        fn visit_expr_index(&mut self, i: &'ast syn::ExprIndex) {
            let index = &i.index;
            self.1 |= crate::activity::tokens_mention(&quote::quote!(#index), &|n| {
                self.0.iter().any(|p| n == p)
            });
            syn::visit::visit_expr_index(self, i);
        }
    }
    let mut i = I(&params, false);
    syn::visit::Visit::visit_expr(&mut i, &c.body);
    i.1
}

/// `k`, `*k` or `&k` of one of a closure's parameters `params`.
fn is_param(params: &[String], e: &Expr) -> bool {
    let e = match crate::desugar::unparen(e) {
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => &*u.expr,
        Expr::Reference(r) => &*r.expr,
        other => other,
    };
    matches!(crate::desugar::unparen(e), Expr::Path(p)
        if p.path.get_ident().is_some_and(|i| params.iter().any(|n| i == n)))
}

/// Whether the closure casts its parameter (`|&k| (k as f64) * a`, `f64::from(k)`): the elements are
/// integers (counts in a constant table), which the sequence rules do not hold.
fn casts_param(c: &syn::ExprClosure) -> bool {
    let mut params = Vec::new();
    for p in &c.inputs {
        crate::activity::pat_names(p, &mut params);
    }
    struct C<'a>(&'a [String], bool);
    impl<'ast> syn::visit::Visit<'ast> for C<'_> {
        fn visit_expr_cast(&mut self, e: &'ast syn::ExprCast) {
            self.1 |= is_param(self.0, &e.expr);
            syn::visit::visit_expr_cast(self, e);
        }
        // (`f64::from(k)` too.)
        fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
            let from = matches!(&*c.func, Expr::Path(f)
                if crate::twin::segments(&f.path).last().is_some_and(|l| l == "from"));
            self.1 |= from && c.args.len() == 1 && is_param(self.0, &c.args[0]);
            syn::visit::visit_expr_call(self, c);
        }
    }
    let mut v = C(&params, false);
    syn::visit::Visit::visit_expr(&mut v, &c.body);
    v.1
}

/// Whether the closure hands its parameter to code of the user's, as an argument of a
/// function (`|&k| ln_factorial(k)`) or of a method no float has (`|&k| p.ln_pmf(k)`):
/// the elements may be anything (counts in a constant table of integers), which the
/// sequence rules (of floats) do not hold; an index loop takes every element type.
fn hands_param_on(c: &syn::ExprClosure) -> bool {
    let mut params = Vec::new();
    for p in &c.inputs {
        crate::activity::pat_names(p, &mut params);
    }
    struct H<'a>(&'a [String], bool);
    impl<'ast> syn::visit::Visit<'ast> for H<'_> {
        fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
            // `f64::max(a, v)`, `T::sin(v)`, `Float::exp(v)`: a float's own functions.
            let floats = matches!(&*c.func, Expr::Path(f) if f.path.segments.len() > 1
            && f.path.segments.first().is_some_and(|s| {
                let s = s.ident.to_string();
                matches!(s.as_str(), "f64" | "f32" | "Float" | "Real" | "num_traits")
                    || s.len() == 1
            }));
            self.1 |= !floats && c.args.iter().any(|a| is_param(self.0, a));
            syn::visit::visit_expr_call(self, c);
        }
        fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
            let name = m.method.to_string();
            self.1 |= !crate::twin::FLOAT_METHODS.contains(&name.as_str())
                && m.args.iter().any(|a| is_param(self.0, a));
            syn::visit::visit_expr_method_call(self, m);
        }
    }
    let mut h = H(&params, false);
    syn::visit::Visit::visit_expr(&mut h, &c.body);
    h.1
}

fn reads_fields(c: &syn::ExprClosure) -> bool {
    let mut params = Vec::new();
    for p in &c.inputs {
        crate::activity::pat_names(p, &mut params);
    }
    struct F<'a> {
        params: &'a [String],
        found: bool,
    }
    impl<'ast> syn::visit::Visit<'ast> for F<'_> {
        fn visit_expr_field(&mut self, f: &'ast syn::ExprField) {
            if crate::activity::root_name(&f.base).is_some_and(|r| self.params.contains(&r)) {
                self.found = true;
            }
            syn::visit::visit_expr_field(self, f);
        }
        // `l.forward(x)`: a method of the user's struct (no float has one); `(*q -
        // c).norm()`: a method no float has, of a value made from the element.
        fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
            let name = m.method.to_string();
            let receiver = &m.receiver;
            let of_element =
                crate::activity::root_name(&m.receiver).is_some_and(|r| self.params.contains(&r));
            if !crate::lower::expr::is_library_method(&name) && of_element
                || !crate::twin::FLOAT_METHODS.contains(&name.as_str())
                    && !matches!(name.as_str(), "clone" | "to_owned" | "into")
                    && crate::activity::tokens_mention(&quote::quote!(#receiver), &|i| {
                        self.params.iter().any(|p| i == p)
                    })
            {
                self.found = true;
            }
            syn::visit::visit_expr_method_call(self, m);
        }
    }
    let mut f = F {
        params: &params,
        found: false,
    };
    syn::visit::Visit::visit_expr(&mut f, &c.body);
    f.found
}

/// Writes index loops for chains.
pub struct Writer<'a> {
    pub next: &'a mut usize,
    pub float_ty: Option<&'a syn::Ident>,
    span: Span,
    /// Statements before the chain's loop (a `scan`'s state).
    pre: Vec<TokenStream>,
}

impl<'a> Writer<'a> {
    pub fn new(next: &'a mut usize, float_ty: Option<&'a syn::Ident>) -> Self {
        Writer {
            next,
            float_ty,
            span: Span::call_site(),
            pre: Vec::new(),
        }
    }

    /// The names of a chain's index loop (`n`, `k`), its length, and the statements and
    /// the element at position `k`.
    #[allow(clippy::type_complexity)]
    fn loop_head(
        &mut self,
        st: &[Stage],
    ) -> Option<(syn::Ident, syn::Ident, TokenStream, Vec<TokenStream>, Item)> {
        let span = self.span;
        let n = self.fresh("n");
        let k = self.fresh("k");
        let st = self.hoist_counts(st);
        let len = self.len(&st)?;
        let mut body = Vec::new();
        let item = self.item(&st, quote_spanned!(span=> #k), &mut body)?;
        Some((n, k, len, body, item))
    }

    /// `skip(n)`/`take(n)` counts that are not a name or a literal (those of
    /// `skip_while`/`take_while` walk the chain) computed once, before the loop, instead
    /// of at every element.
    fn hoist_counts(&mut self, st: &[Stage]) -> Vec<Stage> {
        st.iter()
            .map(|s| match s {
                Stage::Skip(e) | Stage::Take(e) if !matches!(e, Expr::Path(_) | Expr::Lit(_)) => {
                    let (span, c) = (self.span, self.fresh("count"));
                    self.pre.push(quote_spanned!(span=> let #c = #e;));
                    let c: Expr = syn::parse_quote!(#c);
                    match s {
                        Stage::Skip(_) => Stage::Skip(c),
                        _ => Stage::Take(c),
                    }
                }
                Stage::Zip(o) => Stage::Zip(self.hoist_counts(o)),
                Stage::Chain(o) => Stage::Chain(self.hoist_counts(o)),
                // A row `rows[i]`: `i` read once (a closure of the chain may change it).
                Stage::Seq {
                    seq,
                    start,
                    end,
                    by_ref,
                } => Stage::Seq {
                    seq: self.hoist_row(seq),
                    start: start.clone(),
                    end: end.clone(),
                    by_ref: *by_ref,
                },
                Stage::Windows {
                    seq,
                    start,
                    end,
                    size,
                    kind,
                } => Stage::Windows {
                    seq: self.hoist_row(seq),
                    start: start.clone(),
                    end: end.clone(),
                    size: size.clone(),
                    kind: *kind,
                },
                other => other.clone(),
            })
            .collect()
    }

    /// `base[e]` with `e` not a name or a literal: `base[r]` after `let r = e;` before the
    /// loop (nested rows in turn).
    fn hoist_row(&mut self, seq: &Expr) -> Expr {
        let Expr::Index(ix) = seq else {
            return seq.clone();
        };
        if matches!(&*ix.index, Expr::Range(_)) {
            return seq.clone();
        }
        let base = self.hoist_row(&ix.expr);
        let index = match &*ix.index {
            Expr::Lit(_) => (*ix.index).clone(),
            e => {
                let (span, r) = (self.span, self.fresh("row"));
                self.pre.push(quote_spanned!(span=> let #r = #e;));
                syn::parse_quote!(#r)
            }
        };
        syn::parse_quote!(#base[#index])
    }

    /// A new name, ending in `_`: the lowering names its temporaries `__mochi_<what><n>`
    /// with a counter of its own, and one of those must never shadow a name written here.
    fn fresh(&mut self, p: &str) -> syn::Ident {
        *self.next += 1;
        format_ident!("__mochi_{}{}_", p, *self.next, span = self.span)
    }

    /// The length of the stream after `st`, as an expression.
    fn len(&self, st: &[Stage]) -> Option<TokenStream> {
        let span = self.span;
        let (last, rest) = st.split_last()?;
        Some(match last {
            Stage::Seq {
                seq, start, end, ..
            } => sub_len(seq, start, end, span),
            // The range's own length and elements, in its own integer type (`0..n` of
            // `n: i32`, `-3..3`).
            // (`usize::MAX` for `start..`: a `zip` or a `take` bounds it.)
            Stage::Range { start, end } => {
                let end = end.as_ref().map(|e| quote_spanned!(span=> (#e)));
                quote_spanned!(span=> ::core::iter::Iterator::size_hint(&((#start)..#end)).0)
            }
            Stage::Windows {
                seq,
                start,
                end,
                size,
                kind,
            } => kind.count(&sub_len(seq, start, end, span), size, span),
            Stage::Lines { seq, line } => match line {
                // Shape queries are rules (with no derivative): the count they give is
                // an integer the loop bound must see as one.
                Line::Along(a) => quote_spanned!(span=> ::mochi::no_grad(#seq.len_of(#a))),
                Line::Row => quote_spanned!(span=> ::mochi::no_grad(#seq.nrows())),
                Line::Column => quote_spanned!(span=> ::mochi::no_grad(#seq.ncols())),
                Line::Indexed => quote_spanned!(span=> ::mochi::no_grad(#seq.len())),
                Line::Chunks(a, size) => {
                    quote_spanned!(span=> ::mochi::no_grad(#seq.len_of(#a).div_ceil(#size)))
                }
            },
            Stage::Repeat { count, .. } => match count {
                Some(n) => quote_spanned!(span=> (#n)),
                None => quote_spanned!(span=> usize::MAX),
            },
            Stage::Cycle => {
                let l = self.len(rest)?;
                quote_spanned!(span=> if #l == 0 { 0 } else { usize::MAX })
            }
            Stage::StepBy(s) => {
                let l = self.len(rest)?;
                quote_spanned!(span=> usize::div_ceil(#l, #s))
            }
            Stage::Skip(n) => {
                let l = self.len(rest)?;
                quote_spanned!(span=> usize::saturating_sub(#l, #n))
            }
            // (The lengths carry no derivative, even read from a field of `self` in a
            // method, `x[..self.n]`, which the activity takes for one.)
            Stage::Take(n) => {
                let l = self.len(rest)?;
                quote_spanned!(span=> ::core::cmp::min(::mochi::no_grad(#l), ::mochi::no_grad(#n)))
            }
            Stage::Zip(o) => {
                let (l, m) = (self.len(rest)?, self.len(o)?);
                quote_spanned!(span=> ::core::cmp::min(::mochi::no_grad(#l), ::mochi::no_grad(#m)))
            }
            Stage::Chain(o) => {
                let (l, m) = (self.len(rest)?, self.len(o)?);
                quote_spanned!(span=> usize::saturating_add(#l, #m))
            }
            Stage::Copied
            | Stage::Rev
            | Stage::Enumerate
            | Stage::Map(_)
            | Stage::Filter(_)
            | Stage::FilterMap(_)
            | Stage::Scan(..) => self.len(rest)?,
        })
    }

    /// The statements that compute the element at position `k` of the stream after
    /// `st`, and the element.
    fn item(&mut self, st: &[Stage], k: TokenStream, body: &mut Vec<TokenStream>) -> Option<Item> {
        let span = self.span;
        let (last, rest) = st.split_last()?;
        Some(match last {
            Stage::Seq {
                seq, start, by_ref, ..
            } => {
                let i = match start {
                    Some(s) => quote_spanned!(span=> (#s) + (#k)),
                    // A sequence whose type is not seen may be an ndarray array of two or
                    // more dimensions (`let s = a.dot(&b); s.iter().fold(..)`), which
                    // `s[k]` does not index: its element `k` in `iter()`'s order is read
                    // at the multi-index `Flat` gives (`k` itself for a slice or `Vec`).
                    None if !known_linear(seq) => {
                        let ix = self.fresh("ix");
                        let at = flat_index(seq, &k, span);
                        body.push(quote_spanned!(span=> let #ix = #at;));
                        quote_spanned!(span=> #ix)
                    }
                    None => k,
                };
                Item::Leaf(syn::parse_quote_spanned!(span=> #seq[#i]), *by_ref)
            }
            Stage::Range { start, end } => Item::Leaf(
                {
                    let end = end.as_ref().map(|e| quote_spanned!(span=> (#e)));
                    syn::parse_quote_spanned!(span=>
                    ::mochi::no_grad(::core::iter::Iterator::nth(&mut ((#start)..#end), #k).unwrap())
                    )
                },
                false,
            ),
            Stage::Windows {
                seq,
                start,
                end,
                size,
                kind,
            } => {
                let (base, len) = kind.bounds(&sub_len(seq, start, end, span), size, &k, span);
                let base = match start {
                    Some(s) => quote_spanned!(span=> (#s) + #base),
                    None => base,
                };
                Item::Window {
                    seq: Box::new(seq.clone()),
                    base,
                    len,
                }
            }
            Stage::StepBy(s) => self.item(rest, quote_spanned!(span=> (#k) * (#s)), body)?,
            Stage::Repeat { value, .. } => Item::Leaf(value.clone(), false),
            Stage::Cycle => {
                let l = self.len(rest)?;
                self.item(rest, quote_spanned!(span=> (#k) % (#l)), body)?
            }
            Stage::Lines {
                seq,
                line: Line::Indexed,
            } => {
                let ix = self.fresh("ix");
                body.push(quote_spanned!(span=>
                    let #ix = ::mochi::no_grad(::mochi::__private::unravel(&#seq, #k));
                ));
                Item::Tuple(vec![
                    Item::Leaf(syn::parse_quote_spanned!(span=> #ix), false),
                    Item::Leaf(syn::parse_quote_spanned!(span=> #seq[#ix]), true),
                ])
            }
            Stage::Lines { seq, line } => {
                let v = self.fresh("line");
                body.push(match line {
                    Line::Along(a) => quote_spanned!(span=> let #v = #seq.index_axis(#a, #k);),
                    Line::Row => quote_spanned!(span=> let #v = #seq.row(#k);),
                    Line::Column => quote_spanned!(span=> let #v = #seq.column(#k);),
                    Line::Chunks(a, size) => quote_spanned!(span=>
                        let #v = #seq.slice_axis(
                            #a,
                            ::mochi::no_grad(::mochi::__private::axis_chunk(#k, #size, #seq.len_of(#a))),
                        );
                    ),
                    Line::Indexed => unreachable!("handled above"),
                });
                Item::Leaf(syn::parse_quote_spanned!(span=> #v), false)
            }
            Stage::Copied => match self.item(rest, k, body)? {
                Item::Leaf(e, _) => Item::Leaf(e, false),
                t => t,
            },
            Stage::Skip(n) => self.item(rest, quote_spanned!(span=> (#k) + (#n)), body)?,
            Stage::Take(_) | Stage::Filter(_) => {
                let it = self.item(rest, k, body)?;
                if let Stage::Filter(c) = last {
                    // The predicate takes the element by reference (`|v| *v > 0.0` after
                    // a `map`, `**v` after `iter()`).
                    // A tuple taken whole (`|p| *p.1 > 1.0` after `enumerate()`): its
                    // parts as the tuple holds them, references where they are.
                    let whole_tuple = matches!(
                        (c.inputs.first(), &it),
                        (Some(Pat::Ident(_)), Item::Tuple(_))
                    );
                    let arg = if whole_tuple {
                        Item::Leaf(syn::parse2(self.value_with_refs(&it)).ok()?, true)
                    } else {
                        by_ref(&it)
                    };
                    let cond = self.apply(c, std::slice::from_ref(&arg), body)?;
                    body.push(quote_spanned!(span=> if !(#cond) { continue; }));
                }
                it
            }
            Stage::Rev => {
                let l = self.len(rest)?;
                self.item(rest, quote_spanned!(span=> (#l) - 1 - (#k)), body)?
            }
            Stage::Enumerate => {
                let it = self.item(rest, k.clone(), body)?;
                Item::Tuple(vec![
                    Item::Leaf(syn::parse_quote_spanned!(span=> (#k)), false),
                    it,
                ])
            }
            Stage::Zip(o) => {
                let a = self.item(rest, k.clone(), body)?;
                let b = self.item(o, k, body)?;
                Item::Tuple(vec![a, b])
            }
            // Element `k` of the first part, or `k - len` of the second, each computed in
            // its branch.
            Stage::Chain(o) => {
                let la = self.len(rest)?;
                let (n, v) = (self.fresh("cn"), self.fresh("cv"));
                let (mut first, mut second) = (Vec::new(), Vec::new());
                let a = self.item(rest, quote_spanned!(span=> #k), &mut first)?;
                let b = self.item(o, quote_spanned!(span=> (#k) - (#n)), &mut second)?;
                let (Item::Leaf(a, by_ref), Item::Leaf(b, by_ref_b)) = (a, b) else {
                    return None;
                };
                if by_ref != by_ref_b {
                    return None;
                }
                body.push(quote_spanned!(span=>
                    let #n = ::mochi::no_grad(#la);
                    let #v = if #k < #n { #(#first)* #a } else { #(#second)* #b };
                ));
                Item::Leaf(syn::parse_quote_spanned!(span=> #v), by_ref)
            }
            Stage::Map(c) | Stage::FilterMap(c) => {
                let it = self.item(rest, k, body)?;
                let v = self.apply(c, &[it], body)?;
                let m = self.fresh("m");
                body.push(quote_spanned!(span=> let #m = #v;));
                Item::Leaf(syn::parse_quote_spanned!(span=> #m), false)
            }
            Stage::Scan(init, c) => {
                // The state lives before the loop; the closure's `*s` is the state.
                let it = self.item(rest, k, body)?;
                let (names, stmts, value) = scan_parts(c)?;
                let mut deref = Vec::new();
                self.bind(&c.inputs[1], &it, body, &mut deref)?;
                let mut block: syn::Block = syn::parse_quote!({ #(#stmts)* #value });
                // One state per name: the whole state, or each part of a tuple state
                // taken apart (`(s1, s2)`), its own variable.
                let states: Vec<syn::Ident> = names.iter().map(|_| self.fresh("state")).collect();
                if let [st] = &states[..] {
                    self.pre.push(quote_spanned!(span=> let mut #st = #init;));
                } else {
                    self.pre
                        .push(quote_spanned!(span=> let (#(mut #states),*) = #init;));
                }
                for (name, st) in names.iter().zip(&states) {
                    let mut sub = ScanState {
                        name,
                        state: st,
                        other: false,
                    };
                    sub.visit_block_mut(&mut block);
                    if sub.other {
                        return None;
                    }
                }
                UnDeref { names: &deref }.visit_block_mut(&mut block);
                let m = self.fresh("m");
                body.push(quote_spanned!(span=> let #m = #block;));
                Item::Leaf(syn::parse_quote_spanned!(span=> #m), false)
            }
        })
    }

    /// Binds the closure's parameters to `items` (by value) and returns its body with
    /// the dereferences of by-reference parameters removed.
    fn apply(
        &mut self,
        c: &syn::ExprClosure,
        items: &[Item],
        body: &mut Vec<TokenStream>,
    ) -> Option<Expr> {
        // The names the items are read through (`x` of a window `x[k + j]`, `y` of an
        // element `y[k]`): a binding of the closure named so (`|(w, x)|` over
        // `x.windows(2).zip(x.windows(5))`, an inner closure's `|p|` over the rows of a
        // table in a chain over `p.windows(2)`) is renamed first, so that it does not
        // take the reads the items are rewritten into. Until 2026-12-07 such reads went
        // to the binding, silently.
        let mut read = std::collections::HashSet::new();
        for it in items {
            item_names(it, &mut read);
        }
        let unshadowed;
        let c = if closure_binds_any(c, &read) {
            let mut copy = c.clone();
            Unshadow {
                names: &read,
                next: 0,
                lets_only: false,
            }
            .visit_expr_closure_mut(&mut copy);
            unshadowed = copy;
            &unshadowed
        } else {
            c
        };
        let mut deref = Vec::new();
        let mut e = (*c.body).clone();
        for (p, it) in c.inputs.iter().zip(items) {
            self.bind_windows(p, it, &mut e, body, &mut deref)?;
        }
        UnDeref { names: &deref }.visit_expr_mut(&mut e);
        // `|&v| { let t = v * 2.0; t } + 1.0`, `|&v| match c { .. } + 1.0`: an operand
        // that is a block, written where a statement may begin, would end the statement
        // there; the body goes in parentheses.
        Some(parenthesised_if_block(e))
    }

    /// [`bind`](Self::bind), except that a window (also one inside a tuple: `|(w, b)|`
    /// over `x.windows(2).zip(y)`) is read in place: its uses in `e` are rewritten.
    fn bind_windows(
        &mut self,
        p: &Pat,
        it: &Item,
        e: &mut Expr,
        body: &mut Vec<TokenStream>,
        deref: &mut Vec<syn::Ident>,
    ) -> Option<()> {
        match (p, it) {
            (Pat::Type(t), _) => self.bind_windows(&t.pat, it, e, body, deref),
            (Pat::Paren(q), _) => self.bind_windows(&q.pat, it, e, body, deref),
            (Pat::Wild(_), Item::Window { .. }) => Some(()),
            (Pat::Ident(w), Item::Window { seq, base, len }) if w.subpat.is_none() => {
                // `|w| … w[j] …`: the window's elements are read from the sequence.
                let mut uses = WindowUses {
                    name: &w.ident,
                    seq,
                    base,
                    len,
                    mutable: false,
                    slices: true,
                    other: false,
                };
                uses.visit_expr_mut(e);
                (!uses.other).then_some(())
            }
            (_, Item::Window { .. }) => None,
            (Pat::Tuple(t), Item::Tuple(items))
                if t.elems.len() == items.len() && contains_window(it) =>
            {
                for (q, it) in t.elems.iter().zip(items) {
                    self.bind_windows(q, it, e, body, deref)?;
                }
                Some(())
            }
            _ => self.bind(p, it, body, deref),
        }
    }

    /// `let p = item;`, by value; names bound to by-reference elements go in `deref`.
    fn bind(
        &mut self,
        p: &Pat,
        it: &Item,
        body: &mut Vec<TokenStream>,
        deref: &mut Vec<syn::Ident>,
    ) -> Option<()> {
        let span = self.span;
        match (p, it) {
            (Pat::Type(t), _) => self.bind(&t.pat, it, body, deref),
            (Pat::Paren(q), _) => self.bind(&q.pat, it, body, deref),
            // `|&v|` of an element by reference: `v` is the value (not given again as a
            // reference to a function of the user's, `sp(v, b)`).
            (Pat::Reference(r), Item::Leaf(e, true)) => {
                self.bind(&r.pat, &Item::Leaf(e.clone(), false), body, deref)
            }
            (Pat::Reference(r), _) => self.bind(&r.pat, it, body, deref),
            (Pat::Wild(_), _) => Some(()),
            // A row read as a sequence: by reference, as the closure had it.
            (Pat::Ident(i), Item::Leaf(e, true))
                if i.subpat.is_none()
                    && i.mutability.is_none()
                    && SEQ_PARAMS.with(|s| s.borrow().contains(&i.ident)) =>
            {
                let n = &i.ident;
                body.push(quote_spanned!(span=> let #n = &#e;));
                Some(())
            }
            (Pat::Ident(i), Item::Leaf(e, by_ref)) if i.subpat.is_none() => {
                let m = &i.mutability;
                let n = &i.ident;
                if *by_ref && CLONED_PARAMS.with(|s| s.borrow().contains(n)) {
                    body.push(quote_spanned!(span=> let #m #n = ::core::clone::Clone::clone(&#e);));
                } else {
                    body.push(quote_spanned!(span=> let #m #n = #e;));
                }
                if *by_ref {
                    deref.push(n.clone());
                }
                Some(())
            }
            (Pat::Ident(i), Item::Tuple(_)) if i.subpat.is_none() => {
                let v = self.value(it);
                let n = &i.ident;
                body.push(quote_spanned!(span=> let #n = #v;));
                Some(())
            }
            (Pat::Tuple(t), Item::Tuple(items)) if t.elems.len() == items.len() => {
                for (q, it) in t.elems.iter().zip(items) {
                    self.bind(q, it, body, deref)?;
                }
                Some(())
            }
            // A tuple element by reference (`|(a, b)|` over a `Vec<(f64, f64)>`): its
            // parts by value, read as the closure reads references.
            (Pat::Tuple(t), Item::Leaf(e, true))
                if t.elems.iter().all(|q| {
                    matches!(q, Pat::Ident(i) if i.subpat.is_none() && i.by_ref.is_none())
                        || matches!(q, Pat::Wild(_))
                }) =>
            {
                // (A part read as a sequence, `self.logit(x)` of `|(x, y)|` over a
                // `&[(Vec<f64>, f64)]`: that part by reference, as the closure had it.)
                let seq_part = t.elems.iter().any(|q| {
                    matches!(q, Pat::Ident(i) if SEQ_PARAMS.with(|s| s.borrow().contains(&i.ident)))
                });
                if seq_part {
                    for (k, q) in t.elems.iter().enumerate() {
                        let Pat::Ident(i) = q else { continue };
                        let (n, k) = (&i.ident, syn::Index::from(k));
                        if SEQ_PARAMS.with(|s| s.borrow().contains(n)) {
                            body.push(quote_spanned!(span=> let #n = &#e.#k;));
                        } else {
                            body.push(quote_spanned!(span=> let #n = #e.#k;));
                            deref.push(n.clone());
                        }
                    }
                    return Some(());
                }
                body.push(quote_spanned!(span=> let #t = #e;));
                for q in &t.elems {
                    if let Pat::Ident(i) = q {
                        deref.push(i.ident.clone());
                    }
                }
                Some(())
            }
            // A tuple of integers by value (`indexed_iter`'s `(i, j)`): destructured.
            (Pat::Tuple(t), Item::Leaf(e, false))
                if t.elems
                    .iter()
                    .all(|q| matches!(q, Pat::Ident(_) | Pat::Wild(_))) =>
            {
                body.push(quote_spanned!(span=> let #t = #e;));
                Some(())
            }
            _ => None,
        }
    }

    /// [`value`](Self::value), with the elements read by reference borrowed, as the
    /// tuple an adapter yields holds them (`(k, &x[k])` of `enumerate()`).
    fn value_with_refs(&self, it: &Item) -> TokenStream {
        let span = self.span;
        match it {
            Item::Leaf(e, true) => quote_spanned!(span=> &#e),
            Item::Tuple(items) => {
                let v = items.iter().map(|i| self.value_with_refs(i));
                quote_spanned!(span=> (#(#v,)*))
            }
            other => self.value(other),
        }
    }

    fn value(&self, it: &Item) -> TokenStream {
        let span = self.span;
        match it {
            // A window used other than through a closure's `w[j]`: not reached, since
            // `consumer` and `for_loop` refuse chains that end in windows.
            Item::Window { seq, base, len } => {
                quote_spanned!(span=> &#seq[#base..#base + #len])
            }
            Item::Leaf(e, _) => quote_spanned!(span=> #e),
            Item::Tuple(items) => {
                let v = items.iter().map(|i| self.value(i));
                quote_spanned!(span=> (#(#v,)*))
            }
        }
    }

    fn zero(&self, ty: Option<&syn::Type>, one: bool) -> TokenStream {
        let span = self.span;
        let v = if one { "1.0" } else { "0.0" };
        let suffix = match ty {
            Some(syn::Type::Path(p)) if p.path.is_ident("f64") || p.path.is_ident("f32") => {
                p.path.get_ident().map(|i| i.to_string())
            }
            // A generic scalar (`sum::<T>()`): its zero or one, typed.
            Some(t @ syn::Type::Path(_)) => {
                let f = if one {
                    quote_spanned!(span=> seed)
                } else {
                    quote_spanned!(span=> zero)
                };
                return quote_spanned!(span=> ::mochi::__private::#f::<#t>());
            }
            _ => match self.float_ty {
                Some(t) => return crate::rewrite::typed_float(v, t, span),
                None => None,
            },
        };
        let lit = syn::LitFloat::new(&format!("{v}{}", suffix.unwrap_or_default()), span);
        quote_spanned!(span=> #lit)
    }

    /// `chain.consumer(..)` as a block with an index loop, when `e` is one.
    pub fn consumer(
        &mut self,
        e: &syn::ExprMethodCall,
        collect_ty: Option<&syn::Type>,
    ) -> Option<Expr> {
        self.span = e.method.span();
        let span = self.span;
        let name = e.method.to_string();
        let turbofish = e.turbofish.as_ref().and_then(|t| match t.args.first() {
            Some(syn::GenericArgument::Type(ty)) => Some(ty.clone()),
            _ => None,
        });
        // `let total: usize = (1..=x.len()).map(|i| i * i).sum();`, `.sum::<i64>()`: an
        // integer, which carries no derivative, computed as written.
        // So is a sum of `Option`s or `Result`s (`let s: Option<f64> = ...sum();`), which
        // the lowering reports as a rule it lacks.
        if matches!(name.as_str(), "sum" | "product")
            && turbofish
                .as_ref()
                .or(collect_ty)
                .is_some_and(crate::activity::not_a_float_sum)
        {
            return None;
        }
        let mut st = Vec::new();
        // (A chain the lowering takes as a rule, or whose source is not a variable,
        // `x.to_vec().iter()`, still gets its copied elements as references.)
        if !stages(&e.receiver, &mut st) || lowering_handles(e, &st) {
            return copied_into_map(e);
        }
        // `filter` changes positions: only `map` and other filters may follow it.
        if let Some(f) = st.iter().position(skips) {
            if st[f..].iter().any(|s| {
                !matches!(
                    s,
                    Stage::Filter(_) | Stage::FilterMap(_) | Stage::Map(_) | Stage::Copied
                )
            }) {
                return None;
            }
            if name == "collect" {
                return None;
            }
        }
        if !scan_in_order(&st) {
            return None;
        }
        let (n, k, len, body, item) = self.loop_head(&st)?;
        let pre = std::mem::take(&mut self.pre);
        let acc = self.fresh("acc");
        let (init, step, result) = match (name.as_str(), e.args.len()) {
            ("sum", 0) | ("product", 0) => {
                let v = self.value(&item);
                let z = self.zero(turbofish.as_ref(), name == "product");
                let op = if name == "sum" {
                    quote_spanned!(span=> +=)
                } else {
                    quote_spanned!(span=> *=)
                };
                (
                    quote_spanned!(span=> let mut #acc = #z;),
                    quote_spanned!(span=> #acc #op #v;),
                    quote_spanned!(span=> #acc),
                )
            }
            ("fold", 2) => {
                let init = &e.args[0];
                let c = closure(&e.args[1], 2)?;
                let mut pre = Vec::new();
                let mut deref = Vec::new();
                let acc_pat = &c.inputs[0];
                let mut acc_bind = Vec::new();
                self.bind(
                    acc_pat,
                    &Item::Leaf(syn::parse_quote_spanned!(span=> #acc), false),
                    &mut acc_bind,
                    &mut deref,
                )?;
                let mut b = (*c.body).clone();
                // (`p.chunks(2).fold(h, |h, w| w[0] * h + w[1])`: a piece read in place.)
                self.bind_windows(&c.inputs[1], &item, &mut b, &mut pre, &mut deref)?;
                UnDeref { names: &deref }.visit_expr_mut(&mut b);
                (
                    quote_spanned!(span=> let mut #acc = #init;),
                    quote_spanned!(span=> #(#acc_bind)* #(#pre)* #acc = #b;),
                    quote_spanned!(span=> #acc),
                )
            }
            ("collect", 0) => {
                let ty = turbofish.as_ref().or(collect_ty)?;
                let elem = vec_elem(ty)?;
                // `Vec<(f64, f64)>`: a tuple of zeros.
                let z = match elem {
                    Some(syn::Type::Tuple(t)) if !t.elems.is_empty() => {
                        let parts: Vec<TokenStream> =
                            t.elems.iter().map(|e| self.zero(Some(e), false)).collect();
                        quote_spanned!(span=> (#(#parts,)*))
                    }
                    _ => self.zero(elem, false),
                };
                let v = self.value(&item);
                // `Vec<Vec<f64>>` of rows each collected in the closure (`a.iter().map(|u|
                // b.iter().map(|v| u * v).collect()).collect()`): the row bound with its
                // type, which the inner chain's `collect` then has.
                let step = match elem {
                    Some(t @ syn::Type::Path(_)) if vec_elem(t).is_some() => {
                        let row = self.fresh("row");
                        quote_spanned!(span=> let #row: #t = #v; #acc[#k] = #row;)
                    }
                    _ => quote_spanned!(span=> #acc[#k] = #v;),
                };
                (
                    quote_spanned!(span=> let mut #acc = ::std::vec![#z; #n];),
                    step,
                    quote_spanned!(span=> #acc),
                )
            }
            ("for_each", 1) => {
                let c = closure(&e.args[0], 1)?;
                let mut pre = Vec::new();
                let mut deref = Vec::new();
                self.bind(&c.inputs[0], &item, &mut pre, &mut deref)?;
                let mut b = (*c.body).clone();
                UnDeref { names: &deref }.visit_expr_mut(&mut b);
                (
                    TokenStream::new(),
                    quote_spanned!(span=> #(#pre)* #b;),
                    TokenStream::new(),
                )
            }
            _ => return None,
        };
        // `pre` first: the state of a `scan`, counts the length may read.
        Some(syn::parse_quote_spanned!(span=> {
            #(#pre)*
            let #n = #len;
            #init
            for #k in 0..#n {
                #(#body)*
                #step
            }
            #result
        }))
    }

    /// `for pat in chain { body }` as an index loop, when the chain needs one (an
    /// adapter the lowering does not reverse by itself).
    pub fn for_loop(&mut self, f: &syn::ExprForLoop) -> Option<Expr> {
        self.span = f.for_token.span;
        let span = self.span;
        if let Some(r) = self.windows(f) {
            return Some(r);
        }
        let mut st = Vec::new();
        if !stages(&f.expr, &mut st) {
            return None;
        }
        // The lowering reverses `x.iter()`, `.enumerate()` and `.zip(y.iter())` of
        // variables itself.
        let simple = st.iter().all(|s| {
            matches!(
                s,
                Stage::Seq {
                    start: None,
                    end: None,
                    ..
                } | Stage::Enumerate
                    | Stage::Copied
            ) || matches!(s, Stage::Zip(o) if matches!(o[..], [Stage::Seq { .. }]))
        }) && st.iter().filter(|s| matches!(s, Stage::Zip(_))).count() <= 1;
        if simple || matches!(st[..], [Stage::Range { .. }]) {
            return None;
        }
        if !scan_in_order(&st) {
            return None;
        }
        let (n, k, len, mut body, item) = self.loop_head(&st)?;
        let pre = std::mem::take(&mut self.pre);
        let mut deref = Vec::new();
        // (A piece among the elements, `for (a, w) in x.iter().zip(y.chunks(2))`, is read
        // in place.)
        let mut e = Expr::Block(syn::ExprBlock {
            attrs: Vec::new(),
            label: None,
            block: f.body.clone(),
        });
        self.bind_windows(&f.pat, &item, &mut e, &mut body, &mut deref)?;
        let Expr::Block(syn::ExprBlock { block: mut b, .. }) = e else {
            return None;
        };
        UnDeref { names: &deref }.visit_block_mut(&mut b);
        let stmts = &b.stmts;
        let label = &f.label;
        Some(syn::parse_quote_spanned!(span=> {
            #(#pre)*
            let #n = #len;
            #label for #k in 0..#n {
                #(#body)*
                #(#stmts)*
            }
        }))
    }
}

impl Writer<'_> {
    /// `for w in x.windows(m) { … w[j] … }` → `for k in 0..x.len() + 1 - m { … x[k + j] … }`,
    /// and `chunks_exact(m)`, `chunks(m)` with `x[k * m + j]`, when the window is only
    /// indexed, asked its `len()`, iterated with `iter()` or passed to a call. Two zipped
    /// (`for (a, b) in x.windows(2).zip(y.windows(2))`, the trapezoidal rule) run to the
    /// shorter count.
    fn windows(&mut self, f: &syn::ExprForLoop) -> Option<Expr> {
        let span = self.span;
        // (the pieces' call, the name bound to each piece)
        // `for (i, w) in x.windows(m).enumerate()`: the piece's number is the loop's.
        let mut counter: Option<&Pat> = None;
        let parts: Vec<(&syn::ExprMethodCall, &syn::Ident)> = match (&*f.expr, &*f.pat) {
            (Expr::MethodCall(m), Pat::Ident(w)) if Pieces::of(&m.method.to_string()).is_some() => {
                vec![(m, &w.ident)]
            }
            (Expr::MethodCall(en), Pat::Tuple(t))
                if en.method == "enumerate" && en.args.is_empty() && t.elems.len() == 2 =>
            {
                let (Expr::MethodCall(m), Pat::Ident(w)) = (&*en.receiver, &t.elems[1]) else {
                    return None;
                };
                Pieces::of(&m.method.to_string())?;
                counter = Some(&t.elems[0]);
                vec![(m, &w.ident)]
            }
            (Expr::MethodCall(z), Pat::Tuple(t))
                if z.method == "zip" && z.args.len() == 1 && t.elems.len() == 2 =>
            {
                let (Expr::MethodCall(a), Expr::MethodCall(b)) = (&*z.receiver, &z.args[0]) else {
                    return None;
                };
                let (Pat::Ident(wa), Pat::Ident(wb)) = (&t.elems[0], &t.elems[1]) else {
                    return None;
                };
                if wa.ident == wb.ident {
                    return None;
                }
                vec![(a, &wa.ident), (b, &wb.ident)]
            }
            _ => return None,
        };
        let k = self.fresh("k");
        let mut body = f.body.clone();
        let mut snapshots = Vec::new();
        let mut counts = Vec::new();
        for (m, w) in parts {
            let kind = Pieces::of(&m.method.to_string())?;
            if m.args.len() != 1 {
                return None;
            }
            let (x, start, end) = sequence(&m.receiver)?;
            // The reads `w[j]` become `x[base + j]` (up to a `let` that binds `w` again):
            // not when the body binds a name of the sequence again (they would read the
            // new one).
            let mut names = Vec::new();
            idents_in(&x, &mut names);
            if !crate::desugar::names_changed(&f.body.stmts, &names).is_empty() {
                return None;
            }
            // The size as the loop began (the body may assign the variable it was read
            // from).
            let size: Expr = match &m.args[0] {
                Expr::Lit(l) => Expr::Lit(l.clone()),
                other => {
                    let n = self.fresh("size");
                    snapshots.push(quote_spanned!(span=> let #n: usize = #other;));
                    syn::parse_quote!(#n)
                }
            };
            // A sub-slice's bounds as the loop began too (`for w in x[1..].windows(2)`).
            let mut bound = |b: Option<Expr>, what: &str| {
                b.map(|b| -> Expr {
                    let n = self.fresh(what);
                    snapshots.push(quote_spanned!(span=> let #n: usize = #b;));
                    syn::parse_quote!(#n)
                })
            };
            let (start, end) = (bound(start, "start"), bound(end, "end"));
            let n_x = sub_len(&x, &start, &end, span);
            let (base, len) = kind.bounds(&n_x, &size, &quote_spanned!(span=> #k), span);
            let base = match &start {
                Some(s) => quote_spanned!(span=> #s + #base),
                None => base,
            };
            let mut sub = WindowUses {
                name: w,
                seq: &x,
                base: &base,
                len: &len,
                mutable: false,
                slices: true,
                other: false,
            };
            sub.visit_block_mut(&mut body);
            if sub.other {
                return None;
            }
            counts.push(kind.count(&n_x, &size, span));
        }
        let n = match &counts[..] {
            [one] => one.clone(),
            [a, b] => quote_spanned!(span=> ::core::cmp::min(#a, #b)),
            _ => return None,
        };
        let stmts = &body.stmts;
        let label = &f.label;
        let counter = counter.map(|c| quote_spanned!(span=> let #c = #k;));
        Some(
            syn::parse_quote_spanned!(span=> { #(#snapshots)* #label for #k in 0..#n { #counter #(#stmts)* } }),
        )
    }
}

/// The single-name paths in `e` (a sequence such as `x`, `s.rows`, `x[a..b]`).
pub(crate) fn idents_in(e: &Expr, out: &mut Vec<syn::Ident>) {
    struct I<'a>(&'a mut Vec<syn::Ident>);
    impl<'ast> syn::visit::Visit<'ast> for I<'_> {
        fn visit_expr_path(&mut self, p: &'ast syn::ExprPath) {
            if let Some(i) = p.path.get_ident() {
                self.0.push(i.clone());
            }
        }
    }
    syn::visit::Visit::visit_expr(&mut I(out), e);
}

/// `w[j]` → `x[base + j]`, `w.len()` → the window's length, `w.iter()` →
/// `x[base..base + len].iter()`, `w` as a call argument → `&x[base..base + len]` (`&mut`
/// for a mutable window); any other use of `w` is noted in `other`.
pub struct WindowUses<'a> {
    pub name: &'a syn::Ident,
    pub seq: &'a Expr,
    pub base: &'a TokenStream,
    pub len: &'a TokenStream,
    /// The window borrows the sequence mutably (`split_at_mut`): passed on as `&mut`.
    pub mutable: bool,
    /// The sequence can be cut by a range (`x[a..b]`); an ndarray array cannot, so there
    /// a use of the window as a whole is noted in `other`.
    pub slices: bool,
    pub other: bool,
}

impl WindowUses<'_> {
    fn is_w(&self, e: &Expr) -> bool {
        matches!(e, Expr::Path(p) if p.path.get_ident() == Some(self.name))
    }
    fn slice(&mut self, span: Span) -> TokenStream {
        self.other |= !self.slices;
        let (x, base, len) = (self.seq, self.base, self.len);
        quote_spanned!(span=> #x[#base..#base + #len])
    }
    /// Rewrites the window among `args`; `true` when a mutable window was passed (as the
    /// variable `__mochi_wt`, which [`write_back`](Self::write_back) then provides).
    fn args(&mut self, args: &mut syn::punctuated::Punctuated<Expr, syn::Token![,]>) -> bool {
        let mut passed = false;
        for a in args.iter_mut() {
            if self.is_w(a) {
                let span = a.span();
                *a = if self.mutable {
                    passed = true;
                    syn::parse_quote_spanned!(span=> &mut __mochi_wt)
                } else {
                    let s = self.slice(span);
                    syn::parse_quote_spanned!(span=> &#s)
                };
            } else {
                self.visit_expr_mut(a);
            }
        }
        passed
    }
    /// A call given a mutable window: the window's elements copied into `__mochi_wt`,
    /// the call, and the elements written back (a `&mut` sub-slice cannot be passed to
    /// a derived rule; a variable can).
    fn write_back(&self, call: &Expr, span: Span) -> Expr {
        let (x, base, len) = (self.seq, self.base, self.len);
        syn::parse_quote_spanned!(span=> {
            let mut __mochi_wt = ::mochi::no_grad(#x[#base..#base + #len].to_vec());
            for __mochi_wj in 0..(#len) {
                __mochi_wt[__mochi_wj] = #x[#base + __mochi_wj];
            }
            let __mochi_wr = #call;
            for __mochi_wj in 0..(#len) {
                #x[#base + __mochi_wj] = __mochi_wt[__mochi_wj];
            }
            __mochi_wr
        })
    }
}

impl WindowUses<'_> {
    /// Whether `p` binds the window's name.
    fn binds(&self, p: &Pat) -> bool {
        let mut names = Vec::new();
        crate::activity::pat_names(p, &mut names);
        names.iter().any(|n| self.name == n)
    }
}

impl VisitMut for WindowUses<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        let span = e.span();
        match e {
            // A range of the window (`w[..k].to_vec()`, `&w[1..3]`): the range of the
            // sequence it is, with the checks of slicing the window (bounds made of
            // names, literals and arithmetic, read twice). Otherwise left as written, the
            // window with it.
            Expr::Index(i) if self.is_w(&i.expr) && matches!(&*i.index, Expr::Range(_)) => {
                let Expr::Range(r) = &*i.index else {
                    unreachable!()
                };
                let plain = |b: &Option<Box<Expr>>| {
                    b.as_ref().is_none_or(|b| crate::desugar::plain_index(b))
                };
                if !plain(&r.start) || !plain(&r.end) || !self.slices {
                    self.other = true;
                    return;
                }
                let (x, base, len) = (self.seq, self.base, self.len);
                let a = match &r.start {
                    Some(a) => quote_spanned!(span=> (#a)),
                    None => quote_spanned!(span=> 0usize),
                };
                let b = match (&r.end, &r.limits) {
                    (Some(b), syn::RangeLimits::Closed(_)) => quote_spanned!(span=> (#b) + 1),
                    (Some(b), _) => quote_spanned!(span=> (#b)),
                    (None, _) => quote_spanned!(span=> (#len)),
                };
                *e = syn::parse_quote_spanned!(span=>
                    #x[(#base + #a)..(#base + #a + ::mochi::__private::window_len(#len, #a, #b))]
                );
            }
            Expr::Index(i) if self.is_w(&i.expr) => {
                self.visit_expr_mut(&mut i.index);
                let (x, base, j, len) = (self.seq, self.base, &i.index, self.len);
                *e = syn::parse_quote_spanned!(span=> #x[::mochi::__private::window_at(#base, #j, #len)]);
            }
            Expr::MethodCall(m) if self.is_w(&m.receiver) && m.args.is_empty() => {
                match m.method.to_string().as_str() {
                    "len" => {
                        let len = self.len;
                        *e = syn::parse_quote_spanned!(span=> (#len));
                    }
                    "is_empty" => {
                        let len = self.len;
                        *e = syn::parse_quote_spanned!(span=> (#len == 0));
                    }
                    "iter" => {
                        let s = self.slice(span);
                        *e = syn::parse_quote_spanned!(span=> #s.iter());
                    }
                    // (`for row in bottom.iter_mut()` of `split_at_mut`'s half.)
                    "iter_mut" if self.mutable => {
                        let s = self.slice(span);
                        *e = syn::parse_quote_spanned!(span=> #s.iter_mut());
                    }
                    _ => self.other = true,
                }
            }
            // `for v in w` (the window's elements by reference): `for v in w.iter()`
            // (`w.iter_mut()` for `split_at_mut`'s half).
            Expr::ForLoop(f) if self.is_w(&f.expr) => {
                let s = self.slice(span);
                *f.expr = if self.mutable {
                    syn::parse_quote_spanned!(span=> #s.iter_mut())
                } else {
                    syn::parse_quote_spanned!(span=> #s.iter())
                };
                let mut names = Vec::new();
                crate::activity::pat_names(&f.pat, &mut names);
                if !names.iter().any(|n| self.name == n) {
                    self.visit_block_mut(&mut f.body);
                }
            }
            // `&w`, as an inlined closure's `&[f64]` parameter receives the window: the
            // sub-slice borrowed.
            Expr::Reference(r) if r.mutability.is_none() && !self.mutable && self.is_w(&r.expr) => {
                let s = self.slice(span);
                *e = syn::parse_quote_spanned!(span=> &#s);
            }
            // The position of element `j` of the window (`flat_index`, which an element
            // loop over a name the macro does not know to be linear reads): `j` itself.
            Expr::Call(_) if flat_index_of(e).is_some_and(|(w, _)| self.is_w(w)) => {
                let Some((_, j)) = flat_index_of(e) else {
                    unreachable!()
                };
                let j = j.clone();
                *e = syn::parse_quote_spanned!(span=> (#j));
            }
            // `elements_len(&w)`, the bound of `for e in w.iter_mut()` written as an index
            // loop: the window's length.
            Expr::Call(c)
                if c.args.len() == 1
                    && matches!(&*c.func, Expr::Path(p)
                        if p.path.segments.last().is_some_and(|s| s.ident == "elements_len"))
                    && matches!(&c.args[0], Expr::Reference(r) if self.is_w(&r.expr)) =>
            {
                let len = self.len;
                *e = syn::parse_quote_spanned!(span=> (#len));
            }
            Expr::Call(c) => {
                self.visit_expr_mut(&mut c.func);
                if self.args(&mut c.args) {
                    *e = self.write_back(e, span);
                }
            }
            Expr::MethodCall(m) => {
                self.visit_expr_mut(&mut m.receiver);
                if self.args(&mut m.args) {
                    *e = self.write_back(e, span);
                }
            }
            _ if self.is_w(e) => self.other = true,
            // A `for`, an `if let` or a `while let` whose pattern binds the window's name
            // (`for w in ys.windows(2)` after `let (w, ys) = x.split_at(2);`): its body
            // reads that binding. Until 2026-12-07 it was rewritten as the window's,
            // silently.
            Expr::ForLoop(f) if self.binds(&f.pat) => self.visit_expr_mut(&mut f.expr),
            Expr::If(i) if matches!(&*i.cond, Expr::Let(l) if self.binds(&l.pat)) => {
                if let Expr::Let(l) = &mut *i.cond {
                    self.visit_expr_mut(&mut l.expr);
                }
                if let Some((_, e)) = i.else_branch.as_mut() {
                    self.visit_expr_mut(e);
                }
            }
            Expr::While(w) if matches!(&*w.cond, Expr::Let(l) if self.binds(&l.pat)) => {
                if let Expr::Let(l) = &mut *w.cond {
                    self.visit_expr_mut(&mut l.expr);
                }
            }
            _ => syn::visit_mut::visit_expr_mut(self, e),
        }
    }
    // (A `match` arm binding the name, `Some(w) => ..`: its guard and body read it.)
    fn visit_arm_mut(&mut self, a: &mut syn::Arm) {
        if !self.binds(&a.pat) {
            syn::visit_mut::visit_arm_mut(self, a);
        }
    }
    fn visit_macro_mut(&mut self, m: &mut syn::Macro) {
        if !crate::activity::tokens_mention(&m.tokens, &|i| i == self.name) {
            return;
        }
        // Macros whose body is expressions (`vec![w[0], 1.0]`, `vec![w[0]; n]`,
        // `assert!(..)`): rewritten inside.
        if !crate::rewrite::visit_macro_exprs(m, self) {
            self.other = true;
        }
    }
    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        // A `let` binding the window's name ends its scope for the rest of the block.
        for s in b.stmts.iter_mut() {
            if let syn::Stmt::Local(l) = s {
                let mut names = Vec::new();
                crate::activity::pat_names(&l.pat, &mut names);
                if let Some(init) = &mut l.init {
                    self.visit_expr_mut(&mut init.expr);
                }
                if names.iter().any(|n| self.name == n) {
                    return;
                }
                continue;
            }
            self.visit_stmt_mut(s);
        }
    }
    fn visit_expr_closure_mut(&mut self, c: &mut syn::ExprClosure) {
        let mut names = Vec::new();
        for p in &c.inputs {
            crate::activity::pat_names(p, &mut names);
        }
        if !names.iter().any(|n| self.name == n) {
            self.visit_expr_mut(&mut c.body);
        }
    }
}

impl Writer<'_> {
    /// `chain.reduce(f).unwrap()`, `chain.max_by(cmp).unwrap()`, `chain.min_by(cmp).unwrap()`
    /// (`cmp` comparing its arguments with `partial_cmp(..).unwrap()` or `total_cmp`) as a
    /// loop from the first element. `e` is the `reduce`/`max_by`/`min_by` call.
    pub fn reduce_unwrap(&mut self, e: &syn::ExprMethodCall) -> Option<Expr> {
        self.span = e.method.span();
        let span = self.span;
        let name = e.method.to_string();
        if e.args.len() != 1 {
            return None;
        }
        let mut st = Vec::new();
        if !stages(&e.receiver, &mut st)
            || st.iter().any(|s| skips(s) || matches!(s, Stage::Scan(..)))
        {
            return None;
        }
        let (n, k, acc) = (self.fresh("n"), self.fresh("k"), self.fresh("acc"));
        let len = self.len(&st)?;
        let mut first = Vec::new();
        let item0 = self.item(&st, quote_spanned!(span=> 0), &mut first)?;
        let v0 = self.value(&item0);
        let mut body = Vec::new();
        let item = self.item(&st, quote_spanned!(span=> #k), &mut body)?;
        let step = match name.as_str() {
            "reduce" => {
                let c = closure(&e.args[0], 2)?;
                let mut deref = Vec::new();
                let mut binds = Vec::new();
                self.bind(
                    &c.inputs[0],
                    &Item::Leaf(syn::parse_quote_spanned!(span=> #acc), false),
                    &mut binds,
                    &mut deref,
                )?;
                self.bind(&c.inputs[1], &item, &mut binds, &mut deref)?;
                let mut b = (*c.body).clone();
                UnDeref { names: &deref }.visit_expr_mut(&mut b);
                quote_spanned!(span=> #(#binds)* #acc = #b;)
            }
            // Any other comparator (`|a, b| (*a - c).abs().partial_cmp(&(*b - c).abs())
            // .unwrap()`, a key compared), or a key (`|v| (v * 10.0).round() as i64`):
            // called as written on the values, without a derivative (an ordering has
            // none), keeping what `Iterator::max_by` keeps (the last of equal elements,
            // `min_by` the first; `*_by_key` alike). It takes references to the elements
            // as the chain yields them (`&&f64` from `x.iter()`). (Elements that are
            // tuples, `enumerate()`'s, have their own rewrite.)
            "max_by" | "min_by" | "max_by_key" | "min_by_key"
                if matches!(item, Item::Leaf(..))
                    && (name.ends_with("_key") || comparator(&e.args[0]).is_none()) =>
            {
                let by_key = name.ends_with("_key");
                let f = match &e.args[0] {
                    Expr::Closure(c) if c.inputs.len() == if by_key { 1 } else { 2 } => &e.args[0],
                    Expr::Path(_) => &e.args[0],
                    _ => return None,
                };
                let by_ref = matches!(item, Item::Leaf(_, true));
                let v = self.value(&item);
                let c = self.fresh("c");
                let r = if by_ref {
                    quote_spanned!(span=> &)
                } else {
                    TokenStream::new()
                };
                let replace = if name.starts_with("max") {
                    quote_spanned!(span=> !=)
                } else {
                    quote_spanned!(span=> ==)
                };
                let order = if by_key {
                    quote_spanned!(span=> ordering_by_key)
                } else {
                    quote_spanned!(span=> ordering)
                };
                quote_spanned!(span=>
                    let #c = #v;
                    if ::mochi::no_grad(::mochi::__private::#order(#r &#acc, #r &#c, #f)) #replace ::core::cmp::Ordering::Greater {
                        #acc = #c;
                    }
                )
            }
            "max_by" | "min_by" => {
                let flipped = comparator(&e.args[0])?;
                let v = self.value(&item);
                let c = self.fresh("c");
                // `max_by` keeps the last of equal maxima, `min_by` the first of equal minima.
                let better = match (name == "max_by", flipped) {
                    (true, false) | (false, true) => quote_spanned!(span=> #c >= #acc),
                    (true, true) | (false, false) => quote_spanned!(span=> #c < #acc),
                };
                quote_spanned!(span=> let #c = #v; if #better { #acc = #c; })
            }
            _ => return None,
        };
        Some(syn::parse_quote_spanned!(span=> {
            let #n = #len;
            if #n == 0 {
                panic!("called `Option::unwrap()` on a `None` value");
            }
            #(#first)*
            let mut #acc = #v0;
            for #k in 1..#n {
                #(#body)*
                #step
            }
            #acc
        }))
    }
}

impl Writer<'_> {
    /// `a.map_axis(axis, f)` and `a.fold_axis(axis, init, f)` of a two-dimensional
    /// array as a loop over the lanes along `axis` (columns for axis 0, rows for 1),
    /// writing a vector of the function's float type. The lanes, their count and the
    /// vector come from the array's rule support (`__private::lanes`, `across`,
    /// `lane_index`, `lane_values`), so the macro names no array type; arrays of other
    /// ranks fail to compile at the method, with a message that says so.
    pub fn axis_reduce(&mut self, e: &syn::ExprMethodCall) -> Option<Expr> {
        self.span = e.method.span();
        let span = self.span;
        let ty = self.float_ty?.clone();
        let name = e.method.to_string();
        let (seq, None, None) = sequence(&e.receiver)? else {
            return None;
        };
        // The axis is any expression (a constructor, a variable); it is evaluated once.
        let along = e.args.first()?;
        let (ax, n, i, r, m) = (
            self.fresh("ax"),
            self.fresh("n"),
            self.fresh("i"),
            self.fresh("r"),
            self.fresh("m"),
        );
        // `lanes` accepts two-dimensional arrays only, with a message saying so.
        let count = quote_spanned!(span=> ::mochi::no_grad(::mochi::__private::lanes(&#seq, #ax)));
        let other = quote_spanned!(span=> #m);
        let lane = quote_spanned!(span=> #seq.index_axis(::mochi::__private::across(#ax), #i));
        let step = match (name.as_str(), e.args.len()) {
            ("map_axis", 2) => {
                let c = closure(&e.args[1], 1)?;
                let mut body = Vec::new();
                let mut deref = Vec::new();
                let l = self.fresh("lane");
                body.push(quote_spanned!(span=> let #l = #lane;));
                self.bind(
                    &c.inputs[0],
                    &Item::Leaf(syn::parse_quote_spanned!(span=> #l), false),
                    &mut body,
                    &mut deref,
                )?;
                let b = &c.body;
                quote_spanned!(span=> #(#body)* #r[#i] = #b;)
            }
            ("fold_axis", 3) => {
                let init = &e.args[1];
                let c = closure(&e.args[2], 2)?;
                let (acc, j) = (self.fresh("acc"), self.fresh("j"));
                let elem = quote_spanned!(span=> #seq[::mochi::__private::lane_index(#ax, #i, #j)]);
                let mut binds = Vec::new();
                let mut deref = Vec::new();
                self.bind(
                    &c.inputs[0],
                    &Item::Leaf(syn::parse_quote_spanned!(span=> #acc), false),
                    &mut binds,
                    &mut deref,
                )?;
                self.bind(
                    &c.inputs[1],
                    &Item::Leaf(syn::parse_quote_spanned!(span=> #elem), true),
                    &mut binds,
                    &mut deref,
                )?;
                let mut b = (*c.body).clone();
                UnDeref { names: &deref }.visit_expr_mut(&mut b);
                quote_spanned!(span=>
                    let mut #acc = #init;
                    for #j in 0..#other {
                        #(#binds)*
                        #acc = #b;
                    }
                    #r[#i] = #acc;
                )
            }
            _ => return None,
        };
        Some(syn::parse_quote_spanned!(span=> {
            let #ax = ::mochi::no_grad(#along);
            let #n = #count;
            let #m = ::mochi::no_grad(#seq.len_of(#ax));
            let mut #r = ::mochi::no_grad(::mochi::__private::lane_values::<#ty>(#n));
            for #i in 0..#n {
                #step
            }
            #r
        }))
    }

    /// `chain.last().unwrap()` and `chain.next().unwrap()`: the element at position
    /// `n - 1` or `0`, computed once. With a `filter` (or `filter_map`) in the chain, and
    /// for `chain.find(p).unwrap()` (`filter(p).next()`), the elements are walked and
    /// the last one kept (the first: the walk stops there) in an `Option`, unwrapped
    /// after the loop as the chain's `unwrap` would be.
    pub fn end_unwrap(&mut self, e: &syn::ExprMethodCall, as_option: bool) -> Option<Expr> {
        self.span = e.method.span();
        let span = self.span;
        let mut st = Vec::new();
        // `nth(k)`: the element at position `k` (the `k`-th one kept, with a `filter`).
        let mut nth = None;
        let last = match (e.method.to_string().as_str(), e.args.len()) {
            ("last" | "next_back", 0) => true,
            ("next", 0) => false,
            ("nth", 1) => {
                nth = Some(e.args[0].clone());
                false
            }
            ("find", 1) => {
                let c = closure(&e.args[0], 1)?;
                if !stages(&e.receiver, &mut st) {
                    return None;
                }
                st.push(Stage::Filter(c));
                false
            }
            _ => return None,
        };
        if st.is_empty() && !stages(&e.receiver, &mut st) {
            return None;
        }
        // A `scan`'s state is that of every element before: its chain is walked from the
        // start (`scan(0.0, |s, &v| { *s += v; Some(*s) }).last()`), its state first.
        let scan = st.iter().any(|s| matches!(s, Stage::Scan(..)));
        if scan && !scan_in_order(&st) {
            return None;
        }
        let (n, k) = (self.fresh("n"), self.fresh("k"));
        let len = self.len(&st)?;
        let mut body = Vec::new();
        let item = self.item(&st, quote_spanned!(span=> #k), &mut body)?;
        // (A scan's state, hoisted counts: before the walk.)
        let before = std::mem::take(&mut self.pre);
        let v = self.value(&item);
        if scan || st.iter().any(skips) {
            let found = self.fresh("found");
            let stop = (!last).then(|| quote_spanned!(span=> break;));
            // `nth(j)`: the kept elements are counted, and the `j`-th one stops the walk.
            // (`as_option`: the `Option` itself, for `if let Some(v) = chain.last()`.)
            let end = if as_option {
                quote_spanned!(span=> #found)
            } else {
                quote_spanned!(span=> #found.unwrap())
            };
            let (seen, count) = match &nth {
                Some(j) => {
                    let (c, j0) = (self.fresh("seen"), self.fresh("j"));
                    (
                        Some(quote_spanned!(span=> let mut #c: usize = 0; let #j0: usize = #j;)),
                        Some(quote_spanned!(span=> #c += 1; if #c <= #j0 { continue; })),
                    )
                }
                None => (None, None),
            };
            return Some(syn::parse_quote_spanned!(span=> {
                #(#before)*
                let mut #found = None;
                #seen
                let #n = #len;
                for #k in 0..#n {
                    #(#body)*
                    #count
                    #found = Some(#v);
                    #stop
                }
                #end
            }));
        }
        let j0 = self.fresh("j");
        let pre = nth.map(|j| quote_spanned!(span=> let #j0: usize = #j;));
        let (at, empty) = match (&pre, last) {
            (Some(_), _) => (quote_spanned!(span=> #j0), quote_spanned!(span=> #n <= #j0)),
            (None, true) => (
                quote_spanned!(span=> #n - 1),
                quote_spanned!(span=> #n == 0),
            ),
            (None, false) => (quote_spanned!(span=> 0), quote_spanned!(span=> #n == 0)),
        };
        if as_option {
            return Some(syn::parse_quote_spanned!(span=> {
                #(#before)*
                let #n = #len;
                #pre
                if #empty {
                    None
                } else {
                    let #k = #at;
                    #(#body)*
                    Some(#v)
                }
            }));
        }
        Some(syn::parse_quote_spanned!(span=> {
            #(#before)*
            let #n = #len;
            #pre
            if #empty {
                panic!("called `Option::unwrap()` on a `None` value");
            }
            let #k = #at;
            #(#body)*
            #v
        }))
    }
}

/// The number of elements of the chain under `chain.reduce(f)`, `chain.max_by(cmp)`,
/// `chain.min_by(cmp)`, `chain.last()` or `chain.next()` (`Some` exactly when it is not
/// zero), when the chain has no `filter`.
pub fn option_chain_len(e: &Expr) -> Option<TokenStream> {
    let Expr::MethodCall(m) = e else { return None };
    let arity = match m.method.to_string().as_str() {
        "reduce" | "max_by" | "min_by" | "nth" => 1,
        "last" | "next" => 0,
        _ => return None,
    };
    if m.args.len() != arity {
        return None;
    }
    let mut st = Vec::new();
    if !stages(&m.receiver, &mut st) || st.iter().any(|s| skips(s) || matches!(s, Stage::Scan(..)))
    {
        return None;
    }
    let mut next = 0;
    let len = Writer::new(&mut next, None).len(&st)?;
    // `nth(k)`: `Some` when there are more than `k`.
    if m.method == "nth" {
        let k = &m.args[0];
        return Some(quote::quote!(usize::saturating_sub(#len, #k)));
    }
    Some(len)
}

/// The name a closure's parameter binds, `a`, `&a` or `a: &f64`.
pub(crate) fn param_name(p: &Pat) -> Option<syn::Ident> {
    match p {
        Pat::Ident(i) => Some(i.ident.clone()),
        Pat::Reference(r) => match &*r.pat {
            Pat::Ident(i) => Some(i.ident.clone()),
            _ => None,
        },
        Pat::Type(t) => param_name(&t.pat),
        _ => None,
    }
}

/// `|a, b| a.partial_cmp(b).unwrap()` (or `.expect(m)`, `.unwrap_or(d)`) or `|a, b|
/// a.total_cmp(b)`: `Some(false)`;
/// with `b` and `a` swapped: `Some(true)`; any other comparator: `None`.
fn comparator(e: &Expr) -> Option<bool> {
    let Expr::Closure(c) = e else { return None };
    if c.inputs.len() != 2 {
        return None;
    }
    let name = param_name;
    let (a, b) = (name(&c.inputs[0])?, name(&c.inputs[1])?);
    let mut body = &*c.body;
    if let Expr::MethodCall(u) = body {
        // `.unwrap()`, `.expect(m)`, `.unwrap_or(Ordering::Equal)` (the generic form's
        // `total_cmp`)
        if (u.method == "unwrap" && u.args.is_empty())
            || (matches!(u.method.to_string().as_str(), "expect" | "unwrap_or")
                && u.args.len() == 1)
        {
            body = &u.receiver;
        }
    }
    let Expr::MethodCall(m) = body else {
        return None;
    };
    if !(m.method == "partial_cmp" || m.method == "total_cmp") || m.args.len() != 1 {
        return None;
    }
    let strip = |e: &Expr| -> Option<syn::Ident> {
        let mut e = e;
        loop {
            match e {
                Expr::Reference(r) => e = &r.expr,
                Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => e = &u.expr,
                Expr::Paren(p) => e = &p.expr,
                Expr::Path(p) => return p.path.get_ident().cloned(),
                _ => return None,
            }
        }
    };
    let (r, x) = (strip(&m.receiver)?, strip(&m.args[0])?);
    if r == a && x == b {
        Some(false)
    } else if r == b && x == a {
        Some(true)
    } else {
        None
    }
}

/// The struct type a chain's last `map` builds: `.map(|c| P2(c[0], c[1]))`, `.map(|c| Q {
/// x: c[0], y: c[1] })`, `.map(|c| Q::new(c[0], c[1]))` (a capitalised type, not
/// `Some`/`Ok`/`Self`), also as a block's tail.
pub fn built_struct(chain: &Expr) -> Option<syn::Type> {
    let Expr::MethodCall(m) = chain else {
        return None;
    };
    if m.method != "map" || m.args.len() != 1 {
        return None;
    }
    let Expr::Closure(c) = &m.args[0] else {
        return None;
    };
    let mut body = &*c.body;
    while let Expr::Block(b) = body {
        match b.block.stmts.last() {
            Some(syn::Stmt::Expr(e, None)) => body = e,
            _ => return None,
        }
    }
    let path = struct_built_by(body)?;
    let name = path.segments.last()?.ident.to_string();
    if path.segments.len() != 1
        || !name.starts_with(|ch: char| ch.is_ascii_uppercase())
        || name == "Self"
        || name.len() == 1 && !crate::twin::letter_is_type(&name)
    {
        return None;
    }
    Some(syn::parse_quote!(#path))
}

/// `Vec<T>` → `Some(T)` (`None` for `Vec<_>`); anything else → no rewrite.
pub fn vec_elem(ty: &syn::Type) -> Option<Option<&syn::Type>> {
    let syn::Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if last.ident != "Vec" {
        return None;
    }
    match &last.arguments {
        syn::PathArguments::AngleBracketed(a) => match a.args.first() {
            Some(syn::GenericArgument::Type(syn::Type::Infer(_))) => Some(None),
            Some(syn::GenericArgument::Type(t)) => Some(Some(t)),
            _ => Some(None),
        },
        _ => Some(None),
    }
}

/// A `scan` closure `|s, v| { stmts…; Some(e) }` (or `|s, v| Some(e)`): the state's
/// name, the statements and `e`. Other bodies (an early `None`) are not rewritten.
fn scan_parts(c: &syn::ExprClosure) -> Option<(Vec<syn::Ident>, Vec<syn::Stmt>, Expr)> {
    // (Also typed, `|a: &mut f64, &v|`.)
    let state = match &c.inputs[0] {
        Pat::Type(t) => &*t.pat,
        p => p,
    };
    let plain = |p: &Pat| match p {
        Pat::Ident(i) if i.subpat.is_none() && i.by_ref.is_none() => Some(i.ident.clone()),
        _ => None,
    };
    // (A tuple state taken apart, `|(s1, s2), &v|`: each part a reference into it.)
    let s = match state {
        Pat::Tuple(t) => t.elems.iter().map(plain).collect::<Option<Vec<_>>>()?,
        p => vec![plain(p)?],
    };
    let (stmts, tail) = match &*c.body {
        Expr::Block(b) => {
            let mut stmts = b.block.stmts.clone();
            match stmts.pop() {
                Some(syn::Stmt::Expr(e, None)) => (stmts, e),
                _ => return None,
            }
        }
        other => (Vec::new(), other.clone()),
    };
    let Expr::Call(call) = &tail else { return None };
    let is_some = matches!(&*call.func, Expr::Path(p) if p.path.is_ident("Some"));
    if !is_some || call.args.len() != 1 {
        return None;
    }
    struct Exits(bool);
    impl<'ast> syn::visit::Visit<'ast> for Exits {
        fn visit_expr_return(&mut self, _: &'ast syn::ExprReturn) {
            self.0 = true;
        }
        fn visit_expr_try(&mut self, _: &'ast syn::ExprTry) {
            self.0 = true;
        }
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
    }
    let mut exits = Exits(false);
    for st in &stmts {
        syn::visit::Visit::visit_stmt(&mut exits, st);
    }
    if exits.0 {
        return None;
    }
    Some((s, stmts, call.args[0].clone()))
}

/// Does every `scan` see its elements in order, once each? Only `map`, `filter`,
/// `take`, `enumerate`, `copied` and `zip` may follow one.
fn scan_in_order(st: &[Stage]) -> bool {
    let Some(first) = st.iter().position(|s| matches!(s, Stage::Scan(..))) else {
        return true;
    };
    st[first + 1..].iter().all(|s| {
        matches!(
            s,
            Stage::Map(_)
                | Stage::Filter(_)
                | Stage::FilterMap(_)
                | Stage::Take(_)
                | Stage::Enumerate
                | Stage::Copied
                | Stage::Zip(_)
                | Stage::Chain(_)
                | Stage::Scan(..)
        )
    })
}

/// `*s` → the state variable in a `scan` closure's body; any other use of `s` is noted.
struct ScanState<'a> {
    name: &'a syn::Ident,
    state: &'a syn::Ident,
    other: bool,
}

impl VisitMut for ScanState<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        let is_s = |e: &Expr| matches!(e, Expr::Path(p) if p.path.get_ident() == Some(self.name));
        if let Expr::Unary(u) = e {
            if matches!(u.op, syn::UnOp::Deref(_)) && is_s(&u.expr) {
                let st = self.state;
                *e = syn::parse_quote!(#st);
                return;
            }
        }
        // `s.sin()`, `s.max(v)`: a method of the state through the reference, as
        // `(*s).sin()` is.
        if let Expr::MethodCall(m) = e {
            if is_s(&m.receiver) {
                let st = self.state;
                *m.receiver = syn::parse_quote!(#st);
                for a in m.args.iter_mut() {
                    self.visit_expr_mut(a);
                }
                return;
            }
        }
        // `s.0 += v`, `s.total`: a field of a tuple or struct state through the reference.
        if let Expr::Field(f) = e {
            if is_s(&f.base) {
                let st = self.state;
                *f.base = syn::parse_quote!(#st);
                return;
            }
        }
        if is_s(e) {
            self.other = true;
            return;
        }
        syn::visit_mut::visit_expr_mut(self, e);
    }
    fn visit_macro_mut(&mut self, m: &mut syn::Macro) {
        if crate::activity::tokens_mention(&m.tokens, &|i| i == self.name) {
            self.other = true;
        }
    }
}

#[cfg(test)]
mod tests {
    /// An error names a closure parameter as it was written, not as the inlining renamed it.
    #[test]
    fn written_names() {
        assert_eq!(super::written_name("__mochi_f_0"), "f");
        assert_eq!(super::written_name("__mochi_acc_sum_12"), "acc_sum");
        assert_eq!(super::written_name("weights"), "weights");
        assert_eq!(super::written_name("__mochi_t5x"), "__mochi_t5x");
        assert_eq!(super::written_name("__mochi__3"), "__mochi__3");
    }
}
