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
        _ => {
            return syn::Error::new_spanned(
                &input.ident,
                "#[derive(Tangent)] supports structs only; for an enum, write `impl mochi::Tangent` by hand",
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
    quote! {
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
            fn random_tangent<R: ::mochi::__private::Rng + ?Sized>(&self, rng: &mut R) -> #tname {
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
