//! Small rewrites of user code shared by the desugaring, the chains, the twin and the
//! lowering.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::visit_mut::VisitMut;
use syn::Expr;

/// `*v` → `v` (also `**v`) for names now bound by value where the code as written had
/// references: loop elements, closure parameters, `Some(v)` of an element.
pub struct UnDeref<'a> {
    pub names: &'a [syn::Ident],
}

impl VisitMut for UnDeref<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        // A name given whole to a function of the user's (`predict(p, x)` of a row `x`)
        // was a reference there: it is borrowed again, so that the function gets the type
        // it was written for (before the `*v` below lose theirs). (Only a function named
        // by one lowercase name: not a constructor, whose `Some(v)` of a `filter_map` is
        // its element, and not the methods the rewrites write, `v.push(e)`.)
        let args = match e {
            Expr::Call(c) if matches!(&*c.func, Expr::Path(f) if f.qself.is_none() && f.path.get_ident().is_some_and(|i| i.to_string().starts_with(char::is_lowercase))) => {
                Some(&mut c.args)
            }
            _ => None,
        };
        if let Some(args) = args {
            for a in args.iter_mut() {
                if let Expr::Path(p) = a {
                    if p.qself.is_none()
                        && p.path.get_ident().is_some_and(|i| self.names.contains(i))
                    {
                        *a = syn::parse_quote!(&#p);
                    }
                }
            }
        }
        // Inner first: `**v` (a filter's `&&f64`) loses both.
        syn::visit_mut::visit_expr_mut(self, e);
        if let Expr::Unary(u) = e {
            if matches!(u.op, syn::UnOp::Deref(_)) {
                if let Expr::Path(p) = &*u.expr {
                    if p.path.get_ident().is_some_and(|i| self.names.contains(i)) {
                        *e = (*u.expr).clone();
                    }
                }
            }
        }
    }
}

/// The float literal `digits` in the scalar type `ty`: a suffixed literal for `f64`
/// and `f32`, `lit::<T>(digits)` for a twin's or a generic function's scalar.
pub fn typed_float(digits: &str, ty: &syn::Ident, span: Span) -> TokenStream {
    // `1.` has the digits `1.`, which take a `0` before a suffix.
    let point = if digits.ends_with('.') { "0" } else { "" };
    if ty == "f64" || ty == "f32" {
        let lit = syn::LitFloat::new(&format!("{digits}{point}{ty}"), span);
        quote!(#lit)
    } else {
        let lit = syn::LitFloat::new(&format!("{digits}{point}f64"), span);
        quote!(::mochi::__private::lit::<#ty>(#lit))
    }
}

/// The operation of a compound assignment (`+` of `+=`, … `%` of `%=`); `None` for
/// another operator.
pub fn plain_op(op: &syn::BinOp) -> Option<syn::BinOp> {
    use syn::{BinOp, Token};
    Some(match op {
        BinOp::AddAssign(t) => BinOp::Add(Token![+](t.spans[0])),
        BinOp::SubAssign(t) => BinOp::Sub(Token![-](t.spans[0])),
        BinOp::MulAssign(t) => BinOp::Mul(Token![*](t.spans[0])),
        BinOp::DivAssign(t) => BinOp::Div(Token![/](t.spans[0])),
        BinOp::RemAssign(t) => BinOp::Rem(Token![%](t.spans[0])),
        _ => return None,
    })
}

/// Visits the expressions of a macro whose body is expressions (`vec![a, b]`,
/// `vec![e; n]`, `assert!(..)`, `println!(..)`) with `v`, and writes them back; `false`
/// when the body does not read as expressions.
pub fn visit_macro_exprs(m: &mut syn::Macro, v: &mut impl VisitMut) -> bool {
    type List = syn::punctuated::Punctuated<Expr, syn::Token![,]>;
    if let Ok(mut r) = m.parse_body::<Repeat>() {
        v.visit_expr_mut(&mut r.elem);
        v.visit_expr_mut(&mut r.len);
        let (elem, len) = (&r.elem, &r.len);
        m.tokens = quote!(#elem; #len);
        true
    } else if let Ok(mut list) = m.parse_body_with(List::parse_terminated) {
        for e in list.iter_mut() {
            v.visit_expr_mut(e);
        }
        m.tokens = quote!(#list);
        true
    } else {
        false
    }
}

/// The expressions of a macro whose body is expressions (`vec![a, b]`, `assert!(c, ..)`;
/// `vec![elem; len]` gives `elem` and `len`), to read them; `None` for another body.
pub fn macro_exprs(m: &syn::Macro) -> Option<Vec<Expr>> {
    type List = syn::punctuated::Punctuated<Expr, syn::Token![,]>;
    if let Ok(r) = m.parse_body::<Repeat>() {
        return Some(vec![r.elem, r.len]);
    }
    m.parse_body_with(List::parse_terminated)
        .ok()
        .map(|l| l.into_iter().collect())
}

/// The body of `vec![elem; len]`.
pub struct Repeat {
    pub elem: Expr,
    pub len: Expr,
}

impl syn::parse::Parse for Repeat {
    fn parse(input: syn::parse::ParseStream) -> syn::Result<Self> {
        let elem = input.parse()?;
        let _: syn::Token![;] = input.parse()?;
        let len = input.parse()?;
        Ok(Repeat { elem, len })
    }
}

/// The names a pattern binds under a `&`/`&mut` pattern (`(o, &a)` binds `a` so): copies
/// of what the iterator's references point to.
pub fn pattern_names_under_reference(p: &syn::Pat) -> Vec<syn::Ident> {
    fn walk(p: &syn::Pat, under: bool, out: &mut Vec<syn::Ident>) {
        match p {
            syn::Pat::Ident(i) if under => out.push(i.ident.clone()),
            syn::Pat::Reference(r) => walk(&r.pat, true, out),
            syn::Pat::Paren(q) => walk(&q.pat, under, out),
            syn::Pat::Tuple(t) => t.elems.iter().for_each(|e| walk(e, under, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(p, false, &mut out);
    out
}

/// The identifiers of a path's segments (`std::mem::swap` → `["std", "mem", "swap"]`).
pub fn path_segments(path: &syn::Path) -> Vec<String> {
    path.segments.iter().map(|s| s.ident.to_string()).collect()
}

/// The function as seen from inside its companion module: a path that starts with
/// `super::` gains one (`super::super::m::f`), one that starts with `self::` starts
/// with `super::` instead, in the signature and the body (a `use` inside the body too).
/// The function itself is written unchanged beside its module.
pub fn from_inside_module(func: &syn::ItemFn) -> syn::ItemFn {
    struct Shift;
    impl VisitMut for Shift {
        fn visit_path_mut(&mut self, p: &mut syn::Path) {
            if p.leading_colon.is_none() && p.segments.len() > 1 {
                let first = p.segments[0].ident.to_string();
                if first == "super" {
                    p.segments.insert(0, syn::parse_quote!(super));
                } else if first == "self" {
                    p.segments[0].ident = syn::Ident::new("super", p.segments[0].ident.span());
                }
            }
            syn::visit_mut::visit_path_mut(self, p);
        }
        fn visit_item_use_mut(&mut self, u: &mut syn::ItemUse) {
            if u.leading_colon.is_none() {
                if let syn::UseTree::Path(up) = &mut u.tree {
                    if up.ident == "super" {
                        let rest = (*up.tree).clone();
                        *up.tree = syn::UseTree::Path(syn::UsePath {
                            ident: syn::Ident::new("super", up.ident.span()),
                            colon2_token: Default::default(),
                            tree: Box::new(rest),
                        });
                    } else if up.ident == "self" {
                        up.ident = syn::Ident::new("super", up.ident.span());
                    }
                }
            }
        }
    }
    let mut f = func.clone();
    Shift.visit_item_fn_mut(&mut f);
    f
}

/// Replaces a named type (`f64`, a type parameter `T`) by another type everywhere in a
/// type: the twin's `f64` → `T`, and the companions' `T` → `f64` (or `f32`).
pub struct ReplaceType<'a> {
    pub from: &'a str,
    pub to: syn::Type,
}

impl VisitMut for ReplaceType<'_> {
    fn visit_type_mut(&mut self, ty: &mut syn::Type) {
        if matches!(ty, syn::Type::Path(p) if p.qself.is_none() && p.path.is_ident(self.from)) {
            *ty = self.to.clone();
            return;
        }
        syn::visit_mut::visit_type_mut(self, ty);
    }
}

/// The names of the plain functions called in `block` whose value is used as a
/// sequence: indexed, given a method, borrowed or walked by `for`, at the call
/// (`g(x)[i]`, `g(x).iter()`) or through a name a `let` binds to the call. When such a
/// function is not `#[differentiable]`, its stand-in (see [`callee`]) gives a `Vec` of
/// the scalar, on which the caller's code type-checks after mochi's message; the scalar
/// it gives otherwise brought "cannot index into a value of type `f64`", "no rule for
/// `x.iter().map(f).sum()`" and the like.
pub fn sequence_valued_calls(block: &syn::Block) -> std::collections::HashSet<String> {
    use syn::visit::Visit;
    fn called(e: &Expr) -> Option<String> {
        helper_called(e).map(|i| i.to_string())
    }
    #[derive(Default)]
    struct Uses {
        /// `let y = g(..)`: `y` → `g`.
        bound: Vec<(String, String)>,
        /// Names and calls used as sequences.
        names: std::collections::HashSet<String>,
        calls: std::collections::HashSet<String>,
    }
    impl Uses {
        fn sequence(&mut self, e: &Expr) {
            if let Some(g) = called(e) {
                self.calls.insert(g);
            } else if let Expr::Path(p) = crate::desugar::unparen(e) {
                if let Some(n) = p.path.get_ident() {
                    self.names.insert(n.to_string());
                }
            }
        }
    }
    impl<'ast> Visit<'ast> for Uses {
        fn visit_local(&mut self, l: &'ast syn::Local) {
            let mut pat = &l.pat;
            if let syn::Pat::Type(t) = pat {
                pat = &t.pat;
            }
            if let (syn::Pat::Ident(i), Some(init)) = (pat, &l.init) {
                if let Some(g) = called(&init.expr) {
                    self.bound.push((i.ident.to_string(), g));
                }
            }
            syn::visit::visit_local(self, l);
        }
        fn visit_expr(&mut self, e: &'ast Expr) {
            match e {
                Expr::Index(i) => self.sequence(&i.expr),
                Expr::MethodCall(m)
                    if SEQUENCE_METHODS.contains(&m.method.to_string().as_str()) =>
                {
                    self.sequence(&m.receiver)
                }
                Expr::Reference(r) => self.sequence(&r.expr),
                Expr::ForLoop(f) => self.sequence(&f.expr),
                _ => {}
            }
            syn::visit::visit_expr(self, e);
        }
    }
    let mut u = Uses::default();
    u.visit_block(block);
    let mut out = u.calls;
    out.extend(
        u.bound
            .into_iter()
            .filter(|(y, _)| u.names.contains(y))
            .map(|(_, g)| g),
    );
    out
}

/// The function of a call of a helper of the user's, `g(..)` by its lower-case name (or
/// `g::__twin::<T>(..)` in a generic form): `g`. Not a constructor (`Some(v)`, `P2(a,
/// b)`) nor a path into a module or a type.
pub fn helper_called(e: &Expr) -> Option<&syn::Ident> {
    let Expr::Call(c) = crate::desugar::unparen(e) else {
        return None;
    };
    let Expr::Path(p) = &*c.func else { return None };
    let segs = &p.path.segments;
    let twin = segs.len() == 2 && segs[1].ident == "__twin";
    let g = &segs.first()?.ident;
    (p.qself.is_none()
        && p.path.leading_colon.is_none()
        && (segs.len() == 1 || twin)
        && segs[0].arguments.is_none()
        && g.to_string().starts_with(|c: char| c.is_ascii_lowercase()))
    .then_some(g)
}

/// `std::iter`'s functions that make an iterator, imported by name (`use
/// std::iter::successors;`): the chains and rewrites read them as the standard ones, not
/// as helpers of the user's.
pub const ITER_MAKERS: &[&str] = &[
    "successors",
    "repeat",
    "repeat_n",
    "repeat_with",
    "once",
    "from_fn",
    "zip",
    "empty",
];

/// Methods of sequences (slices, `Vec`s, arrays) that no float has: a value given one
/// is a sequence.
const SEQUENCE_METHODS: &[&str] = &[
    "iter",
    "iter_mut",
    "into_iter",
    "len",
    "is_empty",
    "windows",
    "chunks",
    "chunks_exact",
    "first",
    "last",
    "get",
    "to_vec",
    "as_slice",
    "dot",
    "row",
    "column",
    "rows",
    "columns",
    "outer_iter",
    "shape",
    "dim",
    "nrows",
    "ncols",
    "slice",
    "mapv",
    "sum",
    "mean",
    "norm",
    "t",
    "transpose",
    "split_at",
    "contains",
    "push",
    "sort_by",
    "norm_squared",
    "map",
];

/// What a call's stand-in (see [`callee`]) gives back.
pub struct StandInValue<'a> {
    /// The stand-in carries the bound whose message names the fix (the forms whose
    /// derivation fails first); the twin's calls get one without it, so that the
    /// message comes once, at the call.
    pub bounded: bool,
    /// The derivation's scalar (`f64`, `f32`), when it has one.
    pub scalar: Option<&'a syn::Ident>,
    /// The caller uses the value as a sequence ([`sequence_valued_calls`]).
    pub sequence: bool,
}

/// The modules `mochi::prelude::*` brings in with the ndarray rules
/// (`mochi_rules_ndarray::functions`): a user's function may have the same name.
const PRELUDE_MODULES: &[&str] = &["concatenate", "stack", "kron", "outer"];

/// The callable `name::rest…` for a call of a user function `name(..)` from derived
/// code, with a stand-in for a `name` that is not `#[differentiable]` (a plain function
/// has no module `name`: rustc said "function `name` is not a crate or module").
///
/// In an inner block, `name` is imported by name (beating any glob, and seeing the
/// function's own module when it has one) beside a glob of a stand-in module `name`,
/// which only then provides `name::rest…`: a function of `arity` arguments bounded by a
/// trait whose message names the function and the fix. The import goes through an
/// outer block (`use name as __mochi_callee`), where no glob can make it ambiguous.
///
/// Only the forms whose derivation fails first carry the bound ([`StandInValue`]).
pub fn callee(
    name: &syn::Ident,
    rest: &[&str],
    turbofish: &TokenStream,
    generics: usize,
    arity: usize,
    value: StandInValue,
) -> TokenStream {
    let StandInValue {
        bounded,
        scalar,
        sequence,
    } = value;
    let span = name.span();
    let segs: Vec<syn::Ident> = rest.iter().map(|s| syn::Ident::new(s, span)).collect();
    let Some((last, mods)) = segs.split_last() else {
        return quote!(#name);
    };
    let mut gs: Vec<syn::Ident> = (0..generics)
        .map(|k| quote::format_ident!("__MochiG{}", k))
        .collect();
    // The bound sits on the first argument, or on the first generic parameter of a
    // function without arguments.
    let any = quote!(_: impl ::core::marker::Sized);
    let (mut params, bound) = match (arity, gs.first()) {
        _ if !bounded => (vec![any.clone(); arity], quote!()),
        (0, Some(g)) => (Vec::new(), quote!(where #g: Differentiable)),
        (0, None) => (Vec::new(), quote!()),
        _ => {
            let mut p = vec![quote!(_: impl Differentiable)];
            p.extend((1..arity).map(|_| any.clone()));
            (p, quote!())
        }
    };
    let message = format!(
        "mochi: `{name}` is not `#[differentiable]`, so the derivative cannot flow through this call"
    );
    let label = format!("`{name}` has no derived rule");
    let note = format!(
        "mark `fn {name}` `#[differentiable]` (its body is differentiated as well); if no derivative should flow through the call, pass `mochi::no_grad(..)` of its arguments"
    );
    // The bounded stand-in of a rule (`g::rrule`, `g::__twin::rrule::<T>`) puts its
    // bound on a type it names, and returns that type's projections
    // (`<A as Differentiable>::Value`, `::Pullback`): the bound fails, and the
    // projections are error types, on which the caller's code raises nothing more.
    // (A value of the scalar type and an `Infallible` pullback gave "`Infallible` is not
    // a pullback" after the message, and "cannot index into a value of type `f64`" and
    // the like where the callee returns a `Vec`.) The named type is a new first generic
    // parameter, the first argument's type, where the path has no turbofish; else the
    // turbofish's first argument (the twin's scalar, which does not meet the bound
    // either).
    let subject = match gs.first() {
        _ if !bounded || last != "rrule" => None,
        _ if turbofish.is_empty() && arity > 0 => {
            let a = quote::format_ident!("__MochiA0");
            gs.insert(0, a.clone());
            params[0] = quote!(_: #a);
            Some(a)
        }
        Some(g) if !turbofish.is_empty() => Some(g.clone()),
        _ => None,
    };
    let (ret, bound) = match (&subject, gs.first(), last == "rrule") {
        (Some(a), _, _) => {
            for p in params.iter_mut() {
                *p = any.clone();
            }
            if turbofish.is_empty() {
                params[0] = quote!(_: #a);
            }
            // The value is the derivation's scalar where there is one (what most
            // callees return, and arithmetic or a chain's rule on a value of unknown
            // type finds several rules: E0034), the twin's scalar in a twin; a `Vec` of
            // it where the value is used as a sequence.
            let one = match scalar.filter(|t| *t == "f64" || *t == "f32") {
                Some(t) => Some(quote!(#t)),
                None if !turbofish.is_empty() => Some(quote!(#a)),
                None => None,
            };
            let value = match one {
                Some(t) if sequence => quote!(::std::vec::Vec<#t>),
                Some(t) => t,
                None => quote!(<#a as Differentiable>::Value),
            };
            (
                quote!((#value, <#a as Differentiable>::Pullback)),
                quote!(where #a: Differentiable),
            )
        }
        // An unbounded stand-in (a twin's form whose error comes elsewhere).
        (None, _, true) => match (scalar.filter(|t| *t == "f64" || *t == "f32"), gs.first()) {
            (Some(t), _) => (quote!((#t, ::core::convert::Infallible)), bound),
            (None, Some(g)) => (quote!((#g, ::core::convert::Infallible)), bound),
            (None, None) => (quote!(!), bound),
        },
        // A twin's value used as a sequence (see [`sequence_valued_calls`]): a `Vec` of
        // the twin's scalar, not "no method `iter` found for type parameter `T`".
        (None, Some(g), false) if sequence => (quote!(::std::vec::Vec<#g>), bound),
        (None, Some(g), false) => (quote!(#g), bound),
        (None, None, false) => (quote!(!), bound),
    };
    let mut item = quote!(pub fn #last <#(#gs),*> (#(#params),*) -> #ret #bound {
        ::core::unreachable!()
    });
    for m in mods.iter().rev() {
        item = quote!(pub mod #m { #[allow(unused_imports)] use super::Differentiable; #item });
    }
    let path = quote!(#name #(::#segs)* #turbofish);
    // A name the facade's prelude glob-imports (the rule modules of the ndarray rule
    // crate's free functions): the user's own `#[differentiable] fn outer` is a
    // macro-expanded module beside that glob, which an import by the bare name finds
    // ambiguous (E0659); through `self::` the module's own item wins, as in expressions.
    let origin = if PRELUDE_MODULES.contains(&name.to_string().as_str()) {
        quote!(self::#name)
    } else {
        quote!(#name)
    };
    quote::quote_spanned!(span=> ({
        #[allow(unused_imports)]
        use #origin as __mochi_callee;
        {
            #[allow(unused_imports)]
            use __mochi_callee as #name;
            #[allow(non_snake_case, non_camel_case_types, dead_code, unreachable_code)]
            mod __mochi_unmarked {
                pub mod #name {
                    #[diagnostic::on_unimplemented(message = #message, label = #label, note = #note)]
                    pub trait Differentiable {
                        type Value;
                        type Pullback;
                    }
                    #item
                }
            }
            #[allow(unused_imports)]
            use __mochi_unmarked::*;
            #path
        }
    }))
}
