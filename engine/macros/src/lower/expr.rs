//! Lowering expressions: every operation on active values becomes a rule call.

use super::ir::{AccKind, Adj, Fwd, Rev};
use super::{mentions_any, Code, Hoisting, Lowerer, Operand, ParamSpec, Place};
use crate::activity::{self, expr_is_active, INACTIVE_METHODS};
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};
use std::collections::HashSet;
use syn::{Expr, Pat};

/// The standard library's methods that return their receiver's values unchanged
/// (`Clone`, `ToOwned`, `slice::to_vec`, `Cow::into_owned`, `Vec::as_slice`): the
/// result's cotangent flows to the receiver. A rule crate's own identities (an array's
/// `view()`) are rules with the kit's `IdentityPullback`.
const IDENTITY_METHODS: &[&str] = &["clone", "to_owned", "to_vec", "into_owned", "as_slice"];

/// Whether `name` is a method of floats, sequences, arrays or the standard library (a
/// rule's), not one of a struct of the user's.
pub fn is_library_method(n: &str) -> bool {
    crate::twin::FLOAT_METHODS.contains(&n)
        || crate::twin::SEQ_METHODS.contains(&n)
        || crate::twin::ARRAY_METHODS.contains(&n)
        || LIBRARY_METHODS.contains(&n)
        || IDENTITY_METHODS.contains(&n)
        || INACTIVE_METHODS.contains(&n)
        || SHRINKING_METHODS.contains(&n)
        || GROWING_METHODS.contains(&n)
        || n.starts_with("op_")
}

/// Methods of the standard rule crates' types (ndarray, nalgebra, linalg) and of the
/// standard library that a struct field or an element may have: a call of one of these
/// on a field or an element goes to its rule, and of any other name to the method of a
/// struct of the user's (`self.layers[k].forward(x)`).
const LIBRARY_METHODS: &[&str] = &[
    "add_scalar",
    "and",
    "broadcast",
    "cholesky",
    "column",
    "columns",
    "component_div",
    "component_mul",
    "cross",
    "determinant",
    "diag",
    "dim",
    "dot",
    "flatten",
    "index_axis",
    "insert_axis",
    "into_shape",
    "into_shape_with_order",
    "inverse",
    "is_square",
    "is_standard_layout",
    "kron",
    "len_of",
    "ln_determinant",
    "lu",
    "mean",
    "mean_axis",
    "ncols",
    "ndim",
    "norm",
    "norm_l2",
    "norm_squared",
    "normalize",
    "nrows",
    "outer",
    "product",
    "product_axis",
    "raw_dim",
    "reversed_axes",
    "permuted_axes",
    "swapped_axes",
    "row",
    "rows",
    "scaled_add",
    "select",
    "shape",
    "slice",
    "slice_axis",
    "slice_mut",
    "solve",
    "std",
    "std_axis",
    "strides",
    "sum",
    "sum_axis",
    "t",
    "to_shape",
    "tr_mul",
    "trace",
    "transpose",
    "tril",
    "triu",
    "try_inverse",
    "var",
    "var_axis",
    "view",
    "view_mut",
    "mapv",
    "map",
    "map_inplace",
    "mapv_inplace",
    "fold",
    "iter",
    "iter_mut",
    "len",
    "is_empty",
    "get",
    "get_mut",
    "first",
    "last",
    "to_vec",
    "clone",
    "unwrap",
    "expect",
    "into_iter",
    "as_slice",
    "outer_iter",
    "axis_iter",
    "axis_chunks_iter",
    "lanes",
    "assign",
    "fill",
    "push",
    "extend",
    "pop",
    "insert",
    "remove",
    "resize",
    "swap",
    "contains",
    "keys",
    "values",
    "entry",
    "as_ref",
    "as_mut",
    "borrow",
    "into",
    "try_into",
    "to_string",
    "fmt",
    "cmp",
    "eq",
    "ne",
    "partial_cmp",
    "total_cmp",
    "hash",
    "copied",
    "cloned",
    "zip",
    "enumerate",
    "windows",
    "chunks",
    "split_at",
    "abs_diff",
    "min",
    "max",
    "clamp",
    "sort_by",
    "reverse",
    "dot_product",
    "norm1",
    "amax",
    "amin",
    "xyz",
    "xy",
    "coords",
    "x",
    "y",
    "z",
    "w",
    "ok",
    "err",
    "is_some",
    "is_none",
    "unwrap_or",
    "map_or",
];

impl Lowerer {
    /// Lowers an expression to an operand, emitting forward statements and reverse pieces.
    pub(super) fn lower_expr(&mut self, e: &Expr, code: &mut Code) -> Operand {
        let outer = self.span;
        self.span = syn::spanned::Spanned::span(e);
        let o = self.lower_expr_here(e, code);
        self.span = outer;
        o
    }

    fn lower_expr_here(&mut self, e: &Expr, code: &mut Code) -> Operand {
        // An assignment where a value is read (a block's or a closure's tail, `{ acc +=
        // v }`): the assignment, then its value `()`.
        let assigns = match e {
            Expr::Assign(_) => true,
            Expr::Binary(b) => activity::is_arithmetic_assign(&b.op),
            _ => false,
        };
        if assigns {
            self.lower_expr_stmt(e, code);
            return Operand::Inactive(quote!(()));
        }
        match e {
            Expr::Paren(p) => return self.lower_expr(&p.expr, code),
            Expr::Group(g) => return self.lower_expr(&g.expr, code),
            Expr::Path(p) => {
                if let Some(i) = p.path.get_ident() {
                    if let Some(b) = self.lookup(&i.to_string()) {
                        if b.active {
                            return Operand::Active {
                                val: quote!(#i),
                                cot: b.cot.clone(),
                                is_ref: b.is_ref,
                            };
                        }
                    }
                }
                return Operand::Inactive(quote!(#e));
            }
            Expr::If(_) | Expr::Match(_) | Expr::Block(_) if mentions_any(e, &self.active) => {
                return self
                    .lower_control_value(e, code, true)
                    .unwrap_or(Operand::Inactive(quote!(())));
            }
            // The forms `desugar` rewrites (`let v = loop { … }`, `x = loop { … }`, a
            // block's value) are gone by now; a valued `loop` anywhere else would lose
            // the derivative of its value.
            Expr::Loop(l)
                if crate::desugar::breaks_with_value(
                    &l.body,
                    l.label.as_ref().map(|l| &l.name),
                ) =>
            {
                self.err(&l.loop_token, "mochi: a `loop` whose value is used inside an expression is not supported; bind it first (`let v = loop { … };`)");
                return Operand::Inactive(quote!(#e));
            }
            Expr::Unsafe(u) => {
                self.err(&u.unsafe_token, "mochi: `unsafe` blocks cannot be differentiated; move the unsafe code into a function with its own rule");
                return Operand::Inactive(quote!(#e));
            }
            Expr::Async(a) => {
                self.err(
                    &a.async_token,
                    "mochi: `async` blocks cannot be differentiated",
                );
                return Operand::Inactive(quote!(#e));
            }
            Expr::Await(a) => {
                self.err(a, "mochi: `.await` cannot be differentiated");
                return Operand::Inactive(quote!(#e));
            }
            Expr::Try(t) => {
                self.err(t, "mochi: the `?` operator is not supported in differentiable code; handle the error outside, or `match` on it");
                return Operand::Inactive(quote!(#e));
            }
            Expr::Closure(c) => {
                self.err(c, "mochi: closures are differentiated only as the argument of an adapter method (`mapv`, `map`, `fold`, `iter().map(..).sum()`, …); write a `#[differentiable]` function instead");
                return Operand::Inactive(quote!(#e));
            }
            _ => {}
        }
        // A value without a derivative made from a call that writes a differentiable
        // value (`r.push(v).is_some()` of a `&mut self` method, `bump(&mut s) as
        // usize`): written as is, the write's derivative was lost. The call, where it is
        // evaluated first, is lowered and its value bound; elsewhere in the expression
        // it is an error. (The call itself is lowered as one with a derivative.)
        let lends_itself = self.lends_active(crate::desugar::unparen(e));
        if !lends_itself && !expr_is_active(e, &self.active) {
            let mut rest = e.clone();
            if let Some(place) = self.first_lender(&mut rest) {
                let t = self.fresh("lent");
                let call = std::mem::replace(place, syn::parse_quote!(#t));
                let o = self.lower_expr(&call, code);
                let v = o.val();
                code.fwd.push(Fwd::Primal(
                    quote!(let #t = ::core::clone::Clone::clone(&#v);),
                ));
                return self.lower_expr(&rest, code);
            }
            if let Some(call) = self.lender_in(e) {
                self.err(call, "mochi: a call that writes a differentiable value (`&mut` of one, or a `&mut self` method of the crate's) is supported here only where it is evaluated first (`r.push(v).is_some()`); bind its result first (`let o = r.push(v);`) and use that");
                return Operand::Inactive(quote!(#e));
            }
            if let Expr::Macro(m) = e {
                self.check_constant_macro(m, code);
            }
            if contains_unsupported(e) {
                self.err(e, "mochi: `unsafe`, `async` and raw pointers cannot appear in differentiable code; move them into a function with its own rule");
            }
            return Operand::Inactive(self.lengths_checked(e));
        }
        match e {
            Expr::Binary(b) => {
                use syn::BinOp::*;
                let m = match b.op {
                    Add(_) => "op_add",
                    Sub(_) => "op_sub",
                    Mul(_) => "op_mul",
                    Div(_) => "op_div",
                    Rem(_) => "op_rem",
                    _ => return Operand::Inactive(quote!(#e)),
                };
                // An operand borrowed as written (`&w * x`) is the value it borrows, as
                // an active one is: the rules take their operands by reference.
                // (Also in parentheses: `c += &e` is lowered as `c + (&e)`.)
                let unborrow = |x: &Expr| -> Expr {
                    match crate::desugar::unparen(x) {
                        Expr::Reference(r) if r.mutability.is_none() => (*r.expr).clone(),
                        _ => x.clone(),
                    }
                };
                let (left, right) = (unborrow(&b.left), unborrow(&b.right));
                let l = match self.typed_literal(&left, Some(&right)) {
                    Some(lit) => Operand::Inactive(lit),
                    None => self.lower_expr(&left, code),
                };
                let r = match self.typed_literal(&right, Some(&left)) {
                    Some(lit) => Operand::Inactive(lit),
                    None => self.lower_expr(&right, code),
                };
                self.span = syn::spanned::Spanned::span(&b.op);
                // A constant factor or divisor: the pullback keeps only what the other
                // operand's partial needs (`kit::keep`).
                let constant = |o: &Operand| matches!(o, Operand::Inactive(_));
                let keep = match (m, constant(&l), constant(&r)) {
                    ("op_mul", true, false) => Some(0),
                    ("op_mul" | "op_div", false, true) => Some(1),
                    // A square written as a product (`x[i] * x[i]`, `e * e`): both
                    // factors are one value, kept once (`kit::keep`, `K = 2`).
                    ("op_mul", false, false) if same_value(&left, &right) => Some(2),
                    _ => None,
                };
                // In a loop, operands that are the same on every trip make the pullback
                // the same too, and a constant that is makes the pruned one the same:
                // kept once (`kit::hoist`).
                let hoist = if self.invariant(&left) && self.invariant(&right) {
                    Hoisting::Operands
                } else if keep
                    .is_some_and(|k| k < 2 && self.invariant(if k == 0 { &left } else { &right }))
                {
                    Hoisting::Constants
                } else {
                    Hoisting::PerTrip
                };
                self.call_method_keeping(m, &[l, r], TokenStream::new(), keep, hoist, code)
            }
            Expr::Unary(u) => match u.op {
                syn::UnOp::Neg(_) => {
                    let x = self.lower_expr(&u.expr, code);
                    self.call_method("op_neg", &[x], TokenStream::new(), code)
                }
                syn::UnOp::Deref(_) => {
                    // `*r` of a reference (`r: &f64`, `r: &mut f64`): read through it.
                    if let Expr::Path(p) = &*u.expr {
                        if let Some(i) = p.path.get_ident() {
                            if let Some(b) = self.lookup(&i.to_string()) {
                                if b.active && b.is_ref {
                                    return Operand::Active {
                                        val: quote!((&*#i)),
                                        cot: b.cot.clone(),
                                        is_ref: true,
                                    };
                                }
                            }
                        }
                    }
                    // `*v` of a value bound by value: the identity.
                    self.lower_expr(&u.expr, code)
                }
                _ => Operand::Inactive(quote!(#e)),
            },
            Expr::Reference(r) => {
                if r.mutability.is_some() {
                    self.err(r, "mochi: `&mut` of a differentiable value is supported only as an argument of a function call (`step(&mut v, x)`; a method by its path, `Rows::scale_with(&r, &mut v, a)`); otherwise write the elements by index (`for i in 0..n { let t = a[i]; a[i] = b[i]; b[i] = t; }` swaps two slices)");
                }
                self.lower_expr(&r.expr, code)
            }
            Expr::Cast(c) => {
                let ty = &c.ty;
                if activity::is_integer_type(ty) || !expr_is_active(&c.expr, &self.active) {
                    return Operand::Inactive(quote!(#e));
                }
                // `f64`, `f32`, and paths ending in them (`std::primitive::f64`).
                let last = match &**ty {
                    syn::Type::Path(p) if p.qself.is_none() => {
                        p.path.segments.last().map(|s| s.ident.to_string())
                    }
                    _ => None,
                };
                let m = match last.as_deref() {
                    Some("f64") => "op_as_f64",
                    Some("f32") => "op_as_f32",
                    _ if matches!(&**ty, syn::Type::Infer(_)) => {
                        self.err(
                            ty,
                            "mochi: `as _` of a value with a derivative: write the type it is cast to (`as f64`), so that the cast's rule can be chosen",
                        );
                        return Operand::Inactive(quote!(#e));
                    }
                    // Any other type (an alias, `type Real = f64;`): the rule is chosen by
                    // the type it stands for.
                    _ => {
                        let x = self.lower_expr(&c.expr, code);
                        return self.call_method(
                            "op_as",
                            &[x],
                            quote!(::core::marker::PhantomData::<#ty>),
                            code,
                        );
                    }
                };
                let x = self.lower_expr(&c.expr, code);
                self.call_method(m, &[x], TokenStream::new(), code)
            }
            // `x[a..b]` as a method's receiver (`x[a..b].iter().sum()`, what a chunk's
            // `c.iter()` becomes): the sub-slice, as `&x[a..b]`.
            Expr::Index(i) if matches!(&*i.index, Expr::Range(_)) => {
                let r: Expr = syn::parse_quote!(&#e);
                match self.subslice_arg(&r, code) {
                    Some((o, back)) => {
                        code.rev.push(back);
                        o
                    }
                    None => self.lower_computed_place(e, code),
                }
            }
            Expr::Index(_) | Expr::Field(_) => match Place::parse(e) {
                Some(place) => match self.lookup(&place.root.to_string()).cloned() {
                    Some(b) if b.active => self.lower_place_read(&place, &b, code),
                    _ => self.lower_computed_place(e, code),
                },
                None => self.lower_computed_place(e, code),
            },
            Expr::MethodCall(m) => self.lower_method(m, code),
            Expr::Call(c) => self.lower_call(c, code),
            Expr::Tuple(t) => {
                let ops: Vec<Operand> = t.elems.iter().map(|x| self.lower_expr(x, code)).collect();
                // `(&v, s)` holds a reference, as written (its cotangent is `v`'s).
                let vals: Vec<TokenStream> = t
                    .elems
                    .iter()
                    .zip(&ops)
                    .map(|(x, o)| match x {
                        Expr::Reference(r) if r.mutability.is_none() => {
                            let v = o.val();
                            quote!(&#v)
                        }
                        _ => self.by_value(o, x),
                    })
                    .collect();
                self.aggregate(
                    quote!((#(#vals,)*)),
                    &ops,
                    |i| {
                        let idx = syn::Index::from(i);
                        quote!(.#idx)
                    },
                    code,
                )
            }
            Expr::Array(a) => {
                let ops: Vec<Operand> = a.elems.iter().map(|x| self.lower_expr(x, code)).collect();
                let vals: Vec<TokenStream> = a
                    .elems
                    .iter()
                    .zip(&ops)
                    .map(|(x, o)| self.by_value(o, x))
                    .collect();
                let t = self.fresh("t");
                code.fwd.push(Fwd::Let {
                    name: t.clone(),
                    value: quote!([#(#vals,)*]),
                });
                let (cot, pin) = self.new_cot(&quote!(#t));
                code.fwd.push(pin);
                code.rev.push(Rev::SplitArray {
                    from: cot.clone(),
                    len: ops.len(),
                    parts: ops
                        .iter()
                        .enumerate()
                        .filter_map(|(k, o)| o.cot().map(|c| (k, c.clone())))
                        .collect(),
                });
                Operand::Active {
                    val: quote!(#t),
                    cot,
                    is_ref: false,
                }
            }
            Expr::Struct(s) => {
                if s.rest.is_some() {
                    self.err(s, "mochi: struct update syntax `..base` is not supported in differentiable code; list every field");
                }
                let path = &s.path;
                // `Shape::Circle { r: x[0] }`: a variant of the user's enum (a type and a
                // variant, both capitalised) given a value with a derivative. An enum
                // deriving `Tangent` is a choice, its settings constants: the derivative
                // would stop there.
                let segs: Vec<String> = path.segments.iter().map(|g| g.ident.to_string()).collect();
                let variant = matches!(&segs[..], [t, v]
                    if t != "Self" && [t, v].iter().all(|n| n.starts_with(|c: char| c.is_ascii_uppercase())));
                if variant
                    && s.fields
                        .iter()
                        .any(|f| expr_is_active(&f.expr, &self.active))
                {
                    self.variant_with_derivative(s, &segs);
                    return Operand::Inactive(quote!(()));
                }
                let mut ops = Vec::new();
                let mut members = Vec::new();
                for f in &s.fields {
                    ops.push(self.lower_expr(&f.expr, code));
                    members.push(f.member.clone());
                }
                let inits = members.iter().zip(&ops).map(|(m, o)| {
                    let v = o.val();
                    quote!(#m: #v)
                });
                let value = quote!(#path { #(#inits,)* });
                let ms = members.clone();
                self.aggregate(
                    value,
                    &ops,
                    move |i| {
                        let m = &ms[i];
                        quote!(.#m)
                    },
                    code,
                )
            }
            Expr::Repeat(r) => {
                self.err(r, "mochi: `[x; n]` of a differentiable value is supported for a literal `n` up to 64; fill the array in a loop, or use `vec![x; n]`");
                Operand::Inactive(quote!(#e))
            }
            Expr::Macro(m) => {
                let name = macro_name(&m.mac);
                self.err(m, format!("mochi: the macro `{name}!` cannot take differentiable values; build the value with a loop or an explicit expression"));
                Operand::Inactive(quote!(#e))
            }
            Expr::Lit(_) => Operand::Inactive(quote!(#e)),
            other => {
                self.err(other, "mochi: this expression cannot be differentiated; write a rule for it, wrap a constant in `mochi::no_grad(..)`, or restructure the code");
                Operand::Inactive(quote!(#e))
            }
        }
    }

    /// A macro whose value is used as a constant (the macro cannot be differentiated).
    ///
    /// The standard library's macros whose values carry no derivative (`format!`,
    /// `matches!`, …) and any macro that mentions no active name are constants.
    /// Otherwise the macro's arguments are read as expressions, and each active name in
    /// an active argument must be of a type without a derivative (an index that the
    /// analysis over-approximated as active, such as a rule crate's shape query): a
    /// compile-time check in the forward sweep, failing with the `Constant` trait's
    /// message at the value (`twice!(x)` with `x: f64`). A body that does not read as
    /// expressions is rejected when it mentions an active name.
    fn check_constant_macro(&mut self, m: &syn::ExprMacro, code: &mut Code) {
        let name = macro_name(&m.mac);
        if is_std_value_macro(&name) || !activity::mentions_active(m, &self.active) {
            return;
        }
        let Some(args) = macro_args(&m.mac) else {
            self.err(m, format!("mochi: the macro `{name}!` cannot be differentiated; expand it by hand, or wrap a constant in `mochi::no_grad(..)`"));
            return;
        };
        fn idents(ts: TokenStream, out: &mut Vec<proc_macro2::Ident>) {
            for t in ts {
                match t {
                    proc_macro2::TokenTree::Ident(i) => out.push(i),
                    proc_macro2::TokenTree::Group(g) => idents(g.stream(), out),
                    _ => {}
                }
            }
        }
        let mut names = Vec::new();
        for a in args.iter().filter(|a| expr_is_active(a, &self.active)) {
            idents(quote!(#a), &mut names);
        }
        let mut seen = HashSet::new();
        for i in names {
            let n = i.to_string();
            if self.active.contains(&n) && seen.insert(n) {
                // The check carries the name's span: an error points at the value.
                let span = i.span();
                code.fwd.push(Fwd::Primal(
                    quote::quote_spanned!(span=> ::mochi::__private::constant_in_macro(&#i);),
                ));
            }
        }
    }

    /// A tuple/struct built from operands; the reverse splits its cotangent by member.
    fn aggregate(
        &mut self,
        value: TokenStream,
        ops: &[Operand],
        member: impl Fn(usize) -> TokenStream,
        code: &mut Code,
    ) -> Operand {
        let t = self.fresh("t");
        code.fwd.push(Fwd::Let {
            name: t.clone(),
            value,
        });
        let (cot, pin) = self.new_cot(&quote!(#t));
        code.fwd.push(pin);
        code.rev.push(Rev::Split {
            from: cot.clone(),
            parts: ops
                .iter()
                .enumerate()
                .filter_map(|(i, o)| o.cot().map(|c| (member(i), c.clone())))
                .collect(),
        });
        Operand::Active {
            val: quote!(#t),
            cot,
            is_ref: false,
        }
    }

    /// `Call((args…)).method(extra)` as a rule call.
    fn call_method(
        &mut self,
        method: &str,
        args: &[Operand],
        extra: TokenStream,
        code: &mut Code,
    ) -> Operand {
        self.call_method_keeping(method, args, extra, None, Hoisting::PerTrip, code)
    }

    /// [`call_method`](Self::call_method) with a constant argument `keep`, and what of
    /// the call is loop-invariant ([`rule_call_keeping`](Self::rule_call_keeping)).
    fn call_method_keeping(
        &mut self,
        method: &str,
        args: &[Operand],
        extra: TokenStream,
        keep: Option<usize>,
        hoist: Hoisting,
        code: &mut Code,
    ) -> Operand {
        let span = self.span;
        let m = format_ident!("{}", method, span = span);
        self.note_rule_method(method, &extra);
        // An element bound by reference from a loop over a constant sequence (`p` in
        // `for p in points.iter()`) is the element it refers to, as `p - c` is in Rust.
        let refs: Vec<TokenStream> = args
            .iter()
            .map(|a| match a {
                Operand::Inactive(e) => match syn::parse2::<syn::Ident>(e.clone()) {
                    Ok(i)
                        if self
                            .lookup(&i.to_string())
                            .is_some_and(|b| !b.active && b.is_ref) =>
                    {
                        quote!(&*#i)
                    }
                    _ => a.arg(),
                },
                _ => a.arg(),
            })
            .collect();
        let call = match keep {
            // A constant operand, said before the call (`kit::keep::KeepCall`): a rule
            // whose forward copies its operands copies only what the other's partial reads.
            Some(k) if k < 2 && extra.is_empty() && matches!(method, "op_mul" | "op_div") => {
                let keep_m = format_ident!("keep_{}", method, span = span);
                quote!(::mochi::__private::KeepCall::<_, #k>::new(
                    ::mochi::__private::Call((#(#refs,)*))
                ).#keep_m().#m())
            }
            _ => quote!(::mochi::__private::Call((#(#refs,)*)).#m(#extra)),
        };
        self.rule_call_keeping(call, args, keep, hoist, code)
    }

    /// Indexing or field access on something that is not a variable: bind it first.
    fn lower_computed_place(&mut self, e: &Expr, code: &mut Code) -> Operand {
        let (base, rest): (&Expr, Box<dyn Fn(TokenStream) -> Expr>) = match e {
            Expr::Index(i) => {
                let idx = i.index.clone();
                (&i.expr, Box::new(move |b| syn::parse_quote!(#b[#idx])))
            }
            Expr::Field(f) => {
                let m = f.member.clone();
                (&f.base, Box::new(move |b| syn::parse_quote!(#b.#m)))
            }
            _ => unreachable!(),
        };
        let o = self.lower_expr(base, code);
        let Operand::Active { val, cot, is_ref } = o else {
            return Operand::Inactive(quote!(#e));
        };
        // Bind the base to a temporary variable and read the place from it.
        let tmp = self.fresh("b");
        code.fwd.push(Fwd::Let {
            name: tmp.clone(),
            value: val,
        });
        let (tc, pin) = self.new_cot(&quote!(#tmp));
        code.fwd.push(pin);
        code.rev.push(Rev::Acc {
            into: cot,
            value: Adj::Take(tc.clone()),
            how: AccKind::Plain,
        });
        let b = super::Binding {
            active: true,
            cot: tc,
            is_ref,
            recompute: false,
            param: false,
            fixed: false,
        };
        let place_expr = rest(quote!(#tmp));
        let place = Place::parse(&place_expr).expect("a variable with one accessor is a place");
        self.lower_place_read(&place, &b, code)
    }

    fn lower_method(&mut self, m: &syn::ExprMethodCall, code: &mut Code) -> Operand {
        let name = m.method.to_string();
        // (Also a method of the user's whose result carries no derivative, `p.degree()`.)
        if INACTIVE_METHODS.contains(&name.as_str()) || crate::twin::plain_user_method(&name) {
            return Operand::Inactive(quote!(#m));
        }
        // Iterator chains over sequences: x.iter()….sum() and friends.
        if let Some(o) = self.lower_iter_chain(m, code) {
            return o;
        }
        // `self.layers[k].forward(x)`, `self.inner.forward(x)`, `layers[k].forward(x)`:
        // a method of a struct of the user's on an element or a field (whose type the
        // macro cannot see), by name: its derived rule `forward_rrule`, called with
        // method syntax on a borrow of the place.
        if let Some(o) = self.lower_user_method(m, &name, code) {
            return o;
        }
        // `x.map(f64::exp)`, `a.zip_with(&b, f64::max)`: a function path (`f64::exp`, a
        // path of two or more segments ending in a lowercase name; or any path as the
        // only argument of `map`) as a method's last argument is where an adapter takes
        // a closure; it is the closure `|v, w, …| f64::max(v, w, …)` with one parameter
        // per argument of the method.
        if let Some(Expr::Path(p)) = m.args.last() {
            let fn_like = p.qself.is_none()
                && p.path.segments.len() >= 2
                && p.path.segments.last().is_some_and(|s| {
                    s.ident
                        .to_string()
                        .starts_with(|c: char| c.is_lowercase() || c == '_')
                });
            if fn_like || (name == "map" && m.args.len() == 1) {
                let f = m.args.last().cloned();
                let params: Vec<_> = (0..m.args.len())
                    .map(|i| format_ident!("__mochi_v{}", i))
                    .collect();
                let mut with_closure = m.clone();
                *with_closure.args.last_mut().unwrap() =
                    syn::parse_quote!(|#(#params),*| #f(#(#params),*));
                return self.lower_method(&with_closure, code);
            }
        }
        let closure_count = m
            .args
            .iter()
            .filter(|a| matches!(a, Expr::Closure(_)))
            .count();
        if closure_count > 1 {
            self.err(
                m,
                "mochi: an adapter with more than one closure is not supported",
            );
            return Operand::Inactive(quote!(#m));
        }
        // Methods that grow or rewrite their receiver in place with new data: their
        // cotangent would have to follow the receiver's changing length.
        // Searches that return an element by reference.
        if matches!(name.as_str(), "find" | "rfind" | "find_map")
            && activity::mentions_active(&m.receiver, &self.active)
        {
            self.err(
                &m.method,
                format!("mochi: `.{name}(..)` over a differentiable sequence is not supported; take the index with `.position(..)` (it carries no derivative) and read `x[k]`, or loop with `for` and `break`"),
            );
            return Operand::Inactive(quote!(#m));
        }
        // Fallible folds: their closure's `None`/`Err` ends the walk early.
        if matches!(name.as_str(), "try_fold" | "try_for_each")
            && activity::mentions_active(&m.receiver, &self.active)
        {
            self.err(
                &m.method,
                if name == "try_fold" {
                    "mochi: `.try_fold(..)` over a differentiable sequence is supported when its closure's results are written `Some(..)`/`None` or `Ok(..)`/`Err(..)` and it has no `?` or `return` of its own, not here; write the walk as a `for` loop over the sequence, with `break` where the closure gives `None` or `Err`".to_string()
                } else {
                    format!("mochi: `.{name}(..)` over a differentiable sequence is not supported; write the walk as a `for` loop over the sequence, with `break` (or `return`, or `?`) where the closure gives `None` or `Err`")
                },
            );
            return Operand::Inactive(quote!(#m));
        }
        if SHRINKING_METHODS.contains(&name.as_str()) && expr_is_active(&m.receiver, &self.active) {
            self.err(
                &m.method,
                if matches!(name.as_str(), "pop" | "remove" | "swap_remove") {
                    format!("mochi: `.{name}(..)` of a differentiable buffer is supported as a statement (`v.pop();`, `v.remove(i);`, `v.swap_remove(i);`) or bound whole (`let x = v.pop().unwrap();`, `let x = v.remove(i);`, `let x = v.swap_remove(i);`, `if let Some(x) = v.pop() {{ .. }}`) on a `Vec` the function binds with `let mut`, not here; write it so, or read the buffer by index (`for i in (0..v.len()).rev()`)")
                } else if matches!(name.as_str(), "pop_back" | "pop_front") {
                    format!("mochi: `.{name}(..)` changes the length of a differentiable buffer, which is not supported; read it by index (`for i in (0..v.len()).rev()`) instead")
                } else {
                    format!("mochi: `.{name}(..)` changes the length of a differentiable buffer, which is not supported; make a new `Vec` of the elements to keep (`let w = v[..n].to_vec();`, `let w: Vec<f64> = v.iter().copied().filter(..).collect();`) and use it")
                },
            );
            return Operand::Inactive(quote!(#m));
        }
        // `p.push(1.0)` of a local no binding of which is `mut`: not `Vec::push`, which
        // needs one, but a method answering a longer value (nalgebra's, a point in
        // homogeneous coordinates), a rule like any other.
        let by_value = name == "push"
            && matches!(crate::desugar::unparen(&m.receiver), Expr::Path(p)
                if p.path.get_ident().and_then(|i| self.lookup(&i.to_string()))
                    .is_some_and(|b| b.fixed && !b.param && !b.is_ref));
        if !by_value {
            if let Some(o) = self.lower_growth(m, code) {
                return o;
            }
        }
        if GROWING_METHODS.contains(&name.as_str())
            && !by_value
            && m.args.iter().any(|a| mentions_any(a, &self.active))
        {
            let into_element = matches!(crate::desugar::unparen(&m.receiver), Expr::Index(_));
            let msg = if into_element && matches!(name.as_str(), "push" | "extend_from_slice") {
                format!("mochi: `.{name}(..)` of a differentiable value onto an element of a buffer (a row `m[i]` of a `Vec<Vec<f64>>`) is not supported; build the row as its own `Vec` (`let mut row = Vec::new(); row.push(..);`) and push it whole (`m.push(row)`), or allocate the rows at their final length (`vec![vec![0.0; n]; k]`) and write `m[i][j] = ..`")
            } else if matches!(name.as_str(), "push" | "extend_from_slice") {
                format!("mochi: `.{name}(..)` of a differentiable value into this buffer is not supported (the derivation grows a local `Vec` named by a variable, `v.push(..)`); push into such a `Vec`, or allocate it at its final length (`vec![0.0; n]`, a `zeros(n)` constructor) and write `y[i] = ..`")
            } else if name == "insert" {
                "mochi: `.insert(..)` of a differentiable value is supported as a statement (`v.insert(i, e);`) on a `Vec` the function binds with `let mut`, not here; build such a `Vec` (`let mut w = v.to_vec();`), or grow it with `push(..)` at its end. A map or a set (`HashMap`, `BTreeMap`, …) cannot hold differentiable values (it has no tangent type): keep them in a `Vec` indexed by position (a key's position from a map of constants, `index[&k]`)".to_string()
            } else {
                format!("mochi: `.{name}(..)` of a differentiable value into a buffer is not supported; grow it with `push(..)` or `extend_from_slice(..)` at its end, or allocate it at its final length (`vec![0.0; n]`, a `zeros(n)` constructor) and write `y[i] = ..`")
            };
            self.err(&m.method, msg);
            return Operand::Inactive(quote!(#m));
        }
        let recv = self.lower_expr(&m.receiver, code);
        if IDENTITY_METHODS.contains(&name.as_str()) && m.args.is_empty() {
            let v = recv.val();
            let method = &m.method;
            // The copy's cotangent type may differ from the receiver's (`a.to_vec()` of
            // an array: a `Vec` into an `Array1`).
            return self.derived_value(quote!(#v.#method()), &recv, AccKind::From, code);
        }
        // `Result`/`Option` of a differentiable value: the value's cotangent is the
        // wrapper's.
        if matches!(name.as_str(), "unwrap" | "expect")
            && !m.args.iter().any(|a| expr_is_active(a, &self.active))
        {
            let v = recv.val();
            let method = &m.method;
            let args = &m.args;
            return self.unwrap_value(quote!(#v.#method(#args)), &recv, code);
        }
        if closure_count == 1 {
            let mut ops = vec![recv];
            let mut closure = None;
            for a in &m.args {
                match a {
                    Expr::Closure(c) => closure = Some(c),
                    other => {
                        let o = self.lower_expr(other, code);
                        ops.push(o);
                    }
                }
            }
            let c = closure.unwrap();
            self.span = m.method.span();
            let by_ref = match name.as_str() {
                "map" | "for_each" => ByRef::All,
                "fold" => ByRef::AllButFirst,
                _ => ByRef::None,
            };
            let over = self.sequence_float(&m.receiver);
            return self.lower_adapter(&name, ops, (c, over), by_ref, code);
        }
        let mut ops = vec![recv];
        for a in &m.args {
            let o = match self.typed_literal(a, Some(&m.receiver)) {
                Some(lit) => Operand::Inactive(lit),
                None => match (self.lower_expr(a, code), a) {
                    // `x.dot(&w)` of a constant `w`: the rule takes `&w`, as it takes a
                    // differentiable argument's (not `&&w`).
                    (Operand::Inactive(_), Expr::Reference(r)) if r.mutability.is_none() => {
                        let inner = &r.expr;
                        Operand::Inactive(quote!(#inner))
                    }
                    (o, _) => o,
                },
            };
            ops.push(o);
        }
        self.span = m.method.span();
        // `sigma.ln()` in a loop, `sigma` bound once outside it: the same on every trip.
        let hoist = if self.invariant(&m.receiver) && m.args.iter().all(|a| self.invariant(a)) {
            Hoisting::Operands
        } else {
            Hoisting::PerTrip
        };
        self.call_method_keeping(&name, &ops, TokenStream::new(), None, hoist, code)
    }

    /// `x.iter().sum()`, `x.iter().map(f).sum()`, `x.iter().zip(y.iter()).map(f).sum()`,
    /// `x.iter().fold(init, f)`, `x.iter().product()` on active sequences.
    fn lower_iter_chain(&mut self, m: &syn::ExprMethodCall, code: &mut Code) -> Option<Operand> {
        let name = m.method.to_string();
        // (`sum::<Option<f64>>()`, `sum::<usize>()`: not a sum of floats, which the rules
        // are.)
        if let Some(t) = &m.turbofish {
            if t.args.iter().any(|a| {
                matches!(a, syn::GenericArgument::Type(t) if crate::activity::not_a_float_sum(t))
            }) {
                return None;
            }
        }
        let strip_iter = |e: &Expr| -> Option<Expr> {
            // x.iter() | x.iter().copied() | x.iter().cloned() | x.into_iter()
            if let Expr::MethodCall(c) = e {
                let n = c.method.to_string();
                if (n == "copied" || n == "cloned") && c.args.is_empty() {
                    if let Expr::MethodCall(i) = &*c.receiver {
                        if i.method == "iter" && i.args.is_empty() {
                            return Some((*i.receiver).clone());
                        }
                    }
                }
                if (n == "iter" || n == "into_iter") && c.args.is_empty() {
                    return Some((*c.receiver).clone());
                }
            }
            None
        };
        match name.as_str() {
            "sum" | "product" if m.args.is_empty() => {
                if let Some(x) = strip_iter(&m.receiver) {
                    if !expr_is_active(&x, &self.active) {
                        return None;
                    }
                    let xo = self.lower_expr(&x, code);
                    let rule = if name == "sum" {
                        "iter_sum"
                    } else {
                        "iter_product"
                    };
                    return Some(self.call_method(rule, &[xo], TokenStream::new(), code));
                }
                // x.iter().map(f).sum() / x.iter().zip(y.iter()).map(f).sum()
                let Expr::MethodCall(map) = &*m.receiver else {
                    return None;
                };
                if map.method != "map" || map.args.len() != 1 || name != "sum" {
                    return None;
                }
                let Expr::Closure(c) = &map.args[0] else {
                    return None;
                };
                if let Some(x) = strip_iter(&map.receiver) {
                    if !mentions_any(&map.receiver, &self.active)
                        && !expr_is_active(&map.args[0], &self.active)
                    {
                        return None;
                    }
                    let xo = self.lower_expr(&x, code);
                    let over = self.sequence_float(&x);
                    return Some(self.lower_adapter(
                        "iter_map_sum",
                        vec![xo],
                        (c, over),
                        ByRef::All,
                        code,
                    ));
                }
                let Expr::MethodCall(zip) = &*map.receiver else {
                    return None;
                };
                if zip.method != "zip" || zip.args.len() != 1 {
                    return None;
                }
                let x = strip_iter(&zip.receiver)?;
                let y = strip_iter(&zip.args[0]).or_else(|| match &zip.args[0] {
                    Expr::Reference(r) => Some((*r.expr).clone()),
                    other => Some(other.clone()),
                })?;
                let xo = self.lower_expr(&x, code);
                let yo = self.lower_expr(&y, code);
                // The closure takes one tuple `(a, b)`; split it into two parameters.
                let mut split = c.clone();
                if c.inputs.len() == 1 {
                    if let Pat::Tuple(t) = &c.inputs[0] {
                        split.inputs = t.elems.iter().cloned().collect();
                    }
                }
                let over = self.sequence_float(&x);
                Some(self.lower_adapter(
                    "iter_zip_map_sum",
                    vec![xo, yo],
                    (&split, over),
                    ByRef::All,
                    code,
                ))
            }
            "fold" if m.args.len() == 2 => {
                let x = strip_iter(&m.receiver)?;
                let Expr::Closure(c) = &m.args[1] else {
                    return None;
                };
                let xo = self.lower_expr(&x, code);
                let init = self.lower_expr(&m.args[0], code);
                let over = self.sequence_float(&x);
                Some(self.lower_adapter(
                    "iter_fold",
                    vec![xo, init],
                    (c, over),
                    ByRef::AllButFirst,
                    code,
                ))
            }
            _ => None,
        }
    }

    /// The other float type of a sequence's elements (`[a, b]`, `v.iter()` of such a
    /// `v`; see [`super::other_float`]).
    fn sequence_float(&self, e: &Expr) -> Option<Ident> {
        let mut root = e;
        while let Expr::MethodCall(r) = crate::desugar::unparen(root) {
            root = &r.receiver;
        }
        let own = self.float_ty.as_ref()?;
        super::other_float(root, own, &self.other_floats)
    }

    /// `v.push(e)` and `v.extend_from_slice(s)` on a differentiable `Vec` (a variable
    /// or a field of one): the forward sweep grows `v`; the reverse sweep takes the
    /// cotangents of the new elements off the end of `v`'s (nothing to take from a
    /// structural zero) and adds them into `e`'s or `s`'s. `None` for anything else.
    fn lower_growth(&mut self, m: &syn::ExprMethodCall, code: &mut Code) -> Option<Operand> {
        let name = m.method.to_string();
        if !matches!(name.as_str(), "push" | "extend_from_slice") || m.args.len() != 1 {
            return None;
        }
        let place = super::Place::parse(&m.receiver)?;
        if place.inner.is_some() {
            return None;
        }
        let b = self.lookup(&place.root.to_string())?.clone();
        if !b.active {
            return None;
        }
        // `m[i].push(v)` onto a row: the index (which carries no derivative) read once and
        // saved, the value's cotangent taken off the end of that row's.
        if let Some(ix) = &place.index {
            if expr_is_active(ix, &self.active) {
                return None;
            }
        }
        let (root, fields, cot) = (&place.root, &place.fields, &b.cot);
        let deref = place.deref.then(|| quote!(*));
        let (recv, row) = match &place.index {
            Some(ix) => {
                let i = self.fresh("i");
                code.fwd.push(Fwd::Primal(quote!(let #i: usize = #ix;)));
                let saved = self.save(quote!(#i), code);
                (quote!((#deref #root) #(.#fields)* [#i]), Some(saved))
            }
            None => (quote!((#deref #root) #(.#fields)*), None),
        };
        let cot_place = quote!(#cot #(.#fields)*);
        // A sub-slice `&x[a..b]`: its cotangent is a temporary added into `x`'s after.
        let (o, sub) = match self.subslice_arg(&m.args[0], code) {
            Some((o, sub)) => (o, Some(sub)),
            None => (self.lower_arg(&m.args[0], code).0, None),
        };
        let val = match (&sub, &m.args[0]) {
            (None, Expr::Reference(r)) if r.mutability.is_none() => {
                let v = o.val();
                quote!(&#v)
            }
            _ => o.val(),
        };
        if let Some(back) = sub {
            code.rev.push(back);
        }
        let method = &m.method;
        let taken = if name == "push" {
            code.fwd.push(Fwd::Primal(quote!(#recv.#method(#val);)));
            Adj::TakeTail {
                place: cot_place,
                n: None,
                row,
            }
        } else {
            let n = self.fresh("n");
            code.fwd.push(Fwd::Primal(
                quote!(let #n = (#val).len(); #recv.#method(#val);),
            ));
            let n = self.save(quote!(#n), code);
            Adj::TakeTail {
                place: cot_place,
                n: Some(n),
                row,
            }
        };
        code.rev.push(Rev::back_into(o.cot(), taken));
        Some(Operand::Inactive(quote!(())))
    }

    /// An adapter taking a closure: the closure is differentiated into a derived closure
    /// `|params…, caps| -> (value, pullback)`; its captured active variables travel as
    /// one tuple of references `caps`, whose cotangent is split back after the rule's
    /// pullback.
    fn lower_adapter(
        &mut self,
        method: &str,
        mut ops: Vec<Operand>,
        (c, over): (&syn::ExprClosure, Option<Ident>),
        params_by_ref: ByRef,
        code: &mut Code,
    ) -> Operand {
        // Free active variables of the closure body.
        let mut param_names = Vec::new();
        for p in &c.inputs {
            activity::pat_names(p, &mut param_names);
        }
        if let Some((place, root)) = captured_write(c, &param_names) {
            self.err(
                &place,
                format!("mochi: a closure passed to an adapter (`map`, `fold`, `mapv`, …) cannot write the captured variable `{root}`; write a `for` loop instead"),
            );
            return Operand::Inactive(quote!(()));
        }
        let mut caps: Vec<(String, super::Binding)> = Vec::new();
        let mut seen = HashSet::new();
        collect_idents(&quote!(#c.body), &mut |n| {
            if param_names.contains(&n) || !seen.insert(n.clone()) {
                return;
            }
            if let Some(b) = self.lookup(&n) {
                if b.active {
                    caps.push((n, b.clone()));
                }
            }
        });
        // caps = (&a, &b, …)
        let cap_refs = caps.iter().map(|(n, b)| {
            let i = format_ident!("{}", n);
            if b.is_ref {
                quote!(#i)
            } else {
                quote!(&#i)
            }
        });
        let caps_t = self.fresh("caps");
        code.fwd.push(Fwd::Let {
            name: caps_t.clone(),
            value: quote!((#(#cap_refs,)*)),
        });
        let (caps_cot, pin) = self.new_cot(&quote!(#caps_t));
        code.fwd.push(pin);
        // Split the caps cotangent back into the captured variables (runs after the
        // rule's pullback in the reverse sweep, so it is pushed first).
        code.rev.push(Rev::Split {
            from: caps_cot.clone(),
            parts: caps
                .iter()
                .enumerate()
                .map(|(i, (_, b))| {
                    let idx = syn::Index::from(i);
                    (quote!(.#idx), b.cot.clone())
                })
                .collect(),
        });
        ops.push(Operand::Active {
            val: quote!(#caps_t),
            cot: caps_cot,
            is_ref: false,
        });

        let derived = self.derive_closure(c, &caps, params_by_ref, over);
        let m = format_ident!("{}", method, span = self.span);
        self.note_rule_method(method, &derived);
        let refs = ops.iter().map(Operand::arg);
        let call = quote!(::mochi::__private::Call((#(#refs,)*)).#m(#derived));
        let out = self.rule_call(call, &ops, code);
        // A local sequence may be an array (`let rows = [[a, b], [c, d]];`) where the
        // rule takes it as a slice, whose cotangent is a `Vec` (see
        // `coerce_named_args`); the captures' tuple is the rule's own.
        let seqs: Vec<Option<Expr>> = ops
            .iter()
            .enumerate()
            .map(|(k, op)| match op {
                Operand::Active { val, .. } if k + 1 < ops.len() => syn::parse2(val.clone()).ok(),
                _ => None,
            })
            .collect();
        coerce_named_args(seqs.iter().map(Option::as_ref), code);
        out
    }

    /// The derived closure of `c`: `|p…, __mochi_caps| -> (value, pullback)`.
    fn derive_closure(
        &mut self,
        c: &syn::ExprClosure,
        caps: &[(String, super::Binding)],
        params_by_ref: ByRef,
        over: Option<Ident>,
    ) -> TokenStream {
        if c.asyncness.is_some() {
            self.err(c, "mochi: async closures cannot be differentiated");
        }
        let n = c.inputs.len();
        let mut active = self.active.clone();
        // A name the closure reads from its scope carries a derivative there only if the
        // binding it reads does: `for k in 1..3 { x.iter().map(|v| v * k as f64) }`
        // under an outer float `k` reads the loop's integer (before 2026-12-07, a type
        // error at the closure: the cast lowered as a float's).
        collect_idents(&quote!(#c.body), &mut |nm| {
            if self.lookup(&nm).is_some_and(|b| !b.active) {
                active.remove(&nm);
            }
        });
        let mut specs = Vec::new();
        let mut dparams = Vec::new();
        let mut fparams = Vec::new();
        let mut unpack = Vec::new();
        let mut pins = Vec::new();
        for (i, p) in c.inputs.iter().enumerate() {
            let by_ref = match params_by_ref {
                ByRef::All => true,
                ByRef::AllButFirst => i > 0,
                ByRef::None => false,
            };
            // An element passed by value may be written `|&x|` by habit (many
            // adapters' closures take references); bind it by value.
            let p = &match (by_ref, p) {
                (false, Pat::Reference(r)) => (*r.pat).clone(),
                (_, other) => other.clone(),
            };
            let d = format_ident!("__mochi_dp{}", i);
            let arg = format_ident!("__mochi_arg{}", i);
            let ty = format_ident!("__mochi_targ{}", i);
            let mut names = Vec::new();
            activity::pat_names(p, &mut names);
            active.extend(names);
            specs.push(ParamSpec {
                pat: p.clone(),
                cot: quote!((*#d)),
                is_ref: by_ref && !matches!(p, Pat::Reference(_)),
                active: true,
                recompute: false,
                shared: false,
            });
            unpack.push(quote!(let #ty = ::mochi::__private::cot_of(&#arg); let #p = #arg;));
            pins.push(quote!(::mochi::__private::pin(&*#d, #ty);));
            dparams.push(d);
            fparams.push(quote!(#arg));
        }
        let dcaps = format_ident!("__mochi_dcaps");
        // Captured variables are references inside the derived closure. A method's
        // `self` cannot be bound by a pattern: it is `__mochi_self` there.
        let alias = |n: &str| {
            if n == "self" {
                SELF_ALIAS.to_string()
            } else {
                n.to_string()
            }
        };
        let caps: Vec<(String, super::Binding)> =
            caps.iter().map(|(n, b)| (alias(n), b.clone())).collect();
        let cap_names: Vec<_> = caps.iter().map(|(n, _)| format_ident!("{}", n)).collect();
        for (i, (nm, _)) in caps.iter().enumerate() {
            let idx = syn::Index::from(i);
            specs.push(ParamSpec {
                pat: {
                    let i = format_ident!("{}", nm);
                    syn::parse_quote!(#i)
                },
                cot: quote!((*#dcaps).#idx),
                is_ref: true,
                active: true,
                recompute: false,
                shared: false,
            });
            active.insert(nm.clone());
        }
        let mut body_block: syn::Block = match &*c.body {
            Expr::Block(b) => b.block.clone(),
            // (`|&v| if v > 0.0 { v } else { -v } * 2.0`: as the block's one statement
            // the `if` would end there, and `* 2.0` be read as a dereference.)
            other => crate::iterchain::block_of(other, false),
        };
        if caps.iter().any(|(n, _)| n == SELF_ALIAS) {
            syn::visit_mut::VisitMut::visit_block_mut(&mut RenameSelf, &mut body_block);
        }
        crate::activity::analyse(&body_block, &mut active);
        let mut inner = Lowerer::new(&self.fn_name, active);
        inner.float_ty = self.float_ty.clone();
        inner.inherited_floats = self.other_floats.clone();
        // Over a sequence of the other float type (`v.iter().map(|t| t * 0.5)` of `v =
        // [a, b]`, `a: f32` in a function over `f64`), the closure's parameters have it.
        if let Some(t) = over {
            for (k, p) in c.inputs.iter().enumerate() {
                // (A fold's accumulator has its start's type.)
                if k > 0 || params_by_ref != ByRef::AllButFirst {
                    let mut names = Vec::new();
                    activity::pat_names(p, &mut names);
                    for n in names {
                        inner.inherited_floats.insert(n, t.clone());
                    }
                }
            }
        }
        inner.seq_calls = self.seq_calls.clone();
        inner.receivers = self.receivers.clone();
        // A captured reference (a slice) stays one; a captured value is read through
        // the reference the closure holds.
        inner.captured = caps
            .iter()
            .filter(|(_, b)| !b.is_ref)
            .map(|(n, _)| n.clone())
            .collect();
        let lowered = inner.lower_body(specs, &body_block);
        self.errors.append(&mut inner.errors);
        self.rule_methods.append(&mut inner.rule_methods);
        self.assoc_paths.append(&mut inner.assoc_paths);
        self.unknown_types.append(&mut inner.unknown_types);
        self.user_methods.append(&mut inner.user_methods);
        self.user_methods_mut.append(&mut inner.user_methods_mut);
        let super::Lowered {
            top,
            fwd,
            result,
            cots,
            seed,
            rev,
        } = lowered;
        let pb = format_ident!("pullback{}", n + 1);
        quote!(
            |#(#fparams,)* __mochi_caps| {
                #[allow(unused_variables, unused_parens)]
                let (#(#cap_names,)*) = *__mochi_caps;
                let __mochi_tcaps = ::mochi::__private::cot_of(__mochi_caps);
                #(#unpack)*
                #top
                #fwd
                let __mochi_result = #result;
                (
                    __mochi_result,
                    ::mochi::__private::#pb(move |__mochi_dy, (#(#dparams,)* #dcaps,)| {
                        #(#pins)*
                        ::mochi::__private::pin(&*#dcaps, __mochi_tcaps);
                        #cots
                        #seed
                        #rev
                    }),
                )
            }
        )
    }

    fn lower_call(&mut self, c: &syn::ExprCall, code: &mut Code) -> Operand {
        let Expr::Path(fp) = &*c.func else {
            self.err(&c.func, "mochi: calls through a closure or a function pointer cannot be differentiated; call a `#[differentiable]` function by its path");
            return Operand::Inactive(quote!(#c));
        };
        let segs: Vec<String> = crate::rewrite::path_segments(&fp.path);
        let last = segs.last().cloned().unwrap_or_default();
        // A window's index and length (`desugar::inline_windows`): integers, whatever the
        // names in them (a loop variable named like a differentiable local bound later).
        if segs.iter().any(|s| s == "__private")
            && matches!(last.as_str(), "window_at" | "window_len")
        {
            return Operand::Inactive(quote!(#c));
        }
        // `CastFloat::<T>::cast_float(v)`, `v as f64` in a generic twin (`twin.rs`): the
        // rule `CastFloatRule<T>`, the identity on `T` and a constant from an integer.
        if segs.iter().any(|s| s == "__private")
            && segs.ends_with(&["CastFloat".into(), "cast_float".into()])
            && c.args.len() == 1
        {
            if !expr_is_active(&c.args[0], &self.active) {
                return Operand::Inactive(quote!(#c));
            }
            let to = match &fp.path.segments[fp.path.segments.len() - 2].arguments {
                syn::PathArguments::AngleBracketed(a) => {
                    let a = &a.args;
                    quote!(#a)
                }
                _ => quote!(_),
            };
            let x = self.lower_expr(&c.args[0], code);
            return self.call_method(
                "cast_float",
                &[x],
                quote!(::core::marker::PhantomData::<#to>),
                code,
            );
        }
        // `Clone::clone(&e)` (an element bound by a chain's closure, see
        // `iterchain::CLONED_PARAMS`): `e.clone()`, whose cotangent flows back to `e`.
        if segs.ends_with(&["Clone".into(), "clone".into()]) && c.args.len() == 1 {
            if let Expr::Reference(r) = &c.args[0] {
                if r.mutability.is_none() {
                    let inner = &r.expr;
                    let m: Expr = syn::parse_quote_spanned!(syn::spanned::Spanned::span(&c.func)=> (#inner).clone());
                    return self.lower_expr(&m, code);
                }
            }
        }
        // `f64::from(x)` (lossless: from `f32` or a small integer) is `x as f64`.
        // (Of a value without a derivative it stays as written: `f64::from(flag)` of a
        // `bool`, which `as f64` does not convert; before 2026-12-07 a type error.)
        if segs.len() == 2
            && (segs[0] == "f64" || segs[0] == "f32")
            && last == "from"
            && c.args.len() == 1
            && activity::expr_is_active(&c.args[0], &self.active)
        {
            let (a, t) = (&c.args[0], &fp.path.segments[0].ident);
            let cast: Expr =
                syn::parse_quote_spanned!(syn::spanned::Spanned::span(&c.func)=> (#a) as #t);
            return self.lower_expr(&cast, code);
        }
        // f64::sin(x), f64::max(a, b): the method rules. So are the float traits' by
        // path, `Float::exp(x)`, `num_traits::Float::powi(x, 2)`, `Real::sqrt(x)` (before
        // 2026-12-07, "no rule for `float_exp`").
        if (segs.len() == 2 && (segs[0] == "f64" || segs[0] == "f32"))
            || (float_trait_path(&segs) && !c.args.is_empty())
        {
            let ops: Vec<Operand> = c.args.iter().map(|a| self.lower_expr(a, code)).collect();
            return self.call_method(&last, &ops, TokenStream::new(), code);
        }
        if segs.len() == 1 && self.nested_fns.contains(&last) {
            self.err(c, format!("mochi: `{last}` is a `fn` declared inside the function, which has no derived rule (one over floats is read as a closure, but not one that is generic, calls itself or calls a function declared after it); move it out, beside the function, and mark it `#[differentiable]`"));
            return Operand::Inactive(quote!(#c));
        }
        if segs.len() == 1 && self.lookup(&last).is_some() {
            let last = crate::iterchain::written_name(&last);
            self.err(c, format!("mochi: `{last}` is a local variable; calls through a closure or a function pointer cannot be differentiated; make it a `#[differentiable]` function and call it by name"));
            return Operand::Inactive(quote!(#c));
        }
        // `drop(v)`: the value goes out of use (its cotangent so far flows back as it
        // would at the end of its scope).
        if segs.len() == 1 && last == "drop" && c.args.len() == 1 {
            return Operand::Inactive(quote!(#c));
        }
        // `Some(e)`, `Ok(e)`: an `Option`'s cotangent is an `Option` (its `Some` part
        // goes back into `e`'s), a `Result`'s is its value's own.
        if segs.len() == 1 && matches!(last.as_str(), "Some" | "Ok") && c.args.len() == 1 {
            let o = self.lower_expr(&c.args[0], code);
            let v = o.val();
            return self.derived_value(quote!(#fp(#v)), &o, AccKind::From, code);
        }
        // `Pt(a, b)` of a tuple struct (deriving `Tangent`): the literal `Pt { 0: a, 1: b }`.
        if segs.len() == 1 && last.chars().next().is_some_and(char::is_uppercase) {
            let fields = c.args.iter().enumerate().map(|(i, a)| {
                let m = syn::Index::from(i);
                quote!(#m: #a)
            });
            let lit: syn::Result<syn::ExprStruct> = syn::parse2(quote!(#fp { #(#fields),* }));
            return match lit {
                Ok(l) => self.lower_expr(&Expr::Struct(l), code),
                Err(_) => {
                    self.err(c, format!("mochi: building `{last}(..)` from a differentiable value is not supported; return the value itself, or a tuple or a struct deriving `Tangent`"));
                    Operand::Inactive(quote!(#c))
                }
            };
        }
        // `Self::m(args)` in a method: the method's derived rule `Self::m_rrule`. Also
        // `Type::m(&mut v, args)` anywhere: a `&mut` first argument is a receiver, never
        // a constructor's, so `m` is a `&mut self` method of `Type`.
        let mut_receiver = segs.len() == 2
            && segs[0].starts_with(char::is_uppercase)
            && matches!(c.args.first(), Some(Expr::Reference(r)) if r.mutability.is_some());
        // `Linear::predict(m, x)` with `m` a binding of type `Linear` (or `&m`): a method
        // of the user's struct (see `desugar::Receiver`).
        let typed_receiver = segs.len() == 2
            && c.args.first().is_some_and(|a| {
                let a = match a {
                    Expr::Reference(r) if r.mutability.is_none() => &*r.expr,
                    other => other,
                };
                matches!(a, Expr::Path(p) if p.path.get_ident().is_some_and(|i| {
                    self.receivers.get(&i.to_string()).is_some_and(|r| r.ty == segs[0])
                }))
            });
        // `V2::norm(&a)` of a marked method taking `self` (the desugaring writes a call
        // on a binding surely of the type so, a name a library's type has too), whatever
        // the binding's other values (`let a = a.scale(2.0);` after it).
        let marked_receiver = segs.len() == 2
            && crate::twin::marked_method_of(&segs[0], &last)
            && matches!(c.args.first(), Some(Expr::Reference(r))
                if matches!(&*r.expr, Expr::Field(_) | Expr::Index(_) | Expr::Path(_)));
        // `Layer::forward(&self.layers[0], x)`: a borrowed place first and a method name
        // no rule crate's type has, of a type that is not a library's.
        let borrowed_receiver = segs.len() == 2
            && segs[0].starts_with(char::is_uppercase)
            && !crate::twin::ARRAY_TYPES.contains(&segs[0].as_str())
            && !is_library_method(&last)
            && !(last == "new"
                || last.starts_with("from")
                || last.starts_with("with")
                || matches!(
                    last.as_str(),
                    "zeros" | "ones" | "identity" | "eye" | "default"
                ))
            && matches!(c.args.first(), Some(Expr::Reference(r))
                if matches!(&*r.expr, Expr::Field(_) | Expr::Index(_) | Expr::Path(_)));
        // `Model::score__twin_needs_differentiable_higher_order(m, x)`, in a twin: the
        // twin of a method of the user's (see `twin::struct_locals`).
        let method_twin = segs.len() == 2 && crate::twin::method_of_twin(&last).is_some();
        // `Vector3::new(x, y, z)` of the crate's own `Vector3`: its rule by its type, not
        // a rule crate's `vector3_new` (for nalgebra's), which the name would reach too.
        let own_named_like_library =
            segs.len() == 2 && crate::twin::crate_type_named_like_library(&segs[0]);
        if segs.len() == 2
            && (segs[0] == "Self"
                || mut_receiver
                || typed_receiver
                || borrowed_receiver
                || marked_receiver
                || method_twin
                || own_named_like_library)
            && fp.qself.is_none()
        {
            // (At the method's name: a missing derived rule is reported at the call.)
            let ty = syn::Ident::new(
                &fp.path.segments[0].ident.to_string(),
                fp.path.segments[1].ident.span(),
            );
            let mut ops = Vec::new();
            let mut args = Vec::new();
            for a in &c.args {
                // (`receiver(&l)`, a method twin's receiver in a twin: lent as written,
                // handed on as the rule takes it, see `__private::Receive`.)
                if let Some(lent) = received(a) {
                    let (o, arg) = self.lower_arg(lent, code);
                    args.push(quote!(::mochi::__private::receiver(#arg)));
                    ops.push(o);
                    continue;
                }
                let (o, arg) = self.lower_arg(a, code);
                // (`Self::conj(self)` in a `&self` method, `self.conj()` as written: the
                // reference handed on as the callee takes its receiver, a clone for a
                // `fn conj(self)` of a `Copy` type.)
                let own_ref = args.is_empty()
                    && segs[0] == "Self"
                    && !self.mut_refs.contains("self")
                    && matches!(a, Expr::Path(p) if p.path.is_ident("self"))
                    && matches!(&o, Operand::Active { is_ref: true, .. });
                args.push(if own_ref {
                    quote!(::mochi::__private::receiver(#arg))
                } else {
                    arg
                });
                ops.push(o);
            }
            let rr = format_ident!("{}_rrule", last, span = fp.path.segments[1].ident.span());
            if segs[0] != "Self" {
                self.user_methods.entry(last.clone()).or_insert((
                    c.args.len().saturating_sub(1),
                    fp.path.segments[1].ident.span(),
                ));
            }
            // `Cplx::exp(&z)`, `Cplx::exp(&mut z)` of a binding of the type (the desugaring
            // lends a `mut` one mutably), `Layer::forward(&self.layers[0], x)`: lent
            // through `receiver`, which hands on the reference, a shared one, or a clone,
            // as the method takes `&mut self`, `&self` or `self` (`fn conj(self)`, a
            // `Copy` type's), which the call cannot see.
            let lent_binding = match &c.args[0] {
                Expr::Reference(r) => matches!(&*r.expr, Expr::Path(p)
                if p.path.get_ident().is_some_and(|i| {
                    self.receivers.get(&i.to_string()).is_some_and(|r| r.ty == segs[0])
                })),
                _ => false,
            };
            if (typed_receiver || borrowed_receiver || marked_receiver || lent_binding)
                && segs[0] != "Self"
            {
                let a = &args[0];
                args[0] = quote!(::mochi::__private::receiver(#a));
            }
            let call = quote!(#ty::#rr(#(#args),*));
            let call = self.boxed_in_branch(call);
            let out = self.rule_call(call, &ops, code);
            coerce_named_args(c.args.iter().map(Some), code);
            return out;
        }
        // `Type::f(args)` (a constructor such as `Vector3::new(x, y, z)`): the rule
        // method `Call((&args…)).type_f()` that a rule crate provides, named after the
        // type in snake case.
        if fp.qself.is_none()
            && segs.len() >= 2
            && segs[segs.len() - 2]
                .chars()
                .next()
                .is_some_and(char::is_uppercase)
        {
            let ty_name = &segs[segs.len() - 2];
            // `T::max(a, b)`, `T::sin(x)` with `T` a type parameter (`fold(T::neg_infinity(),
            // T::max)` in generic code): the method on its first argument, as
            // `f64::max(a, b)` is.
            // (One letter not declared as a type parameter is a type, `struct P`.)
            let type_param = ty_name.len() == 1 && !crate::twin::user_type_name(ty_name);
            if type_param
                && segs.len() == 2
                && crate::twin::FLOAT_METHODS.contains(&last.as_str())
                && c.args
                    .first()
                    .is_some_and(|a| expr_is_active(a, &self.active))
            {
                let ops: Vec<Operand> = c.args.iter().map(|a| self.lower_expr(a, code)).collect();
                return self.call_method(&last, &ops, TokenStream::new(), code);
            }
            if type_param {
                // `T::from_f64(x)` in generic code: `T` is a type parameter, not a type a
                // rule crate can name.
                self.err(c, format!("mochi: `{ty_name}::{last}(..)` of a differentiable value needs a rule, and a type parameter has none; write the value in `{ty_name}` from the start, or wrap a constant in `mochi::no_grad(..)`"));
                return Operand::Inactive(quote!(#c));
            }
            // `Piece::Low(v)`: a tuple variant of the user's enum given a value with a
            // derivative, as `Shape::Circle { r }` above.
            if segs.len() == 2
                && last.starts_with(|c: char| c.is_ascii_uppercase())
                && !matches!(ty_name.as_str(), "Option" | "Result" | "Self")
                && c.args.iter().any(|a| expr_is_active(a, &self.active))
            {
                self.variant_with_derivative(c, &segs);
                return Operand::Inactive(quote!(()));
            }
            let ty = snake_case(ty_name);
            // `Array2::eye(n)`, `Array2::from_shape_fn(a.dim(), |(i, j)| ..)` with a
            // shape read from a differentiable value: nothing to differentiate.
            let shape_only = |a: &Expr| match a {
                Expr::Closure(cl) => !mentions_any(&cl.body, &self.active),
                other => !expr_is_active(other, &self.active),
            };
            if c.args.iter().all(shape_only) {
                return Operand::Inactive(quote!(#c));
            }
            // A sub-slice argument (`DMatrix::from_row_slice(2, 3, &x[..6])`) is the
            // slice itself; its cotangent goes back into the sequence's after the rule's
            // pullback (pushed first, run last).
            let mut ops: Vec<Operand> = Vec::new();
            for a in &c.args {
                if let Some((o, back)) = self.subslice_arg(a, code) {
                    code.rev.push(back);
                    ops.push(o);
                    continue;
                }
                ops.push(match a {
                    Expr::Reference(r) if r.mutability.is_none() => self.lower_expr(&r.expr, code),
                    other => self.lower_expr(other, code),
                });
            }
            self.span = fp
                .path
                .segments
                .last()
                .map_or(self.span, |s| s.ident.span());
            // The type's path as written, for a rule of the crate's own type reached
            // where its trait is not in scope (a path through its module, one of two
            // types of one name): a type the crate derives `Tangent` for (a name may be
            // a trait's, `Default::default()`, which is no type), not one a `use` in
            // the body brings (the bridge sits beside the derived functions; `self::`
            // and `super::` paths are already written as seen from there,
            // `rewrite::from_inside_module`).
            // A longer path to such a type is a rule method of its own, named after the
            // path (`pt_new__pb` of `pb::Pt::new`), so that `Pt::new` of another `Pt`
            // in the same body reaches its own rule, never this one.
            let n = fp.path.segments.len();
            let written_path = fp.path.segments.iter().take(n - 1);
            let own = crate::twin::crate_type(ty_name) && !crate::twin::library_name(ty_name);
            let method = if own && n > 2 {
                let via: Vec<String> = segs[..n - 2].iter().map(|s| snake_case(s)).collect();
                format!("{ty}_{last}__{}", via.join("_"))
            } else {
                format!("{ty}_{last}")
            };
            if own
                && segs[0] != "Self"
                && !self.body_uses.contains(&segs[0])
                && !self.body_uses.contains("*")
                && fp
                    .path
                    .segments
                    .iter()
                    .all(|s| matches!(s.arguments, syn::PathArguments::None))
            {
                let lead = fp.path.leading_colon;
                self.assoc_paths
                    .entry(method.clone())
                    .or_insert((quote!(#lead #(#written_path)::*), last.clone()));
            }
            if !own && n == 2 && !crate::twin::library_name(ty_name) {
                self.unknown_types
                    .entry(method.clone())
                    .or_insert_with(|| (ty_name.clone(), last.clone()));
            }
            return self.call_method(&method, &ops, TokenStream::new(), code);
        }
        if fp.qself.is_some() {
            self.err(c, "mochi: calls to associated functions (`<T as Trait>::f(..)`) need a rule; call a free `#[differentiable]` function, or wrap a constant in `mochi::no_grad(..)`");
            return Operand::Inactive(quote!(#c));
        }
        // A differentiable function or a hand-written rule: `path::rrule(args…)`.
        let mut ops = Vec::new();
        let mut args = Vec::new();
        let mut subslices = Vec::new();
        let mut slots = Vec::new();
        for a in &c.args {
            if let Some((o, arg, slot)) = self.element_arg(a, code) {
                args.push(arg);
                ops.push(o);
                slots.push(slot);
                continue;
            }
            if let Some((o, back)) = self.subslice_arg(a, code) {
                args.push(o.val());
                ops.push(o);
                subslices.push(back);
                continue;
            }
            if let Expr::Reference(r) = a {
                let whole = matches!(&*r.expr, Expr::Path(_));
                if r.mutability.is_some()
                    && !whole
                    && activity::root_name(&r.expr).is_some_and(|n| self.active.contains(&n))
                {
                    // The element or field would be read into a temporary: the callee's
                    // writes would go there, not into the place.
                    self.err(a, "mochi: a `&mut` borrow of an element or a field of a differentiable value cannot be passed to a call; pass the whole variable (and the index), or copy the element into a `let mut` variable, call, and assign it back");
                    return Operand::Inactive(quote!(#c));
                }
            }
            let (o, arg) = self.lower_arg(a, code);
            args.push(arg);
            ops.push(o);
        }
        // A `&mut` argument the callee may write with differentiable data must be
        // tracked, or its derivative would be lost.
        if ops.iter().any(|o| o.cot().is_some()) {
            for (o, a) in ops.iter().zip(&c.args) {
                if matches!(a, Expr::Reference(r) if r.mutability.is_some()) && o.cot().is_none() {
                    self.err(a, "mochi: this `&mut` argument may receive a differentiable value but is not tracked; bind it with `let mut` inside the function");
                }
            }
        }
        // `g::<T>(x)` of a generic function: the arguments move to the rule,
        // `g::rrule::<T>(x)` (a module takes none).
        let mut path = fp.path.clone();
        let mut generics = 0;
        let turbofish = match path.segments.last_mut().map(|s| &mut s.arguments) {
            Some(a @ syn::PathArguments::AngleBracketed(_)) => {
                let syn::PathArguments::AngleBracketed(mut g) = std::mem::take(a) else {
                    unreachable!()
                };
                g.colon2_token = Some(Default::default());
                generics = g.args.len();
                quote!(#g)
            }
            _ => TokenStream::new(),
        };
        let own = segs.len() == 1 && last == self.fn_name;
        // `g(..)` of a user function (`g::__twin::<T>(..)` in a twin): `g::rrule`, with
        // a stand-in that names the fix when `g` is not `#[differentiable]`.
        let user = path.leading_colon.is_none()
            && (segs.len() == 1 || (segs.len() == 2 && segs[1] == "__twin"));
        let call = if own {
            quote!(#path::rrule_boxed #turbofish (#(#args),*))
        } else if user {
            let rest: &[&str] = if segs.len() == 1 {
                &["rrule"]
            } else {
                &["__twin", "rrule"]
            };
            let f = crate::rewrite::callee(
                &path.segments[0].ident,
                rest,
                &turbofish,
                generics,
                args.len(),
                crate::rewrite::StandInValue {
                    bounded: true,
                    scalar: self.float_ty.as_ref(),
                    sequence: self.seq_calls.contains(&path.segments[0].ident.to_string()),
                },
            );
            self.boxed_in_branch(quote!(#f(#(#args),*)))
        } else if segs.len() > 1 && path.leading_colon.is_none() && !is_path_keyword(&segs[0]) {
            // `krate::f(..)`: `krate::f::rrule` is named where the rule crates' mirrors of
            // crate paths (`::mochi::__private::paths`) are glob-imported, so that a crate
            // whose function has its rule in a rule crate resolves to that rule; any
            // other first segment resolves as written (the arguments stay outside).
            self.boxed_in_branch(quote!(({
                #[allow(unused_imports)]
                use ::mochi::__private::paths::*;
                #path::rrule #turbofish
            })(#(#args),*)))
        } else {
            self.boxed_in_branch(quote!(#path::rrule #turbofish (#(#args),*)))
        };
        // An array literal passed where a slice is expected has an array cotangent but
        // the callee accumulates a `Vec`: route it through a converting temporary.
        let mut conv = Vec::new();
        let mut converted = vec![false; ops.len()];
        for (k, (o, a)) in ops.iter_mut().zip(&c.args).enumerate() {
            let inner = match a {
                Expr::Reference(r) => &*r.expr,
                other => other,
            };
            let array = match inner {
                Expr::Array(_) => true,
                Expr::Path(p) => p
                    .path
                    .get_ident()
                    .is_some_and(|i| self.array_locals.contains(&i.to_string())),
                _ => false,
            };
            if let (true, Operand::Active { cot, .. }) = (array, &*o) {
                let tmp = self.fresh("conv");
                converted[k] = true;
                let mutable = matches!(a, Expr::Reference(r) if r.mutability.is_some());
                conv.push((tmp.clone(), cot.clone(), mutable));
                *o = Operand::Active {
                    val: TokenStream::new(),
                    cot: quote!(#tmp),
                    is_ref: false,
                };
            }
        }
        // Sub-slices: their cotangents go back into the sequences' after the call's
        // pullback (reverse order: pushed first, run last).
        for back in subslices {
            code.rev.push(back);
        }
        for (t, c, _) in &conv {
            code.rev.push(Rev::Acc {
                into: c.clone(),
                value: Adj::Take(quote!(#t)),
                how: AccKind::From,
            });
        }
        let out = self.rule_call(call, &ops, code);
        // `&h` of a local given to a user function: `h` may be an array (a helper's
        // result) where the callee takes a slice, whose cotangent is a `Vec`; the
        // pullback then adds into a `Vec` that goes into the array's cotangent
        // (`with_arg_cot`; no temporary when the types agree).
        if user || own {
            // (A known array local already goes through a converting temporary.)
            coerce_named_args(
                c.args
                    .iter()
                    .zip(&converted)
                    .map(|(a, done)| (!done).then_some(a)),
                code,
            );
        }
        // The pullback adds an element argument's cotangent into its slot.
        if !slots.is_empty() {
            let mut pull = code.rev.pop().expect("a rule call pushes its pullback");
            for mut slot in slots.into_iter().rev() {
                if let Rev::Slot { body, .. } = &mut slot {
                    body.push(pull);
                }
                pull = slot;
            }
            code.rev.push(pull);
        }
        // An array passed `&mut`: the callee's pullback takes the cotangent of the value
        // as the call left it and leaves the one before the call, so the temporary
        // starts as the array's cotangent (taken: the conversion back replaces it).
        for (t, c, mutable) in &conv {
            if *mutable {
                code.rev.push(Rev::Acc {
                    into: quote!(#t),
                    value: Adj::Take(c.clone()),
                    how: AccKind::From,
                });
            }
        }
        // A local whose shape is kept in one slot, passed `&mut` (`g(&mut v)`): the call
        // may change its length (`*v = w` in the callee), so the slot takes the new
        // shape and the old one is saved; the reverse sweep puts it back when it
        // reaches the call, for the reads before it. One save per call, none per read.
        for id in c.args.iter().filter_map(super::mut_borrowed_var) {
            let Some(h) = self.local_shapes.get(&id.to_string()).cloned() else {
                continue;
            };
            let old = self.fresh("oshape");
            code.fwd.push(Fwd::Let {
                name: old.clone(),
                value: quote!(::core::clone::Clone::clone(&#h)),
            });
            let shape = super::ir::rt::shape_of(&quote!(#id));
            code.fwd.push(Fwd::Primal(
                quote!(#h = ::core::option::Option::Some(#shape);),
            ));
            let get = self.save(quote!(#old), code);
            code.rev.push(Rev::Restore {
                place: quote!(#h),
                value: get,
            });
        }
        // Declared first in the reverse sweep (pushed last).
        for (t, _, _) in conv {
            code.rev.push(Rev::Temp(t));
        }
        out
    }

    /// A call of another function's rule (`(y, pb)`), its pullback boxed inside an
    /// `if`/`match` branch: the recursion of mutually recursive functions ends in a
    /// branch, and the box breaks their types' cycle.
    /// See [`lower_method`](Self::lower_method): `place.m(args)` with `place` a field or
    /// an element (of `self`, a parameter or a local) and `m` a name no rule crate's
    /// type or the standard library has.
    fn lower_user_method(
        &mut self,
        m: &syn::ExprMethodCall,
        name: &str,
        code: &mut Code,
    ) -> Option<Operand> {
        fn place_root(e: &Expr) -> Option<&Expr> {
            match e {
                Expr::Field(f) => Some(place_root(&f.base).unwrap_or(&f.base)),
                Expr::Index(i) => Some(place_root(&i.expr).unwrap_or(&i.expr)),
                Expr::Paren(p) => place_root(&p.expr),
                _ => None,
            }
        }
        // `(&mut v[i]).bump(x)`: an element a loop borrows mutably (`desugar.rs`,
        // `Substitute::mut_receivers`), whose method may take `&mut self`.
        let mut_place = match crate::desugar::unparen(&m.receiver) {
            Expr::Reference(r) if r.mutability.is_some() => Some(&*r.expr),
            _ => None,
        };
        // (A local there is the copy the desugaring writes back: `(&mut t).bump(x)`.)
        let written_back = matches!(mut_place, Some(Expr::Path(p)) if p.path.get_ident().is_some());
        let root = match (mut_place, &*m.receiver) {
            (Some(local), _) if written_back => local,
            // An element a `for` bound (`for l in &layers { l.forward(x) }`).
            (None, Expr::Path(p))
                if p.path
                    .get_ident()
                    .is_some_and(|i| self.struct_seqs.contains(&i.to_string())) =>
            {
                &*m.receiver
            }
            _ => place_root(mut_place.unwrap_or(&m.receiver))?,
        };
        // (On `self`'s fields and elements, a parameter of the user's struct, or a
        // parameter holding such structs: not on an element of `x: &[f64]`, whose
        // methods are a rule crate's, `x[i].softplus()`.)
        let users_root = match root {
            Expr::Path(p) => p.path.get_ident().is_some_and(|i| {
                let n = i.to_string();
                n == "self"
                    || self.receivers.contains_key(&n)
                    || self.struct_seqs.contains(&n)
                    || written_back
            }),
            _ => false,
        };
        if is_library_method(name)
            || m.turbofish.is_some()
            || !users_root
            || !(expr_is_active(&m.receiver, &self.active)
                || m.args.iter().any(|a| expr_is_active(a, &self.active)))
            || m.args.iter().any(|a| matches!(a, Expr::Closure(_)))
        {
            return None;
        }
        let recv = &m.receiver;
        let borrowed: Expr = match mut_place {
            Some(place) => syn::parse_quote!(&mut #place),
            None => syn::parse_quote!(&#recv),
        };
        let mut ops = Vec::new();
        let mut args = Vec::new();
        for a in std::iter::once(&borrowed).chain(m.args.iter()) {
            let (o, arg) = self.lower_arg(a, code);
            // (A receiver bound by reference, an element of a chain's closure `|v|
            // v.dot2(v)`: reborrowed, `&*v`, so that the method is found on the type and
            // not the missing-method fallback on the reference.)
            let arg = match &o {
                Operand::Active {
                    val, is_ref: true, ..
                } if args.is_empty() && mut_place.is_none() => quote!(&*#val),
                _ => arg,
            };
            args.push(arg);
            ops.push(o);
        }
        let rr = format_ident!("{}_rrule", name, span = m.method.span());
        // A `&mut` receiver reaches a `&self` method by auto-dereference, after the step
        // where the missing-method fallback (a `&self` method of every type) would be
        // found: no fallback for a name called so.
        if mut_place.is_some() {
            self.user_methods_mut.insert(name.to_string());
        } else {
            self.user_methods
                .entry(name.to_string())
                .or_insert((m.args.len(), m.method.span()));
        }
        let (first, rest) = (&args[0], &args[1..]);
        let call = self.boxed_in_branch(quote!((#first).#rr(#(#rest),*)));
        let out = self.rule_call(call, &ops, code);
        // (The receiver's cotangent is its struct's tangent.)
        coerce_named_args(std::iter::once(None).chain(m.args.iter().map(Some)), code);
        Some(out)
    }

    fn boxed_in_branch(&self, call: TokenStream) -> TokenStream {
        if self.branch_depth == 0 {
            return call;
        }
        quote!({
            let (__mochi_y, __mochi_pb) = #call;
            (__mochi_y, ::mochi::BoxedPullback::new(__mochi_pb))
        })
    }

    /// The error for a variant of the user's enum built from a value with a derivative.
    fn variant_with_derivative(&mut self, at: &impl quote::ToTokens, segs: &[String]) {
        self.err(
            at,
            format!("mochi: the variant `{}` is given a value with a derivative; an enum deriving `Tangent` is a choice whose settings carry none (README, \"A configuration enum\"), so the derivative would stop here; keep the differentiable values in a struct deriving `Tangent` (or pass them beside the enum) and let the enum choose", segs.join("::")),
        );
    }

    /// The call lending a differentiable value mutably ([`lends_active`](Self::lends_active))
    /// that `e` evaluates first: `e` itself, or one down its receivers, casts, unary
    /// operands and left operands; the place it is in, to take it out.
    fn first_lender<'e>(&self, e: &'e mut Expr) -> Option<&'e mut Expr> {
        if self.lends_active(crate::desugar::unparen(e)) {
            return Some(e);
        }
        match e {
            Expr::Paren(p) => self.first_lender(&mut p.expr),
            Expr::Group(g) => self.first_lender(&mut g.expr),
            Expr::MethodCall(m) => self.first_lender(&mut m.receiver),
            Expr::Cast(c) => self.first_lender(&mut c.expr),
            Expr::Unary(u) => self.first_lender(&mut u.expr),
            Expr::Binary(b) => self.first_lender(&mut b.left),
            Expr::Field(f) => self.first_lender(&mut f.base),
            _ => None,
        }
    }

    /// A call lending a differentiable value mutably anywhere in `e` (not in a closure).
    fn lender_in<'e>(&self, e: &'e Expr) -> Option<&'e Expr> {
        struct L<'a, 'e> {
            this: &'a Lowerer,
            found: Option<&'e Expr>,
        }
        impl<'a, 'e> syn::visit::Visit<'e> for L<'a, 'e> {
            fn visit_expr(&mut self, e: &'e Expr) {
                if self.found.is_some() {
                    return;
                }
                if matches!(e, Expr::Closure(_)) {
                    return;
                }
                if self.this.lends_active(e) {
                    self.found = Some(e);
                    return;
                }
                syn::visit::visit_expr(self, e);
            }
        }
        let mut l = L {
            this: self,
            found: None,
        };
        syn::visit::Visit::visit_expr(&mut l, e);
        l.found
    }

    /// Is `e` a call that lends a differentiable value mutably: `f(&mut v, ..)`,
    /// `T::m(&mut v, ..)` (how `r.push(x)` of a `&mut self` method of the crate's reads
    /// by now), `(&mut v).m(..)`, `Self::m(self, ..)` in a `&mut self` method?
    fn lends_active(&self, e: &Expr) -> bool {
        // (`&mut v`, or a `&mut` binding passed on as it is: `self` in a `&mut self`
        // method, `Self::push(self, v)`; a `&mut` parameter, `step(v)`.)
        let lent = |a: &Expr| match crate::desugar::unparen(a) {
            // (A place: not a temporary, `&mut (0..v.len())`.)
            Expr::Reference(r) => {
                r.mutability.is_some()
                    && matches!(
                        crate::desugar::unparen(&r.expr),
                        Expr::Path(_) | Expr::Field(_) | Expr::Index(_) | Expr::Unary(_)
                    )
                    && activity::root_name(crate::desugar::unparen(&r.expr))
                        .is_some_and(|n| self.active.contains(&n))
            }
            Expr::Path(p) => p.path.get_ident().is_some_and(|i| {
                let n = i.to_string();
                self.mut_refs.contains(&n)
                    && self.active.contains(&n)
                    && self.lookup(&n).is_some_and(|b| b.is_ref && b.param)
            }),
            _ => false,
        };
        match crate::desugar::unparen(e) {
            Expr::Call(c) => c.args.iter().any(lent),
            // (A `&mut self` method of the crate's on a local is `T::m(&mut r, ..)` by
            // now, `desugar::Desugar::receiver_call`; a method's name alone does not say
            // whose it is.)
            // (Only a `&mut` written: `x.len()` of a `&mut` parameter `x` reads it.)
            Expr::MethodCall(m) => {
                let written =
                    |a: &Expr| matches!(crate::desugar::unparen(a), Expr::Reference(_)) && lent(a);
                written(&m.receiver) || m.args.iter().any(written)
            }
            _ => false,
        }
    }

    /// A call argument: the operand of `a` (behind its `&`/`&mut`) and the argument as
    /// passed (`&v`, `&mut v`, `v`).
    fn lower_arg(&mut self, a: &Expr, code: &mut Code) -> (Operand, TokenStream) {
        // `&mut *r` of a `&mut` binding `r` (a parameter lent on at every call): the
        // reference reborrowed, its cotangent `r`'s.
        if let Expr::Reference(r) = a {
            if let (Some(_), Expr::Unary(u)) = (r.mutability, crate::desugar::unparen(&r.expr)) {
                if let (syn::UnOp::Deref(_), Expr::Path(p)) =
                    (u.op, crate::desugar::unparen(&u.expr))
                {
                    let o = self.lower_expr(&Expr::Path(p.clone()), code);
                    let v = o.val();
                    return (o, quote!(&mut *#v));
                }
            }
        }
        let (prefix, inner) = match a {
            Expr::Reference(r) if r.mutability.is_some() => (quote!(&mut), &*r.expr),
            Expr::Reference(r) => (quote!(&), &*r.expr),
            other => (TokenStream::new(), other),
        };
        let o = self.lower_expr(inner, code);
        let v = if prefix.is_empty() {
            self.by_value(&o, inner)
        } else {
            o.val()
        };
        (o, quote!(#prefix #v))
    }

    /// The value of `o`, lowered from `e`, where a value is taken (a call's argument, a
    /// part of a tuple or an array): `*r` of a reference lowers to the reference, and a
    /// value a derived closure captured is held by reference; both are read through.
    fn by_value(&self, o: &Operand, e: &Expr) -> TokenStream {
        let v = o.val();
        let captured_value = matches!(e, Expr::Path(p)
            if p.path.get_ident().is_some_and(|i| self.captured.contains(&i.to_string())));
        let deref = matches!(e, Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)));
        match o {
            Operand::Active { is_ref: true, .. } if deref || captured_value => quote!(*#v),
            _ => v,
        }
    }

    /// `&x[i]` (or `&m[i][j]`, `&s.rows[i]`) of a differentiable container as a call
    /// argument: the forward sweep passes the element itself (no copy: a row of a
    /// `Vec<Vec<f64>>` is not cloned per call), and the reverse sweep lends the callee's
    /// pullback the element's cotangent, taken out of the container's and put back
    /// after. Returns the operand, the argument as passed, and the slot (a
    /// [`Rev::Slot`] whose body, the call's pullback, the caller puts in).
    fn element_arg(&mut self, a: &Expr, code: &mut Code) -> Option<(Operand, TokenStream, Rev)> {
        let Expr::Reference(r) = a else { return None };
        if r.mutability.is_some() {
            return None;
        }
        let Expr::Index(ix) = &*r.expr else {
            return None;
        };
        if matches!(&*ix.index, Expr::Range(_)) {
            return None;
        }
        let place = Place::parse(&r.expr)?;
        if place.deref {
            return None;
        }
        let idx = place.index.clone()?;
        let b = self.lookup(&place.root.to_string())?.clone();
        if !b.active {
            return None;
        }
        let (access, pre, index, shape) = self.index_with_shape(&place, &b, &idx, code);
        let (root, fields, cot) = (&place.root, &place.fields, &b.cot);
        let arg = quote!(&#root #(.#fields)* #access);
        let slot = self.fresh("slot");
        let into = quote!(#cot #(.#fields)*);
        let operand = Operand::Active {
            val: arg.clone(),
            cot: quote!(#slot),
            is_ref: true,
        };
        let slot = Rev::Slot {
            pre,
            into,
            shape,
            index,
            slot,
            body: Vec::new(),
        };
        Some((operand, arg, slot))
    }

    /// `&x[a..b]` of a differentiable sequence as a call argument: the forward sweep
    /// passes the sub-slice; its cotangent is a temporary that the reverse sweep adds
    /// into `x`'s over the same range. Returns the operand and the reverse
    /// accumulation; the temporary is declared at the top of the reverse sweep.
    pub(super) fn subslice_arg(&mut self, a: &Expr, code: &mut Code) -> Option<(Operand, Rev)> {
        let Expr::Reference(r) = a else { return None };
        let Expr::Index(ix) = &*r.expr else {
            return None;
        };
        let Expr::Range(range) = &*ix.index else {
            return None;
        };
        let place = Place::parse(&ix.expr)?;
        if place.deref {
            return None;
        }
        let b = self.lookup(&place.root.to_string())?.clone();
        if !b.active {
            return None;
        }
        if r.mutability.is_some() {
            self.err(a, "mochi: a `&mut` sub-slice of a differentiable sequence cannot be passed on; pass the whole sequence and the range's bounds");
            return None;
        }
        // `&rows[i][a..b]`, a sub-slice of a row: the row read at its index as an
        // element argument is, its cotangent taken out of the rows' around the
        // accumulation over the range.
        let row = place
            .index
            .clone()
            .map(|idx| self.index_with_shape(&place, &b, &idx, code));
        let seq = match &row {
            Some((access, ..)) => {
                let (root, fields) = (&place.root, &place.fields);
                quote!(#root #(.#fields)* #access)
            }
            None => {
                let seq = &ix.expr;
                quote!(#seq)
            }
        };
        let (rg, len, sub, tmp) = (
            self.fresh("rg"),
            self.fresh("len"),
            self.fresh("sub"),
            self.fresh("dsub"),
        );
        code.fwd.push(Fwd::Let {
            name: rg.clone(),
            value: super::ir::rt::range_bounds(&quote!(#range)),
        });
        code.fwd.push(Fwd::Let {
            name: len.clone(),
            value: super::ir::rt::seq_len(&quote!(#seq)),
        });
        code.fwd.push(Fwd::Let {
            name: sub.clone(),
            value: quote!(&#seq[#rg]),
        });
        let saved = self.save(quote!((#rg, #len)), code);
        let fields = &place.fields;
        let cot = &b.cot;
        let back = match row {
            None => Rev::AccRange {
                saved,
                into: quote!(#cot #(.#fields)*),
                from: quote!(#tmp),
            },
            Some((_, pre, index, shape)) => {
                let slot = self.fresh("slot");
                Rev::Slot {
                    pre,
                    into: quote!(#cot #(.#fields)*),
                    shape,
                    index,
                    slot: slot.clone(),
                    body: vec![Rev::AccRange {
                        saved,
                        into: quote!(#slot),
                        from: quote!(#tmp),
                    }],
                }
            }
        };
        // Declared once at the top of the reverse sweep: `acc_range_from` leaves it
        // empty with its buffer, which the next trip of a loop reuses.
        self.cots.push(super::ir::rt::zero_decl(&tmp));
        Some((
            Operand::Active {
                val: quote!(#sub),
                cot: quote!(#tmp),
                is_ref: true,
            },
            back,
        ))
    }
}

/// What a captured `self` is called inside a derived closure.
const SELF_ALIAS: &str = "__mochi_self";

/// `self` → `__mochi_self` in a closure body (not inside nested items).
struct RenameSelf;
impl syn::visit_mut::VisitMut for RenameSelf {
    fn visit_expr_path_mut(&mut self, p: &mut syn::ExprPath) {
        if p.qself.is_none() && p.path.is_ident("self") {
            let span = p.path.segments[0].ident.span();
            p.path.segments[0].ident = syn::Ident::new(SELF_ALIAS, span);
        }
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// The first place a closure body assigns whose root is not bound inside the closure
/// (a captured variable), with that root's name.
fn captured_write(c: &syn::ExprClosure, params: &[String]) -> Option<(Expr, String)> {
    struct W<'a> {
        locals: Vec<String>,
        params: &'a [String],
        found: Option<(Expr, String)>,
    }
    impl W<'_> {
        fn check(&mut self, place: &Expr) {
            if self.found.is_some() {
                return;
            }
            if let Some(root) = activity::root_name(place) {
                if !self.params.contains(&root) && !self.locals.contains(&root) {
                    self.found = Some((place.clone(), root));
                }
            }
        }
    }
    impl<'ast> syn::visit::Visit<'ast> for W<'_> {
        fn visit_local(&mut self, l: &'ast syn::Local) {
            activity::pat_names(&l.pat, &mut self.locals);
            syn::visit::visit_local(self, l);
        }
        fn visit_expr_assign(&mut self, a: &'ast syn::ExprAssign) {
            self.check(&a.left);
            syn::visit::visit_expr_assign(self, a);
        }
        fn visit_expr_binary(&mut self, b: &'ast syn::ExprBinary) {
            if activity::is_arithmetic_assign(&b.op) {
                self.check(&b.left);
            }
            syn::visit::visit_expr_binary(self, b);
        }
        // `step(&mut s, v)`: a call that writes the captured `s`.
        fn visit_expr_reference(&mut self, r: &'ast syn::ExprReference) {
            if r.mutability.is_some() {
                self.check(&r.expr);
            }
            syn::visit::visit_expr_reference(self, r);
        }
    }
    let mut w = W {
        locals: Vec::new(),
        params,
        found: None,
    };
    syn::visit::Visit::visit_expr(&mut w, &c.body);
    w.found
}

/// Methods that shorten their receiver (the cotangent would have to follow).
pub(crate) const SHRINKING_METHODS: &[&str] = &[
    "pop",
    "pop_back",
    "pop_front",
    "truncate",
    "remove",
    "swap_remove",
    "drain",
    "clear",
    "retain",
    "dedup",
    "split_off",
];

/// Methods that change their receiver's length while writing data into it.
pub(crate) const GROWING_METHODS: &[&str] = &[
    "push",
    "push_back",
    "push_front",
    "insert",
    "extend",
    "extend_from_slice",
    "append",
    "resize",
];

/// `MyType` → `my_type`, `Vec3` → `vec3`.
pub(crate) fn snake_case(name: &str) -> String {
    let mut out = String::new();
    let mut prev_lower = false;
    for ch in name.chars() {
        if ch.is_uppercase() {
            if prev_lower {
                out.push('_');
            }
            out.extend(ch.to_lowercase());
        } else {
            out.push(ch);
        }
        prev_lower = ch.is_lowercase();
    }
    out
}

/// `crate`, `self`, `super`, `Self`: path starts that no glob import can shadow.
fn is_path_keyword(seg: &str) -> bool {
    matches!(seg, "crate" | "self" | "super" | "Self")
}

/// Which parameters of a closure the adapter passes by reference.
#[derive(Clone, Copy, PartialEq)]
enum ByRef {
    All,
    AllButFirst,
    None,
}

/// The standard library's expression macros whose values carry no derivative.
fn is_std_value_macro(name: &str) -> bool {
    matches!(
        name,
        "format"
            | "concat"
            | "stringify"
            | "line"
            | "file"
            | "column"
            | "matches"
            | "env"
            | "option_env"
            | "include_str"
            | "module_path"
            | "cfg"
    )
}

/// A macro's body read as expressions separated by `,` or `;` (`m![.., 0..n; 2]`,
/// `twice!(x)`), or `None` when it does not read so.
fn macro_args(mac: &syn::Macro) -> Option<Vec<Expr>> {
    // (Parsed as a list, or as `e; n`, first: a comma inside a turbofish,
    // `lift_value::<T, _>(..)`, is not between arguments.)
    type List = syn::punctuated::Punctuated<Expr, syn::Token![,]>;
    if let Ok(list) = mac.parse_body_with(List::parse_terminated) {
        return Some(list.into_iter().collect());
    }
    if let Ok(r) = mac.parse_body::<crate::rewrite::Repeat>() {
        return Some(vec![r.elem, r.len]);
    }
    let mut args = Vec::new();
    let mut piece = TokenStream::new();
    let flush = |piece: &mut TokenStream, args: &mut Vec<Expr>| -> Option<()> {
        if !piece.is_empty() {
            args.push(syn::parse2(std::mem::take(piece)).ok()?);
        }
        Some(())
    };
    for t in mac.tokens.clone() {
        match &t {
            proc_macro2::TokenTree::Punct(p) if matches!(p.as_char(), ',' | ';') => {
                flush(&mut piece, &mut args)?;
            }
            _ => piece.extend([t]),
        }
    }
    flush(&mut piece, &mut args)?;
    Some(args)
}

fn contains_unsupported(e: &Expr) -> bool {
    struct F(bool);
    impl<'ast> syn::visit::Visit<'ast> for F {
        fn visit_expr_unsafe(&mut self, _: &'ast syn::ExprUnsafe) {
            self.0 = true;
        }
        fn visit_expr_async(&mut self, _: &'ast syn::ExprAsync) {
            self.0 = true;
        }
        fn visit_expr_raw_addr(&mut self, _: &'ast syn::ExprRawAddr) {
            self.0 = true;
        }
    }
    let mut f = F(false);
    syn::visit::Visit::visit_expr(&mut f, e);
    f.0
}

/// Calls `f` with every identifier of `ts`, in order, groups included.
pub(super) fn collect_idents(ts: &TokenStream, f: &mut impl FnMut(String)) {
    for t in ts.clone() {
        match t {
            proc_macro2::TokenTree::Ident(i) => f(i.to_string()),
            proc_macro2::TokenTree::Group(g) => collect_idents(&g.stream(), f),
            _ => {}
        }
    }
}

/// The last segment of a macro's path (`vec` for `std::vec!`).
pub(super) fn macro_name(mac: &syn::Macro) -> String {
    mac.path
        .segments
        .last()
        .map(|s| s.ident.to_string())
        .unwrap_or_default()
}

/// `&h` (or `h`) of a local given to a function or method of the user's: `h` may be an
/// array (a helper's result, `let x = [a, b];`, a row `&[f64; 2]` of a constant data
/// set) where the callee takes a slice, whose cotangent is a `Vec`; the last pullback
/// then adds into a `Vec` that goes into the array's cotangent (`with_arg_cot`, no
/// temporary when the types agree). `None` marks an argument left as it is.
fn coerce_named_args<'a>(args: impl Iterator<Item = Option<&'a Expr>>, code: &mut Code) {
    // (`&[r]`, an array literal given for a `&[f64]`, too.)
    let named = |e: &Expr| {
        matches!(e, Expr::Path(p) if p.path.get_ident().is_some()) || matches!(e, Expr::Array(_))
    };
    if let Some(Rev::Pull { coerce, .. }) = code.rev.last_mut() {
        *coerce = args
            .map(|a| {
                a.is_some_and(|a| {
                    named(a)
                        || matches!(a, Expr::Reference(r) if r.mutability.is_none() && named(&r.expr))
                })
            })
            .collect();
    }
}

/// The value lent in `::mochi::__private::receiver(&l)` (see `twin::struct_method`).
pub(crate) fn received(a: &Expr) -> Option<&Expr> {
    let Expr::Call(c) = a else { return None };
    let Expr::Path(p) = &*c.func else { return None };
    let segs = crate::rewrite::path_segments(&p.path);
    (c.args.len() == 1
        && segs.len() > 2
        && segs.ends_with(&["__private".into(), "receiver".into()]))
    .then(|| &c.args[0])
}

/// Whether `a` and `b` are the same expression, written without calls, so that they
/// have one value: a place (`e`, `p.x`, `x[i]`) or arithmetic on places and literals.
fn same_value(a: &Expr, b: &Expr) -> bool {
    fn pure(e: &Expr) -> bool {
        match e {
            Expr::Path(_) | Expr::Lit(_) => true,
            Expr::Field(f) => pure(&f.base),
            Expr::Index(i) => pure(&i.expr) && pure(&i.index),
            Expr::Paren(p) => pure(&p.expr),
            Expr::Group(g) => pure(&g.expr),
            Expr::Cast(c) => pure(&c.expr),
            Expr::Unary(u) => pure(&u.expr),
            Expr::Binary(b) => {
                use syn::BinOp::*;
                matches!(b.op, Add(_) | Sub(_) | Mul(_) | Div(_) | Rem(_))
                    && pure(&b.left)
                    && pure(&b.right)
            }
            _ => false,
        }
    }
    pure(a) && quote!(#a).to_string() == quote!(#b).to_string()
}

/// `Float::exp`, `num_traits::Float::powi`, `Real::sqrt`: a float trait's method by path
/// (not `Float::from`, a conversion).
pub(crate) fn float_trait_path(segs: &[String]) -> bool {
    segs.len() >= 2
        && matches!(
            segs[segs.len() - 2].as_str(),
            "Float" | "Real" | "FloatCore"
        )
        && segs[segs.len() - 1] != "from"
}

/// The standard library's queries whose result is an integer (`len`, `count`, ..): on a
/// value with a derivative, checked to be one (`Lowerer::lengths_checked`), wherever the
/// value goes (an operand of arithmetic, a helper's argument, a buffer).
const LENGTH_QUERIES: &[&str] = &["len", "count", "capacity", "nrows", "ncols", "ndim"];

impl Lowerer {
    /// `e`, without a derivative, with each length query on a value with one
    /// (`s.len()`, `it.count()`) checked to give an integer (`__private::length_result`):
    /// a float there is a method of the user's named like one, whose derivative every
    /// use of the value would lose (`helper(s.len())`, `v.push(l)`, `s.len() as f64`).
    fn lengths_checked(&self, e: &Expr) -> TokenStream {
        struct Check<'a>(&'a HashSet<String>);
        impl syn::visit_mut::VisitMut for Check<'_> {
            fn visit_expr_mut(&mut self, e: &mut Expr) {
                syn::visit_mut::visit_expr_mut(self, e);
                if let Expr::MethodCall(q) = &*e {
                    if is_length_query(e) && mentions_any(&q.receiver, self.0) {
                        let span = q.method.span();
                        *e =
                            syn::parse_quote_spanned!(span=> ::mochi::__private::length_result(#e));
                    }
                }
            }
        }
        let mut e = e.clone();
        syn::visit_mut::VisitMut::visit_expr_mut(&mut Check(&self.active), &mut e);
        quote!(#e)
    }
}

/// `s.len()` (one of [`LENGTH_QUERIES`], no argument) as it is, not cast.
fn is_length_query(e: &Expr) -> bool {
    matches!(crate::desugar::unparen(e), Expr::MethodCall(q)
        if q.args.is_empty() && LENGTH_QUERIES.contains(&q.method.to_string().as_str()))
}
