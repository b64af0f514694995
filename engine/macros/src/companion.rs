//! `#[differentiable]`: the function as written, plus a module of the same name with its
//! derived rule and the gradient functions.

use crate::activity::{self, type_is_inactive, type_is_ref};
use crate::lower::{Lowerer, ParamSpec};
use crate::valid;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use std::collections::HashSet;
use syn::visit_mut::VisitMut;
use syn::{FnArg, ItemFn, Pat, ReturnType, Type};

pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let boxed = match parse_attr(attr) {
        Ok(b) => b,
        Err(e) => return combine(e, item),
    };
    let func: ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(e) => {
            return combine(
                syn::Error::new(e.span(), "#[differentiable] goes on a free function (`fn`); for methods, see the documentation of `mochi::differentiable`"),
                item,
            )
        }
    };
    if let Err(e) = valid::check_signature(&func) {
        return combine(e, quote!(#func));
    }
    if func
        .sig
        .inputs
        .first()
        .is_some_and(|a| matches!(a, FnArg::Receiver(_)))
    {
        return match method(&func, boxed) {
            Ok(ts) => ts,
            Err(e) => combine(e, quote!(#func)),
        };
    }
    match derive(&func, boxed) {
        Ok(ts) => {
            // `MOCHI_EXPAND=name` prints the expansion of that function (for the docs and
            // for debugging the transform).
            if std::env::var("MOCHI_EXPAND").is_ok_and(|v| func.sig.ident == v) {
                eprintln!("{ts}");
            }
            ts
        }
        // The function itself still compiles, so one mistake gives one error.
        Err(e) => combine(e, quote!(#func)),
    }
}

/// `#[differentiable]` on a method (`&self`, `&mut self` or `self`, in an `impl` block):
/// the companions are associated functions named after the method, the receiver first
/// and its cotangent first: `m.loss_gradient(&x) -> (dm, dx)`,
/// `m.loss_value_and_gradient(&x)`, `m.loss_pullback(&x)`, `Self::loss_rrule(..)`.
///
/// The derivation is the free function's with the receiver as a parameter `self: &Self`;
/// the items of its companion module become associated functions, renamed `loss_*`.
fn method(func: &ItemFn, boxed: bool) -> syn::Result<TokenStream> {
    let name = &func.sig.ident;
    let expanded = derive(func, boxed)?;
    let file: syn::File = syn::parse2(expanded)?;
    let vis = &func.vis;
    let mut out = Vec::new();
    for item in file.items {
        let syn::Item::Mod(m) = item else {
            // The function as written: the method itself.
            continue;
        };
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
            let renamed = format_ident!("{}_{}", name, f.sig.ident);
            f.sig.ident = renamed;
            SiblingCalls {
                method: name,
                siblings: &siblings,
            }
            .visit_block_mut(&mut f.block);
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
    Ok(quote!(#func #(#out)*))
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

fn parse_attr(attr: TokenStream) -> syn::Result<bool> {
    if attr.is_empty() {
        return Ok(false);
    }
    let id: syn::Ident = syn::parse2(attr.clone()).map_err(|_| {
        syn::Error::new_spanned(
            &attr,
            "expected `#[differentiable]` or `#[differentiable(boxed)]`",
        )
    })?;
    if id == "boxed" {
        Ok(true)
    } else {
        Err(syn::Error::new_spanned(
            id,
            "unknown option; the only option is `boxed` (a boxed pullback, for mutual recursion)",
        ))
    }
}

/// Replaces every written lifetime (named, `'_`, or a reference's elided one) by
/// `'static`: tangent types are named with `'static` lifetimes, since pullbacks own
/// their data.
struct Staticize;
impl VisitMut for Staticize {
    fn visit_type_reference_mut(&mut self, r: &mut syn::TypeReference) {
        r.lifetime = Some(syn::parse_quote!('static));
        self.visit_type_mut(&mut r.elem);
    }
    fn visit_lifetime_mut(&mut self, l: &mut syn::Lifetime) {
        *l = syn::parse_quote!('static);
    }
}

/// The tangent type of `ty`, nameable in a companion's signature.
///
/// A path type may hide a lifetime parameter that is not written (a view type alias
/// `View<f64>` of `View<'a, f64>`), which the macro cannot see. Such a type is named as
/// the output of `fn(&'static ()) -> ty`, where the elision rules make every hidden
/// lifetime `'static` (`TangentOfOutput` in the core). Types that cannot hide one (the
/// primitive types and the function's type parameters, inside references, tuples,
/// slices and arrays) are named directly, which keeps compiler messages short.
pub(crate) fn tangent_of(ty: &Type, type_params: &HashSet<String>) -> TokenStream {
    let mut t = ty.clone();
    Staticize.visit_type_mut(&mut t);
    if may_hide_lifetime(&t, type_params) {
        quote!(<fn(&'static ()) -> #t as ::mochi::__private::TangentOfOutput>::Tangent)
    } else {
        quote!(<#t as ::mochi::Tangent>::Tangent)
    }
}

/// Does `ty` hold a path type other than a primitive type or a type parameter?
fn may_hide_lifetime(ty: &Type, type_params: &HashSet<String>) -> bool {
    struct Find<'a> {
        type_params: &'a HashSet<String>,
        found: bool,
    }
    impl<'ast> syn::visit::Visit<'ast> for Find<'_> {
        fn visit_type_path(&mut self, p: &'ast syn::TypePath) {
            let plain = p.qself.is_none()
                && p.path.get_ident().is_some_and(|i| {
                    let n = i.to_string();
                    self.type_params.contains(&n) || is_primitive(&n)
                });
            if !plain {
                self.found = true;
            }
        }
    }
    let mut f = Find {
        type_params,
        found: false,
    };
    syn::visit::Visit::visit_type(&mut f, ty);
    f.found
}

fn is_primitive(name: &str) -> bool {
    matches!(
        name,
        "f32"
            | "f64"
            | "i8"
            | "i16"
            | "i32"
            | "i64"
            | "i128"
            | "isize"
            | "u8"
            | "u16"
            | "u32"
            | "u64"
            | "u128"
            | "usize"
            | "bool"
            | "char"
            | "str"
    )
}

fn derive(func: &ItemFn, boxed: bool) -> syn::Result<TokenStream> {
    derive_with(func, boxed, true)
}

/// The derivation; `with_higher` adds the higher-order companions and the rules (a twin
/// has neither: only its fused gradient is called).
fn derive_with(func: &ItemFn, boxed: bool, with_higher: bool) -> syn::Result<TokenStream> {
    let name = &func.sig.ident;
    let vis = &func.vis;
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
    // Generic functions: companions keep the parameters and bounds and add `Scalar`;
    // one generic over a scalar of one sequence argument also gets `jvp`, `hvp`, `hessian`.
    let generics = crate::generics::CompanionGenerics::new(&func.sig.generics);
    let (beside, higher) = if with_higher {
        higher_order(func)
    } else {
        (TokenStream::new(), TokenStream::new())
    };
    let (gp, gw, tf, cap) = (
        &generics.params,
        &generics.predicates,
        &generics.turbofish,
        &generics.capture,
    );

    // Activity: parameters of float-carrying types, then a fixpoint over the body.
    let mut active: HashSet<String> = params
        .iter()
        .filter(|(_, t, _)| !type_is_inactive(t))
        .map(|(i, _, _)| i.to_string())
        .collect();
    // The derived rule works on a rewritten copy of the body (`mem::swap`, `iter_mut`
    // loops); the primal is emitted as written.
    // A twin's scalar is its float type: literals the derivation writes become
    // `lit::<T>(..)`.
    let float_ty = match func.sig.generics.type_params().next() {
        Some(t) if t.ident == crate::twin::PARAM => Some(t.ident.clone()),
        _ => signature_float_type(&func.sig),
    };
    let mut written_active = active.clone();
    activity::analyse(&func.block, &mut written_active);
    let body = crate::desugar::desugar(
        &func.block,
        float_ty.as_ref(),
        &written_active,
        Some(&ret_ty),
    );
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
        })
        .collect();
    let mut lowerer = Lowerer::new(&name.to_string(), active);
    lowerer.float_ty = float_ty;
    let lowered = lowerer.lower_body(specs, &body);
    let fallbacks = lowerer.fallback_items();
    if let Some(first) = lowerer.errors.first().cloned() {
        let mut all = first;
        for e in lowerer.errors.into_iter().skip(1) {
            all.combine(e);
        }
        return Err(all);
    }
    let crate::lower::Lowered {
        top,
        fwd,
        result,
        cots,
        seed,
        rev,
    } = lowered;

    let n = params.len();
    let type_params: HashSet<String> = func
        .sig
        .generics
        .type_params()
        .map(|t| t.ident.to_string())
        .collect();
    let out_t = tangent_of(&ret_ty, &type_params);
    let arg_ts: Vec<_> = params
        .iter()
        .map(|(_, t, _)| tangent_of(t, &type_params))
        .collect();
    let args_t = quote!((#(#arg_ts,)*));
    let cots_t = if n == 1 {
        arg_ts[0].clone()
    } else {
        args_t.clone()
    };
    let pb_ctor = format_ident!("pullback{}", n);
    let decls: Vec<_> = params
        .iter()
        .map(|(i, t, m)| {
            let m = m.then(|| quote!(mut));
            quote!(#m #i: #t)
        })
        .collect();
    let names: Vec<_> = params.iter().map(|(i, _, _)| i.clone()).collect();
    let ret = &ret_ty;
    let pb_type = quote!(impl ::mochi::Pullback<Output = #out_t, Args = #args_t> + use<#cap>);

    let shadow_use = if n == 1 {
        quote!((shadow,))
    } else {
        quote!(shadows)
    };
    let shadow_arg = if n == 1 {
        quote!(shadow)
    } else {
        quote!(shadows)
    };
    // The gradient functions run the forward and the reverse sweep in one body: no
    // pullback closure is built or moved, and LLVM sees both sweeps at once.
    let fused = |accs: TokenStream| {
        quote! {
            #[allow(unused_imports)]
            use ::mochi::__private::rules::*;
            #top
            #fwd
            let __mochi_result = #result;
            {
                let (#(#d_idents,)*) = #accs;
                let __mochi_dy: #out_t = ::mochi::__private::seed();
                #cots
                #seed
                #rev
            }
            __mochi_result
        }
    };
    // `value_and_gradient` hands its own accumulators to `value_and_gradient_into`.
    let as_shadow = if n == 1 {
        quote!(&mut __mochi_c.0)
    } else {
        quote!(::mochi::Accumulators::as_mut(&mut __mochi_c))
    };
    let fused_shadow = fused(quote!(#shadow_use));
    let rrule_body = quote! {
        #[allow(unused_imports)]
        use ::mochi::__private::rules::*;
        #top
        #fwd
        let __mochi_result = #result;
        let __mochi_pb = ::mochi::__private::#pb_ctor(
            move |__mochi_dy: #out_t, (#(#d_idents,)*): (#(&mut #arg_ts,)*)| {
                #cots
                #seed
                #rev
            },
        );
        (__mochi_result, __mochi_pb)
    };
    let (rrule_sig_pb, rrule_def, rrule_boxed_def) = if boxed {
        (
            quote!(::mochi::BoxedPullback<#out_t, #args_t>),
            quote! {
                /// The derived reverse rule of the function (boxed pullback).
                #[inline]
                pub fn rrule #gp (#(#decls),*) -> (#ret, ::mochi::BoxedPullback<#out_t, #args_t>) where #gw {
                    let (y, pb) = rrule_unboxed #tf (#(#names),*);
                    (y, ::mochi::BoxedPullback::new(pb))
                }
                #[doc(hidden)]
                #[inline]
                pub fn rrule_unboxed #gp (#(#decls),*) -> (#ret, #pb_type) where #gw { #rrule_body }
            },
            quote! {
                #[doc(hidden)]
                #[inline]
                pub fn rrule_boxed #gp (#(#decls),*) -> (#ret, ::mochi::BoxedPullback<#out_t, #args_t>) where #gw {
                    rrule #tf (#(#names),*)
                }
            },
        )
    } else {
        (
            pb_type.clone(),
            quote! {
                /// The derived reverse rule of the function: its value and a pullback that
                /// adds the cotangents of every argument into the accumulators it is given.
                #[inline]
                pub fn rrule #gp (#(#decls),*) -> (#ret, #pb_type) where #gw { #rrule_body }
            },
            quote! {
                #[doc(hidden)]
                #[inline]
                pub fn rrule_boxed #gp (#(#decls),*) -> (#ret, ::mochi::BoxedPullback<#out_t, #args_t>) where #gw {
                    let (y, pb) = rrule #tf (#(#names),*);
                    (y, ::mochi::BoxedPullback::new(pb))
                }
            },
        )
    };
    let _ = rrule_sig_pb;

    let zeros = names
        .iter()
        .map(|i| quote!(::mochi::Tangent::zero_tangent(&#i)));
    let zeros2 = zeros.clone();
    let unwrap = if n == 1 {
        quote!(__mochi_c.0)
    } else {
        quote!(__mochi_c)
    };
    let shadow_decl = if n == 1 {
        quote!(shadow: &mut #cots_t)
    } else {
        let refs = arg_ts.iter().map(|t| quote!(&mut #t));
        quote!(shadows: (#(#refs,)*))
    };

    let densify: Vec<TokenStream> = names
        .iter()
        .enumerate()
        .map(|(k, i)| {
            if n == 1 {
                quote!(::mochi::Tangent::densify(&#i, &mut *shadow);)
            } else {
                let k = syn::Index::from(k);
                quote!(::mochi::Tangent::densify(&#i, &mut *shadows.#k);)
            }
        })
        .collect();
    let fn_name = name.to_string();
    let doc_mod =
        format!("Derivatives of [`{fn_name}`](fn@{fn_name}), derived by `#[differentiable]`.");

    // A twin is reached only through `gradient` (forward over reverse): its rules, its
    // pullback and `gradient_into` are not written.
    let (rules, gradient_into) = if with_higher {
        (
            quote! {
                #rrule_def
                #rrule_boxed_def

                /// The value and a pullback: `pb(ȳ)` returns the cotangents of every argument.
                #[inline]
                pub fn pullback #gp (#(#decls),*) -> (#ret, impl FnOnce(#out_t) -> #cots_t + use<#cap>) where #gw {
                    let mut __mochi_c: #args_t = (#(#zeros,)*);
                    let (y, pb) = rrule #tf (#(#names),*);
                    (y, move |dy: #out_t| {
                        ::mochi::Pullback::pullback(pb, dy, ::mochi::Accumulators::as_mut(&mut __mochi_c));
                        #unwrap
                    })
                }
            },
            quote! {
                /// Adds the gradient into the caller's shadow buffers (zero them first).
                #[inline]
                pub fn gradient_into #gp (#(#decls,)* #shadow_decl)
                where
                    #gw
                    for<'__mochi> #out_t: ::mochi::__private::Seed,
                {
                    let _ = value_and_gradient_into #tf (#(#names,)* #shadow_arg);
                }
            },
        )
    } else {
        (TokenStream::new(), TokenStream::new())
    };
    // A function called only through its gradients is not dead code.
    let mut func = func.clone();
    func.attrs.push(syn::parse_quote!(#[allow(dead_code)]));
    Ok(quote! {
        #func
        #beside

        #[doc = #doc_mod]
        #[allow(clippy::all, clippy::pedantic, unused_mut, unused_variables, unused_parens, non_snake_case, unreachable_code, unused_assignments, unused_braces, elided_lifetimes_in_paths)]
        #vis mod #name {
            #[allow(unused_imports)]
            use super::*;

            #fallbacks

            #rules

            /// The value and the gradient with respect to every argument (a scalar output).
            #[inline]
            pub fn value_and_gradient #gp (#(#decls),*) -> (#ret, #cots_t)
            where
                #gw
                for<'__mochi> #out_t: ::mochi::__private::Seed,
            {
                let mut __mochi_c: #args_t = (#(#zeros2,)*);
                let y = {
                    let #shadow_arg = #as_shadow;
                    value_and_gradient_into #tf (#(#names,)* #shadow_arg)
                };
                (y, #unwrap)
            }

            /// The gradient with respect to every argument (a scalar output).
            #[inline]
            pub fn gradient #gp (#(#decls),*) -> #cots_t
            where
                #gw
                for<'__mochi> #out_t: ::mochi::__private::Seed,
            {
                value_and_gradient #tf (#(#names),*).1
            }

            /// The value; the gradient is **added** into the caller's shadow buffers
            /// (zero them first). With buffers of the right shape, steady-state calls
            /// allocate nothing.
            #[inline]
            pub fn value_and_gradient_into #gp (#(#decls,)* #shadow_decl) -> #ret
            where
                #gw
                for<'__mochi> #out_t: ::mochi::__private::Seed,
            {
                // Dense accumulators stay dense: no structured cotangent reaches the caller.
                #(#densify)*
                #fused_shadow
            }

            #gradient_into

            #higher
        }
    })
}

/// The higher-order companions of `func`: the items beside it (a generic twin and its
/// derived module, for a function over `f64`) and the companions in its module. A
/// method gets none; a function with no generic form gets companions whose bound says
/// why (see `higher::unavailable`).
fn higher_order(func: &ItemFn) -> (TokenStream, TokenStream) {
    use crate::higher::{companions, unavailable, Target};
    let name = &func.sig.ident;
    if func.sig.receiver().is_some() {
        return (TokenStream::new(), TokenStream::new());
    }
    if !func.sig.generics.params.is_empty() {
        let target = Target {
            primal: quote!(super::#name),
            module: quote!(self),
            value_and_gradient: quote!(value_and_gradient::<f64>),
        };
        let inside = companions(func, &target);
        if inside.is_empty() {
            let why = "it is generic over more than one type, or its arguments or result are not its scalar type, slices or `Vec`s of it";
            return (
                TokenStream::new(),
                unavailable(func, crate::twin::Why::Generic, why),
            );
        }
        return (TokenStream::new(), inside);
    }
    let twin = match crate::twin::make(func) {
        Ok(t) => t,
        Err((kind, why, _)) => return (TokenStream::new(), unavailable(func, kind, &why)),
    };
    match derive_with(&twin, false, false) {
        Ok(beside) => {
            let tname = &twin.sig.ident;
            let target = Target {
                primal: quote!(super::#tname),
                module: quote!(super::#tname),
                value_and_gradient: quote!(value_and_gradient),
            };
            (beside, companions(&twin, &target))
        }
        Err(e) => {
            let why = format!("its generic form cannot be derived ({e})");
            (
                TokenStream::new(),
                unavailable(func, crate::twin::Why::Syntax, &why),
            )
        }
    }
}

/// Names assigned anywhere in the body (such parameters cannot be recomputed).
fn assigned_names(block: &syn::Block) -> HashSet<String> {
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
fn signature_float_type(sig: &syn::Signature) -> Option<syn::Ident> {
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
