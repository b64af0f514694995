//! Functions that take a closure (`f: impl Fn(f64) -> f64`, `f: F` with `F: Fn(..)`,
//! `f: &dyn Fn(..)`, `f: fn(f64) -> f64`), inlined into the marked functions that call
//! them.
//!
//! A closure's body is visible only where it is written, so a function taking one has no
//! rule of its own. `#[differentiable]` on it writes the function as it is and, in a
//! module of the same name, a `macro_rules!` holding its source. A marked function that
//! passes it a closure (a literal, a local closure, a function's name) asks that macro
//! for the source: its first expansion writes the function as written and the call
//! `integrate::__mochi_closure_callee! { [options] item }`, which expands to the
//! attribute again with the source among its options (`__source { fn integrate .. }`).
//! The next expansion inlines the call — the arguments bound to the callee's parameters,
//! every name the callee binds renamed apart, its body a block (`return` a labelled
//! `break`) — and derives the result; the local-closure inlining of the desugaring then
//! puts the closure's body where the callee calls it.

use proc_macro2::{Group, Span, TokenStream, TokenTree};
use quote::{format_ident, quote};
use std::collections::HashSet;
use syn::visit_mut::VisitMut;
use syn::{Expr, FnArg, ItemFn, Pat};

/// What a closure parameter is called with: its inputs' types, when its type names them.
struct ClosureParam {
    inputs: Option<Vec<syn::Type>>,
    mutable: bool,
}

/// The closure trait among `bounds` (`Fn(f64) -> f64`): its inputs, and whether it is
/// `FnMut`.
fn from_bounds<'a>(bounds: impl Iterator<Item = &'a syn::TypeParamBound>) -> Option<ClosureParam> {
    for b in bounds {
        let syn::TypeParamBound::Trait(t) = b else {
            continue;
        };
        let Some(last) = t.path.segments.last() else {
            continue;
        };
        let kind = last.ident.to_string();
        if !matches!(kind.as_str(), "Fn" | "FnMut" | "FnOnce") {
            continue;
        }
        let inputs = match &last.arguments {
            syn::PathArguments::Parenthesized(p) => Some(p.inputs.iter().cloned().collect()),
            _ => None,
        };
        return Some(ClosureParam {
            inputs,
            mutable: kind == "FnMut",
        });
    }
    None
}

/// Whether a parameter of type `ty` in `sig` is a closure, and how it is called.
fn closure_param(sig: &syn::Signature, ty: &syn::Type) -> Option<ClosureParam> {
    match ty {
        syn::Type::Reference(r) => closure_param(sig, &r.elem),
        syn::Type::Paren(p) => closure_param(sig, &p.elem),
        syn::Type::Group(g) => closure_param(sig, &g.elem),
        syn::Type::ImplTrait(i) => from_bounds(i.bounds.iter()),
        syn::Type::TraitObject(t) => from_bounds(t.bounds.iter()),
        syn::Type::BareFn(f) => Some(ClosureParam {
            inputs: Some(f.inputs.iter().map(|a| a.ty.clone()).collect()),
            mutable: false,
        }),
        syn::Type::Path(p) if p.qself.is_none() => {
            let id = p.path.get_ident()?;
            let tp = sig.generics.type_params().find(|t| t.ident == *id)?;
            if let Some(c) = from_bounds(tp.bounds.iter()) {
                return Some(c);
            }
            let w = sig.generics.where_clause.as_ref()?;
            w.predicates.iter().find_map(|p| match p {
                syn::WherePredicate::Type(t)
                    if matches!(&t.bounded_ty, syn::Type::Path(q) if q.path.is_ident(id)) =>
                {
                    from_bounds(t.bounds.iter())
                }
                _ => None,
            })
        }
        _ => None,
    }
}

/// Whether `func` takes a closure (a free function only: a method taking one is refused
/// by the signature check).
pub fn takes_closure(func: &ItemFn) -> bool {
    func.sig.receiver().is_none()
        && func.sig.inputs.iter().any(|a| match a {
            FnArg::Typed(pt) => closure_param(&func.sig, &pt.ty).is_some(),
            FnArg::Receiver(_) => false,
        })
}

/// The name of the macro in a closure-taking function's module that hands its source to
/// its callers.
const SOURCE_MACRO: &str = "__mochi_closure_callee";

/// `#[differentiable]` on a function taking a closure: the function as written and the
/// macro that gives its source to the marked functions calling it.
pub fn callee(func: &ItemFn) -> syn::Result<TokenStream> {
    let sig = &func.sig;
    for a in &sig.inputs {
        let FnArg::Typed(pt) = a else { continue };
        if closure_param(sig, &pt.ty).is_some() && !matches!(&*pt.pat, Pat::Ident(_)) {
            return Err(syn::Error::new_spanned(
                &pt.pat,
                "#[differentiable]: bind a closure argument to a name (`f: impl Fn(f64) -> f64`)",
            ));
        }
    }
    for tp in sig.generics.type_params() {
        let is_closure = crate::valid::fn_bound(tp.bounds.iter())
            || crate::valid::where_fn_bound(sig, &tp.ident);
        if !is_closure {
            let msg = format!(
                "#[differentiable]: `{}` takes a closure, so it is inlined where a marked function calls it, with the types of its other arguments as written; write `{}` as the concrete type (`f64`, `&[f64]`, …)",
                sig.ident, tp.ident
            );
            return Err(syn::Error::new_spanned(tp, msg));
        }
    }
    if let Some(c) = sig.generics.const_params().next() {
        return Err(syn::Error::new_spanned(
            c,
            "#[differentiable]: a function taking a closure is inlined where it is called, and cannot have const parameters; take a slice",
        ));
    }
    if quote!(#func).into_iter().any(|t| has_dollar(&t)) {
        return Err(syn::Error::new_spanned(
            &sig.ident,
            "#[differentiable]: a function taking a closure cannot contain `$` (a `macro_rules!` of its own); move the macro out of it",
        ));
    }
    let name = &sig.ident;
    let vis = &func.vis;
    let mac = format_ident!("{}", SOURCE_MACRO);
    // A marked function's call that passes no closure the macro can see (`integrate(f,
    // ..)` of a closure held otherwise) reaches for `integrate::rrule`: a stand-in
    // whose bound says what to pass.
    let message = format!(
        "mochi: `{name}` takes a closure, and is inlined where a marked function calls it, so the closure must be visible at the call"
    );
    let label = format!("`{name}` is inlined here");
    let note = "pass a closure written at the call (`|t| ..`), a local closure (`let g = |t| ..;`, then `g` or `&g`) or a function's name";
    let arity = sig.inputs.len();
    let rest = (1..arity).map(|_| quote!(_: impl ::core::marker::Sized));
    let ret = match &sig.output {
        syn::ReturnType::Type(_, t) if !has_impl(t) && sig.generics.params.is_empty() => {
            quote!(#t)
        }
        syn::ReturnType::Type(..) => quote!(f64),
        syn::ReturnType::Default => quote!(()),
    };
    Ok(quote! {
        #func
        #[doc(hidden)]
        #[allow(non_snake_case, unused_imports, unused_macros)]
        #vis mod #name {
            macro_rules! #mac {
                ([$($o:tt)*] $($item:tt)*) => {
                    #[::mochi::differentiable($($o)* __source { #func },)]
                    $($item)*
                };
            }
            pub(crate) use #mac;
            #[diagnostic::on_unimplemented(message = #message, label = #label, note = #note)]
            pub trait TakesAClosure {}
            // (The pullback is left to inference, so that the bound's message comes
            // alone: see `rewrite::callee`.)
            pub fn rrule<__MochiPullback>(_: impl TakesAClosure, #(#rest),*) -> (#ret, __MochiPullback) {
                ::core::unreachable!()
            }
            // (What `unmarked_check` finds when the function is marked.)
            pub const fn __mochi_takes_closure<T>() {}
        }
    })
}

fn has_dollar(t: &TokenTree) -> bool {
    match t {
        TokenTree::Punct(p) => p.as_char() == '$',
        TokenTree::Group(g) => g.stream().into_iter().any(|t| has_dollar(&t)),
        _ => false,
    }
}

/// The tokens with every span resolved where this expansion was called: in an
/// expansion asked for by a callee's macro, the user's tokens, the callee's and the
/// derived code then see the same names.
pub fn respan(ts: TokenStream) -> TokenStream {
    let to = Span::call_site();
    ts.into_iter()
        .map(|t| match t {
            TokenTree::Group(g) => {
                let mut n = Group::new(g.delimiter(), respan(g.stream()));
                n.set_span(g.span().resolved_at(to));
                TokenTree::Group(n)
            }
            TokenTree::Ident(mut i) => {
                i.set_span(i.span().resolved_at(to));
                TokenTree::Ident(i)
            }
            TokenTree::Punct(mut p) => {
                p.set_span(p.span().resolved_at(to));
                TokenTree::Punct(p)
            }
            TokenTree::Literal(mut l) => {
                l.set_span(l.span().resolved_at(to));
                TokenTree::Literal(l)
            }
        })
        .collect()
}

/// What inlining the closure-taking calls of a function gave.
pub enum Outcome {
    /// No call passes a closure.
    Unchanged,
    /// Every such call inlined.
    Inlined(Box<ItemFn>),
    /// A callee whose source is not among the ones given: the path it is called by.
    Need(syn::Path),
}

/// Inlines the calls of `func` that pass a closure to one of `sources`, until none is
/// left; a call to a function not among them asks for its source.
pub fn inline_calls(func: &ItemFn, sources: &[ItemFn]) -> syn::Result<Outcome> {
    let mut f = func.clone();
    let mut changed = false;
    let mut counter = 0;
    // (Each round inlines the calls written in the body so far; a callee that passes
    // its closure on is inlined in the next. A function that passes a closure to
    // itself would never end.)
    for _ in 0..16 {
        let mut calls = Calls {
            sources,
            bound: bound_names(&f),
            closures: crate::twin::closure_locals(&f.block),
            need: None,
            inlined: 0,
            counter: &mut counter,
            error: None,
        };
        calls.visit_block_mut(&mut f.block);
        if let Some(e) = calls.error {
            return Err(e);
        }
        if calls.inlined == 0 {
            if let Some(p) = calls.need {
                return Ok(Outcome::Need(p));
            }
            return Ok(if changed {
                Outcome::Inlined(Box::new(f))
            } else {
                Outcome::Unchanged
            });
        }
        changed = true;
    }
    Err(syn::Error::new_spanned(
        &func.sig.ident,
        "#[differentiable]: the functions this one passes closures to call each other with closures more than 16 deep (a recursion?); a function taking a closure is inlined where it is called, so it cannot call itself",
    ))
}

/// The names `func` binds: its parameters and every pattern in its body.
fn bound_names(func: &ItemFn) -> HashSet<String> {
    struct B(HashSet<String>);
    impl<'ast> syn::visit::Visit<'ast> for B {
        fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
            self.0.insert(p.ident.to_string());
            syn::visit::visit_pat_ident(self, p);
        }
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut b = B(HashSet::new());
    for a in &func.sig.inputs {
        if let FnArg::Typed(pt) = a {
            syn::visit::Visit::visit_pat(&mut b, &pt.pat);
        }
    }
    syn::visit::Visit::visit_block(&mut b, &func.block);
    b.0
}

/// The first segments of paths into `std` and the crates mochi knows (and the float
/// types' associated functions): never a user's function.
const LIBRARY_ROOTS: &[&str] = &[
    "std",
    "core",
    "alloc",
    "mochi",
    "ndarray",
    "nalgebra",
    "num_traits",
    "f64",
    "f32",
];

/// Functions of `std` and of the crates mochi knows that take closures; their calls are
/// the macro's own forms, never a user's function to inline.
const NOT_USER: &[&str] = &[
    "no_grad",
    "from_fn",
    "successors",
    "repeat_with",
    "once_with",
    "drop",
    "identity",
    "black_box",
    "min_by",
    "max_by",
    "min_by_key",
    "max_by_key",
];

struct Calls<'a> {
    sources: &'a [ItemFn],
    bound: HashSet<String>,
    closures: HashSet<String>,
    need: Option<syn::Path>,
    inlined: usize,
    counter: &'a mut usize,
    error: Option<syn::Error>,
}

/// How a closure argument is given.
enum ClosureArg {
    /// A closure written at the call (`|t| ..`, `&|t| ..`).
    Literal(syn::ExprClosure),
    /// A local closure's name (`g`, `&g`).
    Local(syn::Ident),
    /// A function's path (`square`, `f64::sin`).
    Function(syn::Path),
}

impl Calls<'_> {
    /// The path of a call that may be to a user's closure-taking function.
    fn user_path(&self, c: &syn::ExprCall) -> Option<syn::Path> {
        let Expr::Path(p) = &*c.func else { return None };
        if p.qself.is_some() {
            return None;
        }
        let segs = &p.path.segments;
        let last = segs.last()?.ident.to_string();
        if !last.starts_with(|c: char| c.is_lowercase() || c == '_') {
            return None;
        }
        let first = segs.first()?.ident.to_string();
        if LIBRARY_ROOTS.contains(&first.as_str())
            || segs
                .iter()
                .take(segs.len() - 1)
                .any(|s| s.ident.to_string().starts_with(char::is_uppercase))
        {
            return None;
        }
        if segs.len() == 1
            && (NOT_USER.contains(&last.as_str())
                || self.bound.contains(&last)
                || self.closures.contains(&last))
        {
            return None;
        }
        let mut path = p.path.clone();
        for s in path.segments.iter_mut() {
            s.arguments = syn::PathArguments::None;
        }
        Some(path)
    }

    fn closure_arg(&self, e: &Expr) -> Option<ClosureArg> {
        match e {
            Expr::Closure(c) => Some(ClosureArg::Literal(c.clone())),
            Expr::Reference(r) => self.closure_arg(&r.expr),
            Expr::Paren(p) => self.closure_arg(&p.expr),
            Expr::Path(p) if p.qself.is_none() => {
                if let Some(id) = p.path.get_ident() {
                    let s = id.to_string();
                    if self.closures.contains(&s) {
                        return Some(ClosureArg::Local(id.clone()));
                    }
                    // A name nothing here binds, written as a function's: a function.
                    if !self.bound.contains(&s)
                        && s != "self"
                        && s.starts_with(|c: char| c.is_lowercase())
                    {
                        return Some(ClosureArg::Function(p.path.clone()));
                    }
                    return None;
                }
                let segs = &p.path.segments;
                let last = segs.last()?.ident.to_string();
                if segs.len() == 2
                    && matches!(segs[0].ident.to_string().as_str(), "f64" | "f32")
                    && last.starts_with(char::is_lowercase)
                {
                    return Some(ClosureArg::Function(p.path.clone()));
                }
                None
            }
            _ => None,
        }
    }

    fn inline(
        &mut self,
        src: &ItemFn,
        call: &syn::ExprCall,
        path: &syn::Path,
    ) -> syn::Result<Expr> {
        let name = &src.sig.ident;
        if src.sig.inputs.len() != call.args.len() {
            return Err(syn::Error::new_spanned(
                call,
                format!(
                    "`{name}` takes {} arguments, and this call gives {}",
                    src.sig.inputs.len(),
                    call.args.len()
                ),
            ));
        }
        *self.counter += 1;
        let k = *self.counter;
        // Every name the callee binds, renamed apart from the caller's (a closure
        // parameter below, to what it is given).
        let closure_params: HashSet<String> = src
            .sig
            .inputs
            .iter()
            .filter_map(|a| match a {
                FnArg::Typed(pt) if closure_param(&src.sig, &pt.ty).is_some() => match &*pt.pat {
                    Pat::Ident(pi) => Some(pi.ident.to_string()),
                    _ => None,
                },
                _ => None,
            })
            .collect();
        let mut src_bound: Vec<String> = bound_names(src)
            .into_iter()
            .filter(|n| !closure_params.contains(n))
            .collect();
        src_bound.sort();
        let mut renames: Vec<(syn::Ident, syn::Ident)> = src_bound
            .iter()
            .map(|n| {
                let fresh = format_ident!("__mochi_{}{}_{}", name, k, n);
                (syn::Ident::new(n, Span::call_site()), fresh)
            })
            .collect();
        let generic: HashSet<String> = src
            .sig
            .generics
            .type_params()
            .map(|t| t.ident.to_string())
            .collect();
        let mut lets: Vec<syn::Stmt> = Vec::new();
        for (input, arg) in src.sig.inputs.iter().zip(call.args.iter()) {
            let FnArg::Typed(pt) = input else {
                return Err(syn::Error::new_spanned(input, "a method taking a closure"));
            };
            if let Some(cp) = closure_param(&src.sig, &pt.ty) {
                let Pat::Ident(pi) = &*pt.pat else {
                    return Err(syn::Error::new_spanned(
                        &pt.pat,
                        "bind a closure argument to a name",
                    ));
                };
                let fresh = format_ident!("__mochi_{}{}_{}", name, k, pi.ident);
                let closure: syn::ExprClosure = match self.closure_arg(arg) {
                    Some(ClosureArg::Local(id)) => {
                        // The callee's calls become calls of the caller's local closure,
                        // which the desugaring inlines.
                        renames.push((pi.ident.clone(), id));
                        continue;
                    }
                    Some(ClosureArg::Literal(c)) => c,
                    Some(ClosureArg::Function(path)) => {
                        let Some(inputs) = &cp.inputs else {
                            return Err(syn::Error::new_spanned(
                                arg,
                                format!("mochi: to pass a function by its name to `{name}`, its parameter's type names the closure's arguments (`impl Fn(f64) -> f64`); or pass a closure (`|t| f(t)`)"),
                            ));
                        };
                        let ps: Vec<syn::Ident> = (0..inputs.len())
                            .map(|i| format_ident!("__mochi_a{}", i))
                            .collect();
                        syn::parse_quote!(|#(#ps: #inputs),*| #path(#(#ps),*))
                    }
                    None => {
                        return Err(syn::Error::new_spanned(
                            arg,
                            format!("mochi: `{name}` takes a closure, and is inlined where it is called; pass it a closure written here (`|t| ..`), a local closure (`let g = |t| ..;` then `g` or `&g`) or a function's name"),
                        ));
                    }
                };
                // The parameter's types written on the closure's untyped parameters
                // (`|v| (k * v).sin()` given to `&dyn Fn(f64) -> f64`): the closure,
                // bound by a `let`, no longer takes them from the callee.
                let mut closure = closure;
                if let Some(inputs) = &cp.inputs {
                    if inputs.len() == closure.inputs.len() {
                        for (p, t) in closure.inputs.iter_mut().zip(inputs) {
                            if !matches!(p, Pat::Type(_)) && !mentions_any(t, &generic) {
                                *p = Pat::Type(syn::PatType {
                                    attrs: Vec::new(),
                                    pat: Box::new(p.clone()),
                                    colon_token: Default::default(),
                                    ty: Box::new(t.clone()),
                                });
                            }
                        }
                    }
                }
                let mu = (cp.mutable && closure.capture.is_none()).then(|| quote!(mut));
                renames.push((pi.ident.clone(), fresh.clone()));
                lets.push(syn::parse_quote!(let #mu #fresh = #closure;));
                continue;
            }
            let mut pat = (*pt.pat).clone();
            Shorthands.visit_pat_mut(&mut pat);
            crate::desugar::RenameIdents(&renames).visit_pat_mut(&mut pat);
            if mentions_any(&pt.ty, &generic) {
                lets.push(syn::parse_quote!(let #pat = #arg;));
            } else {
                let ty = &pt.ty;
                lets.push(syn::parse_quote!(let #pat: #ty = #arg;));
            }
        }
        let mut body = (*src.block).clone();
        Shorthands.visit_block_mut(&mut body);
        crate::desugar::RenameIdents(&renames).visit_block_mut(&mut body);
        MacroTokens(&renames).visit_block_mut(&mut body);
        // Called by a path (`quad::composite(..)`), the callee's own calls of the
        // functions beside it (`simpson(..)`) reach them by the same path.
        if path.segments.len() > 1 {
            let mut module = path.clone();
            module.segments.pop();
            let module: syn::Path = {
                let segs = module.segments.iter();
                let lead = module.leading_colon;
                syn::parse_quote!(#lead #(#segs)::*)
            };
            let bound: HashSet<String> = renames.iter().map(|(_, to)| to.to_string()).collect();
            ModulePrefix {
                module: &module,
                bound: &bound,
                own: name,
            }
            .visit_block_mut(&mut body);
        }
        let label = syn::Lifetime::new(&format!("'__mochi_{name}{k}"), Span::call_site());
        let mut returns = Returns {
            label: &label,
            found: false,
        };
        returns.visit_block_mut(&mut body);
        // The result's type, where the callee's signature writes it concretely: the
        // tail (often a chain ending in `collect()`) is bound with it, as the callee's
        // return type bound it.
        let ty = match &src.sig.output {
            syn::ReturnType::Type(_, ty) if !mentions_any(ty, &generic) && !has_impl(ty) => {
                Some(quote!(: #ty))
            }
            _ => None,
        };
        let ret = format_ident!("__mochi_{}{}_result", name, k);
        let mut stmts = body.stmts;
        if let Some(syn::Stmt::Expr(tail, None)) = stmts.last().cloned() {
            if !matches!(src.sig.output, syn::ReturnType::Default) {
                stmts.pop();
                stmts.push(syn::parse_quote!(let #ret #ty = #tail;));
                stmts.push(syn::Stmt::Expr(syn::parse_quote!(#ret), None));
            }
        }
        let expr: Expr = if returns.found {
            let outer = format_ident!("__mochi_{}{}_returned", name, k);
            syn::parse_quote!({ #(#lets)* let #outer #ty = #label: { #(#stmts)* }; #outer })
        } else {
            syn::parse_quote!({ #(#lets)* #(#stmts)* })
        };
        Ok(expr)
    }
}

impl VisitMut for Calls<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if self.error.is_some() {
            return;
        }
        if let Expr::Call(c) = e {
            // What `no_grad` is given runs as written, without a derivative.
            if matches!(&*c.func, Expr::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "no_grad"))
            {
                return;
            }
        }
        syn::visit_mut::visit_expr_mut(self, e);
        let Expr::Call(c) = e else { return };
        let Some(path) = self.user_path(c) else {
            return;
        };
        if !c.args.iter().any(|a| self.closure_arg(a).is_some()) {
            return;
        }
        let last = &path.segments.last().unwrap().ident;
        match self.sources.iter().find(|s| s.sig.ident == *last) {
            Some(src) => match self.inline(src, c, &path) {
                Ok(x) => {
                    *e = x;
                    self.inlined += 1;
                }
                Err(err) => self.error = Some(err),
            },
            None => {
                if self.need.is_none() {
                    self.need = Some(path);
                }
            }
        }
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// Whether `ty` names one of `names` (a type parameter of the callee).
fn mentions_any(ty: &syn::Type, names: &HashSet<String>) -> bool {
    quote!(#ty).into_iter().any(|t| mentions_ident(&t, names))
}

fn mentions_ident(t: &TokenTree, names: &HashSet<String>) -> bool {
    match t {
        TokenTree::Ident(i) => names.contains(&i.to_string()),
        TokenTree::Group(g) => g.stream().into_iter().any(|t| mentions_ident(&t, names)),
        TokenTree::Punct(p) => p.as_char() == '\'',
        TokenTree::Literal(_) => false,
    }
}

fn has_impl(ty: &syn::Type) -> bool {
    let mut s = HashSet::new();
    s.insert("impl".to_string());
    s.insert("dyn".to_string());
    mentions_any(ty, &s)
}

/// `P { x }` (a struct pattern's or literal's shorthand) as `P { x: x }`, so that the
/// binding can be renamed and the field keep its name.
struct Shorthands;

impl VisitMut for Shorthands {
    fn visit_field_pat_mut(&mut self, f: &mut syn::FieldPat) {
        if f.colon_token.is_none() && matches!(f.member, syn::Member::Named(_)) {
            f.colon_token = Some(Default::default());
        }
        syn::visit_mut::visit_field_pat_mut(self, f);
    }
}

/// The renames inside macros' arguments (`vec![x; n]`, `assert!(h > 0.0)`): identifiers
/// not after a `.` (a field or a method).
struct MacroTokens<'a>(&'a [(syn::Ident, syn::Ident)]);

impl MacroTokens<'_> {
    fn tokens(&self, ts: TokenStream) -> TokenStream {
        let mut out: Vec<TokenTree> = Vec::new();
        for t in ts {
            let after_dot = matches!(out.last(), Some(TokenTree::Punct(p)) if p.as_char() == '.');
            out.push(match t {
                TokenTree::Ident(i) if !after_dot => {
                    match self.0.iter().find(|(from, _)| *from == i) {
                        Some((_, to)) => {
                            let mut n = to.clone();
                            n.set_span(i.span());
                            TokenTree::Ident(n)
                        }
                        None => TokenTree::Ident(i),
                    }
                }
                TokenTree::Group(g) => {
                    let mut n = Group::new(g.delimiter(), self.tokens(g.stream()));
                    n.set_span(g.span());
                    TokenTree::Group(n)
                }
                other => other,
            });
        }
        out.into_iter().collect()
    }
}

impl VisitMut for MacroTokens<'_> {
    fn visit_macro_mut(&mut self, m: &mut syn::Macro) {
        m.tokens = self.tokens(std::mem::take(&mut m.tokens));
    }
}

/// `return e` as `break 'label e` (outside closures and items, whose `return`s are
/// their own).
struct Returns<'a> {
    label: &'a syn::Lifetime,
    found: bool,
}

impl VisitMut for Returns<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if let Expr::Return(r) = e {
            self.found = true;
            let label = self.label;
            let value = r.expr.take();
            *e = match value {
                Some(mut v) => {
                    self.visit_expr_mut(&mut v);
                    syn::parse_quote!(break #label #v)
                }
                None => syn::parse_quote!(break #label),
            };
            return;
        }
        syn::visit_mut::visit_expr_mut(self, e);
    }
    fn visit_expr_closure_mut(&mut self, _: &mut syn::ExprClosure) {}
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// The callee's calls of functions beside it (`g(..)`, `helpers::g(..)`) prefixed by the
/// module its caller reached it through (`quad::g(..)`).
struct ModulePrefix<'a> {
    module: &'a syn::Path,
    bound: &'a HashSet<String>,
    own: &'a syn::Ident,
}

impl VisitMut for ModulePrefix<'_> {
    fn visit_expr_call_mut(&mut self, c: &mut syn::ExprCall) {
        if let Expr::Path(p) = &mut *c.func {
            let segs = &p.path.segments;
            let first = segs
                .first()
                .map(|s| s.ident.to_string())
                .unwrap_or_default();
            let beside = p.qself.is_none()
                && p.path.leading_colon.is_none()
                && first.starts_with(|c: char| c.is_lowercase() || c == '_')
                && !matches!(first.as_str(), "crate" | "super" | "self" | "drop")
                && !LIBRARY_ROOTS.contains(&first.as_str())
                && !(segs.len() == 1 && (self.bound.contains(&first) || *self.own == first));
            if beside {
                let module = self.module;
                let rest = &p.path;
                p.path = syn::parse_quote!(#module::#rest);
            }
        }
        syn::visit_mut::visit_expr_call_mut(self, c);
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// Beside the request for a callee's source (`path::__mochi_closure_callee!`), which
/// fails with rustc's "function `plain` is not a crate or module" when `plain` is not
/// marked: a check whose message says so. `path` imported by name beats the glob of a
/// stand-in module `plain`, which only then provides the check, with a bound nothing
/// meets (as `rewrite::callee` does for calls).
/// `item`: a name for the check's constant (in an `impl`, a `const` has one).
pub fn unmarked_check(path: &syn::Path, item: Option<&syn::Ident>) -> TokenStream {
    let Some(last) = path.segments.last().map(|s| s.ident.clone()) else {
        return TokenStream::new();
    };
    let span = last.span();
    let message = format!(
        "mochi: `{last}` is given a closure by a marked function, so it must be `#[differentiable]` too"
    );
    let label = format!("`{last}` is not `#[differentiable]`");
    let note = format!(
        "mark `fn {last}` `#[differentiable]`: a function taking a closure is inlined where a marked function calls it, and the closure's captures carry the derivative"
    );
    let name = match item {
        Some(m) => format_ident!("__mochi_closure_check_{}", m),
        None => format_ident!("_"),
    };
    quote::quote_spanned!(span=>
        #[allow(non_upper_case_globals)]
        const #name: () = {
            #[allow(unused_imports)]
            use #path as __mochi_callee;
            {
                #[allow(unused_imports)]
                use __mochi_callee as #last;
                #[allow(non_snake_case, dead_code)]
                mod __mochi_unmarked {
                    pub mod #last {
                        #[diagnostic::on_unimplemented(message = #message, label = #label, note = #note)]
                        pub trait Differentiable {}
                        pub const fn __mochi_takes_closure<T: Differentiable>() {}
                    }
                }
                #[allow(unused_imports)]
                use __mochi_unmarked::*;
                #last::__mochi_takes_closure::<()>();
            }
        };
    )
}
