//! Missing-rule errors at the expression: for each rule method a body calls, a
//! fallback that rustc picks only when no rule crate's trait applies, and whose bound
//! fails with a message naming the operation, its argument types and the ways out.
//!
//! A rule call is `Call((&a, &b)).m()`. Rule traits are implemented for `Call<(..)>`
//! itself, so method lookup tries them first (by value); the fallback trait is
//! implemented for every `Call<A>` with a `&mut self` method, reached only at the
//! last autoref step, that is when no rule applies. Its method bounds `A` by a trait that nothing
//! implements and that carries `#[diagnostic::on_unimplemented]`; a bound on a method
//! (unlike one on an impl) is checked after the method is chosen, so rustc reports
//! that message (E0277) at the method's span instead of "no method named `m` found".
//!
//! Between the two, at the `&self` step, a bridge to the rules of the crate's own
//! types whose traits are not in scope (`use crate::geom::V2;` brings the type, not its
//! rule traits): `__private::OwnedRule` keyed by the method's name, which every rule
//! trait of a `#[differentiable]` `impl` block implements (`companion.rs`,
//! `rule_trait_decl`).

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use std::collections::BTreeMap;

/// How the user wrote the operation a rule method stands for.
fn display(method: &str) -> String {
    // (`pt_new__pb`, `pb::Pt::new` by its path: the rule's name.)
    let method = match method.split_once("__") {
        Some((m, _)) if !m.is_empty() => m,
        _ => method,
    };
    // The fused rules of iterator chains, as the user wrote them.
    match method {
        "iter_map_sum" => return "x.iter().map(f).sum()".to_string(),
        "iter_zip_map_sum" => return "x.iter().zip(y).map(f).sum()".to_string(),
        "iter_fold" => return "x.iter().fold(init, f)".to_string(),
        _ => {}
    }
    let op = match method {
        "op_add" => "+",
        "op_sub" => "-",
        "op_mul" => "*",
        "op_div" => "/",
        "op_rem" => "%",
        "op_neg" => "unary -",
        "op_as_f64" => "as f64",
        "op_as_f32" => "as f32",
        _ => return method.to_string(),
    };
    op.to_string()
}

/// Iterator methods: with no rule, they are a chain the derivation did not write as a
/// loop.
/// (Not `map`, `flatten`, `windows`: arrays' methods too.)
const CHAIN_METHODS: &[&str] = &[
    "iter",
    "into_iter",
    "iter_mut",
    "scan",
    "filter",
    "filter_map",
    "enumerate",
    "zip",
    "skip",
    "take",
    "chain",
    "flat_map",
    "take_while",
    "skip_while",
    "map_while",
    "step_by",
    "rev",
    "peekable",
    "inspect",
    "cycle",
    "fuse",
    "copied",
    "cloned",
    "by_ref",
    "try_fold",
    "try_for_each",
];

/// `method`'s name as a type, `__private::RuleName<H>` with `H` the FNV-1a hash of
/// the name: how a rule trait's `impl` of `__private::OwnedRule` and the bridge of a
/// call site (see [`fallbacks`]) meet without naming each other.
pub(crate) fn rule_name(method: &str) -> TokenStream {
    let h = method.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    quote!(::mochi::__private::RuleName<#h>)
}

/// The fallback items for `methods` (each rule method's name, the number of arguments
/// it takes besides the receiver, and the span of a call, where rustc's notes about the
/// fallback then point), to be placed in the scope that holds the rule calls.
///
/// A rule method of an associated function called by a path (`assoc`: `v_new` of
/// `V::new(..)`, the path `V` and the name `new`) has its bridge keyed by the
/// function's name and the type as written, `(RuleName<H>, V)`, so that the path picks
/// the type (`companion.rs`, `rule_trait_decl`).
pub fn fallbacks(
    methods: &BTreeMap<String, (usize, Span)>,
    assoc: &BTreeMap<String, (TokenStream, String)>,
    unknown_types: &BTreeMap<String, (String, String)>,
) -> TokenStream {
    let items = methods.iter().map(|(m, &(extra, span))| {
        let shown = match unknown_types.get(m) {
            Some((ty, f)) => format!("{ty}::{f}"),
            None => display(m),
        };
        let chain = CHAIN_METHODS.contains(&m.as_str());
        let message = if chain {
            format!(
                "mochi: this iterator chain (`.{shown}(..)` with arguments `{{Self}}`) is not one the derivation writes as a loop"
            )
        } else {
            format!("mochi: no rule for `{shown}` with arguments `{{Self}}`")
        };
        let label = if chain {
            "a chain the derivation does not take".to_string()
        } else {
            format!("no rule for `{shown}` with these argument types")
        };
        // A rule crate's trait that is not in scope looks the same to rustc as no rule.
        let note = if chain {
            concat!(
                "the derivation writes chains over slices, `Vec`s and arrays as loops when they ",
                "are made of `map`, `filter`, `filter_map`, `zip`, `enumerate`, `skip`, ",
                "`take`, `step_by`, `rev`, `chain`, `windows`, `chunks`, ",
                "`flat_map`, `scan` (a closure ending in `Some(..)`) and end in `sum`, `product`, ",
                "`fold`, `reduce`, `max_by`, `min_by`, `last`, `collect` or a `for` ",
                "(design-docs/reverse-mode-transform.md); write this one as a `for` loop over the ",
                "positions (`for i in 0..x.len() { .. x[i] .. }`)"
            ).to_string()
        } else if m.starts_with("iter_") {
            "a chain's rule covers sequences of floats (slices, `Vec`s, one-dimensional arrays, \
             nalgebra matrices) and of rows (`&[Vec<f64>]`, `&[[f64; N]]`); over other elements \
             (nalgebra vectors, structs), write the chain as a `for` loop that accumulates"
                .to_string()
        } else if m.starts_with("op_") {
            // An operator of the user's type (`impl Add for P2`) has a rule when its
            // `impl` block is marked.
            let own = match m.as_str() {
                "op_add" => Some("Add"),
                "op_sub" => Some("Sub"),
                "op_mul" => Some("Mul"),
                "op_div" => Some("Div"),
                "op_rem" => Some("Rem"),
                "op_neg" => Some("Neg"),
                _ => None,
            };
            let own = own.map_or(String::new(), |tr| {
                format!(
                    "; for your own type, mark its implementation `#[differentiable] impl {tr} for MyType {{ .. }}` \
                     (the type deriving `Tangent`), and the operator has a derived rule, in every module"
                )
            });
            format!(
                "to differentiate through `{shown}` on these types, add a rule for it to a rule crate \
                 (CONTRIBUTING.md, \"Adding a rule to an existing crate\"); if a rule crate has one, \
                 import its rules (`use that_crate::rules::*;`){own}"
            )
        } else if let Some((ty, f)) = unknown_types.get(m) {
            format!(
                "`{ty}` is not a type this crate derives `Tangent` for under that name: if it is one of \
                 yours imported under another name (`use crate::geom::Vec3 as {ty};`) or a type alias \
                 (`type {ty} = Vec3;`), call it by the type's own name (`Vec3::{f}(..)`) or its path \
                 (`geom::Vec3::{f}(..)`), whose rule mochi finds; if it is another crate's type, add \
                 a rule `{m}` to a rule crate (CONTRIBUTING.md, \"Adding a rule to an existing \
                 crate\") or import one (`use that_crate::rules::*;`)"
            )
        } else {
            format!(
                "to differentiate through `{shown}`: if it is a method of your own type, mark the type's `impl` block \
                 `#[differentiable]` as well as the method (then it is reached on every value of the type in the block's \
                 module and wherever the type is imported: locals, elements, values returned by other calls, and names \
                 a library's type has too, `dot`, `norm`); a method marked alone is reached on `self`, a parameter of the type, a field or an element \
                 (`self.layers[k].{shown}(x)`), or as `Type::{shown}(&value, ..)` (`&mut value` for a `&mut self` method); \
                 if it is your own function, mark it `#[differentiable]`; otherwise add a rule for it to a rule crate \
                 (CONTRIBUTING.md, \"Adding a rule to an existing crate\"), or, if a rule crate has one, import its rules \
                 (`use that_crate::rules::*;`)"
            )
        };
        let bound = format_ident!("__MochiRuleFor_{}", m, span = span);
        let fallback = format_ident!("__MochiNoRule_{}", m, span = span);
        let method = format_ident!("{}", m);
        let xs: Vec<_> = (0..extra).map(|i| format_ident!("__MochiX{}", i)).collect();
        // A method's value is its receiver's type (`FirstArg`: a float method's is a
        // float), so that the code after the call type-checks and the missing rule is
        // the one error; an operator's (`Meters * f64`), a chain's and a constructor's
        // of a type not known by its name (`V::new`) are left to the code around them.
        let sig = if m.starts_with("op_")
            || m.starts_with("iter_")
            || chain
            || unknown_types.contains_key(m)
        {
            quote_spanned!(span=>
                fn #method<__MochiO, __MochiP, #(#xs,)*>(&mut self, #(_: #xs,)*) -> (__MochiO, __MochiP)
                where
                    __MochiA: #bound
            )
        } else {
            quote_spanned!(span=>
                fn #method<__MochiP, #(#xs,)*>(&mut self, #(_: #xs,)*) -> (<__MochiA as ::mochi::__private::FirstArg>::Value, __MochiP)
                where
                    __MochiA: #bound + ::mochi::__private::FirstArg
            )
        };
        // The rules of the crate's own types (which take no argument besides the
        // receiver) whose traits are not in scope, at the `&self` step.
        let bridge = (extra == 0).then(|| {
            let owned = format_ident!("__MochiOwned_{}", m, span = span);
            // (By a path: the key names the type as written.)
            let name = match assoc.get(m) {
                Some((path, f)) => {
                    let name = rule_name(&format!("::{f}"));
                    quote!((#name, #path))
                }
                None => rule_name(m),
            };
            let rule = quote!(::mochi::__private::OwnedRule<#name, __MochiO>);
            quote_spanned!(span=>
                #[allow(non_camel_case_types, dead_code)]
                trait #owned<__MochiO> {
                    type Output;
                    type Pullback;
                    fn #method(&self) -> (Self::Output, Self::Pullback);
                }
                #[allow(non_camel_case_types, dead_code)]
                impl<__MochiA, __MochiO> #owned<__MochiO> for ::mochi::__private::Call<__MochiA>
                where
                    ::mochi::__private::Call<__MochiA>: ::core::marker::Copy + #rule,
                {
                    type Output = <::mochi::__private::Call<__MochiA> as #rule>::Output;
                    type Pullback = <::mochi::__private::Call<__MochiA> as #rule>::Pullback;
                    #[inline(always)]
                    fn #method(&self) -> (Self::Output, Self::Pullback) {
                        <::mochi::__private::Call<__MochiA> as #rule>::owned_rule(*self)
                    }
                }
            )
        });
        quote_spanned!(span=>
            #[allow(non_camel_case_types, dead_code)]
            #[diagnostic::on_unimplemented(message = #message, label = #label, note = #note)]
            trait #bound {}
            #[allow(non_camel_case_types, dead_code)]
            trait #fallback<__MochiA> {
                #sig;
            }
            #[allow(non_camel_case_types, dead_code)]
            impl<__MochiA> #fallback<__MochiA> for ::mochi::__private::Call<__MochiA> {
                #sig {
                    ::core::unreachable!()
                }
            }
            #bridge
        )
    });
    quote!(#(#items)*)
}

/// The fallbacks of the user's methods called through their derived rule (`m.f(x)` on a
/// parameter, a field or an element, `Type::f(&v, x)`): a trait implemented for every
/// type with a method `f_rrule`, which a method of the type itself (its derived rule,
/// when `f` is `#[differentiable]`) precedes, and whose bound fails with a message
/// naming `f` otherwise.
pub fn method_fallbacks(methods: &BTreeMap<String, (usize, Span)>) -> TokenStream {
    let items = methods.iter().map(|(m, &(extra, span))| {
        let message = format!(
            "mochi: the method `{m}` of `{{Self}}` is not `#[differentiable]`, so the derivative cannot flow through this call"
        );
        let label = format!("`{m}` has no derived rule");
        let note = format!(
            "mark `fn {m}` `#[differentiable]` in its `impl` block (its type deriving `Tangent`); a value that carries no derivative can be wrapped in `mochi::no_grad(..)`"
        );
        let bound = format_ident!("__MochiMarked_{}", m, span = span);
        let fallback = format_ident!("__MochiNoMethod_{}", m, span = span);
        let method = format_ident!("{}_rrule", m, span = span);
        let xs: Vec<_> = (0..extra).map(|i| format_ident!("__MochiX{}", i)).collect();
        let sig = quote_spanned!(span=>
            fn #method<__MochiO, __MochiP, #(#xs,)*>(&self, #(_: #xs,)*) -> (__MochiO, __MochiP)
            where
                Self: #bound
        );
        quote_spanned!(span=>
            #[allow(non_camel_case_types, dead_code)]
            #[diagnostic::on_unimplemented(message = #message, label = #label, note = #note)]
            trait #bound {}
            #[allow(non_camel_case_types, dead_code)]
            trait #fallback {
                #sig;
            }
            #[allow(non_camel_case_types, dead_code)]
            impl<__MochiS: ?::core::marker::Sized> #fallback for __MochiS {
                #sig {
                    ::core::unreachable!()
                }
            }
        )
    });
    quote!(#(#items)*)
}
