//! What `#[differentiable]` accepts in a signature; every rejection says what to do.

use syn::{FnArg, ItemFn, Pat};

pub fn check_signature(f: &ItemFn) -> syn::Result<()> {
    let sig = &f.sig;
    if let Some(a) = &sig.asyncness {
        return Err(syn::Error::new_spanned(
            a,
            "#[differentiable] cannot differentiate an `async fn`; make it a plain `fn`",
        ));
    }
    if let Some(u) = &sig.unsafety {
        return Err(syn::Error::new_spanned(u, "#[differentiable] cannot differentiate an `unsafe fn`; wrap the unsafe part in a function with its own rule"));
    }
    if let Some(v) = &sig.variadic {
        return Err(syn::Error::new_spanned(
            v,
            "#[differentiable] cannot differentiate a variadic function",
        ));
    }
    check_scalar_params(sig)?;
    if sig.inputs.is_empty() {
        return Err(syn::Error::new_spanned(
            &sig.ident,
            "#[differentiable] needs at least one argument to differentiate with respect to",
        ));
    }
    if sig.inputs.len() > 12 {
        return Err(syn::Error::new_spanned(&sig.inputs, "#[differentiable] supports at most 12 arguments; group some into a tuple or a struct deriving `Tangent`"));
    }
    for a in &sig.inputs {
        if let FnArg::Typed(t) = a {
            if let syn::Type::ImplTrait(i) = &*t.ty {
                if fn_bound(i.bounds.iter()) {
                    return Err(syn::Error::new_spanned(i, CLOSURE_ARGUMENT));
                }
                return Err(syn::Error::new_spanned(i, "#[differentiable] needs the argument's type named by a generic parameter: write `fn f<T: Float>(x: T)` instead of `x: impl Float`"));
            }
            if let Some(d) = find_dyn(&t.ty) {
                return Err(syn::Error::new_spanned(d, "#[differentiable] cannot differentiate through a `dyn Trait` argument: it has no tangent type; take a concrete type, or write a rule for the call"));
            }
        }
        match a {
            FnArg::Receiver(_) => {
                // A method: `expand` has turned the receiver into `self: &Self`.
            }
            FnArg::Typed(t) => match &*t.pat {
                Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => {}
                other => {
                    return Err(syn::Error::new_spanned(other, "#[differentiable] needs every argument bound to a name (`x: T`); destructure it inside the body"));
                }
            },
        }
    }
    if let syn::ReturnType::Type(_, ty) = &sig.output {
        if let Some(i) = find_impl_trait(ty) {
            return Err(syn::Error::new_spanned(i, "#[differentiable] cannot return an `impl Trait` (an iterator, a closure): its result needs a type the derivation can hold a cotangent of; return the values collected (`Vec<f64>`), or mark the function that consumes the iterator"));
        }
        if let Some(d) = find_dyn(ty) {
            return Err(syn::Error::new_spanned(d, "#[differentiable] cannot return a `dyn Trait`: it has no tangent type; return a concrete type"));
        }
    }
    let mut v = BodyCheck(None);
    syn::visit::Visit::visit_block(&mut v, &f.block);
    if let Some(e) = v.0 {
        return Err(e);
    }
    Ok(())
}

/// A type parameter that holds the values being differentiated (an argument or the
/// output is `T`, `&T`, `&[T]`, `Vec<T>`, `[T; N]`) needs a float bound, or its
/// companions have no rules for it.
fn check_scalar_params(sig: &syn::Signature) -> syn::Result<()> {
    fn holds(ty: &syn::Type, t: &syn::Ident) -> bool {
        match ty {
            syn::Type::Path(p) if p.qself.is_none() => {
                if p.path.is_ident(t) {
                    return true;
                }
                let last = p.path.segments.last();
                match last.map(|s| (&s.ident, &s.arguments)) {
                    Some((id, syn::PathArguments::AngleBracketed(a))) if id == "Vec" => a
                        .args
                        .iter()
                        .any(|g| matches!(g, syn::GenericArgument::Type(e) if holds(e, t))),
                    _ => false,
                }
            }
            syn::Type::Reference(r) => holds(&r.elem, t),
            syn::Type::Slice(s) => holds(&s.elem, t),
            syn::Type::Array(a) => holds(&a.elem, t),
            syn::Type::Paren(p) => holds(&p.elem, t),
            _ => false,
        }
    }
    for tp in sig.generics.type_params() {
        if crate::generics::is_scalar_param(&sig.generics, tp) {
            continue;
        }
        let in_args = sig
            .inputs
            .iter()
            .any(|a| matches!(a, FnArg::Typed(pt) if holds(&pt.ty, &tp.ident)));
        let in_output = matches!(&sig.output, syn::ReturnType::Type(_, ty) if holds(ty, &tp.ident));
        if in_args || in_output {
            let name = &tp.ident;
            if fn_bound(tp.bounds.iter()) || where_fn_bound(sig, name) {
                return Err(syn::Error::new_spanned(tp, CLOSURE_ARGUMENT));
            }
            // `A: Act`: generic over the implementations of a trait (of the user's or
            // a library's), which is not a float type.
            let own_trait = tp.bounds.iter().find_map(|b| match b {
                syn::TypeParamBound::Trait(t) => t.path.segments.last().filter(|s| {
                    !matches!(
                        s.ident.to_string().as_str(),
                        "Copy"
                            | "Clone"
                            | "Debug"
                            | "Display"
                            | "Send"
                            | "Sync"
                            | "Sized"
                            | "PartialEq"
                            | "PartialOrd"
                            | "Default"
                            | "Add"
                            | "Sub"
                            | "Mul"
                            | "Div"
                            | "Rem"
                            | "Neg"
                            | "AddAssign"
                            | "SubAssign"
                            | "MulAssign"
                            | "DivAssign"
                            | "Sum"
                            | "Product"
                            | "From"
                            | "Into"
                            | "Zero"
                            | "One"
                            | "Num"
                            | "NumCast"
                            | "NumOps"
                            | "ToPrimitive"
                            | "FromPrimitive"
                            | "Signed"
                            | "Bounded"
                            | "Pow"
                    )
                }),
                _ => None,
            });
            if let Some(tr) = own_trait {
                let tr = &tr.ident;
                return Err(syn::Error::new_spanned(
                    tp,
                    format!("#[differentiable] derives functions generic over a float type (`T: Float`), not over the types implementing a trait (`{name}: {tr}`): the derivative of a call of `{tr}`'s methods is known per type; take the type itself (`a: &MyType`, one function per type), or hold the choices in an enum deriving `Tangent` and `match` on it; if `{tr}` is a float trait of yours, add `num_traits::Float` to the bound (`{name}: {tr} + Float`)"),
                ));
            }
            return Err(syn::Error::new_spanned(
                tp,
                format!("#[differentiable]: `{name}` holds the values being differentiated, but no bound says it is a float; bound it by `num_traits::Float`, `mochi::Real` or `mochi::Scalar` (`{name}: Float`), which give it the scalar rules"),
            ));
        }
    }
    Ok(())
}

/// An `impl Trait` anywhere in a type (`impl Iterator<Item = f64> + '_`, `Box<impl Fn(f64)
/// -> f64>`, `(f64, impl Iterator)`).
fn find_impl_trait(ty: &syn::Type) -> Option<&syn::TypeImplTrait> {
    struct F<'a>(Option<&'a syn::TypeImplTrait>);
    impl<'a> syn::visit::Visit<'a> for F<'a> {
        fn visit_type_impl_trait(&mut self, i: &'a syn::TypeImplTrait) {
            self.0.get_or_insert(i);
        }
    }
    let mut f = F(None);
    syn::visit::Visit::visit_type(&mut f, ty);
    f.0
}

fn find_dyn(ty: &syn::Type) -> Option<&syn::TypeTraitObject> {
    match ty {
        syn::Type::TraitObject(t) => Some(t),
        syn::Type::Reference(r) => find_dyn(&r.elem),
        syn::Type::Paren(p) => find_dyn(&p.elem),
        _ => None,
    }
}

/// Constructs rejected anywhere in the body, before lowering.
struct BodyCheck(Option<syn::Error>);
impl<'ast> syn::visit::Visit<'ast> for BodyCheck {
    fn visit_expr_try(&mut self, t: &'ast syn::ExprTry) {
        if self.0.is_none() {
            self.0 = Some(syn::Error::new_spanned(
                t.question_token,
                "mochi: this `?` is not supported here: `?` is supported in a function returning an `Option` or a `Result`, where its statement evaluates it every time (and in a closure that says it returns an `Option` or a `Result`, `|v| -> Option<f64> { .. }`, or ends in `Some(..)`/`Ok(..)`; not in a macro's arguments, a `while` condition, a `match` guard or the right of `&&`/`||`); bind it first (`let v = e?;`), or `match` on it",
            ));
        }
    }
    fn visit_expr_unsafe(&mut self, u: &'ast syn::ExprUnsafe) {
        // (`unsafe { *x.get_unchecked(i) }`: read by index, `desugar::UncheckedIndexed`.)
        if let Some(b) = crate::desugar::unsafe_as_block(u) {
            syn::visit::visit_block(self, &b);
            return;
        }
        if self.0.is_none() {
            self.0 = Some(syn::Error::new_spanned(
                u.unsafe_token,
                "mochi: `unsafe` blocks cannot be differentiated; move the unsafe code into a function with its own rule",
            ));
        }
    }
    fn visit_expr_async(&mut self, a: &'ast syn::ExprAsync) {
        if self.0.is_none() {
            self.0 = Some(syn::Error::new_spanned(
                a.async_token,
                "mochi: `async` blocks cannot be differentiated",
            ));
        }
    }
    // `#[cfg(..)]` on a statement or an expression: the derivation writes its own code
    // for the statement, which the attribute would not reach, so the statement would run
    // in the derivative whether it is compiled in the function or not (before
    // 2026-12-07, a silent wrong value and gradient).
    fn visit_attribute(&mut self, a: &'ast syn::Attribute) {
        if self.0.is_none() && (a.path().is_ident("cfg") || a.path().is_ident("cfg_attr")) {
            self.0 = Some(syn::Error::new_spanned(
                a,
                "mochi: a `#[cfg(..)]` attribute inside a differentiable function is not supported: the derivation cannot tell whether the code it configures is compiled; branch on the `cfg!(..)` macro instead (`if cfg!(debug_assertions) { .. }`), or move the configured code into a function of its own",
            ));
        }
    }
    fn visit_item(&mut self, _: &'ast syn::Item) {}
}

/// The message for a method taking a closure (`f: impl Fn(f64) -> f64`, `F: Fn(..)`); a
/// free function taking one is `inline`d where it is called.
const CLOSURE_ARGUMENT: &str = "#[differentiable]: a method cannot take a closure. A free function can: `#[differentiable] fn integrate(f: impl Fn(f64) -> f64, a: f64, b: f64) -> f64` is inlined where a marked function calls it with a closure; or write the closure inside the body (`let g = |v: f64| v * v;`)";

/// Whether the bounds name `Fn`, `FnMut` or `FnOnce`.
pub(crate) fn fn_bound<'a>(mut bounds: impl Iterator<Item = &'a syn::TypeParamBound>) -> bool {
    bounds.any(|b| {
        matches!(b, syn::TypeParamBound::Trait(t)
            if t.path.segments.last().is_some_and(|s| matches!(s.ident.to_string().as_str(), "Fn" | "FnMut" | "FnOnce")))
    })
}

/// Whether a `where` clause bounds `name` by a closure trait.
pub(crate) fn where_fn_bound(sig: &syn::Signature, name: &syn::Ident) -> bool {
    sig.generics.where_clause.as_ref().is_some_and(|w| {
        w.predicates.iter().any(|p| {
            matches!(p, syn::WherePredicate::Type(t)
                if matches!(&t.bounded_ty, syn::Type::Path(q) if q.path.is_ident(name))
                    && fn_bound(t.bounds.iter()))
        })
    })
}
