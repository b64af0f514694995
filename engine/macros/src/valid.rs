//! What `#[differentiable]` accepts in a signature; every rejection says what to do.

use syn::{FnArg, ItemFn, Pat};

pub fn check_signature(f: &ItemFn) -> syn::Result<()> {
    let sig = &f.sig;
    if let Some(a) = &sig.asyncness {
        return Err(syn::Error::new_spanned(a, "#[differentiable] cannot differentiate an `async fn`; make it a plain `fn`"));
    }
    if let Some(u) = &sig.unsafety {
        return Err(syn::Error::new_spanned(u, "#[differentiable] cannot differentiate an `unsafe fn`; wrap the unsafe part in a function with its own rule"));
    }
    if let Some(v) = &sig.variadic {
        return Err(syn::Error::new_spanned(v, "#[differentiable] cannot differentiate a variadic function"));
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        return Err(syn::Error::new_spanned(&sig.generics, "#[differentiable] does not support generic functions yet; write the function for `f64` (or `f32`), or use `mochi::Real` with forward mode"));
    }
    if sig.inputs.is_empty() {
        return Err(syn::Error::new_spanned(&sig.ident, "#[differentiable] needs at least one argument to differentiate with respect to"));
    }
    if sig.inputs.len() > 12 {
        return Err(syn::Error::new_spanned(&sig.inputs, "#[differentiable] supports at most 12 arguments; group some into a tuple or a struct deriving `Tangent`"));
    }
    for a in &sig.inputs {
        match a {
            FnArg::Receiver(r) => {
                return Err(syn::Error::new_spanned(r, "#[differentiable] on a method is not supported; write a free function taking the value (a struct deriving `Tangent`) as its first argument, and call it from the method"));
            }
            FnArg::Typed(t) => match &*t.pat {
                Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => {}
                other => {
                    return Err(syn::Error::new_spanned(other, "#[differentiable] needs every argument bound to a name (`x: T`); destructure it inside the body"));
                }
            },
        }
    }
    Ok(())
}
