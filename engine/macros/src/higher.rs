//! Forward mode, forward over reverse, and nested gradients: the companions
//! `f::jvp`, `f::hvp`, `f::hessian`, `f::value_gradient_and_hessian` and a one-row
//! `f::jacobian` (a scalar result),
//! `f::jvp` and `f::jacobian` (a `Vec` result), and the rules `f::gradient::rrule` and
//! `f::value_and_gradient::rrule` through which another `#[differentiable]` function
//! can call `f::gradient(..)` and be differentiated.
//!
//! They run a generic form of the function on [`Dual`] numbers: the function itself
//! when it is generic over one scalar type `T`, or its twin (see `twin.rs`) when it is
//! written over `f64`. Each argument is a scalar `T`, a sequence (`&[T]`, `&Vec<T>`,
//! `Vec<T>`), or a value without `T` that is passed through. The companions take the
//! arguments as `f64` and `&[f64]`; the points and directions of all scalar and
//! sequence arguments are laid end to end (in argument order) for the Hessian and the
//! Jacobian, and given as a tuple (one element per such argument) to `jvp` and `hvp`.
//!
//! - `jvp` runs the function on `Dual<1>` at `x + v·ε`;
//! - `hvp` runs the derived gradient on `Dual<1>` (forward over reverse);
//! - `hessian` runs the derived gradient on `Dual<4>`, four columns per reverse sweep;
//! - `jacobian` runs the function on `Dual<4>`, four input directions per run;
//! - `gradient::rrule` returns the gradient and a pullback that is the Hessian-vector
//!   product (the Hessian is symmetric), so the outer derivative is exact and no
//!   perturbation of the outer function can reach the inner one.
//!
//! [`Dual`]: https://docs.rs/mochi-ad/latest/mochi/struct.Dual.html

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::visit_mut::VisitMut;
use syn::{FnArg, GenericParam, ItemFn, Pat, ReturnType, Type, TypeParamBound, WherePredicate};

/// Bounds (last path segment) that `Dual<N>` satisfies.
const DUAL_BOUNDS: &[&str] = &[
    "Float",
    "Real",
    "Scalar",
    "TwinScalar",
    "Copy",
    "Clone",
    "Debug",
    "Display",
    "PartialEq",
    "PartialOrd",
    "Send",
    "Sync",
    "Sum",
    "Product",
    "Num",
    "NumCast",
    "ToPrimitive",
    "FromPrimitive",
    "FloatConst",
    "Default",
    "Zero",
    "One",
    "NumOps",
];

/// The operators `Real` has as supertraits (which `Dual<N>` satisfies too).
const REAL_OPERATORS: &[&str] = &[
    "Add",
    "Sub",
    "Mul",
    "Div",
    "Rem",
    "Neg",
    "AddAssign",
    "SubAssign",
    "MulAssign",
    "DivAssign",
    "RemAssign",
    "Sum",
    "Product",
];

/// How one argument holds its scalars.
#[derive(Clone, Copy, PartialEq)]
enum Form {
    Scalar,
    Slice,
    VecRef,
    Vec,
    /// `&Array1<T>`, `Array1<T>`, `ArrayView1<T>`, `&ArrayView1<T>`: the companions take
    /// the function's own type (with `f64`).
    Array(ArrayForm),
    /// No scalar of the function's type: passed through as it is.
    Other,
    /// `[T; N]` (`false`) or `&[T; N]` (`true`): the companions take the function's own
    /// type (with `f64`), its directions and answers as slices and `Vec`s.
    Fixed(bool),
    /// `(T, T, ..)` of this many floats, taken by value: the companions take the tuple
    /// (with `f64`), its directions and answers as tuples too (read and built through
    /// `OutputParts`).
    Tuple(usize),
    /// `&self` of a method, whose twin takes the struct's generic mirror
    /// (`&<Self as LiftField>::Of<T>`): its floats are laid out as `LiftField` orders
    /// them.
    Receiver,
}

/// How a one-dimensional array argument is passed.
#[derive(Clone, Copy, PartialEq)]
enum ArrayForm {
    Owned,
    Ref,
    View,
    ViewRef,
}

impl Form {
    fn is_array(self) -> bool {
        matches!(self, Form::Array(_))
    }
}

struct Param {
    name: syn::Ident,
    form: Form,
    /// For an array argument: the owned array type of its dimension, in the
    /// companions' float type (`hvp`'s answer for it).
    owned: TokenStream,
    /// The argument's type with the scalar type made the companions' float type.
    ty_f64: Type,
    /// Floats in another shape (`xs: &[Vec<f64>]`, `data: &[(f64, f64)]`), a `Form::Other`
    /// that the twin takes in its scalar: lifted as constants for it.
    lift: bool,
    /// A scalar taken by reference (`x: &f64`, as `std::autodiff`'s examples take it):
    /// the companions take it so too, and read it as a `Form::Scalar`.
    by_ref: bool,
}

/// The shape of a generic function the companions can run on duals.
struct Spec {
    params: Vec<Param>,
    vector_output: bool,
    /// The vector result is an `Array1` (else a `Vec`).
    array_output: bool,
    /// The vector result is a fixed-size array `[T; N]` or a tuple of `T`s: its type in
    /// the companions' float type (read and built through `OutputParts`).
    parts_output: Option<Type>,
    /// The float type the companions take and answer (`f64`, or `f32` for the twin of
    /// a function over `f32`; the duals carry `f64` either way).
    float: syn::Ident,
}

/// Where the companions find the generic function and its derived companions.
pub struct Target {
    /// The generic function, called as `#primal::<Dual<N>>(..)`.
    pub primal: TokenStream,
    /// Its module of derived companions (`#module::gradient::<Dual<N>>(..)`).
    pub module: TokenStream,
    /// The `f64` value and gradient: a path called with the arguments as the function
    /// takes them.
    pub value_and_gradient: TokenStream,
    /// The `f64` pullback (value and a closure of the output's cotangent), called alike.
    pub pullback: TokenStream,
    /// The function itself, called alike, when it is not `#primal::<f64>` (a method,
    /// whose twin takes the struct's mirror).
    pub plain: Option<TokenStream>,
}

/// The companions of the generic function `func` (found through `target`), or nothing
/// when it does not have a shape they cover.
pub fn companions(func: &ItemFn, target: &Target) -> TokenStream {
    companions_or_why(func, target).unwrap_or_default()
}

/// [`companions`], or why the generic function `func` has a shape they do not cover
/// (naming the argument or the result).
pub fn companions_or_why(func: &ItemFn, target: &Target) -> Result<TokenStream, String> {
    let spec = spec(func)?;
    Ok(with_generics(
        emit(&spec, target),
        &func.sig.generics,
        &target.primal,
    ))
}

/// What the companions take, for the reasons that name an argument.
const TAKEN: &str =
    "the companions take floats, slices, `Vec`s, `Array1`s, fixed-size arrays and tuples of floats";

/// What the companions answer for, for the reasons that name the result.
const ANSWERED: &str = "the companions answer for a float, or for a `Vec`, an `Array1`, a fixed-size array or a tuple of floats";

/// The companions of a function generic over constants or lifetimes too (`<T: Float,
/// const N: usize>`, `<'a, T: Float>`): each generic over them, and passing the
/// constants on where it names the function's scalar (`f::<Dual<1>>(..)` →
/// `f::<Dual<1>, N>(..)`).
fn with_generics(
    items: TokenStream,
    generics: &syn::Generics,
    primal: &TokenStream,
) -> TokenStream {
    let consts: Vec<&syn::ConstParam> = generics.const_params().collect();
    let lifetimes: Vec<&syn::LifetimeParam> = generics.lifetimes().collect();
    if consts.is_empty() && lifetimes.is_empty() {
        return items;
    }
    let Ok(mut file) = syn::parse2::<syn::File>(items.clone()) else {
        return items;
    };
    // The function (`super::__mochi_twin_f`) and its derived rules, named with the scalar.
    let Ok(primal) = syn::parse2::<syn::Path>(primal.clone()) else {
        return items;
    };
    let Some(last) = primal.segments.last() else {
        return items;
    };
    let names = [
        last.ident.to_string(),
        "gradient".into(),
        "value_and_gradient".into(),
        "pullback".into(),
        "rrule".into(),
    ];
    struct Pass<'a>(&'a [&'a syn::ConstParam], &'a [String]);
    impl VisitMut for Pass<'_> {
        fn visit_path_segment_mut(&mut self, s: &mut syn::PathSegment) {
            let named = self.1.iter().any(|n| s.ident == n);
            if let syn::PathArguments::AngleBracketed(a) = &mut s.arguments {
                if named && a.args.len() == 1 && matches!(a.args[0], syn::GenericArgument::Type(_))
                {
                    for c in self.0 {
                        let n = &c.ident;
                        a.args.push(syn::parse_quote!(#n));
                    }
                }
            }
            syn::visit_mut::visit_path_segment_mut(self, s);
        }
    }
    // (`impl Pullback<..> + use<>` of a nested rule: capturing the constants.)
    struct Captures<'a>(&'a [&'a syn::ConstParam]);
    impl VisitMut for Captures<'_> {
        fn visit_type_param_bound_mut(&mut self, b: &mut TypeParamBound) {
            if let TypeParamBound::PreciseCapture(p) = b {
                for c in self.0 {
                    p.params.push(syn::CapturedParam::Ident(c.ident.clone()));
                }
            }
            syn::visit_mut::visit_type_param_bound_mut(self, b);
        }
    }
    fn each(
        items: &mut [syn::Item],
        consts: &[&syn::ConstParam],
        lifetimes: &[&syn::LifetimeParam],
        names: &[String],
    ) {
        for item in items {
            match item {
                syn::Item::Fn(f) => {
                    Pass(consts, names).visit_block_mut(&mut f.block);
                    Captures(consts).visit_return_type_mut(&mut f.sig.output);
                    for c in consts {
                        f.sig
                            .generics
                            .params
                            .push(syn::GenericParam::Const((*c).clone()));
                    }
                    // (A borrowed argument's named lifetime, `&'a [f64]`.)
                    for (k, l) in lifetimes.iter().enumerate() {
                        f.sig
                            .generics
                            .params
                            .insert(k, syn::GenericParam::Lifetime((*l).clone()));
                    }
                }
                // (The nested rules, `jvp::rrule`.)
                syn::Item::Mod(m) => {
                    if let Some((_, inner)) = &mut m.content {
                        each(inner, consts, lifetimes, names);
                    }
                }
                _ => {}
            }
        }
    }
    each(&mut file.items, &consts, &lifetimes, &names);
    quote!(#file)
}

/// Why the companions are missing, at every call: `f::hessian(..)` and the others exist
/// with the function's arity, and their bound names the reason.
pub fn unavailable(func: &ItemFn, kind: crate::twin::Why, why: &str) -> TokenStream {
    let receiver = func.sig.receiver().is_some().then(|| quote!(&self));
    let n = func
        .sig
        .inputs
        .iter()
        .filter(|a| matches!(a, FnArg::Typed(_)))
        .count();
    let tys: Vec<syn::Ident> = (0..n).map(|i| format_ident!("__MochiA{}", i)).collect();
    let doc = format!(
        " Not available: mochi runs the higher-order companions on a generic form of the \
         function, and this one has none because {why}. Write the function generic over \
         its float type (`fn f<T: Float>(x: &[T]) -> T`), or move what is listed into a \
         generic `#[differentiable]` function."
    );
    let reason = syn::Ident::new(kind.type_name(), Span::call_site());
    // A method that did not ask: the bound whose message says how to ask.
    let bound = if matches!(kind, crate::twin::Why::MethodNotAsked) {
        quote!(MethodHigherOrder)
    } else {
        quote!(HigherOrder)
    };
    let names = [
        "jvp",
        "hvp",
        "hessian",
        "value_gradient_and_hessian",
        "jacobian",
    ];
    // The bounded type holds a type parameter, so that the bound is checked at the call:
    // the arguments' types, or the result's for a method of `&self` alone.
    let bounded = if tys.is_empty() {
        quote!((__MochiR,))
    } else {
        quote!((#(#tys,)*))
    };
    // A free function's stubs are bounded by a trait of its module, nothing implements,
    // whose message names the function and the reason (the construct without a generic
    // form); a method's by the shared trait (its stubs become associated functions, and
    // a trait cannot sit in an `impl`).
    let local = receiver.is_none()
        && !matches!(
            kind,
            crate::twin::Why::MethodNotAsked | crate::twin::Why::Associated
        );
    let fname = func.sig.ident.to_string();
    let escaped = why.replace('{', "{{").replace('}', "}}");
    let local_trait = local.then(|| {
        let message = format!(
            "`{fname}` has no higher-order companions (`jvp`, `hvp`, `hessian`, `jacobian`): mochi runs them on a generic form of the function, and it has none because {escaped}"
        );
        unmet_bound(
            quote!(__MochiNoGenericForm),
            &message,
            "no generic form of this function",
            "write the function generic over its float type (`fn f<T: num_traits::Float>(x: &[T]) -> T`), or move what is named into a generic `#[differentiable]` function",
        )
    });
    let bound_path = if local {
        quote!(__MochiNoGenericForm)
    } else {
        quote!(::mochi::__private::#bound)
    };
    let fns = names.iter().map(|name| {
        let id = format_ident!("{}", name);
        let direction = *name == "jvp" || *name == "hvp";
        let extra_ty = direction.then(|| quote!(, __MochiV));
        // `&self`, the arguments and a direction, comma-separated (any may be absent).
        let params = receiver
            .clone()
            .into_iter()
            .chain(tys.iter().map(|t| quote!(_: #t)))
            .chain(direction.then(|| quote!(_: __MochiV)));
        quote! {
            #[doc = #doc]
            pub fn #id<#(#tys,)* __MochiR #extra_ty>(#(#params),*) -> __MochiR
            where
                #bounded: #bound_path<::mochi::__private::because::#reason>,
            {
                <#bounded as #bound_path<::mochi::__private::because::#reason>>::unreachable::<__MochiR>()
            }
        }
    });
    // A free function's nested rules (`g::gradient::rrule`, what a differentiable
    // function calling `g::gradient(..)` reaches): their derivative is a Hessian-vector
    // product, so they are missing too, and say so at the call.
    let nested = local.then(|| {
        let message = format!(
            "`{fname}::gradient`, `{fname}::value_and_gradient` and `{fname}::jvp` cannot be called inside a `#[differentiable]` function: their derivative is a Hessian-vector product, which mochi runs on a generic form of `{fname}`, and it has none because {escaped}"
        );
        let rules = ["gradient", "value_and_gradient", "jvp"].map(|m| {
            let module = format_ident!("{}", m);
            let direction = m == "jvp";
            let extra_ty = direction.then(|| quote!(, __MochiV));
            let params = tys
                .iter()
                .map(|t| quote!(_: #t))
                .chain(direction.then(|| quote!(_: __MochiV)));
            quote! {
                #[doc(hidden)]
                pub mod #module {
                    #[allow(unused_imports)]
                    use super::*;
                    /// Not available (see the bound's message).
                    pub fn rrule<#(#tys,)* __MochiR #extra_ty>(#(#params),*) -> __MochiR
                    where
                        #bounded: super::__MochiNoNestedRule<::mochi::__private::because::#reason>,
                    {
                        <#bounded as super::__MochiNoNestedRule<::mochi::__private::because::#reason>>::unreachable::<__MochiR>()
                    }
                }
            }
        });
        let bound = unmet_bound(
            quote!(__MochiNoNestedRule),
            &message,
            "no derivative of this gradient",
            "call the function itself and let its gradient be part of the outer one, or make the function one mochi can write generically (floats, slices, `Vec`s and arrays of floats as arguments)",
        );
        quote!(#bound #(#rules)*)
    });
    quote!(#local_trait #nested #(#fns)*)
}

/// A trait nothing implements, `name<W>`, whose message says why the stand-ins it
/// bounds (companions or nested rules a function does not have) cannot be called.
fn unmet_bound(name: TokenStream, message: &str, label: &str, note: &str) -> TokenStream {
    quote! {
        #[diagnostic::on_unimplemented(message = #message, label = #label, note = #note)]
        #[allow(non_camel_case_types, dead_code)]
        #[doc(hidden)]
        /// The bound of what this function does not have; nothing meets it.
        pub trait #name<W> {
            /// Never called.
            fn unreachable<R>() -> R;
        }
    }
}

/// The scalar type parameter of a generic function whose bounds `Dual` meets (one type
/// parameter, bounded by `Float`, `Real` or `Scalar` and traits `Dual` has), or `None`.
fn dual_param(func: &ItemFn) -> Option<&syn::TypeParam> {
    let sig = &func.sig;
    // (Constants may follow it: `<T: Float, const N: usize>`, the twin of a function
    // generic over its lengths.)
    let mut gps = sig
        .generics
        .params
        .iter()
        .filter(|p| !matches!(p, GenericParam::Lifetime(_)));
    let Some(GenericParam::Type(t)) = gps.next() else {
        return None;
    };
    if !gps.all(|p| matches!(p, GenericParam::Const(_))) {
        return None;
    }
    let where_bounds = sig
        .generics
        .where_clause
        .iter()
        .flat_map(|w| w.predicates.iter())
        .filter_map(|p| match p {
            // Bounds on other types (`&'a T: Mul<T>`) are the operators `Dual` has.
            WherePredicate::Type(pt) => match &pt.bounded_ty {
                Type::Path(tp) if tp.path.is_ident(&t.ident) => Some(Some(pt.bounds.iter())),
                _ => None,
            },
            _ => Some(None),
        })
        .collect::<Option<Vec<_>>>()?;
    let bounds: Vec<&TypeParamBound> = t
        .bounds
        .iter()
        .chain(where_bounds.into_iter().flatten())
        .collect();
    let dual_meets = |b: &&TypeParamBound| match b {
        TypeParamBound::Trait(tr) => tr.path.segments.last().is_some_and(|s| {
            let n = s.ident.to_string();
            DUAL_BOUNDS.contains(&n.as_str()) || REAL_OPERATORS.contains(&n.as_str())
        }),
        TypeParamBound::Lifetime(l) => l.ident == "static",
        _ => false,
    };
    let scalar = bounds.iter().any(|b| {
        matches!(b, TypeParamBound::Trait(tr) if tr.path.segments.last().is_some_and(|s| ["Float", "Real", "Scalar"].contains(&s.ident.to_string().as_str())))
    });
    if !scalar || !bounds.iter().all(dual_meets) {
        return None;
    }
    Some(t)
}

/// The scalar parameter of a generic function bounded by `Real` and not by
/// `num_traits::Float`, when every bound it has is one the bridge from a `Float`-bounded
/// caller can prove of `<T as Scalar>::Real` (`Real`, `Scalar` and what they imply).
pub fn real_param(func: &ItemFn) -> Option<syn::Ident> {
    let t = dual_param(func)?;
    // The operators `Real` has as supertraits, between two `T`s (`Mul<Output = T>`,
    // `AddAssign`, `Sum`): provable too. (`Mul<f64>` is not.)
    let is_t = |ty: &syn::Type| matches!(ty, syn::Type::Path(p) if p.qself.is_none() && (p.path.is_ident(&t.ident) || p.path.is_ident("Self")));
    let names: Vec<String> = t
        .bounds
        .iter()
        .chain(crate::generics::where_bounds_of(
            &func.sig.generics,
            &t.ident,
        ))
        .map(|b| match b {
            TypeParamBound::Trait(tr) => {
                let Some(last) = tr.path.segments.last() else {
                    return String::new();
                };
                let name = last.ident.to_string();
                if !REAL_OPERATORS.contains(&name.as_str()) {
                    return name;
                }
                let between_ts = match &last.arguments {
                    syn::PathArguments::None => true,
                    syn::PathArguments::AngleBracketed(a) => a.args.iter().all(|g| match g {
                        syn::GenericArgument::Type(ty) => is_t(ty),
                        syn::GenericArgument::AssocType(at) => at.ident == "Output" && is_t(&at.ty),
                        _ => false,
                    }),
                    syn::PathArguments::Parenthesized(_) => false,
                };
                if between_ts {
                    "operator".to_string()
                } else {
                    name
                }
            }
            TypeParamBound::Lifetime(l) => format!("'{}", l.ident),
            _ => String::new(),
        })
        .collect();
    let provable = [
        "Real",
        "Scalar",
        "Copy",
        "Clone",
        "Debug",
        "PartialEq",
        "PartialOrd",
        "'static",
        "operator",
    ];
    (names.iter().any(|n| n == "Real") && names.iter().all(|n| provable.contains(&n.as_str())))
        .then(|| t.ident.clone())
}

/// Whether `func` is generic over one scalar type whose bounds `Dual` meets: its twin is
/// itself.
pub fn bounds_dual_meets(func: &ItemFn) -> bool {
    dual_param(func).is_some()
}

/// The one type parameter of a generic function, bounded by a float trait, and its
/// lifetime parameters, when it has no other parameters.
pub fn scalar_param(func: &ItemFn) -> Option<(syn::Ident, Vec<TokenStream>)> {
    let mut t = None;
    let mut lifetimes = Vec::new();
    for p in &func.sig.generics.params {
        match p {
            GenericParam::Type(tp)
                if t.is_none() && crate::generics::is_scalar_param(&func.sig.generics, tp) =>
            {
                t = Some(tp.ident.clone())
            }
            GenericParam::Lifetime(l) => {
                let l = &l.lifetime;
                lifetimes.push(quote!(#l));
            }
            _ => return None,
        }
    }
    Some((t?, lifetimes))
}

fn spec(func: &ItemFn) -> Result<Spec, String> {
    let sig = &func.sig;
    let t = dual_param(func).ok_or("it is not generic over one float type")?;
    let is_t =
        |ty: &Type| matches!(ty, Type::Path(p) if p.qself.is_none() && p.path.is_ident(&t.ident));
    let vec_of_t = |ty: &Type| match ty {
        Type::Path(p) if p.qself.is_none() => {
            let last = p.path.segments.last()?;
            if last.ident != "Vec" {
                return None;
            }
            match &last.arguments {
                syn::PathArguments::AngleBracketed(a) if a.args.len() == 1 => match &a.args[0] {
                    syn::GenericArgument::Type(inner) if is_t(inner) => Some(()),
                    _ => None,
                },
                _ => None,
            }
        }
        _ => None,
    };
    // `ArrayN<T>` / `ArrayViewN<T>` (with or without a lifetime): an owned or view array
    // of the scalar, and the owned array type of its dimension with the scalar made the
    // companions' float type.
    let array_of_t = |ty: &Type| -> Option<(bool, TokenStream)> {
        let (view, dim, elem) = crate::twin::array_type(ty)?;
        if !is_t(elem) {
            return None;
        }
        let ix = if dim == "D" {
            format_ident!("IxDyn")
        } else {
            format_ident!("Ix{}", dim)
        };
        let fl = syn::Ident::new(crate::twin::float(), Span::call_site());
        Some((
            view,
            quote!(::mochi::__private::DenseArray<#fl, ::mochi::__private::#ix>),
        ))
    };
    let array1_of_t = |ty: &Type| -> Option<bool> {
        let (view, owned) = array_of_t(ty)?;
        owned.to_string().contains("Ix1").then_some(view)
    };
    // `ty` with the scalar type made the companions' float type.
    let in_float = |ty: &Type| {
        let mut out = ty.clone();
        let fl = syn::Ident::new(crate::twin::float(), Span::call_site());
        crate::rewrite::ReplaceType {
            from: &t.ident.to_string(),
            to: syn::parse_quote!(#fl),
        }
        .visit_type_mut(&mut out);
        out
    };
    let parts_of_t = |ty: &Type| match ty {
        Type::Array(a) => is_t(&a.elem),
        Type::Tuple(tu) => (2..=12).contains(&tu.elems.len()) && tu.elems.iter().all(is_t),
        _ => false,
    };
    let mut parts_output = None;
    let (vector_output, array_output) = match &sig.output {
        ReturnType::Type(_, ty) if is_t(ty) => (false, false),
        ReturnType::Type(_, ty) if vec_of_t(ty).is_some() => (true, false),
        ReturnType::Type(_, ty) if array1_of_t(ty) == Some(false) => (true, true),
        ReturnType::Type(_, ty) if parts_of_t(ty) => {
            parts_output = Some(in_float(ty));
            (true, false)
        }
        ReturnType::Type(_, ty) => {
            let ty = in_float(ty);
            return Err(format!(
                "its result is `{}`: {ANSWERED} (a function that calls this one and reads its result has them)",
                crate::twin::type_text(&ty)
            ));
        }
        ReturnType::Default => {
            return Err(format!(
                "its result is `()`: {ANSWERED} (a function that calls this one has them)"
            ));
        }
    };
    let mut params = Vec::new();
    for a in &sig.inputs {
        let FnArg::Typed(pt) = a else {
            return Err("it takes `self` in a way the companions do not".to_string());
        };
        let Pat::Ident(pi) = &*pt.pat else {
            let pat = &pt.pat;
            return Err(format!(
                "an argument is the pattern `{}`: name it (`p: (f64, f64)`) and take it apart in the body (`let (a, b) = p;`)",
                quote!(#pat)
            ));
        };
        let shape = |what: &str| {
            format!(
                "the argument `{}: {}` {what}: {TAKEN}, and constants of other shapes holding floats (a function that calls this one has them)",
                pi.ident,
                crate::twin::type_text(&in_float(&pt.ty))
            )
        };
        // (The twin's receiver is `this`; another argument of the struct's type, `o: &V2`
        // of a method of `V2`, is not one.)
        let receiver = pi.ident == "this"
            && matches!(&*pt.ty, Type::Reference(r) if r.mutability.is_none()
            && crate::activity::tokens_mention(&quote!(#r), &|i| i == "LiftField"));
        // (An enum of the crate's, `<Activation as LiftField>::Of<T>` in the twin, is its
        // own generic form: passed through, lifted as it is.)
        let enum_of_crate = |ty: &Type| {
            let ty = match ty {
                Type::Reference(r) if r.mutability.is_none() => &*r.elem,
                other => other,
            };
            matches!(ty, Type::Path(tp) if tp.qself.as_ref().is_some_and(|q| matches!(&*q.ty,
                Type::Path(e) if e.path.get_ident().is_some_and(|i| crate::twin::crate_enum(&i.to_string())))))
        };
        let form = match &*pt.ty {
            _ if receiver => Form::Receiver,
            ty if enum_of_crate(ty) => Form::Other,
            ty if is_t(ty) => Form::Scalar,
            ty if array_of_t(ty).is_some_and(|a| !a.0) => Form::Array(ArrayForm::Owned),
            ty if array_of_t(ty).is_some_and(|a| a.0) => Form::Array(ArrayForm::View),
            Type::Array(a) if is_t(&a.elem) => Form::Fixed(false),
            Type::Tuple(tu) if parts_of_t(&pt.ty) => Form::Tuple(tu.elems.len()),
            Type::Reference(r) if r.mutability.is_none() => match &*r.elem {
                ty if is_t(ty) => Form::Scalar,
                Type::Slice(s) if is_t(&s.elem) => Form::Slice,
                Type::Array(a) if is_t(&a.elem) => Form::Fixed(true),
                other if vec_of_t(other).is_some() => Form::VecRef,
                other if array_of_t(other).is_some_and(|a| !a.0) => Form::Array(ArrayForm::Ref),
                other if array_of_t(other).is_some_and(|a| a.0) => Form::Array(ArrayForm::ViewRef),
                other if data_of(other, &t.ident) => Form::Other,
                other if mentions(other, &t.ident) => {
                    return Err(shape("holds floats in a shape taken by reference"))
                }
                _ => Form::Other,
            },
            // A `&mut` argument (`k: &mut usize`) cannot be passed through by a clone.
            Type::Reference(r) if r.mutability.is_some() => return Err(shape("is `&mut`")),
            other if vec_of_t(other).is_some() => Form::Vec,
            other if data_of(other, &t.ident) => Form::Other,
            other if mentions(other, &t.ident) => return Err(shape("holds floats in this shape")),
            _ => Form::Other,
        };
        let ty_f64 = in_float(&pt.ty);
        let owned = match form {
            Form::Array(ArrayForm::Owned | ArrayForm::View) => array_of_t(&pt.ty),
            Form::Array(_) => match &*pt.ty {
                Type::Reference(r) => array_of_t(&r.elem),
                _ => None,
            },
            _ => None,
        }
        .map(|a| a.1)
        .unwrap_or_default();
        if form == Form::Receiver {
            params.push(Param {
                name: syn::Ident::new("self", pi.ident.span()),
                form,
                owned,
                ty_f64: syn::parse_quote!(&Self),
                lift: false,
                by_ref: false,
            });
            continue;
        }
        params.push(Param {
            name: pi.ident.clone(),
            form,
            owned,
            lift: form == Form::Other && mentions(&pt.ty, &t.ident) && !enum_of_crate(&pt.ty),
            by_ref: form == Form::Scalar && matches!(&*pt.ty, Type::Reference(_)),
            ty_f64,
        });
    }
    if !params.iter().any(|p| p.form != Form::Other) {
        return Err(format!(
            "no argument is a float or holds floats the companions take ({TAKEN})"
        ));
    }
    Ok(Spec {
        params,
        vector_output,
        array_output,
        parts_output,
        float: syn::Ident::new(crate::twin::float(), Span::call_site()),
    })
}

/// Floats of the scalar `t` in a shape the companions take as constants, below at least
/// one `Vec`, slice or tuple (`&[Vec<T>]`, `&[(T, T)]`; see
/// [`crate::types::scalar_data_depth`]).
fn data_of(ty: &Type, t: &syn::Ident) -> bool {
    crate::types::scalar_data_depth(ty, &|i| i == t).is_some_and(|d| d >= 2)
}

pub fn mentions(ty: &Type, t: &syn::Ident) -> bool {
    fn walk(ts: TokenStream, t: &syn::Ident) -> bool {
        ts.into_iter().any(|tt| match tt {
            proc_macro2::TokenTree::Ident(i) => &i == t,
            proc_macro2::TokenTree::Group(g) => walk(g.stream(), t),
            _ => false,
        })
    }
    walk(quote!(#ty), t)
}

impl Spec {
    fn active(&self) -> impl Iterator<Item = &Param> {
        self.params.iter().filter(|p| p.form != Form::Other)
    }

    /// `x: f64` / `x: &[f64]` / `v: Vec<f64>` / `n: usize`: the companions' parameters,
    /// of the function's own types.
    fn decls(&self) -> Vec<TokenStream> {
        let fl = &self.float;
        self.params
            .iter()
            .map(|p| {
                let n = &p.name;
                match p.form {
                    Form::Receiver => quote!(&self),
                    // (`&x: &f64`: the body reads `x` as the float.)
                    Form::Scalar if p.by_ref => quote!(&#n: &#fl),
                    Form::Scalar => quote!(#n: #fl),
                    Form::Slice => quote!(#n: &[#fl]),
                    // (As the function takes them: `v: Vec<f64>`, `v: &Vec<f64>`.)
                    Form::VecRef => quote!(#n: &::std::vec::Vec<#fl>),
                    Form::Vec => quote!(#n: ::std::vec::Vec<#fl>),
                    Form::Array(_) | Form::Other | Form::Fixed(_) | Form::Tuple(_) => {
                        let t = &p.ty_f64;
                        quote!(#n: #t)
                    }
                }
            })
            .collect()
    }

    /// The type of a direction (and of `hvp`'s result): one element per scalar or
    /// sequence argument, a tuple when there are several.
    fn direction_type(&self, owned: bool) -> TokenStream {
        let fl = &self.float;
        let ts: Vec<TokenStream> = self
            .active()
            .map(|p| match (p.form, owned) {
                (Form::Receiver, true) => quote!(<Self as ::mochi::Tangent>::Tangent),
                (Form::Receiver, false) => quote!(&<Self as ::mochi::Tangent>::Tangent),
                (Form::Scalar, _) => quote!(#fl),
                (Form::Array(_), true) => p.owned.clone(),
                (Form::Array(_), false) | (Form::Tuple(_), _) => {
                    let t = &p.ty_f64;
                    quote!(#t)
                }
                (_, true) => quote!(::std::vec::Vec<#fl>),
                (_, false) => quote!(&[#fl]),
            })
            .collect();
        one_or_tuple(&ts)
    }

    /// Lays the scalars of `names` (one per active argument) end to end in `out`.
    fn flatten(&self, names: &[syn::Ident], out: &syn::Ident) -> TokenStream {
        let fl = &self.float;
        let pushes = self.active().zip(names).map(|(p, n)| match p.form {
            // The receiver's floats (the point), or a tangent of it (a direction).
            Form::Receiver if n == "self" => quote! {
                let _ = ::mochi::__private::LiftField::lift::<f64, _>(self, &mut |__mochi_e| {
                    #out.push(__mochi_e);
                    __mochi_e
                });
            },
            Form::Receiver => {
                quote!(<Self as ::mochi::__private::LiftField>::flatten_tangent(#n, &mut #out);)
            }
            Form::Scalar => quote!(#out.push(#n as f64);),
            Form::Array(_) => quote!(#out.extend(#n.iter().map(|&__mochi_e| __mochi_e as f64));),
            Form::Tuple(_) => quote! {
                #out.extend(::mochi::__private::into_parts::<#fl, _>(#n).into_iter().map(|__mochi_e| __mochi_e as f64));
            },
            _ if self.float == "f64" => quote!(#out.extend_from_slice(&#n[..]);),
            _ => quote!(#out.extend(#n[..].iter().map(|&__mochi_e| __mochi_e as f64));),
        });
        quote! {
            let mut #out = ::std::vec::Vec::new();
            #(#pushes)*
        }
    }

    /// The arguments of the generic function on duals, cut from the flat `duals` by the
    /// lengths of the point's arguments.
    /// `data_dirs`: one direction per data argument (`Form::Other` lifted), which seeds
    /// it (`SeedData`) instead of lifting it as a constant.
    fn dual_args(
        &self,
        duals: &syn::Ident,
        data_dirs: Option<&[syn::Ident]>,
    ) -> (TokenStream, Vec<TokenStream>) {
        let mut lets = Vec::new();
        let mut args = Vec::new();
        let mut data_dirs = data_dirs.map(|d| d.iter());
        for (i, p) in self.params.iter().enumerate() {
            let n = &p.name;
            let a = format_ident!("__mochi_a{}", i);
            match p.form {
                Form::Receiver => {
                    lets.push(quote! {
                        let #a = ::mochi::__private::TwinOf::twin_with(self, &mut |_| {
                            let __mochi_e = #duals[__mochi_at];
                            __mochi_at += 1;
                            __mochi_e
                        });
                    });
                    args.push(quote!(&#a));
                }
                Form::Scalar => {
                    lets.push(quote!(let #a = #duals[__mochi_at]; __mochi_at += 1;));
                    args.push(if p.by_ref { quote!(&#a) } else { quote!(#a) });
                }
                Form::Other if p.lift => {
                    // (Data taken by value, `a: Vec<Vec<f64>>`, is cloned: the closure
                    // runs once per block of directions.)
                    let src = data_source(&p.ty_f64, n);
                    match data_dirs.as_mut().and_then(Iterator::next) {
                        Some(dir) => lets.push(
                            quote!(let #a = ::mochi::__private::SeedData::seed_data(#src, #dir);),
                        ),
                        None => lets.push(
                            quote!(let #a = ::mochi::__private::lift_data_like(#src, &#duals);),
                        ),
                    }
                    args.push(data_arg(&p.ty_f64, &a));
                }
                Form::Other => args.push(quote!(::core::clone::Clone::clone(&#n))),
                Form::Tuple(k) => {
                    lets.push(quote! {
                        let #a = ::mochi::__private::from_parts(#duals[__mochi_at..__mochi_at + #k].to_vec());
                        __mochi_at += #k;
                    });
                    args.push(quote!(#a));
                }
                _ => {
                    let (build, arg) = dual_arg(
                        p,
                        &a,
                        quote!(#duals[__mochi_at..__mochi_at + #n.len()].to_vec()),
                    );
                    lets.push(quote!(#build __mochi_at += #n.len();));
                    args.push(arg);
                }
            }
        }
        (
            quote! {
                let mut __mochi_at = 0usize;
                #(#lets)*
                let _ = __mochi_at;
            },
            args,
        )
    }

    /// The arguments of the generic function on `Dual<1>`, seeded along the split
    /// direction `vs` one argument at a time (one allocation per sequence, none per
    /// scalar), or `None` when an argument is a receiver (seeded through the flat
    /// path). A direction of another length than its argument panics, naming it.
    fn jvp_args(&self, vs: &[syn::Ident]) -> Option<(TokenStream, Vec<TokenStream>)> {
        let fl = &self.float;
        let mut lets = Vec::new();
        let mut args = Vec::new();
        let mut k = 0;
        for (i, p) in self.params.iter().enumerate() {
            let n = &p.name;
            let a = format_ident!("__mochi_a{}", i);
            let seq = |v: &syn::Ident| {
                let msg = format!(
                    "mochi: the direction for `{n}` has {{}} components, the argument {{}}"
                );
                quote! {
                    ::core::assert_eq!(#n.len(), #v.len(), #msg, #v.len(), #n.len());
                    let __mochi_seeded = #n
                        .iter()
                        .zip(#v.iter())
                        .map(|(&__mochi_x, &__mochi_v)| {
                            ::mochi::Dual::<1>::new(__mochi_x as f64, [__mochi_v as f64])
                        });
                }
            };
            match p.form {
                Form::Receiver => return None,
                Form::Other if p.lift => {
                    let src = data_source(&p.ty_f64, n);
                    lets.push(quote!(let #a = ::mochi::__private::lift_data_like(#src, &[::mochi::Dual::<1>::constant(0.0)]);));
                    args.push(data_arg(&p.ty_f64, &a));
                }
                Form::Other => args.push(quote!(::core::clone::Clone::clone(&#n))),
                Form::Scalar => {
                    let v = &vs[k];
                    k += 1;
                    lets.push(quote!(let #a = ::mochi::Dual::<1>::new(#n as f64, [#v as f64]);));
                    args.push(if p.by_ref { quote!(&#a) } else { quote!(#a) });
                }
                Form::Tuple(_) => {
                    let v = &vs[k];
                    k += 1;
                    lets.push(quote! {
                        let #a = ::mochi::__private::from_parts(
                            ::mochi::__private::into_parts::<#fl, _>(#n)
                                .into_iter()
                                .zip(::mochi::__private::into_parts::<#fl, _>(#v))
                                .map(|(__mochi_x, __mochi_v)| ::mochi::Dual::<1>::new(__mochi_x as f64, [__mochi_v as f64]))
                                .collect(),
                        );
                    });
                    args.push(quote!(#a));
                }
                _ => {
                    let v = &vs[k];
                    k += 1;
                    let seeded = seq(v);
                    let (build, arg) = dual_arg(p, &a, quote!(__mochi_seeded));
                    lets.push(quote!(#seeded #build));
                    args.push(arg);
                }
            }
        }
        Some((quote!(#(#lets)*), args))
    }

    /// The flat scalars of a gradient (`g`, one cotangent, or a tuple of them).
    /// `twin`: the gradient comes from the twin (a receiver's cotangent is then the
    /// mirror's), not from the function itself (the struct's own tangent).
    fn flatten_gradient(&self, g: TokenStream, twin: bool) -> TokenStream {
        self.flatten_gradient_keeping(g, twin, None)
    }

    /// As [`Spec::flatten_gradient`]; with `data`, one name per data argument, the
    /// block's value is `(flat, (data parts,))`, each data part `dy·value + partial`
    /// (`DataPartials`) of a gradient on `Dual<1>`.
    fn flatten_gradient_keeping(
        &self,
        g: TokenStream,
        twin: bool,
        data: Option<&[syn::Ident]>,
    ) -> TokenStream {
        let gs: Vec<syn::Ident> = (0..self.params.len())
            .map(|i| format_ident!("__mochi_g{}", i))
            .collect();
        let bind = bind_one_or_tuple(&gs, g);
        let tail = match data {
            Some(d) => quote!((__mochi_flat, (#(#d,)*))),
            None => quote!(__mochi_flat),
        };
        let mut outs = data.map(|d| d.iter());
        let pushes = self.params.iter().zip(&gs).map(|(p, gi)| match p.form {
            Form::Other if p.lift && outs.is_some() => {
                let out = outs.as_mut().and_then(Iterator::next);
                quote!(let #out = ::mochi::__private::DataPartials::data_partials(&#gi, __mochi_dy);)
            }
            Form::Receiver if twin => quote!(<Self as ::mochi::__private::TwinOf<_>>::flatten_twin_tangent(&#gi, &mut __mochi_flat);),
            Form::Receiver => quote!(<Self as ::mochi::__private::LiftField>::flatten_tangent(&#gi, &mut __mochi_flat);),
            Form::Scalar => quote!(__mochi_flat.push(#gi);),
            Form::Other => quote!(let _ = #gi;),
            Form::Tuple(_) => quote!(__mochi_flat.extend(::mochi::__private::into_parts(#gi));),
            _ => quote!(__mochi_flat.extend(#gi);),
        });
        quote! {{
            #bind
            let mut __mochi_flat = ::std::vec::Vec::new();
            #(#pushes)*
            #tail
        }}
    }

    /// Cuts the flat `f64`s `h` into one value per active argument (a tuple when there
    /// are several), by the lengths of the point's arguments.
    fn unflatten(&self, h: &syn::Ident) -> TokenStream {
        let mut lets = Vec::new();
        let mut outs = Vec::new();
        for (i, p) in self.active().enumerate() {
            let n = &p.name;
            let r = format_ident!("__mochi_r{}", i);
            let fl = &self.float;
            let part = quote! {
                #h[__mochi_at..__mochi_at + #n.len()]
                    .iter()
                    .map(|&__mochi_e| __mochi_e as #fl)
                    .collect::<::std::vec::Vec<#fl>>()
            };
            lets.push(match p.form {
                Form::Receiver => quote! {
                    let mut __mochi_it = #h[__mochi_at..].iter();
                    let #r = ::mochi::__private::LiftField::tangent_from_flat(self, &mut __mochi_it);
                    __mochi_at = #h.len() - __mochi_it.len();
                },
                Form::Scalar => quote!(let #r = #h[__mochi_at] as #fl; __mochi_at += 1;),
                Form::Array(_) => quote! {
                    let #r = ::mochi::__private::array_from_shape(#n.raw_dim(), #part);
                    __mochi_at += #n.len();
                },
                Form::Tuple(k) => quote! {
                    let #r = ::mochi::__private::from_parts(
                        #h[__mochi_at..__mochi_at + #k].iter().map(|&__mochi_e| __mochi_e as #fl).collect(),
                    );
                    __mochi_at += #k;
                },
                _ => quote! {
                    let #r = #part;
                    __mochi_at += #n.len();
                },
            });
            outs.push(r);
        }
        let out = one_or_tuple(&outs);
        quote! {{
            let mut __mochi_at = 0usize;
            #(#lets)*
            let _ = __mochi_at;
            #out
        }}
    }

    /// `let (__mochi_v0, ..) = v;` (or `let __mochi_v0 = v;`).
    fn split_direction(&self, v: TokenStream) -> (TokenStream, Vec<syn::Ident>) {
        let vs: Vec<syn::Ident> = (0..self.active().count())
            .map(|i| format_ident!("__mochi_v{}", i))
            .collect();
        (bind_one_or_tuple(&vs, v), vs)
    }

    /// The point's scalar and sequence arguments by name.
    fn active_names(&self) -> Vec<syn::Ident> {
        self.active().map(|p| p.name.clone()).collect()
    }

    /// The tangent type of each argument, with the scalar type `f64`.
    /// The data arguments: floats in another shape, which the companions take as
    /// constants (`Form::Other`, lifted into the twin's scalar).
    fn data(&self) -> impl Iterator<Item = &Param> {
        self.params
            .iter()
            .filter(|p| p.form == Form::Other && p.lift)
    }

    fn arg_tangents(&self) -> Vec<TokenStream> {
        self.params
            .iter()
            .map(|p| match p.form {
                Form::Receiver => quote!(<Self as ::mochi::Tangent>::Tangent),
                _ => crate::types::tangent_of(&p.ty_f64, &std::collections::HashSet::new()),
            })
            .collect()
    }

    /// The type of the gradient companions' result, with the scalar type `f64`.
    fn gradient_type(&self) -> TokenStream {
        one_or_tuple(&self.arg_tangents())
    }

    /// `v`, or another name when an argument has it.
    fn direction_name(&self) -> syn::Ident {
        let taken = |n: &str| self.params.iter().any(|p| p.name == n);
        let name = ["v", "direction", "__mochi_direction"]
            .into_iter()
            .find(|n| !taken(n))
            .unwrap_or("__mochi_direction");
        format_ident!("{}", name)
    }

    /// The arguments as the function itself takes them, from the companions' `f64` forms.
    fn f64_args(&self) -> Vec<TokenStream> {
        self.params
            .iter()
            .map(|p| {
                let n = &p.name;
                match p.form {
                    Form::Scalar if p.by_ref => quote!(&#n),
                    Form::Receiver
                    | Form::Scalar
                    | Form::Slice
                    | Form::Fixed(_)
                    | Form::Tuple(_) => {
                        quote!(#n)
                    }
                    Form::VecRef => quote!(#n),
                    Form::Vec => quote!(::core::clone::Clone::clone(&#n)),
                    Form::Array(_) | Form::Other => quote!(::core::clone::Clone::clone(&#n)),
                }
            })
            .collect()
    }
}

/// The dual argument `a` of a sequence or array parameter `p` from its elements
/// (`elems`, an iterator or a `Vec` of duals): the `let` that builds it and the
/// argument as the function takes it.
fn dual_arg(p: &Param, a: &syn::Ident, elems: TokenStream) -> (TokenStream, TokenStream) {
    let n = &p.name;
    match p.form {
        Form::Array(af) => (
            quote!(let #a = ::mochi::__private::array_from_shape(#n.raw_dim(), #elems.into_iter().collect());),
            array_arg(af, a),
        ),
        form => (
            quote!(let #a: ::std::vec::Vec<_> = #elems.into_iter().collect();),
            match form {
                Form::Slice => quote!(&#a[..]),
                Form::VecRef => quote!(&#a),
                Form::Fixed(true) => quote!(&::mochi::__private::to_array(#a)),
                Form::Fixed(false) => quote!(::mochi::__private::to_array(#a)),
                _ => quote!(#a),
            },
        ),
    }
}

/// Data lifted into `a` (`Vec`s), passed in the shape the argument has: a slice for
/// `&[..]`, a reference for `&Vec<..>`, the value otherwise.
fn data_arg(ty: &Type, a: &syn::Ident) -> TokenStream {
    match ty {
        Type::Reference(r) if matches!(&*r.elem, Type::Slice(_)) => quote!(&#a[..]),
        Type::Reference(_) => quote!(&#a),
        _ => quote!(#a),
    }
}

/// An owned `Array1` named `a`, passed as the argument's form takes it.
fn array_arg(form: ArrayForm, a: &syn::Ident) -> TokenStream {
    match form {
        ArrayForm::Owned => quote!(#a),
        ArrayForm::Ref => quote!(&#a),
        ArrayForm::View => quote!(#a.view()),
        ArrayForm::ViewRef => quote!(&#a.view()),
    }
}

/// One item as itself, several as a tuple: how the companions shape what holds one entry
/// per argument (a direction, a gradient, `hvp`'s result).
fn one_or_tuple<T: quote::ToTokens>(items: &[T]) -> TokenStream {
    match items {
        [one] => quote!(#one),
        many => quote!((#(#many,)*)),
    }
}

/// `let name = e;` for one name, `let (a, b, ..) = e;` for several.
fn bind_one_or_tuple(names: &[syn::Ident], e: TokenStream) -> TokenStream {
    let pat = one_or_tuple(names);
    quote!(let #pat = #e;)
}

fn emit(spec: &Spec, target: &Target) -> TokenStream {
    let Target {
        primal,
        module,
        value_and_gradient,
        ..
    } = target;
    let decls = spec.decls();
    // The arguments as the companions take them (`&x` of a float taken by reference,
    // which their bodies read as the float).
    let names: Vec<TokenStream> = spec
        .params
        .iter()
        .map(|p| {
            let n = &p.name;
            if p.by_ref {
                quote!(&#n)
            } else {
                quote!(#n)
            }
        })
        .collect();
    let z = format_ident!("__mochi_z");
    let vz = format_ident!("__mochi_vz");
    let d = format_ident!("__mochi_d");
    let flatten_point = spec.flatten(&spec.active_names(), &z);
    let v = spec.direction_name();
    let (split_v, vs) = spec.split_direction(quote!(#v));
    let flatten_v = spec.flatten(&vs, &vz);
    let (cut, args) = spec.dual_args(&d, None);
    let dir = spec.direction_type(false);
    let many = spec.active().count() > 1;
    let dir_doc = if many {
        " `v` holds one direction per scalar or sequence argument, in argument order."
    } else {
        ""
    };
    let fl = &spec.float;
    // A dense `f64` matrix in the companions' float type.
    let to_float = if spec.float == "f64" {
        TokenStream::new()
    } else {
        quote!((|__mochi_m: ::mochi::__private::DenseMatrix| __mochi_m.mapv(|__mochi_e| __mochi_e as #fl)))
    };
    let seeded = quote! {
        #flatten_point
        #split_v
        #flatten_v
        let #d = ::mochi::__private::duals_along(&#z, &#vz);
        #cut
    };
    // `jvp` seeds each argument directly where it can (no flat copies of the point and
    // the direction); the flat path serves a receiver.
    let (jvp_seeded, jvp_args) = match spec.jvp_args(&vs) {
        Some((lets, direct)) => (quote!(#split_v #lets), direct),
        None => (seeded.clone(), args.clone()),
    };
    if spec.vector_output {
        let jvp_doc = format!(
            " The value and the directional derivative along `v` (forward mode: the \
             function run on `Dual<1>`).{dir_doc}"
        );
        let (out_t, collect) = if let Some(t) = &spec.parts_output {
            (quote!(#t), quote!(::mochi::__private::from_parts))
        } else if spec.array_output {
            (
                quote!(::mochi::__private::DenseVectorOf<#fl>),
                quote!(::mochi::__private::array1_from),
            )
        } else {
            (quote!(::std::vec::Vec<#fl>), TokenStream::new())
        };
        // The result's entries in order (a fixed-size array or a tuple through
        // `OutputParts`, whatever edition the caller's crate is in).
        let parts = |e: TokenStream| {
            if spec.parts_output.is_some() {
                quote!(::mochi::__private::into_parts(#e))
            } else {
                quote!(#e.into_iter().collect())
            }
        };
        let y1 = parts(quote!(#primal::<::mochi::Dual<1>>(#(#jvp_args),*)));
        let f64_args = spec.f64_args();
        let row = spec.flatten_gradient(quote!(__mochi_pb(__mochi_dy)), false);
        let pullback = &target.pullback;
        let plain = target
            .plain
            .clone()
            .unwrap_or_else(|| quote!(#primal::<#fl>));
        let y0 = parts(quote!(#plain(#(#f64_args),*)));
        let y4 = parts(quote!(#primal::<::mochi::Dual<4>>(#(#args),*)));
        return quote! {
            #[doc = #jvp_doc]
            ///
            /// # Panics
            /// If a direction's length differs from its argument's.
            #[inline]
            pub fn jvp(#(#decls,)* #v: #dir) -> (#out_t, #out_t) {
                #jvp_seeded
                let __mochi_y: ::std::vec::Vec<::mochi::Dual<1>> = #y1;
                (
                    #collect(__mochi_y.iter().map(|__mochi_e| __mochi_e.value as #fl).collect()),
                    #collect(
                        ::mochi::__private::first_partials(&__mochi_y)
                            .into_iter()
                            .map(|__mochi_e| __mochi_e as #fl)
                            .collect()
                    ),
                )
            }

            /// The value and the Jacobian, one row per output and one column per scalar
            /// of the scalar and sequence arguments laid end to end.
            ///
            /// The mode follows the shape: with fewer outputs `m` than a quarter of the
            /// inputs `n`, reverse mode (one pullback per output, each after its own
            /// forward sweep: about `3m` runs of the function); otherwise forward mode
            /// (the function run on `Dual<4>`, four input directions per run: about
            /// `n/4` runs on duals).
            #[inline]
            pub fn jacobian(
                #(#decls,)*
            ) -> (#out_t, ::mochi::__private::DenseMatrixOf<#fl>) {
                #flatten_point
                let __mochi_y0: ::std::vec::Vec<#fl> = #y0;
                let __mochi_m = __mochi_y0.len();
                if __mochi_m < (#z.len() + 3) / 4 {
                    let mut __mochi_j = ::mochi::__private::DenseMatrix::zeros((__mochi_m, #z.len()));
                    for __mochi_i in 0..__mochi_m {
                        let (_, __mochi_pb) = #pullback(#(#f64_args),*);
                        let mut __mochi_dy = ::std::vec![0.0 as #fl; __mochi_m];
                        __mochi_dy[__mochi_i] = 1.0;
                        let __mochi_dy = #collect(__mochi_dy);
                        let __mochi_row = #row;
                        ::mochi::__private::set_row(&mut __mochi_j, __mochi_i, &__mochi_row);
                    }
                    return (#collect(__mochi_y0), #to_float(__mochi_j));
                }
                let (_, __mochi_j) = ::mochi::__private::jacobian_by_blocks::<4>(&#z, |#d| {
                    #cut
                    #y4
                });
                (#collect(__mochi_y0), #to_float(__mochi_j))
            }
        };
    }
    let h = format_ident!("__mochi_h");
    let unflat_h = spec.unflatten(&h);
    let hv_t = spec.direction_type(true);
    let grad1 = spec.flatten_gradient(
        quote!(#module::gradient::<::mochi::Dual<1>>(#(#args),*)),
        true,
    );
    let grad4 = spec.flatten_gradient(
        quote!(#module::gradient::<::mochi::Dual<4>>(#(#args),*)),
        true,
    );
    let f64_args = spec.f64_args();
    let jvp_doc = format!(
        " The value and the directional derivative along `v` (forward mode: the function \
         run on `Dual<1>`).{dir_doc}"
    );
    let hvp_doc = format!(
        " The Hessian-vector product `H·v` (forward over reverse: the derived gradient run \
         on `Dual<1>` at `x + v·ε`), shaped like `v`.{dir_doc}"
    );
    let grad_t = spec.gradient_type();
    let row = spec.flatten_gradient(quote!(__mochi_g), false);
    // Nested rules answer in `f64` (the cotangents of the outer sweep).
    let method = spec.params.iter().any(|p| p.form == Form::Receiver);
    let nested = if spec.float == "f64" && !method {
        // Data arguments (`xs: &[Vec<f64>]`), which `hvp_flat` takes as constants: the
        // nested rules run the gradient with them seeded along their part of `ḡ`, so
        // that the part of `H·ḡ` in their rows and columns is not lost.
        let data: Vec<&Param> = spec.data().collect();
        let with_data = if data.is_empty() {
            TokenStream::new()
        } else {
            let dirs: Vec<syn::Ident> = (0..data.len())
                .map(|i| format_ident!("__mochi_ddir{}", i))
                .collect();
            let outs: Vec<syn::Ident> = (0..data.len())
                .map(|i| format_ident!("__mochi_dout{}", i))
                .collect();
            let ts: Vec<TokenStream> = data
                .iter()
                .map(|p| crate::types::tangent_of(&p.ty_f64, &std::collections::HashSet::new()))
                .collect();
            let (cut, args) = spec.dual_args(&d, Some(&dirs));
            let grad = spec.flatten_gradient_keeping(
                quote!(#module::gradient::<::mochi::Dual<1>>(#(#args),*)),
                true,
                Some(&outs),
            );
            quote! {
                /// `dy·∇f + H·v` with the data arguments seeded too: the flat part over
                /// the scalar and sequence arguments (without `dy·∇f`), and each data
                /// argument's part.
                #[doc(hidden)]
                #[inline]
                pub fn hvp_with_data(
                    #(#decls,)*
                    #vz: &[f64],
                    __mochi_dy: f64,
                    #(#dirs: &#ts,)*
                ) -> (::std::vec::Vec<f64>, (#(#ts,)*)) {
                    #flatten_point
                    let #d = ::mochi::__private::duals_along(&#z, #vz);
                    #cut
                    let (__mochi_flat, __mochi_data) = #grad;
                    (::mochi::__private::first_partials(&__mochi_flat), __mochi_data)
                }
            }
        };
        let rules = nested_rules(spec, value_and_gradient, &grad_t);
        quote!(#with_data #rules)
    } else {
        TokenStream::new()
    };
    quote! {
        #[doc = #jvp_doc]
        ///
        /// # Panics
        /// If a direction's length differs from its argument's.
        #[inline]
        pub fn jvp(#(#decls,)* #v: #dir) -> (#fl, #fl) {
            #jvp_seeded
            let __mochi_y: ::mochi::Dual<1> = #primal::<::mochi::Dual<1>>(#(#jvp_args),*);
            (__mochi_y.value as #fl, __mochi_y.partials[0] as #fl)
        }

        #[doc = #hvp_doc]
        ///
        /// # Panics
        /// If a direction's length differs from its argument's.
        #[inline]
        pub fn hvp(#(#decls,)* #v: #dir) -> #hv_t {
            #split_v
            #flatten_v
            let #h = hvp_flat(#(::core::clone::Clone::clone(&#names),)* &#vz);
            #unflat_h
        }

        /// `H·v` with the direction laid end to end, as `hessian` lays the arguments.
        #[doc(hidden)]
        #[inline]
        pub fn hvp_flat(#(#decls,)* #vz: &[f64]) -> ::std::vec::Vec<f64> {
            #flatten_point
            let #d = ::mochi::__private::duals_along(&#z, #vz);
            #cut
            let __mochi_g = #grad1;
            ::mochi::__private::first_partials(&__mochi_g)
        }

        /// The dense Hessian over the scalar and sequence arguments laid end to end
        /// (forward over reverse, four columns per reverse sweep on `Dual<4>`).
        #[inline]
        pub fn hessian(#(#decls,)*) -> ::mochi::__private::DenseMatrixOf<#fl> {
            #flatten_point
            #to_float(::mochi::__private::hessian_by_blocks::<4>(&#z, |#d| {
                #cut
                #grad4
            }))
        }

        /// The value, the gradient (as `value_and_gradient` gives it) and the dense
        /// Hessian.
        #[inline]
        pub fn value_gradient_and_hessian(
            #(#decls,)*
        ) -> (#fl, #grad_t, ::mochi::__private::DenseMatrixOf<#fl>) {
            let (__mochi_y, __mochi_g) = #value_and_gradient(#(#f64_args),*);
            (__mochi_y, __mochi_g, hessian(#(#names),*))
        }

        /// The value and the Jacobian of this scalar function: one row, the gradient
        /// over the scalar and sequence arguments laid end to end (as `hessian` lays
        /// them), by one reverse sweep.
        #[inline]
        pub fn jacobian(
            #(#decls,)*
        ) -> (#fl, ::mochi::__private::DenseMatrixOf<#fl>) {
            let (__mochi_y, __mochi_g) = #value_and_gradient(#(#f64_args),*);
            let __mochi_row: ::std::vec::Vec<#fl> = #row;
            let mut __mochi_j = ::mochi::__private::DenseMatrix::zeros((1, __mochi_row.len()));
            ::mochi::__private::set_row(&mut __mochi_j, 0, &__mochi_row);
            (__mochi_y, #to_float(__mochi_j))
        }

        #nested
    }
}

/// `gradient::rrule` and `value_and_gradient::rrule`: the derived rules of the gradient
/// companions, so that a differentiable function may call `f::gradient(..)`. The
/// gradient's pullback is the Hessian-vector product `H·ḡ` (`H` is symmetric); the
/// value's adds `ȳ·∇f`.
fn nested_rules(spec: &Spec, vag: &TokenStream, grad_t: &TokenStream) -> TokenStream {
    let decls: Vec<TokenStream> = spec
        .params
        .iter()
        .map(|p| {
            let (n, t) = (&p.name, &p.ty_f64);
            quote!(#n: #t)
        })
        .collect();
    let names: Vec<&syn::Ident> = spec.params.iter().map(|p| &p.name).collect();
    let arg_ts = spec.arg_tangents();
    let n = spec.params.len();
    let pb_ctor = format_ident!("pullback{}", n);
    let ds: Vec<syn::Ident> = (0..n).map(|i| format_ident!("__mochi_dp{}", i)).collect();
    let owns: Vec<syn::Ident> = (0..n).map(|i| format_ident!("__mochi_own{}", i)).collect();
    let mut own_lets = Vec::new();
    let mut hvp_args = Vec::new();
    for (p, o) in spec.params.iter().zip(&owns) {
        let n = &p.name;
        match p.form {
            Form::Scalar if p.by_ref => {
                own_lets.push(quote!(let #o = *#n;));
                hvp_args.push(quote!(&#o));
            }
            Form::Scalar => {
                own_lets.push(quote!(let #o = #n;));
                hvp_args.push(quote!(#o));
            }
            Form::Array(af) => {
                let owned = &p.owned;
                own_lets.push(quote!(let #o: #owned = #n.to_owned();));
                hvp_args.push(match af {
                    ArrayForm::Owned => quote!(::core::clone::Clone::clone(&#o)),
                    ArrayForm::Ref => quote!(&#o),
                    ArrayForm::View => quote!(#o.view()),
                    ArrayForm::ViewRef => quote!(&#o.view()),
                });
            }
            Form::Tuple(_) => {
                own_lets.push(quote!(let #o = #n;));
                hvp_args.push(quote!(#o));
            }
            Form::Fixed(by_ref) => {
                own_lets.push(if by_ref {
                    quote!(let #o = *#n;)
                } else {
                    quote!(let #o = #n;)
                });
                hvp_args.push(if by_ref { quote!(&#o) } else { quote!(#o) });
            }
            Form::Other => {
                if matches!(p.ty_f64, Type::Reference(_)) {
                    own_lets.push(quote!(let #o = ::std::borrow::ToOwned::to_owned(#n);));
                    hvp_args.push(quote!(&#o));
                } else {
                    own_lets.push(quote!(let #o = ::core::clone::Clone::clone(&#n);));
                    hvp_args.push(quote!(#o));
                }
            }
            _ => {
                own_lets.push(quote!(let #o: ::std::vec::Vec<f64> = #n[..].to_vec();));
                hvp_args.push(match p.form {
                    Form::Vec => quote!(::core::clone::Clone::clone(&#o)),
                    Form::VecRef => quote!(&#o),
                    _ => quote!(&#o[..]),
                });
            }
        }
    }
    // The cotangent of the gradient, laid end to end (a structural zero is zeros).
    let cs: Vec<syn::Ident> = (0..n).map(|i| format_ident!("__mochi_c{}", i)).collect();
    let bind_c = bind_one_or_tuple(&cs, quote!(__mochi_dg));
    let mut flat = Vec::new();
    let mut accs = Vec::new();
    // Data arguments: their part of `ḡ` seeds them, and their part of the product is
    // added into their cotangents (`hvp_with_data`).
    let mut data_dirs = Vec::new();
    let mut data_outs = Vec::new();
    for ((p, c), (o, dp)) in spec.params.iter().zip(&cs).zip(owns.iter().zip(&ds)) {
        match p.form {
            Form::Other if p.lift => {
                let out = format_ident!("__mochi_dout{}", data_outs.len());
                data_dirs.push(quote!(&#c));
                accs.push(quote!(::mochi::__private::acc(&mut *#dp, #out);));
                data_outs.push(out);
            }
            Form::Scalar => {
                flat.push(quote!(__mochi_v.push(#c);));
                accs.push(quote! {
                    ::mochi::__private::acc(&mut *#dp, __mochi_h[__mochi_at]);
                    __mochi_at += 1;
                });
            }
            Form::Other => flat.push(quote!(let _ = #c;)),
            Form::Array(_) => {
                flat.push(quote!(::mochi::__private::extend_dense(&mut __mochi_v, &#c, #o.len());));
                accs.push(quote! {
                    ::mochi::__private::acc(&mut *#dp, ::mochi::__private::array_from_shape(#o.raw_dim(), __mochi_h[__mochi_at..__mochi_at + #o.len()].to_vec()));
                    __mochi_at += #o.len();
                });
            }
            Form::Tuple(k) => {
                flat.push(quote!(__mochi_v.extend(::mochi::__private::into_parts::<f64, _>(#c));));
                accs.push(quote! {
                    ::mochi::__private::acc(&mut *#dp, ::mochi::__private::from_parts(__mochi_h[__mochi_at..__mochi_at + #k].to_vec()));
                    __mochi_at += #k;
                });
            }
            Form::Fixed(_) => {
                flat.push(quote!(::mochi::__private::extend_dense(&mut __mochi_v, &#c, #o.len());));
                accs.push(quote! {
                    ::mochi::__private::acc(&mut *#dp, ::mochi::__private::to_array(__mochi_h[__mochi_at..__mochi_at + #o.len()].to_vec()));
                    __mochi_at += #o.len();
                });
            }
            _ => {
                flat.push(quote!(::mochi::__private::extend_dense(&mut __mochi_v, &#c, #o.len());));
                accs.push(quote! {
                    ::mochi::__private::acc(&mut *#dp, __mochi_h[__mochi_at..__mochi_at + #o.len()].to_vec());
                    __mochi_at += #o.len();
                });
            }
        }
    }
    let hvp_flat = |dy: TokenStream| {
        if data_outs.is_empty() {
            quote!(let mut __mochi_h = super::hvp_flat(#(#hvp_args,)* &__mochi_v);)
        } else {
            quote! {
                let (mut __mochi_h, (#(#data_outs,)*)) =
                    super::hvp_with_data(#(#hvp_args,)* &__mochi_v, #dy, #(#data_dirs,)*);
            }
        }
    };
    // `value_and_gradient::rrule` also adds `ȳ·∇f`: the gradient it saved, laid end to
    // end, scaled.
    let saved = spec.flatten_gradient(quote!(::core::clone::Clone::clone(&__mochi_g)), false);
    // The two pullbacks: `H·ḡ`, plus `ȳ·∇f` for `value_and_gradient`, cut into the
    // arguments' cotangents.
    let pull = |plus_value: TokenStream, dy: TokenStream| {
        let hvp = hvp_flat(dy);
        quote! {
            #bind_c
            let mut __mochi_v = ::std::vec::Vec::new();
            #(#flat)*
            #[allow(unused_mut)]
            #hvp
            #plus_value
            let mut __mochi_at = 0usize;
            #(#accs)*
            let _ = __mochi_at;
        }
    };
    let pull_plain = pull(TokenStream::new(), quote!(0.0));
    let pull_with_value = pull(
        quote! {
            for (__mochi_hi, __mochi_gi) in __mochi_h.iter_mut().zip(&__mochi_saved) {
                *__mochi_hi += __mochi_dy * __mochi_gi;
            }
        },
        quote!(__mochi_dy),
    );
    // `jvp::rrule`: `(y, ẏ) = (f(x), ∇f·v)`, through `value_and_gradient::rrule`: the
    // pullback hands it `(ȳ, ḡ = ẏ̄·v)`, which adds `ȳ∇f + ẏ̄·H v`, and adds `ẏ̄∇f`
    // into the direction's cotangent.
    let dir_t = spec.direction_type(true);
    let dir_ref = spec.direction_type(false);
    let (split_v, vs) = spec.split_direction(quote!(__mochi_dir));
    let single = spec.params.len() == 1;
    let single_dir = spec.active().count() == 1;
    let part = |base: TokenStream, k: usize, single: bool| {
        if single {
            base
        } else {
            let k = syn::Index::from(k);
            quote!(#base.#k)
        }
    };
    let mut owned_v = Vec::new();
    let mut ydot = Vec::new();
    let mut gbar = Vec::new();
    let mut dv_accs = Vec::new();
    let mut k = 0;
    for (i, p) in spec.params.iter().enumerate() {
        let g = part(quote!(__mochi_g), i, single);
        if p.form == Form::Other {
            gbar.push(quote!(::mochi::__private::zero()));
            continue;
        }
        let (v, vo) = (&vs[k], format_ident!("__mochi_vo{}", k));
        let dv = part(quote!((*__mochi_dv)), k, single_dir);
        if p.form == Form::Scalar {
            owned_v.push(quote!(let #vo: f64 = #v;));
            ydot.push(quote!(#g * #vo));
            gbar.push(quote!(__mochi_dydot * #vo));
            dv_accs.push(quote!(::mochi::__private::acc(&mut #dv, __mochi_dydot * #g);));
        } else {
            // As the argument's cotangent holds them: a `Vec`, or an array of the
            // direction's shape.
            let vd = format_ident!("__mochi_vd{}", k);
            if p.form.is_array() {
                owned_v.push(quote!(let #vd = #v.raw_dim();));
            }
            let wrap = |e: TokenStream| {
                if p.form.is_array() {
                    quote!(::mochi::__private::array_from_shape(#vd.clone(), #e))
                } else {
                    e
                }
            };
            // (A tuple's gradient and direction are tuples: their entries in order.)
            let tuple = matches!(p.form, Form::Tuple(_));
            let (g, v) = if tuple {
                (
                    quote!(::mochi::__private::into_parts::<f64, _>(#g)),
                    quote!(::mochi::__private::into_parts::<f64, _>(#v)),
                )
            } else {
                (g, quote!(#v))
            };
            owned_v.push(quote!(let #vo: ::std::vec::Vec<f64> = #v.iter().copied().collect();));
            ydot.push(quote!(#g.iter().zip(&#vo).map(|(a, b)| a * b).sum::<f64>()));
            let g_cot =
                quote!(#vo.iter().map(|v| __mochi_dydot * v).collect::<::std::vec::Vec<f64>>());
            // (A fixed-size array's cotangent is the array; its direction a slice.)
            gbar.push(match p.form {
                Form::Fixed(_) => quote!(::mochi::__private::to_array(#g_cot)),
                Form::Tuple(_) => quote!(::mochi::__private::from_parts(#g_cot)),
                _ => wrap(g_cot),
            });
            let dvg =
                quote!(#g.iter().map(|g| __mochi_dydot * g).collect::<::std::vec::Vec<f64>>());
            let dvg = if tuple {
                quote!(::mochi::__private::from_parts(#dvg))
            } else {
                wrap(dvg)
            };
            dv_accs.push(quote!(::mochi::__private::acc(&mut #dv, #dvg);));
        }
        k += 1;
    }
    let gbar = one_or_tuple(&gbar);
    let pb_ctor_v = format_ident!("pullback{}", n + 1);
    quote! {
        /// The derived rule of `jvp`: its pullback adds `ȳ∇f + ẏ̄·H v` into the arguments'
        /// cotangents (through `value_and_gradient`'s rule) and `ẏ̄∇f` into the
        /// direction's.
        pub mod jvp {
            #[allow(unused_imports)]
            use super::super::*;
            /// The value and the directional derivative along `__mochi_dir`, and their
            /// pullback.
            #[inline]
            pub fn rrule(#(#decls,)* __mochi_dir: #dir_ref) -> (
                (f64, f64),
                impl ::mochi::Pullback<
                    Output = (f64, f64),
                    Args = (#(#arg_ts,)* <#dir_t as ::mochi::Tangent>::Tangent,),
                > + use<>,
            ) {
                let ((__mochi_y, __mochi_g), __mochi_inner) =
                    super::value_and_gradient::rrule(#(#names),*);
                #split_v
                #(#owned_v)*
                let __mochi_ydot: f64 = 0.0 #(+ #ydot)*;
                let __mochi_pb = ::mochi::__private::#pb_ctor_v(
                    move |(__mochi_dy, __mochi_dydot): (f64, f64),
                          (#(#ds,)* __mochi_dv,): (#(&mut #arg_ts,)* &mut <#dir_t as ::mochi::Tangent>::Tangent,)| {
                        ::mochi::Pullback::pullback(__mochi_inner, (__mochi_dy, #gbar), (#(#ds,)*));
                        #(#dv_accs)*
                    },
                );
                ((__mochi_y, __mochi_ydot), __mochi_pb)
            }
        }

        /// The derived rule of `gradient`: its pullback is the Hessian-vector product.
        pub mod gradient {
            #[allow(unused_imports)]
            use super::super::*;
            /// The gradient and a pullback that adds `H·ḡ` into the arguments'
            /// cotangents.
            #[inline]
            pub fn rrule(#(#decls),*) -> (
                #grad_t,
                impl ::mochi::Pullback<
                    Output = <#grad_t as ::mochi::Tangent>::Tangent,
                    Args = (#(#arg_ts,)*),
                > + use<>,
            ) {
                let (_, __mochi_g) = super::#vag(#(::core::clone::Clone::clone(&#names)),*);
                #(#own_lets)*
                let __mochi_pb = ::mochi::__private::#pb_ctor(
                    move |__mochi_dg: <#grad_t as ::mochi::Tangent>::Tangent,
                          (#(#ds,)*): (#(&mut #arg_ts,)*)| {
                        #pull_plain
                    },
                );
                (__mochi_g, __mochi_pb)
            }
        }

        /// The derived rule of `value_and_gradient`: its pullback adds `ȳ·∇f + H·ḡ`.
        pub mod value_and_gradient {
            #[allow(unused_imports)]
            use super::super::*;
            /// The value and the gradient, and a pullback that adds `ȳ·∇f + H·ḡ` into the
            /// arguments' cotangents.
            #[inline]
            pub fn rrule(#(#decls),*) -> (
                (f64, #grad_t),
                impl ::mochi::Pullback<
                    Output = <(f64, #grad_t) as ::mochi::Tangent>::Tangent,
                    Args = (#(#arg_ts,)*),
                > + use<>,
            ) {
                let (__mochi_y, __mochi_g) = super::#vag(#(::core::clone::Clone::clone(&#names)),*);
                let __mochi_saved: ::std::vec::Vec<f64> = #saved;
                #(#own_lets)*
                let __mochi_pb = ::mochi::__private::#pb_ctor(
                    move |(__mochi_dy, __mochi_dg): <(f64, #grad_t) as ::mochi::Tangent>::Tangent,
                          (#(#ds,)*): (#(&mut #arg_ts,)*)| {
                        #pull_with_value
                    },
                );
                ((__mochi_y, __mochi_g), __mochi_pb)
            }
        }
    }
}

/// A data argument as `lift_data_like` takes it: a reference as it is, a value taken by
/// the function (`a: Vec<Vec<f64>>`) cloned.
fn data_source(ty: &syn::Type, n: &impl quote::ToTokens) -> TokenStream {
    if matches!(ty, syn::Type::Reference(_)) {
        quote!(#n)
    } else {
        quote!(::core::clone::Clone::clone(&#n))
    }
}
