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
    let item = proc_macro2::TokenStream::from(item);
    let kept = item.clone();
    // The place of a panic, for the report (the hook rustc had is put back after).
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(|info| {
        // (From the crate's `src/`, wherever it was built.)
        let at = info.location().map(|l| {
            let file = l.file();
            let file = file.rfind("src/").map_or(file, |k| &file[k..]);
            format!("mochi-macros {file}:{}", l.line())
        });
        PANIC_AT.with(|p| *p.borrow_mut() = at);
    }));
    let expanded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        companion::expand(attr.into(), item)
    }));
    std::panic::set_hook(previous);
    match expanded {
        Ok(out) => out.into(),
        Err(payload) => internal_error(kept, payload.as_ref()).into(),
    }
}

thread_local! {
    /// Where the transform panicked (file and line of mochi's source), for the report.
    static PANIC_AT: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// A failure of the transform itself (a panic, which is a bug of mochi's): the item as
/// written, and an error at its name that says so and what to do, instead of rustc's
/// "custom attribute panicked".
fn internal_error(
    item: proc_macro2::TokenStream,
    payload: &dyn std::any::Any,
) -> proc_macro2::TokenStream {
    let why = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_string());
    let why = match PANIC_AT.with(|p| p.borrow_mut().take()) {
        Some(at) => format!("{why}, at {at}"),
        None => why,
    };
    let (name, span) = match syn::parse2::<syn::Item>(item.clone()) {
        Ok(syn::Item::Fn(f)) => (format!("`{}`", f.sig.ident), f.sig.ident.span()),
        Ok(syn::Item::Impl(i)) => (
            "this `impl` block".to_string(),
            syn::spanned::Spanned::span(&i.self_ty),
        ),
        _ => ("this item".to_string(), proc_macro2::Span::call_site()),
    };
    let msg = format!(
        "mochi could not derive the rule of {name}: the transform failed ({why}). This is a \
         bug in mochi, not in your code; please report it with the function. Until it is \
         fixed, write the part of the body mochi stopped at another way, or move it into a \
         helper function marked `#[differentiable]`."
    );
    let err = syn::Error::new(span, msg).to_compile_error();
    quote::quote!(#err #item)
}

/// Derives `mochi::Tangent` for a struct: a tangent struct `<Name>Tangent` with one field
/// per field (the field type's tangent: floats keep their type, integers get
/// `NoTangent`), and the vector-space operations on it.
#[proc_macro_derive(Tangent)]
pub fn derive_tangent(item: TokenStream) -> TokenStream {
    derive_tangent::expand(item.into()).into()
}
