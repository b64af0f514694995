//! Rewrites, before analysis, of the forms that move data between places without an
//! `=`, into forms the lowering already differentiates:
//!
//! - `std::mem::swap(&mut a, &mut b)` → `{ let t = a; a = b; b = t; }`
//! - `std::mem::replace(&mut a, v)` → `{ let old = a; a = v; old }`
//! - `for e in y.iter_mut() { … *e … }` (also `&mut y`, `.zip(x.iter())`, `.enumerate()`)
//!   → `for i in 0..y.len() { … y[i] … }`
//! - `it.for_each(|p| body)` (no `return` in `body`) → `for p in it { body }`
//! - `v.extend(chain)` of differentiable values → `for e in chain { v.push(e); }`
//! - `if let Some(v) = e { A } else { B }`, and `match e { Some(v) => A, None => B }`
//!   → `{ let o = e; if o.is_some() { let v = o.unwrap(); A } else { B } }` (so an
//!   `Option<f64>` may carry a derivative); other `if let` patterns → `match`
//! - `while let P = e { … }` → `loop { if let P = e { … } else { break } }`
//! - `let v = loop { … break e; … };` (also `x = loop { … };` and a block's value)
//!   → `let mut t = None; loop { … { t = Some(e); break; } … } let v = t.unwrap();`
//! - `let P = e else { D };` → `let (names…) = match e { P => (names…), _ => D };`
//! - `let sq = |v: f64| v * v; … sq(x) …` → `… { let v: f64 = x; v * v } …` (a closure
//!   bound to a local is inlined where it is called, and written out where it is passed)
//! - `v.swap(i, j)` → `{ let (a, b) = (i, j); let t = v[a]; v[a] = v[b]; v[b] = t; }`
//! - `vec![a, b * c]` with differentiable elements → `vec![0.0; 2]` and assignments
//! - `x.first().unwrap()`, `x.last().unwrap()` (also under `*`) → `x[0]`, `x[x.len() - 1]`
//! - `let r = &mut m[i];` → `m[i]` in place of `r` in the statements after it
//! - `let (a, b) = x.split_at(k);` → `x[j]`, `x[k + j]` in place of `a[j]`, `b[j]`
//! - `a.map_axis(axis, f)`, `a.fold_axis(axis, init, f)` → loops over rows or
//!   columns (`iterchain.rs`)
//! - `if let Some(m) = chain.reduce(f) { A }` → `if len > 0 { let m =
//!   chain.reduce(f).unwrap(); A }`
//! - `chain.position(p)`, `all`, `any`, `count` → `mochi::no_grad(..)` (no derivative)
//! - `g(&mut m[i], x)`, `g(&mut s.f)` → the element copied into a variable, passed, and
//!   assigned back after the call
//! - `y.fill(a)` → `{ let t = a; for i in 0..y.len() { y[i] = t; } }`
//! - `y.copy_from_slice(x)`, `y.assign(x)` → a length check and
//!   `for i in 0..y.len() { y[i] = x[i]; }`
//!
//! The primal function is emitted unchanged; only the derived rule sees the rewrite,
//! which computes the same values.

use crate::activity::{mentions_active, tokens_mention};
use crate::iterchain::{contains_return, Writer};
use crate::rewrite::Repeat;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote_spanned};
use std::collections::HashSet;
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::{Expr, Pat};

/// The function's parameters by kind, as the passes read them.
pub struct ParamKinds {
    /// Those whose type carries no derivative (`idx: &[usize]`).
    pub inactive: HashSet<String>,
    /// The `&mut` ones (`b: &mut Basin`, `v: &mut [f64]`), which a call given one as it
    /// is may write.
    pub lent: HashSet<String>,
    /// The `&mut Vec<..>` ones (`out: &mut Vec<f64>`), whose length the body may change
    /// (`out.clear()`, `out.truncate(n)`, `out.pop();`): the place they point to is
    /// assigned the new buffer.
    pub lent_vecs: HashSet<String>,
}

/// The rewritten copy of a function body. With the function's one float type
/// `float_ty`, an unsuffixed float literal that initialises a binding (`let mut y =
/// 0.0;`, `vec![0.0; n]`, `vec![1.0, 2.0]`) gets that type, so that later rule calls
/// on the binding are not ambiguous between the rule crates' traits.
///
/// `active` (the activity of the body as written) decides which iterator chains are
/// rewritten as index loops (see [`crate::iterchain`]): those that carry a derivative.
pub fn desugar(
    block: &syn::Block,
    float_ty: Option<&syn::Ident>,
    active: &HashSet<String>,
    ret_ty: Option<&syn::Type>,
    array_ranks: &std::collections::HashMap<String, &str>,
    params: &ParamKinds,
    receivers: &mut std::collections::HashMap<String, Receiver>,
) -> syn::Block {
    let (inactive_params, lent_params) = (&params.inactive, &params.lent);
    // (Not those the body binds again.)
    let lent_vecs: HashSet<String> = params
        .lent_vecs
        .iter()
        .filter(|n| !binds_name(block, n))
        .cloned()
        .collect();
    let mut b = with_azip_expanded(block);
    crate::iterchain::UnshadowedLoops.visit_block_mut(&mut b);
    constant_elements_apart(&mut b, active);
    SlicePatternIfLets.visit_block_mut(&mut b);
    LocalForms.visit_block_mut(&mut b);
    SelectedElements(0).visit_block_mut(&mut b);
    DequesAsVecs.visit_block_mut(&mut b);
    // (Over values with a derivative only: the rest is run as written, and a match on
    // options of `String`s may not be taken apart by `unwrap`.)
    OptionShorthands { active }.visit_block_mut(&mut b);
    MergedGuardArms { active }.visit_block_mut(&mut b);
    OptionZips { active }.visit_block_mut(&mut b);
    TupleOptionMatches { next: 0, active }.visit_block_mut(&mut b);
    typed_assigned_collects(&mut b);
    FoldCollects.visit_block_mut(&mut b);
    SplitMatches.visit_block_mut(&mut b);
    TakenInExpressions { next: 0 }.visit_block_mut(&mut b);
    NormalizedInPlace.visit_block_mut(&mut b);
    NestedSubSlices.visit_block_mut(&mut b);
    Remainders.visit_block_mut(&mut b);
    // (First: the loops and chains it writes are what the passes below read.)
    let one_dim: HashSet<String> = array_ranks
        .iter()
        .filter(|(n, r)| **r == "1" && !binds_name(block, n))
        .map(|(n, _)| n.clone())
        .collect();
    if !one_dim.is_empty() {
        NdWindows {
            names: &one_dim,
            next: 0,
        }
        .visit_block_mut(&mut b);
    }
    and_then_names_as_closures(&mut b);
    struct_sums_as_folds(&mut b);
    SliceArguments.visit_block_mut(&mut b);
    ViewLists { active }.visit_block_mut(&mut b);
    intos_as_froms(&mut b, false);
    FromIterators.visit_block_mut(&mut b);
    NdArrayLiterals.visit_block_mut(&mut b);
    let mut literal_sources = LiteralChainSources {
        active,
        float_ty,
        next: 0,
        made: Vec::new(),
    };
    literal_sources.visit_block_mut(&mut b);
    Unzips.visit_block_mut(&mut b);
    let mut temporaries = TemporarySequences {
        active,
        next: 0,
        made: Vec::new(),
    };
    ExtendedByCalls.visit_block_mut(&mut b);
    temporaries.visit_block_mut(&mut b);
    let mut element_reads = ComputedElementReads {
        active,
        next: 0,
        made: Vec::new(),
    };
    element_reads.visit_block_mut(&mut b);
    temporaries.made.extend(element_reads.made);
    temporaries.made.extend(literal_sources.made);
    SomeTuples { next: 0 }.visit_block_mut(&mut b);
    ExtendedByLiterals.visit_block_mut(&mut b);
    let mut successors = Successors {
        active,
        next: 0,
        made: Vec::new(),
    };
    successors.visit_block_mut(&mut b);
    temporaries.made.extend(successors.made);
    // The names those passes bound to differentiable values carry derivatives too.
    let with_temporaries: std::borrow::Cow<HashSet<String>> = if temporaries.made.is_empty() {
        std::borrow::Cow::Borrowed(active)
    } else {
        std::borrow::Cow::Owned(active.iter().cloned().chain(temporaries.made).collect())
    };
    let active = &*with_temporaries;
    DbgPrinted.visit_block_mut(&mut b);
    UncheckedIndexed.visit_block_mut(&mut b);
    ResizedByPush.visit_block_mut(&mut b);
    HeldOptions(active).visit_block_mut(&mut b);
    MutatingCallStatements {
        locals: mut_bound_names(&b),
    }
    .visit_block_mut(&mut b);
    // (Before the buffers' pops are rewritten: a drained stack is read by index, a
    // worklist's pops are bound whole.)
    WhileLetPop.visit_block_mut(&mut b);
    WhileLetPopped.visit_block_mut(&mut b);
    // (Not a map's or a set's `insert`/`remove`, which are not a buffer's.)
    let maps = map_locals(&b);
    ShortenedBuffers {
        active,
        locals: mut_bound_names(&b)
            .into_iter()
            .filter(|n| !maps.contains(n))
            .collect(),
        lent: &lent_vecs,
    }
    .visit_block_mut(&mut b);
    StoredChainEnds { active }.visit_block_mut(&mut b);
    WhileLetNext.visit_block_mut(&mut b);
    SplitTupleLets.visit_block_mut(&mut b);
    CollectingArms.visit_block_mut(&mut b);
    CollectedFields { active }.visit_block_mut(&mut b);
    CollectedRefsInferred.visit_block_mut(&mut b);
    diverging_tail_loop(&mut b);
    tail_returns(&mut b);
    deref_tail(&mut b);
    MutViewLoops { next: 0 }.visit_block_mut(&mut b);
    EffectfulConditions {
        active,
        next: 0,
        mutable: Mutables::of(&b, lent_params),
    }
    .visit_block_mut(&mut b);
    // A parameter bound again in the body may not be an array any more.
    let names: HashSet<String> = array_ranks
        .iter()
        .filter(|(n, r)| **r != "1" && !binds_name(&b, n))
        .map(|(n, _)| n.clone())
        .collect();
    let mut flat_made = Vec::new();
    if !names.is_empty() {
        let mut flat = FlatArrays {
            names: &names,
            next: 0,
            made: Vec::new(),
        };
        flat.visit_block_mut(&mut b);
        flat_made = flat.made;
    }
    LabelledBlocks.visit_block_mut(&mut b);
    LeavingBranches { next: 0 }.visit_block_mut(&mut b);
    ArgBest.visit_block_mut(&mut b);
    let mut loop_values = LoopValues { next: 0 };
    loop_values.visit_block_mut(&mut b);
    StoredChains.visit_block_mut(&mut b);
    ExtendedByVariables.visit_block_mut(&mut b);
    let mut flatten = Flatten {
        float_ty,
        next: 0,
        active,
        made: Vec::new(),
    };
    flatten.visit_block_mut(&mut b);
    // The rows `flatten` binds carry derivatives when their sequence does, and so do
    // the flattened arrays.
    let mut active = active.clone();
    active.extend(flatten.made);
    let flat_active: Vec<String> = flat_made
        .into_iter()
        .filter(|(_, of)| active.contains(of))
        .map(|(f, _)| f)
        .collect();
    active.extend(flat_active);
    let active = &active;
    if let Some(t) = ret_ty {
        let mut c = CollectAsReturned(t);
        c.annotate_tail(&mut b);
        c.visit_block_mut(&mut b);
    }
    let mut d = Desugar {
        next: 0,
        float_ty: float_ty.cloned(),
        active: active.clone(),
        inactive_params: inactive_params.clone(),
        receivers: std::mem::take(receivers),
        element_receivers: HashSet::new(),
        mut_locals: mut_bound_names(&b),
        lent_buffers: lent_vecs.clone(),
        map_locals: maps,
        const_aliases: HashSet::new(),
    };
    d.visit_block_mut(&mut b);
    *receivers = d.receivers;
    // The closures with a `return` that a chain inlined are labelled blocks now, and a
    // `filter_map` closure's `None` a `continue` inside the element's value.
    LabelledBlocks.visit_block_mut(&mut b);
    LeavingBranches { next: 1000 }.visit_block_mut(&mut b);
    loop_values.visit_block_mut(&mut b);
    // Chains written as loops brought their closures' conditions (`filter(|v| step(&mut
    // s, *v))`) into the body.
    EffectfulConditions {
        active,
        next: 1_000_000,
        mutable: Mutables::of(&b, lent_params),
    }
    .visit_block_mut(&mut b);
    CopiedThroughReferences.visit_block_mut(&mut b);
    b
}

/// `let &v = &e;` → `let v = e;` (also `let &mut v = &mut e;`): the copy the pattern
/// takes, which a closure's `|&v|` gives where a chain writes its parameter as a `let`
/// (`x.iter().map(|&v| v * 2.0).find(p)`, whose found element is `{ let &v = &x[k]; v *
/// 2.0 }`; before, "only names, `_`, and tuples and arrays of them can bind a
/// differentiable value").
struct CopiedThroughReferences;

impl VisitMut for CopiedThroughReferences {
    fn visit_local_mut(&mut self, l: &mut syn::Local) {
        syn::visit_mut::visit_local_mut(self, l);
        let Pat::Reference(r) = &l.pat else { return };
        let Some(init) = l.init.as_mut() else { return };
        if init.diverge.is_some() {
            return;
        }
        let Expr::Reference(e) = &*init.expr else {
            return;
        };
        if r.mutability.is_some() != e.mutability.is_some()
            || !matches!(&*r.pat, Pat::Ident(i) if i.by_ref.is_none() && i.subpat.is_none())
        {
            return;
        }
        let (pat, value) = ((*r.pat).clone(), (*e.expr).clone());
        l.pat = pat;
        *init.expr = value;
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// `std::iter::successors(Some(a), |&t| Some(e))` (also `|t|`, read as the value) with a
/// fixed count:
///
/// - `….nth(k)` → `{ let mut c = a; for _ in 0..k { c = { let t = c; e }; } Some(c) }`,
///   and `….nth(k).unwrap()` (also `expect`, `unwrap_or`, …) that block ending in `c`;
/// - `….take(n).rest…` → the `n` values pushed into a `Vec` by that loop, then
///   `v.iter().copied().rest…`, which the chains read.
///
/// A closure that may end the sequence (`None`, or a body other than `Some(e)`) is left
/// as written (and refused as a closure outside an adapter).
struct Successors<'a> {
    active: &'a HashSet<String>,
    next: usize,
    /// The names bound to differentiable values.
    made: Vec<String>,
}

impl Successors<'_> {
    /// The start `a`, the closure's pattern (by value) and `e` of `successors(Some(a),
    /// |p| Some(e))` by any path ending in `successors`.
    fn parts(e: &Expr) -> Option<(Expr, Pat, Expr)> {
        let Expr::Call(c) = unparen(e) else {
            return None;
        };
        let Expr::Path(f) = &*c.func else { return None };
        if f.path.segments.last()?.ident != "successors" || c.args.len() != 2 {
            return None;
        }
        let some = |e: &Expr| -> Option<Expr> {
            match unparen(e) {
                Expr::Call(s) if s.args.len() == 1 => match &*s.func {
                    Expr::Path(p) if p.path.is_ident("Some") => Some(s.args[0].clone()),
                    _ => None,
                },
                _ => None,
            }
        };
        let start = some(&c.args[0])?;
        let Expr::Closure(cl) = &c.args[1] else {
            return None;
        };
        if cl.inputs.len() != 1 {
            return None;
        }
        // (Also a block ending in `Some(e)`: `|&(t, k)| { let k1 = k + 1.0; Some((t * y
        // / k1, k1)) }`, the block ending in `e`.)
        let mut step = match unparen(&cl.body) {
            // (Not one that may end the sequence or leave the closure early.)
            Expr::Block(b)
                if b.label.is_none()
                    && !crate::iterchain::contains_return(&cl.body)
                    && !quote::quote!(#b).to_string().contains('?') =>
            {
                let mut b = b.clone();
                let Some(syn::Stmt::Expr(tail, None)) = b.block.stmts.last_mut() else {
                    return None;
                };
                *tail = some(tail)?;
                Expr::Block(b)
            }
            body => some(body)?,
        };
        let pat = match &cl.inputs[0] {
            Pat::Reference(r) => (*r.pat).clone(),
            Pat::Type(t) => match &*t.pat {
                Pat::Reference(r) => (*r.pat).clone(),
                other => other.clone(),
            },
            other => other.clone(),
        };
        // `|t| Some(*t * q)`: the value read in place of the reference.
        if let Pat::Ident(i) = &pat {
            let names = vec![i.ident.clone()];
            crate::rewrite::UnDeref { names: &names }.visit_expr_mut(&mut step);
        }
        Some((start, pat, step))
    }
}

impl Successors<'_> {
    /// Notes `c` and `v` as differentiable when the sequence's start or step is.
    fn note(&mut self, names: &[&syn::Ident], parts: &(Expr, Pat, Expr)) {
        if mentions_active(&parts.0, self.active) || mentions_active(&parts.2, self.active) {
            self.made.extend(names.iter().map(|n| n.to_string()));
        }
    }

    /// `e` rewritten when it is `successors(..).nth(k)` or a chain over
    /// `successors(..).take(n)`.
    fn rewrite(&mut self, e: &Expr) -> Option<Expr> {
        let Expr::MethodCall(m) = e else { return None };
        let span = m.method.span();
        let (c, v) = (
            format_ident!("__mochi_sc{}", self.next, span = span),
            format_ident!("__mochi_sv{}", self.next, span = span),
        );
        // `nth(k)` of a sequence without end is there: `.unwrap()` (also `expect`,
        // `unwrap_or`, …) of it is the value.
        let taken = matches!(
            m.method.to_string().as_str(),
            "unwrap" | "expect" | "unwrap_or" | "unwrap_or_default" | "unwrap_or_else"
        );
        // `(nth(k) call, whether its option is taken out)`.
        let nth = match unparen(&m.receiver) {
            Expr::MethodCall(n) if taken && n.method == "nth" && n.args.len() == 1 => {
                Some((n, true))
            }
            _ if m.method == "nth" && m.args.len() == 1 => Some((m, false)),
            _ => None,
        };
        let found = nth.and_then(|(n, taken)| Some((n, taken, Self::parts(&n.receiver)?)));
        if let Some((n, taken, parts)) = found {
            self.note(&[&c], &parts);
            let (start, p, step) = parts;
            self.next += 1;
            let k = &n.args[0];
            let value = if taken {
                quote_spanned!(span=> #c)
            } else {
                quote_spanned!(span=> Some(#c))
            };
            return Some(syn::parse_quote_spanned!(span=> {
                let mut #c = #start;
                for _ in 0..(#k) {
                    #c = { let #p = #c; #step };
                }
                #value
            }));
        }
        // The chain's methods down to `take(n)` or `take_while(p)` on `successors(..)`.
        let mut above: Vec<&syn::ExprMethodCall> = Vec::new();
        let mut cur = m;
        let (take, parts) = loop {
            let bounded = match (cur.method.to_string().as_str(), cur.args.first()) {
                ("take", Some(_)) => true,
                ("take_while", Some(Expr::Closure(p))) => p.inputs.len() == 1,
                _ => false,
            };
            if bounded && cur.args.len() == 1 {
                if let Some(parts) = Self::parts(&cur.receiver) {
                    break (cur, parts);
                }
            }
            above.push(cur);
            match unparen(&cur.receiver) {
                Expr::MethodCall(r) => cur = r,
                _ => return None,
            }
        };
        self.note(&[&c, &v], &parts);
        let (start, p, step) = parts;
        self.next += 1;
        let n = &take.args[0];
        let i = format_ident!("__mochi_si{}", self.next, span = span);
        let mut chain: Expr = syn::parse_quote_spanned!(span=> #v.iter().copied());
        // (Collected as it is, `….take(n).collect()`: the `Vec` itself.)
        if let [only] = above.as_slice() {
            if only.method == "collect" && only.args.is_empty() {
                above.clear();
                chain = syn::parse_quote_spanned!(span=> #v);
            }
        }
        for a in above.iter().rev() {
            let mut a = (*a).clone();
            *a.receiver = chain;
            chain = Expr::MethodCall(a);
        }
        // `take_while(|q| cond)`: the values while `cond` holds of each (as the
        // iterator asks it, by reference), the first that fails ending the loop.
        if let Expr::Closure(pred) = &take.args[0] {
            if take.method == "take_while" {
                let (q, cond) = (&pred.inputs[0], &pred.body);
                return Some(syn::parse_quote_spanned!(span=> {
                    let mut #v = ::std::vec::Vec::new();
                    let mut #c = #start;
                    loop {
                        if !{ let #q = &#c; #cond } {
                            break;
                        }
                        #v.push(#c);
                        #c = { let #p = #c; #step };
                    }
                    #chain
                }));
            }
        }
        Some(syn::parse_quote_spanned!(span=> {
            let mut #v = ::std::vec::Vec::new();
            let mut #c = #start;
            for #i in 0..(#n) {
                if #i > 0 {
                    #c = { let #p = #c; #step };
                }
                #v.push(#c);
            }
            #chain
        }))
    }
}

impl Successors<'_> {
    /// `x.iter().zip(successors(Some(a), |p| Some(e)))` (also `successors(..).take(n)`,
    /// or a name bound to the sequence by a `let` of the block, `let powers =
    /// successors(..);`): the values the zip reads are computed into a `Vec` first, by
    /// a `let` before the statement (as many as the zip's receiver has, or `n`), and
    /// zipped as `v.iter().copied()`. A `let` of the sequence left unread goes.
    fn zipped(&mut self, b: &mut syn::Block) {
        /// A zip's argument that is the sequence: its parts and `take`'s count.
        fn sequence(
            arg: &Expr,
            held: &std::collections::HashMap<String, Expr>,
        ) -> Option<((Expr, Pat, Expr), Option<Expr>)> {
            let whole = |e: &Expr| match unparen(e) {
                Expr::Path(p) => p
                    .path
                    .get_ident()
                    .and_then(|i| held.get(&i.to_string()))
                    .and_then(Successors::parts),
                other => Successors::parts(other),
            };
            match unparen(arg) {
                Expr::MethodCall(t) if t.method == "take" && t.args.len() == 1 => {
                    Some((whole(&t.receiver)?, Some(t.args[0].clone())))
                }
                other => Some((whole(other)?, None)),
            }
        }
        /// How many elements a zip's receiver has: `x.len()` of `x.iter()` (with
        /// adapters that keep the count), `(a..b).len()` of a range.
        fn count(recv: &Expr) -> Option<Expr> {
            match unparen(recv) {
                Expr::MethodCall(m) => match (m.method.to_string().as_str(), m.args.len()) {
                    ("iter" | "iter_mut" | "into_iter", 0) => match unparen(&m.receiver) {
                        r @ (Expr::Path(_) | Expr::Field(_)) => Some(syn::parse_quote!(#r.len())),
                        // (A sub-slice or a row, `x[..5].iter()`, `m[i].iter()`.)
                        r @ Expr::Index(_) => Some(syn::parse_quote!((#r).len())),
                        Expr::Reference(r) => {
                            let r = &r.expr;
                            Some(syn::parse_quote!(#r.len()))
                        }
                        Expr::Range(_) => count(&m.receiver),
                        _ => None,
                    },
                    ("copied" | "cloned" | "enumerate" | "rev", 0) | ("map" | "inspect", 1) => {
                        count(&m.receiver)
                    }
                    _ => None,
                },
                r @ Expr::Range(_) => Some(syn::parse_quote!((#r).len())),
                _ => None,
            }
        }
        struct Zips<'a, 'b> {
            held: &'a std::collections::HashMap<String, Expr>,
            found: Vec<(syn::Ident, (Expr, Pat, Expr), Expr)>,
            outer: &'a mut Successors<'b>,
        }
        impl VisitMut for Zips<'_, '_> {
            // (Closures and inner blocks are taken with their own statements.)
            fn visit_expr_closure_mut(&mut self, _: &mut syn::ExprClosure) {}
            fn visit_block_mut(&mut self, _: &mut syn::Block) {}
            fn visit_expr_mut(&mut self, e: &mut Expr) {
                syn::visit_mut::visit_expr_mut(self, e);
                let Expr::MethodCall(m) = e else { return };
                if m.method != "zip" || m.args.len() != 1 {
                    return;
                }
                let Some((parts, taken)) = sequence(&m.args[0], self.held) else {
                    return;
                };
                let Some(n) = taken.or_else(|| count(&m.receiver)) else {
                    return;
                };
                let span = m.method.span();
                self.outer.next += 1;
                let v = format_ident!("__mochi_sz{}", self.outer.next, span = span);
                self.outer.note(&[&v], &parts);
                m.args[0] = syn::parse_quote_spanned!(span=> #v.iter().copied());
                self.found.push((v, parts, n));
            }
        }
        let mut held = std::collections::HashMap::new();
        let mut out = Vec::new();
        for mut st in std::mem::take(&mut b.stmts) {
            if let syn::Stmt::Local(l) = &st {
                if let (Pat::Ident(pi), Some(init)) = (&l.pat, &l.init) {
                    if init.diverge.is_none() && pi.by_ref.is_none() {
                        if Self::parts(&init.expr).is_some() {
                            held.insert(pi.ident.to_string(), (*init.expr).clone());
                        } else {
                            held.remove(&pi.ident.to_string());
                        }
                    }
                }
            }
            let mut z = Zips {
                held: &held,
                found: Vec::new(),
                outer: self,
            };
            z.visit_stmt_mut(&mut st);
            for (v, (start, p, step), n) in z.found {
                let span = v.span();
                let (c, i) = (
                    format_ident!("__mochi_szc", span = span),
                    format_ident!("__mochi_szi", span = span),
                );
                out.push(syn::parse_quote_spanned!(span=>
                    let #v = {
                        let mut #v = ::std::vec::Vec::new();
                        let mut #c = #start;
                        for #i in 0..(#n) {
                            if #i > 0 {
                                #c = { let #p = #c; #step };
                            }
                            #v.push(#c);
                        }
                        #v
                    };
                ));
            }
            out.push(st);
        }
        // The sequences no statement reads any more (named by their `let` alone).
        let named: Vec<HashSet<String>> = if held.is_empty() {
            Vec::new()
        } else {
            out.iter()
                .map(|st| {
                    let mut seen = HashSet::new();
                    crate::activity::token_idents(quote::quote!(#st), &mut seen);
                    seen
                })
                .collect()
        };
        let unread: Vec<String> = held
            .keys()
            .filter(|name| named.iter().filter(|seen| seen.contains(*name)).count() == 1)
            .cloned()
            .collect();
        out.retain(|st| match st {
            syn::Stmt::Local(l) => !matches!(&l.pat, Pat::Ident(pi)
                if unread.contains(&pi.ident.to_string())
                    && l.init.as_ref().is_some_and(|i| Self::parts(&i.expr).is_some())),
            _ => true,
        });
        b.stmts = out;
    }
}

impl VisitMut for Successors<'_> {
    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        self.zipped(b);
        syn::visit_mut::visit_block_mut(self, b);
    }

    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if let Some(r) = self.rewrite(e) {
            *e = r;
        }
        syn::visit_mut::visit_expr_mut(self, e);
    }
}

/// ndarray's `array![a, b, c]` → `ndarray::Array1::from(vec![a, b, c])`, and
/// `array![[a, b], [c, d]]` (also three levels deep) →
/// `ndarray::Array2::from_shape_vec((2, 2), vec![a, b, c, d]).unwrap()`: the
/// constructors the ndarray rules differentiate, with the elements in row-major order, as
/// the macro lays them. Rows of different lengths are left to the macro, whose error
/// names them.
/// The associated function that `#[differentiable] impl Sum for V2` writes beside the
/// block: the empty sum (`<V2 as Sum>::sum(iter::empty())`, a constant); its name says
/// what to mark when it is missing.
pub(crate) const EMPTY_SUM: &str = "sum__needs_differentiable_impl_sum";

/// `xs.iter().copied().sum::<V2>()` and `let c: V2 = ….sum();` of a struct of the user's
/// (`V2` a bare name, [`crate::twin::user_type_name`]) as the fold of `+` from the empty sum
/// that `#[differentiable] impl Sum for V2` checks its body is:
/// `….fold(V2::sum__needs_differentiable_impl_sum(), |a, v| a + v.clone())`, which the
/// derivation and the generic form read as a fold from a struct (`.clone()`: the
/// elements may be references, `Sum<&V2>`).
pub(crate) fn struct_sums_as_folds(b: &mut syn::Block) {
    fn user_struct(t: &syn::Type) -> Option<syn::Ident> {
        let syn::Type::Path(p) = t else { return None };
        let i = p.path.get_ident()?;
        // (A bare name: `Complex` here is the user's, `num_complex`'s is `Complex<f64>`.)
        (p.qself.is_none() && crate::twin::user_type_name(&i.to_string())).then(|| i.clone())
    }
    fn fold_of(m: &syn::ExprMethodCall, ty: &syn::Ident) -> Expr {
        let recv = &m.receiver;
        let zero = format_ident!("{}", EMPTY_SUM, span = m.method.span());
        syn::parse_quote_spanned!(m.method.span()=>
            #recv.fold(#ty::#zero(), |__mochi_a, __mochi_v| __mochi_a + __mochi_v.clone())
        )
    }
    struct Sums;
    impl VisitMut for Sums {
        fn visit_expr_mut(&mut self, e: &mut Expr) {
            syn::visit_mut::visit_expr_mut(self, e);
            let Expr::MethodCall(m) = e else { return };
            if m.method != "sum" || !m.args.is_empty() {
                return;
            }
            let Some(t) =
                m.turbofish
                    .as_ref()
                    .and_then(|t| match t.args.iter().collect::<Vec<_>>()[..] {
                        [syn::GenericArgument::Type(t)] => user_struct(t),
                        _ => None,
                    })
            else {
                return;
            };
            *e = fold_of(m, &t);
        }
        fn visit_local_mut(&mut self, l: &mut syn::Local) {
            syn::visit_mut::visit_local_mut(self, l);
            let Pat::Type(pt) = &l.pat else { return };
            let Some(t) = user_struct(&pt.ty) else { return };
            let Some(init) = l.init.as_mut() else { return };
            if let Expr::MethodCall(m) = &*init.expr {
                if m.method == "sum" && m.args.is_empty() && m.turbofish.is_none() {
                    *init.expr = fold_of(m, &t);
                }
            }
        }
    }
    Sums.visit_block_mut(b);
}

/// `[1.5, 2.25, 2.625].iter().enumerate().map(|(i, &c)| ..).sum()`: a chain read
/// from an array literal, whose closures carry derivatives, with the literal bound to
/// a name by a `let` before the statement (typed by the function's float when its
/// elements are float literals), the sequence a chain's loop reads by position (before,
/// "`Enumerate<Iter<'_, {float}>>` has no tangent type" once a stage other than `map`
/// and `sum` was in the chain). A literal of constants is bound from anywhere in the
/// statement; one of other values (`[p[0], 2.0 * p[1]]`) only where the statement
/// evaluates it unconditionally (not in a branch, a loop or a closure) and writes
/// nothing.
struct LiteralChainSources<'a> {
    active: &'a HashSet<String>,
    float_ty: Option<&'a syn::Ident>,
    next: usize,
    /// The names bound to literals with differentiable values.
    made: Vec<String>,
}

/// The chains of one statement whose literal sources [`LiteralChainSources`] binds.
struct LiteralChainsOf<'a, 'b> {
    outer: &'b mut LiteralChainSources<'a>,
    /// Inside a branch, a loop, a closure or a block: only constants are bound.
    nested: usize,
    writes: bool,
    bound: Vec<syn::Stmt>,
}

impl VisitMut for LiteralChainsOf<'_, '_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        let nests = matches!(
            e,
            Expr::If(_)
                | Expr::Match(_)
                | Expr::Closure(_)
                | Expr::ForLoop(_)
                | Expr::While(_)
                | Expr::Loop(_)
                | Expr::Block(_)
                | Expr::Binary(syn::ExprBinary {
                    op: syn::BinOp::And(_) | syn::BinOp::Or(_),
                    ..
                })
        );
        if let Expr::MethodCall(top) = e {
            // (A chain consumed into a value that borrows nothing.)
            let consumed = matches!(
                top.method.to_string().as_str(),
                "sum" | "product" | "fold" | "count" | "for_each" | "collect" | "reduce"
            );
            if consumed && mentions_active(top, self.outer.active) {
                self.bind_source(e);
            }
        }
        self.nested += usize::from(nests);
        syn::visit_mut::visit_expr_mut(self, e);
        self.nested -= usize::from(nests);
    }
}

impl LiteralChainsOf<'_, '_> {
    fn bind_source(&mut self, e: &mut Expr) {
        let mut cur: &mut Expr = e;
        while let Expr::MethodCall(m) = cur {
            let view =
                matches!(m.method.to_string().as_str(), "iter" | "into_iter") && m.args.is_empty();
            let arr = match &*m.receiver {
                Expr::Array(a) => Some(a),
                Expr::Reference(r) => match &*r.expr {
                    Expr::Array(a) => Some(a),
                    _ => None,
                },
                _ => None,
            };
            if let (true, Some(arr)) = (view, arr) {
                let constants = !arr.elems.is_empty()
                    && arr.elems.iter().all(|v| match unparen(v) {
                        Expr::Lit(_) => true,
                        Expr::Unary(u) => matches!(unparen(&u.expr), Expr::Lit(_)),
                        _ => false,
                    });
                if !constants && (self.nested > 0 || self.writes) {
                    return;
                }
                let float_lit = |v: &Expr| matches!(v, Expr::Lit(syn::ExprLit { lit: syn::Lit::Float(f), .. }) if f.suffix().is_empty());
                let floats = constants
                    && arr.elems.iter().any(|v| match unparen(v) {
                        Expr::Unary(u) => float_lit(unparen(&u.expr)),
                        other => float_lit(other),
                    });
                let arr = arr.clone();
                self.outer.next += 1;
                let span = m.receiver.span();
                let name = format_ident!("__mochi_lit{}", self.outer.next, span = span);
                *m.receiver = syn::parse_quote_spanned!(span=> #name);
                if mentions_active(&arr, self.outer.active) {
                    self.outer.made.push(name.to_string());
                }
                let n = arr.elems.len();
                let stmt: syn::Stmt = match self.outer.float_ty {
                    Some(t) if floats => {
                        syn::parse_quote_spanned!(span=> let #name: [#t; #n] = #arr;)
                    }
                    _ => syn::parse_quote_spanned!(span=> let #name = #arr;),
                };
                self.bound.push(stmt);
                return;
            }
            cur = &mut m.receiver;
        }
    }
}

/// Whether `e` writes a place: an assignment or a compound one ([`assigns`]), or a
/// `&mut` borrow.
fn writes_something(e: &Expr) -> bool {
    struct W(bool);
    impl<'ast> syn::visit::Visit<'ast> for W {
        fn visit_expr_reference(&mut self, r: &'ast syn::ExprReference) {
            self.0 |= r.mutability.is_some();
            syn::visit::visit_expr_reference(self, r);
        }
    }
    let mut w = W(false);
    syn::visit::Visit::visit_expr(&mut w, e);
    w.0 || assigns(e)
}

impl VisitMut for LiteralChainSources<'_> {
    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        let mut out = Vec::with_capacity(b.stmts.len());
        for mut st in std::mem::take(&mut b.stmts) {
            let e = match &mut st {
                syn::Stmt::Local(l) => l.init.as_mut().map(|i| &mut *i.expr),
                syn::Stmt::Expr(e, _) => Some(e),
                _ => None,
            };
            if let Some(e) = e {
                let mut of = LiteralChainsOf {
                    writes: writes_something(e),
                    outer: self,
                    nested: 0,
                    bound: Vec::new(),
                };
                of.visit_expr_mut(e);
                out.append(&mut of.bound);
            }
            out.push(st);
        }
        b.stmts = out;
        syn::visit_mut::visit_block_mut(self, b);
    }
}

struct NdArrayLiterals;

impl NdArrayLiterals {
    /// The elements of `array![..]`'s tokens, flat, and the shape.
    fn flatten(elems: &[Expr]) -> Option<(Vec<Expr>, Vec<usize>)> {
        let rows: Option<Vec<&syn::ExprArray>> = elems
            .iter()
            .map(|e| match unparen(e) {
                Expr::Array(a) => Some(a),
                _ => None,
            })
            .collect();
        let Some(rows) = rows.filter(|r| !r.is_empty()) else {
            // A row of scalars (no element is an array literal).
            return elems
                .iter()
                .all(|e| !matches!(unparen(e), Expr::Array(_)))
                .then(|| (elems.to_vec(), vec![elems.len()]));
        };
        let mut flat = Vec::new();
        let mut inner_shape: Option<Vec<usize>> = None;
        for r in rows {
            let inner: Vec<Expr> = r.elems.iter().cloned().collect();
            let (f, shape) = Self::flatten(&inner)?;
            if inner_shape.get_or_insert_with(|| shape.clone()) != &shape {
                return None;
            }
            flat.extend(f);
        }
        let mut shape = vec![elems.len()];
        shape.extend(inner_shape?);
        Some((flat, shape))
    }
}

impl VisitMut for NdArrayLiterals {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        syn::visit_mut::visit_expr_mut(self, e);
        let Expr::Macro(m) = e else { return };
        let path = &m.mac.path;
        let named = path.segments.last().is_some_and(|s| s.ident == "array")
            && (path.segments.len() == 1
                || (path.segments.len() == 2 && path.segments[0].ident == "ndarray"));
        if !named {
            return;
        }
        let Ok(list) = m
            .mac
            .parse_body_with(syn::punctuated::Punctuated::<Expr, syn::Token![,]>::parse_terminated)
        else {
            return;
        };
        let elems: Vec<Expr> = list.into_iter().collect();
        if elems.is_empty() {
            return;
        }
        let Some((flat, shape)) = Self::flatten(&elems) else {
            return;
        };
        let span = m.mac.path.span();
        *e = match shape.as_slice() {
            [_] => syn::parse_quote_spanned!(span=> ::ndarray::Array1::from(vec![#(#flat),*])),
            [r, c] => syn::parse_quote_spanned!(span=>
                ::ndarray::Array2::from_shape_vec((#r, #c), vec![#(#flat),*]).unwrap()
            ),
            [a, b, c] => syn::parse_quote_spanned!(span=>
                ::ndarray::Array3::from_shape_vec((#a, #b, #c), vec![#(#flat),*]).unwrap()
            ),
            _ => return,
        };
    }
}

/// Methods of the standard library's sequences and arrays (and ndarray's) that edit
/// their receiver in place.
const STD_MUTATORS: &[&str] = &[
    "clone_from_slice",
    "copy_from_slice",
    "clone_from",
    "copy_within",
    "swap_with_slice",
    "fill",
    "fill_with",
    "swap",
    "reverse",
    "sort",
    "sort_by",
    "sort_by_key",
    "sort_unstable",
    "sort_unstable_by",
    "select_nth_unstable_by",
    "sort_unstable_by_key",
    "rotate_left",
    "rotate_right",
    "truncate",
    "clear",
    "resize",
    "extend",
    "extend_from_slice",
    "insert",
    "retain",
    "dedup",
    "append",
    "drain",
    "for_each",
    "assign",
    "mapv_inplace",
    "map_inplace",
    "zip_mut_with",
    "scaled_add",
    "invert",
    "apply",
];

/// `m.layers[k].step(lr);` — a method of the user's called as a statement (its result
/// unused) on a field or an element of a `let mut` local → `{ let mut t =
/// m.layers[k].clone(); (&mut t).step(lr); m.layers[k] = t; }`, the receiver copied,
/// lent mutably and written back, as an element a loop borrows with `iter_mut` is: the
/// call then reaches a `&mut self` method's rule (and a `&self` one's by
/// auto-dereference), not the fallback of an unmarked method that a shared borrow would
/// find first.
struct MutatingCallStatements {
    locals: HashSet<String>,
}

impl VisitMut for MutatingCallStatements {
    fn visit_stmt_mut(&mut self, s: &mut syn::Stmt) {
        syn::visit_mut::visit_stmt_mut(self, s);
        let syn::Stmt::Expr(Expr::MethodCall(m), Some(_)) = s else {
            return;
        };
        fn root(e: &Expr) -> Option<&Expr> {
            match e {
                Expr::Field(f) => root(&f.base),
                Expr::Index(i) => root(&i.expr),
                Expr::Path(_) => Some(e),
                _ => None,
            }
        }
        // (An element or a field, not a sub-slice `w[2..4]`; and not a method of the
        // standard library's sequences and arrays, which edit in place themselves.)
        let place = match &*m.receiver {
            Expr::Field(_) => true,
            Expr::Index(i) => !matches!(unparen(&i.index), Expr::Range(_)),
            _ => false,
        } && !STD_MUTATORS.contains(&m.method.to_string().as_str());
        let of_mut_local = root(&m.receiver).is_some_and(|r| {
            matches!(r, Expr::Path(p) if p.path.get_ident().is_some_and(|i| self.locals.contains(&i.to_string())))
        });
        if !place
            || !of_mut_local
            || m.turbofish.is_some()
            || crate::lower::expr::is_library_method(&m.method.to_string())
        {
            return;
        }
        let recv = (*m.receiver).clone();
        let span = m.method.span();
        let t = format_ident!("__mochi_mr", span = span);
        *m.receiver = syn::parse_quote_spanned!(span=> (&mut #t));
        let call = &*m;
        *s = syn::parse_quote_spanned!(span=> {
            let mut #t = #recv.clone();
            #call;
            #recv = #t;
        });
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// `o.and_then(checked_root)` → `o.and_then(|v| checked_root(v))`: a function's name
/// given to an `Option`'s `and_then`, as the closure calling it, which the derivation and
/// the generic form read (a name alone is a value neither has).
pub fn and_then_names_as_closures(block: &mut syn::Block) {
    struct Names;
    impl VisitMut for Names {
        fn visit_expr_method_call_mut(&mut self, m: &mut syn::ExprMethodCall) {
            syn::visit_mut::visit_expr_method_call_mut(self, m);
            if m.method != "and_then" || m.args.len() != 1 {
                return;
            }
            let Expr::Path(p) = &m.args[0] else { return };
            if p.qself.is_some() {
                return;
            }
            let span = m.method.span();
            let a = format_ident!("__mochi_arg", span = span);
            m.args[0] = syn::parse_quote_spanned!(span=> |#a| #p(#a));
        }
        fn visit_item_mut(&mut self, _: &mut syn::Item) {}
    }
    Names.visit_block_mut(block);
}

/// nalgebra's `DVector::from_iterator(n, chain)` → `DVector::from_vec(chain.collect::<Vec<_>>())`
/// and `DMatrix::from_iterator(r, c, chain)` → `DMatrix::from_vec(r, c, chain.collect::<Vec<_>>())`
/// (column by column, as `from_iterator` fills it): a chain collected, which the
/// derivation writes as a loop, and the constructors the nalgebra rules differentiate.
/// (The length is the chain's: `from_iterator` would panic where it is not `n`.)
/// Also `Array1::from_vec(x.iter().map(f).collect())` (and `from_shape_vec`, nalgebra's
/// `from_vec`): the collection named, `collect::<Vec<_>>()`, as the constructor takes
/// it, so that the chain is one the derivation reads.
struct FromIterators;

impl VisitMut for FromIterators {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        syn::visit_mut::visit_expr_mut(self, e);
        let Expr::Call(c) = e else { return };
        let Expr::Path(p) = &*c.func else { return };
        let segs = crate::twin::segments(&p.path);
        let [.., ty, f] = segs.as_slice() else { return };
        // `ArrayView2::from_shape((r, c), x)` of a slice (also `ArrayView1`, `ArrayView3`,
        // `ArrayView`): the same values owned, `Array2::from_shape_vec((r, c),
        // x.to_vec())`, which the constructors' rules differentiate.
        if f == "from_shape"
            && ty.starts_with("ArrayView")
            && p.qself.is_none()
            && c.args.len() == 2
        {
            let owned = format_ident!("{}", ty.replacen("ArrayView", "Array", 1), span = p.span());
            let (shape, data) = (&c.args[0], &c.args[1]);
            *e = syn::parse_quote_spanned!(p.span()=>
                ::ndarray::#owned::from_shape_vec(#shape, (#data).to_vec())
            );
            return;
        }
        if (f == "from_vec" || f == "from_shape_vec") && p.qself.is_none() {
            if let Some(Expr::MethodCall(m)) = c.args.last_mut() {
                if m.method == "collect"
                    && m.args.is_empty()
                    && m.turbofish.is_none()
                    && crate::iterchain::is_chain(&m.receiver)
                {
                    m.turbofish = Some(syn::parse_quote!(::<::std::vec::Vec<_>>));
                }
            }
            return;
        }
        if f != "from_iterator" || p.qself.is_some() {
            return;
        }
        let mut path = p.path.clone();
        let span = path
            .segments
            .last()
            .map_or_else(Span::call_site, |s| s.ident.span());
        if let Some(last) = path.segments.last_mut() {
            last.ident = format_ident!("from_vec", span = span);
        }
        let args: Vec<&Expr> = c.args.iter().collect();
        *e = match (ty.as_str(), args.as_slice()) {
            ("DVector", [_, chain]) => syn::parse_quote_spanned!(span=>
                #path((#chain).collect::<::std::vec::Vec<_>>())
            ),
            ("DMatrix", [r, k, chain]) => syn::parse_quote_spanned!(span=>
                #path(#r, #k, (#chain).collect::<::std::vec::Vec<_>>())
            ),
            _ => return,
        };
    }
}

/// `v.extend_from_slice(&[a, b, c])` (also `v.extend([a, b])`, `v.extend(&[a, b])`) of a
/// variable or a field → `{ let e0 = a; …; v.push(e0); v.push(e1); v.push(e2); }`: each
/// element pushed, as the derivation takes it (a literal array's cotangent is an array,
/// the slice's a `Vec`).
struct ExtendedByLiterals;

impl VisitMut for ExtendedByLiterals {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        syn::visit_mut::visit_expr_mut(self, e);
        let Expr::MethodCall(m) = e else { return };
        if !matches!(
            m.method.to_string().as_str(),
            "extend_from_slice" | "extend"
        ) || m.args.len() != 1
            || !matches!(unparen(&m.receiver), Expr::Path(_) | Expr::Field(_))
        {
            return;
        }
        // `v.extend(w)`, `v.extend(&w)`, `v.extend(w.iter())`, `v.extend(w.iter().copied())`
        // of a variable or a field: `v.extend_from_slice(&w)`, which the derivation takes.
        if m.method == "extend" {
            let mut a = unparen(&m.args[0]);
            if let Expr::MethodCall(c) = a {
                if c.args.is_empty() && matches!(c.method.to_string().as_str(), "copied" | "cloned")
                {
                    a = unparen(&c.receiver);
                }
            }
            // (A bare `w` may be a chain held in a name, which `StoredChains` writes in
            // place later: `ExtendedByVariables` takes it after that.)
            let given = match a {
                Expr::Reference(r) if r.mutability.is_none() => Some(unparen(&r.expr)),
                Expr::MethodCall(c) if c.method == "iter" && c.args.is_empty() => {
                    Some(unparen(&c.receiver))
                }
                _ => None,
            };
            if let Some(w @ (Expr::Path(_) | Expr::Field(_))) = given {
                let (span, v) = (m.method.span(), &m.receiver);
                *e = syn::parse_quote_spanned!(span=> #v.extend_from_slice(&#w));
                return;
            }
        }
        let elems = match unparen(&m.args[0]) {
            Expr::Reference(r) if r.mutability.is_none() => match unparen(&r.expr) {
                Expr::Array(a) => a.elems.clone(),
                _ => return,
            },
            Expr::Array(a) if m.method == "extend" => a.elems.clone(),
            _ => return,
        };
        let span = m.method.span();
        let v = &m.receiver;
        // The elements evaluated first, as the array is (one may read `v.len()`).
        let names: Vec<syn::Ident> = (0..elems.len())
            .map(|k| format_ident!("__mochi_ext{}", k, span = span))
            .collect();
        let vals = elems.iter();
        *e = syn::parse_quote_spanned!(span=> {
            #(let #names = #vals;)*
            #(#v.push(#names);)*
        });
    }
}

/// Whether a method chain calls one of `methods` anywhere down its receivers
/// (`x.iter().scan(..).map(f)` calls `scan`).
fn chain_calls(e: &Expr, methods: &[&str]) -> bool {
    match unparen(e) {
        Expr::MethodCall(m) => {
            methods.iter().any(|n| m.method == n) || chain_calls(&m.receiver, methods)
        }
        _ => false,
    }
}

/// `v.extend(a)` of a variable or a field `v`, one argument.
fn extend_of_place(e: &Expr) -> Option<&syn::ExprMethodCall> {
    match e {
        Expr::MethodCall(m)
            if m.method == "extend"
                && m.args.len() == 1
                && matches!(unparen(&m.receiver), Expr::Path(_) | Expr::Field(_)) =>
        {
            Some(m)
        }
        _ => None,
    }
}

/// `v.extend(g(x))` of a sequence a call of the user's makes (also a method of the
/// user's, `v.extend(cam.residual(p))`) → `for e in g(x) { v.push(e); }`, whose head
/// [`TemporarySequences`] then binds to a name.
struct ExtendedByCalls;

impl VisitMut for ExtendedByCalls {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        syn::visit_mut::visit_expr_mut(self, e);
        let Some(m) = extend_of_place(e) else { return };
        let arg = unparen(&m.args[0]);
        let call = match arg {
            Expr::Call(_) => computed_source_of(arg),
            Expr::MethodCall(c) => {
                let name = c.method.to_string();
                !crate::lower::expr::is_library_method(&name)
                    && !NOT_CHAIN_SOURCES.contains(&name.as_str())
            }
            _ => false,
        };
        if !call {
            return;
        }
        let (span, v) = (m.method.span(), &m.receiver);
        let item = format_ident!("__mochi_extended", span = span);
        *e = syn::parse_quote_spanned!(span=> for #item in #arg { #v.push(#item); });
    }
}

/// `v.extend(w)` of a variable or a field `w` (a `Vec` or an array: a chain held in a
/// name has been written in place by then, `StoredChains`) → `v.extend_from_slice(&w)`.
struct ExtendedByVariables;

impl VisitMut for ExtendedByVariables {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        syn::visit_mut::visit_expr_mut(self, e);
        let Some(m) = extend_of_place(e) else { return };
        if let w @ (Expr::Path(_) | Expr::Field(_)) = unparen(&m.args[0]) {
            let (span, v) = (m.method.span(), &m.receiver);
            *e = syn::parse_quote_spanned!(span=> #v.extend_from_slice(&#w));
        }
    }
}

/// `if let Some((a, b)) = g(..) { body }` → `if let Some(t) = g(..) { let (a, b) = t;
/// body }` of a helper `g` of the user's, and a `match g(..)` arm `Some((a, b)) => body`
/// (without a guard) → `Some(t) => { let (a, b) = t; body }`: the option's value bound
/// whole (which the derivation takes), then taken apart as a `let` does. (The option of
/// a library method, `x.split_first()`, has its own rewrites.)
struct SomeTuples {
    next: usize,
}

impl SomeTuples {
    /// `Some(<tuple pattern>)` → `Some(t)`, and the tuple pattern with `t`'s name.
    fn split(&mut self, p: &mut Pat) -> Option<(Pat, syn::Ident)> {
        let tuple = some_tuple(p)?.clone();
        let Pat::TupleStruct(ts) = p else {
            return None;
        };
        let inner = ts.elems.first_mut()?;
        let span = inner.span();
        let t = format_ident!("__mochi_st{}", self.next, span = span);
        self.next += 1;
        *inner = syn::parse_quote_spanned!(span=> #t);
        Some((tuple, t))
    }
}

/// A call of a helper of the user's ([`crate::rewrite::helper_called`]), or `v.pop()` of
/// a buffer (a stack of pairs: `while let Some((i, w)) = stack.pop()`).
fn helped(e: &Expr) -> bool {
    crate::rewrite::helper_called(e).is_some() || popped(e)
}

/// `v.pop()` (also `self.v.pop()`).
fn popped(e: &Expr) -> bool {
    matches!(unparen(e), Expr::MethodCall(m)
        if m.method == "pop"
            && m.args.is_empty()
            && matches!(unparen(&m.receiver), Expr::Path(_) | Expr::Field(_)))
}

impl SomeTuples {
    /// `if let Some((a, b)) = e { body }` (also `while let`) → `Some(t)` and `let (a, b) =
    /// t;` first in the body.
    fn split_let(&mut self, cond: &mut Expr, body: &mut syn::Block) {
        let Expr::Let(l) = cond else { return };
        if !helped(&l.expr) {
            return;
        }
        if let Some((tuple, t)) = self.split(&mut l.pat) {
            let stmt: syn::Stmt = syn::parse_quote!(let #tuple = #t;);
            body.stmts.insert(0, stmt);
        }
    }
}

/// `match v.pop() { Some(p) => a, None => b }` (the arms in either order, without guards)
/// → `if let Some(p) = v.pop() { a } else { b }`, the form a popped value is taken in.
fn pop_match_as_if_let(m: &syn::ExprMatch) -> Option<syn::ExprIf> {
    if !popped(&m.expr) || m.arms.len() != 2 || m.arms.iter().any(|a| a.guard.is_some()) {
        return None;
    }
    let is_none = |p: &Pat| matches!(p, Pat::Ident(i) if i.ident == "None" && i.subpat.is_none());
    let is_some = |p: &Pat| matches!(p, Pat::TupleStruct(ts) if ts.path.is_ident("Some") && ts.elems.len() == 1);
    let (some, none) = match (&m.arms[0], &m.arms[1]) {
        (a, b) if is_some(&a.pat) && is_none(&b.pat) => (a, b),
        (a, b) if is_none(&a.pat) && is_some(&b.pat) => (b, a),
        _ => return None,
    };
    let (scrutinee, pat, then, other) = (&m.expr, &some.pat, &some.body, &none.body);
    Some(syn::parse_quote_spanned!(m.match_token.span=>
        if let #pat = #scrutinee { #then } else { #other }
    ))
}

impl VisitMut for SomeTuples {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        syn::visit_mut::visit_expr_mut(self, e);
        if let Expr::Match(m) = e {
            if let Some(i) = pop_match_as_if_let(m) {
                *e = Expr::If(i);
            }
        }
        match e {
            Expr::If(i) => self.split_let(&mut i.cond, &mut i.then_branch),
            Expr::While(w) => self.split_let(&mut w.cond, &mut w.body),
            // `g(..).map_or(d, |(a, b)| body)` → `match g(..) { Some(t) => { let (a, b) =
            // t; body } None => d }`.
            Expr::MethodCall(m)
                if m.method == "map_or"
                    && m.args.len() == 2
                    && helped(&m.receiver)
                    && matches!(&m.args[1], Expr::Closure(c) if c.inputs.len() == 1) =>
            {
                let Expr::Closure(c) = &m.args[1] else { return };
                let (opt, d, p, body) = (&m.receiver, &m.args[0], &c.inputs[0], &c.body);
                let span = m.method.span();
                let t = format_ident!("__mochi_st{}", self.next, span = span);
                self.next += 1;
                *e = syn::parse_quote_spanned!(span=> match #opt {
                    Some(#t) => {
                        let #p = #t;
                        #body
                    }
                    None => #d,
                });
            }
            Expr::Match(m) if helped(&m.expr) => {
                for arm in m.arms.iter_mut() {
                    if arm.guard.is_some() {
                        continue;
                    }
                    if let Some((tuple, t)) = self.split(&mut arm.pat) {
                        let body = &arm.body;
                        *arm.body = syn::parse_quote!({ let #tuple = #t; #body });
                    }
                }
            }
            _ => {}
        }
    }
}

/// `g(x).last().copied().unwrap_or(0.0)`, `*g(x).first().unwrap()`, `g(x).get(2)
/// .copied().unwrap()`: an element read from a sequence a call makes, with the `Option`
/// taken out in the same expression → `{ let s = g(x); s.last().copied().unwrap_or(0.0)
/// }`, the sequence bound to a name first, as the element reads of a variable are
/// written.
struct ComputedElementReads<'a> {
    active: &'a HashSet<String>,
    next: usize,
    /// The names bound to differentiable values.
    made: Vec<String>,
}

impl ComputedElementReads<'_> {
    /// The computed receiver under `first()`/`last()`/`get(i)` and the adapters between
    /// it and the method that takes the value out, when `e` ends in such a method.
    fn source(e: &mut Expr) -> Option<&mut Expr> {
        let Expr::MethodCall(top) = e else {
            return None;
        };
        if !matches!(
            top.method.to_string().as_str(),
            "unwrap" | "expect" | "unwrap_or" | "unwrap_or_default" | "unwrap_or_else" | "map_or"
        ) {
            return None;
        }
        let mut cur: &mut Expr = &mut top.receiver;
        loop {
            let Expr::MethodCall(m) = cur else {
                return None;
            };
            match (m.method.to_string().as_str(), m.args.len()) {
                ("copied" | "cloned", 0) | ("map", 1) => cur = &mut m.receiver,
                ("first" | "last", 0) | ("get", 1) => {
                    return computed_source_of(&m.receiver).then_some(&mut *m.receiver);
                }
                _ => return None,
            }
        }
    }

    /// `e` with the source of its read (`e` itself, or the operand of `*e`) bound
    /// first, when it has one.
    fn bind(&mut self, e: &mut Expr, deref: bool) -> bool {
        let span = e.span();
        let name = format_ident!("__mochi_elems{}", self.next, span = span);
        let read: &mut Expr = match &mut *e {
            Expr::Unary(u) if deref => &mut u.expr,
            _ if deref => return false,
            other => other,
        };
        let Some(src) = Self::source(read) else {
            return false;
        };
        let mut value = std::mem::replace(src, syn::parse_quote_spanned!(span=> #name));
        self.next += 1;
        if mentions_active(&value, self.active) {
            self.made.push(name.to_string());
        }
        self.visit_expr_mut(&mut value);
        let whole = e.clone();
        *e = syn::parse_quote_spanned!(span=> { let #name = #value; #whole });
        true
    }
}

impl ComputedElementReads<'_> {
    /// `x.iter().scan(s, f).last().unwrap()` (also `expect`) → `{ let all: Vec<_> =
    /// x.iter().scan(s, f).collect(); all[all.len() - 1] }`: the last state, from the
    /// collected states, as the chains collect them.
    fn last_of_scan(&mut self, e: &mut Expr) -> bool {
        let Expr::MethodCall(u) = &*e else {
            return false;
        };
        if !matches!(u.method.to_string().as_str(), "unwrap" | "expect") {
            return false;
        }
        let Expr::MethodCall(l) = unparen(&u.receiver) else {
            return false;
        };
        if l.method != "last" || !l.args.is_empty() || !chain_calls(&l.receiver, &["scan"]) {
            return false;
        }
        let span = l.method.span();
        let chain = &l.receiver;
        let name = format_ident!("__mochi_scanned{}", self.next, span = span);
        self.next += 1;
        if mentions_active(chain, self.active) {
            self.made.push(name.to_string());
        }
        *e = syn::parse_quote_spanned!(span=> {
            let #name: ::std::vec::Vec<_> = #chain.collect();
            #name[#name.len() - 1]
        });
        true
    }
}

impl VisitMut for ComputedElementReads<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if self.last_of_scan(e) {
            syn::visit_mut::visit_expr_mut(self, e);
            return;
        }
        // (`*g(x).last().unwrap()`: the dereference inside the block, with the read.)
        let deref = matches!(e, Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)));
        if !self.bind(e, deref) {
            syn::visit_mut::visit_expr_mut(self, e);
        }
    }
}

/// `for v in &g(x)`, `for v in g(x).iter()`, `for (a, b) in x.iter().zip(&g(x))`, `for v
/// in g(x)`, `for v in &vec![..]` (also `&[a, b]`), `for c in x[a..].chunks(m)`: a
/// sequence made at the loop's head by a call of a function (or by `vec!` or an array
/// literal), or a sub-slice cut into pieces, is
/// bound first, by a `let` of its own (`{ let __mochi_seq0 =
/// g(x); for v in &__mochi_seq0 { .. } }`), so that the loop walks a variable, as the
/// derivation's index loops do. The names bound to differentiable values are `made`.
struct TemporarySequences<'a> {
    active: &'a HashSet<String>,
    next: usize,
    made: Vec<String>,
}

impl TemporarySequences<'_> {
    /// A sequence made by a call: `g(..)` of a helper of the user's (not `repeat`,
    /// `once` and the other iterator makers, which the chains read), `vec![..]` or an
    /// array literal.
    fn made_by_call(e: &Expr) -> bool {
        match e {
            Expr::Macro(m) => m.mac.path.is_ident("vec"),
            Expr::Array(_) => true,
            _ => crate::rewrite::helper_called(e)
                .is_some_and(|g| !crate::rewrite::ITER_MAKERS.contains(&g.to_string().as_str())),
        }
    }

    /// Replaces the sequences made by calls in a loop head `e` by fresh names, pushing
    /// their `let`s.
    fn hoist(&mut self, e: &mut Expr, lets: &mut Vec<syn::Stmt>) {
        if Self::made_by_call(e) {
            let span = e.span();
            let name = format_ident!("__mochi_seq{}", self.next, span = span);
            self.next += 1;
            if mentions_active(e, self.active) {
                self.made.push(name.to_string());
            }
            lets.push(syn::parse_quote_spanned!(span=> let #name = #e;));
            *e = syn::parse_quote_spanned!(span=> #name);
            return;
        }
        match e {
            Expr::Reference(r) if r.mutability.is_none() => self.hoist(&mut r.expr, lets),
            Expr::Paren(p) => self.hoist(&mut p.expr, lets),
            Expr::MethodCall(m) => {
                let walks = matches!(
                    m.method.to_string().as_str(),
                    "iter"
                        | "into_iter"
                        | "enumerate"
                        | "rev"
                        | "skip"
                        | "take"
                        | "step_by"
                        | "windows"
                        | "chunks"
                        | "chunks_exact"
                        | "map"
                        | "filter"
                        | "filter_map"
                        | "copied"
                        | "cloned"
                        | "zip"
                );
                // `x[a..].chunks(m)`: the pieces of a sub-slice bound by a `let` (whose
                // cotangent the derivation adds back into `x̄[a..]`).
                if Self::pieces_of_subslice(m) {
                    let span = m.receiver.span();
                    let name = format_ident!("__mochi_seq{}", self.next, span = span);
                    self.next += 1;
                    if mentions_active(&m.receiver, self.active) {
                        self.made.push(name.to_string());
                    }
                    let part = &m.receiver;
                    lets.push(syn::parse_quote_spanned!(span=> let #name = &#part;));
                    *m.receiver = syn::parse_quote_spanned!(span=> #name);
                    return;
                }
                if walks {
                    self.hoist(&mut m.receiver, lets);
                    if m.method == "zip" {
                        for a in m.args.iter_mut() {
                            self.hoist(a, lets);
                        }
                    }
                }
            }
            _ => {}
        }
    }
}

impl TemporarySequences<'_> {
    /// `x[a..].chunks(m)` (also `windows`, `chunks_exact`, `rchunks`, `rchunks_exact`):
    /// pieces of a sub-slice.
    fn pieces_of_subslice(m: &syn::ExprMethodCall) -> bool {
        matches!(
            m.method.to_string().as_str(),
            "windows" | "chunks" | "chunks_exact" | "rchunks" | "rchunks_exact"
        ) && matches!(unparen(&m.receiver), Expr::Index(ix) if matches!(&*ix.index, Expr::Range(_)))
    }

    /// `let pts: Vec<V3> = p[..h].chunks(3).map(..).collect();`, `w.iter().zip(p[1..]
    /// .chunks(2)).fold(..)`: the sub-slice cut into pieces at the head of a chain a
    /// `let` or a statement consumes (or of a chain it zips), bound first as a loop's is.
    fn hoist_pieces_of_chain(&mut self, e: &mut Expr, lets: &mut Vec<syn::Stmt>) {
        if matches!(&*e, Expr::MethodCall(m) if Self::pieces_of_subslice(m)) {
            self.hoist(e, lets);
            return;
        }
        if let Expr::MethodCall(m) = e {
            if m.method == "zip" {
                for a in m.args.iter_mut() {
                    // `.zip(&matvec(&w, h))`, `.zip(g(x).iter())`: the sequence a call
                    // makes, bound first as a loop's is.
                    let called = match unparen(a) {
                        Expr::Reference(r) if r.mutability.is_none() => {
                            Self::made_by_call(unparen(&r.expr))
                        }
                        Expr::MethodCall(i) if i.method == "iter" && i.args.is_empty() => {
                            Self::made_by_call(unparen(&i.receiver))
                        }
                        _ => false,
                    };
                    if called {
                        self.hoist(a, lets);
                    } else {
                        self.hoist_pieces_of_chain(a, lets);
                    }
                }
            }
            self.hoist_pieces_of_chain(&mut m.receiver, lets);
        }
    }
}

impl TemporarySequences<'_> {
    /// `[a, b, c].iter().fold(V2::ZERO, |acc, q| acc + *q)`, `vec![p, q].iter().map(..)`
    /// in a statement: a literal sequence of names (or fields) that a chain walks, bound
    /// first by a `let` so that the chain walks a variable, as a loop's does. Not inside
    /// closures (whose parameters the elements may name) or branches.
    fn hoist_literal_sequences(&mut self, e: &mut Expr, lets: &mut Vec<syn::Stmt>) {
        fn plain_elements(e: &Expr) -> bool {
            let name =
                |x: &Expr| matches!(unparen(x), Expr::Path(p) if p.path.get_ident().is_some());
            matches!(e, Expr::Array(a) if !a.elems.is_empty()
                && a.elems.iter().all(|x| name(x)
                    || matches!(unparen(x), Expr::Field(f) if name(&f.base))))
        }
        match e {
            Expr::MethodCall(m) => {
                if matches!(m.method.to_string().as_str(), "iter" | "into_iter")
                    && m.args.is_empty()
                    && plain_elements(unparen(&m.receiver))
                    && mentions_active(&m.receiver, self.active)
                {
                    self.hoist(&mut m.receiver, lets);
                    return;
                }
                self.hoist_literal_sequences(&mut m.receiver, lets);
                for a in m.args.iter_mut() {
                    self.hoist_literal_sequences(a, lets);
                }
            }
            Expr::Binary(b) => {
                self.hoist_literal_sequences(&mut b.left, lets);
                self.hoist_literal_sequences(&mut b.right, lets);
            }
            Expr::Paren(p) => self.hoist_literal_sequences(&mut p.expr, lets),
            Expr::Unary(u) => self.hoist_literal_sequences(&mut u.expr, lets),
            Expr::Reference(r) => self.hoist_literal_sequences(&mut r.expr, lets),
            Expr::Call(c) => {
                for a in c.args.iter_mut() {
                    self.hoist_literal_sequences(a, lets);
                }
            }
            _ => {}
        }
    }
}

impl VisitMut for TemporarySequences<'_> {
    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        syn::visit_mut::visit_block_mut(self, b);
        let mut out = Vec::with_capacity(b.stmts.len());
        for mut s in std::mem::take(&mut b.stmts) {
            let mut lets = Vec::new();
            match &mut s {
                syn::Stmt::Local(l) => {
                    if let Some(init) = l.init.as_mut() {
                        self.hoist_pieces_of_chain(&mut init.expr, &mut lets);
                        self.hoist_literal_sequences(&mut init.expr, &mut lets);
                    }
                }
                syn::Stmt::Expr(e, _) => {
                    self.hoist_pieces_of_chain(e, &mut lets);
                    self.hoist_literal_sequences(e, &mut lets);
                }
                _ => {}
            }
            out.extend(lets);
            out.push(s);
        }
        b.stmts = out;
    }

    fn visit_expr_mut(&mut self, e: &mut Expr) {
        syn::visit_mut::visit_expr_mut(self, e);
        let Expr::ForLoop(f) = e else {
            return;
        };
        // `for cam in [&cam0, &cam1]`: an array of borrows of values without a
        // derivative, bound first and read by index (the loop as written keeps the
        // array's iterator, which the reverse sweep would replay after the borrows end:
        // "`cam0` does not live long enough").
        if let Expr::Array(a) = unparen(&f.expr) {
            let lent = |e: &Expr| {
                matches!(unparen(e), Expr::Reference(r) if r.mutability.is_none()
                    && plain_place(&r.expr))
            };
            if !a.elems.is_empty()
                && a.elems.iter().all(lent)
                && !mentions_active(&a.elems, self.active)
            {
                let span = f.span();
                let arr = format_ident!("__mochi_lent{}", self.next, span = span);
                let j = format_ident!("__mochi_lentj{}", self.next, span = span);
                self.next += 1;
                let (label, attrs, pat, body) = (&f.label, &f.attrs, &f.pat, &f.body.stmts);
                *e = syn::parse_quote_spanned!(span=> {
                    let #arr = #a;
                    #(#attrs)* #label for #j in 0..#arr.len() {
                        let #pat = #arr[#j];
                        #(#body)*
                    }
                });
                return;
            }
        }
        let mut lets = Vec::new();
        // `for batch in DATA.chunks(2)` of a `const`: the constant bound first as
        // `let c = &DATA;`, a borrow promoted to `'static` (a method's auto-borrow of it
        // is a temporary, which the iterator the derivation keeps would outlive).
        if matches!(&*f.expr, Expr::MethodCall(_)) {
            let mut root = &mut *f.expr;
            while let Expr::MethodCall(m) = root {
                root = &mut *m.receiver;
            }
            let constant = matches!(&*root, Expr::Path(p)
                if p.path.get_ident().is_some_and(|i| crate::twin::constant_name(&i.to_string())));
            if constant {
                let span = root.span();
                let name = format_ident!("__mochi_const{}", self.next, span = span);
                self.next += 1;
                let c = root.clone();
                lets.push(syn::parse_quote_spanned!(span=> let #name = &#c;));
                *root = syn::parse_quote_spanned!(span=> #name);
            }
        }
        self.hoist(&mut f.expr, &mut lets);
        if !lets.is_empty() {
            let span = f.span();
            *e = syn::parse_quote_spanned!(span=> { #(#lets)* #f });
        }
    }
}

/// Arrays built element by element from differentiable values, as arrays built from a
/// `Vec` (whose rules exist):
///
/// - `Array1::from_iter(chain)` (also `Array::from_iter`), `chain.collect::<Array1<_>>()`
///   → `Array1::from(chain.collect::<Vec<_>>())`;
/// - `Array2::from_shape_fn(shape, |(i, j)| e)` (also `Array1`, `Array3`, `Array`) → a loop over
///   the flat positions pushing `e` with `(i, j)` bound to the position's index, then
///   `Array2::from_shape_vec(shape, v).unwrap()` (standard order, as `from_shape_fn`).
fn array_from_elements(
    e: &Expr,
    active: &HashSet<String>,
    float_ty: Option<&syn::Ident>,
) -> Option<Expr> {
    let span = e.span();
    let elem: syn::Type = match float_ty {
        Some(t) => syn::parse_quote!(#t),
        None => syn::parse_quote!(_),
    };
    let array_path = |p: &syn::ExprPath, names: &[&str]| -> Option<syn::Path> {
        let n = p.path.segments.len();
        if p.qself.is_some() || n < 2 {
            return None;
        }
        let ty = &p.path.segments[n - 2];
        if !names.contains(&ty.ident.to_string().as_str()) {
            return None;
        }
        let mut prefix = p.path.clone();
        prefix.segments.pop();
        let last = prefix.segments.pop()?.into_value();
        prefix.segments.push(last);
        Some(prefix)
    };
    match e {
        // nalgebra's `Matrix4::new(m11, …, m44)`, more scalars than a rule takes:
        // the entries in a `Vec`, row by row as `new` takes them, then
        // `Matrix4::from_row_slice`.
        Expr::Call(c) if c.args.len() == 16 && mentions_active(&c.args, active) => {
            let Expr::Path(p) = &*c.func else { return None };
            let n = p.path.segments.len();
            if p.qself.is_some()
                || n < 2
                || p.path.segments[n - 1].ident != "new"
                || p.path.segments[n - 2].ident != "Matrix4"
            {
                return None;
            }
            let mut ty = p.path.clone();
            ty.segments.pop();
            let last = ty.segments.pop()?.into_value();
            ty.segments.push(last);
            let args = &c.args;
            let v = format_ident!("__mochi_entries", span = span);
            Some(syn::parse_quote_spanned!(span=> {
                let #v: Vec<#elem> = vec![#args];
                #ty::from_row_slice(&#v[..])
            }))
        }
        // nalgebra's `DMatrix::from_fn(r, c, |i, j| e)`, `DVector::from_fn(n, |i, _| e)`,
        // `Matrix3::from_fn(|i, j| e)` (also `Matrix2`, `Matrix4`, `Vector2`…`Vector4`):
        // the entries pushed row by row, then `from_row_slice`.
        Expr::Call(c)
            if c.args.last().is_some_and(|f| {
                matches!(f, Expr::Closure(k) if k.inputs.len() == 2) && mentions_active(f, active)
            }) =>
        {
            let Expr::Path(p) = &*c.func else { return None };
            let n = p.path.segments.len();
            if p.qself.is_some() || n < 2 || p.path.segments[n - 1].ident != "from_fn" {
                return None;
            }
            let ty_name = p.path.segments[n - 2].ident.to_string();
            let mut ty = p.path.clone();
            ty.segments.pop();
            let ty = {
                let last = ty.segments.pop()?.into_value();
                ty.segments.push(last);
                ty
            };
            let static_dims = |r: usize, c: usize| -> (Expr, Expr) {
                (syn::parse_quote!(#r), syn::parse_quote!(#c))
            };
            let (rows, cols): (Expr, Expr) = match (ty_name.as_str(), c.args.len()) {
                ("DMatrix", 3) => (c.args[0].clone(), c.args[1].clone()),
                ("DVector", 2) => (c.args[0].clone(), syn::parse_quote!(1usize)),
                ("Matrix2", 1) => static_dims(2, 2),
                ("Matrix3", 1) => static_dims(3, 3),
                ("Matrix4", 1) => static_dims(4, 4),
                ("Vector2", 1) => static_dims(2, 1),
                ("Vector3", 1) => static_dims(3, 1),
                ("Vector4", 1) => static_dims(4, 1),
                _ => return None,
            };
            let Some(Expr::Closure(f)) = c.args.last() else {
                return None;
            };
            let (pi, pj, body) = (&f.inputs[0], &f.inputs[1], &f.body);
            let (r, k, v, i, j) = (
                format_ident!("__mochi_rows", span = span),
                format_ident!("__mochi_cols", span = span),
                format_ident!("__mochi_elems", span = span),
                format_ident!("__mochi_fi", span = span),
                format_ident!("__mochi_fj", span = span),
            );
            let build: Expr = match ty_name.as_str() {
                "DMatrix" => syn::parse_quote_spanned!(span=> #ty::from_row_slice(#r, #k, &#v[..])),
                "DVector" => syn::parse_quote_spanned!(span=> #ty::from_vec(#v)),
                _ => syn::parse_quote_spanned!(span=> #ty::from_row_slice(&#v[..])),
            };
            Some(syn::parse_quote_spanned!(span=> {
                let (#r, #k): (usize, usize) = (#rows, #cols);
                let mut #v: Vec<#elem> = Vec::new();
                for #i in 0..#r {
                    for #j in 0..#k {
                        let #pi: usize = #i;
                        let #pj: usize = #j;
                        #v.push(#body);
                    }
                }
                #build
            }))
        }
        Expr::Call(c) if c.args.len() == 1 && mentions_active(&c.args[0], active) => {
            let Expr::Path(p) = &*c.func else { return None };
            let method = p.path.segments.last()?.ident.to_string();
            if method != "from_iter" {
                return None;
            }
            let ty = array_path(p, &["Array1", "Array"])?;
            let chain = &c.args[0];
            let iterator = matches!(chain, Expr::MethodCall(m) if matches!(
                m.method.to_string().as_str(),
                "iter" | "into_iter" | "map" | "filter" | "filter_map" | "zip" | "enumerate"
                    | "copied" | "cloned" | "rev" | "skip" | "take" | "chain" | "step_by"
                    | "windows" | "chunks" | "chunks_exact" | "rchunks" | "rchunks_exact" | "scan"
                    | "flat_map" | "flatten"
            ));
            let chain: Expr = if iterator {
                chain.clone()
            } else {
                syn::parse_quote!(#chain.into_iter())
            };
            Some(syn::parse_quote_spanned!(span=>
                #ty::from(#chain.collect::<Vec<#elem>>())
            ))
        }
        Expr::Call(c) if c.args.len() == 2 && mentions_active(&c.args[1], active) => {
            let Expr::Path(p) = &*c.func else { return None };
            if p.path.segments.last()?.ident != "from_shape_fn" {
                return None;
            }
            let ty = array_path(p, &["Array1", "Array2", "Array3", "Array"])?;
            let Expr::Closure(f) = &c.args[1] else {
                return None;
            };
            if f.inputs.len() != 1 {
                return None;
            }
            let pat = &f.inputs[0];
            let body = &f.body;
            let shape = &c.args[0];
            let (d, v, k) = (
                format_ident!("__mochi_shape", span = span),
                format_ident!("__mochi_elems", span = span),
                format_ident!("__mochi_flat_k", span = span),
            );
            Some(syn::parse_quote_spanned!(span=> {
                let #d = ::mochi::__private::shape_dim(#shape);
                let mut #v: Vec<#elem> = Vec::new();
                for #k in 0..::mochi::__private::dim_size(&#d) {
                    let #pat = ::mochi::__private::nth_pattern(&#d, #k);
                    #v.push(#body);
                }
                #ty::from_shape_vec(#d, #v).unwrap()
            }))
        }
        Expr::MethodCall(m) if m.method == "collect" && m.args.is_empty() => {
            let turbofish = m.turbofish.as_ref()?;
            let Some(syn::GenericArgument::Type(syn::Type::Path(t))) = turbofish.args.first()
            else {
                return None;
            };
            let last = t.path.segments.last()?;
            if !(last.ident == "Array1" || last.ident == "Array")
                || !mentions_active(&m.receiver, active)
            {
                return None;
            }
            let mut ty = t.path.clone();
            if let Some(l) = ty.segments.last_mut() {
                l.arguments = syn::PathArguments::None;
            }
            let chain = &m.receiver;
            Some(syn::parse_quote_spanned!(span=>
                #ty::from(#chain.collect::<Vec<#elem>>())
            ))
        }
        _ => None,
    }
}

/// ndarray forms written as others the rules and rewrites take:
///
/// - `y.scaled_add(a, &x)` → `y = &y + &(&x * (a))`;
/// - `y.zip_mut_with(&x, |a, &b| body)` → `Zip::from(&mut y).and(&x).for_each(..)`
///   (see [`zip_loop`]; the shapes must be equal, where ndarray broadcasts `x`);
/// - `concatenate![axis, a, b]`, `stack![axis, a, b]` →
///   `ndarray::concatenate(axis, &[a.view(), b.view()]).unwrap()` (the macros'
///   expansion), whose rules exist.
fn array_method_forms(e: &Expr, active: &HashSet<String>) -> Option<Expr> {
    let span = e.span();
    match e {
        Expr::MethodCall(m)
            if m.method == "scaled_add"
                && m.args.len() == 2
                && matches!(unparen(&m.receiver), Expr::Path(_) | Expr::Field(_))
                && mentions_active(e, active) =>
        {
            let (y, a, x) = (&m.receiver, &m.args[0], &m.args[1]);
            Some(syn::parse_quote_spanned!(span=> #y = &#y + &(#x * (#a))))
        }
        Expr::MethodCall(m)
            if m.method == "zip_mut_with"
                && m.args.len() == 2
                && matches!(unparen(&m.receiver), Expr::Path(_) | Expr::Field(_))
                && mentions_active(e, active) =>
        {
            let (y, x, f) = (&m.receiver, &m.args[0], &m.args[1]);
            Some(syn::parse_quote_spanned!(span=>
                ::ndarray::Zip::from(&mut #y).and(#x).for_each(#f)
            ))
        }
        Expr::Macro(mac) => {
            let name = mac.mac.path.segments.last()?.ident.to_string();
            if name != "concatenate" && name != "stack" {
                return None;
            }
            if !tokens_mention(&mac.mac.tokens, &|i| active.contains(&i.to_string())) {
                return None;
            }
            let parts = mac
                .mac
                .parse_body_with(
                    syn::punctuated::Punctuated::<Expr, syn::Token![,]>::parse_terminated,
                )
                .ok()?;
            let mut parts = parts.into_iter();
            let axis = parts.next()?;
            let arrays: Vec<Expr> = parts.collect();
            if arrays.is_empty() {
                return None;
            }
            let f = format_ident!("{}", name, span = mac.mac.path.span());
            // (Each array borrowed into a name first: a view of a temporary,
            // `ones.insert_axis(Axis(0))`, would not outlive the call; the borrow extends
            // it, and a variable is not moved.)
            let names: Vec<syn::Ident> = (0..arrays.len())
                .map(|k| format_ident!("__mochi_joined{}", k, span = span))
                .collect();
            Some(syn::parse_quote_spanned!(span=> {
                #(let #names = &#arrays;)*
                ndarray::#f(#axis, &[#(#names.view()),*]).unwrap()
            }))
        }
        _ => None,
    }
}

/// The operands of `Zip::from(a).and(b).and(c)`, in order.
pub fn zip_operands(e: &Expr) -> Option<Vec<Expr>> {
    match unparen(e) {
        Expr::MethodCall(m) if m.method == "and" && m.args.len() == 1 => {
            let mut v = zip_operands(&m.receiver)?;
            v.push(m.args[0].clone());
            Some(v)
        }
        Expr::Call(c) if c.args.len() == 1 => {
            let Expr::Path(p) = &*c.func else { return None };
            let segs = crate::rewrite::path_segments(&p.path);
            let n = segs.len();
            (n >= 2 && (segs[n - 1] == "from" || segs[n - 1] == "indexed") && segs[n - 2] == "Zip")
                .then(|| vec![c.args[0].clone()])
        }
        _ => None,
    }
}

/// Whether a `Zip` chain starts with `Zip::indexed(a)`: its closures take the index
/// first.
fn zip_indexed(e: &Expr) -> bool {
    match unparen(e) {
        Expr::MethodCall(m) if m.method == "and" => zip_indexed(&m.receiver),
        Expr::Call(c) => matches!(&*c.func, Expr::Path(p)
            if p.path.segments.last().is_some_and(|s| s.ident == "indexed")),
        _ => false,
    }
}

/// Whether a `Zip` closure's result depends on the order of the elements: a `for_each`
/// that assigns (or pushes to) a variable it captures other than by a sum or product of
/// terms that do not read it (`s += x * w`) or a running `max`/`min`, a `fold` whose step
/// is not the accumulator combined once by `+`, `-`, `*`, `max` or `min` with the
/// element's term.
fn zip_order_dependent(f: &syn::ExprClosure, fold: bool) -> bool {
    let mut params = Vec::new();
    for p in &f.inputs {
        crate::activity::pat_names(p, &mut params);
    }
    if fold {
        let Some(acc) = params.first().cloned() else {
            return false;
        };
        let is_acc = |e: &Expr| matches!(unparen(e), Expr::Path(p) if p.path.is_ident(&acc));
        let names_acc =
            |e: &Expr| tokens_mention(&quote::ToTokens::to_token_stream(e), &|i| i == acc.as_str());
        let body = match unparen(&f.body) {
            Expr::Block(b) if b.block.stmts.len() == 1 => match &b.block.stmts[0] {
                syn::Stmt::Expr(e, None) => e,
                _ => return true,
            },
            other => other,
        };
        return match unparen(body) {
            Expr::Binary(b)
                if matches!(
                    b.op,
                    syn::BinOp::Add(_) | syn::BinOp::Sub(_) | syn::BinOp::Mul(_)
                ) =>
            {
                !((is_acc(&b.left) && !names_acc(&b.right))
                    || (!matches!(b.op, syn::BinOp::Sub(_))
                        && is_acc(&b.right)
                        && !names_acc(&b.left)))
            }
            Expr::MethodCall(mc)
                if matches!(mc.method.to_string().as_str(), "max" | "min")
                    && mc.args.len() == 1 =>
            {
                !is_acc(&mc.receiver) || names_acc(&mc.args[0])
            }
            _ => true,
        };
    }
    // Names the closure binds itself (its parameters, its own `let`s) are its own.
    struct Captured<'a> {
        own: Vec<String>,
        params: &'a [String],
        found: bool,
        /// The captured variables written in an order-free way, each with how (`+`:
        /// `s += t`, `-=`; `*`: `s *= t`, `/=`; `m`: `m = m.max(t)`, `min`).
        free: Vec<(String, char)>,
    }
    impl Captured<'_> {
        /// Whether `e` reads the variable at the root of `place`.
        fn names_root(&self, e: &Expr, place: &Expr) -> bool {
            crate::activity::root_name(place).is_some_and(|r| {
                tokens_mention(&quote::ToTokens::to_token_stream(e), &|i| i == r.as_str())
            })
        }
        /// The root of `place` when it is a captured variable.
        fn captured(&self, place: &Expr) -> Option<String> {
            crate::activity::root_name(place)
                .filter(|r| !self.params.contains(r) && !self.own.contains(r))
        }
        fn place(&mut self, e: &Expr) {
            if self.captured(e).is_some() {
                self.found = true;
            }
        }
    }
    impl<'ast> syn::visit::Visit<'ast> for Captured<'_> {
        fn visit_local(&mut self, l: &'ast syn::Local) {
            syn::visit::visit_local(self, l);
            crate::activity::pat_names(&l.pat, &mut self.own);
        }
        fn visit_expr_assign(&mut self, a: &'ast syn::ExprAssign) {
            // (`*o = ..` of a parameter's element writes the element; `m = m.max(v)`, a
            // running maximum, is the same in any order.)
            let running = matches!(unparen(&a.right), Expr::MethodCall(mc)
                if matches!(mc.method.to_string().as_str(), "max" | "min")
                    && mc.args.len() == 1
                    && crate::activity::root_name(&mc.receiver) == crate::activity::root_name(&a.left)
                    && !self.names_root(&mc.args[0], &a.left));
            if !running {
                self.place(&a.left);
            } else if let Some(r) = self.captured(&a.left) {
                self.free.push((r, 'm'));
            }
            syn::visit::visit_expr_assign(self, a);
        }
        fn visit_expr_binary(&mut self, b: &'ast syn::ExprBinary) {
            // (`s += x * w`: a sum, the same in any order but for rounding; not `s *= ..`
            // of `s` itself.)
            if crate::activity::is_arithmetic_assign(&b.op) {
                if matches!(b.op, syn::BinOp::RemAssign(_)) || self.names_root(&b.right, &b.left) {
                    self.place(&b.left);
                } else if let Some(r) = self.captured(&b.left) {
                    let how = match b.op {
                        syn::BinOp::AddAssign(_) | syn::BinOp::SubAssign(_) => '+',
                        _ => '*',
                    };
                    self.free.push((r, how));
                }
            }
            syn::visit::visit_expr_binary(self, b);
        }
        fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
            if STD_MUTATORS.contains(&m.method.to_string().as_str()) {
                self.place(&m.receiver);
            }
            syn::visit::visit_expr_method_call(self, m);
        }
    }
    let mut c = Captured {
        own: Vec::new(),
        params: &params,
        found: false,
        free: Vec::new(),
    };
    syn::visit::Visit::visit_expr(&mut c, &f.body);
    // Each write is order-free alone; together they are not when one variable is
    // written two ways (`s *= 0.5; s += v;`, a discounted sum), or when the body reads
    // a variable it writes anywhere but in its own writes (`k += 1.0; s += k * v;`, a
    // counter; `s += v; *o = s;`, a running sum written out).
    let body = quote::ToTokens::to_token_stream(&f.body);
    let names: HashSet<&String> = c.free.iter().map(|(r, _)| r).collect();
    let entangled = names.iter().any(|r| {
        let writes = c.free.iter().filter(|(w, _)| w == *r);
        let kinds: HashSet<char> = writes.clone().map(|(_, k)| *k).collect();
        let own_mentions: usize = writes.map(|(_, k)| if *k == 'm' { 2 } else { 1 }).sum();
        kinds.len() > 1 || mentions_count(&body, r) > own_mentions
    });
    c.found || entangled
}

/// How many times the identifier `name` occurs in `ts` (inside groups too).
fn mentions_count(ts: &TokenStream, name: &str) -> usize {
    ts.clone()
        .into_iter()
        .map(|t| match t {
            proc_macro2::TokenTree::Ident(i) => usize::from(i == name),
            proc_macro2::TokenTree::Group(g) => mentions_count(&g.stream(), name),
            _ => 0,
        })
        .sum()
}

/// ndarray's `Zip` over differentiable arrays, as a loop over the elements in logical
/// order (the arrays read through `flatten()`, a rule):
///
/// - `Zip::from(&mut out).and(&a).for_each(|o, &x| *o = e)` (any number of operands,
///   any of them `&mut` of a variable or field): `*o` is `out[p]`, `p` the element's
///   index (`__private::nth_pattern`);
/// - `Zip::from(&a).and(&b).map_collect(|&x, &y| e)` → the values collected into a
///   vector, reshaped to the operands' shape;
/// - `Zip::from(&a).and(&b).fold(init, |acc, &x, &y| e)`;
/// - `Zip::indexed(&a)…`: the same, the closure's first pattern (after a fold's
///   accumulator) bound to the element's index.
///
/// The operands must have one shape, as `Zip` asserts.
fn zip_loop(e: &Expr, active: &HashSet<String>, next: &mut usize) -> Option<Expr> {
    let Expr::MethodCall(m) = e else { return None };
    let method = m.method.to_string();
    let closure_at = match method.as_str() {
        "for_each" | "map_collect" if m.args.len() == 1 => 0,
        "fold" if m.args.len() == 2 => 1,
        _ => return None,
    };
    let operands = zip_operands(&m.receiver)?;
    // Two operands' `map_collect` is a rule (`NdMapCollect`), without the copies.
    if !mentions_active(e, active) || (method == "map_collect" && operands.len() == 2) {
        return None;
    }
    let Expr::Closure(f) = &m.args[closure_at] else {
        return None;
    };
    let indexed = zip_indexed(&m.receiver);
    let skip = usize::from(method == "fold") + usize::from(indexed);
    if f.inputs.len() != operands.len() + skip {
        return None;
    }
    let span = m.method.span();
    // `Zip` visits the elements in the order of the arrays' memory (a transposed view's
    // by columns), the loop below in their logical order: the two agree where every
    // operand is in standard layout, which is checked where a closure carries a value
    // from one element to the next (a silent wrong value otherwise).
    let ordered = zip_order_dependent(f, method == "fold");
    *next += 1;
    let id = *next;
    let (d, k, p) = (
        format_ident!("__mochi_zd{}", id, span = span),
        format_ident!("__mochi_zk{}", id, span = span),
        format_ident!("__mochi_zp{}", id, span = span),
    );
    // The position in logical order of the `k`-th element `Zip` visits: `k`, or where
    // the order matters, by columns where `Zip` walks column-major operands so (a
    // transposed view; before 2026-12-07 refused, and before 2026-12-06 a wrong value).
    let pos = if ordered {
        format_ident!("__mochi_zq{}", id, span = span)
    } else {
        k.clone()
    };
    let mut pre: Vec<syn::Stmt> = Vec::new();
    let mut lets: Vec<syn::Stmt> = Vec::new();
    let mut body: Expr = (*f.body).clone();
    // The operands' layouts, where the order matters.
    let mut layouts: Vec<TokenStream> = Vec::new();
    // Whether an operand is written, through the element's index `p`.
    let mut writes = false;
    for (n, (op, pat)) in operands.iter().zip(f.inputs.iter().skip(skip)).enumerate() {
        // `x.windows(k)` of a one-dimensional array: the `k`-th view `x.slice(s![k..k + w])`.
        if let Expr::MethodCall(w) = unparen(op) {
            if w.method == "windows"
                && w.args.len() == 1
                && !matches!(&w.args[0], Expr::Tuple(_) | Expr::Array(_))
                && matches!(unparen(&w.receiver), Expr::Path(_) | Expr::Field(_))
            {
                let Pat::Ident(_) = pat else { return None };
                let (x, len) = (&w.receiver, &w.args[0]);
                let l = format_ident!("__mochi_zw{}_{}", id, n, span = span);
                pre.push(syn::parse_quote_spanned!(span=> let #l: usize = #len;));
                pre.push(syn::parse_quote_spanned!(span=>
                    assert!(#l > 0, "window size must be greater than zero");));
                let shape = quote_spanned!(span=>
                    ::mochi::__private::shape_dim((#x.len() + 1).saturating_sub(#l)));
                pre.push(if n == 0 {
                    syn::parse_quote_spanned!(span=> let #d = #shape;)
                } else {
                    syn::parse_quote_spanned!(span=>
                        assert!(#shape == #d, "Zip: the operands have different shapes");)
                });
                lets.push(syn::parse_quote_spanned!(span=>
                    let #pat = #x.slice(::ndarray::s![#pos..#pos + #l]);));
                continue;
            }
        }
        let (place, mutable) = match unparen(op) {
            Expr::Reference(r) => ((*r.expr).clone(), r.mutability.is_some()),
            other => (other.clone(), false),
        };
        if ordered {
            layouts.push(quote_spanned!(span=> ::mochi::__private::zip_layout(&#place)));
        }
        pre.push(if n == 0 {
            syn::parse_quote_spanned!(span=>
                let #d = ::mochi::__private::shape_dim(#place.raw_dim());
            )
        } else {
            syn::parse_quote_spanned!(span=>
                assert!(
                    #place.raw_dim() == #d,
                    "Zip: the operands have different shapes"
                );
            )
        });
        if mutable {
            writes = true;
            // `*o` in the body is the element of the variable.
            if !matches!(place, Expr::Path(_) | Expr::Field(_)) {
                return None;
            }
            let Pat::Ident(pi) = pat else { return None };
            let mut uses = DerefUses {
                name: &pi.ident,
                place: syn::parse_quote!(#place[#p]),
                other: false,
            };
            uses.visit_expr_mut(&mut body);
            if uses.other {
                return None;
            }
            continue;
        }
        let z = format_ident!("__mochi_z{}_{}", id, n, span = span);
        pre.push(syn::parse_quote_spanned!(span=> let #z = #place.flatten();));
        match pat {
            Pat::Reference(r) => {
                let inner = &r.pat;
                lets.push(syn::parse_quote_spanned!(span=> let #inner = #z[#pos];));
            }
            other => lets.push(syn::parse_quote_spanned!(span=> let #other = &#z[#pos];)),
        }
    }
    let count: Expr = syn::parse_quote_spanned!(span=> ::mochi::__private::dim_size(&#d));
    let index =
        writes.then(|| quote_spanned!(span=> let #p = ::mochi::__private::nth_pattern(&#d, #pos);));
    // `Zip::indexed(a)`: the closure's index, `i` or `(i, j)`, is the element's.
    if indexed {
        let at = &f.inputs[skip - 1];
        lets.insert(
            0,
            syn::parse_quote_spanned!(span=> let #at = ::mochi::__private::nth_pattern(&#d, #pos);),
        );
    }
    let position = ordered.then(|| {
        let c = format_ident!("__mochi_zc{}", id, span = span);
        pre.push(syn::parse_quote_spanned!(span=>
            let #c = ::mochi::no_grad(
                ::mochi::__private::zip_by_columns(&[#(#layouts),*], &#d)
            );
        ));
        quote_spanned!(span=>
            let #pos = ::mochi::no_grad(::mochi::__private::zip_position(&#d, #k, #c));
        )
    });
    let walk = |inner: TokenStream| -> Expr {
        syn::parse_quote_spanned!(span=>
            for #k in 0..#count {
                #position
                #index
                #(#lets)*
                #inner
            }
        )
    };
    Some(match method.as_str() {
        "for_each" => {
            let l = walk(quote_spanned!(span=> { #body; }));
            syn::parse_quote_spanned!(span=> { #(#pre)* #l })
        }
        "map_collect" => {
            let v = format_ident!("__mochi_zv{}", id, span = span);
            let l = walk(quote_spanned!(span=> #v.push(#body);));
            syn::parse_quote_spanned!(span=> {
                #(#pre)*
                let mut #v = Vec::new();
                #l
                ::ndarray::Array1::from(#v).into_shape_with_order(#d).unwrap()
            })
        }
        _ => {
            let acc = &f.inputs[0];
            let init = &m.args[0];
            let a = format_ident!("__mochi_za{}", id, span = span);
            let l = walk(quote_spanned!(span=> #a = { let #acc = #a; #body };));
            syn::parse_quote_spanned!(span=> {
                #(#pre)*
                let mut #a = #init;
                #l
                #a
            })
        }
    })
}

/// `*o` of a closure's `&mut` parameter `o` → `place`; `other` is set by any other use.
struct DerefUses<'a> {
    name: &'a syn::Ident,
    place: Expr,
    other: bool,
}

impl VisitMut for DerefUses<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        let is_o = |x: &Expr| matches!(x, Expr::Path(p) if p.path.get_ident() == Some(self.name));
        match e {
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) && is_o(&u.expr) => {
                *e = self.place.clone();
            }
            _ if is_o(e) => self.other = true,
            _ => syn::visit_mut::visit_expr_mut(self, e),
        }
    }
}

/// Methods that change their receiver besides those that change its length
/// ([`crate::lower::RESIZING_METHODS`]).
const MUTATING_METHODS: &[&str] = &[
    "swap",
    "fill",
    "sort_by",
    "sort_unstable_by",
    "select_nth_unstable_by",
    "reverse",
    "copy_from_slice",
    "mapv_inplace",
    "map_inplace",
    "scaled_add",
    "zip_mut_with",
    "next",
];

/// Whether evaluating `e` writes a variable that carries a derivative: an assignment
/// (also `op=`) to it, a `&mut` borrow of it (`step(&mut s, x)`), a method that changes
/// it (`v.push(..)`), or a method of `self` (which may take `&mut self`).
/// The names a body may change through a method or a call: those it binds `mut`, and
/// the `&mut` parameters (`b: &mut Basin`, `v: &mut [f64]`), which a call given them as
/// they are (`fill(b, q)`) may write.
#[derive(Clone, Debug)]
struct Mutables {
    bound: HashSet<String>,
    lent: HashSet<String>,
}

impl Mutables {
    fn of(b: &syn::Block, lent: &HashSet<String>) -> Mutables {
        let bound = mut_bound_names(b);
        // (A parameter bound again in the body is another value.)
        let lent = lent.iter().filter(|n| !binds_name(b, n)).cloned().collect();
        Mutables { bound, lent }
    }
}

fn writes_active(e: &Expr, active: &HashSet<String>, mutable: &Mutables) -> bool {
    writes_active_as(e, active, mutable, false)
}

/// [`writes_active`] without its guess that a method of a `mut` binding not known to
/// leave it as it is changes it: only writes the syntax shows (`&mut s`, an assignment,
/// a method that changes its receiver, a `&mut` parameter passed on).
fn surely_writes_active(e: &Expr, active: &HashSet<String>, mutable: &Mutables) -> bool {
    writes_active_as(e, active, mutable, true)
}

fn writes_active_as(e: &Expr, active: &HashSet<String>, mutable: &Mutables, sure: bool) -> bool {
    struct W<'a> {
        active: &'a HashSet<String>,
        mutable: &'a Mutables,
        sure: bool,
        found: bool,
    }
    impl W<'_> {
        /// `b` of a `&mut` parameter passed on as it is.
        fn lent(&mut self, args: &syn::punctuated::Punctuated<Expr, syn::Token![,]>) {
            if passes_on(args, |n| {
                self.mutable.lent.contains(n) && self.active.contains(n)
            }) {
                self.found = true;
            }
        }
        fn place(&mut self, p: &Expr) {
            if crate::activity::root_name(p).is_some_and(|r| self.active.contains(&r)) {
                self.found = true;
            }
        }
    }
    impl<'ast> syn::visit::Visit<'ast> for W<'_> {
        fn visit_expr_assign(&mut self, a: &'ast syn::ExprAssign) {
            self.place(&a.left);
            if mentions_active(&a.right, self.active) {
                self.found = true;
            }
            syn::visit::visit_expr_assign(self, a);
        }
        fn visit_expr_binary(&mut self, b: &'ast syn::ExprBinary) {
            if crate::activity::is_arithmetic_assign(&b.op) {
                self.place(&b.left);
                if mentions_active(&b.right, self.active) {
                    self.found = true;
                }
            }
            syn::visit::visit_expr_binary(self, b);
        }
        fn visit_expr_reference(&mut self, r: &'ast syn::ExprReference) {
            if r.mutability.is_some() {
                self.place(&r.expr);
            }
            syn::visit::visit_expr_reference(self, r);
        }
        fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
            let name = m.method.to_string();
            if MUTATING_METHODS.contains(&name.as_str())
                || crate::lower::RESIZING_METHODS.contains(&name.as_str())
                || name.ends_with("_mut")
            {
                self.place(&m.receiver);
            }
            // A method of a variable bound `mut` that is not known to leave it as it is
            // (`s.bump()`, `m.try_inverse_mut()`, `v.rotate_left(1)`): it may take `&mut
            // self`. Not a predicate named as Rust's conventions name them (`is_*`,
            // `has_*`, `contains`), which takes `&self`.
            if !self.sure
                && may_change_receiver(&name)
                && crate::activity::root_name(&m.receiver).is_some_and(|r| {
                    (self.mutable.bound.contains(&r) || self.mutable.lent.contains(&r))
                        && self.active.contains(&r)
                })
            {
                self.found = true;
            }
            if matches!(&*m.receiver, Expr::Path(p) if p.path.is_ident("self"))
                && self.active.contains("self")
            {
                self.found = true;
            }
            self.lent(&m.args);
            syn::visit::visit_expr_method_call(self, m);
        }
        fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
            self.lent(&c.args);
            syn::visit::visit_expr_call(self, c);
        }
        // A closure's body runs where the closure is called, which the closure
        // rewrites see.
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
    }
    let mut w = W {
        active,
        mutable,
        sure,
        found: false,
    };
    syn::visit::Visit::visit_expr(&mut w, e);
    w.found
}

/// Whether a method of a `mut` binding may change it: not one known to leave its
/// receiver as it is, nor a predicate named as Rust's conventions name them (`is_*`,
/// `has_*`, `contains`), which takes `&self`.
fn may_change_receiver(name: &str) -> bool {
    !PURE_METHODS.contains(&name)
        && !is_predicate_name(name)
        && !crate::activity::INACTIVE_METHODS.contains(&name)
        && !crate::twin::FLOAT_METHODS.contains(&name)
}

/// Methods that leave their receiver as it is (views, reductions, maths), beside
/// [`crate::activity::INACTIVE_METHODS`] and [`crate::twin::FLOAT_METHODS`].
const PURE_METHODS: &[&str] = &[
    "iter",
    "into_iter",
    "clone",
    "to_vec",
    "to_owned",
    "get",
    "first",
    "last",
    "dot",
    "norm",
    "norm_squared",
    "sum",
    "product",
    "mean",
    "row",
    "column",
    "rows",
    "columns",
    "slice",
    "view",
    "t",
    "transpose",
    "index_axis",
    "slice_axis",
    "diag",
    "mapv",
    "map",
    "fold",
    "sum_axis",
    "mean_axis",
    "var",
    "std",
    "var_axis",
    "std_axis",
    "product_axis",
    "as_slice",
    "windows",
    "chunks",
    "chunks_exact",
    "rchunks",
    "rchunks_exact",
    "zip",
    "enumerate",
    "copied",
    "cloned",
    "unwrap",
    "expect",
    "as_ref",
    "borrow",
    "component_mul",
    "component_div",
    "cross",
    "normalize",
    "determinant",
    "trace",
    "try_inverse",
    "cholesky",
    "lu",
    "solve",
    "abs_diff",
    "checked_sub",
    "saturating_sub",
    "wrapping_add",
    "pow",
    "rem_euclid",
    "div_euclid",
    "to_string",
    // What the generic form makes of `total_cmp` (`a.partial_cmp(b).unwrap_or(Equal)` in
    // a pivot search's comparator), and its neighbours, which take `self` of an `Option`
    // or a `Result`. (Comparisons are `INACTIVE_METHODS`.)
    "unwrap_or",
    "unwrap_or_else",
    "unwrap_or_default",
    "map_or",
];

/// A method named as Rust's conventions name a predicate (`is_*`, `has_*`, `contains`),
/// which takes `&self`.
fn is_predicate_name(name: &str) -> bool {
    name.starts_with("is_") || name.starts_with("has_") || name == "contains"
}

/// Whether `e` borrows the variable `v` or a part of it (`&v`, `&v.x`, `&v[i]`) outside
/// closures.
fn borrows_name(e: &Expr, v: &syn::Ident) -> bool {
    struct B<'a>(&'a syn::Ident, bool);
    impl<'ast> syn::visit::Visit<'ast> for B<'_> {
        fn visit_expr_reference(&mut self, r: &'ast syn::ExprReference) {
            // (`&g.v.clone()`: a borrow of a copy, which Rust lends beside `&mut g`.)
            let copy = matches!(unparen(&r.expr), Expr::MethodCall(m) if m.args.is_empty()
                && matches!(m.method.to_string().as_str(), "clone" | "to_vec" | "to_owned"));
            self.1 |= !copy && crate::activity::root_name(&r.expr).is_some_and(|n| *self.0 == n);
            syn::visit::visit_expr_reference(self, r);
        }
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
    }
    let mut b = B(v, false);
    syn::visit::Visit::visit_expr(&mut b, e);
    b.1
}

/// Whether `e` assigns anything (`=` or `op=`).
fn assigns(e: &Expr) -> bool {
    struct A(bool);
    impl<'ast> syn::visit::Visit<'ast> for A {
        fn visit_expr_assign(&mut self, a: &'ast syn::ExprAssign) {
            self.0 = true;
            syn::visit::visit_expr_assign(self, a);
        }
        fn visit_expr_binary(&mut self, b: &'ast syn::ExprBinary) {
            self.0 |= crate::activity::is_arithmetic_assign(&b.op);
            syn::visit::visit_expr_binary(self, b);
        }
    }
    let mut a = A(false);
    syn::visit::Visit::visit_expr(&mut a, e);
    a.0
}

/// The names a pattern in `b` binds `mut`.
fn mut_bound_names(b: &syn::Block) -> HashSet<String> {
    struct M(HashSet<String>);
    impl<'ast> syn::visit::Visit<'ast> for M {
        fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
            if p.mutability.is_some() {
                self.0.insert(p.ident.to_string());
            }
            syn::visit::visit_pat_ident(self, p);
        }
    }
    let mut m = M(HashSet::new());
    syn::visit::Visit::visit_block(&mut m, b);
    m.0
}

/// Whether a call's arguments hand on, as it is, a binding `lent` says is a `&mut` one
/// (`step(v)` of a `&mut` parameter `v`, `Self::push(self, x)` in a `&mut self` method).
pub(crate) fn passes_on(
    args: &syn::punctuated::Punctuated<Expr, syn::Token![,]>,
    lent: impl Fn(&str) -> bool,
) -> bool {
    args.iter().any(|a| {
        matches!(unparen(a), Expr::Path(p)
            if p.path.get_ident().is_some_and(|i| lent(&i.to_string())))
    })
}

/// A macro argument's value: `e` of a named argument `v = e` (`println!("{v}", v = e)`).
pub(crate) fn macro_arg_value(a: &Expr) -> &Expr {
    match a {
        Expr::Assign(n) if matches!(&*n.left, Expr::Path(_)) => &n.right,
        other => other,
    }
}

/// Whether `e` borrows a variable `&mut` (outside closures).
pub(crate) fn mut_borrows(e: &Expr) -> bool {
    struct M(bool);
    impl<'ast> syn::visit::Visit<'ast> for M {
        fn visit_expr_reference(&mut self, r: &'ast syn::ExprReference) {
            self.0 |= r.mutability.is_some();
            syn::visit::visit_expr_reference(self, r);
        }
    }
    let mut m = M(false);
    syn::visit::Visit::visit_expr(&mut m, e);
    m.0
}

/// Conditions and scrutinees that change a variable with a derivative, which the
/// lowering would run as written, without their derivative (a silent wrong gradient
/// before 2026-12-01), are evaluated by statements first:
///
/// - `if step(&mut s, x) { A } else { B }` → `{ let c = step(&mut s, x); if c { A } else
///   { B } }` (also `if { s += x; s > 1.0 } {..}`);
/// - `while self.step(x) { B }` (also the do-while idiom `while { s = s * x; k += 1; k
///   < 3 } {}`) → `loop { let c = …; if !c { break; } B }`;
/// - `match advance(&mut s, x) { .. }` → `{ let m = advance(&mut s, x); match m { .. } }`;
/// - `a && step(&mut s, x)`, `a || …` → `{ let mut t = false; if a { t = …; } t }`, `{
///   let mut t = true; if !a { t = …; } t }` (the right side runs only when Rust runs
///   it);
/// - `for i in 0..advance(&mut s, x)` → `{ let b = advance(&mut s, x); for i in 0..b
///   { .. } }` (another sequence bound whole);
/// - `assert!(step(&mut s, x))`, `println!("{}", step(..))`: the arguments bound first.
struct EffectfulConditions<'a> {
    active: &'a HashSet<String>,
    next: usize,
    /// The names bound `mut` in the body and the `&mut` parameters, whose methods (and
    /// calls given the parameters) may change them.
    mutable: Mutables,
}

impl EffectfulConditions<'_> {
    /// A new name, ending in `_`: the lowering names its temporaries `__mochi_<what><n>`
    /// with a counter of its own, and one of those must never shadow a name written here.
    fn fresh(&mut self, what: &str, span: Span) -> syn::Ident {
        self.next += 1;
        format_ident!("__mochi_{}{}_", what, self.next, span = span)
    }
}

/// Whether computing `e` (an index) may change something: it lends `&mut` (`next(&mut
/// k)`) or calls a method of a `mut` binding other than a query (`c.advance()`).
fn changes_when_computed(e: &Expr, mutable: &Mutables) -> bool {
    struct C<'a>(&'a Mutables, bool);
    impl<'ast> syn::visit::Visit<'ast> for C<'_> {
        fn visit_expr_reference(&mut self, r: &'ast syn::ExprReference) {
            self.1 |= r.mutability.is_some();
            syn::visit::visit_expr_reference(self, r);
        }
        fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
            if let Expr::Path(p) = unparen(&m.receiver) {
                if p.path.get_ident().is_some_and(|i| {
                    let n = i.to_string();
                    self.0.bound.contains(&n) || self.0.lent.contains(&n)
                }) && may_change_receiver(&m.method.to_string())
                {
                    self.1 = true;
                }
            }
            syn::visit::visit_expr_method_call(self, m);
        }
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
    }
    let mut c = C(mutable, false);
    syn::visit::Visit::visit_expr(&mut c, e);
    c.1
}

/// A call or block that changes a variable with a derivative, as a whole: what
/// [`EffectfulConditions::atomize`] binds to a variable first.
fn is_effect_atom(e: &Expr, active: &HashSet<String>, mutable: &Mutables) -> bool {
    match e {
        Expr::Call(_) | Expr::MethodCall(_) | Expr::Block(_) | Expr::Unsafe(_) => {
            writes_active(e, active, mutable)
        }
        Expr::Paren(p) => is_effect_atom(&p.expr, active, mutable),
        _ => false,
    }
}

/// Statements whose parts run conditionally or repeatedly, and assignments and
/// macros: not taken apart.
fn is_statement_like(e: &Expr) -> bool {
    crate::lower::is_control_flow_stmt(e)
        || matches!(e, Expr::Assign(_) | Expr::Macro(_))
        || matches!(e, Expr::Binary(b) if crate::activity::is_arithmetic_assign(&b.op))
}

impl EffectfulConditions<'_> {
    /// `s` with the statements that bind its effects first (each taken apart in its
    /// turn), into `out`.
    fn statement(&mut self, mut s: syn::Stmt, out: &mut Vec<syn::Stmt>) {
        let mut lets = Vec::new();
        match &mut s {
            syn::Stmt::Local(l) => {
                if let Some(init) = &mut l.init {
                    self.hoist_head(&mut init.expr, &mut lets);
                    if !is_effect_atom(&init.expr, self.active, &self.mutable) {
                        self.atomize(&mut init.expr, &mut lets);
                    } else {
                        self.call_operands(&mut init.expr, &mut lets);
                    }
                }
            }
            syn::Stmt::Expr(e, _) => {
                self.hoist_head(e, &mut lets);
                self.hoist_changing_index(e, &mut lets);
                if !is_effect_atom(e, self.active, &self.mutable) && !is_statement_like(e) {
                    self.atomize(e, &mut lets);
                } else if !self.assigned_in_order(e, &mut lets) {
                    self.call_operands(e, &mut lets);
                }
            }
            _ => {}
        }
        for l in lets {
            self.statement(l, out);
        }
        self.visit_stmt_mut(&mut s);
        out.push(s);
    }

    /// The calls and blocks inside `e` that change a variable with a derivative,
    /// where `e` always runs them (not in a branch, a closure, or the right side of
    /// `&&`/`||`), bound in order by `lets` first: `let b = !step(&mut s, x);` →
    /// `let t = step(&mut s, x); let b = !t;` (a `bool` expression is run as written,
    /// without the derivative of what it changes).
    fn atomize(&mut self, e: &mut Expr, lets: &mut Vec<syn::Stmt>) {
        if is_effect_atom(e, self.active, &self.mutable) {
            let span = e.span();
            let t = self.fresh("effect", span);
            let value = std::mem::replace(e, syn::parse_quote!(#t));
            lets.push(syn::parse_quote_spanned!(span=> let #t = #value;));
            return;
        }
        match e {
            Expr::Binary(b) if matches!(b.op, syn::BinOp::And(_) | syn::BinOp::Or(_)) => {
                self.atomize(&mut b.left, lets);
            }
            Expr::Binary(b) if !crate::activity::is_arithmetic_assign(&b.op) => {
                self.operands(vec![&mut *b.left, &mut *b.right], lets);
            }
            Expr::Unary(u) => self.atomize(&mut u.expr, lets),
            Expr::Paren(p) => self.atomize(&mut p.expr, lets),
            Expr::Cast(c) => self.atomize(&mut c.expr, lets),
            Expr::Field(f) => self.atomize(&mut f.base, lets),
            Expr::Reference(r) => self.atomize(&mut r.expr, lets),
            Expr::Tuple(t) => self.operands(t.elems.iter_mut().collect(), lets),
            Expr::Array(a) => self.operands(a.elems.iter_mut().collect(), lets),
            // (Fields in the order written.)
            Expr::Struct(st) => {
                self.operands(st.fields.iter_mut().map(|f| &mut f.expr).collect(), lets)
            }
            Expr::Call(c) => self.operands(c.args.iter_mut().collect(), lets),
            Expr::MethodCall(m) => {
                let mut ops: Vec<&mut Expr> = vec![&mut *m.receiver];
                ops.extend(m.args.iter_mut());
                self.operands(ops, lets);
            }
            _ => {}
        }
    }

    /// The arguments of a call that changes a variable with a derivative through one of
    /// them, in order: `mix(s, leak(&mut s, r))` reads `s` before `leak` changes it, so
    /// `s` is bound first, then the call that changes it (the call as a whole is one
    /// effect, which [`atomize`](Self::atomize) leaves as it is). A method's receiver
    /// stays where it is, but for a float's method, which takes it by value and reads it
    /// first (`s.powf(leak(&mut s, r))`).
    fn call_operands(&mut self, e: &mut Expr, lets: &mut Vec<syn::Stmt>) {
        let ops: Vec<&mut Expr> = match e {
            Expr::Call(c) => c.args.iter_mut().collect(),
            Expr::MethodCall(m)
                if crate::twin::FLOAT_METHODS.contains(&m.method.to_string().as_str()) =>
            {
                std::iter::once(&mut *m.receiver)
                    .chain(m.args.iter_mut())
                    .collect()
            }
            Expr::MethodCall(m) => m.args.iter_mut().collect(),
            Expr::Paren(p) => return self.call_operands(&mut p.expr, lets),
            _ => return,
        };
        // (Only where an argument surely writes, after one that reads a value.)
        let Some(last) = ops
            .iter()
            .rposition(|o| surely_writes_active(o, self.active, &self.mutable))
        else {
            return;
        };
        let reads_before = ops[..last].iter().any(|o| {
            !matches!(o, Expr::Lit(_) | Expr::Reference(_))
                && !writes_active(o, self.active, &self.mutable)
        });
        if reads_before {
            self.operands(ops, lets);
            return;
        }
        // An operand that writes inside a larger expression, `(s + leak(&mut s,
        // r)).powf(s)`, `f(s + leak(&mut s, r))`: taken apart in its turn (it reads `s`
        // before `leak` changes it).
        for o in ops {
            if !is_effect_atom(o, self.active, &self.mutable)
                && writes_active(o, self.active, &self.mutable)
            {
                self.atomize(o, lets);
            }
        }
    }

    /// `v[next(&mut k)] *= a`, `v[c.advance()] = e`: an assignment to an element whose
    /// index changes something when it is computed. The derivation reads the place
    /// more than once (`v[i] = v[i] * a`), so the index is computed once, after the
    /// right side (as Rust computes it for floats), and bound.
    fn hoist_changing_index(&mut self, e: &mut Expr, lets: &mut Vec<syn::Stmt>) {
        let (left, right) = match e {
            Expr::Assign(a) => (&mut a.left, &mut a.right),
            Expr::Binary(b) if crate::activity::is_arithmetic_assign(&b.op) => {
                (&mut b.left, &mut b.right)
            }
            _ => return,
        };
        let mut indices: Vec<&mut Expr> = Vec::new();
        let mut place = &mut **left;
        loop {
            match place {
                Expr::Index(ix) => {
                    indices.push(&mut ix.index);
                    place = &mut ix.expr;
                }
                Expr::Field(f) => place = &mut f.base,
                Expr::Paren(p) => place = &mut p.expr,
                _ => break,
            }
        }
        // (Also `out[k] = { k += 1; x[k] }`: a right side that changes a name the
        // index reads, which Rust computes before the place. Before 2026-12-07 the
        // place was read at the old `k`, a wrong value.)
        let index_names: Vec<syn::Ident> = {
            let mut names = Vec::new();
            for ix in &indices {
                crate::iterchain::idents_in(ix, &mut names);
            }
            names
        };
        let right_changes_index = !index_names.is_empty()
            && !names_changed(&[syn::Stmt::Expr((**right).clone(), None)], &index_names).is_empty();
        if !right_changes_index
            && !indices
                .iter()
                .any(|i| changes_when_computed(i, &self.mutable))
        {
            return;
        }
        let span = right.span();
        let t = self.fresh("assigned", span);
        let value = std::mem::replace(&mut **right, syn::parse_quote!(#t));
        lets.push(syn::parse_quote_spanned!(span=> let #t = #value;));
        // (Outermost index first in `indices`: Rust computes the innermost first.)
        for ix in indices.into_iter().rev() {
            if matches!(ix, Expr::Lit(_) | Expr::Path(_)) {
                continue;
            }
            let span = ix.span();
            let t = self.fresh("index", span);
            let value = std::mem::replace(ix, syn::parse_quote!(#t));
            lets.push(syn::parse_quote_spanned!(span=> let #t = #value;));
        }
    }

    /// `y = s * leak(&mut s, r)`, `acc += s * leak(&mut s, r)`, `v[1] += tweak(&mut v,
    /// 1)`: an assignment whose right side surely writes a variable with a derivative.
    /// Rust evaluates the right side of a float's `=` and `op=` first, so it is bound
    /// first, taken apart in its turn (its operands in order); `false` for another
    /// statement.
    fn assigned_in_order(&mut self, e: &mut Expr, lets: &mut Vec<syn::Stmt>) -> bool {
        let right = match e {
            Expr::Assign(a) => &mut a.right,
            Expr::Binary(b) if crate::activity::is_arithmetic_assign(&b.op) => &mut b.right,
            _ => return false,
        };
        if !surely_writes_active(right, self.active, &self.mutable) {
            return false;
        }
        let span = right.span();
        let t = self.fresh("assigned", span);
        let value = std::mem::replace(&mut **right, syn::parse_quote!(#t));
        lets.push(syn::parse_quote_spanned!(span=> let #t = #value;));
        true
    }

    /// Operands evaluated left to right: those before the last one with an effect are
    /// bound first as they are (`v * 2.0 + { v *= 3.0; v }` reads `v` before the block
    /// changes it), then each is taken apart.
    fn operands(&mut self, ops: Vec<&mut Expr>, lets: &mut Vec<syn::Stmt>) {
        let Some(last) = ops
            .iter()
            .rposition(|o| writes_active(o, self.active, &self.mutable))
        else {
            return;
        };
        // (A variable no later operand changes reads the same value when it is bound and
        // when the call reads it: `sys.system(t, y, &mut k)` keeps `sys` and `y`, whose
        // names the rewrite of the user's method call reads.)
        // (Also a generic form's `receiver(sys)`, the same variable handed to a method.)
        let plain_name = |o: &Expr| -> Option<syn::Ident> {
            let o = crate::lower::expr::received(unparen(o)).unwrap_or(o);
            match unparen(o) {
                Expr::Path(p) => p.path.get_ident().cloned(),
                Expr::Reference(r) if r.mutability.is_none() => match unparen(&r.expr) {
                    Expr::Path(p) => p.path.get_ident().cloned(),
                    _ => None,
                },
                _ => None,
            }
        };
        let unchanged: Vec<bool> = {
            let stmts: Vec<syn::Stmt> = ops
                .iter()
                .map(|o| syn::Stmt::Expr((**o).clone(), Some(Default::default())))
                .collect();
            (0..ops.len())
                .map(|k| {
                    plain_name(ops[k])
                        .is_some_and(|n| names_changed(&stmts[k + 1..], &[n]).is_empty())
                })
                .collect()
        };
        for (k, o) in ops.into_iter().enumerate() {
            let unchanged_name = unchanged[k];
            // (A borrow reads nothing when it is made: `T::m(&e, &mut out, x)`.)
            if k < last
                && !unchanged_name
                && !matches!(o, Expr::Lit(_) | Expr::Reference(_))
                && !writes_active(o, self.active, &self.mutable)
            {
                let span = o.span();
                let t = self.fresh("operand", span);
                let value = std::mem::replace(o, syn::parse_quote!(#t));
                // (`(*x)` read as `*x` is: a copy of the value behind the reference.)
                let value = unparen(&value);
                lets.push(syn::parse_quote_spanned!(span=> let #t = #value;));
            } else {
                self.atomize(o, lets);
            }
        }
    }

    /// A statement's own `if` condition or `match` scrutinee (`let r = match advance(&mut
    /// s, x) { .. };`), bound by a statement before it: a valued `match` stays the
    /// statement's value, which a block around it would hide from the lowering.
    fn hoist_head(&mut self, e: &mut Expr, lets: &mut Vec<syn::Stmt>) {
        let span = e.span();
        match e {
            Expr::If(i)
                if !matches!(&*i.cond, Expr::Let(_))
                    && writes_active(&i.cond, self.active, &self.mutable) =>
            {
                let c = self.fresh("cond", span);
                let cond = std::mem::replace(&mut *i.cond, syn::parse_quote!(#c));
                lets.push(syn::parse_quote_spanned!(span=> let #c: bool = #cond;));
            }
            Expr::Match(m) if writes_active(&m.expr, self.active, &self.mutable) => {
                let v = self.fresh("scrutinee", span);
                let scrutinee = std::mem::replace(&mut *m.expr, syn::parse_quote!(#v));
                lets.push(syn::parse_quote_spanned!(span=> let #v = #scrutinee;));
            }
            _ => {}
        }
    }
}

impl VisitMut for EffectfulConditions<'_> {
    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        let mut out = Vec::with_capacity(b.stmts.len());
        for s in b.stmts.drain(..) {
            self.statement(s, &mut out);
        }
        b.stmts = out;
    }
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        let span = e.span();
        // A value that surely writes a variable with a derivative where no statement
        // holds it (a `match` arm's, `return`'s, `break`'s, a closure's): in a block of
        // its own, whose statements are then taken apart in order as any.
        {
            let (active, mutable) = (self.active, &self.mutable);
            let blocked = |v: &mut Expr| {
                if !matches!(v, Expr::Block(_)) && surely_writes_active(v, active, mutable) {
                    let at = v.span();
                    let inner = v.clone();
                    *v = syn::parse_quote_spanned!(at=> { #inner });
                }
            };
            match e {
                Expr::Match(m) => m.arms.iter_mut().for_each(|a| blocked(&mut a.body)),
                Expr::Return(syn::ExprReturn { expr: Some(v), .. })
                | Expr::Break(syn::ExprBreak { expr: Some(v), .. }) => blocked(v),
                Expr::Closure(c) => blocked(&mut c.body),
                _ => {}
            }
        }
        match e {
            Expr::If(i)
                if !matches!(&*i.cond, Expr::Let(_))
                    && writes_active(&i.cond, self.active, &self.mutable) =>
            {
                let c = self.fresh("cond", span);
                let cond = std::mem::replace(&mut *i.cond, syn::parse_quote!(#c));
                let inner = e.clone();
                *e = syn::parse_quote_spanned!(span=> { let #c: bool = #cond; #inner });
            }
            Expr::While(w)
                if !matches!(&*w.cond, Expr::Let(_))
                    && writes_active(&w.cond, self.active, &self.mutable) =>
            {
                let c = self.fresh("cond", span);
                let (label, cond, body) = (&w.label, &w.cond, &w.body);
                let brk = match label {
                    Some(l) => {
                        let n = &l.name;
                        quote_spanned!(span=> break #n;)
                    }
                    None => quote_spanned!(span=> break;),
                };
                let stmts = &body.stmts;
                *e = syn::parse_quote_spanned!(span=>
                    #label loop {
                        let #c: bool = #cond;
                        if !#c { #brk }
                        #(#stmts)*
                    }
                );
            }
            Expr::Match(m) if writes_active(&m.expr, self.active, &self.mutable) => {
                let v = self.fresh("scrutinee", span);
                let scrutinee = std::mem::replace(&mut *m.expr, syn::parse_quote!(#v));
                let inner = e.clone();
                *e = syn::parse_quote_spanned!(span=> { let #v = #scrutinee; #inner });
            }
            Expr::Binary(b)
                if matches!(b.op, syn::BinOp::And(_) | syn::BinOp::Or(_))
                    && writes_active(&b.right, self.active, &self.mutable) =>
            {
                let (l, r) = (&b.left, &b.right);
                let t = self.fresh("logic", span);
                // The right side assigned in a branch (a statement the lowering
                // differentiates); a valued `if` of a `bool` would be taken for one
                // without effects.
                *e = if matches!(b.op, syn::BinOp::And(_)) {
                    syn::parse_quote_spanned!(span=> {
                        let mut #t = false;
                        if #l { #t = #r; }
                        #t
                    })
                } else {
                    syn::parse_quote_spanned!(span=> {
                        let mut #t = true;
                        if !(#l) { #t = #r; }
                        #t
                    })
                };
            }
            // A range whose bounds change something, or a sequence a call makes; not the
            // loops over `v.iter_mut()`, `v.rows_mut()`, … (their own rewrites).
            Expr::ForLoop(f)
                if matches!(unparen(&f.expr), Expr::Range(_) | Expr::Call(_))
                    && writes_active(&f.expr, self.active, &self.mutable) =>
            {
                // A range's bounds each bound first (a range is no value the lowering
                // follows into); another sequence as a whole.
                let mut lets: Vec<TokenStream> = Vec::new();
                if let Expr::Range(r) = unparen_mut(&mut f.expr) {
                    for bound in [&mut r.start, &mut r.end].into_iter().flatten() {
                        if writes_active(bound, self.active, &self.mutable) {
                            self.next += 1;
                            let b = format_ident!("__mochi_bound{}", self.next, span = span);
                            let value = std::mem::replace(&mut **bound, syn::parse_quote!(#b));
                            lets.push(quote_spanned!(span=> let #b = #value;));
                        }
                    }
                } else {
                    let r = self.fresh("seq", span);
                    let seq = std::mem::replace(&mut *f.expr, syn::parse_quote!(#r));
                    lets.push(quote_spanned!(span=> let #r = #seq;));
                }
                let inner = e.clone();
                *e = syn::parse_quote_spanned!(span=> { #(#lets)* #inner });
            }
            // `x.iter().any(|v| step(&mut s, *v))`: searches and tests run without a
            // derivative; a closure that changes `s` is refused (`for_each`, `map` and
            // `filter` become loops, whose conditions this pass sees).
            Expr::MethodCall(m)
                if matches!(
                    m.method.to_string().as_str(),
                    "any"
                        | "all"
                        | "position"
                        | "rposition"
                        | "count"
                        | "find"
                        | "max_by"
                        | "min_by"
                        | "max_by_key"
                        | "min_by_key"
                        | "is_sorted_by"
                        | "take_while"
                        | "skip_while"
                ) =>
            {
                // `count` runs its whole chain without a derivative: its adapters'
                // closures too (`filter(|v| { s += *v; … }).count()`).
                // `v.iter_mut().any(|e| { *e *= 2.0; *e > 1.0 })`: the elements written
                // by a closure that runs without a derivative.
                let through_mut = {
                    let mut r: &Expr = &m.receiver;
                    let mut found = false;
                    while let Expr::MethodCall(c) = r {
                        found |= c.method.to_string().ends_with("_mut");
                        r = &c.receiver;
                    }
                    found
                };
                let mut closures: Vec<&mut syn::ExprClosure> = Vec::new();
                let count = m.method == "count";
                let mut at: &mut syn::ExprMethodCall = m;
                loop {
                    for a in at.args.iter_mut() {
                        if let Expr::Closure(c) = a {
                            closures.push(c);
                        }
                    }
                    match &mut *at.receiver {
                        Expr::MethodCall(inner) if count => at = inner,
                        _ => break,
                    }
                }
                for c in closures {
                    {
                        if writes_active(&c.body, self.active, &self.mutable)
                            || mut_borrows(&c.body)
                            || (through_mut && assigns(&c.body))
                        {
                            let at = c.body.span();
                            *c.body = syn::parse_quote_spanned!(at=> {
                                ::core::compile_error!("mochi: this closure changes a variable that carries a derivative, in a search or test that runs without one; write a `for` loop instead");
                                ::core::unreachable!()
                            });
                        }
                    }
                }
            }
            // A guard runs only when its arm's pattern matches, and an index inside a
            // place: not hoisted, refused.
            Expr::Index(ix) if writes_active(&ix.index, self.active, &self.mutable) => {
                let at = ix.index.span();
                *ix.index = syn::parse_quote_spanned!(at=> {
                    ::core::compile_error!("mochi: this index changes a variable that carries a derivative; compute it in a statement before (`let i = …;`)");
                    0
                });
            }
            Expr::Match(m)
                if m.arms.iter().any(|a| {
                    a.guard
                        .as_ref()
                        .is_some_and(|(_, g)| writes_active(g, self.active, &self.mutable))
                }) =>
            {
                for a in &mut m.arms {
                    if let Some((_, g)) = &mut a.guard {
                        if writes_active(g, self.active, &self.mutable) {
                            let at = g.span();
                            **g = syn::parse_quote_spanned!(at=> {
                                ::core::compile_error!("mochi: this guard changes a variable that carries a derivative; compute it before the `match`");
                                true
                            });
                        }
                    }
                }
            }
            Expr::Macro(m) => {
                let name = m.mac.path.segments.last().map(|s| s.ident.to_string());
                let Some(name) = name else { return };
                if !matches!(
                    name.as_str(),
                    "assert"
                        | "assert_eq"
                        | "assert_ne"
                        | "debug_assert"
                        | "debug_assert_eq"
                        | "debug_assert_ne"
                        | "println"
                        | "print"
                        | "eprintln"
                        | "eprint"
                        | "format"
                        | "panic"
                        | "write"
                        | "writeln"
                ) {
                    return;
                }
                let kept_as_written =
                    matches!(name.as_str(), "format" | "panic" | "write" | "writeln");
                let Ok(args) = m.mac.parse_body_with(
                    syn::punctuated::Punctuated::<Expr, syn::Token![,]>::parse_terminated,
                ) else {
                    return;
                };
                // The activity analysis does not read inside macros: `assert!(step(&mut
                // s, x))` is the first write of `s`, which is not yet known to carry a
                // derivative.
                let (active, mutable) = (self.active, self.mutable.clone());
                let effect = |a: &Expr| {
                    writes_active(a, active, &mutable)
                        || (mentions_active(a, active) && mut_borrows(a))
                };
                if !args.iter().any(|a| effect(macro_arg_value(a))) {
                    return;
                }
                // A `debug_assert!`'s arguments run only where debug assertions are on:
                // bound first, they would run in a release build too.
                if name.starts_with("debug_") {
                    *e = syn::parse_quote_spanned!(span=> {
                        ::core::compile_error!("mochi: this `debug_assert!` changes a variable that carries a derivative, which happens only where debug assertions are on; make the change before it (`let ok = step(&mut s); debug_assert!(ok);`)");
                    });
                    return;
                }
                // A text made of a value is no derivative's: the change inside would be
                // made without one.
                if kept_as_written {
                    let message = format!("mochi: this `{name}!` changes a variable that carries a derivative, which would happen without its derivative; make the change before it (`let v = step(&mut s); {name}!(.., v)`)");
                    *e = syn::parse_quote_spanned!(span=> {
                        ::core::compile_error!(#message);
                        ::core::unreachable!()
                    });
                    return;
                }
                let mut lets = Vec::new();
                let mut new_args = Vec::new();
                for a in args {
                    let named = match &a {
                        Expr::Assign(n) if matches!(&*n.left, Expr::Path(_)) => Some(&n.left),
                        _ => None,
                    };
                    let value = macro_arg_value(&a);
                    if effect(value) {
                        let t = self.fresh("arg", span);
                        lets.push(quote_spanned!(span=> let #t = #value;));
                        new_args.push(match named {
                            Some(n) => quote_spanned!(span=> #n = #t),
                            None => quote_spanned!(span=> #t),
                        });
                    } else {
                        new_args.push(quote::ToTokens::to_token_stream(&a));
                    }
                }
                let path = &m.mac.path;
                *e = syn::parse_quote_spanned!(span=> { #(#lets)* #path!(#(#new_args),*) });
            }
            _ => {}
        }
        syn::visit_mut::visit_expr_mut(self, e);
    }
    // `assert!(step(&mut s, x));` as a statement.
    fn visit_stmt_mut(&mut self, s: &mut syn::Stmt) {
        if let syn::Stmt::Macro(m) = s {
            let mut e = Expr::Macro(syn::ExprMacro {
                attrs: m.attrs.clone(),
                mac: m.mac.clone(),
            });
            self.visit_expr_mut(&mut e);
            if !matches!(e, Expr::Macro(_)) {
                *s = syn::Stmt::Expr(e, Some(Default::default()));
            }
            return;
        }
        syn::visit_mut::visit_stmt_mut(self, s);
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// Whether a pattern in `b` binds `name`.
pub(crate) fn binds_name(b: &syn::Block, name: &str) -> bool {
    struct Binds<'a>(&'a str, bool);
    impl<'ast> syn::visit::Visit<'ast> for Binds<'_> {
        fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
            self.1 |= p.ident == self.0;
            syn::visit::visit_pat_ident(self, p);
        }
    }
    let mut v = Binds(name, false);
    syn::visit::Visit::visit_block(&mut v, b);
    v.1
}

/// An ndarray array type's rank as its name or its dimension type spells it (`&Array2<f64>`,
/// `ArrayView1<T>`, `&ArrayD<f64>`, `&Array<f64, Ix2>`): `"1"` to `"6"`, or `"D"` for a
/// dynamic one.
pub fn array_rank(t: &syn::Type) -> Option<&'static str> {
    const RANKS: [&str; 7] = ["1", "2", "3", "4", "5", "6", "D"];
    match t {
        syn::Type::Reference(r) => array_rank(&r.elem),
        syn::Type::Paren(p) => array_rank(&p.elem),
        syn::Type::Path(p) => {
            let last = p.path.segments.last()?;
            let name = last.ident.to_string();
            let fixed = ["Array", "ArrayView", "ArcArray", "CowArray"]
                .iter()
                .find_map(|base| {
                    let rest = name.strip_prefix(base)?;
                    RANKS.iter().find(|r| **r == rest).copied()
                });
            let generic = || {
                let syn::PathArguments::AngleBracketed(a) = &last.arguments else {
                    return None;
                };
                if !matches!(name.as_str(), "Array" | "ArrayView" | "ArrayBase") {
                    return None;
                }
                a.args.iter().find_map(|g| {
                    let g = quote::ToTokens::to_token_stream(g).to_string();
                    RANKS
                        .iter()
                        .find(|r| g.ends_with(&format!("Ix{}", if **r == "D" { "Dyn" } else { r })))
                        .copied()
                })
            };
            fixed.or_else(generic)
        }
        _ => None,
    }
}

/// ndarray's windows of a one-dimensional array parameter (`names`), as sub-array views
/// by index, which the slicing rule differentiates:
///
/// - `for w in x.windows(k)` (also `.into_iter()`, `.enumerate()`) → `for i in
///   0..count { let w = x.slice(s![i..i + k]); .. }`, `count` the number of windows
///   (`x.len() + 1 - k`, none when `k` is larger);
/// - a chain `x.windows(k).into_iter().map(..)` → `(0..count).map(|i| x.slice(..)).map(..)`.
///
/// The window's length is evaluated once, before the loop (in a chain, it must be a
/// plain expression: names, literals, arithmetic, `.len()`). A window of length zero
/// panics, as ndarray's does (`__private::window_count`).
struct NdWindows<'a> {
    names: &'a HashSet<String>,
    next: usize,
}

impl NdWindows<'_> {
    /// `x.windows(k)` (or `x.windows(k).into_iter()`) of one of the names: `x` and `k`.
    fn windows<'e>(&self, e: &'e Expr) -> Option<(&'e Expr, &'e Expr)> {
        let Expr::MethodCall(m) = unparen(e) else {
            return None;
        };
        if m.method == "into_iter" && m.args.is_empty() {
            return self.windows(&m.receiver);
        }
        let named = matches!(unparen(&m.receiver), Expr::Path(p)
            if p.path.get_ident().is_some_and(|i| self.names.contains(&i.to_string())));
        (m.method == "windows"
            && m.args.len() == 1
            && named
            && !matches!(&m.args[0], Expr::Tuple(_) | Expr::Array(_)))
        .then(|| (&*m.receiver, &m.args[0]))
    }

    /// The number of windows of length `k` of `x` (a length of zero panics, as ndarray's
    /// does).
    fn count(x: &Expr, k: &Expr, span: Span) -> Expr {
        syn::parse_quote_spanned!(span=> ::mochi::__private::window_count(#x.len(), #k))
    }
}

/// `let b: Vec2 = [p[2], p[3]].into();` of a type of the crate's with a marked `impl
/// From<..>`: `Vec2::from([p[2], p[3]])`, whose rule is found by the argument's type.
/// `untyped`: the `let` loses its type, which the call names (in the generic form, where
/// the value is the type's mirror).
struct IntoAsFrom {
    untyped: bool,
}

/// [`IntoAsFrom`] over `block`; `generic`: the generic form's, where `Vec2::from(..)` is
/// its twin's call and the `let` is left untyped.
pub(crate) fn intos_as_froms(block: &mut syn::Block, generic: bool) {
    IntoAsFrom { untyped: generic }.visit_block_mut(block);
}

impl VisitMut for IntoAsFrom {
    fn visit_local_mut(&mut self, l: &mut syn::Local) {
        syn::visit_mut::visit_local_mut(self, l);
        let Pat::Type(t) = &mut l.pat else { return };
        let syn::Type::Path(tp) = &*t.ty else { return };
        let Some(ty) = tp.path.get_ident().filter(|_| tp.qself.is_none()) else {
            return;
        };
        if !crate::twin::from_type(&ty.to_string()) {
            return;
        }
        let Some(init) = &mut l.init else { return };
        if let Expr::MethodCall(m) = &*init.expr {
            if m.method == "into" && m.args.is_empty() && m.turbofish.is_none() {
                let (r, span) = (&m.receiver, m.method.span());
                *init.expr = syn::parse_quote_spanned!(span=> #ty::from(#r));
                if self.untyped {
                    l.pat = (*t.pat).clone();
                }
            }
        }
    }
}

/// Rewrites of one expression each, in one walk, children first:
/// - adapters that leave an iterator's items as they are, `chain.inspect(f)` and
///   `chain.fuse()`: the chain without them (the function as written still runs `f`);
/// - pairs collected straight from a `zip` or an `enumerate` (`x.iter().copied()
///   .zip(0..).collect::<Vec<(f64, usize)>>()`, an argsort's start): the chain given the
///   identity `map` of pairs, the form whose collect the chains read;
/// - `aview1(&x[a..b])` (also `ndarray::aview1(..)`): ndarray's one-dimensional view of
///   a slice, `ndarray::ArrayView1::from(..)`, whose rule is the constructor's.
struct LocalForms;

/// `if let Some(m) = v.iter_mut().max_by(cmp) { B }` (also `min_by`, `max_by_key`,
/// `min_by_key`, `find`, `last`, `next`) of a sequence named by a variable or a field →
/// `if let Some(i) = (0..v.len()).max_by(|&a, &b| cmp(&v[a], &v[b])) { let m = &mut
/// v[i]; B }`: the position searched without a derivative, the element then written in
/// place.
fn best_element_mut(e: &Expr) -> Option<Expr> {
    let Expr::If(i) = e else { return None };
    let Expr::Let(l) = &*i.cond else { return None };
    let Pat::TupleStruct(ts) = &*l.pat else {
        return None;
    };
    if !ts.path.is_ident("Some") || ts.elems.len() != 1 {
        return None;
    }
    let Pat::Ident(name) = &ts.elems[0] else {
        return None;
    };
    if name.by_ref.is_some() || name.subpat.is_some() {
        return None;
    }
    let Expr::MethodCall(best) = unparen(&l.expr) else {
        return None;
    };
    let Expr::MethodCall(it) = unparen(&best.receiver) else {
        return None;
    };
    if it.method != "iter_mut" || !it.args.is_empty() {
        return None;
    }
    let seq = unparen(&it.receiver);
    if !matches!(seq, Expr::Path(_) | Expr::Field(_)) {
        return None;
    }
    let span = best.method.span();
    let (a, b) = (
        format_ident!("__mochi_ba", span = span),
        format_ident!("__mochi_bb", span = span),
    );
    // The closure's parameters bound to the elements at the positions compared.
    let two = |c: &syn::ExprClosure| -> Option<Expr> {
        if c.inputs.len() != 2 {
            return None;
        }
        let (p, q, body) = (&c.inputs[0], &c.inputs[1], &c.body);
        Some(syn::parse_quote_spanned!(span=>
            |&#a: &usize, &#b: &usize| { let #p = &&#seq[#a]; let #q = &&#seq[#b]; #body }))
    };
    let one = |c: &syn::ExprClosure| -> Option<Expr> {
        if c.inputs.len() != 1 {
            return None;
        }
        let (p, body) = (&c.inputs[0], &c.body);
        Some(syn::parse_quote_spanned!(span=>
            |&#a: &usize| { let #p = &&#seq[#a]; #body }))
    };
    let closure = |k: usize| match best.args.first().map(unparen) {
        Some(Expr::Closure(c)) if best.args.len() == 1 => {
            if k == 2 {
                two(c)
            } else {
                one(c)
            }
        }
        _ => None,
    };
    let method = &best.method;
    let search: Expr = match (method.to_string().as_str(), best.args.len()) {
        ("max_by" | "min_by", 1) => {
            let c = closure(2)?;
            syn::parse_quote_spanned!(span=> (0..#seq.len()).#method(#c))
        }
        ("max_by_key" | "min_by_key" | "find", 1) => {
            let c = closure(1)?;
            syn::parse_quote_spanned!(span=> (0..#seq.len()).#method(#c))
        }
        ("last" | "next", 0) => syn::parse_quote_spanned!(span=> (0..#seq.len()).#method()),
        _ => return None,
    };
    let idx = format_ident!("__mochi_bi", span = span);
    let m = &name.ident;
    let then = &i.then_branch;
    let els = i
        .else_branch
        .as_ref()
        .map(|(_, e)| quote_spanned!(span=> else #e));
    Some(syn::parse_quote_spanned!(span=>
        if let Some(#idx) = #search {
            let #m = &mut #seq[#idx];
            #then
        } #els
    ))
}

/// The parts of `matches!(scrutinee, pattern)` (and of its guard, `if g`).
pub(crate) fn matches_parts(m: &syn::Macro) -> Option<(Expr, Pat, Option<Expr>)> {
    m.parse_body_with(|input: syn::parse::ParseStream| {
        let scrutinee: Expr = input.parse()?;
        input.parse::<syn::Token![,]>()?;
        let pat = Pat::parse_multi_with_leading_vert(input)?;
        let guard = if input.peek(syn::Token![if]) {
            input.parse::<syn::Token![if]>()?;
            Some(input.parse::<Expr>()?)
        } else {
            None
        };
        let _ = input.parse::<Option<syn::Token![,]>>()?;
        Ok((scrutinee, pat, guard))
    })
    .ok()
}

/// `matches!(scrutinee, pattern)` (a guard `if g` too) whose scrutinee makes a call →
/// `match scrutinee { pattern => true, _ => false }`.
fn matches_of_call(e: &Expr) -> Option<Expr> {
    let Expr::Macro(m) = e else { return None };
    if !m.mac.path.is_ident("matches") {
        return None;
    }
    let (scrutinee, pat, guard) = matches_parts(&m.mac)?;
    struct Calls(bool);
    impl<'ast> syn::visit::Visit<'ast> for Calls {
        fn visit_expr_call(&mut self, _: &'ast syn::ExprCall) {
            self.0 = true;
        }
        fn visit_expr_method_call(&mut self, _: &'ast syn::ExprMethodCall) {
            self.0 = true;
        }
    }
    let mut calls = Calls(false);
    syn::visit::Visit::visit_expr(&mut calls, &scrutinee);
    if !calls.0 {
        return None;
    }
    let span = e.span();
    let guard = guard.map(|g| quote_spanned!(span=> if #g));
    Some(syn::parse_quote_spanned!(span=> match #scrutinee {
        #pat #guard => true,
        _ => false,
    }))
}

impl VisitMut for LocalForms {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        syn::visit_mut::visit_expr_mut(self, e);
        // `if let Some(m) = v.iter_mut().max_by(cmp) { *m *= 2.0; }`: the best position,
        // then the element borrowed there.
        if let Some(r) = best_element_mut(e) {
            *e = r;
            self.visit_expr_mut(e);
            return;
        }
        // `matches!(t.see(v), Trend::Rising)` of a call: the `match` it stands for, which
        // the passes below read (a call in the macro's tokens that changes `t` would run
        // without the derivative of what it writes).
        if let Some(m) = matches_of_call(e) {
            *e = m;
            self.visit_expr_mut(e);
            return;
        }
        match e {
            Expr::MethodCall(m)
                if ((m.method == "inspect" && m.args.len() == 1)
                    || (m.method == "fuse" && m.args.is_empty()))
                    && matches!(&*m.receiver, Expr::MethodCall(_)) =>
            {
                *e = (*m.receiver).clone();
            }
            Expr::MethodCall(c) if c.method == "collect" && c.args.is_empty() => {
                let pairs = matches!(&*c.receiver, Expr::MethodCall(m)
                    if (m.method == "zip" && m.args.len() == 1)
                        || (m.method == "enumerate" && m.args.is_empty()));
                if pairs {
                    let r = &c.receiver;
                    *c.receiver =
                        syn::parse_quote!(#r.map(|(__mochi_a, __mochi_b)| (__mochi_a, __mochi_b)));
                }
            }
            Expr::Call(c) if c.args.len() == 1 => {
                let Expr::Path(p) = &*c.func else { return };
                let named = p.qself.is_none()
                    && match crate::twin::segments(&p.path).as_slice() {
                        [f] => f == "aview1",
                        [.., m, f] => m == "ndarray" && f == "aview1",
                        [] => false,
                    };
                if named {
                    let (a, span) = (&c.args[0], syn::spanned::Spanned::span(&c.func));
                    *e = syn::parse_quote_spanned!(span=> ndarray::ArrayView1::from(#a));
                }
            }
            _ => {}
        }
    }
}

/// A list of views of a sequence of differentiable arrays, `heads.iter().map(|a|
/// a.view()).collect::<Vec<_>>()` (also `.map(Array2::view)`, `ArrayBase::view`, and
/// bound by `let views: Vec<_> = ..`), as ndarray's `concatenate` and `stack` want it:
/// the sequence itself, `&heads`, which their rules read as a list of views and whose
/// cotangent is the arrays' own.
struct ViewLists<'a> {
    active: &'a HashSet<String>,
}

impl ViewLists<'_> {
    /// The sequence whose views `e` collects.
    fn source(&self, e: &Expr) -> Option<Expr> {
        let Expr::MethodCall(c) = unparen(e) else {
            return None;
        };
        if c.method != "collect" || !c.args.is_empty() {
            return None;
        }
        let Expr::MethodCall(m) = unparen(&c.receiver) else {
            return None;
        };
        if m.method != "map" || m.args.len() != 1 {
            return None;
        }
        let views = match &m.args[0] {
            Expr::Closure(f) if f.inputs.len() == 1 => {
                let Pat::Ident(p) = &f.inputs[0] else {
                    return None;
                };
                matches!(unparen(&f.body), Expr::MethodCall(v)
                    if v.method == "view" && v.args.is_empty()
                        && matches!(unparen(&v.receiver), Expr::Path(r) if r.path.is_ident(&p.ident)))
            }
            Expr::Path(f) => {
                f.path.segments.len() == 2
                    && f.path.segments[1].ident == "view"
                    && f.path.segments[0].ident.to_string().starts_with("Array")
            }
            _ => false,
        };
        let Expr::MethodCall(it) = unparen(&m.receiver) else {
            return None;
        };
        let whole = matches!(it.method.to_string().as_str(), "iter" | "into_iter")
            && it.args.is_empty()
            && matches!(unparen(&it.receiver), Expr::Path(_) | Expr::Field(_));
        (views && whole && mentions_active(&it.receiver, self.active))
            .then(|| (*it.receiver).clone())
    }
}

impl VisitMut for ViewLists<'_> {
    fn visit_local_mut(&mut self, l: &mut syn::Local) {
        let Some(init) = l.init.as_mut() else {
            return syn::visit_mut::visit_local_mut(self, l);
        };
        let Some(src) = self.source(&init.expr) else {
            return syn::visit_mut::visit_local_mut(self, l);
        };
        let span = init.expr.span();
        *init.expr = syn::parse_quote_spanned!(span=> &#src);
        // (`let views: Vec<_>` is a borrow of the sequence now.)
        if let Pat::Type(t) = &l.pat {
            l.pat = (*t.pat).clone();
        }
    }
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        syn::visit_mut::visit_expr_mut(self, e);
        if let Some(src) = self.source(e) {
            let span = e.span();
            *e = syn::parse_quote_spanned!(span=> (&#src));
        }
    }
}

/// `m.fit(&XS, &YS)` of a marked method taking slices (`xs: &[[f64; 2]]`), given a
/// reference to a constant array: `&XS[..]`, the slice the method takes. A
/// call that reaches the method's rule through its arguments' types does not coerce an
/// array to a slice as a method call does.
struct SliceArguments;

impl VisitMut for SliceArguments {
    // `DMatrix::from_row_slice(3, 2, &[1.0, x[0], 1.0, x[1], 1.0, x[2]])` (also
    // `from_column_slice`, a `DVector`'s and a static matrix's): the array literal as a
    // `Vec` (`&vec![..]`), which the builders' rules take as they take a slice.
    fn visit_expr_call_mut(&mut self, c: &mut syn::ExprCall) {
        syn::visit_mut::visit_expr_call_mut(self, c);
        let builder = matches!(&*c.func, Expr::Path(p) if p.qself.is_none()
        && p.path.segments.len() >= 2
        && p.path.segments.last().is_some_and(|s| {
            s.ident == "from_row_slice" || s.ident == "from_column_slice"
        }));
        if !builder {
            return;
        }
        for a in c.args.iter_mut() {
            let Expr::Reference(r) = a else { continue };
            if let (None, Expr::Array(elems)) = (r.mutability, &*r.expr) {
                let (span, elems) = (elems.span(), &elems.elems);
                *a = syn::parse_quote_spanned!(span=> &vec![#elems]);
            }
        }
    }
    fn visit_expr_method_call_mut(&mut self, m: &mut syn::ExprMethodCall) {
        syn::visit_mut::visit_expr_method_call_mut(self, m);
        let name = m.method.to_string();
        // (Not a name a library's method has too, `a.dot(&B)` of an array: its argument
        // may be an array that `[..]` does not index.)
        if crate::lower::expr::is_library_method(&name) {
            return;
        }
        for (k, a) in m.args.iter_mut().enumerate() {
            let Expr::Reference(r) = a else { continue };
            let constant = matches!(&*r.expr, Expr::Path(p) if p.qself.is_none()
                && p.path.get_ident().is_some_and(|i| crate::twin::constant_name(&i.to_string())));
            if r.mutability.is_none() && constant && crate::twin::slice_param(&name, k) {
                let inner = &r.expr;
                *a = syn::parse_quote_spanned!(inner.span()=> &#inner[..]);
            }
        }
    }
}

/// A window length a chain may evaluate per element: names, literals, arithmetic and
/// `.len()` of a name.
fn plain_length(e: &Expr) -> bool {
    match e {
        Expr::MethodCall(m) => m.method == "len" && m.args.is_empty() && plain_length(&m.receiver),
        Expr::Binary(b) => plain_length(&b.left) && plain_length(&b.right),
        Expr::Paren(p) => plain_length(&p.expr),
        other => plain_index(other),
    }
}

impl VisitMut for NdWindows<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        syn::visit_mut::visit_expr_mut(self, e);
        match e {
            Expr::ForLoop(f) => {
                let (source, enumerated) = match unparen(&f.expr) {
                    Expr::MethodCall(m) if m.method == "enumerate" && m.args.is_empty() => {
                        (&*m.receiver, true)
                    }
                    other => (other, false),
                };
                let Some((x, k)) = self.windows(source) else {
                    return;
                };
                let (index_pat, window_pat) = match (&*f.pat, enumerated) {
                    (Pat::Tuple(t), true) if t.elems.len() == 2 => {
                        (Some(t.elems[0].clone()), t.elems[1].clone())
                    }
                    (_, true) => return,
                    (p, false) => (None, p.clone()),
                };
                let span = f.expr.span();
                self.next += 1;
                let (i, len) = (
                    format_ident!("__mochi_nwi{}", self.next, span = span),
                    format_ident!("__mochi_nwk{}", self.next, span = span),
                );
                let len_e: Expr = syn::parse_quote!(#len);
                let count = Self::count(x, &len_e, span);
                let index_let = index_pat.map(|p| quote_spanned!(span=> let #p = #i;));
                let (label, body, x, k) = (&f.label, &f.body, x.clone(), k.clone());
                let stmts = &body.stmts;
                *e = syn::parse_quote_spanned!(span=> {
                    let #len: usize = #k;
                    #label for #i in 0..#count {
                        #index_let
                        let #window_pat = #x.slice(::ndarray::s![#i..#i + #len]);
                        #(#stmts)*
                    }
                });
            }
            Expr::MethodCall(m) => {
                // The chain's first adapter: its receiver is the windows.
                if m.method == "into_iter" {
                    return;
                }
                let Some((x, k)) = self.windows(&m.receiver) else {
                    return;
                };
                if !plain_length(k) {
                    return;
                }
                let span = m.receiver.span();
                self.next += 1;
                let i = format_ident!("__mochi_nwi{}", self.next, span = span);
                let count = Self::count(x, k, span);
                let (x, k) = (x.clone(), k.clone());
                // `.map(|w| w[0] * w[2])`: a window read only by its elements and its
                // length is the positions it covers, `x[i + j]`, with no view made.
                if let (true, Some(Expr::Closure(c))) = (m.method == "map", m.args.first_mut()) {
                    if let (1, Pat::Ident(w)) = (c.inputs.len(), &c.inputs[0]) {
                        let mut body = (*c.body).clone();
                        let (start, len) = (quote::quote!(#i), quote::quote!(#k));
                        let mut reads = crate::iterchain::WindowUses {
                            name: &w.ident,
                            seq: &x,
                            base: &start,
                            len: &len,
                            mutable: false,
                            slices: false,
                            other: false,
                        };
                        reads.visit_expr_mut(&mut body);
                        if !reads.other {
                            c.inputs[0] = syn::parse_quote_spanned!(span=> #i);
                            *c.body = body;
                            *m.receiver = syn::parse_quote_spanned!(span=> (0..#count));
                            return;
                        }
                    }
                }
                *m.receiver = syn::parse_quote_spanned!(span=>
                    (0..#count).map(|#i| #x.slice(::ndarray::s![#i..#i + (#k)])));
            }
            _ => {}
        }
    }
}

/// `for v in a.iter()` (also `&a`, `.copied()`, `.enumerate()`, `.zip(..)`) and chains
/// `a.iter().zip(b.iter()).map(..).sum()` over an array of two or more dimensions
/// (`names`: the parameters whose type says so): the element loop and the chain
/// rewrites index a sequence by one `usize`, so the array is read through
/// `let f = a.flatten();` first (ndarray's logical order, as `iter()` visits it; the
/// flatten rule's pullback gives the cotangent its shape back).
struct FlatArrays<'a> {
    names: &'a HashSet<String>,
    next: usize,
    /// The flattened arrays' names, with the array each flattens.
    made: Vec<(String, String)>,
}

impl FlatArrays<'_> {
    /// Replaces `a.iter()`, `a.into_iter()` and `&a` (as an iterated sequence or a
    /// `zip` argument) of a multi-dimensional `a` in `e`, recording the flattening.
    fn replace(&mut self, e: &mut Expr, lets: &mut Vec<syn::Stmt>) {
        struct Sources<'s, 'a> {
            outer: &'s mut FlatArrays<'a>,
            lets: &'s mut Vec<syn::Stmt>,
        }
        impl Sources<'_, '_> {
            fn flat(&mut self, x: &Expr) -> Option<syn::Ident> {
                let Expr::Path(p) = x else { return None };
                let id = p.path.get_ident()?;
                if !self.outer.names.contains(&id.to_string()) {
                    return None;
                }
                self.outer.next += 1;
                let f = format_ident!("__mochi_flat{}", self.outer.next, span = id.span());
                self.outer.made.push((f.to_string(), id.to_string()));
                self.lets
                    .push(syn::parse_quote_spanned!(id.span()=> let #f = #id.flatten();));
                Some(f)
            }
        }
        impl VisitMut for Sources<'_, '_> {
            fn visit_expr_mut(&mut self, e: &mut Expr) {
                match e {
                    Expr::MethodCall(m)
                        if (m.method == "iter" || m.method == "into_iter") && m.args.is_empty() =>
                    {
                        if let Some(f) = self.flat(&m.receiver) {
                            *m.receiver = syn::parse_quote!(#f);
                        }
                    }
                    Expr::MethodCall(m) if m.method == "zip" && m.args.len() == 1 => {
                        self.visit_expr_mut(&mut m.receiver);
                        let arg = &mut m.args[0];
                        let inner = match arg {
                            Expr::Reference(r) if r.mutability.is_none() => Some(&*r.expr),
                            Expr::Path(_) => Some(&*arg),
                            _ => None,
                        };
                        match inner.and_then(|x| self.flat(x)) {
                            Some(f) => *arg = syn::parse_quote!(#f.iter()),
                            None => self.visit_expr_mut(arg),
                        }
                    }
                    // Nested blocks get their own flattening, where they run.
                    Expr::Closure(_)
                    | Expr::Block(_)
                    | Expr::If(_)
                    | Expr::Match(_)
                    | Expr::ForLoop(_)
                    | Expr::While(_)
                    | Expr::Loop(_)
                    | Expr::Unsafe(_) => {}
                    _ => syn::visit_mut::visit_expr_mut(self, e),
                }
            }
        }
        if let Expr::ForLoop(f) = e {
            // `for v in &a`
            if let Expr::Reference(r) = &*f.expr {
                if r.mutability.is_none() {
                    let mut s = Sources { outer: self, lets };
                    if let Some(fl) = s.flat(&r.expr) {
                        *f.expr = syn::parse_quote!(#fl.iter());
                    }
                }
            }
            Sources { outer: self, lets }.visit_expr_mut(&mut f.expr);
            return;
        }
        Sources { outer: self, lets }.visit_expr_mut(e);
    }
}

impl VisitMut for FlatArrays<'_> {
    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        let mut out = Vec::with_capacity(b.stmts.len());
        for mut s in b.stmts.drain(..) {
            let mut lets = Vec::new();
            match &mut s {
                syn::Stmt::Expr(e, _) => self.replace(e, &mut lets),
                syn::Stmt::Local(l) => {
                    if let Some(init) = &mut l.init {
                        self.replace(&mut init.expr, &mut lets);
                    }
                }
                _ => {}
            }
            out.extend(lets);
            syn::visit_mut::visit_stmt_mut(self, &mut s);
            out.push(s);
        }
        b.stmts = out;
    }
}

/// `h = if c { z.iter().map(f).collect() } else { z };` (also `let h: Vec<f64> = if ..;`,
/// and `else if` arms) → `if c { h = z.iter().map(f).collect(); } else { h = z; }` (a
/// `let` without its value first): a chain collected at the end of an arm is written as
/// the assignment of a chain, which the rewrites of chains take, when an arm's value is
/// one.
struct CollectingArms;

impl CollectingArms {
    /// Does an arm (or an arm of an `else if`) end in `….collect()`?
    fn collects(i: &syn::ExprIf) -> bool {
        let tail = |b: &syn::Block| {
            matches!(b.stmts.last(), Some(syn::Stmt::Expr(Expr::MethodCall(m), None))
                if m.method == "collect")
        };
        tail(&i.then_branch)
            || match i.else_branch.as_ref().map(|(_, e)| &**e) {
                Some(Expr::Block(b)) => tail(&b.block),
                Some(Expr::If(e)) => Self::collects(e),
                _ => false,
            }
    }

    /// The `if` with each arm's value assigned to `place`; `None` when an arm has no
    /// value (or the `if` no `else`).
    fn assigned(i: &syn::ExprIf, place: &Expr) -> Option<syn::ExprIf> {
        let assign = |b: &syn::Block| -> Option<syn::Block> {
            let mut b = b.clone();
            let Some(syn::Stmt::Expr(tail, None)) = b.stmts.pop() else {
                return None;
            };
            b.stmts.push(syn::parse_quote!(#place = #tail;));
            Some(b)
        };
        let mut out = i.clone();
        out.then_branch = assign(&i.then_branch)?;
        let (else_token, e) = i.else_branch.as_ref()?;
        let arm: Expr = match &**e {
            Expr::Block(b) => {
                let mut b = b.clone();
                b.block = assign(&b.block)?;
                Expr::Block(b)
            }
            Expr::If(e) => Expr::If(Self::assigned(e, place)?),
            _ => return None,
        };
        out.else_branch = Some((*else_token, Box::new(arm)));
        Some(out)
    }
}

impl VisitMut for CollectingArms {
    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        syn::visit_mut::visit_block_mut(self, b);
        let mut out = Vec::with_capacity(b.stmts.len());
        for st in std::mem::take(&mut b.stmts) {
            match &st {
                syn::Stmt::Expr(Expr::Assign(a), Some(_)) => {
                    if let Expr::If(i) = unparen(&a.right) {
                        if Self::collects(i) {
                            if let Some(r) = Self::assigned(i, &a.left) {
                                out.push(syn::Stmt::Expr(Expr::If(r), None));
                                continue;
                            }
                        }
                    }
                    out.push(st);
                }
                syn::Stmt::Local(l) => {
                    let name = match &l.pat {
                        Pat::Ident(p) => Some(p.ident.clone()),
                        Pat::Type(t) => match &*t.pat {
                            Pat::Ident(p) => Some(p.ident.clone()),
                            _ => None,
                        },
                        _ => None,
                    };
                    let arms =
                        l.init
                            .as_ref()
                            .and_then(|init| match (&*init.expr, &init.diverge) {
                                (Expr::If(i), None) if Self::collects(i) => Some(i.clone()),
                                _ => None,
                            });
                    if let (Some(n), Some(i)) = (name, arms) {
                        let place: Expr = syn::parse_quote!(#n);
                        if let Some(r) = Self::assigned(&i, &place) {
                            let mut decl = l.clone();
                            decl.init = None;
                            out.push(syn::Stmt::Local(decl));
                            out.push(syn::Stmt::Expr(Expr::If(r), None));
                            continue;
                        }
                    }
                    out.push(st);
                }
                _ => out.push(st),
            }
        }
        b.stmts = out;
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// `let (a, b) = (e1, e2);` → `let a = e1; let b = e2;` (any number of parts, nested
/// tuples too), so that each part is bound as if written alone: a sub-slice
/// `&x[r]`, a view, a float literal. Left as written when a later part's expression
/// names what an earlier part binds (`let (a, b) = (b, a)`: the parts are evaluated
/// before any is bound), or the `let` has a type or an `else`.
struct SplitTupleLets;

impl SplitTupleLets {
    /// `x.split_first().unwrap()` (or `.expect(m)`) → `(&x[0], &x[1..])`,
    /// `x.split_last().unwrap()` → `(&x[x.len() - 1], &x[..x.len() - 1])`, for `x` a
    /// variable or a field (both panic on an empty `x`).
    fn split_ends(e: &Expr) -> Option<Expr> {
        let Expr::MethodCall(u) = e else { return None };
        if !(u.method == "unwrap" && u.args.is_empty() || u.method == "expect" && u.args.len() == 1)
        {
            return None;
        }
        let Expr::MethodCall(m) = &*u.receiver else {
            return None;
        };
        Self::split_parts(m)
    }

    /// `x.split_first()` → `(&x[0], &x[1..])`, `x.split_last()` → `(&x[x.len() - 1],
    /// &x[..x.len() - 1])`.
    fn split_parts(m: &syn::ExprMethodCall) -> Option<Expr> {
        let x = &m.receiver;
        if !m.args.is_empty() || !matches!(&**x, Expr::Path(_) | Expr::Field(_)) {
            return None;
        }
        let span = m.method.span();
        match m.method.to_string().as_str() {
            "split_first" => Some(syn::parse_quote_spanned!(span=> (&#x[0], &#x[1..]))),
            "split_last" => Some(syn::parse_quote_spanned!(span=>
                (&#x[#x.len() - 1], &#x[..#x.len() - 1]))),
            _ => None,
        }
    }

    fn split(l: &syn::Local) -> Option<Vec<syn::Stmt>> {
        let (Pat::Tuple(t), Some(init)) = (&l.pat, l.init.as_ref()) else {
            return None;
        };
        let ends = Self::split_ends(&init.expr);
        let Expr::Tuple(e) = ends.as_ref().unwrap_or(&*init.expr) else {
            return None;
        };
        if init.diverge.is_some() || t.elems.len() != e.elems.len() || t.elems.is_empty() {
            return None;
        }
        if t.elems.iter().any(|p| matches!(p, Pat::Rest(_))) {
            return None;
        }
        // The parts in an order where none reads a name an earlier one binds: as
        // written, or the other way round for a pair (`let (x, rest) = (&x[0], &x[1..]);`,
        // the head named as the slice, binds `rest` first).
        let clashes = |parts: &[(&Pat, &Expr)]| {
            let mut bound: HashSet<String> = HashSet::new();
            parts.iter().any(|(p, x)| {
                let mut named = HashSet::new();
                idents(&quote::quote!(#x), &mut named);
                let clash = named.iter().any(|n| bound.contains(n));
                let mut names = Vec::new();
                crate::activity::pat_names(p, &mut names);
                bound.extend(names);
                clash
            })
        };
        let mut parts: Vec<(&Pat, &Expr)> = t.elems.iter().zip(&e.elems).collect();
        if clashes(&parts) {
            parts.reverse();
            if parts.len() != 2 || clashes(&parts) {
                return None;
            }
        }
        let mut out = Vec::new();
        for (p, x) in parts {
            let mut part = l.clone();
            part.pat = p.clone();
            if let Some(i) = part.init.as_mut() {
                *i.expr = x.clone();
            }
            // `let &h = &x[0];` → `let h = x[0];`
            if let (Pat::Reference(pr), Some(i)) = (&p, part.init.as_mut()) {
                if let Expr::Reference(r) = &*i.expr {
                    if pr.mutability.is_none() && r.mutability.is_none() {
                        let inner = (*r.expr).clone();
                        part.pat = (*pr.pat).clone();
                        *i.expr = inner;
                    }
                }
            }
            // Nested tuples split in turn.
            match Self::split(&part) {
                Some(inner) => out.extend(inner),
                None => out.push(syn::Stmt::Local(part)),
            }
        }
        Some(out)
    }
}

/// `o.unwrap_or_default()` → `o.unwrap_or(Default::default())`, and `r.ok()` before
/// `unwrap_or`, `unwrap_or_default` or `map_or` (also with a `map` between) dropped (a
/// `Result`'s own are the same): the forms the option rewrites take.
struct OptionShorthands<'a> {
    active: &'a HashSet<String>,
}

/// `r.ok()` as `r`, if it is one.
fn without_ok(e: &mut Expr) {
    if let Expr::MethodCall(ok) = unparen(e) {
        if ok.method == "ok" && ok.args.is_empty() && ok.turbofish.is_none() {
            *e = (*ok.receiver).clone();
        }
    }
}

impl VisitMut for OptionShorthands<'_> {
    fn visit_expr_method_call_mut(&mut self, m: &mut syn::ExprMethodCall) {
        syn::visit_mut::visit_expr_method_call_mut(self, m);
        if !crate::activity::mentions_active(&m.receiver, self.active) {
            return;
        }
        // (Only where the value ends the chain: `r.ok().map(f)` alone is an `Option`.)
        if matches!(
            m.method.to_string().as_str(),
            "unwrap_or" | "unwrap_or_default" | "map_or"
        ) {
            without_ok(&mut m.receiver);
            if let Expr::MethodCall(map) = &mut *m.receiver {
                if map.method == "map" && map.args.len() == 1 {
                    without_ok(&mut map.receiver);
                }
            }
        }
        if m.method == "unwrap_or_default" && m.args.is_empty() {
            m.method = syn::Ident::new("unwrap_or", m.method.span());
            m.args
                .push(syn::parse_quote!(::core::default::Default::default()));
        }
    }
}

/// `match r { Ok(l) if l > 0.0 => a, Ok(l) => b, Err(_) => c }` → `match r { Ok(l) =>
/// if l > 0.0 { a } else { b }, Err(_) => c }`: consecutive arms with one pattern
/// (written the same), guarded but the last, are one arm choosing by `if`; the
/// derivation takes a variant's payload in an arm without a guard.
struct MergedGuardArms<'a> {
    active: &'a HashSet<String>,
}

impl VisitMut for MergedGuardArms<'_> {
    fn visit_expr_match_mut(&mut self, m: &mut syn::ExprMatch) {
        syn::visit_mut::visit_expr_match_mut(self, m);
        if !crate::activity::mentions_active(&m.expr, self.active) {
            return;
        }
        let key = |a: &syn::Arm| quote::ToTokens::to_token_stream(&a.pat).to_string();
        let mut arms: Vec<syn::Arm> = Vec::new();
        let mut i = 0;
        while i < m.arms.len() {
            // The run of arms with `m.arms[i]`'s pattern, guarded but its last.
            let mut j = i;
            while j < m.arms.len()
                && m.arms[j].guard.is_some()
                && key(&m.arms[j]) == key(&m.arms[i])
            {
                j += 1;
            }
            let merges = j > i && j < m.arms.len() && key(&m.arms[j]) == key(&m.arms[i]);
            // (A pattern that binds nothing gains nothing, and a name alone, `v if v <
            // 0.0 => .., v => ..`, the derivation takes as it is: kept as written.)
            let binds = {
                let mut names = Vec::new();
                crate::activity::pat_names(&m.arms[i].pat, &mut names);
                !names.is_empty() && !matches!(m.arms[i].pat, Pat::Ident(_))
            };
            if !(merges && binds) {
                arms.push(m.arms[i].clone());
                i += 1;
                continue;
            }
            let mut body = (*m.arms[j].body).clone();
            for a in m.arms[i..j].iter().rev() {
                let (_, g) = a.guard.as_ref().expect("guarded");
                let then = &a.body;
                body = syn::parse_quote!(if #g { #then } else { #body });
            }
            let mut arm = m.arms[j].clone();
            arm.body = Box::new(body);
            arm.comma = Some(Default::default());
            arms.push(arm);
            i = j + 1;
        }
        m.arms = arms;
    }
}

/// `match (a, b) { (Some(p), Some(q)) => e1, (Some(p), None) => e2, _ => e3 }` (also
/// `if let (Some(p), Some(q)) = (a, b) { .. } else { .. }`) of a tuple of `Option`s →
/// `{ let t0 = a; let t1 = b; if t0.is_some() && t1.is_some() { let p = t0.unwrap(); let
/// q = t1.unwrap(); e1 } else if .. { .. } else { e3 } }`: the derivation takes an
/// `Option`'s payload by `unwrap`, not out of a tuple's pattern. Each place of the
/// tuple is matched by `Some(name)`, `Some(_)`, `None`, `_`, a name or a literal; a
/// guard is tested after the arm's bindings; another pattern leaves the `match` as
/// written.
struct TupleOptionMatches<'a> {
    next: usize,
    active: &'a HashSet<String>,
}

/// `a.zip(b).map(|(p, q)| e).unwrap_or(d)` (also `map_or(d, |(p, q)| e)`) and `if let
/// Some((p, q)) = a.zip(b) { .. } else { .. }` of two `Option`s → `match (a, b) {
/// (Some(p), Some(q)) => e, _ => d }`, which [`TupleOptionMatches`] then writes as an
/// `if` chain. (An iterator's `zip` ends in neither.)
struct OptionZips<'a> {
    active: &'a HashSet<String>,
}

impl OptionZips<'_> {
    /// `a.zip(b)`: `a` and `b`.
    fn zipped(e: &Expr) -> Option<(&Expr, &Expr)> {
        match unparen(e) {
            Expr::MethodCall(z) if z.method == "zip" && z.args.len() == 1 => {
                Some((&z.receiver, &z.args[0]))
            }
            _ => None,
        }
    }

    /// `match (a, b) { (Some(p), Some(q)) => e, _ => d }` of `zip` = `a.zip(b)` and `f`
    /// = `|(p, q)| e`.
    fn pair_match(zip: &Expr, f: &Expr, d: &Expr) -> Option<Expr> {
        let ((a, b), (p, q, body)) = (Self::zipped(zip)?, Self::pair_closure(f)?);
        Some(syn::parse_quote!(match (#a, #b) { (Some(#p), Some(#q)) => #body, _ => #d }))
    }

    /// `|(p, q)| e`: its pattern's two places and its body.
    fn pair_closure(e: &Expr) -> Option<(&Pat, &Pat, &Expr)> {
        let Expr::Closure(c) = unparen(e) else {
            return None;
        };
        let [Pat::Tuple(t)] = &c.inputs.iter().collect::<Vec<_>>()[..] else {
            return None;
        };
        match (t.elems.len(), t.elems.first(), t.elems.last()) {
            (2, Some(p), Some(q)) => Some((p, q, &c.body)),
            _ => None,
        }
    }
}

impl VisitMut for OptionZips<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        syn::visit_mut::visit_expr_mut(self, e);
        if !crate::activity::mentions_active(&*e, self.active) {
            return;
        }
        let rewritten: Option<Expr> = match &*e {
            Expr::MethodCall(u) if u.method == "unwrap_or" && u.args.len() == 1 => {
                match unparen(&u.receiver) {
                    Expr::MethodCall(m) if m.method == "map" && m.args.len() == 1 => {
                        Self::pair_match(&m.receiver, &m.args[0], &u.args[0])
                    }
                    _ => None,
                }
            }
            Expr::MethodCall(m) if m.method == "map_or" && m.args.len() == 2 => {
                Self::pair_match(&m.receiver, &m.args[1], &m.args[0])
            }
            Expr::If(i) => match &*i.cond {
                Expr::Let(l) => match (&*l.pat, Self::zipped(&l.expr)) {
                    (Pat::TupleStruct(ts), Some((a, b)))
                        if ts.path.is_ident("Some") && ts.elems.len() == 1 =>
                    {
                        match &ts.elems[0] {
                            Pat::Tuple(t) if t.elems.len() == 2 => {
                                let (p, q) = (&t.elems[0], &t.elems[1]);
                                let then = &i.then_branch;
                                let other: Expr = else_or_empty(i);
                                Some(
                                    syn::parse_quote!(match (#a, #b) { (Some(#p), Some(#q)) => #then, _ => #other }),
                                )
                            }
                            _ => None,
                        }
                    }
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        };
        if let Some(r) = rewritten {
            *e = r;
        }
    }
}

/// An `if`'s `else` branch, or an empty block where it has none.
fn else_or_empty(i: &syn::ExprIf) -> Expr {
    match &i.else_branch {
        Some((_, b)) => (**b).clone(),
        None => syn::parse_quote!({}),
    }
}

/// One place of a tuple pattern (see [`TupleOptionMatches`]).
enum TuplePlace {
    Some(Option<syn::Ident>),
    /// `Some(&v)` of an `Option<&f64>` (`x.first()`): `v` the value.
    SomeRef(syn::Ident),
    None,
    Any(Option<syn::Ident>),
    Lit(syn::ExprLit),
}

impl TupleOptionMatches<'_> {
    fn places(p: &Pat, n: usize) -> Option<Vec<TuplePlace>> {
        let Pat::Tuple(t) = p else {
            return match p {
                Pat::Wild(_) => Some((0..n).map(|_| TuplePlace::Any(None)).collect()),
                _ => None,
            };
        };
        if t.elems.len() != n {
            return None;
        }
        let name = |p: &Pat| match p {
            Pat::Ident(i) if i.by_ref.is_none() && i.subpat.is_none() && i.ident != "None" => {
                Some(Some(i.ident.clone()))
            }
            Pat::Wild(_) => Some(None),
            _ => None,
        };
        t.elems
            .iter()
            .map(|e| match e {
                Pat::TupleStruct(ts)
                    if ts.qself.is_none() && ts.path.is_ident("Some") && ts.elems.len() == 1 =>
                {
                    match &ts.elems[0] {
                        Pat::Reference(r) if r.mutability.is_none() => match &*r.pat {
                            Pat::Ident(i) if i.by_ref.is_none() && i.subpat.is_none() => {
                                Some(TuplePlace::SomeRef(i.ident.clone()))
                            }
                            _ => None,
                        },
                        other => name(other).map(TuplePlace::Some),
                    }
                }
                Pat::Ident(i) if i.ident == "None" && i.subpat.is_none() => Some(TuplePlace::None),
                Pat::Lit(l) => Some(TuplePlace::Lit(l.clone())),
                other => name(other).map(TuplePlace::Any),
            })
            .collect()
    }

    /// The `if` chain of `arms` over the places `t`, or `None` to leave them.
    fn chain(
        &mut self,
        scrutinee: &syn::ExprTuple,
        arms: &[(Pat, Option<Expr>, Expr)],
    ) -> Option<Expr> {
        let n = scrutinee.elems.len();
        let mut parsed = Vec::new();
        for (p, g, b) in arms {
            parsed.push((Self::places(p, n)?, g.clone(), b.clone()));
        }
        // (Only a tuple holding an `Option`; the last arm, unguarded, is the rest.)
        if !parsed.iter().any(|(ps, _, _)| {
            ps.iter().any(|p| {
                matches!(
                    p,
                    TuplePlace::Some(_) | TuplePlace::SomeRef(_) | TuplePlace::None
                )
            })
        }) || parsed.last().is_none_or(|(_, g, _)| g.is_some())
        {
            return None;
        }
        self.next += 1;
        let k = self.next;
        let names: Vec<syn::Ident> = (0..n)
            .map(|i| format_ident!("__mochi_opt{}_{}", k, i))
            .collect();
        let lets = scrutinee
            .elems
            .iter()
            .zip(&names)
            .map(|(e, t)| quote::quote!(let #t = #e;));
        let last = parsed.len() - 1;
        let mut out: Option<Expr> = None;
        for (i, (ps, g, body)) in parsed.iter().enumerate().rev() {
            let mut tests = Vec::new();
            let mut binds = Vec::new();
            for (p, t) in ps.iter().zip(&names) {
                match p {
                    TuplePlace::Some(v) => {
                        tests.push(quote::quote!(#t.is_some()));
                        if let Some(v) = v {
                            binds.push(quote::quote!(let #v = #t.unwrap();));
                        }
                    }
                    TuplePlace::SomeRef(v) => {
                        tests.push(quote::quote!(#t.is_some()));
                        // (`.clone()`: the value whether the derivation reads the option
                        // by reference or by value.)
                        binds.push(quote::quote!(let #v = #t.unwrap().clone();));
                    }
                    TuplePlace::None => tests.push(quote::quote!(#t.is_none())),
                    TuplePlace::Lit(l) => tests.push(quote::quote!(#t == #l)),
                    TuplePlace::Any(Some(v)) => binds.push(quote::quote!(let #v = #t;)),
                    TuplePlace::Any(None) => {}
                }
            }
            // (A block's statements spliced after the bindings: one block, not two.)
            let then: Expr = match body {
                Expr::Block(b) if b.label.is_none() && b.attrs.is_empty() => {
                    let stmts = &b.block.stmts;
                    syn::parse_quote!({ #(#binds)* #(#stmts)* })
                }
                _ => syn::parse_quote!({ #(#binds)* #body }),
            };
            out = Some(match (i == last, out) {
                (true, _) => then,
                (false, rest) => {
                    let rest = rest.expect("the last arm comes first");
                    let mut cond: Vec<TokenStream> = tests;
                    if let Some(g) = g {
                        cond.push(quote::quote!({ #(#binds)* #g }));
                    }
                    if cond.is_empty() {
                        cond.push(quote::quote!(true));
                    }
                    match rest {
                        Expr::Block(_) | Expr::If(_) => {
                            syn::parse_quote!(if #(#cond)&&* #then else #rest)
                        }
                        rest => syn::parse_quote!(if #(#cond)&&* #then else { #rest }),
                    }
                }
            });
        }
        let chain = out?;
        Some(syn::parse_quote!({ #(#lets)* #chain }))
    }
}

impl VisitMut for TupleOptionMatches<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        syn::visit_mut::visit_expr_mut(self, e);
        if !crate::activity::mentions_active(&*e, self.active) {
            return;
        }
        let replaced = match e {
            Expr::Match(m) => match unparen(&m.expr) {
                Expr::Tuple(t) => {
                    let arms: Vec<(Pat, Option<Expr>, Expr)> = m
                        .arms
                        .iter()
                        .map(|a| {
                            (
                                a.pat.clone(),
                                a.guard.as_ref().map(|(_, g)| (**g).clone()),
                                (*a.body).clone(),
                            )
                        })
                        .collect();
                    let t = t.clone();
                    self.chain(&t, &arms)
                }
                _ => None,
            },
            Expr::If(i) => match &*i.cond {
                Expr::Let(l) => match unparen(&l.expr) {
                    Expr::Tuple(t) => {
                        let then: Expr = Expr::Block(syn::ExprBlock {
                            attrs: Vec::new(),
                            label: None,
                            block: i.then_branch.clone(),
                        });
                        let other: Expr = else_or_empty(i);
                        let arms = vec![
                            ((*l.pat).clone(), None, then),
                            (syn::parse_quote!(_), None, other),
                        ];
                        let t = t.clone();
                        self.chain(&t, &arms)
                    }
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        };
        if let Some(r) = replaced {
            *e = r;
        }
    }
}

/// nalgebra's `n.normalize_mut();` (also `let len = n.normalize_mut();`, the norm it had)
/// of a variable: `n = n.normalize();` (after `let len = n.norm();`), the rules the
/// derivation has. Left as written where a method of that name is marked on a type of
/// the crate's.
struct NormalizedInPlace;

impl VisitMut for NormalizedInPlace {
    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        syn::visit_mut::visit_block_mut(self, b);
        if crate::twin::marked_method_name("normalize_mut") {
            return;
        }
        let in_place = |e: &Expr| match unparen(e) {
            Expr::MethodCall(m)
                if m.method == "normalize_mut"
                    && m.args.is_empty()
                    && matches!(unparen(&m.receiver), Expr::Path(p) if p.path.get_ident().is_some()) =>
            {
                Some(((*m.receiver).clone(), m.method.span()))
            }
            _ => None,
        };
        let mut stmts = Vec::with_capacity(b.stmts.len());
        for st in std::mem::take(&mut b.stmts) {
            match &st {
                syn::Stmt::Expr(e, Some(_)) => {
                    if let Some((n, span)) = in_place(e) {
                        stmts.push(syn::parse_quote_spanned!(span=> #n = #n.normalize();));
                        continue;
                    }
                }
                syn::Stmt::Local(l) => {
                    if let Some((n, span)) = l
                        .init
                        .as_ref()
                        .filter(|i| i.diverge.is_none())
                        .and_then(|i| in_place(&i.expr))
                    {
                        let mut norm = l.clone();
                        if let Some(i) = norm.init.as_mut() {
                            *i.expr = syn::parse_quote_spanned!(span=> #n.norm());
                        }
                        stmts.push(syn::Stmt::Local(norm));
                        stmts.push(syn::parse_quote_spanned!(span=> #n = #n.normalize();));
                        continue;
                    }
                }
                _ => {}
            }
            stmts.push(st);
        }
        b.stmts = stmts;
    }
}

/// `let v = states.pop().unwrap().terminal();` (also `.expect(m)`, `q.remove(i)`,
/// `q.swap_remove(i)`, in a `let`'s value, an expression statement or the value assigned
/// to a name (`s = v.pop().unwrap().step(u);`), where it is
/// evaluated first and unconditionally: not in a closure, a branch or the right of `&&`
/// or `||`): the element taken bound whole before the statement, `let __mochi_taken0 =
/// states.pop().unwrap();`, the form the derivation takes. Left as written when the
/// statement names the buffer elsewhere, whose reads the earlier removal would change.
struct TakenInExpressions {
    next: usize,
}

impl TakenInExpressions {
    /// The buffer `e` takes an element from, when it is such a call of a variable.
    fn taken(e: &Expr) -> Option<&syn::Ident> {
        let Expr::MethodCall(m) = unparen(e) else {
            return None;
        };
        let (call, name) = match m.method.to_string().as_str() {
            "unwrap" if m.args.is_empty() => (unparen(&m.receiver), "pop"),
            "expect" if m.args.len() == 1 => (unparen(&m.receiver), "pop"),
            "remove" | "swap_remove" if m.args.len() == 1 => (e, ""),
            _ => return None,
        };
        let Expr::MethodCall(c) = call else {
            return None;
        };
        if !name.is_empty() && (c.method != name || !c.args.is_empty()) {
            return None;
        }
        match unparen(&c.receiver) {
            Expr::Path(p) if p.qself.is_none() => p.path.get_ident(),
            _ => None,
        }
    }

    /// The first such call in `e` where it is evaluated unconditionally, replaced by
    /// `with`: the call and its buffer.
    fn hoist(e: &mut Expr, with: &syn::Ident) -> Option<(Expr, syn::Ident)> {
        if let Some(v) = Self::taken(e).cloned() {
            let call = std::mem::replace(e, syn::parse_quote_spanned!(e.span()=> #with));
            return Some((call, v));
        }
        let parts: Vec<&mut Expr> = match e {
            Expr::MethodCall(m) => std::iter::once(&mut *m.receiver)
                .chain(m.args.iter_mut())
                .collect(),
            Expr::Call(c) => c.args.iter_mut().collect(),
            Expr::Binary(b) => match b.op {
                syn::BinOp::And(_) | syn::BinOp::Or(_) => vec![&mut *b.left],
                _ => vec![&mut *b.left, &mut *b.right],
            },
            Expr::Unary(u) => vec![&mut *u.expr],
            // (`s = v.pop().unwrap().step(u);`: the value; the place is `s`, a name.)
            Expr::Assign(a) if matches!(unparen(&a.left), Expr::Path(_)) => vec![&mut *a.right],
            Expr::Paren(p) => vec![&mut *p.expr],
            Expr::Field(f) => vec![&mut *f.base],
            Expr::Index(i) => vec![&mut *i.expr, &mut *i.index],
            Expr::Cast(c) => vec![&mut *c.expr],
            Expr::Reference(r) => vec![&mut *r.expr],
            Expr::Tuple(t) => t.elems.iter_mut().collect(),
            Expr::Array(a) => a.elems.iter_mut().collect(),
            Expr::Struct(st) => st.fields.iter_mut().map(|f| &mut f.expr).collect(),
            _ => Vec::new(),
        };
        parts.into_iter().find_map(|p| Self::hoist(p, with))
    }
}

impl VisitMut for TakenInExpressions {
    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        syn::visit_mut::visit_block_mut(self, b);
        let mut stmts = Vec::with_capacity(b.stmts.len());
        for mut st in std::mem::take(&mut b.stmts) {
            loop {
                let e = match &mut st {
                    syn::Stmt::Local(l) => match l.init.as_mut() {
                        // (Bound whole already: the form itself.)
                        Some(init)
                            if init.diverge.is_none() && Self::taken(&init.expr).is_none() =>
                        {
                            &mut *init.expr
                        }
                        _ => break,
                    },
                    syn::Stmt::Expr(e, _) if Self::taken(e).is_none() => e,
                    _ => break,
                };
                let with = format_ident!("__mochi_taken{}", self.next);
                let mut copy = e.clone();
                let Some((call, v)) = Self::hoist(&mut copy, &with) else {
                    break;
                };
                // (The buffer named nowhere else in the statement.)
                if crate::activity::tokens_mention(&quote::quote!(#copy), &|i| *i == v) {
                    break;
                }
                *e = copy;
                self.next += 1;
                stmts.push(syn::parse_quote_spanned!(call.span()=> let #with = #call;));
            }
            stmts.push(st);
        }
        b.stmts = stmts;
    }
}

/// `match x.split_first() { Some((h, rest)) => a, None => b }` (also `split_last`, the arms
/// in either order, `_` for `None`, and `if let Some((h, rest)) = x.split_first() { a }
/// else { b }`) of a variable `x` → `if !x.is_empty() { let h = &x[0]; let rest =
/// &x[1..]; a } else { b }`: the head and the rest as the element and the window they
/// are, which the derivation reads in place (a recursion on the rest, `horner(rest, t)`).
struct SplitMatches;

impl SplitMatches {
    /// `x.split_first()` / `x.split_last()` of a variable: `x` and whether it is the last.
    fn split(e: &Expr) -> Option<(&Expr, bool)> {
        let Expr::MethodCall(m) = unparen(e) else {
            return None;
        };
        let last = match m.method.to_string().as_str() {
            "split_first" => false,
            "split_last" => true,
            _ => return None,
        };
        (m.args.is_empty()
            && matches!(unparen(&m.receiver), Expr::Path(p) if p.path.get_ident().is_some()))
        .then_some((&*m.receiver, last))
    }

    /// `Some((h, rest))`: the two patterns.
    fn some_pair(p: &Pat) -> Option<(&Pat, &Pat)> {
        let Pat::TupleStruct(t) = p else { return None };
        if !t.path.is_ident("Some") || t.elems.len() != 1 {
            return None;
        }
        match &t.elems[0] {
            Pat::Tuple(pair) if pair.elems.len() == 2 => Some((&pair.elems[0], &pair.elems[1])),
            _ => None,
        }
    }

    /// `let Some((h, t)) = x.split_first()` as the condition of `body` (else `no`): the
    /// `if` [`Self::rewrite`] writes.
    fn let_split(cond: &Expr, body: &syn::Block, no: &Expr) -> Option<Expr> {
        let Expr::Let(l) = cond else { return None };
        let (x, last) = Self::split(&l.expr)?;
        let pair = Self::some_pair(&l.pat)?;
        let yes: Expr = Expr::Block(syn::ExprBlock {
            attrs: Vec::new(),
            label: None,
            block: body.clone(),
        });
        Some(Self::rewrite(x, last, pair, &yes, no))
    }

    fn rewrite(x: &Expr, last: bool, (h, rest): (&Pat, &Pat), yes: &Expr, no: &Expr) -> Expr {
        let span = x.span();
        let (elem, others): (Expr, Expr) = if last {
            (
                syn::parse_quote_spanned!(span=> &#x[#x.len() - 1]),
                syn::parse_quote_spanned!(span=> &#x[..#x.len() - 1]),
            )
        } else {
            (
                syn::parse_quote_spanned!(span=> &#x[0]),
                syn::parse_quote_spanned!(span=> &#x[1..]),
            )
        };
        // `Some((&last, init))`: the element by value, `let last = x[x.len() - 1];`.
        let (h, elem) = match (h, &elem) {
            (Pat::Reference(pr), Expr::Reference(r)) if pr.mutability.is_none() => {
                (&*pr.pat, (*r.expr).clone())
            }
            _ => (h, elem),
        };
        // (A branch written as a block is spliced in: its statements, not a block in one.)
        let yes = match yes {
            Expr::Block(b) if b.label.is_none() && b.attrs.is_empty() => {
                let stmts = &b.block.stmts;
                quote::quote!(#(#stmts)*)
            }
            other => quote::quote!(#other),
        };
        let no = match no {
            Expr::Block(b) if b.label.is_none() && b.attrs.is_empty() => {
                let block = &b.block;
                quote::quote!(#block)
            }
            other => quote::quote!({ #other }),
        };
        // (The head named as `x`, `Some((x, rest)) = x.split_first()`, bound last: the
        // rest is read from the `x` split. Until 2026-12-07 it was read from the head.)
        let mut names = Vec::new();
        crate::activity::pat_names(h, &mut names);
        let head_is_x = matches!(unparen(x), Expr::Path(p)
            if p.path.get_ident().is_some_and(|i| names.contains(&i.to_string())));
        let (first, second) = if head_is_x {
            (
                quote::quote!(let #rest = #others;),
                quote::quote!(let #h = #elem;),
            )
        } else {
            (
                quote::quote!(let #h = #elem;),
                quote::quote!(let #rest = #others;),
            )
        };
        syn::parse_quote_spanned!(span=> if !#x.is_empty() {
            #first
            #second
            #yes
        } else #no)
    }
}

impl VisitMut for SplitMatches {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        syn::visit_mut::visit_expr_mut(self, e);
        let rewritten = match &*e {
            Expr::Match(m) if m.arms.len() == 2 && m.arms.iter().all(|a| a.guard.is_none()) => {
                let Some((x, last)) = Self::split(&m.expr) else {
                    return;
                };
                let none = |p: &Pat| {
                    matches!(p, Pat::Wild(_)) || matches!(p, Pat::Ident(i) if i.ident == "None")
                };
                let (some, other) = match (
                    Self::some_pair(&m.arms[0].pat),
                    Self::some_pair(&m.arms[1].pat),
                ) {
                    (Some(pair), None) if none(&m.arms[1].pat) => (pair, &m.arms[1]),
                    (None, Some(pair)) if none(&m.arms[0].pat) => (pair, &m.arms[0]),
                    _ => return,
                };
                let yes = if std::ptr::eq(other, &m.arms[1]) {
                    &m.arms[0]
                } else {
                    &m.arms[1]
                };
                Self::rewrite(x, last, some, &yes.body, &other.body)
            }
            Expr::If(i) => {
                let no: Expr = else_or_empty(i);
                match Self::let_split(&i.cond, &i.then_branch, &no) {
                    Some(r) => r,
                    None => return,
                }
            }
            // `while let Some((h, t)) = rest.split_first() { ..; rest = t; }`, a walk
            // down a slice: `while !rest.is_empty() { let h = &rest[0]; let t =
            // &rest[1..]; .. }`.
            Expr::While(w) => {
                let Some(Expr::If(i)) = Self::let_split(&w.cond, &w.body, &syn::parse_quote!({}))
                else {
                    return;
                };
                let mut w = w.clone();
                w.cond = i.cond;
                w.body = i.then_branch;
                Expr::While(w)
            }
            _ => return,
        };
        *e = rewritten;
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// `x.chunks_exact(k).remainder()` of a variable `x` → `&x[x.len() - x.len() % k..]` (and
/// `x.rchunks_exact(k).remainder()` → `&x[..x.len() % k]`): the elements no chunk holds,
/// as the window of `x` they are. `k` is a plain expression (names, literals,
/// arithmetic, `.len()`), evaluated twice.
/// A part of a sub-slice, `x[a..][c..d]` (also `..d`, `c..`, `c..=d`; the first range
/// also `..b` or `a..b`), and an element of one, `x[a..][i]`: the part of `x` itself,
/// `x[a + c..a + d]`, `x[a + i]`, which the derivation reads as any sub-slice of `x`.
/// The bounds are the same (`x[a..]` holds `x.len() - a` elements); a first range with
/// an end checks the second's against it (`within(d, b - a)`), as the slice of a slice
/// does.
struct NestedSubSlices;

impl VisitMut for NestedSubSlices {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        syn::visit_mut::visit_expr_mut(self, e);
        let Expr::Index(outer) = e else {
            return;
        };
        let Expr::Index(inner) = unparen(&outer.expr) else {
            return;
        };
        let Expr::Range(r1) = unparen(&inner.index) else {
            return;
        };
        let x = &inner.expr;
        let span = outer.bracket_token.span.join();
        let a: Expr = match &r1.start {
            Some(a) => (**a).clone(),
            None => syn::parse_quote_spanned!(span=> 0usize),
        };
        // The length of the first part, `b - a` (`b + 1 - a` for `a..=b`), when it ends.
        let len: Option<Expr> = r1.end.as_ref().map(|b| match r1.limits {
            syn::RangeLimits::Closed(_) => syn::parse_quote_spanned!(span=> (#b) + 1 - (#a)),
            syn::RangeLimits::HalfOpen(_) => syn::parse_quote_spanned!(span=> (#b) - (#a)),
        });
        let at = |v: &Expr| -> Expr { syn::parse_quote_spanned!(span=> (#a) + (#v)) };
        let index: Expr = match unparen(&outer.index) {
            Expr::Range(r2) => {
                let start = match &r2.start {
                    Some(c) => at(c),
                    None => a.clone(),
                };
                // (`..=d` ends after `d`.)
                let end = r2.end.as_ref().map(|d| match r2.limits {
                    syn::RangeLimits::Closed(_) => syn::parse_quote_spanned!(span=> (#d) + 1),
                    syn::RangeLimits::HalfOpen(_) => (**d).clone(),
                });
                match (end, &len) {
                    (Some(d), Some(len)) => {
                        let d = at(
                            &syn::parse_quote_spanned!(span=> ::mochi::__private::within(#d, #len)),
                        );
                        syn::parse_quote_spanned!(span=> #start..#d)
                    }
                    (Some(d), None) => {
                        let d = at(&d);
                        syn::parse_quote_spanned!(span=> #start..#d)
                    }
                    (None, Some(len)) => {
                        let d = at(len);
                        syn::parse_quote_spanned!(span=> #start..#d)
                    }
                    (None, None) => syn::parse_quote_spanned!(span=> #start..),
                }
            }
            // (An element, not a multi-index: `x[a..]` is a slice; past the first
            // part's end it panics as the element of the part does.)
            i => match &len {
                Some(len) => {
                    let i: Expr = syn::parse_quote_spanned!(span=> ::mochi::__private::within((#i) + 1, #len) - 1);
                    at(&i)
                }
                None => at(i),
            },
        };
        *e = syn::parse_quote_spanned!(span=> #x[#index]);
    }
}

struct Remainders;

impl Remainders {
    /// `x.chunks_exact(k).remainder()` as the place `x[a..]` (`x[..b]` for `rchunks_exact`).
    fn place(e: &Expr) -> Option<Expr> {
        let Expr::MethodCall(r) = unparen(e) else {
            return None;
        };
        if r.method != "remainder" || !r.args.is_empty() {
            return None;
        }
        let Expr::MethodCall(c) = unparen(&r.receiver) else {
            return None;
        };
        let from_end = match c.method.to_string().as_str() {
            "chunks_exact" => true,
            "rchunks_exact" => false,
            _ => return None,
        };
        if c.args.len() != 1
            || !plain_length(&c.args[0])
            || !matches!(unparen(&c.receiver), Expr::Path(p) if p.path.get_ident().is_some())
        {
            return None;
        }
        let (x, k, span) = (&c.receiver, &c.args[0], r.method.span());
        Some(if from_end {
            syn::parse_quote_spanned!(span=> #x[#x.len() - #x.len() % (#k)..])
        } else {
            syn::parse_quote_spanned!(span=> #x[..#x.len() % (#k)])
        })
    }
}

impl VisitMut for Remainders {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        // (A method's receiver, `.remainder().iter()`: the place itself, as a chain's
        // source is written; elsewhere a borrow of it.)
        if let Expr::MethodCall(m) = e {
            if let Some(place) = Self::place(&m.receiver) {
                *m.receiver = place;
            }
        }
        if let Some(place) = Self::place(e) {
            *e = syn::parse_quote!((&#place));
        }
        syn::visit_mut::visit_expr_mut(self, e);
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// The `let`s of [`unzipped`] chains, written out.
struct Unzips;

impl VisitMut for Unzips {
    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        let mut stmts = Vec::with_capacity(b.stmts.len());
        for s in std::mem::take(&mut b.stmts) {
            match &s {
                syn::Stmt::Local(l) => match unzipped(l) {
                    Some(parts) => stmts.extend(parts),
                    None => stmts.push(s),
                },
                _ => stmts.push(s),
            }
        }
        b.stmts = stmts;
        syn::visit_mut::visit_block_mut(self, b);
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// `let (a, b): (Vec<A>, Vec<B>) = chain.unzip();` (also without the type, `mut` names)
/// → `let mut a: Vec<A> = Vec::new(); let mut b: Vec<B> = Vec::new(); for t in chain {
/// let (p, q) = t; a.push(p); b.push(q); }`: the pairs pushed as the chain makes them.
fn unzipped(l: &syn::Local) -> Option<Vec<syn::Stmt>> {
    let init = l.init.as_ref()?;
    if init.diverge.is_some() {
        return None;
    }
    let Expr::MethodCall(m) = unparen(&init.expr) else {
        return None;
    };
    if m.method != "unzip" || !m.args.is_empty() {
        return None;
    }
    let (pat, tys): (&Pat, Option<Vec<syn::Type>>) = match &l.pat {
        Pat::Type(t) => match &*t.ty {
            syn::Type::Tuple(tt) if tt.elems.len() == 2 => {
                (&*t.pat, Some(tt.elems.iter().cloned().collect()))
            }
            _ => return None,
        },
        p => (p, None),
    };
    let Pat::Tuple(pt) = pat else { return None };
    if pt.elems.len() != 2 {
        return None;
    }
    let mut names = Vec::new();
    for p in &pt.elems {
        match p {
            Pat::Ident(i) if i.subpat.is_none() && i.by_ref.is_none() => {
                names.push(i.ident.clone())
            }
            _ => return None,
        }
    }
    let span = m.method.span();
    let chain = &m.receiver;
    let (a, b) = (&names[0], &names[1]);
    let (ta, tb): (syn::Type, syn::Type) = match tys {
        Some(t) => (t[0].clone(), t[1].clone()),
        None => (syn::parse_quote!(Vec<_>), syn::parse_quote!(Vec<_>)),
    };
    let (t, p, q) = (
        format_ident!("__mochi_uz", span = span),
        format_ident!("__mochi_uz_a", span = span),
        format_ident!("__mochi_uz_b", span = span),
    );
    let block: syn::Block = syn::parse_quote_spanned!(span=> {
        let mut #a: #ta = ::std::vec::Vec::new();
        let mut #b: #tb = ::std::vec::Vec::new();
        for #t in #chain {
            let (#p, #q) = #t;
            #a.push(#p);
            #b.push(#q);
        }
    });
    Some(block.stmts)
}

/// `std::array::from_fn(|i| e)` of a known length (`let a: [f64; 3] = ..`, or the
/// turbofish `from_fn::<_, 3, _>`) up to 64 → `[{ let i = 0usize; e }, …]`: the closure
/// written out once per element. An element that is a `from_fn` of its own, `let img:
/// [[f64; 5]; 5] = from_fn(|i| from_fn(|j| x[i * 5 + j]))`, takes its length from the
/// element type. A longer array, or one whose length is a name (`[f64; N]`), of floats
/// or arrays of them: a zeroed array written element by element in a loop.
fn array_from_fn(ty: Option<&syn::Type>, init: &Expr) -> Option<Expr> {
    let (len, elem) = match ty {
        Some(syn::Type::Array(a)) => (Some(&a.len), Some(&*a.elem)),
        _ => (None, None),
    };
    let Expr::Call(c) = unparen(init) else {
        return None;
    };
    let Expr::Path(p) = &*c.func else { return None };
    let segs = &p.path.segments;
    let n = segs.len();
    if n < 2 || segs[n - 1].ident != "from_fn" || segs[n - 2].ident != "array" {
        return None;
    }
    let turbofish_len = match &segs[n - 1].arguments {
        syn::PathArguments::AngleBracketed(a) => a.args.iter().nth(1).and_then(|g| match g {
            syn::GenericArgument::Const(e) => Some(e.clone()),
            syn::GenericArgument::Type(syn::Type::Path(t)) => {
                t.path.get_ident().map(|i| syn::parse_quote!(#i))
            }
            _ => None,
        }),
        _ => None,
    };
    let len = turbofish_len.as_ref().or(len)?;
    let [Expr::Closure(cl)] = &c.args.iter().collect::<Vec<_>>()[..] else {
        return None;
    };
    if cl.inputs.len() != 1 {
        return None;
    }
    let param = match &cl.inputs[0] {
        Pat::Type(t) => (*t.pat).clone(),
        other => other.clone(),
    };
    let body: Expr = array_from_fn(elem, &cl.body).unwrap_or_else(|| (*cl.body).clone());
    let span = p.span();
    let literal = match unparen(len) {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(k),
            ..
        }) => k.base10_parse::<usize>().ok().filter(|k| *k <= 64),
        _ => None,
    };
    if let Some(k) = literal {
        let elems = (0..k).map(|j| quote::quote!({ let #param: usize = #j; #body }));
        return Some(syn::parse_quote_spanned!(span=> [#(#elems),*]));
    }
    // (The loop: its index named by the closure's parameter, `_` given a name.)
    let zero = zero_of(ty?)?;
    let index = match &param {
        Pat::Ident(i) if i.by_ref.is_none() && i.subpat.is_none() => i.ident.clone(),
        Pat::Wild(_) => format_ident!("__mochi_from_fn_index", span = span),
        _ => return None,
    };
    if crate::iterchain::contains_return(&cl.body) {
        return None;
    }
    let out = format_ident!("__mochi_from_fn", span = span);
    Some(syn::parse_quote_spanned!(span=> {
        #[allow(unused_mut)]
        let mut #out: #ty = #zero;
        for #index in 0..#len {
            #out[#index] = #body;
        }
        #out
    }))
}

/// The zero of a float type or of an array of them, `0.0`, `[[0.0; M]; N]`.
fn zero_of(ty: &syn::Type) -> Option<Expr> {
    match ty {
        syn::Type::Array(a) => {
            let (inner, len) = (zero_of(&a.elem)?, &a.len);
            Some(syn::parse_quote!([#inner; #len]))
        }
        syn::Type::Path(p) if p.path.is_ident("f64") || p.path.is_ident("f32") => {
            Some(syn::parse_quote!(0.0))
        }
        _ => None,
    }
}

impl VisitMut for SplitTupleLets {
    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        for s in b.stmts.iter_mut() {
            if let syn::Stmt::Local(l) = s {
                let ty = match &l.pat {
                    Pat::Type(t) => Some((*t.ty).clone()),
                    _ => None,
                };
                if let Some(init) = l.init.as_mut() {
                    if let Some(r) = array_from_fn(ty.as_ref(), &init.expr) {
                        *init.expr = r;
                    }
                }
            }
        }
        let mut stmts = Vec::with_capacity(b.stmts.len());
        for s in std::mem::take(&mut b.stmts) {
            match &s {
                syn::Stmt::Local(l) => match Self::split(l) {
                    Some(parts) => stmts.extend(parts),
                    None => stmts.push(s),
                },
                _ => stmts.push(s),
            }
        }
        b.stmts = stmts;
        syn::visit_mut::visit_block_mut(self, b);
    }
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        // `if let Some((h, t)) = x.split_first() { .. } else { .. }` → `if !x.is_empty()
        // { let (h, t) = (&x[0], &x[1..]); .. } else { .. }` (also `split_last`).
        if let Expr::If(i) = e {
            if let Expr::Let(l) = &*i.cond {
                let parts = match (unparen(&l.expr), some_tuple(&l.pat)) {
                    (Expr::MethodCall(m), Some(_)) => Self::split_parts(m).map(|p| (p, m)),
                    _ => None,
                };
                if let Some((parts, m)) = parts {
                    let x = &m.receiver;
                    let pat = some_tuple(&l.pat).cloned();
                    let span = i.if_token.span;
                    let body = &i.then_branch.stmts;
                    *i.cond = syn::parse_quote_spanned!(span=> !#x.is_empty());
                    i.then_branch = syn::parse_quote_spanned!(span=> {
                        let #pat = #parts;
                        #(#body)*
                    });
                }
            }
        }
        syn::visit_mut::visit_expr_mut(self, e);
    }
}

/// Slice patterns over a slice, as tests of its length and reads of its elements:
/// `if let [a, b, rest @ ..] = x { A } else { B }` → `if x.len() >= 2 { let a = &x[0];
/// let b = &x[1]; let rest = &x[2..x.len()]; A } else { B }`, and a `match` whose arms
/// are such patterns (or `_`) → an `if`/`else` chain, its last arm the final `else`
/// (the match is exhaustive). Elements are bound by reference, as matching a slice
/// binds them (`&a` and `mut a` by value); a scrutinee other than a variable or a field
/// (`&x[1..]`, `v.as_slice()`) is bound first. Other patterns (literals, guards) are
/// left to the lowering's refusal.
fn slice_patterns(e: &Expr) -> Option<Expr> {
    let (scrut, arms): (&Expr, Vec<(Pat, Expr)>) = match e {
        Expr::If(i) => {
            let Expr::Let(l) = &*i.cond else { return None };
            let Pat::Slice(_) = &*l.pat else { return None };
            let then = Expr::Block(syn::ExprBlock {
                attrs: Vec::new(),
                label: None,
                block: i.then_branch.clone(),
            });
            let mut arms = vec![((*l.pat).clone(), then)];
            let wild: Pat = syn::parse_quote!(_);
            let otherwise = else_or_empty(i);
            arms.push((wild, otherwise));
            (&*l.expr, arms)
        }
        Expr::Match(m) => {
            if !m.arms.iter().any(|a| matches!(a.pat, Pat::Slice(_)))
                || m.arms.iter().any(|a| a.guard.is_some())
            {
                return None;
            }
            (
                &*m.expr,
                m.arms
                    .iter()
                    .map(|a| (a.pat.clone(), (*a.body).clone()))
                    .collect(),
            )
        }
        _ => return None,
    };
    let span = scrut.span();
    // The slice: a variable or a field as written, another expression bound first.
    let base = |x: &Expr| -> Option<Expr> {
        match unparen(x) {
            p @ (Expr::Path(_) | Expr::Field(_)) => Some(p.clone()),
            Expr::Reference(r) if r.mutability.is_none() => match unparen(&r.expr) {
                p @ (Expr::Path(_) | Expr::Field(_)) => Some(p.clone()),
                Expr::Index(i) if matches!(&*i.index, Expr::Range(rg) if rg.start.is_none() && rg.end.is_none()) => {
                    match unparen(&i.expr) {
                        p @ (Expr::Path(_) | Expr::Field(_)) => Some(p.clone()),
                        _ => None,
                    }
                }
                _ => None,
            },
            _ => None,
        }
    };
    // An array written at the scrutinee is matched by value: its elements bind copies.
    let by_value = matches!(unparen(scrut), Expr::Array(_) | Expr::Repeat(_));
    let (x, bind): (Expr, Option<syn::Stmt>) = match base(scrut) {
        Some(x) => (x, None),
        None => (
            syn::parse_quote_spanned!(span=> __mochi_slice),
            Some(syn::parse_quote_spanned!(span=> let __mochi_slice = #scrut;)),
        ),
    };
    let mut tests: Vec<(Option<Expr>, Vec<syn::Stmt>, Expr)> = Vec::new();
    let n = arms.len();
    for (k, (pat, body)) in arms.into_iter().enumerate() {
        let (cond, lets) = match &pat {
            Pat::Slice(ps) => slice_arm(ps, &x, by_value)?,
            Pat::Wild(_) => (None, Vec::new()),
            _ => return None,
        };
        // The last arm is reached only when it matches.
        let cond = if k + 1 == n { None } else { cond };
        tests.push((cond, lets, body));
    }
    let mut chain: Option<Expr> = None;
    for (cond, lets, body) in tests.into_iter().rev() {
        // (A block's statements spliced after the bindings, not nested in them.)
        let block: Expr = match body {
            Expr::Block(b) if b.label.is_none() && b.attrs.is_empty() => {
                let stmts = &b.block.stmts;
                syn::parse_quote_spanned!(span=> { #(#lets)* #(#stmts)* })
            }
            body => syn::parse_quote_spanned!(span=> { #(#lets)* #body }),
        };
        chain = Some(match (cond, chain) {
            (None, None) => block,
            (Some(c), Some(rest @ (Expr::Block(_) | Expr::If(_)))) => {
                syn::parse_quote_spanned!(span=> if #c #block else #rest)
            }
            (Some(c), Some(rest)) => syn::parse_quote_spanned!(span=> if #c #block else { #rest }),
            (Some(c), None) => syn::parse_quote_spanned!(span=> if #c #block),
            // An arm that always matches before others: the others are unreachable.
            (None, Some(_)) => block,
        });
    }
    let chain = chain?;
    Some(match bind {
        Some(b) => syn::parse_quote_spanned!(span=> { #b #chain }),
        None => chain,
    })
}

/// One slice pattern over `x`: the length test and the bindings.
fn slice_arm(
    ps: &syn::PatSlice,
    x: &Expr,
    by_value: bool,
) -> Option<(Option<Expr>, Vec<syn::Stmt>)> {
    // `..` or `name @ ..`, once at most.
    let is_rest = |p: &Pat| match p {
        Pat::Rest(_) => true,
        Pat::Ident(i) => matches!(i.subpat.as_ref().map(|s| &*s.1), Some(Pat::Rest(_))),
        _ => false,
    };
    if ps.elems.iter().filter(|p| is_rest(p)).count() > 1 {
        return None;
    }
    let rest_at = ps.elems.iter().position(is_rest);
    let fixed = ps.elems.len() - usize::from(rest_at.is_some());
    let after = rest_at.map_or(0, |r| ps.elems.len() - r - 1);
    let mut lets = Vec::new();
    for (j, p) in ps.elems.iter().enumerate() {
        let place: Expr = match rest_at {
            Some(r) if j > r => {
                let back = ps.elems.len() - j;
                syn::parse_quote!(#x[#x.len() - #back])
            }
            _ => syn::parse_quote!(#x[#j]),
        };
        match p {
            Pat::Wild(_) | Pat::Rest(_) => {}
            Pat::Ident(i) if rest_at == Some(j) => {
                let name = &i.ident;
                let start = j;
                lets.push(syn::parse_quote!(let #name = &#x[#start..#x.len() - #after];));
            }
            Pat::Ident(i) if i.by_ref.is_none() && i.subpat.is_none() => {
                let name = &i.ident;
                if i.mutability.is_some() || by_value {
                    let mu = &i.mutability;
                    lets.push(syn::parse_quote!(let #mu #name = #place;));
                } else {
                    lets.push(syn::parse_quote!(let #name = &#place;));
                }
            }
            Pat::Reference(r) if r.mutability.is_none() => match &*r.pat {
                Pat::Ident(i) if i.subpat.is_none() && i.by_ref.is_none() => {
                    let (name, mu) = (&i.ident, &i.mutability);
                    lets.push(syn::parse_quote!(let #mu #name = #place;));
                }
                _ => return None,
            },
            _ => return None,
        }
    }
    // (A binding named as the slice, `[x, .., y]` over `x`, bound last: the others read
    // the slice. Until 2026-12-07 `y` was read from the element `x`, which did not
    // compile.)
    if let Expr::Path(p) = unparen(x) {
        if let Some(name) = p.path.get_ident() {
            let (mut others, named): (Vec<syn::Stmt>, Vec<syn::Stmt>) =
                lets.into_iter().partition(|st| {
                    !matches!(st, syn::Stmt::Local(l) if {
                        let mut names = Vec::new();
                        crate::activity::pat_names(&l.pat, &mut names);
                        names.iter().any(|n| name == n)
                    })
                });
            others.extend(named);
            lets = others;
        }
    }
    let cond: Expr = if rest_at.is_some() {
        syn::parse_quote!(#x.len() >= #fixed)
    } else {
        syn::parse_quote!(#x.len() == #fixed)
    };
    Some((Some(cond), lets))
}

/// `Some((a, b))`: the tuple pattern inside.
fn some_tuple(p: &Pat) -> Option<&Pat> {
    let Pat::TupleStruct(ts) = p else { return None };
    match (ts.path.is_ident("Some"), ts.elems.first(), ts.elems.len()) {
        (true, Some(t @ Pat::Tuple(_)), 1) => Some(t),
        _ => None,
    }
}

/// The function's last statement `return e;` → the tail `e` (`return;` → nothing), also
/// at the ends of an `if`/`else` or `match` every branch of which ends so: `if c {
/// return a; } else { return b; }` → `if c { a } else { b }`. (The lowering reads a
/// `return` as leaving early.)
fn tail_returns(b: &mut syn::Block) {
    let Some(last) = b.stmts.last_mut() else {
        return;
    };
    match last {
        syn::Stmt::Expr(Expr::Return(r), _) => match r.expr.take() {
            Some(e) => *last = syn::Stmt::Expr(*e, None),
            None => {
                b.stmts.pop();
            }
        },
        syn::Stmt::Expr(e, semi) if branches_return(e) => {
            returns_to_tails(e);
            *semi = None;
        }
        _ => {}
    }
}

/// The function's tail `*s` (`s: &mut f64`, `s: &f64`) → `{ let v = *s; v }`: a
/// binding reads through the reference and copies, as the tail does in Rust. Also at
/// the tails of the `if`/`else` branches, `match` arms and blocks that are the tail
/// (`match x { [a] => *a, .. }` of a slice pattern).
fn deref_tail(b: &mut syn::Block) {
    if let Some(syn::Stmt::Expr(e, None)) = b.stmts.last_mut() {
        deref_tail_expr(e);
    }
}

fn deref_tail_expr(e: &mut Expr) {
    match e {
        Expr::Unary(u)
            if matches!(u.op, syn::UnOp::Deref(_)) && matches!(&*u.expr, Expr::Path(_)) =>
        {
            let span = e.span();
            let v = format_ident!("__mochi_tail", span = span);
            let inner = e.clone();
            *e = syn::parse_quote_spanned!(span=> { let #v = #inner; #v });
        }
        Expr::If(i) => {
            deref_tail(&mut i.then_branch);
            if let Some((_, other)) = i.else_branch.as_mut() {
                deref_tail_expr(other);
            }
        }
        Expr::Match(m) => m.arms.iter_mut().for_each(|a| deref_tail_expr(&mut a.body)),
        Expr::Block(b) if b.label.is_none() => deref_tail(&mut b.block),
        Expr::Paren(p) => deref_tail_expr(&mut p.expr),
        _ => {}
    }
}

/// Every branch of an `if`/`else`, `match` or block ends in a `return`.
fn branches_return(e: &Expr) -> bool {
    let block_returns = |b: &syn::Block| match b.stmts.last() {
        Some(syn::Stmt::Expr(Expr::Return(_), _)) => true,
        Some(syn::Stmt::Expr(e, _)) => branches_return(e),
        _ => false,
    };
    match e {
        Expr::If(i) => {
            block_returns(&i.then_branch)
                && i.else_branch
                    .as_ref()
                    .is_some_and(|(_, e)| branches_return(e))
        }
        Expr::Match(m) => m.arms.iter().all(|a| branches_return(&a.body)),
        Expr::Block(b) if b.label.is_none() => block_returns(&b.block),
        Expr::Return(_) => true,
        _ => false,
    }
}

/// The `return`s that end the branches of `e` (see [`branches_return`]) as tails.
fn returns_to_tails(e: &mut Expr) {
    match e {
        Expr::If(i) => {
            tail_returns(&mut i.then_branch);
            if let Some((_, other)) = i.else_branch.as_mut() {
                returns_to_tails(other);
            }
        }
        Expr::Match(m) => {
            for arm in &mut m.arms {
                returns_to_tails(&mut arm.body);
                arm.comma = Some(Default::default());
            }
        }
        Expr::Block(b) => tail_returns(&mut b.block),
        Expr::Return(r) => {
            *e = match r.expr.take() {
                Some(v) => *v,
                None => syn::parse_quote!(()),
            }
        }
        _ => {}
    }
}

/// A labelled block `'r: { …; break 'r e; …; tail }` → `'r: loop { …; break 'r e; …;
/// break 'r tail; }`, which runs once and gives the same value. (An unlabelled `break`
/// or `continue` cannot stand inside a labelled block outside an inner loop, so none
/// changes its target.) A valued one then goes through [`LoopValues`].
struct LabelledBlocks;

impl VisitMut for LabelledBlocks {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        syn::visit_mut::visit_expr_mut(self, e);
        let Expr::Block(b) = e else { return };
        let Some(label) = b.label.clone() else { return };
        let name = &label.name;
        let mut stmts = std::mem::take(&mut b.block.stmts);
        match stmts.pop() {
            Some(syn::Stmt::Expr(tail, None)) => {
                stmts.push(syn::parse_quote!(break #name (#tail);));
            }
            Some(last) => {
                stmts.push(last);
                stmts.push(syn::parse_quote!(break #name;));
            }
            None => stmts.push(syn::parse_quote!(break #name;)),
        }
        let attrs = &b.attrs;
        *e = syn::parse_quote!(#(#attrs)* #label loop { #(#stmts)* });
    }
}

/// `let (i, m) = x.iter().enumerate().min_by(cmp).unwrap();` (also `max_by`,
/// `.copied()`/`.cloned()` before `enumerate`, `_` or `&m` for a part, `….unwrap().0`
/// for the index alone): the index is found by the chain as written, wrapped in
/// `no_grad` (an integer), and `m` is the element there, `&x[i]` (or `x[i]` when the
/// chain copies or the pattern is `&m`), whose derivative flows as a read.
struct ArgBest;

impl VisitMut for ArgBest {
    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        syn::visit_mut::visit_block_mut(self, b);
        rewrite_lets(b, ArgBest::rewrite);
    }
}

impl ArgBest {
    /// The `min_by(cmp)` (or `max_by`) call of `….min_by(cmp).unwrap()`.
    fn best_by(e: &Expr) -> Option<&syn::ExprMethodCall> {
        let Expr::MethodCall(u) = unparen(e) else {
            return None;
        };
        if u.method != "unwrap" || !u.args.is_empty() {
            return None;
        }
        let Expr::MethodCall(best) = &*u.receiver else {
            return None;
        };
        (matches!(best.method.to_string().as_str(), "min_by" | "max_by") && best.args.len() == 1)
            .then_some(best)
    }

    /// The sequence of
    /// `seq.iter()[.copied()|.cloned()].enumerate().{min_by,max_by}(cmp).unwrap()`,
    /// and whether the chain copies.
    fn chain(e: &Expr) -> Option<(Expr, bool)> {
        let best = Self::best_by(e)?;
        let Expr::MethodCall(en) = &*best.receiver else {
            return None;
        };
        if en.method != "enumerate" || !en.args.is_empty() {
            return None;
        }
        let mut inner = &*en.receiver;
        let mut copies = false;
        if let Expr::MethodCall(c) = inner {
            if (c.method == "copied" || c.method == "cloned") && c.args.is_empty() {
                copies = true;
                inner = &c.receiver;
            }
        }
        let Expr::MethodCall(it) = inner else {
            return None;
        };
        if it.method != "iter" || !it.args.is_empty() {
            return None;
        }
        let seq = (*it.receiver).clone();
        if !matches!(seq, Expr::Path(_) | Expr::Field(_)) {
            return None;
        }
        Some((seq, copies))
    }

    /// `let p = seq.chunks_exact(k).min_by(cmp).unwrap();` (also `chunks`, `windows`,
    /// `max_by`): the piece's position found by the chain as written, wrapped in
    /// `no_grad`, and `p` the sub-slice there, whose derivative flows as reads.
    fn best_piece(l: &syn::Local, init: &Expr) -> Option<Vec<syn::Stmt>> {
        let best = Self::best_by(init)?;
        let Expr::MethodCall(pieces) = &*best.receiver else {
            return None;
        };
        let kind = pieces.method.to_string();
        if !matches!(kind.as_str(), "chunks" | "chunks_exact" | "windows") || pieces.args.len() != 1
        {
            return None;
        }
        let seq = &*pieces.receiver;
        if !matches!(unparen(seq), Expr::Path(_) | Expr::Field(_)) {
            return None;
        }
        let Pat::Ident(p) = &l.pat else { return None };
        let Expr::Closure(cmp) = unparen(&best.args[0]) else {
            return None;
        };
        if cmp.inputs.len() != 2 {
            return None;
        }
        let span = init.span();
        let (k, at) = (
            format_ident!("__mochi_piece", span = span),
            format_ident!("__mochi_best", span = span),
        );
        let (size, method, name) = (&pieces.args[0], &pieces.method, &best.method);
        let (pa, pb, body) = (&cmp.inputs[0], &cmp.inputs[1], &cmp.body);
        let range: Expr = match kind.as_str() {
            "windows" => syn::parse_quote_spanned!(span=> #at..#at + #k),
            "chunks_exact" => syn::parse_quote_spanned!(span=> #at * #k..(#at + 1) * #k),
            _ => {
                syn::parse_quote_spanned!(span=> #at * #k..::core::cmp::min((#at + 1) * #k, #seq.len()))
            }
        };
        let attrs = &l.attrs;
        Some(vec![
            syn::parse_quote_spanned!(span=> let #k: usize = #size;),
            syn::parse_quote_spanned!(span=>
                let #at: usize = ::mochi::no_grad(
                    #seq.#method(#k)
                        .enumerate()
                        .#name(|__mochi_a, __mochi_b| {
                            let #pa = &__mochi_a.1;
                            let #pb = &__mochi_b.1;
                            #body
                        })
                        .unwrap()
                        .0
                );
            ),
            syn::parse_quote_spanned!(span=> #(#attrs)* let #p = &#seq[#range];),
        ])
    }

    fn rewrite(l: &syn::Local, init: &Expr) -> Option<Vec<syn::Stmt>> {
        let span = init.span();
        let best = format_ident!("__mochi_best", span = span);
        let (index_only, chain_expr) = match unparen(init) {
            Expr::Field(f) if matches!(&f.member, syn::Member::Unnamed(i) if i.index == 0) => {
                (true, (*f.base).clone())
            }
            other => (false, other.clone()),
        };
        let Some((seq, copies)) = Self::chain(&chain_expr) else {
            return Self::best_piece(l, init);
        };
        let attrs = &l.attrs;
        let find: syn::Stmt = syn::parse_quote_spanned!(span=>
            let #best: usize = ::mochi::no_grad((#chain_expr).0);
        );
        if index_only {
            let pat = &l.pat;
            return Some(vec![
                find,
                syn::parse_quote_spanned!(span=> #(#attrs)* let #pat = #best;),
            ]);
        }
        // Not a pair pattern: as written (the lowering reports it).
        let Pat::Tuple(t) = &l.pat else { return None };
        if t.elems.len() != 2 {
            return None;
        }
        let (pi, pm) = (&t.elems[0], &t.elems[1]);
        let elem = match (pm, copies) {
            (Pat::Reference(r), false) => {
                let inner = &r.pat;
                syn::parse_quote_spanned!(span=> let #inner = #seq[#best];)
            }
            (_, false) => syn::parse_quote_spanned!(span=> let #pm = &#seq[#best];),
            (_, true) => syn::parse_quote_spanned!(span=> let #pm = #seq[#best];),
        };
        Some(vec![
            find,
            syn::parse_quote_spanned!(span=> #(#attrs)* let #pi = #best;),
            elem,
        ])
    }
}

/// Replaces each `let P = e;` (no `else`) of `b` for which `f` gives statements by
/// those statements.
fn rewrite_lets(
    b: &mut syn::Block,
    mut f: impl FnMut(&syn::Local, &Expr) -> Option<Vec<syn::Stmt>>,
) {
    let mut out: Vec<syn::Stmt> = Vec::with_capacity(b.stmts.len());
    for st in std::mem::take(&mut b.stmts) {
        let replaced = match &st {
            syn::Stmt::Local(l) => l
                .init
                .as_ref()
                .filter(|i| i.diverge.is_none())
                .and_then(|i| f(l, &i.expr)),
            _ => None,
        };
        match replaced {
            Some(stmts) => out.extend(stmts),
            None => out.push(st),
        }
    }
    b.stmts = out;
}

/// `a.windows(m).zip(b.windows(n)).map(|(x, y)| body).sum()` (also `chunks`,
/// `chunks_exact`) → `{ let mut acc = 0.0; for (x, y) in a.windows(m).zip(b.windows(n))
/// { acc += body; } acc }`.
fn zipped_pieces_sum(m: &syn::ExprMethodCall, float_ty: Option<&syn::Ident>) -> Option<Expr> {
    if m.method != "sum" || !m.args.is_empty() {
        return None;
    }
    let ty = float_ty?;
    let Expr::MethodCall(map) = &*m.receiver else {
        return None;
    };
    if map.method != "map" || map.args.len() != 1 {
        return None;
    }
    let Expr::Closure(c) = &map.args[0] else {
        return None;
    };
    if c.inputs.len() != 1 || crate::iterchain::contains_return(&c.body) {
        return None;
    }
    let Expr::MethodCall(z) = &*map.receiver else {
        return None;
    };
    let pieces = |e: &Expr| matches!(e, Expr::MethodCall(p) if matches!(p.method.to_string().as_str(), "windows" | "chunks" | "chunks_exact") && p.args.len() == 1);
    if z.method != "zip" || z.args.len() != 1 || !pieces(&z.receiver) || !pieces(&z.args[0]) {
        return None;
    }
    let pat = match &c.inputs[0] {
        Pat::Type(t) => (*t.pat).clone(),
        other => other.clone(),
    };
    if !matches!(&pat, Pat::Tuple(t) if t.elems.len() == 2 && t.elems.iter().all(|p| matches!(p, Pat::Ident(_))))
    {
        return None;
    }
    let span = m.method.span();
    let zero = typed(&syn::parse_quote!(0.0), ty)?;
    let acc = format_ident!("__mochi_pieces_sum", span = span);
    let body = &c.body;
    let mut out: Expr = syn::parse_quote_spanned!(span=> {
        let mut #acc = #zero;
        for #pat in #z {
            #acc += #body;
        }
        #acc
    });
    // (`|(w, x)|` over `x.windows(2).zip(x.windows(5))`: the piece named as the
    // sequence renamed, as in a loop the user writes.)
    crate::iterchain::UnshadowedLoops.visit_expr_mut(&mut out);
    Some(out)
}

/// A branch whose last statement leaves by `return`, `break` or `continue`.
fn leaves(e: &Expr) -> bool {
    let last = match e {
        Expr::Block(b) if b.label.is_none() => match b.block.stmts.last() {
            Some(syn::Stmt::Expr(e, _)) => e,
            _ => return false,
        },
        other => other,
    };
    matches!(last, Expr::Return(_) | Expr::Break(_) | Expr::Continue(_))
}

/// A `let` whose value is an `if` or a `match` with branches that leave:
/// `let y = if c { a } else { return 0.0; };` → `if c {} else { return 0.0; } let y = a;`
/// and `let y = match k { 0 => return x, _ => e };` → `match k { 0 => return x, _ => {} }
/// let y = match k { 0 => unreachable!(), _ => e };`. The lowering carries the exits
/// of statements; a value has to come from every branch.
///
/// Any other value that leaves inside one of its branches (`match k { 0 => { if c {
/// continue; } a }, _ => b }`, a block `{ if c { return 0.0; } a }`, nested `if`s) is
/// computed into an `Option` assigned at every tail that gives a value: `let mut v =
/// None; match k { 0 => { if c { continue; } v = Some(a); } _ => { v = Some(b); } } let
/// y = v.unwrap();` (as [`LoopValues`] does for a loop's value).
struct LeavingBranches {
    next: usize,
}

impl VisitMut for LeavingBranches {
    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        syn::visit_mut::visit_block_mut(self, b);
        // `let y;` assigned later (`match k { 0 => { y = a; } _ => { if c { continue; }
        // y = b; } }`): the lowering carries exits as flags, after which Rust no longer
        // sees `y` assigned on every path, so it starts from a default that is never
        // read (Rust checked the function as written). Only where a statement after it
        // leaves (a type without `Default` keeps its `let y;` otherwise).
        for k in 0..b.stmts.len() {
            let leaves_after = b.stmts[k + 1..].iter().any(any_exit);
            if let syn::Stmt::Local(l) = &mut b.stmts[k] {
                if l.init.is_none() && leaves_after {
                    let (name, ty) = match &l.pat {
                        Pat::Ident(p) if p.subpat.is_none() && p.by_ref.is_none() => {
                            (&p.ident, None)
                        }
                        Pat::Type(t) => match &*t.pat {
                            Pat::Ident(p) if p.subpat.is_none() && p.by_ref.is_none() => {
                                (&p.ident, Some(&t.ty))
                            }
                            _ => continue,
                        },
                        _ => continue,
                    };
                    let ty = ty.map(|t| quote::quote!(: #t));
                    b.stmts[k] = syn::parse_quote!(
                        #[allow(unused_mut)]
                        let mut #name #ty = ::core::default::Default::default();
                    );
                }
            }
        }
        rewrite_lets(b, |l, init| {
            LeavingBranches::rewrite(l, init).or_else(|| self.through_option(l, init))
        });
    }
}

impl LeavingBranches {
    /// The general form (see the type's documentation), for an `if`, `match` or block
    /// value with a `return`, `break` or `continue` among its statements.
    fn through_option(&mut self, l: &syn::Local, init: &Expr) -> Option<Vec<syn::Stmt>> {
        let e = unparen(init);
        if !matches!(e, Expr::If(_) | Expr::Match(_) | Expr::Block(_)) || !leaves_inside(e) {
            return None;
        }
        if matches!(e, Expr::Block(b) if b.label.is_some()) {
            return None;
        }
        self.next += 1;
        let var = format_ident!("__mochi_leave_value{}", self.next);
        let stmt = assign_tails(e, &var)?;
        let (attrs, pat) = (&l.attrs, &l.pat);
        Some(vec![
            syn::parse_quote!(let mut #var = None;),
            syn::Stmt::Expr(stmt, None),
            syn::parse_quote!(#(#attrs)* let #pat = #var.unwrap();),
        ])
    }

    fn rewrite(l: &syn::Local, init: &Expr) -> Option<Vec<syn::Stmt>> {
        let (attrs, pat) = (&l.attrs, &l.pat);
        match unparen(init) {
            Expr::If(i) if !matches!(&*i.cond, Expr::Let(_)) => {
                let (_, els) = i.else_branch.as_ref()?;
                if matches!(&**els, Expr::If(_)) {
                    return None;
                }
                let then = Expr::Block(syn::ExprBlock {
                    attrs: Vec::new(),
                    label: None,
                    block: i.then_branch.clone(),
                });
                let cond = &i.cond;
                match (leaves(&then), leaves(els)) {
                    (false, true) => Some(vec![
                        syn::parse_quote!(if #cond {} else #els),
                        syn::parse_quote!(#(#attrs)* let #pat = #then;),
                    ]),
                    (true, false) => Some(vec![
                        syn::parse_quote!(if #cond #then),
                        syn::parse_quote!(#(#attrs)* let #pat = #els;),
                    ]),
                    _ => None,
                }
            }
            Expr::Match(m)
                if m.arms.iter().any(|a| leaves(&a.body))
                    && !m.arms.iter().all(|a| leaves(&a.body)) =>
            {
                let mut exits = m.clone();
                let mut values = m.clone();
                for (e, v) in exits.arms.iter_mut().zip(values.arms.iter_mut()) {
                    if leaves(&e.body) {
                        *v.body = syn::parse_quote!(::core::unreachable!());
                    } else {
                        *e.body = syn::parse_quote!({});
                    }
                    e.comma = Some(Default::default());
                    v.comma = Some(Default::default());
                }
                Some(vec![
                    syn::Stmt::Expr(Expr::Match(exits), None),
                    syn::parse_quote!(#(#attrs)* let #pat = #values;),
                ])
            }
            _ => None,
        }
    }
}

/// A `return`, `break` or `continue` anywhere in the statement (not in closures).
fn any_exit(st: &syn::Stmt) -> bool {
    let mut x = Exits {
        outward: false,
        depth: 0,
        found: false,
    };
    syn::visit::Visit::visit_stmt(&mut x, st);
    x.found
}

/// Whether `e` has a `return`, or a `break`/`continue` of a loop around it, outside its
/// own loops and closures.
fn leaves_inside(e: &Expr) -> bool {
    let mut x = Exits {
        outward: true,
        depth: 0,
        found: false,
    };
    syn::visit::Visit::visit_expr(&mut x, e);
    x.found
}

/// The exits of code, outside closures: all of them, or (`outward`) those that leave
/// the code (a `break`/`continue` of an inner loop does not, unless labelled).
struct Exits {
    outward: bool,
    depth: usize,
    found: bool,
}

impl<'ast> syn::visit::Visit<'ast> for Exits {
    fn visit_expr(&mut self, e: &'ast Expr) {
        let inside = self.outward && self.depth > 0;
        match e {
            Expr::Closure(_) => {}
            Expr::Return(_) => self.found = true,
            Expr::Break(b) if !inside || b.label.is_some() => self.found = true,
            Expr::Continue(c) if !inside || c.label.is_some() => self.found = true,
            Expr::ForLoop(_) | Expr::While(_) | Expr::Loop(_) => {
                self.depth += 1;
                syn::visit::visit_expr(self, e);
                self.depth -= 1;
            }
            _ => syn::visit::visit_expr(self, e),
        }
    }
}

/// `e` as a statement that assigns `var = Some(tail)` at each tail that gives a value
/// (through `if`/`else`, `match` arms, blocks and parentheses); tails that leave stay.
/// `None` for an `if` without `else` (no value) or a labelled block.
fn assign_tails(e: &Expr, var: &syn::Ident) -> Option<Expr> {
    Some(match e {
        Expr::Paren(p) => assign_tails(&p.expr, var)?,
        Expr::Return(_) | Expr::Break(_) | Expr::Continue(_) => e.clone(),
        Expr::Block(b) if b.label.is_none() => {
            let mut b = b.clone();
            assign_block_tail(&mut b.block, var)?;
            Expr::Block(b)
        }
        Expr::If(i) => {
            let mut i = i.clone();
            let (_, other) = i.else_branch.as_mut()?;
            **other = assign_tails(other, var)?;
            assign_block_tail(&mut i.then_branch, var)?;
            Expr::If(i)
        }
        Expr::Match(m) => {
            let mut m = m.clone();
            for arm in &mut m.arms {
                *arm.body = assign_tails(&arm.body, var)?;
                arm.comma = Some(Default::default());
            }
            Expr::Match(m)
        }
        Expr::Block(_) => return None,
        other => syn::parse_quote!({ #var = Some(#other); }),
    })
}

/// The tail of a block as [`assign_tails`] makes it; a block that ends in a statement
/// leaves (or has no value) and stays.
fn assign_block_tail(b: &mut syn::Block, var: &syn::Ident) -> Option<()> {
    if let Some(syn::Stmt::Expr(t, None)) = b.stmts.last_mut() {
        *t = assign_tails(t, var)?;
    }
    Some(())
}

/// `Option` accumulators filled in place: `*o.get_or_insert(c) += e;` → `o =
/// Some(o.unwrap_or(c) + e);` (any compound assignment, and `=`; `get_or_insert_with(f)`
/// as `unwrap_or_else(f)`), and a reference held in a `let`, `let p =
/// o.get_or_insert(c);`, read and written as `*p` alone in the rest of its block: `if
/// o.is_none() { o = Some(c); }`, then `*p op= e` → `o = Some(o.unwrap() op e)`, `*p =
/// e` → `o = Some(e)`, a read `*p` → `o.unwrap()`. (The borrow keeps `o` from being used
/// otherwise while `p` lives, so the two are the same.) The lowering follows an `Option`
/// assigned whole; a reference into one it does not.
struct OptionAccumulators;

impl OptionAccumulators {
    /// `(o, default, lazily)` of `o.get_or_insert(c)` (`lazily` for
    /// `get_or_insert_with(f)`), `o` a place.
    fn filled(e: &Expr) -> Option<(&Expr, &Expr, bool)> {
        let Expr::MethodCall(m) = unparen(e) else {
            return None;
        };
        let lazily = match m.method.to_string().as_str() {
            "get_or_insert" => false,
            "get_or_insert_with" => true,
            _ => return None,
        };
        if m.args.len() != 1 || !matches!(unparen(&m.receiver), Expr::Path(_) | Expr::Field(_)) {
            return None;
        }
        Some((&m.receiver, &m.args[0], lazily))
    }

    /// `*o.get_or_insert(c) op= e` (or `= e`) as an assignment of `o`.
    fn assigned(e: &Expr) -> Option<Expr> {
        let (left, op, right) = match e {
            Expr::Assign(a) => (&*a.left, None, &*a.right),
            Expr::Binary(b) => (&*b.left, Some(crate::rewrite::plain_op(&b.op)?), &*b.right),
            _ => return None,
        };
        let Expr::Unary(u) = unparen(left) else {
            return None;
        };
        if !matches!(u.op, syn::UnOp::Deref(_)) {
            return None;
        }
        let (o, c, lazily) = Self::filled(&u.expr)?;
        let current: Expr = if lazily {
            syn::parse_quote!(#o.unwrap_or_else(#c))
        } else {
            syn::parse_quote!(#o.unwrap_or(#c))
        };
        Some(Self::refilled(o, current, op, right))
    }

    /// `o = Some(current op (right))`, or `o = Some(right)` without an operation.
    fn refilled(o: &Expr, current: Expr, op: Option<syn::BinOp>, right: &Expr) -> Expr {
        let value: Expr = match op {
            None => right.clone(),
            Some(op) => syn::parse_quote!(#current #op (#right)),
        };
        syn::parse_quote!(#o = Some(#value))
    }

    /// The statements after `let p = o.get_or_insert(c);` with `*p` written as `o`'s
    /// value, when they use `p` as `*p` alone.
    fn held(rest: &mut [syn::Stmt], p: &syn::Ident, o: &Expr) -> bool {
        struct Uses<'a>(&'a syn::Ident, usize, usize);
        impl<'ast> syn::visit::Visit<'ast> for Uses<'_> {
            fn visit_expr(&mut self, e: &'ast Expr) {
                if let Expr::Unary(u) = e {
                    if matches!(u.op, syn::UnOp::Deref(_))
                        && matches!(unparen(&u.expr), Expr::Path(q) if q.path.is_ident(self.0))
                    {
                        self.2 += 1;
                    }
                }
                syn::visit::visit_expr(self, e);
            }
            fn visit_ident(&mut self, i: &'ast syn::Ident) {
                if i == self.0 {
                    self.1 += 1;
                }
            }
        }
        let mut uses = Uses(p, 0, 0);
        for s in rest.iter() {
            syn::visit::Visit::visit_stmt(&mut uses, s);
        }
        if uses.1 != uses.2 {
            return false;
        }
        struct Written<'a>(&'a syn::Ident, &'a Expr);
        impl Written<'_> {
            fn is_p(&self, e: &Expr) -> bool {
                matches!(unparen(e), Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_))
                    && matches!(unparen(&u.expr), Expr::Path(q) if q.path.is_ident(self.0)))
            }
        }
        impl VisitMut for Written<'_> {
            fn visit_expr_mut(&mut self, e: &mut Expr) {
                let o = self.1;
                let assigned = match e {
                    Expr::Assign(a) if self.is_p(&a.left) => Some((None, &mut *a.right)),
                    Expr::Binary(b) if self.is_p(&b.left) => {
                        crate::rewrite::plain_op(&b.op).map(|op| (Some(op), &mut *b.right))
                    }
                    _ => None,
                };
                if let Some((op, right)) = assigned {
                    self.visit_expr_mut(right);
                    let right = right.clone();
                    *e =
                        OptionAccumulators::refilled(o, syn::parse_quote!(#o.unwrap()), op, &right);
                    return;
                }
                if self.is_p(e) {
                    *e = syn::parse_quote!(#o.unwrap());
                    return;
                }
                syn::visit_mut::visit_expr_mut(self, e);
            }
        }
        let mut w = Written(p, o);
        for s in rest.iter_mut() {
            w.visit_stmt_mut(s);
        }
        true
    }
}

impl VisitMut for OptionAccumulators {
    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        let mut k = 0;
        while k < b.stmts.len() {
            let held = match &b.stmts[k] {
                syn::Stmt::Local(l) if l.init.as_ref().is_some_and(|i| i.diverge.is_none()) => {
                    let init = &l.init.as_ref().unwrap().expr;
                    match (&l.pat, Self::filled(init)) {
                        (Pat::Ident(p), Some((o, c, lazily))) if p.by_ref.is_none() => {
                            Some((p.ident.clone(), o.clone(), c.clone(), lazily))
                        }
                        _ => None,
                    }
                }
                _ => None,
            };
            if let Some((p, o, c, lazily)) = held {
                if Self::held(&mut b.stmts[k + 1..], &p, &o) {
                    let value: Expr = match &c {
                        // `|| 0.5`: its body.
                        Expr::Closure(f) if lazily && f.inputs.is_empty() => {
                            let body = &f.body;
                            syn::parse_quote!(#body)
                        }
                        _ if lazily => syn::parse_quote!((#c)()),
                        _ => c,
                    };
                    b.stmts[k] = syn::parse_quote! {
                        if #o.is_none() { #o = Some(#value); }
                    };
                }
            }
            k += 1;
        }
        syn::visit_mut::visit_block_mut(self, b);
    }

    fn visit_expr_mut(&mut self, e: &mut Expr) {
        syn::visit_mut::visit_expr_mut(self, e);
        if let Some(a) = Self::assigned(e) {
            *e = a;
        }
    }
}

/// `dbg!(e)` → `{ let v = e; eprintln!("[file:line:column] e = {v:#?}"); v }`, what the
/// macro prints and returns, with the value read by the print alone (a macro's body is
/// not differentiated).
struct DbgPrinted;

impl VisitMut for DbgPrinted {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        syn::visit_mut::visit_expr_mut(self, e);
        let Expr::Macro(m) = e else { return };
        if !m.mac.path.is_ident("dbg") {
            return;
        }
        let Ok(inner) = m.mac.parse_body::<Expr>() else {
            return;
        };
        let span = m.mac.path.span();
        let v = format_ident!("__mochi_dbg", span = span);
        let text = quote::quote!(#inner).to_string();
        *e = syn::parse_quote_spanned!(span=> {
            let #v = #inner;
            ::std::eprintln!(
                "[{}:{}:{}] {} = {:#?}",
                ::core::file!(),
                ::core::line!(),
                ::core::column!(),
                #text,
                &#v
            );
            #v
        });
    }
}

/// A differentiable buffer shortened in place, as the new `Vec` of what it keeps,
/// assigned to it: `v.retain(p);` → `v = v.iter().copied().filter(p).collect::<Vec<_>>();`
/// (`retain` and `filter` both give the closure `&element`), `v.truncate(n);` → `v =
/// v[..min(n, v.len())].to_vec();`, for a buffer bound `let mut` in the body. The
/// lowering follows a buffer assigned whole; the length changing in place it refuses.
struct ShortenedBuffers<'a> {
    active: &'a HashSet<String>,
    /// The names bound `mut` in the body (`let mut v = ..`): a `Vec` there is assigned a
    /// `Vec`.
    locals: HashSet<String>,
    /// `&mut Vec` parameters (`out: &mut Vec<f64>`): the place they point to is assigned
    /// the `Vec` (`*out = kept;`, see [`LentPlaces`]).
    lent: &'a HashSet<String>,
}

/// The assignments of a rewritten buffer to a `&mut Vec` parameter made assignments to
/// the place it points to (`out = kept;` → `*out = kept;`).
struct LentPlaces<'a>(&'a HashSet<String>);

impl VisitMut for LentPlaces<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        syn::visit_mut::visit_expr_mut(self, e);
        if let Expr::Assign(a) = e {
            if let Expr::Path(p) = &*a.left {
                if p.path
                    .get_ident()
                    .is_some_and(|i| self.0.contains(&i.to_string()))
                {
                    let left = &a.left;
                    *a.left = syn::parse_quote!(*#left);
                }
            }
        }
    }
}

impl VisitMut for ShortenedBuffers<'_> {
    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        syn::visit_mut::visit_block_mut(self, b);
        let mut hoisted = Vec::with_capacity(b.stmts.len());
        for mut st in std::mem::take(&mut b.stmts) {
            hoisted.extend(self.drains_in_expressions(&mut st));
            hoisted.push(st);
        }
        let mut out = Vec::with_capacity(hoisted.len());
        for st in hoisted {
            match self.shortened(&st) {
                Some(mut new) => {
                    for s in &mut new {
                        LentPlaces(self.lent).visit_stmt_mut(s);
                    }
                    out.extend(new)
                }
                None => out.push(st),
            }
        }
        b.stmts = out;
    }

    /// `if let Some(x) = v.pop() { A } else { B }` → `if !v.is_empty() { let x =
    /// v[v.len() - 1].clone(); v = v[..v.len() - 1].to_vec(); A } else { B }`.
    fn visit_expr_if_mut(&mut self, i: &mut syn::ExprIf) {
        syn::visit_mut::visit_expr_if_mut(self, i);
        let Expr::Let(l) = &*i.cond else { return };
        let Pat::TupleStruct(ts) = &*l.pat else {
            return;
        };
        if !ts.path.is_ident("Some") || ts.elems.len() != 1 {
            return;
        }
        let Expr::MethodCall(m) = unparen(&l.expr) else {
            return;
        };
        if m.method != "pop" || !m.args.is_empty() {
            return;
        }
        let Some(v) = self.buffer(m) else { return };
        let v = v.clone();
        let span = m.method.span();
        let at = format_ident!("__mochi_at", span = span);
        let pat = &ts.elems[0];
        let mut head: Vec<syn::Stmt> = vec![
            syn::parse_quote_spanned!(span=> let #at: usize = #v.len() - 1;),
            syn::parse_quote_spanned!(span=> let #pat = #v[#at].clone();),
        ];
        head.extend(Self::edited(&v, &at, None, span));
        for s in &mut head {
            LentPlaces(self.lent).visit_stmt_mut(s);
        }
        i.then_branch.stmts.splice(0..0, head);
        *i.cond = syn::parse_quote_spanned!(span=> !#v.is_empty());
    }
}

impl ShortenedBuffers<'_> {
    /// The buffer `v` of `v.method(..)`, when it is a local `Vec` carrying derivatives.
    fn buffer<'m>(&self, m: &'m syn::ExprMethodCall) -> Option<&'m Expr> {
        let Expr::Path(p) = unparen(&m.receiver) else {
            return None;
        };
        (p.path.get_ident().is_some_and(|i| {
            let i = i.to_string();
            self.locals.contains(&i) || self.lent.contains(&i)
        }) && crate::activity::expr_is_active(&m.receiver, self.active))
        .then_some(&*m.receiver)
    }

    /// `let x = v.pop().unwrap();` (or `.expect(..)`) → `let x = v[v.len() - 1].clone();
    /// v = v[..v.len() - 1].to_vec();`, `let r = v.remove(i);` → `let r = v[i].clone();`
    /// and `v` without it (see [`Self::edited`]), `let t = v.split_off(k);` → the tail
    /// copied, the head kept.
    fn taken(&self, st: &syn::Stmt) -> Option<Vec<syn::Stmt>> {
        let syn::Stmt::Local(l) = st else { return None };
        let init = l.init.as_ref().filter(|i| i.diverge.is_none())?;
        let (m, popped) = match unparen(&init.expr) {
            Expr::MethodCall(u) if matches!(u.method.to_string().as_str(), "unwrap" | "expect") => {
                match unparen(&u.receiver) {
                    Expr::MethodCall(m) if m.method == "pop" && m.args.is_empty() => (m, true),
                    _ => return None,
                }
            }
            Expr::MethodCall(m) if m.method == "remove" && m.args.len() == 1 => (m, false),
            // `let r = v.swap_remove(i);` → `let r = v[i].clone();`, the last element
            // moved into its place (see [`Self::swapped_out`]).
            Expr::MethodCall(m) if m.method == "swap_remove" && m.args.len() == 1 => {
                let v = self.buffer(m)?;
                return Some(Self::swapped_out(
                    v,
                    Some(&l.pat),
                    &m.args[0],
                    m.method.span(),
                ));
            }
            // `let t = v.split_off(k);` → `let t = v[k..].to_vec(); v = v[..k].to_vec();`
            Expr::MethodCall(m) if m.method == "split_off" && m.args.len() == 1 => {
                let v = self.buffer(m)?;
                let span = m.method.span();
                let k = &m.args[0];
                return Some(Self::cut(
                    v,
                    &l.pat,
                    quote_spanned!(span=> #k),
                    quote_spanned!(span=> #v.len()),
                    span,
                ));
            }
            // `let t: Vec<f64> = v.drain(a..b).collect();`: the same for `v[a..b]`.
            Expr::MethodCall(c) if c.method == "collect" && c.args.is_empty() => {
                if let Expr::MethodCall(m) = unparen(&c.receiver) {
                    if let Some(v) = self.buffer(m) {
                        if let Some((a, b)) = drained_range(m, v) {
                            return Some(Self::cut(v, &l.pat, a, b, m.method.span()));
                        }
                    }
                }
                return self.drained_chain(l);
            }
            _ => return self.drained_chain(l),
        };
        let v = self.buffer(m)?;
        let span = m.method.span();
        let at = format_ident!("__mochi_at", span = span);
        let pat = &l.pat;
        let index: Expr = if popped {
            syn::parse_quote_spanned!(span=> #v.len() - 1)
        } else {
            let i = &m.args[0];
            syn::parse_quote_spanned!(span=> #i)
        };
        let mut out: Vec<syn::Stmt> = vec![
            syn::parse_quote_spanned!(span=> let #at: usize = #index;),
            syn::parse_quote_spanned!(span=> let #pat = #v[#at].clone();),
        ];
        out.extend(Self::edited(v, &at, None, span));
        Some(out)
    }

    /// `total += v.drain(..k).sum::<f64>();`, `let r = a + v.drain(1..3).map(f)
    /// .product::<f64>() / n;`: a chain over a drained range inside a larger expression,
    /// reached by the statement whatever its branches do (not under `&&`, `||`, an `if`,
    /// a `match`, a loop or a closure) and typed by its turbofish (`sum::<f64>()`,
    /// `collect::<Vec<f64>>()`), bound first, `let __mochi_drained1: f64 = v.drain(..k)
    /// .sum::<f64>();`, which [`Self::drained_chain`] then writes. Only where nothing
    /// else in the statement names the buffer, so that no read of it moves across the
    /// cut. The `let`s, in the order the statement evaluates them.
    fn drains_in_expressions(&self, st: &mut syn::Stmt) -> Vec<syn::Stmt> {
        let mut out = Vec::new();
        // (A `let` of the chain itself is `drained_chain`'s; a block's value, `if c {
        // v.drain(..2).sum::<f64>() } else { .. }`, is bound in its block.)
        let (top, at_top): (&mut Expr, bool) = match st {
            syn::Stmt::Local(l) => match l.init.as_mut() {
                Some(init) if init.diverge.is_none() => (&mut init.expr, true),
                _ => return out,
            },
            syn::Stmt::Expr(e, _) => (e, false),
            _ => return out,
        };
        let whole = top.clone();
        self.hoist_drains(top, at_top, &whole, &mut out);
        out
    }

    fn hoist_drains(&self, e: &mut Expr, at_top: bool, whole: &Expr, out: &mut Vec<syn::Stmt>) {
        // A consumer with its type written, over a chain on a drained buffer.
        if let Expr::MethodCall(m) = &*e {
            let typed = m
                .turbofish
                .as_ref()
                .filter(|t| t.args.len() == 1)
                .and_then(|t| match (m.method.to_string().as_str(), t.args.first()) {
                    ("sum" | "product" | "collect", Some(syn::GenericArgument::Type(ty))) => {
                        Some(ty.clone())
                    }
                    _ => None,
                });
            if let (Some(ty), false) = (typed, at_top) {
                let mut cur = &m.receiver;
                let buffer = loop {
                    match unparen(cur) {
                        Expr::MethodCall(d) => {
                            if let Some(v) = self.buffer(d).filter(|_| d.method == "drain") {
                                break Some(v.clone());
                            }
                            cur = &d.receiver;
                        }
                        _ => break None,
                    }
                };
                if let Some(v) = buffer {
                    let name = quote::quote!(#v).to_string();
                    // The buffer named once in the statement: by this chain.
                    let count = mention_count(whole, &name);
                    if count == 1 && drain_call(m).and_then(|d| drained_range(d, &v)).is_some() {
                        let n = format_ident!(
                            "__mochi_drained{}",
                            out.len() + 1,
                            span = m.method.span()
                        );
                        let chain = e.clone();
                        out.push(syn::parse_quote!(let #n: #ty = #chain;));
                        *e = syn::parse_quote!(#n);
                    }
                    return;
                }
            }
        }
        match e {
            Expr::Binary(b) if !matches!(b.op, syn::BinOp::And(_) | syn::BinOp::Or(_)) => {
                self.hoist_drains(&mut b.left, false, whole, out);
                self.hoist_drains(&mut b.right, false, whole, out);
            }
            Expr::Unary(u) => self.hoist_drains(&mut u.expr, false, whole, out),
            Expr::Paren(p) => self.hoist_drains(&mut p.expr, false, whole, out),
            Expr::Cast(c) => self.hoist_drains(&mut c.expr, false, whole, out),
            Expr::Reference(r) => self.hoist_drains(&mut r.expr, false, whole, out),
            Expr::Field(f) => self.hoist_drains(&mut f.base, false, whole, out),
            Expr::Assign(a) => self.hoist_drains(&mut a.right, false, whole, out),
            Expr::Return(r) => {
                if let Some(v) = r.expr.as_mut() {
                    self.hoist_drains(v, false, whole, out);
                }
            }
            Expr::MethodCall(m) => {
                self.hoist_drains(&mut m.receiver, false, whole, out);
                for a in m.args.iter_mut() {
                    self.hoist_drains(a, false, whole, out);
                }
            }
            Expr::Call(c) => {
                for a in c.args.iter_mut() {
                    self.hoist_drains(a, false, whole, out);
                }
            }
            Expr::Tuple(t) => {
                for a in t.elems.iter_mut() {
                    self.hoist_drains(a, false, whole, out);
                }
            }
            Expr::Array(t) => {
                for a in t.elems.iter_mut() {
                    self.hoist_drains(a, false, whole, out);
                }
            }
            _ => {}
        }
    }

    /// `let s: f64 = v.drain(a..b).sum();`, `let t: Vec<f64> = v.drain(a..b).rev()
    /// .collect();`: a chain over the drained elements. The chain walks the range first
    /// (`v[a..b].iter().copied()…`, a chain over a sub-slice of the buffer, which the
    /// derivation writes as a loop), then `v` is cut as [`Self::cut`] cuts it.
    fn drained_chain(&self, l: &syn::Local) -> Option<Vec<syn::Stmt>> {
        let init = l.init.as_ref().filter(|i| i.diverge.is_none())?;
        let mut chain = (*init.expr).clone();
        // The `drain` at the bottom of the chain, replaced by the range's elements.
        let mut cur = &mut chain;
        let (v, a, b, span) = loop {
            let Expr::MethodCall(m) = cur else {
                return None;
            };
            if let Expr::MethodCall(d) = unparen(&m.receiver) {
                if let Some(v) = self.buffer(d) {
                    let (a, b) = drained_range(d, v)?;
                    let (v, span) = (v.clone(), d.method.span());
                    let (at, end) = (
                        format_ident!("__mochi_at", span = span),
                        format_ident!("__mochi_end", span = span),
                    );
                    *m.receiver = syn::parse_quote_spanned!(span=> #v[#at..#end].iter().copied());
                    break (v, a, b, span);
                }
            }
            cur = &mut *m.receiver;
        };
        let mut out = Self::cut(&v, &syn::parse_quote!(_), a, b, span);
        let mut walked = l.clone();
        *walked.init.as_mut()?.expr = chain;
        // (In place of the cut's copy of the range: after the bounds, before the cut.)
        out[2] = syn::Stmt::Local(walked);
        Some(out)
    }

    /// `let pat = v[i].clone();` (with a pattern), then `v` with its last element moved
    /// to `i` and one shorter: `let mut kept = v[..last].to_vec(); if i < last { kept[i]
    /// = v[last].clone(); } v = kept;`, which panics where `swap_remove` does (`i` out of
    /// bounds).
    fn swapped_out(v: &Expr, pat: Option<&Pat>, i: &Expr, span: Span) -> Vec<syn::Stmt> {
        let (at, last, kept) = (
            format_ident!("__mochi_at", span = span),
            format_ident!("__mochi_last", span = span),
            format_ident!("__mochi_kept", span = span),
        );
        let mut out: Vec<syn::Stmt> = vec![syn::parse_quote_spanned!(span=> let #at: usize = #i;)];
        out.push(match pat {
            Some(pat) => syn::parse_quote_spanned!(span=> let #pat = #v[#at].clone();),
            None => syn::parse_quote_spanned!(span=> assert!(#at < #v.len(), "swap_remove index (is {}) should be < len (is {})", #at, #v.len());),
        });
        out.extend([
            syn::parse_quote_spanned!(span=> let #last: usize = #v.len() - 1;),
            syn::parse_quote_spanned!(span=> let mut #kept: ::std::vec::Vec<_> = #v[..#last].to_vec();),
            syn::parse_quote_spanned!(span=> if #at < #last { #kept[#at] = #v[#last].clone(); }),
            syn::parse_quote_spanned!(span=> #v = #kept;),
        ]);
        out
    }

    /// `let pat = v[a..b].to_vec();`, then `v` without them.
    fn cut(v: &Expr, pat: &Pat, a: TokenStream, b: TokenStream, span: Span) -> Vec<syn::Stmt> {
        let (ia, ib, kept) = (
            format_ident!("__mochi_at", span = span),
            format_ident!("__mochi_end", span = span),
            format_ident!("__mochi_kept", span = span),
        );
        vec![
            syn::parse_quote_spanned!(span=> let #ia: usize = #a;),
            syn::parse_quote_spanned!(span=> let #ib: usize = #b;),
            syn::parse_quote_spanned!(span=> let #pat = #v[#ia..#ib].to_vec();),
            syn::parse_quote_spanned!(span=> let mut #kept: ::std::vec::Vec<_> = #v[..#ia].to_vec();),
            syn::parse_quote_spanned!(span=> #kept.extend_from_slice(&#v[#ib..]);),
            syn::parse_quote_spanned!(span=> #v = #kept;),
        ]
    }

    /// `v` rebuilt without its element `at` (with `insert` the element `e` put there):
    /// `let mut kept = v[..at].to_vec(); kept.push(e); kept.extend_from_slice(&v[at + 1..]);
    /// v = kept;`, pushes and a slice the lowering follows.
    fn edited(v: &Expr, at: &syn::Ident, insert: Option<&Expr>, span: Span) -> Vec<syn::Stmt> {
        let kept = format_ident!("__mochi_kept", span = span);
        let mut out: Vec<syn::Stmt> = vec![
            syn::parse_quote_spanned!(span=> let mut #kept: ::std::vec::Vec<_> = #v[..#at].to_vec();),
        ];
        match insert {
            Some(e) => {
                out.push(syn::parse_quote_spanned!(span=> #kept.push(#e);));
                out.push(syn::parse_quote_spanned!(span=> #kept.extend_from_slice(&#v[#at..]);));
            }
            None => {
                out.push(syn::parse_quote_spanned!(span=> #kept.extend_from_slice(&#v[#at + 1..]);))
            }
        }
        out.push(syn::parse_quote_spanned!(span=> #v = #kept;));
        out
    }

    fn shortened(&self, st: &syn::Stmt) -> Option<Vec<syn::Stmt>> {
        if let Some(out) = self.taken(st) {
            return Some(out);
        }
        let syn::Stmt::Expr(Expr::MethodCall(m), Some(_)) = st else {
            return None;
        };
        // `v.pop();`, `v.remove(i);`, `v.insert(i, e);`, `v.swap_remove(i);` as statements.
        if m.method == "swap_remove" && m.args.len() == 1 {
            let v = self.buffer(m)?;
            return Some(Self::swapped_out(v, None, &m.args[0], m.method.span()));
        }
        let edit = match (m.method.to_string().as_str(), m.args.len()) {
            ("pop", 0) => Some((None, None)),
            ("remove", 1) => Some((Some(&m.args[0]), None)),
            ("insert", 2) => Some((Some(&m.args[0]), Some(&m.args[1]))),
            _ => None,
        };
        if let Some((index, insert)) = edit {
            let v = self.buffer(m)?;
            let span = m.method.span();
            let at = format_ident!("__mochi_at", span = span);
            let at_value: Expr = match index {
                Some(i) => i.clone(),
                None => syn::parse_quote_spanned!(span=> #v.len() - 1),
            };
            let mut out: Vec<syn::Stmt> =
                vec![syn::parse_quote_spanned!(span=> let #at: usize = #at_value;)];
            // (The inserted value is read before the buffer is rebuilt.)
            let value = format_ident!("__mochi_inserted", span = span);
            if let Some(e) = insert {
                out.push(syn::parse_quote_spanned!(span=> let #value = #e;));
            }
            let value: Expr = syn::parse_quote!(#value);
            out.extend(Self::edited(v, &at, insert.map(|_| &value), span));
            if index.is_none() {
                // `v.pop();` of an empty buffer does nothing.
                return Some(vec![
                    syn::parse_quote_spanned!(span=> if !#v.is_empty() { #(#out)* }),
                ]);
            }
            return Some(out);
        }
        let v = self.buffer(m)?;
        let span = m.method.span();
        let kept = format_ident!("__mochi_kept", span = span);
        let value: Expr = match (m.method.to_string().as_str(), m.args.len()) {
            ("retain", 1) => {
                let keep = &m.args[0];
                syn::parse_quote_spanned!(span=> #v.iter().copied().filter(#keep).collect())
            }
            ("truncate", 1) => {
                let n = &m.args[0];
                syn::parse_quote_spanned!(span=> #v[..::core::cmp::min(#n, #v.len())].to_vec())
            }
            // `v.dedup();`, `v.dedup_by(|a, b| same)`, `v.dedup_by_key(|e| key)`: each
            // element kept unless it is the same as the last one kept (the closure's
            // references read as the values).
            ("dedup", 0) | ("dedup_by", 1) | ("dedup_by_key", 1) => {
                let (e, b) = (
                    format_ident!("__mochi_elem", span = span),
                    format_ident!("__mochi_last_kept", span = span),
                );
                let same: Expr = match m.args.first() {
                    None => syn::parse_quote_spanned!(span=> #e == #b),
                    Some(Expr::Closure(c)) => {
                        let names: Vec<syn::Ident> = c
                            .inputs
                            .iter()
                            .map(crate::iterchain::param_name)
                            .collect::<Option<_>>()?;
                        let mut body = (*c.body).clone();
                        crate::rewrite::UnDeref { names: &names }.visit_expr_mut(&mut body);
                        match (m.method.to_string().as_str(), names.as_slice()) {
                            ("dedup_by", [a, bb]) => syn::parse_quote_spanned!(span=>
                                { let #a = #e; let #bb = #b; #body }),
                            ("dedup_by_key", [k]) => syn::parse_quote_spanned!(span=>
                                { let #k = #e; #body } == { let #k = #b; #body }),
                            _ => return None,
                        }
                    }
                    Some(_) => return None,
                };
                syn::parse_quote_spanned!(span=> {
                    let mut #kept = ::std::vec::Vec::new();
                    for #e in #v.iter().copied() {
                        if #kept.is_empty() {
                            #kept.push(#e);
                        } else {
                            let #b = #kept[#kept.len() - 1];
                            if !(#same) {
                                #kept.push(#e);
                            }
                        }
                    }
                    #kept
                })
            }
            // `v.drain(a..b);`: what is around `a..b`.
            ("drain", 1) => {
                let (a, b) = drained_range(m, v)?;
                let cut: Pat = syn::parse_quote!(_);
                return Some(Self::cut(v, &cut, a, b, span));
            }
            _ => return None,
        };
        Some(vec![
            syn::parse_quote_spanned!(span=> let #kept: ::std::vec::Vec<_> = #value;),
            syn::parse_quote_spanned!(span=> #v = #kept;),
        ])
    }
}

/// The `drain(..)` call at the bottom of a chain.
fn drain_call(m: &syn::ExprMethodCall) -> Option<&syn::ExprMethodCall> {
    let mut cur = m;
    loop {
        match unparen(&cur.receiver) {
            Expr::MethodCall(d) if d.method == "drain" => return Some(d),
            Expr::MethodCall(d) => cur = d,
            _ => return None,
        }
    }
}

/// How many times `name` is named (as a path of one segment) in `e`.
fn mention_count(e: &Expr, name: &str) -> usize {
    struct Count<'a>(&'a str, usize);
    impl<'ast> syn::visit::Visit<'ast> for Count<'_> {
        fn visit_path(&mut self, p: &'ast syn::Path) {
            if p.is_ident(self.0) {
                self.1 += 1;
            }
            syn::visit::visit_path(self, p);
        }
        fn visit_macro(&mut self, m: &'ast syn::Macro) {
            // (A name inside a macro's tokens counts too.)
            fn idents(ts: TokenStream, name: &str) -> usize {
                ts.into_iter()
                    .map(|t| match t {
                        proc_macro2::TokenTree::Ident(i) => usize::from(i == name),
                        proc_macro2::TokenTree::Group(g) => idents(g.stream(), name),
                        _ => 0,
                    })
                    .sum()
            }
            self.1 += idents(m.tokens.clone(), self.0);
        }
    }
    let mut c = Count(name, 0);
    syn::visit::Visit::visit_expr(&mut c, e);
    c.1
}

/// The bounds `a`, `b` of `v.drain(a..b)` (`..b`, `a..`, `..`, `a..=b`).
fn drained_range(m: &syn::ExprMethodCall, v: &Expr) -> Option<(TokenStream, TokenStream)> {
    if m.method != "drain" || m.args.len() != 1 {
        return None;
    }
    let Expr::Range(r) = unparen(&m.args[0]) else {
        return None;
    };
    Some(range_bounds(r, v, m.method.span()))
}

/// `let m = x.iter().copied().reduce(f64::max);`: the `Option` an iterator chain's end
/// makes (`reduce`, `max_by`, `min_by`, `max_by_key`, `min_by_key`, `last`, `nth`),
/// held in a variable → `let m = match chain.end(..) { Some(v) => Some(v), None => None };`,
/// the form in which a matched chain end is written out (`Writer`), element and
/// derivative alike.
struct StoredChainEnds<'a> {
    active: &'a HashSet<String>,
}

impl VisitMut for StoredChainEnds<'_> {
    fn visit_local_mut(&mut self, l: &mut syn::Local) {
        syn::visit_mut::visit_local_mut(self, l);
        let Some(init) = l.init.as_mut().filter(|i| i.diverge.is_none()) else {
            return;
        };
        let Expr::MethodCall(m) = unparen(&init.expr) else {
            return;
        };
        let mut end = m;
        if matches!(end.method.to_string().as_str(), "copied" | "cloned") && end.args.is_empty() {
            let Expr::MethodCall(r) = unparen(&end.receiver) else {
                return;
            };
            end = r;
        }
        let ends = matches!(
            end.method.to_string().as_str(),
            "reduce" | "max_by" | "min_by" | "max_by_key" | "min_by_key" | "last" | "nth"
        );
        if !ends
            || !matches!(unparen(&end.receiver), Expr::MethodCall(_))
            || !crate::activity::mentions_active(&end.receiver, self.active)
        {
            return;
        }
        let span = end.method.span();
        let v = format_ident!("__mochi_held", span = span);
        let chain = &init.expr;
        *init.expr = syn::parse_quote_spanned!(span=> match #chain {
            Some(#v) => Some(#v),
            None => None,
        });
    }
}

/// A chain stored in a local and used once after, as an iterator: `let it =
/// x.iter().zip(w.iter()).filter(..); for v in it.map(..) { … }` or `let total: f64 =
/// it.sum();` → the chain written where it is used, so that the chain rewrite sees all
/// of it. Only when the local is not `mut` (no `it.next()`), is named once after (not
/// in a macro), is not bound again, and no name the chain reads (its sequences, the
/// captures of its closures) is bound again or assigned after it: the chain then gives
/// the same elements where it is used as where it was made.
struct StoredChains;

/// [`StoredChains`] over a body (the generic form reads the chains in place too).
pub(crate) fn inline_stored_chains(b: &mut syn::Block) {
    StoredChains.visit_block_mut(b);
}

impl VisitMut for StoredChains {
    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        syn::visit_mut::visit_block_mut(self, b);
        let mut i = 0;
        while i < b.stmts.len() {
            if let Some((name, chain)) = Self::stored(&b.stmts[i]) {
                if let Some(end) = Self::used_once(&b.stmts[i + 1..], &name, &chain) {
                    let mut put = PutChain {
                        name: &name,
                        chain: &chain,
                    };
                    for st in &mut b.stmts[i + 1..i + 1 + end] {
                        put.visit_stmt_mut(st);
                    }
                    b.stmts.remove(i);
                    continue;
                }
            }
            i += 1;
        }
    }
}

impl StoredChains {
    /// `let it = chain;` (a plain name, no type, no `else`).
    fn stored(st: &syn::Stmt) -> Option<(syn::Ident, Expr)> {
        let syn::Stmt::Local(l) = st else { return None };
        let Pat::Ident(p) = &l.pat else { return None };
        if p.mutability.is_some() || p.by_ref.is_some() || p.subpat.is_some() {
            return None;
        }
        let init = l.init.as_ref().filter(|i| i.diverge.is_none())?;
        crate::iterchain::is_chain(&init.expr).then(|| (p.ident.clone(), (*init.expr).clone()))
    }

    /// When the chain is used once: how many statements of `rest` read the chain's name
    /// (up to the one that binds it again, `let x: Vec<f64> = x.collect();`, whose value
    /// is read before its pattern binds). The name is read once there (besides
    /// `name.clone()`), and nothing the chain reads is bound again or assigned before
    /// the use, nor in the statement of the use (in its value, for a `let`).
    fn used_once(rest: &[syn::Stmt], name: &syn::Ident, chain: &Expr) -> Option<usize> {
        // (`it.clone()`: a copy of the chain not yet advanced, which is the chain
        // written again; `it` itself is used once.)
        struct Count<'a> {
            name: &'a syn::Ident,
            n: usize,
        }
        impl<'ast> syn::visit::Visit<'ast> for Count<'_> {
            fn visit_expr_path(&mut self, p: &'ast syn::ExprPath) {
                if p.path.is_ident(self.name) {
                    self.n += 1;
                }
            }
            fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
                if cloned_name(m, self.name) {
                    return;
                }
                syn::visit::visit_expr_method_call(self, m);
            }
        }
        let rebinds = |st: &syn::Stmt| {
            let syn::Stmt::Local(l) = st else {
                return false;
            };
            let mut names = Vec::new();
            crate::activity::pat_names(&l.pat, &mut names);
            names.iter().any(|n| name == n)
        };
        let end = rest.iter().position(rebinds).map_or(rest.len(), |k| k + 1);
        let mut uses = Vec::new();
        for (k, st) in rest[..end].iter().enumerate() {
            let mut count = Count { name, n: 0 };
            syn::visit::Visit::visit_stmt(&mut count, st);
            uses.extend(std::iter::repeat_n(k, count.n));
        }
        let [u] = uses[..] else {
            return None;
        };
        // (Of a `let`, its value: the pattern binds after the chain has run.)
        let at_use: syn::Stmt = match &rest[u] {
            syn::Stmt::Local(l) => match &l.init {
                Some(init) if init.diverge.is_none() => {
                    syn::Stmt::Expr((*init.expr).clone(), Some(Default::default()))
                }
                _ => return None,
            },
            other => other.clone(),
        };
        let before = rest[..u].iter().chain(std::iter::once(&at_use));
        // The names the chain reads from outside: not a closure's own parameters where
        // that closure binds them, but a capture named as another closure's parameter
        // (`map(|v| v * v).map(|q| q / v)` reads the outer `v`; before 2026-12-08 every
        // parameter's name was dropped, and `let v = v.sqrt();` before the use went
        // unseen: a silent wrong value).
        let whole: syn::ExprClosure = syn::parse_quote!(|| #chain);
        let reads: HashSet<String> = free_names(&whole).iter().map(|i| i.to_string()).collect();
        let mut own = HashSet::new();
        own.insert(name.to_string());
        (!disturbed(before.clone(), &reads, &reads) && !disturbed(before, &own, &own))
            .then_some(end)
    }
}

/// Writes a stored chain where its name is used (see [`StoredChains`]).
struct PutChain<'a> {
    name: &'a syn::Ident,
    chain: &'a Expr,
}

/// `name.clone()`.
fn cloned_name(m: &syn::ExprMethodCall, name: &syn::Ident) -> bool {
    m.method == "clone"
        && m.args.is_empty()
        && matches!(unparen(&m.receiver), Expr::Path(p) if p.path.is_ident(name))
}

impl VisitMut for PutChain<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        let named = match e {
            Expr::Path(p) => p.path.is_ident(self.name),
            Expr::MethodCall(m) => cloned_name(m, self.name),
            _ => false,
        };
        if named {
            *e = self.chain.clone();
            return;
        }
        syn::visit_mut::visit_expr_mut(self, e);
    }
}

/// `flat_map(|r| inner)` and `flatten()` in a chain, written as a loop over the outer
/// elements around the inner chain, which the chain rewrite then reads:
/// `m.iter().flatten().map(f).sum()` → `{ let mut acc = 0.0; for r in m.iter() { acc +=
/// r.iter().map(f).sum::<f64>(); } acc }` (also `product`, `fold`, `count`,
/// `for_each`), and `for v in outer.flat_map(g).filter(p) { body }` → `'flat: for r in
/// outer { for v in g(r).filter(p) { body } }`, a `break` of the loop made
/// `break 'flat`. After the flattening only `map`, `filter`, `filter_map`, `copied`
/// and `cloned` (no positions: they would count across the inner sequences).
struct Flatten<'a> {
    float_ty: Option<&'a syn::Ident>,
    next: usize,
    active: &'a HashSet<String>,
    /// The names bound to the rows of an active outer chain (`flatten()` has no
    /// closure parameter the activity analysis saw).
    made: Vec<String>,
}

/// The parts of `outer.flat_map(c).rest…` (or `outer.flatten().rest…`): the outer
/// chain, the name bound to an outer element, the inner chain, and the methods after.
struct Flattened {
    outer: Expr,
    param: Pat,
    inner: Expr,
    rest: Vec<syn::ExprMethodCall>,
    /// An inner sequence written as an array or `vec![..]` (`flat_map(|v| [*v, v * v])`),
    /// bound to a name in the outer loop's body; the inner chain reads its elements.
    bind: Option<(syn::Ident, Expr)>,
}

impl Flatten<'_> {
    fn split(&mut self, e: &Expr) -> Option<Flattened> {
        let mut rest = Vec::new();
        let mut cur = e;
        loop {
            let Expr::MethodCall(m) = cur else {
                return None;
            };
            match (m.method.to_string().as_str(), m.args.len()) {
                ("flat_map", 1) => {
                    let Expr::Closure(c) = &m.args[0] else {
                        return None;
                    };
                    if c.inputs.len() != 1 {
                        return None;
                    }
                    rest.reverse();
                    let body = unparen(&c.body);
                    let literal = matches!(body, Expr::Array(_))
                        || matches!(body, Expr::Macro(mm) if mm.mac.path.is_ident("vec"));
                    let (inner, bind) = if literal {
                        self.next += 1;
                        let a = format_ident!("__mochi_flat_part{}", self.next);
                        // (It carries derivatives, for the chain rewrite of the inner loop.)
                        self.made.push(a.to_string());
                        // (`vec![a, b]` as the array `[a, b]`: the same elements.)
                        let part: Expr = match body {
                            Expr::Macro(mm) => match mm.mac.parse_body_with(
                                syn::punctuated::Punctuated::<Expr, syn::Token![,]>::parse_terminated,
                            ) {
                                Ok(list) => syn::parse_quote!([#list]),
                                Err(_) => body.clone(),
                            },
                            other => other.clone(),
                        };
                        // A `map` after it takes the element by pattern (`|&e|`): a `for`
                        // over `part.iter().copied().map(..)` is not one the lowering takes.
                        let by_ref_map = rest.first().is_some_and(|m: &syn::ExprMethodCall| {
                            m.method == "map"
                                && matches!(&m.args[0], Expr::Closure(c) if c.inputs.len() == 1 && matches!(&c.inputs[0], Pat::Ident(_)))
                        });
                        if by_ref_map {
                            if let Some(Expr::Closure(c)) = rest[0].args.first_mut() {
                                let p = c.inputs[0].clone();
                                c.inputs[0] = syn::parse_quote!(&#p);
                            }
                            (syn::parse_quote!(#a.iter()), Some((a, part)))
                        } else {
                            (syn::parse_quote!(#a.iter().copied()), Some((a, part)))
                        }
                    } else {
                        ((*c.body).clone(), None)
                    };
                    return Some(Flattened {
                        outer: (*m.receiver).clone(),
                        param: c.inputs[0].clone(),
                        inner,
                        rest,
                        bind,
                    });
                }
                ("flatten", 0) => {
                    self.next += 1;
                    let r = format_ident!("__mochi_flat{}", self.next);
                    if mentions_active(&m.receiver, self.active) {
                        self.made.push(r.to_string());
                    }
                    rest.reverse();
                    return Some(Flattened {
                        outer: (*m.receiver).clone(),
                        param: syn::parse_quote!(#r),
                        inner: syn::parse_quote!(#r.iter()),
                        rest,
                        bind: None,
                    });
                }
                ("map" | "filter" | "filter_map", 1) | ("copied" | "cloned", 0) => {
                    rest.push(m.clone());
                    cur = &m.receiver;
                }
                _ => return None,
            }
        }
    }

    /// `let part = [..];` of an inner sequence written as an array, in the outer body.
    fn binding(f: &Flattened) -> TokenStream {
        match &f.bind {
            Some((a, e)) => quote::quote!(let #a = #e;),
            None => TokenStream::new(),
        }
    }

    /// `inner.rest…` with `method(args)` on top.
    fn inner_chain(f: &Flattened, top: Option<(&syn::Ident, TokenStream)>) -> Expr {
        let mut e = f.inner.clone();
        for m in &f.rest {
            let mut m = m.clone();
            m.receiver = Box::new(e);
            e = Expr::MethodCall(m);
        }
        match top {
            Some((method, args)) => syn::parse_quote!(#e.#method(#args)),
            None => e,
        }
    }

    /// `a.flat_map(g).chain(b).chain(std::iter::once(e)).collect()` (a flattened part
    /// anywhere among the chained ones) → `{ let mut acc = Vec::new(); for v in
    /// a.flat_map(g) { acc.push(v); } acc.extend(b); acc.push(e); acc }`: each part
    /// pushed in order, the flattened one by the loop above, the others as `extend`s
    /// (which the derivation takes) and `once(e)` as one `push`.
    fn collect_chained(&mut self, m: &syn::ExprMethodCall) -> Option<Expr> {
        let flattens = |e: &Expr| chain_calls(e, &["flat_map", "flatten"]);
        fn once(e: &Expr) -> Option<&Expr> {
            match unparen(e) {
                Expr::Call(c) if c.args.len() == 1 => match &*c.func {
                    Expr::Path(p) if p.path.segments.last()?.ident == "once" => Some(&c.args[0]),
                    _ => None,
                },
                _ => None,
            }
        }
        if m.method != "collect" || !m.args.is_empty() {
            return None;
        }
        let ty = self.float_ty?;
        let mut parts = Vec::new();
        let mut cur = unparen(&m.receiver);
        while let Expr::MethodCall(c) = cur {
            if c.method != "chain" || c.args.len() != 1 {
                break;
            }
            parts.push(c.args[0].clone());
            cur = unparen(&c.receiver);
        }
        parts.push(cur.clone());
        parts.reverse();
        if parts.len() < 2 || !parts.iter().any(flattens) {
            return None;
        }
        self.next += 1;
        let acc = format_ident!("__mochi_flat_acc{}", self.next);
        let e = format_ident!("__mochi_flat_elem{}", self.next);
        let steps = parts.iter().map(|p| {
            if let Some(v) = once(p) {
                return quote::quote!(#acc.push(#v););
            }
            if flattens(p) {
                return quote::quote!(for #e in #p { #acc.push(#e); });
            }
            match unparen(p) {
                w @ (Expr::Path(_) | Expr::Field(_)) => {
                    quote::quote!(#acc.extend_from_slice(&#w);)
                }
                Expr::Reference(r) if r.mutability.is_none() => {
                    let w = &r.expr;
                    quote::quote!(#acc.extend_from_slice(&#w);)
                }
                _ => quote::quote!(#acc.extend(#p);),
            }
        });
        let mut out: Expr = syn::parse_quote!({
            let mut #acc = ::std::vec::Vec::<#ty>::new();
            #(#steps)*
            #acc
        });
        syn::visit_mut::visit_expr_mut(self, &mut out);
        Some(out)
    }

    fn consumer(&mut self, m: &syn::ExprMethodCall) -> Option<Expr> {
        // (A collection without a derivative, `(0..n).flat_map(|i| (0..n).map(move |j|
        // (i, j))).collect()` of index pairs: as written, of its own element type.)
        if m.method == "collect" && !mentions_active(&m.receiver, self.active) {
            return None;
        }
        if let Some(e) = self.collect_chained(m) {
            return Some(e);
        }
        let name = m.method.to_string();
        let f = self.split(&m.receiver)?;
        let (outer, param) = (&f.outer, &f.param);
        self.next += 1;
        let acc = format_ident!("__mochi_flat_acc{}", self.next);
        let method = &m.method;
        let args = &m.args;
        let (init, step): (TokenStream, TokenStream) = match (name.as_str(), args.len()) {
            // Element by element, in the order of the flat sum (a sum per row, then of
            // the rows, rounds differently).
            ("sum" | "product", 0) => {
                let ty = self.float_ty?;
                let inner = Self::inner_chain(&f, None);
                let one: Expr = if name == "sum" {
                    syn::parse_quote!(0.0)
                } else {
                    syn::parse_quote!(1.0)
                };
                let init = typed(&one, ty)?;
                let op = if name == "sum" {
                    quote::quote!(+=)
                } else {
                    quote::quote!(*=)
                };
                let e = format_ident!("__mochi_flat_elem{}", self.next);
                (
                    quote::quote!(#init),
                    quote::quote!(for #e in #inner { #acc #op #e; }),
                )
            }
            ("count", 0) => {
                let inner = Self::inner_chain(&f, Some((method, quote::quote!())));
                (quote::quote!(0usize), quote::quote!(#acc += #inner;))
            }
            ("fold", 2) => {
                let (init, g) = (&args[0], &args[1]);
                let inner = Self::inner_chain(&f, None);
                (
                    quote::quote!(#init),
                    quote::quote!(#acc = #inner.fold(#acc, #g);),
                )
            }
            ("for_each", 1) => {
                let inner = Self::inner_chain(&f, Some((method, quote::quote!(#args))));
                let bind = Self::binding(&f);
                return Some(syn::parse_quote!(for #param in #outer { #bind #inner; }));
            }
            // `flat_map(|v| [*v, v * v]).collect::<Vec<f64>>()`: each element pushed.
            ("collect", 0) => {
                let ty = self.float_ty?;
                let inner = Self::inner_chain(&f, None);
                let e = format_ident!("__mochi_flat_elem{}", self.next);
                (
                    quote::quote!(::std::vec::Vec::<#ty>::new()),
                    quote::quote!(for #e in #inner { #acc.push(#e); }),
                )
            }
            _ => return None,
        };
        let bind = Self::binding(&f);
        Some(syn::parse_quote!({
            let mut #acc = #init;
            for #param in #outer {
                #bind
                #step
            }
            #acc
        }))
    }

    fn for_loop(&mut self, l: &syn::ExprForLoop) -> Option<Expr> {
        let f = self.split(&l.expr)?;
        self.next += 1;
        let outer_label =
            syn::Lifetime::new(&format!("'__mochi_flat{}", self.next), l.for_token.span);
        let mut body = l.body.clone();
        // The loop's own `break`s leave both loops; its `continue`s go to the next
        // inner element, as they went to the next flattened one (the loop's label, if
        // any, stays on the inner loop, for them).
        OwnBreaks {
            to: &outer_label,
            own: l.label.as_ref().map(|lb| &lb.name),
            depth: 0,
        }
        .visit_block_mut(&mut body);
        let (outer, param, pat, label) = (&f.outer, &f.param, &l.pat, &l.label);
        let inner = Self::inner_chain(&f, None);
        let bind = Self::binding(&f);
        Some(syn::parse_quote!(
            #outer_label: for #param in #outer { #bind #label for #pat in #inner #body }
        ))
    }
}

/// The `break`s of one loop's body (unlabelled ones outside inner loops and closures,
/// and those with the loop's label `own`) made `break 'to`.
struct OwnBreaks<'a> {
    to: &'a syn::Lifetime,
    own: Option<&'a syn::Lifetime>,
    depth: usize,
}

impl VisitMut for OwnBreaks<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        match e {
            Expr::Closure(_) => {}
            Expr::ForLoop(_) | Expr::While(_) | Expr::Loop(_) => {
                self.depth += 1;
                syn::visit_mut::visit_expr_mut(self, e);
                self.depth -= 1;
            }
            Expr::Break(b) => {
                let ours = match &b.label {
                    None => self.depth == 0,
                    Some(l) => self.own.is_some_and(|o| o.ident == l.ident),
                };
                if ours {
                    b.label = Some(self.to.clone());
                }
                if let Some(v) = b.expr.as_mut() {
                    self.visit_expr_mut(v);
                }
            }
            _ => syn::visit_mut::visit_expr_mut(self, e),
        }
    }
}

/// The methods after a flattening that [`Flatten`] writes into the loop (see
/// [`Flatten::positioned`] for the others).
fn flattened_stage(m: &syn::ExprMethodCall) -> bool {
    matches!(
        (m.method.to_string().as_str(), m.args.len()),
        ("map" | "filter" | "filter_map", 1) | ("copied" | "cloned", 0)
    )
}

/// Whether the elements of `outer.flat_map(g)` / `outer.flatten()` followed by the
/// `filter`s only are references (`rows.iter().flatten()`, `flat_map(|r| r.iter())`)
/// rather than values (`into_iter()` of owned rows, `flat_map(|&v| [v, v * v])`,
/// `flat_map(|r| r.iter().map(f))`).
fn flattened_refs(flat: &syn::ExprMethodCall) -> bool {
    fn top(e: &Expr) -> Option<String> {
        let mut cur = unparen(e);
        while let Expr::MethodCall(m) = cur {
            let name = m.method.to_string();
            if !matches!(
                name.as_str(),
                "filter" | "skip" | "take" | "rev" | "step_by"
            ) {
                return Some(name);
            }
            cur = unparen(&m.receiver);
        }
        None
    }
    let outer_owned = top(&flat.receiver).is_some_and(|t| t == "into_iter" || t == "drain");
    if flat.method == "flatten" {
        return !outer_owned;
    }
    let Some(Expr::Closure(c)) = flat.args.first() else {
        return false;
    };
    match top(&c.body).as_deref() {
        Some("iter") => true,
        Some("into_iter") => !outer_owned,
        Some(_) => false,
        None => matches!(unparen(&c.body), Expr::Path(_) | Expr::Reference(_)) && !outer_owned,
    }
}

/// `x.iter().filter(p).skip(1).map(f).sum()`, `x.iter().scan(0.0, f).skip(2)`: a
/// stage that drops elements by their values (`filter`, `filter_map`) or carries a
/// state from one to the next (`scan`), with a stage among `above` (the methods after
/// it, the nearest first) that counts positions in what it leaves (`enumerate`, `skip`,
/// `zip`, `step_by`, `rev`, `chain`, …; after a `scan`, one it may not see in order): a
/// chain the derivation does not write as one loop. [`Flatten::positioned`] collects
/// the part up to `m` first, as it does a flattening. A part whose elements may not be
/// floats (a range's integers, `enumerate`'s pairs) is left as written.
fn gathered_before(m: &syn::ExprMethodCall, above: &[&syn::ExprMethodCall]) -> bool {
    let name = m.method.to_string();
    // (The stages the loop takes after one: the rest are collected first.)
    let in_loop: &[&str] = match (name.as_str(), m.args.len()) {
        ("filter" | "filter_map", 1) => {
            &["map", "filter", "filter_map", "take", "copied", "cloned"]
        }
        ("scan", 2) => &[
            "map",
            "filter",
            "filter_map",
            "take",
            "take_while",
            "enumerate",
            "copied",
            "cloned",
            "zip",
            "chain",
            "scan",
        ],
        _ => return false,
    };
    if !above
        .iter()
        .any(|c| !value_consumer(c) && !in_loop.contains(&c.method.to_string().as_str()))
    {
        return false;
    }
    // Down to the sequence: floats all the way (a `map`, `filter_map` or `scan` makes
    // values the closure says; a range's are integers until one does).
    let mut made = name != "filter";
    let mut cur = unparen(&m.receiver);
    loop {
        let Expr::MethodCall(c) = cur else {
            return made && matches!(cur, Expr::Range(_) | Expr::Paren(_));
        };
        match c.method.to_string().as_str() {
            "map" | "filter_map" | "scan" => made = true,
            "filter" | "copied" | "cloned" | "skip" | "take" | "rev" | "step_by" => {}
            "iter" | "into_iter" if c.args.is_empty() => {
                return made || !matches!(unparen(&c.receiver), Expr::Range(_) | Expr::Paren(_));
            }
            _ => return false,
        }
        cur = unparen(&c.receiver);
    }
}

/// `above` (a chain's methods after a gathered stage, in order) ends in its best element
/// (`max_by`, `min_by`, `max_by_key`, `min_by_key`, `reduce`) followed only by methods of
/// the `Option` that read it (`copied`, `cloned`, `unwrap`, `expect`, `unwrap_or`, …).
fn best_end(above: &[&syn::ExprMethodCall]) -> bool {
    let Some(k) = above.iter().position(|m| {
        m.args.len() == 1
            && matches!(
                m.method.to_string().as_str(),
                "max_by" | "min_by" | "max_by_key" | "min_by_key" | "reduce"
            )
    }) else {
        return false;
    };
    above[k + 1..].iter().all(|m| {
        matches!(
            (m.method.to_string().as_str(), m.args.len()),
            ("copied" | "cloned" | "unwrap" | "unwrap_or_default", 0) | ("expect" | "unwrap_or", 1)
        )
    })
}

/// Whether the best element the chain `tail` ends in is a value, not a reference into
/// the buffer it reads: the chain copies its elements somewhere (`copied`, `cloned`,
/// `into_iter`), before the best is taken or after.
fn owned_best(tail: &Expr) -> bool {
    let mut cur = unparen(tail);
    while let Expr::MethodCall(m) = cur {
        if matches!(
            m.method.to_string().as_str(),
            "copied" | "cloned" | "into_iter"
        ) {
            return true;
        }
        cur = unparen(&m.receiver);
    }
    false
}

/// A chain's last method whose value borrows nothing of the sequence (`sum`,
/// `product`, `fold`, `count`, `collect`, `for_each`): the part before it may be
/// collected into a buffer that ends with the value's block.
fn value_consumer(m: &syn::ExprMethodCall) -> bool {
    matches!(
        m.method.to_string().as_str(),
        "sum" | "product" | "fold" | "count" | "collect" | "for_each"
    )
}

/// Whether the elements `m` (see [`gathered_before`]) yields are references:
/// `x.iter()` followed by stages that pass them on (`filter`, `skip`, `take`, `rev`,
/// `step_by`).
fn gathered_refs(m: &syn::ExprMethodCall) -> bool {
    if m.method != "filter" {
        return false;
    }
    let mut cur = unparen(&m.receiver);
    loop {
        let Expr::MethodCall(c) = cur else {
            return false;
        };
        match c.method.to_string().as_str() {
            "filter" | "skip" | "take" | "rev" | "step_by" => {}
            "iter" => return c.args.is_empty(),
            _ => return false,
        }
        cur = unparen(&c.receiver);
    }
}

impl Flatten<'_> {
    /// `outer.flatten().enumerate().map(f).sum()`, `for (k, v) in
    /// outer.flat_map(g).zip(w.iter())`: a flattening followed (after any `map`,
    /// `filter`, `filter_map`, `copied`, `cloned`) by a method that counts positions
    /// across the inner sequences (`enumerate`, `zip`, `skip`, `take`, `step_by`,
    /// `rev`, `scan`, ..), and ending in a consumer whose value borrows nothing (`sum`,
    /// `product`, `fold`, `count`, `collect`, `for_each`) or in a `for`. The flattened
    /// part is collected first, `let buf: Vec<F> = outer.flatten().copied().collect();`
    /// (which [`Flatten::consumer`] writes as a loop of pushes), and the rest of the chain
    /// reads `buf.iter()` (the elements were references) or `buf.into_iter()`.
    /// The statement and the rewritten chain.
    ///
    /// `scoped`: the statement goes before a `let` whose value the rest is, in the same
    /// block as the buffer, so the rest may also end in the best element it borrows
    /// (`max_by`, `min_by`, `max_by_key`, `min_by_key`, `reduce`, then `copied`,
    /// `unwrap_or(d)`, …: `let m = x.iter().filter(p).max_by(cmp).copied().unwrap_or(0.0);`).
    fn positioned(
        &mut self,
        chain: &Expr,
        in_for: bool,
        scoped: bool,
    ) -> Option<(syn::Stmt, Expr)> {
        let ty = self.float_ty?;
        if !mentions_active(chain, self.active) {
            return None;
        }
        let mut above: Vec<&syn::ExprMethodCall> = Vec::new();
        let mut cur = unparen(chain);
        let flat = loop {
            let Expr::MethodCall(m) = cur else {
                return None;
            };
            match (m.method.to_string().as_str(), m.args.len()) {
                ("flat_map", 1) | ("flatten", 0) => break m,
                _ if gathered_before(m, &above) => break m,
                _ => {
                    above.push(m);
                    cur = unparen(&m.receiver);
                }
            }
        };
        above.reverse();
        let consumer = value_consumer;
        let ends =
            in_for || above.last().is_some_and(|m| consumer(m)) || scoped && best_end(&above);
        if !ends {
            return None;
        }
        let cut = above
            .iter()
            .position(|m| !flattened_stage(m) && !consumer(m))?;
        let mut prefix = Expr::MethodCall(flat.clone());
        for m in &above[..cut] {
            let mut m = (*m).clone();
            m.receiver = Box::new(prefix);
            prefix = Expr::MethodCall(m);
        }
        let refs = above[..cut].iter().all(|m| m.method == "filter")
            && if matches!(flat.method.to_string().as_str(), "flat_map" | "flatten") {
                flattened_refs(flat)
            } else {
                gathered_refs(flat)
            };
        self.next += 1;
        let buf = format_ident!("__mochi_flat_buf{}", self.next);
        self.made.push(buf.to_string());
        let gathered = !matches!(flat.method.to_string().as_str(), "flat_map" | "flatten");
        let (collected, mut tail): (Expr, Expr) = if refs {
            (
                syn::parse_quote!(#prefix.copied().collect()),
                syn::parse_quote!(#buf.iter()),
            )
        } else if gathered {
            // (Values read by `iter().copied()`: a stage counted on the way,
            // `take_while`, walks the buffer again, which `into_iter()` would move.)
            (
                syn::parse_quote!(#prefix.collect()),
                syn::parse_quote!(#buf.iter().copied()),
            )
        } else {
            (
                syn::parse_quote!(#prefix.collect()),
                syn::parse_quote!(#buf.into_iter()),
            )
        };
        for m in &above[cut..] {
            let mut m = (*m).clone();
            m.receiver = Box::new(tail);
            tail = Expr::MethodCall(m);
        }
        let stmt: syn::Stmt = syn::parse_quote!(let #buf: ::std::vec::Vec<#ty> = #collected;);
        Some((stmt, tail))
    }
}

impl VisitMut for Flatten<'_> {
    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        // `let v: Vec<f64> = rows.into_iter().flatten().rev().take(3).collect();`: the
        // collected part its own statement before the `let`, whose chain the typed
        // `let`'s rewrite then reads (a block's value would hide it).
        let mut out = Vec::with_capacity(b.stmts.len());
        for mut st in std::mem::take(&mut b.stmts) {
            if let syn::Stmt::Local(l) = &mut st {
                if let Some(init) = l.init.as_mut().filter(|i| i.diverge.is_none()) {
                    // (`let m = *chain.max_by(cmp).unwrap();`: the element read through;
                    // `let best = chain.max_by(cmp);`, an `Option` held, in the `match`
                    // `StoredChainEnds` writes.)
                    let chain: &mut Expr = match &mut *init.expr {
                        Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => &mut u.expr,
                        Expr::Match(m) if m.arms.len() == 2 => &mut m.expr,
                        e => e,
                    };
                    if let Some((buf, tail)) = self.positioned(chain, false, true) {
                        *chain = tail;
                        out.push(buf);
                    }
                }
            }
            out.push(st);
        }
        b.stmts = out;
        syn::visit_mut::visit_block_mut(self, b);
    }

    fn visit_expr_mut(&mut self, e: &mut Expr) {
        // (The top of a chain, before its parts: see `positioned`.)
        match e {
            Expr::MethodCall(_) => {
                if let Some((stmt, tail)) = self.positioned(e, false, false) {
                    *e = syn::parse_quote!({ #stmt #tail });
                } else if let Some((stmt, tail)) = self
                    .positioned(e, false, true)
                    .filter(|(_, tail)| owned_best(tail))
                {
                    // (The best element copied out of the buffer before the block ends:
                    // a block's last expression would borrow it past its end.)
                    self.next += 1;
                    let v = format_ident!("__mochi_best{}", self.next);
                    *e = syn::parse_quote!({ #stmt let #v = #tail; #v });
                }
            }
            Expr::ForLoop(l) => {
                if let Some((stmt, tail)) = self.positioned(&l.expr, true, false) {
                    let mut l = l.clone();
                    *l.expr = tail;
                    *e = syn::parse_quote!({ #stmt #l });
                }
            }
            _ => {}
        }
        syn::visit_mut::visit_expr_mut(self, e);
        let new = match e {
            Expr::MethodCall(m) => self.consumer(m),
            Expr::ForLoop(l) => self.for_loop(l),
            _ => None,
        };
        if let Some(n) = new {
            *e = n;
        }
    }
}

/// A `loop` whose value is used: `let P = loop { … break e; … };`, `x = loop { … };`,
/// or a block's value `loop { … }` → `let mut v = None; loop { … { v = Some(e); break;
/// } … }` and then `let P = v.unwrap();` (`x = …`, or the value), so the value's
/// derivative flows through an assignment the lowering differentiates. (An `Option`:
/// the lowered loop is a `while`, after which a plain `let v;` is not known to be set.)
struct LoopValues {
    next: usize,
}

/// Whether `b` holds a `break` with a value that targets the loop it is the body of
/// (`label`: that loop's label).
pub fn breaks_with_value(b: &syn::Block, label: Option<&syn::Lifetime>) -> bool {
    let mut found = false;
    let mut v = BreakValues {
        label,
        depth: 0,
        var: None,
        found: &mut found,
    };
    let mut copy = b.clone();
    v.visit_block_mut(&mut copy);
    found
}

/// Finds (and with `var`, rewrites to `{ var = e; break; }`) the `break e` of one loop:
/// unlabelled ones outside inner loops, and those labelled with the loop's label.
struct BreakValues<'a> {
    label: Option<&'a syn::Lifetime>,
    depth: usize,
    var: Option<&'a syn::Ident>,
    found: &'a mut bool,
}

impl VisitMut for BreakValues<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        match e {
            Expr::Closure(_) => {}
            Expr::Loop(_) | Expr::While(_) | Expr::ForLoop(_) => {
                self.depth += 1;
                syn::visit_mut::visit_expr_mut(self, e);
                self.depth -= 1;
            }
            Expr::Break(b) if b.expr.is_some() => {
                let ours = match (&b.label, self.label) {
                    (Some(l), Some(mine)) => l.ident == mine.ident,
                    (None, _) => self.depth == 0,
                    _ => false,
                };
                if let Some(v) = b.expr.as_mut() {
                    self.visit_expr_mut(v);
                }
                if ours {
                    *self.found = true;
                    if let Some(var) = self.var {
                        let value = b.expr.take().unwrap();
                        let label = &b.label;
                        *e = syn::parse_quote!({ #var = Some(#value); break #label; });
                    }
                }
            }
            _ => syn::visit_mut::visit_expr_mut(self, e),
        }
    }
}

impl LoopValues {
    /// `l` with its valued `break`s assigning `var`, when it has any.
    fn rewrite(&mut self, l: &syn::ExprLoop) -> Option<(syn::Ident, syn::ExprLoop)> {
        let label = l.label.as_ref().map(|l| &l.name);
        if !breaks_with_value(&l.body, label) {
            return None;
        }
        self.next += 1;
        let var = format_ident!("__mochi_loop_value{}", self.next);
        let mut out = l.clone();
        let mut found = false;
        BreakValues {
            label,
            depth: 0,
            var: Some(&var),
            found: &mut found,
        }
        .visit_block_mut(&mut out.body);
        Some((var, out))
    }
}

/// `e` without parentheses around it.
fn unparen_mut(e: &mut Expr) -> &mut Expr {
    match e {
        Expr::Paren(p) => unparen_mut(&mut p.expr),
        other => other,
    }
}

pub(crate) fn unparen(e: &Expr) -> &Expr {
    match e {
        Expr::Paren(p) => unparen(&p.expr),
        Expr::Group(g) => unparen(&g.expr),
        other => other,
    }
}

impl VisitMut for LoopValues {
    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        syn::visit_mut::visit_block_mut(self, b);
        let mut out: Vec<syn::Stmt> = Vec::with_capacity(b.stmts.len());
        for st in std::mem::take(&mut b.stmts) {
            match &st {
                syn::Stmt::Local(l) if l.init.as_ref().is_some_and(|i| i.diverge.is_none()) => {
                    let init = l.init.as_ref().unwrap();
                    if let Expr::Loop(lp) = unparen(&init.expr) {
                        if let Some((var, lp)) = self.rewrite(lp) {
                            let pat = &l.pat;
                            out.push(syn::parse_quote!(let mut #var = None;));
                            out.push(syn::Stmt::Expr(Expr::Loop(lp), None));
                            out.push(syn::parse_quote!(let #pat = #var.unwrap();));
                            continue;
                        }
                    }
                }
                // `x = loop { … }`, `s += loop { … }` (any compound assignment).
                syn::Stmt::Expr(Expr::Assign(_) | Expr::Binary(_), semi) => {
                    let (left, op, right) = match &st {
                        syn::Stmt::Expr(Expr::Assign(a), _) => {
                            (&a.left, quote::quote!(=), &a.right)
                        }
                        syn::Stmt::Expr(Expr::Binary(b), _)
                            if crate::activity::is_arithmetic_assign(&b.op) =>
                        {
                            let op = &b.op;
                            (&b.left, quote::quote!(#op), &b.right)
                        }
                        _ => {
                            out.push(st);
                            continue;
                        }
                    };
                    if let Expr::Loop(lp) = unparen(right) {
                        if let Some((var, lp)) = self.rewrite(lp) {
                            out.push(syn::parse_quote!(let mut #var = None;));
                            out.push(syn::Stmt::Expr(Expr::Loop(lp), None));
                            out.push(syn::Stmt::Expr(
                                syn::parse_quote!(#left #op #var.unwrap()),
                                *semi,
                            ));
                            continue;
                        }
                    }
                }
                syn::Stmt::Expr(e, None) => {
                    if let Expr::Loop(lp) = unparen(e) {
                        if let Some((var, lp)) = self.rewrite(lp) {
                            out.push(syn::parse_quote!(let mut #var = None;));
                            out.push(syn::Stmt::Expr(Expr::Loop(lp), None));
                            out.push(syn::Stmt::Expr(syn::parse_quote!(#var.unwrap()), None));
                            continue;
                        }
                    }
                }
                _ => {}
            }
            out.push(st);
        }
        b.stmts = out;
    }
}

/// `chain.collect()` as the function's value (its tail, through `if`/`match`/blocks
/// in tail position, or `return chain.collect()`): `chain.collect::<R>()` with `R` the
/// return type, as a typed `let` would say.
struct CollectAsReturned<'a>(&'a syn::Type);
impl CollectAsReturned<'_> {
    /// `e` is the function's value.
    fn annotate(&self, e: &mut Expr) {
        match e {
            Expr::MethodCall(m)
                if m.method == "collect" && m.args.is_empty() && m.turbofish.is_none() =>
            {
                let t = self.0;
                // Rows (`Vec<Vec<f64>>`, `Vec<[f64; 3]>`) are collected by a typed `let`,
                // which builds them by a loop whose rows' own chains are rewritten.
                let rows = crate::iterchain::vec_elem(t).flatten().is_some_and(|e| {
                    matches!(e, syn::Type::Array(_)) || crate::iterchain::vec_elem(e).is_some()
                });
                if rows {
                    let span = m.method.span();
                    let chain = m.clone();
                    *e = syn::parse_quote_spanned!(span=> {
                        let __mochi_rows: #t = #chain;
                        __mochi_rows
                    });
                } else {
                    m.turbofish = Some(syn::parse_quote!(::<#t>));
                }
            }
            Expr::Paren(p) => self.annotate(&mut p.expr),
            // `Some(x.iter().map(f).collect())` for an `Option<Vec<f64>>`, `Ok(..)` for a
            // `Result<Vec<f64>, E>`: the value with the wrapped type.
            Expr::Call(c) if c.args.len() == 1 => {
                let wrapper = match &*c.func {
                    Expr::Path(p) if p.qself.is_none() => {
                        p.path.segments.last().map(|s| s.ident.to_string())
                    }
                    _ => None,
                };
                let syn::Type::Path(tp) = self.0 else { return };
                let Some(last) = tp.path.segments.last() else {
                    return;
                };
                let wrapped = match (wrapper.as_deref(), last.ident.to_string().as_str()) {
                    (Some("Some"), "Option") | (Some("Ok"), "Result") => match &last.arguments {
                        syn::PathArguments::AngleBracketed(a) => match a.args.first() {
                            Some(syn::GenericArgument::Type(t)) => Some(t.clone()),
                            _ => None,
                        },
                        _ => None,
                    },
                    _ => None,
                };
                if let Some(t) = wrapped {
                    CollectAsReturned(&t).annotate(&mut c.args[0]);
                }
            }
            // `(s, x.iter().map(f).collect())` for a `(f64, Vec<f64>)`: each part with its
            // type.
            Expr::Tuple(t) => {
                if let syn::Type::Tuple(ts) = self.0 {
                    if ts.elems.len() == t.elems.len() {
                        for (e, ty) in t.elems.iter_mut().zip(&ts.elems) {
                            CollectAsReturned(ty).annotate(e);
                        }
                    }
                }
            }
            Expr::Block(b) => self.annotate_tail(&mut b.block),
            Expr::If(i) => {
                self.annotate_tail(&mut i.then_branch);
                if let Some((_, e)) = &mut i.else_branch {
                    self.annotate(e);
                }
            }
            Expr::Match(m) => {
                for arm in &mut m.arms {
                    self.annotate(&mut arm.body);
                }
            }
            _ => {}
        }
    }
    fn annotate_tail(&self, b: &mut syn::Block) {
        if let Some(syn::Stmt::Expr(e, None)) = b.stmts.last_mut() {
            self.annotate(e);
        }
    }
}
impl VisitMut for CollectAsReturned<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        match e {
            Expr::Return(r) => {
                if let Some(v) = &mut r.expr {
                    self.annotate(v);
                }
            }
            // Their tails and returns are not the function's.
            Expr::Closure(_) | Expr::Async(_) => return,
            _ => {}
        }
        syn::visit_mut::visit_expr_mut(self, e);
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// The loops over aliases of constants ([`Desugar::note_const_alias`]) in an index loop
/// just written over a constant, as [`Desugar::inactive_index_loop`] writes them.
struct AliasLoops<'a> {
    d: &'a mut Desugar,
}

impl VisitMut for AliasLoops<'_> {
    fn visit_local_mut(&mut self, l: &mut syn::Local) {
        syn::visit_mut::visit_local_mut(self, l);
        self.d.note_const_alias(l);
    }
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        syn::visit_mut::visit_expr_mut(self, e);
        if let Expr::ForLoop(f) = e {
            let over_alias = match unparen(&f.expr) {
                Expr::Path(p) => p.path.get_ident(),
                Expr::MethodCall(m) => match unparen(&m.receiver) {
                    Expr::Path(p) => p.path.get_ident(),
                    _ => None,
                },
                _ => None,
            }
            .is_some_and(|i| self.d.const_aliases.contains(&i.to_string()));
            if over_alias {
                if let Some(r) = self.d.inactive_index_loop(f) {
                    *e = r;
                }
            }
        }
    }
    fn visit_expr_closure_mut(&mut self, _: &mut syn::ExprClosure) {}
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

struct Desugar {
    next: usize,
    float_ty: Option<syn::Ident>,
    active: HashSet<String>,
    /// Parameters whose type carries no derivative (`idx: &[usize]`).
    inactive_params: HashSet<String>,
    /// Locals holding maps or sets (see [`map_locals`]): `counts.get(l).unwrap()` is a
    /// lookup by key, not an element read.
    map_locals: HashSet<String>,
    /// Bindings of a struct type of the user's (see [`Receiver`]).
    receivers: std::collections::HashMap<String, Receiver>,
    /// `mut` locals holding the user's structs (`let mut ps = vec![P { .. }, ..]`, `let
    /// mut ps: Vec<P> = ..`): `ps[i].step(dt)` may take `&mut self`.
    element_receivers: HashSet<String>,
    /// The names the body binds `mut` (a local buffer, which `v.clear()` may replace).
    mut_locals: HashSet<String>,
    /// The `&mut` parameters the body does not bind again (`out: &mut Vec<f64>`, whose
    /// `out.clear()` is `*out = Vec::new()`).
    lent_buffers: HashSet<String>,
    /// Locals bound to a borrow of a constant or of a piece of one (`let data: &[[f64;
    /// 3]] = &DATA;`, in a generic form `&__mochi_const_DATA`, a local of its own; `let
    /// head = &data[..2];`): loops over them are index loops, as over the constant.
    const_aliases: HashSet<String>,
}

/// A binding whose type is a struct of the user's: a parameter `m: &Linear`, `p:
/// Point`, `other: &Self`, or a local bound (not `mut`) to a struct literal `Point {
/// .. }`, to a clone of such a binding, or with the type written. `Linear::predict(m,
/// x)` (or `(&p, ..)`) calls the method's derived rule `Linear::predict_rrule`; method
/// syntax does on a value surely of the user's type (of `Self`, bound to a struct
/// literal or its clone: `other.dist(self)` → `Self::dist(other, self)`, `s.push(v)` →
/// `Stats::push(&mut s, v)` for `let mut s = Stats { .. }`), not on other types, whose
/// methods may be a rule crate's (the missing-rule note names the path form). A `mut`
/// local is passed as `&mut v`, which a `&self` method's rule takes too (its pullback
/// adds into the accumulator, the value being unchanged).
#[derive(Clone, Debug)]
pub struct Receiver {
    /// The type's name (`Linear`, `Self`).
    pub ty: syn::Ident,
    /// The binding is a reference (`&Linear`), passed on as it is.
    pub by_ref: bool,
    /// A local bound `mut`, or a `&mut` parameter: passed as `&mut v` (`&mut *v`), which a
    /// `&self` method's rule takes too.
    pub mutable: bool,
    /// Bound to a struct literal (or a clone of such a binding, or of `self`): surely a
    /// struct of the user's, whose methods are its own.
    pub sure: bool,
}

impl Receiver {
    /// For a parameter of type `&T`, `&mut T` or `T`: `T` a single name without generic
    /// arguments, capitalised, that is not a float alias or a library type.
    pub fn of_param(t: &syn::Type) -> Option<Receiver> {
        let (inner, by_ref) = match t {
            syn::Type::Reference(r) => (&*r.elem, true),
            other => (other, false),
        };
        let ty = Self::user_type(inner)?;
        let sure = ty == "Self";
        // (`kf: &mut Kalman`: lent on, `&mut *kf`, at every call.)
        let mutable = matches!(t, syn::Type::Reference(r) if r.mutability.is_some());
        Some(Receiver {
            ty,
            by_ref,
            mutable,
            sure,
        })
    }

    /// For a parameter of type `&[T]`, `&Vec<T>`, `Vec<T>` or `[T; N]` (behind `&` or not)
    /// with `T` as in [`user_type`](Self::user_type): `T`.
    pub fn user_elements(t: &syn::Type) -> Option<syn::Ident> {
        let t = match t {
            syn::Type::Reference(r) => &*r.elem,
            other => other,
        };
        match t {
            syn::Type::Slice(s) => Self::user_type(&s.elem),
            syn::Type::Array(a) => Self::user_type(&a.elem),
            other => crate::iterchain::vec_elem(other)
                .flatten()
                .and_then(Self::user_type),
        }
    }

    /// Whether `name` is a marked method taking `self` of this type, one the crate
    /// derives `Tangent` for under a name no library's type has: the method is its own,
    /// even one named as a library's (`r.push(v)` of `r: &mut Ring`).
    fn marked(&self, name: &str) -> bool {
        let n = self.ty.to_string();
        crate::twin::crate_type(&n)
            && !crate::twin::library_name(&n)
            && crate::twin::marked_method_of(&n, name)
    }

    fn user_type(t: &syn::Type) -> Option<syn::Ident> {
        let syn::Type::Path(p) = t else { return None };
        if p.qself.is_some() || p.path.segments.len() != 1 {
            return None;
        }
        let seg = &p.path.segments[0];
        let name = seg.ident.to_string();
        let user = matches!(seg.arguments, syn::PathArguments::None)
            && (name == "Self" || crate::twin::user_type_name(&name));
        user.then(|| seg.ident.clone())
    }
}

/// Methods every type has, which are not a derived method.
const PLAIN_METHODS: &[&str] = &[
    "clone",
    "to_owned",
    "into",
    "as_ref",
    "borrow",
    "eq",
    "ne",
    "cmp",
    "partial_cmp",
    "fmt",
    "to_string",
    "hash",
    "default",
    "iter",
    "len",
    "is_empty",
];

/// `lit` with the suffix `ty`, when `e` is an unsuffixed float literal (or its negation).
fn typed(e: &Expr, ty: &syn::Ident) -> Option<Expr> {
    match e {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Float(f),
            ..
        }) if f.suffix().is_empty() => {
            let lit = crate::rewrite::typed_float(f.base10_digits(), ty, f.span());
            Some(syn::parse_quote!(#lit))
        }
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => {
            let inner = typed(&u.expr, ty)?;
            Some(syn::parse_quote!(-#inner))
        }
        // `Array1::ones(n)`, `DVector::zeros(n)`: the element type, which rustc would
        // infer only from later uses (the rule calls between need it).
        Expr::Call(c) => {
            let Expr::Path(p) = &*c.func else { return None };
            let segs = &p.path.segments;
            if p.qself.is_some() || segs.len() != 2 || !segs[0].arguments.is_none() {
                return None;
            }
            let (t, ctor) = (&segs[0].ident, &segs[1].ident);
            let containers = [
                "Array1",
                "Array2",
                "Array3",
                "Array4",
                "ArrayD",
                "DVector",
                "DMatrix",
                "RowDVector",
            ];
            if !containers.contains(&t.to_string().as_str())
                || !matches!(ctor.to_string().as_str(), "zeros" | "ones")
            {
                return None;
            }
            let args = &c.args;
            Some(syn::parse_quote_spanned!(ctor.span()=> #t::<#ty>::#ctor(#args)))
        }
        _ => None,
    }
}

/// `if v >= 0.0 { v } else { 0.0 }` (a `relu`) and its three neighbours: a value
/// against a float literal `c`, returning the value or the literal. Written as `max`
/// or `min`, whose rules keep two floats and whose pullbacks have no branch, where the
/// `if` keeps which arm ran and branches on it per element (half the branches
/// mispredicted on data of both signs). The four forms are exact, values, ties and
/// `NaN` included (`c` is a literal, never `NaN`):
///
/// | `if` | as | tie `v = c` | `v` is `NaN` |
/// | --- | --- | --- | --- |
/// | `v >= c { v } else { c }` | `v.max(c)` | `v` (the receiver) | `c` |
/// | `v > c { v } else { c }` | `c.max(v)` | `c` (the receiver) | `c` |
/// | `v <= c { v } else { c }` | `v.min(c)` | `v` | `c` |
/// | `v < c { v } else { c }` | `c.min(v)` | `c` | `c` |
///
/// The comparison may be written the other way round (`0.0 <= v`). `v` is a place read
/// twice (a name, a field, an element at a name or literal index); the arms swapped
/// (`if v < c { c } else { v }`, `NaN` for `NaN`) are left as written.
fn select_as_min_max(i: &syn::ExprIf, float_ty: Option<&syn::Ident>) -> Option<Expr> {
    fn single(b: &syn::Block) -> Option<&Expr> {
        match b.stmts.as_slice() {
            [syn::Stmt::Expr(e, None)] => Some(unparen(e)),
            _ => None,
        }
    }
    fn float_literal(e: &Expr) -> bool {
        match unparen(e) {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Float(_),
                ..
            }) => true,
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => float_literal(&u.expr),
            _ => false,
        }
    }
    fn place(e: &Expr) -> bool {
        match unparen(e) {
            Expr::Path(p) => p.qself.is_none(),
            Expr::Field(f) => place(&f.base),
            Expr::Index(ix) => {
                place(&ix.expr) && matches!(unparen(&ix.index), Expr::Path(_) | Expr::Lit(_))
            }
            Expr::Unary(u) => matches!(u.op, syn::UnOp::Deref(_)) && place(&u.expr),
            _ => false,
        }
    }
    let same = |a: &Expr, b: &Expr| {
        quote::ToTokens::to_token_stream(a).to_string()
            == quote::ToTokens::to_token_stream(b).to_string()
    };
    let (_, els) = i.else_branch.as_ref()?;
    let Expr::Block(els) = &**els else {
        return None;
    };
    if els.label.is_some() {
        return None;
    }
    let (then, other) = (single(&i.then_branch)?, single(&els.block)?);
    let Expr::Binary(cmp) = unparen(&i.cond) else {
        return None;
    };
    use syn::BinOp::{Ge, Gt, Le, Lt};
    // As `v op c`.
    let (v, op, c) = if float_literal(&cmp.right) {
        (&*cmp.left, cmp.op, &*cmp.right)
    } else if float_literal(&cmp.left) {
        let flipped = match cmp.op {
            Ge(t) => Le(syn::Token![<=](t.spans)),
            Gt(t) => Lt(syn::Token![<](t.span)),
            Le(t) => Ge(syn::Token![>=](t.spans)),
            Lt(t) => Gt(syn::Token![>](t.span)),
            _ => return None,
        };
        (&*cmp.right, flipped, &*cmp.left)
    } else {
        return None;
    };
    if !place(v) || !same(unparen(v), then) || !same(unparen(c), other) {
        return None;
    }
    let v = unparen(v);
    // The literal as a receiver needs its type (`0.0_f64.max(v)`).
    let typed_c = || match float_ty {
        Some(t) => typed(unparen(c), t).or_else(|| Some(unparen(c).clone())),
        None => None,
    };
    let span = i.if_token.span;
    Some(match op {
        Ge(_) => syn::parse_quote_spanned!(span=> (#v).max(#c)),
        Le(_) => syn::parse_quote_spanned!(span=> (#v).min(#c)),
        Gt(_) => {
            let c = typed_c()?;
            syn::parse_quote_spanned!(span=> (#c).max(#v))
        }
        Lt(_) => {
            let c = typed_c()?;
            syn::parse_quote_spanned!(span=> (#c).min(#v))
        }
        _ => return None,
    })
}

/// `let [a, b] = <[f64; 2]>::try_from(&x[..2]).unwrap();` → `let [a, b]: [f64; 2] =
/// (x[..2]).try_into().unwrap();`, the form with a rule (`expect` too); for the twin as
/// for the derived rule.
pub(crate) fn array_try_from_let(l: &mut syn::Local) {
    let Some(init) = &mut l.init else { return };
    let Some((ty, rewritten)) = array_try_from(&init.expr) else {
        return;
    };
    *init.expr = rewritten;
    if !matches!(l.pat, Pat::Type(_)) {
        l.pat = Pat::Type(syn::PatType {
            attrs: Vec::new(),
            pat: Box::new(l.pat.clone()),
            colon_token: Default::default(),
            ty: Box::new(ty),
        });
    }
}

/// `<[T; N]>::try_from(e).unwrap()` (or `.expect(..)`, or `<[T; N] as TryFrom<_>>::`):
/// the array type and `e.try_into().unwrap()`, `e` without a leading `&`.
fn array_try_from(e: &Expr) -> Option<(syn::Type, Expr)> {
    let Expr::MethodCall(end) = unparen(e) else {
        return None;
    };
    if !matches!(end.method.to_string().as_str(), "unwrap" | "expect") {
        return None;
    }
    let Expr::Call(c) = unparen(&end.receiver) else {
        return None;
    };
    let Expr::Path(p) = &*c.func else { return None };
    let q = p.qself.as_ref()?;
    if !matches!(&*q.ty, syn::Type::Array(_))
        || p.path.segments.last().is_none_or(|s| s.ident != "try_from")
        || c.args.len() != 1
    {
        return None;
    }
    let arg = match unparen(&c.args[0]) {
        Expr::Reference(r) if r.mutability.is_none() => (*r.expr).clone(),
        other => other.clone(),
    };
    let (method, args) = (&end.method, &end.args);
    let span = end.method.span();
    Some((
        (*q.ty).clone(),
        syn::parse_quote_spanned!(span=> (#arg).try_into().#method(#args)),
    ))
}

/// Is `path` `swap`/`replace` of `std::mem`/`core::mem`/`mem`?
fn mem_fn(e: &Expr) -> Option<String> {
    let Expr::Path(p) = e else { return None };
    let segs: Vec<String> = crate::rewrite::path_segments(&p.path);
    let n = segs.len();
    if n >= 2 && segs[n - 2] == "mem" && (n == 2 || segs[0] == "std" || segs[0] == "core") {
        return Some(segs[n - 1].clone());
    }
    None
}

/// `&mut place` → `place`, for a place the lowering can assign; a `&mut` reference held
/// by a name (`lo` of `lo: &mut f64`) → `*lo`.
fn mut_place(e: &Expr) -> Option<Expr> {
    match e {
        Expr::Path(p) if p.path.get_ident().is_some() => Some(syn::parse_quote!((*#p))),
        Expr::Reference(r) if r.mutability.is_some() => match &*r.expr {
            p @ (Expr::Path(_) | Expr::Index(_) | Expr::Field(_)) => Some(p.clone()),
            Expr::Paren(p) => mut_place(&Expr::Reference(syn::ExprReference {
                expr: p.expr.clone(),
                ..r.clone()
            })),
            _ => None,
        },
        Expr::Paren(p) => mut_place(&p.expr),
        _ => None,
    }
}

/// A place read whole by a `mem` call: as it is (moved), or cloned when behind a
/// reference (`(*lo).clone()`).
fn moved_or_cloned(place: &Expr) -> Expr {
    match unparen(place) {
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => syn::parse_quote!(#place.clone()),
        _ => place.clone(),
    }
}

/// One source of a zipped `for` loop: the sequence, whether it is borrowed mutably, and
/// how its elements are reached.
struct Source {
    seq: Expr,
    mutable: bool,
    reach: Reach,
}

/// How a source of a zipped `for` reaches the elements of its sequence.
enum Reach {
    /// Every element in order.
    Whole,
    /// A sub-slice (`&x[a..b]`, `x[a..].iter_mut()`): its first position and its length.
    Range(Expr, Expr),
    /// `x.iter().cycle()` (also `.skip(s)` after it): without end, from position `s`
    /// round again; the other sources bound the loop.
    Cycle(Expr),
}

impl Source {
    fn whole(seq: Expr, mutable: bool) -> Source {
        Source {
            seq,
            mutable,
            reach: Reach::Whole,
        }
    }

    /// The source walking `place`: a sub-slice of a variable or field, or a sequence
    /// (see [`seq_place`]).
    fn of_place(place: &Expr, mutable: bool) -> Option<Source> {
        if let Some((seq, (start, len))) = sub_slice_place(place) {
            return Some(Source {
                seq,
                mutable,
                reach: Reach::Range(start, len),
            });
        }
        Some(Source::whole(seq_place(place)?, mutable))
    }

    /// The element at position `i` of the source.
    fn element(&self, i: &syn::Ident, span: Span) -> Expr {
        let seq = &self.seq;
        match &self.reach {
            Reach::Whole => {
                // (`for v in m.iter_mut()` of a local `Array2`: the multi-index of
                // position `i` in logical order.)
                let at = crate::iterchain::flat_index(seq, &quote::quote!(#i), span);
                syn::parse_quote_spanned!(span=> #seq[#at])
            }
            Reach::Range(start, _) => syn::parse_quote_spanned!(span=> #seq[#start + #i]),
            Reach::Cycle(skip) => syn::parse_quote_spanned!(span=>
                #seq[(#skip + #i) % ::mochi::__private::elements_len(&#seq)]),
        }
    }

    /// The number of elements of the source (`None`: without end).
    fn len(&self, span: Span) -> Option<TokenStream> {
        let seq = &self.seq;
        match &self.reach {
            Reach::Whole => Some(quote_spanned!(span=> ::mochi::__private::elements_len(&#seq))),
            Reach::Range(_, len) => Some(quote_spanned!(span=> (#len))),
            Reach::Cycle(_) => None,
        }
    }
}

/// A sequence a `for` loop can index: a variable, a field, or one row `m[i]` of one
/// (parentheses dropped).
fn seq_place(e: &Expr) -> Option<Expr> {
    match e {
        Expr::Path(_) | Expr::Field(_) => Some(e.clone()),
        Expr::Paren(p) => seq_place(&p.expr),
        Expr::Index(i)
            if !matches!(&*i.index, Expr::Range(_))
                && matches!(&*i.expr, Expr::Path(_) | Expr::Field(_)) =>
        {
            Some(e.clone())
        }
        _ => None,
    }
}

/// A sub-slice `x[a..b]` (also `x[a..]`, `x[..b]`, `x[a..=b]`) of a variable or field:
/// the variable, its first position and its length.
fn sub_slice_place(e: &Expr) -> Option<(Expr, (Expr, Expr))> {
    let Expr::Index(ix) = unparen(e) else {
        return None;
    };
    let Expr::Range(r) = &*ix.index else {
        return None;
    };
    let seq = match unparen(&ix.expr) {
        x @ (Expr::Path(_) | Expr::Field(_)) => x.clone(),
        _ => return None,
    };
    let start: Expr = match &r.start {
        Some(a) => syn::parse_quote!((#a)),
        None => syn::parse_quote!(0usize),
    };
    let len: Expr = match (&r.end, &r.limits) {
        (Some(b), syn::RangeLimits::HalfOpen(_)) => syn::parse_quote!((#b) - #start),
        (Some(b), syn::RangeLimits::Closed(_)) => syn::parse_quote!((#b) + 1 - #start),
        (None, _) => syn::parse_quote!(::mochi::__private::elements_len(&#seq) - #start),
    };
    Some((seq, (start, len)))
}

fn source(e: &Expr) -> Option<Source> {
    match e {
        // `x.iter().cycle()`, `x.iter().cycle().skip(s)`: read only.
        // `x.iter().skip(n)`, `x.iter_mut().take(n)` (also of a sub-slice): a sub-slice.
        Expr::MethodCall(m) if (m.method == "skip" || m.method == "take") && m.args.len() == 1 => {
            let inner = source(&m.receiver)?;
            let seq = &inner.seq;
            let n = &m.args[0];
            let (start, len): (Expr, Expr) = match &inner.reach {
                Reach::Whole => (
                    syn::parse_quote!(0usize),
                    syn::parse_quote!(::mochi::__private::elements_len(&#seq)),
                ),
                Reach::Range(start, len) => (start.clone(), len.clone()),
                Reach::Cycle(zero) if m.method == "skip" => {
                    return Some(Source {
                        reach: Reach::Cycle(syn::parse_quote!((#zero + (#n)))),
                        ..inner
                    })
                }
                Reach::Cycle(_) => return None,
            };
            let reach = if m.method == "skip" {
                Reach::Range(
                    syn::parse_quote!((#start + (#n))),
                    syn::parse_quote!(usize::saturating_sub(#len, #n)),
                )
            } else {
                Reach::Range(start, syn::parse_quote!(::core::cmp::min(#len, #n)))
            };
            Some(Source { reach, ..inner })
        }
        Expr::MethodCall(m) if m.method == "cycle" && m.args.is_empty() => {
            let inner = source(&m.receiver)?;
            if inner.mutable || !matches!(inner.reach, Reach::Whole) {
                return None;
            }
            Some(Source {
                reach: Reach::Cycle(syn::parse_quote!(0usize)),
                ..inner
            })
        }
        Expr::MethodCall(m) if m.args.is_empty() => {
            let mutable = match m.method.to_string().as_str() {
                "iter_mut" => true,
                "iter" => false,
                _ => return None,
            };
            Source::of_place(&m.receiver, mutable)
        }
        Expr::Reference(r) => Source::of_place(&r.expr, r.mutability.is_some()),
        _ => None,
    }
}

/// The sources of `a.zip(b).zip(c)` or `a.zip(b.zip(c))` (left to right), or of one source, and how they nest.
fn sources(e: &Expr, out: &mut Vec<Source>) -> Option<Zipped> {
    if let Expr::MethodCall(m) = e {
        if m.method == "zip" && m.args.len() == 1 {
            let left = sources(&m.receiver, out)?;
            // `.zip(x)` of a slice variable iterates it as `.zip(x.iter())` does.
            let bare = || match &m.args[0] {
                Expr::Path(p) if p.path.get_ident().is_some() => {
                    Some(Source::whole(m.args[0].clone(), false))
                }
                _ => None,
            };
            let right = match source(&m.args[0]).or_else(bare) {
                Some(s) => {
                    out.push(s);
                    Zipped::One
                }
                // `out.iter_mut().zip(x.iter().zip(y.iter()))`: a zip inside the zip.
                None => match &m.args[0] {
                    Expr::MethodCall(z) if z.method == "zip" => sources(&m.args[0], out)?,
                    _ => return None,
                },
            };
            return Some(Zipped::Pair(Box::new(left), Box::new(right)));
        }
    }
    out.push(source(e)?);
    Some(Zipped::One)
}

/// How the sources of a `for` over zipped sequences nest: `a.zip(b).zip(c)` is
/// `((a, b), c)`, `a.zip(b.zip(c))` is `(a, (b, c))`.
enum Zipped {
    One,
    Pair(Box<Zipped>, Box<Zipped>),
}

/// The element names of a zip pattern shaped as the sources are (`((a, b), c)`,
/// `(a, (b, c))`, `a`), in source order.
fn element_names(p: &Pat, shape: &Zipped, out: &mut Vec<syn::Ident>) -> bool {
    match (p, shape) {
        (Pat::Paren(q), _) => element_names(&q.pat, shape, out),
        (Pat::Ident(i), Zipped::One) if i.subpat.is_none() => {
            out.push(i.ident.clone());
            true
        }
        (Pat::Reference(r), Zipped::One) => element_names(&r.pat, shape, out),
        (Pat::Tuple(t), Zipped::Pair(a, b)) if t.elems.len() == 2 => {
            element_names(&t.elems[0], a, out) && element_names(&t.elems[1], b, out)
        }
        _ => false,
    }
}

/// Whether `body` mentions `name` only as the base of a field (`p.pos[0]`, `p.0`), at
/// least once, and binds no other `name`.
fn fields_only(body: &syn::Block, name: &syn::Ident) -> bool {
    struct F<'n> {
        name: &'n syn::Ident,
        fields: usize,
        other: bool,
    }
    impl<'a> syn::visit::Visit<'a> for F<'_> {
        fn visit_expr(&mut self, e: &'a Expr) {
            match e {
                Expr::Field(f) if matches!(&*f.base, Expr::Path(p) if p.path.is_ident(self.name)) =>
                {
                    self.fields += 1;
                }
                Expr::Path(p) if p.path.is_ident(self.name) => self.other = true,
                _ => syn::visit::visit_expr(self, e),
            }
        }
        fn visit_pat_ident(&mut self, p: &'a syn::PatIdent) {
            if p.ident == *self.name {
                self.other = true;
            }
            syn::visit::visit_pat_ident(self, p);
        }
        // (A macro of expressions, `assert_eq!(p.w.len(), n)`, is read as they are.)
        fn visit_macro(&mut self, m: &'a syn::Macro) {
            match crate::rewrite::macro_exprs(m) {
                Some(args) => args.iter().for_each(|a| self.visit_expr(a)),
                None => self.other = true,
            }
        }
        fn visit_item(&mut self, _: &'a syn::Item) {}
    }
    let mut v = F {
        name,
        fields: 0,
        other: false,
    };
    syn::visit::Visit::visit_block(&mut v, body);
    v.fields > 0 && !v.other
}

/// Whether `body` (a loop's) may leave before its end: a `break` or `continue` of this
/// loop (not of a loop inside it), a `return` or a `?`.
fn leaves_early(body: &syn::Block) -> bool {
    struct L(usize, bool);
    impl<'a> syn::visit::Visit<'a> for L {
        fn visit_expr(&mut self, e: &'a Expr) {
            match e {
                Expr::Return(_) | Expr::Try(_) => self.1 = true,
                Expr::Break(b) if self.0 == 0 || b.label.is_some() => self.1 = true,
                Expr::Continue(c) if self.0 == 0 || c.label.is_some() => self.1 = true,
                Expr::ForLoop(_) | Expr::While(_) | Expr::Loop(_) => {
                    self.0 += 1;
                    syn::visit::visit_expr(self, e);
                    self.0 -= 1;
                }
                Expr::Closure(_) => {}
                _ => syn::visit::visit_expr(self, e),
            }
        }
        fn visit_item(&mut self, _: &'a syn::Item) {}
    }
    let mut v = L(0, false);
    syn::visit::Visit::visit_block(&mut v, body);
    v.1
}

/// Replaces `*name` and `name` by an indexed place.
struct Substitute<'a> {
    names: &'a [(syn::Ident, Expr)],
    /// A `let`, closure or pattern rebinding one of the names: no rewrite.
    shadowed: bool,
    /// The names are elements borrowed mutably (`for l in v.iter_mut()`): a method of
    /// the user's called on one (`l.bump(x)`) gets its receiver as `(&mut v[i])`, so
    /// that a `&mut self` method is reached (`lower_user_method`).
    mut_receivers: Vec<syn::Ident>,
    /// A `let` was bound to `&mut v[i]`: the body's blocks need `inline_mut_borrows`.
    borrowed: bool,
}

impl Substitute<'_> {
    /// `names` substituted in `body`, and the `&mut` borrows this makes inlined; `false`
    /// when a name is bound again (nothing usable).
    fn apply(mut self, body: &mut syn::Block) -> bool {
        self.visit_block_mut(body);
        if self.borrowed {
            struct Everywhere;
            impl VisitMut for Everywhere {
                fn visit_block_mut(&mut self, b: &mut syn::Block) {
                    inline_mut_borrows(b);
                    syn::visit_mut::visit_block_mut(self, b);
                }
            }
            Everywhere.visit_block_mut(body);
        }
        !self.shadowed
    }
}

impl Substitute<'_> {
    fn lookup(&self, e: &Expr) -> Option<Expr> {
        let Expr::Path(p) = e else { return None };
        let id = p.path.get_ident()?;
        self.names
            .iter()
            .find(|(n, _)| n == id)
            .map(|(_, place)| place.clone())
    }
}

impl VisitMut for Substitute<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if let Expr::MethodCall(m) = e {
            let name = m.method.to_string();
            let mut_element = matches!(&*m.receiver, Expr::Path(p)
                if p.path.get_ident().is_some_and(|i| self.mut_receivers.contains(i)));
            if mut_element && !crate::lower::expr::is_library_method(&name) && m.turbofish.is_none()
            {
                if let Some(place) = self.lookup(&m.receiver) {
                    let span = m.receiver.span();
                    *m.receiver = syn::parse_quote_spanned!(span=> (&mut #place));
                    for a in &mut m.args {
                        self.visit_expr_mut(a);
                    }
                    return;
                }
            }
        }
        if let Expr::Call(c) = e {
            // `scale(e, s)` / `normalise(row)` in `for e in v.iter_mut()`: the element
            // given whole to a function is the reference the loop bound, `&mut v[i]`.
            for a in &mut c.args {
                let mutable = matches!(&*a, Expr::Path(p)
                    if p.path.get_ident().is_some_and(|i| self.mut_receivers.contains(i)));
                match self.lookup(a) {
                    Some(place) if mutable => {
                        let span = a.span();
                        *a = syn::parse_quote_spanned!(span=> &mut #place);
                    }
                    _ => self.visit_expr_mut(a),
                }
            }
            self.visit_expr_mut(&mut c.func);
            return;
        }
        if let Expr::Unary(u) = e {
            if matches!(u.op, syn::UnOp::Deref(_)) {
                if let Some(place) = self.lookup(&u.expr) {
                    *e = place;
                    return;
                }
            }
        }
        if let Some(place) = self.lookup(e) {
            // Errors about the place point at the name it replaces.
            let span = e.span();
            *e = place;
            if let Expr::Paren(p) = e {
                p.paren_token = syn::token::Paren(span);
            }
            return;
        }
        syn::visit_mut::visit_expr_mut(self, e);
    }
    fn visit_local_mut(&mut self, l: &mut syn::Local) {
        // `let r: &mut f64 = e;` (how a local closure's call `f(e)` binds its `&mut`
        // parameter): the reference itself, `&mut v[i]`, which `inline_mut_borrows`
        // then writes as the place.
        if let Some(init) = &mut l.init {
            let mutable = matches!(&*init.expr, Expr::Path(p)
                if p.path.get_ident().is_some_and(|i| self.mut_receivers.contains(i)));
            if mutable && init.diverge.is_none() {
                if let Some(place) = self.lookup(&init.expr) {
                    let span = init.expr.span();
                    *init.expr = syn::parse_quote_spanned!(span=> &mut #place);
                    self.borrowed = true;
                    self.visit_pat_mut(&mut l.pat);
                    return;
                }
            }
        }
        syn::visit_mut::visit_local_mut(self, l);
    }
    fn visit_pat_ident_mut(&mut self, p: &mut syn::PatIdent) {
        if self.names.iter().any(|(n, _)| *n == p.ident) {
            self.shadowed = true;
        }
        syn::visit_mut::visit_pat_ident_mut(self, p);
    }
    fn visit_macro_mut(&mut self, m: &mut syn::Macro) {
        // A name inside a macro's tokens cannot be rewritten reliably.
        if tokens_mention(&m.tokens, &|i| self.names.iter().any(|(n, _)| n == i)) {
            self.shadowed = true;
        }
    }
}

/// What `Some(..)` binds: `Some(v)`, `Some(mut v)`, `Some(&v)` (a copy of what the
/// reference points to) or `Some(_)`.
#[derive(Clone)]
struct SomeBinding {
    name: syn::PatIdent,
    /// `Some(&v)`: the option holds a reference, `v` the value behind it.
    through_ref: bool,
}

/// The binding of `Some(v)`, `Some(mut v)`, `Some(&v)` or `Some(_)`, if any.
fn some_binding(p: &Pat) -> Option<Option<SomeBinding>> {
    let Pat::TupleStruct(t) = p else { return None };
    if !t.path.is_ident("Some") || t.elems.len() != 1 {
        return None;
    }
    let plain = |p: &Pat| match p {
        Pat::Ident(i) if i.by_ref.is_none() && i.subpat.is_none() => Some(i.clone()),
        _ => None,
    };
    match &t.elems[0] {
        Pat::Wild(_) => Some(None),
        Pat::Reference(r) if r.mutability.is_none() => plain(&r.pat).map(|name| {
            Some(SomeBinding {
                name,
                through_ref: true,
            })
        }),
        p => plain(p).map(|name| {
            Some(SomeBinding {
                name,
                through_ref: false,
            })
        }),
    }
}

/// An element `x[i]` borrowed, `&x[i]`; a sub-slice `&x[a..b]` as it is.
fn borrowed(elem: &Expr) -> TokenStream {
    match elem {
        Expr::Reference(_) => quote_spanned!(elem.span()=> #elem),
        e => quote_spanned!(e.span()=> &#e),
    }
}

/// `x.first()`, `x.last()`, `x.get(i)`, `x.get(a..b)` of a sequence that carries a
/// derivative: the statements before the test, the test that the element (or the
/// sub-slice, `&x[a..b]`) exists, and the element.
fn element_option(
    e: &Expr,
    active: &HashSet<String>,
    span: Span,
) -> Option<(TokenStream, Expr, Expr)> {
    let Expr::MethodCall(m) = e else { return None };
    // A sub-slice `x[a..b]` (also `x[a..]`, `x[..b]`) as the receiver: its elements are
    // `x`'s from `a`, and it holds `b - a`.
    if let Expr::Index(ix) = &*m.receiver {
        if let (Expr::Range(r), Expr::Path(_) | Expr::Field(_)) = (&*ix.index, &*ix.expr) {
            if r.limits != syn::RangeLimits::HalfOpen(Default::default())
                || !mentions_active(&ix.expr, active)
            {
                return None;
            }
            let x = &ix.expr;
            let start: Expr = r
                .start
                .as_ref()
                .map_or(syn::parse_quote!(0usize), |a| (**a).clone());
            let end: Expr = r
                .end
                .as_ref()
                .map_or(syn::parse_quote!(#x.len()), |b| (**b).clone());
            let (a, b) = (
                format_ident!("__mochi_sa", span = span),
                format_ident!("__mochi_sb", span = span),
            );
            let bounds = quote_spanned!(span=> let #a: usize = #start; let #b: usize = #end;);
            return match (m.method.to_string().as_str(), m.args.len()) {
                ("first", 0) => Some((
                    bounds,
                    syn::parse_quote_spanned!(span=> #a < #b),
                    syn::parse_quote_spanned!(span=> #x[#a]),
                )),
                ("last", 0) => Some((
                    bounds,
                    syn::parse_quote_spanned!(span=> #a < #b),
                    syn::parse_quote_spanned!(span=> #x[#b - 1]),
                )),
                ("get", 1) if !map_key_or_range(&m.args[0]) => {
                    let i = format_ident!("__mochi_gi", span = span);
                    let k = &m.args[0];
                    Some((
                        quote_spanned!(span=> #bounds let #i: usize = #k;),
                        syn::parse_quote_spanned!(span=> #i < #b - #a),
                        syn::parse_quote_spanned!(span=> #x[#a + #i]),
                    ))
                }
                _ => None,
            };
        }
    }
    if !matches!(&*m.receiver, Expr::Path(_) | Expr::Field(_))
        || !mentions_active(&m.receiver, active)
    {
        return None;
    }
    let x = &m.receiver;
    match (m.method.to_string().as_str(), m.args.len()) {
        ("first", 0) => Some((
            TokenStream::new(),
            syn::parse_quote_spanned!(span=> !#x.is_empty()),
            syn::parse_quote_spanned!(span=> #x[0]),
        )),
        ("last", 0) => Some((
            TokenStream::new(),
            syn::parse_quote_spanned!(span=> !#x.is_empty()),
            syn::parse_quote_spanned!(span=> #x[#x.len() - 1]),
        )),
        // An array's multi-index, `a.get((i, j))`: in bounds when ndarray says so
        // (without a derivative), then the element.
        ("get", 1) if matches!(&m.args[0], Expr::Tuple(_)) => {
            let i = format_ident!("__mochi_gi", span = span);
            let k = &m.args[0];
            Some((
                quote_spanned!(span=> let #i = #k;),
                syn::parse_quote_spanned!(span=> ::mochi::no_grad(#x.get(#i).is_some())),
                syn::parse_quote_spanned!(span=> #x[#i]),
            ))
        }
        // A sub-slice, `x.get(a..b)` (also `a..`, `..b`, `a..=b`): in bounds when
        // `a <= b <= x.len()`, then `&x[a..b]`.
        ("get", 1) if matches!(unparen(&m.args[0]), Expr::Range(_)) => {
            let Expr::Range(r) = unparen(&m.args[0]) else {
                return None;
            };
            let (a, b) = (
                format_ident!("__mochi_ga", span = span),
                format_ident!("__mochi_gb", span = span),
            );
            let (start, end) = range_bounds(r, x, span);
            Some((
                quote_spanned!(span=> let #a: usize = #start; let #b: usize = #end;),
                syn::parse_quote_spanned!(span=> #a <= #b && #b <= #x.len()),
                syn::parse_quote_spanned!(span=> &#x[#a..#b]),
            ))
        }
        // Not `get(&key)` (a map) or `get(a..b)` (a sub-slice).
        ("get", 1) if !map_key_or_range(&m.args[0]) => {
            let i = format_ident!("__mochi_gi", span = span);
            let k = &m.args[0];
            Some((
                quote_spanned!(span=> let #i: usize = #k;),
                syn::parse_quote_spanned!(span=> #i < #x.len()),
                syn::parse_quote_spanned!(span=> #x[#i]),
            ))
        }
        _ => None,
    }
}

/// `Some(&v)` as `Some(v)` (the value of a chain's walk is the element itself) and `*v` in
/// `body` as `v`; whether the pattern is `Some(v)` or `Some(&v)`.
fn by_value_binding(pat: &mut Pat, body: &mut syn::Block) -> bool {
    let Pat::TupleStruct(ts) = pat else {
        return false;
    };
    if !ts.path.is_ident("Some") || ts.elems.len() != 1 {
        return false;
    }
    if let Some(Pat::Reference(r)) = ts.elems.first() {
        let inner = (*r.pat).clone();
        ts.elems[0] = inner;
    }
    let Some(Pat::Ident(i)) = ts.elems.first() else {
        return false;
    };
    let names = [i.ident.clone()];
    crate::rewrite::UnDeref { names: &names }.visit_block_mut(body);
    true
}

/// `x.get(i)`, `x.first()`, `x.last()` (also followed by `.copied()` or `.cloned()`) of a
/// sequence that carries a derivative, as the value of `e` or of a branch of it (an `if`,
/// a `match` arm, a block's tail): `{ let i = ..; if i < x.len() { Some(&x[i]) } else {
/// None } }`, the element by value after `copied`.
fn element_options_as_values(e: &mut Expr, active: &HashSet<String>) {
    match e {
        Expr::Paren(p) => element_options_as_values(&mut p.expr, active),
        Expr::Block(b) => {
            if let Some(syn::Stmt::Expr(t, None)) = b.block.stmts.last_mut() {
                element_options_as_values(t, active);
            }
        }
        Expr::If(i) if !matches!(&*i.cond, Expr::Let(_)) => {
            if let Some(syn::Stmt::Expr(t, None)) = i.then_branch.stmts.last_mut() {
                element_options_as_values(t, active);
            }
            if let Some((_, els)) = &mut i.else_branch {
                element_options_as_values(els, active);
            }
        }
        Expr::Match(m) => {
            for arm in &mut m.arms {
                element_options_as_values(&mut arm.body, active);
            }
        }
        Expr::MethodCall(m) => {
            let span = m.method.span();
            let (source, by_value) = match &*m.receiver {
                Expr::MethodCall(c)
                    if m.args.is_empty() && (m.method == "copied" || m.method == "cloned") =>
                {
                    (Expr::MethodCall(c.clone()), true)
                }
                _ => (e.clone(), false),
            };
            let Some((pre, test, elem)) = element_option(&source, active, span) else {
                return;
            };
            let elem = if by_value {
                quote_spanned!(span=> #elem)
            } else {
                borrowed(&elem)
            };
            *e = syn::parse_quote_spanned!(span=> {
                #pre
                if #test { Some(#elem) } else { None }
            });
        }
        _ => {}
    }
}

fn is_none_or_wild(p: &Pat) -> bool {
    match p {
        Pat::Wild(_) => true,
        Pat::Ident(i) => i.ident == "None" && i.subpat.is_none(),
        Pat::Path(p) => p.path.is_ident("None"),
        _ => false,
    }
}

/// `if let &[a, b] = pair { .. }` (also `if let [a, b] = pair`, `_` for a part) of a
/// variable: `if pair.len() == 2 { let a = pair[0]; let b = pair[1]; .. }`, each part
/// read by index as the loops and chains read a piece (`let a = &pair[0];` where the
/// pattern binds it by reference). Before, a `for pair in x.chunks_exact(2)` whose body
/// took the piece apart so was refused ("this `for` over a differentiable sequence ..").
struct SlicePatternIfLets;

impl VisitMut for SlicePatternIfLets {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        syn::visit_mut::visit_expr_mut(self, e);
        let Expr::If(i) = e else { return };
        let Expr::Let(l) = &*i.cond else { return };
        let (slice, by_value) = match &*l.pat {
            Pat::Reference(r) if r.mutability.is_none() => (&*r.pat, true),
            p => (p, false),
        };
        let Pat::Slice(sl) = slice else { return };
        let x = unparen(&l.expr);
        if !matches!(x, Expr::Path(p) if p.path.get_ident().is_some()) {
            return;
        }
        let mut lets: Vec<syn::Stmt> = Vec::new();
        for (k, p) in sl.elems.iter().enumerate() {
            match p {
                Pat::Wild(_) => {}
                Pat::Ident(n) if n.by_ref.is_none() && n.subpat.is_none() => {
                    // (`[mut only]` binds by value, as `mut` does under a reference.)
                    let part: Expr = if by_value || n.mutability.is_some() {
                        syn::parse_quote_spanned!(n.span()=> #x[#k])
                    } else {
                        syn::parse_quote_spanned!(n.span()=> &#x[#k])
                    };
                    lets.push(syn::parse_quote_spanned!(n.span()=> let #n = #part;));
                }
                _ => return,
            }
        }
        let len = sl.elems.len();
        let span = l.span();
        *i.cond = syn::parse_quote_spanned!(span=> #x.len() == #len);
        i.then_branch.stmts.splice(0..0, lets);
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// The name a binding of `option_branch` binds (`y` of `y =`, not of `y = *`).
fn name_of_binding(b: &TokenStream) -> Option<syn::Ident> {
    let mut it = b.clone().into_iter();
    let first = it.next()?;
    let rest: Vec<_> = it.collect();
    match (first, rest.as_slice()) {
        (proc_macro2::TokenTree::Ident(i), [proc_macro2::TokenTree::Punct(p)])
            if p.as_char() == '=' && i != "mut" =>
        {
            Some(i)
        }
        _ => None,
    }
}

/// Whether `e` reads `*name`.
fn derefs_name(e: &Expr, name: &syn::Ident) -> bool {
    struct D<'n>(&'n syn::Ident, bool);
    impl<'a> syn::visit::Visit<'a> for D<'_> {
        fn visit_expr_unary(&mut self, u: &'a syn::ExprUnary) {
            if matches!(u.op, syn::UnOp::Deref(_))
                && matches!(unparen(&u.expr), Expr::Path(p) if p.path.is_ident(self.0))
            {
                self.1 = true;
            }
            syn::visit::visit_expr_unary(self, u);
        }
    }
    let mut d = D(name, false);
    syn::visit::Visit::visit_expr(&mut d, e);
    d.1
}

/// The statements of a block expression, or the expression as the block's value.
fn stmts_of(e: &Expr) -> Vec<syn::Stmt> {
    match e {
        Expr::Block(b) if b.label.is_none() && b.attrs.is_empty() => b.block.stmts.clone(),
        other => vec![syn::Stmt::Expr(other.clone(), None)],
    }
}

/// `if o.is_some() { let v = o.unwrap(); then } else { els }`, with `let o = e;` first
/// when `e` is not a variable.
fn option_branch(
    span: Span,
    binding: Option<SomeBinding>,
    scrutinee: &Expr,
    then: &Expr,
    els: Option<&Expr>,
    active: &HashSet<String>,
) -> Expr {
    let els_tokens = |els: Option<&Expr>| {
        els.map(|e| {
            if let Expr::If(_) = e {
                quote_spanned!(span=> else #e)
            } else {
                let s = stmts_of(e);
                quote_spanned!(span=> else { #(#s)* })
            }
        })
    };
    // An element of a sequence: tested by its index, read by value (`*v` in the branch
    // becomes `v`).
    if let Some((pre, exists, elem)) = element_option(scrutinee, active, span) {
        let mut then = then.clone();
        let bind = binding.map(|b| {
            // (A sub-slice, `&x[a..b]`, is bound as it is.)
            if !b.through_ref && !matches!(elem, Expr::Reference(_)) {
                let names = [b.name.ident.clone()];
                crate::rewrite::UnDeref { names: &names }.visit_expr_mut(&mut then);
            }
            let name = b.name;
            quote_spanned!(span=> let #name = #elem;)
        });
        let then = stmts_of(&then);
        let els = els_tokens(els);
        return syn::parse_quote_spanned!(span=> {
            #pre
            if #exists { #bind #(#then)* } #els
        });
    }
    // `if let Some(b) = &t.b`: `b` borrows the value in the `Option` (a copy of it,
    // read by reference; before 2026-12-07, "cannot move out of `*__mochi_opt`").
    if let (Expr::Reference(r), Some(b)) = (unparen(scrutinee), &binding) {
        if r.mutability.is_none() && !b.through_ref && plain_place(&r.expr) {
            let (inner, name) = (&r.expr, &b.name);
            let then = stmts_of(then);
            let els = els_tokens(els);
            return syn::parse_quote_spanned!(span=>
                if ::mochi::no_grad(::mochi::__private::present(&#inner)) {
                    let #name = &(#inner.clone().unwrap());
                    #(#then)*
                } #els
            );
        }
    }
    let binding = binding.map(|b| {
        let name = b.name;
        if b.through_ref {
            quote_spanned!(span=> #name = *)
        } else {
            quote_spanned!(span=> #name =)
        }
    });
    let simple = matches!(scrutinee, Expr::Path(p) if p.path.get_ident().is_some());
    let o: Expr = if simple {
        scrutinee.clone()
    } else {
        let o = format_ident!("__mochi_opt", span = span);
        syn::parse_quote!(#o)
    };
    // `if let Some(m) = x.iter().copied().reduce(f)`: the chain's length decides, and
    // `chain.reduce(f).unwrap()` is a loop the lowering reverses.
    if let Some(len) = crate::iterchain::option_chain_len(scrutinee) {
        let bind = binding
            .as_ref()
            .map(|b| quote_spanned!(span=> let #b #scrutinee.unwrap();));
        let then = stmts_of(then);
        let els = els_tokens(els);
        return syn::parse_quote_spanned!(span=>
            if (#len) > 0 { #bind #(#then)* } #els
        );
    }
    // `if let Some(y) = t` of a borrowed `Option` (`t` of `targets.iter()`), whose
    // branch reads `*y`: the value is unwrapped by copy, so `*y` is `y` (before, "type
    // `f64` cannot be dereferenced"). (Only where the branch shows the reference: a
    // value bound by value is passed on as written.)
    let mut then = then.clone();
    if let Some(b) = &binding {
        if let Some(name) = name_of_binding(b) {
            if derefs_name(&then, &name) {
                let names = [name];
                crate::rewrite::UnDeref { names: &names }.visit_expr_mut(&mut then);
            }
        }
    }
    let then = &then;
    let bind = binding.map(|b| quote_spanned!(span=> let #b #o.unwrap();));
    let then = stmts_of(then);
    let els = els_tokens(els);
    // (`present`: an `Option`'s `is_some`, a `Result`'s `is_ok`, `checked_ln(v).map(|l|
    // ..).unwrap_or(d)` of a helper returning a `Result`.)
    let branch: Expr = syn::parse_quote_spanned!(span=>
        if ::mochi::no_grad(::mochi::__private::present(&#o)) { #bind #(#then)* } #els
    );
    if simple {
        branch
    } else {
        syn::parse_quote_spanned!(span=> { let #o = #scrutinee; #branch })
    }
}

/// The element a `&mut` accessor reaches, as an index place: `*v.last_mut().unwrap()` →
/// `v[v.len() - 1]`, `*v.first_mut().unwrap()` and `*v.iter_mut().next().unwrap()` →
/// `v[0]`, `*v.get_mut(i).unwrap()` → `v[i]`, `*v.iter_mut().nth(k).unwrap()` → `v[k]`,
/// `(&mut v)[i]` and `v.as_mut_slice()[i]` → `v[i]` (`v` a variable, a field or an
/// element). Written through the accessor, a compound assignment ran without its
/// derivative (`*=` lost its factor).
fn accessor_place(e: &Expr) -> Option<Expr> {
    let placeish = |x: &Expr| matches!(unparen(x), Expr::Path(_) | Expr::Field(_) | Expr::Index(_));
    match e {
        Expr::Paren(p) => accessor_place(&p.expr),
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => {
            let Expr::MethodCall(un) = unparen(&u.expr) else {
                return None;
            };
            if !(un.method == "unwrap" || un.method == "expect") {
                return None;
            }
            let Expr::MethodCall(acc) = unparen(&un.receiver) else {
                return None;
            };
            let name = acc.method.to_string();
            // `v.iter_mut().next()` / `.nth(k)`: the receiver of `iter_mut`.
            let (v, index): (&Expr, Expr) = match (name.as_str(), acc.args.len()) {
                ("last_mut", 0) if placeish(&acc.receiver) => {
                    let v = &acc.receiver;
                    (&**v, syn::parse_quote!(#v.len() - 1))
                }
                ("first_mut", 0) if placeish(&acc.receiver) => {
                    (&*acc.receiver, syn::parse_quote!(0))
                }
                ("get_mut", 1)
                    if placeish(&acc.receiver)
                        && !matches!(
                            &acc.args[0],
                            Expr::Range(_) | Expr::Tuple(_) | Expr::Reference(_)
                        ) =>
                {
                    (&*acc.receiver, acc.args[0].clone())
                }
                ("next" | "nth", _) => {
                    let Expr::MethodCall(it) = unparen(&acc.receiver) else {
                        return None;
                    };
                    if it.method != "iter_mut" || !it.args.is_empty() || !placeish(&it.receiver) {
                        return None;
                    }
                    let index = match (name.as_str(), acc.args.first()) {
                        ("next", None) => syn::parse_quote!(0),
                        ("nth", Some(k)) => k.clone(),
                        _ => return None,
                    };
                    (&*it.receiver, index)
                }
                _ => return None,
            };
            Some(syn::parse_quote_spanned!(acc.method.span()=> #v[#index]))
        }
        Expr::Index(i) => {
            let base = match unparen(&i.expr) {
                Expr::Reference(r) if r.mutability.is_some() && placeish(&r.expr) => {
                    (*r.expr).clone()
                }
                Expr::MethodCall(m)
                    if matches!(m.method.to_string().as_str(), "as_mut_slice" | "as_mut")
                        && m.args.is_empty()
                        && placeish(&m.receiver) =>
                {
                    (*m.receiver).clone()
                }
                _ => return None,
            };
            let index = &i.index;
            Some(syn::parse_quote!(#base[#index]))
        }
        _ => None,
    }
}

/// `chain.enumerate().max_by(cmp).map(|(i, _)| i).unwrap()` (or `min_by`, `max_by_key`,
/// `min_by_key`; `.unwrap_or(d)`, `.expect(m)`): the index of the best element, which
/// has no derivative: `no_grad(..)` of it.
fn arg_best_index(e: &Expr, active: &HashSet<String>) -> Option<Expr> {
    let Expr::MethodCall(outer) = e else {
        return None;
    };
    if !matches!(
        outer.method.to_string().as_str(),
        "unwrap" | "unwrap_or" | "expect"
    ) || !mentions_active(e, active)
    {
        return None;
    }
    let Expr::MethodCall(map) = unparen(&outer.receiver) else {
        return None;
    };
    if map.method != "map" || map.args.len() != 1 {
        return None;
    }
    // `|(i, _)| i`
    let Expr::Closure(c) = unparen(&map.args[0]) else {
        return None;
    };
    let Some(Pat::Tuple(t)) = c.inputs.first() else {
        return None;
    };
    let (Some(Pat::Ident(i)), Expr::Path(body)) = (t.elems.first(), unparen(&c.body)) else {
        return None;
    };
    if t.elems.len() != 2 || !body.path.is_ident(&i.ident) {
        return None;
    }
    let Expr::MethodCall(best) = unparen(&map.receiver) else {
        return None;
    };
    if !matches!(
        best.method.to_string().as_str(),
        "max_by" | "min_by" | "max_by_key" | "min_by_key"
    ) {
        return None;
    }
    let Expr::MethodCall(en) = unparen(&best.receiver) else {
        return None;
    };
    if en.method != "enumerate" {
        return None;
    }
    let span = outer.method.span();
    Some(syn::parse_quote_spanned!(span=> ::mochi::no_grad(#e)))
}

/// The best pair of two zipped sequences, `x.iter().zip(y.iter()).max_by(|p, q|
/// p.1.total_cmp(q.1)).unwrap()` (also `min_by`, `max_by_key`, `min_by_key`, `zip(y)`,
/// `.expect(..)`): its position found without a derivative by the same comparison over
/// the positions (`Iterator::max_by` keeps the last of equal elements, `min_by` the
/// first, and so does the search over positions), and the pair read there, `(&x[k],
/// &y[k])`.
fn best_of_zip(e: &Expr, active: &HashSet<String>, next: &mut usize) -> Option<(syn::Stmt, Expr)> {
    let Expr::MethodCall(outer) = e else {
        return None;
    };
    if !matches!(outer.method.to_string().as_str(), "unwrap" | "expect")
        || !mentions_active(e, active)
    {
        return None;
    }
    let Expr::MethodCall(best) = unparen(&outer.receiver) else {
        return None;
    };
    let name = best.method.to_string();
    let by_key = matches!(name.as_str(), "max_by_key" | "min_by_key");
    if !(by_key || matches!(name.as_str(), "max_by" | "min_by")) || best.args.len() != 1 {
        return None;
    }
    let Expr::Closure(c) = unparen(&best.args[0]) else {
        return None;
    };
    if c.inputs.len() != if by_key { 1 } else { 2 } {
        return None;
    }
    let Expr::MethodCall(z) = unparen(&best.receiver) else {
        return None;
    };
    // A sequence, and how many of its elements a `skip(n)` passes over (`x.iter().zip(
    // x.iter().skip(1))`, neighbours).
    let seq = |e: &Expr| -> Option<(Expr, Option<Expr>)> {
        let (e, skip) = match unparen(e) {
            Expr::MethodCall(m) if m.method == "skip" && m.args.len() == 1 => {
                (unparen(&m.receiver), Some(m.args[0].clone()))
            }
            other => (other, None),
        };
        let e = match e {
            Expr::MethodCall(m) if m.method == "iter" && m.args.is_empty() => unparen(&m.receiver),
            Expr::Reference(r) if r.mutability.is_none() && skip.is_none() => unparen(&r.expr),
            other if skip.is_none() => other,
            _ => return None,
        };
        matches!(e, Expr::Path(_) | Expr::Field(_)).then(|| (e.clone(), skip))
    };
    let span = best.method.span();
    // `x.iter().enumerate()`: the pair is the position and the element.
    let ((a, skip_a), b) = match (z.method.to_string().as_str(), z.args.len()) {
        ("zip", 1) => (seq(&z.receiver)?, Some(seq(&z.args[0])?)),
        ("enumerate", 0) => {
            let (a, skip) = seq(&z.receiver)?;
            if skip.is_some() {
                return None;
            }
            ((a, None), None)
        }
        _ => return None,
    };
    let (b, skip_b) = match b {
        Some((b, s)) => (Some(b), s),
        None => (None, None),
    };
    let offset = |s: &Option<Expr>| match s {
        Some(n) => quote_spanned!(span=> (#n) + ),
        None => TokenStream::new(),
    };
    let (oa, ob) = (offset(&skip_a), offset(&skip_b));
    let remaining = |x: &Expr, s: &Option<Expr>| match s {
        Some(n) => quote_spanned!(span=> #x.len().saturating_sub(#n)),
        None => quote_spanned!(span=> #x.len()),
    };
    *next += 1;
    let (k, i, j) = (
        format_ident!("__mochi_bk{}", *next, span = span),
        format_ident!("__mochi_bi{}", *next, span = span),
        format_ident!("__mochi_bj{}", *next, span = span),
    );
    let body = &c.body;
    let p0 = &c.inputs[0];
    let pair = |at: &syn::Ident| match &b {
        Some(b) => quote_spanned!(span=> (&#a[#oa *#at], &#b[#ob *#at])),
        None => quote_spanned!(span=> (*#at, &#a[*#at])),
    };
    let (pi, pj) = (pair(&i), pair(&j));
    let search = if by_key {
        quote_spanned!(span=> |#i: &usize| { let #p0 = &#pi; #body })
    } else {
        let p1 = &c.inputs[1];
        quote_spanned!(span=> |#i: &usize, #j: &usize| {
            let #p0 = &#pi;
            let #p1 = &#pj;
            #body
        })
    };
    let method = &best.method;
    let (finish, args) = (&outer.method, &outer.args);
    let (len, found) = match &b {
        Some(b) => (
            {
                let (la, lb) = (remaining(&a, &skip_a), remaining(b, &skip_b));
                quote_spanned!(span=> ::core::cmp::min(#la, #lb))
            },
            syn::parse_quote_spanned!(span=> (&#a[#oa #k], &#b[#ob #k])),
        ),
        None => (
            quote_spanned!(span=> #a.len()),
            syn::parse_quote_spanned!(span=> (#k, &#a[#k])),
        ),
    };
    Some((
        syn::parse_quote_spanned!(span=>
            let #k: usize = ::mochi::no_grad((0..#len).#method(#search).#finish(#args));
        ),
        found,
    ))
}

/// Functions that make iterators (`std::iter`'s and `itertools`'): not a chain's
/// computed source.
const ITERATOR_CALLS: &[&str] = &[
    "zip",
    "repeat",
    "repeat_n",
    "repeat_with",
    "once",
    "once_with",
    "empty",
    "from_fn",
    "successors",
    "izip",
    "multizip",
    "chain",
    "rev",
    "enumerate",
];

/// Methods of the standard library and the rule crates' types that give a view of
/// their receiver or no sequence: not bound as a chain's computed source.
const NOT_CHAIN_SOURCES: &[&str] = &[
    "as_ref",
    "as_mut",
    "as_slice",
    "as_mut_slice",
    "borrow",
    "borrow_mut",
    "view",
    "view_mut",
    "transpose",
    "as_array",
    "data",
    "chars",
    "bytes",
    "keys",
    "values",
    "lock",
    "unwrap",
    "expect",
];

/// The sources of a chain (`s` in `s.iter().enumerate().map(..)`, and `t` in its
/// `.zip(t.iter())` or `.zip(t)`) that are computed (a call, or a method call other than
/// a view of a variable) and carry derivatives: replaced in `chain` by fresh names,
/// which are returned with the sources, in the order they are evaluated.
fn bind_chain_source(
    chain: &mut Expr,
    active: &HashSet<String>,
    next: &mut usize,
) -> Vec<(syn::Ident, Expr)> {
    let mut out = Vec::new();
    bind_chain_sources(chain, active, next, &mut out);
    out
}

/// Whether `e` is computed (see [`bind_chain_source`]) and carries derivatives.
fn computed_source(e: &Expr, active: &HashSet<String>) -> bool {
    computed_source_of(e) && mentions_active(e, active)
}

/// Whether `e` is computed (see [`bind_chain_source`]), whatever it carries.
fn computed_source_of(e: &Expr) -> bool {
    let computed = match unparen(e) {
        // (Not the standard library's iterators, `zip(x, y)`, `repeat(v)`, which the
        // loop rewrites take as they are.)
        Expr::Call(c) => match &*c.func {
            Expr::Path(p) => !p.path.segments.iter().any(|s| {
                let n = s.ident.to_string();
                matches!(
                    n.as_str(),
                    "std" | "core" | "iter" | "itertools" | "ndarray" | "nalgebra" | "mochi"
                ) || ITERATOR_CALLS.contains(&n.as_str())
            }),
            _ => false,
        },
        // (A method of the user's, `l1.forward(&x).iter()`, returns a value the chain
        // rewrite needs as a variable too.)
        Expr::MethodCall(r) => {
            let name = r.method.to_string();
            // (A transposed view, `m.t().iter()`, is read in its own order: the chain
            // rewrite takes it by name, as `let mt = m.t();` is.)
            matches!(
                name.as_str(),
                "to_vec"
                    | "to_owned"
                    | "clone"
                    | "collect"
                    | "t"
                    | "reversed_axes"
                    | "permuted_axes"
            ) || !(crate::lower::expr::is_library_method(&name)
                || NOT_CHAIN_SOURCES.contains(&name.as_str()))
        }
        _ => false,
    };
    computed
}

/// The array literal a chain starts from, `[1.0, 2.0, 3.0]` of `[1.0, 2.0,
/// 3.0].iter().enumerate()` (also `&[..]`, `[e; n]`).
fn literal_source(e: &mut Expr) -> Option<&mut Expr> {
    let Expr::MethodCall(m) = e else { return None };
    let mut root = &mut *m.receiver;
    while let Expr::MethodCall(m) = root {
        root = &mut *m.receiver;
    }
    let literal = match &*root {
        Expr::Array(_) | Expr::Repeat(_) => true,
        Expr::Reference(r) => matches!(&*r.expr, Expr::Array(_) | Expr::Repeat(_)),
        _ => false,
    };
    literal.then_some(root)
}

/// `e` replaced by a fresh name, pushed with it on `out`.
fn bind_source(e: &mut Expr, next: &mut usize, out: &mut Vec<(syn::Ident, Expr)>) {
    let span = e.span();
    *next += 1;
    let name = format_ident!("__mochi_src{}", *next, span = span);
    let src = std::mem::replace(e, syn::parse_quote_spanned!(span=> #name));
    out.push((name, src));
}

fn bind_chain_sources(
    chain: &mut Expr,
    active: &HashSet<String>,
    next: &mut usize,
    out: &mut Vec<(syn::Ident, Expr)>,
) {
    bind_chain_sources_of(chain, active, false, next, out)
}

/// [`bind_chain_sources`], also of sources without a derivative when `any` (a `fold`
/// from a differentiable value over `network().iter()`, whose elements a closure
/// reads in an index loop).
fn bind_chain_sources_of(
    chain: &mut Expr,
    active: &HashSet<String>,
    any: bool,
    next: &mut usize,
    out: &mut Vec<(syn::Ident, Expr)>,
) {
    let Expr::MethodCall(m) = chain else {
        return;
    };
    let computed = |e: &Expr| {
        if any {
            computed_source_of(e)
        } else {
            computed_source(e, active)
        }
    };
    if (m.method == "iter" || m.method == "into_iter") && m.args.is_empty() {
        if computed(&m.receiver) {
            bind_source(&mut m.receiver, next, out);
        }
        return;
    }
    // (The receiver is evaluated before the arguments.)
    bind_chain_sources_of(&mut m.receiver, active, any, next, out);
    if m.method == "zip" && m.args.len() == 1 {
        let arg = &mut m.args[0];
        if computed(arg) {
            bind_source(arg, next, out);
        } else {
            bind_chain_sources_of(arg, active, any, next, out);
        }
    }
}

/// A body that ends in a `loop` left only by `return` (a line search, an iteration to
/// convergence): the loop as a statement and an unreachable tail after it, so that the
/// lowering, which carries the `return` out of the loop as a flag, has a place to
/// continue to.
fn diverging_tail_loop(b: &mut syn::Block) {
    let Some(syn::Stmt::Expr(Expr::Loop(l), None)) = b.stmts.last() else {
        return;
    };
    if !crate::iterchain::contains_return(&Expr::Loop(l.clone())) {
        return;
    }
    let Some(syn::Stmt::Expr(e, None)) = b.stmts.pop() else {
        unreachable!()
    };
    b.stmts.push(syn::Stmt::Expr(e, Some(Default::default())));
    b.stmts.push(syn::Stmt::Expr(
        syn::parse_quote!(
            #[allow(unreachable_code)]
            ::core::unreachable!()
        ),
        None,
    ));
}

/// `let p: Vec<f64> = x.iter().copied().filter(|v| *v > 0.0).collect();` (a chain
/// whose length depends on the values: `filter`, `filter_map`, `take_while`,
/// `skip_while`, `map_while`) as the loop the derivation takes, `{ let mut v: Vec<f64> =
/// Vec::new(); for e in chain { v.push(e); } v }`.
fn collect_by_loop(m: &syn::ExprMethodCall, ty: &syn::Type, next: &mut usize) -> Option<Expr> {
    let has_filter = |e: &Expr| {
        chain_calls(
            e,
            &[
                "filter",
                "filter_map",
                "take_while",
                "skip_while",
                "map_while",
            ],
        )
    };
    let syn::Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if last.ident != "Vec" || !m.args.is_empty() {
        return None;
    }
    let span = m.method.span();
    *next += 1;
    let (v, e) = (
        format_ident!("__mochi_kept{}", *next, span = span),
        format_ident!("__mochi_ke{}", *next, span = span),
    );
    let chain = &m.receiver;
    if has_filter(chain) {
        return Some(syn::parse_quote_spanned!(span=> {
            let mut #v: #ty = ::std::vec::Vec::new();
            for #e in #chain {
                #v.push(#e);
            }
            #v
        }));
    }
    // `let m: Vec<Vec<f64>> = (0..n).map(|i| (0..n).map(|j| x[i] * x[j]).collect())
    // .collect();`, `let v: Vec<f64> = (0..n).map(|j| x[i] * x[j]).collect();`: the
    // elements computed one by one, each a typed `let` (whose own chain is then
    // rewritten), pushed.
    let syn::PathArguments::AngleBracketed(a) = &last.arguments else {
        return None;
    };
    let Some(syn::GenericArgument::Type(row)) = a.args.first() else {
        return None;
    };
    let Expr::MethodCall(map) = unparen(chain) else {
        return None;
    };
    if map.method != "map" || map.args.len() != 1 {
        return None;
    }
    let Expr::Closure(c) = unparen(&map.args[0]) else {
        return None;
    };
    if c.inputs.len() != 1 {
        return None;
    }
    let (pat, src) = (&c.inputs[0], &map.receiver);
    // (A body in braces, `|i| { let r = ..; (0..n).map(..).collect() }`: its last
    // expression typed in its turn, as the element.)
    let body: Expr = match unparen(&c.body) {
        Expr::Block(b) if b.label.is_none() => match b.block.stmts.split_last() {
            Some((syn::Stmt::Expr(tail, None), stmts)) => {
                syn::parse_quote_spanned!(span=> { #(#stmts)* let #e: #row = #tail; #e })
            }
            _ => (*c.body).clone(),
        },
        other => other.clone(),
    };
    Some(syn::parse_quote_spanned!(span=> {
        let mut #v: #ty = ::std::vec::Vec::new();
        for #pat in #src {
            let #e: #row = #body;
            #v.push(#e);
        }
        #v
    }))
}

/// The parts of `let (a, b): (A, B) = recv.method(arg);` for the splits below: the two
/// names with their types and the call, when it mentions a differentiable value.
fn split_let<'a>(
    l: &'a syn::Local,
    active: &HashSet<String>,
    method: &str,
) -> Option<([(&'a Pat, &'a syn::Type); 2], &'a syn::ExprMethodCall)> {
    let Pat::Type(pt) = &l.pat else { return None };
    let (Pat::Tuple(names), syn::Type::Tuple(tys)) = (&*pt.pat, &*pt.ty) else {
        return None;
    };
    if names.elems.len() != 2 || tys.elems.len() != 2 {
        return None;
    }
    let init = l.init.as_ref()?;
    if init.diverge.is_some() || !mentions_active(&init.expr, active) {
        return None;
    }
    let Expr::MethodCall(u) = unparen(&init.expr) else {
        return None;
    };
    if u.method != method {
        return None;
    }
    Some((
        [
            (&names.elems[0], &tys.elems[0]),
            (&names.elems[1], &tys.elems[1]),
        ],
        u,
    ))
}

/// See `Desugar::visit_block_mut`: the two `let`s an `unzip()` of pairs becomes.
fn unzip_as_two(l: &syn::Local, active: &HashSet<String>) -> Option<Vec<syn::Stmt>> {
    let (names, u) = split_let(l, active, "unzip")?;
    if !u.args.is_empty() {
        return None;
    }
    let Expr::MethodCall(map) = unparen(&u.receiver) else {
        return None;
    };
    if map.method != "map" || map.args.len() != 1 {
        return None;
    }
    let Expr::Closure(c) = unparen(&map.args[0]) else {
        return None;
    };
    let Expr::Tuple(parts) = unparen(&c.body) else {
        return None;
    };
    if parts.elems.len() != 2 {
        return None;
    }
    let chain = &map.receiver;
    let span = u.method.span();
    let mut out = Vec::new();
    for ((name, ty), part) in names.into_iter().zip(parts.elems.iter()) {
        let mut one = c.clone();
        *one.body = part.clone();
        out.push(syn::parse_quote_spanned!(span=> let #name: #ty = #chain.map(#one).collect();));
    }
    Some(out)
}

/// See `Desugar::visit_block_mut`: `let (a, b): (A, B) = chain.partition(|p| e);` as
/// the two filters it is, `let a: A = chain.filter(|p| e).collect();` and `let b: B =
/// chain.filter(|p| !(e)).collect();` (the predicate is run twice per element).
fn partition_as_two(l: &syn::Local, active: &HashSet<String>) -> Option<Vec<syn::Stmt>> {
    let (names, u) = split_let(l, active, "partition")?;
    if u.args.len() != 1 {
        return None;
    }
    let Expr::Closure(keep) = unparen(&u.args[0]) else {
        return None;
    };
    let body = &keep.body;
    // A `return` in the predicate leaves the closure, so `!(body)` would not negate it.
    if keep.inputs.len() != 1 || contains_return(body) {
        return None;
    }
    let mut drop = keep.clone();
    *drop.body = syn::parse_quote!(!(#body));
    let chain = &u.receiver;
    let span = u.method.span();
    let [(a, ta), (b, tb)] = names;
    Some(vec![
        syn::parse_quote_spanned!(span=> let #a: #ta = #chain.filter(#keep).collect();),
        syn::parse_quote_spanned!(span=> let #b: #tb = #chain.filter(#drop).collect();),
    ])
}

/// The methods whose result is an `Option` (so that `Some(p)` matches it).
const OPTION_MAKERS: &[&str] = &[
    "first",
    "last",
    "get",
    "copied",
    "cloned",
    "reduce",
    "max_by",
    "min_by",
    "max_by_key",
    "min_by_key",
    "find",
    "find_map",
    "position",
    "rposition",
    "next",
    "next_back",
    "nth",
    "checked_div",
    "checked_sub",
    "checked_add",
    "checked_mul",
    "pop",
    "split_first",
    "split_last",
];

/// An `Option` held in a field or a variable (`self.l1.map(|c| c * s).unwrap_or(0.0)`,
/// `o.map_or(d, f)`, `self.clip.and_then(f)`): what else is mapped or chained and then
/// unwrapped or matched is an `Option`. (A `Result` held so is matched as one and fails
/// to compile at the `Some`.)
fn held_option(o: &Expr) -> bool {
    match unparen(o) {
        Expr::Field(f) => matches!(unparen(&f.base), Expr::Path(_) | Expr::Field(_)),
        Expr::Path(p) => p.path.get_ident().is_some(),
        _ => false,
    }
}

/// `chain.max_by(cmp)` of `chain.max_by(cmp).copied()` (also `cloned`): the call that
/// makes the `Option`.
fn chain_end(m: &syn::ExprMethodCall) -> &syn::ExprMethodCall {
    match unparen(&m.receiver) {
        Expr::MethodCall(r)
            if matches!(m.method.to_string().as_str(), "copied" | "cloned")
                && m.args.is_empty() =>
        {
            r
        }
        _ => m,
    }
}

/// An `Option` combinator that carries a derivative, as the `if let` the lowering
/// reverses: `o.map(|v| e).unwrap_or(d)`, `.map(f).unwrap_or_else(|| d)`,
/// `.map(f).unwrap_or_default()`, `o.map_or(d, |v| e)`, `o.map_or_else(|| d, |v| e)`
/// and `o.unwrap_or_default()` → `if let Some(v) = o { e } else { d }`;
/// `o.map(|v| e).unwrap()` → the same with a panic for `None`. `o` is a call that makes
/// an `Option` (`x.first()`, `x.get(i)`, `chain.reduce(f)`, …: [`OPTION_MAKERS`]); a
/// closure whose body returns or uses `?`, or whose parameter is not a name or `&name`,
/// is left as written.
fn option_combinator(
    e: &Expr,
    active: &HashSet<String>,
    users: &dyn Fn(&Expr) -> bool,
) -> Option<Expr> {
    let Expr::MethodCall(outer) = e else {
        return None;
    };
    if !mentions_active(e, active) {
        return None;
    }
    let span = outer.method.span();
    // (Also a call of a function of the user's, `safe_log(x).map_or(0.0, |v| v)`: a
    // `#[differentiable]` helper returning an `Option`.)
    // (And an option's own adapters on such a call: `x.last().copied().filter(p)`,
    // `x.get(i).copied().and_then(f)`, `g(x).or(d)`.)
    fn makes_option(o: &Expr, users: &dyn Fn(&Expr) -> bool) -> bool {
        match unparen(o) {
            Expr::MethodCall(m)
                if matches!(
                    m.method.to_string().as_str(),
                    "filter" | "and_then" | "or" | "or_else" | "map"
                ) && m.args.len() == 1 =>
            {
                makes_option(&m.receiver, users) || held_option(&m.receiver)
            }
            Expr::MethodCall(m) => {
                OPTION_MAKERS.contains(&m.method.to_string().as_str()) || users(o)
            }
            Expr::Call(c) => matches!(&*c.func, Expr::Path(p) if p.qself.is_none()
                && p.path.leading_colon.is_none()
                && p.path.segments[0].ident.to_string().starts_with(|ch: char| ch.is_lowercase())
                && (p.path.segments.len() == 1
                    || (p.path.segments.len() == 2 && p.path.segments[1].ident == "__twin"))),
            _ => false,
        }
    }
    // The closure's parameter as a `Some(..)` pattern, and its body.
    let some = |c: &Expr| -> Option<(Pat, Expr)> {
        let Expr::Closure(c) = unparen(c) else {
            return None;
        };
        if c.inputs.len() != 1 || c.asyncness.is_some() {
            return None;
        }
        let mut p = c.inputs[0].clone();
        if let Pat::Type(t) = p {
            p = (*t.pat).clone();
        }
        let plain =
            |p: &Pat| matches!(p, Pat::Ident(i) if i.by_ref.is_none() && i.subpat.is_none());
        let ok = match &p {
            Pat::Wild(_) => true,
            Pat::Reference(r) => r.mutability.is_none() && plain(&r.pat),
            other => plain(other),
        };
        let body = &c.body;
        let mut words = HashSet::new();
        idents(&quote::quote!(#body), &mut words);
        let tries = quote::quote!(#body).to_string().contains('?');
        if !ok || words.contains("return") || tries {
            return None;
        }
        Some((
            syn::parse_quote_spanned!(span=> Some(#p)),
            (*c.body).clone(),
        ))
    };
    // A closure of no arguments (`|| d`): its body.
    let thunk = |c: &Expr| -> Option<Expr> {
        let Expr::Closure(c) = unparen(c) else {
            return None;
        };
        let body = &c.body;
        let mut words = HashSet::new();
        idents(&quote::quote!(#body), &mut words);
        (c.inputs.is_empty()
            && !words.contains("return")
            && !quote::quote!(#body).to_string().contains('?'))
        .then(|| (*c.body).clone())
    };
    let default: Expr = syn::parse_quote_spanned!(span=> ::core::default::Default::default());
    let method = outer.method.to_string();
    let (o, pat, then, els): (Expr, Pat, Expr, Expr) = match (method.as_str(), outer.args.len()) {
        ("unwrap_or" | "unwrap_or_else" | "unwrap_or_default" | "unwrap", _) => {
            let Expr::MethodCall(inner) = unparen(&outer.receiver) else {
                // `o.unwrap_or_default()` of an `Option` made by a call.
                return None;
            };
            if inner.method == "map"
                && inner.args.len() == 1
                && (makes_option(&inner.receiver, users) || held_option(&inner.receiver))
            {
                let (pat, then) = some(&inner.args[0])?;
                let els = match (method.as_str(), outer.args.first()) {
                    ("unwrap_or", Some(d)) => d.clone(),
                    ("unwrap_or_else", Some(d)) => thunk(d)?,
                    ("unwrap_or_default", None) => default.clone(),
                    ("unwrap", None) => syn::parse_quote_spanned!(span=>
                        ::core::panic!("called `Option::unwrap()` on a `None` value")),
                    _ => return None,
                };
                ((*inner.receiver).clone(), pat, then, els)
            } else if matches!(method.as_str(), "unwrap_or" | "unwrap_or_else")
                && ((matches!(
                    chain_end(inner).method.to_string().as_str(),
                    "reduce"
                        | "max_by"
                        | "min_by"
                        | "max_by_key"
                        | "min_by_key"
                        | "nth"
                        | "last"
                        | "next"
                ) && matches!(unparen(&chain_end(inner).receiver), Expr::MethodCall(_)))
                    || (matches!(
                        inner.method.to_string().as_str(),
                        "filter" | "and_then" | "or" | "or_else"
                    ) && makes_option(&outer.receiver, users)))
            {
                // `x.iter().copied().reduce(f64::min).unwrap_or(0.0)`: the chain's
                // element when it has one; `x.get(i).copied().and_then(f).unwrap_or(d)`:
                // the adapter's `Option` (a `match`, `option_filter_or`), its value when
                // it has one.
                let v = format_ident!("__mochi_v", span = span);
                let els = match outer.args.first() {
                    Some(d) if method == "unwrap_or" => d.clone(),
                    Some(d) => thunk(d)?,
                    None => return None,
                };
                (
                    (*outer.receiver).clone(),
                    syn::parse_quote_spanned!(span=> Some(#v)),
                    syn::parse_quote_spanned!(span=> #v),
                    els,
                )
            } else if method == "unwrap_or_default" && makes_option(&outer.receiver, users) {
                let v = format_ident!("__mochi_v", span = span);
                (
                    (*outer.receiver).clone(),
                    syn::parse_quote_spanned!(span=> Some(#v)),
                    syn::parse_quote_spanned!(span=> #v),
                    default.clone(),
                )
            } else {
                return None;
            }
        }
        ("map_or", 2) if makes_option(&outer.receiver, users) || held_option(&outer.receiver) => {
            let (pat, then) = some(&outer.args[1])?;
            ((*outer.receiver).clone(), pat, then, outer.args[0].clone())
        }
        ("map_or_else", 2)
            if makes_option(&outer.receiver, users) || held_option(&outer.receiver) =>
        {
            let (pat, then) = some(&outer.args[1])?;
            ((*outer.receiver).clone(), pat, then, thunk(&outer.args[0])?)
        }
        _ => return None,
    };
    // `x.get(i).copied()`, `x.iter().max_by(cmp).copied()`: the element itself, bound
    // through the reference (the form the element options take).
    let (o, pat) = match unparen(&o) {
        Expr::MethodCall(c)
            if (c.method == "copied" || c.method == "cloned")
                && c.args.is_empty()
                && matches!(unparen(&c.receiver), Expr::MethodCall(m)
                if matches!(
                    m.method.to_string().as_str(),
                    "first"
                        | "last"
                        | "get"
                        | "max_by"
                        | "min_by"
                        | "max_by_key"
                        | "min_by_key"
                        | "find"
                        | "nth"
                        | "next"
                        | "next_back"
                )) =>
        {
            let pat = match pat {
                Pat::TupleStruct(mut t) => {
                    if let Some(Pat::Ident(i)) = t.elems.first().cloned() {
                        t.elems[0] = syn::parse_quote_spanned!(span=> &#i);
                    }
                    Pat::TupleStruct(t)
                }
                other => other,
            };
            ((*c.receiver).clone(), pat)
        }
        _ => (o, pat),
    };
    Some(syn::parse_quote_spanned!(span=>
        if let #pat = #o { #then } else { #els }
    ))
}

/// `if let P = e { A } else { B }` without `let`.
fn if_let(i: &syn::ExprIf, active: &HashSet<String>) -> Option<Expr> {
    let Expr::Let(l) = &*i.cond else { return None };
    let span = i.if_token.span;
    let then = &i.then_branch;
    let then: Expr = syn::parse_quote!(#then);
    let els = i.else_branch.as_ref().map(|(_, e)| (**e).clone());
    if let Some(binding) = some_binding(&l.pat) {
        return Some(option_branch(
            span,
            binding,
            &l.expr,
            &then,
            els.as_ref(),
            active,
        ));
    }
    let pat = &l.pat;
    let scrutinee = &l.expr;
    let els = els.unwrap_or_else(|| syn::parse_quote!({}));
    Some(syn::parse_quote_spanned!(span=> match #scrutinee { #pat => #then, _ => #els }))
}

/// `match e { Some(v) => A, None => B }` (either order, no guards) as an `if`.
fn option_match(m: &syn::ExprMatch, active: &HashSet<String>) -> Option<Expr> {
    if m.arms.len() != 2 || m.arms.iter().any(|a| a.guard.is_some()) {
        return None;
    }
    let (some, none) = if some_binding(&m.arms[0].pat).is_some() {
        (&m.arms[0], &m.arms[1])
    } else {
        (&m.arms[1], &m.arms[0])
    };
    let binding = some_binding(&some.pat)?;
    if !is_none_or_wild(&none.pat) {
        return None;
    }
    let span = m.match_token.span;
    let (a, b) = (stmts_of(&some.body), stmts_of(&none.body));
    let then: Expr = syn::parse_quote!({ #(#a)* });
    let els: Expr = syn::parse_quote!({ #(#b)* });
    Some(option_branch(
        span,
        binding,
        &m.expr,
        &then,
        Some(&els),
        active,
    ))
}

/// Whether `e` is an `Option` by its syntax: `Some(..)`, `None`, `c.then_some(..)`,
/// `c.then(..)`, or an `if`, `match` or block all of whose values are.
pub(crate) fn option_valued(e: &Expr) -> bool {
    let block = |b: &syn::Block| match b.stmts.last() {
        Some(syn::Stmt::Expr(t, None)) => option_valued(t),
        _ => false,
    };
    match unparen(e) {
        Expr::Call(c) => matches!(&*c.func, Expr::Path(p) if p.path.is_ident("Some")),
        Expr::Path(p) => p.path.is_ident("None"),
        Expr::MethodCall(m) => m.method == "then_some" || m.method == "then",
        Expr::Block(b) => block(&b.block),
        Expr::If(i) => {
            block(&i.then_branch)
                && i.else_branch
                    .as_ref()
                    .is_some_and(|(_, e)| option_valued(e))
        }
        Expr::Match(m) => !m.arms.is_empty() && m.arms.iter().all(|a| option_valued(&a.body)),
        _ => false,
    }
}

/// `o.filter(p)`, `o.or(d)`, `o.or_else(|| d)` and `o.and_then(f)` of an element's
/// `Option` (`x.first()`, `x.last()`, `x.get(i)`, then `copied`, `cloned` or `map(..)`)
/// of a differentiable sequence, as the `match` each is: `match o { Some(v) if p(&v) =>
/// Some(v), _ => None }`, `match o { Some(v) => Some(v), None => d }`, `match o {
/// Some(v) => f(v), None => None }`, which the `Option` arms then read.
fn option_filter_or(e: &Expr, active: &HashSet<String>) -> Option<Expr> {
    let Expr::MethodCall(m) = e else { return None };
    let name = m.method.to_string();
    if m.args.len() != 1 || !matches!(name.as_str(), "filter" | "or" | "or_else" | "and_then") {
        return None;
    }
    // The receiver: an element's `Option`, possibly copied or mapped.
    let mut r = unparen(&m.receiver);
    while let Expr::MethodCall(c) = r {
        let adapter = (c.args.is_empty() && (c.method == "copied" || c.method == "cloned"))
            || (c.method == "map" && c.args.len() == 1);
        if !adapter {
            break;
        }
        r = unparen(&c.receiver);
    }
    let span = m.method.span();
    // (Or an `Option` field of a value that carries derivatives, `self.clip.and_then(f)`.)
    if !(held_option(r) && matches!(unparen(r), Expr::Field(_)) && mentions_active(r, active)) {
        element_option(r, active, span)?;
    }
    let o = &m.receiver;
    let v = format_ident!("__mochi_some", span = span);
    let arg = &m.args[0];
    let closure = |c: &Expr, arity: usize| match c {
        Expr::Closure(c) if c.inputs.len() == arity && c.asyncness.is_none() => Some((
            c.inputs.iter().cloned().collect::<Vec<Pat>>(),
            (*c.body).clone(),
        )),
        _ => None,
    };
    Some(match name.as_str() {
        "filter" => {
            let (pats, body) = closure(arg, 1)?;
            let pat = &pats[0];
            syn::parse_quote_spanned!(span=> match #o {
                Some(#v) if { let #pat = &#v; #body } => Some(#v),
                _ => None,
            })
        }
        "or" => syn::parse_quote_spanned!(span=> match #o { Some(#v) => Some(#v), None => #arg }),
        "or_else" => {
            let (_, body) = closure(arg, 0)?;
            syn::parse_quote_spanned!(span=> match #o { Some(#v) => Some(#v), None => #body })
        }
        _ => {
            let (pats, body) = closure(arg, 1)?;
            let pat = &pats[0];
            syn::parse_quote_spanned!(span=> match #o {
                Some(#v) => { let #pat = #v; #body }
                None => None,
            })
        }
    })
}

/// `State { pos: s.pos.iter().map(f).collect(), .. }`: a differentiable chain collected
/// into a field, whose type the syntax does not show, is collected into a `Vec`
/// (`collect::<Vec<_>>()`), as the field of a struct deriving `Tangent` holding a
/// sequence is; without it the chain stayed a chain of calls with no rules.
struct CollectedFields<'a> {
    active: &'a HashSet<String>,
}

/// The `Vec` an untyped `collect()` of a chain makes: `Vec<Vec<_>>` where the chain's
/// last `map` makes rows (`.map(|c| c.to_vec())`, `.map(|r| r.iter()…collect())`,
/// `.map(|r| vec![..])`), `Vec<_>` otherwise.
fn collected_vec(chain: &Expr) -> syn::AngleBracketedGenericArguments {
    let rows = match unparen(chain) {
        Expr::MethodCall(m) if m.method == "map" && m.args.len() == 1 => match &m.args[0] {
            Expr::Closure(c) => match unparen(&c.body) {
                Expr::MethodCall(t) => {
                    matches!(t.method.to_string().as_str(), "to_vec" | "collect")
                        && t.args.is_empty()
                }
                Expr::Macro(mm) => mm.mac.path.is_ident("vec"),
                _ => false,
            },
            _ => false,
        },
        _ => false,
    };
    if rows {
        syn::parse_quote!(::<Vec<Vec<_>>>)
    } else {
        syn::parse_quote!(::<Vec<_>>)
    }
}

/// The fields of struct literals in `e` (not inside closures or blocks of their own)
/// that collect a differentiable chain into a field holding the crate's structs (`Cloud
/// { pts: self.pts.iter().map(|p| *p * k).collect(), .. }`, [`crate::twin::
/// field_sequence`]): each chain bound first to a typed local, `let f: Vec<V3> =
/// chain.collect();`, which the derivation writes as a loop over structs, and the
/// field given the local. The `let`s, in order.
fn hoisted_struct_collects(
    e: &mut Expr,
    active: &HashSet<String>,
    next: &mut usize,
) -> Vec<syn::Stmt> {
    struct H<'a> {
        active: &'a HashSet<String>,
        next: &'a mut usize,
        lets: Vec<syn::Stmt>,
    }
    impl VisitMut for H<'_> {
        fn visit_expr_closure_mut(&mut self, _: &mut syn::ExprClosure) {}
        fn visit_block_mut(&mut self, _: &mut syn::Block) {}
        fn visit_expr_struct_mut(&mut self, st: &mut syn::ExprStruct) {
            syn::visit_mut::visit_expr_struct_mut(self, st);
            let Some(ty) = st.path.segments.last().map(|s| {
                if s.ident == "Self" {
                    crate::twin::impl_type().unwrap_or_default()
                } else {
                    s.ident.to_string()
                }
            }) else {
                return;
            };
            for f in st.fields.iter_mut() {
                let syn::Member::Named(n) = &f.member else {
                    continue;
                };
                let Some(elem) = crate::twin::field_sequence(&ty, &n.to_string()) else {
                    continue;
                };
                let Expr::MethodCall(m) = &f.expr else {
                    continue;
                };
                if m.method != "collect"
                    || !m.args.is_empty()
                    || m.turbofish.is_some()
                    || !mentions_active(&m.receiver, self.active)
                {
                    continue;
                }
                let span = m.method.span();
                let (v, elem) = (
                    format_ident!("__mochi_field{}", *self.next, span = span),
                    format_ident!("{}", elem, span = span),
                );
                *self.next += 1;
                let chain = &f.expr;
                self.lets.push(
                    syn::parse_quote_spanned!(span=> let #v: ::std::vec::Vec<#elem> = #chain;),
                );
                f.expr = syn::parse_quote_spanned!(span=> #v);
            }
        }
    }
    let mut h = H {
        active,
        next,
        lets: Vec::new(),
    };
    h.visit_expr_mut(e);
    h.lets
}

impl VisitMut for CollectedFields<'_> {
    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        let mut out = Vec::with_capacity(b.stmts.len());
        let mut next = 0;
        for mut st in std::mem::take(&mut b.stmts) {
            let lets = match &mut st {
                syn::Stmt::Expr(e, _) => hoisted_struct_collects(e, self.active, &mut next),
                syn::Stmt::Local(l) => match l.init.as_mut() {
                    Some(init) if init.diverge.is_none() => {
                        hoisted_struct_collects(&mut init.expr, self.active, &mut next)
                    }
                    _ => Vec::new(),
                },
                _ => Vec::new(),
            };
            out.extend(lets);
            out.push(st);
        }
        b.stmts = out;
        syn::visit_mut::visit_block_mut(self, b);
    }

    fn visit_expr_struct_mut(&mut self, st: &mut syn::ExprStruct) {
        syn::visit_mut::visit_expr_struct_mut(self, st);
        for f in st.fields.iter_mut() {
            if let Expr::MethodCall(m) = &mut f.expr {
                if m.method == "collect"
                    && m.args.is_empty()
                    && m.turbofish.is_none()
                    && mentions_active(&m.receiver, self.active)
                {
                    m.turbofish = Some(collected_vec(&m.receiver));
                }
            }
        }
    }

    // `fold(x.to_vec(), |h, l| l.forward(&h).iter().map(f).collect())`: the state is a
    // `Vec`, and so is what the closure collects.
    fn visit_expr_method_call_mut(&mut self, m: &mut syn::ExprMethodCall) {
        syn::visit_mut::visit_expr_method_call_mut(self, m);
        if m.method != "fold" || m.args.len() != 2 {
            return;
        }
        let vec_init = match unparen(&m.args[0]) {
            Expr::MethodCall(i) => {
                matches!(
                    i.method.to_string().as_str(),
                    "to_vec" | "to_owned" | "clone"
                ) && i.args.is_empty()
            }
            Expr::Macro(mm) => mm.mac.path.is_ident("vec"),
            _ => false,
        };
        if !vec_init || !mentions_active(&m.args[0], self.active) {
            return;
        }
        let Expr::Closure(c) = &mut m.args[1] else {
            return;
        };
        let mut tail: &mut Expr = &mut c.body;
        while let Expr::Block(b) = tail {
            match b.block.stmts.last_mut() {
                Some(syn::Stmt::Expr(e, None)) => tail = e,
                _ => return,
            }
        }
        if let Expr::MethodCall(t) = tail {
            if t.method == "collect" && t.args.is_empty() && t.turbofish.is_none() {
                t.turbofish = Some(collected_vec(&t.receiver));
            }
        }
    }
}

/// `x.iter().fold(init, |h, e| { .. if c { h.iter().map(f).collect() } else { z } })` with
/// `init` a `Vec` as written (`x.to_vec()`, `vec![..]`, `Vec::new()`): each `collect`
/// the closure's value may be (its tail, an `if`'s or a `match`'s branches) typed
/// `Vec<_>`, as the accumulator is, so that the chain is rewritten as a typed one.
struct FoldCollects;

impl FoldCollects {
    fn vec_init(e: &Expr) -> bool {
        match unparen(e) {
            Expr::MethodCall(m) => m.method == "to_vec" && m.args.is_empty(),
            Expr::Macro(m) => m.mac.path.is_ident("vec"),
            Expr::Call(c) => matches!(&*c.func, Expr::Path(p)
                if p.path.segments.len() == 2 && p.path.segments[0].ident == "Vec"),
            _ => false,
        }
    }
}

impl VisitMut for FoldCollects {
    fn visit_expr_method_call_mut(&mut self, m: &mut syn::ExprMethodCall) {
        syn::visit_mut::visit_expr_method_call_mut(self, m);
        if m.method != "fold" || m.args.len() != 2 || !Self::vec_init(&m.args[0]) {
            return;
        }
        if let Expr::Closure(c) = &mut m.args[1] {
            CollectAsReturned(&syn::parse_quote!(Vec<_>)).annotate(&mut c.body);
        }
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// `v = chain.collect();` of a local declared with its type (`let mut ps: Vec<P> =
/// Vec::new();`) → `let t: Vec<P> = chain.collect(); v = t;`: the collect is typed as a
/// typed `let`'s is (a sequence of the user's structs, rows), where without it the
/// derivation takes the elements for floats. Only names declared once, with a type.
fn typed_assigned_collects(b: &mut syn::Block) {
    struct Declared(std::collections::HashMap<String, Option<syn::Type>>);
    impl<'ast> syn::visit::Visit<'ast> for Declared {
        fn visit_local(&mut self, l: &'ast syn::Local) {
            let (name, ty) = match &l.pat {
                Pat::Type(pt) => match &*pt.pat {
                    Pat::Ident(i) => (i.ident.to_string(), Some((*pt.ty).clone())),
                    _ => (String::new(), None),
                },
                Pat::Ident(i) => (i.ident.to_string(), None),
                _ => (String::new(), None),
            };
            if !name.is_empty() {
                // (A second declaration, typed or not, makes the name ambiguous.)
                let seen = self.0.contains_key(&name);
                self.0.insert(name, if seen { None } else { ty });
            }
            let mut names = Vec::new();
            crate::activity::pat_names(&l.pat, &mut names);
            for n in names {
                self.0.entry(n).or_insert(None);
            }
            if let Some(init) = &l.init {
                self.visit_expr(&init.expr);
                if let Some((_, e)) = &init.diverge {
                    self.visit_expr(e);
                }
            }
        }
        fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
            // Bound by a closure's or a loop's pattern: not the declared one.
            self.0.insert(p.ident.to_string(), None);
        }
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut d = Declared(std::collections::HashMap::new());
    syn::visit::Visit::visit_block(&mut d, b);
    let typed: std::collections::HashMap<String, syn::Type> =
        d.0.into_iter().filter_map(|(n, t)| Some((n, t?))).collect();
    if typed.is_empty() {
        return;
    }
    struct Assigned<'a> {
        typed: &'a std::collections::HashMap<String, syn::Type>,
        next: usize,
    }
    impl VisitMut for Assigned<'_> {
        fn visit_block_mut(&mut self, b: &mut syn::Block) {
            syn::visit_mut::visit_block_mut(self, b);
            let mut out = Vec::with_capacity(b.stmts.len());
            for s in std::mem::take(&mut b.stmts) {
                let found = match &s {
                    syn::Stmt::Expr(Expr::Assign(a), Some(_)) => {
                        match (&*a.left, unparen(&a.right)) {
                            (Expr::Path(p), Expr::MethodCall(m))
                                if m.method == "collect"
                                    && m.args.is_empty()
                                    && m.turbofish.is_none() =>
                            {
                                p.path
                                    .get_ident()
                                    .and_then(|i| {
                                        Some((i.clone(), self.typed.get(&i.to_string())?))
                                    })
                                    .map(|(i, t)| (i, t.clone(), (*a.right).clone()))
                            }
                            _ => None,
                        }
                    }
                    _ => None,
                };
                match found {
                    Some((name, ty, value)) => {
                        self.next += 1;
                        let span = value.span();
                        let t = format_ident!("__mochi_collected{}", self.next, span = span);
                        out.push(syn::parse_quote_spanned!(span=> let #t: #ty = #value;));
                        out.push(syn::parse_quote_spanned!(span=> #name = #t;));
                    }
                    None => out.push(s),
                }
            }
            b.stmts = out;
        }
        fn visit_item_mut(&mut self, _: &mut syn::Item) {}
    }
    Assigned {
        typed: &typed,
        next: 0,
    }
    .visit_block_mut(b);
}

/// `let r: Vec<&f64> = x.iter().collect();` with the element type inferred, `Vec<_>`:
/// the derivation collects a differentiable chain's elements by value (read as `r[k]`
/// and `*r[k]` alike), which the written `&f64` would refuse (a type error at the
/// attribute).
struct CollectedRefsInferred;

impl VisitMut for CollectedRefsInferred {
    fn visit_local_mut(&mut self, l: &mut syn::Local) {
        syn::visit_mut::visit_local_mut(self, l);
        let collects = l.init.as_ref().is_some_and(|i| {
            i.diverge.is_none()
                && matches!(&*i.expr, Expr::MethodCall(m) if m.method == "collect" && m.turbofish.is_none())
        });
        let Pat::Type(pt) = &mut l.pat else { return };
        if !collects {
            return;
        }
        let syn::Type::Path(tp) = &mut *pt.ty else {
            return;
        };
        let Some(last) = tp.path.segments.last_mut() else {
            return;
        };
        if last.ident != "Vec" {
            return;
        }
        let syn::PathArguments::AngleBracketed(args) = &mut last.arguments else {
            return;
        };
        if let Some(syn::GenericArgument::Type(syn::Type::Reference(r))) = args.args.first() {
            // (A reference to a float, or to the generic form's scalar, only: rows
            // `Vec<&[f64]>` stay references.)
            let float = matches!(&*r.elem, syn::Type::Path(p)
                if p.path.is_ident("f64") || p.path.is_ident("f32") || p.path.is_ident(crate::twin::PARAM));
            if r.mutability.is_none() && float {
                let span = r.and_token.span;
                args.args[0] = syn::GenericArgument::Type(syn::parse_quote_spanned!(span=> _));
            }
        }
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// `x.iter().find(p)` of a differentiable sequence `x` (also `x.iter().copied().find(p)`,
/// `x.iter().find(p).copied()`, `cloned`, `rfind` by `rposition`, and `find_map(f)`, the
/// first element where `f` gives `Some` and `f` there) as the search by index it is: `{ let k =
/// x.iter().position(|e| { let P = &e; .. }); if let Some(k) = k { Some(x[k]) } else {
/// None } }` (`Some(&x[k])` for the element by reference). The index carries no
/// derivative; the element read carries the derivative to `x[k]`.
fn find_by_position(e: &Expr, active: &HashSet<String>) -> Option<Expr> {
    let Expr::MethodCall(outer) = e else {
        return None;
    };
    let (find, mut by_value) = match outer.method.to_string().as_str() {
        "copied" | "cloned" if outer.args.is_empty() => match unparen(&outer.receiver) {
            Expr::MethodCall(f) if f.method == "find" || f.method == "rfind" => (f, true),
            _ => return None,
        },
        "find" | "rfind" | "find_map" => (outer, false),
        _ => return None,
    };
    if find.args.len() != 1 {
        return None;
    }
    let find_map = find.method == "find_map";
    // `x.iter()` or `x.iter().copied()` / `.cloned()`.
    let mut src = unparen(&find.receiver);
    if let Expr::MethodCall(c) = src {
        if c.args.is_empty() && (c.method == "copied" || c.method == "cloned") {
            by_value = true;
            src = unparen(&c.receiver);
        }
    }
    let Expr::MethodCall(it) = src else {
        return None;
    };
    if it.method != "iter" || !it.args.is_empty() {
        return find_through_adapters(find, by_value, active);
    }
    let x = unparen(&it.receiver);
    if !matches!(x, Expr::Path(_) | Expr::Field(_)) || !mentions_active(x, active) {
        return None;
    }
    let span = find.method.span();
    let p = &find.args[0];
    // The predicate takes a reference to the item; `position` gives the item itself.
    let test = predicate_on_item(p, span);
    let pred: Expr = syn::parse_quote_spanned!(span=> |__mochi_e| #test);
    let items = &find.receiver;
    let elem = if by_value {
        quote_spanned!(span=> #x[__mochi_k])
    } else {
        quote_spanned!(span=> &#x[__mochi_k])
    };
    let position = if find.method == "rfind" {
        quote_spanned!(span=> rposition)
    } else {
        quote_spanned!(span=> position)
    };
    if find_map {
        // `x.iter().find_map(|v| body)`: the first element whose `body` is `Some`, and
        // `body` there (its value carries the derivative).
        let Expr::Closure(c) = p else { return None };
        if c.inputs.len() != 1 || c.asyncness.is_some() {
            return None;
        }
        let (pat, body) = (&c.inputs[0], &c.body);
        // `|&v|` of a reference: `let v = x[k];`, a copy (a `&` pattern binds nothing
        // the derivation can follow).
        let (bind, elem) = match (pat, by_value) {
            (Pat::Reference(r), false) => (&*r.pat, quote_spanned!(span=> #x[__mochi_k])),
            _ => (pat, elem),
        };
        return Some(syn::parse_quote_spanned!(span=> {
            let __mochi_k = #items.position(|#pat| (#body).is_some());
            if let Some(__mochi_k) = __mochi_k { let #bind = #elem; #body } else { None }
        }));
    }
    Some(syn::parse_quote_spanned!(span=> {
        let __mochi_k = #items.#position(#pred);
        if let Some(__mochi_k) = __mochi_k { Some(#elem) } else { None }
    }))
}

/// `let pts: Vec<_> = chain.map(|c| P2(c[0], c[1])).collect();`: the element type
/// written, `Vec<P2>`, as the user would for a `Vec` of structs (see
/// [`crate::iterchain::built_struct`]).
pub fn struct_elements_named(l: &mut syn::Local) {
    let (Pat::Type(t), Some(init)) = (&mut l.pat, &l.init) else {
        return;
    };
    let Expr::MethodCall(m) = unparen(&init.expr) else {
        return;
    };
    if m.method != "collect" || !m.args.is_empty() || m.turbofish.is_some() {
        return;
    }
    if !matches!(crate::iterchain::vec_elem(&t.ty), Some(None)) {
        return;
    }
    if let Some(elem) = crate::iterchain::built_struct(unparen(&m.receiver)) {
        *t.ty = syn::parse_quote!(::std::vec::Vec<#elem>);
    }
}

/// `Vec<__MochiTwinV2<T>>`, `&[<V2 as LiftField>::Of<T>]`: a sequence of a struct's generic
/// mirror, in a generic form (see [`Receiver::user_elements`] for the structs
/// themselves).
pub fn mirror_elements(t: &syn::Type) -> bool {
    // (Also `<V2 as LiftField>::Of<T>`, how the generic form names the mirror.)
    matches!(sequence_element(t), Some(syn::Type::Path(p))
    if p.path.segments.last().is_some_and(|s| {
        s.ident.to_string().starts_with("__MochiTwin") || (p.qself.is_some() && s.ident == "Of")
    }))
}

/// A sequence of tuples (`Vec<(f64, f64)>`, `&[(f64, usize)]`, `[(f64, f64); 3]`): its
/// chains are index loops, as a sequence of structs' are (the sequence rules hold
/// floats).
pub fn tuple_elements(t: &syn::Type) -> bool {
    matches!(sequence_element(t), Some(syn::Type::Tuple(e)) if !e.elems.is_empty())
}

/// The element type of a slice, an array or a `Vec`, or of a reference to one.
fn sequence_element(t: &syn::Type) -> Option<&syn::Type> {
    let t = match t {
        syn::Type::Reference(r) => &*r.elem,
        other => other,
    };
    match t {
        syn::Type::Slice(s) => Some(&*s.elem),
        syn::Type::Array(a) => Some(&*a.elem),
        other => crate::iterchain::vec_elem(other).flatten(),
    }
}

/// A `find` predicate `p` applied to a reference to `__mochi_e`, the item: a closure's
/// body with its pattern bound (`{ let &&v = &__mochi_e; v < 0.0 }`), another
/// predicate called.
fn predicate_on_item(p: &Expr, span: Span) -> Expr {
    match unparen(p) {
        Expr::Closure(c) if c.inputs.len() == 1 && c.asyncness.is_none() => {
            let (pat, body) = (&c.inputs[0], &c.body);
            syn::parse_quote_spanned!(span=> { let #pat = &__mochi_e; #body })
        }
        _ => syn::parse_quote_spanned!(span=> (#p)(&__mochi_e)),
    }
}

/// A search giving an element by reference, taken out of its `Option` at once (see
/// [`find_by_position`]): `*F.unwrap_or(&d)`, `F.unwrap_or(&d)`, `*F.unwrap()`, as
/// `F.copied().unwrap_or(d)` and `F.copied().unwrap()`.
fn find_by_value(e: &Expr, active: &HashSet<String>) -> Option<Expr> {
    let (call, deref) = match unparen(e) {
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => match unparen(&u.expr) {
            Expr::MethodCall(m) => (m, true),
            _ => return None,
        },
        Expr::MethodCall(m) => (m, false),
        _ => return None,
    };
    let default = match (call.method.to_string().as_str(), call.args.first()) {
        ("unwrap_or", Some(Expr::Reference(r))) if r.mutability.is_none() => Some(&*r.expr),
        ("unwrap", None) if deref => None,
        _ => return None,
    };
    let Expr::MethodCall(f) = unparen(&call.receiver) else {
        return None;
    };
    if !matches!(f.method.to_string().as_str(), "find" | "rfind") {
        return None;
    }
    let copied: Expr = syn::parse_quote_spanned!(f.method.span()=> #f.copied());
    let found = find_by_position(&copied, active)?;
    let method = &call.method;
    Some(match default {
        Some(d) => syn::parse_quote_spanned!(method.span()=> #found.#method(#d)),
        None => syn::parse_quote_spanned!(method.span()=> #found.#method()),
    })
}

/// `x.iter().skip(k).find(p)` and the like: a search through adapters that keep each
/// element's place (`skip`, `take`, `rev`, `step_by`, `copied`/`cloned`) and at most one
/// `map(f)`, as the same adapters over the indices, `(0..x.len()).skip(k).find(|&i| ..)`,
/// the predicate given the element `x[i]` makes (`f(x[i])` through a `map`), and that
/// element read at the index found: `Some(x[k])` (`Some(&x[k])` by reference, `Some(f(x[k]))`
/// through a `map`). The index carries no derivative; the element read carries it.
fn find_through_adapters(
    find: &syn::ExprMethodCall,
    copied: bool,
    active: &HashSet<String>,
) -> Option<Expr> {
    // The items are elements (`copied`, `cloned`) or references to them.
    let mut by_value = false;
    if find.method == "find_map" {
        return None;
    }
    let mut adapters: Vec<&syn::ExprMethodCall> = Vec::new();
    let mut map: Option<&syn::ExprClosure> = None;
    let mut src = unparen(&find.receiver);
    let x = loop {
        let Expr::MethodCall(m) = src else {
            return None;
        };
        match (m.method.to_string().as_str(), m.args.len()) {
            ("iter", 0) => break unparen(&m.receiver),
            ("copied" | "cloned", 0) if map.is_none() => by_value = true,
            // (Their arguments are counts.)
            ("rev", 0) | ("skip" | "take" | "step_by", 1) => adapters.push(m),
            ("map", 1) if map.is_none() => match unparen(&m.args[0]) {
                Expr::Closure(c) if c.inputs.len() == 1 && c.asyncness.is_none() => map = Some(c),
                _ => return None,
            },
            _ => return None,
        }
        src = unparen(&m.receiver);
    };
    if adapters.is_empty() && map.is_none()
        || !matches!(x, Expr::Path(_) | Expr::Field(_))
        || !mentions_active(x, active)
    {
        return None;
    }
    let span = find.method.span();
    // The element at index `i` as the search sees it.
    let read = |i: TokenStream| -> Expr {
        let item: Expr = if by_value {
            syn::parse_quote_spanned!(span=> #x[#i])
        } else {
            syn::parse_quote_spanned!(span=> &#x[#i])
        };
        match map {
            Some(c) => {
                let (pat, body) = (&c.inputs[0], &c.body);
                syn::parse_quote_spanned!(span=> { let #pat = #item; #body })
            }
            None => item,
        }
    };
    let mut indices: Expr = syn::parse_quote_spanned!(span=> (0..#x.len()));
    for a in adapters.iter().rev() {
        let (m, args) = (&a.method, &a.args);
        indices = syn::parse_quote_spanned!(span=> #indices.#m(#args));
    }
    let seen = read(quote_spanned!(span=> __mochi_i));
    let found = read(quote_spanned!(span=> __mochi_k));
    // `.find(p).copied()`: the element by value.
    let found: Expr = if copied && !by_value && map.is_none() {
        syn::parse_quote_spanned!(span=> #x[__mochi_k])
    } else {
        found
    };
    let test = predicate_on_item(&find.args[0], span);
    let search = if find.method == "rfind" {
        quote_spanned!(span=> rev().find)
    } else {
        quote_spanned!(span=> find)
    };
    Some(syn::parse_quote_spanned!(span=> {
        let __mochi_k = #indices.#search(|&__mochi_i| {
            let __mochi_e = #seen;
            #test
        });
        if let Some(__mochi_k) = __mochi_k { Some(#found) } else { None }
    }))
}

/// A `match` on an `Option` with guards or more than two arms (`match o { Some(t) if t >
/// 1.0 => A, Some(t) => B, None => C }`, `_` arms too) as the two-arm `match`
/// [`option_match`] takes, each case's arms an `if` chain on their guards: `match o {
/// Some(t) => if t > 1.0 { A } else { B }, None => C }`. An arm that names the value
/// differently (`Some(u)`) binds its name from the first one's; arms after a case's
/// first unguarded arm are unreachable in it. Bindings through `&` and by value are
/// not mixed.
fn option_arms(m: &syn::ExprMatch) -> Option<syn::ExprMatch> {
    enum Case {
        Some(Option<SomeBinding>),
        None,
        Wild,
    }
    let cases: Vec<Case> = m
        .arms
        .iter()
        .map(|a| match (&a.pat, some_binding(&a.pat)) {
            (_, Some(b)) => Some(Case::Some(b)),
            (Pat::Wild(_), None) => Some(Case::Wild),
            (p, None) if is_none_or_wild(p) => Some(Case::None),
            _ => None,
        })
        .collect::<Option<_>>()?;
    if !cases.iter().any(|c| matches!(c, Case::Some(_)))
        || (m.arms.len() == 2 && m.arms.iter().all(|a| a.guard.is_none()))
    {
        return None;
    }
    let first = cases.iter().find_map(|c| match c {
        Case::Some(Some(b)) => Some(b),
        _ => None,
    });
    let span = m.match_token.span;
    // The value is bound under a name of its own, which each arm binds its name from: an
    // arm that binds another name, or none (`Some(w) => w * v`, `_ => s * 0.25`), reads
    // the function's `v` or `s` as written, not the first arm's binding (before, the
    // first arm's name was bound for all of them: a wrong value).
    let payload = format_ident!("__mochi_some", span = span);
    let chain = |some: bool| -> Option<Expr> {
        let mut arms = Vec::new();
        for (a, c) in m.arms.iter().zip(&cases) {
            let rename = match c {
                Case::Some(b) if some => match (b, first) {
                    (Some(b), Some(f)) => {
                        if b.through_ref != f.through_ref {
                            return None;
                        }
                        let (to, mu) = (&b.name.ident, &b.name.mutability);
                        Some(quote_spanned!(span=> let #mu #to = #payload;))
                    }
                    _ => None,
                },
                Case::None if !some => None,
                Case::Wild => None,
                _ => continue,
            };
            arms.push((rename, a));
            if a.guard.is_none() {
                break;
            }
        }
        if arms.last()?.1.guard.is_some() {
            return None;
        }
        let mut out: Option<Expr> = None;
        for (rename, a) in arms.into_iter().rev() {
            let body = stmts_of(&a.body);
            let block: Expr = syn::parse_quote_spanned!(span=> { #rename #(#body)* });
            out = Some(match (&a.guard, out) {
                (None, _) => block,
                (Some((_, g)), Some(rest)) => {
                    syn::parse_quote_spanned!(span=> if { #rename #g } #block else #rest)
                }
                (Some(_), None) => return None,
            });
        }
        out
    };
    let (some, none) = (chain(true)?, chain(false)?);
    let pat: Pat = match first {
        Some(b) => {
            if b.through_ref {
                if b.name.mutability.is_some() {
                    return None;
                }
                syn::parse_quote_spanned!(span=> Some(&#payload))
            } else {
                syn::parse_quote_spanned!(span=> Some(#payload))
            }
        }
        None => syn::parse_quote_spanned!(span=> Some(_)),
    };
    let scrutinee = &m.expr;
    syn::parse2(quote_spanned!(span=> match #scrutinee { #pat => #some, None => #none })).ok()
}

/// `match r { Ok(v) => A, Err(e) => B }` (either order, `_` for either part, no
/// guards; also `if let Ok(v) = r { A } else { B }`, which is such a `match` by now) as
/// `{ let t = r; if t.is_ok() { let v = t.unwrap(); A } else { let e = no_grad(…); B } }`:
/// the value's derivative flows through `unwrap` (a `Result`'s cotangent is its
/// value's), the error carries none and is bound by reference (`&E`: enough to print
/// it or to test it). `cholesky(..)` and other factorizations that may
/// fail return such a `Result`.
fn result_match(m: &syn::ExprMatch) -> Option<Expr> {
    if m.arms.len() != 2 || m.arms.iter().any(|a| a.guard.is_some()) {
        return None;
    }
    let part = |p: &Pat, name: &str| -> Option<Option<Pat>> {
        match p {
            Pat::TupleStruct(t) if t.path.is_ident(name) && t.elems.len() == 1 => {
                match &t.elems[0] {
                    Pat::Wild(_) => Some(None),
                    Pat::Ident(i) if i.subpat.is_none() && i.by_ref.is_none() => {
                        Some(Some(t.elems[0].clone()))
                    }
                    _ => None,
                }
            }
            Pat::Wild(_) if name == "Err" => Some(None),
            _ => None,
        }
    };
    let (ok, err) = match (part(&m.arms[0].pat, "Ok"), part(&m.arms[1].pat, "Err")) {
        (Some(o), Some(e)) => ((o, &m.arms[0].body), (e, &m.arms[1].body)),
        _ => match (part(&m.arms[1].pat, "Ok"), part(&m.arms[0].pat, "Err")) {
            (Some(o), Some(e)) => ((o, &m.arms[1].body), (e, &m.arms[0].body)),
            _ => return None,
        },
    };
    let span = m.match_token.span;
    let scrutinee = &m.expr;
    // A variable is tested and unwrapped as it is: a `match` split in two by a branch
    // that leaves reads it twice, and moves it only in the branch that leaves.
    let simple = matches!(&**scrutinee, Expr::Path(p) if p.path.get_ident().is_some());
    let t: Expr = if simple {
        (**scrutinee).clone()
    } else {
        let t = format_ident!("__mochi_result", span = span);
        syn::parse_quote!(#t)
    };
    let (a, b) = (stmts_of(ok.1), stmts_of(err.1));
    // Unwrapped only where the branch reads it (a branch that only leaves, as a split
    // `match` has one, must not move the value).
    let reads = |p: &Pat, body: &Expr| {
        let Pat::Ident(i) = p else { return true };
        tokens_mention(&quote::ToTokens::to_token_stream(body), &|x| x == &i.ident)
    };
    let bind_ok =
        ok.0.filter(|p| reads(p, ok.1))
            .map(|p| quote_spanned!(span=> let #p = #t.unwrap();));
    let bind_err = err.0.map(|p| {
        // Matched by reference and cloned: the lowering carries a `return` in the
        // branch as a flag, after which Rust would see the value moved (the user's
        // pattern binds the error by value: `Err(i) => i` of `binary_search_by`).
        quote_spanned!(span=> let #p = ::mochi::no_grad(match &#t {
            ::core::result::Result::Err(e) => ::core::clone::Clone::clone(e),
            ::core::result::Result::Ok(_) => unreachable!(),
        });)
    });
    let branch: Expr = syn::parse_quote_spanned!(span=>
        if #t.is_ok() { #bind_ok #(#a)* } else { #bind_err #(#b)* }
    );
    Some(if simple {
        branch
    } else {
        syn::parse_quote_spanned!(span=> { let #t = #scrutinee; #branch })
    })
}

/// The name [`guarded_match`] binds the matched value to when no arm names it.
pub const SCRUTINEE: &str = "__mochi_scrutinee";

/// A `match` on a differentiable scalar whose arms choose by guards, ranges or literals
/// (`match v { v if v < 0.0 => A, 0.0..=1.0 => B, t @ 1.0..2.0 => C, _ => D }`) as the
/// `if` chain it is: `{ let v = e; if v < 0.0 { A } else if (0.0..=1.0).contains(&v) {
/// B } else if (1.0..2.0).contains(&v) { C } else { D } }`. Every arm binds the same name or
/// none (a fresh one is bound then, read by the ranges' tests), the last arm catches
/// all (`_` or the name, without a guard), and no arm that binds nothing reads a name
/// the binding would hide. Other shapes are left to the lowering, which refuses them.
/// With `all`, also a `match` that neither binds nor guards (the generic form's, whose
/// patterns cannot be float ranges or literals); otherwise only one that does.
pub fn guarded_match(m: &syn::ExprMatch, all: bool) -> Option<Expr> {
    if m.arms.len() < 2 {
        return None;
    }
    // What an arm's pattern tests and binds.
    enum Test {
        All,
        Range(syn::ExprRange),
        Equal(Expr),
    }
    fn bound(e: &Expr) -> bool {
        match e {
            Expr::Lit(l) => matches!(l.lit, syn::Lit::Int(_) | syn::Lit::Float(_)),
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => bound(&u.expr),
            Expr::Path(p) => p.qself.is_none(),
            _ => false,
        }
    }
    fn test(p: &Pat) -> Option<(Option<syn::Ident>, Test)> {
        match p {
            Pat::Wild(_) => Some((None, Test::All)),
            Pat::Ident(i) if i.by_ref.is_none() && i.mutability.is_none() => {
                if i.ident.to_string().starts_with(|c: char| c.is_uppercase()) {
                    return None;
                }
                let t = match &i.subpat {
                    None => Test::All,
                    Some((_, sub)) => match test(sub)? {
                        (None, t) => t,
                        _ => return None,
                    },
                };
                Some((Some(i.ident.clone()), t))
            }
            Pat::Range(r) => {
                let ends = [&r.start, &r.end];
                if ends.iter().any(|e| e.as_deref().is_some_and(|e| !bound(e))) {
                    return None;
                }
                Some((None, Test::Range(r.clone())))
            }
            Pat::Lit(l) if matches!(l.lit, syn::Lit::Int(_) | syn::Lit::Float(_)) => {
                Some((None, Test::Equal(Expr::Lit(l.clone()))))
            }
            Pat::Paren(p) => test(&p.pat),
            _ => None,
        }
    }
    let arms: Vec<_> = m.arms.iter().map(|a| test(&a.pat)).collect::<Option<_>>()?;
    let names: Vec<&syn::Ident> = arms.iter().filter_map(|(n, _)| n.as_ref()).collect();
    if names.windows(2).any(|w| w[0] != w[1]) {
        return None;
    }
    // Only a `match` the lowering refuses: one that binds or guards.
    if !all && names.is_empty() && m.arms.iter().all(|a| a.guard.is_none()) {
        return None;
    }
    let last = m.arms.last()?;
    if last.guard.is_some() || !matches!(arms.last()?.1, Test::All) {
        return None;
    }
    let span = m.match_token.span;
    let name = match names.first() {
        Some(n) => {
            // An arm that binds nothing must not read an outer value of the same name
            // (unless that value is what is matched: `match v { v if .. }`).
            let itself = matches!(unparen(&m.expr), Expr::Path(p) if p.path.is_ident(*n));
            let hidden = !itself
                && m.arms.iter().zip(&arms).any(|(a, (n, _))| {
                    n.is_none() && {
                        let mut t = quote::ToTokens::to_token_stream(&a.body);
                        if let Some((_, g)) = &a.guard {
                            t.extend(quote::ToTokens::to_token_stream(g));
                        }
                        tokens_mention(&t, &|x| x == *names.first().unwrap())
                    }
                });
            if hidden {
                return None;
            }
            (*n).clone()
        }
        None => format_ident!("{}", SCRUTINEE, span = span),
    };
    let conds: Vec<Option<Expr>> = m
        .arms
        .iter()
        .zip(&arms)
        .map(|(a, (_, t))| {
            let mut parts: Vec<Expr> = Vec::new();
            match t {
                Test::All => {}
                Test::Equal(l) => parts.push(syn::parse_quote_spanned!(span=> #name == #l)),
                Test::Range(r) => {
                    parts.push(syn::parse_quote_spanned!(span=> (#r).contains(&#name)))
                }
            }
            if let Some((_, g)) = &a.guard {
                parts.push(syn::parse_quote!((#g)));
            }
            let mut it = parts.into_iter();
            let first = it.next()?;
            Some(it.fold(first, |acc, p| syn::parse_quote_spanned!(span=> #acc && #p)))
        })
        .collect();
    // From the last arm up: `else` bodies nest.
    let mut chain: Option<Expr> = None;
    for (a, c) in m.arms.iter().zip(conds).rev() {
        let body = stmts_of(&a.body);
        chain = Some(match (c, chain) {
            (None, _) => syn::parse_quote_spanned!(span=> { #(#body)* }),
            (Some(c), Some(rest)) => {
                syn::parse_quote_spanned!(span=> if #c { #(#body)* } else #rest)
            }
            (Some(_), None) => return None,
        });
    }
    let chain = chain?;
    let scrutinee = &m.expr;
    // Nothing reads a value no arm binds or tests: evaluated, not moved, as by `match`.
    if names.is_empty() && arms.iter().all(|(_, t)| matches!(t, Test::All)) {
        return Some(syn::parse_quote_spanned!(span=> { let _ = #scrutinee; #chain }));
    }
    Some(syn::parse_quote_spanned!(span=> { let #name = #scrutinee; #chain }))
}

/// `let P = e else { D };` as `let m = e; if !matches!(&m, P) { D }` and then
/// `let v = m.unwrap();` for `P = Some(v)`, or `let (names…) = match m { P =>
/// (names…), _ => unreachable!() };`.
fn let_else(l: &syn::Local, active: &HashSet<String>) -> Option<Vec<syn::Stmt>> {
    let init = l.init.as_ref()?;
    let (_, diverge) = init.diverge.as_ref()?;
    let span = l.let_token.span;
    // `let Some(v) = x.get(i) else { D };` of a sequence: tested by the index (also
    // `x.get(i).copied()`, whose `v` is the value).
    let (source, copied) = match &*init.expr {
        Expr::MethodCall(c)
            if c.args.is_empty() && (c.method == "copied" || c.method == "cloned") =>
        {
            (&*c.receiver, true)
        }
        other => (other, false),
    };
    if let (Some(binding), Some((pre, exists, elem))) =
        (some_binding(&l.pat), element_option(source, active, span))
    {
        // (`pre` may be several statements: a sub-slice's two bounds.)
        let pre: syn::Block = syn::parse_quote_spanned!(span=> { #pre });
        let mut out: Vec<syn::Stmt> = pre.stmts;
        out.push(syn::parse_quote_spanned!(span=> if !(#exists) #diverge));
        if let Some(b) = binding {
            let name = b.name;
            let elem = if b.through_ref || copied {
                quote_spanned!(span=> #elem)
            } else {
                borrowed(&elem)
            };
            out.push(syn::parse_quote_spanned!(span=> let #name = #elem;));
        }
        return Some(out);
    }
    // `let Some(m) = x.iter().copied().reduce(f64::max) else { D };`: the chain's
    // length decides, and `chain.reduce(f).unwrap()` is a loop the lowering reverses.
    if let (Some(binding), Some(len)) = (
        some_binding(&l.pat),
        crate::iterchain::option_chain_len(&init.expr),
    ) {
        let e = &init.expr;
        let mut out: Vec<syn::Stmt> =
            vec![syn::parse_quote_spanned!(span=> if !((#len) > 0) #diverge)];
        if let Some(b) = binding {
            let (name, star) = (b.name, b.through_ref.then(|| quote_spanned!(span=> *)));
            out.push(syn::parse_quote_spanned!(span=> let #name = #star #e.unwrap();));
        }
        return Some(out);
    }
    // `let [a, b] = x[..2] else { D };`, `let &[a, b, ..] = &x[1..] else { D };`, `let
    // [a, rest @ ..] = v.as_slice() else { D };`: the length tested, the elements read.
    if let Some(out) = let_else_slice(&l.pat, &init.expr, diverge, span) {
        return Some(out);
    }
    let m = format_ident!("__mochi_let", span = span);
    let pat = &l.pat;
    let e = &init.expr;
    // `let Some((first, rest)) = x.split_first() else { D };` (also `split_last`): the
    // slice tested for emptiness, then taken apart as `let (first, rest) =
    // x.split_first().unwrap();` is (`SplitTupleLets::split`); `let Some((a, b)) = g(x)
    // else { D };` of another option of a tuple: bound, tested, and unwrapped into the
    // tuple's names.
    let tuple = match pat {
        Pat::TupleStruct(ts)
            if ts.path.is_ident("Some")
                && ts.elems.len() == 1
                && matches!(ts.elems[0], Pat::Tuple(_)) =>
        {
            Some(&ts.elems[0])
        }
        _ => None,
    };
    if let Some(tuple) = tuple {
        let unwrapped: syn::Stmt = syn::parse_quote_spanned!(span=> let #tuple = #e.unwrap(););
        let syn::Stmt::Local(unwrapped) = unwrapped else {
            unreachable!("a `let` statement")
        };
        // (`split` takes apart only the ends of `split_first`/`split_last`.)
        if let (Expr::MethodCall(c), Some(parts)) = (unparen(e), SplitTupleLets::split(&unwrapped))
        {
            let x = &c.receiver;
            let mut out: Vec<syn::Stmt> =
                vec![syn::parse_quote_spanned!(span=> if #x.is_empty() #diverge)];
            out.extend(parts);
            return Some(out);
        }
        return Some(vec![
            syn::parse_quote_spanned!(span=> let #m = #e;),
            syn::parse_quote_spanned!(span=> if #m.is_none() #diverge),
            syn::parse_quote_spanned!(span=> let #tuple = #m.unwrap();),
        ]);
    }
    let mut out: Vec<syn::Stmt> = vec![
        syn::parse_quote_spanned!(span=> let #m = #e;),
        syn::parse_quote_spanned!(span=> if !matches!(&#m, #pat) #diverge),
    ];
    if let Some(binding) = some_binding(pat) {
        if let Some(b) = binding {
            let (name, star) = (b.name, b.through_ref.then(|| quote_spanned!(span=> *)));
            out.push(syn::parse_quote_spanned!(span=> let #name = #star #m.unwrap();));
        }
        return Some(out);
    }
    let mut idents = Vec::new();
    collect_idents(pat, &mut idents);
    let names = idents.iter().map(|i| &i.ident);
    let binds = idents.iter().map(|i| {
        let mu = &i.mutability;
        let n = &i.ident;
        quote_spanned!(span=> #mu #n)
    });
    out.push(syn::parse_quote_spanned!(span=>
        let (#(#binds,)*) = match #m { #pat => (#(#names,)*), _ => unreachable!() };
    ));
    Some(out)
}

/// The slice pattern of a `let`-`else` as [`slice_arm`]'s test and reads, over the
/// slice bound once (by reference): `let __mochi_slice = &x[..2]; if !(__mochi_slice.len()
/// == 2) { D } let a = __mochi_slice[0]; ..`. Elements bind as matching would: copies
/// when the pattern meets the slice itself (`[a, b] = x[..2]`, `&[a, b] = &x[..2]`),
/// references when it meets a reference (`[a, b] = &x[..2]`, `[a, b] = x` of a `&[f64]`).
fn let_else_slice(pat: &Pat, e: &Expr, diverge: &Expr, span: Span) -> Option<Vec<syn::Stmt>> {
    let (ps, slice, by_value): (&syn::PatSlice, Expr, bool) = match (pat, unparen(e)) {
        (Pat::Reference(r), Expr::Reference(er)) if r.mutability.is_none() => match &*r.pat {
            Pat::Slice(ps) => (ps, Expr::Reference(er.clone()), true),
            _ => return None,
        },
        // `let &[.., y, z] = x else { .. }` of a slice `x: &[f64]`: copies.
        (Pat::Reference(r), Expr::Path(_) | Expr::Field(_)) if r.mutability.is_none() => {
            match &*r.pat {
                Pat::Slice(ps) => (ps, e.clone(), true),
                _ => return None,
            }
        }
        (Pat::Slice(ps), Expr::Index(_)) => (ps, syn::parse_quote_spanned!(span=> &#e), true),
        (Pat::Slice(ps), Expr::Reference(_) | Expr::Path(_) | Expr::Field(_)) => {
            (ps, e.clone(), false)
        }
        (Pat::Slice(ps), Expr::MethodCall(c))
            if c.args.is_empty() && matches!(c.method.to_string().as_str(), "as_slice") =>
        {
            (ps, e.clone(), false)
        }
        _ => return None,
    };
    let x: Expr = syn::parse_quote_spanned!(span=> __mochi_slice);
    let (cond, lets) = slice_arm(ps, &x, by_value)?;
    let mut out: Vec<syn::Stmt> =
        vec![syn::parse_quote_spanned!(span=> let __mochi_slice = #slice;)];
    if let Some(c) = cond {
        out.push(syn::parse_quote_spanned!(span=> if !(#c) #diverge));
    }
    out.extend(lets);
    Some(out)
}

fn collect_idents(p: &Pat, out: &mut Vec<syn::PatIdent>) {
    struct C<'a>(&'a mut Vec<syn::PatIdent>);
    impl<'ast> syn::visit::Visit<'ast> for C<'_> {
        fn visit_pat_ident(&mut self, i: &'ast syn::PatIdent) {
            // `None` and unit variants parse as identifiers.
            if !i.ident.to_string().starts_with(char::is_uppercase) {
                let mut i = i.clone();
                i.by_ref = None;
                self.0.push(i);
            }
            syn::visit::visit_pat_ident(self, i);
        }
    }
    syn::visit::Visit::visit_pat(&mut C(out), p);
}

/// Inlines each closure bound by `let name = |…| …;` (not `mut`) into the statements
/// after it: a call `name(args…)` becomes a block binding the parameters, a bare
/// `name` (passed to an adapter) becomes the closure itself. The binding is dropped when
/// no other use of the name remains.
///
/// Answers the snapshots it binds, each with the name it copies (a snapshot of a
/// differentiable name is one).
fn inline_local_closures(b: &mut syn::Block) -> Vec<(String, String)> {
    let mut made = Vec::new();
    let mut k = 0;
    while k < b.stmts.len() {
        let found = match &b.stmts[k] {
            // (`let mut add = |v| acc += v;` too: an `FnMut` closure writing its
            // captures, which its calls, inlined, write in place.)
            syn::Stmt::Local(l) => match (&l.pat, l.init.as_ref()) {
                (Pat::Ident(p), Some(init)) if p.subpat.is_none() && init.diverge.is_none() => {
                    match &*init.expr {
                        Expr::Closure(c)
                            if c.inputs.iter().all(|i| !matches!(i, Pat::Reference(_)))
                                && (p.mutability.is_none() || c.capture.is_none()) =>
                        {
                            Some((p.ident.clone(), c.clone()))
                        }
                        _ => None,
                    }
                }
                _ => None,
            },
            _ => None,
        };
        let Some((name, mut closure)) = found else {
            k += 1;
            continue;
        };
        // The captures the closure writes: the variables themselves (Rust lets nothing
        // else touch them while the closure lives), never snapshots.
        // (Assigned, not bound again: a `let k` of the body's own is not a write of the
        // `k` it captured.)
        let written = {
            let body: syn::Stmt = syn::Stmt::Expr((*closure.body).clone(), None);
            let mut c = Changes::default();
            syn::visit::Visit::visit_stmt(&mut c, &body);
            free_names(&closure)
                .into_iter()
                .filter(|n| c.assigned.contains(&n.to_string()))
                .collect::<Vec<_>>()
        };
        // A name the closure captures that the statements after it bind again or assign
        // would, inlined at a call, read the new value; Rust's closure reads the one it
        // captured (a `move` closure its value then, another one the variable, which
        // nothing may assign while the closure lives). Such names are read into
        // snapshots right after the closure, and the closure reads those.
        if !written.is_empty() {
            let mut hidden = HiddenCaptures {
                name: &name,
                written: &written,
                scopes: vec![Vec::new()],
            };
            for s in &mut b.stmts[k + 1..] {
                hidden.visit_stmt_mut(s);
            }
        }
        let changed: Vec<syn::Ident> = names_changed(&b.stmts[k + 1..], &free_names(&closure))
            .into_iter()
            .filter(|n| !written.contains(n))
            .collect();
        let mut snapshots = Vec::new();
        if !changed.is_empty() {
            let mut renames = Vec::new();
            // (Numbered: two closures capturing one name, bound again between them
            // (`let k = x[0]; let f = |t| k * t; let k = x[1]; let g = |t| t + k;`),
            // each read their own. Until 2026-12-07 both snapshots were `__mochi_cap_k`,
            // and the first closure read the second's, silently.)
            static SNAPSHOTS: std::sync::atomic::AtomicUsize =
                std::sync::atomic::AtomicUsize::new(0);
            for n in changed {
                let at = SNAPSHOTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let snap = format_ident!("__mochi_cap{}_{}", at, n);
                snapshots.push(syn::parse_quote!(let #snap = #n.clone();));
                made.push((snap.to_string(), n.to_string()));
                renames.push((n, snap));
            }
            RenameIdents(&renames).visit_expr_mut(&mut closure.body);
        }
        let snapshot_count = snapshots.len();
        b.stmts.splice(k + 1..k + 1, snapshots);
        let mut inliner = Inline {
            name: &name,
            closure: &closure,
            left: false,
            shadowed: false,
        };
        let after = k + 1 + snapshot_count;
        let mut rest: Vec<syn::Stmt> = b.stmts[after..].to_vec();
        for s in &mut rest {
            if inliner.shadowed {
                break;
            }
            inliner.visit_stmt_mut(s);
        }
        if inliner.shadowed {
            k = after;
            continue;
        }
        let left = inliner.left;
        b.stmts.truncate(after);
        b.stmts.extend(rest);
        if left {
            k = after;
        } else {
            b.stmts.remove(k);
            k += snapshot_count;
        }
    }
    made
}

/// The calls of the local closure `name` made where a `let` (or another pattern) has
/// bound again a variable the closure writes: inlined there, the call would write the
/// new binding, where Rust's closure writes the variable it captured. Each becomes an
/// error at the call (before 2026-12-07, a wrong value: `let mut add = |v| acc += v;
/// { let mut acc = 1.0; add(x); }`).
struct HiddenCaptures<'a> {
    name: &'a syn::Ident,
    written: &'a [syn::Ident],
    /// The written names bound again, by block.
    scopes: Vec<Vec<String>>,
}

impl VisitMut for HiddenCaptures<'_> {
    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        self.scopes.push(Vec::new());
        syn::visit_mut::visit_block_mut(self, b);
        self.scopes.pop();
    }
    fn visit_local_mut(&mut self, l: &mut syn::Local) {
        if let Some(init) = &mut l.init {
            self.visit_expr_mut(&mut init.expr);
            if let Some((_, d)) = &mut init.diverge {
                self.visit_expr_mut(d);
            }
        }
        self.visit_pat_mut(&mut l.pat);
    }
    fn visit_pat_ident_mut(&mut self, p: &mut syn::PatIdent) {
        if self.written.contains(&p.ident) {
            if let Some(scope) = self.scopes.last_mut() {
                scope.push(p.ident.to_string());
            }
        }
        syn::visit_mut::visit_pat_ident_mut(self, p);
    }
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        // (A call `add(v)`, or the closure handed to an adapter, `.for_each(add)`.)
        let used = match &*e {
            Expr::Call(c) => matches!(&*c.func, Expr::Path(p) if p.path.is_ident(self.name))
                .then(|| c.func.span()),
            Expr::Path(p) if p.path.is_ident(self.name) => Some(p.span()),
            _ => None,
        };
        if let (Some(span), Some(hidden)) = (used, self.scopes.iter().flatten().next()) {
            let message = syn::LitStr::new(
                &format!(
                    "mochi: the closure `{}` writes `{hidden}`, which a `let` before this use binds again; rename one of the two (the closure writes the `{hidden}` it captured)",
                    self.name
                ),
                span,
            );
            *e = syn::parse_quote_spanned!(span=> ::core::compile_error!(#message));
            return;
        }
        syn::visit_mut::visit_expr_mut(self, e);
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// The names a closure's body reads from outside it: single-name paths that are not
/// its parameters or bound inside it.
fn free_names(c: &syn::ExprClosure) -> Vec<syn::Ident> {
    // (By scope: a name the body reads before or outside a binding of its own is free,
    // `|t| { let r = k * t; let k = 2.0; r + k }` reads the captured `k`, and so does a
    // macro's `vec![k * t]`. Until 2026-12-07 a name bound anywhere in the body was taken
    // as never captured, so it had no snapshot where it was bound again after the
    // closure, and the inlined body read the new value, silently.)
    struct F {
        used: Vec<syn::Ident>,
        scopes: Vec<HashSet<String>>,
    }
    impl F {
        fn bound(&self, n: &str) -> bool {
            self.scopes.iter().any(|s| s.contains(n))
        }
        fn use_name(&mut self, i: &syn::Ident) {
            if !self.bound(&i.to_string()) && !self.used.contains(i) {
                self.used.push(i.clone());
            }
        }
        fn names(p: &Pat) -> HashSet<String> {
            let mut v = Vec::new();
            crate::activity::pat_names(p, &mut v);
            v.into_iter().collect()
        }
    }
    impl<'ast> syn::visit::Visit<'ast> for F {
        fn visit_expr_path(&mut self, p: &'ast syn::ExprPath) {
            if let Some(i) = p.path.get_ident() {
                self.use_name(i);
            }
        }
        fn visit_macro(&mut self, m: &'ast syn::Macro) {
            let mut names = HashSet::new();
            crate::activity::token_idents(m.tokens.clone(), &mut names);
            for n in names {
                self.use_name(&syn::Ident::new(&n, m.path.span()));
            }
        }
        fn visit_expr_closure(&mut self, c: &'ast syn::ExprClosure) {
            let mut s = HashSet::new();
            for p in &c.inputs {
                s.extend(Self::names(p));
            }
            self.scopes.push(s);
            self.visit_expr(&c.body);
            self.scopes.pop();
        }
        fn visit_block(&mut self, b: &'ast syn::Block) {
            self.scopes.push(HashSet::new());
            for st in &b.stmts {
                if let syn::Stmt::Local(l) = st {
                    if let Some(init) = &l.init {
                        self.visit_expr(&init.expr);
                        if let Some((_, d)) = &init.diverge {
                            self.visit_expr(d);
                        }
                    }
                    let names = Self::names(&l.pat);
                    if let Some(top) = self.scopes.last_mut() {
                        top.extend(names);
                    }
                } else {
                    self.visit_stmt(st);
                }
            }
            self.scopes.pop();
        }
        fn visit_expr_for_loop(&mut self, f: &'ast syn::ExprForLoop) {
            self.visit_expr(&f.expr);
            self.scopes.push(Self::names(&f.pat));
            self.visit_block(&f.body);
            self.scopes.pop();
        }
        fn visit_arm(&mut self, a: &'ast syn::Arm) {
            self.scopes.push(Self::names(&a.pat));
            if let Some((_, g)) = &a.guard {
                self.visit_expr(g);
            }
            self.visit_expr(&a.body);
            self.scopes.pop();
        }
        fn visit_expr_if(&mut self, i: &'ast syn::ExprIf) {
            if let Expr::Let(l) = &*i.cond {
                self.visit_expr(&l.expr);
                self.scopes.push(Self::names(&l.pat));
                self.visit_block(&i.then_branch);
                self.scopes.pop();
            } else {
                self.visit_expr(&i.cond);
                self.visit_block(&i.then_branch);
            }
            if let Some((_, e)) = &i.else_branch {
                self.visit_expr(e);
            }
        }
        fn visit_expr_while(&mut self, w: &'ast syn::ExprWhile) {
            if let Expr::Let(l) = &*w.cond {
                self.visit_expr(&l.expr);
                self.scopes.push(Self::names(&l.pat));
            } else {
                self.visit_expr(&w.cond);
                self.scopes.push(HashSet::new());
            }
            self.visit_block(&w.body);
            self.scopes.pop();
        }
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut f = F {
        used: Vec::new(),
        scopes: Vec::new(),
    };
    syn::visit::Visit::visit_expr_closure(&mut f, c);
    f.used
}

/// The names among `names` that `stmts` bind again (a `let`, a pattern, a closure's
/// parameter) or assign (`=`, a compound assignment, `&mut`). A method that writes its
/// receiver needs no look: while a closure that borrows the name, or a loop over
/// `x.windows(m)`, lives, Rust lets nothing write it, and a `move` closure takes a
/// value that is either `Copy` (no method writes a float) or moved away.
pub fn names_changed(stmts: &[syn::Stmt], names: &[syn::Ident]) -> Vec<syn::Ident> {
    let mut c = Changes::default();
    for s in stmts {
        syn::visit::Visit::visit_stmt(&mut c, s);
    }
    names
        .iter()
        .filter(|n| {
            let n = n.to_string();
            c.bound.contains(&n) || c.assigned.contains(&n)
        })
        .cloned()
        .collect()
}

/// Renames variables: single-name paths and the names patterns bind.
pub struct RenameIdents<'a>(pub &'a [(syn::Ident, syn::Ident)]);

impl RenameIdents<'_> {
    fn rename(&self, i: &mut syn::Ident) {
        if let Some((_, to)) = self.0.iter().find(|(from, _)| from == i) {
            let span = i.span();
            *i = to.clone();
            i.set_span(span);
        }
    }
}

impl VisitMut for RenameIdents<'_> {
    fn visit_expr_path_mut(&mut self, p: &mut syn::ExprPath) {
        if p.qself.is_none() && p.path.leading_colon.is_none() && p.path.segments.len() == 1 {
            self.rename(&mut p.path.segments[0].ident);
        }
    }
    fn visit_pat_ident_mut(&mut self, p: &mut syn::PatIdent) {
        self.rename(&mut p.ident);
        syn::visit_mut::visit_pat_ident_mut(self, p);
    }
    fn visit_field_value_mut(&mut self, f: &mut syn::FieldValue) {
        // `S { w }` is `S { w: w }`: the field keeps its name.
        if f.colon_token.is_none() && matches!(f.member, syn::Member::Named(_)) {
            f.colon_token = Some(Default::default());
        }
        self.visit_expr_mut(&mut f.expr);
    }
    fn visit_macro_mut(&mut self, m: &mut syn::Macro) {
        if !crate::activity::tokens_mention(&m.tokens, &|i| self.0.iter().any(|(f, _)| f == i)) {
            return;
        }
        // Expressions (`vec![i as f64; n]`, `assert!(..)`) as expressions; any other
        // body (`s![i..i + k, ..;2]`) by its tokens: a name not after `.` or `::`.
        if !crate::rewrite::visit_macro_exprs(m, self) {
            m.tokens = self.rename_tokens(std::mem::take(&mut m.tokens));
        }
    }
}

impl RenameIdents<'_> {
    fn rename_tokens(&self, tokens: TokenStream) -> TokenStream {
        use proc_macro2::Spacing;
        use proc_macro2::{Group, TokenTree};
        // After a lone `.` (a field or method, not `..`) or after `::` (a path's segment).
        let mut after_path = false;
        let mut joint: Option<char> = None;
        let mut out = Vec::new();
        for t in tokens {
            let t = match t {
                TokenTree::Ident(mut i) if !after_path => {
                    self.rename(&mut i);
                    TokenTree::Ident(i)
                }
                TokenTree::Group(g) => {
                    let mut n = Group::new(g.delimiter(), self.rename_tokens(g.stream()));
                    n.set_span(g.span());
                    TokenTree::Group(n)
                }
                other => other,
            };
            after_path = match &t {
                TokenTree::Punct(p) if p.spacing() == Spacing::Alone => {
                    matches!((joint, p.as_char()), (None, '.') | (Some(':'), ':'))
                }
                _ => false,
            };
            joint = match &t {
                TokenTree::Punct(p) if p.spacing() == Spacing::Joint => Some(p.as_char()),
                _ => None,
            };
            out.push(t);
        }
        out.into_iter().collect()
    }
}

struct Inline<'a> {
    name: &'a syn::Ident,
    closure: &'a syn::ExprClosure,
    /// A use that is neither a call nor an argument remains.
    left: bool,
    /// The name is bound again: stop there.
    shadowed: bool,
}

impl Inline<'_> {
    fn is_name(&self, e: &Expr) -> bool {
        matches!(e, Expr::Path(p) if p.path.get_ident() == Some(self.name))
    }

    /// `{ let (params…) = (args…); body }`
    fn call(&self, args: &syn::punctuated::Punctuated<Expr, syn::Token![,]>, span: Span) -> Expr {
        let c = self.closure;
        // A `return` in the body leaves the closure, not the function it is inlined into.
        let with_return;
        let body = if crate::iterchain::contains_return(&c.body) {
            with_return = crate::iterchain::returns_as_breaks(&c.body);
            &with_return
        } else {
            &*c.body
        };
        let mut pats = Vec::new();
        let mut tys = Vec::new();
        for p in &c.inputs {
            match p {
                Pat::Type(t) => {
                    pats.push((*t.pat).clone());
                    tys.push(Some((*t.ty).clone()));
                }
                other => {
                    pats.push(other.clone());
                    tys.push(None);
                }
            }
        }
        // A variable given for a `&T` parameter is borrowed again (`&k`): deref coercion
        // then takes a row read by value (`for k in keys.iter()` over `&[Vec<f64>]`
        // binds `k` by value) or by reference to the `&[f64]` the closure takes.
        let reborrowed: Vec<Expr> = args
            .iter()
            .zip(&tys)
            .map(|(a, t)| match (a, t) {
                (Expr::Path(p), Some(syn::Type::Reference(r)))
                    if r.mutability.is_none() && p.path.get_ident().is_some() =>
                {
                    syn::parse_quote_spanned!(span=> &#a)
                }
                _ => a.clone(),
            })
            .collect();
        let args: Vec<&Expr> = reborrowed.iter().collect();
        // A `&mut place` given for a parameter named plainly: `let out = &mut o;`, bound
        // first and without its type, so that `inline_mut_borrows` makes the body write
        // `o` itself (through the alias, the writes reached no cotangent: a silent zero
        // gradient before 2026-12-02).
        let direct = |p: &Pat, a: &Expr| {
            matches!(p, Pat::Ident(i) if i.mutability.is_none() && i.by_ref.is_none() && i.subpat.is_none())
                && matches!(a, Expr::Reference(r) if r.mutability.is_some() && plain_place(&r.expr))
        };
        let bind = if pats.len() == 1 {
            let (p, a) = (&pats[0], args[0]);
            match &tys[0] {
                _ if direct(p, a) => quote_spanned!(span=> let #p = #a;),
                Some(t) => quote_spanned!(span=> let #p: #t = #a;),
                None => quote_spanned!(span=> let #p = #a;),
            }
        } else if pats.iter().zip(&args).any(|(p, a)| direct(p, a)) {
            let temps: Vec<syn::Ident> = (0..pats.len())
                .map(|k| format_ident!("__mochi_carg{}", k, span = span))
                .collect();
            let mut firsts = Vec::new();
            let mut reads = Vec::new();
            let mut lets = Vec::new();
            for (((p, t), v), a) in pats.iter().zip(&tys).zip(&temps).zip(&args) {
                if direct(p, a) {
                    firsts.push(quote_spanned!(span=> let #p = #a;));
                    continue;
                }
                reads.push((v, a));
                lets.push(match t {
                    Some(t) => quote_spanned!(span=> let #p: #t = #v;),
                    None => quote_spanned!(span=> let #p = #v;),
                });
            }
            let (vs, avs): (Vec<&syn::Ident>, Vec<&&Expr>) = reads.into_iter().unzip();
            quote_spanned!(span=> let (#(#vs,)*) = (#(#avs,)*); #(#firsts)* #(#lets)*)
        } else {
            // Every argument is read before a parameter is bound (an argument may name
            // an outer variable a parameter shadows); then one `let` per parameter, so
            // that a parameter typed `&Array1<f64>` is known to be a reference.
            let temps: Vec<syn::Ident> = (0..pats.len())
                .map(|k| format_ident!("__mochi_carg{}", k, span = span))
                .collect();
            let lets = pats
                .iter()
                .zip(&tys)
                .zip(&temps)
                .map(|((p, t), v)| match t {
                    Some(t) => quote_spanned!(span=> let #p: #t = #v;),
                    None => quote_spanned!(span=> let #p = #v;),
                });
            quote_spanned!(span=> let (#(#temps,)*) = (#(#args,)*); #(#lets)*)
        };
        // A closure that says what it returns (`|r: &[f64]| -> Vec<f64> { r.iter()
        // .map(..).collect() }`, `|p: &[f64]| -> f64 { p.iter().map(..).sum() }`): the
        // type stays, on a `let` the chain rewrite reads (without it, `collect` and `sum`
        // have no type where the body is inlined).
        let typed;
        let body = match &c.output {
            syn::ReturnType::Type(_, ty)
                if !matches!(
                    &**ty,
                    syn::Type::ImplTrait(_) | syn::Type::Infer(_) | syn::Type::Never(_)
                ) =>
            {
                let r = format_ident!("__mochi_cret", span = span);
                typed = match body {
                    // (The block's value typed where it is computed: a `let` whose value
                    // is a block would not be a chain's `collect()`.)
                    Expr::Block(b)
                        if matches!(b.block.stmts.last(), Some(syn::Stmt::Expr(_, None))) =>
                    {
                        let mut b = b.clone();
                        let Some(syn::Stmt::Expr(tail, None)) = b.block.stmts.pop() else {
                            unreachable!()
                        };
                        b.block
                            .stmts
                            .push(syn::parse_quote_spanned!(span=> let #r: #ty = #tail;));
                        b.block
                            .stmts
                            .push(syn::Stmt::Expr(syn::parse_quote!(#r), None));
                        Expr::Block(b)
                    }
                    _ => syn::parse_quote_spanned!(span=> { let #r: #ty = #body; #r }),
                };
                &typed
            }
            _ => body,
        };
        // In parentheses: a body such as `{ … } + 1.0` (a call inlined before) would
        // otherwise open the block with a statement and leave `+ 1.0` dangling.
        let body = match body {
            Expr::Block(_) | Expr::Paren(_) | Expr::Path(_) | Expr::Lit(_) => quote::quote!(#body),
            _ => quote::quote!((#body)),
        };
        // In parentheses too: `g(*v) * v` becomes `({ … }) * v`, which stays one
        // expression where a block would end at its brace (a closure's body, a statement).
        syn::parse_quote_spanned!(span=> ({ #bind #body }))
    }
}

impl VisitMut for Inline<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if self.shadowed {
            return;
        }
        if let Expr::Call(c) = e {
            if self.is_name(&c.func) && c.args.len() == self.closure.inputs.len() {
                for a in &mut c.args {
                    self.visit_expr_mut(a);
                }
                *e = self.call(&c.args, c.func.span());
                return;
            }
            // `drop(add);` of an `FnMut` closure, to end its borrow before the capture
            // is read: nothing to drop once every call is inlined (before 2026-12-07,
            // "closures are differentiated only as the argument of an adapter").
            let dropped = matches!(&*c.func, Expr::Path(p) if p.qself.is_none()
                && p.path.segments.last().is_some_and(|s| s.ident == "drop")
                && (p.path.segments.len() == 1
                    || p.path.segments.iter().rev().nth(1).is_some_and(|s| s.ident == "mem")));
            if dropped && c.args.len() == 1 && self.is_name(&c.args[0]) {
                *e = syn::parse_quote!(());
                return;
            }
        }
        if let Expr::MethodCall(m) = e {
            self.visit_expr_mut(&mut m.receiver);
            for a in &mut m.args {
                if self.is_name(a) {
                    *a = Expr::Closure(self.closure.clone());
                } else {
                    self.visit_expr_mut(a);
                }
            }
            return;
        }
        if self.is_name(e) {
            self.left = true;
            return;
        }
        syn::visit_mut::visit_expr_mut(self, e);
    }
    fn visit_pat_ident_mut(&mut self, p: &mut syn::PatIdent) {
        if p.ident == *self.name {
            self.shadowed = true;
        }
    }
    fn visit_macro_mut(&mut self, m: &mut syn::Macro) {
        if !tokens_mention(&m.tokens, &|i| i == self.name) {
            return;
        }
        // Macros whose body is expressions (`vec!`, `assert!`, `println!`): inline in them.
        if !crate::rewrite::visit_macro_exprs(m, self) {
            self.left = true;
        }
    }
}

/// A place that a `&mut` borrow can name again: `v`, `v[i]`, `v.f`, `m[i][j]`, with no
/// range index.
fn plain_place(e: &Expr) -> bool {
    match e {
        Expr::Path(p) => p.path.get_ident().is_some(),
        Expr::Index(i) => !matches!(&*i.index, Expr::Range(_)) && plain_place(&i.expr),
        Expr::Field(f) => plain_place(&f.base),
        Expr::Paren(p) => plain_place(&p.expr),
        _ => false,
    }
}

/// Replaces each `let r = &mut place;` (`place` a variable, field or indexed element,
/// `r` not `mut`) by `place` itself in the statements after it: `r[j] += v` becomes
/// `m[i][j] += v`, `*r = v` becomes `place = v`. While `r` lives the borrow checker
/// keeps every other access to `place`'s variable out, so the two name the same
/// memory as long as the names inside `place` (the indices) keep their values: the
/// rewrite is skipped when any of them, or `r`, is assigned, borrowed `&mut` or bound
/// again after the `let`.
fn inline_mut_borrows(b: &mut syn::Block) {
    let mut k = 0;
    while k < b.stmts.len() {
        // (Also `let r: &mut Vec<f64> = &mut o;`, the type written.)
        let typed = |s: &syn::Stmt| -> Option<(syn::Ident, Expr)> {
            let syn::Stmt::Local(l) = s else { return None };
            let (Pat::Type(t), Some(init)) = (&l.pat, l.init.as_ref()) else {
                return None;
            };
            match (&*t.pat, &*t.ty) {
                (Pat::Ident(p), syn::Type::Reference(r))
                    if r.mutability.is_some()
                        && p.mutability.is_none()
                        && p.by_ref.is_none()
                        && p.subpat.is_none()
                        && init.diverge.is_none() =>
                {
                    Some((p.ident.clone(), (*init.expr).clone()))
                }
                _ => None,
            }
        };
        let found = plain_let(&b.stmts[k])
            .map(|(n, e)| (n.clone(), e.clone()))
            .or_else(|| typed(&b.stmts[k]))
            .and_then(|(name, init)| match init {
                Expr::Reference(r) if r.mutability.is_some() && plain_place(&r.expr) => {
                    Some((name, (*r.expr).clone()))
                }
                // `let l = v.last_mut().unwrap();` (also `first_mut`, `get_mut(i)`,
                // `iter_mut().next()`, `expect(..)`): the element's place, as
                // `*v.last_mut().unwrap() = ..` is (before 2026-12-07, "no rule for
                // `last_mut`" at the binding).
                Expr::MethodCall(m)
                    if matches!(m.method.to_string().as_str(), "unwrap" | "expect") =>
                {
                    let deref: Expr = syn::parse_quote!(*#m);
                    accessor_place(&deref).map(|p| (name, p))
                }
                // `let s = v.as_mut_slice();`: `&mut v` under another name.
                Expr::MethodCall(m)
                    if m.method == "as_mut_slice"
                        && m.args.is_empty()
                        && plain_place(&m.receiver) =>
                {
                    Some((name, (*m.receiver).clone()))
                }
                _ => None,
            });
        let Some((name, place)) = found else {
            k += 1;
            continue;
        };
        // The root may change once `r` is dead (the borrow checker sees to that), but
        // a new binding of it, or any change to an index, would change what `place`
        // names.
        let (bound, indices) = borrowed_names(&place, &place);
        let mut rest: Vec<syn::Stmt> = b.stmts[k + 1..].to_vec();
        let hit = disturbed(&rest, &indices, &bound);
        let mut sub = BorrowUses {
            name: &name,
            place: &place,
            shadowed: false,
        };
        for s in &mut rest {
            if sub.shadowed {
                break;
            }
            sub.visit_stmt_mut(s);
        }
        if hit || sub.shadowed {
            k += 1;
            continue;
        }
        b.stmts.truncate(k);
        b.stmts.extend(rest);
    }
}

/// `let mut r = b.row_mut(i);` (any selector of [`crate::lower::VIEW_SELECTORS`], `b` a
/// variable or field, the arguments names, literals and arithmetic) → the view written
/// where `r` is used: `r.assign(&v)`, `r.fill(c)`, `r.mapv_inplace(f)`, `r += e` (any
/// compound assignment) become writes through `b.row_mut(i)`, which the lowering does in
/// place; reads of `r` become `b.row(i)`, and `r[k] = e` of a row or a column
/// `b[[i, k]] = e`. Left as written when `r` is used otherwise (`helper(&mut r)`), or `b`
/// or a name in the arguments is assigned or bound again after the `let`.
fn inline_view_borrows(b: &mut syn::Block) {
    let mut k = 0;
    while k < b.stmts.len() {
        let found = match &b.stmts[k] {
            syn::Stmt::Local(l) => match (&l.pat, l.init.as_ref()) {
                (Pat::Ident(p), Some(init))
                    if p.by_ref.is_none() && p.subpat.is_none() && init.diverge.is_none() =>
                {
                    match &*init.expr {
                        Expr::MethodCall(m)
                            if crate::lower::VIEW_SELECTORS
                                .iter()
                                .any(|(sel, _)| m.method == sel)
                                && plain_place(&m.receiver)
                                && m.args.iter().all(plain_selector_arg) =>
                        {
                            Some((p.ident.clone(), m.clone()))
                        }
                        _ => None,
                    }
                }
                _ => None,
            },
            _ => None,
        };
        let Some((name, view)) = found else {
            k += 1;
            continue;
        };
        let (bound, indices) = borrowed_names(&view, &view.receiver);
        let mut rest: Vec<syn::Stmt> = b.stmts[k + 1..].to_vec();
        let hit = disturbed(&rest, &indices, &bound);
        let mut uses = ViewUses {
            name: &name,
            view: &view,
            other: false,
        };
        for s in &mut rest {
            uses.visit_stmt_mut(s);
        }
        if hit || uses.other {
            k += 1;
            continue;
        }
        b.stmts.truncate(k);
        b.stmts.extend(rest);
    }
}

/// An argument of a view's selector that is harmless to evaluate again: a plain index,
/// `s![..]` of such, `Axis(k)`.
fn plain_selector_arg(e: &Expr) -> bool {
    match e {
        Expr::Macro(m) => m.mac.path.is_ident("s"),
        Expr::Call(c) => matches!(&*c.func, Expr::Path(_)) && c.args.iter().all(plain_index),
        other => plain_index(other),
    }
}

/// The uses of `r` after `let mut r = b.row_mut(i);` (see [`inline_view_borrows`]);
/// `other` is set by a use the rewrite does not cover.
struct ViewUses<'a> {
    name: &'a syn::Ident,
    view: &'a syn::ExprMethodCall,
    other: bool,
}

impl ViewUses<'_> {
    fn is_r(&self, e: &Expr) -> bool {
        matches!(e, Expr::Path(p) if p.path.get_ident() == Some(self.name))
    }
    fn read_only(&self, span: Span) -> Expr {
        let v = self.view;
        let name = v.method.to_string();
        let ro = crate::lower::VIEW_SELECTORS
            .iter()
            .find(|(sel, _)| name == *sel)
            .map(|(_, ro)| *ro)
            .unwrap_or("view");
        let ro = format_ident!("{}", ro, span = span);
        let (recv, args) = (&v.receiver, &v.args);
        syn::parse_quote_spanned!(span=> #recv.#ro(#args))
    }
    fn writable(&self, span: Span) -> Expr {
        let v = self.view;
        let (recv, sel, args) = (&v.receiver, &v.method, &v.args);
        syn::parse_quote_spanned!(span=> #recv.#sel(#args))
    }
    /// `r[k]` of a row or a column → `b[[i, k]]` / `b[[k, j]]`.
    fn element(&self, k: &Expr) -> Option<Expr> {
        let v = self.view;
        let (recv, arg) = (&v.receiver, v.args.first()?);
        match v.method.to_string().as_str() {
            "row_mut" => Some(syn::parse_quote!(#recv[[#arg, #k]])),
            "column_mut" => Some(syn::parse_quote!(#recv[[#k, #arg]])),
            _ => None,
        }
    }
}

impl VisitMut for ViewUses<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        let span = e.span();
        match e {
            Expr::MethodCall(m)
                if self.is_r(&m.receiver)
                    && matches!(
                        m.method.to_string().as_str(),
                        "assign" | "fill" | "mapv_inplace"
                    ) =>
            {
                *m.receiver = self.writable(m.receiver.span());
                for a in m.args.iter_mut() {
                    self.visit_expr_mut(a);
                }
            }
            Expr::Binary(b)
                if self.is_r(&b.left)
                    && matches!(
                        b.op,
                        syn::BinOp::AddAssign(_)
                            | syn::BinOp::SubAssign(_)
                            | syn::BinOp::MulAssign(_)
                            | syn::BinOp::DivAssign(_)
                    ) =>
            {
                *b.left = self.writable(b.left.span());
                self.visit_expr_mut(&mut b.right);
            }
            Expr::Index(i) if self.is_r(&i.expr) => match self.element(&i.index) {
                Some(el) => {
                    *e = el;
                    if let Expr::Index(i) = e {
                        self.visit_expr_mut(&mut i.index);
                    }
                }
                None => self.other = true,
            },
            Expr::Reference(r) if r.mutability.is_none() && self.is_r(&r.expr) => {
                let ro = self.read_only(span);
                *e = syn::parse_quote_spanned!(span=> &#ro);
            }
            Expr::MethodCall(m) if self.is_r(&m.receiver) => {
                if m.method.to_string().ends_with("_mut") {
                    self.other = true;
                    return;
                }
                *m.receiver = self.read_only(m.receiver.span());
                for a in m.args.iter_mut() {
                    self.visit_expr_mut(a);
                }
            }
            _ if self.is_r(e) => self.other = true,
            _ => syn::visit_mut::visit_expr_mut(self, e),
        }
    }
    fn visit_pat_ident_mut(&mut self, p: &mut syn::PatIdent) {
        if p.ident == *self.name {
            self.other = true;
        }
        syn::visit_mut::visit_pat_ident_mut(self, p);
    }
    fn visit_macro_mut(&mut self, m: &mut syn::Macro) {
        if tokens_mention(&m.tokens, &|i| i == self.name) {
            self.other = true;
        }
    }
}

/// The names in a borrowed place (`m[i]`, `b.row_mut(i)`), and those of them other than
/// the root `of` names: the indices, which must keep their values while the borrow is
/// written in its place.
fn borrowed_names(place: &impl quote::ToTokens, of: &Expr) -> (HashSet<String>, HashSet<String>) {
    let mut bound = HashSet::new();
    idents(&quote::ToTokens::to_token_stream(place), &mut bound);
    let mut indices = bound.clone();
    if let Some(root) = crate::activity::root_name(of) {
        indices.remove(&root);
    }
    (bound, indices)
}

/// Every identifier in a token stream.
fn idents(ts: &proc_macro2::TokenStream, out: &mut HashSet<String>) {
    for t in ts.clone() {
        match t {
            proc_macro2::TokenTree::Ident(i) => {
                out.insert(i.to_string());
            }
            proc_macro2::TokenTree::Group(g) => idents(&g.stream(), out),
            _ => {}
        }
    }
}

/// `let (a, b) = x.split_at(k);` (also `split_at_mut`) → `let mid = k;`, with `a[j]` →
/// `x[j]`, `b[j]` → `x[mid + j]`, `len()`, `iter()` and call arguments as sub-slices
/// of `x` in the statements after it. Left as written when a half is used otherwise, or
/// `x` is bound again (the halves borrow `x`, so it cannot change while they live).
fn inline_split_at(b: &mut syn::Block, next: &mut usize, active: &mut HashSet<String>) {
    let mut k = 0;
    while k < b.stmts.len() {
        // `let (a, b) = x[1..].split_at(k);` (or `split_at_mut`): the sub-slice bound
        // first, a sequence of its own that the halves are then read from.
        if let syn::Stmt::Local(l) = &mut b.stmts[k] {
            if let (Pat::Tuple(t), Some(init)) = (&l.pat, l.init.as_mut()) {
                if let Expr::MethodCall(m) = &mut *init.expr {
                    let mutable = m.method == "split_at_mut";
                    let borrow = if mutable {
                        quote::quote!(&mut)
                    } else {
                        quote::quote!(&)
                    };
                    let range = |e: &Expr| match unparen(e) {
                        Expr::Index(ix) if matches!(unparen(&ix.index), Expr::Range(_)) => {
                            Some(quote::quote!(#borrow #ix))
                        }
                        _ => None,
                    };
                    let sub = match unparen(&m.receiver) {
                        Expr::Reference(r) if r.mutability.is_some() == mutable => range(&r.expr),
                        other => range(other),
                    };
                    if let Some(sub) = sub.filter(|_| {
                        (mutable || m.method == "split_at")
                            && m.args.len() == 1
                            && t.elems.len() == 2
                    }) {
                        *next += 1;
                        let span = m.method.span();
                        let name = format_ident!("__mochi_sub{}", *next, span = span);
                        if mentions_active(&m.receiver, active) {
                            active.insert(name.to_string());
                        }
                        *m.receiver = syn::parse_quote_spanned!(span=> #name);
                        b.stmts
                            .insert(k, syn::parse_quote_spanned!(span=> let #name = #sub;));
                        k += 1;
                    }
                }
            }
        }
        let found = match &b.stmts[k] {
            syn::Stmt::Local(l) => match (&l.pat, l.init.as_ref()) {
                (Pat::Tuple(t), Some(init)) if init.diverge.is_none() && t.elems.len() == 2 => {
                    let half = |p: &Pat| match p {
                        Pat::Ident(i) if i.subpat.is_none() && i.by_ref.is_none() => {
                            Some(i.ident.clone())
                        }
                        _ => None,
                    };
                    match (&*init.expr, half(&t.elems[0]), half(&t.elems[1])) {
                        (Expr::MethodCall(m), Some(a), Some(c))
                            if (m.method == "split_at" || m.method == "split_at_mut")
                                && m.args.len() == 1
                                && matches!(&*m.receiver, Expr::Path(_) | Expr::Field(_)) =>
                        {
                            Some((
                                a,
                                c,
                                (*m.receiver).clone(),
                                m.args[0].clone(),
                                m.method.span(),
                                m.method == "split_at_mut",
                            ))
                        }
                        _ => None,
                    }
                }
                _ => None,
            },
            _ => None,
        };
        let Some((a, c, x, at, span, mutable)) = found else {
            k += 1;
            continue;
        };
        let (mut rest, hit) = rest_of_block(b, k, &x);
        // Both halves of `split_at_mut` handed to one call (`axpy(a, b)`): the halves
        // are read in place, as `x`, which one call cannot borrow twice.
        if mutable {
            struct BothHalves<'a>(&'a syn::Ident, &'a syn::Ident);
            impl VisitMut for BothHalves<'_> {
                fn visit_expr_mut(&mut self, e: &mut Expr) {
                    let args: Vec<&Expr> = match e {
                        Expr::Call(c) => c.args.iter().collect(),
                        Expr::MethodCall(m) => m.args.iter().chain([&*m.receiver]).collect(),
                        _ => Vec::new(),
                    };
                    // (An argument that is the half itself, `a`, `&a`, `&mut a`; an element
                    // `a[0]` is read by value.)
                    let names = |n: &syn::Ident| {
                        args.iter().any(|a| {
                            let a = match unparen(a) {
                                Expr::Reference(r) => unparen(&r.expr),
                                other => other,
                            };
                            matches!(a, Expr::Path(p) if p.path.is_ident(n))
                        })
                    };
                    if names(self.0) && names(self.1) {
                        let at = e.span();
                        *e = syn::parse_quote_spanned!(at=> {
                            ::core::compile_error!("mochi: the two halves of `split_at_mut` given to one call are not supported; read and write them by index in this function (`b[i] += s * a[i]`), or give a helper the whole buffer and the split point (`axpy_halves(&mut v, n)`)");
                            ::core::unreachable!()
                        });
                        return;
                    }
                    syn::visit_mut::visit_expr_mut(self, e);
                }
            }
            BothHalves(&a, &c).visit_block_mut(&mut rest);
        }
        *next += 1;
        let mid = format_ident!("__mochi_mid{}", *next, span = span);
        let zero = quote::quote!(0);
        let mid_t = quote::quote!(#mid);
        let tail = quote::quote!((#x.len() - #mid));
        let mut other = hit;
        // (The half named as `x` rewritten first: the other's reads, written as `x[..]`,
        // are not its. Until 2026-12-07 `let (a, x) = x.split_at(1);` read `a[0]` as
        // `x[mid + 0]`, silently.)
        let receiver_named = |n: &syn::Ident| matches!(&x, Expr::Path(p) if p.path.is_ident(n));
        let mut halves = [(&a, &zero, &mid_t), (&c, &mid_t, &tail)];
        if receiver_named(&c) {
            halves.reverse();
        }
        for (name, base, len) in halves {
            let mut uses = crate::iterchain::WindowUses {
                name,
                seq: &x,
                base,
                len,
                mutable,
                slices: true,
                other: false,
            };
            uses.visit_block_mut(&mut rest);
            other |= uses.other;
        }
        if other {
            // A half used otherwise (split again, `rest.split_at(n)`; bound to another
            // name): the halves as windows of `x`, `&x[..mid]` and `&x[mid..]`, which
            // `inline_windows` reads in place where it can. (`split_at_mut`'s halves
            // cannot both borrow `x` that way.)
            // (The half named as `x`, `let (x, us) = x.split_at(2);`, bound last: the
            // other is read from the `x` split, not from the half. Until 2026-12-07 `us`
            // was `&x[mid..]` of the half, an empty slice, silently.)
            if !mutable {
                let at_stmt: syn::Stmt = syn::parse_quote_spanned!(span=> let #mid: usize = #at;);
                let left: syn::Stmt = syn::parse_quote_spanned!(span=> let #a = &#x[..#mid];);
                let right: syn::Stmt = syn::parse_quote_spanned!(span=> let #c = &#x[#mid..];);
                let halves = if receiver_named(&a) {
                    [at_stmt, right, left]
                } else {
                    [at_stmt, left, right]
                };
                b.stmts.splice(k..=k, halves);
            }
            k += 1;
            continue;
        }
        b.stmts.truncate(k);
        b.stmts
            .push(syn::parse_quote_spanned!(span=> let #mid: usize = #at;));
        b.stmts.extend(rest.stmts);
        k += 1;
    }
}

/// `let mut it = x.iter();` (also `x.iter().copied()` or `.cloned()`), `x` a
/// differentiable sequence, read with `it.next()` and then consumed (`for v in it`,
/// `it.map(..).sum()`): a position, `let mut k = 0usize;`, with `it.next()` as
/// `x.get(k)` that steps `k` on when it is in bounds, and `it` as `x[k..].iter()`, which the
/// derivation reads as elements and a sub-slice of `x`; `for v in it.by_ref()` (or `&mut
/// it`) is the `while let Some(v) = it.next()` it is. Left as written when `it` is used
/// otherwise (`it.peek()`, `it` handed to a call or named in a macro) or bound again.
fn inline_held_iters(b: &mut syn::Block, next: &mut usize, active: &HashSet<String>) {
    use syn::visit::Visit;
    /// The methods that take the iterator by value (its last use) or only read it.
    const CONSUMING: &[&str] = &[
        "map",
        "filter",
        "filter_map",
        "sum",
        "product",
        "fold",
        "count",
        "last",
        "collect",
        "zip",
        "enumerate",
        "skip",
        "take",
        "rev",
        "step_by",
        "copied",
        "cloned",
        "chain",
        "max_by",
        "min_by",
        "max_by_key",
        "min_by_key",
        "reduce",
        "for_each",
        "len",
        "skip_while",
        "take_while",
        "scan",
        "flat_map",
        "partition",
        "unzip",
    ];
    /// How the statements after the `let` use the iterator.
    struct Uses<'a> {
        name: &'a syn::Ident,
        nexts: usize,
        other: bool,
    }
    impl<'a> Visit<'a> for Uses<'_> {
        fn visit_expr(&mut self, e: &'a Expr) {
            let named =
                |e: &Expr| matches!(unparen(e), Expr::Path(p) if p.path.is_ident(self.name));
            match e {
                Expr::MethodCall(m) if named(&m.receiver) => {
                    if m.method == "next" && m.args.is_empty() {
                        self.nexts += 1;
                    } else if !CONSUMING.contains(&m.method.to_string().as_str()) {
                        // (`it.nth(k)`, `it.find(p)`, `it.any(p)`, `it.next_back()` take
                        // `&mut self`: a later `it.next()` would start after them.)
                        self.other = true;
                    }
                    for a in &m.args {
                        self.visit_expr(a);
                    }
                }
                Expr::ForLoop(f) if named(&f.expr) => self.visit_block(&f.body),
                // `for v in it.by_ref()`, `for v in &mut it`: the loop of `it.next()`.
                Expr::ForLoop(f) if by_ref_of(&f.expr, self.name) => {
                    self.nexts += 1;
                    self.visit_block(&f.body);
                }
                Expr::Path(p) if p.path.is_ident(self.name) => self.other = true,
                _ => syn::visit::visit_expr(self, e),
            }
        }
        fn visit_pat_ident(&mut self, p: &'a syn::PatIdent) {
            self.other |= p.ident == *self.name;
        }
        fn visit_macro(&mut self, m: &'a syn::Macro) {
            self.other |= tokens_mention(&m.tokens, &|i| i == self.name);
        }
    }
    /// `it.by_ref()` or `&mut it`.
    fn by_ref_of(e: &Expr, name: &syn::Ident) -> bool {
        let named = |e: &Expr| matches!(unparen(e), Expr::Path(p) if p.path.is_ident(name));
        match unparen(e) {
            Expr::MethodCall(m) => m.method == "by_ref" && m.args.is_empty() && named(&m.receiver),
            Expr::Reference(r) => r.mutability.is_some() && named(&r.expr),
            _ => false,
        }
    }
    /// The rewrite of the uses.
    struct Held<'a> {
        name: &'a syn::Ident,
        seq: &'a Expr,
        adapter: &'a Option<syn::Ident>,
        k: &'a syn::Ident,
    }
    impl VisitMut for Held<'_> {
        fn visit_expr_mut(&mut self, e: &mut Expr) {
            let (seq, k, name) = (self.seq, self.k, self.name);
            let adapter = self.adapter.iter();
            let span = e.span();
            let named = |e: &Expr| matches!(unparen(e), Expr::Path(p) if p.path.is_ident(name));
            match e {
                Expr::MethodCall(m)
                    if m.method == "next" && m.args.is_empty() && named(&m.receiver) =>
                {
                    *e = syn::parse_quote_spanned!(span=>
                        #seq.get({
                            let at = #k;
                            if at < #seq.len() {
                                #k += 1;
                            }
                            at
                        })#(.#adapter())*
                    );
                }
                Expr::Path(p) if p.path.is_ident(name) => {
                    *e = syn::parse_quote_spanned!(span=> #seq[#k..].iter()#(.#adapter())*);
                }
                Expr::ForLoop(f) if by_ref_of(&f.expr, name) => {
                    let (label, pat, body) = (&f.label, &f.pat, &f.body);
                    *e = syn::parse_quote_spanned!(span=> #label while let Some(#pat) = #name.next() #body);
                    syn::visit_mut::visit_expr_mut(self, e);
                }
                _ => syn::visit_mut::visit_expr_mut(self, e),
            }
        }
    }
    let mut at = 0;
    while at < b.stmts.len() {
        let found = (|| {
            let syn::Stmt::Local(l) = &b.stmts[at] else {
                return None;
            };
            let Pat::Ident(p) = &l.pat else { return None };
            let init = l.init.as_ref()?;
            if p.mutability.is_none() || p.by_ref.is_some() || init.diverge.is_some() {
                return None;
            }
            let Expr::MethodCall(outer) = unparen(&init.expr) else {
                return None;
            };
            let mut m = outer;
            let mut adapter = None;
            if (m.method == "copied" || m.method == "cloned") && m.args.is_empty() {
                adapter = Some(m.method.clone());
                let Expr::MethodCall(inner) = unparen(&m.receiver) else {
                    return None;
                };
                m = inner;
            }
            let seq = unparen(&m.receiver);
            let root = matches!(seq, Expr::Path(q) if q.path.get_ident().is_some_and(|i| active.contains(&i.to_string())));
            (m.method == "iter" && m.args.is_empty() && root)
                .then(|| (p.ident.clone(), seq.clone(), adapter))
        })();
        let Some((name, seq, adapter)) = found else {
            at += 1;
            continue;
        };
        let mut uses = Uses {
            name: &name,
            nexts: 0,
            other: false,
        };
        for s in &b.stmts[at + 1..] {
            uses.visit_stmt(s);
        }
        let (rest, hit) = rest_of_block(b, at, &seq);
        // (The sequence assigned while the iterator walks it, `coeffs = &coeffs[1..];`
        // between two `it.next()`: the iterator walks the old one. Before 2026-12-08 the
        // positions read the new one, a silent wrong value.)
        if uses.other || uses.nexts == 0 || hit || reads_changed_before_use(b, at, &name, &seq) {
            at += 1;
            continue;
        }
        *next += 1;
        let k = format_ident!("__mochi_at{}", *next, span = name.span());
        let mut rest = rest;
        Held {
            name: &name,
            seq: &seq,
            adapter: &adapter,
            k: &k,
        }
        .visit_block_mut(&mut rest);
        b.stmts.truncate(at);
        b.stmts
            .push(syn::parse_quote_spanned!(name.span()=> let mut #k: usize = 0;));
        b.stmts.extend(rest.stmts);
        at += 1;
    }
}

/// `let q = x.last().copied();` (an `Option` read from a differentiable sequence without
/// changing it: `first`, `last`, `get`, `reduce`, `max_by`, `find`, … of `x` or of a chain
/// over it) and later `q.map(..)`, `q.filter(..)`, `q.map_or(..)`, `q.and_then(..)`,
/// `q.unwrap_or_default()` and the like: the combinator is applied to the expression
/// itself, `x.last().copied().filter(..)`, the form the combinator rewrites read (the
/// expression is read again, which changes nothing: `x` is not changed in between).
/// Other uses of `q` (`if let Some(v) = q`, `q.unwrap_or(d)`) read `q` as before.
fn inline_held_options(b: &mut syn::Block, active: &HashSet<String>) {
    use syn::visit::Visit;
    const COMBINATORS: &[&str] = &[
        "map",
        "filter",
        "map_or",
        "map_or_else",
        "and_then",
        "or",
        "or_else",
        "unwrap_or_default",
        "unwrap_or_else",
    ];
    /// A read of an `Option` from `x` that changes nothing: its root name.
    fn pure_option(e: &Expr, active: &HashSet<String>) -> bool {
        let mut e = unparen(e);
        if let Expr::MethodCall(m) = e {
            if (m.method == "copied" || m.method == "cloned") && m.args.is_empty() {
                e = unparen(&m.receiver);
            }
        }
        let Expr::MethodCall(m) = e else { return false };
        let maker = m.method.to_string();
        if !OPTION_MAKERS.contains(&maker.as_str())
            || matches!(maker.as_str(), "pop" | "next" | "next_back")
            || maker.starts_with("checked_")
        {
            return false;
        }
        let mut r = unparen(&m.receiver);
        while let Expr::MethodCall(c) = r {
            let name = c.method.to_string();
            if !matches!(
                name.as_str(),
                "iter"
                    | "copied"
                    | "cloned"
                    | "rev"
                    | "skip"
                    | "take"
                    | "step_by"
                    | "map"
                    | "filter"
            ) {
                return false;
            }
            r = unparen(&c.receiver);
        }
        matches!(r, Expr::Path(p) if p.path.get_ident().is_some_and(|i| active.contains(&i.to_string())))
    }
    struct Bound<'a>(&'a syn::Ident, bool);
    impl<'a> Visit<'a> for Bound<'_> {
        fn visit_pat_ident(&mut self, p: &'a syn::PatIdent) {
            self.1 |= p.ident == *self.0;
        }
        fn visit_macro(&mut self, m: &'a syn::Macro) {
            self.1 |= tokens_mention(&m.tokens, &|i| i == self.0);
        }
    }
    struct Put<'a>(&'a syn::Ident, &'a Expr);
    impl VisitMut for Put<'_> {
        fn visit_expr_method_call_mut(&mut self, m: &mut syn::ExprMethodCall) {
            syn::visit_mut::visit_expr_method_call_mut(self, m);
            let held = matches!(unparen(&m.receiver), Expr::Path(p) if p.path.is_ident(self.0));
            if held && COMBINATORS.contains(&m.method.to_string().as_str()) {
                *m.receiver = self.1.clone();
            }
        }
    }
    for at in 0..b.stmts.len() {
        let Some((name, init)) = plain_let(&b.stmts[at]) else {
            continue;
        };
        if !pure_option(init, active) {
            continue;
        }
        let (name, init) = (name.clone(), init.clone());
        // (`root_name` reads through the method calls to the sequence: `x` of
        // `x.iter().last()`.)
        let (_, hit) = rest_of_block(b, at, &init);
        let changed = crate::activity::root_name(&init).is_none_or(|r| {
            let written: HashSet<String> = [r.clone()].into();
            disturbed(&b.stmts[at + 1..], &written, &written)
                || changed_by_method(&b.stmts[at + 1..], &r)
        });
        let mut bound = Bound(&name, false);
        for s in &b.stmts[at + 1..] {
            bound.visit_stmt(s);
        }
        // Every other name the value reads (an index, `x.get(k)`; a capture of its
        // closure, `map(|v| v * w)`; a threshold, `position(|&v| v > thr)`) unchanged up
        // to the last use: the use reads the value the `let` made (before, `k += 2` or
        // `let w = ..` between the `let` and `map_or` changed it: a wrong value).
        if hit || changed || bound.1 || reads_changed_before_use(b, at, &name, &init) {
            continue;
        }
        for s in &mut b.stmts[at + 1..] {
            Put(&name, &init).visit_stmt_mut(s);
        }
    }
}

/// `unsafe { *x.get_unchecked(i) }` (also `x.get_unchecked(i)`, `get_unchecked_mut`, a
/// range): the element read by index, `x[i]` (`&x[i]`, `&mut x[i]`, `&x[a..b]`), the same
/// value for a program whose indices are in bounds, and the `unsafe` block a plain block,
/// when nothing else in it may need `unsafe` (raw pointers, `transmute`, other
/// `unchecked` methods, a macro, a call of a function other than `f64::m` keep the block,
/// and its error).
struct UncheckedIndexed;

impl VisitMut for UncheckedIndexed {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        syn::visit_mut::visit_expr_mut(self, e);
        if let Expr::Unsafe(u) = e {
            if let Some(block) = unsafe_as_block(u) {
                *e = Expr::Block(syn::ExprBlock {
                    attrs: u.attrs.clone(),
                    label: None,
                    block,
                });
            }
        }
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// See [`UncheckedIndexed`]: the block with its `get_unchecked` reads written by index,
/// when nothing else in it needs `unsafe`.
pub(crate) fn unsafe_as_block(u: &syn::ExprUnsafe) -> Option<syn::Block> {
    struct Indexed;
    impl VisitMut for Indexed {
        fn visit_expr_mut(&mut self, e: &mut Expr) {
            syn::visit_mut::visit_expr_mut(self, e);
            let span = e.span();
            // `*x.get_unchecked(i)`: `x[i]`.
            if let Expr::Unary(d) = e {
                if let (syn::UnOp::Deref(_), Expr::Reference(r)) = (&d.op, unparen(&d.expr)) {
                    if matches!(&*r.expr, Expr::Index(_)) {
                        *e = (*r.expr).clone();
                    }
                }
                return;
            }
            let Expr::MethodCall(m) = e else { return };
            let mutable = match m.method.to_string().as_str() {
                "get_unchecked" => false,
                "get_unchecked_mut" => true,
                _ => return,
            };
            if m.args.len() != 1 {
                return;
            }
            let (x, i) = (&m.receiver, &m.args[0]);
            *e = if mutable {
                syn::parse_quote_spanned!(span=> (&mut #x[#i]))
            } else {
                syn::parse_quote_spanned!(span=> (&#x[#i]))
            };
        }
    }
    /// A macro (`asm!`) or a call of a function (which may be an `unsafe fn`) other
    /// than a float's method by its path.
    struct Opaque(bool);
    impl<'a> syn::visit::Visit<'a> for Opaque {
        fn visit_macro(&mut self, _: &'a syn::Macro) {
            self.0 = true;
        }
        fn visit_expr_call(&mut self, c: &'a syn::ExprCall) {
            // (Also mochi's own, `lit::<T>(0.5)` of the generic form.)
            let float_method = matches!(&*c.func, Expr::Path(p)
                if (p.path.segments.len() == 2
                    && matches!(p.path.segments[0].ident.to_string().as_str(), "f64" | "f32"))
                    || p.path.segments[0].ident == "mochi");
            self.0 |= !float_method;
            syn::visit::visit_expr_call(self, c);
        }
    }
    let mut block = u.block.clone();
    Indexed.visit_block_mut(&mut block);
    let mut opaque = Opaque(false);
    syn::visit::Visit::visit_block(&mut opaque, &block);
    if opaque.0 {
        return None;
    }
    let mut words = HashSet::new();
    idents(&quote::quote!(#block), &mut words);
    let text = quote::quote!(#block).to_string();
    let unsafe_left = words.iter().any(|w| {
        w.contains("unchecked")
            || w.contains("ptr")
            || w.contains("raw")
            || matches!(
                w.as_str(),
                "transmute"
                    | "offset"
                    | "add"
                    | "sub"
                    | "read"
                    | "write"
                    | "zeroed"
                    | "assume_init"
                    | "unsafe"
            )
    }) || text.contains("* const")
        || text.contains("* mut");
    (!unsafe_left).then_some(block)
}

/// `v.resize(n, c)` of a local `Vec`: `v.truncate(n)`, then `push(c)` up to `n` (the
/// derivation grows a `Vec` by `push`; the function as written keeps `resize`).
struct ResizedByPush;

impl VisitMut for ResizedByPush {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        syn::visit_mut::visit_expr_mut(self, e);
        let Expr::MethodCall(r) = e else { return };
        if r.method != "resize"
            || r.args.len() != 2
            || !matches!(&*r.receiver, Expr::Path(p) if p.path.get_ident().is_some())
        {
            return;
        }
        let (v, n, c) = (&r.receiver, &r.args[0], &r.args[1]);
        // The value is computed once, as the call computes its arguments (before
        // 2026-12-07 once per element pushed: `v.resize(5, v[v.len() - 1] * a)` read the
        // new last element, a helper in it ran for each).
        let (bind, fill): (TokenStream, Expr) = if matches!(unparen(c), Expr::Lit(_)) {
            (TokenStream::new(), c.clone())
        } else {
            (
                quote::quote!(let __mochi_fill = #c;),
                syn::parse_quote!(__mochi_fill.clone()),
            )
        };
        *e = syn::parse_quote_spanned!(r.method.span()=> {
            let __mochi_len: usize = #n;
            #bind
            #v.truncate(__mochi_len);
            while #v.len() < __mochi_len {
                #v.push(#fill);
            }
        });
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// [`inline_held_options`] in every block (before `StoredChainEnds` writes a held chain
/// end out).
struct HeldOptions<'a>(&'a HashSet<String>);

impl VisitMut for HeldOptions<'_> {
    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        inline_held_options(b, self.0);
        syn::visit_mut::visit_block_mut(self, b);
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// Is `root` the receiver (by its root name) of a method that may change it (`v.push(t)`,
/// `v.sort_by(..)`, `v.iter_mut()`: any but the reads listed) in `code`?
fn changed_by_method(code: &[syn::Stmt], root: &str) -> bool {
    use syn::visit::Visit;
    const READS: &[&str] = &[
        "iter",
        "len",
        "is_empty",
        "get",
        "first",
        "last",
        "clone",
        "to_vec",
        "to_owned",
        "windows",
        "chunks",
        "chunks_exact",
        "rchunks",
        "split_at",
        "split_first",
        "split_last",
        "contains",
        "as_slice",
        "into_iter",
    ];
    struct M<'a>(&'a str, bool);
    impl<'a> Visit<'a> for M<'_> {
        fn visit_expr_method_call(&mut self, m: &'a syn::ExprMethodCall) {
            // (The receiver itself, `v` or `v[i]`: the methods of a chain over it,
            // `v.iter().map(..)`, read what `iter` gives.)
            let on_root = !matches!(unparen(&m.receiver), Expr::MethodCall(_))
                && crate::activity::root_name(&m.receiver).is_some_and(|r| r == self.0);
            self.1 |= on_root && !READS.contains(&m.method.to_string().as_str());
            syn::visit::visit_expr_method_call(self, m);
        }
    }
    let mut m = M(root, false);
    for s in code {
        m.visit_stmt(s);
    }
    m.1
}

/// The statements of `b` after the `k`-th, as a block, and whether they bind the root
/// of `x` again (a view of `x` taken at `k` would then name another value).
fn rest_of_block(b: &syn::Block, k: usize, x: &Expr) -> (syn::Block, bool) {
    let mut bound = HashSet::new();
    if let Some(r) = crate::activity::root_name(x) {
        bound.insert(r);
    }
    let rest = syn::Block {
        brace_token: b.brace_token,
        stmts: b.stmts[k + 1..].to_vec(),
    };
    let hit = disturbed(&rest.stmts, &HashSet::new(), &bound);
    (rest, hit)
}

/// `let it = x.chunks_exact(n);` (also `chunks`, `windows`, `rchunks`, `rchunks_exact`)
/// of a variable `x`, the iterator then used only as a method's receiver or a `for`'s
/// sequence (`it.remainder()`, `it.map(f).sum()`, `for c in it`): each use reads
/// `x.chunks_exact(n)` itself, which the chain rewrites take (these iterators are cheap
/// to make again, and `remainder` does not move them). Left as written when `x` is
/// bound again after the `let`.
fn inline_held_pieces(b: &mut syn::Block) {
    struct Uses<'a> {
        name: &'a syn::Ident,
        by: Expr,
        other: bool,
    }
    impl VisitMut for Uses<'_> {
        fn visit_expr_mut(&mut self, e: &mut Expr) {
            let named = |e: &Expr, n: &syn::Ident| matches!(unparen(e), Expr::Path(p) if p.path.is_ident(n));
            match e {
                Expr::MethodCall(m) if named(&m.receiver, self.name) => {
                    *m.receiver = self.by.clone();
                    for a in m.args.iter_mut() {
                        self.visit_expr_mut(a);
                    }
                }
                Expr::ForLoop(f) if named(&f.expr, self.name) => {
                    *f.expr = self.by.clone();
                    self.visit_block_mut(&mut f.body);
                }
                Expr::Path(p) if p.path.is_ident(self.name) => self.other = true,
                _ => syn::visit_mut::visit_expr_mut(self, e),
            }
        }
        fn visit_macro_mut(&mut self, m: &mut syn::Macro) {
            if crate::activity::tokens_mention(&m.tokens, &|i| i == self.name) {
                self.other = true;
            }
        }
    }
    let mut k = 0;
    while k < b.stmts.len() {
        let found = plain_let(&b.stmts[k]).and_then(|(name, init)| match unparen(init) {
            Expr::MethodCall(m)
                if m.args.len() == 1
                    && matches!(
                        m.method.to_string().as_str(),
                        "chunks_exact" | "chunks" | "windows" | "rchunks" | "rchunks_exact"
                    )
                    && matches!(unparen(&m.receiver), Expr::Path(x) if x.path.get_ident().is_some()) =>
            {
                Some((name.clone(), init.clone(), (*m.receiver).clone()))
            }
            _ => None,
        });
        let Some((name, mut init, x)) = found else {
            k += 1;
            continue;
        };
        // The size as it is at the `let`, `let __mochi_size_ch: usize = n;`, read by the
        // pieces where they are used (`let ch = x.chunks(n); let n = 3; ch.map(..)`:
        // before 2026-12-08 the pieces were read with the new `n`, a silent wrong value).
        let mut size = None;
        if let Expr::MethodCall(m) = &mut init {
            if !matches!(unparen(&m.args[0]), Expr::Lit(_)) {
                let snapshot = format_ident!("__mochi_size_{}", name);
                let n = m.args[0].clone();
                size = Some(syn::parse_quote!(let #snapshot: usize = #n;));
                m.args[0] = syn::parse_quote!(#snapshot);
            }
        }
        let (mut rest, hit) = rest_of_block(b, k, &x);
        let mut uses = Uses {
            name: &name,
            by: syn::parse_quote!((#init)),
            other: false,
        };
        uses.visit_block_mut(&mut rest);
        if hit || uses.other {
            k += 1;
            continue;
        }
        b.stmts.truncate(k);
        b.stmts.extend(size);
        b.stmts.extend(rest.stmts);
    }
}

/// Whether a name `init` reads (an index `k`, a size `n`, a capture `w`, a threshold)
/// is assigned, bound again or changed by a method in `b`'s statements after the `at`-th
/// up to the last one that names `held`: a value held in `held` and read again where it
/// is used (`inline_held_options`, `inline_held_pieces`) would then read another.
fn reads_changed_before_use(b: &syn::Block, at: usize, held: &syn::Ident, init: &Expr) -> bool {
    let last_use = (at + 1..b.stmts.len())
        .rev()
        .find(|&j| {
            crate::activity::tokens_mention(&quote::ToTokens::to_token_stream(&b.stmts[j]), &|i| {
                i == held
            })
        })
        .unwrap_or(at);
    let mut read = HashSet::new();
    idents(&quote::ToTokens::to_token_stream(init), &mut read);
    let span = &b.stmts[at + 1..=last_use];
    disturbed(span, &read, &read) || read.iter().any(|r| changed_by_method(span, r))
}

/// `let name = init;` with a plain name (not `mut`, not `ref`, no sub-pattern) and no
/// `else`: the name and the initialiser.
fn plain_let(s: &syn::Stmt) -> Option<(&syn::Ident, &Expr)> {
    let syn::Stmt::Local(l) = s else { return None };
    let (Pat::Ident(p), Some(init)) = (&l.pat, l.init.as_ref()) else {
        return None;
    };
    (p.mutability.is_none() && p.by_ref.is_none() && p.subpat.is_none() && init.diverge.is_none())
        .then_some((&p.ident, &*init.expr))
}

/// `let w = &x[a..b];` (also `a..`, `..b`, `..`, `a..=b`) with `x` a variable → `let
/// base = a; let len = window_len(x.len(), base, b);` (the checks of slicing), and in
/// the statements after it `w[j]`, `w.len()`, `w.iter()` and `w` as a call argument read
/// `x` itself, as `split_at`'s halves do: a read adds into `x`'s cotangent where it is,
/// instead of into a cotangent of the window added back after. (A parameter's cotangent
/// is dense, so the add needs no check; the window's was checked per read.) Left as
/// written when `w` is used otherwise or `x` is bound again.
fn inline_windows(b: &mut syn::Block, next: &mut usize) {
    let mut k = 0;
    while k < b.stmts.len() {
        // (Also `let s = &mut state[a..b];`, a window written through: a call given it
        // gets a copy written back, `WindowUses::write_back`.)
        let found = plain_let(&b.stmts[k]).and_then(|(name, init)| match init {
            Expr::Reference(r) => match &*r.expr {
                Expr::Index(i) => match (&*i.expr, &*i.index) {
                    (Expr::Path(x), Expr::Range(range)) if x.path.get_ident().is_some() => Some((
                        name.clone(),
                        (*i.expr).clone(),
                        range.clone(),
                        i.span(),
                        r.mutability.is_some(),
                    )),
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        });
        let Some((w, x, range, span, mutable)) = found else {
            k += 1;
            continue;
        };
        let (mut rest, hit) = rest_of_block(b, k, &x);
        // (The sequence itself assigned before a use, `rest = &rest[2..];` after `let w1 =
        // &rest[..2];`: the window is the old one's. Before 2026-12-08 its reads went to
        // the new `rest`, a silent wrong value.)
        if hit || reads_changed_before_use(b, k, &w, &x) {
            k += 1;
            continue;
        }
        *next += 1;
        let base = format_ident!("__mochi_wb{}", *next, span = span);
        let len = format_ident!("__mochi_wl{}", *next, span = span);
        let start = match &range.start {
            Some(s) => quote::quote!(#s),
            None => quote::quote!(0),
        };
        let end = match (&range.end, &range.limits) {
            (Some(e), syn::RangeLimits::Closed(_)) => quote::quote!((#e) + 1),
            (Some(e), _) => quote::quote!(#e),
            (None, _) => quote::quote!(#x.len()),
        };
        let (base_t, len_t) = (quote::quote!(#base), quote::quote!(#len));
        let mut uses = crate::iterchain::WindowUses {
            name: &w,
            seq: &x,
            base: &base_t,
            len: &len_t,
            mutable,
            slices: true,
            other: false,
        };
        uses.visit_block_mut(&mut rest);
        if uses.other {
            k += 1;
            continue;
        }
        b.stmts.truncate(k);
        b.stmts
            .push(syn::parse_quote_spanned!(span=> let #base: usize = #start;));
        b.stmts.push(syn::parse_quote_spanned!(span=>
            let #len: usize = ::mochi::__private::window_len(#x.len(), #base, #end);));
        b.stmts.extend(rest.stmts);
        k += 2;
    }
}

/// An index made of names, literals and arithmetic: evaluating it twice is harmless.
pub(crate) fn plain_index(e: &Expr) -> bool {
    match e {
        Expr::Lit(_) => true,
        Expr::Path(p) => p.qself.is_none(),
        Expr::Binary(b) => plain_index(&b.left) && plain_index(&b.right),
        Expr::Paren(p) => plain_index(&p.expr),
        Expr::Cast(c) => plain_index(&c.expr),
        Expr::Field(f) => plain_index(&f.base),
        _ => false,
    }
}

/// `place` with each index that is not plain bound to a variable first (every index
/// that is not a literal, with `all`).
fn bind_indices(
    e: &Expr,
    pre: &mut Vec<TokenStream>,
    span: Span,
    next: &mut usize,
    all: bool,
) -> Expr {
    match e {
        Expr::Index(i) => {
            let base = bind_indices(&i.expr, pre, span, next, all);
            let literal = matches!(&*i.index, Expr::Lit(_));
            let index = if plain_index(&i.index) && (literal || !all) {
                (*i.index).clone()
            } else {
                *next += 1;
                let v = format_ident!("__mochi_wbi{}", *next, span = span);
                let idx = &i.index;
                pre.push(quote_spanned!(span=> let #v = #idx;));
                syn::parse_quote!(#v)
            };
            syn::parse_quote!(#base[#index])
        }
        Expr::Field(f) => {
            let base = bind_indices(&f.base, pre, span, next, all);
            let m = &f.member;
            syn::parse_quote!(#base.#m)
        }
        Expr::Paren(p) => bind_indices(&p.expr, pre, span, next, all),
        other => other.clone(),
    }
}

/// `g(&mut m[i], x)` (also `&mut s.f`, `&mut m[i][j]`) → `{ let mut t = m[i].clone();
/// let r = g(&mut t, x); m[i] = t; r }`: the callee writes a variable, and the
/// assignment after it carries the element's derivative back. While the call runs no
/// other access to `m` compiles, so the copy and the element agree. An index other than
/// names, literals and arithmetic (`m[order[k]]`) is bound first, so that it is
/// evaluated once.
fn write_back_call(c: &syn::ExprCall, span: Span, next: &mut usize) -> Option<Expr> {
    // A function, not a constructor (`Some(&mut x[i])` keeps the borrow).
    let Expr::Path(fp) = &*c.func else {
        return None;
    };
    let last = fp.path.segments.last()?.ident.to_string();
    let in_mem = fp.path.segments.iter().any(|s| s.ident == "mem");
    if last.starts_with(|ch: char| ch.is_uppercase()) || in_mem {
        return None;
    }
    let mut pre = Vec::new();
    let mut post = Vec::new();
    let mut args = c.args.clone();
    let all_args = c.args.clone();
    for (n, a) in args.iter_mut().enumerate() {
        let Expr::Reference(r) = a else { continue };
        // `&mut x[a..b]` of a variable: the range's elements copied into a variable
        // (one by one, so that each carries its derivative), and written back after.
        if let (Some(_), Expr::Index(ix)) = (r.mutability, &*r.expr) {
            if let (Expr::Path(x), Expr::Range(range)) = (&*ix.expr, &*ix.index) {
                if x.path.get_ident().is_some() {
                    let (start, end) = range_bounds(range, &ix.expr, span);
                    *next += 1;
                    let (b0, e0, t, j) = (
                        format_ident!("__mochi_wbs{}", *next, span = span),
                        format_ident!("__mochi_wbe{}", *next, span = span),
                        format_ident!("__mochi_wb{}", *next, span = span),
                        format_ident!("__mochi_wbj{}", *next, span = span),
                    );
                    pre.push(quote_spanned!(span=>
                        let #b0: usize = #start;
                        let #e0: usize = #end;
                        let mut #t = ::mochi::no_grad(#x[#b0..#e0].to_vec());
                        for #j in 0..#t.len() {
                            #t[#j] = #x[#b0 + #j];
                        }
                    ));
                    post.push(quote_spanned!(span=>
                        for #j in 0..#t.len() {
                            #x[#b0 + #j] = #t[#j];
                        }
                    ));
                    *a = syn::parse_quote_spanned!(span=> &mut #t);
                    continue;
                }
            }
        }
        if r.mutability.is_none() || !element_place(&r.expr) {
            continue;
        }
        // An index another argument names (`bump(&mut v[k], &mut k)`): read once, as
        // Rust reads the place before the other arguments, so that the element goes
        // back where it came from.
        let mut names = HashSet::new();
        idents(&quote::ToTokens::to_token_stream(&r.expr), &mut names);
        let named_elsewhere = all_args.iter().enumerate().any(|(m, o)| {
            m != n
                && tokens_mention(&quote::ToTokens::to_token_stream(o), &|i| {
                    names.contains(&i.to_string())
                })
        });
        *next += 1;
        let t = format_ident!("__mochi_wb{}", *next, span = span);
        let place = bind_indices(&r.expr, &mut pre, span, next, named_elsewhere);
        pre.push(quote_spanned!(span=> let mut #t = #place.clone();));
        post.push(quote_spanned!(span=> #place = #t;));
        *a = syn::parse_quote_spanned!(span=> &mut #t);
    }
    if pre.is_empty() {
        return None;
    }
    let func = &c.func;
    let r = format_ident!("__mochi_wbr{}", *next, span = span);
    Some(syn::parse_quote_spanned!(span=> {
        #(#pre)*
        let #r = #func(#args);
        #(#post)*
        #r
    }))
}

/// An element or a field of a variable (`m[i]`, `s.rows[k]`, `v[i].w`), not a range.
fn element_place(e: &Expr) -> bool {
    match e {
        Expr::Index(i) => {
            !matches!(&*i.index, Expr::Range(_))
                && (matches!(&*i.expr, Expr::Path(p) if p.path.get_ident().is_some())
                    || element_place(&i.expr))
        }
        Expr::Field(f) => {
            matches!(&*f.base, Expr::Path(p) if p.path.get_ident().is_some())
                || element_place(&f.base)
        }
        Expr::Paren(p) => element_place(&p.expr),
        _ => false,
    }
}

/// The first position and the end of the range `r` of `v` (`a..b`, `a..=b`, `a..`,
/// `..b`), as written.
fn range_bounds(r: &syn::ExprRange, v: &Expr, span: Span) -> (TokenStream, TokenStream) {
    let start = r
        .start
        .as_ref()
        .map_or_else(|| quote_spanned!(span=> 0), |s| quote_spanned!(span=> #s));
    let end = match (&r.end, &r.limits) {
        (Some(end), syn::RangeLimits::HalfOpen(_)) => quote_spanned!(span=> #end),
        (Some(end), syn::RangeLimits::Closed(_)) => quote_spanned!(span=> (#end) + 1),
        (None, _) => quote_spanned!(span=> #v.len()),
    };
    (start, end)
}

/// `let mut it = src; … while let Some(p) = it.next() { body }` with `it` used nowhere
/// else: `for p in src { body }`, which the loop rewrites take.
struct WhileLetNext;

impl VisitMut for WhileLetNext {
    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        let mut k = 0;
        while k < b.stmts.len() {
            if let Some((name, src)) = mut_let(&b.stmts[k]) {
                let uses: Vec<usize> = (k + 1..b.stmts.len())
                    .filter(|&j| {
                        tokens_mention(&quote::ToTokens::to_token_stream(&b.stmts[j]), &|i| {
                            i == &name
                        })
                    })
                    .collect();
                if let [j] = uses[..] {
                    if let Some(f) = next_loop(&b.stmts[j], &name, &src) {
                        b.stmts[j] = syn::Stmt::Expr(f, None);
                        b.stmts.remove(k);
                        continue;
                    }
                }
            }
            k += 1;
        }
        syn::visit_mut::visit_block_mut(self, b);
    }
}

/// A local `VecDeque` (`let mut w: VecDeque<f64> = VecDeque::with_capacity(k)`, also
/// `VecDeque::new()`, `VecDeque::from(..)`, `collect::<VecDeque<_>>()`) used only
/// through its methods, indexing and loops, as a `Vec`: `push_back` → `push`,
/// `push_front(e)` → `insert(0, e)`, `pop_back` → `pop`, `front`/`back` →
/// `first`/`last`, and `pop_front` where its value is bound or dropped (`w.pop_front();`
/// → `if !w.is_empty() { w.remove(0); }`, `let p = w.pop_front().unwrap();` → `let p =
/// w.remove(0);`, `if let Some(p) = w.pop_front() { A }` and `while let Some(p) = ..` →
/// `!w.is_empty()` with `let p = w.remove(0);` first), which the derivation follows as
/// a buffer's edits (`ShortenedBuffers`). The function as written keeps the deque.
struct DequesAsVecs;

impl DequesAsVecs {
    /// Whether `ty` is `VecDeque<..>` by any path.
    fn deque_type(ty: &syn::Type) -> bool {
        matches!(ty, syn::Type::Path(p) if p.qself.is_none()
            && p.path.segments.last().is_some_and(|s| s.ident == "VecDeque"))
    }

    /// `VecDeque<E>` (by any path) as `::std::vec::Vec<E>` (`std::collections::Vec`
    /// would not resolve: the path is written whole).
    fn as_vec(ty: &syn::Type) -> Option<syn::Type> {
        let syn::Type::Path(tp) = ty else { return None };
        let last = tp.path.segments.last().filter(|_| Self::deque_type(ty))?;
        let args = &last.arguments;
        Some(syn::parse_quote_spanned!(last.ident.span()=> ::std::vec::Vec #args))
    }

    /// The name of `let mut w[: VecDeque<..>] = <a deque>;`.
    fn deque_let(st: &syn::Stmt) -> Option<syn::Ident> {
        let syn::Stmt::Local(l) = st else { return None };
        let init = l.init.as_ref().filter(|i| i.diverge.is_none())?;
        let (pi, ty) = match &l.pat {
            Pat::Type(t) => match &*t.pat {
                Pat::Ident(pi) => (pi, Some(&*t.ty)),
                _ => return None,
            },
            Pat::Ident(pi) => (pi, None),
            _ => return None,
        };
        if pi.mutability.is_none() || pi.by_ref.is_some() {
            return None;
        }
        let init_is_deque = tokens_mention(&quote::ToTokens::to_token_stream(&init.expr), &|i| {
            i == "VecDeque"
        });
        (ty.is_some_and(Self::deque_type) || (ty.is_none() && init_is_deque))
            .then(|| pi.ident.clone())
    }

    /// Whether every use of `name` in `stmts` is a method's receiver, an indexed base or
    /// a loop's sequence (nothing hands the deque to code that needs its type).
    fn only_local_uses(stmts: &[syn::Stmt], name: &syn::Ident) -> bool {
        /// Whether the name is met anywhere but in those uses (which are not walked
        /// into, but for their arguments, indices and bodies).
        struct Uses<'a> {
            name: &'a syn::Ident,
            other: bool,
        }
        impl<'ast> syn::visit::Visit<'ast> for Uses<'_> {
            fn visit_expr(&mut self, e: &'ast Expr) {
                let is_name =
                    |e: &Expr| matches!(unparen(e), Expr::Path(p) if p.path.is_ident(self.name));
                match e {
                    Expr::MethodCall(m) if is_name(&m.receiver) => {
                        m.args.iter().for_each(|a| self.visit_expr(a));
                    }
                    Expr::Index(ix) if is_name(&ix.expr) => self.visit_expr(&ix.index),
                    Expr::ForLoop(f)
                        if is_name(match unparen(&f.expr) {
                            Expr::Reference(r) => &r.expr,
                            other => other,
                        }) =>
                    {
                        self.visit_block(&f.body)
                    }
                    _ => syn::visit::visit_expr(self, e),
                }
            }
            fn visit_ident(&mut self, i: &'ast syn::Ident) {
                self.other |= i == self.name;
            }
        }
        let mut u = Uses { name, other: false };
        for st in stmts {
            syn::visit::Visit::visit_stmt(&mut u, st);
        }
        !u.other
    }
}

/// The rewrite of one deque's uses (see [`DequesAsVecs`]).
struct DequeUses<'a>(&'a syn::Ident);

impl DequeUses<'_> {
    fn is_name(&self, e: &Expr) -> bool {
        matches!(unparen(e), Expr::Path(p) if p.path.is_ident(self.0))
    }

    /// `w.pop_front()` of the deque.
    fn pop_front(&self, e: &Expr) -> bool {
        matches!(unparen(e), Expr::MethodCall(m)
            if m.method == "pop_front" && m.args.is_empty() && self.is_name(&m.receiver))
    }

    /// A statement whose `pop_front` is dropped or unwrapped, rewritten; then its parts.
    fn statement(&mut self, st: &mut syn::Stmt) {
        let w = self.0;
        match st {
            // `w.pop_front();`
            syn::Stmt::Expr(e, Some(_)) if self.pop_front(e) => {
                let span = e.span();
                *e = syn::parse_quote_spanned!(span=> if !#w.is_empty() { #w.remove(0); });
            }
            // `let p = w.pop_front().unwrap();` (or `expect(..)`)
            syn::Stmt::Local(l) => {
                if let Some(init) = l.init.as_mut().filter(|i| i.diverge.is_none()) {
                    if let Expr::MethodCall(u) = unparen(&init.expr) {
                        if matches!(u.method.to_string().as_str(), "unwrap" | "expect")
                            && self.pop_front(&u.receiver)
                        {
                            let span = u.method.span();
                            *init.expr = syn::parse_quote_spanned!(span=> #w.remove(0));
                        }
                    }
                }
            }
            _ => {}
        }
        self.visit_stmt_mut(st);
    }
}

impl VisitMut for DequeUses<'_> {
    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        for st in &mut b.stmts {
            self.statement(st);
        }
    }

    fn visit_expr_mut(&mut self, e: &mut Expr) {
        let w = self.0;
        // `if let Some(p) = w.pop_front() { A } else { B }`, `while let ..`.
        let taken = |cond: &Expr| -> Option<Pat> {
            let Expr::Let(l) = cond else { return None };
            let Pat::TupleStruct(ts) = &*l.pat else {
                return None;
            };
            (ts.path.is_ident("Some") && ts.elems.len() == 1 && self.pop_front(&l.expr))
                .then(|| ts.elems[0].clone())
        };
        match e {
            Expr::If(i) => {
                if let Some(p) = taken(&i.cond) {
                    let span = i.if_token.span;
                    *i.cond = syn::parse_quote_spanned!(span=> !#w.is_empty());
                    i.then_branch
                        .stmts
                        .insert(0, syn::parse_quote_spanned!(span=> let #p = #w.remove(0);));
                }
            }
            Expr::While(wh) => {
                if let Some(p) = taken(&wh.cond) {
                    let span = wh.while_token.span;
                    *wh.cond = syn::parse_quote_spanned!(span=> !#w.is_empty());
                    wh.body
                        .stmts
                        .insert(0, syn::parse_quote_spanned!(span=> let #p = #w.remove(0);));
                }
            }
            _ => {}
        }
        syn::visit_mut::visit_expr_mut(self, e);
        if let Expr::MethodCall(m) = e {
            if self.is_name(&m.receiver) {
                let to = match (m.method.to_string().as_str(), m.args.len()) {
                    ("push_back", 1) => Some("push"),
                    ("pop_back", 0) => Some("pop"),
                    ("front", 0) => Some("first"),
                    ("back", 0) => Some("last"),
                    ("front_mut", 0) => Some("first_mut"),
                    ("back_mut", 0) => Some("last_mut"),
                    ("push_front", 1) => {
                        let v = &m.args[0];
                        let span = m.method.span();
                        *e = syn::parse_quote_spanned!(span=> #w.insert(0, #v));
                        return;
                    }
                    _ => None,
                };
                if let Some(to) = to {
                    m.method = syn::Ident::new(to, m.method.span());
                }
            }
        }
    }
}

impl VisitMut for DequesAsVecs {
    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        syn::visit_mut::visit_block_mut(self, b);
        for k in 0..b.stmts.len() {
            let Some(name) = Self::deque_let(&b.stmts[k]) else {
                continue;
            };
            if !Self::only_local_uses(&b.stmts[k + 1..], &name) {
                continue;
            }
            if let syn::Stmt::Local(l) = &mut b.stmts[k] {
                if let Pat::Type(t) = &mut l.pat {
                    if let Some(v) = DequesAsVecs::as_vec(&t.ty) {
                        *t.ty = v;
                    }
                }
                if let Some(init) = l.init.as_mut() {
                    rooted_vec(&mut init.expr);
                }
            }
            let mut uses = DequeUses(&name);
            for st in &mut b.stmts[k + 1..] {
                uses.statement(st);
            }
        }
    }
}

/// `VecDeque::new()`, `std::collections::VecDeque::with_capacity(n)` → the same of
/// `::std::vec::Vec`; `VecDeque::from(v)` → `v` of a `vec![..]`, else `(v).to_vec()`;
/// `collect::<VecDeque<_>>()` → `collect::<Vec<_>>()`.
fn rooted_vec(e: &mut Expr) {
    struct R;
    impl VisitMut for R {
        fn visit_expr_mut(&mut self, e: &mut Expr) {
            if let Expr::Call(c) = e {
                if let Expr::Path(f) = &*c.func {
                    let segs = &f.path.segments;
                    if c.args.len() == 1
                        && segs.len() >= 2
                        && segs[segs.len() - 2].ident == "VecDeque"
                        && segs[segs.len() - 1].ident == "from"
                    {
                        let v = c.args[0].clone();
                        *e = match &v {
                            Expr::Macro(m) if m.mac.path.is_ident("vec") => v,
                            _ => syn::parse_quote!((#v).to_vec()),
                        };
                        return;
                    }
                }
            }
            syn::visit_mut::visit_expr_mut(self, e);
        }
        fn visit_expr_path_mut(&mut self, p: &mut syn::ExprPath) {
            let segs = &p.path.segments;
            if segs.len() >= 2 && segs[segs.len() - 2].ident == "VecDeque" {
                let f = segs[segs.len() - 1].clone();
                let span = f.ident.span();
                *p = syn::parse_quote_spanned!(span=> ::std::vec::Vec::#f);
                return;
            }
            syn::visit_mut::visit_expr_path_mut(self, p);
        }
        fn visit_generic_argument_mut(&mut self, g: &mut syn::GenericArgument) {
            if let syn::GenericArgument::Type(t) = g {
                if let Some(v) = DequesAsVecs::as_vec(t) {
                    *t = v;
                    return;
                }
            }
            syn::visit_mut::visit_generic_argument_mut(self, g);
        }
    }
    R.visit_expr_mut(e);
}

/// `let mut st = ..; … while let Some(p) = st.pop() { body }` with `body` not naming
/// `st` and nothing after the loop naming it (a stack drained): `for i in
/// (0..st.len()).rev() { let p = st[i].clone(); body }`, the same elements in the same
/// order, read by index (a `pop` elsewhere rebuilds the buffer, `ShortenedBuffers`,
/// O(n) a trip here). A `break` leaves elements behind, which nothing reads.
struct WhileLetPop;

impl VisitMut for WhileLetPop {
    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        for k in 0..b.stmts.len() {
            let Some((name, _)) = mut_let(&b.stmts[k]) else {
                continue;
            };
            let mentions = |s: &syn::Stmt| {
                tokens_mention(&quote::ToTokens::to_token_stream(s), &|i| i == &name)
            };
            for j in k + 1..b.stmts.len() {
                if !mentions(&b.stmts[j]) {
                    continue;
                }
                if let Some(f) = pop_loop(&b.stmts[j], &name) {
                    if !b.stmts[j + 1..].iter().any(mentions) {
                        b.stmts[j] = syn::Stmt::Expr(f, None);
                    }
                }
            }
        }
        syn::visit_mut::visit_block_mut(self, b);
    }
}

/// `while let Some(p) = v.pop() { body }` that [`WhileLetPop`] left (the body pushes
/// onto `v`, a worklist) → `loop { if v.is_empty() { break; } let p = v.pop().unwrap();
/// body }`: the same trips, the popped value bound whole, as the derivation takes it.
struct WhileLetPopped;

impl VisitMut for WhileLetPopped {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        syn::visit_mut::visit_expr_mut(self, e);
        let Expr::While(w) = e else { return };
        let Expr::Let(l) = &*w.cond else { return };
        let Pat::TupleStruct(ts) = &*l.pat else {
            return;
        };
        if !ts.path.is_ident("Some") || ts.elems.len() != 1 || !popped(&l.expr) {
            return;
        }
        let Expr::MethodCall(m) = unparen(&l.expr) else {
            return;
        };
        let (v, p, label, body) = (&m.receiver, &ts.elems[0], &w.label, &w.body);
        let span = m.method.span();
        let stmts = &body.stmts;
        *e = syn::parse_quote_spanned!(span=> #label loop {
            if #v.is_empty() {
                break;
            }
            let #p = #v.pop().unwrap();
            #(#stmts)*
        });
    }
}

/// `while let Some(p) = v.m() { body }` with `body` not naming `v`: `p`, the `while`
/// and the span of `m`.
fn while_let_some<'a>(
    s: &'a syn::Stmt,
    v: &syn::Ident,
    method: &str,
) -> Option<(&'a Pat, &'a syn::ExprWhile, Span)> {
    let syn::Stmt::Expr(Expr::While(w), _) = s else {
        return None;
    };
    let Expr::Let(l) = &*w.cond else { return None };
    let Pat::TupleStruct(ts) = &*l.pat else {
        return None;
    };
    if !ts.path.is_ident("Some") || ts.elems.len() != 1 {
        return None;
    }
    let Expr::MethodCall(m) = &*l.expr else {
        return None;
    };
    if m.method != method
        || !m.args.is_empty()
        || !matches!(&*m.receiver, Expr::Path(p) if p.path.is_ident(v))
    {
        return None;
    }
    if tokens_mention(&quote::ToTokens::to_token_stream(&w.body), &|i| i == v) {
        return None;
    }
    Some((&ts.elems[0], w, m.method.span()))
}

/// `while let Some(p) = st.pop() { body }` with `body` not naming `st`: the index loop
/// of [`WhileLetPop`].
fn pop_loop(s: &syn::Stmt, st: &syn::Ident) -> Option<Expr> {
    let (pat, w, span) = while_let_some(s, st, "pop")?;
    let (stmts, label) = (&w.body.stmts, &w.label);
    let i = format_ident!("__mochi_popped", span = span);
    Some(
        syn::parse_quote_spanned!(span=> #label for #i in (0..#st.len()).rev() {
            let #pat = #st[#i].clone();
            #(#stmts)*
        }),
    )
}

/// `let mut it = e;`: `it` and `e`.
fn mut_let(s: &syn::Stmt) -> Option<(syn::Ident, Expr)> {
    let syn::Stmt::Local(l) = s else { return None };
    let pat = match &l.pat {
        Pat::Type(t) => &*t.pat,
        p => p,
    };
    let Pat::Ident(p) = pat else { return None };
    let init = l.init.as_ref()?;
    if p.mutability.is_none() || p.by_ref.is_some() || init.diverge.is_some() {
        return None;
    }
    Some((p.ident.clone(), (*init.expr).clone()))
}

/// `while let Some(p) = it.next() { body }` with `body` not naming `it`: `for p in src
/// { body }`.
fn next_loop(s: &syn::Stmt, it: &syn::Ident, src: &Expr) -> Option<Expr> {
    let (pat, w, _) = while_let_some(s, it, "next")?;
    let (body, label) = (&w.body, &w.label);
    Some(syn::parse_quote!(#label for #pat in #src #body))
}

/// A search's position (`x.iter().position(p)`, `binary_search_by`, …, which this
/// desugaring wraps in `no_grad`) or any `no_grad(..)`: an `Option` or a `Result` of
/// integers, matched as written.
fn no_derivative(e: &Expr) -> bool {
    match unparen(e) {
        Expr::Call(c) => matches!(&*c.func, Expr::Path(p)
            if p.path.segments.last().is_some_and(|s| s.ident == "no_grad")),
        Expr::MethodCall(m) => matches!(
            m.method.to_string().as_str(),
            "position"
                | "rposition"
                | "binary_search"
                | "binary_search_by"
                | "binary_search_by_key"
        ),
        _ => false,
    }
}

/// A chain that lends its elements mutably: `bs.iter_mut()` somewhere down its
/// receivers (`bs.iter_mut().enumerate().map(..)`).
fn lends_elements(e: &Expr) -> bool {
    let mut r = unparen(e);
    while let Expr::MethodCall(c) = r {
        if c.method == "iter_mut" && c.args.is_empty() {
            return true;
        }
        r = unparen(&c.receiver);
    }
    false
}

/// `(&mut v[i]).m(args)` (a method called on an element a loop borrows mutably,
/// `Substitute::mut_receivers`) → `{ let mut t = v[i].clone(); let r = (&mut
/// t).m(args); v[i] = t; r }`, as [`write_back_call`] does for an argument.
fn write_back_receiver(m: &syn::ExprMethodCall, span: Span, next: &mut usize) -> Option<Expr> {
    let Expr::Paren(p) = &*m.receiver else {
        return None;
    };
    let Expr::Reference(r) = &*p.expr else {
        return None;
    };
    if r.mutability.is_none() || !element_place(&r.expr) {
        return None;
    }
    let mut pre = Vec::new();
    *next += 1;
    let t = format_ident!("__mochi_wb{}", *next, span = span);
    let res = format_ident!("__mochi_wbr{}", *next, span = span);
    let mut names = HashSet::new();
    idents(&quote::ToTokens::to_token_stream(&r.expr), &mut names);
    let named = m.args.iter().any(|a| {
        tokens_mention(&quote::ToTokens::to_token_stream(a), &|i| {
            names.contains(&i.to_string())
        })
    });
    let place = bind_indices(&r.expr, &mut pre, span, next, named);
    let (method, turbofish, args) = (&m.method, &m.turbofish, &m.args);
    Some(syn::parse_quote_spanned!(span=> {
        #(#pre)*
        let mut #t = #place.clone();
        let #res = (&mut #t).#method #turbofish(#args);
        #place = #t;
        #res
    }))
}

/// [`write_back_receiver`] and [`write_back_call`] over an expression (a loop whose
/// element became `&mut v[i]`: `(&mut v[i]).bump(x)`, `scale(&mut v[i], s)`).
struct WriteBackReceivers<'a>(&'a mut usize);

impl VisitMut for WriteBackReceivers<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        syn::visit_mut::visit_expr_mut(self, e);
        let span = e.span();
        let r = match &*e {
            Expr::MethodCall(m) => write_back_receiver(m, span, self.0),
            Expr::Call(c) => write_back_call(c, span, self.0),
            _ => None,
        };
        if let Some(r) = r {
            *e = r;
        }
    }
}

/// The uses of `r` after `let r = &mut place;`: `r[j]`, `*r`, `r.f`, `r.m(..)` name the
/// place itself, any other use (`helper(r)`, `for v in r`) the borrow `&mut place`.
/// Each keeps the span of the name it replaces.
struct BorrowUses<'a> {
    name: &'a syn::Ident,
    place: &'a Expr,
    /// `r` is bound again: the rewrite is abandoned.
    shadowed: bool,
}

impl BorrowUses<'_> {
    fn is_r(&self, e: &Expr) -> bool {
        matches!(e, Expr::Path(p) if p.path.get_ident() == Some(self.name))
    }
    fn place_at(&self, span: Span) -> Expr {
        let place = self.place;
        let mut e: Expr = syn::parse_quote!((#place));
        if let Expr::Paren(p) = &mut e {
            p.paren_token = syn::token::Paren(span);
        }
        e
    }
}

impl VisitMut for BorrowUses<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        let span = e.span();
        match e {
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) && self.is_r(&u.expr) => {
                *e = self.place_at(span);
            }
            Expr::Index(i) if self.is_r(&i.expr) => {
                *i.expr = self.place_at(i.expr.span());
                self.visit_expr_mut(&mut i.index);
            }
            Expr::Field(f) if self.is_r(&f.base) => {
                *f.base = self.place_at(f.base.span());
            }
            Expr::MethodCall(m) if self.is_r(&m.receiver) => {
                *m.receiver = self.place_at(m.receiver.span());
                for a in m.args.iter_mut() {
                    self.visit_expr_mut(a);
                }
            }
            _ if self.is_r(e) => {
                let place = self.place;
                *e = syn::parse_quote_spanned!(span=> &mut #place);
            }
            _ => syn::visit_mut::visit_expr_mut(self, e),
        }
    }
    fn visit_pat_ident_mut(&mut self, p: &mut syn::PatIdent) {
        if p.ident == *self.name {
            self.shadowed = true;
        }
        syn::visit_mut::visit_pat_ident_mut(self, p);
    }
    fn visit_macro_mut(&mut self, m: &mut syn::Macro) {
        if tokens_mention(&m.tokens, &|i| i == self.name) {
            self.shadowed = true;
        }
    }
}

/// `t[a][b][c] = v` (three or more indices; also `op=`) → `{ let mut r =
/// t[a][b].clone(); r[c] = v; t[a][b] = r; }`: the lowering writes places of at most
/// two indices, and the row is copied, written and assigned back (an index read from
/// data is bound first, so it is evaluated once). Deeper places recurse when the
/// result is rewritten in its turn.
fn deep_assign(
    left: &Expr,
    rebuild: &dyn Fn(Expr) -> Expr,
    span: Span,
    next: &mut usize,
) -> Option<Expr> {
    fn depth(e: &Expr) -> usize {
        match e {
            Expr::Index(i) if !matches!(&*i.index, Expr::Range(_)) => 1 + depth(&i.expr),
            Expr::Paren(p) => depth(&p.expr),
            _ => 0,
        }
    }
    let Expr::Index(last) = left else { return None };
    if depth(left) < 3 {
        return None;
    }
    let mut pre = Vec::new();
    let row = bind_indices(&last.expr, &mut pre, span, next, false);
    let index = if plain_index(&last.index) {
        (*last.index).clone()
    } else {
        *next += 1;
        let v = format_ident!("__mochi_dai{}", *next, span = span);
        let idx = &last.index;
        pre.push(quote_spanned!(span=> let #v = #idx;));
        syn::parse_quote!(#v)
    };
    *next += 1;
    let r = format_ident!("__mochi_row{}", *next, span = span);
    let write = rebuild(syn::parse_quote_spanned!(span=> #r[#index]));
    Some(syn::parse_quote_spanned!(span=> {
        #(#pre)*
        let mut #r = #row.clone();
        #write;
        #row = #r;
    }))
}

/// Rewrites assignments to a field of an element (`st[k].v += e`) with
/// [`field_of_element_assign`].
struct FieldWrites<'a> {
    active: &'a HashSet<String>,
    next: &'a mut usize,
}

impl VisitMut for FieldWrites<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        syn::visit_mut::visit_expr_mut(self, e);
        let span = e.span();
        let r = match e {
            Expr::Assign(a) if mentions_active(&a.left, self.active) => {
                let right = a.right.clone();
                let rebuild = move |place: Expr| -> Expr { syn::parse_quote!(#place = #right) };
                field_of_element_assign(&a.left, &rebuild, span, self.next)
            }
            Expr::Binary(b)
                if crate::activity::is_arithmetic_assign(&b.op)
                    && mentions_active(&b.left, self.active) =>
            {
                let (op, right) = (b.op, b.right.clone());
                let rebuild = move |place: Expr| -> Expr { syn::parse_quote!(#place #op #right) };
                field_of_element_assign(&b.left, &rebuild, span, self.next)
            }
            _ => None,
        };
        if let Some(r) = r {
            *e = r;
        }
    }
}

/// Does `body` assign to a field of `name` (`name.v = e`, `name.pos.x += e`)?
fn writes_field_of(body: &syn::Block, name: &syn::Ident) -> bool {
    struct W<'a> {
        name: &'a syn::Ident,
        found: bool,
    }
    impl W<'_> {
        fn check(&mut self, left: &Expr) {
            let mut e = left;
            let mut field = false;
            loop {
                match e {
                    Expr::Field(f) => {
                        field = true;
                        e = &f.base;
                    }
                    Expr::Paren(p) => e = &p.expr,
                    Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => e = &u.expr,
                    _ => break,
                }
            }
            if field && matches!(e, Expr::Path(p) if p.path.is_ident(self.name)) {
                self.found = true;
            }
        }
    }
    impl<'ast> syn::visit::Visit<'ast> for W<'_> {
        fn visit_expr_assign(&mut self, a: &'ast syn::ExprAssign) {
            self.check(&a.left);
            syn::visit::visit_expr_assign(self, a);
        }
        fn visit_expr_binary(&mut self, b: &'ast syn::ExprBinary) {
            if crate::activity::is_arithmetic_assign(&b.op) {
                self.check(&b.left);
            }
            syn::visit::visit_expr_binary(self, b);
        }
    }
    let mut w = W { name, found: false };
    syn::visit::Visit::visit_block(&mut w, body);
    w.found
}

/// `st[i].v += e` (a field of an element; also deeper, `st[i].pos.x = e`, and an element
/// of a field, `st[i].vel[0] += e`) → `{ let mut q = st[i].clone(); q.v += e; st[i] = q;
/// }`: the lowering writes fields of variables
/// and elements of fields, and the element is copied, written and assigned back (an
/// index read from data is bound first, so it is evaluated once).
fn field_of_element_assign(
    left: &Expr,
    rebuild: &dyn Fn(Expr) -> Expr,
    span: Span,
    next: &mut usize,
) -> Option<Expr> {
    // The place's suffix after the element, outermost first: fields, and indices of a
    // field (`st[i].vel[0]`, `bodies[i].pos[k]`).
    let mut suffix: Vec<TokenStream> = Vec::new();
    let mut field = false;
    let mut e = left;
    loop {
        match e {
            Expr::Field(f) => {
                let m = &f.member;
                suffix.push(quote::quote!(.#m));
                field = true;
                e = &f.base;
            }
            Expr::Paren(p) => e = &p.expr,
            Expr::Index(i) if !field && !matches!(&*i.index, Expr::Range(_)) => {
                let j = &i.index;
                suffix.push(quote::quote!([#j]));
                e = &i.expr;
            }
            _ => break,
        }
    }
    let Expr::Index(i) = e else { return None };
    if !field || matches!(&*i.index, Expr::Range(_)) {
        return None;
    }
    suffix.reverse();
    let mut pre = Vec::new();
    let element = bind_indices(e, &mut pre, span, next, false);
    *next += 1;
    let q = format_ident!("__mochi_elem{}", *next, span = span);
    let write = rebuild(syn::parse_quote_spanned!(span=> #q #(#suffix)*));
    Some(syn::parse_quote_spanned!(span=> {
        #(#pre)*
        let mut #q = #element.clone();
        #write;
        #element = #q;
    }))
}

/// What code does to names: those it assigns (`=`, a compound assignment, `&mut`, by
/// the root of the place), binds again (a pattern), or mentions inside a macro's tokens.
#[derive(Default)]
struct Changes {
    assigned: HashSet<String>,
    bound: HashSet<String>,
    in_macros: HashSet<String>,
}

impl Changes {
    fn place(&mut self, e: &Expr) {
        if let Some(n) = crate::activity::root_name(e) {
            self.assigned.insert(n);
        }
    }
}

impl<'ast> syn::visit::Visit<'ast> for Changes {
    fn visit_expr_assign(&mut self, a: &'ast syn::ExprAssign) {
        self.place(&a.left);
        if let Expr::Tuple(t) = &*a.left {
            t.elems.iter().for_each(|e| self.place(e));
        }
        syn::visit::visit_expr_assign(self, a);
    }
    fn visit_expr_binary(&mut self, b: &'ast syn::ExprBinary) {
        if crate::activity::is_arithmetic_assign(&b.op)
            || matches!(
                b.op,
                syn::BinOp::BitAndAssign(_)
                    | syn::BinOp::BitOrAssign(_)
                    | syn::BinOp::BitXorAssign(_)
                    | syn::BinOp::ShlAssign(_)
                    | syn::BinOp::ShrAssign(_)
            )
        {
            self.place(&b.left);
        }
        syn::visit::visit_expr_binary(self, b);
    }
    fn visit_expr_reference(&mut self, r: &'ast syn::ExprReference) {
        if r.mutability.is_some() {
            self.place(&r.expr);
        }
        syn::visit::visit_expr_reference(self, r);
    }
    // `out.push(e)`, `v.sort_by(..)`, `acc.add(v)` of a `&mut self` method of the crate's:
    // the receiver changes.
    fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
        let n = m.method.to_string();
        if STD_MUTATORS.contains(&n.as_str())
            || crate::lower::expr::GROWING_METHODS.contains(&n.as_str())
            || crate::lower::expr::SHRINKING_METHODS.contains(&n.as_str())
            || n.ends_with("_mut")
            || crate::twin::mut_method_type(&n).is_some()
        {
            self.place(&m.receiver);
        }
        syn::visit::visit_expr_method_call(self, m);
    }
    fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
        self.bound.insert(p.ident.to_string());
        syn::visit::visit_pat_ident(self, p);
    }
    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        crate::activity::token_idents(m.tokens.clone(), &mut self.in_macros);
    }
}

/// Is one of `written` assigned, borrowed `&mut` or named in a macro, or one of
/// `bound` bound again, by `code` (statements or a block)?
fn disturbed<'a>(
    code: impl IntoIterator<Item = &'a syn::Stmt>,
    written: &HashSet<String>,
    bound: &HashSet<String>,
) -> bool {
    let mut c = Changes::default();
    for s in code {
        syn::visit::Visit::visit_stmt(&mut c, s);
    }
    written
        .iter()
        .any(|n| c.assigned.contains(n) || c.in_macros.contains(n))
        || bound.iter().any(|n| c.bound.contains(n))
}

/// `x.first().unwrap()` → `x[0]`, `x.last().unwrap()` → `x[x.len() - 1]`.
/// Rewrites a differentiable buffer `v` in place through a permutation (`sort_by`,
/// `reverse`): after `pre`, `v[k] = old[from(k)]` for every `k`, from a copy `old`; the
/// reverse sweep scatters the cotangents back through the same indices.
fn gather_in_place(
    v: &Expr,
    pre: TokenStream,
    from: impl FnOnce(&syn::Ident) -> TokenStream,
    span: Span,
) -> Expr {
    let (old, k) = (
        format_ident!("__mochi_unpermuted", span = span),
        format_ident!("__mochi_k", span = span),
    );
    let source = from(&k);
    // (`to_vec`, not `clone`: `v` may be a `&mut [f64]` parameter.)
    syn::parse_quote_spanned!(span=> {
        #pre
        let #old = #v.to_vec();
        for #k in 0..#old.len() {
            #v[#k] = #old[#source];
        }
    })
}

/// What `rotate_left(r)` (`left`) or `rotate_right(r)` of a sequence of length `n`
/// checks (the standard library's panic message when `r > n`) and where position `j`
/// takes its element from after it.
fn rotated_source(
    left: bool,
    j: &syn::Ident,
    r: &syn::Ident,
    n: TokenStream,
    span: Span,
) -> (&'static str, TokenStream) {
    if left {
        (
            "assertion failed: mid <= self.len()",
            quote_spanned!(span=> (#j + #r) % #n),
        )
    } else {
        (
            "assertion failed: k <= self.len()",
            quote_spanned!(span=> (#j + #n - #r) % #n),
        )
    }
}

/// `|v| *v = e` or `|v| *v *= e` (a closure that assigns its element, as `map_inplace`
/// takes) as `|v| e'` with `*v` read as `v`, for `mapv`.
fn assigning_closure(f: &Expr) -> Option<Expr> {
    let Expr::Closure(c) = f else { return None };
    let [Pat::Ident(p)] = c.inputs.iter().collect::<Vec<_>>()[..] else {
        return None;
    };
    // The assignment, after `let`s (the twin writes `*v *= e` as `{ let rhs = e; *v *=
    // rhs; }`).
    let (lets, body): (&[syn::Stmt], &Expr) = match &*c.body {
        Expr::Block(b) if b.label.is_none() => match b.block.stmts.split_last() {
            Some((syn::Stmt::Expr(e, _), lets))
                if lets.iter().all(|s| matches!(s, syn::Stmt::Local(_))) =>
            {
                (lets, e)
            }
            _ => return None,
        },
        e => (&[], e),
    };
    // `*v = e`, or `*v op= e` (as `*v = *v op e`).
    let (left, value): (&Expr, Expr) = match body {
        Expr::Assign(a) => (&a.left, (*a.right).clone()),
        Expr::Binary(b) if crate::activity::is_arithmetic_assign(&b.op) => {
            let op = crate::rewrite::plain_op(&b.op)?;
            let (l, r) = (&b.left, &b.right);
            (&b.left, syn::parse_quote!(#l #op (#r)))
        }
        _ => return None,
    };
    let Expr::Unary(u) = left else { return None };
    if !matches!(u.op, syn::UnOp::Deref(_))
        || !matches!(&*u.expr, Expr::Path(q) if q.path.is_ident(&p.ident))
    {
        return None;
    }
    let mut value: Expr = syn::parse_quote!({ #(#lets)* #value });
    crate::rewrite::UnDeref {
        names: std::slice::from_ref(&p.ident),
    }
    .visit_expr_mut(&mut value);
    let v = &p.ident;
    Some(syn::parse_quote!(|#v| #value))
}

/// The standard library's maps and sets, which have no tangent type.
pub(crate) const MAPS: [&str; 4] = ["HashMap", "BTreeMap", "HashSet", "BTreeSet"];

/// The names `body` binds by `let` to a map or a set of the standard library: a type
/// that names one (`let mut counts: HashMap<usize, usize> = ..`) or a constructor
/// (`HashMap::new()`, `BTreeMap::from(..)`, `HashSet::with_capacity(n)`).
fn map_locals(body: &syn::Block) -> HashSet<String> {
    struct Find(HashSet<String>);
    impl<'ast> syn::visit::Visit<'ast> for Find {
        fn visit_local(&mut self, l: &'ast syn::Local) {
            let (pat, ty) = match &l.pat {
                Pat::Type(t) => (&*t.pat, Some(&*t.ty)),
                p => (p, None),
            };
            let names_map = |tokens: TokenStream| {
                tokens
                    .into_iter()
                    .any(|t| matches!(&t, proc_macro2::TokenTree::Ident(i) if MAPS.iter().any(|m| i == m)))
            };
            let typed = ty.is_some_and(|t| names_map(quote::quote!(#t)));
            let built = l.init.as_ref().is_some_and(|i| {
                matches!(unparen(&i.expr), Expr::Call(c) if matches!(&*c.func, Expr::Path(p)
                    if p.path.segments.len() >= 2
                        && MAPS.iter().any(|m| p.path.segments[p.path.segments.len() - 2].ident == m)))
            });
            if let (Pat::Ident(i), true) = (pat, typed || built) {
                self.0.insert(i.ident.to_string());
            }
            syn::visit::visit_local(self, l);
        }
    }
    let mut f = Find(HashSet::new());
    syn::visit::Visit::visit_block(&mut f, body);
    f.0
}

/// `e.unwrap()`.
fn is_unwrap(e: &Expr) -> bool {
    matches!(e, Expr::MethodCall(m) if m.method == "unwrap" && m.args.is_empty())
}

fn first_or_last(e: &Expr, inactive: &HashSet<String>) -> Option<Expr> {
    let Expr::MethodCall(u) = e else { return None };
    if u.method != "unwrap" || !u.args.is_empty() {
        return None;
    }
    let Expr::MethodCall(f) = &*u.receiver else {
        return None;
    };
    let mut f: &syn::ExprMethodCall = f;
    // `x.first().copied().unwrap()`, `x.last().cloned().unwrap()`: the element itself.
    if f.args.is_empty() && (f.method == "copied" || f.method == "cloned") {
        let Expr::MethodCall(inner) = &*f.receiver else {
            return None;
        };
        f = inner;
    }
    // `x[a..b].first().unwrap()`, `x[..n].last().unwrap()`: the element of `x` at the
    // range's end, which panics where the range is empty as `unwrap` does.
    if let (Expr::Index(ix), true) = (&*f.receiver, f.args.is_empty()) {
        if let (Expr::Range(r), Expr::Path(_) | Expr::Field(_)) = (&*ix.index, &*ix.expr) {
            let x = &ix.expr;
            let span = f.method.span();
            if r.limits != syn::RangeLimits::HalfOpen(Default::default())
                || crate::activity::root_name(x).is_some_and(|n| inactive.contains(&n))
            {
                return None;
            }
            let start = r
                .start
                .as_ref()
                .map_or(quote::quote!(0usize), |a| quote::quote!(#a));
            let end = r
                .end
                .as_ref()
                .map_or(quote::quote!(#x.len()), |b| quote::quote!(#b));
            let at = match f.method.to_string().as_str() {
                "first" => quote::quote!(::mochi::__private::first_index(#start, #end)),
                "last" => quote::quote!(::mochi::__private::last_index(#start, #end)),
                _ => return None,
            };
            return Some(syn::parse_quote_spanned!(span=> #x[::mochi::no_grad(#at)]));
        }
    }
    // Not of a parameter without a derivative: `*idx.first().unwrap()` of indices is
    // left as written (`*idx[0]` would not compile). A closure's parameter (a window
    // `c` in `chunks(4).map(|c| *c.last().unwrap())`) is not in the activity yet.
    if !matches!(&*f.receiver, Expr::Path(_) | Expr::Field(_))
        || crate::activity::root_name(&f.receiver).is_some_and(|r| inactive.contains(&r))
    {
        return None;
    }
    let x = &f.receiver;
    let span = f.method.span();
    match (f.method.to_string().as_str(), f.args.len()) {
        ("first", 0) => Some(syn::parse_quote_spanned!(span=> #x[0])),
        ("last", 0) => Some(syn::parse_quote_spanned!(span=> #x[#x.len() - 1])),
        // `x.get(i).unwrap()` (not `get(&key)` of a map, `get(a..b)` of a sub-slice):
        // the element, which panics out of bounds as `unwrap` does.
        ("get", 1) if !map_key_or_range(&f.args[0]) => {
            let i = &f.args[0];
            Some(syn::parse_quote_spanned!(span=> #x[#i]))
        }
        _ => None,
    }
}

/// `Act::Tanh`, `Act::Leaky` (a tuple variant's constructor): a variant of an enum of
/// the user's (both names capitalised, the type one that may be the user's), and the
/// enum.
fn enum_variant(e: &Expr) -> Option<(syn::Ident, bool)> {
    let Expr::Path(p) = e else { return None };
    let segs = &p.path.segments;
    (p.qself.is_none()
        && segs.len() == 2
        && segs
            .iter()
            .all(|s| s.arguments.is_none() && type_like(&s.ident.to_string()))
        && crate::twin::constructor_type(&segs[0].ident.to_string()))
    .then(|| (segs[0].ident.clone(), true))
}

/// `SquaredLoss` (a single capitalised name, not a constant's) of a type of the user's:
/// the value of a unit struct.
fn unit_struct(e: &Expr) -> Option<(syn::Ident, bool)> {
    let Expr::Path(p) = unparen(e) else {
        return None;
    };
    let i = p.path.get_ident().filter(|_| p.qself.is_none())?;
    let n = i.to_string();
    (type_like(&n) && crate::twin::constructor_type(&n)).then(|| (i.clone(), true))
}

/// A name written as a type or a variant is (`SquaredLoss`, `Tanh`), not as a constant
/// (`SCALE`, `N2`).
fn type_like(n: &str) -> bool {
    n.starts_with(|c: char| c.is_ascii_uppercase())
        && !n
            .chars()
            .all(|c| c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit())
}

impl Desugar {
    /// `{ let s1 = e1; …; body }` for the sources a chain was given names for
    /// ([`bind_chain_source`]), the names marked as carrying derivatives.
    fn with_sources(
        &mut self,
        bound: Vec<(syn::Ident, Expr)>,
        span: Span,
        body: TokenStream,
    ) -> Expr {
        let mut lets = Vec::new();
        for (name, src) in bound {
            self.active.insert(name.to_string());
            lets.push(quote_spanned!(name.span()=> let #name = #src;));
        }
        syn::parse_quote_spanned!(span=> { #(#lets)* #body })
    }

    fn index_var(&mut self, span: Span) -> syn::Ident {
        self.next += 1;
        format_ident!("__mochi_i{}", self.next, span = span)
    }

    /// `for … in y.iter_mut()…` as an index loop, or `None` to leave it as written.
    fn index_loop(&mut self, f: &syn::ExprForLoop) -> Option<Expr> {
        if let Some(r) = self.adapted_mut_loop(f) {
            return Some(r);
        }
        let mut iter = (*f.expr).clone();
        let mut pat = (*f.pat).clone();
        let mut counter = None;
        if let Expr::MethodCall(m) = &iter {
            if m.method == "enumerate" && m.args.is_empty() {
                let Pat::Tuple(t) = &pat else { return None };
                if t.elems.len() != 2 {
                    return None;
                }
                let Pat::Ident(i) = &t.elems[0] else {
                    return None;
                };
                counter = Some(i.ident.clone());
                let inner = t.elems[1].clone();
                iter = (*m.receiver).clone();
                pat = inner;
            }
        }
        let mut srcs = Vec::new();
        let shape = sources(&iter, &mut srcs)?;
        if !srcs.iter().any(|s| s.mutable) {
            return None;
        }
        let mut names = Vec::new();
        if !element_names(&pat, &shape, &mut names) {
            return None;
        }
        // A row `m[i]` is indexed afresh at every element: its index must not change
        // in the body (the loop as written borrowed the row once).
        // (So must a sub-slice's bounds, which the loop as written read once.)
        let mut held = HashSet::new();
        for s in &srcs {
            if let Expr::Index(ix) = &s.seq {
                idents(&quote::ToTokens::to_token_stream(&ix.index), &mut held);
            }
            match &s.reach {
                Reach::Range(start, len) => {
                    idents(&quote::ToTokens::to_token_stream(start), &mut held);
                    idents(&quote::ToTokens::to_token_stream(len), &mut held);
                }
                Reach::Cycle(skip) => idents(&quote::ToTokens::to_token_stream(skip), &mut held),
                Reach::Whole => {}
            }
        }
        if !held.is_empty() && disturbed(&f.body.stmts, &held, &held) {
            return None;
        }
        let span = f.expr.span();
        let i = match &counter {
            Some(c) => c.clone(),
            None => self.index_var(span),
        };
        let subst: Vec<(syn::Ident, Expr)> = names
            .into_iter()
            .zip(&srcs)
            .map(|(n, s)| (n, s.element(&i, span)))
            .collect();
        // (An array of two or more dimensions is refused here, by the trait's message,
        // rather than at `v[k]`.)
        // (Sources without end, `x.iter().cycle()`, are bounded by the others.)
        let mut lens = srcs.iter().filter_map(|s| s.len(span));
        let mut bound = lens.next()?;
        for l in lens {
            bound = quote_spanned!(span=> ::core::cmp::min(#bound, #l));
        }
        // `for p in ps.iter_mut() { p.pos[0] += dt * p.vel[0]; }` over a `Vec` of structs
        // (or tuples) whose element the body reads and writes only through its fields:
        // the element copied in and written back, so that the writes are to places of a
        // local (`p.pos[0]`), not to `ps[k].pos[0]`.
        if let ([(name, _)], [src]) = (subst.as_slice(), srcs.as_slice()) {
            if src.mutable && fields_only(&f.body, name) && !leaves_early(&f.body) {
                let element = src.element(&i, span);
                let stmts = &f.body.stmts;
                let attrs = &f.attrs;
                return Some(syn::parse_quote_spanned!(span=>
                    #(#attrs)* for #i in 0..#bound {
                        let mut #name = #element.clone();
                        #(#stmts)*
                        #element = #name;
                    }
                ));
            }
        }
        let mut body = f.body.clone();
        // (Not `for &mut e in v.iter_mut()`: `e` is a copy.)
        let copies = crate::rewrite::pattern_names_under_reference(&pat);
        let mut_receivers = subst
            .iter()
            .zip(&srcs)
            .filter(|((n, _), s)| s.mutable && !copies.contains(n))
            .map(|((n, _), _)| n.clone())
            .collect();
        let sub = Substitute {
            names: &subst,
            shadowed: false,
            mut_receivers,
            borrowed: false,
        };
        if !sub.apply(&mut body) {
            return None;
        }
        let attrs = &f.attrs;
        Some(syn::parse_quote_spanned!(span=> #(#attrs)* for #i in 0..#bound #body))
    }
}

/// The names a loop over a constant table binds (`for (i, row) in GRID.iter()
/// .enumerate()`, also over an array literal) renamed in the loop when the function names
/// them outside it too (`let row = x[0] * x[1];` before, read after): the derivation tells
/// values with a derivative by name, and the table's element and the function's `row`
/// are two values (before 2026-12-08, `*row` of the element was read as the function's
/// `row`, "no rule for `*` with `(&&f64, &&f64)`").
fn constant_elements_apart(b: &mut syn::Block, active: &HashSet<String>) {
    fn counts(ts: TokenStream, out: &mut std::collections::HashMap<String, usize>) {
        for t in ts {
            match t {
                proc_macro2::TokenTree::Ident(i) => *out.entry(i.to_string()).or_default() += 1,
                proc_macro2::TokenTree::Group(g) => counts(g.stream(), out),
                _ => {}
            }
        }
    }
    struct L<'a> {
        total: &'a std::collections::HashMap<String, usize>,
        active: &'a HashSet<String>,
        next: usize,
    }
    impl VisitMut for L<'_> {
        fn visit_expr_for_loop_mut(&mut self, f: &mut syn::ExprForLoop) {
            syn::visit_mut::visit_expr_for_loop_mut(self, f);
            let mut root = unparen(&f.expr);
            while let Expr::MethodCall(m) = root {
                root = unparen(&m.receiver);
            }
            if let Expr::Reference(r) = root {
                root = unparen(&r.expr);
            }
            let constant = match root {
                // (In the generic form, the constant's lifted local, `__mochi_const_GRID`.)
                Expr::Path(p) => p.path.get_ident().is_some_and(|i| {
                    let i = i.to_string();
                    crate::twin::screaming_name(&i) || crate::twin::hoisted_constant(&i)
                }),
                Expr::Array(_) => true,
                _ => false,
            };
            if !constant {
                return;
            }
            let mut inside = std::collections::HashMap::new();
            counts(quote::ToTokens::to_token_stream(&*f), &mut inside);
            let mut names = Vec::new();
            crate::activity::pat_names(&f.pat, &mut names);
            // (Not a name a format string may read, `"{row}"`: left as written.)
            let formats = quote::ToTokens::to_token_stream(&f.body).to_string();
            for n in names {
                // (Also a parameter's name, or any with a derivative elsewhere.)
                let outside = self.active.contains(&n)
                    || self.total.get(&n).copied().unwrap_or(0)
                        > inside.get(&n).copied().unwrap_or(0);
                if !outside || formats.contains(&format!("{{{n}")) {
                    continue;
                }
                let to = format_ident!("__mochi_elem{}_{}", self.next, n);
                self.next += 1;
                let mut r = crate::twin::Renamed { from: &n, to: &to };
                r.visit_pat_mut(&mut f.pat);
                r.visit_block_mut(&mut f.body);
            }
        }
        fn visit_item_mut(&mut self, _: &mut syn::Item) {}
    }
    let mut total = std::collections::HashMap::new();
    counts(quote::ToTokens::to_token_stream(&*b), &mut total);
    L {
        total: &total,
        active,
        next: 0,
    }
    .visit_block_mut(b);
}

/// Whether `body` matches `name` by a pattern that binds parts of it (`match s {
/// Shape::Circle(r) => .. }`, `if let Some(y) = t`, `let Pt(a, b) = s;`): an element of a
/// constant so matched stays lent, as the loop as written binds it, so that its parts are
/// bound by reference as written (`*r`, `*y` in the arms; before, "type `f64` cannot be
/// dereferenced", and `&f64` parts in a generic form where the arms wanted `T`s).
fn matched_by_pattern(body: &[syn::Stmt], name: &syn::Ident) -> bool {
    struct M<'n>(&'n syn::Ident, bool);
    impl M<'_> {
        fn scrutinee(&mut self, e: &Expr, pats: &[&Pat]) {
            let e = match unparen(e) {
                Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => unparen(&u.expr),
                other => other,
            };
            if matches!(e, Expr::Path(p) if p.path.is_ident(self.0)) {
                let binds = pats.iter().any(|p| {
                    let mut names = Vec::new();
                    crate::activity::pat_names(p, &mut names);
                    !names.is_empty()
                });
                self.1 |= binds;
            }
        }
    }
    impl<'a> syn::visit::Visit<'a> for M<'_> {
        fn visit_expr_match(&mut self, m: &'a syn::ExprMatch) {
            let pats: Vec<&Pat> = m.arms.iter().map(|a| &a.pat).collect();
            self.scrutinee(&m.expr, &pats);
            syn::visit::visit_expr_match(self, m);
        }
        fn visit_expr_let(&mut self, l: &'a syn::ExprLet) {
            self.scrutinee(&l.expr, &[&l.pat]);
            syn::visit::visit_expr_let(self, l);
        }
        // `matches!(s, Stage::Gain(g) if *g * t > 1.0)`.
        fn visit_macro(&mut self, m: &'a syn::Macro) {
            if m.path.is_ident("matches") {
                let mut it = m.tokens.clone().into_iter();
                if let (
                    Some(proc_macro2::TokenTree::Ident(i)),
                    Some(proc_macro2::TokenTree::Punct(p)),
                ) = (it.next(), it.next())
                {
                    if i == *self.0 && p.as_char() == ',' {
                        self.1 = true;
                    }
                }
            }
        }
        fn visit_local(&mut self, l: &'a syn::Local) {
            if let Some(init) = &l.init {
                if !matches!(&l.pat, Pat::Ident(_) | Pat::Type(_)) {
                    self.scrutinee(&init.expr, &[&l.pat]);
                }
            }
            syn::visit::visit_local(self, l);
        }
    }
    let mut m = M(name, false);
    for s in body {
        syn::visit::Visit::visit_stmt(&mut m, s);
    }
    m.1
}

impl Desugar {
    /// `for &k in idx.iter()` (also `for k in ..`, `.enumerate()`, `idx.chunks_exact(n)`,
    /// `idx.chunks(n)`) over a parameter without a derivative (indices, labels, a mesh's
    /// triangles), in a loop that carries derivatives: an index loop that reads `idx[j]`.
    /// The loop's iterator borrows the parameter, and the reverse sweep, which replays
    /// it, would keep that borrow in a pullback that may outlive it (E0700 at the
    /// attribute); a range keeps nothing.
    fn inactive_index_loop(&mut self, f: &syn::ExprForLoop) -> Option<Expr> {
        if !mentions_active(&f.body, &self.active) {
            return None;
        }
        if let Some(r) = self.inactive_zip_loop(f) {
            return Some(r);
        }
        let span = f.expr.span();
        let (mut seq_call, mut pat, mut counter) = (unparen(&f.expr), (*f.pat).clone(), None);
        if let Expr::MethodCall(m) = seq_call {
            if m.method == "enumerate" && m.args.is_empty() {
                let Pat::Tuple(t) = &pat else { return None };
                let (2, Some(Pat::Ident(j)), Some(inner)) =
                    (t.elems.len(), t.elems.first(), t.elems.get(1))
                else {
                    return None;
                };
                if j.by_ref.is_some() || j.subpat.is_some() {
                    return None;
                }
                counter = Some(j.ident.clone());
                pat = inner.clone();
                seq_call = unparen(&m.receiver);
            }
        }
        // `for w in &NOISE` of a constant: as `NOISE.iter()`.
        let by_ref_const;
        if let Expr::Reference(r) = seq_call {
            if r.mutability.is_some() {
                return None;
            }
            let inner = &r.expr;
            by_ref_const = syn::parse_quote_spanned!(span=> #inner.iter());
            seq_call = &by_ref_const;
        }
        // `for &k in idx` of a parameter `idx: &[usize]` (or of an alias of a constant,
        // `for row in data`): as `idx.iter()`.
        let bare_param;
        if let Expr::Path(p) = seq_call {
            if p.path.get_ident().is_some_and(|i| {
                let i = i.to_string();
                self.inactive_params.contains(&i) || self.const_aliases.contains(&i)
            }) {
                bare_param = syn::parse_quote_spanned!(span=> #p.iter());
                seq_call = &bare_param;
            }
        }
        let Expr::MethodCall(m) = seq_call else {
            return None;
        };
        // A constant (`const NOISE: [f64; 3]`, named in capitals; in a generic form,
        // `(&ConstOf(NOISE, ..)).lift_or_keep()`): each use is a temporary, which the
        // replayed iterator would borrow past its end (E0716).
        let lifted =
            matches!(unparen(&m.receiver), Expr::MethodCall(l) if l.method == "lift_or_keep");
        let x: Expr = match unparen(&m.receiver) {
            Expr::Path(xp) if xp.path.get_ident().is_some() => unparen(&m.receiver).clone(),
            other if lifted => syn::parse_quote_spanned!(span=> (#other)),
            _ => return None,
        };
        let name = quote::ToTokens::to_token_stream(&x).to_string();
        let constant = lifted
            || self.const_aliases.contains(&name)
            || crate::twin::screaming_name(&name)
            || crate::twin::hoisted_constant(&name);
        if !(self.inactive_params.contains(&name) || constant)
            || mentions_active(&m.receiver, &self.active)
        {
            return None;
        }
        let j = counter.unwrap_or_else(|| self.index_var(span));
        let mut lets: Vec<TokenStream> = Vec::new();
        let (count, elem): (TokenStream, TokenStream) = match (
            m.method.to_string().as_str(),
            m.args.len(),
        ) {
            ("iter", 0) => (
                quote_spanned!(span=> #x.len()),
                quote_spanned!(span=> &#x[#j]),
            ),
            ("chunks_exact" | "chunks", 1) => {
                self.next += 1;
                let n = format_ident!("__mochi_csz{}", self.next, span = span);
                let size = &m.args[0];
                lets.push(quote_spanned!(span=> let #n: usize = #size;));
                if m.method == "chunks_exact" {
                    (
                        quote_spanned!(span=> #x.len() / #n),
                        quote_spanned!(span=> &#x[#j * #n..(#j + 1) * #n]),
                    )
                } else {
                    (
                        quote_spanned!(span=> (#x.len() + #n - 1) / #n),
                        quote_spanned!(span=> &#x[#j * #n..::core::cmp::min((#j + 1) * #n, #x.len())]),
                    )
                }
            }
            _ => return None,
        };
        // `&k` of an element: the element itself. A constant's element (a float the
        // body multiplies with: `a * w`) is read by value too, `*w` in the body as `w`.
        let mut body_stmts = f.body.stmts.clone();
        let bind: TokenStream = match &pat {
            Pat::Reference(r) if r.mutability.is_none() && m.method == "iter" => {
                let inner = &r.pat;
                quote_spanned!(span=> let #inner = #x[#j];)
            }
            // (Not the generic form's lifted copy, `__mochi_const_NBRS`, whose elements
            // may not be `Copy`, `[Vec<usize>; 5]` of `[&[usize]; 5]`: lent.)
            Pat::Ident(p)
                if constant
                    && !crate::twin::hoisted_constant(&name)
                    && m.method == "iter"
                    && p.by_ref.is_none()
                    && !matched_by_pattern(&body_stmts, &p.ident) =>
            {
                let names = [p.ident.clone()];
                let mut b = syn::Block {
                    brace_token: Default::default(),
                    stmts: body_stmts,
                };
                crate::rewrite::UnDeref { names: &names }.visit_block_mut(&mut b);
                body_stmts = b.stmts;
                quote_spanned!(span=> let #p = #x[#j];)
            }
            Pat::Wild(_) => TokenStream::new(),
            other => quote_spanned!(span=> let #other = #elem;),
        };
        let (label, attrs, body) = (&f.label, &f.attrs, &body_stmts);
        Some(syn::parse_quote_spanned!(span=> {
            #(#lets)*
            #(#attrs)* #label for #j in 0..#count {
                #bind
                #(#body)*
            }
        }))
    }

    /// Notes (or forgets) `l`'s name as an alias of a constant (`const_aliases`).
    fn note_const_alias(&mut self, l: &syn::Local) {
        let pat = match &l.pat {
            Pat::Type(t) => &*t.pat,
            other => other,
        };
        let Pat::Ident(p) = pat else { return };
        let name = p.ident.to_string();
        let borrowed = l.init.as_ref().and_then(|i| match unparen(&i.expr) {
            Expr::Reference(r) if r.mutability.is_none() => Some(unparen(&r.expr)),
            _ => None,
        });
        let of = |e: &Expr| match e {
            Expr::Path(q) => q.path.get_ident().map(|i| i.to_string()),
            _ => None,
        };
        // (A piece, `&data[..2]`, or a row, `&Z[j]` of the index loop over a constant's
        // rows.)
        let root = borrowed.and_then(|e| match e {
            Expr::Index(ix) => of(unparen(&ix.expr)),
            other => of(other),
        });
        let is_alias = p.mutability.is_none()
            && p.by_ref.is_none()
            && !self.active.contains(&name)
            && root.is_some_and(|r| {
                self.const_aliases.contains(&r)
                    || crate::twin::hoisted_constant(&r)
                    || crate::twin::screaming_name(&r)
            });
        if is_alias {
            self.const_aliases.insert(name);
        } else {
            self.const_aliases.remove(&name);
        }
    }

    /// `for (a, w) in NODES.iter().zip(WEIGHTS.iter())` (also `.zip(&W)`, `.zip(W)`) of two
    /// constants or parameters without a derivative (a quadrature rule's nodes and
    /// weights): an index loop reading `NODES[j]` and `WEIGHTS[j]`, as
    /// [`Self::inactive_index_loop`] for one (the replayed iterator would borrow the
    /// constants' temporaries past their end, E0716 at the attribute).
    fn inactive_zip_loop(&mut self, f: &syn::ExprForLoop) -> Option<Expr> {
        let span = f.expr.span();
        let Expr::MethodCall(z) = unparen(&f.expr) else {
            return None;
        };
        let Pat::Tuple(t) = &*f.pat else { return None };
        if z.method != "zip" || z.args.len() != 1 || t.elems.len() != 2 {
            return None;
        }
        let seq_of = |e: &Expr| -> Option<Expr> {
            let x = match unparen(e) {
                Expr::MethodCall(m) if m.method == "iter" && m.args.is_empty() => {
                    unparen(&m.receiver)
                }
                Expr::Reference(r) if r.mutability.is_none() => unparen(&r.expr),
                other => other,
            };
            // (A constant in a generic form: `(&ConstOf(W, ..)).lift_or_keep()`.)
            if matches!(x, Expr::MethodCall(l) if l.method == "lift_or_keep") {
                return Some(syn::parse_quote_spanned!(span=> (#x)));
            }
            let Expr::Path(p) = x else { return None };
            let name = p.path.get_ident()?.to_string();
            let constant = name
                .chars()
                .all(|c| c.is_uppercase() || c == '_' || c.is_numeric())
                && name.chars().any(|c| c.is_uppercase());
            (constant || self.inactive_params.contains(&name)).then(|| x.clone())
        };
        let (a, b) = (seq_of(&z.receiver)?, seq_of(&z.args[0])?);
        if mentions_active(&f.expr, &self.active) {
            return None;
        }
        let j = self.index_var(span);
        let body = f.body.clone();
        let mut binds = Vec::new();
        for (p, x) in t.elems.iter().zip([&a, &b]) {
            binds.push(match p {
                Pat::Reference(r) if r.mutability.is_none() => {
                    let inner = &r.pat;
                    quote_spanned!(span=> let #inner = #x[#j];)
                }
                // (A reference to the element, as the iterator gives it: a row
                // `&[f64; 2]` of a constant table may be passed where a slice is taken,
                // `m.predict(xi)`.)
                Pat::Ident(i) if i.by_ref.is_none() && i.subpat.is_none() => {
                    quote_spanned!(span=> let #i = &#x[#j];)
                }
                Pat::Wild(_) => TokenStream::new(),
                _ => return None,
            });
        }
        let (label, attrs, stmts) = (&f.label, &f.attrs, &body.stmts);
        Some(syn::parse_quote_spanned!(span=>
            #(#attrs)* #label for #j in 0..::core::cmp::min(#a.len(), #b.len()) {
                #(#binds)*
                #(#stmts)*
            }
        ))
    }

    /// `for e in v.iter_mut().skip(a)` (also `take(n)`, `step_by(s)`, `rev()`, in any
    /// order, `v[a..b].iter_mut()`, and `.enumerate()` outermost), and `for c in
    /// v.chunks_mut(m)` (also `chunks_exact_mut`): an index loop over the positions the
    /// adapters visit, `*e` being `v[p(k)]` and `c[j]` being `v[k * m + j]`.
    fn adapted_mut_loop(&mut self, f: &syn::ExprForLoop) -> Option<Expr> {
        let span = f.expr.span();
        let mut iter = (*f.expr).clone();
        let mut pat = (*f.pat).clone();
        let mut counter: Option<syn::Ident> = None;
        // Adapters, outermost first; `enumerate()` among them (outermost, or inside
        // others: `iter_mut().enumerate().skip(1)`) counts the positions the adapters inside it give, so its counter
        // is the loop's position mapped through the adapters outside it only.
        let mut adapters: Vec<(String, Option<Expr>)> = Vec::new();
        let mut enumerate_at = 0;
        while let Expr::MethodCall(m) = &iter {
            let name = m.method.to_string();
            match (name.as_str(), m.args.len()) {
                ("skip" | "take" | "step_by", 1) if plain_index(&m.args[0]) => {
                    adapters.push((name, Some(m.args[0].clone())));
                }
                ("rev", 0) => adapters.push((name, None)),
                ("enumerate", 0) if counter.is_none() => {
                    let Pat::Tuple(t) = &pat else { return None };
                    let (Some(Pat::Ident(i)), Some(inner), 2) =
                        (t.elems.first(), t.elems.get(1), t.elems.len())
                    else {
                        return None;
                    };
                    counter = Some(i.ident.clone());
                    let inner = inner.clone();
                    pat = inner;
                    enumerate_at = adapters.len();
                }
                _ => break,
            }
            iter = (*m.receiver).clone();
        }
        let Expr::MethodCall(src) = &iter else {
            return None;
        };
        let chunks = matches!(
            src.method.to_string().as_str(),
            "chunks_mut" | "chunks_exact_mut"
        );
        if !(src.method == "iter_mut" && src.args.is_empty() || chunks && src.args.len() == 1) {
            return None;
        }
        // `for p in st.iter_mut() { p.v += e; }`: a struct element's fields written, as
        // `st[k].v += e` (which `field_of_element_assign` writes back whole).
        let writes_fields = match &pat {
            Pat::Ident(p) => writes_field_of(&f.body, &p.ident),
            _ => false,
        };
        if !chunks
            && adapters.is_empty()
            && !matches!(&*src.receiver, Expr::Index(_))
            && !writes_fields
        {
            return None; // the plain loop below
        }
        // The sequence, and the offset and length of a sub-slice of it.
        let (seq, offset, len): (Expr, Expr, Expr) = match unparen(&src.receiver) {
            Expr::Index(ix) => match &*ix.index {
                Expr::Range(r) if matches!(r.limits, syn::RangeLimits::HalfOpen(_)) => {
                    let base = (*ix.expr).clone();
                    if !plain_place(&base) {
                        return None;
                    }
                    let start: Expr = match &r.start {
                        Some(a) if plain_index(a) => (**a).clone(),
                        Some(_) => return None,
                        None => syn::parse_quote!(0usize),
                    };
                    let end: Expr = match &r.end {
                        Some(b) if plain_index(b) => (**b).clone(),
                        Some(_) => return None,
                        None => syn::parse_quote!(#base.len()),
                    };
                    let len = syn::parse_quote!((#end) - (#start));
                    (base, start, len)
                }
                _ => return None,
            },
            other if plain_place(other) => {
                let len = syn::parse_quote!(#other.len());
                (other.clone(), syn::parse_quote!(0usize), len)
            }
            _ => return None,
        };
        let k = self.index_var(span);
        let mut lets: Vec<TokenStream> = Vec::new();
        // Counts of each stage, innermost first, and the position of the loop's `k`.
        self.next += 1;
        let id = self.next;
        let c0 = format_ident!("__mochi_cnt{}_0", id, span = span);
        let m = if chunks {
            let m = format_ident!("__mochi_chunk{}", id, span = span);
            let size = &src.args[0];
            lets.push(quote_spanned!(span=> let #m: usize = #size;));
            if src.method == "chunks_mut" {
                lets.push(quote_spanned!(span=> let #c0: usize = (#len + #m - 1) / #m;));
            } else {
                lets.push(quote_spanned!(span=> let #c0: usize = (#len) / #m;));
            }
            Some(m)
        } else {
            lets.push(quote_spanned!(span=> let #c0: usize = #len;));
            None
        };
        // Each stage's count, innermost first; the stage's count is what `rev` reads.
        let mut stages: Vec<(&str, Option<&Expr>, syn::Ident)> = Vec::new();
        let mut count = c0.clone();
        for (n, (name, arg)) in adapters.iter().rev().enumerate() {
            let c = format_ident!("__mochi_cnt{}_{}", id, n + 1, span = span);
            let prev = &count;
            lets.push(match (name.as_str(), arg) {
                ("skip", Some(a)) => {
                    quote_spanned!(span=> let #c: usize = #prev.saturating_sub(#a);)
                }
                ("take", Some(a)) => {
                    quote_spanned!(span=> let #c: usize = ::core::cmp::min(#prev, #a);)
                }
                ("step_by", Some(a)) => {
                    quote_spanned!(span=> let #c: usize = (#prev + (#a) - 1) / (#a);)
                }
                _ => quote_spanned!(span=> let #c: usize = #prev;),
            });
            stages.push((name.as_str(), arg.as_ref(), c.clone()));
            count = c;
        }
        // The position in the (sub-)sequence of the loop's `k`: the outermost adapter
        // maps first.
        let mut pos = quote_spanned!(span=> #k);
        let mut counted = pos.clone();
        for (n, (name, arg, c)) in stages.iter().rev().enumerate() {
            if n == enumerate_at {
                counted = pos.clone();
            }
            pos = match (*name, arg) {
                ("skip", Some(a)) => quote_spanned!(span=> ((#a) + (#pos))),
                ("step_by", Some(a)) => quote_spanned!(span=> ((#a) * (#pos))),
                ("take", _) => pos,
                _ => quote_spanned!(span=> (#c - 1 - (#pos))),
            };
        }
        let mut body = f.body.clone();
        let name = match &pat {
            Pat::Ident(i) if i.subpat.is_none() && i.by_ref.is_none() => i.ident.clone(),
            _ => return None,
        };
        // A chunk's bounds at the top of each trip, or the element as a place.
        let bounds = match &m {
            Some(m) => {
                let base = format_ident!("__mochi_cbase{}", id, span = span);
                let clen = format_ident!("__mochi_clen{}", id, span = span);
                let base_t = quote_spanned!(span=> #base);
                let len_t = quote_spanned!(span=> #clen);
                let mut uses = crate::iterchain::WindowUses {
                    name: &name,
                    seq: &seq,
                    base: &base_t,
                    len: &len_t,
                    mutable: true,
                    slices: true,
                    other: false,
                };
                uses.visit_block_mut(&mut body);
                if uses.other {
                    return None;
                }
                quote_spanned!(span=>
                    let #base: usize = (#offset) + (#pos) * #m;
                    let #clen: usize = ::core::cmp::min(#m, (#offset) + (#len) - #base);
                )
            }
            None => {
                let place: Expr = syn::parse_quote_spanned!(span=> #seq[(#offset) + (#pos)]);
                let subst = vec![(name.clone(), place)];
                let sub = Substitute {
                    names: &subst,
                    shadowed: false,
                    mut_receivers: if chunks { Vec::new() } else { vec![name] },
                    borrowed: false,
                };
                if !sub.apply(&mut body) {
                    return None;
                }
                TokenStream::new()
            }
        };
        let stmts = &body.stmts;
        if enumerate_at == stages.len() {
            counted = pos.clone();
        }
        let counter = counter.map(|c| quote_spanned!(span=> let #c: usize = #counted;));
        Some(syn::parse_quote_spanned!(span=> {
            #(#lets)*
            for #k in 0..#count {
                #counter
                #bounds
                #(#stmts)*
            }
        }))
    }
}

/// Rewrites the loops of [`mut_views_loop`] before the other rewrites see their bodies
/// (which would write `row.assign(..)` as a loop over `row`'s elements).
struct MutViewLoops {
    next: usize,
}

/// `block` with its `azip!` invocations written as `Zip` calls (for the activity
/// analysis, which does not read inside macros).
pub fn with_azip_expanded(block: &syn::Block) -> syn::Block {
    struct A;
    impl VisitMut for A {
        fn visit_stmt_mut(&mut self, s: &mut syn::Stmt) {
            if let syn::Stmt::Macro(m) = s {
                if let Some(e) = azip_as_zip(&m.mac) {
                    *s = syn::Stmt::Expr(e, Some(Default::default()));
                    return;
                }
            }
            syn::visit_mut::visit_stmt_mut(self, s);
        }
        fn visit_expr_mut(&mut self, e: &mut Expr) {
            if let Expr::Macro(m) = e {
                if let Some(r) = azip_as_zip(&m.mac) {
                    *e = r;
                    return;
                }
            }
            syn::visit_mut::visit_expr_mut(self, e);
            if let Some(r) = literal_form(e)
                .or_else(|| try_fold_as_loop(e))
                .or_else(|| piece_copies(e))
                .or_else(|| literal_receiver(e))
                .or_else(|| trait_path_call(e))
            {
                *e = r;
            }
        }
        // (And `let pts: Vec<_> = chain.map(|c| P2(..)).collect();` with its element
        // type written, as the derivation reads it.)
        fn visit_local_mut(&mut self, l: &mut syn::Local) {
            struct_elements_named(l);
            collect_type_on_let(l);
            syn::visit_mut::visit_local_mut(self, l);
        }
    }
    let mut b = block.clone();
    A.visit_block_mut(&mut b);
    OptionAccumulators.visit_block_mut(&mut b);
    b
}

/// `seq.try_fold(init, |acc, v| body)` as the loop it is: `{ let mut r = Some(init);
/// for v in seq { if r.is_none() { break; } let acc = r.unwrap(); r = body; } r }`
/// (`Ok(init)` and `is_err` when the closure's results are written so: an error type
/// without `Debug` then fails at the `unwrap`), the walk ending at the first `None` or
/// `Err`, which is the result. (`r` is moved out and written again on every trip that
/// goes on: an error held in it need not be `Clone`.) Left as written (and refused where it carries a
/// derivative) when the closure's body has a `?` or a `return` of its own, or its kind
/// does not show.
fn try_fold_as_loop(e: &Expr) -> Option<Expr> {
    let Expr::MethodCall(m) = e else { return None };
    if m.method != "try_fold" || m.args.len() != 2 {
        return None;
    }
    let Expr::Closure(c) = &m.args[1] else {
        return None;
    };
    if c.inputs.len() != 2 || c.output != syn::ReturnType::Default {
        return None;
    }
    // The closure's own exits, and which wrapper its results are.
    struct Kind {
        exits: bool,
        option: bool,
        result: bool,
    }
    impl<'ast> syn::visit::Visit<'ast> for Kind {
        fn visit_expr(&mut self, e: &'ast Expr) {
            match e {
                Expr::Return(_) | Expr::Try(_) => self.exits = true,
                Expr::Closure(_) => return,
                Expr::Path(p) if p.path.is_ident("None") => self.option = true,
                Expr::Call(c) => {
                    if let Expr::Path(p) = &*c.func {
                        if p.path.is_ident("Some") {
                            self.option = true;
                        } else if p.path.is_ident("Ok") || p.path.is_ident("Err") {
                            self.result = true;
                        }
                    }
                }
                _ => {}
            }
            syn::visit::visit_expr(self, e);
        }
    }
    let mut kind = Kind {
        exits: false,
        option: false,
        result: false,
    };
    syn::visit::Visit::visit_expr(&mut kind, &c.body);
    if kind.exits || kind.option == kind.result {
        return None;
    }
    let (wrap, ended) = if kind.option {
        (format_ident!("Some"), format_ident!("is_none"))
    } else {
        (format_ident!("Ok"), format_ident!("is_err"))
    };
    let span = m.method.span();
    let r = format_ident!("__mochi_tried", span = span);
    let (seq, init, body) = (&m.receiver, &m.args[0], &c.body);
    let (acc, item) = (&c.inputs[0], &c.inputs[1]);
    Some(syn::parse_quote_spanned! {span=>
        {
            let mut #r = #wrap(#init);
            for #item in #seq {
                if #r.#ended() {
                    break;
                }
                let #acc = #r.unwrap();
                #r = #body;
            }
            #r
        }
    })
}

/// `let v = chain.collect::<Vec<(usize, f64)>>();` as `let v: Vec<(usize, f64)> =
/// chain.collect();`, the collected type where a `let` writes it, which is where the
/// derivation reads it. Copies of a sequence's pieces collected without their type
/// (`let rows = x.chunks(3).map(|c| c.to_vec()).collect::<Vec<_>>();`, also `let rows:
/// Vec<_> = ..`) are rows, `Vec<Vec<_>>`.
fn collect_type_on_let(l: &mut syn::Local) {
    let Some(init) = l.init.as_mut().filter(|i| i.diverge.is_none()) else {
        return;
    };
    let Expr::MethodCall(m) = &mut *init.expr else {
        return;
    };
    if m.method != "collect" || !m.args.is_empty() {
        return;
    }
    let written: Option<syn::Type> = match &l.pat {
        Pat::Type(t) => Some((*t.ty).clone()),
        _ => None,
    };
    let named: Option<syn::Type> = match m
        .turbofish
        .as_ref()
        .map(|t| t.args.iter().collect::<Vec<_>>())
    {
        Some(a) => match a[..] {
            [syn::GenericArgument::Type(ty)] => Some(ty.clone()),
            _ => return,
        },
        None => None,
    };
    let vec_of_any = |t: &Option<syn::Type>| {
        t.as_ref()
            .is_none_or(|t| quote::quote!(#t).to_string().replace(' ', "") == "Vec<_>")
    };
    let rows = piece_copies(&m.receiver).is_some() && vec_of_any(&written) && vec_of_any(&named);
    let ty: syn::Type = if rows {
        syn::parse_quote!(::std::vec::Vec<::std::vec::Vec<_>>)
    } else {
        match (written.is_none(), named) {
            (true, Some(ty)) => ty,
            _ => return,
        }
    };
    let pat = match &l.pat {
        Pat::Type(t) => (*t.pat).clone(),
        other => other.clone(),
    };
    if !matches!(pat, Pat::Ident(_)) {
        return;
    }
    m.turbofish = None;
    let span = l.pat.span();
    l.pat = Pat::Type(syn::PatType {
        attrs: Vec::new(),
        pat: Box::new(pat),
        colon_token: syn::Token![:](span),
        ty: Box::new(ty),
    });
}

/// Arrays made from literals or constants as the forms the rules and the generic form
/// read:
/// - `arr1(&[0.5, 1.0])`, `arr2(&[[..], [..]])` (also `ndarray::arr1`): `array![..]`;
/// - `arr1(&W)` of anything else: `Array1::from_vec(W.to_vec())`, `arr2(&W2)`:
///   `Array2::from(W2.to_vec())`.
fn literal_form(e: &Expr) -> Option<Expr> {
    match e {
        Expr::Call(c) if c.args.len() == 1 => {
            let Expr::Path(p) = &*c.func else { return None };
            let rank = match crate::twin::segments(&p.path).as_slice() {
                [f] | [_, f] if p.qself.is_none() && (f == "arr1" || f == "arr2") => {
                    (p.path.segments.len() == 1 || p.path.segments[0].ident == "ndarray")
                        .then(|| f.clone())?
                }
                _ => return None,
            };
            let span = c.func.span();
            let arg = unparen(&c.args[0]);
            match arg {
                Expr::Reference(r) if matches!(unparen(&r.expr), Expr::Array(_)) => {
                    let Expr::Array(a) = unparen(&r.expr) else {
                        unreachable!()
                    };
                    let elems = &a.elems;
                    Some(syn::parse_quote_spanned!(span=> ::ndarray::array![#elems]))
                }
                _ => {
                    let owned = borrowed_value(arg);
                    // (`Array2::from(Vec<[f64; N]>)`: the rows.)
                    Some(if rank == "arr1" {
                        syn::parse_quote_spanned!(span=> ::ndarray::Array1::from_vec(#owned.to_vec()))
                    } else {
                        syn::parse_quote_spanned!(span=> ::ndarray::Array2::from(#owned.to_vec()))
                    })
                }
            }
        }
        _ => None,
    }
}

/// `&w` (also `&mut w`) as `w`, the value a method call or a `.to_vec()` is written on,
/// parenthesised unless it is a place or a call (`(a + b)`).
fn borrowed_value(e: &Expr) -> Expr {
    let v = match unparen(e) {
        Expr::Reference(r) => (*r.expr).clone(),
        other => other.clone(),
    };
    match v {
        Expr::Path(_) | Expr::Field(_) | Expr::Index(_) | Expr::MethodCall(_) => v,
        other => syn::parse_quote!((#other)),
    }
}

/// `Loss::loss(&sq, p, y)`, a method of a trait the crate implements in a marked block,
/// called by the trait's path: the method call it is, `sq.loss(p, y)`, which reaches the
/// implementation by the receiver's type (as rustc does).
fn trait_path_call(e: &Expr) -> Option<Expr> {
    let Expr::Call(c) = e else { return None };
    let Expr::Path(f) = &*c.func else { return None };
    let segs = crate::twin::segments(&f.path);
    let [tr, method] = segs.as_slice() else {
        return None;
    };
    // (Not a type of the crate's of the same name, `Shape::Circle(r)` of an enum where
    // another module has a trait `Shape`; and a method's name, not a variant's.)
    let type_too = crate::twin::crate_type(tr) || crate::twin::crate_enum(tr);
    if f.qself.is_some()
        || !crate::twin::crate_trait(tr)
        || type_too
        || type_like(method)
        || c.args.is_empty()
    {
        return None;
    }
    let recv = borrowed_value(&c.args[0]);
    let method = syn::Ident::new(method, f.path.segments[1].ident.span());
    let rest = c.args.iter().skip(1);
    Some(syn::parse_quote_spanned!(method.span()=> #recv.#method(#(#rest),*)))
}

/// A method called on a struct literal, `PseudoHuber { delta: d }.loss(p, y)`: the value
/// bound first, `{ let __mochi_recv = PseudoHuber { delta: d }; __mochi_recv.loss(p, y)
/// }`, as a local bound to a struct literal is read (its type is the literal's).
fn literal_receiver(e: &Expr) -> Option<Expr> {
    let Expr::MethodCall(m) = e else { return None };
    let Expr::Struct(st) = unparen(&m.receiver) else {
        return None;
    };
    let named = st.qself.is_none()
        && st.path.segments.len() == 1
        && st.path.segments[0]
            .ident
            .to_string()
            .starts_with(|c: char| c.is_ascii_uppercase());
    if !named {
        return None;
    }
    let span = m.method.span();
    let r = format_ident!("__mochi_recv", span = span);
    let mut call = m.clone();
    *call.receiver = syn::parse_quote!(#r);
    Some(syn::parse_quote_spanned!(span=> { let #r = #st; #call }))
}

/// Copies of a sequence's pieces, `x.chunks(k).map(|c| c.to_vec())` (also
/// `chunks_exact`, `windows`, `c.to_owned()`, `Vec::from(c)`), as the range chain over
/// their positions they are, `(0..(x.len() + k - 1) / k).map(|i| x[i * k..((i + 1) *
/// k).min(x.len())].to_vec())`: rows cut from flat parameters, which the derivation and
/// the generic form read as sub-slices copied. `x` is a place and `k` a name or a
/// literal (each read more than once).
fn piece_copies(e: &Expr) -> Option<Expr> {
    let Expr::MethodCall(m) = e else { return None };
    if m.method != "map" || m.args.len() != 1 {
        return None;
    }
    let Expr::MethodCall(src) = unparen(&m.receiver) else {
        return None;
    };
    let kind = src.method.to_string();
    if !matches!(kind.as_str(), "chunks" | "chunks_exact" | "windows") || src.args.len() != 1 {
        return None;
    }
    let plain = |e: &Expr| match unparen(e) {
        Expr::Path(p) => p.qself.is_none(),
        Expr::Lit(_) => true,
        _ => false,
    };
    let (x, k) = (&*src.receiver, &src.args[0]);
    if !plain(k) || !matches!(unparen(x), Expr::Path(_) | Expr::Field(_)) {
        return None;
    }
    // (`.map(Vec::from)`, `.map(<[f64]>::to_vec)` by path too.)
    let by_path = matches!(unparen(&m.args[0]), Expr::Path(f) if {
        let segs = crate::twin::segments(&f.path);
        segs == ["Vec", "from"]
            || f.qself.is_some() && segs.last().is_some_and(|l| l == "to_vec" || l == "to_owned")
    });
    let copies = by_path || piece_copied_by_closure(&m.args[0]);
    if !copies {
        return None;
    }
    let span = src.method.span();
    let i = format_ident!("__mochi_piece", span = span);
    Some(match kind.as_str() {
        "chunks" => syn::parse_quote_spanned!(span=>
            (0..(#x.len() + #k - 1) / #k)
                .map(|#i| #x[#i * #k..((#i + 1) * #k).min(#x.len())].to_vec())),
        "chunks_exact" => syn::parse_quote_spanned!(span=>
            (0..#x.len() / #k).map(|#i| #x[#i * #k..(#i + 1) * #k].to_vec())),
        _ => syn::parse_quote_spanned!(span=>
            (0..(#x.len() + 1).saturating_sub(#k)).map(|#i| #x[#i..#i + #k].to_vec())),
    })
}

/// `|c| c.to_vec()`, `|c| c.to_owned()`, `|c| Vec::from(c)`.
fn piece_copied_by_closure(f: &Expr) -> bool {
    let Expr::Closure(c) = unparen(f) else {
        return false;
    };
    let [Pat::Ident(param)] = c.inputs.iter().collect::<Vec<_>>()[..] else {
        return false;
    };
    let is_param = |e: &Expr| matches!(unparen(e), Expr::Path(p) if p.path.is_ident(&param.ident));
    match unparen(&c.body) {
        Expr::MethodCall(b) => {
            matches!(b.method.to_string().as_str(), "to_vec" | "to_owned")
                && b.args.is_empty()
                && is_param(&b.receiver)
        }
        Expr::Call(b) => {
            matches!(&*b.func, Expr::Path(f) if crate::twin::segments(&f.path) == ["Vec", "from"])
                && b.args.len() == 1
                && is_param(&b.args[0])
        }
        _ => false,
    }
}

/// `azip!((o in &mut out, &x in &a) body)` as `Zip::from(&mut out).and(&a).for_each(|o,
/// &x| body)` (the `index` form is left as written).
fn azip_as_zip(mac: &syn::Macro) -> Option<Expr> {
    if mac.path.segments.last()?.ident != "azip" {
        return None;
    }
    struct Azip {
        parts: Vec<(Pat, Expr)>,
        body: Expr,
    }
    impl syn::parse::Parse for Azip {
        fn parse(input: syn::parse::ParseStream) -> syn::Result<Self> {
            let content;
            syn::parenthesized!(content in input);
            let mut parts = Vec::new();
            while !content.is_empty() {
                let pat = Pat::parse_single(&content)?;
                content.parse::<syn::Token![in]>()?;
                let e: Expr = content.parse()?;
                parts.push((pat, e));
                if content.is_empty() {
                    break;
                }
                content.parse::<syn::Token![,]>()?;
            }
            let body: Expr = input.parse()?;
            Ok(Azip { parts, body })
        }
    }
    let a: Azip = mac.parse_body().ok()?;
    let span = mac.path.span();
    let mut it = a.parts.into_iter();
    let (p0, e0) = it.next()?;
    let mut pats = vec![p0];
    let mut zip: Expr = syn::parse_quote_spanned!(span=> ::ndarray::Zip::from(#e0));
    for (p, e) in it {
        pats.push(p);
        zip = syn::parse_quote_spanned!(span=> #zip.and(#e));
    }
    let body = &a.body;
    Some(syn::parse_quote_spanned!(span=> #zip.for_each(|#(#pats),*| { #body; })))
}

impl VisitMut for MutViewLoops {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        syn::visit_mut::visit_expr_mut(self, e);
        if let Expr::ForLoop(f) = e {
            if let Some(r) = mut_views_loop(f, &mut self.next) {
                *e = r;
            }
        }
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// `for mut row in out.rows_mut()` (also `columns_mut()`, `outer_iter_mut()`,
/// `axis_iter_mut(Axis(k))`, with `.into_iter()` and `.enumerate()`): a loop over
/// the indices with `let mut row = out.row_mut(i);`, which the writes through views
/// take.
fn mut_views_loop(f: &syn::ExprForLoop, next: &mut usize) -> Option<Expr> {
    {
        let span = f.expr.span();
        let mut iter = (*f.expr).clone();
        let mut pat = (*f.pat).clone();
        let mut counter: Option<Pat> = None;
        if let Expr::MethodCall(m) = &iter {
            if m.method == "enumerate" && m.args.is_empty() {
                let Pat::Tuple(t) = &pat else { return None };
                if t.elems.len() != 2 {
                    return None;
                }
                counter = Some(t.elems[0].clone());
                let inner = t.elems[1].clone();
                iter = (*m.receiver).clone();
                pat = inner;
            }
        }
        if let Expr::MethodCall(m) = &iter {
            if m.method == "into_iter" && m.args.is_empty() {
                iter = (*m.receiver).clone();
            }
        }
        let Expr::MethodCall(m) = &iter else {
            return None;
        };
        let a = &m.receiver;
        if !plain_place(a) {
            return None;
        }
        // The count and the selector of one view (with the axis it takes first).
        let (count, sel, axis): (Expr, &str, Option<Expr>) =
            match (m.method.to_string().as_str(), m.args.len()) {
                ("rows_mut", 0) => (
                    syn::parse_quote_spanned!(span=> #a.nrows()),
                    "row_mut",
                    None,
                ),
                ("columns_mut", 0) => (
                    syn::parse_quote_spanned!(span=> #a.ncols()),
                    "column_mut",
                    None,
                ),
                ("outer_iter_mut", 0) => {
                    let ax: Expr = syn::parse_quote_spanned!(span=> ::ndarray::Axis(0));
                    (
                        syn::parse_quote_spanned!(span=> #a.len_of(#ax)),
                        "index_axis_mut",
                        Some(ax),
                    )
                }
                ("axis_iter_mut", 1) if plain_selector_arg(&m.args[0]) => {
                    let ax = m.args[0].clone();
                    (
                        syn::parse_quote_spanned!(span=> #a.len_of(#ax)),
                        "index_axis_mut",
                        Some(ax),
                    )
                }
                _ => return None,
            };
        let name = match &pat {
            Pat::Ident(p) if p.subpat.is_none() && p.by_ref.is_none() => p.ident.clone(),
            _ => return None,
        };
        *next += 1;
        let i = format_ident!("__mochi_vi{}", *next, span = span);
        let sel = format_ident!("{}", sel, span = span);
        let v: Expr = match &axis {
            Some(ax) => syn::parse_quote_spanned!(span=> #a.#sel(#ax, #i)),
            None => syn::parse_quote_spanned!(span=> #a.#sel(#i)),
        };
        let counter = counter.map(|c| quote_spanned!(span=> let #c = #i;));
        let stmts = &f.body.stmts;
        let mut body: syn::Block = syn::parse_quote_spanned!(span=> {
            #counter
            let mut #name = #v;
            #(#stmts)*
        });
        // The loop is not visited again: its view is written where it is used now.
        inline_view_borrows(&mut body);
        let label = &f.label;
        Some(syn::parse_quote_spanned!(span=> #label for #i in 0..#count #body))
    }
}

impl Desugar {
    /// `x.first().unwrap()`, `x.last().unwrap()`, and `chain.reduce(f).unwrap()`,
    /// `chain.max_by(cmp).unwrap()`, `chain.min_by(cmp).unwrap()`, `chain.last().unwrap()`,
    /// `chain.next().unwrap()` over differentiable sequences.
    /// `chain.last()` (also `next()`, `next_back()`, `nth(k)`, `find(p)`, followed by
    /// `copied()`/`cloned()`) of a chain over a differentiable sequence whose length does
    /// not decide (a `filter`, `filter_map`, `map_while`): the walk, giving the `Option`.
    fn chain_end_as_option(&mut self, e: &Expr) -> Option<Expr> {
        let mut end = unparen(e);
        if let Expr::MethodCall(c) = end {
            if c.args.is_empty() && (c.method == "copied" || c.method == "cloned") {
                end = unparen(&c.receiver);
            }
        }
        let Expr::MethodCall(inner) = end else {
            return None;
        };
        if !matches!(
            inner.method.to_string().as_str(),
            "last" | "next" | "next_back" | "nth" | "find"
        ) || !mentions_active(&inner.receiver, &self.active)
            // (A `find` decides where it stops whatever the chain's length.)
            || inner.method != "find" && crate::iterchain::option_chain_len(end).is_some()
        {
            return None;
        }
        let float_ty = self.float_ty.clone();
        Writer::new(&mut self.next, float_ty.as_ref()).end_unwrap(inner, true)
    }

    fn unwrap_rewrite(&mut self, m: &syn::ExprMethodCall) -> Option<Expr> {
        let not_sequences: HashSet<String> = self
            .inactive_params
            .union(&self.map_locals)
            .cloned()
            .collect();
        if let Some(r) = first_or_last(&Expr::MethodCall(m.clone()), &not_sequences) {
            return Some(r);
        }
        let Expr::MethodCall(inner) = &*m.receiver else {
            return None;
        };
        // `chain.max_by(cmp).copied().unwrap()`: `Option::copied`/`cloned` of the element.
        let inner = chain_end(inner);
        let name = inner.method.to_string();
        if !matches!(
            name.as_str(),
            "reduce"
                | "max_by"
                | "min_by"
                | "max_by_key"
                | "min_by_key"
                | "last"
                | "next_back"
                | "next"
                | "nth"
                | "find"
        ) || !mentions_active(&inner.receiver, &self.active)
        {
            return None;
        }
        let float_ty = self.float_ty.clone();
        let mut w = Writer::new(&mut self.next, float_ty.as_ref());
        if matches!(
            name.as_str(),
            "last" | "next_back" | "next" | "nth" | "find"
        ) {
            return w.end_unwrap(inner, false);
        }
        w.reduce_unwrap(inner)
    }
}

impl Desugar {
    /// The receivers of these names set as given (`None`: not a receiver).
    fn set_receivers(&mut self, of: Vec<(String, Option<Receiver>)>) {
        for (n, r) in of {
            match r {
                Some(r) => self.receivers.insert(n, r),
                None => self.receivers.remove(&n),
            };
        }
    }

    /// Keeps [`Receiver`]s in step with a `let`: a binding (not `mut`) to a struct
    /// literal `T { .. }`, to a clone of a receiver, or with a type `T` written, is one;
    /// any other binding of the name is not.
    ///
    /// `before` holds the receivers of the names the `let` binds as they were before it:
    /// its value reads those (`let a = a.scaled(2.0);`).
    fn note_receiver(&mut self, l: &syn::Local, before: &[(String, Option<Receiver>)]) {
        let (pat, written) = match &l.pat {
            Pat::Type(t) => (&*t.pat, Receiver::user_type(&t.ty)),
            other => (other, None),
        };
        let mut names = Vec::new();
        crate::activity::pat_names(pat, &mut names);
        let earlier = |i: &syn::Ident, now: &std::collections::HashMap<String, Receiver>| {
            let n = i.to_string();
            match before.iter().find(|(b, _)| *i == b) {
                Some((_, r)) => r.clone(),
                None => now.get(&n).cloned(),
            }
        };
        for n in &names {
            self.receivers.remove(n);
            self.element_receivers.remove(n);
        }
        for n in &names {
            crate::iterchain::note_linear_seq(n, false);
        }
        let Pat::Ident(p) = pat else { return };
        crate::iterchain::note_linear_seq(
            &p.ident.to_string(),
            match &l.pat {
                Pat::Type(t) => crate::iterchain::linear_type(&t.ty),
                _ => l
                    .init
                    .as_ref()
                    .is_some_and(|i| crate::iterchain::linear_init(&i.expr)),
            },
        );
        let elements = match &l.pat {
            Pat::Type(t) => Receiver::user_elements(&t.ty).is_some(),
            _ => l
                .init
                .as_ref()
                .is_some_and(|i| struct_literals(unparen(&i.expr))),
        };
        let mirrors =
            matches!(&l.pat, Pat::Type(t) if mirror_elements(&t.ty) || tuple_elements(&t.ty));
        crate::iterchain::note_struct_seq(&p.ident.to_string(), elements || mirrors);
        crate::iterchain::note_struct_seq_type(&p.ident.to_string(), local_element_type(l));
        if elements && p.mutability.is_some() && p.by_ref.is_none() {
            self.element_receivers.insert(p.ident.to_string());
        }
        if p.by_ref.is_some() || p.subpat.is_some() {
            return;
        }
        let from_init = l.init.as_ref().and_then(|i| match unparen(&i.expr) {
            Expr::Struct(st) if st.qself.is_none() && st.path.segments.len() == 1 => {
                let path = &st.path;
                Receiver::user_type(&syn::parse_quote!(#path))
                    .or_else(|| {
                        (st.path.is_ident("Self")).then(|| st.path.segments[0].ident.clone())
                    })
                    .map(|t| (t, true))
            }
            Expr::MethodCall(m) if m.method == "clone" && m.args.is_empty() => {
                match unparen(&m.receiver) {
                    Expr::Path(r) => r
                        .path
                        .get_ident()
                        .and_then(|i| earlier(i, &self.receivers))
                        .map(|r| (r.ty.clone(), r.sure)),
                    _ => None,
                }
            }
            // `let q = Pair::new(a, b);`: a constructor of the user's type (`new`,
            // `default`, `from_…`, `with_…`, by the convention that they return `Self`),
            // so surely of it; another associated function's result may be of another
            // type. Also a builder's chain on one (`Model::default().with_bias(b)`).
            // `let mut net = net_from(p);` of a marked function returning the type by
            // name: of it, not surely (a library's method name stays the library's).
            Expr::Call(c) => constructed(c)
                .or_else(|| enum_variant(&c.func))
                .or_else(|| match unparen(&c.func) {
                    Expr::Path(f) if f.qself.is_none() => f
                        .path
                        .get_ident()
                        .and_then(|i| crate::twin::fn_result(&i.to_string()))
                        .map(|t| (syn::Ident::new(&t, f.span()), false)),
                    _ => None,
                }),
            // `let n = Normal::new(0.0, 1.0).unwrap();` (also `expect`): a constructor
            // returning a `Result` or an `Option` of the type (statrs' shape).
            Expr::MethodCall(m)
                if matches!(m.method.to_string().as_str(), "unwrap" | "expect")
                    && matches!(unparen(&m.receiver), Expr::Call(_)) =>
            {
                match unparen(&m.receiver) {
                    Expr::Call(c) => constructed(c),
                    _ => None,
                }
            }
            // `let trained = (0..3).fold(model, |m, _| m.step(..));`: a fold from a value
            // of the type is one.
            Expr::MethodCall(m) if m.method == "fold" && m.args.len() == 2 => {
                match unparen(&m.args[0]) {
                    Expr::Path(r) => r
                        .path
                        .get_ident()
                        .and_then(|i| earlier(i, &self.receivers))
                        .map(|r| (r.ty.clone(), r.sure)),
                    Expr::Call(c) => constructed(c),
                    _ => None,
                }
            }
            // `let next = aff.stepped(&g, 0.3);`: a method of the type returning it; or
            // a builder's chain.
            e @ Expr::MethodCall(m) => match unparen(&m.receiver) {
                Expr::Path(r) => r.path.get_ident().and_then(|i| earlier(i, &self.receivers)),
                _ => None,
            }
            .filter(|r| crate::twin::returns_self(&r.ty.to_string(), &m.method.to_string()))
            .map(|r| (r.ty.clone(), r.sure))
            .or_else(|| builder_root(e).and_then(constructed)),
            // `let a = Act::Tanh;`: a variant of the user's enum; `let sq = SquaredLoss;`:
            // a unit struct of the user's.
            e @ Expr::Path(_) => enum_variant(e).or_else(|| unit_struct(e)),
            _ => None,
        });
        if let Some((ty, sure)) = written.map(|t| (t, false)).or(from_init) {
            self.receivers.insert(
                p.ident.to_string(),
                Receiver {
                    sure: sure || ty == "Self",
                    ty,
                    by_ref: false,
                    mutable: p.mutability.is_some(),
                },
            );
        }
    }

    /// `m.predict(x)` on a [`Receiver`] → `Linear::predict(m, x)` (`&p` for a value), a
    /// call of the method's derived rule; not the methods every type has, nor those
    /// of floats, sequences and arrays (a float alias `x: Scalar` keeps `x.sin()`).
    fn receiver_call(&self, m: &syn::ExprMethodCall) -> Option<Expr> {
        let Expr::Path(p) = unparen(&m.receiver) else {
            return None;
        };
        let v = p.path.get_ident()?;
        // (A local of a type the macro cannot see, `let mut m = Mlp::zeros(..)`, given a
        // `&mut self` method of one type of the crate's marked blocks: that type's, lent
        // mutably; the rule trait that reaches `&self` methods on any value cannot lend.)
        let unseen;
        let r = match self.receivers.get(&v.to_string()) {
            Some(r) => r,
            // `SquaredLoss.loss(p, y)`: the value of a unit struct of the user's.
            None if unit_struct(&m.receiver).is_some() => {
                unseen = Receiver {
                    ty: v.clone(),
                    by_ref: false,
                    mutable: false,
                    sure: true,
                };
                &unseen
            }
            None => {
                let name = m.method.to_string();
                let ty = crate::twin::mut_method_type(&name)
                    .filter(|_| !crate::lower::expr::is_library_method(&name))?;
                unseen = Receiver {
                    ty: syn::Ident::new(&ty, v.span()),
                    by_ref: false,
                    mutable: true,
                    sure: false,
                };
                &unseen
            }
        };
        // Method syntax only on a value surely of the user's type (`Self`, a struct
        // literal or its clone): another type's method may be a rule crate's
        // (`a.transpose()` of a matrix type of its own), which the rule call reaches;
        // `Type::m(v, ..)` names the user's method for sure. Such a value's methods are
        // its own, even one named `push`.
        let name = m.method.to_string();
        // (A parameter `l: &Layer` of a type the macro cannot see: its method by a name
        // no rule crate's type has is the user's.)
        let users = r.sure || !crate::lower::expr::is_library_method(&name) || r.marked(&name);
        if !users || !mentions_active(m, &self.active) {
            return None;
        }
        if m.turbofish.is_some()
            || PLAIN_METHODS.contains(&name.as_str())
            || crate::twin::plain_user_method(&name)
        {
            return None;
        }
        let span = m.method.span();
        let (ty, method, args) = (&r.ty, &m.method, &m.args);
        // A `mut` value is passed `&mut` (the method may take `&mut self`), unless an
        // argument borrows it too (`v.dot(&v)`, `v.add(&v.cross(&b))`): then the method
        // takes `&self`, as Rust would not compile the call otherwise. Arguments that read
        // it by value (`v.scale(v.x)`) are evaluated first, as the method call does. A
        // predicate (`v.contains(x)`) takes `&self` too.
        let borrows_v = args.iter().any(|a| borrows_name(a, v)) || is_predicate_name(&name);
        let recv = if r.by_ref && r.mutable && !borrows_v {
            // (A `&mut` parameter reborrowed, not moved into the first call.)
            quote_spanned!(span=> &mut *#v)
        } else if r.by_ref {
            quote_spanned!(span=> #v)
        } else if r.mutable && !borrows_v {
            quote_spanned!(span=> &mut #v)
        } else {
            quote_spanned!(span=> &#v)
        };
        if r.mutable
            && !borrows_v
            && args
                .iter()
                .any(|a| tokens_mention(&quote::quote!(#a), &|i| i == v))
        {
            // (`&v.cross(&b)`: the value bound, and lent.)
            let (mut lets, mut passed) = (Vec::new(), Vec::new());
            for (k, a) in args.iter().enumerate() {
                let t = format_ident!("__mochi_ra{}", k, span = span);
                match unparen(a) {
                    Expr::Reference(r) if r.mutability.is_none() => {
                        let val = &r.expr;
                        lets.push(quote_spanned!(span=> let #t = #val;));
                        passed.push(quote_spanned!(span=> &#t));
                    }
                    _ => {
                        lets.push(quote_spanned!(span=> let #t = #a;));
                        passed.push(quote_spanned!(span=> #t));
                    }
                }
            }
            return Some(syn::parse_quote_spanned!(span=> {
                #(#lets)*
                #ty::#method(#recv, #(#passed),*)
            }));
        }
        let sep = (!args.is_empty()).then(|| quote_spanned!(span=> ,));
        Some(syn::parse_quote_spanned!(span=> #ty::#method(#recv #sep #args)))
    }

    /// `m.moved(g)`, `self.step(g)`: a call of a method of the user's on a binding of the
    /// user's type (see [`Receiver`]), which may make an `Option` its combinators read.
    fn user_method_call(&self, o: &Expr) -> bool {
        let Expr::MethodCall(m) = unparen(o) else {
            return false;
        };
        let name = m.method.to_string();
        matches!(unparen(&m.receiver), Expr::Path(p) if p.path.get_ident().is_some_and(|v| {
            v == "self" || self.receivers.contains_key(&v.to_string())
        })) && !PLAIN_METHODS.contains(&name.as_str())
            && !crate::lower::expr::is_library_method(&name)
    }

    /// `m.gauge.raise(by)`, `self.inner.drain(0.5)`, `gs[1].raise(v)`: a method called on a
    /// field or an element, of a type the macro cannot see, whose name is a `&mut self`
    /// method of one type of the crate's marked blocks (and no rule crate's) →
    /// `Gauge::raise(&mut m.gauge, by)`, the place lent mutably as Rust lends it (the rule
    /// trait that reaches `&self` methods on any value cannot lend), through a copy
    /// written back after the call ([`write_back_call`]).
    fn place_receiver_call(&mut self, m: &syn::ExprMethodCall) -> Option<Expr> {
        // `gs.last_mut().unwrap().kick(r)`, `gs.first_mut().unwrap()`: the element by
        // its position.
        let ends: Option<Expr> = match unparen(&m.receiver) {
            Expr::MethodCall(u) if u.method == "unwrap" && u.args.is_empty() => {
                match unparen(&u.receiver) {
                    Expr::MethodCall(f) if f.args.is_empty() && plain_place(&f.receiver) => {
                        let v = &f.receiver;
                        match f.method.to_string().as_str() {
                            "first_mut" => Some(syn::parse_quote!(#v[0])),
                            "last_mut" => Some(syn::parse_quote!(#v[#v.len() - 1])),
                            _ => None,
                        }
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        let place = ends.as_ref().unwrap_or_else(|| unparen(&m.receiver));
        if !matches!(place, Expr::Field(_) | Expr::Index(_)) || !plain_place(place) {
            return None;
        }
        let name = m.method.to_string();
        if m.turbofish.is_some()
            || PLAIN_METHODS.contains(&name.as_str())
            || crate::lower::expr::is_library_method(&name)
            || !mentions_active(m, &self.active)
        {
            return None;
        }
        let ty = crate::twin::mut_method_type(&name)?;
        let span = m.method.span();
        let ty = syn::Ident::new(&ty, span);
        let (method, args) = (&m.method, &m.args);
        let sep = (!args.is_empty()).then(|| quote_spanned!(span=> ,));
        let call: syn::ExprCall =
            syn::parse_quote_spanned!(span=> #ty::#method(&mut #place #sep #args));
        Some(write_back_call(&call, span, &mut self.next).unwrap_or(Expr::Call(call)))
    }

    /// See [`element_receivers`](Desugar::element_receivers): `ps[i].step(dt)` →
    /// `{ let mut t = ps[i].clone(); let r = (&mut t).step(dt); ps[i] = t; r }`.
    fn element_receiver_call(&mut self, m: &syn::ExprMethodCall) -> Option<Expr> {
        let Expr::Index(ix) = unparen(&m.receiver) else {
            return None;
        };
        let Expr::Path(p) = unparen(&ix.expr) else {
            return None;
        };
        let v = p.path.get_ident()?;
        let name = m.method.to_string();
        if !self.element_receivers.contains(&v.to_string())
            || m.turbofish.is_some()
            || PLAIN_METHODS.contains(&name.as_str())
            || crate::lower::expr::is_library_method(&name)
            || matches!(&*ix.index, Expr::Range(_))
            || !mentions_active(m, &self.active)
        {
            return None;
        }
        let span = m.receiver.span();
        let mut call = m.clone();
        let place = &m.receiver;
        *call.receiver = syn::parse_quote_spanned!(span=> (&mut #place));
        write_back_receiver(&call, span, &mut self.next)
    }

    /// A variable or a field of one (a place a rewrite can write back to) that carries a
    /// derivative.
    fn active_place(&self, e: &Expr) -> bool {
        matches!(e, Expr::Path(_) | Expr::Field(_)) && mentions_active(e, &self.active)
    }

    /// [`active_place`](Self::active_place), or a row of one (`m[2]` of a `Vec<Vec<f64>>`,
    /// not a sub-slice `v[1..]`).
    fn active_place_or_row(&self, e: &Expr) -> bool {
        match e {
            Expr::Index(i) => {
                !matches!(unparen(&i.index), Expr::Range(_)) && self.active_place(&i.expr)
            }
            _ => self.active_place(e),
        }
    }
}

impl Desugar {
    /// See [`visit_local_mut`](VisitMut::visit_local_mut): the rewritten `let`.
    fn pieces_collected(&mut self, l: &syn::Local) -> Option<syn::Local> {
        let (Pat::Type(t), Some(init)) = (&l.pat, &l.init) else {
            return None;
        };
        if init.diverge.is_some() || !mentions_active(&init.expr, &self.active) {
            return None;
        }
        // The element type: `Vec<Vec<F>>` or `Vec<&[F]>`.
        let elem = {
            let syn::Type::Path(p) = &*t.ty else {
                return None;
            };
            let last = p.path.segments.last()?;
            if last.ident != "Vec" {
                return None;
            }
            let syn::PathArguments::AngleBracketed(a) = &last.arguments else {
                return None;
            };
            let Some(syn::GenericArgument::Type(row)) = a.args.first() else {
                return None;
            };
            match row {
                syn::Type::Reference(r) if r.mutability.is_none() => match &*r.elem {
                    syn::Type::Slice(sl) => (*sl.elem).clone(),
                    _ => return None,
                },
                syn::Type::Path(rp) => {
                    let rl = rp.path.segments.last()?;
                    if rl.ident != "Vec" {
                        return None;
                    }
                    let syn::PathArguments::AngleBracketed(ra) = &rl.arguments else {
                        return None;
                    };
                    let Some(syn::GenericArgument::Type(e)) = ra.args.first() else {
                        return None;
                    };
                    e.clone()
                }
                _ => return None,
            }
        };
        let Expr::MethodCall(collect) = unparen(&init.expr) else {
            return None;
        };
        if collect.method != "collect" || !collect.args.is_empty() {
            return None;
        }
        // `.map(|c| c.to_vec())` (or `.to_owned()`, `Vec::from(c)`) or nothing.
        let mut src = unparen(&collect.receiver);
        if let Expr::MethodCall(m) = src {
            if m.method == "map" && m.args.len() == 1 {
                let Expr::Closure(c) = &m.args[0] else {
                    return None;
                };
                let [Pat::Ident(p)] = c.inputs.iter().collect::<Vec<_>>()[..] else {
                    return None;
                };
                let copies = match unparen(&c.body) {
                    Expr::MethodCall(b) => {
                        matches!(b.method.to_string().as_str(), "to_vec" | "to_owned")
                            && b.args.is_empty()
                            && matches!(unparen(&b.receiver), Expr::Path(r) if r.path.is_ident(&p.ident))
                    }
                    _ => false,
                };
                if !copies {
                    return None;
                }
                src = unparen(&m.receiver);
            }
        }
        let Expr::MethodCall(pieces) = src else {
            return None;
        };
        let kind = pieces.method.to_string();
        if !matches!(kind.as_str(), "chunks" | "chunks_exact" | "windows") || pieces.args.len() != 1
        {
            return None;
        }
        let x = &pieces.receiver;
        if !matches!(unparen(x), Expr::Path(_) | Expr::Field(_)) {
            return None;
        }
        let span = pieces.method.span();
        self.next += 1;
        let (n, k, v) = (
            format_ident!("__mochi_psz{}", self.next, span = span),
            format_ident!("__mochi_pk{}", self.next, span = span),
            format_ident!("__mochi_rows{}", self.next, span = span),
        );
        let size = &pieces.args[0];
        let (count, range) = match kind.as_str() {
            "chunks" => (
                quote_spanned!(span=> (#x.len() + #n - 1) / #n),
                quote_spanned!(span=> #k * #n..::core::cmp::min((#k + 1) * #n, #x.len())),
            ),
            "chunks_exact" => (
                quote_spanned!(span=> #x.len() / #n),
                quote_spanned!(span=> #k * #n..(#k + 1) * #n),
            ),
            _ => (
                quote_spanned!(span=> (#x.len() + 1).saturating_sub(#n)),
                quote_spanned!(span=> #k..#k + #n),
            ),
        };
        let pat = &t.pat;
        let attrs = &l.attrs;
        let out: syn::Stmt = syn::parse_quote_spanned!(span=>
            #(#attrs)* let #pat: Vec<Vec<#elem>> = {
                let #n: usize = #size;
                let mut #v: Vec<Vec<#elem>> = Vec::new();
                for #k in 0..#count {
                    #v.push(#x[#range].to_vec());
                }
                #v
            };
        );
        let syn::Stmt::Local(mut out) = out else {
            return None;
        };
        self.visit_local_mut(&mut out);
        Some(out)
    }
}

impl VisitMut for Desugar {
    // The parameter of a closure given to a method of a chain over a differentiable
    // sequence (`x.iter().map(|&v| helper(v).unwrap_or(0.0))`) is an element, which may
    // carry a derivative: rewrites inside the closure see it as such. (A name or `&name`
    // only: an `enumerate` index is an integer.)
    fn visit_expr_method_call_mut(&mut self, m: &mut syn::ExprMethodCall) {
        // `rows.push(chain.collect())`: the `Vec` the `push` gives it its type from, as
        // the turbofish the chain rewrite reads.
        if m.method == "push" && m.args.len() == 1 {
            if let Expr::MethodCall(c) = &mut m.args[0] {
                if c.method == "collect"
                    && c.args.is_empty()
                    && c.turbofish.is_none()
                    && mentions_active(&c.receiver, &self.active)
                {
                    c.turbofish = Some(syn::parse_quote!(::<Vec<_>>));
                }
            }
        }
        if !mentions_active(&m.receiver, &self.active) {
            return syn::visit_mut::visit_expr_method_call_mut(self, m);
        }
        let mut added = Vec::new();
        for a in &m.args {
            let Expr::Closure(c) = a else { continue };
            for p in &c.inputs {
                let p = match p {
                    Pat::Reference(r) => &*r.pat,
                    Pat::Type(t) => &*t.pat,
                    other => other,
                };
                if let Pat::Ident(i) = p {
                    let n = i.ident.to_string();
                    if self.active.insert(n.clone()) {
                        added.push(n);
                    }
                }
            }
        }
        syn::visit_mut::visit_expr_method_call_mut(self, m);
        for n in added {
            self.active.remove(&n);
        }
    }

    // A closure's parameter shadows a receiver of the same name outside it (`let mut p =
    // P::new(..)` in one loop, `ps.iter().map(|p| p.stepped(dt))` after it).
    fn visit_expr_closure_mut(&mut self, c: &mut syn::ExprClosure) {
        let mut names = Vec::new();
        for p in &c.inputs {
            crate::activity::pat_names(p, &mut names);
        }
        let hidden = self.hide_receivers(names);
        syn::visit_mut::visit_expr_closure_mut(self, c);
        self.restore_receivers(hidden);
    }

    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        let returns_early = b.stmts.iter().any(
            |s| matches!(plain_let(s), Some((_, Expr::Closure(c))) if contains_return(&c.body)),
        );
        for (snap, of) in inline_local_closures(b) {
            if self.active.contains(&of) {
                self.active.insert(snap);
            }
        }
        // A closure that returns early, inlined: its body is the labelled block
        // `'__mochi_ret: { … break '__mochi_ret e; … }`, which the function's own were
        // written out as before this pass (a valued loop, then its value bound).
        if returns_early {
            LabelledBlocks.visit_block_mut(b);
            self.next += 1;
            LoopValues {
                next: 10_000 * self.next,
            }
            .visit_block_mut(b);
        }
        inline_mut_borrows(b);
        inline_view_borrows(b);
        inline_split_at(b, &mut self.next, &mut self.active);
        inline_windows(b, &mut self.next);
        inline_held_pieces(b);
        inline_held_iters(b, &mut self.next, &self.active);
        let mut stmts = Vec::with_capacity(b.stmts.len());
        // The pattern of a `let … else` over a chain's walk: `*v` after it reads `v`.
        let mut underef_rest: Vec<syn::Ident> = Vec::new();
        let mut bound_here: Vec<syn::Ident> = Vec::new();
        for mut s in b.stmts.drain(..) {
            // `let (a, b): (Vec<f64>, Vec<f64>) = chain.map(|p| (e1, e2)).unzip();`: two
            // chains, `let a: Vec<f64> = chain.map(|p| e1).collect();` and the same for b.
            if let syn::Stmt::Local(l) = &s {
                if let Some(two) =
                    unzip_as_two(l, &self.active).or_else(|| partition_as_two(l, &self.active))
                {
                    stmts.extend(two);
                    continue;
                }
            }
            // `let (a, b) = x.iter().zip(y.iter()).max_by(..).unwrap();`: the position
            // found first, so that the names bind the elements as references.
            if let syn::Stmt::Local(l) = &mut s {
                if let Some(init) = &mut l.init {
                    if init.diverge.is_none() {
                        if let Some((search, pair)) =
                            best_of_zip(&init.expr, &self.active, &mut self.next)
                        {
                            stmts.push(search);
                            // `let (a, b) = (&x[k], &y[k]);` as one `let` per name.
                            match (&l.pat, &pair) {
                                (Pat::Tuple(t), Expr::Tuple(v)) if t.elems.len() == 2 => {
                                    for (p, e) in t.elems.iter().zip(v.elems.iter()) {
                                        stmts.push(syn::parse_quote!(let #p = #e;));
                                    }
                                    continue;
                                }
                                _ => *init.expr = pair,
                            }
                        }
                    }
                }
            }
            // `let Some(v) = chain.find(p) else { .. };` of a chain that skips: the walk,
            // as for `if let`.
            if let syn::Stmt::Local(l) = &mut s {
                if let Some(init) = &mut l.init {
                    if init.diverge.is_some() {
                        if let Some(o) = self.chain_end_as_option(&init.expr) {
                            *init.expr = o;
                            let mut rest = syn::Block {
                                brace_token: Default::default(),
                                stmts: Vec::new(),
                            };
                            // (The statements after it read `*v` as `v`, below.)
                            if by_value_binding(&mut l.pat, &mut rest) {
                                let mut names = Vec::new();
                                crate::activity::pat_names(&l.pat, &mut names);
                                bound_here.extend(names.iter().map(|n| format_ident!("{}", n)));
                            }
                        }
                    }
                }
            }
            if !underef_rest.is_empty() {
                let mut one = syn::Block {
                    brace_token: Default::default(),
                    stmts: vec![s],
                };
                crate::rewrite::UnDeref {
                    names: &underef_rest,
                }
                .visit_block_mut(&mut one);
                s = one.stmts.pop().expect("one statement");
            }
            underef_rest.append(&mut bound_here);
            match &s {
                syn::Stmt::Local(l) => match let_else(l, &self.active) {
                    Some(r) => stmts.extend(r),
                    None => stmts.push(s),
                },
                _ => stmts.push(s),
            }
        }
        b.stmts = stmts;
        syn::visit_mut::visit_block_mut(self, b);
    }
    fn visit_local_mut(&mut self, l: &mut syn::Local) {
        struct_elements_named(l);
        // (The value reads the bindings before this one: `let a = a.scaled(2.0);`.)
        let mut names = Vec::new();
        crate::activity::pat_names(&l.pat, &mut names);
        let receivers_of = |d: &Self| -> Vec<(String, Option<Receiver>)> {
            names
                .iter()
                .map(|n| (n.clone(), d.receivers.get(n).cloned()))
                .collect()
        };
        let before_receivers = receivers_of(self);
        self.note_receiver(l, &before_receivers);
        self.note_const_alias(l);
        // `let p = x.get(i).copied();`, `let p = if c { x.first() } else { None };`: an
        // `Option` held in a variable, built from the bounds test and the element.
        if let Some(init) = &mut l.init {
            if init.diverge.is_none() {
                element_options_as_values(&mut init.expr, &self.active);
            }
        }
        // `let a: T = e as _;` → `e as T`: the cast's rule needs its type.
        if let (Pat::Type(t), Some(init)) = (&l.pat, &mut l.init) {
            if let Expr::Cast(c) = &mut *init.expr {
                if matches!(&*c.ty, syn::Type::Infer(_)) {
                    c.ty = t.ty.clone();
                }
            }
        }
        // `let total: usize = chain.sum();`: an integer's type as the turbofish, so the
        // chain stays as written (it carries no derivative); an `Option`'s or a
        // `Result`'s likewise (not a float's sum: see `iterchain`'s `consumer`).
        if let (Pat::Type(t), Some(init)) = (&l.pat, &mut l.init) {
            if let Expr::MethodCall(m) = &mut *init.expr {
                if (m.method == "sum" || m.method == "product")
                    && m.args.is_empty()
                    && m.turbofish.is_none()
                    && crate::activity::not_a_float_sum(&t.ty)
                {
                    let ty = &t.ty;
                    m.turbofish = Some(syn::parse_quote!(::<#ty>));
                }
            }
        }
        // `let y: Array1<f64> = chain.collect();`: the type as the `collect`'s turbofish,
        // which `array_from_elements` takes.
        if let (Pat::Type(t), Some(init)) = (&l.pat, &mut l.init) {
            if let (syn::Type::Path(tp), Expr::MethodCall(m)) = (&*t.ty, &mut *init.expr) {
                if m.method == "collect"
                    && m.args.is_empty()
                    && m.turbofish.is_none()
                    && tp.qself.is_none()
                    && tp
                        .path
                        .segments
                        .last()
                        .is_some_and(|s| s.ident == "Array1" || s.ident == "Array")
                {
                    let ty = &tp.path;
                    m.turbofish = Some(syn::parse_quote!(::<#ty>));
                }
            }
        }
        array_try_from_let(l);
        // `let z: f64 = x.into();` → `f64::from(x)` (a lossless conversion to a float,
        // which has a rule).
        if let (Pat::Type(t), Some(init)) = (&l.pat, &mut l.init) {
            if let (syn::Type::Path(tp), Expr::MethodCall(m)) = (&*t.ty, &*init.expr) {
                if m.method == "into"
                    && m.args.is_empty()
                    && (tp.path.is_ident("f64") || tp.path.is_ident("f32"))
                {
                    let (ty, r) = (&tp.path, &m.receiver);
                    *init.expr = syn::parse_quote_spanned!(m.method.span()=> #ty::from(#r));
                }
            }
        }
        if let (Some(ty), Some(init), Pat::Ident(_)) = (&self.float_ty, &mut l.init, &l.pat) {
            if let Some(t) = typed(&init.expr, ty) {
                *init.expr = t;
            }
        }
        let after = receivers_of(self);
        self.set_receivers(before_receivers);
        syn::visit_mut::visit_local_mut(self, l);
        self.set_receivers(after);
        // `let r: &[f64] = x;`, `let r = &x[1..];` (an inlined closure's parameter given
        // a differentiable sequence): an alias of the sequence, which carries
        // derivatives as it does, for the rewrites of the statements after it.
        if let Some(init) = &l.init {
            let name = match &l.pat {
                Pat::Ident(p) => Some(&p.ident),
                Pat::Type(t) => match &*t.pat {
                    Pat::Ident(p) => Some(&p.ident),
                    _ => None,
                },
                _ => None,
            };
            let alias = match unparen(&init.expr) {
                Expr::Path(_) => true,
                Expr::Reference(r) => matches!(&*r.expr, Expr::Path(_) | Expr::Index(_)),
                _ => false,
            };
            if let (Some(name), true) = (name, alias) {
                if mentions_active(&init.expr, &self.active) {
                    self.active.insert(name.to_string());
                }
            }
        }
        // `let rows: Vec<Vec<f64>> = x.chunks(n).map(|c| c.to_vec()).collect();` and
        // `let rows: Vec<&[f64]> = x.chunks(n).collect();` (also `chunks_exact`,
        // `windows`): the pieces copied into a `Vec` of rows by an index loop (a `Vec`
        // of borrowed rows is held as copies: their cotangents flow back the same way).
        if let Some(r) = self.pieces_collected(l) {
            *l = r;
            return;
        }
        // `let y: Vec<f64> = chain.collect();`
        if let (Pat::Type(t), Some(init)) = (&l.pat, &mut l.init) {
            if let Expr::MethodCall(m) = &mut *init.expr {
                if m.method == "collect"
                    && mentions_active(&m.receiver, &self.active)
                    && !crate::activity::type_is_inactive(&t.ty)
                {
                    // `helper(x).iter().map(..).collect()`, `l.forward(&x).iter()…`: the
                    // source bound first, as a variable the chain rewrite takes.
                    let mut bound =
                        bind_chain_source(&mut m.receiver, &self.active, &mut self.next);
                    if !bound.is_empty() {
                        // (The names carry derivatives before the chain is rewritten.)
                        for (name, src) in &mut bound {
                            self.visit_expr_mut(src);
                            self.active.insert(name.to_string());
                        }
                        let (span, chain) = (m.method.span(), Expr::MethodCall(m.clone()));
                        let ty = &t.ty;
                        let mut inner: syn::Local = match syn::parse_quote_spanned!(span=>
                            let __mochi_bound: #ty = #chain;
                        ) {
                            syn::Stmt::Local(l) => l,
                            _ => unreachable!("a `let` statement"),
                        };
                        self.visit_local_mut(&mut inner);
                        let value = inner.init.map(|i| i.expr);
                        *init.expr = self.with_sources(bound, span, quote::quote!(#value));
                        return;
                    }
                    let float_ty = self.float_ty.clone();
                    let mut w = Writer::new(&mut self.next, float_ty.as_ref());
                    // (Rows, `Vec<Vec<f64>>`, are built by the loop first: the chain
                    // rewrite would keep each row's own chain as written.)
                    // (So are elements that are not floats: arrays `[f64; 2]`, structs.)
                    // (And tuples holding any of these, `Vec<(V3, V3)>`.)
                    let float = |e: &syn::Type| {
                        matches!(e, syn::Type::Path(p) if p.path.is_ident("f64")
                            || p.path.is_ident("f32")
                            || self.float_ty.as_ref().is_some_and(|f| p.path.is_ident(f)))
                    };
                    let rows =
                        crate::iterchain::vec_elem(&t.ty)
                            .flatten()
                            .is_some_and(|e| match e {
                                syn::Type::Path(_) => !float(e),
                                syn::Type::Array(_) => true,
                                syn::Type::Tuple(t) => t.elems.iter().any(|e| !float(e)),
                                _ => false,
                            });
                    let direct = if rows {
                        None
                    } else {
                        w.consumer(m, Some(&t.ty))
                    };
                    if let Some(r) = direct {
                        *init.expr = r;
                    } else if let Some(r) = collect_by_loop(m, &t.ty, &mut self.next) {
                        // (The loop is rewritten when the statement is visited again.)
                        *init.expr = r;
                        syn::visit_mut::visit_expr_mut(self, &mut init.expr);
                    }
                }
            }
        }
    }
    fn visit_macro_mut(&mut self, m: &mut syn::Macro) {
        if !m.path.is_ident("vec") {
            return;
        }
        // A block among the elements that binds a local closure and calls it (`vec![{
        // let g = |v: f64| v * v; g(x[0]) }, ..]`): inlined there as anywhere else (the
        // rest of the desugaring leaves the elements to the lowering's `vec!` rule).
        struct Blocks;
        impl VisitMut for Blocks {
            fn visit_block_mut(&mut self, b: &mut syn::Block) {
                syn::visit_mut::visit_block_mut(self, b);
                let _ = inline_local_closures(b);
            }
            fn visit_item_mut(&mut self, _: &mut syn::Item) {}
        }
        crate::rewrite::visit_macro_exprs(m, &mut Blocks);
        let Some(ty) = self.float_ty.clone() else {
            return;
        };
        if let Ok(mut r) = m.parse_body::<Repeat>() {
            if let Some(t) = typed(&r.elem, &ty) {
                r.elem = t;
                let (elem, n) = (&r.elem, &r.len);
                m.tokens = quote::quote!(#elem; #n);
            }
            return;
        }
        type List = syn::punctuated::Punctuated<Expr, syn::Token![,]>;
        if let Ok(list) = m.parse_body_with(List::parse_terminated) {
            let elems: List = list
                .into_iter()
                .map(|e| typed(&e, &ty).unwrap_or(e))
                .collect();
            m.tokens = quote::quote!(#elems);
        }
    }
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        // A constant of the user's built as written and lifted to a generic form's scalar
        // (`lift_value::<T, _>(Sc::new(vec![1.0, 2.0]))`): its floats stay `f64`.
        if let Expr::Call(c) = &*e {
            if matches!(&*c.func, Expr::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "lift_value"))
            {
                return;
            }
        }
        // `for l in &layers { h = l.forward(&h); }` over a sequence of the user's structs
        // whose type is known: `l` is a value of the type, lent (`&mut` by `iter_mut()`).
        if let Some((name, r)) = element_receiver(e) {
            let hidden = self.hide_receivers(vec![name.clone()]);
            self.receivers.insert(name.clone(), r);
            self.visit_expr_receivers_known(e);
            self.receivers.remove(&name);
            self.restore_receivers(hidden);
            return;
        }
        // (So does a `for`'s pattern, `for p in ps.iter() { p.stepped(dt) }`.)
        if let Expr::ForLoop(f) = &*e {
            let mut names = Vec::new();
            crate::activity::pat_names(&f.pat, &mut names);
            if names
                .iter()
                .any(|n| self.receivers.contains_key(n) || self.element_receivers.contains(n))
            {
                let hidden = self.hide_receivers(names);
                self.visit_expr_receivers_known(e);
                self.restore_receivers(hidden);
                return;
            }
        }
        self.visit_expr_receivers_known(e);
    }
}

/// `for l in &layers` (also `layers.iter()`, `&mut layers`, `layers.iter_mut()`, and
/// `for (k, l) in layers.iter().enumerate()`) of a sequence of the user's structs of a
/// known type (see `iterchain::struct_seq_type`):
/// the loop variable's name and its [`Receiver`].
fn element_receiver(e: &Expr) -> Option<(String, Receiver)> {
    let Expr::ForLoop(f) = e else { return None };
    let (p, seq, mutable) = crate::twin::loop_over_sequence(f)?;
    let ty = crate::iterchain::struct_seq_type(&seq.to_string())?;
    Some((
        p.ident.to_string(),
        Receiver {
            ty,
            by_ref: true,
            mutable,
            sure: true,
        },
    ))
}

impl Desugar {
    /// The receivers named `names` taken out while a closure or a loop binding those names
    /// is visited (see `visit_expr_closure_mut`), to be put back by
    /// [`restore_receivers`](Self::restore_receivers).
    fn hide_receivers(&mut self, names: Vec<String>) -> Vec<(String, Option<Receiver>, bool)> {
        names
            .into_iter()
            .map(|n| {
                let r = self.receivers.remove(&n);
                let e = self.element_receivers.remove(&n);
                (n, r, e)
            })
            .collect()
    }

    fn restore_receivers(&mut self, hidden: Vec<(String, Option<Receiver>, bool)>) {
        for (n, r, e) in hidden {
            if let Some(r) = r {
                self.receivers.insert(n.clone(), r);
            }
            if e {
                self.element_receivers.insert(n);
            }
        }
    }

    fn visit_expr_receivers_known(&mut self, e: &mut Expr) {
        // `if v >= 0.0 { v } else { 0.0 }` as `v.max(0.0)` (see `select_as_min_max`).
        if let Expr::If(i) = &*e {
            if crate::activity::mentions_active(&i.cond, &self.active) {
                if let Some(r) = select_as_min_max(i, self.float_ty.as_ref()) {
                    *e = r;
                }
            }
        }
        // Slice patterns over a differentiable slice (the lowering takes the others as
        // they are).
        let scrutinee = match &*e {
            Expr::If(i) => match &*i.cond {
                Expr::Let(l) => Some(&*l.expr),
                _ => None,
            },
            Expr::Match(m) => Some(&*m.expr),
            _ => None,
        };
        if scrutinee.is_some_and(|s| crate::activity::expr_is_active(s, &self.active)) {
            if let Some(r) = slice_patterns(e) {
                *e = r;
            }
        }
        // The elements of a differentiable sequence carry derivatives in the loop's body
        // (`for r in m.iter() { let t: Vec<f64> = r.iter().map(..).collect(); }`).
        if let Expr::ForLoop(f) = e {
            if mentions_active(&f.expr, &self.active) {
                let mut names = Vec::new();
                crate::activity::for_pattern_active(&f.pat, &f.expr, &self.active, &mut names);
                self.active.extend(names);
            } else {
                // `for t in (0..n).map(|k| k as f64 * dt)`: the reverse sweep replays the
                // iterator, which a closure borrowing a local (`dt`) cannot outlive
                // (E0597); the closure takes its captures by value instead.
                struct MoveClosures;
                impl VisitMut for MoveClosures {
                    fn visit_expr_closure_mut(&mut self, c: &mut syn::ExprClosure) {
                        if c.capture.is_none() {
                            c.capture = Some(Default::default());
                        }
                        syn::visit_mut::visit_expr_closure_mut(self, c);
                    }
                }
                MoveClosures.visit_expr_mut(&mut f.expr);
            }
        }
        // `*v.last_mut().unwrap() *= 3.0`, `(&mut v)[i] = e`: the element as a place.
        match e {
            Expr::Assign(a) => {
                if let Some(p) = accessor_place(&a.left) {
                    *a.left = p;
                }
            }
            Expr::Binary(b) if crate::activity::is_arithmetic_assign(&b.op) => {
                if let Some(p) = accessor_place(&b.left) {
                    *b.left = p;
                }
            }
            _ => {}
        }
        // `if let Some(e) = v.get_mut(i) { *e *= c; }` (also `get`): a bounds test and
        // the element borrowed as a place, `let e = &mut v[i];`.
        if let Expr::If(f) = e {
            if let Expr::Let(l) = &*f.cond {
                if let (Pat::TupleStruct(ts), Expr::MethodCall(m)) = (&*l.pat, unparen(&l.expr)) {
                    let getter = matches!(m.method.to_string().as_str(), "get" | "get_mut");
                    let end = matches!(
                        m.method.to_string().as_str(),
                        "first" | "first_mut" | "last" | "last_mut"
                    ) && m.args.is_empty();
                    // `if let Some(e) = v.last_mut()`: the end's position, tested as `get`.
                    if end
                        && ts.path.is_ident("Some")
                        && ts.elems.len() == 1
                        && self.active_place(&m.receiver)
                    {
                        let span = m.method.span();
                        let v = &m.receiver;
                        let (at, get) = if m.method.to_string().starts_with("first") {
                            (quote_spanned!(span=> 0), "get")
                        } else {
                            (quote_spanned!(span=> #v.len().wrapping_sub(1)), "get")
                        };
                        let get = format_ident!(
                            "{}{}",
                            get,
                            if m.method.to_string().ends_with("_mut") {
                                "_mut"
                            } else {
                                ""
                            },
                            span = span
                        );
                        let mut g = f.clone();
                        let Expr::Let(gl) = &mut *g.cond else {
                            unreachable!()
                        };
                        *gl.expr = syn::parse_quote_spanned!(span=> #v.#get(#at));
                        *e = Expr::If(g);
                        self.visit_expr_mut(e);
                        return;
                    }
                    if ts.path.is_ident("Some")
                        && ts.elems.len() == 1
                        && matches!(&ts.elems[0], Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none())
                        && getter
                        && m.args.len() == 1
                        && !matches!(
                            unparen(&m.args[0]),
                            Expr::Range(_) | Expr::Tuple(_) | Expr::Array(_)
                        )
                        && self.active_place(&m.receiver)
                    {
                        let span = m.method.span();
                        let (v, i, p) = (&m.receiver, &m.args[0], &ts.elems[0]);
                        let k = format_ident!("__mochi_gi{}", self.next, span = span);
                        self.next += 1;
                        let borrow = if m.method == "get_mut" {
                            quote_spanned!(span=> &mut)
                        } else {
                            quote_spanned!(span=> &)
                        };
                        let then = &f.then_branch;
                        let els = f
                            .else_branch
                            .as_ref()
                            .map(|(_, b)| quote_spanned!(span=> else #b));
                        *e = syn::parse_quote_spanned!(span=> {
                            let #k = #i;
                            if #k < #v.len() {
                                let #p = #borrow #v[#k];
                                #then
                            } #els
                        });
                        self.visit_expr_mut(e);
                        return;
                    }
                }
            }
        }
        // The index of a maximum or minimum, `x.iter().enumerate().max_by(cmp).map(|(i, _)|
        // i).unwrap()` (also `min_by`, `max_by_key`, `min_by_key`, `.unwrap_or(d)`): an
        // integer, without a derivative.
        if let Some(r) = arg_best_index(e, &self.active) {
            *e = r;
            return;
        }
        if let Some((search, pair)) = best_of_zip(e, &self.active, &mut self.next) {
            *e = syn::parse_quote!({ #search #pair });
            return;
        }
        // `Vec::from(x)` of a slice: `x.to_vec()`; `Vec::from([a, b])`: `vec![a, b]`;
        // `Array1::from_elem(n, v)`: `Array1::from_vec(vec![v; n])`.
        if let Expr::Call(c) = e {
            if let Expr::Path(p) = &*c.func {
                let segs = crate::rewrite::path_segments(&p.path);
                let span = p.span();
                let tail: Vec<&str> = segs.iter().rev().take(2).map(String::as_str).collect();
                if mentions_active(&c.args, &self.active) {
                    match (tail.as_slice(), c.args.len()) {
                        (["from", "Vec"], 1) => match unparen(&c.args[0]) {
                            Expr::Array(a) => {
                                let elems = &a.elems;
                                *e = syn::parse_quote_spanned!(span=> vec![#elems]);
                            }
                            Expr::Reference(r) if r.mutability.is_none() => {
                                let x = &r.expr;
                                *e = syn::parse_quote_spanned!(span=> #x.to_vec());
                            }
                            x @ (Expr::Path(_) | Expr::Field(_) | Expr::Index(_)) => {
                                *e = syn::parse_quote_spanned!(span=> #x.to_vec());
                            }
                            _ => {}
                        },
                        (["from_elem", "Array1"], 2) => {
                            let (n, v) = (&c.args[0], &c.args[1]);
                            let mut path = p.path.clone();
                            if let Some(last) = path.segments.last_mut() {
                                last.ident = syn::Ident::new("from_vec", last.ident.span());
                            }
                            *e = syn::parse_quote_spanned!(span=> #path(vec![#v; #n]));
                        }
                        _ => {}
                    }
                }
            }
        }
        // `std::iter::zip(a, b)` of a slice or a borrowed sequence: `a.iter().zip(b)`.
        if let Expr::Call(c) = e {
            if let Expr::Path(p) = &*c.func {
                let segs = crate::rewrite::path_segments(&p.path);
                let zip = segs.len() >= 2
                    && segs[segs.len() - 1] == "zip"
                    && segs[segs.len() - 2] == "iter"
                    && c.args.len() == 2;
                if zip && mentions_active(&c.args, &self.active) {
                    let base = match unparen(&c.args[0]) {
                        Expr::Reference(r) if r.mutability.is_none() => Some((*r.expr).clone()),
                        p @ (Expr::Path(_) | Expr::Field(_)) => Some(p.clone()),
                        _ => None,
                    };
                    if let Some(a) = base {
                        let b = &c.args[1];
                        *e = syn::parse_quote_spanned!(p.span()=> #a.iter().zip(#b));
                    }
                }
            }
        }
        // `x.iter().nth(k)`, `x.iter().next()`, `x.iter().last()` of a sequence: `x.get(k)`,
        // `x.first()`, `x.last()`, which the element options read.
        if let Expr::MethodCall(m) = e {
            if let Expr::MethodCall(it) = unparen(&m.receiver) {
                if it.method == "iter"
                    && it.args.is_empty()
                    && matches!(unparen(&it.receiver), Expr::Path(_) | Expr::Field(_))
                    && mentions_active(&it.receiver, &self.active)
                {
                    let x = &it.receiver;
                    let span = m.method.span();
                    match (m.method.to_string().as_str(), m.args.first()) {
                        ("nth", Some(k)) if m.args.len() == 1 => {
                            *e = syn::parse_quote_spanned!(span=> #x.get(#k));
                        }
                        ("next", None) => *e = syn::parse_quote_spanned!(span=> #x.first()),
                        ("last", None) => *e = syn::parse_quote_spanned!(span=> #x.last()),
                        _ => {}
                    }
                }
            }
        }
        if let Some(r) = option_combinator(e, &self.active, &|o| self.user_method_call(o)) {
            *e = r;
        }
        if let Some(r) = array_from_elements(e, &self.active, self.float_ty.as_ref()) {
            *e = r;
        }
        if let Some(r) = array_method_forms(e, &self.active) {
            *e = r;
        }
        // `a.sum_axis(Axis(0)).into_scalar()` of a 0-dimensional array: its one element,
        // its sum (which has a rule for arrays of every dimension).
        if let Expr::MethodCall(m) = e {
            if m.method == "into_scalar"
                && m.args.is_empty()
                && mentions_active(&m.receiver, &self.active)
            {
                let span = m.method.span();
                let recv = &m.receiver;
                *e = syn::parse_quote_spanned!(span=> (#recv).sum());
                self.visit_expr_mut(e);
                return;
            }
        }
        // `v[a..b].swap(i, j)` and `v[a..b].reverse()` of a differentiable buffer: the
        // swaps on `v` itself, at positions shifted by `a` (bounds checked as slicing
        // does); `v[a..b].rotate_left(k)` (`rotate_right`) and `v[a..b].sort_by(cmp)`
        // (`sort_unstable_by`): the range gathered from its rotated or sorted positions.
        if let Expr::MethodCall(m) = e {
            let name = m.method.to_string();
            if matches!(
                (name.as_str(), m.args.len()),
                ("swap", 2)
                    | ("reverse", 0)
                    | (
                        "rotate_left" | "rotate_right" | "sort_by" | "sort_unstable_by",
                        1
                    )
            ) {
                if let Expr::Index(ix) = unparen(&m.receiver) {
                    if let (Expr::Range(r), true) = (&*ix.index, self.active_place(&ix.expr)) {
                        let span = m.method.span();
                        let v = (*ix.expr).clone();
                        let (start, end) = range_bounds(r, &v, span);
                        let (lo, hi, k) = (
                            format_ident!("__mochi_slo{}", self.next, span = span),
                            format_ident!("__mochi_shi{}", self.next, span = span),
                            format_ident!("__mochi_sk{}", self.next, span = span),
                        );
                        self.next += 1;
                        let check = quote_spanned!(span=>
                            let #lo: usize = #start;
                            let #hi: usize = #end;
                            let _ = &#v[#lo..#hi];
                        );
                        *e = if name.starts_with("sort") {
                            let (p, old, j) = (
                                format_ident!("__mochi_sperm", span = span),
                                format_ident!("__mochi_sold", span = span),
                                format_ident!("__mochi_sj", span = span),
                            );
                            let cmp = &m.args[0];
                            syn::parse_quote_spanned!(span=> {
                                #check
                                let #old = #v[#lo..#hi].to_vec();
                                let #p = ::mochi::no_grad(::mochi::__private::sort_permutation(&#old, #cmp));
                                for #j in 0..(#hi - #lo) {
                                    #v[#lo + #j] = #old[#p[#j]];
                                }
                            })
                        } else if name.starts_with("rotate") {
                            let (r, old, j) = (
                                format_ident!("__mochi_srk", span = span),
                                format_ident!("__mochi_sold", span = span),
                                format_ident!("__mochi_sj", span = span),
                            );
                            let amount = &m.args[0];
                            let (msg, from) = rotated_source(
                                name == "rotate_left",
                                &j,
                                &r,
                                quote_spanned!(span=> (#hi - #lo)),
                                span,
                            );
                            syn::parse_quote_spanned!(span=> {
                                #check
                                let #r: usize = #amount;
                                if #r > #hi - #lo { ::core::panic!(#msg); }
                                let #old = #v[#lo..#hi].to_vec();
                                for #j in 0..(#hi - #lo) {
                                    #v[#lo + #j] = #old[#from];
                                }
                            })
                        } else if name == "swap" {
                            let (i, j) = (&m.args[0], &m.args[1]);
                            syn::parse_quote_spanned!(span=> {
                                #check
                                let (__mochi_si, __mochi_sj): (usize, usize) = (#i, #j);
                                assert!(__mochi_si < #hi - #lo && __mochi_sj < #hi - #lo, "index out of bounds");
                                #v.swap(#lo + __mochi_si, #lo + __mochi_sj);
                            })
                        } else {
                            syn::parse_quote_spanned!(span=> {
                                #check
                                for #k in 0..(#hi - #lo) / 2 {
                                    #v.swap(#lo + #k, #hi - 1 - #k);
                                }
                            })
                        };
                        self.visit_expr_mut(e);
                        return;
                    }
                }
            }
        }
        // `a.as_slice().unwrap()` (also `expect`) of a differentiable array: `&a.to_vec()`,
        // its elements in order as a `Vec` the derivation has rules for (indexed,
        // iterated, passed on as a slice).
        if let Expr::MethodCall(u) = e {
            let unwrapped = u.method == "unwrap" && u.args.is_empty()
                || u.method == "expect" && u.args.len() == 1;
            if unwrapped {
                if let Expr::MethodCall(a) = unparen(&u.receiver) {
                    if a.method == "as_slice"
                        && a.args.is_empty()
                        && mentions_active(&a.receiver, &self.active)
                    {
                        let (x, span) = (&a.receiver, a.method.span());
                        *e = syn::parse_quote_spanned!(span=> &(#x).to_vec());
                        return;
                    }
                }
            }
        }
        // `v.clear()` of a differentiable buffer: a new empty `Vec` assigned, which the
        // lowering writes (a change of length is not); `v.append(&mut w)`: `w`'s elements
        // added at `v`'s end, and `w` emptied so.
        if let Expr::MethodCall(m) = e {
            let span = m.method.span();
            // (A local bound `mut` or a field: a place a new buffer can be assigned to,
            // which a `&mut Vec` parameter is not.)
            let replaceable = |e: &Expr, locals: &HashSet<String>| match unparen(e) {
                Expr::Path(p) => p
                    .path
                    .get_ident()
                    .is_some_and(|i| locals.contains(&i.to_string())),
                Expr::Field(_) => true,
                _ => false,
            };
            if m.method == "clear"
                && m.args.is_empty()
                && self.active_place(&m.receiver)
                && replaceable(&m.receiver, &self.mut_locals)
            {
                let v = &m.receiver;
                *e = syn::parse_quote_spanned!(span=> #v = ::std::vec::Vec::new());
                return;
            }
            // (A buffer lent to the function, `out: &mut Vec<f64>`, refilled by pushes:
            // the place it points to gets the new buffer.)
            if m.method == "clear"
                && m.args.is_empty()
                && self.active_place(&m.receiver)
                && matches!(unparen(&m.receiver), Expr::Path(p)
                    if p.path.get_ident().is_some_and(|i| self.lent_buffers.contains(&i.to_string())))
            {
                let v = &m.receiver;
                *e = syn::parse_quote_spanned!(span=> *#v = ::std::vec::Vec::new());
                return;
            }
            // `a.swap_axes(i, j);` of a differentiable array in place: `a` assigned the
            // array with the two axes swapped (a rule, `swapped_axes`).
            if m.method == "swap_axes"
                && m.args.len() == 2
                && matches!(unparen(&m.receiver), Expr::Path(_) | Expr::Field(_))
                && mentions_active(&m.receiver, &self.active)
            {
                let (a, i, j) = (&m.receiver, &m.args[0], &m.args[1]);
                *e = syn::parse_quote_spanned!(span=> #a = #a.swapped_axes(#i, #j));
                return;
            }
            // `a.as_standard_layout()`: the same elements in an owned array (a `CowArray`
            // in the function as written), which `to_owned` makes.
            if m.method == "as_standard_layout"
                && m.args.is_empty()
                && mentions_active(&m.receiver, &self.active)
            {
                let a = &m.receiver;
                *e = syn::parse_quote_spanned!(span=> (#a).to_owned());
                self.visit_expr_mut(e);
                return;
            }
            // `v.extend_from_within(a..b)` of a differentiable buffer: the range copied,
            // then pushed at the end.
            if m.method == "extend_from_within"
                && m.args.len() == 1
                && self.active_place(&m.receiver)
            {
                let (v, r) = (&m.receiver, &m.args[0]);
                let t = format_ident!("__mochi_within", span = span);
                *e = syn::parse_quote_spanned!(span=> {
                    let #t = #v[#r].to_vec();
                    #v.extend_from_slice(&#t);
                });
                self.visit_expr_mut(e);
                return;
            }
            if m.method == "append" && m.args.len() == 1 {
                if let Expr::Reference(r) = unparen(&m.args[0]) {
                    if r.mutability.is_some()
                        && (self.active_place(&m.receiver) || self.active_place(&r.expr))
                        && replaceable(&r.expr, &self.mut_locals)
                    {
                        let (v, w) = (&m.receiver, &r.expr);
                        *e = syn::parse_quote_spanned!(span=> {
                            #v.extend_from_slice(&#w);
                            #w = ::std::vec::Vec::new();
                        });
                        self.visit_expr_mut(e);
                        return;
                    }
                }
            }
        }
        // `v[a..b].copy_from_slice(src)` (also `clone_from_slice`): each element of the
        // range assigned from the source's, their lengths asserted equal as the method
        // does.
        if let Expr::MethodCall(m) = e {
            if (m.method == "copy_from_slice" || m.method == "clone_from_slice")
                && m.args.len() == 1
            {
                if let Expr::Index(ix) = unparen(&m.receiver) {
                    if let (Expr::Range(r), true) = (&*ix.index, self.active_place(&ix.expr)) {
                        let span = m.method.span();
                        let v = &ix.expr;
                        let (start, end) = range_bounds(r, v, span);
                        let (lo, hi, k) = (
                            format_ident!("__mochi_clo{}", self.next, span = span),
                            format_ident!("__mochi_chi{}", self.next, span = span),
                            format_ident!("__mochi_ck{}", self.next, span = span),
                        );
                        self.next += 1;
                        // The source's element `k`: of a variable, of a range of one
                        // (`&x[c..d]`), or of a value bound first.
                        let src = match &m.args[0] {
                            Expr::Reference(r) if r.mutability.is_none() => (*r.expr).clone(),
                            other => other.clone(),
                        };
                        let mut pre = TokenStream::new();
                        let mut src_len = quote_spanned!(span=> (#src).len());
                        let elem: Expr = match unparen(&src) {
                            Expr::Path(_) | Expr::Field(_) => {
                                syn::parse_quote_spanned!(span=> #src[#k])
                            }
                            Expr::Index(sx)
                                if matches!(&*sx.index, Expr::Range(_))
                                    && matches!(
                                        unparen(&sx.expr),
                                        Expr::Path(_) | Expr::Field(_)
                                    ) =>
                            {
                                let Expr::Range(sr) = &*sx.index else {
                                    unreachable!()
                                };
                                let base = &sx.expr;
                                let (from, _) = range_bounds(sr, base, span);
                                syn::parse_quote_spanned!(span=> #base[#from + #k])
                            }
                            _ => {
                                let t = format_ident!("__mochi_csrc{}", self.next, span = span);
                                pre = quote_spanned!(span=> let #t = #src;);
                                src_len = quote_spanned!(span=> #t.len());
                                syn::parse_quote_spanned!(span=> #t[#k])
                            }
                        };
                        let msg = format!(
                            "`{}`: the destination and the source have different lengths",
                            m.method
                        );
                        *e = syn::parse_quote_spanned!(span=> {
                            #pre
                            let #lo: usize = #start;
                            let #hi: usize = #end;
                            assert_eq!(#hi - #lo, #src_len, #msg);
                            for #k in 0..#hi - #lo {
                                #v[#lo + #k] = #elem;
                            }
                        });
                        self.visit_expr_mut(e);
                        return;
                    }
                }
            }
        }
        // `v[a..b].fill(c)`: each element of the range assigned.
        if let Expr::MethodCall(m) = e {
            if m.method == "fill" && m.args.len() == 1 {
                if let Expr::Index(ix) = unparen(&m.receiver) {
                    if let (Expr::Range(r), true) = (&*ix.index, self.active_place(&ix.expr)) {
                        let span = m.method.span();
                        let v = &ix.expr;
                        let (start, end) = range_bounds(r, v, span);
                        let c = &m.args[0];
                        let (cv, k, hi) = (
                            format_ident!("__mochi_fill{}", self.next, span = span),
                            format_ident!("__mochi_fk{}", self.next, span = span),
                            format_ident!("__mochi_fend{}", self.next, span = span),
                        );
                        self.next += 1;
                        *e = syn::parse_quote_spanned!(span=> {
                            let #cv = #c;
                            let #hi: usize = #end;
                            for #k in #start..#hi {
                                #v[#k] = #cv;
                            }
                        });
                        self.visit_expr_mut(e);
                        return;
                    }
                }
            }
        }
        // `x[a..b].to_vec()`: through a bound sub-slice, whose cotangent goes back into
        // the range of `x`'s.
        if let Expr::MethodCall(m) = e {
            if (m.method == "to_vec" || m.method == "to_owned")
                && m.args.is_empty()
                && matches!(unparen(&m.receiver), Expr::Index(i) if matches!(&*i.index, Expr::Range(_)))
                && mentions_active(&m.receiver, &self.active)
            {
                let span = m.method.span();
                let part = format_ident!("__mochi_part", span = span);
                let (recv, method) = (&m.receiver, &m.method);
                *e = syn::parse_quote_spanned!(span=> { let #part = &#recv; #part.#method() });
            }
        }
        // `v = chain.collect();`: a `Vec`, which the chain rewrite builds.
        if let Expr::Assign(a) = e {
            if let Expr::MethodCall(m) = &mut *a.right {
                if m.method == "collect"
                    && m.args.is_empty()
                    && m.turbofish.is_none()
                    && mentions_active(&m.receiver, &self.active)
                {
                    let elem = match &self.float_ty {
                        Some(t) => quote_spanned!(m.method.span()=> #t),
                        None => quote_spanned!(m.method.span()=> _),
                    };
                    m.turbofish = Some(syn::parse_quote!(::<Vec<#elem>>));
                }
            }
        }
        if let Some(r) = zip_loop(e, &self.active, &mut self.next) {
            *e = r;
        }
        // `.map(f64::sqrt)`, `.mapv(helper)`: a function by path as the closure
        // `|a| f64::sqrt(a)`, which the chains and adapters take.
        if let Expr::MethodCall(m) = e {
            if matches!(m.method.to_string().as_str(), "map" | "mapv")
                && m.args.len() == 1
                && mentions_active(&m.receiver, &self.active)
            {
                if let Expr::Path(p) = &m.args[0] {
                    let function = p.qself.is_none()
                        && p.path.segments.last().is_some_and(|s| {
                            s.ident
                                .to_string()
                                .starts_with(|c: char| c.is_lowercase() || c == '_')
                        });
                    if function {
                        let a = format_ident!("__mochi_fa", span = p.span());
                        m.args[0] = syn::parse_quote_spanned!(p.span()=> |#a| #p(#a));
                    }
                }
            }
        }
        // `(a..=b).map(f)`: an inclusive range as the source of a chain is the half-open
        // `a..b + 1`, the form the chains take.
        if let Expr::MethodCall(m) = e {
            let query = matches!(
                m.method.to_string().as_str(),
                "contains" | "is_empty" | "start" | "end" | "into_inner"
            );
            if let (Expr::Range(r), false) = (unparen(&m.receiver), query) {
                if let (syn::RangeLimits::Closed(dots), Some(end)) = (&r.limits, &r.end) {
                    let start = r.start.clone();
                    let half: Expr = syn::parse_quote_spanned!(dots.span()=> (#start..(#end) + 1));
                    *m.receiver = half;
                }
            }
        }
        // `(a, b) = (b, a + b)`: a destructuring assignment to variables, fields or
        // elements → `{ let (t0, t1) = (b, a + b); a = t0; b = t1; }` (every right side
        // is read before any place is written, as in Rust); `_` drops its part.
        if let Expr::Assign(a) = e {
            if let Expr::Tuple(places) = &*a.left {
                let assignable = |p: &Expr| matches!(p, Expr::Infer(_)) || plain_place(p);
                if !places.elems.is_empty() && places.elems.iter().all(assignable) {
                    let span = a.span();
                    let names: Vec<syn::Ident> = (0..places.elems.len())
                        .map(|k| format_ident!("__mochi_da{}_{}", self.next, k, span = span))
                        .collect();
                    self.next += 1;
                    let right = &a.right;
                    let writes = places
                        .elems
                        .iter()
                        .zip(&names)
                        .filter(|(p, _)| !matches!(p, Expr::Infer(_)))
                        .map(|(p, n)| quote_spanned!(span=> #p = #n;));
                    // A tuple written out is read part by part (`(a, k) = (a * g, k + 1)`:
                    // `k + 1` an integer however `a` is computed).
                    let reads = match unparen(right) {
                        Expr::Tuple(t) if t.elems.len() == names.len() => {
                            let parts = t.elems.iter();
                            quote_spanned!(span=> #(let #names = #parts;)*)
                        }
                        _ => quote_spanned!(span=> let (#(#names,)*) = #right;),
                    };
                    *e = syn::parse_quote_spanned!(span=> {
                        #reads
                        #(#writes)*
                    });
                }
            }
        }
        // `*x.get(k).unwrap_or(&d)` (also `first`, `last`) of a differentiable
        // sequence: `x.get(k).copied().unwrap_or(d)`, the element's value or `d`.
        if let Expr::Unary(u) = e {
            if let (syn::UnOp::Deref(_), Expr::MethodCall(m)) = (&u.op, unparen(&u.expr)) {
                let element = matches!(&*m.receiver, Expr::MethodCall(g)
                    if matches!(g.method.to_string().as_str(), "get" | "first" | "last")
                        && mentions_active(&g.receiver, &self.active));
                if let (true, "unwrap_or", [Expr::Reference(d)]) = (
                    element,
                    m.method.to_string().as_str(),
                    m.args.iter().collect::<Vec<_>>().as_slice(),
                ) {
                    if d.mutability.is_none() {
                        let (o, d) = (&m.receiver, &d.expr);
                        *e = syn::parse_quote_spanned!(m.method.span()=> #o.copied().unwrap_or(#d));
                        self.visit_expr_mut(e);
                        return;
                    }
                }
            }
        }
        // `*chain.max_by(cmp).unwrap()`: the rewrite below gives the element's value, so
        // the `*` goes with the reference it dereferenced.
        if let Expr::Unary(u) = e {
            if matches!(u.op, syn::UnOp::Deref(_)) && is_unwrap(&u.expr) {
                self.visit_expr_mut(&mut u.expr);
                // (Also `*v.last().unwrap()`, now `v[v.len() - 1]`, a float: before
                // 2026-12-07 the `*` stayed, "type `f64` cannot be dereferenced" where the
                // lowering writes the expression as it is, in a `while` condition.)
                if !is_unwrap(&u.expr) {
                    *e = (*u.expr).clone();
                }
                return;
            }
        }
        // `x.last().copied().filter(p)`, `.or(o)`, `.and_then(f)` of an element's `Option`
        // (before the receiver, which the `match` it becomes reads as written).
        if let Some(r) = option_filter_or(e, &self.active) {
            *e = r;
            self.visit_expr_mut(e);
            return;
        }
        // `x.windows(3).into_iter()` (also of `iter`, `chunks`, `outer_iter`, …): the
        // iterator itself, which the loop and chain rewrites take.
        if let Expr::MethodCall(m) = e {
            if m.method == "into_iter" && m.args.is_empty() {
                if let Expr::MethodCall(inner) = unparen(&m.receiver) {
                    if matches!(
                        inner.method.to_string().as_str(),
                        "iter"
                            | "windows"
                            | "chunks"
                            | "chunks_exact"
                            | "rchunks"
                            | "exact_chunks"
                            | "outer_iter"
                            | "axis_iter"
                            | "axis_chunks_iter"
                            | "rows"
                            | "columns"
                            | "lanes"
                            | "enumerate"
                            | "zip"
                    ) && (mentions_active(&inner.receiver, &self.active)
                        || !matches!(
                            inner.method.to_string().as_str(),
                            "windows" | "exact_chunks" | "rows" | "columns" | "lanes"
                        ))
                    {
                        // (An ndarray producer without a derivative, `x.rows()` of a
                        // constant matrix, keeps its `into_iter()`: no rewrite takes it,
                        // and without it there is no iterator, "no method `zip`".)
                        *e = Expr::MethodCall(inner.clone());
                        self.visit_expr_mut(e);
                        return;
                    }
                }
            }
        }
        // `x.chunks_exact(n).remainder()`: the sub-slice it is, `&x[x.len() - x.len() %
        // n..]` (`&x[..x.len() % n]` for `rchunks_exact`).
        if let Expr::MethodCall(m) = e {
            if m.method == "remainder" && m.args.is_empty() {
                if let Expr::MethodCall(c) = unparen(&m.receiver) {
                    let x = unparen(&c.receiver);
                    if c.args.len() == 1 && matches!(x, Expr::Path(_) | Expr::Field(_)) {
                        let n = &c.args[0];
                        let span = m.method.span();
                        let r: Option<Expr> = match c.method.to_string().as_str() {
                            "chunks_exact" => Some(syn::parse_quote_spanned!(span=>
                                &#x[#x.len() - #x.len() % (#n)..])),
                            "rchunks_exact" => Some(syn::parse_quote_spanned!(span=>
                                &#x[..#x.len() % (#n)])),
                            _ => None,
                        };
                        if let Some(r) = r {
                            *e = r;
                            self.visit_expr_mut(e);
                            return;
                        }
                    }
                }
            }
        }
        // `chain.filter(p).last().copied().unwrap_or(d)` (also `next`, `nth`, `find`, and
        // any other use of the `Option`) of a chain whose length does not decide: the
        // walk that finds it, as an `Option`, as in `if let`.
        if let Expr::MethodCall(m) = e {
            let copied = matches!(unparen(&m.receiver), Expr::MethodCall(c)
                if c.args.is_empty() && (c.method == "copied" || c.method == "cloned"));
            if copied {
                if let Some(o) = self.chain_end_as_option(&m.receiver) {
                    *m.receiver = o;
                    self.visit_expr_mut(e);
                    return;
                }
            }
        }
        // `*x.iter().find(p).unwrap_or(&d)`, `x.iter().find(p).unwrap_or(&d)`,
        // `*x.iter().find(p).unwrap()`: the element by value (a reference to it would
        // outlive the read the derivation makes of it).
        if let Some(r) = find_by_value(e, &self.active) {
            *e = r;
            self.visit_expr_mut(e);
            return;
        }
        // `x.iter().find(p)` (before its receiver, as `.find(p).copied()` is one search).
        if let Some(r) = find_by_position(e, &self.active) {
            *e = r;
            self.visit_expr_mut(e);
            return;
        }
        syn::visit_mut::visit_expr_mut(self, e);
        // `m.predict(x)` on a value of the user's type: its method's rule.
        let receiver = match &*e {
            Expr::MethodCall(m) => self.receiver_call(m),
            _ => None,
        };
        let span = e.span();
        // `ps[i].step(dt)` on an element of a `mut` local of the user's structs: the
        // method may take `&mut self`; a copy of the element is its receiver, written
        // back after (as for `for p in ps.iter_mut() { p.step(dt) }`).
        if let Expr::MethodCall(m) = &*e {
            if let Some(r) = self.element_receiver_call(m) {
                *e = r;
                return;
            }
            // `m.gauge.raise(by)`: a `&mut self` method of the crate's on a field or
            // element of a value the macro cannot see the type of.
            if receiver.is_none() {
                if let Some(r) = self.place_receiver_call(m) {
                    *e = r;
                    return;
                }
            }
            // `a.clone_from(&b)`: `a = b.clone()` (the same value; the allocation reuse is
            // not the derivation's to keep).
            if m.method == "clone_from" && m.args.len() == 1 && plain_place(&m.receiver) {
                if let Expr::Reference(r) = &m.args[0] {
                    if r.mutability.is_none() {
                        let (a, b) = (&m.receiver, &r.expr);
                        *e = syn::parse_quote_spanned!(span=> #a = (#b).clone());
                        return;
                    }
                }
            }
        }
        match e {
            // `self.m(args)` in a method: `Self::m(self, args)`, whose derived rule is
            // `Self::m_rrule` (a method of the same type marked `#[differentiable]`).
            // (Not a method whose result carries no derivative, `self.num_params()`,
            // which is called as written.)
            Expr::MethodCall(m)
                if matches!(&*m.receiver, Expr::Path(p) if p.path.is_ident("self"))
                    && m.turbofish.is_none()
                    && !matches!(
                        m.method.to_string().as_str(),
                        "clone" | "to_owned" | "into" | "as_ref" | "borrow"
                    )
                    && !crate::twin::plain_user_method(&m.method.to_string()) =>
            {
                let name = &m.method;
                let args = &m.args;
                let sep = (!args.is_empty()).then(|| quote_spanned!(span=> ,));
                // (`self` taken by value, `fn scaled(self, s: f64)`: lent to a `&self`
                // method, cloned for one taking `self`, as the callee asks, see
                // `Receive`.)
                let by_value = self.receivers.get("self").is_some_and(|r| !r.by_ref);
                *e = if by_value {
                    syn::parse_quote_spanned!(span=> Self::#name(::mochi::__private::receiver(&self) #sep #args))
                } else {
                    syn::parse_quote_spanned!(span=> Self::#name(self #sep #args))
                };
            }
            Expr::MethodCall(_) if receiver.is_some() => {
                if let Some(r) = receiver {
                    *e = r;
                }
            }
            Expr::MethodCall(m) if m.method == "unwrap" && m.args.is_empty() => {
                if let Some(r) = self.unwrap_rewrite(m) {
                    *e = r;
                }
            }
            // `o.unwrap_or(d)`, `o.unwrap_or_else(|| d)` of a differentiable `Option` or
            // `Result`: the branch taken is tested, so the cotangent goes to the value
            // or to `d`.
            Expr::MethodCall(m)
                if matches!(
                    m.method.to_string().as_str(),
                    "unwrap_or" | "unwrap_or_else"
                ) && m.args.len() == 1
                    && (crate::activity::expr_is_active(&m.receiver, &self.active)
                        // (The `match` a combinator became, `o.filter(p)`.)
                        || (matches!(unparen(&m.receiver), Expr::Match(_) | Expr::If(_) | Expr::Block(_))
                            && mentions_active(&m.receiver, &self.active))
                        || crate::activity::expr_is_active(&m.args[0], &self.active)) =>
            {
                let default: Expr = if m.method == "unwrap_or" {
                    m.args[0].clone()
                } else {
                    match &m.args[0] {
                        Expr::Closure(c) if c.inputs.is_empty() => (*c.body).clone(),
                        // A `Result`'s `unwrap_or_else(|_| d)` (also `|e| d` not reading `e`).
                        Expr::Closure(c)
                            if c.inputs.len() == 1
                                && match &c.inputs[0] {
                                    Pat::Wild(_) => true,
                                    Pat::Ident(i) => !tokens_mention(
                                        &quote::ToTokens::to_token_stream(&c.body),
                                        &|x| x == &i.ident,
                                    ),
                                    _ => false,
                                } =>
                        {
                            (*c.body).clone()
                        }
                        _ => return,
                    }
                };
                // `x.first().copied().unwrap_or(d)` (also `last`, `get(i)`, `cloned`):
                // the element if it exists, else `d`.
                let element = match &*m.receiver {
                    Expr::MethodCall(c)
                        if c.args.is_empty() && (c.method == "copied" || c.method == "cloned") =>
                    {
                        element_option(&c.receiver, &self.active, span)
                    }
                    _ => None,
                };
                // (In parentheses: the block may be an operand, `h(v).unwrap_or(0.0) + 1.0`,
                // which a chain's closure body inlined as a statement would otherwise
                // end at the block.)
                if let Some((pre, test, elem)) = element {
                    *e = syn::parse_quote_spanned!(span=> ({
                        #pre
                        if #test { #elem } else { #default }
                    }));
                    syn::visit_mut::visit_expr_mut(self, e);
                    return;
                }
                let o = format_ident!("__mochi_or", span = span);
                let recv = &m.receiver;
                *e = syn::parse_quote_spanned!(span=> ({
                    let #o = #recv;
                    if ::mochi::no_grad(::mochi::__private::present(&#o)) {
                        #o.unwrap()
                    } else {
                        #default
                    }
                }));
            }
            // `v.sort_by(cmp)` (`sort_unstable_by`) of a differentiable buffer: the
            // permutation that sorts it (no derivative), then the elements gathered
            // through it; the reverse sweep scatters their cotangents back.
            Expr::MethodCall(m)
                if matches!(
                    m.method.to_string().as_str(),
                    "sort_by" | "sort_unstable_by"
                ) && m.args.len() == 1
                    && self.active_place(&m.receiver) =>
            {
                let (v, cmp) = (&m.receiver, &m.args[0]);
                let p = format_ident!("__mochi_perm", span = span);
                *e = gather_in_place(
                    v,
                    quote_spanned!(span=>
                        let #p = ::mochi::no_grad(::mochi::__private::sort_permutation(&#v, #cmp));
                    ),
                    |k| quote_spanned!(span=> #p[#k]),
                    span,
                );
            }
            // `v.select_nth_unstable_by(k, cmp)` as a statement: the permutation the same
            // selection makes of the positions (the same comparisons, so the same
            // arrangement as the function's), then the elements gathered through it.
            Expr::MethodCall(m)
                if m.method == "select_nth_unstable_by"
                    && m.args.len() == 2
                    && self.active_place(&m.receiver) =>
            {
                let (v, k, cmp) = (&m.receiver, &m.args[0], &m.args[1]);
                let p = format_ident!("__mochi_perm", span = span);
                *e = gather_in_place(
                    v,
                    quote_spanned!(span=>
                        let #p = ::mochi::no_grad(
                            ::mochi::__private::select_permutation(&#v, #k, #cmp)
                        );
                    ),
                    |k| quote_spanned!(span=> #p[#k]),
                    span,
                );
            }
            // `a.mapv_inplace(f)` of a differentiable array: `a = a.mapv(f)`.
            Expr::MethodCall(m)
                if m.method == "mapv_inplace"
                    && m.args.len() == 1
                    && self.active_place(&m.receiver) =>
            {
                let (a, f) = (&m.receiver, &m.args[0]);
                *e = syn::parse_quote_spanned!(span=> #a = #a.mapv(#f));
            }
            // `a.map_inplace(|v| *v = e)` of a differentiable array: `a = a.mapv(|v| e)`
            // (`*v` read as `v`).
            Expr::MethodCall(m)
                if m.method == "map_inplace"
                    && m.args.len() == 1
                    && self.active_place(&m.receiver) =>
            {
                if let Some(f) = assigning_closure(&m.args[0]) {
                    let a = &m.receiver;
                    *e = syn::parse_quote_spanned!(span=> #a = #a.mapv(#f));
                }
            }
            // `a.mapv_into(f)` (the array consumed): `a.mapv(f)`.
            Expr::MethodCall(m)
                if m.method == "mapv_into"
                    && m.args.len() == 1
                    && mentions_active(&m.receiver, &self.active) =>
            {
                let (a, f) = (&m.receiver, &m.args[0]);
                *e = syn::parse_quote_spanned!(span=> #a.mapv(#f));
            }
            // `v.reverse()` of a differentiable buffer: gathered backwards.
            Expr::MethodCall(m)
                if m.method == "reverse" && m.args.is_empty() && self.active_place(&m.receiver) =>
            {
                let v = &m.receiver;
                let n = format_ident!("__mochi_rn", span = span);
                *e = gather_in_place(
                    v,
                    quote_spanned!(span=> let #n = #v.len();),
                    |k| quote_spanned!(span=> #n - 1 - #k),
                    span,
                );
            }
            // `v.rotate_left(k)`, `v.rotate_right(k)`: gathered from the rotated positions
            // (with `rotate_left`'s check, `k <= len`).
            Expr::MethodCall(m)
                if (m.method == "rotate_left" || m.method == "rotate_right")
                    && m.args.len() == 1
                    && self.active_place(&m.receiver) =>
            {
                let (v, k) = (&m.receiver, &m.args[0]);
                let (n, r) = (
                    format_ident!("__mochi_rn", span = span),
                    format_ident!("__mochi_rk", span = span),
                );
                let left = m.method == "rotate_left";
                let msg = rotated_source(left, &n, &r, quote_spanned!(span=> #n), span).0;
                *e = gather_in_place(
                    v,
                    quote_spanned!(span=>
                        let #n = #v.len();
                        let #r: usize = #k;
                        if #r > #n { ::core::panic!(#msg); }
                    ),
                    |j| rotated_source(left, j, &r, quote_spanned!(span=> #n), span).1,
                    span,
                );
            }
            // `o.take()` and `o.replace(v)` of a differentiable `Option`: `mem::take(&mut
            // o)`, `mem::replace(&mut o, Some(v))`, which the derivation knows (of any
            // other receiver, a type error, not another meaning).
            Expr::MethodCall(m)
                if (m.method == "take" && m.args.is_empty()
                    || m.method == "replace" && m.args.len() == 1)
                    && matches!(unparen(&m.receiver), Expr::Path(_) | Expr::Field(_))
                    && self.active_place(&m.receiver) =>
            {
                let o = &m.receiver;
                *e = if m.method == "take" {
                    syn::parse_quote_spanned!(span=> ::core::mem::take(&mut #o))
                } else {
                    let v = &m.args[0];
                    syn::parse_quote_spanned!(span=>
                        ::core::mem::replace(&mut #o, Some(#v)))
                };
                self.visit_expr_mut(e);
            }
            // `v.copy_within(src, dest)`: gathered, `v[dest + j] = old[start + j]`.
            Expr::MethodCall(m)
                if m.method == "copy_within"
                    && m.args.len() == 2
                    && self.active_place(&m.receiver) =>
            {
                let (v, src, dest) = (&m.receiver, &m.args[0], &m.args[1]);
                let (s, c, d) = (
                    format_ident!("__mochi_cs", span = span),
                    format_ident!("__mochi_cc", span = span),
                    format_ident!("__mochi_cd", span = span),
                );
                *e = gather_in_place(
                    v,
                    quote_spanned!(span=>
                        let (#s, #c, #d) = ::mochi::no_grad(
                            ::mochi::__private::copy_source(#src, #dest, #v.len())
                        );
                    ),
                    |k| quote_spanned!(span=> if #k >= #d && #k < #d + #c { #s + (#k - #d) } else { #k }),
                    span,
                );
            }
            // `[x, y].concat()` of differentiable sequences: one chain, collected.
            Expr::MethodCall(m)
                if m.method == "concat"
                    && m.args.is_empty()
                    && matches!(&*m.receiver, Expr::Array(a) if !a.elems.is_empty())
                    && mentions_active(&m.receiver, &self.active) =>
            {
                let Expr::Array(a) = &*m.receiver else {
                    return;
                };
                // Parts other than variables are bound first: a chain's source is one.
                // (The bound parts carry derivatives: the chain over them is rewritten.)
                let mut lets = Vec::new();
                let mut names: Vec<Expr> = Vec::new();
                for (k, p) in a.elems.iter().enumerate() {
                    if let Expr::Path(_) = p {
                        names.push(p.clone());
                        continue;
                    }
                    let t = format_ident!("__mochi_part{}", k, span = span);
                    lets.push(quote_spanned!(span=> let #t = #p;));
                    self.active.insert(t.to_string());
                    names.push(syn::parse_quote_spanned!(span=> #t));
                }
                let first = &names[0];
                let rest = names[1..]
                    .iter()
                    .map(|p| quote_spanned!(span=> .chain(#p.iter())));
                *e = syn::parse_quote_spanned!(span=> {
                    #(#lets)*
                    #first.iter()#(#rest)*.copied().collect::<::std::vec::Vec<_>>()
                });
                self.visit_expr_mut(e);
            }
            // `rows.concat()` of differentiable rows (`&[Vec<f64>]`, `Vec<Vec<f64>>`):
            // the rows' elements pushed in order by an index loop.
            Expr::MethodCall(m)
                if m.method == "concat"
                    && m.args.is_empty()
                    && self.active_place(&m.receiver)
                    && self.float_ty.is_some() =>
            {
                let rows = &m.receiver;
                let ty = self.float_ty.clone();
                let (v, r, j) = (
                    format_ident!("__mochi_cat", span = span),
                    format_ident!("__mochi_catr", span = span),
                    format_ident!("__mochi_catj", span = span),
                );
                *e = syn::parse_quote_spanned!(span=> {
                    let mut #v: ::std::vec::Vec<#ty> = ::std::vec::Vec::new();
                    for #r in 0..#rows.len() {
                        for #j in 0..#rows[#r].len() {
                            #v.push(#rows[#r][#j]);
                        }
                    }
                    #v
                });
                self.visit_expr_mut(e);
            }
            Expr::MethodCall(m)
                if m.method == "swap"
                    && m.args.len() == 2
                    && self.active_place_or_row(&m.receiver) =>
            {
                let v = &m.receiver;
                let (i, j) = (&m.args[0], &m.args[1]);
                let (a, b, t) = (
                    format_ident!("__mochi_sa", span = span),
                    format_ident!("__mochi_sb", span = span),
                    format_ident!("__mochi_st", span = span),
                );
                *e = syn::parse_quote_spanned!(span=> {
                    let (#a, #b) = (#i, #j);
                    let #t = #v[#a];
                    #v[#a] = #v[#b];
                    #v[#b] = #t;
                });
            }
            Expr::Macro(m)
                if m.mac.path.is_ident("vec")
                    && mentions_active(&Expr::Macro(m.clone()), &self.active) =>
            {
                let Some(ty) = self.float_ty.clone() else {
                    return;
                };
                // `vec![e; n]`: a constant fill of `n`, then every slot written with `e`
                // (a constant `e` with a length read from a differentiable value,
                // `vec![0.0; w.len()]`, is a constant as written).
                if let Ok(r) = m.mac.parse_body::<Repeat>() {
                    if !mentions_active(&r.elem, &self.active) {
                        return;
                    }
                    let (elem, len) = (&r.elem, &r.len);
                    let elem = typed(elem, &ty).unwrap_or_else(|| elem.clone());
                    let (t0, fill, v, k) = (
                        format_ident!("__mochi_rep0", span = span),
                        format_ident!("__mochi_rep_fill", span = span),
                        format_ident!("__mochi_rep", span = span),
                        format_ident!("__mochi_rep_k", span = span),
                    );
                    *e = syn::parse_quote_spanned!(span=> {
                        let #t0 = #elem;
                        let #fill = ::mochi::no_grad(#t0.clone());
                        let mut #v = ::std::vec![#fill; #len];
                        for #k in 0..#v.len() {
                            #v[#k] = #t0.clone();
                        }
                        #v
                    });
                    self.visit_expr_mut(e);
                    return;
                }
                type List = syn::punctuated::Punctuated<Expr, syn::Token![,]>;
                let Ok(list) = m.mac.parse_body_with(List::parse_terminated) else {
                    return;
                };
                if list.is_empty() {
                    return;
                }
                let v = format_ident!("__mochi_vec", span = span);
                let n = list.len();
                // The first element fills the vector before every slot is written: the
                // element type may be a float or a row (`vec![x.to_vec(), y.to_vec()]`).
                let t0 = format_ident!("__mochi_vec0", span = span);
                let first = typed(&list[0], &ty).unwrap_or_else(|| list[0].clone());
                let sets = list.iter().enumerate().skip(1).map(|(k, x)| {
                    let k = syn::Index::from(k);
                    quote_spanned!(span=> #v[#k] = #x;)
                });
                // The fill carries no derivative (every slot is then written), so the
                // `vec!` it goes into is a constant.
                let fill = format_ident!("__mochi_vec_fill", span = span);
                *e = syn::parse_quote_spanned!(span=> {
                    let #t0 = #first;
                    let #fill = ::mochi::no_grad(#t0.clone());
                    let mut #v = ::std::vec![#fill; #n];
                    #v[0] = #t0;
                    #(#sets)*
                    #v
                });
                // The elements were macro tokens until now: rewrite them in their turn.
                self.visit_expr_mut(e);
            }
            Expr::Call(c) => {
                // `f(&mut x[..])`: the whole sequence, `f(&mut x)`.
                for a in c.args.iter_mut() {
                    if let Expr::Reference(r) = a {
                        if let (Some(_), Expr::Index(ix)) = (r.mutability, &*r.expr) {
                            if let Expr::Range(g) = &*ix.index {
                                if g.start.is_none() && g.end.is_none() {
                                    let seq = (*ix.expr).clone();
                                    *r.expr = seq;
                                }
                            }
                        }
                    }
                }
                let Some(name) = mem_fn(&c.func) else {
                    if let Some(r) = write_back_call(c, span, &mut self.next) {
                        *e = r;
                    }
                    return;
                };
                match (name.as_str(), c.args.len()) {
                    // (A place behind a reference, `*lo`, is read by a clone: a value
                    // cannot be moved out of it.)
                    ("swap", 2) => {
                        let (Some(a), Some(b)) = (mut_place(&c.args[0]), mut_place(&c.args[1]))
                        else {
                            return;
                        };
                        let t = format_ident!("__mochi_swap", span = span);
                        let (ra, rb) = (moved_or_cloned(&a), moved_or_cloned(&b));
                        *e = syn::parse_quote_spanned!(span=> { let #t = #ra; #a = #rb; #b = #t; });
                    }
                    // `std::mem::take(&mut a)`: `replace` with the default.
                    ("take", 1) => {
                        let Some(a) = mut_place(&c.args[0]) else {
                            return;
                        };
                        let t = format_ident!("__mochi_old", span = span);
                        let ra = moved_or_cloned(&a);
                        *e = syn::parse_quote_spanned!(span=> {
                            let #t = #ra;
                            #a = ::core::default::Default::default();
                            #t
                        });
                    }
                    ("replace", 2) => {
                        let Some(a) = mut_place(&c.args[0]) else {
                            return;
                        };
                        let v = &c.args[1];
                        let t = format_ident!("__mochi_old", span = span);
                        let ra = moved_or_cloned(&a);
                        *e = syn::parse_quote_spanned!(span=> { let #t = #ra; #a = #v; #t });
                    }
                    _ => {}
                }
            }
            Expr::Assign(a) => {
                let right = a.right.clone();
                let rebuild = move |place: Expr| -> Expr { syn::parse_quote!(#place = #right) };
                let r = deep_assign(&a.left, &rebuild, span, &mut self.next).or_else(|| {
                    mentions_active(&a.left, &self.active)
                        .then(|| field_of_element_assign(&a.left, &rebuild, span, &mut self.next))
                        .flatten()
                });
                if let Some(r) = r {
                    *e = r;
                    self.visit_expr_mut(e);
                }
            }
            Expr::Binary(b) if crate::activity::is_arithmetic_assign(&b.op) => {
                let (op, right) = (b.op, b.right.clone());
                let rebuild = move |place: Expr| -> Expr { syn::parse_quote!(#place #op #right) };
                let r = deep_assign(&b.left, &rebuild, span, &mut self.next).or_else(|| {
                    mentions_active(&b.left, &self.active)
                        .then(|| field_of_element_assign(&b.left, &rebuild, span, &mut self.next))
                        .flatten()
                });
                if let Some(r) = r {
                    *e = r;
                    self.visit_expr_mut(e);
                }
            }
            Expr::If(i) => {
                // `if let Some(v) = chain.last()` of a chain with a `filter` or a
                // `map_while` (also `next`, `nth(k)`, `find(p)`): the walk that finds it,
                // as an `Option`.
                if let Expr::Let(l) = &mut *i.cond {
                    if let Some(o) = self.chain_end_as_option(&l.expr) {
                        *l.expr = o;
                        // The walk gives the element by value: `Some(&v)` binds it as
                        // `Some(v)`, and `*v` in the branch reads `v`.
                        by_value_binding(&mut l.pat, &mut i.then_branch);
                    }
                }
                if let Some(r) = if_let(i, &self.active) {
                    *e = r;
                    // The `match` it may have become is rewritten in its turn.
                    self.visit_expr_mut(e);
                }
            }
            // (A scrutinee without a derivative, `match x.iter().position(p) { Some(i) =>
            // i, None => n }`, is matched as written.)
            Expr::Match(m) if !no_derivative(&m.expr) => {
                if let Some(r) = option_match(m, &self.active)
                    .or_else(|| option_arms(m).and_then(|m| option_match(&m, &self.active)))
                    .or_else(|| result_match(m))
                    .or_else(|| guarded_match(m, false))
                {
                    *e = r;
                    self.visit_expr_mut(e);
                }
            }
            // `[v; 3]` of a differentiable value with a literal length: `{ let t = v; [t,
            // t, t] }` (each element a copy, whose cotangents add up in `t`'s).
            Expr::Repeat(r) if mentions_active(&r.expr, &self.active) => {
                let n = match &*r.len {
                    Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Int(n),
                        ..
                    }) => n.base10_parse::<usize>().ok(),
                    _ => None,
                };
                if let Some(n) = n.filter(|n| *n <= 64) {
                    self.next += 1;
                    let t = format_ident!("__mochi_rep{}", self.next, span = span);
                    let v = &r.expr;
                    let elems = std::iter::repeat_n(quote::quote!(#t), n);
                    *e = syn::parse_quote_spanned!(span=> { let #t = #v; [#(#elems),*] });
                }
            }
            Expr::While(w) if matches!(&*w.cond, Expr::Let(_)) && w.label.is_none() => {
                let Expr::Let(l) = &*w.cond else { return };
                let (pat, scrutinee, body) = (&l.pat, &l.expr, &w.body);
                let mut r: Expr = syn::parse_quote_spanned!(span=>
                    loop { if let #pat = #scrutinee #body else { break } }
                );
                self.visit_expr_mut(&mut r);
                *e = r;
            }
            // `c.then_some(e)` and `c.then(|| e)` of a differentiable `e`: the `Option` from
            // a branch, `if c { Some(e) } else { None }` (`e` evaluated only where it is
            // kept: the same value, without a rule for `bool`'s methods).
            Expr::MethodCall(m)
                if m.args.len() == 1
                    && (m.method == "then_some"
                        || (m.method == "then"
                            && matches!(&m.args[0], Expr::Closure(c) if c.inputs.is_empty())))
                    && mentions_active(&m.args[0], &self.active) =>
            {
                let c = &m.receiver;
                let v: Expr = match &m.args[0] {
                    Expr::Closure(cl) if m.method == "then" => (*cl.body).clone(),
                    a => a.clone(),
                };
                *e = syn::parse_quote_spanned!(span=> if #c { Some(#v) } else { None });
            }
            // `Pt { y: e, ..base }`: the fields written evaluated first, then the base,
            // whose fields they replace: `{ let f0 = e; let mut b = base; b.y = f0; b }`.
            // A base that is a variable or a field is copied (`base.clone()`): the update
            // takes only the fields it does not write, and the variable stays usable.
            Expr::Struct(st) if st.rest.is_some() && st.qself.is_none() => {
                let base = st.rest.as_deref().unwrap();
                let base: Expr = match unparen(base) {
                    place @ (Expr::Path(_) | Expr::Field(_)) => {
                        syn::parse_quote_spanned!(span=> ::core::clone::Clone::clone(&#place))
                    }
                    _ => base.clone(),
                };
                let b = format_ident!("__mochi_base", span = span);
                let vals: Vec<syn::Ident> = (0..st.fields.len())
                    .map(|k| format_ident!("__mochi_field{}", k, span = span))
                    .collect();
                let exprs = st.fields.iter().map(|f| &f.expr);
                let members = st.fields.iter().map(|f| &f.member);
                *e = syn::parse_quote_spanned!(span=> {
                    #(let #vals = #exprs;)*
                    let mut #b = #base;
                    #(#b.#members = #vals;)*
                    #b
                });
            }
            // `bs.iter_mut().map(|b| b.kick(g)).sum()` (also `product`, `fold`, `collect`,
            // `enumerate` and other adapters before the `map`): the elements lent to a
            // closure that may change them, as the loop `for b in bs.iter_mut() { s +=
            // b.kick(g); }` is.
            Expr::MethodCall(m)
                if matches!(
                    m.method.to_string().as_str(),
                    "sum" | "product" | "collect" | "fold"
                ) && m.args.len() == if m.method == "fold" { 2 } else { 0 }
                    && lends_elements(&m.receiver) =>
            {
                let Expr::MethodCall(map) = unparen(&m.receiver) else {
                    return;
                };
                let Some(Expr::Closure(c)) = map.args.first() else {
                    return;
                };
                if map.method != "map" || c.inputs.len() != 1 || contains_return(&c.body) {
                    return;
                }
                let pat = match &c.inputs[0] {
                    Pat::Type(t) => &*t.pat,
                    p => p,
                };
                let (it, body) = (&map.receiver, &c.body);
                self.next += 1;
                let acc = format_ident!("__mochi_acc{}_", self.next, span = span);
                let ty = m.turbofish.as_ref().map(|t| {
                    let args = &t.args;
                    quote_spanned!(span=> : #args)
                });
                let r: Expr = if m.method == "sum" {
                    syn::parse_quote_spanned!(span=> {
                        let mut #acc #ty = 0.0;
                        for #pat in #it { #acc += #body; }
                        #acc
                    })
                } else if m.method == "collect" {
                    syn::parse_quote_spanned!(span=> {
                        let mut #acc #ty = ::std::vec::Vec::new();
                        for #pat in #it { #acc.push(#body); }
                        #acc
                    })
                } else if m.method == "fold" {
                    // (`fold(init, |a, e| g)`: `g` with `a` the accumulator, `e` the
                    // element's value.)
                    let Expr::Closure(g) = unparen(&m.args[1]) else {
                        return;
                    };
                    if g.inputs.len() != 2 || contains_return(&g.body) {
                        return;
                    }
                    let (a, el, gb, init) = (&g.inputs[0], &g.inputs[1], &g.body, &m.args[0]);
                    syn::parse_quote_spanned!(span=> {
                        let mut #acc = #init;
                        for #pat in #it {
                            let #el = #body;
                            let #a = #acc;
                            #acc = #gb;
                        }
                        #acc
                    })
                } else {
                    syn::parse_quote_spanned!(span=> {
                        let mut #acc #ty = 1.0;
                        for #pat in #it { #acc *= #body; }
                        #acc
                    })
                };
                *e = r;
                self.visit_expr_mut(e);
            }
            Expr::MethodCall(m) if m.method == "for_each" && m.args.len() == 1 => {
                let Expr::Closure(c) = &m.args[0] else { return };
                if c.inputs.len() != 1 || contains_return(&c.body) {
                    return;
                }
                // (A typed parameter, `|v: &mut f64|`, is its pattern in a `for`.)
                let pat = match &c.inputs[0] {
                    Pat::Type(t) => &*t.pat,
                    p => p,
                };
                let it = &m.receiver;
                let body = &c.body;
                let mut f: syn::ExprForLoop =
                    syn::parse_quote_spanned!(span=> for #pat in #it { #body; });
                f.attrs.clear();
                match self.index_loop(&f) {
                    Some(r) => {
                        *e = r;
                        WriteBackReceivers(&mut self.next).visit_expr_mut(e);
                    }
                    None => {
                        // A loop over a chain (`x.iter().map(..).for_each(..)`): rewritten
                        // in its turn, as a `for` written so.
                        *e = Expr::ForLoop(f);
                        self.visit_expr_mut(e);
                    }
                }
            }
            // `v.extend(chain)` of differentiable values: `for e in chain { v.push(e); }`
            // (by value: `for &e in x.iter()` for a chain of references).
            Expr::MethodCall(m)
                if m.method == "extend"
                    && m.args.len() == 1
                    && matches!(&m.args[0], Expr::MethodCall(_))
                    && mentions_active(&m.args[0], &self.active) =>
            {
                let Expr::MethodCall(arg) = &m.args[0] else {
                    return;
                };
                let target = &m.receiver;
                let e_id = format_ident!("__mochi_extend{}", self.next);
                self.next += 1;
                let mut r: Expr = match arg.method.to_string().as_str() {
                    "iter" if arg.args.is_empty() => syn::parse_quote_spanned!(span=>
                        for &#e_id in #arg { #target.push(#e_id); }
                    ),
                    "copied" | "cloned" if arg.args.is_empty() => {
                        let inner = &arg.receiver;
                        syn::parse_quote_spanned!(span=>
                            for &#e_id in #inner { #target.push(#e_id); }
                        )
                    }
                    _ => syn::parse_quote_spanned!(span=>
                        for #e_id in #arg { #target.push(#e_id); }
                    ),
                };
                self.visit_expr_mut(&mut r);
                *e = r;
            }
            // Searches and tests over a differentiable sequence give integers and bools,
            // which carry no derivative: `x.iter().position(|v| *v > 0.0)`.
            Expr::MethodCall(m)
                if matches!(
                    m.method.to_string().as_str(),
                    "position"
                        | "rposition"
                        | "all"
                        | "any"
                        | "count"
                        | "partition_point"
                        | "binary_search_by"
                        | "binary_search_by_key"
                ) && mentions_active(&m.receiver, &self.active) =>
            {
                let inner = e.clone();
                *e = syn::parse_quote_spanned!(span=> ::mochi::no_grad(#inner));
            }
            Expr::MethodCall(m)
                if matches!(
                    m.method.to_string().as_str(),
                    "sum" | "product" | "fold" | "collect"
                ) && (mentions_active(&m.receiver, &self.active)
                    || m.args.iter().any(|a| mentions_active(a, &self.active))) =>
            {
                // `x.windows(2).zip(y.windows(2)).map(|(a, b)| …).sum()` (the trapezoidal
                // rule): a `for` over the zipped pieces, which the loop rewrite takes.
                if let Some(r) = zipped_pieces_sum(m, self.float_ty.as_ref()) {
                    *e = r;
                    self.visit_expr_mut(e);
                    return;
                }
                // `x.to_vec().iter().enumerate().map(..).sum()`, `helper(x).iter()…`: the
                // source bound first, as a variable the chain rewrite takes.
                // (An untyped `collect()` is left to the typed `let` it is the value of.)
                if m.method != "collect" || m.turbofish.is_some() {
                    let mut bound = Vec::new();
                    let any = m.method == "fold"
                        && m.args
                            .first()
                            .is_some_and(|a| mentions_active(a, &self.active));
                    bind_chain_sources_of(
                        &mut m.receiver,
                        &self.active,
                        any,
                        &mut self.next,
                        &mut bound,
                    );
                    if !bound.is_empty() {
                        let span = m.method.span();
                        let chain = e.clone();
                        *e = self.with_sources(bound, span, quote::quote!(#chain));
                        self.visit_expr_mut(e);
                        return;
                    }
                }
                // `collect::<Vec<Vec<_>>>()` of rows (a struct's field, see
                // `CollectedFields`): built by the loop, as a typed `let`'s rows are.
                let rows_ty = match m.turbofish.as_ref().and_then(|t| t.args.first()) {
                    Some(syn::GenericArgument::Type(t))
                        if m.method == "collect"
                            && crate::iterchain::vec_elem(t)
                                .flatten()
                                .is_some_and(|r| crate::iterchain::vec_elem(r).is_some()) =>
                    {
                        Some(t.clone())
                    }
                    _ => None,
                };
                if let Some(ty) = rows_ty {
                    let span = m.method.span();
                    let mut call = m.clone();
                    call.turbofish = None;
                    // (The pieces of a sub-slice, `z[k..].chunks(d)`: of a name.)
                    let mut sub = None;
                    let mut cur = &mut *call.receiver;
                    while let Expr::MethodCall(c) = cur {
                        if matches!(
                            c.method.to_string().as_str(),
                            "chunks" | "chunks_exact" | "windows"
                        ) {
                            if let Expr::Index(ix) = unparen(&c.receiver) {
                                if matches!(&*ix.index, Expr::Range(_)) {
                                    self.next += 1;
                                    let name =
                                        format_ident!("__mochi_sub{}", self.next, span = span);
                                    let whole = std::mem::replace(
                                        &mut *c.receiver,
                                        syn::parse_quote_spanned!(span=> #name),
                                    );
                                    if mentions_active(&whole, &self.active) {
                                        self.active.insert(name.to_string());
                                    }
                                    sub = Some(quote::quote!(let #name = &#whole;));
                                }
                            }
                            break;
                        }
                        cur = &mut *c.receiver;
                    }
                    *e = syn::parse_quote_spanned!(span=> {
                        #sub
                        let __mochi_rows: #ty = #call;
                        __mochi_rows
                    });
                    self.visit_expr_mut(e);
                    return;
                }
                // `fold(x.to_vec(), |h, l| l.forward(&h).iter().map(f).collect())`: the
                // state carries the derivative of the value it starts from, so the
                // closure's chains over it are rewritten as such, before it is inlined.
                if m.method == "fold"
                    && m.args.len() == 2
                    && mentions_active(&m.args[0], &self.active)
                {
                    if let Expr::Closure(c) = &mut m.args[1] {
                        let mut names = Vec::new();
                        if let Some(p) = c.inputs.first() {
                            crate::activity::pat_names(p, &mut names);
                        }
                        let added: Vec<String> = names
                            .into_iter()
                            .filter(|n| self.active.insert(n.clone()))
                            .collect();
                        if !added.is_empty() {
                            self.visit_expr_mut(&mut c.body);
                        }
                        for n in added {
                            self.active.remove(&n);
                        }
                    }
                }
                let float_ty = self.float_ty.clone();
                if let Some(r) = Writer::new(&mut self.next, float_ty.as_ref()).consumer(m, None) {
                    *e = r;
                    // The closures' locals are the loop's now (`let t = 1.0 / (1.0 + v);`),
                    // and carry derivatives as the closures' did: chains reading them
                    // (`A.iter().rev().fold(0.0, |p, &a| p * t + a)`) are rewritten too.
                    crate::activity::analyse(
                        &crate::iterchain::block_of(e, true),
                        &mut self.active,
                    );
                    // A window's `w.iter()` became a chain over a sub-slice: rewrite it.
                    self.visit_expr_mut(e);
                }
            }
            Expr::MethodCall(m)
                if matches!(m.method.to_string().as_str(), "map_axis" | "fold_axis")
                    && mentions_active(&m.receiver, &self.active) =>
            {
                let float_ty = self.float_ty.clone();
                if let Some(r) = Writer::new(&mut self.next, float_ty.as_ref()).axis_reduce(m) {
                    *e = r;
                    self.visit_expr_mut(e);
                } else if matches!(unparen(&m.receiver), Expr::MethodCall(_)) {
                    // `m.t().fold_axis(..)`, `m.slice(s![..]).map_axis(..)`: the view bound
                    // first, then reduced as a named array is (before 2026-12-07, "no rule
                    // for `fold_axis`" on a view).
                    self.next += 1;
                    let v = format_ident!("__mochi_axr{}", self.next, span = span);
                    self.active.insert(v.to_string());
                    let recv = &m.receiver;
                    let mut on = m.clone();
                    *on.receiver = syn::parse_quote!(#v);
                    *e = syn::parse_quote_spanned!(span=> { let #v = #recv; #on });
                    self.visit_expr_mut(e);
                }
            }
            Expr::MethodCall(m)
                if m.args.len() == 1 && matches!(&*m.receiver, Expr::Path(_) | Expr::Field(_)) =>
            {
                let y = &m.receiver;
                let i = self.index_var(span);
                let arg = &m.args[0];
                match m.method.to_string().as_str() {
                    "fill" => {
                        let t = format_ident!("__mochi_fill", span = span);
                        *e = syn::parse_quote_spanned!(span=> {
                            let #t = #arg;
                            for #i in 0..#y.len() { #y[#i] = #t; }
                        });
                    }
                    name @ ("copy_from_slice" | "clone_from_slice" | "assign") => {
                        let src: Expr = match arg {
                            Expr::Reference(r) if r.mutability.is_none() => (*r.expr).clone(),
                            other => other.clone(),
                        };
                        let msg = format!(
                            "`{name}`: the destination and the source have different lengths"
                        );
                        *e = syn::parse_quote_spanned!(span=> {
                            assert_eq!(#y.len(), #src.len(), #msg);
                            for #i in 0..#y.len() { #y[#i] = #src[#i]; }
                        });
                    }
                    _ => {}
                }
            }
            Expr::ForLoop(f) => {
                // `for i in [1.0, 2.0, 3.0].iter()`: the array literal bound first, which the
                // replayed iterator borrows (a temporary would end with the statement,
                // E0716).
                if mentions_active(&f.body, &self.active) {
                    if let Some(root) = literal_source(&mut f.expr) {
                        let mut bound = Vec::new();
                        bind_source(root, &mut self.next, &mut bound);
                        let looped = f.clone();
                        *e = self.with_sources(bound, span, quote::quote!(#looped));
                        self.visit_expr_mut(e);
                        return;
                    }
                }
                // `for v in helper(x).iter()`, `for v in l.forward(&x)`, `for (a, b) in
                // x.iter().zip(helper(y).iter())`: the computed sources bound first, as
                // variables the loop rewrites take.
                if mentions_active(&f.expr, &self.active) {
                    let mut bound = Vec::new();
                    if computed_source(&f.expr, &self.active) {
                        bind_source(&mut f.expr, &mut self.next, &mut bound);
                    } else {
                        bound = bind_chain_source(&mut f.expr, &self.active, &mut self.next);
                    }
                    if !bound.is_empty() {
                        let looped = f.clone();
                        *e = self.with_sources(bound, span, quote::quote!(#looped));
                        self.visit_expr_mut(e);
                        return;
                    }
                }
                if let Some(r) = self.inactive_index_loop(f) {
                    *e = r;
                    // (A piece of a constant's chunks, `let batch = &data[..];`, is an
                    // alias of it now: the loops over it in the body, visited before it
                    // was bound, are index loops too.)
                    AliasLoops { d: self }.visit_expr_mut(e);
                    return;
                }
                if f.label.is_none() {
                    if let Some(r) = self.index_loop(f) {
                        *e = r;
                        // `p.v += e` became `st[k].v += e`: written back whole.
                        let mut fw = FieldWrites {
                            active: &self.active,
                            next: &mut self.next,
                        };
                        fw.visit_expr_mut(e);
                        // `l.bump(x)` became `(&mut v[i]).bump(x)`, `scale(e, s)`
                        // `scale(&mut v[i], s)`: written back whole.
                        WriteBackReceivers(&mut self.next).visit_expr_mut(e);
                        return;
                    }
                }
                if mentions_active(&f.expr, &self.active) {
                    let float_ty = self.float_ty.clone();
                    if let Some(r) = Writer::new(&mut self.next, float_ty.as_ref()).for_loop(f) {
                        *e = r;
                        self.visit_expr_mut(e);
                    }
                }
            }
            _ => {}
        }
    }
}

/// `vec![P { .. }, ..]`, `vec![P { .. }; n]`, `[P { .. }, ..]` or `[P { .. }; n]`: a
/// sequence of the user's structs, written as literals.
pub fn struct_literals(e: &Expr) -> bool {
    matches!(first_element(e), Some(Expr::Struct(_)))
}

/// The element type of the user's of a local sequence: written (`let layers: Vec<Dense>
/// = ..`) or of its literals (`let layers = vec![Dense { .. }, ..]`).
pub(crate) fn local_element_type(l: &syn::Local) -> Option<syn::Ident> {
    match &l.pat {
        Pat::Type(t) => Receiver::user_elements(&t.ty),
        _ => struct_literals_type(unparen(&l.init.as_ref()?.expr)),
    }
}

/// The type of the user's whose literals `e` holds (see [`struct_literals`]).
fn struct_literals_type(e: &Expr) -> Option<syn::Ident> {
    match first_element(e)? {
        Expr::Struct(st) if st.qself.is_none() && st.path.segments.len() == 1 => {
            let path = &st.path;
            Receiver::user_type(&syn::parse_quote!(#path))
        }
        _ => None,
    }
}

/// The first element of an array, a `vec![..]` or a repeat `[e; n]`.
fn first_element(e: &Expr) -> Option<Expr> {
    match e {
        Expr::Array(a) => a.elems.first().cloned(),
        Expr::Repeat(r) => Some((*r.expr).clone()),
        Expr::Macro(m) if m.mac.path.is_ident("vec") => {
            match m.mac.parse_body_with(
                syn::punctuated::Punctuated::<Expr, syn::Token![,]>::parse_terminated,
            ) {
                Ok(elems) => elems.first().cloned(),
                Err(_) => m
                    .mac
                    .parse_body::<crate::rewrite::Repeat>()
                    .ok()
                    .map(|r| r.elem),
            }
        }
        _ => None,
    }
}

/// A function declared in the body over floats (`fn sq(v: f64) -> f64 { v * v }`, which
/// cannot see the body's locals) as a closure bound at the top of the body, `let sq =
/// |v: f64| -> f64 { v * v };`, in declaration order: the closures of the body are
/// inlined where they are called, so its calls are differentiated. Not a generic, `const`,
/// `async` or `unsafe` function, nor one that calls itself or a function declared after
/// it, nor one whose parameters are patterns other than names. (The body's `let`s
/// that take a struct apart are written field by field first: [`struct_pattern_lets`].)
pub fn nested_fns_as_closures(func: &mut syn::ItemFn) {
    struct_pattern_lets(&func.sig, &mut func.block);
    nested_fns_as_closures_in(&mut func.block);
}

/// [`nested_fns_as_closures`] of a block (a method's body).
pub fn nested_fns_as_closures_in(block: &mut syn::Block) {
    nested_fns_in(block);
}

/// The `let`s of `block` that take a struct apart, field by field (see
/// [`StructPatternLets`]); `sig` says which parameters are references.
pub fn struct_pattern_lets(sig: &syn::Signature, block: &mut syn::Block) {
    let borrowed = sig
        .inputs
        .iter()
        .filter_map(|a| match a {
            syn::FnArg::Receiver(r) if r.reference.is_some() => Some("self".to_string()),
            syn::FnArg::Typed(pt) if matches!(&*pt.ty, syn::Type::Reference(_)) => match &*pt.pat {
                Pat::Ident(i) => Some(i.ident.to_string()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    StructPatternLets { next: 0, borrowed }.visit_block_mut(block);
    TypedStructDefaults.visit_block_mut(block);
    BorrowedClosureLets.visit_block_mut(block);
}

/// `let f = &|t: f64| a * t;` (also typed `let f: &dyn Fn(f64) -> f64 = &|t| ..;`) →
/// `let f = |t: f64| a * t;`, the closure bound as the derivation inlines it, with each
/// later use of `f` other than a call borrowed (`helper(f)` → `helper(&f)`), so that
/// every use keeps its type.
struct BorrowedClosureLets;

impl VisitMut for BorrowedClosureLets {
    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        for k in 0..b.stmts.len() {
            self.visit_stmt_mut(&mut b.stmts[k]);
            let syn::Stmt::Local(l) = &mut b.stmts[k] else {
                continue;
            };
            // (The parameters' types of `&dyn Fn(f64) -> f64`, given to the closure's
            // untyped parameters, which the annotation typed.)
            let mut params: Option<Vec<syn::Type>> = None;
            let name = match &l.pat {
                Pat::Ident(i) if i.by_ref.is_none() && i.mutability.is_none() => i.ident.clone(),
                Pat::Type(t) => match (&*t.pat, &*t.ty) {
                    (Pat::Ident(i), syn::Type::Reference(r))
                        if i.by_ref.is_none() && i.mutability.is_none() =>
                    {
                        if let syn::Type::TraitObject(o) = &*r.elem {
                            params = o.bounds.iter().find_map(|b| match b {
                                syn::TypeParamBound::Trait(t) => {
                                    match &t.path.segments.last()?.arguments {
                                        syn::PathArguments::Parenthesized(a) => {
                                            Some(a.inputs.iter().cloned().collect())
                                        }
                                        _ => None,
                                    }
                                }
                                _ => None,
                            });
                        }
                        i.ident.clone()
                    }
                    _ => continue,
                },
                _ => continue,
            };
            let Some(init) = l.init.as_mut().filter(|i| i.diverge.is_none()) else {
                continue;
            };
            let Expr::Reference(r) = &*init.expr else {
                continue;
            };
            if r.mutability.is_some() || !matches!(unparen(&r.expr), Expr::Closure(_)) {
                continue;
            }
            let mut closure = unparen(&r.expr).clone();
            if let (Expr::Closure(c), Some(types)) = (&mut closure, params) {
                if c.inputs.len() == types.len() {
                    for (p, ty) in c.inputs.iter_mut().zip(types) {
                        if !matches!(p, Pat::Type(_)) {
                            *p = Pat::Type(syn::PatType {
                                attrs: Vec::new(),
                                pat: Box::new(p.clone()),
                                colon_token: Default::default(),
                                ty: Box::new(ty),
                            });
                        }
                    }
                }
            }
            *init.expr = closure;
            l.pat = Pat::Ident(syn::PatIdent {
                attrs: Vec::new(),
                by_ref: None,
                mutability: None,
                ident: name.clone(),
                subpat: None,
            });
            struct Uses<'n>(&'n syn::Ident);
            impl VisitMut for Uses<'_> {
                fn visit_expr_mut(&mut self, e: &mut Expr) {
                    match e {
                        Expr::Call(c) if matches!(&*c.func, Expr::Path(p) if p.path.is_ident(self.0)) => {
                            for a in c.args.iter_mut() {
                                self.visit_expr_mut(a);
                            }
                        }
                        Expr::Path(p) if p.qself.is_none() && p.path.is_ident(self.0) => {
                            let n = self.0;
                            *e = syn::parse_quote_spanned!(n.span()=> (&#n));
                        }
                        _ => syn::visit_mut::visit_expr_mut(self, e),
                    }
                }
                fn visit_item_mut(&mut self, _: &mut syn::Item) {}
            }
            for later in b.stmts.iter_mut().skip(k + 1) {
                Uses(&name).visit_stmt_mut(later);
            }
        }
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// `V2 { x: a, ..Default::default() }` → `V2 { x: a, ..<V2 as Default>::default() }`:
/// the base of a struct update typed by the struct's path, which the derivation's rule
/// calls leave to inference otherwise.
struct TypedStructDefaults;

impl VisitMut for TypedStructDefaults {
    fn visit_expr_struct_mut(&mut self, st: &mut syn::ExprStruct) {
        syn::visit_mut::visit_expr_struct_mut(self, st);
        let Some(base) = st.rest.as_mut() else { return };
        let untyped = matches!(unparen(base), Expr::Call(c) if c.args.is_empty()
        && matches!(&*c.func, Expr::Path(p) if p.qself.is_none() && {
            let n: Vec<String> =
                p.path.segments.iter().map(|s| s.ident.to_string()).collect();
            n.ends_with(&["Default".to_string(), "default".to_string()])
        }));
        if untyped && st.qself.is_none() {
            let (path, span) = (&st.path, base.span());
            **base =
                syn::parse_quote_spanned!(span=> <#path as ::core::default::Default>::default());
        }
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// `let V2 { x, y: b, .. } = e;` (also a tuple struct's `let Pair(a, b) = e;`) of a type
/// of the user's: `e` bound once (unless it is a variable) and each field bound from it
/// by name, `let x = t.x; let b = t.y;`, so that each part is a `let` of a field the
/// derivation and the generic form read as written (the mirror of a struct has its
/// fields). A parameter that is a reference (`let Params { w, b } = p;` of `p:
/// &Params`) gives references to its fields, as the pattern does (`let w = &p.w;`), and
/// so does a borrowed value (`= &e`); `let &Pt(a, b) = r;` copies the fields out. A
/// struct pattern inside (`let Span(Pt(a, b), w) = s;`) is taken apart in turn, and a
/// part bound to the whole's own name (`let S { a: s, b } = s;`) is bound last. A `for`
/// loop's or a closure's pattern that takes a struct apart (`for &Pt(a, b) in ..`,
/// `|(i, Pt(a, b))| ..`) binds a name, taken apart by such a `let` at the top of the
/// body. Left as written: `ref` bindings, an `else`, or a pattern of another kind
/// inside.
struct StructPatternLets {
    next: usize,
    borrowed: HashSet<String>,
}

impl StructPatternLets {
    fn user_path(p: &syn::Path) -> bool {
        p.segments.len() == 1 && p.segments[0].arguments.is_none() && {
            let n = p.segments[0].ident.to_string();
            n == "Self"
                || n.starts_with(|c: char| c.is_ascii_uppercase())
                    && !matches!(n.as_str(), "Some" | "Ok" | "Err" | "Box" | "Rc" | "Arc")
        }
    }

    /// A part's pattern a `let` binds as it is: a name (not `ref`), `_`, or a tuple of
    /// them.
    fn plain(p: &Pat) -> bool {
        match p {
            Pat::Ident(i) => i.by_ref.is_none() && i.subpat.is_none(),
            Pat::Wild(_) => true,
            Pat::Tuple(t) => t.elems.iter().all(Self::plain),
            _ => false,
        }
    }

    /// A pattern that takes a struct of the user's apart somewhere: at its top, under
    /// `&`, or inside a tuple.
    fn has_struct(p: &Pat) -> bool {
        match p {
            Pat::Struct(s) => s.qself.is_none() && Self::user_path(&s.path),
            Pat::TupleStruct(t) => t.qself.is_none() && Self::user_path(&t.path),
            Pat::Reference(r) => Self::has_struct(&r.pat),
            Pat::Paren(p) => Self::has_struct(&p.pat),
            Pat::Tuple(t) => t.elems.iter().any(Self::has_struct),
            _ => false,
        }
    }

    /// `l` split into its parts, and each part that takes a struct apart split again.
    fn split_all(&mut self, l: &syn::Local) -> Option<Vec<syn::Stmt>> {
        let parts = self.split(l)?;
        let mut out = Vec::with_capacity(parts.len());
        for s in parts {
            match &s {
                syn::Stmt::Local(inner) if Self::has_struct(&inner.pat) => {
                    match self.split_all(inner) {
                        Some(more) => out.extend(more),
                        None => out.push(s),
                    }
                }
                _ => out.push(s),
            }
        }
        Some(out)
    }

    fn split(&mut self, l: &syn::Local) -> Option<Vec<syn::Stmt>> {
        let init = l.init.as_ref()?;
        if init.diverge.is_some() {
            return None;
        }
        // `let &Pt(a, b) = r;`: the parts are copied out through the reference.
        let (pat, deref) = match &l.pat {
            Pat::Reference(r) => (&*r.pat, true),
            p => (p, false),
        };
        let borrowed_init = matches!(unparen(&init.expr), Expr::Reference(_));
        let parts: Vec<(syn::Member, Pat)> = match pat {
            Pat::Struct(s) if s.qself.is_none() && Self::user_path(&s.path) => s
                .fields
                .iter()
                .map(|f| (f.member.clone(), (*f.pat).clone()))
                .collect(),
            Pat::TupleStruct(t) if t.qself.is_none() && Self::user_path(&t.path) => {
                if t.elems.iter().any(|p| matches!(p, Pat::Rest(_))) {
                    return None;
                }
                t.elems
                    .iter()
                    .enumerate()
                    .map(|(k, p)| (syn::Member::Unnamed(syn::Index::from(k)), p.clone()))
                    .collect()
            }
            // `let (i, Pt(a, b)) = e;`, written by the loops and closures below: a tuple
            // with a struct inside, taken apart element by element.
            Pat::Tuple(t)
                if !deref
                    && !borrowed_init
                    && t.elems.iter().any(Self::has_struct)
                    && !t.elems.iter().any(|p| matches!(p, Pat::Rest(_))) =>
            {
                t.elems
                    .iter()
                    .enumerate()
                    .map(|(k, p)| (syn::Member::Unnamed(syn::Index::from(k)), p.clone()))
                    .collect()
            }
            _ => return None,
        };
        if !parts
            .iter()
            .all(|(_, p)| Self::plain(p) || Self::has_struct(p))
        {
            return None;
        }
        let span = l.pat.span();
        let mut out = Vec::new();
        let by_ref = !deref
            && (borrowed_init
                || matches!(unparen(&init.expr), Expr::Path(p)
                    if p.path.get_ident().is_some_and(|i| self.borrowed.contains(&i.to_string()))));
        let whole: Expr = match unparen(&init.expr) {
            Expr::Path(p) if p.path.get_ident().is_some() => (*init.expr).clone(),
            e => {
                self.next += 1;
                let t = format_ident!("__mochi_parts{}", self.next, span = span);
                out.push(syn::parse_quote_spanned!(span=> let #t = #e;));
                syn::parse_quote_spanned!(span=> #t)
            }
        };
        // A part bound to the whole's own name (`let S { a: s, b } = s;`) is bound last:
        // the parts after it would read the new `s`.
        let whole_name = match &whole {
            Expr::Path(p) => p.path.get_ident().map(|i| i.to_string()),
            _ => None,
        };
        let mut parts = parts;
        parts.sort_by_key(|(_, pat)| {
            let mut names = Vec::new();
            crate::activity::pat_names(pat, &mut names);
            whole_name.as_ref().is_some_and(|w| names.contains(w))
        });
        for (member, pat) in parts {
            if matches!(pat, Pat::Wild(_)) {
                continue;
            }
            out.push(if by_ref {
                syn::parse_quote_spanned!(span=> let #pat = &#whole.#member;)
            } else {
                syn::parse_quote_spanned!(span=> let #pat = #whole.#member;)
            });
        }
        Some(out)
    }

    /// `PAT` (a pattern that takes a struct apart) replaced by a new name, and the
    /// `let PAT = name;` that takes it apart in the body.
    /// In a tuple (`(i, &Pt(a, b))` of an `enumerate`), each element that does.
    fn named(&mut self, pat: &mut Pat) -> Vec<syn::Stmt> {
        if let Pat::Tuple(t) = pat {
            return t
                .elems
                .iter_mut()
                .filter(|p| Self::has_struct(p))
                .map(|p| self.named_one(p))
                .collect();
        }
        vec![self.named_one(pat)]
    }

    fn named_one(&mut self, pat: &mut Pat) -> syn::Stmt {
        self.next += 1;
        let span = pat.span();
        let v = format_ident!("__mochi_item{}", self.next, span = span);
        let taken = std::mem::replace(pat, syn::parse_quote_spanned!(span=> #v));
        syn::parse_quote_spanned!(span=> let #taken = #v;)
    }
}

impl VisitMut for StructPatternLets {
    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        let mut out = Vec::with_capacity(b.stmts.len());
        for mut s in std::mem::take(&mut b.stmts) {
            self.visit_stmt_mut(&mut s);
            match &s {
                syn::Stmt::Local(l) => {
                    // `let q = &pts[0];`: a reference, whose parts are references.
                    if let (Pat::Ident(i), Some(init)) = (&l.pat, &l.init) {
                        if matches!(unparen(&init.expr), Expr::Reference(_)) {
                            self.borrowed.insert(i.ident.to_string());
                        }
                    }
                    match self.split_all(l) {
                        Some(parts) => out.extend(parts),
                        None => out.push(s),
                    }
                }
                _ => out.push(s),
            }
        }
        b.stmts = out;
    }
    // `for q in &pts`, `for q in pts.iter()`: the element is a reference.
    fn visit_expr_for_loop_mut(&mut self, f: &mut syn::ExprForLoop) {
        let by_ref = match unparen(&f.expr) {
            Expr::Reference(_) => true,
            Expr::MethodCall(m) => matches!(m.method.to_string().as_str(), "iter" | "iter_mut"),
            _ => false,
        };
        // `for &Pt(a, b) in pts.iter()`, `for (i, Pt(a, b)) in ..`: the element bound to
        // a name, taken apart by a `let` at the top of the body.
        if Self::has_struct(&f.pat) {
            let by_ref = by_ref && !matches!(&*f.pat, Pat::Reference(_) | Pat::Tuple(_));
            let takes = self.named(&mut f.pat);
            f.body.stmts.splice(0..0, takes);
            if let (Pat::Ident(i), true) = (&*f.pat, by_ref) {
                self.borrowed.insert(i.ident.to_string());
            }
        } else if let (Pat::Ident(i), true) = (&*f.pat, by_ref) {
            self.borrowed.insert(i.ident.to_string());
        }
        syn::visit_mut::visit_expr_for_loop_mut(self, f);
    }
    // `match s { Span(p, w) => .. }`, `match (r, s) { (s, r) => .. }`: one arm, so its
    // pattern cannot fail; a `let`.
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if let Expr::Match(m) = e {
            if let [arm] = &m.arms[..] {
                if arm.guard.is_none() && (Self::has_struct(&arm.pat) || Self::plain(&arm.pat)) {
                    let (pat, scrutinee, body) = (&arm.pat, &m.expr, &arm.body);
                    let span = m.match_token.span;
                    *e = syn::parse_quote_spanned!(span=> { let #pat = #scrutinee; #body });
                }
            }
        }
        syn::visit_mut::visit_expr_mut(self, e);
    }
    // `pts.iter().map(|&Pt(a, b)| a * b)`: the parameter bound to a name, taken apart by
    // a `let` at the top of the body.
    fn visit_expr_closure_mut(&mut self, c: &mut syn::ExprClosure) {
        let mut takes = Vec::new();
        for input in c.inputs.iter_mut() {
            let pat = match input {
                Pat::Type(t) => &mut *t.pat,
                p => p,
            };
            if Self::has_struct(pat) {
                takes.extend(self.named(pat));
            }
        }
        if !takes.is_empty() {
            let body = &c.body;
            let span = body.span();
            *c.body = syn::parse_quote_spanned!(span=> { #(#takes)* #body });
        }
        syn::visit_mut::visit_expr_closure_mut(self, c);
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

fn nested_fns_in(block: &mut syn::Block) {
    let names: Vec<String> = block
        .stmts
        .iter()
        .filter_map(|s| match s {
            syn::Stmt::Item(syn::Item::Fn(f)) => Some(f.sig.ident.to_string()),
            _ => None,
        })
        .collect();
    let mut hoisted = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    let mut rest = Vec::new();
    for s in std::mem::take(&mut block.stmts) {
        let syn::Stmt::Item(syn::Item::Fn(f)) = &s else {
            rest.push(s);
            continue;
        };
        let sig = &f.sig;
        let name = sig.ident.to_string();
        seen.push(name.clone());
        let body = &f.block;
        let later_or_self = crate::activity::tokens_mention(&quote::quote!(#body), &|i| {
            names
                .iter()
                .any(|n| i == n && !seen[..seen.len() - 1].contains(n))
        });
        let simple_params = sig.inputs.iter().all(|a| {
            matches!(a, syn::FnArg::Typed(pt) if matches!(&*pt.pat, syn::Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none()))
        });
        let convertible = sig.generics.params.is_empty()
            && sig.constness.is_none()
            && sig.asyncness.is_none()
            && sig.unsafety.is_none()
            && sig.abi.is_none()
            && sig.variadic.is_none()
            && simple_params
            && !later_or_self
            && crate::twin::mentions_float_type(&quote::quote!(#sig));
        if !convertible {
            rest.push(s);
            continue;
        }
        let ident = &sig.ident;
        let params = sig.inputs.iter();
        let ret = match &sig.output {
            syn::ReturnType::Default => quote::quote!(-> ()),
            syn::ReturnType::Type(_, t) => quote::quote!(-> #t),
        };
        hoisted.push(syn::parse_quote!(let #ident = |#(#params),*| #ret #body;));
    }
    hoisted.extend(rest);
    block.stmts = hoisted;
}

/// The argument of a `get` that is not a position: a map's key (`get(&key)`,
/// `get("name")`) or a sub-slice's range (`get(a..b)`).
fn map_key_or_range(a: &Expr) -> bool {
    matches!(unparen(a), Expr::Reference(_) | Expr::Range(_))
        || matches!(unparen(a), Expr::Lit(l) if !matches!(l.lit, syn::Lit::Int(_)))
}

/// `Model::default().with_weights(w).with_bias(b)`: the call at the root of a chain of
/// one or more `with_…` methods (a builder's, by convention returning `Self`).
pub(crate) fn builder_root(e: &Expr) -> Option<&syn::ExprCall> {
    let Expr::MethodCall(first) = unparen(e) else {
        return None;
    };
    let mut m = first;
    loop {
        if !m.method.to_string().starts_with("with_") {
            return None;
        }
        match unparen(&m.receiver) {
            Expr::MethodCall(inner) => m = inner,
            Expr::Call(c) => return Some(c),
            _ => return None,
        }
    }
}

/// `Pair::new(a, b)`, `Model::default()`, `V2::from_polar(..)`, `Cfg::with_rate(..)`: a
/// constructor of the user's type, by the convention that these return `Self`; the type.
fn constructed(c: &syn::ExprCall) -> Option<(syn::Ident, bool)> {
    let Expr::Path(fp) = &*c.func else {
        return None;
    };
    if fp.qself.is_some() || fp.path.segments.len() != 2 {
        return None;
    }
    let (ty, f) = (&fp.path.segments[0], &fp.path.segments[1]);
    let name = f.ident.to_string();
    let constructor = name == "new"
        || name == "default"
        || name.starts_with("from_")
        || name.starts_with("with_");
    (ty.arguments.is_none()
        && f.arguments.is_none()
        && constructor
        && crate::twin::constructor_type(&ty.ident.to_string()))
    .then(|| (ty.ident.clone(), true))
}

/// `v.select_nth_unstable_by(k, cmp)` whose result is read (the `k`-th element, `.1` of
/// the three parts): `let (_, m, _) = v.select_nth_unstable_by(k, cmp);` → `let at = k;
/// v.select_nth_unstable_by(at, cmp); let m = &mut v[at];`, and `*v.select_nth_…(k,
/// cmp).1` → `{ let at = k; v.select_nth_…(at, cmp); v[at] }`: the selection as a
/// statement (which the derivation writes as a permutation) and the element it leaves at
/// `k`. (Also `select_nth_unstable` and `select_nth_unstable_by_key`.)
struct SelectedElements(usize);

impl SelectedElements {
    /// `v.select_nth_…(k, ..)` of a variable `v` (also `select_nth_unstable`, `_by_key`).
    fn selection(e: &Expr) -> Option<&syn::ExprMethodCall> {
        match unparen(e) {
            Expr::MethodCall(m)
                if matches!(
                    m.method.to_string().as_str(),
                    "select_nth_unstable" | "select_nth_unstable_by" | "select_nth_unstable_by_key"
                ) && !m.args.is_empty()
                    && matches!(unparen(&m.receiver), Expr::Path(_)) =>
            {
                Some(m)
            }
            _ => None,
        }
    }

    /// `let at: usize = k;`, the selection at `at` as a statement, and `v[at]`.
    fn split(&mut self, m: &syn::ExprMethodCall) -> (syn::Stmt, syn::Stmt, Expr) {
        self.0 += 1;
        let at = format_ident!("__mochi_selected{}", self.0, span = m.method.span());
        let (v, k) = (&m.receiver, &m.args[0]);
        let mut call = m.clone();
        call.args[0] = syn::parse_quote!(#at);
        (
            syn::parse_quote!(let #at: usize = #k;),
            syn::parse_quote!(#call;),
            syn::parse_quote!(#v[#at]),
        )
    }
}

impl VisitMut for SelectedElements {
    // `*v.select_nth_…(k, cmp).1` → `{ let at = k; v.select_nth_…(at, cmp); v[at] }`.
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        syn::visit_mut::visit_expr_mut(self, e);
        let Expr::Unary(u) = e else { return };
        if !matches!(u.op, syn::UnOp::Deref(_)) {
            return;
        }
        let Expr::Field(f) = unparen(&u.expr) else {
            return;
        };
        if !matches!(&f.member, syn::Member::Unnamed(i) if i.index == 1) {
            return;
        }
        let Some(m) = Self::selection(&f.base).cloned() else {
            return;
        };
        let (at, call, element) = self.split(&m);
        *e = syn::parse_quote_spanned!(m.method.span()=> { #at #call #element });
    }

    fn visit_expr_closure_mut(&mut self, _: &mut syn::ExprClosure) {}

    // `let (_, m, _) = v.select_nth_…(k, cmp);` → `let at = k; v.select_nth_…(at, cmp);
    // let m = &mut v[at];`.
    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        syn::visit_mut::visit_block_mut(self, b);
        let mut out = Vec::with_capacity(b.stmts.len());
        for st in std::mem::take(&mut b.stmts) {
            if let syn::Stmt::Local(l) = &st {
                let middle = match &l.pat {
                    Pat::Tuple(t) if t.elems.len() == 3 => match &t.elems[1] {
                        Pat::Ident(i) if i.by_ref.is_none() && i.subpat.is_none() => {
                            Some(i.ident.clone())
                        }
                        _ => None,
                    },
                    _ => None,
                };
                let init = l.init.as_ref().filter(|i| i.diverge.is_none());
                let selected = init.and_then(|i| Self::selection(&i.expr)).cloned();
                if let (Some(name), Some(m)) = (middle, selected) {
                    let (at, call, element) = self.split(&m);
                    out.extend([at, call, syn::parse_quote!(let #name = &mut #element;)]);
                    continue;
                }
            }
            out.push(st);
        }
        b.stmts = out;
    }
}
