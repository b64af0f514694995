//! The generic parameters of a `#[differentiable]` function, as its companions
//! declare, bound and name them.
//!
//! Companions keep the function's own parameters and bounds, and add
//! `T: ::mochi::Scalar` to every type parameter bounded by a float trait (`Float`,
//! `Real`, …): `Scalar` implies every scalar rule, the tangent operations and the
//! gradient seed (see `design-docs/rule-system.md`, "Rule dispatch for generic code").

use proc_macro2::TokenStream;
use quote::quote;
use syn::{GenericParam, Generics, Ident, TypeParamBound, WherePredicate};

/// Traits (by last path segment) that mark a type parameter as a scalar: one that
/// arithmetic in the body runs on, and so needs the scalar rules.
const SCALAR_BOUNDS: &[&str] = &["Float", "FloatCore", "Real", "RealField", "Scalar"];

/// How the companions of one function spell its generics.
pub struct CompanionGenerics {
    /// `<'a, T: Float, const N: usize>` as written (empty when not generic).
    pub params: TokenStream,
    /// The function's where-predicates plus `T: ::mochi::Scalar` for each scalar
    /// parameter, each followed by a comma.
    pub predicates: TokenStream,
    /// `::<T, N>`: the type and const parameters, for calls between companions.
    pub turbofish: TokenStream,
    /// `T, N`: what `impl Trait + use<…>` in a companion's return type captures (the
    /// type and const parameters; never a lifetime, so pullbacks stay `'static`).
    pub capture: TokenStream,
}

impl CompanionGenerics {
    pub fn new(g: &Generics) -> Self {
        let mut params = g.clone();
        params.where_clause = None;
        let names: Vec<Ident> = g
            .params
            .iter()
            .filter_map(|p| match p {
                GenericParam::Type(t) => Some(t.ident.clone()),
                GenericParam::Const(c) => Some(c.ident.clone()),
                GenericParam::Lifetime(_) => None,
            })
            .collect();
        let scalars: Vec<Ident> = g
            .type_params()
            .filter(|t| is_scalar_param(g, t))
            .map(|t| t.ident.clone())
            .collect();
        // Tangent types are named with every lifetime made `'static` (pullbacks own their
        // data), so every other type parameter must be `'static` too (`Scalar` is).
        let others = g
            .type_params()
            .map(|t| &t.ident)
            .filter(|i| !scalars.contains(i));
        let own = g.where_clause.iter().flat_map(|w| w.predicates.iter());
        let predicates = quote!(#(#own,)* #(#scalars: ::mochi::Scalar,)* #(#others: 'static,)*);
        let (turbofish, capture) = if names.is_empty() {
            (TokenStream::new(), TokenStream::new())
        } else {
            (quote!(::<#(#names),*>), quote!(#(#names),*))
        };
        let params = if g.params.is_empty() {
            TokenStream::new()
        } else {
            let (decl, _, _) = params.split_for_impl();
            quote!(#decl)
        };
        CompanionGenerics {
            params,
            predicates,
            turbofish,
            capture,
        }
    }
}

/// Whether a bound of `t` (inline or in the `where` clause) names a float trait.
pub fn is_scalar_param(g: &Generics, t: &syn::TypeParam) -> bool {
    t.bounds.iter().any(is_scalar_bound) || where_bounds_of(g, &t.ident).any(is_scalar_bound)
}

/// The bounds that `where` clauses put on the type parameter `ident`.
pub fn where_bounds_of<'a>(
    g: &'a Generics,
    ident: &'a Ident,
) -> impl Iterator<Item = &'a TypeParamBound> {
    g.where_clause
        .iter()
        .flat_map(|w| w.predicates.iter())
        .filter_map(move |p| match p {
            WherePredicate::Type(pt) => match &pt.bounded_ty {
                syn::Type::Path(tp) if tp.qself.is_none() && tp.path.is_ident(ident) => {
                    Some(pt.bounds.iter())
                }
                _ => None,
            },
            _ => None,
        })
        .flatten()
}

fn is_scalar_bound(b: &TypeParamBound) -> bool {
    match b {
        TypeParamBound::Trait(t) => t
            .path
            .segments
            .last()
            .is_some_and(|s| SCALAR_BOUNDS.contains(&s.ident.to_string().as_str())),
        _ => false,
    }
}
