//! The emission stage of `#[differentiable]`: the function as written and its
//! companion module — the derived rule (`rrule`, `rrule_boxed`, `pullback`), the
//! gradient functions (fused forward and reverse sweeps) and the higher-order
//! companions — from the analysis and the lowered sweeps.

use crate::analysis::Analysis;
use crate::lower::Lowered;
use crate::types::tangent_of;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use std::collections::HashSet;
use syn::ItemFn;

/// What the derivation adds around the lowered sweeps.
pub struct Extras<'a> {
    /// The function as written (the module's items see it through
    /// `rewrite::from_inside_module`).
    pub written: &'a ItemFn,
    /// Items beside the function (a twin and its derived module).
    pub beside: TokenStream,
    /// Items in its module (the higher-order companions).
    pub higher: TokenStream,
    /// The missing-rule fallbacks of the rule methods the body calls.
    pub fallbacks: TokenStream,
    /// `#[differentiable(boxed)]`: `rrule` returns a boxed pullback.
    pub boxed: bool,
    /// Whether to write the boxed rule, the pullback and `gradient_into` (a twin has
    /// only `rrule`).
    pub with_higher: bool,
    /// The function's body computes its value through its `rrule` (the twin of a
    /// function of arrays: `2.0 * &x` as written has no impl for a generic element,
    /// while the derived code calls the rules, which cover any element).
    pub primal_via_rule: bool,
}

/// The function as written and its companion module.
pub fn module(func: &ItemFn, an: &Analysis, lowered: Lowered, extras: Extras<'_>) -> TokenStream {
    let name = &func.sig.ident;
    let vis = &func.vis;
    let Analysis {
        params,
        ret_ty,
        d_idents,
        ..
    } = an;
    let Extras {
        written,
        beside,
        higher,
        fallbacks,
        boxed,
        with_higher,
        primal_via_rule,
    } = extras;
    // Generic functions: companions keep the parameters and bounds and add `Scalar`.
    let generics = crate::generics::CompanionGenerics::new(&func.sig.generics);
    let (gp, gw, tf, cap) = (
        &generics.params,
        &generics.predicates,
        &generics.turbofish,
        &generics.capture,
    );
    let Lowered {
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
    let out_t = tangent_of(ret_ty, &type_params);
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
    // A body that calls other functions in a loop keeps both sweeps in one body (the
    // callees' pullbacks then run inline in the caller's reverse loop); any other runs
    // its rule and its pullback: the derived code written once, which is half as much
    // to compile and measured no slower (design-docs/benchmarking.md, "One derived
    // body").
    // A twin always runs its rule and pullback: it is reached only by the higher-order
    // companions, and one derived body is half the type-checking.
    // A `&mut` parameter's shadow is, on the way in, the cotangent of the value as the
    // function leaves it, whose length the function may have changed (`v.push(..)`):
    // it starts as the structural zero and is made dense after the forward sweep.
    let mut_ref: Vec<bool> = params
        .iter()
        .map(|(_, t, _)| matches!(t, syn::Type::Reference(r) if r.mutability.is_some()))
        .collect();
    // A shadow made dense at its argument's shape: before the forward sweep, or for a
    // `&mut` argument after it (`densify_after`).
    let densify_one = |k: usize, i: &syn::Ident| {
        if n == 1 {
            quote!(::mochi::Tangent::densify(&#i, &mut *shadow);)
        } else {
            let k = syn::Index::from(k);
            quote!(::mochi::Tangent::densify(&#i, &mut *shadows.#k);)
        }
    };
    let densify_after: Vec<TokenStream> = names
        .iter()
        .enumerate()
        .filter(|(k, _)| mut_ref[*k])
        .map(|(k, i)| densify_one(k, i))
        .collect();
    let fused_shadow = if !with_higher || !an.calls_in_loops || mut_ref.contains(&true) {
        quote! {
            let (__mochi_y, __mochi_pb) = rrule #tf (#(#names),*);
            #(#densify_after)*
            ::mochi::Pullback::pullback(__mochi_pb, ::mochi::__private::seed(), #shadow_use);
            __mochi_y
        }
    } else {
        fused(quote!(#shadow_use))
    };
    let rrule_body = quote! {
        #[allow(unused_imports)]
        use ::mochi::__private::rules::*;
        #top
        #fwd
        let __mochi_result = #result;
        // Inlined into the caller's reverse sweep: a helper's pullback, called once per
        // call of the helper, is small next to the call's cost (an attribute on a
        // closure is stable in argument position).
        let __mochi_pb = ::mochi::__private::#pb_ctor(
            #[inline(always)]
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

    let zeros = names.iter().zip(&mut_ref).map(|(i, m)| {
        if *m {
            quote!(::mochi::TangentVector::zero())
        } else {
            quote!(::mochi::Tangent::zero_tangent(&#i))
        }
    });
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
        .filter(|(k, _)| !mut_ref[*k])
        .map(|(k, i)| densify_one(k, i))
        .collect();
    let fn_name = name.to_string();
    let doc_mod =
        format!("Derivatives of [`{fn_name}`](fn@{fn_name}), derived by `#[differentiable]`.");

    // A twin is reached through `gradient` (forward over reverse) and, from the twins
    // of its callers, through `rrule`: its boxed rule, its pullback and
    // `gradient_into` are not written.
    let fallible = fallible(ret_ty);
    let (into_ret, into_body) = if fallible {
        (
            quote!(-> <#ret as ::mochi::__private::Outcome>::With<()>),
            quote!(::mochi::__private::Outcome::with(value_and_gradient_into #tf (#(#names,)* #shadow_arg), ())),
        )
    } else {
        (
            TokenStream::new(),
            quote!(let _ = value_and_gradient_into #tf (#(#names,)* #shadow_arg);),
        )
    };
    // A function with a `&mut` parameter (a result written through it, as Enzyme's
    // examples write it) has its pullback into the caller's shadows, the `&mut`
    // shadows read as seeds; other functions have `pullback` (one item less to compile
    // per function).
    let pullback_into = if mut_ref.contains(&true) {
        quote! {
            /// Runs the function and its pullback at `output_cotangent` (ȳ), **adding**
            /// every argument's cotangent into the caller's shadow buffers, and returns
            /// the value. A `&mut` argument's shadow holds, on the way in, the
            /// cotangent of the value the call leaves in it (the seed of an output
            /// written through it, as Enzyme's `Duplicated`), and on the way out the
            /// cotangent of the value it held before the call.
            ///
            /// # Panics
            /// If a shadow that is not empty does not fit its argument (a `Vec` of
            /// another length).
            #[inline]
            pub fn pullback_into #gp (#(#decls,)* output_cotangent: #out_t, #shadow_decl) -> #ret where #gw {
                #(#densify)*
                let (__mochi_y, __mochi_pb) = rrule #tf (#(#names),*);
                #(#densify_after)*
                ::mochi::Pullback::pullback(__mochi_pb, output_cotangent, #shadow_use);
                __mochi_y
            }
        }
    } else {
        TokenStream::new()
    };
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

                #pullback_into
            },
            quote! {
                /// Adds the gradient into the caller's shadow buffers (zero them first).
                #[inline]
                pub fn gradient_into #gp (#(#decls,)* #shadow_decl) #into_ret
                where
                    #gw
                    for<'__mochi> #out_t: ::mochi::__private::Seed,
                {
                    #into_body
                }
            },
        )
    } else {
        // A twin that calls itself (a recursive function's) reaches its boxed rule.
        let recursive =
            crate::activity::tokens_mention(&quote::ToTokens::to_token_stream(&func.block), &|i| {
                i == name
            });
        if recursive {
            (quote!(#rrule_def #rrule_boxed_def), TokenStream::new())
        } else {
            (rrule_def, TokenStream::new())
        }
    };
    // A function returning an `Option` or a `Result` has its gradient where it has a
    // value: `Some(g)`/`Ok(g)`, else its `None` or its error (never a zero gradient).
    let gradient_def = if fallible {
        quote! {
            /// The gradient with respect to every argument where the function has a value
            /// (`Some(g)` or `Ok(g)`); where it returns `None` or an error, that.
            #[inline]
            pub fn gradient #gp (#(#decls),*) -> <#ret as ::mochi::__private::Outcome>::With<#cots_t>
            where
                #gw
                for<'__mochi> #out_t: ::mochi::__private::Seed,
            {
                let (y, g) = value_and_gradient #tf (#(#names),*);
                ::mochi::__private::Outcome::with(y, g)
            }
        }
    } else {
        quote! {
            /// The gradient with respect to every argument (a scalar output).
            #[inline]
            pub fn gradient #gp (#(#decls),*) -> #cots_t
            where
                #gw
                for<'__mochi> #out_t: ::mochi::__private::Seed,
            {
                value_and_gradient #tf (#(#names),*).1
            }
        }
    };
    // A function called only through its gradients is not dead code.
    let mut func = written.clone();
    func.attrs.push(syn::parse_quote!(#[allow(dead_code)]));
    if func.sig.ident.to_string().starts_with("__mochi_twin_") {
        let seq_calls = crate::rewrite::sequence_valued_calls(&func.block);
        syn::visit_mut::VisitMut::visit_block_mut(&mut TwinCallees(seq_calls), &mut func.block);
    }
    if primal_via_rule {
        func.block = syn::parse_quote!({ #name::rrule #tf (#(#names),*).0 });
        func.attrs.push(syn::parse_quote!(#[allow(unused_mut)]));
    }
    // The module reaches the function through `super::`, which does not see a `fn`
    // declared inside another function's body: the first error there is this import,
    // whose name says where to move the function.
    let (scope_hint, scope_check) = if with_higher {
        let hint = format_ident!(
            "{}__differentiable_functions_go_in_a_module_not_inside_another_function",
            name
        );
        (
            quote!(
                #[doc(hidden)]
                #[allow(dead_code, non_upper_case_globals)]
                const #hint: () = ();
            ),
            quote!(
                #[allow(unused_imports)]
                use super::#hint as _;
            ),
        )
    } else {
        (TokenStream::new(), TokenStream::new())
    };
    // The module before what is beside it (the twin and its derived items): a
    // compile error in both is reported first where the function is derived as written.
    quote! {
        #func
        #scope_hint

        #[doc = #doc_mod]
        #[allow(clippy::all, clippy::pedantic, unused_mut, unused_variables, unused_parens, non_snake_case, unreachable_code, unused_assignments, unused_braces, elided_lifetimes_in_paths)]
        #vis mod #name {
            #scope_check
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

            #gradient_def

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

        #beside
    }
}

/// In a twin as emitted, `g::__twin::<T>(..)` of a user function `g` goes through
/// [`crate::rewrite::callee`]: a `g` that is not `#[differentiable]` is named as such.
/// It holds the plain functions whose value the twin uses as a sequence.
struct TwinCallees(std::collections::HashSet<String>);

impl syn::visit_mut::VisitMut for TwinCallees {
    fn visit_expr_call_mut(&mut self, c: &mut syn::ExprCall) {
        syn::visit_mut::visit_expr_call_mut(self, c);
        let syn::Expr::Path(fp) = &*c.func else {
            return;
        };
        let p = &fp.path;
        if p.leading_colon.is_some()
            || p.segments.len() != 2
            || p.segments[1].ident != "__twin"
            || !p.segments[0].arguments.is_empty()
        {
            return;
        }
        let (turbofish, generics) = match &p.segments[1].arguments {
            syn::PathArguments::AngleBracketed(g) => (quote!(#g), g.args.len()),
            _ => (TokenStream::new(), 0),
        };
        let f = crate::rewrite::callee(
            &p.segments[0].ident,
            &["__twin"],
            &turbofish,
            generics,
            c.args.len(),
            crate::rewrite::StandInValue {
                bounded: false,
                scalar: None,
                sequence: self.0.contains(&p.segments[0].ident.to_string()),
            },
        );
        *c.func = syn::parse_quote!(#f);
    }
}

/// A result written `Option<..>` or `Result<..>` (by any path: `io::Result<f64>`).
pub(crate) fn fallible(ty: &syn::Type) -> bool {
    matches!(
        crate::tryop::last_ident(ty).as_deref(),
        Some("Option" | "Result")
    )
}
