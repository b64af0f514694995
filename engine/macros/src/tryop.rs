//! The `?` operator, written out as the test and the `return` it stands for, before
//! anything else reads the body.
//!
//! In a function returning an `Option` or a `Result` (by any path: `io::Result<f64>`),
//! each `e?` is bound by a `let` just before its statement, tested, and replaced by
//! the value unwrapped (`TryOut::tested`); the transform differentiates that (the
//! value's derivative flows through `unwrap`, the error carries none). Only a `?` that
//! its statement evaluates every time is bound so, innermost and leftmost first (`s +=
//! f(x)? * g(x)?` binds `f(x)?` and then `g(x)?`), so that nothing is evaluated that
//! the program would not have evaluated; the branches of an `if`, the arms of a
//! `match` and the bodies of loops are blocks of their own, handled the same way. A `?`
//! inside a closure (whose `?` returns from the closure), inside a macro's arguments,
//! in a `while` condition, a `match` guard, or on the right of `&&`/`||` is left as
//! written, and `valid.rs` names it.

use proc_macro2::Span;
use syn::visit_mut::VisitMut;
use syn::{Expr, ItemFn, Stmt};

#[derive(Clone, Copy)]
enum Kind {
    Option,
    Result,
}

/// Rewrites every `?` of `f`'s body that can be rewritten (above), and those of its
/// closures ([`write_out_closures`]); the body's own are unchanged when `f` returns
/// neither an `Option` nor a `Result`.
pub fn write_out(f: &mut ItemFn) {
    write_out_closures(f);
    let syn::ReturnType::Type(_, ty) = &f.sig.output else {
        return;
    };
    let kind = match last_ident(ty).as_deref() {
        Some("Option") => Kind::Option,
        Some("Result") => Kind::Result,
        _ => return,
    };
    if !has_try(&f.block) {
        return;
    }
    TryOut { kind, next: 0 }.visit_block_mut(&mut f.block);
}

/// Rewrites the `?`s of every closure in `f`'s body whose kind is known, as
/// [`write_out`] does for the function: a closure that says what it returns (`|| ->
/// Option<f64> { .. }`) or whose value is written `Some(..)`/`None`/`Ok(..)`/`Err(..)`.
/// The `return`s this writes leave the closure, as its `?` does; the derivation inlines
/// a local closure with its `return`s as `break`s of the inlined body.
fn write_out_closures(f: &mut ItemFn) {
    struct Closures;
    impl VisitMut for Closures {
        fn visit_expr_closure_mut(&mut self, c: &mut syn::ExprClosure) {
            syn::visit_mut::visit_expr_closure_mut(self, c);
            if !has_try_expr(&c.body) {
                return;
            }
            let kind = match &c.output {
                syn::ReturnType::Type(_, ty) => match last_ident(ty).as_deref() {
                    Some("Option") => Some(Kind::Option),
                    Some("Result") => Some(Kind::Result),
                    _ => None,
                },
                syn::ReturnType::Default => tail_kind(&c.body),
            };
            let Some(kind) = kind else { return };
            let body = &c.body;
            let mut block: syn::Block = match &**body {
                Expr::Block(b) if b.label.is_none() => b.block.clone(),
                other => crate::iterchain::block_of(other, false),
            };
            TryOut { kind, next: 0 }.visit_block_mut(&mut block);
            *c.body = Expr::Block(syn::ExprBlock {
                attrs: Vec::new(),
                label: None,
                block,
            });
        }
        fn visit_item_mut(&mut self, _: &mut syn::Item) {}
    }
    if has_try(&f.block) {
        Closures.visit_block_mut(&mut f.block);
    }
}

/// `Option` or `Result`, from the value a closure's body ends with (`Some(v)`, `None`,
/// `Ok(v)`, `Err(e)`, through blocks and the branches of an `if`).
fn tail_kind(e: &Expr) -> Option<Kind> {
    match e {
        Expr::Block(b) => match b.block.stmts.last() {
            Some(Stmt::Expr(t, None)) => tail_kind(t),
            _ => None,
        },
        Expr::If(i) => {
            let then = i.then_branch.stmts.last().and_then(|s| match s {
                Stmt::Expr(t, None) => tail_kind(t),
                _ => None,
            });
            then.or_else(|| i.else_branch.as_ref().and_then(|(_, e)| tail_kind(e)))
        }
        Expr::Paren(p) => tail_kind(&p.expr),
        Expr::Call(c) => match &*c.func {
            Expr::Path(p) if p.path.is_ident("Some") => Some(Kind::Option),
            Expr::Path(p) if p.path.is_ident("Ok") || p.path.is_ident("Err") => Some(Kind::Result),
            _ => None,
        },
        Expr::Path(p) if p.path.is_ident("None") => Some(Kind::Option),
        _ => None,
    }
}

/// The last name of a type's path (`Result` of `io::Result<f64>`).
pub(crate) fn last_ident(ty: &syn::Type) -> Option<String> {
    match ty {
        syn::Type::Path(p) if p.qself.is_none() => {
            p.path.segments.last().map(|s| s.ident.to_string())
        }
        syn::Type::Paren(p) => last_ident(&p.elem),
        syn::Type::Group(g) => last_ident(&g.elem),
        _ => None,
    }
}

struct Find(bool);
impl<'ast> syn::visit::Visit<'ast> for Find {
    fn visit_expr_try(&mut self, _: &'ast syn::ExprTry) {
        self.0 = true;
    }
}

fn has_try(b: &syn::Block) -> bool {
    let mut v = Find(false);
    syn::visit::Visit::visit_block(&mut v, b);
    v.0
}

fn has_try_expr(e: &Expr) -> bool {
    let mut v = Find(false);
    syn::visit::Visit::visit_expr(&mut v, e);
    v.0
}

struct TryOut {
    kind: Kind,
    next: usize,
}

impl TryOut {
    /// The statements that test `e` for `e?`, pushed onto `pre`, and the value that
    /// replaces `e?`:
    ///
    /// - an `Option`: `let r = e; if r.is_none() { return None; }`, then `r.unwrap()`;
    /// - a `Result`: `let r = err_slot(e); if r.is_err() { return
    ///   Err(From::from(no_grad(take_err(&r)))); }`, then `r.unwrap()`. The error is
    ///   moved out of its slot through a reference: the transform carries a `return` as
    ///   a flag, after which Rust would see `r` moved by a `match`.
    fn tested(&mut self, e: &Expr, span: Span, pre: &mut Vec<Stmt>) -> Expr {
        let r = quote::format_ident!("__mochi_try_{}", self.next, span = span);
        self.next += 1;
        let v = syn::Ident::new("__mochi_try_v", span);
        let method = |e: &Expr, name: &str, args: usize| -> Option<(Expr, Vec<Expr>)> {
            match e {
                Expr::MethodCall(c) if c.method == name && c.args.len() == args => {
                    Some(((*c.receiver).clone(), c.args.iter().cloned().collect()))
                }
                _ => None,
            }
        };
        // `o.ok_or(e)?`, `o.ok_or_else(|| e)?` in a function returning a `Result`: the
        // `Option` matched, its `None` returning the error.
        let ok_or = match self.kind {
            Kind::Result => method(e, "ok_or", 1)
                .map(|(o, a)| (o, a[0].clone()))
                .or_else(|| {
                    method(e, "ok_or_else", 1).and_then(|(o, a)| match &a[0] {
                        Expr::Closure(c) if c.inputs.is_empty() => Some((o, (*c.body).clone())),
                        _ => None,
                    })
                }),
            Kind::Option => None,
        };
        if let Some((o, err)) = ok_or {
            let (o, value) = copied(&o, &v, span);
            pre.push(syn::parse_quote_spanned!(span=> let #r = match #o {
                Some(#v) => #value,
                None => return Err(::core::convert::From::from(::mochi::no_grad(#err))),
            };));
            return syn::parse_quote_spanned!(span=> #r);
        }
        match self.kind {
            Kind::Option => {
                // `r.ok()?` of a `Result`: its error dropped.
                if let Some((res, _)) = method(e, "ok", 0) {
                    pre.push(syn::parse_quote_spanned!(span=> let #r = match #res {
                        Ok(#v) => #v,
                        Err(_) => return None,
                    };));
                    return syn::parse_quote_spanned!(span=> #r);
                }
                // `x.first()?`, `x.last()?`, `x.get(i)?` of a place: a length test and
                // `&x[..]` (by value after `.copied()`), so that `let f = x.first()?;`
                // is the reference it is as written (`*f` reads it).
                if let Some((test, value)) = element_of_place(e, &r, span) {
                    pre.extend(test);
                    return value;
                }
                let (o, value) = copied(e, &v, span);
                pre.push(syn::parse_quote_spanned!(span=> let #r = match #o {
                    Some(#v) => #value,
                    None => return None,
                };));
                return syn::parse_quote_spanned!(span=> #r);
            }
            Kind::Result => {
                // `r.map_err(f)?`: `f` applied to the error where it returns.
                let (res, err) = match method(e, "map_err", 1) {
                    // (A closure `|e| body` is written as `{ let e = ..; body }`: called in
                    // place, its parameter's type would be unknown where its body is
                    // checked, and `e.to_string()` "type annotations needed".)
                    Some((res, a)) => {
                        let f = &a[0];
                        let err = match f {
                            Expr::Closure(c) if c.inputs.len() == 1 => {
                                let (pat, body) = (&c.inputs[0], &c.body);
                                quote::quote_spanned!(span=> {
                                    let #pat = ::mochi::__private::take_err(&#r);
                                    #body
                                })
                            }
                            _ => {
                                quote::quote_spanned!(span=> (#f)(::mochi::__private::take_err(&#r)))
                            }
                        };
                        (res, err)
                    }
                    None => (
                        e.clone(),
                        quote::quote_spanned!(span=> ::mochi::__private::take_err(&#r)),
                    ),
                };
                pre.push(
                    syn::parse_quote_spanned!(span=> let #r = ::mochi::__private::err_slot(#res);),
                );
                pre.push(syn::parse_quote_spanned!(span=> if #r.is_err() {
                    return Err(::core::convert::From::from(::mochi::no_grad(#err)));
                }));
            }
        }
        syn::parse_quote_spanned!(span=> #r.unwrap())
    }

    /// Binds the `?`s of `e` that it evaluates every time, innermost and leftmost
    /// first, to `let`s pushed onto `pre`; each is replaced by its name.
    /// Operands evaluated left to right, each hoisted in its turn; where a later one holds
    /// a `?` (`s * take(&mut s, r)?`, `self.s * self.take(r)?`), the operands before it
    /// that read a value are bound first, as Rust reads them before the `?`'s call runs
    /// (which may write them), the `?` being bound before the statement. `kept`: the
    /// first operand stays where it is (a method's receiver, which may be a place the
    /// method changes).
    fn hoist_operands(&mut self, ops: Vec<&mut Expr>, pre: &mut Vec<Stmt>) {
        self.hoist_operands_kept(ops, false, pre);
    }

    fn hoist_operands_kept(&mut self, ops: Vec<&mut Expr>, kept: bool, pre: &mut Vec<Stmt>) {
        let last = ops.iter().rposition(|o| has_try_expr(o));
        for (k, o) in ops.into_iter().enumerate() {
            let read_first = last.is_some_and(|l| k < l)
                && !(kept && k == 0)
                && !matches!(
                    crate::desugar::unparen(o),
                    Expr::Lit(_) | Expr::Reference(_)
                );
            self.hoist(o, pre);
            if read_first {
                let span = syn::spanned::Spanned::span(&*o);
                let t = quote::format_ident!("__mochi_try_operand_{}", self.next, span = span);
                self.next += 1;
                let value = std::mem::replace(o, syn::parse_quote!(#t));
                let value = crate::desugar::unparen(&value);
                pre.push(syn::parse_quote_spanned!(span=> let #t = #value;));
            }
        }
    }

    fn hoist(&mut self, e: &mut Expr, pre: &mut Vec<Stmt>) {
        match e {
            Expr::Try(t) => {
                self.hoist(&mut t.expr, pre);
                *e = self.tested(&t.expr, t.question_token.span, pre);
            }
            // Not every time, or not this function's `?`.
            Expr::Closure(_)
            | Expr::Block(_)
            | Expr::Loop(_)
            | Expr::While(_)
            | Expr::Macro(_)
            | Expr::Unsafe(_)
            | Expr::Async(_)
            | Expr::Const(_)
            | Expr::TryBlock(_) => {}
            Expr::If(i) => self.hoist(&mut i.cond, pre),
            Expr::Match(m) => self.hoist(&mut m.expr, pre),
            Expr::ForLoop(f) => self.hoist(&mut f.expr, pre),
            Expr::Let(l) => self.hoist(&mut l.expr, pre),
            Expr::Binary(b)
                if !crate::activity::is_arithmetic_assign(&b.op)
                    && !matches!(b.op, syn::BinOp::And(_) | syn::BinOp::Or(_)) =>
            {
                self.hoist_operands(vec![&mut *b.left, &mut *b.right], pre);
            }
            Expr::Binary(b) => {
                self.hoist(&mut b.left, pre);
                if !matches!(b.op, syn::BinOp::And(_) | syn::BinOp::Or(_)) {
                    self.hoist(&mut b.right, pre);
                }
            }
            Expr::Unary(u) => self.hoist(&mut u.expr, pre),
            Expr::Paren(p) => self.hoist(&mut p.expr, pre),
            Expr::Group(g) => self.hoist(&mut g.expr, pre),
            Expr::Reference(r) => self.hoist(&mut r.expr, pre),
            Expr::Cast(c) => self.hoist(&mut c.expr, pre),
            Expr::Field(f) => self.hoist(&mut f.base, pre),
            Expr::Index(i) => {
                self.hoist(&mut i.expr, pre);
                self.hoist(&mut i.index, pre);
            }
            Expr::MethodCall(m) => {
                // (A float's method takes its receiver by value: `s.powf(take(&mut s)?)`.)
                let kept = !crate::twin::FLOAT_METHODS.contains(&m.method.to_string().as_str());
                let ops = std::iter::once(&mut *m.receiver)
                    .chain(m.args.iter_mut())
                    .collect();
                self.hoist_operands_kept(ops, kept, pre);
            }
            Expr::Call(c) => {
                self.hoist(&mut c.func, pre);
                self.hoist_operands(c.args.iter_mut().collect(), pre);
            }
            Expr::Tuple(t) => self.hoist_operands(t.elems.iter_mut().collect(), pre),
            Expr::Array(a) => self.hoist_operands(a.elems.iter_mut().collect(), pre),
            Expr::Struct(s) => {
                self.hoist_operands(s.fields.iter_mut().map(|f| &mut f.expr).collect(), pre)
            }
            Expr::Assign(a) => {
                self.hoist(&mut a.right, pre);
                self.hoist(&mut a.left, pre);
            }
            Expr::Return(r) => {
                if let Some(v) = &mut r.expr {
                    self.hoist(v, pre);
                }
            }
            Expr::Break(b) => {
                if let Some(v) = &mut b.expr {
                    self.hoist(v, pre);
                }
            }
            Expr::Range(r) => {
                if let Some(a) = &mut r.start {
                    self.hoist(a, pre);
                }
                if let Some(a) = &mut r.end {
                    self.hoist(a, pre);
                }
            }
            _ => {}
        }
    }
}

impl VisitMut for TryOut {
    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        let mut out = Vec::with_capacity(b.stmts.len());
        for mut s in std::mem::take(&mut b.stmts) {
            let mut pre = Vec::new();
            match &mut s {
                Stmt::Local(l) => {
                    if let Some(init) = &mut l.init {
                        // `let p = e? else { .. };` keeps its `else` for the pattern.
                        self.hoist(&mut init.expr, &mut pre);
                    }
                }
                Stmt::Expr(e, _) => self.hoist(e, &mut pre),
                _ => {}
            }
            out.extend(pre);
            out.push(s);
        }
        b.stmts = out;
        syn::visit_mut::visit_block_mut(self, b);
    }

    // An arm's value and an `else if`'s condition are blocks of their own.
    fn visit_arm_mut(&mut self, a: &mut syn::Arm) {
        if !matches!(&*a.body, Expr::Block(_)) && has_try_expr(&a.body) {
            *a.body = Expr::Block(syn::ExprBlock {
                attrs: Vec::new(),
                label: None,
                block: crate::iterchain::block_of(&a.body, false),
            });
        }
        syn::visit_mut::visit_arm_mut(self, a);
    }

    fn visit_expr_if_mut(&mut self, i: &mut syn::ExprIf) {
        if let Some((_, e)) = &mut i.else_branch {
            if let Expr::If(inner) = &**e {
                if has_try_expr(&inner.cond) {
                    **e = syn::parse_quote!({ #inner });
                }
            }
        }
        syn::visit_mut::visit_expr_if_mut(self, i);
    }

    // A closure's `?` returns from the closure.
    fn visit_expr_closure_mut(&mut self, _: &mut syn::ExprClosure) {}

    // A nested item is its own function.
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// `x.first()`, `x.last()`, `x.get(i)` (also followed by `.copied()` or `.cloned()`) of a
/// variable or a field `x`: the statements that return `None` when the element does not
/// exist, and the element (`&x[..]`, or `x[..]` after `copied`). `r` names the index.
fn element_of_place(e: &Expr, r: &syn::Ident, span: Span) -> Option<(Vec<Stmt>, Expr)> {
    let (access, by_ref) = match e {
        Expr::MethodCall(c)
            if c.args.is_empty()
                && (c.method == "copied" || c.method == "cloned")
                && matches!(&*c.receiver, Expr::MethodCall(_)) =>
        {
            let Expr::MethodCall(a) = &*c.receiver else {
                return None;
            };
            (a, false)
        }
        Expr::MethodCall(a) => (a, true),
        _ => return None,
    };
    let x = &access.receiver;
    if !matches!(&**x, Expr::Path(p) if p.path.get_ident().is_some())
        && !matches!(&**x, Expr::Field(_))
    {
        return None;
    }
    let (test, index): (Vec<Stmt>, Expr) =
        match (access.method.to_string().as_str(), access.args.len()) {
            ("first", 0) => (
                vec![syn::parse_quote_spanned!(span=> if #x.is_empty() { return None; })],
                syn::parse_quote_spanned!(span=> 0),
            ),
            ("last", 0) => (
                vec![syn::parse_quote_spanned!(span=> if #x.is_empty() { return None; })],
                syn::parse_quote_spanned!(span=> #x.len() - 1),
            ),
            ("get", 1)
                if !matches!(
                    &access.args[0],
                    Expr::Reference(_) | Expr::Range(_) | Expr::Tuple(_)
                ) =>
            {
                let i = &access.args[0];
                (
                    vec![
                        syn::parse_quote_spanned!(span=> let #r: usize = #i;),
                        syn::parse_quote_spanned!(span=> if #r >= #x.len() { return None; }),
                    ],
                    syn::parse_quote_spanned!(span=> #r),
                )
            }
            _ => return None,
        };
    let value = if by_ref {
        syn::parse_quote_spanned!(span=> &#x[#index])
    } else {
        syn::parse_quote_spanned!(span=> #x[#index])
    };
    Some((test, value))
}

/// `o.copied()`/`o.cloned()` of a call as `o` and `*v`/`v.clone()` of its `Some(v)` (the
/// element rewrites read `x.get(i)`, `x.first()`, … in a `match` bare); any other `o` as
/// it is, and `v`.
fn copied(e: &Expr, v: &syn::Ident, span: Span) -> (Expr, Expr) {
    match e {
        Expr::MethodCall(c)
            if c.args.is_empty()
                && (c.method == "copied" || c.method == "cloned")
                && matches!(&*c.receiver, Expr::MethodCall(_)) =>
        {
            let value = if c.method == "copied" {
                syn::parse_quote_spanned!(span=> *#v)
            } else {
                syn::parse_quote_spanned!(span=> #v.clone())
            };
            ((*c.receiver).clone(), value)
        }
        _ => (e.clone(), syn::parse_quote_spanned!(span=> #v)),
    }
}
