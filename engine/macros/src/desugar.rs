//! Rewrites, before analysis, of the forms that move data between places without an
//! `=`, into forms the lowering already differentiates:
//!
//! - `std::mem::swap(&mut a, &mut b)` → `{ let t = a; a = b; b = t; }`
//! - `std::mem::replace(&mut a, v)` → `{ let old = a; a = v; old }`
//! - `for e in y.iter_mut() { … *e … }` (also `&mut y`, `.zip(x.iter())`, `.enumerate()`)
//!   → `for i in 0..y.len() { … y[i] … }`
//! - `it.for_each(|p| body)` (no `return` in `body`) → `for p in it { body }`
//! - `y.fill(a)` → `{ let t = a; for i in 0..y.len() { y[i] = t; } }`
//! - `y.copy_from_slice(x)`, `y.assign(x)` → a length check and
//!   `for i in 0..y.len() { y[i] = x[i]; }`
//!
//! The primal function is emitted unchanged; only the derived rule sees the rewrite,
//! which computes the same values.

use proc_macro2::Span;
use quote::{format_ident, quote_spanned};
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::{Expr, Pat};

/// The rewritten copy of a function body. With the function's one float type
/// `float_ty`, an unsuffixed float literal that initialises a binding (`let mut y =
/// 0.0;`, `vec![0.0; n]`, `vec![1.0, 2.0]`) gets that type, so that later rule calls
/// on the binding are not ambiguous between the rule crates' traits.
pub fn desugar(block: &syn::Block, float_ty: Option<&syn::Ident>) -> syn::Block {
    let mut b = block.clone();
    Desugar {
        next: 0,
        float_ty: float_ty.cloned(),
    }
    .visit_block_mut(&mut b);
    b
}

struct Desugar {
    next: usize,
    float_ty: Option<syn::Ident>,
}

/// `lit` with the suffix `ty`, when `e` is an unsuffixed float literal (or its negation).
fn typed(e: &Expr, ty: &syn::Ident) -> Option<Expr> {
    match e {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Float(f),
            ..
        }) if f.suffix().is_empty() => {
            let lit = syn::LitFloat::new(&format!("{}{ty}", f.base10_digits()), f.span());
            Some(syn::parse_quote!(#lit))
        }
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => {
            let inner = typed(&u.expr, ty)?;
            Some(syn::parse_quote!(-#inner))
        }
        _ => None,
    }
}

/// Is `path` `swap`/`replace` of `std::mem`/`core::mem`/`mem`?
fn mem_fn(e: &Expr) -> Option<String> {
    let Expr::Path(p) = e else { return None };
    let segs: Vec<String> = p
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    let n = segs.len();
    if n >= 2 && segs[n - 2] == "mem" && (n == 2 || segs[0] == "std" || segs[0] == "core") {
        return Some(segs[n - 1].clone());
    }
    None
}

/// `&mut place` → `place`, for a place the lowering can assign.
fn mut_place(e: &Expr) -> Option<Expr> {
    match e {
        Expr::Reference(r) if r.mutability.is_some() => match &*r.expr {
            p @ (Expr::Path(_) | Expr::Index(_) | Expr::Field(_)) => Some(p.clone()),
            Expr::Paren(p) => mut_place(&Expr::Reference(syn::ExprReference {
                expr: p.expr.clone(),
                ..r.clone()
            })),
            _ => None,
        },
        Expr::Paren(p) => mut_place(&p.expr),
        _ => None,
    }
}

/// One source of a zipped `for` loop: the sequence and whether it is borrowed mutably.
struct Source {
    seq: Expr,
    mutable: bool,
}

fn source(e: &Expr) -> Option<Source> {
    match e {
        Expr::MethodCall(m) if m.args.is_empty() => {
            let name = m.method.to_string();
            let seq = (*m.receiver).clone();
            if !matches!(seq, Expr::Path(_) | Expr::Field(_)) {
                return None;
            }
            match name.as_str() {
                "iter_mut" => Some(Source { seq, mutable: true }),
                "iter" => Some(Source {
                    seq,
                    mutable: false,
                }),
                _ => None,
            }
        }
        Expr::Reference(r) if matches!(&*r.expr, Expr::Path(_) | Expr::Field(_)) => Some(Source {
            seq: (*r.expr).clone(),
            mutable: r.mutability.is_some(),
        }),
        _ => None,
    }
}

/// The sources of `a.zip(b).zip(c)` (left to right), or of one source.
fn sources(e: &Expr, out: &mut Vec<Source>) -> bool {
    if let Expr::MethodCall(m) = e {
        if m.method == "zip" && m.args.len() == 1 {
            if !sources(&m.receiver, out) {
                return false;
            }
            return match source(&m.args[0]) {
                Some(s) => {
                    out.push(s);
                    true
                }
                None => false,
            };
        }
    }
    match source(e) {
        Some(s) => {
            out.push(s);
            true
        }
        None => false,
    }
}

/// The element names of a zip pattern `((a, b), c)` / `(a, b)` / `a`, each with whether
/// it was bound by `&name` (a copy) — in source order.
fn element_names(p: &Pat, n: usize, out: &mut Vec<syn::Ident>) -> bool {
    fn one(p: &Pat, out: &mut Vec<syn::Ident>) -> bool {
        match p {
            Pat::Ident(i) if i.subpat.is_none() => {
                out.push(i.ident.clone());
                true
            }
            Pat::Reference(r) => one(&r.pat, out),
            Pat::Paren(p) => one(&p.pat, out),
            _ => false,
        }
    }
    if n == 1 {
        return one(p, out);
    }
    match p {
        Pat::Tuple(t) if t.elems.len() == 2 => {
            element_names(&t.elems[0], n - 1, out) && one(&t.elems[1], out)
        }
        Pat::Paren(q) => element_names(&q.pat, n, out),
        _ => false,
    }
}

/// Replaces `*name` and `name` by an indexed place.
struct Substitute<'a> {
    names: &'a [(syn::Ident, Expr)],
    /// A `let`, closure or pattern rebinding one of the names: no rewrite.
    shadowed: bool,
}

impl Substitute<'_> {
    fn lookup(&self, e: &Expr) -> Option<Expr> {
        let Expr::Path(p) = e else { return None };
        let id = p.path.get_ident()?;
        self.names
            .iter()
            .find(|(n, _)| n == id)
            .map(|(_, place)| place.clone())
    }
}

impl VisitMut for Substitute<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if let Expr::Unary(u) = e {
            if matches!(u.op, syn::UnOp::Deref(_)) {
                if let Some(place) = self.lookup(&u.expr) {
                    *e = place;
                    return;
                }
            }
        }
        if let Some(place) = self.lookup(e) {
            *e = place;
            return;
        }
        syn::visit_mut::visit_expr_mut(self, e);
    }
    fn visit_pat_ident_mut(&mut self, p: &mut syn::PatIdent) {
        if self.names.iter().any(|(n, _)| *n == p.ident) {
            self.shadowed = true;
        }
        syn::visit_mut::visit_pat_ident_mut(self, p);
    }
    fn visit_macro_mut(&mut self, m: &mut syn::Macro) {
        // A name inside a macro's tokens cannot be rewritten reliably.
        for t in m.tokens.clone() {
            if let proc_macro2::TokenTree::Ident(i) = t {
                if self.names.iter().any(|(n, _)| *n == i) {
                    self.shadowed = true;
                }
            }
        }
    }
}

/// Does a closure body `return` (which a `for` body would mean differently)?
fn contains_return(e: &Expr) -> bool {
    struct R(bool);
    impl<'ast> syn::visit::Visit<'ast> for R {
        fn visit_expr_return(&mut self, _: &'ast syn::ExprReturn) {
            self.0 = true;
        }
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
    }
    let mut r = R(false);
    syn::visit::Visit::visit_expr(&mut r, e);
    r.0
}

impl Desugar {
    fn index_var(&mut self, span: Span) -> syn::Ident {
        self.next += 1;
        format_ident!("__mochi_i{}", self.next, span = span)
    }

    /// `for … in y.iter_mut()…` as an index loop, or `None` to leave it as written.
    fn index_loop(&mut self, f: &syn::ExprForLoop) -> Option<Expr> {
        let mut iter = (*f.expr).clone();
        let mut pat = (*f.pat).clone();
        let mut counter = None;
        if let Expr::MethodCall(m) = &iter {
            if m.method == "enumerate" && m.args.is_empty() {
                let Pat::Tuple(t) = &pat else { return None };
                if t.elems.len() != 2 {
                    return None;
                }
                let Pat::Ident(i) = &t.elems[0] else {
                    return None;
                };
                counter = Some(i.ident.clone());
                let inner = t.elems[1].clone();
                iter = (*m.receiver).clone();
                pat = inner;
            }
        }
        let mut srcs = Vec::new();
        if !sources(&iter, &mut srcs) || !srcs.iter().any(|s| s.mutable) {
            return None;
        }
        let mut names = Vec::new();
        if !element_names(&pat, srcs.len(), &mut names) {
            return None;
        }
        let span = f.expr.span();
        let i = match &counter {
            Some(c) => c.clone(),
            None => self.index_var(span),
        };
        let subst: Vec<(syn::Ident, Expr)> = names
            .into_iter()
            .zip(&srcs)
            .map(|(n, s)| {
                let seq = &s.seq;
                (n, syn::parse_quote_spanned!(span=> #seq[#i]))
            })
            .collect();
        let mut body = f.body.clone();
        let mut sub = Substitute {
            names: &subst,
            shadowed: false,
        };
        sub.visit_block_mut(&mut body);
        if sub.shadowed {
            return None;
        }
        let lens = srcs.iter().map(|s| {
            let seq = &s.seq;
            quote_spanned!(span=> #seq.len())
        });
        let first = srcs[0].seq.clone();
        let mut bound = quote_spanned!(span=> #first.len());
        for l in lens.skip(1) {
            bound = quote_spanned!(span=> ::core::cmp::min(#bound, #l));
        }
        let attrs = &f.attrs;
        Some(syn::parse_quote_spanned!(span=> #(#attrs)* for #i in 0..#bound #body))
    }
}

impl VisitMut for Desugar {
    fn visit_local_mut(&mut self, l: &mut syn::Local) {
        if let (Some(ty), Some(init), Pat::Ident(_)) = (&self.float_ty, &mut l.init, &l.pat) {
            if let Some(t) = typed(&init.expr, ty) {
                *init.expr = t;
            }
        }
        syn::visit_mut::visit_local_mut(self, l);
    }
    fn visit_macro_mut(&mut self, m: &mut syn::Macro) {
        let Some(ty) = self.float_ty.clone() else {
            return;
        };
        if !m.path.is_ident("vec") {
            return;
        }
        if let Ok(mut r) = m.parse_body::<Repeat>() {
            if let Some(t) = typed(&r.elem, &ty) {
                r.elem = t;
                let (elem, n) = (&r.elem, &r.len);
                m.tokens = quote::quote!(#elem; #n);
            }
            return;
        }
        type List = syn::punctuated::Punctuated<Expr, syn::Token![,]>;
        if let Ok(list) = m.parse_body_with(List::parse_terminated) {
            let elems: List = list
                .into_iter()
                .map(|e| typed(&e, &ty).unwrap_or(e))
                .collect();
            m.tokens = quote::quote!(#elems);
        }
    }
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        syn::visit_mut::visit_expr_mut(self, e);
        let span = e.span();
        match e {
            Expr::Call(c) => {
                let Some(name) = mem_fn(&c.func) else { return };
                match (name.as_str(), c.args.len()) {
                    ("swap", 2) => {
                        let (Some(a), Some(b)) = (mut_place(&c.args[0]), mut_place(&c.args[1]))
                        else {
                            return;
                        };
                        let t = format_ident!("__mochi_swap", span = span);
                        *e = syn::parse_quote_spanned!(span=> { let #t = #a; #a = #b; #b = #t; });
                    }
                    ("replace", 2) => {
                        let Some(a) = mut_place(&c.args[0]) else {
                            return;
                        };
                        let v = &c.args[1];
                        let t = format_ident!("__mochi_old", span = span);
                        *e = syn::parse_quote_spanned!(span=> { let #t = #a; #a = #v; #t });
                    }
                    _ => {}
                }
            }
            Expr::MethodCall(m) if m.method == "for_each" && m.args.len() == 1 => {
                let Expr::Closure(c) = &m.args[0] else { return };
                if c.inputs.len() != 1 || contains_return(&c.body) {
                    return;
                }
                let pat = &c.inputs[0];
                let it = &m.receiver;
                let body = &c.body;
                let mut f: syn::ExprForLoop =
                    syn::parse_quote_spanned!(span=> for #pat in #it { #body; });
                f.attrs.clear();
                *e = match self.index_loop(&f) {
                    Some(r) => r,
                    None => Expr::ForLoop(f),
                };
            }
            Expr::MethodCall(m)
                if m.args.len() == 1 && matches!(&*m.receiver, Expr::Path(_) | Expr::Field(_)) =>
            {
                let y = &m.receiver;
                let i = self.index_var(span);
                let arg = &m.args[0];
                match m.method.to_string().as_str() {
                    "fill" => {
                        let t = format_ident!("__mochi_fill", span = span);
                        *e = syn::parse_quote_spanned!(span=> {
                            let #t = #arg;
                            for #i in 0..#y.len() { #y[#i] = #t; }
                        });
                    }
                    name @ ("copy_from_slice" | "assign") => {
                        let src: Expr = match arg {
                            Expr::Reference(r) if r.mutability.is_none() => (*r.expr).clone(),
                            other => other.clone(),
                        };
                        let msg = format!(
                            "`{name}`: the destination and the source have different lengths"
                        );
                        *e = syn::parse_quote_spanned!(span=> {
                            assert_eq!(#y.len(), #src.len(), #msg);
                            for #i in 0..#y.len() { #y[#i] = #src[#i]; }
                        });
                    }
                    _ => {}
                }
            }
            Expr::ForLoop(f) if f.label.is_none() => {
                if let Some(r) = self.index_loop(f) {
                    *e = r;
                }
            }
            _ => {}
        }
    }
}

/// The body of `vec![elem; len]`.
struct Repeat {
    elem: Expr,
    len: Expr,
}

impl syn::parse::Parse for Repeat {
    fn parse(input: syn::parse::ParseStream) -> syn::Result<Self> {
        let elem = input.parse()?;
        let _: syn::Token![;] = input.parse()?;
        let len = input.parse()?;
        Ok(Repeat { elem, len })
    }
}
