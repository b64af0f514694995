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

/// Methods whose results never carry a derivative.
pub const INACTIVE_METHODS: &[&str] = &[
    "len",
    "is_empty",
    "shape",
    "dim",
    "raw_dim",
    "nrows",
    "ncols",
    "ndim",
    "strides",
    "is_nan",
    "is_finite",
    "is_infinite",
    "is_normal",
    "is_sign_positive",
    "is_sign_negative",
    "partial_cmp",
    "total_cmp",
    "cmp",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "to_bits",
    "is_standard_layout",
    "count",
    "len_of",
    "capacity",
    "contains",
    "is_square",
];

/// Types that never carry a derivative (parameters of these types are inactive).
pub fn type_is_inactive(ty: &Type) -> bool {
    match ty {
        Type::Path(p) => {
            let Some(last) = p.path.segments.last() else {
                return false;
            };
            let name = last.ident.to_string();
            if matches!(name.as_str(), "Vec" | "Option" | "Box" | "VecDeque") {
                if let syn::PathArguments::AngleBracketed(a) = &last.arguments {
                    if let Some(syn::GenericArgument::Type(t)) = a.args.first() {
                        return type_is_inactive(t);
                    }
                }
            }
            matches!(
                name.as_str(),
                "i8" | "i16"
                    | "i32"
                    | "i64"
                    | "i128"
                    | "isize"
                    | "u8"
                    | "u16"
                    | "u32"
                    | "u64"
                    | "u128"
                    | "usize"
                    | "bool"
                    | "char"
                    | "str"
                    | "String"
                    | "Axis"
                    | "NoTangent"
            )
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

/// Casts to these types keep a derivative.
pub fn is_float_type(ty: &Type) -> bool {
    matches!(ty, Type::Path(p) if p.path.is_ident("f64") || p.path.is_ident("f32"))
}

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
            if INACTIVE_METHODS.contains(&name.as_str()) {
                return false;
            }
            expr_is_active(&m.receiver, active) || m.args.iter().any(|a| expr_is_active(a, active))
        }
        Expr::Call(c) => {
            if let Expr::Path(p) = &*c.func {
                if p.path.segments.last().is_some_and(|s| s.ident == "no_grad") {
                    return false;
                }
            }
            c.args.iter().any(|a| expr_is_active(a, active))
        }
        Expr::Index(i) => expr_is_active(&i.expr, active),
        Expr::Field(f) => expr_is_active(&f.base, active),
        Expr::Cast(c) => is_float_type(&c.ty) && expr_is_active(&c.expr, active),
        Expr::Paren(p) => expr_is_active(&p.expr, active),
        Expr::Group(g) => expr_is_active(&g.expr, active),
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
            // vec![a, b] and vec![a; n] carry their elements.
            if m.mac.path.is_ident("vec") {
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
        Expr::Closure(c) => expr_is_active(&c.body, active),
        _ => false,
    }
}

fn block_value_active(b: &syn::Block, active: &HashSet<String>) -> bool {
    match b.stmts.last() {
        Some(Stmt::Expr(e, None)) => expr_is_active(e, active),
        _ => false,
    }
}

/// Grows `active` to a fixpoint over every binding and assignment in `block`.
pub fn analyse(block: &syn::Block, active: &mut HashSet<String>) {
    loop {
        let before = active.len();
        let mut v = Grow { active };
        v.visit_block(block);
        if active.len() == before {
            break;
        }
    }
}

struct Grow<'a> {
    active: &'a mut HashSet<String>,
}

impl Grow<'_> {
    fn mark_place(&mut self, place: &Expr) {
        match place {
            Expr::Path(p) => {
                if let Some(i) = p.path.get_ident() {
                    self.active.insert(i.to_string());
                }
            }
            Expr::Index(i) => self.mark_place(&i.expr),
            Expr::Field(f) => self.mark_place(&f.base),
            Expr::Paren(p) => self.mark_place(&p.expr),
            Expr::Unary(u) => self.mark_place(&u.expr),
            _ => {}
        }
    }
}

impl<'ast> Visit<'ast> for Grow<'_> {
    fn visit_local(&mut self, l: &'ast syn::Local) {
        if let Some(init) = &l.init {
            if expr_is_active(&init.expr, self.active) {
                let mut names = Vec::new();
                pat_names(&l.pat, &mut names);
                self.active.extend(names);
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
        use syn::BinOp::*;
        if matches!(
            b.op,
            AddAssign(_) | SubAssign(_) | MulAssign(_) | DivAssign(_) | RemAssign(_)
        ) && expr_is_active(&b.right, self.active)
        {
            self.mark_place(&b.left);
        }
        syn::visit::visit_expr_binary(self, b);
    }
    fn visit_expr_for_loop(&mut self, f: &'ast syn::ExprForLoop) {
        if expr_is_active(&f.expr, self.active) {
            let mut names = Vec::new();
            pat_names(&f.pat, &mut names);
            // `(i, v)` of `.enumerate()`: the index stays inactive.
            if iterates_enumerated(&f.expr) && names.len() > 1 {
                names.remove(0);
            }
            self.active.extend(names);
        }
        syn::visit::visit_expr_for_loop(self, f);
    }
    fn visit_expr_closure(&mut self, _c: &'ast syn::ExprClosure) {
        // A closure's bindings are local to it; they are analysed when it is lowered.
    }
}

/// `x.iter().enumerate()` and friends.
pub fn iterates_enumerated(e: &Expr) -> bool {
    matches!(e, Expr::MethodCall(m) if m.method == "enumerate")
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
