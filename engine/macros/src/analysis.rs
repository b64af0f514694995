//! The analysis stage of `#[differentiable]`: the parameters and the result, the
//! function's float type, the body rewritten into the forms the lowering reverses
//! (`desugar`), and the activity of every name (which carry a derivative) — computed
//! once, before lowering.

use crate::activity::{self, type_is_inactive, type_is_ref};
use crate::lower::ParamSpec;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use std::collections::HashSet;
use syn::{FnArg, ItemFn, Pat, ReturnType, Type};

/// What the lowering and the emission need to know of a function.
pub struct Analysis {
    /// The parameters: name, type, and `mut` on a by-value binding (`self` of a method
    /// included, as the parameter `self`).
    pub params: Vec<(syn::Ident, Type, bool)>,
    /// The result type (`()` when none is written).
    pub ret_ty: Type,
    /// `f64` or `f32` when the signature names only one, or a twin's scalar parameter.
    pub float_ty: Option<syn::Ident>,
    /// The names that carry a derivative in `body`.
    pub active: HashSet<String>,
    /// The body as the lowering sees it (desugared).
    pub body: syn::Block,
    /// How each parameter enters the lowering.
    pub specs: Vec<ParamSpec>,
    /// The names of the parameters' cotangent accumulators (`__mochi_dp0`, …).
    pub d_idents: Vec<syn::Ident>,
    /// The body calls other functions by path (`helper(x)`, `g::gradient(x)`,
    /// `Self::m(self, ..)`) inside a loop or a closure.
    pub calls_in_loops: bool,
    /// Bindings whose type is a struct of the user's (a parameter `m: &Linear`, a local
    /// `let p = Point { .. };`), with that type: `m.predict(x)` and `Linear::predict(m,
    /// x)` call the method's derived rule.
    pub receivers: std::collections::HashMap<String, crate::desugar::Receiver>,
}

/// Analyses `func` (its signature already validated).
/// What the body of a method taking `mut self` by value calls its receiver (see
/// [`analyse`]).
const THIS: &str = "__mochi_this";

pub fn analyse(func: &ItemFn) -> Analysis {
    let mut params = Vec::new(); // (ident, type, mutability)
    for a in &func.sig.inputs {
        let pt = match a {
            FnArg::Typed(pt) => pt,
            // A method's receiver: the parameter `self` of type `&Self` (`&mut Self`, `Self`).
            FnArg::Receiver(r) => {
                let by_value_mut = r.reference.is_none() && r.mutability.is_some();
                params.push((
                    syn::Ident::new("self", proc_macro2::Span::call_site()),
                    (*r.ty).clone(),
                    by_value_mut,
                ));
                continue;
            }
        };
        let Pat::Ident(pi) = &*pt.pat else {
            unreachable!("checked by valid")
        };
        params.push((pi.ident.clone(), (*pt.ty).clone(), pi.mutability.is_some()));
    }
    let ret_ty: Type = match &func.sig.output {
        ReturnType::Default => syn::parse_quote!(()),
        ReturnType::Type(_, t) => (**t).clone(),
    };
    // Activity: parameters of float-carrying types, then a fixpoint over the body.
    // A parameter that the body shadows before any other use by a value that carries
    // no derivative (`let data = no_grad(data);`) is inactive: the name is
    // flow-insensitive here, and the shadow is the only binding the body reads.
    let mut active: HashSet<String> = params
        .iter()
        .filter(|(i, t, _)| !type_is_inactive(t) && !shadowed_by_inactive(&func.block, i))
        .map(|(i, _, _)| i.to_string())
        .collect();
    // The derived rule works on a rewritten copy of the body (`mem::swap`, `iter_mut`
    // loops); the primal is emitted as written.
    // A twin's scalar is its float type: literals the derivation writes become
    // `lit::<T>(..)`.
    // So is a generic function's scalar parameter (`T: Real`, `T: Float`): the sum
    // that `x.iter().map(..).sum()` becomes starts at `lit::<T>(0.0)`.
    let float_ty = match func.sig.generics.type_params().next() {
        Some(t) if t.ident == crate::twin::PARAM => Some(t.ident.clone()),
        Some(t) if crate::generics::is_scalar_param(&func.sig.generics, t) => Some(t.ident.clone()),
        _ => signature_float_type(&func.sig),
    };
    let mut written_active = active.clone();
    // `azip!` is a `Zip` the activity analysis can read once written as one.
    activity::analyse(
        &crate::desugar::with_azip_expanded(&func.block),
        &mut written_active,
    );
    let array_ranks: std::collections::HashMap<String, &str> = params
        .iter()
        .filter_map(|(i, t, _)| Some((i.to_string(), crate::desugar::array_rank(t)?)))
        .collect();
    let inactive_params: HashSet<String> = params
        .iter()
        .filter(|(i, _, _)| !written_active.contains(&i.to_string()))
        .map(|(i, _, _)| i.to_string())
        .collect();
    let mut receivers = std::collections::HashMap::new();
    for (i, t, _) in &params {
        crate::iterchain::note_linear_seq(&i.to_string(), crate::iterchain::linear_type(t));
        if let Some(r) = crate::desugar::Receiver::of_param(t) {
            receivers.insert(i.to_string(), r);
        }
        // (`pts: &[V2]`: a sequence of the user's structs, of a type known by its name.)
        let elements = crate::desugar::Receiver::user_elements(t);
        let users = elements.is_some();
        crate::iterchain::note_struct_seq_type(&i.to_string(), elements);
        if users || crate::desugar::mirror_elements(t) || crate::desugar::tuple_elements(t) {
            crate::iterchain::note_struct_seq(&i.to_string(), true);
        }
    }
    // A `mut` parameter taken by value is moved into a local first: a write to it in the
    // body would otherwise be a write to the caller's accumulator, which already holds
    // the cotangent of the caller's other reads of the argument (`mut x: f64`, `mut a:
    // Acc`), and a `Vec` may grow (`v.push(x)`), a local's cotangent following its
    // length where a parameter's is the length it came in with. So is a `mut` parameter
    // lent `&mut` (`bump(&mut a, x)`), whose callee's pullback takes its cotangent.
    let mut block = func.block.as_ref().clone();
    let grown: Vec<&syn::Ident> = params
        .iter()
        .filter(|(i, t, m)| {
            *m && i != "self" && (!matches!(t, syn::Type::Reference(_)) || lent_mut(&func.block, i))
        })
        .map(|(i, _, _)| i)
        .collect();
    if !grown.is_empty() {
        let lets: Vec<syn::Stmt> = grown
            .iter()
            .map(|i| syn::parse_quote!(let mut #i = #i;))
            .collect();
        block.stmts.splice(0..0, lets);
    }
    // `mut self` taken by value, likewise: moved into a local of another name (`self`
    // cannot be bound by `let`), which the body reads in its place.
    if params
        .iter()
        .any(|(i, t, m)| *m && i == "self" && !matches!(t, syn::Type::Reference(_)))
    {
        let this = syn::Ident::new(THIS, proc_macro2::Span::call_site());
        let from = syn::Ident::new("self", proc_macro2::Span::call_site());
        syn::visit_mut::VisitMut::visit_block_mut(
            &mut crate::desugar::RenameIdents(&[(from, this.clone())]),
            &mut block,
        );
        block
            .stmts
            .insert(0, syn::parse_quote!(let mut #this = self;));
        if let Some(r) = receivers.get("self").cloned() {
            receivers.insert(THIS.to_string(), r);
        }
    }
    // `b: &mut Basin`, `v: &mut [f64]`: a call given one as it is may write it.
    let lent_params: HashSet<String> = params
        .iter()
        .filter(|(_, t, _)| matches!(t, syn::Type::Reference(r) if r.mutability.is_some()))
        .map(|(i, _, _)| i.to_string())
        .collect();
    // `out: &mut Vec<f64>`: a buffer lent whole, whose length the function may change.
    let lent_vecs: HashSet<String> = params
        .iter()
        .filter(|(_, t, _)| {
            matches!(t, syn::Type::Reference(r) if r.mutability.is_some()
            && matches!(&*r.elem, syn::Type::Path(p) if p.qself.is_none()
                && p.path.segments.last().is_some_and(|s| s.ident == "Vec")))
        })
        .map(|(i, _, _)| i.to_string())
        .collect();
    let body = crate::desugar::desugar(
        &block,
        float_ty.as_ref(),
        &written_active,
        Some(&ret_ty),
        &array_ranks,
        &crate::desugar::ParamKinds {
            inactive: inactive_params,
            lent: lent_params,
            lent_vecs,
        },
        &mut receivers,
    );
    // `MOCHI_DESUGAR=name`: the body as the passes before lowering leave it.
    if std::env::var("MOCHI_DESUGAR").is_ok_and(|v| func.sig.ident == v) {
        eprintln!("{}", quote::ToTokens::to_token_stream(&body));
    }
    activity::analyse(&body, &mut active);

    let assigned = assigned_names(&body);
    let d_idents: Vec<_> = (0..params.len())
        .map(|i| format_ident!("__mochi_dp{}", i))
        .collect();
    let specs: Vec<ParamSpec> = params
        .iter()
        .zip(&d_idents)
        .map(|((i, t, _), d)| ParamSpec {
            pat: syn::parse_quote!(#i),
            cot: quote!((*#d)),
            is_ref: type_is_ref(t),
            active: !type_is_inactive(t),
            recompute: type_is_inactive(t) && !type_is_ref(t) && !assigned.contains(&i.to_string()),
            shared: shared_sequence(t),
        })
        .collect();
    let calls_in_loops = calls_in_loops(&body);
    Analysis {
        params,
        ret_ty,
        float_ty,
        active,
        body,
        specs,
        d_idents,
        calls_in_loops,
        receivers,
    }
}

/// Does `body` call a function by path (other than constructors, `Some(..)`,
/// `Type::new(..)`, and `no_grad`) inside a loop or a closure?
fn calls_in_loops(body: &syn::Block) -> bool {
    struct C {
        depth: usize,
        found: bool,
    }
    impl C {
        fn nested(&mut self, f: impl FnOnce(&mut Self)) {
            self.depth += 1;
            f(self);
            self.depth -= 1;
        }
    }
    impl<'ast> syn::visit::Visit<'ast> for C {
        fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
            if let syn::Expr::Path(p) = &*c.func {
                let segs: Vec<String> = crate::rewrite::path_segments(&p.path);
                let last = segs.last().map(String::as_str).unwrap_or("");
                let constructor = last.starts_with(|ch: char| ch.is_uppercase())
                    || segs.len() >= 2
                        && segs[segs.len() - 2] != "Self"
                        && segs[segs.len() - 2].starts_with(|ch: char| ch.is_uppercase());
                if self.depth > 0 && !constructor && !matches!(last, "no_grad" | "drop") {
                    self.found = true;
                }
            }
            syn::visit::visit_expr_call(self, c);
        }
        fn visit_expr_for_loop(&mut self, e: &'ast syn::ExprForLoop) {
            self.nested(|s| syn::visit::visit_expr_for_loop(s, e));
        }
        fn visit_expr_while(&mut self, e: &'ast syn::ExprWhile) {
            self.nested(|s| syn::visit::visit_expr_while(s, e));
        }
        fn visit_expr_loop(&mut self, e: &'ast syn::ExprLoop) {
            self.nested(|s| syn::visit::visit_expr_loop(s, e));
        }
        fn visit_expr_closure(&mut self, e: &'ast syn::ExprClosure) {
            self.nested(|s| syn::visit::visit_expr_closure(s, e));
        }
    }
    let mut c = C {
        depth: 0,
        found: false,
    };
    syn::visit::Visit::visit_block(&mut c, body);
    c.found
}
/// Whether the body lends `name` as `&mut` (`g(&mut a)`): a `mut` parameter lent so is
/// moved into a local first, whose cotangent the callee's pullback may read and reset,
/// while the parameter's is the caller's accumulator, which must only be added to.
fn lent_mut(block: &syn::Block, name: &syn::Ident) -> bool {
    struct L<'a>(&'a syn::Ident, bool);
    impl<'ast> syn::visit::Visit<'ast> for L<'_> {
        fn visit_expr_reference(&mut self, r: &'ast syn::ExprReference) {
            if r.mutability.is_some() && activity::root_name(&r.expr).is_some_and(|n| *self.0 == n)
            {
                self.1 = true;
            }
            syn::visit::visit_expr_reference(self, r);
        }
    }
    let mut l = L(name, false);
    syn::visit::Visit::visit_block(&mut l, block);
    l.1
}

/// Names assigned anywhere in the body (such parameters cannot be recomputed).
pub(crate) fn assigned_names(block: &syn::Block) -> HashSet<String> {
    struct V(HashSet<String>);
    impl<'ast> syn::visit::Visit<'ast> for V {
        fn visit_expr_assign(&mut self, a: &'ast syn::ExprAssign) {
            if let Some(p) = crate::lower::Place::parse(&a.left) {
                self.0.insert(p.root.to_string());
            }
            syn::visit::visit_expr_assign(self, a);
        }
        fn visit_expr_binary(&mut self, b: &'ast syn::ExprBinary) {
            use syn::BinOp::*;
            if matches!(
                b.op,
                AddAssign(_)
                    | SubAssign(_)
                    | MulAssign(_)
                    | DivAssign(_)
                    | RemAssign(_)
                    | BitAndAssign(_)
                    | BitOrAssign(_)
                    | BitXorAssign(_)
                    | ShlAssign(_)
                    | ShrAssign(_)
            ) {
                if let Some(p) = crate::lower::Place::parse(&b.left) {
                    self.0.insert(p.root.to_string());
                }
            }
            syn::visit::visit_expr_binary(self, b);
        }
    }
    let mut v = V(HashSet::new());
    syn::visit::Visit::visit_block(&mut v, block);
    v.0
}

/// `f64` or `f32` when the signature mentions exactly one of them.
pub fn signature_float_type(sig: &syn::Signature) -> Option<syn::Ident> {
    fn walk(ts: TokenStream, seen: &mut HashSet<String>) {
        for t in ts {
            match t {
                proc_macro2::TokenTree::Ident(i) if i == "f64" || i == "f32" => {
                    seen.insert(i.to_string());
                }
                proc_macro2::TokenTree::Group(g) => walk(g.stream(), seen),
                _ => {}
            }
        }
    }
    let mut seen = HashSet::new();
    walk(quote!(#sig), &mut seen);
    if seen.len() == 1 {
        seen.into_iter().next().map(|s| format_ident!("{}", s))
    } else {
        None
    }
}

/// `&[T]` or `&Vec<T>`: a sequence borrowed shared, indexed by `usize`.
fn shared_sequence(t: &syn::Type) -> bool {
    let syn::Type::Reference(r) = t else {
        return false;
    };
    if r.mutability.is_some() {
        return false;
    }
    match &*r.elem {
        syn::Type::Slice(_) => true,
        syn::Type::Path(p) => {
            p.qself.is_none() && p.path.segments.last().is_some_and(|s| s.ident == "Vec")
        }
        _ => false,
    }
}

/// Whether a macro inside `e` is given `name`.
fn macro_given(e: &syn::Expr, name: &str) -> bool {
    struct Given<'a>(&'a str, bool);
    impl<'ast> syn::visit::Visit<'ast> for Given<'_> {
        fn visit_macro(&mut self, m: &'ast syn::Macro) {
            self.1 |= activity::tokens_mention(&m.tokens, &|i| *i == self.0);
        }
    }
    let mut g = Given(name, false);
    syn::visit::Visit::visit_expr(&mut g, e);
    g.1
}

/// Whether the body's first mention of `name` is a top-level `let name = e;` whose
/// value carries no derivative even with `name` active (`no_grad(name)`, a length).
fn shadowed_by_inactive(block: &syn::Block, name: &syn::Ident) -> bool {
    let key = name.to_string();
    let with_name: HashSet<String> = [key.clone()].into();
    for stmt in &block.stmts {
        if let syn::Stmt::Local(l) = stmt {
            let pat = match &l.pat {
                syn::Pat::Type(t) => &*t.pat,
                p => p,
            };
            if let (syn::Pat::Ident(p), Some(init)) = (pat, &l.init) {
                if p.ident == *name && p.by_ref.is_none() && init.diverge.is_none() {
                    // The whole analysis, not `expr_is_active` alone: a block's own
                    // bindings (`let x = { let t = x; t };`) carry what they are given.
                    let probe = syn::Ident::new("__mochi_shadow_probe", name.span());
                    let init = &init.expr;
                    let block: syn::Block = syn::parse_quote!({ let #probe = #init; });
                    let mut active = with_name.clone();
                    activity::analyse(&block, &mut active);
                    // (A macro given the name, `dbg!(x)`, may return it.)
                    return !active.contains(&probe.to_string())
                        && !activity::expr_is_active(init, &with_name)
                        && !macro_given(init, &key);
                }
            }
        }
        if activity::tokens_mention(&quote::quote!(#stmt), &|i| *i == key) {
            return false;
        }
    }
    false
}
