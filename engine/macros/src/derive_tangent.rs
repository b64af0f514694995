//! `#[derive(Tangent)]`: a tangent struct mirroring the user's struct field by field.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::{Data, DeriveInput, Fields};

pub fn expand(item: TokenStream) -> TokenStream {
    let input: DeriveInput = match syn::parse2(item) {
        Ok(i) => i,
        Err(e) => return e.to_compile_error(),
    };
    let data = match &input.data {
        Data::Struct(s) => s,
        // (A variant's fields are settings of the choice, such as a Huber loss's
        // threshold: constants, without a derivative.)
        Data::Enum(_) if input.generics.params.is_empty() => {
            return fieldless_enum(&input);
        }
        _ => {
            return syn::Error::new_spanned(
                &input.ident,
                "#[derive(Tangent)] supports structs and enums without generic parameters (an enum is a choice, with no derivative); for another enum, write `impl mochi::Tangent` by hand",
            )
            .to_compile_error()
        }
    };
    if !input.generics.params.is_empty() {
        return syn::Error::new_spanned(
            &input.generics,
            "#[derive(Tangent)] does not support generic structs yet; write `impl mochi::Tangent` by hand",
        )
        .to_compile_error();
    }
    let name = &input.ident;
    crate::twin::note_crate_type(&name.to_string());
    crate::twin::note_type_visibility(&name.to_string(), &input.vis);
    if let Fields::Named(f) = &data.fields {
        for field in &f.named {
            if let Some(id) = &field.ident {
                crate::twin::note_field_kind(&id.to_string(), &field.ty);
            }
        }
    }
    let vis = &input.vis;
    let tname = format_ident!("{}Tangent", name);
    let doc =
        format!("The tangent (and cotangent) type of [`{name}`], derived by `#[derive(Tangent)]`.");
    let (members, types): (Vec<_>, Vec<_>) = match &data.fields {
        Fields::Named(f) => f
            .named
            .iter()
            .map(|f| {
                let id = f.ident.clone().unwrap();
                (quote!(#id), f.ty.clone())
            })
            .unzip(),
        Fields::Unnamed(f) => f
            .unnamed
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let idx = syn::Index::from(i);
                (quote!(#idx), f.ty.clone())
            })
            .unzip(),
        Fields::Unit => (Vec::new(), Vec::new()),
    };
    let tan_ty = |t: &syn::Type| quote!(<#t as ::mochi::Tangent>::Tangent);
    let decl = match &data.fields {
        Fields::Named(f) => {
            let fields = f.named.iter().map(|f| {
                let id = &f.ident;
                let fvis = &f.vis;
                let t = tan_ty(&f.ty);
                quote!(#fvis #id: #t)
            });
            quote!(#vis struct #tname { #(#fields,)* })
        }
        Fields::Unnamed(f) => {
            let fields = f.unnamed.iter().map(|f| {
                let fvis = &f.vis;
                let t = tan_ty(&f.ty);
                quote!(#fvis #t)
            });
            quote!(#vis struct #tname ( #(#fields,)* );)
        }
        Fields::Unit => quote!(#vis struct #tname;),
    };
    let build = |each: &dyn Fn(&TokenStream, &syn::Type) -> TokenStream| {
        let inits = members.iter().zip(&types).map(|(m, t)| {
            let v = each(m, t);
            quote!(#m: #v)
        });
        quote!(#tname { #(#inits,)* })
    };
    let zero = build(
        &|_, t| quote!(<<#t as ::mochi::Tangent>::Tangent as ::mochi::TangentVector>::zero()),
    );
    let zero_tangent = build(&|m, _| quote!(::mochi::Tangent::zero_tangent(&self.#m)));
    let random = build(&|m, _| quote!(::mochi::testing::Perturb::random_tangent(&self.#m, rng)));
    let difference =
        build(&|m, _| quote!(::mochi::testing::Perturb::difference(&self.#m, &from.#m)));
    let m = &members;
    let twin = if cfg!(feature = "higher-order") {
        twin_items(&input, data, &members, &types, &tname)
    } else {
        TokenStream::new()
    };
    quote! {
        #twin

        #[doc = #doc]
        #[derive(Clone, Debug, PartialEq)]
        #[allow(missing_docs)]
        #decl

        impl ::mochi::TangentVector for #tname {
            #[inline]
            fn zero() -> Self { #zero }
            #[inline]
            fn accumulate(&mut self, other: Self) {
                #(::mochi::TangentVector::accumulate(&mut self.#m, other.#m);)*
            }
            #[inline]
            fn accumulate_ref(&mut self, other: &Self) {
                #(::mochi::TangentVector::accumulate_ref(&mut self.#m, &other.#m);)*
            }
            fn scale(&mut self, factor: f64) {
                #(::mochi::TangentVector::scale(&mut self.#m, factor);)*
            }
            fn inner(&self, other: &Self) -> f64 {
                0.0 #(+ ::mochi::TangentVector::inner(&self.#m, &other.#m))*
            }
        }

        impl ::mochi::testing::Flatten for #tname {
            fn flatten_into(&self, out: &mut ::std::vec::Vec<f64>) {
                #(::mochi::testing::Flatten::flatten_into(&self.#m, out);)*
            }
        }

        impl ::mochi::Tangent for #name {
            type Tangent = #tname;
            fn zero_tangent(&self) -> #tname { #zero_tangent }
            fn densify(&self, t: &mut #tname) {
                #(::mochi::Tangent::densify(&self.#m, &mut t.#m);)*
            }
        }

        impl ::mochi::testing::Perturb for #name {
            fn random_tangent<R: ::mochi::__private::Rng + ?::core::marker::Sized>(&self, rng: &mut R) -> #tname {
                #random
            }
            fn perturb(&mut self, direction: &#tname, step: f64) {
                #(::mochi::testing::Perturb::perturb(&mut self.#m, &direction.#m, step);)*
            }
            fn difference(&self, from: &Self) -> #tname {
                #difference
            }
        }
    }
}

/// Whether the derive can name `ty` with its floats replaced (`LiftField`): `f64`,
/// integers, `bool`, `char`, `String`, `Vec`s, `Option`s and fixed-size arrays of these
/// and ndarray arrays of `f64`.
fn liftable(ty: &syn::Type) -> bool {
    if let syn::Type::Array(a) = ty {
        return liftable(&a.elem);
    }
    let syn::Type::Path(p) = ty else {
        return false;
    };
    if p.qself.is_some() {
        return false;
    }
    let Some(last) = p.path.segments.last() else {
        return false;
    };
    let name = last.ident.to_string();
    let args: Vec<&syn::Type> = match &last.arguments {
        syn::PathArguments::AngleBracketed(a) => a
            .args
            .iter()
            .filter_map(|g| match g {
                syn::GenericArgument::Type(t) => Some(t),
                _ => None,
            })
            .collect(),
        syn::PathArguments::None => Vec::new(),
        syn::PathArguments::Parenthesized(_) => return false,
    };
    let is_f64 = |t: &syn::Type| matches!(t, syn::Type::Path(q) if q.qself.is_none() && q.path.is_ident("f64"));
    match name.as_str() {
        "f64" | "bool" | "char" | "String" | "u8" | "u16" | "u32" | "u64" | "u128" | "usize"
        | "i8" | "i16" | "i32" | "i64" | "i128" | "isize" => args.is_empty(),
        "Vec" | "Option" => args.len() == 1 && liftable(args[0]),
        "Array" | "Array0" | "Array1" | "Array2" | "Array3" | "Array4" | "Array5" | "Array6"
        | "ArrayD" => args.first().is_some_and(|t| is_f64(t)),
        // A struct of the crate's whose derive wrote its mirror, declared before
        // (`pos: Vec3` in `struct Body`): lifted to its mirror; an enum of the crate's
        // with `LiftField` (`act: Act`): itself.
        _ => {
            args.is_empty()
                && p.path.segments.len() == 1
                && (crate::twin::crate_mirror(&name) || crate::twin::crate_lifted_enum(&name))
        }
    }
}

/// The generic mirror of the struct that the twins of its methods take in place of
/// `self` (`__MochiTwin<Name><T>`, each field's floats of type `T`), its tangent, and
/// `LiftField` for the struct. Nothing when a field's type is not one the derive can
/// lift: the struct's methods then have no higher-order companions, and using one
/// says so.
fn twin_items(
    input: &DeriveInput,
    data: &syn::DataStruct,
    members: &[TokenStream],
    types: &[syn::Type],
    tname: &syn::Ident,
) -> TokenStream {
    let name = &input.ident;
    if matches!(data.fields, Fields::Unit) || !types.iter().all(liftable) {
        crate::twin::note_crate_without_mirror(&name.to_string());
        return TokenStream::new();
    }
    crate::twin::note_crate_mirror(&name.to_string());
    // The fields that hold sequences of the crate's structs (`layers: Vec<Layer>`), for
    // the generic forms of the struct's methods (`for l in &self.layers`).
    if let Fields::Named(f) = &data.fields {
        for field in &f.named {
            let elem = match &field.ty {
                syn::Type::Array(a) => Some(&*a.elem),
                t => crate::iterchain::vec_elem(t).flatten(),
            };
            let elem = elem.and_then(|e| match e {
                syn::Type::Path(p) if p.qself.is_none() => p.path.get_ident(),
                _ => None,
            });
            // (A field holding one of the crate's enums, `act: Act`.)
            if let (Some(id), syn::Type::Path(p)) = (&field.ident, &field.ty) {
                if let Some(e) = p.path.get_ident().filter(|_| p.qself.is_none()) {
                    if crate::twin::crate_enum(&e.to_string()) {
                        crate::twin::note_field_enum(
                            &name.to_string(),
                            &id.to_string(),
                            &e.to_string(),
                        );
                    }
                }
            }
            if let (Some(id), Some(e)) = (&field.ident, elem) {
                if crate::twin::crate_mirror(&e.to_string()) {
                    crate::twin::note_field_sequence(
                        &name.to_string(),
                        &id.to_string(),
                        &e.to_string(),
                    );
                }
            }
        }
    }
    let vis = &input.vis;
    let mirror = format_ident!("__MochiTwin{}", name);
    let mirror_t = format_ident!("__MochiTwin{}Tangent", name);
    let lift = quote!(::mochi::__private::LiftField);
    let of = |t: &syn::Type| quote!(<#t as #lift>::Of<__MochiT>);
    let tan_of = |t: &syn::Type| quote!(<<#t as #lift>::Of<__MochiT> as ::mochi::Tangent>::Tangent);
    let decl = |strukt: &syn::Ident, ty: &dyn Fn(&syn::Type) -> TokenStream| match &data.fields {
        Fields::Named(f) => {
            let fields = f.named.iter().map(|f| {
                let (id, fvis, t) = (&f.ident, &f.vis, ty(&f.ty));
                quote!(#fvis #id: #t)
            });
            quote!(#vis struct #strukt<__MochiT: ::mochi::Scalar> { #(#fields,)* })
        }
        Fields::Unnamed(f) => {
            let fields = f.unnamed.iter().map(|f| {
                let (fvis, t) = (&f.vis, ty(&f.ty));
                quote!(#fvis #t)
            });
            quote!(#vis struct #strukt<__MochiT: ::mochi::Scalar> ( #(#fields,)* );)
        }
        Fields::Unit => TokenStream::new(),
    };
    let build = |strukt: &syn::Ident, each: &dyn Fn(&TokenStream, &syn::Type) -> TokenStream| {
        let inits = members.iter().zip(types).map(|(m, t)| {
            let v = each(m, t);
            quote!(#m: #v)
        });
        quote!(#strukt { #(#inits,)* })
    };
    let of_types: Vec<TokenStream> = types.iter().map(of).collect();
    let mirror_decl = decl(&mirror, &of);
    // Named where a `higher_order` block's methods are given to the mirror, in scope
    // wherever the mirror is (see `companion::mirror_in_scope`).
    let hint = crate::companion::mirror_hint(name);
    let mirror_t_decl = decl(&mirror_t, &tan_of);
    let clone_mirror = build(
        &mirror,
        &|m, _| quote!(::core::clone::Clone::clone(&self.#m)),
    );
    let clone_t = build(
        &mirror_t,
        &|m, _| quote!(::core::clone::Clone::clone(&self.#m)),
    );
    let zero = build(&mirror_t, &|_, t| {
        let tt = tan_of(t);
        quote!(<#tt as ::mochi::TangentVector>::zero())
    });
    let zero_tangent = build(
        &mirror_t,
        &|m, _| quote!(::mochi::Tangent::zero_tangent(&self.#m)),
    );
    let lifted = build(
        &mirror,
        &|m, t| quote!(<#t as #lift>::lift(&self.#m, __mochi_f)),
    );
    let from_flat = build(
        tname,
        &|m, t| quote!(<#t as #lift>::tangent_from_flat(&self.#m, __mochi_flat)),
    );
    let debug_name = mirror_t.to_string();
    let doc = format!("The generic mirror of [`{name}`] that the twins of its `#[differentiable]` methods take, derived by `#[derive(Tangent)]`.");
    quote! {
        #[doc = #doc]
        #[doc(hidden)]
        #[allow(missing_docs, non_camel_case_types, dead_code)]
        #mirror_decl

        #[doc(hidden)]
        #[allow(missing_docs, non_camel_case_types, dead_code)]
        #vis type #hint = ();

        #[doc(hidden)]
        #[allow(missing_docs, non_camel_case_types, dead_code)]
        #mirror_t_decl

        impl<__MochiT: ::mochi::Scalar> ::core::clone::Clone for #mirror<__MochiT> {
            fn clone(&self) -> Self { #clone_mirror }
        }
        // A constant of the struct (`const CFG: Config`, passed whole as `&CFG` or the
        // base of `Config { lr: 0.2, ..CFG }`) is its mirror in a generic form.
        impl<__MochiT: ::mochi::Scalar> ::mochi::__private::LiftConst<__MochiT> for #name {
            type Out = #mirror<__MochiT>;
            #[inline]
            fn lift_const(self) -> #mirror<__MochiT> {
                ::mochi::__private::lift_value::<__MochiT, #name>(self)
            }
        }
        impl<__MochiT: ::mochi::Scalar> ::core::clone::Clone for #mirror_t<__MochiT> {
            fn clone(&self) -> Self { #clone_t }
        }
        // `Copy` where every lifted field is (floats and integers): a twin uses a value
        // of a `Copy` struct after passing it by value, as the function does.
        impl<__MochiT: ::mochi::Scalar> ::core::marker::Copy for #mirror<__MochiT>
        where #(#of_types: ::core::marker::Copy,)* {}
        impl<__MochiT: ::mochi::Scalar> ::core::fmt::Debug for #mirror_t<__MochiT> {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.debug_struct(#debug_name)
                    #(.field(::core::stringify!(#members), &self.#members))*
                    .finish()
            }
        }
        impl<__MochiT: ::mochi::Scalar> ::mochi::TangentVector for #mirror_t<__MochiT> {
            #[inline]
            fn zero() -> Self { #zero }
            #[inline]
            fn accumulate(&mut self, other: Self) {
                #(::mochi::TangentVector::accumulate(&mut self.#members, other.#members);)*
                let _ = other;
            }
            #[inline]
            fn accumulate_ref(&mut self, other: &Self) {
                #(::mochi::TangentVector::accumulate_ref(&mut self.#members, &other.#members);)*
                let _ = other;
            }
            fn scale(&mut self, factor: f64) {
                #(::mochi::TangentVector::scale(&mut self.#members, factor);)*
                let _ = factor;
            }
            fn inner(&self, other: &Self) -> f64 {
                let _ = other;
                0.0 #(+ ::mochi::TangentVector::inner(&self.#members, &other.#members))*
            }
        }
        impl<__MochiT: ::mochi::Scalar> ::mochi::Tangent for #mirror<__MochiT> {
            type Tangent = #mirror_t<__MochiT>;
            fn zero_tangent(&self) -> #mirror_t<__MochiT> { #zero_tangent }
            fn densify(&self, t: &mut #mirror_t<__MochiT>) {
                #(::mochi::Tangent::densify(&self.#members, &mut t.#members);)*
                let _ = t;
            }
        }
        impl<__MochiT: ::mochi::Scalar> ::mochi::__private::MirrorScalar for #mirror<__MochiT> {
            type Scalar = __MochiT;
        }
        impl #lift for #name {
            type Of<__MochiT: ::mochi::Scalar> = #mirror<__MochiT>;
            fn lift<__MochiT: ::mochi::Scalar, __MochiF: FnMut(f64) -> __MochiT>(&self, __mochi_f: &mut __MochiF) -> #mirror<__MochiT> {
                let _ = &__mochi_f;
                #lifted
            }
            fn flatten_tangent(t: &#tname, out: &mut ::std::vec::Vec<f64>) {
                #(<#types as #lift>::flatten_tangent(&t.#members, out);)*
                let _ = (t, out);
            }
            fn tangent_from_flat(&self, __mochi_flat: &mut ::core::slice::Iter<'_, f64>) -> #tname {
                let _ = &__mochi_flat;
                #from_flat
            }
            fn flatten_lifted_tangent<__MochiT: ::mochi::Scalar>(
                t: &<#mirror<__MochiT> as ::mochi::Tangent>::Tangent,
                out: &mut ::std::vec::Vec<__MochiT>,
            ) {
                #(<#types as #lift>::flatten_lifted_tangent::<__MochiT>(&t.#members, out);)*
                let _ = (t, out);
            }
        }
    }
}

/// An enum (`enum Act { Relu, Tanh }`, `enum Loss { L2, Huber(f64) }`): a choice that
/// carries no derivative (its variants' fields are constants), so it may be an argument
/// of a `#[differentiable]` function and be matched on.
fn fieldless_enum(input: &DeriveInput) -> TokenStream {
    let name = &input.ident;
    crate::twin::note_crate_enum(&name.to_string());
    let lift = enum_lift(input);
    quote! {
        #lift

        // (A constant of the enum, `const LOSSES: [(Loss, f64); 3]`, in a generic form:
        // itself, the choice it is.)
        impl<__MochiT> ::mochi::__private::LiftConst<__MochiT> for #name {
            type Out = #name;
            #[inline(always)]
            fn lift_const(self) -> #name {
                self
            }
        }

        impl ::mochi::Tangent for #name {
            type Tangent = ::mochi::NoTangent;
            fn zero_tangent(&self) -> ::mochi::NoTangent {
                ::mochi::NoTangent
            }
        }

        impl ::mochi::testing::Perturb for #name {
            fn random_tangent<R: ::mochi::__private::Rng + ?::core::marker::Sized>(&self, _rng: &mut R) -> ::mochi::NoTangent {
                ::mochi::NoTangent
            }
            fn perturb(&mut self, _direction: &::mochi::NoTangent, _step: f64) {}
            fn difference(&self, _from: &Self) -> ::mochi::NoTangent {
                ::mochi::NoTangent
            }
            fn primal_eq(&self, _other: &Self) -> bool {
                // A choice does not change under a rule: the plain function and the
                // rule are handed the same one.
                true
            }
        }
    }
}

/// `LiftField` for an enum whose variants' fields (if any) the derive can lift: the
/// enum itself, a constant (so a function taking it has a generic form when it asks for
/// one with `#[differentiable(higher_order)]`). Nothing for other fields, whose clone
/// the derive cannot write.
fn enum_lift(input: &DeriveInput) -> TokenStream {
    let Data::Enum(data) = &input.data else {
        return TokenStream::new();
    };
    let name = &input.ident;
    if data.variants.is_empty() {
        return TokenStream::new();
    }
    let mut arms = Vec::new();
    for v in &data.variants {
        let id = &v.ident;
        match &v.fields {
            Fields::Unit => arms.push(quote!(#name::#id => #name::#id)),
            Fields::Unnamed(f) => {
                if !f.unnamed.iter().all(|f| liftable(&f.ty)) {
                    return TokenStream::new();
                }
                let b: Vec<_> = (0..f.unnamed.len())
                    .map(|k| format_ident!("__mochi_f{}", k))
                    .collect();
                arms.push(
                    quote!(#name::#id(#(#b),*) => #name::#id(#(::core::clone::Clone::clone(#b)),*)),
                );
            }
            Fields::Named(f) => {
                if !f.named.iter().all(|f| liftable(&f.ty)) {
                    return TokenStream::new();
                }
                let b: Vec<_> = f.named.iter().map(|f| f.ident.clone()).collect();
                arms.push(quote!(#name::#id { #(#b),* } => #name::#id { #(#b: ::core::clone::Clone::clone(#b)),* }));
            }
        }
    }
    crate::twin::note_crate_lifted_enum(&name.to_string());
    // (Variants holding floats and integers only, `Huber(f64)`: their fields, bound in a
    // method's `match`, are lifted in its generic form.)
    let scalar = |t: &syn::Type| {
        matches!(t, syn::Type::Path(p) if p.qself.is_none() && p.path.get_ident().is_some_and(|i| {
            let n = i.to_string();
            n == "f64" || n == "f32" || n == "bool" || crate::activity::INTEGER_TYPES.contains(&n.as_str())
        }))
    };
    if data
        .variants
        .iter()
        .all(|v| v.fields.iter().all(|f| scalar(&f.ty)))
    {
        crate::twin::note_scalar_enum(&name.to_string());
    }
    let lift = quote!(::mochi::__private::LiftField);
    quote! {
        impl #lift for #name {
            type Of<__MochiT: ::mochi::Scalar> = #name;
            fn lift<__MochiT: ::mochi::Scalar, __MochiF: FnMut(f64) -> __MochiT>(&self, _: &mut __MochiF) -> #name {
                match self { #(#arms,)* }
            }
            fn flatten_tangent(_: &::mochi::NoTangent, _: &mut ::std::vec::Vec<f64>) {}
            fn tangent_from_flat(&self, _: &mut ::core::slice::Iter<'_, f64>) -> ::mochi::NoTangent {
                ::mochi::NoTangent
            }
            fn flatten_lifted_tangent<__MochiT: ::mochi::Scalar>(_: &::mochi::NoTangent, _: &mut ::std::vec::Vec<__MochiT>) {}
        }
    }
}
