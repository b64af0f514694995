//! `#[differentiable]`: the function as written, plus a module of the same name with its
//! derived rule and the gradient functions.

use crate::lower::Lowerer;
use crate::valid;
use proc_macro2::TokenStream;
use quote::{format_ident, quote, ToTokens};
use std::collections::{HashMap, HashSet};
use syn::visit_mut::VisitMut;
use syn::{FnArg, ItemFn};

thread_local! {
    /// The signature of the generic form (twin) of the method last expanded, when it has
    /// one: `impl_block` gives the struct's mirror the method through it
    /// ([`mirror_method`]).
    static METHOD_TWIN: std::cell::RefCell<Option<syn::Signature>> =
        const { std::cell::RefCell::new(None) };
}

pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let item = elided_lifetime_named(item);
    let item = float_aliases(item);
    let item = named_params(item);
    let item = std_forms_named(item);
    match hoist_nested(&attr, &item) {
        Some(Ok((hoisted, item))) => {
            let rest = expand_one(attr, item);
            quote!(#hoisted #rest)
        }
        Some(Err((e, item))) => combine(e, item),
        None => expand_one(attr, item),
    }
}

/// A result borrowed from the one reference among the arguments, its lifetime elided
/// (`fn unpack(theta: &[f64]) -> (f64, &[f64])`): the lifetime named
/// (`fn unpack<'__mochi_l>(theta: &'__mochi_l [f64]) -> (f64, &'__mochi_l [f64])`), the
/// same signature, which the companions keep when they take more references (a
/// shadow's).
fn elided_lifetime_named(item: TokenStream) -> TokenStream {
    use syn::visit_mut::VisitMut;
    let Ok(mut func) = syn::parse2::<ItemFn>(item.clone()) else {
        return item;
    };
    if func.sig.receiver().is_some() {
        return item;
    }
    /// The lifetime positions of a type: elided references, `'_`, named lifetimes.
    struct Positions {
        elided: usize,
        named: Vec<syn::Lifetime>,
        set: Option<syn::Lifetime>,
    }
    impl Positions {
        /// Counting positions, and setting each elided one to `set` when it is given.
        fn new(set: Option<syn::Lifetime>) -> Self {
            Positions {
                elided: 0,
                named: Vec::new(),
                set,
            }
        }
    }
    impl VisitMut for Positions {
        fn visit_type_reference_mut(&mut self, r: &mut syn::TypeReference) {
            match &r.lifetime {
                None => {
                    self.elided += 1;
                    r.lifetime = self.set.clone();
                }
                Some(l) if l.ident == "_" => {
                    self.elided += 1;
                    if let Some(set) = &self.set {
                        r.lifetime = Some(set.clone());
                    }
                }
                Some(l) => self.named.push(l.clone()),
            }
            syn::visit_mut::visit_type_reference_mut(self, r);
        }
        fn visit_lifetime_mut(&mut self, l: &mut syn::Lifetime) {
            if l.ident == "_" {
                self.elided += 1;
                if let Some(set) = &self.set {
                    *l = set.clone();
                }
            } else {
                self.named.push(l.clone());
            }
        }
        // (Not the inside of `impl Fn(&f64) -> f64`, whose references are its own.)
        fn visit_type_bare_fn_mut(&mut self, _: &mut syn::TypeBareFn) {}
        fn visit_type_impl_trait_mut(&mut self, _: &mut syn::TypeImplTrait) {}
        fn visit_type_trait_object_mut(&mut self, _: &mut syn::TypeTraitObject) {}
    }
    let syn::ReturnType::Type(_, out) = &func.sig.output else {
        return item;
    };
    let mut o = Positions::new(None);
    o.visit_type_mut(&mut (**out).clone());
    if o.elided == 0 {
        return item;
    }
    let mut i = Positions::new(None);
    for a in &func.sig.inputs {
        if let FnArg::Typed(pt) = a {
            // (A view type, `ArrayView1<f64>`, hides a lifetime of its own.)
            let ty = &pt.ty;
            if quote!(#ty).to_string().contains("View") {
                return item;
            }
            i.visit_type_mut(&mut (*pt.ty).clone());
        }
    }
    let lifetime: syn::Lifetime = match (i.elided, i.named.as_slice()) {
        (1, []) => {
            let l: syn::Lifetime = syn::parse_quote!('__mochi_l);
            let mut set = Positions::new(Some(l.clone()));
            for a in func.sig.inputs.iter_mut() {
                if let FnArg::Typed(pt) = a {
                    set.visit_type_mut(&mut pt.ty);
                }
            }
            func.sig.generics.params.insert(0, syn::parse_quote!(#l));
            l
        }
        (0, [l]) => l.clone(),
        _ => return item,
    };
    let mut set = Positions::new(Some(lifetime));
    if let syn::ReturnType::Type(_, out) = &mut func.sig.output {
        set.visit_type_mut(out);
    }
    quote!(#func)
}

/// `type Real = f64;` named in a function (`fn det(m: &Mat2) -> Real`, `x as Real`,
/// `let r: Real`): `Real` and `Float` as types (never a type of the user's, being
/// `num_traits`'s names for float traits) are `f64`, as the compiler sees them, so that
/// the function has every form a function over `f64` has. The body checks that the alias
/// is `f64` (`__private::FloatAliasIsF64`, whose message names it). A function with a type
/// parameter of that name keeps it.
fn float_aliases(item: TokenStream) -> TokenStream {
    const ALIASES: [&str; 2] = ["Real", "Float"];
    let Ok(mut func) = syn::parse2::<ItemFn>(item.clone()) else {
        return item;
    };
    if func
        .sig
        .generics
        .type_params()
        .any(|p| ALIASES.contains(&p.ident.to_string().as_str()))
    {
        return item;
    }
    struct Aliases(Vec<syn::Ident>);
    impl syn::visit_mut::VisitMut for Aliases {
        fn visit_type_mut(&mut self, t: &mut syn::Type) {
            if let syn::Type::Path(p) = t {
                if let Some(i) = p.path.get_ident().filter(|_| p.qself.is_none()) {
                    if ALIASES.contains(&i.to_string().as_str()) {
                        self.0.push(i.clone());
                        *t = syn::parse_quote_spanned!(i.span()=> f64);
                        return;
                    }
                }
            }
            syn::visit_mut::visit_type_mut(self, t);
        }
        // (Not the items a body declares: their own names.)
        fn visit_item_mut(&mut self, _: &mut syn::Item) {}
    }
    let mut found = Aliases(Vec::new());
    syn::visit_mut::VisitMut::visit_signature_mut(&mut found, &mut func.sig);
    syn::visit_mut::VisitMut::visit_block_mut(&mut found, &mut func.block);
    let mut names: Vec<syn::Ident> = Vec::new();
    for n in found.0 {
        if !names.iter().any(|m| m == &n) {
            names.push(n);
        }
    }
    if names.is_empty() {
        return item;
    }
    let checks: Vec<syn::Stmt> = names
        .iter()
        .map(|n| syn::parse_quote_spanned!(n.span()=> const _: () = ::mochi::__private::float_alias_is_f64::<#n>();))
        .collect();
    func.block.stmts.splice(0..0, checks);
    // (`x as Real` is `x as f64` now, which clippy would call needless in the user's
    // function.)
    func.attrs
        .push(syn::parse_quote!(#[allow(clippy::unnecessary_cast)]));
    quote!(#func)
}

/// A parameter written as a pattern (`(a, b): (f64, f64)`, `[x, y]: [f64; 2]`,
/// `&k: &usize`) is named, `__mochi_arg0: (f64, f64)`, and destructured by the first
/// statement of the body, `let (a, b) = __mochi_arg0;`: the same function, whose
/// companions take the argument by the same type.
fn named_params(item: TokenStream) -> TokenStream {
    let Ok(mut func) = syn::parse2::<ItemFn>(item.clone()) else {
        return item;
    };
    let mut lets: Vec<syn::Stmt> = Vec::new();
    for (k, a) in func.sig.inputs.iter_mut().enumerate() {
        let FnArg::Typed(pt) = a else { continue };
        if matches!(&*pt.pat, syn::Pat::Ident(_)) {
            continue;
        }
        let name = format_ident!(
            "__mochi_arg{}",
            k,
            span = syn::spanned::Spanned::span(&pt.pat)
        );
        let pat = std::mem::replace(
            &mut *pt.pat,
            syn::Pat::Ident(syn::PatIdent {
                attrs: Vec::new(),
                by_ref: None,
                mutability: None,
                ident: name.clone(),
                subpat: None,
            }),
        );
        lets.push(syn::parse_quote!(let #pat = #name;));
    }
    if lets.is_empty() {
        return item;
    }
    func.block.stmts.splice(0..0, lets);
    quote!(#func)
}

/// `let a: &[f64; 2] = e.try_into().unwrap();` (or `.expect(..)`): the pattern, the
/// array type and the conversion.
fn borrowed_array_conversion(l: &syn::Local) -> Option<(&syn::Pat, &syn::Type, &syn::Expr)> {
    let syn::Pat::Type(pt) = &l.pat else {
        return None;
    };
    let init = l.init.as_ref().filter(|i| i.diverge.is_none())?;
    let syn::Type::Reference(r) = &*pt.ty else {
        return None;
    };
    let syn::Expr::MethodCall(end) = crate::desugar::unparen(&init.expr) else {
        return None;
    };
    let converts = matches!(crate::desugar::unparen(&end.receiver),
        syn::Expr::MethodCall(t) if t.method == "try_into" && t.args.is_empty());
    (r.mutability.is_none()
        && matches!(&*r.elem, syn::Type::Array(_))
        && matches!(end.method.to_string().as_str(), "unwrap" | "expect")
        && converts)
        .then_some((&*pt.pat, &*r.elem, &*init.expr))
}

/// `Vec::from_iter(chain)` as `chain.collect::<Vec<_>>()` (what `collect` calls), and
/// `let v: Vec<f64> = x.into();` as `let v: Vec<f64> = Vec::from(x);`: the same
/// conversion, named (a rule method `into` would meet std's blanket `Into`, which the
/// prelude brings in; the generic form keeps `Vec::from`); and `map(f).flatten()` of an
/// `f` that gives an `Option` as `filter_map(f)`; `rfold` and `rfind` as `rev()` then
/// `fold` and `find`.
fn std_forms_named(item: TokenStream) -> TokenStream {
    struct Named;
    impl syn::visit_mut::VisitMut for Named {
        fn visit_local_mut(&mut self, l: &mut syn::Local) {
            syn::visit_mut::visit_local_mut(self, l);
            let syn::Pat::Type(pt) = &l.pat else { return };
            let syn::Type::Path(tp) = &*pt.ty else { return };
            if tp.qself.is_some() || tp.path.segments.last().is_none_or(|s| s.ident != "Vec") {
                return;
            }
            let Some(init) = l.init.as_mut() else { return };
            if init.diverge.is_some() {
                return;
            }
            let syn::Expr::MethodCall(m) = &*init.expr else {
                return;
            };
            if m.method != "into" || !m.args.is_empty() || m.turbofish.is_some() {
                return;
            }
            let x = crate::desugar::unparen(&m.receiver);
            let span = m.method.span();
            *init.expr = syn::parse_quote_spanned!(span=> Vec::from(#x));
        }
        // `chain.map(|v| if c { Some(e) } else { None }).flatten()`: the `filter_map` it
        // is (the same iterator, which the derivation walks; it walks no `flatten` of
        // `Option`s).
        fn visit_expr_mut(&mut self, e: &mut syn::Expr) {
            syn::visit_mut::visit_expr_mut(self, e);
            // `Vec::from_iter(chain)`: the `collect` it is.
            if let syn::Expr::Call(c) = e {
                let from_iter = matches!(&*c.func, syn::Expr::Path(p) if p.qself.is_none()
                    && p.path.segments.len() >= 2
                    && p.path.segments.iter().rev().nth(1).is_some_and(|s| s.ident == "Vec")
                    && p.path.segments.last().is_some_and(|s| s.ident == "from_iter"));
                if from_iter && c.args.len() == 1 {
                    if let syn::Expr::MethodCall(_) = crate::desugar::unparen(&c.args[0]) {
                        let chain = &c.args[0];
                        *e = syn::parse_quote_spanned!(syn::spanned::Spanned::span(&c.func)=>
                            #chain.collect::<::std::vec::Vec<_>>());
                    }
                }
                return;
            }
            let syn::Expr::MethodCall(f) = e else { return };
            // `it.rfold(init, g)`, `it.rfind(p)`: the `rev().fold(init, g)` and
            // `rev().find(p)` std documents them to be, for a chain (before 2026-12-09,
            // "no rule for `rfold`").
            let reversed = match (f.method.to_string().as_str(), f.args.len()) {
                ("rfold", 2) => Some("fold"),
                ("rfind", 1) => Some("find"),
                _ => None,
            };
            if let Some(to) = reversed.filter(|_| crate::iterchain::is_chain(&f.receiver)) {
                let span = f.method.span();
                let (it, args) = (&f.receiver, &f.args);
                let to = syn::Ident::new(to, span);
                *e = syn::parse_quote_spanned!(span=> #it.rev().#to(#args));
                return;
            }
            if f.method != "flatten" || !f.args.is_empty() {
                return;
            }
            let syn::Expr::MethodCall(mp) = crate::desugar::unparen(&f.receiver) else {
                return;
            };
            let optional = matches!(mp.args.first(), Some(syn::Expr::Closure(c))
                if mp.args.len() == 1 && crate::desugar::option_valued(&c.body));
            // `it.map(f).flatten()` is `it.flat_map(f)` (std says so) for an iterator
            // (not for an `Option`'s `map`, whose `flatten` is `and_then`'s): before
            // 2026-12-07, "no rule for `map`" for the inner chain of
            // `x.into_iter().map(|r| r.into_iter().map(f)).flatten()`.
            let iterator = mp.args.len() == 1 && crate::iterchain::is_chain(&mp.receiver);
            if mp.method == "map" && (optional || iterator) {
                let mut fm = mp.clone();
                let to = if optional { "filter_map" } else { "flat_map" };
                fm.method = format_ident!("{}", to, span = mp.method.span());
                *e = syn::Expr::MethodCall(fm);
            }
        }
        // `let a: &[f64; 2] = x[1..3].try_into().unwrap();` (also `expect`): the array
        // bound by value first, `let __mochi_arr0: [f64; 2] = ..; let a = &__mochi_arr0;`,
        // since the conversion's rule makes the array.
        fn visit_block_mut(&mut self, b: &mut syn::Block) {
            syn::visit_mut::visit_block_mut(self, b);
            let mut out = Vec::with_capacity(b.stmts.len());
            for st in std::mem::take(&mut b.stmts) {
                let syn::Stmt::Local(l) = &st else {
                    out.push(st);
                    continue;
                };
                let converted = borrowed_array_conversion(l);
                let Some((pat, arr, e)) = converted else {
                    out.push(st);
                    continue;
                };
                let span = syn::spanned::Spanned::span(e);
                let tmp = format_ident!("__mochi_arr{}", out.len(), span = span);
                out.push(syn::parse_quote_spanned!(span=> let #tmp: #arr = #e;));
                out.push(syn::parse_quote_spanned!(span=> let #pat = &#tmp;));
            }
            b.stmts = out;
        }
        fn visit_item_mut(&mut self, _: &mut syn::Item) {}
    }
    let Ok(mut func) = syn::parse2::<ItemFn>(item.clone()) else {
        return item;
    };
    let mut v = Named;
    syn::visit_mut::VisitMut::visit_block_mut(&mut v, &mut func.block);
    array_maps_written(&mut func);
    quote!(#func)
}

/// `a.map(|t| e)` of a fixed-size array `a` (a parameter or a `let` of type `[T; N]`,
/// an array literal `[..]` or `[v; n]`), also `a.map(f64::sin)`: the loop it is,
/// `{ let mut m = a.clone(); for i in 0..m.len() { let t = a[i]; m[i] = e; } m }`, which
/// the derivation and the generic form read as elements of an array (each reads no
/// `map` of a closure over an array). Left as written when the name is bound more than
/// once, or the closure returns or uses `?` (which would leave the function in a loop).
fn array_maps_written(func: &mut ItemFn) {
    struct Maps<'a> {
        arrays: &'a HashSet<String>,
        next: usize,
    }
    impl syn::visit_mut::VisitMut for Maps<'_> {
        fn visit_expr_mut(&mut self, e: &mut syn::Expr) {
            syn::visit_mut::visit_expr_mut(self, e);
            let syn::Expr::MethodCall(m) = e else { return };
            if m.method != "map" || m.args.len() != 1 || m.turbofish.is_some() {
                return;
            }
            let a = crate::desugar::unparen(&m.receiver);
            // (An array written in place is bound first, `let __mochi_lit1 = [a, b];`.)
            let literal = matches!(a, syn::Expr::Array(_) | syn::Expr::Repeat(_));
            let named = matches!(a, syn::Expr::Path(ap) if ap
                .path
                .get_ident()
                .is_some_and(|i| self.arrays.contains(&i.to_string())));
            if !(literal || named) {
                return;
            }
            self.next += 1;
            let (out, i) = (
                format_ident!("__mochi_mapped{}", self.next),
                format_ident!("__mochi_at{}", self.next),
            );
            let (bound, a): (Option<syn::Stmt>, syn::Expr) = if literal {
                let lit = format_ident!("__mochi_lit{}", self.next);
                (
                    Some(syn::parse_quote!(let #lit = #a;)),
                    syn::parse_quote!(#lit),
                )
            } else {
                (None, a.clone())
            };
            // (Written at the attribute's span, so that lints of the written loop, such
            // as `clone` of a `Copy` array, are not the user's.)
            let step: syn::Block = match &m.args[0] {
                syn::Expr::Closure(c) if c.inputs.len() == 1 => {
                    let body = &c.body;
                    let tries = body.to_token_stream().to_string().contains('?');
                    if crate::iterchain::contains_return(body) || tries || c.asyncness.is_some() {
                        return;
                    }
                    let p = &c.inputs[0];
                    syn::parse_quote!({ let #p = #a[#i]; #out[#i] = #body; })
                }
                f @ syn::Expr::Path(_) => syn::parse_quote!({ #out[#i] = #f(#a[#i]); }),
                _ => return,
            };
            *e = syn::parse_quote!({
                #bound
                let mut #out = #a.clone();
                for #i in 0..#out.len() #step
                #out
            });
        }
        fn visit_item_mut(&mut self, _: &mut syn::Item) {}
    }
    let mut arrays = crate::twin::array_locals(func);
    let mut counts: HashMap<String, usize> = HashMap::new();
    crate::twin::count_bindings(func, &mut counts);
    arrays.retain(|n| counts.get(n).copied().unwrap_or(0) <= 1);
    let mut maps = Maps {
        arrays: &arrays,
        next: 0,
    };
    syn::visit_mut::VisitMut::visit_block_mut(&mut maps, &mut func.block);
}

/// A `#[differentiable] fn` declared among the statements of a free function's body
/// (a helper kept beside its one caller) is moved out beside the function: its rule and
/// companions are a module, which a block cannot name as `super::`. Its name stays in
/// scope for the body (items of the enclosing module are). Inside a method's body it
/// cannot move (the `impl` holds no functions but its own), so it is an error saying so.
/// `None` when the body has none. In an expansion that was handed callees' sources
/// (`__primal_written`) the helper is already out and is only removed.
fn hoist_nested(
    attr: &TokenStream,
    item: &TokenStream,
) -> Option<Result<(TokenStream, TokenStream), (syn::Error, TokenStream)>> {
    let mut func: ItemFn = syn::parse2(item.clone()).ok()?;
    let marker = |a: &syn::Attribute| {
        a.path()
            .segments
            .last()
            .is_some_and(|s| s.ident == "differentiable")
    };
    let marked = |f: &syn::ItemFn| f.attrs.iter().any(marker);
    let nested = func
        .block
        .stmts
        .iter()
        .any(|s| matches!(s, syn::Stmt::Item(syn::Item::Fn(f)) if marked(f)));
    if !nested {
        return None;
    }
    let is_method = func
        .sig
        .inputs
        .first()
        .is_some_and(|a| matches!(a, FnArg::Receiver(_)));
    if is_method {
        // One error: the method is written on without the inner attribute.
        let mut span = None;
        for s in &mut func.block.stmts {
            if let syn::Stmt::Item(syn::Item::Fn(f)) = s {
                if marked(f) {
                    span.get_or_insert(f.sig.ident.span());
                    f.attrs.retain(|a| !marker(a));
                }
            }
        }
        let e = syn::Error::new(
            span.unwrap_or_else(proc_macro2::Span::call_site),
            "mochi: a `#[differentiable]` function inside a method's body cannot have its companions here (an `impl` holds only its own functions); declare it at module level, outside the `impl`, and call it from the method",
        );
        return Some(Err((e, quote!(#func))));
    }
    let mut hoisted = Vec::new();
    let mut kept = Vec::new();
    for s in std::mem::take(&mut func.block.stmts) {
        match s {
            syn::Stmt::Item(syn::Item::Fn(f)) if marked(&f) => hoisted.push(f),
            other => kept.push(other),
        }
    }
    func.block.stmts = kept;
    let written = attr.to_string().contains("__primal_written");
    let out = if written {
        TokenStream::new()
    } else {
        quote!(#(#hoisted)*)
    };
    Some(Ok((out, quote!(#func))))
}

fn expand_one(attr: TokenStream, item: TokenStream) -> TokenStream {
    crate::iterchain::reset_fresh_params();
    let options = match parse_attr(attr) {
        Ok(o) => o,
        Err(e) => return combine(e, item),
    };
    let func: ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(e) => {
            if let Ok(imp) = syn::parse2::<syn::ItemImpl>(item.clone()) {
                return impl_block(imp, &options);
            }
            return combine(
                syn::Error::new(e.span(), "#[differentiable] goes on a free function (`fn`), a method, or an `impl` block whose methods to differentiate are marked `#[differentiable]`; see the documentation of `mochi::differentiable`"),
                item,
            );
        }
    };
    crate::twin::set_type_params(&func);
    crate::twin::note_fn_result(&func.sig);
    // Functions over floats declared in the body, as closures (inlined where called).
    let mut func = func;
    crate::desugar::nested_fns_as_closures(&mut func);
    // A function generic over its scalar runs on `Dual` numbers as written: its
    // `no_grad`s stop forward-mode derivatives too (`twin::stop_partials`; a twin gets
    // the same where it is made).
    let func = if func.sig.generics.type_params().next().is_some() {
        let mut f = func;
        crate::twin::stop_partials(&mut f);
        f
    } else {
        func
    };
    // A function taking a closure: written as it is, with the macro that hands its
    // source to the marked functions calling it (see `inline`).
    if crate::inline::takes_closure(&func) {
        return match crate::inline::callee(&func) {
            Ok(ts) => ts,
            Err(e) => combine(e, quote!(#func)),
        };
    }
    // (The `?`s that can be written out are, for the derivation only: the function as
    // written keeps them.)
    let mut checked = func.clone();
    crate::tryop::write_out(&mut checked);
    if let Err(e) = valid::check_signature(&checked) {
        return combine(e, quote!(#func));
    }
    let is_method = func
        .sig
        .inputs
        .first()
        .is_some_and(|a| matches!(a, FnArg::Receiver(_)));
    // The calls passing a closure to a function that takes one, inlined; a callee
    // whose source is not here yet is asked for it.
    let primal = if options.primal_written {
        TokenStream::new()
    } else if is_method {
        quote!(#func)
    } else {
        quote!(#[allow(dead_code)] #func)
    };
    let inlined = match inline_closure_calls(&func, &options) {
        Ok(crate::inline::Outcome::Need(path)) => {
            let opts = &options.tokens;
            let mark = (!options.primal_written).then(|| quote!(__primal_written,));
            let check = (!options.primal_written).then(|| {
                crate::inline::unmarked_check(&path, is_method.then_some(&func.sig.ident))
            });
            return quote!(#primal #check #path::__mochi_closure_callee! { [#opts, #mark] #item });
        }
        Ok(crate::inline::Outcome::Inlined(f)) => {
            if expansion_asked(&func) {
                eprintln!("{}", quote!(#f));
            }
            Some(*f)
        }
        Ok(crate::inline::Outcome::Unchanged) => None,
        Err(e) => return combine(e, primal),
    };
    let derived_from = inlined.as_ref().unwrap_or(&func);
    let derived = if is_method {
        method(derived_from, &options)
    } else {
        derive(derived_from, &options)
    };
    match derived {
        Ok(ts) => {
            // (The function as written is out already when a callee's source was asked.)
            let ts = if options.primal_written {
                without_fn(ts, &func.sig.ident)
            } else {
                ts
            };
            if expansion_asked(&func) {
                eprintln!("{ts}");
            }
            ts
        }
        // The function itself still compiles, so one mistake gives one error.
        Err(e) => combine(e, primal),
    }
}

/// `MOCHI_EXPAND=name` prints the expansion of that function (for the docs and for
/// debugging the transform).
fn expansion_asked(func: &ItemFn) -> bool {
    std::env::var("MOCHI_EXPAND").is_ok_and(|v| func.sig.ident == v)
}

/// `func` with its calls that pass closures inlined (see `inline`). In an expansion
/// that was given callees' sources, every token is resolved where it was called first.
fn inline_closure_calls(func: &ItemFn, options: &Options) -> syn::Result<crate::inline::Outcome> {
    if options.sources.is_empty() {
        return crate::inline::inline_calls(func, &[]);
    }
    let sources = options
        .sources
        .iter()
        .map(|s| syn::parse2::<ItemFn>(crate::inline::respan(s.clone())))
        .collect::<syn::Result<Vec<_>>>()?;
    let work: ItemFn = syn::parse2(crate::inline::respan(quote!(#func)))?;
    match crate::inline::inline_calls(&work, &sources)? {
        // (Nothing to inline after all: the function as given.)
        crate::inline::Outcome::Unchanged => Ok(crate::inline::Outcome::Inlined(Box::new(work))),
        other => Ok(other),
    }
}

/// The items of `ts` without the function named `name` (written by the first expansion).
fn without_fn(ts: TokenStream, name: &syn::Ident) -> TokenStream {
    let Ok(mut file) = syn::parse2::<syn::File>(ts.clone()) else {
        return ts;
    };
    if let Some(k) = file
        .items
        .iter()
        .position(|i| matches!(i, syn::Item::Fn(f) if f.sig.ident == *name))
    {
        file.items.remove(k);
    }
    quote!(#file)
}

/// The name `#[derive(Tangent)]` declares beside a struct's generic mirror
/// (`__MochiTwinV2<T>`), in scope wherever the mirror is: a name that says what to do
/// where it is not.
pub(crate) fn mirror_hint(name: &syn::Ident) -> syn::Ident {
    format_ident!(
        "{}__import_its_module_with_a_glob_here_for_this_higher_order_impl_block",
        name
    )
}

/// The first item of a `higher_order` block of a struct with a generic mirror: the
/// block gives the mirror its methods and operators, so the mirror's name must be in
/// scope, which a `use crate::geom::V2;` does not bring. Where it is missing, the first
/// error names [`mirror_hint`] (the way out: `use crate::geom::*;`, or the block in
/// the struct's module) before those of the mirror itself.
fn mirror_in_scope(name: &str, ty: &syn::Type) -> TokenStream {
    let span = syn::spanned::Spanned::span(ty);
    let hint = mirror_hint(&syn::Ident::new(name, span));
    quote::quote_spanned!(span=>
        #[allow(dead_code, non_camel_case_types)]
        const _: #hint = ();
    )
}

/// `#[differentiable]` on a method (`&self`, `&mut self` or `self`, in an `impl` block):
/// the companions are associated functions named after the method, the receiver first
/// and its cotangent first: `m.loss_gradient(&x) -> (dm, dx)`,
/// `m.loss_value_and_gradient(&x)`, `m.loss_pullback(&x)`, `Self::loss_rrule(..)`.
///
/// The derivation is the free function's with the receiver as a parameter `self: &Self`;
/// the items of its companion module become associated functions, renamed `loss_*`.
fn method(func: &ItemFn, options: &Options) -> syn::Result<TokenStream> {
    let out = method_companions(func, options)?;
    // In a trait's `impl` the companions are not members of the trait (E0407 for each);
    // this constant, first, names the way out in the first of those errors. In an
    // inherent `impl` it is an unused private constant.
    let hint = format_ident!(
        "{}__in_a_trait_impl_put_differentiable_on_the_impl_block_too",
        func.sig.ident
    );
    Ok(quote!(
        #func
        #[doc(hidden)]
        #[allow(dead_code, non_upper_case_globals)]
        const #hint: () = ();
        #(#out)*
    ))
}

/// A method's result that carries no derivative: a reference, an integer, a `bool`, a
/// `char` or a `String` (left as written when an `impl` block marks no method).
/// A method taking `&mut self` or a `&mut` argument and returning a value that is not a
/// reference (`fn bump(&mut self) -> bool`, `fn emit(&self, out: &mut Vec<f64>) ->
/// usize`): it may change the derivative of what it is lent, whatever it returns, so it
/// is called through its rule. (An accessor `fn x_mut(&mut self) -> &mut f64` is not
/// one.)
fn changes_what_it_is_lent(sig: &syn::Signature) -> bool {
    let lends = sig.inputs.iter().any(|a| match a {
        syn::FnArg::Receiver(r) => r.reference.is_some() && r.mutability.is_some(),
        syn::FnArg::Typed(t) => {
            matches!(&*t.ty, syn::Type::Reference(r) if r.mutability.is_some())
        }
    });
    lends
        && !matches!(&sig.output, syn::ReturnType::Type(_, t) if matches!(**t, syn::Type::Reference(_)))
}

fn result_without_derivative(output: &syn::ReturnType) -> bool {
    let syn::ReturnType::Type(_, t) = output else {
        return false;
    };
    match &**t {
        syn::Type::Reference(_) => true,
        syn::Type::Path(p) if p.qself.is_none() => p.path.get_ident().is_some_and(|i| {
            crate::activity::INTEGER_TYPES.contains(&i.to_string().as_str())
                || matches!(i.to_string().as_str(), "bool" | "char" | "String")
        }),
        _ => false,
    }
}

/// `#[differentiable]` on an `impl` block: the methods in it marked `#[differentiable]`
/// (or `#[differentiable(higher_order)]`) are derived, and their companions go into an
/// inherent `impl` of the same type beside the block. This is the form for the methods
/// of a trait implementation (`impl Model for Linear`), which can hold no items beyond
/// the trait's; their companions are `pub`, as the trait's methods are.
fn impl_block(mut imp: syn::ItemImpl, outer: &Options) -> TokenStream {
    // `impl Mul<V2> for f64`: the companions go into an inherent `impl` of the type,
    // which a type of the language cannot have (E0390 at the attribute); an operator
    // with a float on the left is derived as a method of the right operand's type.
    if let syn::Type::Path(p) = &*imp.self_ty {
        if let Some(t) = p.path.get_ident().map(|i| i.to_string()) {
            if t == "f64" || t == "f32" {
                if let Some(out) = scalar_left_operator(&imp, outer, &t) {
                    return out;
                }
            }
            if crate::activity::INTEGER_TYPES.contains(&t.as_str())
                || t == "f64"
                || t == "f32"
                || t == "bool"
            {
                let msg = format!(
                    "#[differentiable]: an `impl` for `{t}` cannot be marked: its derivatives go into an inherent `impl` of the type, which a type of the language cannot have (an operator with your type on the right is the exception: `impl Mul<V2> for f64` with `fn mul(self, v: V2)`); write the operation with your type on the left (`impl Mul<{t}> for V2`, `v * s`), or as a function (`fn scale(s: {t}, v: V2) -> V2`)"
                );
                let err = syn::Error::new_spanned(&imp.self_ty, msg).to_compile_error();
                return quote::quote!(#imp #err);
            }
        }
    }
    if let syn::Type::Path(p) = &*imp.self_ty {
        if let Some(t) = p.path.get_ident() {
            crate::twin::note_crate_type(&t.to_string());
        }
    }
    if let Some(out) = sum_impl(&imp) {
        return out;
    }
    // `fn put(&mut self, v: f64) -> &mut Self { self.s += v; self }`: a builder whose
    // callers chain it (`b.put(x).put(y)`). A method returning a reference is read as
    // an accessor, without a derivative, so the change it makes would be lost.
    let mut builder_errors: Option<syn::Error> = None;
    for item in &imp.items {
        if let syn::ImplItem::Fn(f) = item {
            let lends_self = f
                .sig
                .receiver()
                .is_some_and(|r| r.reference.is_some() && r.mutability.is_some());
            let returns_ref = matches!(&f.sig.output, syn::ReturnType::Type(_, t) if matches!(**t, syn::Type::Reference(_)));
            if lends_self
                && returns_ref
                && crate::analysis::assigned_names(&f.block).contains("self")
            {
                let msg = format!(
                    "#[differentiable]: `{}` changes `self` and returns a reference (a chaining builder): a method returning a reference is read as an accessor, without a derivative, so the change would be lost. Return `()` and call it once per statement (`b.{0}(x); b.{0}(y);`), or take `self` by value and return `Self` (`let b = b.{0}(x).{0}(y);`)",
                    f.sig.ident
                );
                let e = syn::Error::new_spanned(&f.sig.output, msg);
                match &mut builder_errors {
                    Some(all) => syn::Error::combine(all, e),
                    None => builder_errors = Some(e),
                }
            }
        }
    }
    // No method marked (`#[differentiable] impl Add for V2 { fn add .. }`): every method
    // is, but those whose result carries no derivative (`-> usize`, `-> bool`, `-> &str`,
    // a reference) and the associated functions without arguments (`V2::zero()`, a
    // constant wherever it is called), which stay as written.
    let marked_any = imp
        .items
        .iter()
        .any(|i| matches!(i, syn::ImplItem::Fn(f) if f.attrs.iter().any(is_differentiable)));
    for item in &imp.items {
        if let syn::ImplItem::Fn(f) = item {
            if f.sig.receiver().is_some() {
                let plain = result_without_derivative(&f.sig.output)
                    && !changes_what_it_is_lent(&f.sig)
                    && (marked_any || !f.attrs.iter().any(is_differentiable));
                crate::twin::note_user_method(&f.sig.ident.to_string(), plain);
                // `fn len(&self) -> f64`: a call `w.len()` is read as a length, which
                // carries no derivative, wherever it is; the method's would be lost there
                // (until 2026-12-09 silently: `w.len() * x[0]` differentiated as a
                // constant times x[0]).
                let name = f.sig.ident.to_string();
                let derived = !result_without_derivative(&f.sig.output)
                    && (!marked_any || f.attrs.iter().any(is_differentiable));
                if derived && crate::activity::INACTIVE_METHODS.contains(&name.as_str()) {
                    let e = syn::Error::new(
                        f.sig.ident.span(),
                        format!(
                            "mochi: a `#[differentiable]` method named `{name}` whose result carries a derivative: mochi reads every `.{name}()` call as one of the standard library's `{name}`, whose result carries none, so this method's derivative would be lost where it is called; give it another name (`length`, `size`, `norm`, `total`)"
                        ),
                    );
                    match &mut builder_errors {
                        Some(all) => all.combine(e),
                        None => builder_errors = Some(e),
                    }
                }
            }
        }
    }
    if !marked_any {
        for item in imp.items.iter_mut() {
            if let syn::ImplItem::Fn(f) = item {
                if (changes_what_it_is_lent(&f.sig) || !result_without_derivative(&f.sig.output))
                    && !f.sig.inputs.is_empty()
                {
                    f.attrs.push(syn::parse_quote!(#[differentiable]));
                }
            }
        }
    }
    let mut companions = Vec::new();
    let mut rule_traits = Vec::new();
    let mut errors: Option<syn::Error> = None;
    let mut marked = 0;
    let mut any_higher = false;
    // `Linear::squash(x)` of a marked associated function of this block, in a marked
    // function of it: `Self::squash(x)`, which reaches its derived rule.
    let type_name = match &*imp.self_ty {
        syn::Type::Path(p) if p.qself.is_none() => {
            p.path.segments.last().map(|s| s.ident.to_string())
        }
        _ => None,
    };
    let associated: HashSet<String> = imp
        .items
        .iter()
        .filter_map(|i| match i {
            syn::ImplItem::Fn(f)
                if f.sig.receiver().is_none() && f.attrs.iter().any(is_differentiable) =>
            {
                Some(f.sig.ident.to_string())
            }
            _ => None,
        })
        .collect();
    // `impl Loss for SquaredLoss`: `Loss::loss(&sq, ..)` in a function after it is the
    // method called on `sq` (see `desugar::trait_path_call`).
    if let Some((_, tr, _)) = &imp.trait_ {
        if let Some(last) = tr.segments.last() {
            crate::twin::note_crate_trait(&last.ident.to_string());
        }
    }
    // An operator's `type Output` (see `operator_rule_trait`).
    let output = imp.items.iter().find_map(|i| match i {
        syn::ImplItem::Type(o) if o.ident == "Output" => Some(o.ty.clone()),
        _ => None,
    });
    crate::twin::set_impl_type(type_name.clone());
    crate::twin::set_impl_params(Some(&imp.generics));
    for item in imp.items.iter_mut() {
        let syn::ImplItem::Fn(f) = item else { continue };
        let Some(k) = f.attrs.iter().position(is_differentiable) else {
            continue;
        };
        let attr = f.attrs.remove(k);
        // An associated function without arguments (`fn zero() -> Self`) has nothing to
        // differentiate: its calls are constants, kept as written.
        if f.sig.inputs.is_empty() {
            continue;
        }
        marked += 1;
        // A method called only through its companions is not dead code.
        f.attrs.push(syn::parse_quote!(#[allow(dead_code)]));
        let inner = match &attr.meta {
            syn::Meta::List(l) => parse_attr(l.tokens.clone()),
            _ => Ok(Options::default()),
        };
        let options = match inner {
            Ok(mut o) => {
                o.boxed |= outer.boxed;
                o.higher_order |= outer.higher_order;
                o
            }
            Err(e) => {
                errors.get_or_insert(e.clone()).combine(e);
                continue;
            }
        };
        any_higher |= options.higher_order;
        if let Some(t) = &type_name {
            SelfPaths {
                type_name: t,
                names: &associated,
            }
            .visit_block_mut(&mut f.block);
        }
        crate::desugar::struct_pattern_lets(&f.sig, &mut f.block);
        crate::desugar::nested_fns_as_closures_in(&mut f.block);
        let mut func = ItemFn {
            attrs: f.attrs.clone(),
            vis: f.vis.clone(),
            sig: f.sig.clone(),
            block: Box::new(f.block.clone()),
        };
        if imp.trait_.is_some() {
            func.vis = syn::parse_quote!(pub);
            // `-> Self::Output` of an operator's method: the impl's `type Output`, which
            // the companions (in an inherent `impl`) cannot name through `Self`.
            if let Some(out) = &output {
                struct SelfOutput<'o>(&'o syn::Type);
                impl VisitMut for SelfOutput<'_> {
                    fn visit_type_mut(&mut self, t: &mut syn::Type) {
                        if let syn::Type::Path(p) = t {
                            let segs: Vec<String> = p
                                .path
                                .segments
                                .iter()
                                .map(|s| s.ident.to_string())
                                .collect();
                            if p.qself.is_none() && segs == ["Self", "Output"] {
                                *t = self.0.clone();
                                return;
                            }
                        }
                        syn::visit_mut::visit_type_mut(self, t);
                    }
                }
                SelfOutput(out).visit_signature_mut(&mut func.sig);
            }
        }
        // `impl Mul<f64> for Complex` beside `impl Mul for Complex`: both methods are
        // `mul`, and their companions share the inherent `impl`; one with a right
        // operand other than the type itself is named after it (`mul_f64_rrule`).
        let written_method = func.sig.ident.clone();
        if let (Some((_, tr, _)), Some(t)) = (&imp.trait_, &type_name) {
            let last = tr.segments.last();
            let is_op = last
                .is_some_and(|l| operator_rule(&l.ident.to_string(), &written_method).is_some());
            if let (true, Some(syn::PathArguments::AngleBracketed(a))) =
                (is_op, last.map(|l| &l.arguments))
            {
                let rhs = type_args_word(a);
                if !rhs.is_empty() && rhs != *t && rhs != "Self" {
                    func.sig.ident = format_ident!(
                        "{}_{}",
                        written_method,
                        rhs.to_lowercase(),
                        span = written_method.span()
                    );
                }
            }
        }
        // `impl From<[f64; 2]> for Vec2 { fn from(a: [f64; 2]) -> Self }`: the companions
        // named after the source type (`from_f642_rrule`, so that several `From`s of one
        // type do not collide), and the rule `Vec2::from(a)` reaches by its argument's
        // type (as an inherent associated function's, `associated_rule_trait`).
        let mut from_rule = None;
        if let (Some((_, tr, _)), Some(t)) = (&imp.trait_, &type_name) {
            let last = tr.segments.last();
            if let (true, true, Some(syn::PathArguments::AngleBracketed(a))) = (
                last.is_some_and(|l| l.ident == "From") && written_method == "from",
                imp.generics.params.is_empty() && func.sig.receiver().is_none(),
                last.map(|l| &l.arguments),
            ) {
                let word = type_args_word(a);
                crate::twin::note_from_type(t, &word);
                func.sig.ident =
                    format_ident!("from_{}", word.to_lowercase(), span = written_method.span());
                from_rule = associated_rule_trait_as(t, &func.sig, &written_method);
            }
        }
        // This method's rule traits, given only when its companions are derived: a
        // method that fails leaves the block's other methods theirs, so one unsupported
        // method is one error, not "no rule" at every call of the others.
        let mut own_traits: Vec<TokenStream> = from_rule.into_iter().collect();
        let mut own_rule = false;
        if imp.trait_.is_none() && imp.generics.params.is_empty() {
            if let Some(t) = &type_name {
                let rule = method_rule_trait(t, &func.sig);
                own_rule = rule.is_some();
                own_traits.extend(rule);
            }
        }
        // `impl Add for V2 { fn add(self, o: V2) -> V2 }`: `a + b` of two `V2`s.
        if let (Some((_, tr, _)), Some(t)) = (&imp.trait_, &type_name) {
            if imp.generics.params.is_empty() {
                let trait_name = tr.segments.last().map(|s| s.ident.to_string());
                own_traits.extend(operator_rule_trait(
                    t,
                    trait_name.as_deref(),
                    &written_method,
                    output.as_ref(),
                    &func.sig,
                ));
            }
        }
        let mut options = options;
        options.associated = func.sig.receiver().is_none();
        // (An associated function without `self` gets its derived items as associated
        // functions named after it, as a method does: a module cannot sit in an `impl`.)
        let mut written_out = func.clone();
        crate::tryop::write_out(&mut written_out);
        METHOD_TWIN.with(|m| m.borrow_mut().take());
        let checked =
            valid::check_signature(&written_out).and_then(|()| method_companions(&func, &options));
        let twin = METHOD_TWIN.with(|m| m.borrow_mut().take());
        if let (true, Some(t)) = (func.sig.receiver().is_some(), &type_name) {
            crate::twin::note_self_result(t, &func.sig);
            crate::twin::note_mut_method(t, &func.sig);
            crate::twin::note_marked_method(t, &func.sig.ident.to_string());
            crate::twin::note_slice_params(&func.sig.ident.to_string(), &func.sig);
        }
        if let (Some(twin), Some(t)) = (twin.filter(|_| func.sig.receiver().is_some()), &type_name)
        {
            crate::twin::note_crate_method(t, &func.sig.ident.to_string());
            if own_rule {
                // (An enum is its own generic form: no mirror to give the method to.)
                if !crate::twin::crate_enum(t) && !crate::twin::crate_type_without_mirror(t) {
                    let given = mirror_method(t, &func.vis, &twin);
                    if given.is_some() {
                        crate::twin::note_mirror_method(&func.sig.ident.to_string());
                    }
                    own_traits.extend(given);
                }
            } else if let Some((_, tr, _)) = &imp.trait_ {
                let trait_name = tr.segments.last().map(|s| s.ident.to_string());
                if imp.generics.params.is_empty() {
                    own_traits.extend(
                        trait_name.and_then(|n| {
                            mirror_operator(t, &n, &written_method, &func.sig, &twin)
                        }),
                    );
                }
            }
        }
        match checked {
            Ok(out) => {
                companions.extend(out);
                rule_traits.extend(own_traits);
            }
            Err(e) => match &mut errors {
                Some(all) => all.combine(e),
                None => errors = Some(e),
            },
        }
    }
    // The methods whose result carries no derivative (`fn degree(&self) -> usize`), where
    // the block asks for `higher_order`: given to the struct's generic mirror as written
    // (through their generic form), so that a generic form calling one on a mirror
    // (`p.degree() as f64`) finds it.
    if let (true, Some(t), true, true) = (
        cfg!(feature = "higher-order"),
        &type_name,
        imp.trait_.is_none() && imp.generics.params.is_empty(),
        any_higher,
    ) {
        if !crate::twin::crate_enum(t) && !crate::twin::crate_type_without_mirror(t) {
            for item in &imp.items {
                let syn::ImplItem::Fn(f) = item else { continue };
                let by_ref = f
                    .sig
                    .receiver()
                    .is_some_and(|r| r.reference.is_some() && r.mutability.is_none());
                if !by_ref || !crate::twin::plain_user_method(&f.sig.ident.to_string()) {
                    continue;
                }
                let func = ItemFn {
                    attrs: Vec::new(),
                    vis: f.vis.clone(),
                    sig: f.sig.clone(),
                    block: Box::new(f.block.clone()),
                };
                crate::twin::set_builds_mirrors(true);
                crate::twin::set_float_of(&func);
                if let Ok((twin, _)) = crate::twin::make_plain_method(&func) {
                    companions.push(quote!(#[doc(hidden)] #[allow(dead_code, non_snake_case, clippy::all)] #twin));
                    let given = plain_mirror_method(t, &func.vis, &twin.sig);
                    if given.is_some() {
                        crate::twin::note_mirror_method(&f.sig.ident.to_string());
                    }
                    rule_traits.extend(given);
                }
            }
        }
    }
    crate::twin::set_impl_type(None);
    crate::twin::set_impl_params(None);
    if marked == 0 {
        let e = syn::Error::new_spanned(
            &imp.self_ty,
            "#[differentiable] on an `impl` block derives its methods (those marked `#[differentiable]` when some are), and it has none whose result carries a derivative: add a method returning a float, a struct or a `Vec`, or one of `&mut self`",
        );
        return combine(e, quote!(#imp));
    }
    let (generics, ty, where_clause) = (&imp.generics, &imp.self_ty, &imp.generics.where_clause);
    let (impl_generics, _, _) = generics.split_for_impl();
    let in_scope = match (&type_name, any_higher) {
        (Some(t), true) if crate::twin::crate_mirror(t) => mirror_in_scope(t, &imp.self_ty),
        _ => TokenStream::new(),
    };
    let out = quote!(
        #in_scope
        #imp
        impl #impl_generics #ty #where_clause {
            #(#companions)*
        }
        #(#rule_traits)*
    );
    if let Some(b) = builder_errors {
        match &mut errors {
            Some(all) => all.combine(b),
            None => errors = Some(b),
        }
    }
    match errors {
        Some(e) => combine(e, out),
        None => out,
    }
}

/// `#[differentiable] impl Sum for V2 { fn sum<I: Iterator<Item = V2>>(iter: I) -> V2 {
/// iter.fold(V2::zero(), |a, b| a + b) } }`: a method generic over the iterator, which is
/// not derived; the callers' `.sum::<V2>()` is read as the fold of `+` it is
/// (`desugar::struct_sums_as_folds`), from the empty sum this block gains as a hidden
/// associated function. The body is checked to be that fold (`iter.fold(z, |a, b| a +
/// b)`, or a `for` adding each element to a `mut` local it returns); `None` when the
/// block is not a `Sum` of its own type by value.
fn sum_impl(imp: &syn::ItemImpl) -> Option<TokenStream> {
    let (_, tr, _) = imp.trait_.as_ref()?;
    let last = tr.segments.last()?;
    if last.ident != "Sum" || !imp.generics.params.is_empty() {
        return None;
    }
    let syn::Type::Path(p) = &*imp.self_ty else {
        return None;
    };
    let ty = p.path.get_ident()?.clone();
    match &last.arguments {
        syn::PathArguments::None => {}
        syn::PathArguments::AngleBracketed(a) => match a.args.iter().collect::<Vec<_>>()[..] {
            [syn::GenericArgument::Type(syn::Type::Path(q))]
                if q.path.is_ident(&ty) || q.path.is_ident("Self") => {}
            _ => return None,
        },
        _ => return None,
    }
    let f = imp.items.iter().find_map(|i| match i {
        syn::ImplItem::Fn(f) if f.sig.ident == "sum" => Some(f),
        _ => None,
    })?;
    let mut plain = imp.clone();
    for item in plain.items.iter_mut() {
        if let syn::ImplItem::Fn(f) = item {
            f.attrs.retain(|a| !is_differentiable(a));
        }
    }
    let iter = match f.sig.inputs.first() {
        Some(FnArg::Typed(pt)) => match &*pt.pat {
            syn::Pat::Ident(i) => Some(i.ident.clone()),
            _ => None,
        },
        _ => None,
    };
    if !iter.as_ref().is_some_and(|i| sum_body_is_fold(&f.block, i)) {
        let e = syn::Error::new_spanned(
            &f.sig.ident,
            format!("#[differentiable] reads `.sum()` of `{ty}` as a fold of `+` from the empty sum, and this `sum` is not written as one; write it `iter.fold({ty}::zero(), |a, b| a + b)` (or a `for` adding each element to a `mut` local it returns), with `impl Add for {ty}` marked `#[differentiable]`"),
        );
        return Some(combine(e, quote!(#plain)));
    }
    let zero = format_ident!("{}", crate::desugar::EMPTY_SUM);
    Some(quote! {
        #plain
        impl #ty {
            #[doc(hidden)]
            #[allow(dead_code)]
            #[inline]
            pub fn #zero() -> #ty {
                <#ty as ::core::iter::Sum>::sum(::core::iter::empty())
            }
        }
    })
}

/// Whether a `Sum` method's body is a fold of `+` over `iter` from a value that is not
/// an element: `iter.fold(z, |a, b| a + b)` (also `|a, b| b + a`, `Add::add`) alone, or
/// `let mut s = z; for v in iter { s = s + v; } s` (or `s += v`).
fn sum_body_is_fold(b: &syn::Block, iter: &syn::Ident) -> bool {
    use syn::Expr;
    let named = |e: &Expr, n: &syn::Ident| matches!(crate::desugar::unparen(e), Expr::Path(p) if p.path.is_ident(n));
    let plus_of = |e: &Expr, a: &syn::Ident, v: &syn::Ident| match crate::desugar::unparen(e) {
        Expr::Binary(bin) if matches!(bin.op, syn::BinOp::Add(_)) => {
            named(&bin.left, a) && named(&bin.right, v)
                || named(&bin.left, v) && named(&bin.right, a)
        }
        _ => false,
    };
    let mentions_iter = |e: &Expr| crate::activity::tokens_mention(&quote!(#e), &|i| i == iter);
    match &b.stmts[..] {
        [syn::Stmt::Expr(e, None)] => {
            let Expr::MethodCall(m) = crate::desugar::unparen(e) else {
                return false;
            };
            if m.method != "fold"
                || m.args.len() != 2
                || !named(&m.receiver, iter)
                || mentions_iter(&m.args[0])
            {
                return false;
            }
            match &m.args[1] {
                Expr::Closure(c) if c.inputs.len() == 2 => {
                    let ids: Vec<syn::Ident> = c
                        .inputs
                        .iter()
                        .filter_map(|p| match p {
                            syn::Pat::Ident(i) => Some(i.ident.clone()),
                            _ => None,
                        })
                        .collect();
                    ids.len() == 2 && plus_of(&c.body, &ids[0], &ids[1])
                }
                Expr::Path(p) => p.path.segments.last().is_some_and(|s| s.ident == "add"),
                _ => false,
            }
        }
        [syn::Stmt::Local(l), syn::Stmt::Expr(Expr::ForLoop(f), _), syn::Stmt::Expr(ret, None)] => {
            let (syn::Pat::Ident(acc), Some(init)) = (&l.pat, &l.init) else {
                return false;
            };
            let syn::Pat::Ident(v) = &*f.pat else {
                return false;
            };
            let (acc, v) = (&acc.ident, &v.ident);
            if mentions_iter(&init.expr) || !named(&f.expr, iter) || !named(ret, acc) {
                return false;
            }
            match &f.body.stmts[..] {
                [syn::Stmt::Expr(e, _)] => match crate::desugar::unparen(e) {
                    Expr::Assign(a) => named(&a.left, acc) && plus_of(&a.right, acc, v),
                    Expr::Binary(bin) if matches!(bin.op, syn::BinOp::AddAssign(_)) => {
                        named(&bin.left, acc) && named(&bin.right, v)
                    }
                    _ => false,
                },
                _ => false,
            }
        }
        _ => false,
    }
}

/// The name of the hidden method of `V2` that an operator with a float on the left
/// (`impl Mul<V2> for f64`, `s * v`) is derived as: `__mochi_f64_mul` (`v.__mochi_f64_mul(s)`).
pub(crate) fn scalar_left_method(float: &str, method: &str) -> syn::Ident {
    format_ident!("__mochi_{}_{}", float, method)
}

/// `#[differentiable] impl Mul<V2> for f64 { type Output = V2; fn mul(self, v: V2) -> V2
/// { .. } }`: the block as written, and its method derived as a hidden method of `V2`
/// with the operands swapped (`fn __mochi_f64_mul(self, __mochi_lhs: f64) -> V2`, whose
/// companions go into an inherent `impl V2`, which a float cannot have). The lowering's
/// `Call((&s, &v)).op_mul()` reaches that method's rule through a private trait that
/// swaps the arguments and their cotangents back; the generic form of a caller writes
/// `s * v` as `v.__mochi_f64_mul(s)`, which the struct's mirror has. `None` when the
/// block is not of that shape (the caller's message then says what to write).
fn scalar_left_operator(imp: &syn::ItemImpl, outer: &Options, float: &str) -> Option<TokenStream> {
    let (_, tr, _) = imp.trait_.as_ref()?;
    if !imp.generics.params.is_empty() {
        return None;
    }
    let last = tr.segments.last()?;
    let trait_name = last.ident.to_string();
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    let rhs = match args.args.iter().collect::<Vec<_>>()[..] {
        [syn::GenericArgument::Type(syn::Type::Path(p))] if p.qself.is_none() => {
            p.path.get_ident()?.clone()
        }
        _ => return None,
    };
    let mut fns = imp.items.iter().filter_map(|i| match i {
        syn::ImplItem::Fn(f) => Some(f),
        _ => None,
    });
    let f = fns.next()?;
    if fns.next().is_some() {
        return None;
    }
    let op = operator_rule(&trait_name, &f.sig.ident)?;
    let mut inputs = f.sig.inputs.iter();
    match inputs.next()? {
        FnArg::Receiver(r) if r.reference.is_none() => {}
        _ => return None,
    }
    let FnArg::Typed(operand) = inputs.next()? else {
        return None;
    };
    if inputs.next().is_some()
        || !matches!(&*operand.ty, syn::Type::Path(p) if p.path.is_ident(&rhs))
    {
        return None;
    }
    let output: syn::Type = imp
        .items
        .iter()
        .find_map(|i| match i {
            syn::ImplItem::Type(o) if o.ident == "Output" => Some(o.ty.clone()),
            _ => None,
        })
        .or_else(|| match &f.sig.output {
            syn::ReturnType::Type(_, t) if !quote!(#t).to_string().contains("Self") => {
                Some((**t).clone())
            }
            _ => None,
        })?;
    // The method as the right operand's: `self` (the float) renamed, the operand's
    // pattern bound to the receiver.
    let lhs = format_ident!("__mochi_lhs");
    let mut block = f.block.clone();
    crate::twin::rename_self(&mut block, &lhs);
    let name = scalar_left_method(float, &f.sig.ident.to_string());
    let scalar = format_ident!("{}", float);
    let pat = &operand.pat;
    let attr = f
        .attrs
        .iter()
        .find(|a| is_differentiable(a))
        .cloned()
        .unwrap_or_else(|| syn::parse_quote!(#[differentiable]));
    let stmts = &block.stmts;
    let derived: syn::ItemImpl = syn::parse_quote! {
        impl #rhs {
            #attr
            #[doc(hidden)]
            pub fn #name(self, #lhs: #scalar) -> #output {
                let #pat = self;
                #(#stmts)*
            }
        }
    };
    let derived = impl_block(derived, outer);
    let mut plain = imp.clone();
    for item in plain.items.iter_mut() {
        if let syn::ImplItem::Fn(f) = item {
            f.attrs.retain(|a| !is_differentiable(a));
        }
    }
    // `Call((&s, &v)).op_mul()`: the method's rule with the operands swapped.
    let tr = operator_rule_trait_name(float, op, Some(&syn::parse_quote!(#rhs)));
    let method = format_ident!("{}", op);
    let rr = format_ident!("{}_rrule", name);
    let rhs_ty: syn::Type = syn::parse_quote!(#rhs);
    let decl = rule_trait_decl(
        crate::twin::rule_trait_vis(&[&rhs_ty, &output]),
        &tr,
        &method,
        None,
    );
    // With `higher_order`: `s * v` in a generic form derived through its rule (a float
    // and the struct's mirror, `T * __MochiTwinV2<T>`, which no operator `impl` can
    // cover) reaches the hidden method's rule for the mirror, the arguments swapped.
    let higher = outer.higher_order || quote!(#attr).to_string().contains("higher_order");
    let mirror_rule = higher.then(|| {
        let mirror = format_ident!("__MochiTwin{}", rhs);
        let mtr = format_ident!("__MochiMethodRule_{}_{}", rhs, name);
        quote! {
            #[allow(non_camel_case_types, clippy::all)]
            impl<'__mochi_a0, '__mochi_a1, __MochiT: ::mochi::Scalar, __MochiA0: ?::core::marker::Sized> #tr
                for ::mochi::Call<(&'__mochi_a0 __MochiA0, &'__mochi_a1 #mirror<__MochiT>)>
            where
                ::mochi::Call<(&'__mochi_a1 #mirror<__MochiT>, &'__mochi_a0 __MochiA0)>: #mtr,
            {
                type Output = <::mochi::Call<(&'__mochi_a1 #mirror<__MochiT>, &'__mochi_a0 __MochiA0)> as #mtr>::Output;
                type Pullback = ::mochi::__private::SwapPullback<
                    <::mochi::Call<(&'__mochi_a1 #mirror<__MochiT>, &'__mochi_a0 __MochiA0)> as #mtr>::Pullback,
                >;
                #[inline(always)]
                fn #method(self) -> (Self::Output, Self::Pullback) {
                    let (__mochi_a0, __mochi_a1) = self.0;
                    let (y, pb) = #mtr::#name(::mochi::Call((__mochi_a1, __mochi_a0)));
                    (y, ::mochi::__private::SwapPullback(pb))
                }
            }
        }
    });
    Some(quote! {
        #plain
        #derived
        #decl
        #mirror_rule
        #[allow(non_camel_case_types, clippy::all)]
        impl<'__mochi_a0, '__mochi_a1, __MochiA0, __MochiA1> #tr
            for ::mochi::Call<(&'__mochi_a0 __MochiA0, &'__mochi_a1 __MochiA1)>
        where
            __MochiA0: ?::core::marker::Sized + ::mochi::__private::Peel<#scalar>,
            __MochiA1: ?::core::marker::Sized + ::mochi::__private::Peel<#rhs>,
        {
            type Output = #output;
            type Pullback = ::mochi::BoxedPullback<
                <#output as ::mochi::Tangent>::Tangent,
                (<#scalar as ::mochi::Tangent>::Tangent, <#rhs as ::mochi::Tangent>::Tangent),
            >;
            #[inline(always)]
            fn #method(self) -> (Self::Output, Self::Pullback) {
                let (__mochi_a0, __mochi_a1) = self.0;
                let (y, pb) = #rhs::#rr(
                    ::core::clone::Clone::clone(::mochi::__private::Peel::<#rhs>::peel(__mochi_a1)),
                    ::core::clone::Clone::clone(::mochi::__private::Peel::<#scalar>::peel(__mochi_a0)),
                );
                (
                    y,
                    ::mochi::BoxedPullback::new(::mochi::__private::pullback2(
                        move |dy: <#output as ::mochi::Tangent>::Tangent,
                              (ds, dv): (&mut <#scalar as ::mochi::Tangent>::Tangent, &mut <#rhs as ::mochi::Tangent>::Tangent)| {
                            ::mochi::Pullback::pullback(pb, dy, (dv, ds))
                        },
                    )),
                )
            }
        }
    })
}

/// The method of an operator's `impl` for a type of the user's (`impl Add for V2 { fn
/// add(self, o: V2) -> V2 }`, also `Sub`, `Mul`, `Div` and `Neg`, by value or by
/// reference): the rule the lowering names for the operator (`Call((&a, &b)).op_add()`),
/// as a private trait routing to the method's derived rule (`V2::add_rrule`).
fn operator_rule_trait(
    type_name: &str,
    trait_name: Option<&str>,
    written_method: &syn::Ident,
    output: Option<&syn::Type>,
    sig: &syn::Signature,
) -> Option<TokenStream> {
    let op = operator_rule(trait_name?, written_method)?;
    let ty = syn::Ident::new(type_name, sig.ident.span());
    let mut params = Vec::new();
    for input in &sig.inputs {
        params.push(match input {
            FnArg::Receiver(r) if r.reference.is_some() && r.mutability.is_none() => {
                syn::parse_quote!(&#ty)
            }
            FnArg::Receiver(r) if r.reference.is_none() => syn::parse_quote!(#ty),
            FnArg::Receiver(_) => return None,
            FnArg::Typed(pt) => (*pt.ty).clone(),
        });
    }
    let mut ret = match &sig.output {
        syn::ReturnType::Type(_, t) => (**t).clone(),
        syn::ReturnType::Default => return None,
    };
    // (`-> Self::Output`: the impl's `type Output`.)
    if quote!(#ret).to_string().contains("Output") {
        ret = output?.clone();
    }
    let tr = operator_rule_trait_name(type_name, op, params.get(1));
    let method = format_ident!("{}", op);
    let rr = format_ident!("{}_rrule", sig.ident);
    routed_rule_trait(
        &ty,
        &tr,
        &method,
        &rr,
        CallPieces::default(),
        params,
        ret,
        sig,
        None,
    )
}

/// The rule an operator trait's method is lowered to (`Add::add`: `op_add`).
fn operator_rule(trait_name: &str, method: &syn::Ident) -> Option<&'static str> {
    Some(match (trait_name, method.to_string().as_str()) {
        ("Add", "add") => "op_add",
        ("Sub", "sub") => "op_sub",
        ("Mul", "mul") => "op_mul",
        ("Div", "div") => "op_div",
        ("Neg", "neg") => "op_neg",
        _ => return None,
    })
}

/// The private trait of the user's operator `op` on `type_name` with the right operand
/// `rhs` as written: one trait per right operand (`Mul<f64>` and `Mul<V2>` may both be).
fn operator_rule_trait_name(type_name: &str, op: &str, rhs: Option<&syn::Type>) -> syn::Ident {
    let rhs: String = rhs
        .map(|t| t.to_token_stream().to_string())
        .unwrap_or_default()
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect();
    format_ident!("__MochiOperatorRule_{}_{}_{}", type_name, op, rhs)
}

/// A twin's signature as the struct's mirror takes it (`Self` named, see
/// [`mirror_method`] and [`mirror_operator`]): the struct, its mirror, the scalar, the
/// twin's generics, its result (`None` for `()` where `unit` is not allowed).
struct MirrorTwin {
    ty: syn::Ident,
    mirror: syn::Ident,
    t: syn::Ident,
    sig: syn::Signature,
    ret: syn::Type,
    params: TokenStream,
    preds: Vec<syn::WherePredicate>,
}

impl MirrorTwin {
    fn new(type_name: &str, twin: &syn::Signature, unit: bool) -> Option<Self> {
        let ty = syn::Ident::new(type_name, twin.ident.span());
        let mut sig = twin.clone();
        crate::rewrite::ReplaceType {
            from: "Self",
            to: syn::parse_quote!(#ty),
        }
        .visit_signature_mut(&mut sig);
        let ret: syn::Type = match &sig.output {
            syn::ReturnType::Type(_, r) => (**r).clone(),
            syn::ReturnType::Default if unit => syn::parse_quote!(()),
            syn::ReturnType::Default => return None,
        };
        let params = &sig.generics.params;
        let params = quote!(#params);
        let preds = sig
            .generics
            .where_clause
            .as_ref()
            .map(|w| w.predicates.iter().cloned().collect::<Vec<_>>())
            .unwrap_or_default();
        Some(MirrorTwin {
            mirror: format_ident!("__MochiTwin{}", type_name),
            t: syn::Ident::new(crate::twin::PARAM, proc_macro2::Span::call_site()),
            ty,
            sig,
            ret,
            params,
            preds,
        })
    }

    /// The cotangent type of the twin's result.
    fn out_tangent(&self) -> TokenStream {
        let ret = &self.ret;
        quote!(<fn(&'static ()) -> #ret as ::mochi::__private::TangentOfOutput>::Tangent)
    }

    /// The method the twin is made from (`apply` of
    /// `apply__twin_needs_differentiable_higher_order`).
    fn method(&self) -> Option<syn::Ident> {
        let name = self.sig.ident.to_string();
        Some(syn::Ident::new(
            crate::twin::method_of_twin(&name)?,
            self.sig.ident.span(),
        ))
    }

    /// The rule trait `tr`'s `impl` for mirror arguments `call`, routing to the twin's
    /// derived rule.
    fn rule_impl(&self, call: &CallPieces, tr: &syn::Ident, method: &syn::Ident) -> TokenStream {
        let MirrorTwin {
            ty,
            t,
            ret,
            params,
            preds,
            ..
        } = self;
        let twin_rr = format_ident!("{}_rrule", self.sig.ident);
        let out_t = self.out_tangent();
        call.rule_impl(
            tr,
            method,
            quote!(#params,),
            quote!(#(#preds,)*),
            ret,
            out_t,
            quote!(#ty::#twin_rr::<#t>),
        )
    }
}

/// An operator of the user's (`impl Add for V2`, `impl Mul<f64> for V2`, `impl Neg for
/// V2`) with a generic form, given to the struct's generic mirror: the operator trait
/// implemented for the mirror (its right operand and result the twin's, `Mul<T>` for
/// `Mul<f64>`), calling the twin, and the operator's rule trait implemented for mirror
/// operands, routing to the twin's rule. The generic form of a function asking for
/// `higher_order` then keeps `(a + b) * 0.5 - a` of its mirrors as written.
fn mirror_operator(
    type_name: &str,
    trait_name: &str,
    written_method: &syn::Ident,
    sig: &syn::Signature,
    twin: &syn::Signature,
) -> Option<TokenStream> {
    let op = operator_rule(trait_name, written_method)?;
    let rhs_written = sig.inputs.iter().nth(1).map(|a| match a {
        FnArg::Typed(pt) => (*pt.ty).clone(),
        FnArg::Receiver(_) => syn::parse_quote!(Self),
    });
    let tr = operator_rule_trait_name(type_name, op, rhs_written.as_ref());
    let method = format_ident!("{}", op);
    let m = MirrorTwin::new(type_name, twin, false)?;
    let (ty, mirror, t, ret) = (&m.ty, &m.mirror, &m.t, &m.ret);
    let mut types = Vec::new();
    for (k, input) in m.sig.inputs.iter().enumerate() {
        let FnArg::Typed(pt) = input else { return None };
        if k == 0 {
            // The receiver, `self` by value: the mirror.
            if matches!(&*pt.ty, syn::Type::Reference(_)) {
                return None;
            }
            types.push(syn::parse_quote!(#mirror<#t>));
        } else {
            types.push((*pt.ty).clone());
        }
    }
    if quote!(#ret #(#types)*).to_string().contains('&') {
        return None;
    }
    let (params, where_preds) = (&m.params, &m.preds);
    let std_trait = format_ident!("{}", trait_name);
    let std_method = written_method;
    let twin_name = &twin.ident;
    let operator = match types.get(1) {
        Some(rhs) => quote! {
            impl<#params> ::core::ops::#std_trait<#rhs> for #mirror<#t> where #(#where_preds,)* {
                type Output = #ret;
                #[inline]
                fn #std_method(self, __mochi_o: #rhs) -> #ret {
                    #ty::#twin_name::<#t>(self, __mochi_o)
                }
            }
        },
        None => quote! {
            impl<#params> ::core::ops::#std_trait for #mirror<#t> where #(#where_preds,)* {
                type Output = #ret;
                #[inline]
                fn #std_method(self) -> #ret {
                    #ty::#twin_name::<#t>(self)
                }
            }
        },
    };
    // The left operand the mirror itself (which names the scalar type), the right one
    // behind a reference or two, as in `mirror_method`.
    let mut call = CallPieces::receiver(
        None,
        quote!(#mirror<#t>),
        quote!(::core::clone::Clone::clone(__mochi_s)),
        quote!(<#mirror<#t> as ::mochi::Tangent>::Tangent),
    );
    for (k, p) in types.iter().enumerate().skip(1) {
        call.push(peeled_arg(k - 1, p)?);
    }
    let imp = m.rule_impl(&call, &tr, &method);
    Some(quote! {
        #[allow(non_camel_case_types, clippy::all, dead_code)]
        #operator
        #imp
    })
}

/// An associated function of the user's without `self` (`V2::new(a, b)`, `Model::init(w)`)
/// called from outside its block: the call site takes `Type::f(args)` for a rule crate's
/// constructor and calls the rule `Call((&a, &b)).v2_new()`, named after the type in
/// snake case, which this trait makes the function's derived rule (`V2::new_rrule`).
/// Arguments as in [`method_rule_trait`]; `Self` in the signature is the type.
fn associated_rule_trait(type_name: &str, sig: &syn::Signature) -> Option<TokenStream> {
    associated_rule_trait_as(type_name, sig, &sig.ident)
}

/// [`associated_rule_trait`] for a function whose companions are named after `sig`'s
/// name and whose calls are written with `written` (`Vec2::from(a)` of a `From`'s
/// `from_f642_rrule`).
fn associated_rule_trait_as(
    type_name: &str,
    sig: &syn::Signature,
    written: &syn::Ident,
) -> Option<TokenStream> {
    if sig.inputs.is_empty() {
        return None;
    }
    let mut params = Vec::new();
    for input in &sig.inputs {
        let FnArg::Typed(pt) = input else { return None };
        params.push((*pt.ty).clone());
    }
    let ret = match &sig.output {
        syn::ReturnType::Type(_, t) => (**t).clone(),
        syn::ReturnType::Default => return None,
    };
    let ty = syn::Ident::new(type_name, sig.ident.span());
    let method = format_ident!(
        "{}_{}",
        crate::lower::expr::snake_case(type_name),
        written,
        span = sig.ident.span()
    );
    let tr = format_ident!("__MochiAssociatedRule_{}_{}", type_name, sig.ident);
    let rr = format_ident!("{}_rrule", sig.ident);
    routed_rule_trait(
        &ty,
        &tr,
        &method,
        &rr,
        CallPieces::default(),
        params,
        ret,
        sig,
        Some(written),
    )
}

/// A private trait `tr` with the rule method `method`, implemented for the `Call` of
/// references to values of `params`' types (each argument peeled to its type, a value
/// cloned), calling `ty::rr` and boxing its pullback. `Self` in the types is `ty`.
/// Nothing for a generic function, a `&mut` or `impl Trait` parameter, or a result
/// holding a reference. The arguments follow those already in `call` (a method's
/// receiver).
#[allow(clippy::too_many_arguments)]
fn routed_rule_trait(
    ty: &syn::Ident,
    tr: &syn::Ident,
    method: &syn::Ident,
    rr: &syn::Ident,
    mut call: CallPieces,
    params: Vec<syn::Type>,
    mut ret: syn::Type,
    sig: &syn::Signature,
    written: Option<&syn::Ident>,
) -> Option<TokenStream> {
    if !sig.generics.params.is_empty() {
        return None;
    }
    let mut to_type = crate::rewrite::ReplaceType {
        from: "Self",
        to: syn::parse_quote!(#ty),
    };
    to_type.visit_type_mut(&mut ret);
    if quote!(#ret).to_string().contains('&') {
        return None;
    }
    let mut param_tys = Vec::new();
    for (k, mut p) in params.into_iter().enumerate() {
        to_type.visit_type_mut(&mut p);
        call.push(peeled_arg(k, &p)?);
        param_tys.push(p);
    }
    let out_t = quote!(<#ret as ::mochi::Tangent>::Tangent);
    let self_ty: syn::Type = syn::parse_quote!(#ty);
    let mut named: Vec<&syn::Type> = vec![&self_ty, &ret];
    named.extend(param_tys.iter());
    let assoc = written.map(|w| (ty, w));
    let decl = rule_trait_decl(crate::twin::rule_trait_vis(&named), tr, method, assoc);
    let imp = call.rule_impl(
        tr,
        method,
        quote!(),
        quote!(),
        &ret,
        out_t,
        quote!(#ty::#rr),
    );
    Some(quote!(#decl #imp))
}

/// A `&self` method of the user's called where the call site cannot tell it from a
/// rule crate's method of the same name on a type of its own (`v.dot(&w)`, `v.norm()`
/// of a `struct V3`, against `m.transpose()` of a rule crate's matrix type), or on a
/// value whose type it cannot see (`let b = a.scale(s); b.add(a)`): it calls the rule,
/// `Call((&v, &w)).dot()`, which this trait makes the method's derived rule for `V3`
/// (rustc picks the trait implemented for the arguments' types). Each argument is taken
/// behind one reference more than the caller held it, or as many (`__private::Peel`);
/// the pullback is boxed (a trait cannot name the derived rule's pullback type without
/// capturing the arguments' lifetimes). The trait is private to the block's module (the
/// type may be): reached from the functions of that module and of its children.
fn method_rule_trait(type_name: &str, sig: &syn::Signature) -> Option<TokenStream> {
    let name = sig.ident.to_string();
    let Some(receiver) = sig.receiver() else {
        return associated_rule_trait(type_name, sig);
    };
    // (`&mut self` has its own path; `self` by value is given a clone of the value the
    // lowering passes by reference, `q.swapped()` of a `Copy` or `Clone` struct.)
    if receiver.reference.is_some() && receiver.mutability.is_some() {
        return None;
    }
    let by_value = receiver.reference.is_none();
    let ty = syn::Ident::new(type_name, sig.ident.span());
    let ret: syn::Type = match &sig.output {
        syn::ReturnType::Type(_, t) => (**t).clone(),
        syn::ReturnType::Default => syn::parse_quote!(()),
    };
    let params = sig
        .inputs
        .iter()
        .skip(1)
        .map(|a| match a {
            FnArg::Typed(pt) => Some((*pt.ty).clone()),
            FnArg::Receiver(_) => None,
        })
        .collect::<Option<Vec<_>>>()?;
    let tr = format_ident!("__MochiMethodRule_{}_{}", type_name, name);
    let rr = format_ident!("{}_rrule", name);
    // The receiver first: `&self` of the type, behind one reference more or as many.
    let (bound, passed) = if by_value {
        (
            quote!(__MochiS: ::mochi::__private::PeelOwned<#ty>),
            quote!(::mochi::__private::PeelOwned::<#ty>::peel_owned(__mochi_s)),
        )
    } else {
        (
            quote!(__MochiS: ?::core::marker::Sized + ::mochi::__private::Peel<#ty>),
            quote!(::mochi::__private::Peel::<#ty>::peel(__mochi_s)),
        )
    };
    let receiver = CallPieces::receiver(
        Some(bound),
        quote!(__MochiS),
        passed,
        quote!(<#ty as ::mochi::Tangent>::Tangent),
    );
    routed_rule_trait(&ty, &tr, &sig.ident, &rr, receiver, params, ret, sig, None)
}

/// The generic arguments of a trait as one word (`<[f64; 2]>` → `f642`), to name the
/// companions of one of several implementations of it (`mul_f64`, `from_f642`).
fn type_args_word(a: &syn::AngleBracketedGenericArguments) -> String {
    a.args
        .to_token_stream()
        .to_string()
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect()
}

/// The trait of a rule the lowering names, `Call((&a, &b)).method()`, as visible as
/// the types its `impl` names allow (`twin::rule_trait_vis`), and its `impl` of
/// `__private::OwnedRule` keyed by `method`'s name, through which a call site where the
/// trait is not in scope reaches it (a type imported by name, `use crate::geom::V2;`:
/// `lower/norule.rs`). The `impl`'s marker type is as visible as the trait, so that
/// rustc may infer it wherever the rule may be called.
///
/// An associated function's (`assoc`: its type and its name as called, `Vec3` and
/// `new`) is also keyed by the function's name and its type, `(RuleName<H>, Vec3)`: a
/// call site names the type by the path it wrote (`lower/norule.rs`).
fn rule_trait_decl(
    vis: TokenStream,
    tr: &syn::Ident,
    method: &syn::Ident,
    assoc: Option<(&syn::Ident, &syn::Ident)>,
) -> TokenStream {
    let owner = format_ident!("{}_Owner", tr);
    let call = quote!(::mochi::__private::Call<__MochiA>);
    // The `impl` of `OwnedRule` under the key `key`, delegating to the trait.
    let owned = |key: TokenStream| {
        quote! {
            #[allow(non_camel_case_types)]
            impl<__MochiA> ::mochi::__private::OwnedRule<#key, #owner> for #call
            where
                #call: #tr,
            {
                type Output = <#call as #tr>::Output;
                type Pullback = <#call as #tr>::Pullback;
                #[inline(always)]
                fn owned_rule(self) -> (Self::Output, Self::Pullback) {
                    <#call as #tr>::#method(self)
                }
            }
        }
    };
    let by_name = owned(crate::lower::rule_name(&method.to_string()));
    let by_path = assoc.map(|(ty, f)| {
        let name = crate::lower::rule_name(&format!("::{f}"));
        owned(quote!((#name, #ty)))
    });
    quote! {
        #[doc(hidden)]
        #[allow(non_camel_case_types)]
        #vis trait #tr {
            type Output;
            type Pullback;
            fn #method(self) -> (Self::Output, Self::Pullback);
        }
        #[doc(hidden)]
        #[allow(non_camel_case_types, dead_code)]
        #vis struct #owner;
        #by_name
        #by_path
    }
}

/// The arguments of a rule trait's `impl` for `Call<(..)>`, in order: each argument's
/// lifetime and type parameter, its element of the tuple, its binding, what is passed
/// on, and its cotangent (see [`peeled_arg`]).
#[derive(Default)]
struct CallPieces {
    lifetimes: Vec<TokenStream>,
    generics: Vec<TokenStream>,
    elems: Vec<TokenStream>,
    binds: Vec<TokenStream>,
    args: Vec<TokenStream>,
    cots: Vec<TokenStream>,
}

impl CallPieces {
    /// A receiver first, `&'__mochi_s ty` bound as `__mochi_s` (with its type parameter
    /// `generic` when `ty` names one), passed on as `arg`.
    fn receiver(
        generic: Option<TokenStream>,
        ty: TokenStream,
        arg: TokenStream,
        cot: TokenStream,
    ) -> Self {
        CallPieces {
            lifetimes: vec![quote!('__mochi_s)],
            generics: generic.into_iter().collect(),
            elems: vec![quote!(&'__mochi_s #ty)],
            binds: vec![quote!(__mochi_s)],
            args: vec![arg],
            cots: vec![cot],
        }
    }

    fn push(&mut self, a: PeeledArg) {
        self.lifetimes.push(a.lifetime);
        self.generics.push(a.generic);
        self.elems.push(a.elem);
        self.binds.push(a.bind);
        self.args.push(a.arg);
        self.cots.push(a.cot);
    }

    /// `impl tr for Call<(..)>` calling `callee` with the arguments and boxing its
    /// pullback (a trait cannot name the derived rule's pullback type), with the extra
    /// type parameters `params` and where-clause predicates `preds`.
    #[allow(clippy::too_many_arguments)]
    fn rule_impl(
        &self,
        tr: &syn::Ident,
        method: &syn::Ident,
        params: TokenStream,
        preds: TokenStream,
        ret: &syn::Type,
        out_t: TokenStream,
        callee: TokenStream,
    ) -> TokenStream {
        let CallPieces {
            lifetimes,
            generics,
            elems,
            binds,
            args,
            cots,
        } = self;
        quote! {
            #[allow(non_camel_case_types, clippy::all)]
            impl<#(#lifetimes,)* #params #(#generics),*> #tr for ::mochi::Call<(#(#elems,)*)>
            where #preds
            {
                type Output = #ret;
                type Pullback = ::mochi::BoxedPullback<#out_t, (#(#cots,)*)>;
                #[inline(always)]
                fn #method(self) -> (Self::Output, Self::Pullback) {
                    let (#(#binds,)*) = self.0;
                    let (y, pb) = #callee(#(#args),*);
                    (y, ::mochi::BoxedPullback::new(pb))
                }
            }
        }
    }
}

/// One argument `k` of type `p` (`Self` already named) of a rule trait's `impl` for
/// `Call<(..)>`: taken as `&'a A` with `A: Peel<V>` of its value type `V` (`o: &V3`, the
/// value behind the reference; `s: f64`, a copy of it), passed on as the value or a
/// clone, its cotangent named through `TangentOfOutput`. `None` for a `&mut`, an
/// `impl Trait` or a type holding a reference.
struct PeeledArg {
    lifetime: TokenStream,
    generic: TokenStream,
    elem: TokenStream,
    bind: TokenStream,
    arg: TokenStream,
    cot: TokenStream,
}

fn peeled_arg(k: usize, p: &syn::Type) -> Option<PeeledArg> {
    let (value, by_ref) = match p {
        syn::Type::Reference(r) if r.mutability.is_none() => (&*r.elem, true),
        syn::Type::Reference(_) => return None,
        other => (other, false),
    };
    if quote!(#value).to_string().contains('&') || matches!(value, syn::Type::ImplTrait(_)) {
        return None;
    }
    let (l, a, b) = (
        syn::Lifetime::new(&format!("'__mochi_a{k}"), proc_macro2::Span::call_site()),
        format_ident!("__MochiA{}", k),
        format_ident!("__mochi_a{}", k),
    );
    let arg = if by_ref {
        quote!(::mochi::__private::Peel::<#value>::peel(#b))
    } else {
        quote!(::core::clone::Clone::clone(::mochi::__private::Peel::<#value>::peel(#b)))
    };
    let mut stat = p.clone();
    crate::types::Staticize.visit_type_mut(&mut stat);
    Some(PeeledArg {
        lifetime: quote!(#l),
        generic: quote!(#a: ?::core::marker::Sized + ::mochi::__private::Peel<#value>),
        elem: quote!(&#l #a),
        bind: quote!(#b),
        arg,
        cot: quote!(<fn(&'static ()) -> #stat as ::mochi::__private::TangentOfOutput>::Tangent),
    })
}

/// Whether `a` is `#[differentiable]` (or `#[mochi::differentiable(..)]`).
fn is_differentiable(a: &syn::Attribute) -> bool {
    a.path()
        .segments
        .last()
        .is_some_and(|s| s.ident == "differentiable")
}

/// `Type::f(..)` as `Self::f(..)` for the associated functions `names` of `Type`.
struct SelfPaths<'a> {
    type_name: &'a str,
    names: &'a HashSet<String>,
}

impl VisitMut for SelfPaths<'_> {
    fn visit_expr_call_mut(&mut self, c: &mut syn::ExprCall) {
        if let syn::Expr::Path(p) = &mut *c.func {
            let segs = &p.path.segments;
            if p.qself.is_none()
                && segs.len() == 2
                && segs[0].ident == self.type_name
                && segs[0].arguments.is_none()
                && self.names.contains(&segs[1].ident.to_string())
            {
                let span = segs[0].ident.span();
                p.path.segments[0].ident = syn::Ident::new("Self", span);
            }
        }
        syn::visit_mut::visit_expr_call_mut(self, c);
    }
}

/// The companions of a method, as associated functions (see [`method`]).
fn method_companions(func: &ItemFn, options: &Options) -> syn::Result<Vec<TokenStream>> {
    let name = &func.sig.ident;
    let expanded = derive(func, options)?;
    let file: syn::File = syn::parse2(expanded)?;
    let vis = &func.vis;
    let mut out = Vec::new();
    // The modules whose items become associated functions: the method's own and, with
    // the higher-order companions, its twin's (`loss__twin_needs_differentiable_higher_order::rrule`
    // becomes `Self::loss__twin_needs_differentiable_higher_order_rrule`).
    let modules: HashSet<String> = file
        .items
        .iter()
        .filter_map(|i| match i {
            syn::Item::Mod(m) => Some(m.ident.to_string()),
            _ => None,
        })
        .collect();
    for item in file.items {
        let m = match item {
            syn::Item::Mod(m) => m,
            // The twin, beside the method: an associated function too.
            // (As visible as the method: none in a trait's `impl`, where a qualifier
            // would be the first error, before the hint's.)
            syn::Item::Fn(mut f) if f.sig.ident != *name => {
                f.vis = vis.clone();
                ModulePaths { modules: &modules }.visit_item_fn_mut(&mut f);
                out.push(quote!(#[allow(clippy::all, clippy::pedantic, unused_mut, unused_variables, unused_parens, non_snake_case, unreachable_code, unused_assignments, unused_braces, elided_lifetimes_in_paths, dead_code)] #f));
                continue;
            }
            // The function as written: the method itself.
            _ => continue,
        };
        let prefix = m.ident.clone();
        let Some((_, items)) = m.content else {
            continue;
        };
        // Other items (the missing-rule fallbacks) go into each function's body: an
        // `impl` block holds no module.
        let (fns, others): (Vec<_>, Vec<_>) = items
            .into_iter()
            .filter(|i| !matches!(i, syn::Item::Use(_)))
            .partition(|i| matches!(i, syn::Item::Fn(_)));
        let fns: Vec<syn::ItemFn> = fns
            .into_iter()
            .filter_map(|i| match i {
                syn::Item::Fn(f) => Some(f),
                _ => None,
            })
            .collect();
        let siblings: HashSet<String> = fns.iter().map(|f| f.sig.ident.to_string()).collect();
        for mut f in fns {
            let renamed = format_ident!("{}_{}", prefix, f.sig.ident);
            f.sig.ident = renamed;
            SiblingCalls {
                method: &prefix,
                siblings: &siblings,
            }
            .visit_block_mut(&mut f.block);
            ModulePaths { modules: &modules }.visit_block_mut(&mut f.block);
            f.block
                .stmts
                .splice(0..0, others.iter().cloned().map(syn::Stmt::Item));
            let attrs = &f.attrs;
            let sig = &f.sig;
            let block = &f.block;
            out.push(quote!(
                #(#attrs)*
                #[allow(clippy::all, clippy::pedantic, unused_mut, unused_variables, unused_parens, non_snake_case, unreachable_code, unused_assignments, unused_braces, elided_lifetimes_in_paths)]
                #vis #sig #block
            ));
        }
    }
    if expansion_asked(func) {
        eprintln!("{}", quote!(#(#out)*));
    }
    Ok(out)
}

/// Paths into the derived modules of a method (`m::rrule`, `super::m::gradient::<D>`,
/// with `m` the method's module or its twin's, see `twin::method_twin_name`) as the
/// associated functions they become (`Self::m_rrule`).
struct ModulePaths<'a> {
    modules: &'a HashSet<String>,
}

impl VisitMut for ModulePaths<'_> {
    fn visit_path_mut(&mut self, p: &mut syn::Path) {
        let segs: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        let skip = usize::from(segs.first().is_some_and(|s| s == "super"));
        if p.leading_colon.is_none() && segs.len() == skip + 2 && self.modules.contains(&segs[skip])
        {
            let last = p.segments.last().unwrap();
            let id = format_ident!("{}_{}", segs[skip], last.ident);
            let args = last.arguments.clone();
            *p = syn::parse_quote!(Self::#id #args);
            return;
        }
        syn::visit_mut::visit_path_mut(self, p);
    }
}

/// Calls between the companions (`rrule(..)`, `value_and_gradient_into(..)`) as
/// associated functions of the method's type (`Self::loss_rrule(..)`).
struct SiblingCalls<'a> {
    method: &'a syn::Ident,
    siblings: &'a HashSet<String>,
}

impl VisitMut for SiblingCalls<'_> {
    fn visit_expr_call_mut(&mut self, c: &mut syn::ExprCall) {
        if let syn::Expr::Path(p) = &mut *c.func {
            if p.qself.is_none() && p.path.segments.len() == 1 {
                let seg = &p.path.segments[0];
                if self.siblings.contains(&seg.ident.to_string()) {
                    let id = format_ident!("{}_{}", self.method, seg.ident);
                    let args = seg.arguments.clone();
                    p.path = syn::parse_quote!(Self::#id #args);
                }
            }
        }
        syn::visit_mut::visit_expr_call_mut(self, c);
    }
}

fn combine(e: syn::Error, item: TokenStream) -> TokenStream {
    let err = e.to_compile_error();
    quote!(#err #item)
}

/// The options of `#[differentiable(..)]`.
#[derive(Default)]
struct Options {
    /// `boxed`: a boxed pullback, for mutual recursion.
    boxed: bool,
    /// `higher_order`: on a method, its higher-order companions (free functions have
    /// them without asking).
    higher_order: bool,
    /// An associated function without `self`, in an `impl` block marked
    /// `#[differentiable]`: its companions are associated functions, as a method's.
    associated: bool,
    /// The sources of the functions taking closures that this one calls (`inline`).
    sources: Vec<TokenStream>,
    /// The function as written was emitted by the first expansion.
    primal_written: bool,
    /// The options as written, passed on when asking for a callee's source.
    tokens: TokenStream,
}

fn parse_attr(attr: TokenStream) -> syn::Result<Options> {
    let mut options = Options::default();
    let malformed = || {
        syn::Error::new_spanned(
            &attr,
            "expected `#[differentiable]`, `#[differentiable(boxed)]` or `#[differentiable(higher_order)]`",
        )
    };
    let mut tokens = attr.clone().into_iter().peekable();
    while let Some(t) = tokens.next() {
        let id = match t {
            proc_macro2::TokenTree::Ident(i) => i,
            proc_macro2::TokenTree::Punct(p) if p.as_char() == ',' => continue,
            _ => return Err(malformed()),
        };
        // The source of a function taking a closure, added by that function's macro
        // when this one asked for it (see `inline`), and the mark that the function as
        // written is out already.
        if id == "__source" {
            match tokens.next() {
                Some(proc_macro2::TokenTree::Group(g))
                    if g.delimiter() == proc_macro2::Delimiter::Brace =>
                {
                    options.sources.push(g.stream());
                }
                _ => return Err(malformed()),
            }
            continue;
        }
        if id == "__primal_written" {
            options.primal_written = true;
        } else if id == "boxed" {
            options.boxed = true;
        } else if id == "higher_order" {
            options.higher_order = true;
        } else {
            return Err(syn::Error::new_spanned(
                id,
                "unknown option; the options are `boxed` (a boxed pullback, for mutual recursion) and `higher_order` (a method's `jvp`, `hvp`, `hessian` and `jacobian`)",
            ));
        }
        if !matches!(tokens.peek(), None | Some(proc_macro2::TokenTree::Punct(_))) {
            return Err(malformed());
        }
    }
    options.tokens = attr;
    Ok(options)
}

fn derive(func: &ItemFn, options: &Options) -> syn::Result<TokenStream> {
    derive_with(func, options, true, false)
}

/// The derivation: analyse, lower, emit. `with_higher` adds the higher-order companions
/// and the rules (a twin has neither: only its fused gradient is called).
fn derive_with(
    func: &ItemFn,
    options: &Options,
    with_higher: bool,
    primal_via_rule: bool,
) -> syn::Result<TokenStream> {
    // The derived items live in the function's module: its paths are seen from there.
    let written = func;
    let mut inside = crate::rewrite::from_inside_module(written);
    crate::tryop::write_out(&mut inside);
    let func = &inside;
    let mut an = crate::analysis::analyse(func);
    let (beside, higher) = if with_higher {
        higher_order(written, func, options)
    } else {
        (TokenStream::new(), TokenStream::new())
    };
    let mut lowerer = Lowerer::new(&func.sig.ident.to_string(), an.active.clone());
    lowerer.float_ty = an.float_ty.clone();
    lowerer.seq_calls = crate::rewrite::sequence_valued_calls(&func.block);
    lowerer.receivers = an.receivers.clone();
    lowerer.struct_seqs = func
        .sig
        .inputs
        .iter()
        .filter_map(|a| match a {
            FnArg::Typed(pt) => match &*pt.pat {
                syn::Pat::Ident(i) if crate::desugar::Receiver::user_elements(&pt.ty).is_some() => {
                    Some(i.ident.to_string())
                }
                _ => None,
            },
            FnArg::Receiver(_) => None,
        })
        .collect();
    lowerer.mut_refs = crate::lower::changeable_params(&func.sig);
    lowerer.ret_ty = match &func.sig.output {
        syn::ReturnType::Type(_, t)
            if crate::tryop::last_ident(t).as_deref() == Some("Result")
                && !crate::activity::tokens_mention(&quote::quote!(#t), &|i| i == "impl") =>
        {
            Some((**t).clone())
        }
        _ => None,
    };
    let lowered = lowerer.lower_body(std::mem::take(&mut an.specs), &an.body);
    let fallbacks = lowerer.fallback_items();
    if let Some(first) = lowerer.errors.first().cloned() {
        let mut all = first;
        for e in lowerer.errors.into_iter().skip(1) {
            all.combine(e);
        }
        return Err(all);
    }
    Ok(crate::emit::module(
        func,
        &an,
        lowered,
        crate::emit::Extras {
            written,
            beside,
            higher,
            fallbacks,
            boxed: options.boxed,
            with_higher,
            primal_via_rule,
        },
    ))
}

/// The higher-order companions of `func`: the items beside it (a generic twin and its
/// derived module, for a function over `f64`) and the companions in its module. A
/// method gets none; a function with no generic form gets companions whose bound says
/// why (see `higher::unavailable`).
fn higher_order(func: &ItemFn, inner: &ItemFn, options: &Options) -> (TokenStream, TokenStream) {
    // An associated function's higher-order companions would be nested modules, which
    // an `impl` cannot hold.
    if options.associated {
        // Asked for (`#[differentiable(higher_order)]`), it has a twin as a method does
        // (`V2::new__twin_needs_differentiable_higher_order`, with its rule): the generic
        // forms of the functions that call it (`V2::new(a, b)`) call the twin.
        let twin = if !cfg!(feature = "higher-order") {
            TokenStream::new()
        } else if options.higher_order {
            crate::twin::set_builds_mirrors(true);
            method_higher_order(func).0
        } else {
            // Not asked: a constructor's stand-in, so that a caller asking for
            // `higher_order` keeps its gradient and says why where its Hessian is used.
            method_twin_stub(func, "it is not marked `#[differentiable(higher_order)]`")
        };
        let why = "it is an associated function in an `impl` block; declare it as a free function (outside the `impl`) to have them";
        return (
            twin,
            crate::higher::unavailable(func, crate::twin::Why::Associated, why),
        );
    }
    // With the `higher-order` feature of the facade (and so of this crate) off, no twin
    // and no companion is written, only the companions that say so.
    if cfg!(feature = "higher-order") {
        higher_order_items(func, inner, options.higher_order)
    } else {
        let off = crate::higher::unavailable(
            func,
            crate::twin::Why::Off,
            "the `higher-order` feature of `mochi-ad` is off",
        );
        (TokenStream::new(), off)
    }
}

/// `func` as written (its twin is written beside it) and `inner`, the same seen from
/// inside its module (where the companions and stand-ins are written). `asked`: the
/// method asked for them with `#[differentiable(higher_order)]`.
fn higher_order_items(func: &ItemFn, inner: &ItemFn, asked: bool) -> (TokenStream, TokenStream) {
    use crate::higher::{companions, unavailable, Target};
    let name = &func.sig.ident;
    crate::twin::set_builds_mirrors(asked);
    if func.sig.receiver().is_some() {
        if !asked {
            let why = "it is a method, and methods have them when asked: `#[differentiable(higher_order)]`, on a method of a struct deriving `Tangent` whose fields are floats, integers, `Vec`s or ndarray arrays of `f64`";
            return (
                method_twin_stub(func, "it is not marked `#[differentiable(higher_order)]`"),
                crate::higher::unavailable(func, crate::twin::Why::MethodNotAsked, why),
            );
        }
        return method_higher_order(func);
    }
    crate::twin::set_float_of(func);
    if !func.sig.generics.params.is_empty() && !crate::twin::consts_and_lifetimes_only(&func.sig) {
        crate::twin::set_float("f64");
        let target = Target {
            primal: quote!(super::#name),
            module: quote!(self),
            value_and_gradient: quote!(value_and_gradient::<f64>),
            pullback: quote!(pullback::<f64>),
            plain: None,
        };
        let inside = companions(inner, &target);
        let generic_form = if let Some(t) = crate::higher::real_param(func) {
            twin_bridge(func, &t).unwrap_or_else(|| {
                twin_stub(
                    inner,
                    "it is generic over `Real` with an argument or result other than its scalar, a slice, a `Vec` or a type without it",
                )
            })
        } else if crate::higher::bounds_dual_meets(func) {
            twin_reexport(func, name)
        } else if func
            .sig
            .generics
            .params
            .iter()
            .all(|p| !matches!(p, syn::GenericParam::Type(_)))
        {
            twin_stub(
                inner,
                "it is generic over a constant such as `const N: usize`; over a slice `&[f64]` it would have one",
            )
        } else {
            twin_stub(
                inner,
                "it is generic with bounds a dual number may not meet",
            )
        };
        if inside.is_empty() {
            let why = "it is generic over more than one type, or its arguments or result are not its scalar type, slices or `Vec`s of it";
            let none = unavailable(func, crate::twin::Why::Generic, why);
            return (TokenStream::new(), quote!(#none #generic_form));
        }
        return (TokenStream::new(), quote!(#inside #generic_form));
    }
    let (twin, arrays) = match crate::twin::make(func) {
        Ok(t) => t,
        Err((kind, why, _)) => {
            let none = unavailable(func, kind, &why);
            let stub = twin_stub(inner, &why);
            return (TokenStream::new(), quote!(#none #stub));
        }
    };
    // `MOCHI_TWIN=name`: the generic form as `twin::make` writes it, before its derivation.
    if std::env::var("MOCHI_TWIN").is_ok_and(|v| func.sig.ident == v) {
        eprintln!("{}", quote!(#twin));
    }
    let tname = twin.sig.ident.clone();
    let target = Target {
        primal: quote!(super::#tname),
        module: quote!(super::#tname),
        value_and_gradient: quote!(value_and_gradient),
        pullback: quote!(pullback),
        plain: None,
    };
    let seen_from_module = crate::rewrite::from_inside_module(&twin);
    // An argument of a struct or an enum of the user's (`m: &Model`, asked for with
    // `higher_order`): the twin serves the twins of the functions that call this one;
    // the companions take floats, slices and `Vec`s.
    // (Not an enum of the crate's, `act: Activation`, `loss: Loss`: the generic form
    // takes it as it is, its settings carrying no derivative, and so do the companions,
    // as they take an integer.)
    let user_arg = func.sig.inputs.iter().any(|a| {
        matches!(a, FnArg::Typed(pt) if crate::twin::user_type_arg(&pt.ty)
            .is_some_and(|(t, _)| !crate::twin::crate_enum(&t.to_string())))
    });
    // A struct result (`-> V3`): the same, the companions answering for floats.
    let user_result = matches!(&func.sig.output, syn::ReturnType::Type(_, t) if crate::twin::user_type_arg(t).is_some());
    if user_arg || user_result {
        return match derive_with(&twin, &Options::default(), false, arrays) {
            Ok(beside) => {
                let why = if user_arg {
                    "an argument is a struct or an enum: the companions take floats, slices and `Vec`s of floats (a function that calls this one, building the struct, has them)"
                } else {
                    "its result is a struct: the companions answer for floats, `Vec`s and arrays of floats (a function that calls this one and reads the struct's fields has them)"
                };
                let none = unavailable(func, crate::twin::Why::Argument, why);
                let reexport = twin_reexport(func, &tname);
                (beside, quote!(#none #reexport))
            }
            Err(e) => {
                let why = format!("its generic form cannot be derived ({e})");
                let none = unavailable(func, crate::twin::Why::Syntax, &why);
                let stub = twin_stub(inner, &why);
                (TokenStream::new(), quote!(#none #stub))
            }
        };
    }
    match twin_companions(func, &twin, arrays, &seen_from_module, &target) {
        Ok((beside, inside)) => {
            let reexport = twin_reexport(func, &tname);
            (beside, quote!(#inside #reexport))
        }
        Err((none, why)) => {
            let stub = twin_stub(inner, &why);
            (TokenStream::new(), quote!(#none #stub))
        }
    }
}

/// The twin's derived items (written beside the function) and the companions over it
/// (`for_companions` is the twin as the companions see it); or, when the twin cannot be
/// derived, the companions that say why, and the reason.
fn twin_companions(
    func: &ItemFn,
    twin: &ItemFn,
    arrays: bool,
    for_companions: &ItemFn,
    target: &crate::higher::Target,
) -> Result<(TokenStream, TokenStream), (TokenStream, String)> {
    use crate::higher::{companions_or_why, unavailable};
    match derive_with(twin, &Options::default(), false, arrays) {
        Ok(beside) => {
            let inside = companions_or_why(for_companions, target)
                .unwrap_or_else(|why| unavailable(func, crate::twin::Why::Argument, &why));
            Ok((beside, inside))
        }
        Err(e) => {
            let why = format!("its generic form cannot be derived ({e})");
            Err((unavailable(func, crate::twin::Why::Syntax, &why), why))
        }
    }
}

/// The higher-order companions of a `&self` method: its twin (an associated function
/// over the struct's generic mirror) and the twin's derived items beside it, and the
/// companions in the method's module. `method` makes all of them associated functions.
fn method_higher_order(func: &ItemFn) -> (TokenStream, TokenStream) {
    use crate::higher::{unavailable, Target};
    let name = &func.sig.ident;
    let (twin, arrays) = match crate::twin::make_method(func) {
        Ok(t) => t,
        Err((kind, why, _)) => {
            return (method_twin_stub(func, &why), unavailable(func, kind, &why));
        }
    };
    let tname = &twin.sig.ident;
    let value_and_gradient = format_ident!("{}_value_and_gradient", name);
    let pullback = format_ident!("{}_pullback", name);
    let target = Target {
        primal: quote!(Self::#tname),
        module: quote!(#tname),
        value_and_gradient: quote!(Self::#value_and_gradient),
        pullback: quote!(Self::#pullback),
        plain: Some(quote!(Self::#name)),
    };
    match twin_companions(func, &twin, arrays, &twin, &target) {
        Ok(items) => {
            METHOD_TWIN.with(|m| *m.borrow_mut() = Some(twin.sig.clone()));
            items
        }
        Err((none, why)) => (method_twin_stub(func, &why), none),
    }
}

/// A `&self` method with a generic form, given to the struct's generic mirror
/// (`__MochiTwinP2<T>`, written by `#[derive(Tangent)]`): an inherent method of the same
/// name calling the twin, and the method's rule trait (see [`method_rule_trait`]) for a
/// mirror receiver, routing to the twin's rule. The generic form of a function asking
/// for `higher_order` then keeps a call on a value it did not bind to a struct literal
/// (`p.scaled(2.0).plus(&q)`, `make(a, b).norm2()`) as written, and both the call and
/// its derivation resolve by the receiver's type.
fn mirror_method(
    type_name: &str,
    vis: &syn::Visibility,
    twin: &syn::Signature,
) -> Option<TokenStream> {
    let m = MirrorTwin::new(type_name, twin, true)?;
    let method = m.method()?;
    let (ty, mirror, t, ret) = (&m.ty, &m.mirror, &m.t, &m.ret);
    if quote!(#ret).to_string().contains('&') {
        return None;
    }
    let (params, where_preds) = (&m.params, &m.preds);
    let mut decls = Vec::new();
    let mut names = Vec::new();
    // A method taking `self` by value: its twin takes the mirror by value, a clone of
    // the one the call borrows.
    let by_value = matches!(m.sig.inputs.first(), Some(FnArg::Typed(pt))
        if !matches!(&*pt.ty, syn::Type::Reference(_)));
    let owned = |e: TokenStream| {
        if by_value {
            quote!(::core::clone::Clone::clone(#e))
        } else {
            e
        }
    };
    let this = owned(quote!(self));
    let mut call = CallPieces::receiver(
        None,
        quote!(#mirror<#t>),
        owned(quote!(__mochi_s)),
        quote!(<#mirror<#t> as ::mochi::Tangent>::Tangent),
    );
    for (k, input) in m.sig.inputs.iter().skip(1).enumerate() {
        let FnArg::Typed(pt) = input else { return None };
        let p = &*pt.ty;
        let a = peeled_arg(k, p)?;
        let b = &a.bind;
        decls.push(quote!(#b: #p));
        names.push(b.clone());
        call.push(a);
    }
    let twin_name = &twin.ident;
    let tr = format_ident!("__MochiMethodRule_{}_{}", type_name, method);
    let imp = m.rule_impl(&call, &tr, &method);
    // The method's derived rule by method syntax too (`(&mut e).step_rrule(dt)`, which
    // an element lent and written back is called by), as the struct's own companion.
    let rr = format_ident!("{}_rrule", method);
    let twin_rr = format_ident!("{}_rrule", twin_name);
    let out_t = m.out_tangent();
    let cots = &call.cots;
    Some(quote! {
        #[allow(non_camel_case_types, clippy::all, dead_code)]
        impl<#params> #mirror<#t> where #(#where_preds,)* {
            #[doc(hidden)]
            #[inline]
            #vis fn #method(&self, #(#decls),*) -> #ret {
                #ty::#twin_name::<#t>(#this, #(#names),*)
            }
            #[doc(hidden)]
            #[inline]
            #vis fn #rr(&self, #(#decls),*) -> (#ret, ::mochi::BoxedPullback<#out_t, (#(#cots,)*)>) {
                let (y, pb) = #ty::#twin_rr::<#t>(#this, #(#names),*);
                (y, ::mochi::BoxedPullback::new(pb))
            }
        }
        #imp
    })
}

/// A `&self` method whose result carries no derivative (`fn degree(&self) -> usize`),
/// given to the struct's generic mirror: an inherent method of the same name calling its
/// generic form (`twin`), with no rule (its calls are values without derivatives).
fn plain_mirror_method(
    type_name: &str,
    vis: &syn::Visibility,
    twin: &syn::Signature,
) -> Option<TokenStream> {
    let m = MirrorTwin::new(type_name, twin, false)?;
    let method = m.method()?;
    let (ty, mirror, t, ret, params) = (&m.ty, &m.mirror, &m.t, &m.ret, &m.params);
    let preds = &m.preds;
    let mut decls = Vec::new();
    let mut names = Vec::new();
    for (k, input) in m.sig.inputs.iter().skip(1).enumerate() {
        let FnArg::Typed(pt) = input else { return None };
        let (b, p) = (format_ident!("__mochi_a{}", k), &*pt.ty);
        decls.push(quote!(#b: #p));
        names.push(b);
    }
    let twin_name = &twin.ident;
    Some(quote! {
        #[allow(non_camel_case_types, clippy::all, dead_code)]
        impl<#params> #mirror<#t> where #(#preds,)* {
            #[doc(hidden)]
            #[inline]
            #vis fn #method(&self, #(#decls),*) -> #ret {
                #ty::#twin_name::<#t>(self, #(#names),*)
            }
        }
    })
}

/// The stand-in of a method's twin (and of its rule) where the method has none, so that
/// the twin of a function calling it on a struct it builds (`l.at(t)`, the twin's `l`
/// the struct's generic mirror) type-checks: the function keeps its gradient, and its
/// `jvp`, `hvp`, `hessian` and `jacobian` fail to compile with the reason when used.
/// The receiver is the mirror, which names the scalar; the other arguments are any
/// values with tangents. Nothing when the result is not floats, `Vec`s, arrays or
/// tuples of them (a caller could not name the stand-in's result).
fn method_twin_stub(func: &ItemFn, why: &str) -> TokenStream {
    let sig = &func.sig;
    if !sig.generics.params.is_empty() {
        return TokenStream::new();
    }
    if sig.receiver().is_none() {
        return constructor_twin_stub(func, why);
    }
    crate::twin::set_float_of(func);
    let t = syn::Ident::new(crate::twin::PARAM, proc_macro2::Span::call_site());
    let mut ret: syn::Type = match &sig.output {
        syn::ReturnType::Default => syn::parse_quote!(()),
        syn::ReturnType::Type(_, ty) => (**ty).clone(),
    };
    fn plain(t: &syn::Type) -> bool {
        match t {
            syn::Type::Tuple(tu) => tu.elems.iter().all(plain),
            syn::Type::Array(a) => plain(&a.elem),
            syn::Type::Paren(p) => plain(&p.elem),
            syn::Type::Path(p) if p.qself.is_none() => p.path.segments.iter().all(|s| {
                let ok = matches!(
                    s.ident.to_string().as_str(),
                    "f64"
                        | "f32"
                        | "usize"
                        | "isize"
                        | "i32"
                        | "i64"
                        | "u32"
                        | "u64"
                        | "bool"
                        | "Vec"
                        | "Array1"
                        | "Array2"
                        | "std"
                        | "vec"
                        | "ndarray"
                );
                ok && match &s.arguments {
                    syn::PathArguments::None => true,
                    syn::PathArguments::AngleBracketed(a) => a.args.iter().all(|g| match g {
                        syn::GenericArgument::Type(t) => plain(t),
                        _ => false,
                    }),
                    syn::PathArguments::Parenthesized(_) => false,
                }
            }),
            _ => false,
        }
    }
    if !plain(&ret) {
        return TokenStream::new();
    }
    crate::rewrite::ReplaceType {
        from: crate::twin::float(),
        to: syn::parse_quote!(#t),
    }
    .visit_type_mut(&mut ret);
    let params: HashSet<String> = [t.to_string()].into_iter().collect();
    let out_t = crate::types::tangent_of(&ret, &params);
    // (An enum is its own generic form: its value names no scalar, which the caller's
    // use of the result gives.)
    let of_enum = crate::twin::impl_type().is_some_and(|t| crate::twin::crate_enum(&t));
    let receiver_bound = if of_enum {
        quote!(__MochiS: ::mochi::Tangent)
    } else {
        quote!(__MochiS: ::mochi::__private::MirrorScalar<Scalar = #t> + ::mochi::Tangent)
    };
    let mut generics = vec![
        quote!(#t: ::mochi::num_traits::Float + ::mochi::Scalar + ::mochi::__private::TwinScalar),
        receiver_bound,
    ];
    let mut decls = vec![quote!(_this: &__MochiS)];
    let mut cots = vec![quote!(<__MochiS as ::mochi::Tangent>::Tangent)];
    for (k, input) in sig.inputs.iter().skip(1).enumerate() {
        let (a, v) = (format_ident!("__MochiA{}", k), format_ident!("_a{}", k));
        // (A float argument is the scalar, which names it where the receiver does not:
        // an enum's.)
        if matches!(input, FnArg::Typed(pt) if crate::twin::is_float_type(&pt.ty)) {
            decls.push(quote!(#v: #t));
            cots.push(quote!(<#t as ::mochi::Tangent>::Tangent));
            continue;
        }
        generics.push(quote!(#a: ::mochi::Tangent));
        decls.push(quote!(#v: #a));
        cots.push(quote!(<#a as ::mochi::Tangent>::Tangent));
    }
    let (name, ty) = (&sig.ident, crate::twin::method_twin_name(&sig.ident));
    let rr = format_ident!("{}_rrule", ty);
    // (The fix is to ask only where the method was not asked.)
    let fix = if why.contains("not marked") {
        "; mark the method `#[differentiable(higher_order)]`"
    } else if sig.receiver().is_some_and(|r| r.mutability.is_some()) {
        "; a method of `&self` returning the new value (`fn pushed(&self, v: f64) -> Self`) has one"
    } else {
        ""
    };
    let msg = format!(
        "mochi: the method `{name}` has no generic form ({why}), so a function that calls it has no `jvp`, `hvp`, `hessian` or `jacobian`{fix}"
    );
    let bound = quote!(fn(&'static ()) -> #ret: ::mochi::__private::TangentOfOutput);
    quote! {
        #[doc(hidden)]
        #[allow(non_snake_case, dead_code, clippy::all)]
        pub fn #ty<#(#generics),*>(#(#decls),*) -> #ret where #bound {
            struct __NoTwin<T>(::core::marker::PhantomData<T>);
            impl<T> __NoTwin<T> {
                const WHY: () = ::core::panic!("{}", #msg);
            }
            let () = __NoTwin::<#t>::WHY;
            ::core::unreachable!()
        }
        #[doc(hidden)]
        #[allow(non_snake_case, dead_code, clippy::all)]
        pub fn #rr<#(#generics),*>(#(#decls),*) -> (#ret, ::mochi::__private::NoTwinPullback<#out_t, (#(#cots,)*)>) where #bound {
            struct __NoTwin<T>(::core::marker::PhantomData<T>);
            impl<T> __NoTwin<T> {
                const WHY: () = ::core::panic!("{}", #msg);
            }
            let () = __NoTwin::<#t>::WHY;
            ::core::unreachable!()
        }
    }
}

/// The stand-in of an associated constructor's twin (and of its rule) where it has
/// none (`V2::new` in an `impl` block not asking for `higher_order`), so that the
/// generic form of a function building the struct with it (`V2::new(a, b)`) type-checks:
/// the function keeps its gradient, and its `jvp`, `hvp`, `hessian` and `jacobian` fail
/// to compile with the reason when used. The arguments are the constructor's with their
/// floats of the twin's scalar, which they name; the result is the struct's mirror,
/// named through a parameter (`SameType`) so that a struct without one fails where the
/// stand-in is called, not where it is written. Nothing for an associated function that
/// does not return the struct, or takes one.
fn constructor_twin_stub(func: &ItemFn, why: &str) -> TokenStream {
    let sig = &func.sig;
    let returns_self = match &sig.output {
        syn::ReturnType::Type(_, ty) => match &**ty {
            syn::Type::Path(p) if p.qself.is_none() => {
                p.path.is_ident("Self")
                    || crate::twin::impl_type().is_some_and(|t| p.path.is_ident(&t))
            }
            _ => false,
        },
        syn::ReturnType::Default => false,
    };
    if !returns_self {
        return TokenStream::new();
    }
    crate::twin::set_float_of(func);
    let t = syn::Ident::new(crate::twin::PARAM, proc_macro2::Span::call_site());
    let mut decls = Vec::new();
    let mut cots = Vec::new();
    for (k, input) in sig.inputs.iter().enumerate() {
        let FnArg::Typed(pt) = input else {
            return TokenStream::new();
        };
        let mut ty = (*pt.ty).clone();
        let named = quote!(#ty).to_string();
        if named.contains("Self") || crate::twin::user_type_arg(&ty).is_some() {
            return TokenStream::new();
        }
        crate::rewrite::ReplaceType {
            from: crate::twin::float(),
            to: syn::parse_quote!(#t),
        }
        .visit_type_mut(&mut ty);
        let v = format_ident!("_a{}", k);
        decls.push(quote!(#v: #ty));
        cots.push(quote!(<#ty as ::mochi::Tangent>::Tangent));
    }
    let generics = quote!(
        #t: ::mochi::num_traits::Float + ::mochi::Scalar + ::mochi::__private::TwinScalar,
        __MochiM: ::mochi::__private::LiftField
    );
    let ret = quote!(<__MochiM as ::mochi::__private::LiftField>::Of<#t>);
    let out_t = quote!(<#ret as ::mochi::Tangent>::Tangent);
    let (name, ty) = (&sig.ident, crate::twin::method_twin_name(&sig.ident));
    let rr = format_ident!("{}_rrule", ty);
    let fix = if why.contains("not marked") {
        "; mark its `impl` block `#[differentiable(higher_order)]`"
    } else {
        ""
    };
    let msg = format!(
        "mochi: the associated function `{name}` has no generic form ({why}), so a function that calls it has no `jvp`, `hvp`, `hessian` or `jacobian`{fix}"
    );
    let body = quote! {
        struct __NoTwin<T>(::core::marker::PhantomData<T>);
        impl<T> __NoTwin<T> {
            const WHY: () = ::core::panic!("{}", #msg);
        }
        let () = __NoTwin::<#t>::WHY;
        ::core::unreachable!()
    };
    let same = quote!(Self: ::mochi::__private::SameType<__MochiM>);
    quote! {
        #[doc(hidden)]
        #[allow(non_snake_case, dead_code, clippy::all)]
        pub fn #ty<#generics>(#(#decls),*) -> #ret where #same {
            #body
        }
        #[doc(hidden)]
        #[allow(non_snake_case, dead_code, clippy::all)]
        pub fn #rr<#generics>(#(#decls),*) -> (#ret, ::mochi::__private::NoTwinPullback<#out_t, (#(#cots,)*)>) where #same {
            #body
        }
    }
}

/// The visibility, inside the function's module, of a re-export as visible as the
/// function itself (which is declared in the module's parent).
fn reexport_vis(vis: &syn::Visibility) -> TokenStream {
    match vis {
        syn::Visibility::Public(_) => quote!(pub),
        syn::Visibility::Restricted(r) if r.path.is_ident("crate") => quote!(pub(crate)),
        syn::Visibility::Restricted(r) if r.path.is_ident("super") => {
            quote!(pub(in super::super))
        }
        _ => quote!(pub(super)),
    }
}

/// `f::__twin`: the generic form of `f` (its twin, or `f` itself when it is generic),
/// through which the twins of the functions that call `f` call it; `f::__twin::rrule`
/// is its rule (a `use` of a function and a module of one name brings both).
fn twin_reexport(func: &ItemFn, target: &syn::Ident) -> TokenStream {
    let vis = reexport_vis(&func.vis);
    quote! {
        #[doc(hidden)]
        #[allow(unused_imports)]
        #vis use super::#target as __twin;
    }
}

/// How a bridged argument or result holds the scalar (a `mochi::__private::shape`), or
/// `None` for a type that does not hold it.
enum Held {
    Scalar,
    /// `&T` (`fn square<T: Real>(x: &T)`, as `std::autodiff`'s examples write it).
    Ref,
    Slice,
    VecRef,
    Vec,
    /// `(T, T)` or `(T, T, T)` (a result).
    Tuple(usize),
    Not,
}

fn held(ty: &syn::Type, t: &syn::Ident) -> Option<Held> {
    let is_t = |ty: &syn::Type| matches!(ty, syn::Type::Path(p) if p.qself.is_none() && p.path.is_ident(t));
    let vec_of_t = |ty: &syn::Type| match ty {
        syn::Type::Path(p) if p.qself.is_none() => p.path.segments.last().is_some_and(|l| {
            l.ident == "Vec"
                && matches!(&l.arguments, syn::PathArguments::AngleBracketed(a)
                    if a.args.len() == 1
                        && matches!(&a.args[0], syn::GenericArgument::Type(e) if is_t(e)))
        }),
        _ => false,
    };
    if is_t(ty) {
        return Some(Held::Scalar);
    }
    if let syn::Type::Tuple(tt) = ty {
        if matches!(tt.elems.len(), 2 | 3) && tt.elems.iter().all(is_t) {
            return Some(Held::Tuple(tt.elems.len()));
        }
    }
    if vec_of_t(ty) {
        return Some(Held::Vec);
    }
    if let syn::Type::Reference(r) = ty {
        if r.mutability.is_none() {
            match &*r.elem {
                syn::Type::Slice(sl) if is_t(&sl.elem) => return Some(Held::Slice),
                e if is_t(e) => return Some(Held::Ref),
                e if vec_of_t(e) => return Some(Held::VecRef),
                _ => {}
            }
        }
    }
    (!crate::higher::mentions(ty, t)).then_some(Held::Not)
}

/// `f::__twin` of a function generic over `T: Real` alone: the callers' twins are
/// bounded by `num_traits::Float`, which cannot also be bounded by `Real` (every method
/// of the two would be ambiguous), so the generic form calls `f` at
/// `<T as Scalar>::Real` (which is `T`) and respells its arguments, result and
/// cotangents through `Scalar::to_real_shape`. `None` when an argument or the result
/// holds the scalar in another way.
fn twin_bridge(func: &ItemFn, t: &syn::Ident) -> Option<TokenStream> {
    let sig = &func.sig;
    let name = &sig.ident;
    let shape = |h: &Held| match h {
        Held::Scalar => quote!(::mochi::__private::shape::Itself),
        Held::Ref => quote!(::mochi::__private::shape::Ref<'_>),
        Held::Slice => quote!(::mochi::__private::shape::Slice<'_>),
        Held::VecRef => quote!(::mochi::__private::shape::VecRef<'_>),
        Held::Vec => quote!(::mochi::__private::shape::VecOf),
        Held::Tuple(2) => quote!(::mochi::__private::shape::Pair),
        Held::Tuple(_) => quote!(::mochi::__private::shape::Triple),
        Held::Not => quote!(),
    };
    let s = quote!(<#t as ::mochi::Scalar>);
    let mut decls = Vec::new();
    let mut to_real = Vec::new();
    let mut tangents = Vec::new();
    let mut acc_tys = Vec::new();
    let mut acc_to_real = Vec::new();
    let params: HashSet<String> = [t.to_string()].into_iter().collect();
    for (i, a) in sig.inputs.iter().enumerate() {
        let FnArg::Typed(pt) = a else { return None };
        let ty = &*pt.ty;
        let h = held(ty, t)?;
        if matches!(h, Held::Tuple(_)) {
            return None;
        }
        let v = format_ident!("__mochi_a{}", i);
        let d = format_ident!("__mochi_d{}", i);
        decls.push(quote!(#v: #ty));
        let tangent = crate::types::tangent_of(ty, &params);
        match h {
            Held::Not => {
                to_real.push(quote!(#v));
                acc_tys.push(quote!(&mut #tangent));
                acc_to_real.push(quote!(#d));
            }
            Held::Scalar | Held::Ref => {
                let sh = shape(&h);
                to_real.push(quote!(#s::to_real_shape::<#sh>(#v)));
                acc_tys.push(quote!(&mut #t));
                acc_to_real
                    .push(quote!(#s::to_real_shape::<::mochi::__private::shape::Mut<'_>>(#d)));
            }
            _ => {
                let sh = shape(&h);
                to_real.push(quote!(#s::to_real_shape::<#sh>(#v)));
                acc_tys.push(quote!(&mut ::std::vec::Vec<#t>));
                acc_to_real
                    .push(quote!(#s::to_real_shape::<::mochi::__private::shape::VecMut<'_>>(#d)));
            }
        }
        tangents.push(tangent);
    }
    if decls.is_empty() || decls.len() > 12 {
        return None;
    }
    let ret: syn::Type = match &sig.output {
        syn::ReturnType::Type(_, ty) => (**ty).clone(),
        syn::ReturnType::Default => return None,
    };
    let ret_shape = match held(&ret, t)? {
        h @ (Held::Scalar | Held::Vec | Held::Tuple(_)) => shape(&h),
        _ => return None,
    };
    let ret_tangent = crate::types::tangent_of(&ret, &params);
    let ds: Vec<syn::Ident> = (0..decls.len())
        .map(|i| format_ident!("__mochi_d{}", i))
        .collect();
    let constructor = format_ident!("pullback{}", decls.len());
    let generics =
        quote!(<#t: ::mochi::num_traits::Float + ::mochi::Scalar + ::mochi::__private::TwinScalar>);
    Some(quote! {
        #[doc(hidden)]
        #[inline]
        pub fn __twin #generics (#(#decls),*) -> #ret {
            #s::of_real_shape::<#ret_shape>(super::#name::<#s::Real>(#(#to_real),*))
        }
        #[doc(hidden)]
        pub mod __twin {
            #[allow(unused_imports)]
            use super::*;
            #[inline]
            pub fn rrule #generics (#(#decls),*) -> (
                #ret,
                impl ::mochi::Pullback<Output = #ret_tangent, Args = (#(#tangents,)*)> + use<#t>
            ) {
                let (__mochi_y, __mochi_pb) = super::rrule::<#s::Real>(#(#to_real),*);
                (
                    #s::of_real_shape::<#ret_shape>(__mochi_y),
                    ::mochi::__private::#constructor(
                        #[inline(always)]
                        move |__mochi_dy: #ret_tangent, (#(#ds,)*): (#(#acc_tys,)*)| {
                            ::mochi::Pullback::pullback(
                                __mochi_pb,
                                #s::to_real_shape::<#ret_shape>(__mochi_dy),
                                (#(#acc_to_real,)*),
                            )
                        },
                    ),
                )
            }
        }
    })
}

/// `f::__twin` of a function without a generic form: a stand-in with the signature the
/// twin would have, so that the twins of its callers still type-check. Building a
/// higher-order companion of such a caller evaluates a constant that fails to compile
/// with `f`'s reason.
fn twin_stub(func: &ItemFn, why: &str) -> TokenStream {
    let sig = &func.sig;
    // A function generic over constants only (`norm<const N: usize>`) keeps them beside
    // the stand-in's scalar, so that a caller's twin passing it an array literal (which
    // names neither) still type-checks, and says why when it is used.
    let mut consts: Vec<TokenStream> = Vec::new();
    let (t, lifetimes) = match sig.generics.params.len() {
        0 => (
            syn::Ident::new(crate::twin::PARAM, proc_macro2::Span::call_site()),
            Vec::new(),
        ),
        _ => match crate::higher::scalar_param(func) {
            Some((t, lifetimes)) => (t, lifetimes),
            None => {
                let mut lifetimes = Vec::new();
                for p in &sig.generics.params {
                    match p {
                        syn::GenericParam::Lifetime(l) => {
                            let l = &l.lifetime;
                            lifetimes.push(quote!(#l));
                        }
                        syn::GenericParam::Const(c) => consts.push(quote!(#c)),
                        syn::GenericParam::Type(_) => return TokenStream::new(),
                    }
                }
                if sig.generics.where_clause.is_some() {
                    return TokenStream::new();
                }
                (
                    syn::Ident::new(crate::twin::PARAM, proc_macro2::Span::call_site()),
                    lifetimes,
                )
            }
        },
    };
    let mut to_scalar = crate::rewrite::ReplaceType {
        from: crate::twin::float(),
        to: syn::parse_quote!(#t),
    };
    // A struct or an enum of the user's (`a: V3`, `-> V3`) is its generic mirror, as in
    // the twin of a caller asking for `higher_order`; the bound names the scalar, so it
    // is checked where the stand-in is called, not here.
    let mut lifted: Vec<TokenStream> = Vec::new();
    // (Also the elements of a slice, a `Vec` or an array of them, `ps: &[P]`, which a
    // caller's twin passes as its mirrors.)
    fn users_lifted(
        ty: &syn::Type,
        t: &syn::Ident,
        lifted: &mut Vec<TokenStream>,
    ) -> Option<syn::Type> {
        if let Some((user, by_ref)) = crate::twin::user_type_arg(ty) {
            lifted.push(quote!(fn(&'static ()) -> #user: ::mochi::__private::TwinOfOutput<#t>,));
            let of: syn::Type = syn::parse_quote!(<fn(&'static ()) -> #user as ::mochi::__private::TwinOfOutput<#t>>::Twin);
            return Some(if by_ref { syn::parse_quote!(&#of) } else { of });
        }
        match ty {
            syn::Type::Reference(r) => {
                let mut r = r.clone();
                *r.elem = users_lifted(&r.elem, t, lifted)?;
                Some(syn::Type::Reference(r))
            }
            syn::Type::Slice(sl) => {
                let mut sl = sl.clone();
                *sl.elem = users_lifted(&sl.elem, t, lifted)?;
                Some(syn::Type::Slice(sl))
            }
            syn::Type::Array(a) => {
                let mut a = a.clone();
                *a.elem = users_lifted(&a.elem, t, lifted)?;
                Some(syn::Type::Array(a))
            }
            _ => {
                let elem = crate::iterchain::vec_elem(ty).flatten()?;
                let inner = users_lifted(elem, t, lifted)?;
                Some(syn::parse_quote!(::std::vec::Vec<#inner>))
            }
        }
    }
    let mut stand_in_type = |ty: &syn::Type| -> syn::Type {
        if let Some(l) = users_lifted(ty, &t, &mut lifted) {
            return l;
        }
        let mut ty = ty.clone();
        to_scalar.visit_type_mut(&mut ty);
        ty
    };
    let mut inputs: Vec<(syn::Ident, syn::Type)> = Vec::new();
    for a in &sig.inputs {
        let FnArg::Typed(pt) = a else {
            return TokenStream::new();
        };
        if matches!(&*pt.ty, syn::Type::ImplTrait(_)) {
            return TokenStream::new();
        }
        let ty = stand_in_type(&pt.ty);
        inputs.push((format_ident!("_a{}", inputs.len()), ty));
    }
    let ret: syn::Type = match &sig.output {
        syn::ReturnType::Default => syn::parse_quote!(()),
        syn::ReturnType::Type(_, ty) => stand_in_type(ty),
    };
    let params: HashSet<String> = [t.to_string()].into_iter().collect();
    let out_t = crate::types::tangent_of(&ret, &params);
    let arg_ts: Vec<TokenStream> = inputs
        .iter()
        .map(|(_, ty)| crate::types::tangent_of(ty, &params))
        .collect();
    let decls: Vec<TokenStream> = inputs.iter().map(|(i, ty)| quote!(#i: #ty)).collect();
    // Every type must have a tangent for the stand-in's signature to be well formed;
    // the bounds say so, and a caller's twin (whose types have tangents) meets them.
    let tangent_bounds: Vec<TokenStream> = inputs
        .iter()
        .map(|(_, ty)| ty)
        .chain(std::iter::once(&ret))
        .map(|ty| {
            let mut ty = ty.clone();
            crate::types::Staticize.visit_type_mut(&mut ty);
            // (named as a function pointer's output, where hidden lifetimes are `'static`)
            quote!(fn(&'static ()) -> #ty: ::mochi::__private::TangentOfOutput,)
        })
        .chain(lifted)
        .collect();
    let name = &sig.ident;
    let msg = format!(
        "mochi: `{name}` has no generic form ({why}), so a function that calls it has no `jvp`, `hvp`, `hessian` or `jacobian`; see the documentation of `{name}::hessian`"
    );
    let generics = quote!(<#(#lifetimes,)* #(#consts,)* #t: ::mochi::num_traits::Float + ::mochi::Scalar + ::mochi::__private::TwinScalar>);
    quote! {
        #[doc(hidden)]
        pub struct __NoTwin<T>(::core::marker::PhantomData<T>);
        impl<T> __NoTwin<T> {
            #[doc(hidden)]
            pub const WHY: () = ::core::panic!("{}", #msg);
        }
        #[doc(hidden)]
        #[allow(mismatched_lifetime_syntaxes)]
        pub fn __twin #generics (#(#decls),*) -> #ret where #(#tangent_bounds)* {
            let () = __NoTwin::<#t>::WHY;
            ::core::unreachable!()
        }
        #[doc(hidden)]
        pub mod __twin {
            #[allow(unused_imports)]
            use super::*;
            #[allow(mismatched_lifetime_syntaxes)]
            pub fn rrule #generics (#(#decls),*) -> (#ret, ::mochi::__private::NoTwinPullback<#out_t, (#(#arg_ts,)*)>) where #(#tangent_bounds)* {
                let () = super::__NoTwin::<#t>::WHY;
                ::core::unreachable!()
            }
        }
    }
}
