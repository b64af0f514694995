//! The proc macros of mochi.
//!
//! - `#[differentiable]` derives a reverse rule from a function's body (see
//!   `design-docs/reverse-mode-transform.md`): parse → check → lower to a forward sweep
//!   and a pullback → emit the companion module.
//! - `#[derive(Tangent)]` gives a user struct a tangent type.
//!
//! Users reach both through the `mochi` facade; generated code refers to
//! `::mochi::…` only.

mod activity;
mod analysis;
mod companion;
mod derive_tangent;
mod desugar;
mod emit;
mod generics;
mod higher;
mod inline;
mod iterchain;
mod lower;
mod rewrite;
mod tryop;
mod twin;
mod types;
mod valid;

use proc_macro::TokenStream;

/// Derives a reverse-mode rule for a function from its body, and gradient functions in
/// a module of the same name: `f::value_and_gradient`, `f::gradient`, `f::pullback`,
/// `f::value_and_gradient_into`, `f::gradient_into` and `f::rrule`.
///
/// Recursion needs nothing: a function's calls to itself, and its calls to other
/// functions inside `if`/`match` branches (where every recursion ends), box their
/// pullbacks, so mutually recursive functions have types. `#[differentiable(boxed)]`
/// makes `f::rrule` itself return a boxed pullback.
#[proc_macro_attribute]
pub fn differentiable(attr: TokenStream, item: TokenStream) -> TokenStream {
    companion::expand(attr.into(), item.into()).into()
}

/// Derives `mochi::Tangent` for a struct: a tangent struct `<Name>Tangent` with one field
/// per field (the field type's tangent: floats keep their type, integers get
/// `NoTangent`), and the vector-space operations on it.
#[proc_macro_derive(Tangent)]
pub fn derive_tangent(item: TokenStream) -> TokenStream {
    derive_tangent::expand(item.into()).into()
}
