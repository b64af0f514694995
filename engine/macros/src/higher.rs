//! Forward mode and forward-over-reverse companions of a generic function:
//! `f::jvp(x, v)`, `f::hvp(x, v)`, `f::hessian(x)` and `f::value_gradient_and_hessian(x)`.
//!
//! They exist for a function generic over one scalar type `T` with one argument `T`,
//! `&[T]`, `&Vec<T>` or `Vec<T>` and a `T` output, whose bounds [`Dual`] meets: `jvp`
//! runs the primal on `Dual<1>`, `hvp` the derived gradient on `Dual<1>` (forward over
//! reverse), `hessian` the gradient on `Dual<4>`, four columns per reverse sweep. A
//! `Vec<T>` output (of a sequence argument) gets `jvp` and `jacobian` (forward mode,
//! four input directions per run of the primal on `Dual<4>`) instead.
//! The points are `&[f64]` (`Dual` carries `f64`).
//!
//! [`Dual`]: https://docs.rs/mochi/latest/mochi/struct.Dual.html

use proc_macro2::TokenStream;
use quote::quote;
use syn::{FnArg, GenericParam, ItemFn, ReturnType, Type, TypeParamBound, WherePredicate};

/// Bounds (last path segment) that `Dual<N>` satisfies.
const DUAL_BOUNDS: &[&str] = &[
    "Float",
    "Real",
    "Scalar",
    "Copy",
    "Clone",
    "Debug",
    "PartialEq",
    "PartialOrd",
    "Send",
    "Sync",
    "Sum",
    "Product",
    "Num",
    "NumCast",
    "ToPrimitive",
    "Zero",
    "One",
    "NumOps",
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
];

/// How the one argument holds its scalars.
enum Form {
    Scalar,
    Slice,
    VecRef,
    Vec,
}

/// The companions, or nothing when the function does not have the shape above.
pub fn companions(func: &ItemFn) -> TokenStream {
    let Some((form, vector_output)) = shape(func) else {
        return TokenStream::new();
    };
    let name = &func.sig.ident;
    if let Form::Scalar = form {
        return scalar_companions(name);
    }
    let (dual_arg, f64_arg) = match form {
        Form::Scalar => unreachable!(),
        Form::Slice => (quote!(&__mochi_x[..]), quote!(x)),
        Form::VecRef => (quote!(&__mochi_x), quote!(&x.to_vec())),
        Form::Vec => (quote!(__mochi_x), quote!(x.to_vec())),
    };
    if vector_output {
        return quote! {
            /// The value and the directional derivative along `v` (forward mode: the
            /// function run on `Dual<1>`).
            pub fn jvp(x: &[f64], v: &[f64]) -> (::std::vec::Vec<f64>, ::std::vec::Vec<f64>) {
                let __mochi_x = ::mochi::__private::duals_along(x, v);
                let y: ::std::vec::Vec<::mochi::Dual<1>> =
                    super::#name::<::mochi::Dual<1>>(#dual_arg);
                (
                    y.iter().map(|d| d.value).collect(),
                    ::mochi::__private::first_partials(&y),
                )
            }

            /// The value and the Jacobian, one row per output, by forward mode (the
            /// function run on `Dual<4>`, four input directions per run).
            pub fn jacobian(
                x: &[f64],
            ) -> (::std::vec::Vec<f64>, ::mochi::__private::DenseMatrix) {
                ::mochi::__private::jacobian_by_blocks::<4>(x, |__mochi_x| {
                    super::#name::<::mochi::Dual<4>>(#dual_arg)
                })
            }
        };
    }
    quote! {
        /// The value and the directional derivative along `v` (forward mode: the
        /// function run on `Dual<1>`).
        pub fn jvp(x: &[f64], v: &[f64]) -> (f64, f64) {
            let __mochi_x = ::mochi::__private::duals_along(x, v);
            let y: ::mochi::Dual<1> = super::#name::<::mochi::Dual<1>>(#dual_arg);
            (y.value, y.partials[0])
        }

        /// The Hessian-vector product `H·v` (forward over reverse: the derived gradient
        /// run on `Dual<1>` at `x + v·ε`).
        pub fn hvp(x: &[f64], v: &[f64]) -> ::std::vec::Vec<f64> {
            let __mochi_x = ::mochi::__private::duals_along(x, v);
            let g = gradient::<::mochi::Dual<1>>(#dual_arg);
            ::mochi::__private::first_partials(&g)
        }

        /// The dense Hessian (forward over reverse, four columns per reverse sweep on
        /// `Dual<4>`).
        pub fn hessian(x: &[f64]) -> ::mochi::__private::DenseMatrix {
            ::mochi::__private::hessian_by_blocks::<4>(x, |__mochi_x| {
                gradient::<::mochi::Dual<4>>(#dual_arg)
            })
        }

        /// The value, the gradient and the dense Hessian.
        pub fn value_gradient_and_hessian(
            x: &[f64],
        ) -> (f64, ::std::vec::Vec<f64>, ::mochi::__private::DenseMatrix) {
            let (y, g) = value_and_gradient::<f64>(#f64_arg);
            (y, g, hessian(x))
        }
    }
}

/// The companions of a function of one scalar: `f''` is a 1×1 Hessian.
fn scalar_companions(name: &syn::Ident) -> TokenStream {
    quote! {
        /// The value and the derivative along `v` (forward mode: the function run on
        /// `Dual<1>`).
        pub fn jvp(x: f64, v: f64) -> (f64, f64) {
            let y: ::mochi::Dual<1> = super::#name::<::mochi::Dual<1>>(::mochi::Dual::new(x, [v]));
            (y.value, y.partials[0])
        }

        /// `f''(x)·v` (forward over reverse: the derived gradient run on `Dual<1>`).
        pub fn hvp(x: f64, v: f64) -> f64 {
            gradient::<::mochi::Dual<1>>(::mochi::Dual::new(x, [v])).partials[0]
        }

        /// The 1×1 Hessian `[[f''(x)]]`.
        pub fn hessian(x: f64) -> ::mochi::__private::DenseMatrix {
            ::mochi::__private::dense_1x1(hvp(x, 1.0))
        }

        /// The value, the derivative and the 1×1 Hessian.
        pub fn value_gradient_and_hessian(
            x: f64,
        ) -> (f64, f64, ::mochi::__private::DenseMatrix) {
            let (y, g) = value_and_gradient::<f64>(x);
            (y, g, hessian(x))
        }
    }
}

fn shape(func: &ItemFn) -> Option<(Form, bool)> {
    let sig = &func.sig;
    let mut params = sig.generics.params.iter();
    let (Some(GenericParam::Type(t)), None) = (params.next(), params.next()) else {
        return None;
    };
    let where_bounds = sig
        .generics
        .where_clause
        .iter()
        .flat_map(|w| w.predicates.iter())
        .map(|p| match p {
            WherePredicate::Type(pt) => match &pt.bounded_ty {
                Type::Path(tp) if tp.path.is_ident(&t.ident) => Some(pt.bounds.iter()),
                _ => None,
            },
            _ => None,
        })
        .collect::<Option<Vec<_>>>()?;
    let bounds: Vec<&TypeParamBound> = t
        .bounds
        .iter()
        .chain(where_bounds.into_iter().flatten())
        .collect();
    let dual_meets = |b: &&TypeParamBound| match b {
        TypeParamBound::Trait(tr) => tr
            .path
            .segments
            .last()
            .is_some_and(|s| DUAL_BOUNDS.contains(&s.ident.to_string().as_str())),
        TypeParamBound::Lifetime(l) => l.ident == "static",
        _ => false,
    };
    let scalar = bounds.iter().any(|b| {
        matches!(b, TypeParamBound::Trait(tr) if tr.path.segments.last().is_some_and(|s| ["Float", "Real", "Scalar"].contains(&s.ident.to_string().as_str())))
    });
    if !scalar || !bounds.iter().all(dual_meets) {
        return None;
    }
    let is_t =
        |ty: &Type| matches!(ty, Type::Path(p) if p.qself.is_none() && p.path.is_ident(&t.ident));
    let mut inputs = sig.inputs.iter();
    let (Some(FnArg::Typed(arg)), None) = (inputs.next(), inputs.next()) else {
        return None;
    };
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
    let vector_output = match &sig.output {
        ReturnType::Type(_, ty) if is_t(ty) => false,
        ReturnType::Type(_, ty) if vec_of_t(ty).is_some() => true,
        _ => return None,
    };
    let form = match &*arg.ty {
        ty if is_t(ty) => Form::Scalar,
        Type::Reference(r) if r.mutability.is_none() => match &*r.elem {
            Type::Slice(s) if is_t(&s.elem) => Form::Slice,
            other => vec_of_t(other).map(|()| Form::VecRef)?,
        },
        other => vec_of_t(other).map(|()| Form::Vec)?,
    };
    // A vector of a scalar argument: its Jacobian is a column; not generated.
    if vector_output && matches!(form, Form::Scalar) {
        return None;
    }
    Some((form, vector_output))
}
