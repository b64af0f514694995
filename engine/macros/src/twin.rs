//! The generic twin of a function over `f64`: the same function with `f64` replaced by
//! a type parameter, so that its forward-mode and forward-over-reverse companions
//! (`jvp`, `hvp`, `hessian`, `jacobian`) can run it on `Dual` numbers.
//!
//! A generic function is its own twin. A non-generic one gets a twin when every part
//! of it can change type: arguments `f64`, `&[f64]`, `&Vec<f64>`, `Vec<f64>` or of a
//! type that carries no derivative; an `f64` or `Vec<f64>` result; a body of
//! arithmetic, float methods that have rules, loops, branches, slices, `Vec`s and
//! iterator chains. Float literals and constants become `lit::<T>(..)`, `f64::m(a, ..)`
//! becomes `a.m(..)`. Anything else (a call to another function, a struct, an array
//! type, a cast of a float to an integer, …) gives a reason instead of a twin, and the
//! companions then say that reason where they are called.

use proc_macro2::{Span, TokenStream};
use quote::{quote, ToTokens};
use std::collections::{HashMap, HashSet};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::visit_mut::VisitMut;
use syn::{Expr, FnArg, ItemFn, Pat, ReturnType, Type};

/// Why a function has no twin, as the name of the type its missing companions' error
/// prints (`mochi::__private::because::…`).
#[derive(Clone, Copy)]
pub enum Why {
    Method,
    MethodNotAsked,
    Argument,
    Result,
    Call,
    Generic,
    Syntax,
    Off,
    Associated,
}

impl Why {
    pub fn type_name(self) -> &'static str {
        match self {
            Why::Method => "ItIsAMethod",
            Why::MethodNotAsked => "MethodsHaveThemWithDifferentiableHigherOrder",
            Why::Argument => "AnArgumentIsNotAFloatASliceOrAVecOfFloats",
            Why::Result => "ItsResultIsNotAFloatOrAVecOfFloats",
            Why::Call => "ItCallsAFunctionOrMethodWithoutAGenericForm",
            Why::Generic => "ItIsGenericOverMoreThanOneScalarType",
            Why::Syntax => "ItUsesSyntaxWithoutAGenericForm",
            Why::Off => "TheHigherOrderFeatureOfMochiIsOff",
            Why::Associated => "ItIsAnAssociatedFunctionDeclareItOutsideTheImpl",
        }
    }
}

/// The name of the twin's scalar parameter.
pub const PARAM: &str = "__MochiT";

thread_local! {
    /// The float type of the function being expanded (`f64`, or `f32` for a function
    /// written over `f32` alone): the type the twin replaces.
    static FLOAT: std::cell::Cell<&'static str> = const { std::cell::Cell::new("f64") };
    /// The function asked for its higher-order companions (`#[differentiable(higher_order)]`):
    /// the twin builds the generic mirror of a struct the function builds.
    static STRUCTS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// The type of the `impl` block whose methods are being expanded: `Self { .. }` in a
    /// method's twin builds its mirror.
    static IMPL_TYPE: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
    /// The type parameters of the free function being expanded (`None` for a method,
    /// whose `impl` block's parameters the attribute does not see): a one-letter name
    /// not among them is a type, `struct P`, not a parameter.
    static TYPE_PARAMS: std::cell::RefCell<Option<Vec<String>>> = const { std::cell::RefCell::new(None) };
    /// The type parameters of the `impl` block whose methods are being expanded.
    static IMPL_PARAMS: std::cell::RefCell<Option<Vec<String>>> = const { std::cell::RefCell::new(None) };
}

/// Records the type parameters in scope of the function expanded next: all of them for
/// a free function or a method of a marked `impl` block (`Some`, with the block's),
/// unknown for a method marked alone (`None`).
pub fn set_type_params(func: &ItemFn) {
    let own = func.sig.generics.type_params().map(|p| p.ident.to_string());
    let params = match (
        impl_type().is_some(),
        IMPL_PARAMS.with(|p| p.borrow().clone()),
    ) {
        (true, Some(mut block)) => {
            block.extend(own);
            Some(block)
        }
        (false, _) if func.sig.receiver().is_none() => Some(own.collect()),
        _ => None,
    };
    TYPE_PARAMS.with(|t| *t.borrow_mut() = params);
}

/// Records the type parameters of the `impl` block whose methods are expanded next
/// (`None` after).
pub fn set_impl_params(generics: Option<&syn::Generics>) {
    let params = generics.map(|g| g.type_params().map(|p| p.ident.to_string()).collect());
    IMPL_PARAMS.with(|p| *p.borrow_mut() = params);
}

/// Whether a one-letter capital `name` is a type (see `TYPE_PARAMS`).
pub(crate) fn letter_is_type(name: &str) -> bool {
    TYPE_PARAMS.with(|t| {
        t.borrow()
            .as_ref()
            .is_some_and(|ps| !ps.iter().any(|p| p == name))
    })
}

/// Records the type of the `impl` block whose methods are expanded next (`None` after).
pub fn set_impl_type(name: Option<String>) {
    IMPL_TYPE.with(|t| *t.borrow_mut() = name);
}

/// The type of the `impl` block whose methods are being expanded, if any.
pub fn impl_type() -> Option<String> {
    IMPL_TYPE.with(|t| t.borrow().clone())
}

/// Records whether the function being expanded asked for higher-order companions, so
/// that its twin builds the generic mirrors `#[derive(Tangent)]` writes of its structs.
pub fn set_builds_mirrors(asked: bool) {
    STRUCTS.with(|s| s.set(asked));
}

/// The float type the twin of the function being expanded replaces.
pub fn float() -> &'static str {
    FLOAT.with(|f| f.get())
}

/// Records the float type of `func` for what follows (`make`, the stand-ins, the
/// companions): `f32` when its signature names `f32` and not `f64`, else `f64`.
pub fn set_float_of(func: &ItemFn) {
    let f32_only = crate::analysis::signature_float_type(&func.sig).is_some_and(|t| t == "f32");
    FLOAT.with(|f| f.set(if f32_only { "f32" } else { "f64" }));
}

/// The float type `func`'s companions take: `f64` for a generic function.
pub fn set_float(name: &'static str) {
    FLOAT.with(|f| f.set(name));
}

/// The other float type, which a twin cannot hold beside its own.
fn other_float() -> &'static str {
    if float() == "f64" {
        "f32"
    } else {
        "f64"
    }
}

/// Float methods that have scalar rules (and so exist on every `Scalar`), or that carry
/// no derivative.
pub const FLOAT_METHODS: &[&str] = &[
    "abs",
    "acos",
    "acosh",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "cbrt",
    "ceil",
    "clamp",
    "copysign",
    "cos",
    "cosh",
    "exp",
    "exp2",
    "exp_m1",
    "floor",
    "fract",
    "hypot",
    "ln",
    "ln_1p",
    "log",
    "log10",
    "log2",
    "max",
    "min",
    "mul_add",
    "powf",
    "powi",
    "recip",
    "round",
    "round_ties_even",
    "signum",
    "sin",
    "sin_cos",
    "sinh",
    "sqrt",
    "tan",
    "tanh",
    "to_degrees",
    "to_radians",
    "trunc",
    "is_nan",
    "is_finite",
    "is_infinite",
    "is_sign_positive",
    "is_sign_negative",
    "partial_cmp",
];

/// Methods of slices, `Vec`s, iterators and `Option`s that work for any element type.
pub const SEQ_METHODS: &[&str] = &[
    "len",
    "push_back",
    "push_front",
    "pop_back",
    "pop_front",
    "front",
    "back",
    "front_mut",
    "back_mut",
    "is_empty",
    "iter",
    "into_iter",
    "iter_mut",
    "map",
    "sum",
    "product",
    "zip",
    "enumerate",
    "fold",
    "rev",
    "skip",
    "take",
    "step_by",
    "copied",
    "cloned",
    "collect",
    "windows",
    "chunks",
    "chunks_exact",
    "rchunks",
    "rchunks_exact",
    "remainder",
    "first",
    "last",
    "unwrap",
    "push",
    "clone",
    "to_vec",
    "to_owned",
    "swap",
    "max_by",
    "min_by",
    "reduce",
    "for_each",
    "filter",
    "count",
    "split_at",
    "get",
    "as_slice",
    "fill",
    "copy_from_slice",
    "is_some",
    "is_none",
    "is_ok",
    "is_err",
    "is_some_and",
    "is_none_or",
    "map_err",
    "ok_or",
    "ok_or_else",
    "ok",
    "err",
    "unwrap_or",
    "expect",
    "pop",
    "contains",
    "cmp",
    "min_by_key",
    "max_by_key",
    "abs_diff",
    "pow",
    "saturating_sub",
    "wrapping_add",
    "checked_sub",
    "rem_euclid",
    "div_euclid",
    "reverse",
    "rotate_left",
    "copy_within",
    "replace",
    "rotate_right",
    "extend",
    "extend_from_slice",
    "extend_from_within",
    "truncate",
    "split_off",
    "drain",
    "entry",
    "or_insert",
    "or_insert_with",
    "or_default",
    "and_modify",
    "contains_key",
    "keys",
    "values",
    "clear",
    "append",
    "resize",
    "insert",
    "remove",
    "swap_remove",
    "chain",
    "take_while",
    "skip_while",
    "any",
    "all",
    "find",
    "position",
    "partition_point",
    "binary_search_by",
    "binary_search_by_key",
    "nth",
    "sort_by",
    "sort_unstable_by",
    "select_nth_unstable_by",
    "sort",
    "sort_unstable",
    "sort_by_key",
    "sort_unstable_by_key",
    "dedup",
    "dedup_by",
    "dedup_by_key",
    "split_first",
    "split_last",
    "first_mut",
    "last_mut",
    "get_mut",
    "unwrap_or_else",
    "map_or",
    "filter_map",
    "flat_map",
    "find_map",
    "or",
    "or_else",
    "and_then",
    "flatten",
    "partition",
    "unzip",
    "by_ref",
    "fuse",
    "inspect",
    "peekable",
    "get_unchecked",
    "get_unchecked_mut",
    "peek",
    // (Text: `f64` has none of these, so the receiver is not the float the twin replaces.)
    "starts_with",
    "ends_with",
    "as_str",
    "trim",
    "to_lowercase",
    "to_uppercase",
    "eq_ignore_ascii_case",
    "strip_prefix",
    "strip_suffix",
    "rfind",
    "rposition",
    "retain",
    "rchunks",
    "next",
    "next_back",
    "unwrap_or_default",
    "map_or_else",
    "cycle",
    "map_while",
    "then",
    "then_some",
    "concat",
    "scan",
    "split_at_mut",
    "chunks_mut",
    "chunks_exact_mut",
    "try_into",
];

/// Methods whose results are never floats.
const NOT_FLOAT_METHODS: &[&str] = &[
    "len",
    "nrows",
    "ncols",
    "len_of",
    "ndim",
    "dim",
    "raw_dim",
    "shape",
    "is_empty",
    "count",
    "is_nan",
    "is_finite",
    "is_infinite",
    "is_sign_positive",
    "is_sign_negative",
    "partial_cmp",
    "is_some",
    "is_none",
    "contains",
];

/// ndarray's owned arrays and views: with `f64` elements, their twin holds the twin's
/// scalar (`Array1<f64>` → `Array1<T>`), which the array rules cover.
pub const ARRAY_TYPES: &[&str] = &[
    "Array",
    "Array0",
    "Array1",
    "Array2",
    "Array3",
    "Array4",
    "Array5",
    "Array6",
    "ArrayD",
    "ArrayView",
    "ArrayView0",
    "ArrayView1",
    "ArrayView2",
    "ArrayView3",
    "ArrayView4",
    "ArrayView5",
    "ArrayView6",
    "ArrayViewD",
    // (`Zip::from(&mut c).and(&a).for_each(..)`: over any element type.)
    "Zip",
];

/// Methods of ndarray's arrays that work for any element type the rules cover (`Dual`
/// included): allowed in a function that holds arrays.
pub const ARRAY_METHODS: &[&str] = &[
    "into_shape_with_order",
    "into_shape_clone",
    "to_shape",
    "zip_mut_with",
    "rows_mut",
    "columns_mut",
    "outer_iter_mut",
    "axis_iter_mut",
    "row_mut",
    "column_mut",
    "and",
    "and_broadcast",
    "map_collect",
    "dot",
    "t",
    "mapv",
    "mapv_into",
    "mapv_inplace",
    "map_inplace",
    "sum_axis",
    "mean_axis",
    "mean",
    "var",
    "std",
    "dim",
    "shape",
    "nrows",
    "ncols",
    "row",
    "column",
    "rows",
    "columns",
    "slice",
    "view",
    "into_owned",
    "as_standard_layout",
    "scaled_add",
    "assign",
    "outer_iter",
    "axis_iter",
    "axis_chunks_iter",
    "lanes",
    "map_axis",
    "fold_axis",
    "indexed_iter",
    "diag",
    "insert_axis",
    "broadcast",
    "raw_dim",
    "len_of",
    "index_axis",
    "slice_axis",
    "product_axis",
    "var_axis",
    "std_axis",
    "reversed_axes",
    "permuted_axes",
    "swap_axes",
    "swapped_axes",
    "select",
    "clamp",
    "log",
    "floor",
    "ceil",
    "round",
    "trunc",
    "fract",
    "to_degrees",
    "to_radians",
    "pow2",
    "flatten",
    "slice_mut",
    "row_mut",
    "column_mut",
    "index_axis_mut",
    "slice_axis_mut",
    "diag_mut",
    "square",
    "exp",
    "ln",
    "sin",
    "cos",
    "tan",
    "tanh",
    "sinh",
    "cosh",
    "sqrt",
    "powi",
    "powf",
    "abs",
    "recip",
    "signum",
    "exp_m1",
    "ln_1p",
    "log2",
    "log10",
    "cbrt",
];

/// `a.total_cmp(b)` for the twin's scalar, which orders by value: `a.partial_cmp(b)`, a
/// NaN equal to all.
fn by_value_cmp(a: &Expr, b: &Expr) -> Expr {
    syn::parse_quote!(#a.partial_cmp(#b).unwrap_or(::core::cmp::Ordering::Equal))
}

/// Macros of a format string and its arguments.
const FORMAT_MACROS: &[&str] = &[
    "print",
    "println",
    "eprint",
    "eprintln",
    "format",
    "panic",
    "unreachable",
    "todo",
    "unimplemented",
];

/// Finds a float literal (in a pattern).
struct FloatLit<'a>(&'a mut bool);

impl<'a> Visit<'a> for FloatLit<'_> {
    fn visit_lit(&mut self, l: &'a syn::Lit) {
        *self.0 |= matches!(l, syn::Lit::Float(_));
    }
}

/// Array constructors that work for any element type.
const ARRAY_CALLS: &[&str] = &[
    "zeros",
    "ones",
    "from_vec",
    "from",
    "from_elem",
    "from_shape_vec",
    // (`ArrayView2::from_shape((r, c), x)` of a slice.)
    "from_shape",
    "eye",
    "linspace",
    "from_diag",
    "from_shape_fn",
    "from_iter",
];

/// The integer types: their associated functions and constants keep their type.
use crate::activity::INTEGER_TYPES;

/// Paths of calls that the twin keeps (they work for any element type).
/// The companions `#[differentiable]` writes in a function's module (`f::gradient`): a
/// path ending in one names a companion, not a function of its own.
const COMPANIONS: &[&str] = &[
    "gradient",
    "value_and_gradient",
    "value_and_gradient_into",
    "gradient_into",
    "pullback",
    "pullback_into",
    "rrule",
    "jvp",
    "hvp",
    "hessian",
    "jacobian",
    "value_gradient_and_hessian",
];

/// A call the twin keeps as written: one of [`KEPT_CALLS`], or one of `std::iter`'s
/// makers imported by name (`successors(..)`), which the derivation reads as the
/// standard ones.
fn kept_call(path: &str) -> bool {
    KEPT_CALLS.contains(&path) || crate::rewrite::ITER_MAKERS.contains(&path)
}

const KEPT_CALLS: &[&str] = &[
    "std::iter::zip",
    "core::iter::zip",
    "iter::zip",
    "Vec::new",
    "Vec::with_capacity",
    "Vec::from",
    "Vec::from_iter",
    "HashMap::new",
    "HashMap::with_capacity",
    "BTreeMap::new",
    "HashSet::new",
    "BTreeSet::new",
    "std::collections::HashMap::new",
    "std::collections::BTreeMap::new",
    "std::mem::swap",
    "std::mem::replace",
    "mem::swap",
    "mem::replace",
    "core::mem::swap",
    "core::mem::replace",
    "std::mem::take",
    "mem::take",
    "core::mem::take",
    "String::from",
    "std::string::String::from",
    "std::cmp::min",
    "std::cmp::max",
    "Some",
    "Ok",
    "Err",
    "no_grad",
    "mochi::no_grad",
    "drop",
    "std::mem::drop",
    "core::mem::drop",
    "Axis",
    "ndarray::Axis",
    "aview1",
    "ndarray::aview1",
    "std::iter::repeat",
    "core::iter::repeat",
    "iter::repeat",
    "std::iter::repeat_n",
    "core::iter::repeat_n",
    "iter::repeat_n",
    "std::iter::once",
    "core::iter::once",
    "iter::once",
    "std::array::from_fn",
    "core::array::from_fn",
    "array::from_fn",
    "std::iter::from_fn",
    "core::iter::from_fn",
    "iter::from_fn",
    "std::iter::successors",
    "core::iter::successors",
    "iter::successors",
];

/// Whether `e` is a scalar, as far as its syntax shows: a float written in place, a name
/// in `scalars`, arithmetic and float methods of scalars, an element `x[i]`, a sum or a
/// mean.
fn scalar_expr(e: &Expr, scalars: &HashSet<String>) -> bool {
    match e {
        _ if scalar_literal(e) => true,
        Expr::Path(p) => p
            .path
            .get_ident()
            .is_some_and(|i| scalars.contains(&i.to_string())),
        Expr::Paren(p) => scalar_expr(&p.expr, scalars),
        Expr::Group(g) => scalar_expr(&g.expr, scalars),
        Expr::Unary(u) => scalar_expr(&u.expr, scalars),
        Expr::Binary(b) => {
            use syn::BinOp::*;
            matches!(b.op, Add(_) | Sub(_) | Mul(_) | Div(_) | Rem(_))
                && scalar_expr(&b.left, scalars)
                && scalar_expr(&b.right, scalars)
        }
        Expr::Index(i) => {
            !matches!(&*i.index, Expr::Range(_))
                && !matches!(&*i.expr, Expr::Path(p)
                    if p.path.get_ident().is_some_and(|n| scalars.contains(&format!("[]{n}"))))
        }
        // `if c { 1.0 } else { 0.0 }`, `match k { .. }`, `{ ..; v }`: scalar when every
        // value it can take is.
        Expr::If(i) => {
            tail_scalar(&i.then_branch, scalars)
                && i.else_branch
                    .as_ref()
                    .is_some_and(|(_, e)| scalar_expr(e, scalars))
        }
        Expr::Block(b) => tail_scalar(&b.block, scalars),
        Expr::Match(m) => {
            !m.arms.is_empty() && m.arms.iter().all(|a| scalar_expr(&a.body, scalars))
        }
        Expr::MethodCall(m) => {
            let name = m.method.to_string();
            matches!(name.as_str(), "sum" | "product")
                || (name == "unwrap"
                    && matches!(&*m.receiver, Expr::MethodCall(r) if r.method == "mean"))
                || (FLOAT_METHODS.contains(&name.as_str())
                    && !NOT_FLOAT_METHODS.contains(&name.as_str())
                    && scalar_expr(&m.receiver, scalars))
        }
        _ => false,
    }
}

/// Whether a block's value (its last expression) is a [`scalar_expr`].
fn tail_scalar(b: &syn::Block, scalars: &HashSet<String>) -> bool {
    matches!(b.stmts.last(), Some(syn::Stmt::Expr(e, None)) if scalar_expr(e, scalars))
}

/// The name of a parameter typed as the float (`v: f64`).
fn float_param(pt: &syn::PatType) -> Option<String> {
    match &*pt.pat {
        Pat::Ident(pi) if is_f64(&pt.ty) => Some(pi.ident.to_string()),
        _ => None,
    }
}

/// The names that hold a scalar, as far as the syntax shows: float arguments, and (to a
/// fixpoint) locals bound to a [`scalar_expr`] or declared with the float type.
fn scalar_names(func: &ItemFn) -> HashSet<String> {
    let mut names: HashSet<String> = func
        .sig
        .inputs
        .iter()
        .filter_map(|a| match a {
            FnArg::Typed(pt) => float_param(pt),
            _ => None,
        })
        .collect();
    // (`[]pts` for a sequence of structs, whose elements are not floats, see
    // [`scalar_expr`].)
    names.extend(struct_sequences(func).into_iter().map(|n| format!("[]{n}")));
    let lets = BodyLets::of(&func.block);
    // A name bound twice must be a scalar in every binding.
    loop {
        let before = names.len();
        for (name, ..) in &lets.lets {
            if names.contains(name) {
                continue;
            }
            let all = lets
                .lets
                .iter()
                .filter(|(n, ..)| n == name)
                .all(|(_, ty, init)| {
                    ty.as_ref().is_some_and(is_f64)
                        || init.as_ref().is_some_and(|e| scalar_expr(e, &names))
                });
            if all {
                names.insert(name.clone());
            }
        }
        if names.len() == before {
            break;
        }
    }
    names
}

/// `X` of `X.iter()`, `X.iter().copied()`, `X.iter().cloned()`, `&X` or `X`.
fn constant_sequence(e: &Expr) -> Option<String> {
    match e {
        Expr::Path(p) => p.path.get_ident().map(|i| i.to_string()),
        Expr::Reference(r) if r.mutability.is_none() => constant_sequence(&r.expr),
        Expr::Paren(p) => constant_sequence(&p.expr),
        Expr::MethodCall(m)
            if m.args.is_empty()
                && matches!(m.method.to_string().as_str(), "copied" | "cloned") =>
        {
            constant_sequence(&m.receiver)
        }
        Expr::MethodCall(m) if m.args.is_empty() && m.method == "iter" => match &*m.receiver {
            Expr::Path(p) => p.path.get_ident().map(|i| i.to_string()),
            _ => None,
        },
        _ => None,
    }
}
/// The names `for` loops bind to the elements of a constant (`for &y in YS.iter()`,
/// `for &y in &YS`, `for p in PTS`) or of a local array of literals: in the twin, where
/// a constant of floats holds its scalar, they hold the scalar (or rows of it), so a
/// plain function given them takes them back as floats ([`mochi::__private::Unlift`]).
fn constant_elements(block: &syn::Block) -> HashSet<String> {
    struct Loops {
        literal_arrays: HashSet<String>,
        out: HashSet<String>,
    }
    impl<'a> Visit<'a> for Loops {
        fn visit_local(&mut self, l: &'a syn::Local) {
            if let (Pat::Ident(p), Some(init)) = (&l.pat, &l.init) {
                if matches!(&*init.expr, Expr::Array(a) if a.elems.iter().all(scalar_literal)) {
                    self.literal_arrays.insert(p.ident.to_string());
                }
            }
            syn::visit::visit_local(self, l);
        }
        fn visit_expr_for_loop(&mut self, f: &'a syn::ExprForLoop) {
            let constant = constant_sequence(&f.expr)
                .is_some_and(|c| is_constant_name(&c) || self.literal_arrays.contains(&c));
            if constant {
                let name = match &*f.pat {
                    Pat::Ident(p) => Some(&p.ident),
                    Pat::Reference(r) => match &*r.pat {
                        Pat::Ident(p) => Some(&p.ident),
                        _ => None,
                    },
                    _ => None,
                };
                if let Some(n) = name {
                    self.out.insert(n.to_string());
                }
            }
            syn::visit::visit_expr_for_loop(self, f);
        }
    }
    let mut loops = Loops {
        literal_arrays: HashSet::new(),
        out: HashSet::new(),
    };
    loops.visit_block(block);
    loops.out
}

/// The names bound, once in the body, to the elements of a constant sequence by a
/// closure of a chain over it (`OBS.iter().map(|o| ..)`, also after `enumerate` or as
/// the first of a `zip`) or by a `for` loop over it: a field of one (`o.t` of a `const
/// OBS: [Obs; 4]` of a plain struct) is read lifted by type, as `OBS[i].t` is. (A name
/// of a part that is not from the constant, `zip`'s second, holds no constant struct:
/// a field of it, lifted by type, is kept as it is.)
fn constant_struct_elements(block: &syn::Block) -> HashSet<String> {
    // The sequence a chain starts from, through its adapters.
    fn root(e: &Expr) -> Option<String> {
        match e {
            Expr::MethodCall(m) => root(&m.receiver),
            other => constant_sequence(other),
        }
    }
    struct Chains {
        found: HashSet<String>,
        counts: std::collections::HashMap<String, usize>,
    }
    impl<'a> Visit<'a> for Chains {
        fn visit_pat_ident(&mut self, p: &'a syn::PatIdent) {
            *self.counts.entry(p.ident.to_string()).or_default() += 1;
            syn::visit::visit_pat_ident(self, p);
        }
        fn visit_expr_method_call(&mut self, m: &'a syn::ExprMethodCall) {
            if root(&m.receiver).is_some_and(|r| is_constant_name(&r)) {
                for a in &m.args {
                    if let Expr::Closure(c) = a {
                        for p in &c.inputs {
                            self.found.extend(pat_names(p));
                        }
                    }
                }
            }
            syn::visit::visit_expr_method_call(self, m);
        }
        fn visit_expr_for_loop(&mut self, f: &'a syn::ExprForLoop) {
            if root(&f.expr).is_some_and(|r| is_constant_name(&r)) {
                self.found.extend(pat_names(&f.pat));
            }
            syn::visit::visit_expr_for_loop(self, f);
        }
    }
    let mut c = Chains {
        found: HashSet::new(),
        counts: Default::default(),
    };
    c.visit_block(block);
    let counts = c.counts;
    c.found
        .into_iter()
        .filter(|n| counts.get(n) == Some(&1))
        .collect()
}

/// Locals bound (without `mut`) to a struct literal whose fields are all literals
/// (`let hp = Hyper { l2: 0.01, clip: 5.0, steps: 3 };`), bound once: a configuration of
/// constants, which the twin keeps as written and reads field by field lifted
/// (`(&ConstOf(hp.clip, ..)).lift_or_keep()`), so the struct needs no generic mirror.
fn constant_struct_locals(block: &syn::Block) -> HashSet<String> {
    struct Lets {
        found: Vec<String>,
        other: Vec<String>,
        /// The types of `found`'s locals.
        types: HashMap<String, String>,
        /// `(local, method)` of `base.with_warm(..)` and `base.clone().with_warm(..)`.
        called: Vec<(String, String)>,
    }
    fn literal(e: &Expr) -> bool {
        match e {
            Expr::Lit(l) => matches!(
                l.lit,
                syn::Lit::Float(_) | syn::Lit::Int(_) | syn::Lit::Bool(_)
            ),
            Expr::Unary(u) => matches!(u.op, syn::UnOp::Neg(_)) && literal(&u.expr),
            Expr::Paren(p) => literal(&p.expr),
            _ => false,
        }
    }
    impl<'a> Visit<'a> for Lets {
        fn visit_local(&mut self, l: &'a syn::Local) {
            let mut names = Vec::new();
            crate::activity::pat_names(&l.pat, &mut names);
            let constant = match (&l.pat, &l.init) {
                (Pat::Ident(p), Some(init)) if p.mutability.is_none() && p.by_ref.is_none() => {
                    matches!(&*init.expr, Expr::Struct(st) if st.rest.is_none()
                        && st.qself.is_none()
                        && !st.path.is_ident("Self")
                        && st.fields.iter().all(|f| literal(&f.expr)))
                }
                _ => false,
            };
            if constant {
                if let (Some(init), [name]) = (&l.init, &names[..]) {
                    if let Expr::Struct(st) = &*init.expr {
                        if let Some(t) = st.path.segments.last() {
                            self.types.insert(name.clone(), t.ident.to_string());
                        }
                    }
                }
                self.found.extend(names);
            } else {
                self.other.extend(names);
            }
            syn::visit::visit_local(self, l);
        }
        fn visit_expr_method_call(&mut self, m: &'a syn::ExprMethodCall) {
            let mut receiver = crate::desugar::unparen(&m.receiver);
            while let Expr::MethodCall(c) = receiver {
                if c.method != "clone" || !c.args.is_empty() {
                    break;
                }
                receiver = crate::desugar::unparen(&c.receiver);
            }
            if let Expr::Path(p) = receiver {
                if let Some(i) = p.path.get_ident() {
                    self.called.push((i.to_string(), m.method.to_string()));
                }
            }
            syn::visit::visit_expr_method_call(self, m);
        }
    }
    let mut lets = Lets {
        found: Vec::new(),
        other: Vec::new(),
        types: HashMap::new(),
        called: Vec::new(),
    };
    lets.visit_block(block);
    // (A builder's start, `base.clone().with_warm(p[0])` of a method returning `Self`,
    // given values that carry derivatives: a value of the struct's mirror, lifted.)
    let built = |n: &String| {
        lets.types.get(n).is_some_and(|t| {
            lets.called
                .iter()
                .any(|(l, m)| l == n && returns_self(t, m))
        })
    };
    // (Bound once: a name bound again may be another value.)
    lets.found
        .iter()
        .filter(|n| {
            lets.found.iter().filter(|m| m == n).count() == 1
                && !lets.other.contains(n)
                && !built(n)
        })
        .cloned()
        .collect()
}

/// The name of a constant's lifted copy in a generic form (`__mochi_const_Z`, see
/// `Hoist`): a local the body only reads, walked as the constant is.
pub(crate) fn hoisted_constant(name: &str) -> bool {
    name.starts_with("__mochi_const_")
}

/// A constant's name, `YS`, `WEIGHTS_2`.
pub(crate) fn is_constant_name(n: &str) -> bool {
    n.len() > 1
        && n.starts_with(|c: char| c.is_ascii_uppercase())
        && n.chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}
/// A float written in place (`2.0`, `f64::EPSILON`, `n as f64`, `-0.5`): a scalar
/// whatever surrounds it.
fn scalar_literal(e: &Expr) -> bool {
    match e {
        Expr::Lit(l) => matches!(l.lit, syn::Lit::Float(_) | syn::Lit::Int(_)),
        Expr::Path(p) => p.qself.is_none() && is_float_constant(&p.path),
        Expr::Cast(c) => is_f64(&c.ty),
        Expr::Paren(p) => scalar_literal(&p.expr),
        Expr::Group(g) => scalar_literal(&g.expr),
        Expr::Unary(u) => matches!(u.op, syn::UnOp::Neg(_)) && scalar_literal(&u.expr),
        _ => false,
    }
}

/// The twin of `func` and whether it holds arrays (its derived rule then computes its
/// value too, see `emit::Extras::primal_via_rule`), or why there is none.
pub fn make(func: &ItemFn) -> Result<(ItemFn, bool), (Why, String, Span)> {
    make_with(func, false)
}

/// Is `sig` generic over constants and lifetimes only (`<const N: usize>`, `<'a>`, no
/// bounds to meet)?
pub fn consts_and_lifetimes_only(sig: &syn::Signature) -> bool {
    !sig.generics.params.is_empty()
        && sig.generics.where_clause.is_none()
        && sig.generics.params.iter().all(|p| match p {
            syn::GenericParam::Const(_) => true,
            syn::GenericParam::Lifetime(l) => l.bounds.is_empty(),
            syn::GenericParam::Type(_) => false,
        })
}

/// The name of a method's twin, which reads as the fix where it is missing (a method
/// whose twin calls `self.m(..)` needs `m` asked too).
pub fn method_twin_name(method: &syn::Ident) -> syn::Ident {
    quote::format_ident!(
        "{}__twin_needs_differentiable_higher_order",
        method,
        span = method.span()
    )
}

/// The method a twin's name (see [`method_twin_name`]) is made from, `apply` of
/// `apply__twin_needs_differentiable_higher_order`; `None` for another name.
pub fn method_of_twin(name: &str) -> Option<&str> {
    name.strip_suffix("__twin_needs_differentiable_higher_order")
}

thread_local! {
    /// Set while [`make_plain_method`] makes a generic form: an integer or `bool` result
    /// is allowed.
    static PLAIN_RESULT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// An integer, `bool` or `char`, by its name.
fn plain_result(t: &Type) -> bool {
    matches!(t, Type::Path(p) if p.qself.is_none() && p.path.get_ident().is_some_and(|i| {
        let n = i.to_string();
        crate::activity::INTEGER_TYPES.contains(&n.as_str()) || n == "bool" || n == "char"
    }))
}

/// The generic form of a method whose result carries no derivative (`fn degree(&self) ->
/// usize`), as [`make_method`] makes a method's: the struct's mirror has the method too.
pub fn make_plain_method(func: &ItemFn) -> Result<(ItemFn, bool), (Why, String, Span)> {
    PLAIN_RESULT.with(|p| p.set(true));
    let made = make_method(func);
    PLAIN_RESULT.with(|p| p.set(false));
    made
}

/// The twin of a `&self` method: an associated function that takes the struct's generic
/// mirror, `this: &<Self as LiftField>::Of<T>`, in place of `self` (the mirror has the
/// struct's fields with their floats of type `T`; `#[derive(Tangent)]` writes it). The
/// mirror's fields are read by name, so the projection must normalise where the twin is
/// written: the struct must implement `LiftField`, which is why a method asks for its
/// twin with `#[differentiable(higher_order)]`.
pub fn make_method(func: &ItemFn) -> Result<(ItemFn, bool), (Why, String, Span)> {
    // The type named in the signature (`fn stepped(&self, dt: f64) -> P`, `other: &P`)
    // is `Self`, which the generic form makes the mirror.
    let mut named = func.clone();
    if let Some(ty) = impl_type() {
        crate::rewrite::ReplaceType {
            from: &ty,
            to: syn::parse_quote!(Self),
        }
        .visit_signature_mut(&mut named.sig);
    }
    let func = &named;
    let (mut twin, arrays) = make_with(func, true)?;
    twin.sig.ident = method_twin_name(&func.sig.ident);
    let t = syn::Ident::new(PARAM, Span::call_site());
    // (An associated function without `self`, `V2::new(x, y)`, keeps its arguments.)
    if let (Some(first), Some(r)) = (twin.sig.inputs.first_mut(), func.sig.receiver()) {
        *first = if r.reference.is_none() {
            let m = r.mutability;
            syn::parse_quote!(#m this: <Self as ::mochi::__private::LiftField>::Of<#t>)
        } else {
            syn::parse_quote!(this: &<Self as ::mochi::__private::LiftField>::Of<#t>)
        };
    }
    rename_self(&mut twin.block, &syn::Ident::new("this", Span::call_site()));
    // `self.conj()` of a `fn conj(self)` in a `&self` method (or `self.norm()` in a
    // method taking `self`): the receiver handed on as the other twin takes it.
    if let Some(r) = func.sig.receiver() {
        struct Receivers(bool);
        impl VisitMut for Receivers {
            fn visit_expr_call_mut(&mut self, c: &mut syn::ExprCall) {
                syn::visit_mut::visit_expr_call_mut(self, c);
                let Expr::Path(f) = &*c.func else { return };
                let own = f.path.segments.len() == 2
                    && f.path.segments[0].ident == "Self"
                    && method_of_twin(&f.path.segments[1].ident.to_string()).is_some();
                match c.args.first_mut() {
                    Some(a @ Expr::Path(_))
                        if own && matches!(&*a, Expr::Path(p) if p.path.is_ident("this")) =>
                    {
                        *a = if self.0 {
                            syn::parse_quote!(::mochi::__private::receiver(this))
                        } else {
                            syn::parse_quote!(::mochi::__private::receiver(&this))
                        };
                    }
                    _ => {}
                }
            }
        }
        // (Not for `&mut self`: the other method may take it as it is, which a
        // reborrow through `receiver` would need to know.)
        if r.mutability.is_none() {
            Receivers(r.reference.is_some()).visit_block_mut(&mut twin.block);
        }
    }
    Ok((twin, arrays))
}

/// `self` in expressions and in macros' tokens (`assert!(self.w.len() > 0)`) renamed to
/// `to`: the receiver of a method taken as a plain argument (`this` of a twin, the float
/// of `impl Mul<V2> for f64` as the hidden method's `__mochi_lhs`).
pub(crate) fn rename_self(block: &mut syn::Block, to: &syn::Ident) {
    struct Rename<'t>(&'t syn::Ident);
    impl VisitMut for Rename<'_> {
        fn visit_expr_path_mut(&mut self, p: &mut syn::ExprPath) {
            if p.qself.is_none() && p.path.is_ident("self") {
                let to = self.0;
                p.path = syn::parse_quote!(#to);
            }
        }
        fn visit_macro_mut(&mut self, m: &mut syn::Macro) {
            fn rename(ts: TokenStream, to: &syn::Ident) -> TokenStream {
                ts.into_iter()
                    .map(|tt| match tt {
                        proc_macro2::TokenTree::Ident(i) if i == "self" => {
                            proc_macro2::TokenTree::Ident(syn::Ident::new(
                                &to.to_string(),
                                i.span(),
                            ))
                        }
                        proc_macro2::TokenTree::Group(g) => {
                            let mut n =
                                proc_macro2::Group::new(g.delimiter(), rename(g.stream(), to));
                            n.set_span(g.span());
                            proc_macro2::TokenTree::Group(n)
                        }
                        other => other,
                    })
                    .collect()
            }
            m.tokens = rename(m.tokens.clone(), self.0);
        }
    }
    Rename(to).visit_block_mut(block);
}

fn make_with(func: &ItemFn, method: bool) -> Result<(ItemFn, bool), (Why, String, Span)> {
    // (`azip!` as the `Zip` calls it stands for, which the generic form reads.)
    let mut expanded = ItemFn {
        block: Box::new(crate::desugar::with_azip_expanded(&func.block)),
        ..func.clone()
    };
    // `f64::from(k)` (lossless: from an integer or `f32`) as the cast it is, which the
    // generic form reads as a float made from its operand (as the derivation does).
    struct FromAsCast;
    impl VisitMut for FromAsCast {
        fn visit_expr_mut(&mut self, e: &mut Expr) {
            syn::visit_mut::visit_expr_mut(self, e);
            let Expr::Call(c) = e else { return };
            let Expr::Path(fp) = &*c.func else { return };
            let segs = segments(&fp.path);
            if fp.qself.is_none()
                && c.args.len() == 1
                && segs.len() == 2
                && (segs[0] == "f64" || segs[0] == "f32")
                && segs[1] == "from"
            {
                // (The parentheses the macro's: no lint on them in the user's code.)
                let (a, t) = (&c.args[0], &fp.path.segments[0].ident);
                *e = syn::parse_quote!(((#a) as #t));
            }
        }
    }
    FromAsCast.visit_block_mut(&mut expanded.block);
    crate::desugar::and_then_names_as_closures(&mut expanded.block);
    crate::desugar::struct_sums_as_folds(&mut expanded.block);
    if STRUCTS.with(|s| s.get()) {
        crate::desugar::intos_as_froms(&mut expanded.block, true);
        crate::desugar::inline_stored_chains(&mut expanded.block);
        rename_rebound_lets(&mut expanded);
        rename_shadowing_closure_params(&mut expanded);
        bind_field_sequences(&mut expanded);
    }
    let func = &expanded;
    set_float_of(func);
    // A method's `o: &Self`, `o: Self`: an argument of the user's type, as `o: &P2`.
    let user_type_arg = |ty: &Type| {
        user_type_arg(ty).or_else(|| {
            let (inner, by_ref) = match ty {
                Type::Reference(r) if r.mutability.is_none() => (&*r.elem, true),
                other => (other, false),
            };
            (method
                && matches!(inner, Type::Path(p) if p.qself.is_none() && p.path.is_ident("Self")))
            .then(|| (syn::Ident::new("Self", inner.span()), by_ref))
        })
    };
    let sig = &func.sig;
    // Generic over constants only (`norm<const N: usize>(v: [f64; N])`): the twin keeps
    // them beside its scalar.
    if !sig.generics.params.is_empty() && !consts_and_lifetimes_only(sig) {
        return Err((Why::Generic, "it is generic".into(), sig.generics.span()));
    }
    let consts: Vec<syn::ConstParam> = sig.generics.const_params().cloned().collect();
    if !consts.is_empty() && !method {
        LENGTH_GENERIC_FNS.note(&sig.ident.to_string());
    }
    if let (syn::ReturnType::Type(_, ty), false) = (&sig.output, method) {
        if array_type(ty).is_some() {
            ARRAY_RESULT_FNS.note(&sig.ident.to_string());
        }
    }
    let lifetimes: Vec<syn::LifetimeParam> = sig.generics.lifetimes().cloned().collect();
    let mut floats: HashSet<String> = HashSet::new();
    // Arguments of a struct or an enum of the user's.
    let mut user_args: HashSet<String> = HashSet::new();
    for a in &sig.inputs {
        let FnArg::Typed(pt) = a else {
            if let FnArg::Receiver(r) = a {
                // `self` carries derivatives but is not itself a float (`self.n as f64`
                // of an integer field is a constant).
                // (`self` by value: an operator's `fn add(self, o: V2) -> V2`.)
                // (`mut self` by value, a builder's `fn with_decay(mut self, d: f64) ->
                // Self`: the twin takes its mirror by value, `mut`.)
                if method && (r.mutability.is_none() || r.reference.is_none()) {
                    continue;
                }
            }
            let why = if method {
                "its receiver is `&mut self` or `mut self`"
            } else {
                "it is a method"
            };
            return Err((Why::Method, why.into(), a.span()));
        };
        let name = match &*pt.pat {
            Pat::Ident(pi) => pi.ident.to_string(),
            _ => {
                return Err((
                    Why::Argument,
                    "an argument is a pattern".into(),
                    pt.pat.span(),
                ))
            }
        };
        match arg_kind(&pt.ty) {
            Some(true) => {
                floats.insert(name);
            }
            Some(false) => {}
            // Floats in other shapes (`xs: &[Vec<f64>]`, `data: &[(f64, f64)]`): the
            // twin's scalar too, so a caller's twin passes its own (rows built from
            // its parameters carry derivatives); the companions lift them as constants.
            None if data_arg(&pt.ty) => {
                floats.insert(name);
            }
            None if user_type_arg(&pt.ty).is_some() && STRUCTS.with(|s| s.get()) => {
                // A struct or an enum of the user's (`m: &Model`, `act: Act`), asked for
                // with `higher_order`: its generic mirror (`LiftField::Of`).
                user_args.insert(name);
            }
            None => {
                let hint = if user_type_arg(&pt.ty).is_some() {
                    "; mark the function `#[differentiable(higher_order)]`, with the type deriving `Tangent` (a struct of floats, integers, `bool`s, `Vec`s of these or ndarray arrays of `f64`, or an enum) or an alias of floats in arrays or `Vec`s (`type Mat3 = [[f64; 3]; 3];`), to have them"
                } else {
                    ""
                };
                return Err((
                    Why::Argument,
                    format!(
                        "the argument `{name}` has the type `{}`{hint}",
                        type_text(&pt.ty)
                    ),
                    pt.ty.span(),
                ));
            }
        }
    }
    // A struct of the user's returned by value (`fn cross(a: V3, b: V3) -> V3`, a
    // method's `-> Self`), asked for with `higher_order`: the twin returns its generic
    // mirror.
    let struct_result = match &sig.output {
        ReturnType::Type(_, t) if STRUCTS.with(|s| s.get()) => match user_type_arg(t) {
            Some((ty, false)) => Some(ty),
            _ => None,
        },
        _ => None,
    };
    match &sig.output {
        ReturnType::Default => {}
        ReturnType::Type(_, t) if result_ok(t) || struct_result.is_some() => {}
        // (The generic form of a method whose result carries no derivative, given to the
        // mirror as written: see `make_plain_method`.)
        ReturnType::Type(_, t) if PLAIN_RESULT.with(|p| p.get()) && plain_result(t) => {}
        // A helper that writes floats it is lent and answers a count or a flag (`fn
        // clip_all(v: &mut [f64], hi: f64) -> usize`): its generic form writes them too
        // and answers the same.
        ReturnType::Type(_, t)
            if plain_result(t)
                && sig.inputs.iter().any(|a| {
                    matches!(a, FnArg::Typed(pt)
                        if matches!(&*pt.ty, Type::Reference(r) if r.mutability.is_some())
                            && arg_kind(&pt.ty) == Some(true))
                }) => {}
        ReturnType::Type(_, t) if user_type_arg(t).is_some_and(|(_, r)| !r) => {
            return Err((
                Why::Result,
                "its result is a struct (or a type alias); mark the function `#[differentiable(higher_order)]`, with the struct deriving `Tangent` (an alias naming floats in arrays or `Vec`s, `type Mat3 = [[f64; 3]; 3];`, needs nothing more), to have them".into(),
                t.span(),
            ))
        }
        other => {
            return Err((
                Why::Result,
                "its result is not an `f64`, a `Vec<f64>`, a tuple of them (integers and `bool`s beside), or an `Option` or a `Result` of one"
                    .into(),
                other.span(),
            ))
        }
    }
    // The names that carry a derivative: a call given one goes to a rule or to a
    // `#[differentiable]` function (the derivation requires it), so to its `__twin`.
    // (Also a method's `self`: `match *self { Loss::Huber(d) => .. }` of an enum.)
    if !user_args.is_empty() || method && sig.receiver().is_some() {
        if let Some((span, what)) = variant_field_binding(&func.block) {
            return Err((
                Why::Argument,
                format!("it binds a field of a variant in a pattern ({what}), a constant of the enum that the generic form does not lift"),
                span,
            ));
        }
    }
    let mut active = floats.clone();
    active.extend(user_args.iter().cloned());
    if method {
        active.insert("self".to_string());
    }
    crate::activity::analyse(&func.block, &mut active);
    crate::activity::add_closure_items(&func.block, &mut active);
    float_locals(&func.block, &mut floats);
    let mut twin = func.clone();
    // (A `const fn`'s twin is not one: its scalar's arithmetic is not `const`.)
    twin.sig.constness = None;
    let mut bound = all_pattern_names(&func.block);
    if method {
        bound.insert("self".to_string());
    }
    for a in &sig.inputs {
        if let FnArg::Typed(pt) = a {
            bound.extend(pat_names(&pt.pat));
        }
    }
    let mut rw = Rewrite {
        bound,
        floats: &floats,
        // (A function over no float declared in the body, `fn idx(i: usize) -> usize`,
        // is called as written too.)
        closures: closure_locals(&func.block)
            .into_iter()
            .chain(plain_nested_fns(&func.block))
            .collect(),
        array_names: array_locals(func),
        own: sig.ident.to_string(),
        active,
        arrays: holds_arrays(func),
        scalars: scalar_names(func),
        const_elems: constant_elements(&func.block),
        const_structs: constant_struct_locals(&func.block),
        const_struct_elems: constant_struct_elements(&func.block),
        struct_values: HashSet::new(),
        rule_primal: false,
        method,
        struct_locals: if STRUCTS.with(|s| s.get()) {
            let mut locals = struct_locals(func);
            for a in &sig.inputs {
                if let FnArg::Typed(pt) = a {
                    if let (Pat::Ident(p), Some((ty, by_ref))) = (&*pt.pat, user_type_arg(&pt.ty)) {
                        if user_args.contains(&p.ident.to_string()) {
                            locals.insert(p.ident.to_string(), (ty, by_ref));
                        }
                    }
                }
            }
            locals
        } else {
            Default::default()
        },
        structish: HashSet::new(),
        chain_results: HashSet::new(),
        in_no_grad: false,
        in_int_cast: false,
        integers: integer_names(func),
        error: None,
    };
    if STRUCTS.with(|s| s.get()) {
        let known: HashSet<String> = rw.struct_locals.keys().cloned().collect();
        rw.structish = structish_locals(func, &known);
        // (`let w = z.exp();`: a float or a struct; a method a float does not have,
        // `w.conj()`, makes it the struct.)
        let lets = BodyLets::of(&func.block);
        for (name, _, init) in &lets.lets {
            let once = lets.lets.iter().filter(|(n, ..)| n == name).count() == 1;
            if once
                && init
                    .as_ref()
                    .is_some_and(|e| of_struct_chain(e, &rw.structish))
            {
                rw.chain_results.insert(name.clone());
            }
        }
        let args = rw
            .struct_locals
            .iter()
            .filter(|(n, (_, by_ref))| !by_ref && user_args.contains(*n))
            .map(|(n, _)| n.clone())
            .collect();
        rw.struct_values = surely_struct_locals(func, args);
    }
    // (Asked for with `higher_order`, the callee's generic form returns the struct's
    // mirror, or its stand-in does and says why when used.)
    if let Some((name, span)) =
        field_of_call_result(&func.block).filter(|_| !STRUCTS.with(|s| s.get()))
    {
        rw.fail(
            Why::Call,
            format!("it reads a field of what `{name}` returns, a struct; mark this function and `{name}` `#[differentiable(higher_order)]`, with the struct deriving `Tangent`, to have them"),
            span,
        );
    }
    for a in &mut twin.sig.inputs {
        if let FnArg::Typed(pt) = a {
            if let Some((ty, by_ref)) = user_type_arg(&pt.ty) {
                if matches!(&*pt.pat, Pat::Ident(p) if user_args.contains(&p.ident.to_string())) {
                    let t = syn::Ident::new(PARAM, Span::call_site());
                    let of: Type =
                        syn::parse_quote!(<#ty as ::mochi::__private::LiftField>::Of<#t>);
                    *pt.ty = if by_ref { syn::parse_quote!(&#of) } else { of };
                    continue;
                }
            }
        }
        rw.visit_fn_arg_mut(a);
    }
    rw.visit_return_type_mut(&mut twin.sig.output);
    if let Some(ty) = &struct_result {
        let t = syn::Ident::new(PARAM, Span::call_site());
        twin.sig.output = syn::parse_quote!(-> <#ty as ::mochi::__private::LiftField>::Of<#t>);
    }
    rw.visit_block_mut(&mut twin.block);
    if let Some(e) = rw.error {
        return Err(e);
    }
    lift_if_let_variant_fields(&mut twin.block);
    const_arguments_as_written(&mut twin.block);
    hoist_lifted_constants(&mut twin.block);
    import_const_traits(&mut twin.block);
    let t = syn::Ident::new(PARAM, Span::call_site());
    twin.sig.ident = quote::format_ident!("__mochi_twin_{}", func.sig.ident);
    // `f64` has the operators through references and sums of references; the twin's
    // scalar must too (`Dual` has them).
    twin.sig.generics = syn::parse_quote!(<#(#lifetimes,)* #t: ::mochi::num_traits::Float + ::mochi::Scalar + ::mochi::__private::TwinScalar + ::core::fmt::Display>);
    for c in consts {
        twin.sig.generics.params.push(syn::GenericParam::Const(c));
    }
    twin.sig.generics.where_clause = Some(syn::parse_quote! {
        where
            for<'__a> #t: ::core::ops::Add<&'__a #t, Output = #t>
                + ::core::ops::Sub<&'__a #t, Output = #t>
                + ::core::ops::Mul<&'__a #t, Output = #t>
                + ::core::ops::Div<&'__a #t, Output = #t>
                + ::core::ops::AddAssign<&'__a #t>
                + ::core::ops::SubAssign<&'__a #t>
                + ::core::ops::MulAssign<&'__a #t>
                + ::core::ops::DivAssign<&'__a #t>
                + ::core::iter::Sum<&'__a #t>
                + ::core::iter::Product<&'__a #t>,
            for<'__a> &'__a #t: ::core::ops::Add<#t, Output = #t>
                + ::core::ops::Sub<#t, Output = #t>
                + ::core::ops::Mul<#t, Output = #t>
                + ::core::ops::Div<#t, Output = #t>
                + ::core::ops::Add<&'__a #t, Output = #t>
                + ::core::ops::Sub<&'__a #t, Output = #t>
                + ::core::ops::Mul<&'__a #t, Output = #t>
                + ::core::ops::Div<&'__a #t, Output = #t>
                + ::core::ops::Neg<Output = #t>,
    });
    // The twin keeps what decides whether and how it compiles (`cfg`, `allow`, `inline`),
    // not what speaks to callers (`doc`, `deprecated`, `must_use`, `test`, …).
    twin.attrs.retain(|a| {
        ["cfg", "cfg_attr", "allow", "expect", "inline"]
            .iter()
            .any(|k| a.path().is_ident(k))
    });
    twin.attrs.push(syn::parse_quote!(#[doc(hidden)]));
    // (A `mut` struct whose `&mut self` method call became a call of the method's
    // twin stand-in is not changed in the twin; the function itself keeps the lint.)
    twin.attrs.push(syn::parse_quote!(#[allow(unused_mut)]));
    // (The user's own lints hold for the function as written; the twin's rewrites, a
    // mirror `Copy` where the struct is not, `lit::<T>(..)` for a literal, are not theirs.)
    twin.attrs.push(syn::parse_quote!(#[allow(clippy::all)]));
    // As visible as the function: its module re-exports the twin as `f::__twin`, through
    // which the twins of its callers call it.
    twin.vis = func.vis.clone();
    stop_partials(&mut twin);
    Ok((twin, rw.arrays || rw.rule_primal))
}

/// Each `no_grad(e)` written in `func`'s body made to stop forward-mode derivatives
/// too: the body runs on `Dual` numbers in a generic form (the twin, or a function
/// generic over its scalar), where `no_grad` itself, the identity, would pass `e`'s
/// partials on; a `jvp` would then disagree with the gradient, in which `no_grad` stops
/// the flow. The value goes through `mochi::__private::Stop`, which zeroes the partials
/// of a scalar (a `Vec`, an array, a tuple of them; a `T: Float` through `f64`) and
/// passes any other value as it is. A slice parameter shadowed by its own `no_grad`
/// (`let data = no_grad(data);`, `data: &[T]`) is shadowed by a copy without partials.
pub fn stop_partials(func: &mut ItemFn) {
    let scalars: Vec<String> = func
        .sig
        .generics
        .type_params()
        .map(|t| t.ident.to_string())
        .collect();
    let slices: Vec<String> = func
        .sig
        .inputs
        .iter()
        .filter_map(|a| match a {
            FnArg::Typed(pt) => match (&*pt.pat, &*pt.ty) {
                (Pat::Ident(i), Type::Reference(r))
                    if r.mutability.is_none() && elements_of(&r.elem, &scalars) =>
                {
                    Some(i.ident.to_string())
                }
                _ => None,
            },
            FnArg::Receiver(_) => None,
        })
        .collect();
    // `e` through `Stop`, whose traits method resolution tries in turn.
    fn stopped(e: TokenStream, span: Span) -> Expr {
        syn::parse_quote_spanned!(span=> {
            #[allow(unused_imports)]
            use ::mochi::__private::{StopFloat as _, StopFloats as _, StopKeep as _, StopStrip as _};
            (&&&::mochi::__private::Stop::new(#e)).stop()
        })
    }
    struct Wrap;
    impl VisitMut for Wrap {
        fn visit_expr_call_mut(&mut self, c: &mut syn::ExprCall) {
            syn::visit_mut::visit_expr_call_mut(self, c);
            if let Some(e) = no_grad_arg(&Expr::Call(c.clone())) {
                c.args[0] = stopped(quote!(#e), e.span());
            }
        }
    }
    let mut stmts = Vec::with_capacity(func.block.stmts.len());
    for mut stmt in std::mem::take(&mut func.block.stmts) {
        if let syn::Stmt::Local(l) = &stmt {
            if let (Pat::Ident(p), Some(init)) = (&l.pat, &l.init) {
                if let Some(Expr::Path(arg)) = no_grad_arg(&init.expr) {
                    if arg
                        .path
                        .get_ident()
                        .is_some_and(|a| *a == p.ident && slices.contains(&a.to_string()))
                    {
                        let name = &p.ident;
                        let copy = quote::format_ident!("__mochi_stopped_{}", name);
                        let value = stopped(quote!(#name.to_vec()), name.span());
                        stmts.push(syn::parse_quote_spanned!(name.span()=>
                            let #copy = ::mochi::no_grad(#value);
                        ));
                        stmts
                            .push(syn::parse_quote_spanned!(name.span()=> let #name = &#copy[..];));
                        continue;
                    }
                }
            }
        }
        Wrap.visit_stmt_mut(&mut stmt);
        stmts.push(stmt);
    }
    func.block.stmts = stmts;
}

/// `&[T]` or `&Vec<T>` with `T` one of `scalars`.
fn elements_of(ty: &Type, scalars: &[String]) -> bool {
    let is_scalar = |t: &Type| matches!(t, Type::Path(p) if p.path.get_ident().is_some_and(|i| scalars.contains(&i.to_string())));
    match ty {
        Type::Slice(s) => is_scalar(&s.elem),
        Type::Path(p) => p.path.segments.last().is_some_and(|s| {
            s.ident == "Vec"
                && matches!(&s.arguments, syn::PathArguments::AngleBracketed(a)
                    if matches!(a.args.first(), Some(syn::GenericArgument::Type(t)) if is_scalar(t)))
        }),
        _ => false,
    }
}

/// The argument of `no_grad(e)` (`mochi::no_grad(e)`).
fn no_grad_arg(e: &Expr) -> Option<&Expr> {
    let Expr::Call(c) = e else { return None };
    let is_no_grad = matches!(&*c.func, Expr::Path(p) if p.qself.is_none() && {
        let segs = segments(&p.path);
        segs == ["no_grad"] || segs == ["mochi", "no_grad"]
    });
    (is_no_grad && c.args.len() == 1).then(|| &c.args[0])
}

/// `Some(true)` for an argument type that carries floats and can change type, `Some(false)`
/// for one that carries no derivative, `None` otherwise.
fn arg_kind(ty: &Type) -> Option<bool> {
    if inert(ty) {
        return Some(false);
    }
    if is_f64(ty) || vec_of_f64(ty) || array_of_f64(ty) || fixed_of_f64(ty) {
        return Some(true);
    }
    // `scale: Option<f64>`: `Option<T>` in the twin.
    if option_of(ty).is_some_and(is_f64) {
        return Some(true);
    }
    match ty {
        Type::Reference(r) => match &*r.elem {
            t if is_f64(t) || fixed_of_f64(t) => Some(true),
            Type::Slice(s) if is_f64(&s.elem) => Some(true),
            other if vec_of_f64(other) || array_of_f64(other) => Some(true),
            _ => None,
        },
        _ => None,
    }
}

/// A type without floats that the generic form keeps as it is: integers, `bool`s,
/// strings, and tuples, slices, arrays and `Vec`s of them (`obs: &[(usize, usize)]`,
/// `sizes: (usize, usize)`).
fn inert(ty: &Type) -> bool {
    if crate::activity::type_is_inactive(ty) {
        return true;
    }
    match ty {
        Type::Tuple(t) => t.elems.iter().all(inert),
        Type::Reference(r) => inert(&r.elem),
        Type::Slice(s) => inert(&s.elem),
        Type::Array(a) => inert(&a.elem),
        Type::Paren(p) => inert(&p.elem),
        other => crate::iterchain::vec_elem(other)
            .flatten()
            .is_some_and(inert),
    }
}

/// The span of the first pattern in `block` that binds a name inside a tuple-struct or
/// struct pattern (`Loss::Huber(d)`, `Shape::Circle { r }`).
fn variant_field_binding(block: &syn::Block) -> Option<(Span, String)> {
    struct V(Option<(Span, String)>, Vec<String>);
    impl<'a> Visit<'a> for V {
        fn visit_pat(&mut self, p: &'a Pat) {
            match p {
                Pat::TupleStruct(_) | Pat::Struct(_) => {
                    let path = match p {
                        Pat::TupleStruct(t) => &t.path,
                        Pat::Struct(st) => &st.path,
                        _ => unreachable!(),
                    };
                    // (A variant of the crate's own enum: its fields are lifted where
                    // they are bound, see `lifted_variant_fields`.)
                    // (`Some(c)`, `Ok(v)`, `Err(e)`: what the generic form's `Option` or
                    // `Result` holds, of its scalar where it was built from one.)
                    let std_variant = path
                        .get_ident()
                        .is_some_and(|i| i == "Some" || i == "Ok" || i == "Err");
                    if crate_enum_variant(path) || std_variant {
                        let outer = std::mem::take(&mut self.1);
                        syn::visit::visit_pat(self, p);
                        self.1 = outer;
                        return;
                    }
                    self.1
                        .push(quote::quote!(#path).to_string().replace(' ', ""));
                    syn::visit::visit_pat(self, p);
                    self.1.pop();
                }
                Pat::Ident(i) if !self.1.is_empty() && self.0.is_none() => {
                    let variant = self.1.last().cloned().unwrap_or_default();
                    self.0 = Some((i.span(), format!("`{}` of `{variant}`", i.ident)));
                }
                _ => syn::visit::visit_pat(self, p),
            }
        }
        fn visit_item(&mut self, _: &'a syn::Item) {}
    }
    let mut v = V(None, Vec::new());
    v.visit_block(block);
    v.0
}

/// `Loss::Huber` (also `Self::Huber` in a method of the enum): a variant of one of the
/// crate's own enums whose variants hold floats and integers only (a `Vec` a variant
/// holds is not lifted where it is bound: the method has no generic form).
fn crate_enum_variant(path: &syn::Path) -> bool {
    let segs = segments(path);
    let of = |t: &str| CRATE_SCALAR_ENUMS.holds(t);
    segs.len() == 2 && (of(&segs[0]) || segs[0] == "Self" && impl_type().is_some_and(|t| of(&t)))
}

/// `if let Reg::L2(lam) = local { .. }`: the floats the pattern binds from a variant of
/// the crate's enums lifted at the head of the branch, as a `match` arm's are.
fn lift_if_let_variant_fields(block: &mut syn::Block) {
    struct L;
    impl VisitMut for L {
        fn visit_expr_if_mut(&mut self, i: &mut syn::ExprIf) {
            syn::visit_mut::visit_expr_if_mut(self, i);
            let Expr::Let(l) = &mut *i.cond else { return };
            let lets = lifted_variant_lets(&mut l.pat);
            i.then_branch.stmts.splice(0..0, lets);
        }
        fn visit_item_mut(&mut self, _: &mut syn::Item) {}
    }
    L.visit_block_mut(block);
}

/// `matches!(e, pat if guard)` as `match e { pat if guard => true, _ => false }`, when
/// the pattern binds a field of a variant of the crate's enums (see
/// [`lifted_variant_fields`]); `None` otherwise.
fn matches_as_match(m: &syn::Macro) -> Option<Expr> {
    let (scrutinee, pat, guard) = crate::desugar::matches_parts(m)?;
    if lifted_variant_fields(&mut pat.clone()).is_empty() {
        return None;
    }
    let guard = guard.map(|g| quote::quote!(if #g));
    Some(syn::parse_quote!(match #scrutinee { #pat #guard => true, _ => false }))
}

/// `let __mochi_lifted_d = lift_value::<T, _>(__mochi_bound_d.clone()); let d =
/// ref_like(__mochi_bound_d, &__mochi_lifted_d);` for each float a pattern binds inside a
/// variant of the crate's enums (see [`lifted_variant_fields`]), the pattern binding it as
/// `__mochi_bound_d`: the lifted value handed on as the pattern bound it
/// (`__private::ref_like`: by reference for `match self` of a `&self` method, where the
/// arm reads `*d`; before, "type `T` cannot be dereferenced"). The pattern's own name is
/// another so that the lets read the field and not a value of the function named as it
/// (`Shape::Rect { w, h } => w * h` beside a differentiable `w`: before, the lift of `w`
/// was taken for a call with a derivative, "cannot find `lift_value` in `__private`").
fn lifted_variant_lets(p: &mut Pat) -> Vec<syn::Stmt> {
    let t = syn::Ident::new(PARAM, Span::call_site());
    lifted_variant_fields(p)
        .iter()
        .flat_map(|(n, m)| {
            let lifted = quote::format_ident!("__mochi_lifted_{}", n);
            let bound = quote::format_ident!("__mochi_bound_{}", n);
            [
                syn::parse_quote!(let #lifted = ::mochi::__private::lift_value::<#t, _>(#bound.clone());),
                syn::parse_quote!(let #m #n = ::mochi::__private::ref_like(#bound, &#lifted);),
            ]
        })
        .collect()
}

/// The names a pattern binds inside variants of the crate's own enums (`Loss::Huber(d)`,
/// `Layer::Dense { w, b }`), with the `mut` each is bound with: constants of the enum,
/// whose floats the generic form lifts to its scalar where they are bound
/// ([`lifted_variant_lets`]). Each is bound as `__mochi_bound_<name>` in the pattern
/// (a field written short, `{ w }`, as `{ w: __mochi_bound_w }`).
fn lifted_variant_fields(p: &mut Pat) -> Vec<(syn::Ident, Option<syn::Token![mut]>)> {
    struct V(Vec<(syn::Ident, Option<syn::Token![mut]>)>, bool);
    impl VisitMut for V {
        fn visit_pat_mut(&mut self, p: &mut Pat) {
            let path = match p {
                Pat::TupleStruct(t) => Some(&t.path),
                Pat::Struct(st) => Some(&st.path),
                _ => None,
            };
            if let Some(path) = path {
                let inside = std::mem::replace(&mut self.1, crate_enum_variant(path));
                if let (Pat::Struct(st), true) = (&mut *p, self.1) {
                    for f in st.fields.iter_mut() {
                        if matches!(&*f.pat, Pat::Ident(i) if i.subpat.is_none()) {
                            f.colon_token = Some(Default::default());
                        }
                    }
                }
                syn::visit_mut::visit_pat_mut(self, p);
                self.1 = inside;
                return;
            }
            if let (Pat::Ident(i), true) = (&mut *p, self.1) {
                if i.subpat.is_none() {
                    // (`mut` stays on the pattern too: under a reference, it binds the
                    // field by value, as written.)
                    self.0.push((i.ident.clone(), i.mutability));
                    i.ident = quote::format_ident!("__mochi_bound_{}", i.ident);
                    return;
                }
            }
            syn::visit_mut::visit_pat_mut(self, p);
        }
    }
    let mut v = V(Vec::new(), false);
    v.visit_pat_mut(p);
    v.0
}

/// A type as the user writes it (`&DMatrix<f64>`, not the tokens' `& DMatrix < f64 >`).
pub(crate) fn type_text(ty: &Type) -> String {
    let mut t = ty.to_token_stream().to_string();
    for (from, to) in [
        (" :: ", "::"),
        (":: ", "::"),
        (" <", "<"),
        ("< ", "<"),
        (" >", ">"),
        ("& ", "&"),
        (" ,", ","),
        ("[ ", "["),
        (" ]", "]"),
        (" ;", ";"),
    ] {
        t = t.replace(from, to);
    }
    t
}

/// `Ty` or `&Ty` with `Ty` a type of the user's (one capitalised name without generic
/// arguments that is not a library type), and whether it is behind `&`.
pub(crate) fn user_type_arg(ty: &Type) -> Option<(syn::Ident, bool)> {
    let (inner, by_ref) = match ty {
        Type::Reference(r) if r.mutability.is_none() => (&*r.elem, true),
        Type::Reference(_) => return None,
        other => (other, false),
    };
    let r = crate::desugar::Receiver::of_param(inner)?;
    (r.ty != "Self" && !ARRAY_TYPES.contains(&r.ty.to_string().as_str())).then_some((r.ty, by_ref))
}

/// A name that calls a tuple struct's constructor (`Pair(a, b)`, `P2(x, y)`, `RGB(..)`):
/// capitalised, not one of the standard library's variants or types, and not in
/// `SCREAMING_CASE` with an underscore (a constant's style).
fn tuple_struct_name(name: &str) -> bool {
    user_type_name(name)
        && !(name.contains('_')
            && name
                .chars()
                .all(|c| c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit()))
}

/// Data holding floats in a shape the twin does not differentiate (`&[Vec<f64>]`,
/// `&[(f64, f64)]`, `Vec<[f64; 3]>`; see [`crate::types::scalar_data_depth`]).
fn data_arg(ty: &Type) -> bool {
    crate::types::scalar_data_depth(ty, &|i| i == "f64" || i == "f32").is_some()
}

/// Whether a result type can change type: `f64`, `Vec<f64>`, `()`, or a tuple of them.
fn result_ok(ty: &Type) -> bool {
    // `Option<f64>` (a value where it is defined): its twin gives `Option<T>`.
    if let Some(inner) = option_of(ty) {
        return option_of(inner).is_none() && result_ok(inner);
    }
    // `Result<f64, E>` likewise: its twin gives `Result<T, E>`.
    if let Type::Path(p) = ty {
        if let Some(last) = p.path.segments.last().filter(|l| l.ident == "Result") {
            if let syn::PathArguments::AngleBracketed(a) = &last.arguments {
                if let (2, Some(syn::GenericArgument::Type(inner))) = (a.args.len(), a.args.first())
                {
                    return option_of(inner).is_none() && result_ok(inner);
                }
            }
        }
    }
    // (A tuple may hold counts and flags beside its floats: `(f64, f64, usize)`.)
    let integer = |e: &Type| {
        matches!(e, Type::Path(p)
        if p.path.get_ident().is_some_and(|i| INTEGER_TYPES.contains(&i.to_string().as_str()) || i == "bool"))
    };
    // (Or a part of a slice argument, `&x[2..]`, borrowed from it: `&'a [f64]`.)
    let borrowed = |e: &Type| {
        matches!(e, Type::Reference(r) if r.mutability.is_none()
            && matches!(&*r.elem, Type::Slice(s) if is_f64(&s.elem)))
    };
    match ty {
        Type::Tuple(t) => {
            t.elems
                .iter()
                .any(|e| float_container(e) || rows_of_f64(e) || borrowed(e))
                && t.elems
                    .iter()
                    .all(|e| float_container(e) || rows_of_f64(e) || integer(e) || borrowed(e))
        }
        t => float_container(t) || rows_of_f64(t) || borrowed(t),
    }
}

/// `f64`, `Vec<f64>`, an ndarray array of `f64`, `[f64; N]`.
fn float_container(t: &Type) -> bool {
    is_f64(t) || vec_of_f64(t) || array_of_f64(t) || fixed_of_f64(t)
}

/// A matrix as rows: `Vec<Vec<f64>>`, `Vec<[f64; N]>`, `[[f64; N]; M]`, `[Vec<f64>; M]`.
fn rows_of_f64(t: &Type) -> bool {
    let row = |r: &Type| vec_of_f64(r) || fixed_of_f64(r);
    match t {
        Type::Array(a) => row(&a.elem),
        _ => crate::iterchain::vec_elem(t).flatten().is_some_and(row),
    }
}

/// `T` of `Option<T>`.
fn option_of(ty: &Type) -> Option<&Type> {
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last().filter(|l| l.ident == "Option")?;
    let syn::PathArguments::AngleBracketed(a) = &last.arguments else {
        return None;
    };
    match (a.args.len(), a.args.first()) {
        (1, Some(syn::GenericArgument::Type(inner))) => Some(inner),
        _ => None,
    }
}

/// `[f64; N]` (a point, a rotation vector).
fn fixed_of_f64(ty: &Type) -> bool {
    matches!(ty, Type::Array(a) if is_f64(&a.elem))
}

/// An ndarray array or view type (`ArrayN<E>` or `ArrayViewN<E>`, `N` from 0 to 6 or
/// `D`): whether it is a view, its dimension's suffix (`"2"`, `"D"`) and its element
/// type.
pub fn array_type(ty: &Type) -> Option<(bool, String, &Type)> {
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    let name = last.ident.to_string();
    if !ARRAY_TYPES.contains(&name.as_str()) {
        return None;
    }
    let (view, dim) = match name.strip_prefix("ArrayView") {
        Some(d) => (true, d.to_string()),
        None => (false, name.strip_prefix("Array")?.to_string()),
    };
    let syn::PathArguments::AngleBracketed(a) = &last.arguments else {
        return None;
    };
    let mut tys = a.args.iter().filter_map(|g| match g {
        syn::GenericArgument::Type(t) => Some(t),
        _ => None,
    });
    match (tys.next(), tys.next()) {
        (Some(elem), None) => Some((view, dim, elem)),
        _ => None,
    }
}

/// An ndarray array or view type with `f64` elements (`Array1<f64>`, `ArrayView2<f64>`).
fn array_of_f64(ty: &Type) -> bool {
    array_type(ty).is_some_and(|(_, _, elem)| is_f64(elem))
}

/// Whether `func` holds arrays: an argument or its result is an array type, or its body
/// names one, builds one with ndarray's `array!`, views a slice with `aview1` or calls a
/// function of the crate returning one (declared before it, [`ARRAY_RESULT_FNS`]).
fn holds_arrays(func: &ItemFn) -> bool {
    struct ArrayMacro(bool);
    impl<'a> Visit<'a> for ArrayMacro {
        fn visit_macro(&mut self, m: &'a syn::Macro) {
            self.0 |= m.path.segments.last().is_some_and(|s| s.ident == "array");
        }
        fn visit_expr_call(&mut self, c: &'a syn::ExprCall) {
            syn::visit::visit_expr_call(self, c);
            if let Expr::Path(p) = &*c.func {
                self.0 |= p
                    .path
                    .get_ident()
                    .is_some_and(|f| ARRAY_RESULT_FNS.holds(&f.to_string()));
            }
        }
    }
    let array =
        |i: &proc_macro2::Ident| ARRAY_TYPES.contains(&i.to_string().as_str()) || i == "aview1";
    let mut built = ArrayMacro(false);
    built.visit_block(&func.block);
    built.0
        || crate::activity::tokens_mention(&func.sig.to_token_stream(), &array)
        || crate::activity::tokens_mention(&func.block.to_token_stream(), &array)
}

/// Whether `ty` is the function's float type (`f64`, or `f32`, see [`float`]).
pub(crate) fn is_float_type(ty: &Type) -> bool {
    is_f64(ty)
}

/// Whether `ty` is the function's float type (`f64`, or `f32`, see [`float`]).
fn is_f64(ty: &Type) -> bool {
    matches!(ty, Type::Path(p) if p.qself.is_none() && p.path.is_ident(float()))
}

fn vec_of_f64(ty: &Type) -> bool {
    let Type::Path(p) = ty else { return false };
    let Some(last) = p.path.segments.last() else {
        return false;
    };
    match &last.arguments {
        syn::PathArguments::AngleBracketed(a) if last.ident == "Vec" && a.args.len() == 1 => {
            matches!(&a.args[0], syn::GenericArgument::Type(t) if is_f64(t))
        }
        _ => false,
    }
}

/// Every name that may hold a float: the float arguments, and (to a fixpoint) every
/// local bound or assigned from an expression with a float literal, an `f64` path, a
/// cast to `f64`, or a name already in the set.
fn float_locals(block: &syn::Block, names: &mut HashSet<String>) {
    struct Binds(Vec<(HashSet<String>, Expr)>);
    impl<'a> Visit<'a> for Binds {
        fn visit_local(&mut self, l: &'a syn::Local) {
            if let Some(init) = &l.init {
                paired_binds(&l.pat, &init.expr, &mut self.0);
            }
            syn::visit::visit_local(self, l);
        }
        fn visit_expr_assign(&mut self, a: &'a syn::ExprAssign) {
            match (&*a.left, &*a.right) {
                // `(a, k) = (a * 0.5, k + 1)`: each name from its own part.
                (Expr::Tuple(l), Expr::Tuple(r)) if l.elems.len() == r.elems.len() => {
                    for (l, r) in l.elems.iter().zip(&r.elems) {
                        self.0.push((expr_names(l), r.clone()));
                    }
                }
                _ => self.0.push((expr_names(&a.left), (*a.right).clone())),
            }
            syn::visit::visit_expr_assign(self, a);
        }
        fn visit_expr_for_loop(&mut self, f: &'a syn::ExprForLoop) {
            // `for (i, v) in xs.iter().enumerate()`: `i` is an index.
            let enumerated = crate::activity::yields_enumerated(&f.expr);
            match &*f.pat {
                Pat::Tuple(t) if enumerated && t.elems.len() == 2 => {
                    self.0.push((pat_names(&t.elems[1]), (*f.expr).clone()));
                }
                pat => zipped_binds(pat, &f.expr, &mut self.0),
            }
            syn::visit::visit_expr_for_loop(self, f);
        }
    }
    let mut b = Binds(Vec::new());
    b.visit_block(block);
    loop {
        let before = names.len();
        for (targets, e) in &b.0 {
            // (`let a = x > 0.0;` is a `bool`, however it was computed.)
            if floaty(e, names) && !is_bool_expr(e) {
                names.extend(targets.iter().cloned());
            }
        }
        if names.len() == before {
            break;
        }
    }
}

/// The names a `let` pattern binds, each with the part of the value it comes from:
/// `let (gamma, m) = (1.0, 2);` binds `gamma` from a float and `m` from an integer.
fn paired_binds(pat: &Pat, e: &Expr, out: &mut Vec<(HashSet<String>, Expr)>) {
    match (pat, e) {
        (Pat::Paren(p), _) => paired_binds(&p.pat, e, out),
        (Pat::Type(t), _) => paired_binds(&t.pat, e, out),
        (_, Expr::Paren(p)) => paired_binds(pat, &p.expr, out),
        (Pat::Tuple(t), Expr::Tuple(v)) if t.elems.len() == v.elems.len() => {
            for (p, e) in t.elems.iter().zip(&v.elems) {
                paired_binds(p, e, out);
            }
        }
        _ => out.push((pat_names(pat), e.clone())),
    }
}

/// The names a `for` pattern binds, each with the part of the iterator it comes from:
/// `for (k, v) in (0..).zip(x.iter())` binds `k` from the range (an integer) and `v` from
/// `x`.
fn zipped_binds(pat: &Pat, e: &Expr, out: &mut Vec<(HashSet<String>, Expr)>) {
    match (pat, e) {
        (Pat::Paren(p), _) => zipped_binds(&p.pat, e, out),
        (_, Expr::Paren(p)) => zipped_binds(pat, &p.expr, out),
        (Pat::Tuple(t), Expr::MethodCall(m))
            if m.method == "zip" && m.args.len() == 1 && t.elems.len() == 2 =>
        {
            zipped_binds(&t.elems[0], &m.receiver, out);
            zipped_binds(&t.elems[1], &m.args[0], out);
        }
        _ => out.push((pat_names(pat), e.clone())),
    }
}

/// Whether `e` may evaluate to (or contain) a float.
fn floaty(e: &Expr, names: &HashSet<String>) -> bool {
    struct F<'a> {
        names: &'a HashSet<String>,
        found: bool,
    }
    impl<'a> Visit<'a> for F<'_> {
        fn visit_lit(&mut self, l: &'a syn::Lit) {
            if matches!(l, syn::Lit::Float(_)) {
                self.found = true;
            }
        }
        fn visit_path(&mut self, p: &'a syn::Path) {
            if p.segments.iter().any(|s| s.ident == float()) {
                self.found = true;
            }
            if let Some(i) = p.get_ident() {
                if self.names.contains(&i.to_string()) {
                    self.found = true;
                }
            }
            syn::visit::visit_path(self, p);
        }
        // `q.floor() as usize`: an integer whatever it is made from.
        fn visit_expr_cast(&mut self, c: &'a syn::ExprCast) {
            let integer = matches!(&*c.ty, Type::Path(p)
                if p.path.get_ident().is_some_and(|i| INTEGER_TYPES.contains(&i.to_string().as_str())));
            if !integer {
                syn::visit::visit_expr_cast(self, c);
            }
        }
        fn visit_expr_method_call(&mut self, m: &'a syn::ExprMethodCall) {
            // Counts, lengths and tests are integers or booleans whatever they look at.
            let name = m.method.to_string();
            if !NOT_FLOAT_METHODS.contains(&name.as_str()) {
                syn::visit::visit_expr_method_call(self, m);
            }
        }
        fn visit_macro(&mut self, m: &'a syn::Macro) {
            if m.tokens.to_string().contains('.') || mentions(&m.tokens, self.names) {
                self.found = true;
            }
        }
    }
    let mut f = F {
        names,
        found: false,
    };
    f.visit_expr(e);
    f.found
}

fn mentions(ts: &TokenStream, names: &HashSet<String>) -> bool {
    crate::activity::tokens_mention(ts, &|i| names.contains(&i.to_string()))
}

/// The names that patterns bind, collected by a visit.
struct PatternNames(HashSet<String>);

impl<'a> Visit<'a> for PatternNames {
    fn visit_pat_ident(&mut self, p: &'a syn::PatIdent) {
        self.0.insert(p.ident.to_string());
        syn::visit::visit_pat_ident(self, p);
    }
    // (A macro of expressions, `concatenate![Axis(0), t.mapv(|v| v * v)]`: the names its
    // closures bind.)
    fn visit_macro(&mut self, m: &'a syn::Macro) {
        for e in crate::rewrite::macro_exprs(m).unwrap_or_default() {
            self.visit_expr(&e);
        }
    }
}

/// A closure's parameter that has the name of another binding of the function
/// (`p.chunks(2).map(|c| V2::new(c[0], c[1]))` and later `let c: V2 = …`) renamed in the
/// closure (`__mochi_c0`), so that the analyses of the generic form, which take a name
/// bound twice as unknown, see the later binding alone. The parameter shadows the outer
/// name throughout the closure, so every use there is renamed; a closure holding a macro
/// (whose format strings may name it) or a struct literal's shorthand field is left.
fn rename_shadowing_closure_params(func: &mut ItemFn) {
    let mut counts = std::collections::HashMap::new();
    count_bindings(func, &mut counts);
    struct Rename<'c> {
        counts: &'c std::collections::HashMap<String, usize>,
        next: usize,
    }
    struct Blocks(bool);
    impl<'a> Visit<'a> for Blocks {
        fn visit_macro(&mut self, _: &'a syn::Macro) {
            self.0 = true;
        }
        fn visit_field_value(&mut self, f: &'a syn::FieldValue) {
            self.0 |= f.colon_token.is_none();
            syn::visit::visit_field_value(self, f);
        }
    }
    impl VisitMut for Rename<'_> {
        fn visit_expr_closure_mut(&mut self, c: &mut syn::ExprClosure) {
            syn::visit_mut::visit_expr_closure_mut(self, c);
            let mut names = Vec::new();
            for p in &c.inputs {
                crate::activity::pat_names(p, &mut names);
            }
            let mut blocked = Blocks(false);
            blocked.visit_expr_closure(c);
            if blocked.0 {
                return;
            }
            for n in names {
                if self.counts.get(&n).is_some_and(|k| *k > 1) {
                    let to = quote::format_ident!("__mochi_shadow{}_{}", self.next, n);
                    self.next += 1;
                    let mut r = Renamed { from: &n, to: &to };
                    for p in c.inputs.iter_mut() {
                        r.visit_pat_mut(p);
                    }
                    r.visit_expr_mut(&mut c.body);
                }
            }
        }
        fn visit_item_mut(&mut self, _: &mut syn::Item) {}
    }
    Rename {
        counts: &counts,
        next: 0,
    }
    .visit_block_mut(&mut func.block);
}

/// The `let`s of `func`'s body that bind again a name bound before them (a parameter or
/// an earlier `let` of the body: `let x = V2 { x: x[0], y: x[1] };` over `x: &[f64]`),
/// each renamed with the statements after it (`__mochi_rebound0_x`), so that the
/// analyses of the generic form, which take a name bound twice as unknown, see each
/// binding alone. Left where a later statement holds a macro naming it (whose format
/// strings may) or a struct literal's shorthand field of that name.
fn rename_rebound_lets(func: &mut ItemFn) {
    struct Mentions<'n>(&'n str, bool);
    impl<'a> Visit<'a> for Mentions<'_> {
        fn visit_macro(&mut self, m: &'a syn::Macro) {
            self.1 |= m
                .tokens
                .to_string()
                .split(|c: char| !c.is_alphanumeric() && c != '_')
                .any(|w| w == self.0);
        }
        fn visit_field_value(&mut self, f: &'a syn::FieldValue) {
            self.1 |= f.colon_token.is_none()
                && matches!(&f.member, syn::Member::Named(i) if i == self.0);
            syn::visit::visit_field_value(self, f);
        }
    }
    let mut bound: HashSet<String> = HashSet::new();
    for a in &func.sig.inputs {
        if let FnArg::Typed(pt) = a {
            let mut names = Vec::new();
            crate::activity::pat_names(&pt.pat, &mut names);
            bound.extend(names);
        }
    }
    let stmts = &mut func.block.stmts;
    let mut next = 0usize;
    for k in 0..stmts.len() {
        let syn::Stmt::Local(l) = &stmts[k] else {
            continue;
        };
        let ident = match &l.pat {
            Pat::Ident(p) => Some(&p.ident),
            Pat::Type(t) => match &*t.pat {
                Pat::Ident(p) => Some(&p.ident),
                _ => None,
            },
            _ => None,
        };
        let Some(name) = ident.map(|i| i.to_string()) else {
            let mut names = Vec::new();
            crate::activity::pat_names(&l.pat, &mut names);
            bound.extend(names);
            continue;
        };
        if !bound.contains(&name) {
            bound.insert(name);
            continue;
        }
        let mut m = Mentions(&name, false);
        for st in &stmts[k + 1..] {
            m.visit_stmt(st);
        }
        if m.1 {
            continue;
        }
        let to = quote::format_ident!("__mochi_rebound{}_{}", next, name);
        next += 1;
        let mut r = Renamed {
            from: &name,
            to: &to,
        };
        if let syn::Stmt::Local(l) = &mut stmts[k] {
            r.visit_pat_mut(&mut l.pat);
        }
        for st in &mut stmts[k + 1..] {
            r.visit_stmt_mut(st);
        }
        bound.insert(to.to_string());
    }
}

/// Every binding and use of the name `from` made `to`: `desugar::RenameIdents` of the
/// one pair (which also writes a struct literal's shorthand field out, `P { x }` as
/// `P { x: to }`, and renames inside macros), from the statement, block, expression or
/// pattern it is given.
pub(crate) struct Renamed<'n> {
    pub(crate) from: &'n str,
    pub(crate) to: &'n syn::Ident,
}

impl Renamed<'_> {
    fn pair(&self) -> [(syn::Ident, syn::Ident); 1] {
        [(syn::Ident::new(self.from, self.to.span()), self.to.clone())]
    }
}

impl VisitMut for Renamed<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        crate::desugar::RenameIdents(&self.pair()).visit_expr_mut(e);
    }
    fn visit_stmt_mut(&mut self, s: &mut syn::Stmt) {
        crate::desugar::RenameIdents(&self.pair()).visit_stmt_mut(s);
    }
    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        crate::desugar::RenameIdents(&self.pair()).visit_block_mut(b);
    }
    fn visit_pat_mut(&mut self, p: &mut Pat) {
        crate::desugar::RenameIdents(&self.pair()).visit_pat_mut(p);
    }
}

/// How many times each name is bound by `func`'s parameters and the patterns of its body.
pub(crate) fn count_bindings(func: &ItemFn, counts: &mut std::collections::HashMap<String, usize>) {
    struct Count<'c>(&'c mut std::collections::HashMap<String, usize>);
    impl<'a> Visit<'a> for Count<'_> {
        fn visit_pat_ident(&mut self, p: &'a syn::PatIdent) {
            *self.0.entry(p.ident.to_string()).or_default() += 1;
            syn::visit::visit_pat_ident(self, p);
        }
        fn visit_item(&mut self, _: &'a syn::Item) {}
    }
    let mut c = Count(counts);
    for a in &func.sig.inputs {
        if let FnArg::Typed(pt) = a {
            c.visit_pat(&pt.pat);
        }
    }
    c.visit_block(&func.block);
}

/// A type name that may be the user's: capitalised, not `Self`, and none of the names
/// that are never a struct of the user's (`String`, `Axis`, `IxDyn`, `Array1`, `Some`,
/// `Wrapping`, …). The one test of the receivers (`desugar::Receiver`) and of the tuple
/// structs' constructors; a struct named `Cell` or `Point` is the user's here.
pub(crate) fn user_type_name(name: &str) -> bool {
    const NEVER: &[&str] = &[
        "String",
        "Axis",
        "Ix0",
        "Ix1",
        "Ix2",
        "Ix3",
        "Ix4",
        "Ix5",
        "Ix6",
        "IxDyn",
        "Slice",
        "Ordering",
        "Range",
        "Real",
        "Float",
        "Some",
        "None",
        "Ok",
        "Err",
        "Wrapping",
        "Reverse",
        "PhantomData",
    ];
    name.starts_with(|c: char| c.is_ascii_uppercase())
        && (name.len() > 1 || letter_is_type(name))
        && name != "Self"
        && !NEVER.contains(&name)
        && !ARRAY_TYPES.contains(&name)
}

/// A name of std's, nalgebra's or num's whose associated functions (`Box::new`,
/// `Vector3::new`, `Complex64::new`, `DMatrix::from_fn`) are not the user's
/// constructors: a container, or a family's name with its dimension (`Vector3`,
/// `Matrix2x3`, `Point3`, `Complex64`). (A struct of the user's named `Point` or `Cell`
/// is a receiver still, see [`user_type_name`].)
fn library_type(name: &str) -> bool {
    library_name(name) && !crate_type(name)
}

/// A struct of the crate's own named like a library's type (see [`CRATE_TYPES`]): its
/// associated functions are reached by their derived rules (`Vector3::new_rrule`), not
/// by a rule crate's method for the name (`vector3_new`).
pub(crate) fn crate_type_named_like_library(name: &str) -> bool {
    library_name(name) && crate_type(name)
}

/// The names of [`library_type`], whatever the crate defines.
pub(crate) fn library_name(name: &str) -> bool {
    const NAMES: &[&str] = &[
        "Vec",
        "Box",
        "Rc",
        "Arc",
        "Cell",
        "RefCell",
        "HashMap",
        "HashSet",
        "BTreeMap",
        "BTreeSet",
        "VecDeque",
        "Option",
        "Result",
        "Duration",
        "Instant",
        "Complex",
        "DVector",
        "DMatrix",
        "RowDVector",
        "SVector",
        "SMatrix",
        "OMatrix",
        "OVector",
        "Quaternion",
        "UnitQuaternion",
        "UnitComplex",
        "Cholesky",
        "LU",
        "QR",
        "SVD",
    ];
    const FAMILIES: &[&str] = &[
        "Vector",
        "RowVector",
        "Matrix",
        "Point",
        "Rotation",
        "Translation",
        "Isometry",
        "Similarity",
        "Transform",
        "Scale",
        "Complex",
    ];
    NAMES.contains(&name)
        || FAMILIES.iter().any(|f| {
            name.strip_prefix(f)
                .is_some_and(|rest| rest.ends_with(|c: char| c.is_ascii_digit()))
        })
}

/// Names the proc-macro process notes while it expands a crate's items, for the items
/// after them (rustc expands a crate in one process, in order).
struct Names(std::sync::Mutex<Vec<String>>);

impl Names {
    const fn new() -> Self {
        Names(std::sync::Mutex::new(Vec::new()))
    }

    fn note(&self, name: &str) {
        let mut names = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
    }

    fn holds(&self, name: &str) -> bool {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .any(|n| n == name)
    }
}

/// The methods of marked `impl` blocks whose result carries no derivative (`fn degree(&self)
/// -> usize`, `fn is_valid(&self) -> bool`), which stay as written, and those whose result
/// does: a call of a name only the first hold is an integer (or a flag) of the value, with
/// no derivative to carry (see [`plain_user_method`]).
static PLAIN_METHODS: Names = Names::new();
static DERIVED_METHODS: Names = Names::new();

/// Notes a method of a marked `impl` block by whether its result carries a derivative.
pub fn note_user_method(name: &str, plain: bool) {
    if plain {
        PLAIN_METHODS.note(name);
    } else {
        DERIVED_METHODS.note(name);
    }
}

/// Whether `name` is a method of the user's whose result carries no derivative, and no
/// marked method of that name has one whose result does.
/// (Not a name the standard library's or a rule crate's types have, `sum`, `max`,
/// `norm`: a call of that name elsewhere may carry a derivative.)
pub fn plain_user_method(name: &str) -> bool {
    PLAIN_METHODS.holds(name)
        && !DERIVED_METHODS.holds(name)
        && !crate::lower::expr::is_library_method(name)
}

/// The names of the crate's own types seen so far in this compilation: a struct deriving
/// `Tangent` without generic parameters, the type of a marked `impl` block. A library
/// type of that name (`Complex`, `Vector3`, `Quaternion`) needs its generic arguments
/// written wherever it is a type, so a crate defining its own `struct Complex` means its
/// own by `Complex::new` (and a crate using both would write one by its path).
static CRATE_TYPES: Names = Names::new();

/// The crate's marked free functions generic over a length (`fn mean<const N: usize>(v:
/// &[f64; N])`) seen so far: a caller's generic form leaves their scalar and lengths to
/// be inferred from the arguments, which may be arrays only the types know
/// (`mean(&scaled(&p, k))`).
static LENGTH_GENERIC_FNS: Names = Names::new();

/// The crate's marked free functions returning an ndarray array seen so far
/// (`fn features(x: &[f64]) -> Array1<f64>`): a caller that binds one's result holds an
/// array (`let a = features(x); a.dot(&a)`) though its syntax names no array type.
static ARRAY_RESULT_FNS: Names = Names::new();

/// The crate's own enums deriving `Tangent` seen so far: their values are their own
/// generic forms (`LiftField::Of<T>` is the enum), so a marked `impl` block of one gives
/// no methods to a mirror.
static CRATE_ENUMS: Names = Names::new();

/// The crate's own structs whose `#[derive(Tangent)]` wrote a generic mirror
/// (`__MochiTwinV3<T>`): a marked `impl` block of a struct seen without one gives it no
/// methods, and a struct with a field of one lifts it to the mirror.
static CRATE_MIRRORS: Names = Names::new();

/// Notes that `name`'s derive wrote its mirror (see [`CRATE_MIRRORS`]).
pub(crate) fn note_crate_mirror(name: &str) {
    CRATE_MIRRORS.note(name);
}

/// Whether `name`'s derive wrote its mirror (see [`CRATE_MIRRORS`]).
pub(crate) fn crate_mirror(name: &str) -> bool {
    CRATE_MIRRORS.holds(name)
}

/// The crate's own structs whose derive wrote no mirror (a field it cannot lift): their
/// marked methods give a mirror nothing.
static CRATE_WITHOUT_MIRRORS: Names = Names::new();

/// Notes that `name`'s derive wrote no mirror (see [`CRATE_WITHOUT_MIRRORS`]).
pub(crate) fn note_crate_without_mirror(name: &str) {
    CRATE_WITHOUT_MIRRORS.note(name);
}

/// Whether `name`'s derive wrote no mirror (see [`CRATE_WITHOUT_MIRRORS`]).
pub(crate) fn crate_type_without_mirror(name: &str) -> bool {
    CRATE_WITHOUT_MIRRORS.holds(name)
}

/// The crate's own enums whose derive wrote `LiftField` (every variant's fields
/// liftable): a struct with a field of one has a generic mirror, the enum in it as is.
static CRATE_LIFTED_ENUMS: Names = Names::new();

/// Notes that `name`'s derive wrote `LiftField` for the enum (see
/// [`CRATE_LIFTED_ENUMS`]).
pub(crate) fn note_crate_lifted_enum(name: &str) {
    CRATE_LIFTED_ENUMS.note(name);
}

/// The crate's enums whose variants hold floats and integers only (`Huber(f64)`): a
/// method's generic form lifts the fields a `match` binds (see `lifted_variant_fields`).
static CRATE_SCALAR_ENUMS: Names = Names::new();

/// Notes an enum of scalar fields (see [`CRATE_SCALAR_ENUMS`]).
pub(crate) fn note_scalar_enum(name: &str) {
    CRATE_SCALAR_ENUMS.note(name);
}

/// Whether `name` is an enum of the crate's with `LiftField` (see
/// [`CRATE_LIFTED_ENUMS`]).
pub(crate) fn crate_lifted_enum(name: &str) -> bool {
    CRATE_LIFTED_ENUMS.holds(name)
}

/// Notes `name` as one of the crate's own enums (see [`CRATE_ENUMS`]).
pub(crate) fn note_crate_enum(name: &str) {
    CRATE_ENUMS.note(name);
}

/// Whether `name` is one of the crate's own enums (see [`CRATE_ENUMS`]).
pub(crate) fn crate_enum(name: &str) -> bool {
    CRATE_ENUMS.holds(name)
}

/// The marked methods taking `self` of the crate's own types seen so far, with their
/// types: a method whose only owner is an enum is that enum's wherever it is called
/// (`act.apply(v)` of an `act` the syntax cannot type, an element of a `const` array).
static CRATE_METHODS: std::sync::Mutex<Vec<(String, String)>> = std::sync::Mutex::new(Vec::new());

/// The names of the methods given to the crate's structs' generic mirrors
/// (`companion::mirror_method`, `companion::plain_mirror_method`).
static MIRROR_METHODS: Names = Names::new();

/// Notes a method given to a struct's mirror (see [`MIRROR_METHODS`]).
pub(crate) fn note_mirror_method(method: &str) {
    MIRROR_METHODS.note(method);
}

/// Whether `method` is a marked method of one of the crate's types that no generic mirror
/// has (a method of a trait implementation, `impl Shape for Rect { fn area(&self) }`,
/// or one whose generic form could not be made).
fn method_without_mirror(method: &str) -> bool {
    let marked = MARKED_METHODS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .any(|(_, m)| m == method);
    marked && !MIRROR_METHODS.holds(method)
}

/// Notes `method` as a marked method of `ty` (see [`CRATE_METHODS`]).
pub(crate) fn note_crate_method(ty: &str, method: &str) {
    let mut names = CRATE_METHODS.lock().unwrap_or_else(|e| e.into_inner());
    if !names.iter().any(|(t, m)| t == ty && m == method) {
        names.push((ty.to_string(), method.to_string()));
    }
}

/// The fields of the crate's structs whose type is one of the crate's enums: `(struct,
/// field, enum)` (`("Config", "act", "Act")`), so that a generic form reaches the enum's
/// method on the field (`cfg.act.apply(v)`) when more than one enum has a method of
/// that name.
static FIELD_ENUMS: std::sync::Mutex<Vec<(String, String, String)>> =
    std::sync::Mutex::new(Vec::new());

/// Notes a field holding one of the crate's enums (see [`FIELD_ENUMS`]).
pub(crate) fn note_field_enum(ty: &str, field: &str, enum_ty: &str) {
    let mut all = FIELD_ENUMS.lock().unwrap_or_else(|e| e.into_inner());
    if !all.iter().any(|(t, f, _)| t == ty && f == field) {
        all.push((ty.to_string(), field.to_string(), enum_ty.to_string()));
    }
}

/// The enum a field of a struct of the crate's holds (see [`FIELD_ENUMS`]).
fn field_enum(ty: &str, field: &str) -> Option<String> {
    let all = FIELD_ENUMS.lock().unwrap_or_else(|e| e.into_inner());
    all.iter()
        .find(|(t, f, _)| t == ty && f == field)
        .map(|(_, _, e)| e.clone())
}

/// Whether `ty` has a marked method `method` with a generic form.
fn crate_method(ty: &str, method: &str) -> bool {
    let names = CRATE_METHODS.lock().unwrap_or_else(|e| e.into_inner());
    names.iter().any(|(t, m)| t == ty && m == method)
}

/// The enum of the crate's that is the only type with a marked method `method`.
fn sole_enum_with(method: &str) -> Option<String> {
    let names = CRATE_METHODS.lock().unwrap_or_else(|e| e.into_inner());
    let mut owners = names.iter().filter(|(_, m)| m == method).map(|(t, _)| t);
    let first = owners.next()?;
    (owners.next().is_none() && crate_enum(first)).then(|| first.clone())
}

/// Every marked method taking `self` of the crate's own types seen so far, with or
/// without a twin (see [`only_enums_have`]).
static MARKED_METHODS: std::sync::Mutex<Vec<(String, String)>> = std::sync::Mutex::new(Vec::new());

/// Notes `method` as a marked method of `ty` (see [`MARKED_METHODS`]).
pub(crate) fn note_marked_method(ty: &str, method: &str) {
    let mut names = MARKED_METHODS.lock().unwrap_or_else(|e| e.into_inner());
    if !names.iter().any(|(t, m)| t == ty && m == method) {
        names.push((ty.to_string(), method.to_string()));
    }
}

/// The named fields of the structs the crate derives `Tangent` for, by name: whether
/// the field's type carries no derivative (`bool`, an integer, `char`).
static FIELD_KINDS: std::sync::Mutex<Vec<(String, bool)>> = std::sync::Mutex::new(Vec::new());

/// Notes a field of a struct deriving `Tangent` (see [`FIELD_KINDS`]).
pub(crate) fn note_field_kind(field: &str, ty: &Type) {
    let mut all = FIELD_KINDS.lock().unwrap_or_else(|e| e.into_inner());
    all.push((field.to_string(), crate::activity::is_integer_type(ty)));
}

/// Whether every struct field of that name the crate derives `Tangent` for (one at
/// least) is a `bool`, an integer or a `char`: `self.on`, `m.stage` carry no derivative.
pub(crate) fn plain_field(field: &str) -> bool {
    let all = FIELD_KINDS.lock().unwrap_or_else(|e| e.into_inner());
    let mut of = all.iter().filter(|(f, _)| f == field).peekable();
    of.peek().is_some() && of.all(|(_, plain)| *plain)
}

/// Whether `method` is a marked method of `ty` taking `self` (see [`MARKED_METHODS`]).
pub(crate) fn marked_method_of(ty: &str, method: &str) -> bool {
    let names = MARKED_METHODS.lock().unwrap_or_else(|e| e.into_inner());
    names.iter().any(|(t, m)| t == ty && m == method)
}

/// The fields of the crate's structs that hold sequences of the crate's structs with
/// mirrors: `(struct, field, element)` (`("Net", "layers", "Layer")`).
static FIELD_SEQUENCES: std::sync::Mutex<Vec<(String, String, String)>> =
    std::sync::Mutex::new(Vec::new());

/// Notes a field holding a sequence of structs (see [`FIELD_SEQUENCES`]).
pub(crate) fn note_field_sequence(ty: &str, field: &str, elem: &str) {
    let mut all = FIELD_SEQUENCES.lock().unwrap_or_else(|e| e.into_inner());
    if !all.iter().any(|(t, f, _)| t == ty && f == field) {
        all.push((ty.to_string(), field.to_string(), elem.to_string()));
    }
}

/// The element type of `ty`'s field `field`, when it holds structs (see
/// [`FIELD_SEQUENCES`]).
pub(crate) fn field_sequence(ty: &str, field: &str) -> Option<String> {
    let all = FIELD_SEQUENCES.lock().unwrap_or_else(|e| e.into_inner());
    all.iter()
        .find(|(t, f, _)| t == ty && f == field)
        .map(|(_, _, e)| e.clone())
}

/// `for l in &self.layers { .. }` (also `self.layers.iter().fold(..)`, `self.layers[k]`)
/// in a method of a struct whose field holds structs (see [`FIELD_SEQUENCES`]), or of a
/// field of an argument typed as such a struct: the field bound first, typed, before the
/// statement that reads it, `let __mochi_field_self_layers: &[Layer] = &self.layers;`, so
/// that the generic form knows its elements as structs. A statement that writes the
/// field is left as written.
fn bind_field_sequences(func: &mut ItemFn) {
    let mut owners: Vec<(String, String)> = Vec::new();
    if let Some(t) = IMPL_TYPE.with(|t| t.borrow().clone()) {
        owners.push(("self".to_string(), t));
    }
    for a in &func.sig.inputs {
        if let FnArg::Typed(pt) = a {
            if let (Pat::Ident(i), Some((t, _))) = (&*pt.pat, user_type_arg(&pt.ty)) {
                owners.push((i.ident.to_string(), t.to_string()));
            }
        }
    }
    if owners.is_empty() {
        return;
    }
    struct Bind<'a> {
        owners: &'a [(String, String)],
    }
    impl Bind<'_> {
        /// `owner.field` of a noted field: its binding's name and element type.
        fn field(&self, e: &Expr) -> Option<(syn::Ident, syn::Ident)> {
            let Expr::Field(f) = e else { return None };
            let syn::Member::Named(field) = &f.member else {
                return None;
            };
            let Expr::Path(owner) = &*f.base else {
                return None;
            };
            let owner = owner.path.get_ident()?.to_string();
            let ty = &self.owners.iter().find(|(o, _)| *o == owner)?.1;
            let elem = field_sequence(ty, &field.to_string())?;
            Some((
                quote::format_ident!("__mochi_field_{}_{}", owner, field),
                syn::Ident::new(&elem, Span::call_site()),
            ))
        }
    }
    /// The reads of noted fields in a statement, and whether one is not only read
    /// (`&mut self.layers`, `self.layers.push(..)`, `self.layers[k] = ..`).
    struct Reads<'b, 'a> {
        bind: &'b Bind<'a>,
        found: Vec<(Expr, syn::Ident, syn::Ident)>,
        written: bool,
    }
    impl Reads<'_, '_> {
        fn note(&mut self, e: &Expr) -> bool {
            match self.bind.field(e) {
                Some((name, elem)) => {
                    if !self.found.iter().any(|(_, n, _)| *n == name) {
                        self.found.push((e.clone(), name, elem));
                    }
                    true
                }
                None => false,
            }
        }
        /// Whether `e` is a noted field, or an element or a part of one.
        fn rooted(&self, e: &Expr) -> bool {
            match e {
                Expr::Field(f) => self.bind.field(e).is_some() || self.rooted(&f.base),
                Expr::Index(i) => self.rooted(&i.expr),
                Expr::Paren(p) => self.rooted(&p.expr),
                _ => false,
            }
        }
    }
    impl<'ast> Visit<'ast> for Reads<'_, '_> {
        fn visit_expr(&mut self, e: &'ast Expr) {
            match e {
                Expr::Reference(r) if r.mutability.is_some() && self.rooted(&r.expr) => {
                    self.written = true;
                }
                Expr::Assign(a) if self.rooted(&a.left) => self.written = true,
                Expr::Binary(b)
                    if crate::activity::is_arithmetic_assign(&b.op) && self.rooted(&b.left) =>
                {
                    self.written = true
                }
                Expr::MethodCall(m)
                    if self.rooted(&m.receiver)
                        && !matches!(
                            m.method.to_string().as_str(),
                            "iter" | "len" | "is_empty" | "windows" | "chunks" | "first" | "last"
                        )
                        && self.bind.field(&m.receiver).is_some() =>
                {
                    self.written = true
                }
                _ => {}
            }
            if !self.note(e) {
                syn::visit::visit_expr(self, e);
            }
        }
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    /// Every read of a noted field in a statement made its binding's name.
    struct Put<'b, 'a>(&'b Bind<'a>);
    impl VisitMut for Put<'_, '_> {
        fn visit_expr_mut(&mut self, e: &mut Expr) {
            if let Expr::Reference(r) = e {
                if let (None, Some((name, _))) = (r.mutability, self.0.field(&r.expr)) {
                    *e = syn::parse_quote!(#name);
                    return;
                }
            }
            if let Some((name, _)) = self.0.field(e) {
                *e = syn::parse_quote!(#name);
                return;
            }
            syn::visit_mut::visit_expr_mut(self, e);
        }
        fn visit_item_mut(&mut self, _: &mut syn::Item) {}
    }
    impl VisitMut for Bind<'_> {
        fn visit_block_mut(&mut self, b: &mut syn::Block) {
            let mut out = Vec::new();
            for mut st in std::mem::take(&mut b.stmts) {
                syn::visit_mut::visit_stmt_mut(self, &mut st);
                let mut reads = Reads {
                    bind: self,
                    found: Vec::new(),
                    written: false,
                };
                reads.visit_stmt(&st);
                // (A `let` binding the name `self`'s fields go through is left alone.)
                if !reads.written && !reads.found.is_empty() {
                    for (field, name, elem) in &reads.found {
                        out.push(syn::parse_quote!(let #name: &[#elem] = &#field;));
                    }
                    Put(self).visit_stmt_mut(&mut st);
                }
                out.push(st);
            }
            b.stmts = out;
        }
        fn visit_item_mut(&mut self, _: &mut syn::Item) {}
    }
    Bind { owners: &owners }.visit_block_mut(&mut func.block);
}

/// The crate's types with a marked `impl From<..>`: `let v: Vec2 = a.into();` is
/// `Vec2::from(a)`, whose rule the block gives.
static FROM_TYPES: Names = Names::new();

/// The traits of the crate's marked `impl Trait for Type` blocks seen so far.
static CRATE_TRAITS: Names = Names::new();

/// Notes the trait of a marked `impl Trait for Type` (see [`CRATE_TRAITS`]).
pub(crate) fn note_crate_trait(name: &str) {
    CRATE_TRAITS.note(name);
}

/// Whether `name` is the trait of a marked `impl` block (see [`CRATE_TRAITS`]).
pub(crate) fn crate_trait(name: &str) -> bool {
    CRATE_TRAITS.holds(name)
}

/// The source types of the crate's marked `impl From<..>`s, as `Type:word` (`V2:f642`
/// of `impl From<[f64; 2]> for V2`, whose companions are `V2::from_f642_rrule`, ..).
static FROM_SOURCES: Names = Names::new();

/// Notes a marked `impl From<..> for ty` whose source type is written `word` (its
/// letters and digits, `f642` of `[f64; 2]`).
pub(crate) fn note_from_type(ty: &str, word: &str) {
    FROM_TYPES.note(ty);
    FROM_SOURCES.note(&format!("{ty}:{word}"));
}

/// The source words of `ty`'s marked `impl From<..>`s (see [`FROM_SOURCES`]).
fn from_sources(ty: &str) -> Vec<String> {
    let prefix = format!("{ty}:");
    FROM_SOURCES
        .0
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .filter_map(|n| n.strip_prefix(&prefix).map(str::to_string))
        .collect()
}

/// Which of `ty`'s `From` implementations `Type::from(arg)` calls, as its source word:
/// the only one, or the one an array or tuple literal's shape names (`[a, b]` of
/// `From<[f64; 2]>`, `(a, b)` of `From<(f64, f64)>`); `None` when neither tells.
fn from_source_of(ty: &str, arg: &Expr) -> Option<String> {
    let words = from_sources(ty);
    if let [only] = &words[..] {
        return Some(only.clone());
    }
    let fty = float();
    let word = match crate::desugar::unparen(arg) {
        Expr::Array(a) => format!("{fty}{}", a.elems.len()),
        Expr::Tuple(t) => fty.repeat(t.elems.len()),
        _ => return None,
    };
    words.into_iter().find(|w| *w == word)
}

/// Whether `ty` has a marked `impl From<..>` (see [`FROM_TYPES`]).
pub(crate) fn from_type(ty: &str) -> bool {
    FROM_TYPES.holds(ty)
}

/// The `&mut self` methods of marked `impl` blocks: the type of each, `None` when two
/// types have one of that name.
static MUT_METHODS: Agreed<String> = Agreed::new();

/// Notes a `&mut self` method of a marked block of `ty`.
pub(crate) fn note_mut_method(ty: &str, sig: &syn::Signature) {
    if sig
        .receiver()
        .is_some_and(|r| r.reference.is_some() && r.mutability.is_some())
    {
        MUT_METHODS.note(&sig.ident.to_string(), ty.to_string());
    }
}

/// The one type of the crate's marked blocks with a `&mut self` method `method` (`None`
/// when none has, or several have).
pub(crate) fn mut_method_type(method: &str) -> Option<String> {
    MUT_METHODS.get(method)
}

/// The methods of marked `impl` blocks returning their own type (`fn stepped(&self, ..)
/// -> Affine`, `-> Self`), by type: a local bound to such a call on a value of the type
/// (`let next = aff.stepped(&g, 0.3);`) is one too.
static SELF_RESULTS: Names = Names::new();

/// Notes a method of a marked block of `ty` when it returns `ty` (or `Self`) by value.
pub(crate) fn note_self_result(ty: &str, sig: &syn::Signature) {
    if let ReturnType::Type(_, t) = &sig.output {
        if let Type::Path(p) = &**t {
            if p.qself.is_none() && (p.path.is_ident("Self") || p.path.is_ident(ty)) {
                SELF_RESULTS.note(&format!("{ty}::{}", sig.ident));
            }
        }
    }
}

/// Whether the method `method` of `ty` returns `ty` (see [`SELF_RESULTS`]).
pub(crate) fn returns_self(ty: &str, method: &str) -> bool {
    SELF_RESULTS.holds(&format!("{ty}::{method}"))
}

/// The marked free functions returning one of the crate's types by name (`fn
/// net_from(p: &[f64]) -> Net`): the type, or `None` when functions of one name return
/// different types. A local bound to such a call (`let mut net = net_from(p);`) is a
/// value of the type, whose methods (`net.decay_all(0.8)`, `&mut self`) are its own.
static FN_RESULTS: Agreed<String> = Agreed::new();

/// Notes what a marked free function returns, when it is a type named by one word.
pub(crate) fn note_fn_result(sig: &syn::Signature) {
    if sig.receiver().is_some() {
        return;
    }
    let ty = match &sig.output {
        ReturnType::Type(_, t) => match &**t {
            Type::Path(p) if p.qself.is_none() => p.path.get_ident().map(|i| i.to_string()),
            _ => None,
        },
        ReturnType::Default => None,
    };
    if let Some(ty) = ty.filter(|t| constructor_type(t)) {
        FN_RESULTS.note(&sig.ident.to_string(), ty);
    }
}

/// The crate type the marked free function `name` returns (see [`FN_RESULTS`]).
pub(crate) fn fn_result(name: &str) -> Option<String> {
    FN_RESULTS.get(name)
}

/// For each marked method name seen so far, which of its parameters after `self` are
/// slices by reference (`x: &[f64]`), when every type's method of that name agrees
/// (`None` where they differ).
static SLICE_PARAMS: Agreed<Vec<bool>> = Agreed::new();

/// A value noted per name, kept while every note of the name agrees (`None` once two
/// differ).
struct Agreed<T>(std::sync::Mutex<Vec<(String, Option<T>)>>);

impl<T: PartialEq + Clone> Agreed<T> {
    const fn new() -> Self {
        Agreed(std::sync::Mutex::new(Vec::new()))
    }

    fn note(&self, name: &str, value: T) {
        let mut all = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match all.iter_mut().find(|(n, _)| n == name) {
            Some((_, seen)) => {
                if seen.as_ref() != Some(&value) {
                    *seen = None;
                }
            }
            None => all.push((name.to_string(), Some(value))),
        }
    }

    fn get(&self, name: &str) -> Option<T> {
        let all = self.0.lock().unwrap_or_else(|e| e.into_inner());
        all.iter()
            .find(|(n, _)| n == name)
            .and_then(|(_, v)| v.clone())
    }
}

/// Notes which parameters of the marked method `method` are slices (see
/// [`SLICE_PARAMS`]).
pub(crate) fn note_slice_params(method: &str, sig: &syn::Signature) {
    let kinds: Vec<bool> = sig
        .inputs
        .iter()
        .filter_map(|a| match a {
            FnArg::Typed(pt) => Some(matches!(&*pt.ty, Type::Reference(r)
                if r.mutability.is_none() && matches!(&*r.elem, Type::Slice(_)))),
            FnArg::Receiver(_) => None,
        })
        .collect();
    SLICE_PARAMS.note(method, kinds);
}

/// Whether the `k`-th argument of the marked method `method` is a slice by reference.
pub(crate) fn slice_param(method: &str, k: usize) -> bool {
    SLICE_PARAMS
        .get(method)
        .is_some_and(|kinds| kinds.get(k).copied().unwrap_or(false))
}

/// Whether the marked methods `method` seen so far are all enums' (at least one).
/// How many of the crate's enums have a marked method `method`, when only enums have one
/// (0 otherwise).
fn enums_with(method: &str) -> usize {
    if !only_enums_have(method) {
        return 0;
    }
    let names = MARKED_METHODS.lock().unwrap_or_else(|e| e.into_inner());
    names.iter().filter(|(_, m)| m == method).count()
}

/// Whether a type of the crate's has a marked method `method` (seen so far).
pub(crate) fn marked_method_name(method: &str) -> bool {
    let names = MARKED_METHODS.lock().unwrap_or_else(|e| e.into_inner());
    names.iter().any(|(_, m)| m == method)
}

/// What a function that does not ask for `higher_order` is told when its generic form
/// meets the crate's own types.
const HIGHER_ORDER_HINT: &str = ", of a type of the crate's: a generic form reaches the \
     crate's structs and enums, their methods and constructors, in a function that asks \
     for it, `#[differentiable(higher_order)]`";

pub(crate) fn only_enums_have(method: &str) -> bool {
    let names = MARKED_METHODS.lock().unwrap_or_else(|e| e.into_inner());
    let mut owners = names.iter().filter(|(_, m)| m == method).peekable();
    owners.peek().is_some() && owners.all(|(t, _)| crate_enum(t))
}

/// Notes `name` as one of the crate's own types (see [`CRATE_TYPES`]).
pub(crate) fn note_crate_type(name: &str) {
    CRATE_TYPES.note(name);
}

/// The crate's own types deriving `Tangent` declared `pub` (see [`rule_trait_vis`]).
static PUBLIC_TYPES: Names = Names::new();
/// Those declared `pub(crate)`.
static CRATE_VISIBLE_TYPES: Names = Names::new();
/// Those declared `pub(super)`.
static PARENT_VISIBLE_TYPES: Names = Names::new();
/// Those declared private (or `pub(in path)`): a name two types share, one `pub` and
/// one private in another module, takes the narrower visibility.
static PRIVATE_TYPES: Names = Names::new();

/// Notes the visibility a `#[derive(Tangent)]` type is declared with.
pub(crate) fn note_type_visibility(name: &str, vis: &syn::Visibility) {
    match vis {
        syn::Visibility::Public(_) => PUBLIC_TYPES.note(name),
        syn::Visibility::Restricted(r) if r.path.is_ident("crate") => {
            CRATE_VISIBLE_TYPES.note(name)
        }
        syn::Visibility::Restricted(r) if r.path.is_ident("super") => {
            PARENT_VISIBLE_TYPES.note(name)
        }
        _ => PRIVATE_TYPES.note(name),
    }
}

/// The visibility of a rule trait of the crate's own types whose `impl` names `tys`:
/// `pub` when every capitalised type name among them is a library's or one of the
/// crate's declared `pub`, `pub(crate)` or `pub(super)` when each is at least that,
/// and private otherwise (a type cannot appear in the `impl` of a more visible trait).
/// The rule is reached wherever the trait's marker type is visible (`companion.rs`,
/// `rule_trait_decl`), so that code in another module reaches the rules of the types
/// it imports, by name or with a glob.
pub(crate) fn rule_trait_vis(tys: &[&Type]) -> TokenStream {
    let mut names = HashSet::new();
    for t in tys {
        crate::activity::token_idents(quote!(#t), &mut names);
    }
    // 0: `pub`, 1: `pub(crate)`, 2: `pub(super)`.
    let mut narrowest = 0;
    for n in names
        .iter()
        .filter(|n| n.starts_with(|c: char| c.is_ascii_uppercase()))
    {
        if (library_name(n) && !crate_type(n)) || LIBRARY_WORDS.contains(&n.as_str()) {
            continue;
        }
        if PRIVATE_TYPES.holds(n) {
            return TokenStream::new();
        }
        if PARENT_VISIBLE_TYPES.holds(n) {
            narrowest = 2;
        } else if CRATE_VISIBLE_TYPES.holds(n) {
            narrowest = narrowest.max(1);
        } else if !PUBLIC_TYPES.holds(n) {
            return TokenStream::new();
        }
    }
    match narrowest {
        0 => quote!(pub),
        1 => quote!(pub(crate)),
        _ => quote!(pub(super)),
    }
}

/// Type names of the standard library and of the rule traits' own plumbing that a rule
/// trait's `impl` may name (see [`rule_trait_vis`]).
const LIBRARY_WORDS: &[&str] = &["Vec", "Option", "Result", "Box", "String", "Self"];

/// Whether `name` is one of the crate's own types (see [`CRATE_TYPES`]).
pub(crate) fn crate_type(name: &str) -> bool {
    CRATE_TYPES.holds(name)
}

/// A type whose associated functions may be the user's constructors (`V2::new`).
pub(crate) fn constructor_type(name: &str) -> bool {
    user_type_name(name) && !library_type(name)
}

/// `a` read back as the function's float in a generic form (`Unlift`, by method syntax
/// so that a reference is read through): the twin's scalar as an `f64` (or `f32`), an
/// integer as it is, element by element.
fn unlifted(a: &Expr) -> Expr {
    let fty = float();
    let (tr, m) = (
        quote::format_ident!("Unlift{}", fty.to_uppercase()),
        quote::format_ident!("unlift_{}", fty),
    );
    syn::parse_quote!({
        #[allow(unused_imports)]
        use ::mochi::__private::#tr as _;
        (#a).#m()
    })
}

/// `a` without a shared borrow written on it (`k` of `&k`).
fn unborrowed(a: &Expr) -> &Expr {
    match crate::desugar::unparen(a) {
        Expr::Reference(r) if r.mutability.is_none() => &r.expr,
        other => other,
    }
}

/// A borrow handed to a plain function that the syntax does not show holds floats
/// (`&ls`, `&k`): read back if its type has an `Unlift` impl, as it is if not
/// (`__private::UnliftArg`); any other argument as [`unlifted_arg`] reads it.
fn unlifted_or_kept(a: &Expr) -> Expr {
    match crate::desugar::unparen(a) {
        Expr::Reference(r) if r.mutability.is_none() => {
            let (inner, m) = (&r.expr, quote::format_ident!("unlift_or_keep_{}", float()));
            syn::parse_quote!(&(&::mochi::__private::UnliftArg(&#inner)).#m())
        }
        _ => unlifted_arg(a),
    }
}

/// [`unlifted`], with a borrowed value (`&ANCHOR`) borrowed again once read back.
fn unlifted_arg(a: &Expr) -> Expr {
    match crate::desugar::unparen(a) {
        Expr::Reference(r) if r.mutability.is_none() => {
            let inner = unlifted(&r.expr);
            syn::parse_quote!(&#inner)
        }
        _ => unlifted(a),
    }
}

/// A call of a plain function in a generic form: made as written, its value lifted to
/// the twin's scalar when it is a float (`PlainOf`), kept otherwise.
fn plain_of(call: &syn::ExprCall) -> Expr {
    let t = syn::Ident::new(PARAM, Span::call_site());
    syn::parse_quote!(
        (&mut ::mochi::__private::PlainOf(
            ::core::option::Option::Some(#call),
            ::core::marker::PhantomData::<#t>,
        ))
            .lift_or_keep_plain()
    )
}

/// The `let`s of a body that bind one name (the name, the type written, the initial
/// value) and the `for` loops that bind one (the name, the sequence), in order.
pub(crate) struct BodyLets {
    pub(crate) lets: Vec<(String, Option<Type>, Option<Expr>)>,
    fors: Vec<(String, Expr)>,
}

impl<'a> Visit<'a> for BodyLets {
    fn visit_local(&mut self, l: &'a syn::Local) {
        let (pat, ty) = match &l.pat {
            Pat::Type(t) => (&*t.pat, Some((*t.ty).clone())),
            p => (p, None),
        };
        if let Pat::Ident(pi) = pat {
            let init = l.init.as_ref().map(|i| (*i.expr).clone());
            self.lets.push((pi.ident.to_string(), ty, init));
        }
        // `let (k, rest, m) = (10.0, 1.0, 0.1);`: each name with its part.
        if let (Pat::Tuple(pt), Some(init)) = (pat, &l.init) {
            if let Expr::Tuple(values) = crate::desugar::unparen(&init.expr) {
                if pt.elems.len() == values.elems.len() && init.diverge.is_none() {
                    for (p, v) in pt.elems.iter().zip(&values.elems) {
                        if let Pat::Ident(pi) = p {
                            self.lets
                                .push((pi.ident.to_string(), None, Some(v.clone())));
                        }
                    }
                }
            }
        }
        syn::visit::visit_local(self, l);
    }
    fn visit_expr_for_loop(&mut self, f: &'a syn::ExprForLoop) {
        if let Pat::Ident(pi) = &*f.pat {
            self.fors.push((pi.ident.to_string(), (*f.expr).clone()));
        }
        syn::visit::visit_expr_for_loop(self, f);
    }
}

impl BodyLets {
    pub(crate) fn of(block: &syn::Block) -> BodyLets {
        let mut b = BodyLets {
            lets: Vec::new(),
            fors: Vec::new(),
        };
        b.visit_block(block);
        b
    }
}

/// The names of `func` that hold integers: its parameters of integer types, the
/// variables of `for` loops over ranges of integers (also reversed or stepped), and the
/// locals bound once to an integer expression (see [`integer_expr`]), to a type of
/// integer, or to a `len()`.
fn integer_names(func: &ItemFn) -> HashSet<String> {
    let int_type = |t: &Type| {
        matches!(t, Type::Path(p)
        if p.path.get_ident().is_some_and(|i| INTEGER_TYPES.contains(&i.to_string().as_str())))
    };
    let mut names: HashSet<String> = func
        .sig
        .inputs
        .iter()
        .filter_map(|a| match a {
            FnArg::Typed(pt) if int_type(&pt.ty) => match &*pt.pat {
                Pat::Ident(p) => Some(p.ident.to_string()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    let lets = BodyLets::of(&func.block);
    let range = |e: &Expr, names: &HashSet<String>| {
        let mut e = crate::desugar::unparen(e);
        while let Expr::MethodCall(m) = e {
            if !matches!(
                m.method.to_string().as_str(),
                "rev" | "step_by" | "skip" | "take"
            ) {
                return false;
            }
            e = crate::desugar::unparen(&m.receiver);
        }
        matches!(e, Expr::Range(r)
            if r.start.as_deref().is_none_or(|s| integer_expr(s, names))
                && r.end.as_deref().is_none_or(|s| integer_expr(s, names)))
    };
    loop {
        let before = names.len();
        for (name, ty, init) in &lets.lets {
            if names.contains(name) || lets.lets.iter().filter(|(n, ..)| n == name).count() > 1 {
                continue;
            }
            let integer = ty.as_ref().is_some_and(int_type)
                || ty.is_none() && init.as_ref().is_some_and(|e| integer_expr(e, &names));
            if integer {
                names.insert(name.clone());
            }
        }
        for (name, e) in &lets.fors {
            if !names.contains(name) && range(e, &names) {
                names.insert(name.clone());
            }
        }
        if names.len() == before {
            return names;
        }
    }
}

/// An expression of integers: an integer literal, a cast to an integer type, a `len()`
/// or `count()`, a name of `integers`, or arithmetic of these.
fn integer_expr(e: &Expr, integers: &HashSet<String>) -> bool {
    match crate::desugar::unparen(e) {
        Expr::Lit(l) => matches!(l.lit, syn::Lit::Int(_) | syn::Lit::Bool(_)),
        Expr::Cast(c) => matches!(&*c.ty, Type::Path(p)
            if p.path.get_ident().is_some_and(|i| INTEGER_TYPES.contains(&i.to_string().as_str()))),
        Expr::Path(p) => p
            .path
            .get_ident()
            .is_some_and(|i| integers.contains(&i.to_string())),
        Expr::MethodCall(m) => {
            matches!(m.method.to_string().as_str(), "len" | "count") && m.args.is_empty()
        }
        Expr::Binary(b) => {
            matches!(
                b.op,
                syn::BinOp::Add(_)
                    | syn::BinOp::Sub(_)
                    | syn::BinOp::Mul(_)
                    | syn::BinOp::Div(_)
                    | syn::BinOp::Rem(_)
            ) && integer_expr(&b.left, integers)
                && integer_expr(&b.right, integers)
        }
        _ => false,
    }
}

/// `V2::new(a, b)`: a call of an associated function of a type that may be the user's
/// (see [`constructor_type`]), given arguments; the type.
fn associated_constructor(e: &Expr) -> Option<syn::Ident> {
    let Expr::Call(c) = crate::desugar::unparen(e) else {
        return None;
    };
    let Expr::Path(p) = &*c.func else { return None };
    let segs = &p.path.segments;
    // (Not `Loss::Huber(d)`, a variant of an enum of the crate's.)
    (p.qself.is_none()
        && segs.len() == 2
        && segs.iter().all(|s| s.arguments.is_none())
        && !c.args.is_empty()
        && constructor_type(&segs[0].ident.to_string())
        && !crate_enum(&segs[0].ident.to_string()))
    .then(|| segs[0].ident.clone())
}

/// `V2::zero()`, `V2::new(1.0, 0.0)`: a call of an associated function of a type that
/// may be the user's (see [`constructor_type`]) with no argument but literals, which the
/// twin lifts to its scalar as it is (a struct's mirror for a struct).
fn constant_of_users(e: &Expr) -> bool {
    match crate::desugar::unparen(e) {
        Expr::Call(c) => constant_call_of_users(c),
        Expr::Path(p) => associated_constant_of_users(p),
        _ => false,
    }
}

/// `V2::ZERO`, `Self::ORIGIN` in a method of the user's type: an associated constant
/// (upper case) of a type of the user's.
fn associated_constant_of_users(p: &syn::ExprPath) -> bool {
    let segs = &p.path.segments;
    p.qself.is_none()
        && segs.len() == 2
        && segs.iter().all(|s| s.arguments.is_none())
        && is_constant_name(&segs[1].ident.to_string())
        && (constructor_type(&segs[0].ident.to_string())
            || segs[0].ident == "Self" && IMPL_TYPE.with(|t| t.borrow().is_some()))
}

/// The call of [`constant_of_users`].
fn constant_call_of_users(c: &syn::ExprCall) -> bool {
    let Expr::Path(p) = &*c.func else {
        return false;
    };
    let segs = &p.path.segments;
    p.qself.is_none()
        && segs.len() == 2
        && segs.iter().all(|s| s.arguments.is_none())
        && c.args.iter().all(scalar_literal)
        && (constructor_type(&segs[0].ident.to_string())
            || segs[0].ident == "Self" && IMPL_TYPE.with(|t| t.borrow().is_some()))
}

/// The locals of `func` bound once, by a `let` of a struct literal of a type of the
/// user's (`let l = Line { slope: a, icpt: b };`), and their types. In the twin such a
/// local is the struct's generic mirror, so a method called on it (`l.at(t)`,
/// `Line::at(&l, t)`) is the method's twin, `Line::at__twin_needs_differentiable_higher_order(&l, t)`
/// (a method without one has a stand-in that says why where it is used).
fn struct_locals(func: &ItemFn) -> std::collections::HashMap<String, (syn::Ident, bool)> {
    struct S(std::collections::HashMap<String, (syn::Ident, bool)>);
    impl S {
        /// The type of `base.with_decay(a).with_warm(b)`: a local of a type of the
        /// crate's, through methods of it returning the type (`-> Self`).
        fn chain_type(&self, e: &Expr) -> Option<syn::Ident> {
            match crate::desugar::unparen(e) {
                Expr::Path(q) => q
                    .path
                    .get_ident()
                    .and_then(|i| self.0.get(&i.to_string()))
                    .map(|(t, _)| t.clone()),
                Expr::MethodCall(m) => self.chain_type(&m.receiver).filter(|t| {
                    m.method == "clone" || returns_self(&t.to_string(), &m.method.to_string())
                }),
                Expr::Struct(l) if l.qself.is_none() => l
                    .path
                    .get_ident()
                    .filter(|t| constructor_type(&t.to_string()))
                    .cloned(),
                e => associated_constructor(e),
            }
        }
    }
    impl<'a> Visit<'a> for S {
        fn visit_local(&mut self, l: &'a syn::Local) {
            let pat = match &l.pat {
                Pat::Type(t) => &*t.pat,
                p => p,
            };
            if let (Pat::Ident(p), Some(init)) = (pat, &l.init) {
                // `let a = V2::new(x, y);`: an associated function of the user's type
                // (see `constructor_type`), which its twin makes the mirror.
                if let Some(ty) = associated_constructor(&init.expr) {
                    if p.by_ref.is_none() && p.subpat.is_none() && init.diverge.is_none() {
                        self.0.insert(p.ident.to_string(), (ty, false));
                    }
                }
                // `let m = Model::default().with_bias(b);`: a builder's chain on a
                // constructor of the user's type, by the convention that `with_…`
                // methods return `Self`.
                if let Some(ty) = built_by_builder(&init.expr) {
                    if p.by_ref.is_none() && p.subpat.is_none() && init.diverge.is_none() {
                        self.0.insert(p.ident.to_string(), (ty, false));
                    }
                }
                // `let model = from_params(p, &SIZES);` of a marked function returning
                // one of the crate's types by name, and `let next = aff.stepped(&g, 0.3);`
                // of a method of such a local's type returning the type.
                let made = match crate::desugar::unparen(&init.expr) {
                    Expr::Call(c) => match &*c.func {
                        Expr::Path(f) if f.qself.is_none() => f
                            .path
                            .get_ident()
                            .and_then(|i| fn_result(&i.to_string()))
                            .map(|t| syn::Ident::new(&t, f.span())),
                        _ => None,
                    },
                    Expr::MethodCall(_) => self.chain_type(&init.expr),
                    _ => None,
                };
                if let Some(ty) = made {
                    if p.by_ref.is_none() && p.subpat.is_none() && init.diverge.is_none() {
                        self.0.insert(p.ident.to_string(), (ty, false));
                    }
                }
                // `let t = (0..3).fold(model, |m, _| m.step(..));` from such a local.
                if let Expr::MethodCall(m) = crate::desugar::unparen(&init.expr) {
                    if m.method == "fold" && m.args.len() == 2 {
                        let from = match crate::desugar::unparen(&m.args[0]) {
                            Expr::Path(q) => q
                                .path
                                .get_ident()
                                .and_then(|i| self.0.get(&i.to_string()))
                                .map(|(t, _)| t.clone()),
                            e => associated_constructor(e),
                        };
                        if let Some(ty) = from {
                            if p.by_ref.is_none() && p.subpat.is_none() && init.diverge.is_none() {
                                self.0.insert(p.ident.to_string(), (ty, false));
                            }
                        }
                    }
                }
                // `let p: Vec3 = ..;` and `let p = chain.sum::<Vec3>();` (also `product`):
                // a value of one of the crate's types, named.
                let named = match (&l.pat, crate::desugar::unparen(&init.expr)) {
                    (Pat::Type(t), _) => match &*t.ty {
                        Type::Path(tp) if tp.qself.is_none() => tp.path.get_ident().cloned(),
                        _ => None,
                    },
                    (_, Expr::MethodCall(m)) if m.method == "sum" || m.method == "product" => m
                        .turbofish
                        .as_ref()
                        .filter(|tf| tf.args.len() == 1)
                        .and_then(|tf| match &tf.args[0] {
                            syn::GenericArgument::Type(Type::Path(tp)) if tp.qself.is_none() => {
                                tp.path.get_ident().cloned()
                            }
                            _ => None,
                        }),
                    _ => None,
                };
                if let Some(ty) =
                    named.filter(|t| crate_type(&t.to_string()) && !crate_enum(&t.to_string()))
                {
                    if p.by_ref.is_none() && p.subpat.is_none() && init.diverge.is_none() {
                        self.0.insert(p.ident.to_string(), (ty, false));
                    }
                }
                // `let a = Act::Tanh;`, `let l = Loss::Huber(0.25);`: a variant of the
                // crate's own enum (its own generic form).
                let variant_call = match crate::desugar::unparen(&init.expr) {
                    Expr::Call(c) => match &*c.func {
                        Expr::Path(fp) if fp.qself.is_none() && fp.path.segments.len() == 2 => {
                            let t = fp.path.segments[0].ident.to_string();
                            crate_enum(&t).then(|| fp.path.segments[0].ident.clone())
                        }
                        _ => None,
                    },
                    _ => None,
                };
                if let Some(ty) = enum_variant_of_crate(&init.expr).or(variant_call) {
                    if p.by_ref.is_none() && p.subpat.is_none() && init.diverge.is_none() {
                        self.0.insert(p.ident.to_string(), (ty, false));
                    }
                }
                if let Expr::Struct(st) = crate::desugar::unparen(&init.expr) {
                    let user = st.qself.is_none()
                        && st.path.segments.len() == 1
                        && st.path.segments[0].arguments.is_none()
                        && st.path.segments[0].ident != "Self"
                        && st.path.segments[0]
                            .ident
                            .to_string()
                            .starts_with(|c: char| c.is_ascii_uppercase());
                    if user && p.by_ref.is_none() && p.subpat.is_none() && init.diverge.is_none() {
                        self.0.insert(
                            p.ident.to_string(),
                            (st.path.segments[0].ident.clone(), false),
                        );
                    }
                }
            }
            syn::visit::visit_local(self, l);
        }
        fn visit_item(&mut self, _: &'a syn::Item) {}
    }
    let mut found = S(Default::default());
    found.visit_block(&func.block);
    found.0.extend(struct_loop_variables(func));
    let mut counts = std::collections::HashMap::new();
    count_bindings(func, &mut counts);
    found.0.retain(|name, _| counts.get(name) == Some(&1));
    found.0
}

/// A `for` over the elements of a named sequence: the element's name, the sequence,
/// and whether the elements are lent mutably. `for l in &layers`, `layers.iter()`,
/// `&mut layers`, `layers.iter_mut()`, and each of them under `enumerate()` (`for (k,
/// l) in layers.iter().enumerate()`).
pub(crate) fn loop_over_sequence(
    f: &syn::ExprForLoop,
) -> Option<(&syn::PatIdent, &syn::Ident, bool)> {
    let (p, walked) = match &*f.pat {
        Pat::Ident(p) => (p, &*f.expr),
        Pat::Tuple(t) if t.elems.len() == 2 => {
            match (&t.elems[1], crate::desugar::unparen(&f.expr)) {
                (Pat::Ident(p), Expr::MethodCall(m))
                    if m.method == "enumerate" && m.args.is_empty() =>
                {
                    (p, &*m.receiver)
                }
                _ => return None,
            }
        }
        _ => return None,
    };
    if p.by_ref.is_some() || p.subpat.is_some() {
        return None;
    }
    let (seq, mutable) = match crate::desugar::unparen(walked) {
        Expr::Reference(r) => (&*r.expr, r.mutability.is_some()),
        Expr::MethodCall(m) if m.args.is_empty() && m.method == "iter" => (&*m.receiver, false),
        Expr::MethodCall(m) if m.args.is_empty() && m.method == "iter_mut" => (&*m.receiver, true),
        _ => return None,
    };
    let Expr::Path(q) = crate::desugar::unparen(seq) else {
        return None;
    };
    Some((p, q.path.get_ident()?, mutable))
}

/// The variables of `for l in &layers` (also `layers.iter()`, `&mut layers`,
/// `layers.iter_mut()`) over a sequence of the user's structs of a known type (`layers:
/// &[Dense]`, `let layers = vec![Dense { .. }, ..]`, `let layers: Vec<Dense> = ..`),
/// each a reference to a value of the type.
fn struct_loop_variables(func: &ItemFn) -> HashMap<String, (syn::Ident, bool)> {
    struct L {
        seqs: HashMap<String, syn::Ident>,
        found: HashMap<String, (syn::Ident, bool)>,
    }
    impl<'a> Visit<'a> for L {
        fn visit_local(&mut self, l: &'a syn::Local) {
            let pat = match &l.pat {
                Pat::Type(t) => &*t.pat,
                p => p,
            };
            if let (Pat::Ident(p), Some(ty)) = (pat, crate::desugar::local_element_type(l)) {
                self.seqs.insert(p.ident.to_string(), ty);
            }
            syn::visit::visit_local(self, l);
        }
        fn visit_expr_for_loop(&mut self, f: &'a syn::ExprForLoop) {
            if let Some((p, seq, _)) = loop_over_sequence(f) {
                if let Some(ty) = self.seqs.get(&seq.to_string()) {
                    self.found.insert(p.ident.to_string(), (ty.clone(), true));
                }
            }
            syn::visit::visit_expr_for_loop(self, f);
        }
        fn visit_item(&mut self, _: &'a syn::Item) {}
    }
    let mut l = L {
        seqs: HashMap::new(),
        found: HashMap::new(),
    };
    for a in &func.sig.inputs {
        if let FnArg::Typed(pt) = a {
            if let (Pat::Ident(p), Some(ty)) =
                (&*pt.pat, crate::desugar::Receiver::user_elements(&pt.ty))
            {
                l.seqs.insert(p.ident.to_string(), ty);
            }
        }
    }
    l.visit_block(&func.block);
    l.found
}

/// `Model::default().with_weights(w).with_bias(b)`: `with_…` methods (a builder's,
/// returning `Self`) on a constructor of the user's type (`Type::new(..)`,
/// `Type::default()`); the type.
fn built_by_builder(e: &Expr) -> Option<syn::Ident> {
    let c = crate::desugar::builder_root(e)?;
    let Expr::Path(p) = &*c.func else { return None };
    let segs = &p.path.segments;
    (p.qself.is_none()
        && segs.len() == 2
        && segs.iter().all(|s| s.arguments.is_none())
        && matches!(segs[1].ident.to_string().as_str(), "new" | "default")
        && constructor_type(&segs[0].ident.to_string()))
    .then(|| segs[0].ident.clone())
}

/// `Act::Tanh`, a variant of one of the crate's own enums (see `CRATE_ENUMS`): the enum.
fn enum_variant_of_crate(e: &Expr) -> Option<syn::Ident> {
    let Expr::Path(p) = crate::desugar::unparen(e) else {
        return None;
    };
    let segs = &p.path.segments;
    (p.qself.is_none()
        && segs.len() == 2
        && segs.iter().all(|s| s.arguments.is_none())
        && crate_enum(&segs[0].ident.to_string()))
    .then(|| segs[0].ident.clone())
}

/// A value that may be a struct of the user's, in the generic form of a function asking
/// for `higher_order`: a local bound to a struct literal or to such a value, a call of
/// a function of the crate (`make(a, b)`), or a method called on such a value
/// (`p.scaled(2.0)`). A method of the user's called on it is kept as written: the
/// value is the struct's mirror there, which has the method (see
/// `companion::mirror_method`).
fn structish(e: &Expr, locals: &HashSet<String>) -> bool {
    if associated_constructor(e).is_some() || constant_of_users(e) {
        return true;
    }
    match crate::desugar::unparen(e) {
        // (`self` in a method of the user's struct: `self.add(&o).add(&u)`.)
        Expr::Path(p) => p.path.get_ident().is_some_and(|i| {
            locals.contains(&i.to_string())
                || i == "self" && IMPL_TYPE.with(|t| t.borrow().is_some())
        }),
        Expr::Reference(r) => structish(&r.expr, locals),
        // (An array of them, `[a, V2::new(p, q)]`, whose elements are.)
        Expr::Array(a) => !a.elems.is_empty() && a.elems.iter().all(|v| structish(v, locals)),
        // (A struct literal, `Sched { rate: p[0], .. }.with_decay(d)`.)
        Expr::Struct(st) => user_struct_literal(st),
        // (`a.pos` of a struct with struct fields, `Body { pos: V2, .. }`: a float or a
        // struct, whose methods a float does not have decide.)
        // (Also of an element, `bodies[1].pos`.)
        Expr::Field(f) => {
            matches!(
                crate::desugar::unparen(&f.base),
                Expr::Path(_) | Expr::Index(_)
            ) && structish(&f.base, locals)
        }
        // (`Sched::with_decay(&recv, d)` of a method returning `Self`, and the block the
        // receiver of a chain on a struct literal is bound in, `{ let __mochi_recv =
        // Sched { .. }; Sched::with_decay(&__mochi_recv, d) }.with_warm(w)`.)
        Expr::Call(c)
            if matches!(&*c.func, Expr::Path(p) if p.qself.is_none()
            && p.path.segments.len() == 2
            && returns_self(&p.path.segments[0].ident.to_string(), &p.path.segments[1].ident.to_string())) =>
        {
            true
        }
        Expr::Block(b) => {
            matches!(b.block.stmts.last(), Some(syn::Stmt::Expr(t, None)) if structish(t, locals))
        }
        Expr::Call(c) => matches!(&*c.func, Expr::Path(p)
        if p.qself.is_none()
            && p.path.segments.len() == 1
            && p.path.segments[0].arguments.is_none()
            && {
                let n = p.path.segments[0].ident.to_string();
                n.starts_with(|ch: char| ch.is_lowercase()) || tuple_struct_name(&n)
            }),
        // (A fold from a struct, `pts.iter().fold(V2::zero(), |a, q| a.plus(q))`.)
        Expr::MethodCall(m) if m.method == "fold" && m.args.len() == 2 => {
            structish(&m.args[0], locals)
        }
        Expr::MethodCall(m) => {
            let name = m.method.to_string();
            !FLOAT_METHODS.contains(&name.as_str())
                && !SEQ_METHODS.contains(&name.as_str())
                && of_struct_chain(&m.receiver, locals)
        }
        // The user's operators on structs (`(a + b) * 0.5 - a`, `-v`, `2.0 * v`), an
        // element of a `Vec` of them (`pts[i]`).
        Expr::Binary(b) => {
            matches!(
                b.op,
                syn::BinOp::Add(_) | syn::BinOp::Sub(_) | syn::BinOp::Mul(_) | syn::BinOp::Div(_)
            ) && (structish(&b.left, locals) || structish(&b.right, locals))
        }
        Expr::Unary(u) => {
            matches!(u.op, syn::UnOp::Neg(_) | syn::UnOp::Deref(_)) && structish(&u.expr, locals)
        }
        Expr::Index(i) => !matches!(&*i.index, Expr::Range(_)) && structish(&i.expr, locals),
        _ => false,
    }
}

/// A literal of a struct of the user's named by one word, `Pt { x: a, y: b }` (not
/// `Self { .. }`).
fn user_struct_literal(st: &syn::ExprStruct) -> bool {
    st.qself.is_none()
        && st.path.segments.len() == 1
        && st.path.segments[0].ident != "Self"
        && user_type_name(&st.path.segments[0].ident.to_string())
}

/// A value that may be a struct of the user's (see [`structish`]), or the result of a
/// method called on one whatever its name (`z.exp()`, `v.norm()`): a float, or one of the
/// user's values. A method a float does not have (`z.exp().conj()`) makes it the user's.
fn of_struct_chain(e: &Expr, locals: &HashSet<String>) -> bool {
    structish(e, locals)
        || matches!(crate::desugar::unparen(e), Expr::MethodCall(m)
            if m.method != "fold" && of_struct_chain(&m.receiver, locals))
}

/// A value that surely is a struct of the user's, given the names `locals` that are: a
/// struct literal, a constructor (`V2::new(..)`), one of `locals`, their sums and
/// differences, their negation, and their products with a float on either side.
fn surely_struct(e: &Expr, locals: &HashSet<String>) -> bool {
    use syn::BinOp::*;
    match crate::desugar::unparen(e) {
        Expr::Path(p) => {
            p.path
                .get_ident()
                .is_some_and(|i| locals.contains(&i.to_string()))
                || associated_constant_of_users(p)
        }
        // (`pos[i]` of a sequence typed as one of structs, `pos: Vec<V3>`, `ps: &[V3]`,
        // which [`surely_struct_locals`] records as `[]pos`.)
        Expr::Index(ix) if !matches!(&*ix.index, Expr::Range(_)) => {
            matches!(crate::desugar::unparen(&ix.expr), Expr::Path(p)
                if p.path.get_ident().is_some_and(|i| locals.contains(&format!("[]{i}"))))
        }
        Expr::Struct(st) => user_struct_literal(st),
        // (`V2::new(..)`, `V2::from_polar(..)`: a constructor by its name; `Line::at(&l,
        // t)` may return a float.)
        e @ Expr::Call(c) => {
            constant_of_users(e)
                || associated_constructor(e).is_some()
                    && matches!(&*c.func, Expr::Path(p) if p.path.segments.last().is_some_and(|s| {
                        let n = s.ident.to_string();
                        n == "new" || n.starts_with("new_") || n.starts_with("from") || n.starts_with("with_")
                    }))
        }
        Expr::Unary(u) => matches!(u.op, syn::UnOp::Neg(_)) && surely_struct(&u.expr, locals),
        // (`d.normalized()`, `a.lerp(&b, t)`: the names vector types give the methods that
        // return one of them.)
        Expr::MethodCall(m) => {
            // (Not `cross`, a float for a 2-D vector; a method the syntax cannot type is
            // read through the rule, see `Rewrite::rule_primal`.)
            const VECTOR_RESULTS: &[&str] = &[
                "normalized",
                "normalize",
                "unit",
                "scaled",
                "scale",
                "rotated",
                "rotate",
                "lerp",
                "plus",
                "minus",
                "perp",
                "reflect",
                "reflected",
                "projected",
                "clone",
                "hadamard",
                "component_mul",
            ];
            // (A fold from a struct: `….fold(V2::zero(), |a, q| a + q)`, a `Sum`.)
            m.method == "fold" && m.args.len() == 2 && surely_struct(&m.args[0], locals)
                || VECTOR_RESULTS.contains(&m.method.to_string().as_str())
                    && surely_struct(&m.receiver, locals)
        }
        Expr::Binary(b) => match b.op {
            Add(_) | Sub(_) => surely_struct(&b.left, locals) || surely_struct(&b.right, locals),
            // (`v * k`, `-p * p.norm()`: the struct scaled; two structs may be a product
            // of the user's that is a float.)
            Mul(_) => {
                let (l, r) = (
                    surely_struct(&b.left, locals),
                    surely_struct(&b.right, locals),
                );
                l != r
            }
            Div(_) => surely_struct(&b.left, locals) && !surely_struct(&b.right, locals),
            _ => false,
        },
        _ => false,
    }
}

/// The names that surely hold a struct of the user's (see [`surely_struct`]): `known`
/// (struct literals' locals and arguments of the user's types), then each local bound
/// once, in order, to such a value or typed as such a struct.
fn surely_struct_locals(func: &ItemFn, known: HashSet<String>) -> HashSet<String> {
    struct S(HashSet<String>);
    impl<'a> Visit<'a> for S {
        fn visit_local(&mut self, l: &'a syn::Local) {
            syn::visit::visit_local(self, l);
            let (pat, typed) = match &l.pat {
                Pat::Type(t) => (&*t.pat, user_type_arg(&t.ty).is_some_and(|(_, r)| !r)),
                p => (p, false),
            };
            if let (Pat::Ident(p), Some(init)) = (pat, &l.init) {
                if p.by_ref.is_none()
                    && p.subpat.is_none()
                    && init.diverge.is_none()
                    && (typed || surely_struct(&init.expr, &self.0))
                {
                    self.0.insert(p.ident.to_string());
                }
            }
        }
    }
    let mut s = S(known);
    s.0.extend(struct_sequences(func).into_iter().map(|n| format!("[]{n}")));
    s.visit_block(&func.block);
    let mut counts = std::collections::HashMap::new();
    count_bindings(func, &mut counts);
    s.0.retain(|name| name.starts_with("[]") || counts.get(name).is_none_or(|c| *c == 1));
    s.0
}

/// `vec![State { .. }, ..]` or `vec![State { .. }; n]`: a `Vec` of struct literals of
/// the user's types.
fn vec_of_struct_literals(e: &Expr) -> bool {
    // (Or a constructor of the user's type, `vec![P3::zero(); n]`.)
    let literal = |e: &Expr| {
        associated_constructor(e).is_some()
            || constant_of_users(e)
            || matches!(crate::desugar::unparen(e), Expr::Struct(st) if st.qself.is_none()
            && st.path.segments.len() == 1
            && st.path.segments[0].ident != "Self"
            && user_type_name(&st.path.segments[0].ident.to_string()))
    };
    let Expr::Macro(m) = crate::desugar::unparen(e) else {
        return false;
    };
    if !m.mac.path.is_ident("vec") {
        return false;
    }
    // (`vec![s; n]`: its element; `vec![a, b]`: each.)
    if let Ok(r) = m.mac.parse_body::<crate::rewrite::Repeat>() {
        return literal(&r.elem);
    }
    crate::rewrite::macro_exprs(&m.mac).is_some_and(|es| !es.is_empty() && es.iter().all(literal))
}

/// Sequences of structs of the user's, bound once: arguments typed so (`ps: &[V3]`, `v:
/// Vec<V3>`, `[V3; 4]`), locals typed so (`let mut pos: Vec<V3> = ..`), and locals bound to a copy
/// of one (`let prev = pts.clone();`, `pts.to_vec()`).
fn struct_sequences(func: &ItemFn) -> Vec<String> {
    let struct_seq = |t: &Type| {
        let t = match t {
            Type::Reference(r) => &*r.elem,
            t => t,
        };
        let elem = match t {
            Type::Slice(sl) => Some(&*sl.elem),
            Type::Array(a) => Some(&*a.elem),
            t => crate::iterchain::vec_elem(t).flatten(),
        };
        elem.is_some_and(|e| user_type_arg(e).is_some_and(|(_, r)| !r))
    };
    let mut seqs = Vec::new();
    for a in &func.sig.inputs {
        if let FnArg::Typed(pt) = a {
            if let (Pat::Ident(i), true) = (&*pt.pat, struct_seq(&pt.ty)) {
                seqs.push(i.ident.to_string());
            }
        }
    }
    struct Seqs<'f, F: Fn(&Type) -> bool>(&'f mut Vec<String>, F);
    impl<'a, F: Fn(&Type) -> bool> Visit<'a> for Seqs<'_, F> {
        fn visit_local(&mut self, l: &'a syn::Local) {
            syn::visit::visit_local(self, l);
            let (pat, typed) = match &l.pat {
                Pat::Type(t) => (&*t.pat, (self.1)(&t.ty)),
                p => (p, false),
            };
            let Pat::Ident(i) = pat else { return };
            let copied = l.init.as_ref().is_some_and(|init| {
                let e = match crate::desugar::unparen(&init.expr) {
                    Expr::MethodCall(m)
                        if m.args.is_empty()
                            && matches!(
                                m.method.to_string().as_str(),
                                "clone" | "to_vec" | "to_owned"
                            ) =>
                    {
                        &*m.receiver
                    }
                    e => e,
                };
                matches!(crate::desugar::unparen(e), Expr::Path(p)
                    if p.path.get_ident().is_some_and(|n| self.0.contains(&n.to_string())))
            });
            // (`let mut traj = vec![State { .. }];`, also `vec![s; n]` of a literal.)
            let of_literals = l
                .init
                .as_ref()
                .is_some_and(|init| vec_of_struct_literals(&init.expr));
            if typed || copied || of_literals {
                self.0.push(i.ident.to_string());
            }
        }
        // (`pts.windows(3).map(|w| ..)`, `for w in pts.windows(2)`: a window of a
        // sequence of structs is one.)
        fn visit_expr_method_call(&mut self, m: &'a syn::ExprMethodCall) {
            if let (true, Some(Expr::Closure(c))) = (self.windows_of(&m.receiver), m.args.last()) {
                let at = usize::from(m.method == "fold");
                if let Some(Pat::Ident(i)) = c.inputs.iter().nth(at) {
                    self.0.push(i.ident.to_string());
                }
            }
            syn::visit::visit_expr_method_call(self, m);
        }
        fn visit_expr_for_loop(&mut self, f: &'a syn::ExprForLoop) {
            if let (true, Pat::Ident(i)) = (self.windows_of(&f.expr), &*f.pat) {
                self.0.push(i.ident.to_string());
            }
            syn::visit::visit_expr_for_loop(self, f);
        }
    }
    impl<F: Fn(&Type) -> bool> Seqs<'_, F> {
        /// `pts.windows(k)` (also `chunks`, `chunks_exact`) of a sequence noted.
        fn windows_of(&self, e: &Expr) -> bool {
            matches!(crate::desugar::unparen(e), Expr::MethodCall(w)
                if matches!(w.method.to_string().as_str(), "windows" | "chunks" | "chunks_exact")
                    && matches!(crate::desugar::unparen(&w.receiver), Expr::Path(p)
                        if p.path.get_ident().is_some_and(|n| self.0.contains(&n.to_string()))))
        }
    }
    Seqs(&mut seqs, struct_seq).visit_block(&func.block);
    let mut counts = std::collections::HashMap::new();
    count_bindings(func, &mut counts);
    seqs.retain(|n| counts.get(n).is_none_or(|c| *c == 1));
    seqs
}

/// The locals bound once to a [`structish`] value, from the struct literals' locals
/// `known` on, in order.
fn structish_locals(func: &ItemFn, known: &HashSet<String>) -> HashSet<String> {
    // (Elements of sequences of structs, from loops and closures: struct-like whether
    // or not the name is bound elsewhere too, as names of elements often are.)
    // (The fourth: how many of a name's bindings are to a struct, so that a name bound
    // again, each time to a struct, `let c = c * 0.5;`, stays one.)
    struct S<'k>(
        HashSet<String>,
        &'k HashSet<String>,
        HashSet<String>,
        std::collections::HashMap<String, usize>,
    );
    impl<'a> Visit<'a> for S<'_> {
        fn visit_local(&mut self, l: &'a syn::Local) {
            syn::visit::visit_local(self, l);
            // A local typed as a struct of the user's, a `Vec` or an array of them (`let pts:
            // Vec<V2> = …collect();`).
            let typed = match &l.pat {
                Pat::Type(t) => {
                    user_type_arg(&t.ty).is_some()
                        || match &*t.ty {
                            Type::Array(a) => Some(&*a.elem),
                            ty => crate::iterchain::vec_elem(ty).flatten(),
                        }
                        .is_some_and(|e| user_type_arg(e).is_some())
                }
                _ => false,
            };
            let pat = match &l.pat {
                Pat::Type(t) => &*t.pat,
                p => p,
            };
            // A method of a struct local's, whatever its name (`q.swap()`, which a
            // slice has too): the method's twin (see `Rewrite::struct_method`), which
            // returns the mirror when the method returns the struct.
            let of_struct_local = l.init.as_ref().is_some_and(|i| {
                matches!(crate::desugar::unparen(&i.expr), Expr::MethodCall(m)
                    if !FLOAT_METHODS.contains(&m.method.to_string().as_str())
                        && matches!(crate::desugar::unparen(&m.receiver), Expr::Path(r)
                            if r.path.get_ident().is_some_and(|n| self.1.contains(&n.to_string()))))
            });
            // (The elements of loops and closures around the `let` too: `let d = w[1] -
            // w[0];` in a `for w in pts.windows(2)`.)
            let around: HashSet<String> = self.0.union(&self.2).cloned().collect();
            if let (Pat::Ident(p), Some(init)) = (pat, &l.init) {
                if init.diverge.is_none()
                    && (typed
                        || of_struct_local
                        || structish(&init.expr, &around)
                        || vec_of_struct_literals(&init.expr))
                {
                    self.0.insert(p.ident.to_string());
                    *self.3.entry(p.ident.to_string()).or_default() += 1;
                }
            }
            // `let (a, b, c) = (v[0], v[1], v[2]);`: each part by its value.
            if let (Pat::Tuple(t), Some(init)) = (pat, &l.init) {
                if let (Expr::Tuple(values), None) =
                    (crate::desugar::unparen(&init.expr), &init.diverge)
                {
                    for (p, v) in t.elems.iter().zip(&values.elems) {
                        if let Pat::Ident(p) = p {
                            if p.by_ref.is_none() && p.subpat.is_none() && structish(v, &around) {
                                self.0.insert(p.ident.to_string());
                                *self.3.entry(p.ident.to_string()).or_default() += 1;
                            }
                        }
                    }
                }
            }
        }
        // `for q in &pts`, `for w in pts.windows(2)`, `for (i, q) in pts.iter().enumerate()`
        // over a sequence of structs: the element (or the window of them).
        fn visit_expr_for_loop(&mut self, f: &'a syn::ExprForLoop) {
            if let Some(enumerated) = struct_seq(&f.expr, &self.0) {
                element_names(&f.pat, enumerated, &mut self.2);
            } else {
                let (first, second) = zipped_struct_seq(&f.expr, &self.0);
                of_pair(&f.pat, first, second, &mut self.2);
            }
            syn::visit::visit_expr_for_loop(self, f);
        }
        // `pts.iter().map(|q| q.norm())`, `.fold(V2::zero(), |acc, q| acc.plus(q))`: the
        // closure's element (and a fold's accumulator started from a struct).
        fn visit_expr_method_call(&mut self, m: &'a syn::ExprMethodCall) {
            // (A closure's elements are known before the `let`s of its body are read:
            // `pts.windows(3).map(|w| { let a = w[1] - w[0]; .. })`.)
            self.visit_expr(&m.receiver);
            self.note_elements(m);
            for a in &m.args {
                self.visit_expr(a);
            }
        }
        fn visit_item(&mut self, _: &'a syn::Item) {}
    }
    impl S<'_> {
        fn note_elements(&mut self, m: &syn::ExprMethodCall) {
            // `pos.push(V3::new(..))` onto a `Vec` made empty (`Vec::with_capacity(n)`):
            // a sequence of structs.
            if m.method == "push" && m.args.len() == 1 && structish(&m.args[0], &self.0) {
                if let Expr::Path(r) = crate::desugar::unparen(&m.receiver) {
                    if let Some(n) = r.path.get_ident() {
                        self.0.insert(n.to_string());
                    }
                }
            }
            // (`pts.iter().zip(ms).map(|(q, &m)| m * *q)`: the first of the pair;
            // `pos.iter().zip(&vel)`: both.)
            let (first, second) = zipped_struct_seq(&m.receiver, &self.0);
            if (first || second)
                && matches!(m.method.to_string().as_str(), "map" | "for_each" | "filter")
            {
                if let Some(Expr::Closure(c)) = m.args.first() {
                    if let Some(p) = c.inputs.first() {
                        of_pair(p, first, second, &mut self.2);
                    }
                }
            }
            // (`(0..3).fold(model, |m, _| m.step(..))`: the accumulator of a fold from a
            // struct, whatever it walks.)
            if m.method == "fold" && m.args.len() == 2 && structish(&m.args[0], &self.0) {
                if let Some(Expr::Closure(c)) = m.args.get(1) {
                    if let Some(p) = c.inputs.first() {
                        element_names(p, false, &mut self.2);
                    }
                }
            }
            let Some(enumerated) = struct_seq(&m.receiver, &self.0) else {
                return;
            };
            let name = m.method.to_string();
            let (closure, at) = match (name.as_str(), m.args.len()) {
                ("fold", 2) => (m.args.get(1), 1),
                (
                    "map" | "for_each" | "filter" | "any" | "all" | "find" | "position"
                    | "filter_map" | "flat_map" | "take_while" | "skip_while" | "inspect"
                    | "max_by" | "min_by" | "max_by_key" | "min_by_key",
                    1,
                ) => (m.args.first(), 0),
                _ => return,
            };
            let Some(Expr::Closure(c)) = closure else {
                return;
            };
            if name == "fold" && structish(&m.args[0], &self.0) {
                if let Some(p) = c.inputs.first() {
                    element_names(p, false, &mut self.2);
                }
            }
            for p in c.inputs.iter().skip(at) {
                element_names(p, enumerated, &mut self.2);
                if !matches!(name.as_str(), "max_by" | "min_by") {
                    break;
                }
            }
        }
    }
    /// The sequence of structs a chain or loop walks (`pts.iter()`, `&pts`,
    /// `pts.windows(2)`, `pts[1..].iter().rev()`), and whether it is enumerated.
    fn struct_seq(e: &Expr, locals: &HashSet<String>) -> Option<bool> {
        let mut e = crate::desugar::unparen(e);
        let mut enumerated = false;
        loop {
            match e {
                Expr::MethodCall(m)
                    if matches!(
                        m.method.to_string().as_str(),
                        "iter"
                            | "into_iter"
                            | "windows"
                            | "chunks"
                            | "chunks_exact"
                            | "rev"
                            | "skip"
                            | "take"
                            | "step_by"
                            | "enumerate"
                            | "cloned"
                            | "copied"
                            | "filter"
                    ) =>
                {
                    enumerated |= m.method == "enumerate";
                    e = crate::desugar::unparen(&m.receiver);
                }
                Expr::Reference(r) => e = crate::desugar::unparen(&r.expr),
                Expr::Index(i) if matches!(&*i.index, Expr::Range(_)) => {
                    e = crate::desugar::unparen(&i.expr)
                }
                Expr::Path(p) => {
                    return p
                        .path
                        .get_ident()
                        .filter(|n| locals.contains(&n.to_string()))
                        .map(|_| enumerated)
                }
                _ => return None,
            }
        }
    }
    /// The names an element's pattern binds (`q`, `&q`, `(i, q)` of an enumeration).
    /// `pts.iter().zip(..)` of a sequence of structs (`struct_seq`, not enumerated).
    /// `a.zip(b)`: whether `a` and whether `b` walk a sequence of structs.
    fn zipped_struct_seq(e: &Expr, locals: &HashSet<String>) -> (bool, bool) {
        match crate::desugar::unparen(e) {
            Expr::MethodCall(m) if m.method == "zip" && m.args.len() == 1 => (
                struct_seq(&m.receiver, locals) == Some(false),
                struct_seq(&m.args[0], locals) == Some(false),
            ),
            _ => (false, false),
        }
    }
    /// The names of a pair's pattern (`(q, &m)`, `&(q, m)`), the first and/or the second.
    fn of_pair(p: &Pat, first: bool, second: bool, out: &mut HashSet<String>) {
        match p {
            Pat::Tuple(t) if t.elems.len() == 2 => {
                if first {
                    element_names(&t.elems[0], false, out);
                }
                if second {
                    element_names(&t.elems[1], false, out);
                }
            }
            Pat::Reference(r) => of_pair(&r.pat, first, second, out),
            Pat::Type(t) => of_pair(&t.pat, first, second, out),
            _ => {}
        }
    }
    fn element_names(p: &Pat, enumerated: bool, out: &mut HashSet<String>) {
        match p {
            Pat::Ident(i) => {
                out.insert(i.ident.to_string());
            }
            Pat::Reference(r) => element_names(&r.pat, enumerated, out),
            Pat::Type(t) => element_names(&t.pat, enumerated, out),
            Pat::Tuple(t) if enumerated && t.elems.len() == 2 => {
                element_names(&t.elems[1], false, out)
            }
            _ => {}
        }
    }
    let mut found = S(known.clone(), known, HashSet::new(), Default::default());
    found.visit_block(&func.block);
    let mut counts = std::collections::HashMap::new();
    count_bindings(func, &mut counts);
    let struct_binds = found.3;
    found.0.retain(|name| {
        known.contains(name)
            || counts.get(name) == Some(&1)
            || counts
                .get(name)
                .is_some_and(|n| struct_binds.get(name) == Some(n))
    });
    found.0.extend(found.2);
    found.0
}

/// Every name a pattern in `block` binds (`let`, `for`, closures, `match`, `if let`).
fn all_pattern_names(block: &syn::Block) -> HashSet<String> {
    let mut p = PatternNames(HashSet::new());
    p.visit_block(block);
    p.0
}

/// Names bound by `let name = |..| ..`.
/// A named field read from what a function of this crate returns (`let s =
/// stats(x); s.mean`, `stats(x).mean`): the callee's twin would return the struct with
/// `f64` fields, which the caller's twin cannot hold (its floats are the twin's scalar).
/// The callee and the span of the read.
fn field_of_call_result(block: &syn::Block) -> Option<(String, Span)> {
    fn callee(e: &Expr) -> Option<String> {
        let Expr::Call(c) = e else { return None };
        let Expr::Path(p) = &*c.func else { return None };
        let last = p.path.segments.last()?.ident.to_string();
        last.starts_with(|ch: char| ch.is_lowercase() || ch == '_')
            .then_some(last)
    }
    struct F {
        results: std::collections::HashMap<String, String>,
        found: Option<(String, Span)>,
    }
    impl<'a> Visit<'a> for F {
        fn visit_local(&mut self, l: &'a syn::Local) {
            if let (Pat::Ident(p), Some(init)) = (&l.pat, &l.init) {
                if let Some(c) = callee(&init.expr) {
                    self.results.insert(p.ident.to_string(), c);
                }
            }
            syn::visit::visit_local(self, l);
        }
        fn visit_expr_field(&mut self, f: &'a syn::ExprField) {
            if self.found.is_none() && matches!(f.member, syn::Member::Named(_)) {
                let from = match &*f.base {
                    Expr::Path(p) => p
                        .path
                        .get_ident()
                        .and_then(|i| self.results.get(&i.to_string()).cloned()),
                    other => callee(other),
                };
                if let Some(c) = from {
                    self.found = Some((c, f.span()));
                }
            }
            syn::visit::visit_expr_field(self, f);
        }
    }
    let mut f = F {
        results: std::collections::HashMap::new(),
        found: None,
    };
    f.visit_block(block);
    f.found
}

/// The names bound by a `let` anywhere in `block` (not in items declared in it) whose
/// pattern is a name, or a name with a type, and for which `keep(local, typed)` holds
/// (`typed`: the type written in the pattern).
fn let_names(
    block: &syn::Block,
    keep: impl Fn(&syn::Local, Option<&Type>) -> bool,
) -> HashSet<String> {
    struct L<F>(HashSet<String>, F);
    impl<'a, F: Fn(&syn::Local, Option<&Type>) -> bool> Visit<'a> for L<F> {
        fn visit_local(&mut self, l: &'a syn::Local) {
            let (pat, typed) = match &l.pat {
                Pat::Type(t) => (&*t.pat, Some(&*t.ty)),
                p => (p, None),
            };
            if let Pat::Ident(p) = pat {
                if (self.1)(l, typed) {
                    self.0.insert(p.ident.to_string());
                }
            }
            syn::visit::visit_local(self, l);
        }
        // (`vec![{ let g = |v: f64| ..; g(x[0]) }, ..]`: the elements' blocks too.)
        fn visit_macro(&mut self, m: &'a syn::Macro) {
            if let Some(es) = crate::rewrite::macro_exprs(m) {
                for e in &es {
                    Visit::visit_expr(self, e);
                }
            }
        }
        fn visit_item(&mut self, _: &'a syn::Item) {}
    }
    let mut v = L(HashSet::new(), keep);
    v.visit_block(block);
    v.0
}

/// The names bound to fixed-size arrays: arguments of an array type (`x: [f64; 3]`,
/// `x: &[f64; 3]`) and locals bound to an array literal or annotated with one
/// (`let v = [a, b];`, `let v: [f64; 2] = ..;`).
pub(crate) fn array_locals(func: &ItemFn) -> HashSet<String> {
    fn is_array(ty: &Type) -> bool {
        match ty {
            Type::Array(_) => true,
            Type::Reference(r) => matches!(&*r.elem, Type::Array(_)),
            _ => false,
        }
    }
    let mut names = let_names(&func.block, |l, typed| {
        typed.is_some_and(is_array)
            || l.init
                .as_ref()
                .is_some_and(|i| matches!(&*i.expr, Expr::Array(_) | Expr::Repeat(_)))
    });
    for arg in &func.sig.inputs {
        if let FnArg::Typed(pt) = arg {
            if let (Pat::Ident(p), true) = (&*pt.pat, is_array(&pt.ty)) {
                names.insert(p.ident.to_string());
            }
        }
    }
    names
}

/// The names bound to a closure by a `let` (`let g = |t| ..;`) anywhere in `block`
/// (not in items declared in it).
pub(crate) fn closure_locals(block: &syn::Block) -> HashSet<String> {
    let_names(block, |l, typed| {
        typed.is_none()
            && l.init
                .as_ref()
                .is_some_and(|i| matches!(&*i.expr, Expr::Closure(_)))
    })
}

fn pat_names(p: &Pat) -> HashSet<String> {
    let mut n = PatternNames(HashSet::new());
    n.visit_pat(p);
    n.0
}

fn expr_names(e: &Expr) -> HashSet<String> {
    crate::activity::root_name(e).into_iter().collect()
}

/// The position of a piece in [`pieces_by_index`]'s loop.
const PIECE: &str = "__mochi_piece";

/// `for w in C.windows(n) { .. }` of a constant `C` (also `chunks(m)` and
/// `chunks_exact(m)`) as the loop over the pieces' positions, each piece a sub-slice of
/// `C` bound at the top of the body: the generic form's constant is a local lifted to
/// its scalar, which an iterator kept for the reverse sweep would outlive.
fn pieces_by_index(f: &syn::ExprForLoop) -> Option<Expr> {
    let Expr::MethodCall(outer) = crate::desugar::unparen(&f.expr) else {
        return None;
    };
    let mut m = outer;
    // (`for (t, pair) in C.windows(2).enumerate()`: the position is the piece's.)
    let mut enumerated = false;
    if m.method == "enumerate" && m.args.is_empty() {
        let Expr::MethodCall(inner) = crate::desugar::unparen(&m.receiver) else {
            return None;
        };
        m = inner;
        enumerated = true;
    }
    let Expr::Path(p) = crate::desugar::unparen(&m.receiver) else {
        return None;
    };
    let c = p
        .path
        .get_ident()
        .filter(|i| constant_name(&i.to_string()))?;
    let pat_ok = match &*f.pat {
        Pat::Ident(_) => !enumerated,
        Pat::Tuple(t) => enumerated && t.elems.len() == 2,
        _ => false,
    };
    if m.args.len() != 1 || !pat_ok {
        return None;
    }
    let (n, pat, body, label) = (&m.args[0], &f.pat, &f.body, &f.label);
    let k = syn::Ident::new(PIECE, Span::call_site());
    let (range, piece): (Expr, Expr) = match m.method.to_string().as_str() {
        "windows" => (
            syn::parse_quote!(0..(#c.len() + 1).saturating_sub(#n)),
            syn::parse_quote!(&#c[#k..#k + #n]),
        ),
        "chunks" => (
            syn::parse_quote!(0..(#c.len() + #n - 1) / #n),
            syn::parse_quote!(&#c[#k * #n..((#k + 1) * #n).min(#c.len())]),
        ),
        "chunks_exact" => (
            syn::parse_quote!(0..#c.len() / #n),
            syn::parse_quote!(&#c[#k * #n..(#k + 1) * #n]),
        ),
        _ => return None,
    };
    let stmts = &body.stmts;
    let value: Expr = if enumerated {
        syn::parse_quote!((#k, #piece))
    } else {
        piece
    };
    Some(syn::parse_quote!(#label for #k in #range { let #pat = #value; #(#stmts)* }))
}

/// Rewrites the body for the twin, or records why it cannot.
struct Rewrite<'a> {
    /// The arguments and every name a pattern in the body binds: any other name is an
    /// item outside the function (a constant, a static), whose type cannot change.
    bound: HashSet<String>,
    floats: &'a HashSet<String>,
    /// Locals bound to closures (their calls are inlined by the derivation).
    closures: HashSet<String>,
    /// Names bound to fixed-size arrays (`array_locals`).
    array_names: HashSet<String>,
    /// The function's own name (a recursive call leaves it without a twin).
    own: String,
    /// The names that carry a derivative.
    active: HashSet<String>,
    /// Whether the function holds arrays: a float on the left of an operator is moved
    /// to the right (`2.0 * &x` → `&x * 2.0`, which ndarray has for any element type),
    /// and calls of other functions go to their `__twin` without naming the scalar (a
    /// rule crate's function, `cholesky<T, S>`, has more type parameters than it).
    arrays: bool,
    /// The names that hold a scalar (see [`scalar_names`]): one on the left of an
    /// array operator moves right like a float written in place.
    scalars: HashSet<String>,
    /// A float on the left of an operator whose right operand may be a struct of the
    /// user's that the syntax does not show as one (`s * k.cross(&v)`): the twin's body
    /// is then its rule's value (`emit::Extras::primal_via_rule`), whose operator rules
    /// cover a float times the struct's mirror.
    rule_primal: bool,
    /// The elements of loops over constants (see [`constant_elements`]).
    const_elems: HashSet<String>,
    /// Locals bound once to a struct literal of constants (see
    /// [`constant_struct_locals`]).
    const_structs: HashSet<String>,
    /// Names bound to the elements of a constant sequence ([`constant_struct_elements`]).
    const_struct_elems: HashSet<String>,
    /// With `higher_order` asked: the names that surely hold a struct of the user's
    /// (see [`surely_struct_locals`]), for a float on the left of its operator.
    struct_values: HashSet<String>,
    /// The twin of a method: `self.other(..)` is the twin of the method `other`.
    method: bool,
    /// Locals bound once to a struct literal of the user's (see [`struct_locals`]):
    /// `l.at(t)` and `Line::at(&l, t)` call the twin of the method `at`.
    struct_locals: std::collections::HashMap<String, (syn::Ident, bool)>,
    /// With `higher_order` asked: the locals that may hold a struct of the user's (see
    /// [`structish`]).
    structish: HashSet<String>,
    /// Locals bound once to a method's result on a struct of the user's (see
    /// [`of_struct_chain`]): a float, or a struct where a method a float does not have
    /// is called on it.
    chain_results: HashSet<String>,
    /// Inside `no_grad(..)`: a call there may be to a function without a twin
    /// (`no_grad(bisect(a))` of a plain solver).
    in_no_grad: bool,
    /// Inside `e as f64` of an `e` that mentions no float: a call of the crate's
    /// functions there is kept as written (its result, an integer or a float, is cast).
    in_int_cast: bool,
    /// The names that hold integers (see [`integer_names`]).
    integers: HashSet<String>,
    error: Option<(Why, String, Span)>,
}

impl Rewrite<'_> {
    /// The type of `receiver` when it is a local of [`struct_locals`] and `method` may
    /// be a method of the user's (not one every type or a float has).
    fn struct_method(&self, receiver: &Expr, method: &str) -> Option<(syn::Ident, Expr)> {
        let Expr::Path(p) = crate::desugar::unparen(receiver) else {
            return None;
        };
        // (`Act::Sigmoid.apply(x)`: the method's twin given the variant.)
        if let Some(ty) = enum_variant_of_crate(receiver) {
            return Some((ty, syn::parse_quote!(::mochi::__private::receiver(&#p))));
        }
        let (ty, by_ref) = self.struct_locals.get(&p.path.get_ident()?.to_string())?;
        // (A method of the user's whose result carries no derivative, `p.degree()`, is
        // the mirror's own, see `companion::plain_mirror_method`.)
        let plain = matches!(
            method,
            "clone" | "to_owned" | "into" | "as_ref" | "borrow" | "eq" | "ne" | "partial_cmp"
        ) || plain_user_method(method);
        // (A reference argument is passed on as it is; by value for a method taking
        // `self` so, see `Receive`.)
        let this: Expr = if *by_ref {
            syn::parse_quote!(::mochi::__private::receiver(#p))
        } else {
            syn::parse_quote!(::mochi::__private::receiver(&#p))
        };
        (!plain).then(|| (ty.clone(), this))
    }

    /// The crate's enum that `receiver` is known to be: a field of an argument (or of
    /// `self`) whose struct declares it so (see [`FIELD_ENUMS`]), or a local bound to one
    /// of its variants.
    fn receiver_enum(&self, receiver: &Expr) -> Option<String> {
        match crate::desugar::unparen(receiver) {
            Expr::Field(f) => {
                let syn::Member::Named(field) = &f.member else {
                    return None;
                };
                let Expr::Path(p) = crate::desugar::unparen(&f.base) else {
                    return None;
                };
                let base = p.path.get_ident()?.to_string();
                let owner = if base == "self" {
                    impl_type()?
                } else {
                    self.struct_locals.get(&base)?.0.to_string()
                };
                field_enum(&owner, &field.to_string())
            }
            Expr::Path(p) => {
                let (ty, _) = self.struct_locals.get(&p.path.get_ident()?.to_string())?;
                crate_enum(&ty.to_string()).then(|| ty.to_string())
            }
            _ => None,
        }
    }

    fn fail(&mut self, kind: Why, why: String, span: Span) {
        if self.error.is_none() {
            self.error = Some((kind, why, span));
        }
    }

    /// `lit::<T>(inner)`, `inner` a value of the function's float type (converted to
    /// `f64` exactly for `f32`).
    /// A match guard comparing a place with a float literal, `Shape::Circle { r } if *r >
    /// 1.0` (the variant's fields are the enum's own there, `f64`, lifted only in the
    /// arm's body): the literal as `lit(1.0)`, in the type the comparison infers. Whether
    /// `e` was such a comparison (then rewritten).
    fn guard_comparison(&mut self, e: &mut Expr) -> bool {
        if let Expr::Binary(b) = e {
            use syn::BinOp::*;
            let comparison = matches!(b.op, Lt(_) | Le(_) | Gt(_) | Ge(_) | Eq(_) | Ne(_));
            let float_lit = |x: &Expr| {
                let x = match crate::desugar::unparen(x) {
                    Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => {
                        crate::desugar::unparen(&u.expr)
                    }
                    other => other,
                };
                matches!(x, Expr::Lit(l) if matches!(&l.lit, syn::Lit::Float(f) if f.suffix().is_empty()))
            };
            let place = |x: &Expr| {
                let mut x = crate::desugar::unparen(x);
                if let Expr::Unary(u) = x {
                    if matches!(u.op, syn::UnOp::Deref(_)) {
                        x = crate::desugar::unparen(&u.expr);
                    }
                }
                while let Expr::Field(f) = x {
                    x = crate::desugar::unparen(&f.base);
                }
                matches!(x, Expr::Path(p) if p.path.get_ident().is_some_and(|i| i != "self"))
            };
            if comparison
                && (float_lit(&b.right) && place(&b.left) || float_lit(&b.left) && place(&b.right))
            {
                let (lit_side, other) = if float_lit(&b.right) {
                    (&mut b.right, &mut b.left)
                } else {
                    (&mut b.left, &mut b.right)
                };
                self.visit_expr_mut(other);
                let inner = lit_side.clone();
                **lit_side = if float() == "f32" {
                    syn::parse_quote!(::mochi::__private::lit((#inner) as f64))
                } else {
                    syn::parse_quote!(::mochi::__private::lit(#inner))
                };
                return true;
            }
        }
        false
    }

    fn lit(inner: TokenStream) -> Expr {
        let t = syn::Ident::new(PARAM, Span::call_site());
        if float() == "f32" {
            syn::parse_quote!(::mochi::__private::lit::<#t>((#inner) as f64))
        } else {
            syn::parse_quote!(::mochi::__private::lit::<#t>(#inner))
        }
    }

    /// `println!("{s} at {}", x[0])`, `panic!(..)`, `format!(..)`: the format string as
    /// written, each float argument (and each float captured by name in the string)
    /// formatted as its value, `f64` (the generic scalar need not implement `Display`).
    fn rewrite_format(&mut self, m: &mut syn::Macro, name: &str) {
        let parser = Punctuated::<Expr, syn::Token![,]>::parse_terminated;
        let Ok(mut args) = syn::parse::Parser::parse2(parser, m.tokens.clone()) else {
            self.fail(
                Why::Syntax,
                format!("its `{name}!` is not a format string and arguments"),
                m.span(),
            );
            return;
        };
        let value = |e: &Expr| -> Expr {
            syn::parse_quote_spanned!(e.span()=>
                ::mochi::num_traits::ToPrimitive::to_f64(&(#e)).unwrap_or(f64::NAN))
        };
        let mut named: Vec<String> = Vec::new();
        for a in args.iter_mut().skip(1) {
            let target = match a {
                Expr::Assign(asg) => {
                    if let Expr::Path(p) = &*asg.left {
                        if let Some(i) = p.path.get_ident() {
                            named.push(i.to_string());
                        }
                    }
                    &mut *asg.right
                }
                other => other,
            };
            let float = floaty(target, self.floats);
            self.visit_expr_mut(target);
            if float {
                *target = value(target);
            }
        }
        // Names captured by the format string: `{s}`, `{s:.3}`.
        if let Some(Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        })) = args.first().cloned()
        {
            let text = s.value().replace("{{", "");
            let mut captured: Vec<String> = Vec::new();
            for part in text.split('{').skip(1) {
                let inner = part.split(['}', ':']).next().unwrap_or("");
                let is_name = inner.starts_with(|c: char| c.is_alphabetic() || c == '_')
                    && inner.chars().all(|c| c.is_alphanumeric() || c == '_');
                if is_name
                    && self.floats.contains(inner)
                    && !named.iter().chain(&captured).any(|n| n == inner)
                {
                    captured.push(inner.to_string());
                }
            }
            for c in captured {
                let id = quote::format_ident!("{}", c, span = s.span());
                let v = value(&syn::parse_quote!(#id));
                args.push(syn::parse_quote!(#id = #v));
            }
        }
        m.tokens = args.to_token_stream();
    }

    /// `matches!(e, P)` and `matches!(e, P if g)`: the value and guard rewritten, the
    /// pattern as written (a float literal in it cannot match the generic scalar).
    fn rewrite_matches(&mut self, m: &mut syn::Macro) {
        let parser = |input: syn::parse::ParseStream| {
            let e: Expr = input.parse()?;
            let _: syn::Token![,] = input.parse()?;
            let p = Pat::parse_multi_with_leading_vert(input)?;
            let g = if input.peek(syn::Token![if]) {
                let _: syn::Token![if] = input.parse()?;
                Some(input.parse::<Expr>()?)
            } else {
                None
            };
            let _: Option<syn::Token![,]> = input.parse()?;
            Ok((e, p, g))
        };
        match syn::parse::Parser::parse2(parser, m.tokens.clone()) {
            Ok((mut e, p, mut g)) => {
                let mut lits = false;
                syn::visit::visit_pat(&mut FloatLit(&mut lits), &p);
                if lits {
                    self.fail(
                        Why::Syntax,
                        "its `matches!` tests a float against a pattern".into(),
                        m.span(),
                    );
                    return;
                }
                self.visit_expr_mut(&mut e);
                if let Some(g) = g.as_mut() {
                    // (The guard reads the names the pattern binds, there only.)
                    let outer = self.bound.clone();
                    self.bound.extend(pat_names(&p));
                    self.visit_expr_mut(g);
                    self.bound = outer;
                }
                let g = g.map(|g| quote!(if #g));
                m.tokens = quote!(#e, #p #g);
            }
            Err(_) => self.fail(
                Why::Syntax,
                "its `matches!` is not a value and a pattern".into(),
                m.span(),
            ),
        }
    }

    /// `vec![..]` and the assertion macros: their arguments are rewritten as expressions.
    fn rewrite_macro(&mut self, m: &mut syn::Macro) {
        let name = m
            .path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default();
        if name == "s" && self.arrays {
            // `s![a..b, i]`: indices, no floats.
            return;
        }
        if name == "array" && self.arrays {
            // `array![[1.0, 2.0], [3.0, 4.0]]`: nested rows of expressions.
            let parser = Punctuated::<Expr, syn::Token![,]>::parse_terminated;
            match syn::parse::Parser::parse2(parser, m.tokens.clone()) {
                Ok(mut rows) => {
                    for r in rows.iter_mut() {
                        self.visit_array_row(r);
                    }
                    m.tokens = rows.to_token_stream();
                }
                Err(_) => self.fail(
                    Why::Syntax,
                    "its `array!` is not a list of expressions".into(),
                    m.span(),
                ),
            }
            return;
        }
        if name == "matches" {
            self.rewrite_matches(m);
            return;
        }
        // `cfg!(debug_assertions)`: a `bool` the compiler fills in, no float.
        if matches!(
            name.as_str(),
            "cfg" | "line" | "column" | "file" | "module_path"
        ) {
            return;
        }
        if FORMAT_MACROS.contains(&name.as_str()) {
            self.rewrite_format(m, &name);
            return;
        }
        let listed = [
            "vec",
            "dbg",
            "assert",
            "assert_eq",
            "assert_ne",
            "debug_assert",
            "debug_assert_eq",
            "debug_assert_ne",
        ];
        // (ndarray's `concatenate![Axis(0), a, b]`, `stack![..]`: an axis and arrays.)
        let joins = self.arrays && matches!(name.as_str(), "concatenate" | "stack");
        if !listed.contains(&name.as_str()) && !joins {
            self.fail(
                Why::Syntax,
                format!("it uses the macro `{name}!`"),
                m.span(),
            );
            return;
        }
        if name == "vec" {
            // `vec![e; n]`
            if let Ok(rep) = syn::parse2::<crate::rewrite::Repeat>(m.tokens.clone()) {
                let (mut e, n) = (rep.elem, rep.len);
                self.visit_expr_mut(&mut e);
                m.tokens = quote!(#e; #n);
                return;
            }
        }
        let parser = Punctuated::<Expr, syn::Token![,]>::parse_terminated;
        match syn::parse::Parser::parse2(parser, m.tokens.clone()) {
            Ok(mut args) => {
                // An assertion's message is the function's (the generic scalar may not
                // format as its `{:e}` asks): the twin asserts the condition alone.
                let kept = match name.as_str() {
                    "assert" | "debug_assert" => 1,
                    "assert_eq" | "assert_ne" | "debug_assert_eq" | "debug_assert_ne" => 2,
                    _ => usize::MAX,
                };
                if args.len() > kept {
                    args = args.into_iter().take(kept).collect();
                }
                for a in args.iter_mut() {
                    // A message's format string stays as written.
                    if !matches!(
                        a,
                        Expr::Lit(syn::ExprLit {
                            lit: syn::Lit::Str(_),
                            ..
                        })
                    ) {
                        self.visit_expr_mut(a);
                    }
                }
                m.tokens = args.to_token_stream();
            }
            Err(_) => self.fail(
                Why::Syntax,
                format!("its `{name}!` is not a list of expressions"),
                m.span(),
            ),
        }
    }
}

impl Rewrite<'_> {
    /// The type arguments of a path naming an item outside the function
    /// (`Vec::<f64>::new`): they change like the function's types; the item does not.
    fn visit_type_arguments(&mut self, path: &mut syn::Path) {
        for seg in path.segments.iter_mut() {
            self.visit_path_arguments_mut(&mut seg.arguments);
        }
    }

    /// An element of `array![..]`: a row (an array expression) whose elements are
    /// rewritten in turn, or an expression.
    fn visit_array_row(&mut self, e: &mut Expr) {
        if let Expr::Array(a) = e {
            for x in a.elems.iter_mut() {
                self.visit_array_row(x);
            }
        } else {
            self.visit_expr_mut(e);
        }
    }
}

/// Whether the method chain `e` calls the method `name` (`x.iter().enumerate()`).
fn chain_has(e: &Expr, name: &str) -> bool {
    match e {
        Expr::MethodCall(m) => m.method == name || chain_has(&m.receiver, name),
        Expr::Paren(p) => chain_has(&p.expr, name),
        Expr::Reference(r) => chain_has(&r.expr, name),
        _ => false,
    }
}

pub(crate) fn segments(p: &syn::Path) -> Vec<String> {
    p.segments.iter().map(|s| s.ident.to_string()).collect()
}

fn path_string(p: &syn::Path) -> String {
    segments(p).join("::")
}

/// `f64::max`, `f64::exp` (a float method of one or two floats named as a value): the
/// method's name.
fn float_method_value(p: &syn::Path) -> Option<String> {
    let segs = segments(p);
    let unary_or_binary = |m: &str| {
        FLOAT_METHODS.contains(&m)
            && !matches!(m, "clamp" | "mul_add" | "powi" | "sin_cos" | "partial_cmp")
    };
    (segs.len() == 2 && segs[0] == float() && unary_or_binary(&segs[1])).then(|| segs[1].clone())
}

/// `f64::CONST`, `std::f64::consts::PI` and the like: a float constant.
fn is_float_constant(p: &syn::Path) -> bool {
    let segs = segments(p);
    segs.iter().any(|s| s == float())
        && segs.last().is_some_and(|l| {
            l.chars()
                .all(|c| c.is_uppercase() || c == '_' || c.is_numeric())
        })
}

/// A single-name type the twin knows nothing about (not a primitive, not a container of
/// std or ndarray) made `_`: see `Rewrite::visit_stmt_mut`.
struct UnknownTypesInferred;

impl VisitMut for UnknownTypesInferred {
    fn visit_type_mut(&mut self, ty: &mut Type) {
        const KNOWN: &[&str] = &[
            "f64", "f32", "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64",
            "u128", "usize", "bool", "char", "str", "String", "Vec", "Option", "Box", "Result",
            "HashMap", "BTreeMap", "Self",
        ];
        if let Type::Path(p) = ty {
            if p.qself.is_none() && p.path.segments.len() == 1 {
                let seg = &p.path.segments[0];
                let name = seg.ident.to_string();
                if seg.arguments.is_none()
                    && !KNOWN.contains(&name.as_str())
                    && !ARRAY_TYPES.contains(&name.as_str())
                {
                    // In a function that asked for its structs' mirrors, the type lifted
                    // (a struct's mirror, an alias of `f64` the scalar): `Vec<Particle>`
                    // → `Vec<<Particle as LiftField>::Of<T>>`.
                    if STRUCTS.with(|s| s.get()) {
                        let t = syn::Ident::new(PARAM, Span::call_site());
                        let named = ty.clone();
                        *ty = syn::parse_quote!(<#named as ::mochi::__private::LiftField>::Of<#t>);
                    } else {
                        *ty = syn::parse_quote!(_);
                    }
                    return;
                }
            }
        }
        syn::visit_mut::visit_type_mut(self, ty);
    }
}

/// The references to float literals given to calls and methods in a `let`'s
/// initialiser (not inside closures), each replaced by a reference to a fresh name:
/// the names and the literals (see `Rewrite::visit_block_mut`).
struct LiteralRefs(Vec<(syn::Ident, Expr)>);

impl VisitMut for LiteralRefs {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        let args = match e {
            Expr::Closure(_) => return,
            Expr::Call(c) => c.args.iter_mut().collect::<Vec<_>>(),
            Expr::MethodCall(m) => m.args.iter_mut().collect(),
            _ => Vec::new(),
        };
        for a in args {
            if let Expr::Reference(r) = a {
                if r.mutability.is_none()
                    && matches!(crate::desugar::unparen(&r.expr), Expr::Lit(l) if matches!(l.lit, syn::Lit::Float(_)))
                {
                    let name = quote::format_ident!("__mochi_literal{}", self.0.len());
                    self.0.push((name.clone(), (*r.expr).clone()));
                    *r.expr = syn::parse_quote!(#name);
                }
            }
        }
        syn::visit_mut::visit_expr_mut(self, e);
    }
}

impl VisitMut for Rewrite<'_> {
    fn visit_arm_mut(&mut self, arm: &mut syn::Arm) {
        // (A guard written already is kept out of the visit.)
        let written = match arm.guard.as_mut() {
            Some((_, g)) => self.guard_comparison(g),
            None => false,
        };
        let guard = if written { arm.guard.take() } else { None };
        syn::visit_mut::visit_arm_mut(self, arm);
        if written {
            arm.guard = guard;
        }
        let lets = lifted_variant_lets(&mut arm.pat);
        if lets.is_empty() {
            return;
        }
        // (A guard, read before the arm's lets, reads each field lifted in place:
        // `*g * t > 1.0` with `g` as `ref_like(__mochi_bound_g, &lift_value(..))`.)
        if let Some((_, g)) = arm.guard.as_mut() {
            let names: HashSet<String> = lets
                .iter()
                .filter_map(|l| match l {
                    syn::Stmt::Local(l) => match &l.pat {
                        Pat::Ident(i) if !i.ident.to_string().starts_with("__mochi_") => {
                            Some(i.ident.to_string())
                        }
                        _ => None,
                    },
                    _ => None,
                })
                .collect();
            struct Lifted<'n>(&'n HashSet<String>);
            impl VisitMut for Lifted<'_> {
                fn visit_expr_mut(&mut self, e: &mut Expr) {
                    if let Expr::Path(p) = e {
                        if let Some(i) = p
                            .path
                            .get_ident()
                            .filter(|i| self.0.contains(&i.to_string()))
                        {
                            let t = syn::Ident::new(PARAM, Span::call_site());
                            let bound = quote::format_ident!("__mochi_bound_{}", i);
                            *e = syn::parse_quote!((::mochi::__private::ref_like(
                                #bound,
                                &::mochi::__private::lift_value::<#t, _>(#bound.clone())
                            )));
                            return;
                        }
                    }
                    syn::visit_mut::visit_expr_mut(self, e);
                }
                fn visit_expr_closure_mut(&mut self, _: &mut syn::ExprClosure) {}
            }
            Lifted(&names).visit_expr_mut(g);
        }
        // (An arm whose body is a block, `Triangle(a, b, c) => { let s = ..; .. }`, gets
        // the lets at its head rather than a block around it.)
        if let Expr::Block(b) = &mut *arm.body {
            if b.label.is_none() && b.attrs.is_empty() {
                b.block.stmts.splice(0..0, lets);
                return;
            }
        }
        let body = &arm.body;
        *arm.body = syn::parse_quote!({
            #(#lets)*
            #body
        });
    }
    fn visit_type_mut(&mut self, ty: &mut Type) {
        if is_f64(ty) {
            let t = syn::Ident::new(PARAM, ty.span());
            *ty = syn::parse_quote!(#t);
            return;
        }
        // `[f64; N]`: the length is a constant of integers, the same in the twin (a
        // lifted `N` there would name the generic scalar in a constant).
        if let Type::Array(a) = ty {
            self.visit_type_mut(&mut a.elem);
            return;
        }
        if let Type::Path(p) = ty {
            if p.path.is_ident(other_float()) {
                self.fail(
                    Why::Syntax,
                    format!("it also uses `{}`", other_float()),
                    p.span(),
                );
                return;
            }
        }
        syn::visit_mut::visit_type_mut(self, ty);
    }

    fn visit_pat_mut(&mut self, p: &mut Pat) {
        if let Pat::Lit(l) = p {
            if matches!(l.lit, syn::Lit::Float(_)) {
                self.fail(
                    Why::Syntax,
                    "a pattern matches a float literal".into(),
                    l.span(),
                );
                return;
            }
        }
        // A range of integers (`0..=1 =>` on an index) is matched as written.
        if let Pat::Range(r) = p {
            let integer = |e: &Option<Box<Expr>>| {
                e.as_deref()
                    .is_none_or(|e| matches!(literal_end(e), Some(syn::Lit::Int(_))))
            };
            if !(integer(&r.start) && integer(&r.end)) {
                self.fail(Why::Syntax, "a pattern matches a range".into(), r.span());
                return;
            }
        }
        syn::visit_mut::visit_pat_mut(self, p);
    }

    fn visit_macro_mut(&mut self, m: &mut syn::Macro) {
        self.rewrite_macro(m);
    }

    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        // `let v = o.unwrap_or(&1.0);`: a reference to a float literal given to a call is
        // a promoted constant in the function, a temporary in the twin (the literal is
        // lifted to the scalar, which is not a constant), dropped at the end of the
        // statement while `v` holds it. The literal is bound by a `let` before it.
        let mut stmts = Vec::with_capacity(b.stmts.len());
        for mut st in std::mem::take(&mut b.stmts) {
            if let syn::Stmt::Local(l) = &mut st {
                if let Some(init) = &mut l.init {
                    let mut refs = LiteralRefs(Vec::new());
                    refs.visit_expr_mut(&mut init.expr);
                    for (name, lit) in refs.0 {
                        self.bound.insert(name.to_string());
                        stmts.push(syn::parse_quote!(let #name = #lit;));
                    }
                }
            }
            stmts.push(st);
        }
        b.stmts = stmts;
        syn::visit_mut::visit_block_mut(self, b);
    }

    fn visit_stmt_mut(&mut self, s: &mut syn::Stmt) {
        // A `use` inside the body (`use std::f64::consts::PI;`) names what it names in
        // the twin too.
        if matches!(s, syn::Stmt::Item(syn::Item::Use(_))) {
            return;
        }
        // `let hp = Hyper { l2: 0.01, clip: 5.0 };`, a configuration of constants (see
        // [`constant_struct_locals`]): as written, so the struct needs no generic mirror.
        if let syn::Stmt::Local(l) = s {
            if let Pat::Ident(p) = &l.pat {
                if self.const_structs.contains(&p.ident.to_string()) {
                    return;
                }
            }
        }
        // A constant or a static declared in the body (`const C: f64 = 0.25;`) stays as
        // written: its uses are lifted by type as a constant from outside is; and so does
        // a function over no float (`fn idx(i: usize, j: usize) -> usize`).
        if let syn::Stmt::Item(syn::Item::Const(_) | syn::Item::Static(_)) = s {
            return;
        }
        if let syn::Stmt::Item(syn::Item::Fn(f)) = s {
            if plain_fn(f) {
                return;
            }
        }
        // `println!("{s:.3}")`: printing is the function's; the generic form, which
        // computes derivatives, prints nothing (its scalar may not format as `{:e}`).
        if let syn::Stmt::Macro(m) = s {
            if is_print(&m.mac) {
                // (What its arguments change is the function's too: `println!("{}",
                // leak(&mut s, r))` runs the call.)
                let mut kept: Expr = print_effects(&m.mac);
                self.visit_expr_mut(&mut kept);
                *s = syn::Stmt::Expr(kept, Some(Default::default()));
                return;
            }
        }
        if let syn::Stmt::Item(i) = s {
            self.fail(
                Why::Syntax,
                "it declares an item inside its body".into(),
                i.span(),
            );
            return;
        }
        // `let a: Real = x[0];` with `type Real = f64;` (the macro cannot see the alias):
        // in the twin the value is the generic scalar, so a type the twin does not know
        // is left to inference, `let a: _ = …` (`Vec<Real>` → `Vec<_>`). Not where the
        // value is made by an associated function (`Real::default()`,
        // `Vec::new()`), whose type the annotation gives.
        if let syn::Stmt::Local(l) = s {
            crate::desugar::array_try_from_let(l);
            if let (Pat::Type(t), Some(init)) = (&mut l.pat, &l.init) {
                let constructor = match &*init.expr {
                    Expr::Call(c) => match &*c.func {
                        Expr::Path(p) if p.path.segments.len() > 1 => {
                            Some(p.path.segments[0].ident.to_string())
                        }
                        _ => None,
                    },
                    _ => None,
                };
                // (`let mut ps: Vec<P> = Vec::new();`: the container's own constructor,
                // the elements' type lifted in a function building its structs' mirrors,
                // else left to inference: `let mut ms: Vec<M2> = Vec::new();` of `type
                // M2 = [[f64; 2]; 2];` holds the twin's scalar; before 2026-12-07 a type
                // error in the generic form, which failed the function.)
                let container = matches!(&*t.ty, Type::Path(tp)
                    if tp.path.segments.len() == 1
                        && constructor.as_deref() == Some(&*tp.path.segments[0].ident.to_string())
                        && matches!(tp.path.segments[0].arguments, syn::PathArguments::AngleBracketed(_)));
                // (`let a: V2 = V2::new(p, q);` of a struct with a mirror: the mirror, as
                // the constructor's twin makes.)
                let mirrored = STRUCTS.with(|st| st.get())
                    && matches!(&*t.ty, Type::Path(tp) if tp.qself.is_none()
                        && tp.path.get_ident().is_some_and(|i| crate_mirror(&i.to_string())));
                if constructor.is_none() || container || mirrored {
                    UnknownTypesInferred.visit_type_mut(&mut t.ty);
                }
            }
        }
        syn::visit_mut::visit_stmt_mut(self, s);
    }

    fn visit_expr_mut(&mut self, e: &mut Expr) {
        // `matches!(s, Stage::Gain(g) if *g * t > 1.0)`: the `match` it stands for, whose
        // arm lifts the fields it binds from a variant of the crate's enums, as a written
        // `match`'s (before, `f64 * T` in the guard).
        if let Expr::Macro(m) = e {
            if m.mac.path.is_ident("matches") {
                if let Some(written) = matches_as_match(&m.mac) {
                    if let Expr::Match(mm) = &written {
                        for arm in &mm.arms {
                            for n in pat_names(&arm.pat) {
                                self.bound.insert(format!("__mochi_bound_{n}"));
                                self.bound.insert(n);
                            }
                        }
                    }
                    *e = written;
                    return self.visit_expr_mut(e);
                }
            }
        }
        // `for batch in DATA.chunks(2)` of a `const`: the generic form's constant is a
        // local (lifted to its scalar), and the iterator over its pieces that the
        // derivation keeps for the reverse sweep would outlive it.
        if let Expr::ForLoop(f) = e {
            // (`for w in C.windows(2)`, `chunks(m)`, `chunks_exact(m)` directly: a loop
            // over the pieces' indices, each piece a sub-slice read in the body.)
            if let Some(by_index) = pieces_by_index(f) {
                *e = by_index;
                self.bound.insert(PIECE.to_string());
                return self.visit_expr_mut(e);
            }
            let mut root = &*f.expr;
            let mut pieces = false;
            while let Expr::MethodCall(m) = crate::desugar::unparen(root) {
                pieces |= matches!(
                    m.method.to_string().as_str(),
                    "chunks" | "chunks_exact" | "windows" | "rchunks" | "rchunks_exact"
                );
                root = &m.receiver;
            }
            if let (true, Expr::Path(p)) = (pieces, crate::desugar::unparen(root)) {
                if let Some(i) = p.path.get_ident().filter(|i| constant_name(&i.to_string())) {
                    self.fail(
                        Why::Syntax,
                        format!("it walks the pieces of the constant `{i}` in a `for` (write the loop over indices, `for k in 0..{i}.len() / m`)"),
                        f.expr.span(),
                    );
                    return;
                }
            }
        }
        // `x.iter().sum::<Real>()` with `type Real = f64;`: as a `let`'s type is.
        if let Expr::MethodCall(m) = e {
            if let Some(tf) = &mut m.turbofish {
                for a in tf.args.iter_mut() {
                    if let syn::GenericArgument::Type(t) = a {
                        UnknownTypesInferred.visit_type_mut(t);
                    }
                }
            }
        }
        if let Expr::Macro(m) = e {
            if is_print(&m.mac) {
                *e = print_effects(&m.mac);
                self.visit_expr_mut(e);
                return;
            }
            // `dbg!(e)`: its value, unprinted (see `is_print`).
            if m.mac.path.is_ident("dbg") {
                if let Ok(mut inner) = m.mac.parse_body::<Expr>() {
                    self.visit_expr_mut(&mut inner);
                    *e = syn::parse_quote!((#inner));
                    return;
                }
            }
        }
        // A `match` by float ranges or literals (`0.0..=1.0 =>`), which a generic scalar
        // cannot be matched by, as the `if` chain it is.
        if let Expr::Match(m) = e {
            let float_pattern = |p: &Pat| {
                let p = match p {
                    Pat::Ident(i) => i.subpat.as_ref().map_or(p, |(_, s)| &**s),
                    other => other,
                };
                let float = |e: &Expr| matches!(literal_end(e), Some(syn::Lit::Float(_)));
                match p {
                    Pat::Range(r) => [&r.start, &r.end]
                        .iter()
                        .any(|e| e.as_deref().is_some_and(float)),
                    Pat::Lit(l) => matches!(l.lit, syn::Lit::Float(_)),
                    _ => false,
                }
            };
            if m.arms.iter().any(|a| float_pattern(&a.pat)) {
                if let Some(chain) = crate::desugar::guarded_match(m, true) {
                    // The name the chain may bind for the value matched.
                    self.bound.insert(crate::desugar::SCRUTINEE.to_string());
                    *e = chain;
                    self.visit_expr_mut(e);
                    return;
                }
            }
        }
        // `[0.0; N]`: the length is a constant of integers (see `visit_type_mut`).
        if let Expr::Repeat(r) = e {
            self.visit_expr_mut(&mut r.expr);
            return;
        }
        // A closure's parameters typed as the float (`let f = |v: f64| g(v) + 1.0;`)
        // carry a derivative inside it, as the derivation sees them where it is called:
        // a call given one goes to the callee's generic form.
        if let Expr::Closure(c) = e {
            // (`|p: V2| ..`: the struct's mirror, as a `let`'s type is.)
            if STRUCTS.with(|st| st.get()) {
                for p in c.inputs.iter_mut() {
                    if let Pat::Type(t) = p {
                        if user_type_arg(&t.ty).is_some() {
                            UnknownTypesInferred.visit_type_mut(&mut t.ty);
                        }
                    }
                }
            }
            let floats: Vec<String> = c
                .inputs
                .iter()
                .filter_map(|p| match p {
                    Pat::Type(t) => float_param(t),
                    _ => None,
                })
                .collect();
            // (And the names the closure's body binds to values with derivatives, `|&x|
            // { let terms: Vec<f64> = data.iter().map(|&d| (x - d) * h).collect();
            // logsumexp(&terms) }`: a call given one goes to the callee's generic form.)
            let mut inner = self.active.clone();
            inner.extend(floats);
            let body: syn::Block = match &*c.body {
                Expr::Block(b) => b.block.clone(),
                other => crate::iterchain::block_of(other, true),
            };
            crate::activity::analyse(&body, &mut inner);
            if inner != self.active {
                let saved = std::mem::replace(&mut self.active, inner);
                syn::visit_mut::visit_expr_closure_mut(self, c);
                self.active = saved;
                return;
            }
        }
        // `x[j] += a * x[i]`, `m[i].w -= g[i]`: on `f64` the right side is evaluated
        // before the place; on the twin's generic scalar the operator is a trait method
        // whose place (`index_mut`) borrows `x` mutably first (E0502). Evaluating the
        // right side into a local first keeps the primal's order. (A plain variable's
        // place borrows nothing before the call.)
        // `a %= b`: the twin's scalar has `%` but no `%=`.
        if let Expr::Binary(b) = e {
            if matches!(b.op, syn::BinOp::RemAssign(_)) {
                let (l, r) = (&b.left, &b.right);
                *e = syn::parse_quote!(#l = #l % (#r));
                self.visit_expr_mut(e);
                return;
            }
        }
        // `s += e` of a struct of the user's: the struct's generic mirror has the
        // operators of marked `impl`s (`Add`, `Sub`, `Mul<f64>`, `Div`, `Neg`), not the
        // compound assignments, which take `&mut self`; the derivation reads `s += e` as
        // `s = s + e` (`Lowerer::lower_stmt_expr`), and so does the generic form.
        if let Expr::Binary(b) = e {
            if crate::activity::is_arithmetic_assign(&b.op)
                && STRUCTS.with(|st| st.get())
                && structish(&b.left, &self.structish)
            {
                let plain =
                    crate::rewrite::plain_op(&b.op).filter(|o| !matches!(o, syn::BinOp::Rem(_)));
                if let Some(plain) = plain {
                    let (l, r) = (&b.left, &b.right);
                    let read: Expr = match crate::desugar::unparen(l) {
                        Expr::Path(_) => (**l).clone(),
                        _ => syn::parse_quote!((#l).clone()),
                    };
                    *e = syn::parse_quote!(#l = #read #plain (#r));
                    self.visit_expr_mut(e);
                    return;
                }
            }
        }
        // (Also `s *= leak(&mut s, r)`: for a float Rust runs the right side first, and
        // the generic form's `MulAssign` would borrow `s` before it. Not of a literal,
        // `*counts.entry(l).or_insert(0) += 1`, which has no side to run first, and
        // whose form the derivation reads as a count.)
        if let Expr::Binary(b) = e {
            if crate::activity::is_arithmetic_assign(&b.op)
                && (!matches!(&*b.left, Expr::Path(_)) || crate::desugar::mut_borrows(&b.right))
                && !matches!(crate::desugar::unparen(&b.right), Expr::Lit(_))
            {
                syn::visit_mut::visit_expr_binary_mut(self, b);
                let (l, op, r) = (&b.left, &b.op, &b.right);
                *e = syn::parse_quote!({
                    let __mochi_rhs = #r;
                    #l #op __mochi_rhs;
                });
                return;
            }
        }
        // `s * v` of a float and a struct of the user's (`impl Mul<V2> for f64`): the
        // generic form cannot write it (`T * __MochiTwinV2<T>` would need an operator
        // `impl` for a bare type parameter), so its body becomes its rule's value, whose
        // operator rule covers a float and the mirror (`companion::scalar_left_operator`).
        // The syntax cannot always tell a float from a struct (`rot * z` of a `rot` a
        // method returned), so any operator whose left operand is not surely a struct
        // and whose right one is not surely a float takes that way.
        if let Expr::Binary(b) = e {
            let arithmetic = matches!(
                b.op,
                syn::BinOp::Add(_) | syn::BinOp::Sub(_) | syn::BinOp::Mul(_) | syn::BinOp::Div(_)
            );
            let element = |e: &Expr| {
                matches!(crate::desugar::unparen(e), Expr::Unary(u)
                    if matches!(u.op, syn::UnOp::Deref(_))
                        && matches!(crate::desugar::unparen(&u.expr), Expr::Path(p)
                            if p.path.get_ident().is_some_and(|i| self.structish.contains(&i.to_string()))))
            };
            // (`w[1]` of a window of structs, `pts[i]` of a sequence of them: an index,
            // which [`scalar_expr`] takes for a float's.)
            let of_structs = |e: &Expr| {
                matches!(crate::desugar::unparen(e), Expr::Index(ix)
                if !matches!(&*ix.index, Expr::Range(_))
                    && matches!(crate::desugar::unparen(&ix.expr), Expr::Path(p)
                        if p.path.get_ident().is_some_and(|i| {
                            self.struct_values.contains(&format!("[]{i}"))
                        })))
            };
            let not_struct = !surely_struct(&b.left, &self.struct_values)
                && !element(&b.left)
                && !of_structs(&b.left);
            if STRUCTS.with(|st| st.get())
                && arithmetic
                && !self.arrays
                && not_struct
                && (!scalar_expr(&b.right, &self.scalars) || of_structs(&b.right))
            {
                self.rule_primal = true;
            }
            // Where the syntax shows both (`m * g` of a float and a constructor's struct,
            // which the rule's forward sweep writes as it is when neither carries a
            // derivative): the struct's hidden method, which its mirror has.
            let method = match b.op {
                syn::BinOp::Add(_) => Some("add"),
                syn::BinOp::Sub(_) => Some("sub"),
                syn::BinOp::Mul(_) => Some("mul"),
                syn::BinOp::Div(_) => Some("div"),
                _ => None,
            };
            if let Some(method) = method.filter(|_| {
                STRUCTS.with(|st| st.get())
                    && !self.arrays
                    && not_struct
                    && scalar_expr(&b.left, &self.scalars)
                    && !structish(&b.left, &self.structish)
                    && (surely_struct(&b.right, &self.struct_values)
                        || element(&b.right)
                        || of_structs(&b.right))
            }) {
                syn::visit_mut::visit_expr_binary_mut(self, b);
                let m = crate::companion::scalar_left_method(float(), method);
                let l = crate::desugar::unparen(&b.left);
                *e = match crate::desugar::unparen(&b.right) {
                    r @ Expr::Path(_) => syn::parse_quote!(#r.#m(#l)),
                    r => syn::parse_quote!((#r).#m(#l)),
                };
                return;
            }
        }
        if self.arrays {
            if let Expr::Binary(b) = e {
                if scalar_expr(&b.left, &self.scalars) && !scalar_expr(&b.right, &self.scalars) {
                    let (l, r) = (&b.left, &b.right);
                    let moved: Option<Expr> = match b.op {
                        // `#r` parenthesised: an `if`/`match`/block printed first would
                        // read as a statement.
                        syn::BinOp::Mul(_) => Some(syn::parse_quote!((#r) * (#l))),
                        syn::BinOp::Add(_) => Some(syn::parse_quote!((#r) + (#l))),
                        syn::BinOp::Sub(_) => Some(syn::parse_quote!(-((#r) - (#l)))),
                        syn::BinOp::Div(_) => Some(syn::parse_quote!((#r).recip() * (#l))),
                        _ => None,
                    };
                    if let Some(m) = moved {
                        *e = m;
                    }
                }
            }
        }
        match e {
            // `break 'r 0.0` becomes `break 'r (::mochi::…)`: printed bare, `'r ::` would
            // read as a labelled expression `'r: …`.
            Expr::Break(b) if b.label.is_some() && b.expr.is_some() => {
                syn::visit_mut::visit_expr_break_mut(self, b);
                if let Some(v) = b.expr.as_mut() {
                    if !matches!(**v, Expr::Paren(_)) {
                        let inner = (**v).clone();
                        **v = syn::parse_quote!((#inner));
                    }
                }
            }
            Expr::Lit(l) => {
                // `3_f64`, `2f64`: an integer literal with a float suffix is a float.
                if let syn::Lit::Int(i) = &l.lit {
                    if i.suffix() == "f64" || i.suffix() == "f32" {
                        let digits = format!("{}.0{}", i.base10_digits(), i.suffix());
                        l.lit = syn::Lit::Float(syn::LitFloat::new(&digits, i.span()));
                    }
                }
                if let syn::Lit::Float(f) = &l.lit {
                    let suffix = f.suffix();
                    if suffix.is_empty() || suffix == float() {
                        // Written in the function's float type (`0.1` is `0.1f32` in a
                        // function over `f32`).
                        let ty = syn::Ident::new(float(), f.span());
                        let typed = crate::rewrite::typed_float(f.base10_digits(), &ty, f.span());
                        *e = Self::lit(typed);
                    } else {
                        self.fail(
                            Why::Syntax,
                            format!("it uses an `{suffix}` literal"),
                            f.span(),
                        );
                    }
                }
            }
            Expr::Cast(c) => {
                let mentions_float = floaty(&c.expr, self.floats);
                // `v as f32` of a float in a function over `f64` (also within `v as f32
                // as f64`): a twin holds one float type (before 2026-12-07, "no rule for
                // `as f32`" in the generic form, which failed the whole function).
                let other_float = matches!(&*c.ty, Type::Path(p)
                    if p.qself.is_none()
                        && (p.path.is_ident("f32") || p.path.is_ident("f64"))
                        && !is_f64(&c.ty));
                // (`*v as f32` of a chain's element, whose type the syntax does not show,
                // is a float's cast too.)
                let deref = matches!(crate::desugar::unparen(&c.expr),
                    Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)));
                if other_float && (mentions_float || deref) && !integer_valued(&c.expr) {
                    let ty = &c.ty;
                    self.fail(
                        Why::Syntax,
                        format!("it casts a float with `as {}`", quote::quote!(#ty)),
                        c.as_token.span,
                    );
                    return;
                }
                if is_f64(&c.ty) {
                    // (`((0.0 < t) as i32 - (t < 0.0) as i32) as f64`: an integer made of
                    // comparisons of floats, no float.)
                    // `i as f64` of a name whose type the syntax does not show (`let (i, m)
                    // = x.iter().enumerate().max_by(..).unwrap();`), `p.n as f64` of a
                    // struct's field, `t as f64` of a float: `CastFloat` converts an
                    // integer or a `bool` and is the identity on the twin's scalar, so a
                    // float keeps its derivative, as the cast keeps it in the function.
                    // (A twin holds one float type, so there is no `f32` here.)
                    let field = matches!(crate::desugar::unparen(&c.expr), Expr::Field(_));
                    if mentions_float
                        && !integer_valued(&c.expr)
                        && (!field || STRUCTS.with(|s| s.get()))
                    {
                        self.visit_expr_mut(&mut c.expr);
                        // (Without the parentheses the cast needed: `(n + 2 * m) as f64`.)
                        let inner = crate::desugar::unparen(&c.expr);
                        let t = syn::Ident::new(PARAM, c.as_token.span);
                        *e = syn::parse_quote!(
                            ::mochi::__private::CastFloat::<#t>::cast_float(#inner)
                        );
                        return;
                    }
                    if mentions_float && !integer_valued(&c.expr) {
                        self.fail(
                            Why::Syntax,
                            format!("it casts a float with `as {}`", float()),
                            c.as_token.span,
                        );
                        return;
                    }
                    // A name whose type the syntax does not show, cast `as f64`
                    // (`f64::from(flag)` of a `bool` is such a cast): `CastFloat`, which
                    // converts an integer or a `bool` (`as f64` does not take a `bool`;
                    // before 2026-12-07, a type error in the generic form).
                    if let Expr::Path(p) = crate::desugar::unparen(&c.expr) {
                        // (A constant, `N as f64`, is lifted as a literal is.)
                        let local = p.path.get_ident().is_some_and(|i| {
                            i.to_string().starts_with(|ch: char| ch.is_lowercase() || ch == '_')
                        });
                        if local {
                            let inner = crate::desugar::unparen(&c.expr).clone();
                            let t = syn::Ident::new(PARAM, c.as_token.span);
                            *e = syn::parse_quote!(
                                ::mochi::__private::CastFloat::<#t>::cast_float(#inner)
                            );
                            return;
                        }
                    }
                    // An integer made from floats without their derivative, e.g.
                    // `x.iter().filter(|v| **v > 0.0).count() as f64`: the closure's
                    // literals compare with the twin's scalar.
                    let direct_call = matches!(crate::desugar::unparen(&c.expr), Expr::Call(_));
                    let outer =
                        std::mem::replace(&mut self.in_int_cast, !mentions_float && direct_call);
                    self.visit_expr_mut(&mut c.expr);
                    self.in_int_cast = outer;
                    let inner = quote!(#c);
                    *e = Self::lit(inner);
                } else if mentions_float && is_bool_expr(&c.expr) {
                    // `(t > 0.0) as usize`: a `bool`, cast as written.
                    self.visit_expr_mut(&mut c.expr);
                } else if mentions_float || rounds_a_float(&c.expr) {
                    // (`(p[0] / CELL).floor() as i64` of a name the syntax does not show
                    // to hold floats: rounded by a float's method, so a float; before
                    // 2026-12-07 cast as written, a type error in the generic form.)
                    let integer = matches!(&*c.ty, Type::Path(p)
                        if p.path.get_ident().is_some_and(|i| INTEGER_TYPES.contains(&i.to_string().as_str())));
                    if !integer {
                        self.fail(
                            Why::Syntax,
                            format!("it casts a float with `as {}`", c.ty.to_token_stream()),
                            c.as_token.span,
                        );
                        return;
                    }
                    // `(x * 10.0) as usize`: the value of the twin's scalar, cast as the
                    // `f64` it holds is (saturating, NaN to 0).
                    self.visit_expr_mut(&mut c.expr);
                    let (inner, ty) = (&c.expr, &c.ty);
                    *e = syn::parse_quote!(
                        (::mochi::num_traits::ToPrimitive::to_f64(&(#inner))
                            .unwrap_or(::core::f64::NAN) as #ty)
                    );
                } else {
                    // An integer cast of an integer, which may hold a cast of a float
                    // (`(x * 1000.0) as u8 as usize`: before 2026-12-07 the inner
                    // cast was left as written, a type error in the generic form).
                    self.visit_expr_mut(&mut c.expr);
                }
            }
            // `V2::ZERO`: a constant of the user's type, lifted to the twin's scalar.
            Expr::Path(p) if STRUCTS.with(|st| st.get()) && associated_constant_of_users(p) => {
                let t = syn::Ident::new(PARAM, Span::call_site());
                let c = p.clone();
                *e = syn::parse_quote!(::mochi::__private::lift_value::<#t, _>(#c));
            }
            Expr::Path(p) if p.qself.is_none() => {
                let segs = segments(&p.path);
                if is_float_constant(&p.path) {
                    let inner = quote!(#p);
                    *e = Self::lit(inner);
                } else if segs.len() == 2
                    && segs[0] == float()
                    && matches!(segs[1].as_str(), "total_cmp" | "partial_cmp")
                {
                    // `max_by(f64::total_cmp)`: the comparator of the twin's scalar, which
                    // orders by value (a NaN equal to all, as `total_cmp` is not).
                    let (a, b): (Expr, Expr) = (syn::parse_quote!(__a), syn::parse_quote!(__b));
                    let cmp = by_value_cmp(&a, &b);
                    *e = syn::parse_quote!(|__a, __b| #cmp);
                } else if let Some(m) = float_method_value(&p.path) {
                    // `fold(f64::NEG_INFINITY, f64::max)`, `map(f64::exp)`: the method of
                    // the twin's scalar.
                    let m = syn::Ident::new(&m, p.span());
                    // As a closure written out, which the derivation takes as the
                    // adapter's closure (the types come from the adapter).
                    *e = if matches!(
                        m.to_string().as_str(),
                        "max" | "min" | "powf" | "atan2" | "hypot" | "copysign" | "log"
                    ) {
                        syn::parse_quote!(|__a, __b| __a.#m(__b))
                    } else {
                        syn::parse_quote!(|__a| __a.#m())
                    };
                    return;
                } else if p.path.segments.len() > 1
                    && p.path.segments.iter().any(|s| s.ident == float())
                {
                    self.fail(
                        Why::Syntax,
                        format!("it names `{}` as a value", path_string(&p.path)),
                        p.span(),
                    );
                } else {
                    // `usize::MAX`, `Ordering::Less` keep their type; a constant defined
                    // outside (`N`, `SCALE`, `PI` after a `use`, `consts::PI`) is lifted
                    // by its type: a float becomes the twin's scalar, an integer or a
                    // value of another type (a constant struct) stays as it is.
                    let segs = segments(&p.path);
                    let integer_const = segs.len() > 1 && INTEGER_TYPES.contains(&segs[0].as_str());
                    let last = &segs[segs.len() - 1];
                    let screaming = screaming_name(last);
                    let single = p.path.get_ident().map(|i| i.to_string());
                    let outside = match &single {
                        Some(name) => !self.bound.contains(name) && name != "None",
                        None => true,
                    };
                    if outside && screaming && !integer_const {
                        let t = syn::Ident::new(PARAM, p.span());
                        let inner = p.clone();
                        // (The traits are imported at the top of the twin's body,
                        // `import_const_traits`: a block here would be a statement to the
                        // derivation where it is a branch's value.)
                        *e = syn::parse_quote!(
                            (&::mochi::__private::ConstOf(#inner, ::core::marker::PhantomData::<#t>))
                                .lift_or_keep()
                        );
                        return;
                    }
                    if let (Some(name), true) = (&single, outside) {
                        self.fail(
                            Why::Syntax,
                            format!("it uses `{name}`, an item defined outside the function"),
                            p.span(),
                        );
                    }
                }
                // `Array1::<f64>::zeros`, `Vec::<f64>::new`: the types in the path change too.
                if let Expr::Path(p) = e {
                    self.visit_type_arguments(&mut p.path);
                }
            }
            Expr::Call(c) => {
                // (Only the call directly under the cast: not the calls in its arguments.)
                let in_int_cast = std::mem::take(&mut self.in_int_cast);
                // `g::<f64>(t)` of a function of the crate generic over its float: the
                // twin's scalar is inferred, as for `g(t)`.
                if let Expr::Path(fp) = &mut *c.func {
                    if let (1, Some(only)) = (fp.path.segments.len(), fp.path.segments.first_mut()) {
                        let floats_only = match &only.arguments {
                            syn::PathArguments::AngleBracketed(a) => a.args.iter().all(|g| {
                                matches!(g, syn::GenericArgument::Type(Type::Path(t))
                                    if t.qself.is_none() && (t.path.is_ident("f64") || t.path.is_ident("f32")))
                            }),
                            _ => false,
                        };
                        if floats_only
                            && only.ident.to_string().starts_with(|ch: char| ch.is_lowercase())
                        {
                            only.arguments = syn::PathArguments::None;
                        }
                    }
                }
                let Expr::Path(fp) = &*c.func else {
                    self.fail(Why::Call, "it calls a function value".into(), c.func.span());
                    return;
                };
                let path = path_string(&fp.path);
                let segs = segments(&fp.path);
                // `Err(DomainError::Negative(v))`: an error of the user's holding the
                // function's floats, which are the twin's scalar here; read back as
                // floats (`Unlift`), the error is the function's own.
                if path == "Err" && c.args.len() == 1 {
                    if let Expr::Call(inner) = &c.args[0] {
                        let variant = matches!(&*inner.func, Expr::Path(ip)
                            if ip.qself.is_none()
                                && ip.path.segments.len() == 2
                                && ip.path.segments.iter().all(|s| s.ident.to_string().starts_with(|ch: char| ch.is_ascii_uppercase())));
                        if variant {
                            let floats = self.floats;
                            let Expr::Call(c) = e else { unreachable!() };
                            let Expr::Call(inner) = &mut c.args[0] else { unreachable!() };
                            for a in inner.args.iter_mut() {
                                let f = floaty(a, floats);
                                self.visit_expr_mut(a);
                                if f {
                                    *a = unlifted(a);
                                }
                            }
                            return;
                        }
                    }
                }
                // (`Float::exp(x)`, `num_traits::Float::powi(x, 2)` as `f64::exp(x)`.)
                let by_trait = crate::lower::expr::float_trait_path(&segs) && !c.args.is_empty();
                if (segs.len() == 2 && segs[0] == float()) || by_trait {
                    let method = &segs[segs.len() - 1];
                    if method == "from" && !c.args.iter().any(|a| floaty(a, self.floats)) {
                        let inner = quote!(#c);
                        *e = Self::lit(inner);
                        return;
                    }
                    if !FLOAT_METHODS.contains(&method.as_str()) || c.args.is_empty() {
                        self.fail(Why::Call, format!("it calls `{path}`"), c.span());
                        return;
                    }
                    // `f64::max(a, b)` → `(a).max(b)`.
                    let mut args: Vec<Expr> = c.args.iter().cloned().collect();
                    for a in &mut args {
                        self.visit_expr_mut(a);
                    }
                    let recv = args.remove(0);
                    let m = syn::Ident::new(method, fp.span());
                    *e = syn::parse_quote!((#recv).#m(#(#args),*));
                    return;
                }
                // `Pair(a, b)` of a tuple struct of the user's, asked for with
                // `higher_order`: its generic mirror `__MochiTwinPair(a, b)`, as a struct
                // literal is.
                if STRUCTS.with(|s| s.get())
                    && fp.qself.is_none()
                    && segs.len() == 1
                    && fp.path.segments[0].arguments.is_none()
                    && tuple_struct_name(&segs[0])
                    && !kept_call(&path)
                    && !self.closures.contains(&segs[0])
                {
                    // (Written as the literal `__MochiTwinPair { 0: a, 1: b }`, which the
                    // derivation builds as a struct.)
                    let Expr::Call(c) = e else { unreachable!() };
                    let Expr::Path(fp) = &*c.func else { unreachable!() };
                    let id = &fp.path.segments[0].ident;
                    let t = syn::Ident::new(PARAM, Span::call_site());
                    let mirror = quote::quote_spanned!(id.span()=> ::mochi::__private::TwinStruct::<#t, #id>);
                    let mut args: Vec<Expr> = c.args.iter().cloned().collect();
                    for a in args.iter_mut() {
                        self.visit_expr_mut(a);
                    }
                    let fields = args.iter().enumerate().map(|(i, a)| {
                        let m = syn::Index::from(i);
                        quote!(#m: #a)
                    });
                    *e = syn::parse_quote!(#mirror { #(#fields),* });
                    return;
                }
                let integer_type = segs.len() == 2 && INTEGER_TYPES.contains(&segs[0].as_str());
                let closure = segs.len() == 1 && self.closures.contains(&segs[0]);
                // A function of this crate given floats: a `#[differentiable]` function,
                // whose module holds its generic form as `g::__twin` (the twin, the
                // function itself when it is generic, or a stand-in whose use fails to
                // compile with the reason), and the rule `g::__twin::rrule`.
                // A path into a standard rule crate (`mochi::linalg::cholesky`,
                // `mochi_rules_stats::normal_logpdf`): its functions have `__twin` too.
                let rule_crate_path = segs.len() >= 2
                    && matches!(
                        segs[segs.len() - 2].as_str(),
                        "linalg" | "stats" | "mochi_rules_linalg" | "mochi_rules_stats"
                    );
                // `crate::m::f::gradient(w)`: a companion of `f`, which has no twin of its
                // own (as `f::gradient(w)`, a path of two names, is not local either).
                let names_companion = COMPANIONS.contains(&segs[segs.len() - 1].as_str());
                let companion = segs.len() >= 3 && names_companion;
                // `helpers::sq(x)` (a module of the crate, or a crate whose functions
                // follow the rule crates' convention and name their `__twin`), not a
                // path into the standard library or a crate of types.
                // (`f::gradient(w)`: a companion of `f`, not a function of a module.)
                let module_path = segs.len() >= 2
                    && !names_companion
                    && segs
                        .iter()
                        .all(|s| s.starts_with(|ch: char| ch.is_lowercase() || ch == '_'))
                    && !matches!(
                        segs[0].as_str(),
                        "std"
                            | "core"
                            | "alloc"
                            | "mem"
                            | "iter"
                            | "cmp"
                            | "num_traits"
                            | "ndarray"
                            | "nalgebra"
                            | "rand"
                            | "libm"
                            | "mochi"
                    );
                let local = (segs.len() == 1
                    || rule_crate_path
                    || module_path
                    || matches!(segs[0].as_str(), "self" | "super" | "crate"))
                    && !companion
                    && fp.path.segments.iter().all(|s| s.arguments.is_none())
                    && segs
                        .last()
                        .is_some_and(|l| l.starts_with(|ch: char| ch.is_lowercase() || ch == '_'))
                    && !self.closures.contains(&segs[0])
                    && c.args
                        .iter()
                        .any(|a| crate::activity::expr_is_active(a, &self.active));
                let array_call = segs.len() >= 2
                    && ARRAY_TYPES.contains(&segs[segs.len() - 2].as_str())
                    && ARRAY_CALLS.contains(&segs[segs.len() - 1].as_str());
                if array_call {
                    syn::visit_mut::visit_expr_mut(self, e);
                    return;
                }
                if local && segs.len() == 1 && segs[0] == self.own {
                    // A recursive call calls the twin itself, whose derivation boxes the
                    // pullback of a call to itself as any recursive function's does.
                    let own = quote::format_ident!("__mochi_twin_{}", self.own);
                    let t = syn::Ident::new(PARAM, Span::call_site());
                    let Expr::Call(c) = e else { unreachable!() };
                    *c.func = syn::parse_quote!(#own::<#t>);
                    for a in c.args.iter_mut() {
                        self.visit_expr_mut(a);
                    }
                    return;
                }
                if local && self.in_no_grad {
                    // The callee may be a plain function (a solver whose result only
                    // starts a differentiable step), which has no twin; it takes the
                    // `f64`s the twin's scalars are not.
                    self.fail(
                        Why::Call,
                        format!("it calls `{path}` inside `no_grad(..)`, which the generic form cannot pass its scalars to"),
                        c.func.span(),
                    );
                    return;
                }
                if local && !kept_call(&path) {
                    let mut p = fp.path.clone();
                    // The callee's scalar is the twin's, named: inferring it from the
                    // arguments would first try every impl of the operator bounds.
                    // In a function that holds arrays the callee may be a rule crate's
                    // function generic over more than the scalar (`cholesky<T, S>`): its
                    // types come from the array arguments instead.
                    let t = syn::Ident::new(PARAM, Span::call_site());
                    // An array argument (`norm([a, b, c])`, `norm(v)` with `v` bound to
                    // an array) may go to a function generic over its length
                    // (`norm<const N: usize>`), whose generic form takes `N` beside the
                    // scalar: both are inferred.
                    let array_argument = c.args.iter().any(|a| {
                        let a = match a {
                            Expr::Reference(r) => &*r.expr,
                            other => other,
                        };
                        match a {
                            Expr::Array(_) | Expr::Repeat(_) => true,
                            Expr::Path(p) => p
                                .path
                                .get_ident()
                                .is_some_and(|i| self.array_names.contains(&i.to_string())),
                            // The value of another function's call (`sq(&scaled(p, k))`),
                            // which may be an array only the callee's signature shows
                            // (declared after this function, so not yet noted).
                            Expr::Call(inner) => matches!(&*inner.func, Expr::Path(ip)
                                if ip.path.get_ident().is_some_and(|i| i.to_string()
                                    .starts_with(|ch: char| ch.is_lowercase() || ch == '_'))),
                            _ => false,
                        }
                    });
                    let length_generic = segs.len() == 1 && LENGTH_GENERIC_FNS.holds(&segs[0]);
                    if self.arrays || rule_crate_path || array_argument || length_generic {
                        p.segments.push(syn::parse_quote!(__twin));
                    } else {
                        p.segments.push(syn::parse_quote!(__twin::<#t>));
                    }
                    let Expr::Call(c) = e else { unreachable!() };
                    *c.func = syn::parse_quote!(#p);
                    for a in c.args.iter_mut() {
                        self.visit_expr_mut(a);
                    }
                    return;
                }
                // A function of the crate given no value with a derivative: with
                // floats (`sgn(ti)` of a `ti` computed from integers), called on plain
                // floats, and what it returns lifted as a constant is (a float becomes
                // the twin's scalar, without a derivative; an integer stays as it is);
                // with no float at all, in `factorial(i) as f64`, called as written (the
                // cast makes it the twin's scalar), and elsewhere lifted as the first
                // kind. Marked or not.
                let plain_fn = segs.len() == 1
                    && !closure
                    && !self.closures.contains(&segs[0])
                    && !self.in_no_grad
                    && !kept_call(&path)
                    && !integer_type
                    && segs[0].starts_with(|ch: char| ch.is_lowercase() || ch == '_')
                    && fp.path.segments.iter().all(|s| s.arguments.is_none())
                    && c.args
                        .iter()
                        .all(|a| !crate::activity::expr_is_active(a, &self.active));
                // (A value read from a loop over a constant: its type in the twin is the
                // constant's, which only the trait system knows, `Unlift`.)
                let unlifted_args: Vec<bool> = c
                    .args
                    .iter()
                    .map(|a| {
                        let mut names = HashSet::new();
                        crate::activity::token_idents(quote::quote!(#a), &mut names);
                        names.iter().any(|n| self.const_elems.contains(n))
                    })
                    .collect();
                // (A configuration of constants, `takes(hp, 3.0)`, is passed as written.)
                let const_struct = |a: &Expr| {
                    let a = match crate::desugar::unparen(a) {
                        Expr::Reference(r) => &*r.expr,
                        other => other,
                    };
                    matches!(a, Expr::Path(p) if p.path.get_ident().is_some_and(|i| self.const_structs.contains(&i.to_string())))
                };
                let float_args: Vec<bool> = c
                    .args
                    .iter()
                    .zip(&unlifted_args)
                    .map(|(a, u)| *u || floaty(a, self.floats) && !const_struct(a))
                    .collect();
                // (An element may be a row, `pts[i]` of `[[f64; 3]; N]`.)
                // (A tuple, `cexp((0.0, w))`, is read back part by part, `Unlift`.)
                // (And a borrowed constant, `from_params(&ANCHOR, &SIZES)`: borrowed back.)
                // (And an array local of constants, `transpose(f)`, element by element.)
                let tuple_arg = |a: &Expr| match crate::desugar::unparen(a) {
                    Expr::Tuple(t) => (2..=4).contains(&t.elems.len()),
                    // (An array literal, `normalize3([0.3, 0.2, 1.0])`: its floats are the
                    // twin's scalar, read back element by element.)
                    Expr::Array(_) => true,
                    Expr::Path(p) => p
                        .path
                        .get_ident()
                        .is_some_and(|i| self.array_names.contains(&i.to_string())),
                    Expr::Reference(r) => {
                        r.mutability.is_none()
                            && !const_struct(a)
                            && matches!(&*r.expr, Expr::Path(p) if p.path.get_ident().is_some_and(|i| {
                                let n = i.to_string();
                                self.array_names.contains(&n) || constant_name(&n)
                            }))
                    }
                    _ => false,
                };
                let unlifted_args: Vec<bool> = unlifted_args
                    .iter()
                    .zip(&c.args)
                    .map(|(u, a)| *u || tuple_arg(a))
                    .collect();
                // (A constant defined outside, `shrink(&HP)`, `wsum(&W)`, `twice(SCALE)`,
                // is passed as written: the plain function takes it at its own type, which
                // the twin's lifted copy (`ConstOf`) would have to be read back to, and a
                // struct of constants cannot be.)
                // (Also a row of one, `dist(&XA[i], &XA[j])`, indexed by integers.)
                let kept: Vec<bool> = c
                    .args
                    .iter()
                    .map(|a| {
                        let mut a = unborrowed(a);
                        while let Expr::Index(ix) = crate::desugar::unparen(a) {
                            if crate::activity::tokens_mention(&quote!(#ix.index), &|i| {
                                let n = i.to_string();
                                self.floats.contains(&n) || self.active.contains(&n)
                            }) {
                                return false;
                            }
                            a = &ix.expr;
                        }
                        let Expr::Path(p) = crate::desugar::unparen(a) else {
                            return false;
                        };
                        p.qself.is_none()
                            && p.path.segments.last().is_some_and(|s| screaming_name(&s.ident.to_string()))
                            && p.path.get_ident().is_none_or(|i| !self.bound.contains(&i.to_string()))
                    })
                    .collect();
                // (A local holding floats of the twin's scalar in a `Vec`, `rowsum(&k)` of
                // a `k` made of constants, is read back whole, `Unlift`.)
                let local_whole = |a: &Expr| {
                    matches!(crate::desugar::unparen(unborrowed(a)), Expr::Path(p)
                        if p.path.get_ident().is_some_and(|i| self.bound.contains(&i.to_string())))
                };
                let scalar_args = c.args.iter().zip(&float_args).zip(&unlifted_args).zip(&kept).all(|(((a, f), u), k)| {
                    !f || *u || *k || scalar_expr(a, &self.scalars) && !matches!(a, Expr::Index(_)) || local_whole(a)
                });
                if plain_fn && !float_args.contains(&true) && in_int_cast {
                    let Expr::Call(c) = e else { unreachable!() };
                    for a in c.args.iter_mut() {
                        self.visit_expr_mut(a);
                    }
                    return;
                }
                // (With no float argument outside such a cast, `factorial_f(2 * n)` of a
                // `fn factorial_f(n: u32) -> f64`, it is called as written too and its
                // float lifted; each argument not written as an integer is read through
                // `Unlift`, which gives an integer as it is and a value the twin made its
                // scalar, `s(ti)` of a `ti = t(i, n)`, as the float it was.)
                // (A tuple of constants too, `cexp((0.0, w))`: part by part.)
                // (Also a borrow of a local, `rowsum(&k)` of a `k` made of constants.)
                let unliftable = |a: &Expr| {
                    matches!(
                        crate::desugar::unparen(unborrowed(a)),
                        Expr::Path(_)
                            | Expr::Binary(_)
                            | Expr::Unary(_)
                            | Expr::MethodCall(_)
                            | Expr::Field(_)
                            | Expr::Index(_)
                    ) || tuple_arg(a)
                };
                // (An integer's type is left to the callee, `t(i, n)` of a `let n = 7;`:
                // through `Unlift` it would be `i32`.)
                let written_integer: Vec<bool> = c
                    .args
                    .iter()
                    .map(|a| integer_expr(a, &self.integers))
                    .collect();
                let no_float = !float_args.contains(&true)
                    && c.args.iter().zip(&written_integer).zip(&kept).all(|((a, w), k)| *w || *k || unliftable(a));
                if plain_fn && no_float {
                    let Expr::Call(c) = e else { unreachable!() };
                    for ((a, written), kept) in c.args.iter_mut().zip(written_integer).zip(&kept) {
                        if *kept {
                            continue;
                        }
                        self.visit_expr_mut(a);
                        if !written {
                            *a = unlifted_or_kept(a);
                        }
                    }
                    *e = plain_of(c);
                    return;
                }
                if plain_fn && float_args.contains(&true) && scalar_args {
                    let to = quote::format_ident!("to_{}", float());
                    let fty = syn::Ident::new(float(), Span::call_site());
                    let wholes: Vec<bool> = c
                        .args
                        .iter()
                        .zip(&float_args)
                        .map(|(a, f)| *f && local_whole(a) && !scalar_expr(a, &self.scalars))
                        .collect();
                    let Expr::Call(c) = e else { unreachable!() };
                    for (((((a, scalar), u), kept), whole), written) in c
                        .args
                        .iter_mut()
                        .zip(float_args)
                        .zip(unlifted_args)
                        .zip(&kept)
                        .zip(wholes)
                        .zip(&written_integer)
                    {
                        if *kept {
                            continue;
                        }
                        self.visit_expr_mut(a);
                        if u || whole {
                            *a = unlifted_arg(a);
                        } else if scalar {
                            *a = syn::parse_quote!(
                                ::mochi::num_traits::ToPrimitive::#to(&(#a)).unwrap_or(::core::#fty::NAN)
                            );
                        } else if !written && matches!(crate::desugar::unparen(a), Expr::Reference(_)) {
                            // (A borrow the syntax does not show holds floats, `&ls`.)
                            *a = unlifted_or_kept(a);
                        }
                    }
                    *e = plain_of(c);
                    return;
                }
                // `Line::at(&l, t)` of a local bound to a struct literal: the method's
                // twin, as `l.at(t)` is.
                if segs.len() == 2 && fp.qself.is_none() {
                    let receiver = c.args.first().map(|a| match crate::desugar::unparen(a) {
                        Expr::Reference(r) if r.mutability.is_none() => &*r.expr,
                        other => other,
                    });
                    let found = receiver.and_then(|r| self.struct_method(r, &segs[1]));
                    if let Some((_, this)) = found.filter(|(t, _)| *t == segs[0]) {
                        let Expr::Call(c) = e else { unreachable!() };
                        let Expr::Path(fp) = &mut *c.func else { unreachable!() };
                        let last = fp.path.segments.last_mut().expect("two segments");
                        last.ident = method_twin_name(&last.ident);
                        let mut args: Vec<Expr> = c.args.iter().cloned().collect();
                        for a in args.iter_mut().skip(1) {
                            self.visit_expr_mut(a);
                        }
                        args[0] = this;
                        c.args = args.into_iter().collect();
                        return;
                    }
                }
                // `V2::new(a, b)` (also `Self::new(..)` in a method), given a value with a
                // derivative, in a function asking for `higher_order`: an associated
                // function of the user's (not a constant, `Complex64::new(1.0, 0.0)`,
                // which may be a library's), whose twin
                // (`V2::new__twin_needs_differentiable_higher_order`) its `impl` block
                // asking for `higher_order` writes; its name says so where it is missing.
                // `V2::zero()`, `V2::new(1.0, 0.0)`: a constant of the user's type, built
                // as written and lifted to the twin's scalar (`LiftField`), so that the
                // callee needs no twin.
                // (Also `V3::new(j as f64, 0.0, -(i as f64) * 1.1)` of integers: no float
                // of the function among the arguments.)
                let of_integers = segs.len() == 2
                    && fp.qself.is_none()
                    && fp.path.segments.iter().all(|s| s.arguments.is_none())
                    && constructor_type(&segs[0])
                    && !c.args.is_empty()
                    && c.args.iter().all(|a| {
                        !crate::activity::tokens_mention(&quote!(#a), &|i| {
                            let n = i.to_string();
                            self.floats.contains(&n) || self.active.contains(&n)
                        })
                    });
                if STRUCTS.with(|st| st.get()) && (constant_call_of_users(c) || of_integers) {
                    let t = syn::Ident::new(PARAM, Span::call_site());
                    let mut call = c.clone();
                    // (An element of a constant table, `V2::new(p[0], p[1])` over
                    // `BODY.iter()`, is held in the twin's scalar: read back to the float
                    // the plain constructor takes. A literal or a cast is one already.)
                    if of_integers {
                        for a in call.args.iter_mut() {
                            if !matches!(crate::desugar::unparen(a), Expr::Lit(_) | Expr::Cast(_)) {
                                *a = unlifted_arg(a);
                            }
                        }
                    }
                    *e = syn::parse_quote!(::mochi::__private::lift_value::<#t, _>(#call));
                    return;
                }
                // `Vec2::from(a)` of a marked `impl From<[f64; 2]> for Vec2`: the twin its
                // block writes beside `Vec2::from_f642_rrule`
                // (`Vec2::from_f642__twin_needs_differentiable_higher_order`), found by the
                // argument's shape where the type has several.
                if segs.len() == 2 && segs[1] == "from" && from_type(&segs[0]) {
                    let source = match &c.args.iter().collect::<Vec<_>>()[..] {
                        [a] if STRUCTS.with(|st| st.get()) && fp.qself.is_none() => {
                            from_source_of(&segs[0], a)
                        }
                        _ => None,
                    };
                    let Some(word) = source else {
                        self.fail(
                            Why::Call,
                            format!("it calls `{0}::from` of a type with several `From` implementations, on an argument whose type its form does not show (write the array or tuple literal in the call, `{0}::from([a, b])`, or call a constructor of the type's inherent `impl` block marked `#[differentiable(higher_order)]`)", segs[0]),
                            c.func.span(),
                        );
                        return;
                    };
                    let Expr::Call(c) = e else { unreachable!() };
                    for a in c.args.iter_mut() {
                        self.visit_expr_mut(a);
                    }
                    let Expr::Path(fp) = &mut *c.func else { unreachable!() };
                    let last = fp.path.segments.last_mut().expect("two segments");
                    last.ident =
                        method_twin_name(&quote::format_ident!("from_{}", word.to_lowercase()));
                    return;
                }
                if STRUCTS.with(|st| st.get())
                    && segs.len() == 2
                    && fp.qself.is_none()
                    && fp.path.segments.iter().all(|s| s.arguments.is_none())
                    && (constructor_type(&segs[0])
                        || segs[0] == "Self" && IMPL_TYPE.with(|t| t.borrow().is_some()))
                    && c.args.iter().any(|a| {
                        // (Or a float of the function's without a derivative, `V2::new(kf,
                        // 0.0)` of a loop's `let kf = k as f64;`: the twin's scalar too.)
                        crate::activity::expr_is_active(a, &self.active) || floaty(a, self.floats)
                    })
                {
                    let Expr::Call(c) = e else { unreachable!() };
                    for a in c.args.iter_mut() {
                        self.visit_expr_mut(a);
                    }
                    let Expr::Path(fp) = &mut *c.func else { unreachable!() };
                    let last = fp.path.segments.last_mut().expect("two segments");
                    last.ident = method_twin_name(&last.ident);
                    return;
                }
                // ndarray's `concatenate(Axis(0), &[a.view(), b.view()])` and `stack`: the
                // views' element type is the twin's.
                let joins = self.arrays
                    && matches!(
                        path.as_str(),
                        "ndarray::concatenate" | "ndarray::stack" | "concatenate" | "stack"
                    )
                    && c.args.first().is_some_and(|a| {
                        matches!(a, Expr::Call(ax) if matches!(&*ax.func, Expr::Path(p)
                            if p.path.segments.last().is_some_and(|s| s.ident == "Axis")))
                    });
                // `BTreeMap::from([("a", 0), ("b", 1)])`: a standard collection of
                // constants without floats, as written.
                let collection = segs.len() >= 2 && {
                    let ty = segs[segs.len() - 2].as_str();
                    crate::desugar::MAPS.contains(&ty) || ty == "VecDeque"
                };
                let without_floats = collection
                    && c.args.iter().all(|a| {
                        !floaty(a, self.floats) && !crate::activity::expr_is_active(a, &self.active)
                    });
                // (A deque of floats is generic as written: `VecDeque::from(v)` of the
                // twin's `Vec<T>` is a `VecDeque<T>`.)
                let deque = segs.len() >= 2 && segs[segs.len() - 2] == "VecDeque";
                if !(kept_call(&path) || integer_type || closure || joins || without_floats || deque)
                {
                    let why = if segs.len() == 2
                        && !STRUCTS.with(|s| s.get())
                        && (crate_type(&segs[0]) || crate_enum(&segs[0]))
                    {
                        format!("it calls `{path}`{HIGHER_ORDER_HINT}")
                    } else if collection {
                        format!("it calls `{path}`: a standard collection of floats has no generic form (keep the floats in a `const` array or a `Vec`, and the keys' positions in the map)")
                    } else if segs.len() == 2
                        && user_type_name(&segs[0])
                        && library_type(&segs[0])
                    {
                        format!("it calls `{path}`, whose twin is not known (`{0}` is taken for a library's type; a struct of your own named `{0}` is known as yours once its `#[derive(Tangent)]` comes before this function in the crate)", segs[0])
                    } else {
                        format!("it calls `{path}`, whose twin is not known")
                    };
                    self.fail(Why::Call, why, c.func.span());
                    return;
                }
                // The path names an item outside the function (`Axis`, `Vec::new`): only
                // the types in it change.
                let Expr::Call(c) = e else { unreachable!() };
                if let Expr::Path(p) = &mut *c.func {
                    self.visit_type_arguments(&mut p.path);
                }
                let outer = self.in_no_grad;
                self.in_no_grad |= path.ends_with("no_grad");
                for a in c.args.iter_mut() {
                    self.visit_expr_mut(a);
                }
                self.in_no_grad = outer;
            }
            // (Not a method whose result carries no derivative, `self.num_params()`: the
            // mirror's own, see `companion::plain_mirror_method`.)
            Expr::MethodCall(m)
                if self.method
                    && matches!(&*m.receiver, Expr::Path(p) if p.path.is_ident("self"))
                    && !FLOAT_METHODS.contains(&m.method.to_string().as_str())
                    && !SEQ_METHODS.contains(&m.method.to_string().as_str())
                    && !plain_user_method(&m.method.to_string()) =>
            {
                // Another method of the struct, which must have a twin too: its name
                // says so where it is missing ("no function … named
                // `predict__twin_needs_differentiable_higher_order`").
                for a in m.args.iter_mut() {
                    self.visit_expr_mut(a);
                }
                let twin = method_twin_name(&m.method);
                let args = &m.args;
                *e = syn::parse_quote!(Self::#twin(self, #args));
            }
            Expr::MethodCall(m)
                if !self.struct_locals.is_empty()
                    && self.struct_method(&m.receiver, &m.method.to_string()).is_some() =>
            {
                // `l.at(t)` of a local bound to a struct literal: the method's twin,
                // taking the struct's mirror.
                let (ty, this) = self
                    .struct_method(&m.receiver, &m.method.to_string())
                    .expect("tested by the guard");
                for a in m.args.iter_mut() {
                    self.visit_expr_mut(a);
                }
                let twin = method_twin_name(&m.method);
                let args = &m.args;
                *e = syn::parse_quote!(#ty::#twin(#this, #args));
            }
            Expr::MethodCall(m) => {
                let name = m.method.to_string();
                let array_method = self.arrays && ARRAY_METHODS.contains(&name.as_str());
                // Comparisons (`a.total_cmp(b)` in a `max_by`): the scalar is `PartialOrd`,
                // and `Dual` orders by value; `total_cmp`, an `f64` method, as
                // `partial_cmp` (equal for a NaN).
                let comparison = matches!(name.as_str(), "total_cmp" | "partial_cmp");
                // `"text".into()`, `"text".to_string()`: a string, as written.
                let text = matches!(&*m.receiver, Expr::Lit(l) if matches!(l.lit, syn::Lit::Str(_)))
                    && matches!(name.as_str(), "into" | "to_string" | "to_owned");
                if text {
                    return;
                }
                if name == "total_cmp" && m.args.len() == 1 {
                    self.visit_expr_mut(&mut m.receiver);
                    for a in m.args.iter_mut() {
                        self.visit_expr_mut(a);
                    }
                    *e = by_value_cmp(&m.receiver, &m.args[0]);
                    return;
                }
                // `act.apply(v)`, `apply` a method only an enum of the crate's has: that
                // enum's method twin (an enum is its own generic form), also on a field
                // of a struct (`cfg.act.apply(v)`).
                // (When several enums have a method of that name: the enum the receiver
                // is known to be, a field of an argument or of `self` typed as one, or a
                // local bound to a variant.)
                let enum_method = STRUCTS
                    .with(|s| s.get())
                    .then(|| {
                        self.receiver_enum(&m.receiver)
                            .filter(|t| crate_method(t, &name))
                            .or_else(|| sole_enum_with(&name))
                    })
                    .flatten();
                let only_enums = enum_method.is_none() && STRUCTS.with(|s| s.get()) && only_enums_have(&name);
                if only_enums && enums_with(&name) > 1 {
                    self.fail(
                        Why::Call,
                        format!("it calls the method `{name}`, which more than one enum of the crate has, on a value whose enum the generic form cannot tell (a field of an argument or of `self` typed as the enum, or a local bound to one of its variants, is told)"),
                        m.method.span(),
                    );
                    return;
                }
                if let Some(ty) = enum_method {
                    self.visit_expr_mut(&mut m.receiver);
                    for a in m.args.iter_mut() {
                        self.visit_expr_mut(a);
                    }
                    let ty = syn::Ident::new(&ty, m.method.span());
                    let twin = method_twin_name(&m.method);
                    let (recv, args) = (&m.receiver, &m.args);
                    *e = syn::parse_quote!(#ty::#twin(::mochi::__private::receiver(&#recv), #args));
                    return;
                }
                let user_method = STRUCTS.with(|s| s.get())
                    && !(FLOAT_METHODS.contains(&name.as_str())
                        || SEQ_METHODS.contains(&name.as_str())
                        || array_method
                        || comparison)
                    && (of_struct_chain(&m.receiver, &self.structish)
                        || matches!(crate::desugar::unparen(&m.receiver), Expr::Path(p)
                            if p.path.get_ident().is_some_and(|i| self.chain_results.contains(&i.to_string()))));
                // (A method only an enum of the crate's has, whose generic form is not
                // known: an enum has no mirror to carry it.)
                if user_method && only_enums {
                    self.fail(Why::Call, format!("it calls the method `{name}`"), m.method.span());
                    return;
                }
                if user_method && method_without_mirror(&name) {
                    self.fail(
                        Why::Call,
                        format!("it calls the method `{name}`, which has no generic form on a struct (a method of a trait implementation has none; a method of an inherent `impl` block marked `#[differentiable(higher_order)]` has one)"),
                        m.method.span(),
                    );
                    return;
                }
                if user_method {
                    // The mirror's method of that name (its generic form).
                    self.visit_expr_mut(&mut m.receiver);
                    for (k, a) in m.args.iter_mut().enumerate() {
                        self.visit_expr_mut(a);
                        // `l.forward(&x)` of an array `x` where the method takes a slice:
                        // the rule of the mirror's method takes the slice, which a call
                        // through a tuple does not coerce to.
                        let array = matches!(a, Expr::Reference(r) if r.mutability.is_none()
                            && matches!(&*r.expr, Expr::Path(p) if p.path.get_ident()
                                .is_some_and(|i| self.array_names.contains(&i.to_string()))));
                        if array && slice_param(&name, k) {
                            if let Expr::Reference(r) = a {
                                let inner = &r.expr;
                                *a = syn::parse_quote!(&#inner[..]);
                            }
                        }
                    }
                    return;
                }
                if !(FLOAT_METHODS.contains(&name.as_str())
                        || SEQ_METHODS.contains(&name.as_str())
                        || array_method
                        || comparison)
                {
                    // An array method on a value whose type the syntax does not show
                    // (the result of a helper declared after the function).
                    let hint = if !self.arrays && ARRAY_METHODS.contains(&name.as_str()) {
                        "; if its receiver is an ndarray array, write the array's type where \
                         it is bound (`let a: Array1<f64> = ..;`)"
                    } else if !STRUCTS.with(|s| s.get()) && marked_method_name(&name) {
                        HIGHER_ORDER_HINT
                    } else {
                        ""
                    };
                    self.fail(
                        Why::Call,
                        format!("it calls the method `{name}`{hint}"),
                        m.method.span(),
                    );
                    return;
                }
                // `map(g)`, `map(self::g)` of a function of this crate: the closure
                // `|a| g(a)`, whose call goes to `g::__twin` below.
                if matches!(name.as_str(), "map" | "mapv") && m.args.len() == 1 {
                    if let Expr::Path(p) = &m.args[0] {
                        let segs = segments(&p.path);
                        let function = p.qself.is_none()
                            && float_method_value(&p.path).is_none()
                            && (segs.len() == 1
                                || (segs.len() == 2
                                    && matches!(segs[0].as_str(), "self" | "super" | "crate")))
                            // (A name the function also binds to a float, `let gelu =
                            // out - 0.3;` after `map(gelu)`, is the function where it is
                            // mapped: a float cannot be.)
                            && segs.last().is_some_and(|l| {
                                l.starts_with(|c: char| c.is_lowercase() || c == '_')
                                    && (!self.bound.contains(l)
                                        || (self.active.contains(l) || self.floats.contains(l))
                                            && !self.closures.contains(l))
                            });
                        if function {
                            let a = syn::Ident::new("__mochi_fa", p.span());
                            self.bound.insert(a.to_string());
                            m.args[0] = syn::parse_quote!(|#a| #p(#a));
                        }
                    }
                }
                // The parameters of a closure over the elements of a differentiable
                // sequence (`x.iter().map(|v| g(*v))`, `fold(0.0, |acc, v| ..)`) carry a
                // derivative, as the derivation sees them; not with `enumerate` in the
                // chain (its index is not one). They do only inside this call.
                let elements = crate::activity::mentions_active(&m.receiver, &self.active)
                    && !chain_has(&m.receiver, "enumerate")
                    && name != "enumerate";
                let saved = elements.then(|| self.active.clone());
                if elements {
                    for a in &m.args {
                        if let Expr::Closure(c) = a {
                            for input in &c.inputs {
                                self.active.extend(pat_names(input));
                            }
                        }
                    }
                }
                syn::visit_mut::visit_expr_mut(self, e);
                if let Some(saved) = saved {
                    self.active = saved;
                }
            }
            // `Pt { x: a, y: b }` as its generic mirror `__MochiTwinPt { x: a, y: b }`,
            // written beside `Pt` by `#[derive(Tangent)]` (asked for: a struct without one
            // would be an error in the twin, so in the function).
            Expr::Struct(st) if STRUCTS.with(|s| s.get()) && st.qself.is_none() => {
                // `Layer::Dense { w, b }`: a variant of an enum, which is its own generic
                // form (its floats `f64`s) and has no mirror to build.
                let n = st.path.segments.len();
                // (Built of constants, `Layer::Dense { w: vec![0.5, -0.3], b: 0.1 }`: as
                // written, the choice it is, its floats `f64`s as the enum holds them.)
                if n == 2 && crate_lifted_enum(&st.path.segments[0].ident.to_string()) {
                    let names = |i: &proc_macro2::Ident| {
                        let n = i.to_string();
                        self.floats.contains(&n) || self.active.contains(&n)
                    };
                    if !crate::activity::tokens_mention(&quote!(#st), &names) {
                        let t = syn::Ident::new(PARAM, Span::call_site());
                        let built = st.clone();
                        *e = syn::parse_quote!(::mochi::__private::lift_value::<#t, _>(#built));
                        return;
                    }
                }
                if n > 1
                    && st.path.segments[n - 2]
                        .ident
                        .to_string()
                        .starts_with(|c: char| c.is_ascii_uppercase())
                {
                    self.fail(
                        Why::Syntax,
                        format!(
                            "it builds `{}`, a variant of an enum (an enum's floats are constants in the generic form)",
                            segments(&st.path).join("::")
                        ),
                        st.path.span(),
                    );
                    return;
                }
                if st.path.is_ident("Self") {
                    if let Some(t) = IMPL_TYPE.with(|t| t.borrow().clone()) {
                        st.path = syn::Ident::new(&t, st.path.span()).into();
                    }
                }
                // A struct whose derive wrote no mirror (a field it cannot lift, `act:
                // Act`): nothing to build in the generic form.
                if let Some(i) = st.path.get_ident() {
                    if crate_type_without_mirror(&i.to_string()) {
                        self.fail(
                            Why::Syntax,
                            format!("it builds `{i}`, which has no generic form (a field of a type `#[derive(Tangent)]` cannot lift)"),
                            st.path.span(),
                        );
                        return;
                    }
                }
                // `..<V2 as Default>::default()` (or `Default::default()`, `V2::default()`):
                // the struct's default, lifted to the scalar as a constant is.
                let defaulted = st.rest.as_deref().is_some_and(|b| {
                    matches!(crate::desugar::unparen(b), Expr::Call(c) if c.args.is_empty()
                        && matches!(&*c.func, Expr::Path(p)
                            if p.path.segments.last().is_some_and(|s| s.ident == "default")))
                });
                if defaulted {
                    let (path, t) = (&st.path, syn::Ident::new(PARAM, Span::call_site()));
                    st.rest = Some(Box::new(syn::parse_quote!(
                        ::mochi::__private::lift_value::<#t, #path>(::core::default::Default::default())
                    )));
                }
                // `..base` of a configuration of constants (`let base = Cfg { .. };`, kept
                // as written): lifted as the default is.
                let of_constants = st.rest.as_deref().is_some_and(|b| {
                    matches!(crate::desugar::unparen(b), Expr::Path(p)
                        if p.path.get_ident().is_some_and(|i| self.const_structs.contains(&i.to_string())))
                });
                if of_constants {
                    let (path, t) = (&st.path, syn::Ident::new(PARAM, Span::call_site()));
                    let base = st.rest.take().unwrap();
                    st.rest = Some(Box::new(syn::parse_quote!(
                        ::mochi::__private::lift_value::<#t, #path>(::core::clone::Clone::clone(&#base))
                    )));
                }
                let defaulted = defaulted || of_constants;
                // (Named through the struct's own path, which is in scope where the
                // mirror's name may not be: `TwinStruct::<T, crate::m::Pt>`.)
                if st.path.segments.last().is_some_and(|l| l.ident != "Self") {
                    let mut path = st.path.clone();
                    if let Some(last) = path.segments.last_mut() {
                        last.arguments = syn::PathArguments::None;
                    }
                    let t = syn::Ident::new(PARAM, Span::call_site());
                    let span = path.segments.last().map(|l| l.ident.span()).unwrap_or_else(Span::call_site);
                    st.path = syn::parse_quote_spanned!(span=> ::mochi::__private::TwinStruct::<#t, #path>);
                } else if let Some(last) = st.path.segments.last_mut() {
                    last.ident = quote::format_ident!("__MochiTwin{}", last.ident, span = last.ident.span());
                    last.arguments = syn::PathArguments::None;
                }
                for f in st.fields.iter_mut() {
                    self.visit_expr_mut(&mut f.expr);
                }
                if let Some(base) = st.rest.as_mut().filter(|_| !defaulted) {
                    self.visit_expr_mut(base);
                }
            }
            // A field of a configuration of constants (`hp.clip` after `let hp = Hyper {
            // clip: 5.0, .. }`, which `visit_stmt_mut` keeps as written): lifted by type,
            // as a constant from outside is.
            // So is a field of a constant struct defined outside (`CFG.clip` of
            // `const CFG: Hyper = Hyper { .. };`): the constant itself would be kept as a
            // struct of `f64`s, and its float fields would not mix with the scalar.
            Expr::Field(f) if self.constant_field(f) => {
                let t = syn::Ident::new(PARAM, f.span());
                let inner = f.clone();
                *e = syn::parse_quote!(
                    (&::mochi::__private::ConstOf(#inner, ::core::marker::PhantomData::<#t>))
                        .lift_or_keep()
                );
            }
            Expr::Struct(s) => self.fail(
                Why::Syntax,
                "it builds a struct; mark it `#[differentiable(higher_order)]`, with the struct deriving `Tangent` (fields that are floats, integers, `bool`s, `Vec`s of these or ndarray arrays of `f64`), to have them".into(),
                s.span(),
            ),
            _ => syn::visit_mut::visit_expr_mut(self, e),
        }
    }
}

impl Rewrite<'_> {
    /// `hp.f` of a local configuration of constants, or `CFG.f` (also `CFG.a.b`) of a
    /// constant defined outside the function.
    fn constant_field(&self, f: &syn::ExprField) -> bool {
        // (Through fields and elements with plain indices: `PTS[i].x` of a constant
        // array of structs.)
        let plain_index = |e: &Expr| {
            let mut names = HashSet::new();
            crate::activity::token_idents(quote::quote!(#e), &mut names);
            names.iter().all(|n| !self.active.contains(n))
                && !matches!(e, Expr::Range(_) | Expr::Call(_) | Expr::MethodCall(_))
        };
        let mut base = &*f.base;
        loop {
            match base {
                Expr::Field(inner) => base = &inner.base,
                Expr::Index(ix) if plain_index(&ix.index) => base = &ix.expr,
                _ => break,
            }
        }
        let Expr::Path(p) = base else { return false };
        let Some(name) = p.path.get_ident().map(|i| i.to_string()) else {
            return false;
        };
        if self.const_structs.contains(&name) {
            return matches!(&*f.base, Expr::Path(_));
        }
        if self.const_struct_elems.contains(&name) {
            return true;
        }
        let screaming = name
            .chars()
            .all(|c| c.is_uppercase() || c == '_' || c.is_numeric())
            && name.chars().any(|c| c.is_uppercase());
        screaming && !self.bound.contains(&name)
    }
}

/// A comparison, a logical operation or a negation of one: a `bool`.
pub(crate) fn is_bool_expr(e: &Expr) -> bool {
    match e {
        Expr::Paren(p) => is_bool_expr(&p.expr),
        Expr::Binary(b) => matches!(
            b.op,
            syn::BinOp::Lt(_)
                | syn::BinOp::Le(_)
                | syn::BinOp::Gt(_)
                | syn::BinOp::Ge(_)
                | syn::BinOp::Eq(_)
                | syn::BinOp::Ne(_)
                | syn::BinOp::And(_)
                | syn::BinOp::Or(_)
        ),
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Not(_)) => is_bool_expr(&u.expr),
        Expr::MethodCall(m) => matches!(
            m.method.to_string().as_str(),
            "is_nan" | "is_finite" | "is_infinite" | "is_sign_negative" | "is_sign_positive"
        ),
        _ => false,
    }
}

/// A lifted constant passed as a function's argument (`horner(z, COEFFS)` of `const
/// COEFFS: &[f64] = &[..]`) in the form the function takes: the lifted copy of a slice is
/// a `Vec`, lent as the slice (`__private::ConstUse`); other constants as lifted (before
/// 2026-12-07, "expected `&[__MochiT]`, found `Vec<__MochiT>`", which failed the
/// function).
fn const_arguments_as_written(block: &mut syn::Block) {
    struct Args;
    impl VisitMut for Args {
        fn visit_expr_call_mut(&mut self, c: &mut syn::ExprCall) {
            syn::visit_mut::visit_expr_call_mut(self, c);
            for a in c.args.iter_mut() {
                if lifted_constant(a).is_some() {
                    let inner = a.clone();
                    *a = syn::parse_quote!(::mochi::__private::ConstUse(&#inner).at_use());
                }
            }
        }
        fn visit_item_mut(&mut self, _: &mut syn::Item) {}
    }
    Args.visit_block_mut(block);
}

/// The `ConstOf(W, ..)` of a lifted constant, `(&ConstOf(W, ..)).lift_or_keep()`.
fn lifted_constant(e: &Expr) -> Option<&syn::ExprCall> {
    let Expr::MethodCall(m) = crate::desugar::unparen(e) else {
        return None;
    };
    let Expr::Reference(r) = crate::desugar::unparen(&m.receiver) else {
        return None;
    };
    let Expr::Call(c) = &*r.expr else { return None };
    let of = matches!(&*c.func, Expr::Path(p)
        if p.path.segments.last().is_some_and(|s| s.ident == "ConstOf"));
    (m.method == "lift_or_keep" && of).then_some(c)
}

/// Binds each constant the generic form lifts (`(&ConstOf(W, ..)).lift_or_keep()`) and
/// reads as a sequence (a method's receiver, `zip`'s argument, a `for` loop's sequence,
/// an indexed or borrowed value) once, at the top of the body: the derivation then sees
/// a variable where the function named a constant (`x.iter().zip(W.iter())` is a chain
/// of variables), and the constant is lifted once, not at every element. A constant
/// declared in an inner block of the body is left where it is named (a `let` at the top
/// does not see an item of an inner block); one declared at the body's top level is
/// seen from the top, as every item of a block is.
fn hoist_lifted_constants(block: &mut syn::Block) {
    struct Declared(HashSet<String>);
    impl<'a> Visit<'a> for Declared {
        fn visit_item_const(&mut self, c: &'a syn::ItemConst) {
            self.0.insert(c.ident.to_string());
        }
        fn visit_item_static(&mut self, s: &'a syn::ItemStatic) {
            self.0.insert(s.ident.to_string());
        }
    }
    struct Hoist {
        declared: HashSet<String>,
        lets: Vec<(String, syn::Ident, Expr)>,
    }
    impl Hoist {
        fn take(&mut self, e: &mut Expr) {
            let Some(c) = lifted_constant(e) else { return };
            let Some(Expr::Path(p)) = c.args.first() else {
                return;
            };
            let name = path_string(&p.path);
            if self.declared.contains(&name) {
                return;
            }
            let key = e.to_token_stream().to_string();
            let ident = match self.lets.iter().find(|(k, _, _)| *k == key) {
                Some((_, ident, _)) => ident.clone(),
                None => {
                    let ident = quote::format_ident!(
                        "__mochi_const_{}",
                        name.replace("::", "_")
                            .replace(|c: char| !c.is_alphanumeric() && c != '_', "")
                    );
                    self.lets.push((key, ident.clone(), e.clone()));
                    ident
                }
            };
            *e = syn::parse_quote!(#ident);
        }
    }
    impl VisitMut for Hoist {
        // (An item in the body does not see the body's `let`s.)
        fn visit_item_mut(&mut self, _: &mut syn::Item) {}
        fn visit_expr_mut(&mut self, e: &mut Expr) {
            match e {
                Expr::MethodCall(m) => {
                    self.take(&mut m.receiver);
                    if m.method == "zip" {
                        m.args.iter_mut().for_each(|a| self.take(a));
                    }
                }
                Expr::ForLoop(f) => self.take(&mut f.expr),
                Expr::Reference(r) => self.take(&mut r.expr),
                Expr::Index(i) => self.take(&mut i.expr),
                _ => {}
            }
            syn::visit_mut::visit_expr_mut(self, e);
        }
    }
    let mut declared = Declared(HashSet::new());
    for stmt in &block.stmts {
        match stmt {
            // (The body's own items: seen from its top.)
            syn::Stmt::Item(syn::Item::Const(_) | syn::Item::Static(_)) => {}
            other => declared.visit_stmt(other),
        }
    }
    let mut h = Hoist {
        declared: declared.0,
        lets: Vec::new(),
    };
    h.visit_block_mut(block);
    for (k, (_, ident, e)) in h.lets.into_iter().enumerate() {
        block.stmts.insert(k, syn::parse_quote!(let #ident = #e;));
    }
}

/// Imports the traits of lifted constants (`(&ConstOf(PI, ..)).lift_or_keep()`) at the
/// top of a twin's body.
fn import_const_traits(block: &mut syn::Block) {
    block.stmts.insert(
        0,
        syn::parse_quote!(
            #[allow(unused_imports)]
            use ::mochi::__private::{
                ConstUseOther as _, ConstUseSlice as _, KeepArgF32 as _, KeepArgF64 as _,
                KeepConstBy as _, KeepPlainBy as _, LiftConstBy as _, LiftPlainBy as _,
                UnliftArgF32 as _, UnliftArgF64 as _,
            };
        ),
    );
}

/// An expression whose value is an integer whatever floats it reads: a comparison cast
/// to an integer type (`(0.0 < t) as i32`), or arithmetic of such casts. (A variable
/// cast, `a as i32`, may be a float's.)
fn integer_valued(e: &Expr) -> bool {
    match e {
        Expr::Cast(c) => {
            matches!(&*c.ty, Type::Path(p)
                if p.path.get_ident().is_some_and(|i| INTEGER_TYPES.contains(&i.to_string().as_str())))
                && is_bool_expr(&c.expr)
        }
        Expr::Paren(p) => integer_valued(&p.expr),
        Expr::Group(g) => integer_valued(&g.expr),
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => integer_valued(&u.expr),
        Expr::Binary(b) => {
            matches!(
                b.op,
                syn::BinOp::Add(_)
                    | syn::BinOp::Sub(_)
                    | syn::BinOp::Mul(_)
                    | syn::BinOp::Div(_)
                    | syn::BinOp::Rem(_)
            ) && integer_valued(&b.left)
                && integer_valued(&b.right)
        }
        _ => false,
    }
}

/// The literal a range pattern's end is written as (`1`, `-0.5`), if it is one.
fn literal_end(e: &Expr) -> Option<&syn::Lit> {
    match e {
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => literal_end(&u.expr),
        Expr::Lit(l) => Some(&l.lit),
        _ => None,
    }
}

/// Whether `tokens` name `f64` or `f32` anywhere (a signature over no float).
pub(crate) fn mentions_float_type(tokens: &proc_macro2::TokenStream) -> bool {
    crate::activity::tokens_mention(tokens, &|i| i == "f64" || i == "f32")
}

/// A function over no float and no type parameter (`fn idx(i: usize) -> usize`): the
/// twin keeps it, and its calls, as written.
fn plain_fn(f: &syn::ItemFn) -> bool {
    let sig = &f.sig;
    sig.generics.params.is_empty() && !mentions_float_type(&quote!(#sig))
}

/// The names of the [`plain_fn`]s declared among the statements of `block`.
fn plain_nested_fns(block: &syn::Block) -> Vec<String> {
    block
        .stmts
        .iter()
        .filter_map(|s| match s {
            syn::Stmt::Item(syn::Item::Fn(f)) if plain_fn(f) => Some(f.sig.ident.to_string()),
            _ => None,
        })
        .collect()
}

/// The arguments of a print macro that lend a variable mutably (`leak(&mut s, r)`, also
/// named, `v = leak(&mut s, r)`), evaluated in order without printing: `{ let _ = a; }`;
/// `()` when there are none.
fn print_effects(mac: &syn::Macro) -> Expr {
    let Ok(args) =
        mac.parse_body_with(syn::punctuated::Punctuated::<Expr, syn::Token![,]>::parse_terminated)
    else {
        return syn::parse_quote!(());
    };
    let effects: Vec<&Expr> = args
        .iter()
        .skip(1)
        .map(crate::desugar::macro_arg_value)
        .filter(|a| crate::desugar::mut_borrows(a))
        .collect();
    if effects.is_empty() {
        return syn::parse_quote!(());
    }
    syn::parse_quote!({ #(let _ = #effects;)* })
}

/// `print!`, `println!`, `eprint!`, `eprintln!`: left out of the twin.
fn is_print(m: &syn::Macro) -> bool {
    m.path.segments.last().is_some_and(|s| {
        matches!(
            s.ident.to_string().as_str(),
            "print" | "println" | "eprint" | "eprintln"
        )
    })
}

/// A name written as a constant's, `W`, `SCALE`, `N_STEPS`: capitals, digits and `_`.
pub(crate) fn screaming_name(n: &str) -> bool {
    n.chars()
        .all(|c| c.is_uppercase() || c == '_' || c.is_numeric())
        && n.chars().any(|c| c.is_uppercase())
}

/// A `const`'s name by Rust's convention (`DATA`, `W_1`): capitals, digits and `_`, more
/// than one character.
pub(crate) fn constant_name(n: &str) -> bool {
    n.len() > 1 && n.is_ascii() && screaming_name(n)
}

/// Whether `e` ends in a float's rounding method (`(p / c).floor()`, `v.round()`, `ceil`,
/// `trunc`, `round_ties_even`), which no integer has: a float, whatever its names.
fn rounds_a_float(e: &Expr) -> bool {
    match crate::desugar::unparen(e) {
        Expr::MethodCall(m) => {
            m.args.is_empty()
                && matches!(
                    m.method.to_string().as_str(),
                    "floor" | "ceil" | "round" | "trunc" | "round_ties_even"
                )
        }
        _ => false,
    }
}
