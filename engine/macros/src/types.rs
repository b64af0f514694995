//! Naming types in the companions' signatures: the tangent type of a parameter or a
//! result.

use proc_macro2::TokenStream;
use quote::quote;
use std::collections::HashSet;
use syn::visit_mut::VisitMut;
use syn::Type;

/// Replaces every written lifetime (named, `'_`, or a reference's elided one) by
/// `'static`: tangent types are named with `'static` lifetimes, since pullbacks own
/// their data.
pub(crate) struct Staticize;
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
pub fn tangent_of(ty: &Type, type_params: &HashSet<String>) -> TokenStream {
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
    matches!(name, "f32" | "f64") || crate::activity::NO_TANGENT_PRIMITIVES.contains(&name)
}

/// How deep the scalar (a name `scalar` accepts: `f64`, the twin's `T`) sits in a data
/// shape: references, slices, `Vec`s, fixed-size arrays and tuples of up to three, of
/// the scalar, integers and `bool`s (`&[Vec<f64>]`: 2, `&[(T, T)]`: 2, `&[f64]`: 1).
/// `None` for another shape or one without the scalar.
pub fn scalar_data_depth(ty: &Type, scalar: &dyn Fn(&syn::Ident) -> bool) -> Option<usize> {
    fn walk(
        ty: &Type,
        scalar: &dyn Fn(&syn::Ident) -> bool,
        depth: usize,
        deepest: &mut Option<usize>,
    ) -> bool {
        match ty {
            Type::Reference(r) if r.mutability.is_none() => walk(&r.elem, scalar, depth, deepest),
            Type::Slice(s) => walk(&s.elem, scalar, depth + 1, deepest),
            Type::Array(a) => walk(&a.elem, scalar, depth + 1, deepest),
            Type::Paren(p) => walk(&p.elem, scalar, depth, deepest),
            Type::Tuple(t) if (2..=3).contains(&t.elems.len()) => {
                t.elems.iter().all(|e| walk(e, scalar, depth + 1, deepest))
            }
            Type::Path(p) if p.qself.is_none() => {
                if let Some(e) = crate::iterchain::vec_elem(ty).flatten() {
                    return walk(e, scalar, depth + 1, deepest);
                }
                let Some(i) = p.path.get_ident() else {
                    return false;
                };
                if scalar(i) {
                    *deepest = Some(deepest.map_or(depth, |d| d.max(depth)));
                    return true;
                }
                crate::activity::INTEGER_TYPES.contains(&i.to_string().as_str()) || i == "bool"
            }
            _ => false,
        }
    }
    let mut deepest = None;
    if walk(ty, scalar, 0, &mut deepest) {
        deepest
    } else {
        None
    }
}
