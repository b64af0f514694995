//! Activity analysis: which variable names can carry a derivative.
//!
//! The macro sees syntax only, so the analysis is by name and flow-insensitive: a name
//! is active when a parameter of a differentiable type has it, or when any binding or
//! assignment of that name anywhere in the body takes an active value. Computed to a
//! fixpoint. Over-approximating is safe (an integer that is wrongly active gets the
//! zero rules of integers); under-approximating would lose derivatives, so every
//! construct that can carry a value counts.

use std::collections::HashSet;
use syn::visit::Visit;
use syn::{Expr, Pat, Stmt, Type};

/// Methods whose results never carry a derivative, by name: the standard library's
/// names that any Rust type may have (lengths, comparisons, float classification,
/// `Option`/`Result` queries). A rule crate declares the inactive methods of its own
/// types as rules (`mochi_core::kit::inactive_methods!`, a shape query): the macro
/// lowers them as rule calls whose results it counts active, and their zero-sized
/// pullbacks cost nothing.
pub const INACTIVE_METHODS: &[&str] = &[
    "len",
    "is_standard_layout",
    "nrows",
    "ncols",
    "ndim",
    "dim",
    "raw_dim",
    "shape",
    "len_of",
    "is_empty",
    "capacity",
    "count",
    "contains",
    "is_nan",
    "is_finite",
    "is_infinite",
    "is_normal",
    "is_sign_positive",
    "is_sign_negative",
    "to_bits",
    "is_some",
    "is_none",
    "is_ok",
    "is_err",
    "partial_cmp",
    "total_cmp",
    "cmp",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
];

/// Types that never carry a derivative (parameters of these types are inactive).
pub fn type_is_inactive(ty: &Type) -> bool {
    match ty {
        Type::Path(p) => {
            let Some(last) = p.path.segments.last() else {
                return false;
            };
            let name = last.ident.to_string();
            if matches!(
                name.as_str(),
                "Vec" | "Option" | "Box" | "VecDeque" | "Result"
            ) {
                if let syn::PathArguments::AngleBracketed(a) = &last.arguments {
                    if let Some(syn::GenericArgument::Type(t)) = a.args.first() {
                        return type_is_inactive(t);
                    }
                }
            }
            NO_TANGENT_PRIMITIVES.contains(&name.as_str())
                || matches!(name.as_str(), "String" | "NoTangent")
        }
        Type::Reference(r) => type_is_inactive(&r.elem),
        Type::Slice(s) => type_is_inactive(&s.elem),
        Type::Array(a) => type_is_inactive(&a.elem),
        Type::Tuple(t) => t.elems.is_empty(),
        Type::Paren(p) => type_is_inactive(&p.elem),
        _ => false,
    }
}

/// Is `ty` a reference type (`&T`, `&mut T`)?
pub fn type_is_ref(ty: &Type) -> bool {
    matches!(ty, Type::Reference(_))
}

/// An integer, `bool` or `char` type written as the primitive's name: a cast to it
/// carries no derivative. (A cast to any other type may: an alias `type Real = f64;`, a
/// path `std::primitive::f64`.)
pub fn is_integer_type(ty: &Type) -> bool {
    matches!(ty, Type::Path(p) if p.qself.is_none()
    && p.path.segments.last().is_some_and(|s| {
        let n = s.ident.to_string();
        INTEGER_TYPES.contains(&n.as_str()) || n == "bool" || n == "char"
    }))
}

/// Whether a `sum`'s or a `product`'s type (its turbofish, or its binding's) is not a
/// float's: an integer, an `Option` or a `Result` (`let n: usize = chain.sum();`), which
/// the chain rewrites and the rules of float sums leave as written.
pub fn not_a_float_sum(t: &syn::Type) -> bool {
    matches!(t, syn::Type::Path(p) if p.path.segments.last().is_some_and(|s| {
        let n = s.ident.to_string();
        n == "Option" || n == "Result" || INTEGER_TYPES.contains(&n.as_str())
    }))
}

/// The primitive integer types.
pub const INTEGER_TYPES: &[&str] = &[
    "usize", "isize", "u8", "u16", "u32", "u64", "u128", "i8", "i16", "i32", "i64", "i128",
];

/// The names bound by a pattern.
pub fn pat_names(pat: &Pat, out: &mut Vec<String>) {
    match pat {
        Pat::Ident(p) => {
            out.push(p.ident.to_string());
            if let Some((_, sub)) = &p.subpat {
                pat_names(sub, out);
            }
        }
        Pat::Tuple(t) => t.elems.iter().for_each(|p| pat_names(p, out)),
        Pat::TupleStruct(t) => t.elems.iter().for_each(|p| pat_names(p, out)),
        Pat::Struct(s) => s.fields.iter().for_each(|f| pat_names(&f.pat, out)),
        Pat::Reference(r) => pat_names(&r.pat, out),
        Pat::Type(t) => pat_names(&t.pat, out),
        Pat::Paren(p) => pat_names(&p.pat, out),
        Pat::Slice(s) => s.elems.iter().for_each(|p| pat_names(p, out)),
        Pat::Or(o) => o.cases.iter().for_each(|p| pat_names(p, out)),
        _ => {}
    }
}

/// Does `e` carry a derivative, given the active names?
pub fn expr_is_active(e: &Expr, active: &HashSet<String>) -> bool {
    match e {
        Expr::Path(p) => p
            .path
            .get_ident()
            .is_some_and(|i| active.contains(&i.to_string())),
        Expr::Lit(_) => false,
        Expr::Binary(b) => {
            use syn::BinOp::*;
            match b.op {
                // (`d + cfg.m + 1`, `k * 2`: with an integer literal the value is an
                // integer, whatever the other operand's root carries.)
                Add(_) | Sub(_) | Mul(_) | Div(_) | Rem(_)
                    if integer_literal(&b.left) || integer_literal(&b.right) =>
                {
                    false
                }
                Add(_) | Sub(_) | Mul(_) | Div(_) | Rem(_) => {
                    expr_is_active(&b.left, active) || expr_is_active(&b.right, active)
                }
                _ => false,
            }
        }
        Expr::Unary(u) => match u.op {
            syn::UnOp::Not(_) => false,
            _ => expr_is_active(&u.expr, active),
        },
        Expr::MethodCall(m) => {
            let name = m.method.to_string();
            if INACTIVE_METHODS.contains(&name.as_str()) || crate::twin::plain_user_method(&name) {
                return false;
            }
            expr_is_active(&m.receiver, active) || m.args.iter().any(|a| expr_is_active(a, active))
        }
        Expr::Call(c) => {
            if let Expr::Path(p) = &*c.func {
                // An error carries no derivative (a `Result`'s tangent is its value's).
                if p.path
                    .segments
                    .last()
                    .is_some_and(|s| s.ident == "no_grad" || s.ident == "Err")
                {
                    return false;
                }
                // `Vec::with_capacity(self.n)`: an empty buffer, whatever its capacity.
                let segs = crate::twin::segments(&p.path);
                if segs.len() >= 2
                    && segs[segs.len() - 1] == "with_capacity"
                    && matches!(
                        segs[segs.len() - 2].as_str(),
                        "Vec" | "VecDeque" | "String" | "HashMap" | "BTreeMap" | "HashSet"
                    )
                {
                    return false;
                }
            }
            // (A local closure that captures a differentiable name gives a value that
            // carries its derivative: `let f = |y| a * y; f(c)`.)
            c.args.iter().any(|a| expr_is_active(a, active))
                || matches!(&*c.func, Expr::Path(p)
                    if p.path.get_ident().is_some_and(|i| active.contains(&i.to_string())))
        }
        Expr::Index(i) => expr_is_active(&i.expr, active),
        Expr::Field(f) => expr_is_active(&f.base, active),
        Expr::Cast(c) => !is_integer_type(&c.ty) && expr_is_active(&c.expr, active),
        Expr::Paren(p) => expr_is_active(&p.expr, active),
        Expr::Group(g) => expr_is_active(&g.expr, active),
        // `x.first()?`, `g(x)?`: the value inside the option or the result.
        Expr::Try(t) => expr_is_active(&t.expr, active),
        Expr::Reference(r) => expr_is_active(&r.expr, active),
        Expr::Tuple(t) => t.elems.iter().any(|e| expr_is_active(e, active)),
        Expr::Array(a) => a.elems.iter().any(|e| expr_is_active(e, active)),
        Expr::Repeat(r) => expr_is_active(&r.expr, active),
        Expr::Struct(s) => s.fields.iter().any(|f| expr_is_active(&f.expr, active)),
        Expr::Block(b) => block_value_active(&b.block, active),
        Expr::Unsafe(b) => block_value_active(&b.block, active),
        Expr::If(i) => {
            block_value_active(&i.then_branch, active)
                || i.else_branch
                    .as_ref()
                    .is_some_and(|(_, e)| expr_is_active(e, active))
        }
        Expr::Match(m) => m.arms.iter().any(|a| expr_is_active(&a.body, active)),
        Expr::Macro(m) => {
            // ndarray's concatenate![axis, a, b] and stack![axis, a, b] carry their arrays.
            let joins = m
                .mac
                .path
                .segments
                .last()
                .is_some_and(|s| s.ident == "concatenate" || s.ident == "stack");
            if joins {
                if let Ok(list) = m.mac.parse_body_with(
                    syn::punctuated::Punctuated::<Expr, syn::Token![,]>::parse_terminated,
                ) {
                    return list.iter().skip(1).any(|e| expr_is_active(e, active));
                }
            }
            // vec![a, b] and vec![a; n] carry their elements, and so do ndarray's
            // array![a, b] and array![[a, b], [c, d]].
            if m.mac.path.is_ident("vec")
                || m.mac
                    .path
                    .segments
                    .last()
                    .is_some_and(|s| s.ident == "array")
            {
                if let Ok(r) = m.mac.parse_body::<ExprRepeatBody>() {
                    return expr_is_active(&r.0, active);
                }
                if let Ok(list) = m.mac.parse_body_with(
                    syn::punctuated::Punctuated::<Expr, syn::Token![,]>::parse_terminated,
                ) {
                    return list.iter().any(|e| expr_is_active(e, active));
                }
            }
            false
        }
        // A closure's value may be a name bound inside it (`|p| { let t = c * p; t }`),
        // which the enclosing analysis keeps local: the body is analysed on its own.
        Expr::Closure(c) => expr_is_active(&c.body, active),
        // A `loop` whose `break`s carry a value computed from differentiable names.
        Expr::Loop(l) => {
            crate::desugar::breaks_with_value(&l.body, l.label.as_ref().map(|l| &l.name))
                && mentions_active(&l.body, active)
        }
        _ => false,
    }
}

/// Whether the value of block `b` carries a derivative. Its tail may be a name bound
/// inside it (`{ let mu = theta[1]; mu }`), which an enclosing analysis that keeps a
/// closure's bindings local has not seen: a block with statements is analysed on its own.
/// (Before 2026-12-05 a closure's body in parentheses, `|&v| ({ let mu = theta[1]; .. })`,
/// as the inlining of a local closure writes a call, was judged by the enclosing set:
/// a silent zero derivative.)
fn block_value_active(b: &syn::Block, active: &HashSet<String>) -> bool {
    let Some(Stmt::Expr(e, None)) = b.stmts.last() else {
        return false;
    };
    if b.stmts.len() > 1 {
        let mut inner = active.clone();
        analyse(b, &mut inner);
        expr_is_active(e, &inner)
    } else {
        expr_is_active(e, active)
    }
}

/// Grows `active` to a fixpoint over every route by which a value can enter a name.
///
/// The routes: `let` and `=`/`op=` (the value's activity), `for` patterns (the
/// iterated value's), calls and method calls (a `&mut` argument, and a method's
/// receiver, may be written with any other operand's data), mutable aliases (`let r =
/// &mut v`, `v.iter_mut()`, `v.row_mut(i)`: writing `r` writes `v`), and closures (a
/// closure body may write the names it captures, with its parameters' data).
pub fn analyse(block: &syn::Block, active: &mut HashSet<String>) {
    let mut aliases = Vec::new();
    let mut mutable = HashSet::new();
    AliasFinder {
        aliases: &mut aliases,
        mutable: &mut mutable,
    }
    .visit_block(block);
    mutable.extend(aliases.iter().map(|(a, _)| a.clone()));
    loop {
        let before = active.len();
        let mut v = Grow {
            active,
            mutable: &mutable,
        };
        v.visit_block(block);
        for (alias, target) in &aliases {
            if active.contains(alias) {
                active.insert(target.clone());
            }
        }
        if active.len() == before {
            break;
        }
    }
}

/// The name a place expression is rooted at: `v` for `v`, `v[i]`, `v.f`, `*v`,
/// `&mut v[..]`, `v.iter_mut()`, `v.row_mut(0).slice_mut(..)`.
pub fn root_name(e: &Expr) -> Option<String> {
    match e {
        Expr::Path(p) => p.path.get_ident().map(|i| i.to_string()),
        Expr::Index(i) => root_name(&i.expr),
        Expr::Field(f) => root_name(&f.base),
        Expr::Paren(p) => root_name(&p.expr),
        Expr::Group(g) => root_name(&g.expr),
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => root_name(&u.expr),
        Expr::Reference(r) => root_name(&r.expr),
        Expr::MethodCall(m) => root_name(&m.receiver),
        _ => None,
    }
}

/// Does `e` borrow part of a place mutably, so that a binding of its value aliases the
/// place? `&mut v`, `&mut v[1..]`, `v.iter_mut()`, `v.as_mut_slice()`, `v.row_mut(0)`.
fn borrows_mutably(e: &Expr) -> bool {
    match e {
        Expr::Reference(r) => r.mutability.is_some() || borrows_mutably(&r.expr),
        Expr::MethodCall(m) => {
            let name = m.method.to_string();
            name.ends_with("_mut") || name.starts_with("as_mut") || borrows_mutably(&m.receiver)
        }
        Expr::Paren(p) => borrows_mutably(&p.expr),
        Expr::Group(g) => borrows_mutably(&g.expr),
        _ => false,
    }
}

/// Every identifier in `ts` (a macro's tokens, whose names are not visited).
pub fn token_idents(ts: proc_macro2::TokenStream, out: &mut HashSet<String>) {
    for t in ts {
        match t {
            proc_macro2::TokenTree::Ident(i) => {
                out.insert(i.to_string());
            }
            proc_macro2::TokenTree::Group(g) => token_idents(g.stream(), out),
            _ => {}
        }
    }
}

/// Does a token stream (a macro's body) hold an identifier that `pred` accepts, at any
/// depth of its groups?
pub fn tokens_mention(
    ts: &proc_macro2::TokenStream,
    pred: &dyn Fn(&proc_macro2::Ident) -> bool,
) -> bool {
    ts.clone().into_iter().any(|t| match t {
        proc_macro2::TokenTree::Ident(i) => pred(&i),
        proc_macro2::TokenTree::Group(g) => tokens_mention(&g.stream(), pred),
        _ => false,
    })
}

/// Does `e` mention an active name anywhere (closures and macro bodies included)?
pub fn mentions_active(e: &impl quote::ToTokens, active: &HashSet<String>) -> bool {
    tokens_mention(&e.to_token_stream(), &|i| active.contains(&i.to_string()))
}

/// Collects `(alias, target)` for bindings that borrow a place mutably, and the names
/// bound `mut`.
struct AliasFinder<'a> {
    aliases: &'a mut Vec<(String, String)>,
    mutable: &'a mut HashSet<String>,
}

impl AliasFinder<'_> {
    fn add(&mut self, pat: &Pat, init: &Expr) {
        if !borrows_mutably(init) {
            return;
        }
        let Some(target) = root_name(init) else {
            return;
        };
        let mut names = Vec::new();
        pat_names(pat, &mut names);
        for n in names {
            if n != target {
                self.aliases.push((n, target.clone()));
            }
        }
    }
}

impl<'ast> Visit<'ast> for AliasFinder<'_> {
    fn visit_local(&mut self, l: &'ast syn::Local) {
        if let Some(init) = &l.init {
            self.add(&l.pat, &init.expr);
        }
        syn::visit::visit_local(self, l);
    }
    fn visit_expr_for_loop(&mut self, f: &'ast syn::ExprForLoop) {
        self.add(&f.pat, &f.expr);
        syn::visit::visit_expr_for_loop(self, f);
    }
    fn visit_expr_let(&mut self, l: &'ast syn::ExprLet) {
        self.add(&l.pat, &l.expr);
        syn::visit::visit_expr_let(self, l);
    }
    fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
        if p.mutability.is_some() {
            self.mutable.insert(p.ident.to_string());
        }
        syn::visit::visit_pat_ident(self, p);
    }
    fn visit_pat_type(&mut self, p: &'ast syn::PatType) {
        if matches!(&*p.ty, Type::Reference(r) if r.mutability.is_some()) {
            let mut names = Vec::new();
            pat_names(&p.pat, &mut names);
            self.mutable.extend(names);
        }
        syn::visit::visit_pat_type(self, p);
    }
}

/// `Some(p)` or `Ok(p)`: a pattern of the value an `Option` or a `Result` carries.
fn carried_value(p: &Pat) -> bool {
    match p {
        Pat::TupleStruct(ts) => {
            ts.qself.is_none()
                && (ts.path.is_ident("Some") || ts.path.is_ident("Ok"))
                && ts.elems.len() == 1
        }
        // `match x { [h, t @ ..] => .. }` of a differentiable slice: its elements and
        // the rest.
        Pat::Slice(_) => true,
        Pat::Reference(r) => matches!(&*r.pat, Pat::Slice(_)),
        _ => false,
    }
}

struct Grow<'a> {
    active: &'a mut HashSet<String>,
    /// Names bound `mut`, `&mut`-typed, or aliasing a place mutably: the receivers
    /// that a `&mut self` method can write.
    mutable: &'a HashSet<String>,
}

impl Grow<'_> {
    /// Every name `pat` binds carries a derivative.
    fn activate_names(&mut self, pat: &Pat) {
        let mut names = Vec::new();
        pat_names(pat, &mut names);
        self.active.extend(names);
    }

    fn mark_place(&mut self, place: &Expr) {
        if let Some(root) = root_name(place) {
            self.active.insert(root);
        }
    }

    /// The operands of a call (the receiver first for a method): when any operand other
    /// than a closure carries a derivative, every `&mut` operand may be written with it,
    /// and the closures' parameters may carry one. Then visits the operands.
    fn visit_call_operands(&mut self, operands: &[&Expr]) {
        let inputs_active = operands
            .iter()
            .any(|e| !matches!(e, Expr::Closure(_)) && mentions_active(*e, self.active));
        if inputs_active {
            for e in operands {
                if borrows_mutably(e) {
                    self.mark_place(e);
                }
            }
        }
        for e in operands {
            match e {
                Expr::Closure(c) => self.visit_closure(c, inputs_active),
                other => self.visit_expr(other),
            }
        }
    }

    /// A closure's body, with its parameters active when its inputs may be. Names
    /// bound inside the closure stay local; names it captures and writes are marked
    /// in the enclosing function.
    fn visit_closure(&mut self, c: &syn::ExprClosure, inputs_active: bool) {
        let mut locals = Vec::new();
        for p in &c.inputs {
            pat_names(p, &mut locals);
        }
        struct Lets<'a>(&'a mut Vec<String>);
        impl<'ast> Visit<'ast> for Lets<'_> {
            fn visit_local(&mut self, l: &'ast syn::Local) {
                pat_names(&l.pat, self.0);
                syn::visit::visit_local(self, l);
            }
        }
        let mut lets = Vec::new();
        Lets(&mut lets).visit_expr(&c.body);
        let mut inner = self.active.clone();
        for p in &locals {
            if inputs_active {
                inner.insert(p.clone());
            } else {
                inner.remove(p);
            }
        }
        let block: syn::Block = match &*c.body {
            Expr::Block(b) => b.block.clone(),
            other => crate::iterchain::block_of(other, true),
        };
        analyse(&block, &mut inner);
        for n in inner {
            if !locals.contains(&n) && !lets.contains(&n) {
                self.active.insert(n);
            }
        }
    }
}

impl<'ast> Visit<'ast> for Grow<'_> {
    fn visit_local(&mut self, l: &'ast syn::Local) {
        // `let n: usize = ..;`: a binding typed without a tangent stays inactive.
        let typed_inactive = matches!(&l.pat, Pat::Type(t) if type_is_inactive(&t.ty));
        if let Some(init) = l.init.as_ref().filter(|_| !typed_inactive) {
            if expr_is_active(&init.expr, self.active) {
                self.activate_names(&l.pat);
            }
        }
        syn::visit::visit_local(self, l);
    }
    fn visit_expr_assign(&mut self, a: &'ast syn::ExprAssign) {
        if expr_is_active(&a.right, self.active) {
            self.mark_place(&a.left);
        }
        syn::visit::visit_expr_assign(self, a);
    }
    fn visit_expr_binary(&mut self, b: &'ast syn::ExprBinary) {
        if is_arithmetic_assign(&b.op) && expr_is_active(&b.right, self.active) {
            self.mark_place(&b.left);
        }
        syn::visit::visit_expr_binary(self, b);
    }
    fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
        self.visit_expr(&c.func);
        let ops: Vec<&Expr> = c.args.iter().collect();
        self.visit_call_operands(&ops);
    }
    fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
        let name = m.method.to_string();
        // `&mut self` methods (`push`, `extend_from_slice`, `copy_from_slice`, `assign`,
        // `fill`, `for_each` on `iter_mut()`, …) may write the receiver with the data of
        // their arguments, closures included.
        if !INACTIVE_METHODS.contains(&name.as_str())
            && m.args.iter().any(|a| mentions_active(a, self.active))
            && root_name(&m.receiver).is_some_and(|r| self.mutable.contains(&r))
        {
            self.mark_place(&m.receiver);
        }
        // `Zip::from(&mut out).and(&a).for_each(|o, &x| *o = …)`: the closure writes the
        // `&mut` operands with the data of the others (and of what it captures).
        if name == "for_each" {
            if let Some(operands) = crate::desugar::zip_operands(&m.receiver) {
                if operands
                    .iter()
                    .chain(&m.args)
                    .any(|e| mentions_active(e, self.active))
                {
                    for o in &operands {
                        if let Expr::Reference(r) = o {
                            if r.mutability.is_some() {
                                self.mark_place(&r.expr);
                            }
                        }
                    }
                }
            }
        }
        let ops: Vec<&Expr> = std::iter::once(&*m.receiver).chain(&m.args).collect();
        self.visit_call_operands(&ops);
    }
    fn visit_expr_for_loop(&mut self, f: &'ast syn::ExprForLoop) {
        let mut names = Vec::new();
        for_pattern_active(&f.pat, &f.expr, self.active, &mut names);
        self.active.extend(names);
        syn::visit::visit_expr_for_loop(self, f);
    }
    fn visit_expr_closure(&mut self, c: &'ast syn::ExprClosure) {
        // A closure not passed straight to a call: its inputs are unknown, so they may
        // carry a derivative.
        self.visit_closure(c, true);
    }
    // `if let Ok(l) = logs(x)`, `while let Some(v) = it.next()`: the names an `Option`'s
    // or a `Result`'s value binds from one that carries a derivative carry one. (Not a
    // configuration enum's settings, `Shape::Circle { r }`, which have none.)
    fn visit_expr_let(&mut self, l: &'ast syn::ExprLet) {
        if carried_value(&l.pat) && expr_is_active(&l.expr, self.active) {
            self.activate_names(&l.pat);
        }
        syn::visit::visit_expr_let(self, l);
    }
    // `match logs(x) { Ok(l) => .., Err(_) => .. }`: so do the arms' bindings.
    fn visit_expr_match(&mut self, m: &'ast syn::ExprMatch) {
        if expr_is_active(&m.expr, self.active) {
            for arm in m.arms.iter().filter(|a| carried_value(&a.pat)) {
                self.activate_names(&arm.pat);
            }
        }
        syn::visit::visit_expr_match(self, m);
    }
}

/// `+=`, `-=`, `*=`, `/=`, `%=`: the operators that write their left side with data.
pub fn is_arithmetic_assign(op: &syn::BinOp) -> bool {
    use syn::BinOp::*;
    matches!(
        op,
        AddAssign(_) | SubAssign(_) | MulAssign(_) | DivAssign(_) | RemAssign(_)
    )
}

/// `x.iter().enumerate()` and friends.
pub fn iterates_enumerated(e: &Expr) -> bool {
    matches!(e, Expr::MethodCall(m) if m.method == "enumerate")
}

/// Whether the items of `e` are `(index, element)` pairs: `.enumerate()`, also followed
/// by adapters that keep the items as they are (`.enumerate().rev()`,
/// `.enumerate().skip(1)`, `.enumerate().filter(..)`).
/// The names of a `for` pattern that carry a derivative: all of them when the
/// iterated value is active, but `enumerate`'s index; a pair of a `zip`, `for (v, l) in
/// x.iter().zip(labels)` (also under `enumerate()`, `(i, (v, l))`, and nested), part by
/// part, each as active as the sequence it walks, so that `l` over integer labels stays
/// a plain value (a map's key, `counts[l]`).
pub fn for_pattern_active(pat: &Pat, e: &Expr, active: &HashSet<String>, out: &mut Vec<String>) {
    if !expr_is_active(e, active) {
        return;
    }
    let pat = match pat {
        Pat::Paren(p) => &*p.pat,
        Pat::Type(t) => &*t.pat,
        Pat::Reference(r) => &*r.pat,
        p => p,
    };
    if let (Expr::MethodCall(m), Pat::Tuple(t)) = (crate::desugar::unparen(e), pat) {
        if t.elems.len() == 2 {
            match (m.method.to_string().as_str(), m.args.len()) {
                ("zip", 1) => {
                    for_pattern_active(&t.elems[0], &m.receiver, active, out);
                    for_pattern_active(&t.elems[1], &m.args[0], active, out);
                    return;
                }
                // `(i, part)`: the index carries no derivative.
                ("enumerate", 0) => {
                    for_pattern_active(&t.elems[1], &m.receiver, active, out);
                    return;
                }
                _ => {}
            }
        }
    }
    let mut names = Vec::new();
    pat_names(pat, &mut names);
    // `(i, v)` of an `.enumerate()` under other adapters: the index stays inactive.
    if yields_enumerated(e) && names.len() > 1 {
        names.remove(0);
    }
    out.extend(names);
}

/// Adds to `active` the parameters of the closures that adapters over a sequence with a
/// derivative are given, bound as a `for` over the same chain binds its pattern
/// ([`for_pattern_active`]: `(i, &v)` of `x.iter().enumerate().map(..)` adds `v`, not the
/// index); a `fold`'s element (its second parameter). The analysis itself keeps a
/// closure's parameters to the closure: a caller that reads names anywhere in the body
/// (the generic form's calls) needs them.
pub fn add_closure_items(block: &syn::Block, active: &mut HashSet<String>) {
    struct Items<'a> {
        active: &'a HashSet<String>,
        out: Vec<String>,
    }
    impl<'ast> Visit<'ast> for Items<'_> {
        fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
            let item = match (m.method.to_string().as_str(), m.args.last()) {
                ("fold", Some(Expr::Closure(c))) if c.inputs.len() == 2 => Some(&c.inputs[1]),
                (_, Some(Expr::Closure(c))) if c.inputs.len() == 1 => Some(&c.inputs[0]),
                _ => None,
            };
            if let Some(p) = item {
                for_pattern_active(p, &m.receiver, self.active, &mut self.out);
            }
            syn::visit::visit_expr_method_call(self, m);
        }
    }
    loop {
        let mut v = Items {
            active,
            out: Vec::new(),
        };
        v.visit_block(block);
        let before = active.len();
        active.extend(v.out);
        if active.len() == before {
            return;
        }
    }
}

pub fn yields_enumerated(e: &Expr) -> bool {
    match e {
        Expr::MethodCall(m) if m.method == "enumerate" => true,
        Expr::MethodCall(m)
            if matches!(
                m.method.to_string().as_str(),
                "rev"
                    | "skip"
                    | "take"
                    | "step_by"
                    | "filter"
                    | "skip_while"
                    | "take_while"
                    | "peekable"
                    | "fuse"
            ) =>
        {
            yields_enumerated(&m.receiver)
        }
        Expr::Paren(p) => yields_enumerated(&p.expr),
        _ => false,
    }
}

/// The body of `vec![elem; n]`.
pub struct ExprRepeatBody(pub Expr);
impl syn::parse::Parse for ExprRepeatBody {
    fn parse(input: syn::parse::ParseStream) -> syn::Result<Self> {
        let e: Expr = input.parse()?;
        let _: syn::Token![;] = input.parse()?;
        let _: Expr = input.parse()?;
        Ok(ExprRepeatBody(e))
    }
}

/// The primitive types that carry no derivative.
pub const NO_TANGENT_PRIMITIVES: &[&str] = &[
    "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize", "bool",
    "char", "str",
];

/// An integer literal (`1`, `2usize`; not `2f64`, which syn reads as an integer with a
/// float's suffix).
fn integer_literal(e: &Expr) -> bool {
    match e {
        Expr::Lit(l) => matches!(&l.lit, syn::Lit::Int(i) if !matches!(i.suffix(), "f32" | "f64")),
        Expr::Paren(p) => integer_literal(&p.expr),
        Expr::Group(g) => integer_literal(&g.expr),
        _ => false,
    }
}
