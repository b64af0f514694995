//! Lowering a function body to a forward sweep and a reverse sweep.
//!
//! Store-all reversal: every operation on active values becomes a rule call whose
//! pullback is kept — in a local at the top level, in an `Option` slot inside a branch,
//! on a `Stack` inside a loop. Branch choices, match arms and trip counts are saved the
//! same way; `for` loops over ranges are replayed backwards from a clone of their
//! iterator instead. The reverse sweep walks the statements backwards, pops what the
//! forward sweep saved and accumulates cotangents. Indices built from loop variables
//! and integer parameters are recomputed rather than saved.

use crate::activity::{self, expr_is_active, pat_names};
mod exits;
pub mod expr;
mod flow;
pub mod ir;
mod norule;
pub(crate) use norule::rule_name;

use proc_macro2::TokenStream;
use quote::{format_ident, quote, ToTokens};
use std::collections::{BTreeMap, HashMap, HashSet};
use syn::{parse_quote, Block, Expr, Ident, Pat, Stmt};

use exits::Exits;
pub use ir::Code;
use ir::{AccKind, Adj, Backwards, Brackets, Forwards, Fwd, Rev, Slot};

/// A value in the forward sweep.
#[derive(Clone)]
pub enum Operand {
    /// A variable that carries a derivative: its value, the place of its cotangent, and
    /// whether the value is itself a reference.
    Active {
        val: TokenStream,
        cot: TokenStream,
        is_ref: bool,
    },
    /// A constant for differentiation, as a primal expression.
    Inactive(TokenStream),
}

impl Operand {
    /// The value as a rule argument: a reference.
    fn arg(&self) -> TokenStream {
        match self {
            // `&*` reborrows a `&mut` parameter as shared, as rules take their operands.
            Operand::Active {
                val, is_ref: true, ..
            } => quote!(&*#val),
            Operand::Active { val, .. } => quote!(&#val),
            Operand::Inactive(e) => quote!(&(#e)),
        }
    }
    /// The value as an expression.
    fn val(&self) -> TokenStream {
        match self {
            Operand::Active { val, .. } => val.clone(),
            Operand::Inactive(e) => e.clone(),
        }
    }
    fn cot(&self) -> Option<&TokenStream> {
        match self {
            Operand::Active { cot, .. } => Some(cot),
            Operand::Inactive(_) => None,
        }
    }
}

/// A name in scope.
#[derive(Clone)]
struct Binding {
    /// It carries a derivative.
    active: bool,
    /// The place of its cotangent in the reverse sweep (empty when inactive).
    cot: TokenStream,
    /// Its value is a reference (a `&[f64]` parameter, `let r = &v;`).
    is_ref: bool,
    /// The value can be recomputed in the reverse sweep (a loop variable of a replayed
    /// `for` loop, or an integer parameter that is never assigned).
    recompute: bool,
    /// A parameter (its shape can be taken once at the top).
    param: bool,
    /// Bound outside every loop and never reassigned (no binding of the name is `mut`):
    /// its value is the same wherever it is read in one call, so a pullback that keeps
    /// only such values is the same on every trip of a loop (`kit::hoist`). Set by
    /// [`Lowerer::bind`].
    fixed: bool,
}

/// What of a rule call inside a loop is the same on every trip (`kit::hoist`).
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Hoisting {
    /// Nothing known: the pullback is saved per trip.
    PerTrip,
    /// The constant operand of a pruned pullback.
    Constants,
    /// Every operand.
    Operands,
}

/// The flags through which a lowered loop's `break` and `continue` act.
struct LoopFlags {
    /// Set by a `break` of this loop (or of an enclosing one, leaving this one too).
    brk: Option<Ident>,
    /// Set by a `continue` of this loop.
    cnt: Option<Ident>,
    /// The loop's label, without the quote.
    label: Option<String>,
}

/// How a parameter (of the function or of a derived closure) enters the lowering.
pub struct ParamSpec {
    /// The parameter's pattern (a name, or a tuple of names in a closure).
    pub pat: Pat,
    /// The place of its cotangent accumulator in the reverse sweep, e.g. `(*__dp0)`.
    pub cot: TokenStream,
    /// Its type is a reference.
    pub is_ref: bool,
    /// Its type carries a derivative.
    pub active: bool,
    /// An integer the body never assigns: indices built from it are recomputed in the
    /// reverse sweep instead of saved.
    pub recompute: bool,
    /// Its type is a shared reference to a sequence (`&[f64]`, `&Vec<f64>`): its
    /// cotangent keeps the shape it is given at the top of the reverse sweep.
    pub shared: bool,
}

/// What lowering a body produces.
pub struct Lowered {
    /// Declarations at the top of the forward sweep.
    pub top: TokenStream,
    /// The forward sweep.
    pub fwd: TokenStream,
    /// The primal result.
    pub result: TokenStream,
    /// Cotangent declarations at the top of the reverse sweep.
    pub cots: TokenStream,
    /// The statement that seeds the result's cotangent with `__mochi_dy`.
    pub seed: TokenStream,
    /// The reverse sweep.
    pub rev: TokenStream,
}

/// The lowering state of one body (the function's, or a derived closure's).
pub struct Lowerer {
    /// The names that carry a derivative (the activity analysis' result, computed
    /// once before lowering).
    active: HashSet<String>,
    /// The bindings in scope, innermost scope last.
    scopes: Vec<HashMap<String, Binding>>,
    /// The counter behind fresh names (`__mochi_t12`).
    next: usize,
    /// Declarations at the top of the forward sweep: the tape's slots and the cotangent
    /// types' placeholders, which statements anywhere in the body fill.
    top: Vec<TokenStream>,
    /// The loop slots (stacks) to declare at the top, beside `top`: a loop body's slots
    /// merged into one record ([`Lowerer::merge_records`]) leave this list.
    stacks: Vec<Ident>,
    /// Declarations of the cotangent variables at the top of the reverse sweep.
    cots: Vec<TokenStream>,
    /// How many loops enclose the code being lowered: inside one, values are saved on
    /// a stack ([`ir::Slot::Loop`]).
    loop_depth: usize,
    /// How many branches or loops enclose it: inside one, values are saved in an
    /// `Option` ([`ir::Slot::Branch`]) unless a loop needs a stack.
    nest_depth: usize,
    /// The flags of the enclosing lowered loops, innermost last.
    loops: Vec<LoopFlags>,
    /// With early `return`s: the flag set by a `return`.
    returned: Option<Ident>,
    /// With early `return`s: the returned value.
    ret_val: Option<Ident>,
    /// The function's result type when it is a `Result` (`Result<f64, Box<dyn Error>>`):
    /// the early-return value is declared with it, so that `return Err(Box::new(e))`
    /// coerces as it does in the function.
    pub ret_ty: Option<syn::Type>,
    /// With early `return`s: the returned value's cotangent.
    ret_cot: Option<Ident>,
    /// The shapes of indexed parameters, read once at the top.
    param_shapes: HashMap<String, Ident>,
    /// The parameters of a shared sequence type (see [`ParamSpec::shared`]).
    shared_params: HashSet<String>,
    /// The parameters and locals whose cotangent the reverse sweep makes dense at its
    /// top.
    densified: HashSet<String>,
    /// Those statements, after the result's cotangent is seeded (a returned `Vec`'s
    /// cotangent moves in rather than being added to zeros).
    densify: Vec<TokenStream>,
    /// The names borrowed `&mut` anywhere in the body (a callee may replace the
    /// cotangent whole).
    mut_borrowed: HashSet<String>,
    /// What cannot be differentiated, each at its span.
    pub errors: Vec<syn::Error>,
    /// The function's name: a call to it is recursion (boxed pullback).
    fn_name: String,
    /// Pins of variables declared without a value, emitted at their first assignment.
    pending_pins: HashMap<String, Fwd>,
    /// The float type of the function (`f64` or `f32`) when its signature names only
    /// one: unsuffixed float literals next to active values get it, so that rule
    /// lookup never sees a bare `{float}` (two rule crates' `op_add` would both fit).
    pub float_ty: Option<Ident>,
    /// Locals of the other float type (`let a = x[0] as f32;` in a function over `f64`)
    /// with that type: a literal beside one of them takes it ([`other_float_locals`]).
    other_floats: HashMap<String, Ident>,
    /// Bindings already refused with an error of their own: writes to them add none.
    refused: HashSet<String>,
    /// Those of an enclosing body a closure's body reads (its captures, and its
    /// parameters when the adapter walks a sequence of them), set by its caller.
    inherited_floats: HashMap<String, Ident>,
    /// Plain functions whose value the body uses as a sequence
    /// ([`crate::rewrite::sequence_valued_calls`]).
    pub seq_calls: HashSet<String>,
    /// Bindings of a struct type of the user's (see `desugar::Receiver`).
    pub receivers: HashMap<String, crate::desugar::Receiver>,
    /// Parameters that hold structs of the user's (`ls: &[Layer]`, `v: Vec<Layer>`):
    /// a method by a name no library type has, on one of their elements, is the user's.
    pub struct_seqs: HashSet<String>,
    /// How many `if`/`match` branches enclose the code being lowered: a call to another
    /// function there boxes its pullback, which breaks the type cycle of mutually
    /// recursive functions (their recursion ends in a branch).
    branch_depth: usize,
    /// Locals bound to arrays (`let a = [x, y];`, `let a: [f64; 2] = …`): their
    /// cotangent is an array, converted when `&a` is passed where a slice is expected.
    array_locals: HashSet<String>,
    /// Names bound more than once in the body (see [`Lowerer::lower_body`]).
    rebound: HashSet<String>,
    /// Names whose value may change after their binding: some binding of the name is
    /// `mut`, or the value is written through, borrowed `&mut` or is a `&mut` itself
    /// (see [`Lowerer::lower_body`]).
    mutable: HashSet<String>,
    /// Parameters that are `mut` or `&mut` references (`self` for `&mut self`), set by the
    /// caller of [`Lowerer::lower_body`].
    pub mut_refs: HashSet<String>,
    /// Names whose length may change after their binding: the receiver of a method
    /// that resizes (`push`, `truncate`, …), assigned as a whole, or borrowed `&mut`.
    resized: HashSet<String>,
    /// The names a length-changing method is called on (`v.push(..)`).
    grown: HashSet<String>,
    /// The `fn` items declared inside the body.
    nested_fns: HashSet<String>,
    /// The shapes of locals bound once, outside loops, and never resized: an `Option`
    /// declared at the top and set at the binding, read by the reverse sweep instead of
    /// a shape saved at every element access.
    local_shapes: HashMap<String, Ident>,
    /// The shapes of locals bound inside a loop as `vec![e; n]`, `n` recomputable, and
    /// never resized, rebound or borrowed `&mut`: `n`, recomputed by the reverse sweep
    /// where an element is read instead of a shape saved at every read.
    fixed_shapes: HashMap<String, TokenStream>,
    /// Names borrowed `&mut` or the receiver itself (not an element's) of a method that
    /// may take `&mut self`: their length may change.
    mut_receivers: HashSet<String>,
    /// `let __mochi_plenN = p.len();` at the top, per parameter `p` (see
    /// [`Lowerer::fixed_len`]).
    param_lens: HashMap<String, Ident>,
    /// Names indexed directly somewhere in the body (`v[i]`).
    indexed: HashSet<String>,
    /// The span of the source expression being lowered: rule calls carry it, so that a
    /// missing or ambiguous rule is reported at the expression, not at the attribute.
    span: proc_macro2::Span,
    /// The rule methods called (`Call(..).m(extra…)`), how many `extra` arguments each
    /// takes and the span of its first call: each gets a missing-rule fallback
    /// ([`norule`]).
    rule_methods: BTreeMap<String, (usize, proc_macro2::Span)>,
    /// The rule methods of associated functions called by a path (`V::new(..)` →
    /// `v_new`): the type's path as written and the function's name, for the bridge
    /// that reaches the type's rule by its path ([`norule`]).
    assoc_paths: BTreeMap<String, (TokenStream, String)>,
    /// The rule methods of associated functions called through a type name the crate
    /// derives no `Tangent` for and no library has (`V::new` → `v_new`, with `V`):
    /// their missing-rule error names renamed imports and aliases ([`norule`]).
    unknown_types: BTreeMap<String, (String, String)>,
    /// The names the body's own `use` items bring (`use crate::geom::Vec3;` inside the
    /// function), which the modules of the derived items do not see.
    body_uses: HashSet<String>,
    /// The methods of the user's types called through their derived rule (`m_rrule`),
    /// with the number of arguments besides the receiver and the span of a call: each
    /// gets a fallback whose bound says the method is not `#[differentiable]`.
    user_methods: BTreeMap<String, (usize, proc_macro2::Span)>,
    /// The user's methods called on a `&mut` receiver, which get no fallback.
    user_methods_mut: std::collections::BTreeSet<String>,
    /// In a derived closure, the captured differentiable values (not references): the
    /// closure holds references to them, the closure as written reads them as values
    /// (see [`Lowerer::as_written`]; passed to a call they are dereferenced).
    pub captured: HashSet<String>,
}

/// Methods whose result is a function of their receiver and arguments alone, beside
/// the float methods ([`crate::twin::FLOAT_METHODS`]) and the queries
/// ([`activity::INACTIVE_METHODS`]): conversions out of `Option`/`Result`, copies.
const PURE_METHODS: &[&str] = &["unwrap", "expect", "clone"];

/// Associated functions of the same kind, called by a path (`T::from(0.5)`,
/// `f64::sqrt(2.0)`, `T::zero()`).
const PURE_FUNCTIONS: &[&str] = &[
    "from",
    "from_f64",
    "from_f32",
    "from_usize",
    "from_u32",
    "from_u64",
    "from_i32",
    "from_i64",
    "zero",
    "one",
    "sqrt",
    "exp",
    "ln",
    "powi",
    "powf",
    "abs",
    "max",
    "min",
];

/// A name written as constants are (`HALF_LN_2PI`, `N`): upper case, digits, `_`.
/// `*r` (in parentheses or not): a value read through a reference, whose operand is the
/// reference when `r` is bound to one; where the value leaves (a `return`, a branch's
/// value) it is copied.
pub(crate) fn is_deref(e: &Expr) -> bool {
    matches!(crate::desugar::unparen(e), Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)))
}

/// Methods of sequences, iterators and `Option`s that only read their receiver, beside
/// the float methods and the queries ([`activity::INACTIVE_METHODS`]).
const READING_METHODS: &[&str] = &[
    "iter",
    "into_iter",
    "copied",
    "cloned",
    "map",
    "filter",
    "filter_map",
    "enumerate",
    "zip",
    "rev",
    "skip",
    "take",
    "step_by",
    "chain",
    "windows",
    "chunks",
    "chunks_exact",
    "collect",
    "sum",
    "product",
    "fold",
    "position",
    "rposition",
    "any",
    "all",
    "find",
    "max",
    "min",
    "max_by",
    "min_by",
    "max_by_key",
    "min_by_key",
    "last",
    "first",
    "nth",
    "get",
    "to_vec",
    "clone",
    "unwrap",
    "unwrap_or",
    "expect",
    "abs_diff",
];

/// Does evaluating `e` only read (no `&mut`, no assignment, no method but reading ones
/// ([`READING_METHODS`], the float methods, the queries), no call given one of
/// `mut_refs`, the `&mut` bindings, as it is)?
fn only_reads(e: &Expr, mut_refs: &HashSet<String>) -> bool {
    struct R<'a>(bool, &'a HashSet<String>);
    impl<'ast> syn::visit::Visit<'ast> for R<'_> {
        fn visit_expr(&mut self, e: &'ast Expr) {
            match e {
                Expr::Reference(r) if r.mutability.is_some() => self.0 = false,
                Expr::Assign(_) => self.0 = false,
                Expr::Binary(b) if activity::is_arithmetic_assign(&b.op) => self.0 = false,
                Expr::MethodCall(m) => {
                    let n = m.method.to_string();
                    if !(READING_METHODS.contains(&n.as_str())
                        || activity::INACTIVE_METHODS.contains(&n.as_str())
                        || crate::twin::FLOAT_METHODS.contains(&n.as_str()))
                    {
                        self.0 = false;
                    }
                }
                // A call lent a `&mut` binding as it is (`self` in a `&mut self` method,
                // `Self::push(self, v)`; a `&mut` parameter, `step(v)`).
                Expr::Call(c) if crate::desugar::passes_on(&c.args, |n| self.1.contains(n)) => {
                    self.0 = false;
                }
                _ => {}
            }
            syn::visit::visit_expr(self, e);
        }
    }
    let mut r = R(true, mut_refs);
    syn::visit::Visit::visit_expr(&mut r, e);
    r.0
}

/// The other float type than `own` (`f32` in a function over `f64`, and the reverse),
/// when `e` has it as written: a cast to it, a literal with its suffix, a local of
/// `locals`, or an operation, a float method or a parenthesis of one of these.
pub(super) fn other_float(e: &Expr, own: &Ident, locals: &HashMap<String, Ident>) -> Option<Ident> {
    let other = match own.to_string().as_str() {
        "f64" => "f32",
        "f32" => "f64",
        _ => return None,
    };
    let named = |t: &syn::Type| matches!(t, syn::Type::Path(p) if p.path.is_ident(other));
    match crate::desugar::unparen(e) {
        Expr::Cast(c) => named(&c.ty).then(|| format_ident!("{}", other)),
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Float(f),
            ..
        }) => (f.suffix() == other).then(|| format_ident!("{}", other)),
        Expr::Path(p) => p
            .path
            .get_ident()
            .and_then(|i| locals.get(&i.to_string()))
            .cloned(),
        Expr::Binary(b) => {
            other_float(&b.left, own, locals).or_else(|| other_float(&b.right, own, locals))
        }
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_) | syn::UnOp::Deref(_)) => {
            other_float(&u.expr, own, locals)
        }
        Expr::Reference(r) => other_float(&r.expr, own, locals),
        // An element of a sequence of them, and the sequence (`[a, b]`, `vec![a; n]`).
        Expr::Index(ix) => other_float(&ix.expr, own, locals),
        Expr::Array(a) => a.elems.first().and_then(|e| other_float(e, own, locals)),
        Expr::Macro(m) if m.mac.path.is_ident("vec") => crate::rewrite::macro_exprs(&m.mac)?
            .first()
            .and_then(|e| other_float(e, own, locals)),
        Expr::MethodCall(m)
            if crate::twin::FLOAT_METHODS.contains(&m.method.to_string().as_str()) =>
        {
            other_float(&m.receiver, own, locals)
        }
        _ => None,
    }
}

/// The locals of the other float type than `own`, with that type: bound by a `let`
/// whose type is written so (`let a: f32 = ..`) or whose value has it ([`other_float`]),
/// at every binding of the name.
fn other_float_locals(body: &Block, own: &Ident) -> HashMap<String, Ident> {
    let lets = crate::twin::BodyLets::of(body).lets;
    let mut found: HashMap<String, Ident> = HashMap::new();
    // To a fixed point: `let b = a * 2.0;` after `let a = x[0] as f32;`.
    loop {
        let mut next = HashMap::new();
        for (name, ty, init) in &lets {
            let typed = match (ty, init) {
                (Some(syn::Type::Path(p)), _) => p
                    .path
                    .get_ident()
                    .filter(|i| (*i == "f32" || *i == "f64") && *i != own)
                    .cloned(),
                (Some(_), _) | (None, None) => None,
                (None, Some(e)) => other_float(e, own, &found),
            };
            match typed {
                Some(t) => {
                    next.entry(name.clone()).or_insert(Some(t));
                }
                None => {
                    next.insert(name.clone(), None);
                }
            }
        }
        let next: HashMap<String, Ident> = next
            .into_iter()
            .filter_map(|(n, t)| Some((n, t?)))
            .collect();
        if next.len() == found.len() {
            return next;
        }
        found = next;
    }
}

fn is_constant_name(n: &str) -> bool {
    n.chars()
        .all(|c| c.is_uppercase() || c == '_' || c.is_ascii_digit())
}

fn id(prefix: &str, n: usize) -> Ident {
    format_ident!("__mochi_{}{}", prefix, n)
}

impl Lowerer {
    pub fn new(fn_name: &str, active: HashSet<String>) -> Self {
        Lowerer {
            active,
            scopes: vec![HashMap::new()],
            next: 0,
            top: Vec::new(),
            stacks: Vec::new(),
            cots: Vec::new(),
            loop_depth: 0,
            nest_depth: 0,
            loops: Vec::new(),
            returned: None,
            ret_val: None,
            ret_ty: None,
            ret_cot: None,
            param_shapes: HashMap::new(),
            shared_params: HashSet::new(),
            densified: HashSet::new(),
            densify: Vec::new(),
            mut_borrowed: HashSet::new(),
            errors: Vec::new(),
            fn_name: fn_name.to_string(),
            pending_pins: HashMap::new(),
            float_ty: None,
            other_floats: HashMap::new(),
            refused: HashSet::new(),
            inherited_floats: HashMap::new(),
            seq_calls: HashSet::new(),
            receivers: HashMap::new(),
            struct_seqs: HashSet::new(),
            span: proc_macro2::Span::call_site(),
            branch_depth: 0,
            array_locals: HashSet::new(),
            rebound: HashSet::new(),
            mutable: HashSet::new(),
            mut_refs: HashSet::new(),
            resized: HashSet::new(),
            grown: HashSet::new(),
            nested_fns: HashSet::new(),
            local_shapes: HashMap::new(),
            fixed_shapes: HashMap::new(),
            mut_receivers: HashSet::new(),
            param_lens: HashMap::new(),
            indexed: HashSet::new(),
            rule_methods: BTreeMap::new(),
            assoc_paths: BTreeMap::new(),
            unknown_types: BTreeMap::new(),
            body_uses: HashSet::new(),
            user_methods: BTreeMap::new(),
            user_methods_mut: Default::default(),
            captured: HashSet::new(),
        }
    }

    fn fresh(&mut self, prefix: &str) -> Ident {
        self.next += 1;
        id(prefix, self.next)
    }

    /// The missing-rule fallbacks of the rule methods this body calls ([`norule`]):
    /// items for the scope that holds the derived rule's functions.
    pub fn fallback_items(&self) -> TokenStream {
        let rules = norule::fallbacks(&self.rule_methods, &self.assoc_paths, &self.unknown_types);
        let mut plain = self.user_methods.clone();
        plain.retain(|m, _| !self.user_methods_mut.contains(m));
        let methods = norule::method_fallbacks(&plain);
        quote::quote!(#rules #methods)
    }

    /// Records a rule method call with `extra` arguments (comma-separated tokens) for
    /// its missing-rule fallback; a name seen with another arity keeps the first.
    fn note_rule_method(&mut self, method: &str, extra: &TokenStream) {
        let n = if extra.is_empty() {
            0
        } else {
            syn::parse::Parser::parse2(
                syn::punctuated::Punctuated::<Expr, syn::Token![,]>::parse_terminated,
                extra.clone(),
            )
            .map_or(1, |p| p.len())
        };
        self.rule_methods
            .entry(method.to_string())
            .or_insert((n, self.span));
    }

    fn err(&mut self, span: &impl ToTokens, msg: impl std::fmt::Display) {
        self.errors.push(syn::Error::new_spanned(span, msg));
    }

    fn lookup(&self, name: &str) -> Option<&Binding> {
        self.scopes.iter().rev().find_map(|s| s.get(name))
    }

    fn bind(&mut self, name: String, mut b: Binding) {
        b.fixed = self.loop_depth == 0 && !self.mutable.contains(&name);
        self.scopes.last_mut().unwrap().insert(name, b);
    }

    /// A cotangent variable for a new active value `val`, typed by the primal's tangent.
    /// Returns the cotangent place and the forward statement that pins its type.
    fn new_cot(&mut self, val: &TokenStream) -> (TokenStream, Fwd) {
        let ty = self.fresh("ty");
        let d = self.fresh("d");
        self.top.push(ir::rt::type_slot(&ty));
        self.cots.push(ir::rt::cot_decl(&d, &ty));
        (
            quote!(#d),
            Fwd::Pin {
                ty,
                value: val.clone(),
            },
        )
    }

    /// Saves `value` for the reverse sweep (in the slot its nesting needs); returns the
    /// expression that retrieves it.
    fn save(&mut self, value: TokenStream, code: &mut Code) -> TokenStream {
        let s = self.fresh("s");
        let slot = if self.loop_depth > 0 {
            Slot::Loop(s)
        } else if self.nest_depth > 0 {
            Slot::Branch(s)
        } else {
            Slot::Local(s)
        };
        match &slot {
            Slot::Loop(s) => self.stacks.push(s.clone()),
            other => self.top.extend(other.declaration()),
        }
        let load = slot.load();
        code.fwd.push(Fwd::Save { slot, value });
        load
    }

    /// Emits `let (t, p) = <call>;`, saves `p`, and the reverse `pull`.
    fn rule_call(&mut self, call: TokenStream, args: &[Operand], code: &mut Code) -> Operand {
        self.rule_call_keeping(call, args, None, Hoisting::PerTrip, code)
    }

    /// [`rule_call`](Self::rule_call) whose argument `keep` (a binary operator's constant
    /// operand, `2.0 * x`, `x / h`) has no derivative: the saved pullback is pruned to
    /// what the other operand's partial needs (`kit::keep`). `hoist` says what of the
    /// call is the same on every trip of the enclosing loop, so that its pullback may be
    /// kept once, not per trip (`kit::hoist`).
    fn rule_call_keeping(
        &mut self,
        call: TokenStream,
        args: &[Operand],
        keep: Option<usize>,
        hoist: Hoisting,
        code: &mut Code,
    ) -> Operand {
        let t = self.fresh("t");
        let p = self.fresh("p");
        code.fwd.push(Fwd::Rule {
            value: t.clone(),
            pullback: p.clone(),
            call,
        });
        let (cot, pin) = self.new_cot(&quote!(#t));
        code.fwd.push(pin);
        let saved = match keep {
            Some(k) => quote!(::mochi::__private::Keep::<_, #k>::new(#p).prune()),
            None => quote!(#p),
        };
        let record = match hoist {
            Hoisting::PerTrip => None,
            // the pruned pullback, if it holds only the constant
            Hoisting::Constants if keep.is_some() => Some(quote!(
                use ::mochi::__private::{HoistInvariant as _, HoistWhole as _};
                ::mochi::__private::Hoist::new(&__mochi_slot, #saved).record()
            )),
            Hoisting::Constants => None,
            // any `Copy` pullback: every operand is the same on every trip
            Hoisting::Operands => Some(quote!(
                use ::mochi::__private::{HoistFixed as _, HoistFixedWhole as _};
                ::mochi::__private::Hoist::new(&__mochi_slot, #saved).record_fixed()
            )),
        };
        let pullback = match record {
            Some(record) if self.loop_depth > 0 => {
                let h = self.fresh("hoist");
                self.top
                    .push(quote!(let #h = ::mochi::__private::HoistSlot::new();));
                let rec = self.save(quote!({ let __mochi_slot = &#h; #record }), code);
                quote!({
                    use ::mochi::__private::{UnhoistInvariant as _, UnhoistWhole as _};
                    ::mochi::__private::Unhoist::new(&#h, #rec).get()
                })
            }
            _ => self.save(saved, code),
        };
        let temps = args.iter().map(|_| self.fresh("dup")).collect();
        code.rev.push(Rev::Pull {
            pullback,
            out: cot.clone(),
            args: args.iter().map(|a| a.cot().cloned()).collect(),
            temps,
            coerce: Vec::new(),
        });
        Operand::Active {
            val: quote!(#t),
            cot,
            is_ref: false,
        }
    }

    /// `w.unwrap()`/`w.expect(..)`: the value's cotangent goes into `w`'s (an `Option`
    /// for an `Option`, the value's own for a `Result`).
    fn unwrap_value(&mut self, val: TokenStream, from: &Operand, code: &mut Code) -> Operand {
        self.derived_value(val, from, AccKind::Unwrapped, code)
    }

    /// A new value `val` whose cotangent is added (`how`) into `from`'s in the reverse
    /// sweep.
    pub(super) fn derived_value(
        &mut self,
        val: TokenStream,
        from: &Operand,
        how: AccKind,
        code: &mut Code,
    ) -> Operand {
        let t = self.fresh("t");
        code.fwd.push(Fwd::Let {
            name: t.clone(),
            value: val,
        });
        let (cot, pin) = self.new_cot(&quote!(#t));
        code.fwd.push(pin);
        if let Some(c) = from.cot() {
            code.rev.push(Rev::Acc {
                into: c.clone(),
                value: Adj::Take(cot.clone()),
                how,
            });
        }
        Operand::Active {
            val: quote!(#t),
            cot,
            is_ref: false,
        }
    }

    // ------------------------------------------------------------------ bodies

    /// Lowers a whole body (of the function or of a derived closure).
    pub fn lower_body(&mut self, params: Vec<ParamSpec>, body: &Block) -> Lowered {
        struct Uses<'a>(&'a mut HashSet<String>);
        impl<'ast> syn::visit::Visit<'ast> for Uses<'_> {
            fn visit_use_name(&mut self, n: &'ast syn::UseName) {
                self.0.insert(n.ident.to_string());
            }
            fn visit_use_rename(&mut self, r: &'ast syn::UseRename) {
                self.0.insert(r.rename.to_string());
            }
            fn visit_use_glob(&mut self, _: &'ast syn::UseGlob) {
                // (A glob brings names the macro cannot list: any path may be one.)
                self.0.insert("*".to_string());
            }
        }
        syn::visit::Visit::visit_block(&mut Uses(&mut self.body_uses), body);
        // Names bound more than once anywhere in the body (shadowing): an index using one
        // is saved, never recomputed, since the reverse sweep might see the other binding.
        let mut counts: HashMap<String, usize> = HashMap::new();
        for p in &params {
            let mut names = Vec::new();
            pat_names(&p.pat, &mut names);
            for n in names {
                *counts.entry(n).or_default() += 1;
            }
        }
        // ... and the names bound `mut` somewhere (a binding of theirs may change).
        struct Bound<'a>(&'a mut HashMap<String, usize>, &'a mut HashSet<String>);
        impl<'ast> syn::visit::Visit<'ast> for Bound<'_> {
            fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
                *self.0.entry(p.ident.to_string()).or_default() += 1;
                if p.mutability.is_some() {
                    self.1.insert(p.ident.to_string());
                }
                syn::visit::visit_pat_ident(self, p);
            }
        }
        let mut mutable = HashSet::new();
        for p in &params {
            let mut muts = HashMap::new();
            syn::visit::Visit::visit_pat(&mut Bound(&mut muts, &mut mutable), &p.pat);
        }
        syn::visit::Visit::visit_block(&mut Bound(&mut counts, &mut mutable), body);
        self.mutable = mutable;
        self.rebound = counts
            .into_iter()
            .filter(|(_, c)| *c > 1)
            .map(|(n, _)| n)
            .collect();
        (self.resized, self.indexed, self.grown) = resized_and_indexed_names(body);
        if let Some(ty) = &self.float_ty {
            self.other_floats = std::mem::take(&mut self.inherited_floats);
            self.other_floats.extend(other_float_locals(body, ty));
        }
        (self.mut_borrowed, self.mut_receivers) = mut_borrowed_names(body);
        // A value may also change without a `mut` binding of its name when the name
        // holds a `&mut` reference (a parameter, `let r = &mut v;`, a part of
        // `split_at_mut`), written through (`*r = ..`, `r[i] += ..`) or passed on
        // (`g(r)`): none of these is fixed. (A binding that is neither `mut` nor a `&mut`
        // cannot be borrowed `&mut`, so its methods only read it.)
        let written = crate::analysis::assigned_names(body);
        let refs = mut_ref_bindings(body, &self.mut_refs);
        self.mutable.extend(written.into_iter().chain(refs));
        // `fn helper(..)` items inside the body (no derived rule of their own).
        struct Items<'a>(&'a mut HashSet<String>);
        impl<'ast> syn::visit::Visit<'ast> for Items<'_> {
            fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
                self.0.insert(f.sig.ident.to_string());
            }
        }
        syn::visit::Visit::visit_block(&mut Items(&mut self.nested_fns), body);
        for p in &params {
            self.bind_param(&p.pat, p.cot.clone(), p.is_ref, p.active, p.recompute);
            if let (true, Pat::Ident(i)) = (p.shared, &p.pat) {
                self.shared_params.insert(i.ident.to_string());
            }
        }
        let mut code = Code::default();
        let early = has_early_return(&body.stmts);
        let result;
        let seed;
        if early {
            let flag = self.fresh("returned");
            let rv = self.fresh("ret");
            let rc = self.fresh("dret");
            self.top.push(quote!(let mut #flag = false;));
            match &self.ret_ty {
                Some(t) => self.top.push(
                    quote!(let mut #rv: ::core::option::Option<#t> = ::core::option::Option::None;),
                ),
                None => self
                    .top
                    .push(quote!(let mut #rv = ::core::option::Option::None;)),
            }
            self.cots.push(ir::rt::zero_decl(&rc));
            self.returned = Some(flag);
            self.ret_val = Some(rv.clone());
            self.ret_cot = Some(rc.clone());
            let mut stmts = body.stmts.clone();
            match stmts.last().cloned() {
                // A statement-like tail of a function returning `()` (`for`, `while`, an
                // `if` without `else`): it runs, then the function returns.
                Some(Stmt::Expr(e, None)) if unit_tail(&e) => {
                    stmts.push(parse_quote!(return;));
                }
                // An `if` or a `match` whose arms return early inside (`if x > 1.0 { for
                // .. { if done { return h; } } h } else { .. }`): each arm's value
                // returned where it is, so that no arm is a block with a value after an
                // exit.
                Some(Stmt::Expr(e, None)) if crate::iterchain::contains_return(&e) => {
                    stmts.pop();
                    match returned_in_arms(&e) {
                        Some(arms) => stmts.push(Stmt::Expr(arms, None)),
                        None => stmts.push(Stmt::Expr(
                            parse_quote!(return #e),
                            Some(Default::default()),
                        )),
                    }
                }
                Some(Stmt::Expr(e, None)) => {
                    stmts.pop();
                    stmts.push(Stmt::Expr(
                        parse_quote!(return #e),
                        Some(Default::default()),
                    ));
                }
                // A body that ends in a statement returns `()` there, unless it ends by
                // leaving (`return e;`, `panic!(..)`).
                Some(Stmt::Expr(Expr::Return(_), _)) => {}
                Some(Stmt::Macro(m))
                    if m.mac.path.get_ident().is_some_and(|i| {
                        matches!(
                            i.to_string().as_str(),
                            "panic" | "unreachable" | "unimplemented" | "todo"
                        )
                    }) => {}
                _ => stmts.push(parse_quote!(return;)),
            }
            self.lower_stmts(&stmts, &mut code, false);
            result = quote!(match #rv {
                ::core::option::Option::Some(v) => v,
                ::core::option::Option::None => unreachable!("mochi: the function returned no value"),
            });
            seed = ir::rt::seed(&quote!(#rc));
        } else {
            let tail = self.lower_stmts(&body.stmts, &mut code, true);
            match tail {
                Some(Operand::Active { val, cot, .. }) => {
                    result = val;
                    seed = ir::rt::seed(&cot);
                }
                Some(Operand::Inactive(e)) => {
                    result = e;
                    seed = quote!(let _ = __mochi_dy;);
                }
                None => {
                    result = quote!(());
                    seed = quote!(let _ = __mochi_dy;);
                }
            }
        }
        let (fwd, rev) = (Forwards(&code.fwd), Backwards(&code.rev));
        let rev = quote!(#rev);
        let stacks = carve_order(&self.stacks, &rev)
            .into_iter()
            .filter_map(|s| Slot::Loop(s.clone()).declaration());
        let top = self.top.iter().cloned().chain(stacks);
        let cots = &self.cots;
        // The stacks at their peak: their sites learn the room the next call needs.
        let settle = self.stacks.iter().map(|s| quote!(#s.settle();));
        Lowered {
            top: quote!(#(#top)*),
            fwd: quote!(#fwd #(#settle)*),
            result,
            cots: quote!(#(#cots)*),
            seed: {
                let densify = &self.densify;
                quote!(#seed #(#densify)*)
            },
            rev,
        }
    }

    fn bind_param(
        &mut self,
        pat: &Pat,
        cot: TokenStream,
        is_ref: bool,
        active: bool,
        recompute: bool,
    ) {
        match pat {
            Pat::Ident(p) => {
                let name = p.ident.to_string();
                self.bind(
                    name,
                    Binding {
                        active,
                        cot,
                        is_ref,
                        recompute,
                        param: true,
                        fixed: false,
                    },
                );
            }
            Pat::Reference(r) => self.bind_param(&r.pat, cot, false, active, recompute),
            Pat::Type(t) => {
                let r = activity::type_is_ref(&t.ty);
                let act = active && !activity::type_is_inactive(&t.ty);
                self.bind_param(&t.pat, cot, r, act, recompute)
            }
            Pat::Tuple(t) => {
                for (i, e) in t.elems.iter().enumerate() {
                    let idx = syn::Index::from(i);
                    self.bind_param(e, quote!(#cot.#idx), false, active, recompute);
                }
            }
            Pat::Paren(p) => self.bind_param(&p.pat, cot, is_ref, active, recompute),
            Pat::Wild(_) => {}
            other => self.err(other, "mochi: this parameter pattern is not supported; bind the parameter to a name and destructure it in the body"),
        }
    }

    /// Lowers statements; returns the tail value when `want_tail`.
    fn lower_stmts(&mut self, stmts: &[Stmt], code: &mut Code, want_tail: bool) -> Option<Operand> {
        for (i, s) in stmts.iter().enumerate() {
            let last = i + 1 == stmts.len();
            if last && want_tail {
                if let Stmt::Expr(e, None) = s {
                    // `if c { 1.0 } else { -1.0 }` whose arms hold only constants: its
                    // value is a constant, computed as written.
                    if constant_arms(e, &self.active) && !self.may_exit(s) {
                        return Some(Operand::Inactive(quote!(#e)));
                    }
                    if is_control_flow_stmt(e) && !expr_is_active(e, &self.active) {
                        // (A `match` or an `if` that has a value, every arm ending in
                        // one, `match s { Shape::Circle { r } => PI * r * r, .. }` of a
                        // choice: that value, a constant.)
                        if yields_value(e) {
                            return self.lower_control_value(e, code, true);
                        }
                        self.lower_stmt(s, code);
                        return None;
                    }
                    return Some(self.lower_expr(e, code));
                }
            }
            self.lower_stmt(s, code);
            if !last && self.may_exit(s) {
                let flags = self.exit_flags();
                let rest = &stmts[i + 1..];
                if want_tail {
                    if let Some(Stmt::Expr(e, None)) = rest.last() {
                        self.err(e, "mochi: a block with a value after a `break`, `continue` or `return` inside it is not supported; assign the value to a variable declared before the block");
                    }
                }
                self.guarded(quote!(!(#flags)), rest, code);
                return None;
            }
        }
        None
    }

    /// The flags that end the current block early.
    fn exit_flags(&self) -> TokenStream {
        let mut parts = Vec::new();
        if let Some(l) = self.loops.last() {
            if let Some(b) = &l.brk {
                parts.push(quote!(#b));
            }
            if let Some(c) = &l.cnt {
                parts.push(quote!(#c));
            }
        }
        if let Some(r) = &self.returned {
            parts.push(quote!(#r));
        }
        if parts.is_empty() {
            quote!(false)
        } else {
            quote!(#(#parts)||*)
        }
    }

    fn may_exit(&self, s: &Stmt) -> bool {
        Exits::of([s], None).leaves(!self.loops.is_empty())
    }

    /// `if cond { rest }`, with the branch saved.
    fn guarded(&mut self, cond: TokenStream, rest: &[Stmt], code: &mut Code) {
        let c = self.fresh("c");
        code.fwd.push(Fwd::Primal(quote!(let #c: bool = #cond;)));
        let get = self.save(quote!(#c), code);
        self.nest_depth += 1;
        self.scopes.push(HashMap::new());
        let mut inner = Code::default();
        self.lower_stmts(rest, &mut inner, false);
        self.scopes.pop();
        self.nest_depth -= 1;
        code.fwd.push(Fwd::If {
            cond: quote!(#c),
            then: inner.fwd,
            els: None,
        });
        code.rev.push(Rev::If {
            cond: get,
            then: inner.rev,
            els: Vec::new(),
        });
    }

    // ------------------------------------------------------------------ statements

    fn lower_stmt(&mut self, s: &Stmt, code: &mut Code) {
        match s {
            Stmt::Local(l) => self.lower_local(l, code),
            Stmt::Item(item) => code.fwd.push(Fwd::Primal(quote!(#item))),
            Stmt::Macro(m) => self.lower_macro_stmt(&m.mac, quote!(#s), code),
            Stmt::Expr(e, _) => self.lower_expr_stmt(e, code),
        }
    }

    fn lower_macro_stmt(&mut self, mac: &syn::Macro, tokens: TokenStream, code: &mut Code) {
        let name = expr::macro_name(mac);
        const ALLOWED: &[&str] = &[
            "println",
            "print",
            "eprintln",
            "eprint",
            "assert",
            "assert_eq",
            "assert_ne",
            "debug_assert",
            "debug_assert_eq",
            "debug_assert_ne",
            "dbg",
            "panic",
            "unreachable",
            "todo",
            "unimplemented",
            "write",
            "writeln",
            "format",
            // (The desugaring's refusals, at the statement they refuse.)
            "compile_error",
        ];
        if ALLOWED.contains(&name.as_str()) {
            code.fwd.push(Fwd::Primal(quote!(#tokens;)));
        } else {
            self.err(
                mac,
                format!("mochi: the macro `{name}!` cannot be differentiated; expand it by hand, or wrap a constant in `mochi::no_grad(..)`"),
            );
        }
    }

    fn lower_local(&mut self, l: &syn::Local, code: &mut Code) {
        if let Some(init) = &l.init {
            if let Some((_, diverge)) = &init.diverge {
                self.err(diverge, "mochi: `let … else` is not supported; use `match`");
                return;
            }
        }
        let attrs = &l.attrs;
        let mut names = Vec::new();
        pat_names(&l.pat, &mut names);
        let any_active = names.iter().any(|n| self.active.contains(n));
        let (pat, ty) = match &l.pat {
            Pat::Type(t) => (&*t.pat, Some(&*t.ty)),
            p => (p, None),
        };
        // `let m: BTreeMap<usize, f64> = x.iter().copied().enumerate().collect();`: a map
        // or a set of differentiable values, which has no tangent type.
        let map_type = matches!(ty, Some(syn::Type::Path(tp)) if tp.path.segments.last()
            .is_some_and(|s| crate::desugar::MAPS.contains(&s.ident.to_string().as_str())));
        // (Filled later by `insert`: the error is the `insert`'s.)
        let filled_here = l
            .init
            .as_ref()
            .is_some_and(|i| crate::activity::expr_is_active(&i.expr, &self.active));
        if map_type && any_active && filled_here {
            self.err(
                &l.pat,
                "mochi: a map or a set (`HashMap`, `BTreeMap`, …) cannot hold differentiable values (it has no tangent type); keep them in a `Vec` indexed by position (a key's position from a map of constants, `index[&k]`)",
            );
            return;
        }
        let is_array = matches!(ty, Some(syn::Type::Array(_)))
            || l.init
                .as_ref()
                .is_some_and(|i| matches!(&*i.expr, Expr::Array(_) | Expr::Repeat(_)));
        for n in &names {
            if is_array && names.len() == 1 {
                self.array_locals.insert(n.clone());
            } else {
                self.array_locals.remove(n);
            }
        }
        // A local holding the user's structs (`let w: Vec<Layer> = ..`, `let w =
        // v.to_vec()` of such a parameter) or one of them (`let l = w[k].clone();`): its
        // methods, and its elements', are the user's.
        if let [n] = names.as_slice() {
            // (Also `let l = ls[k].clone();` and `let l = &ls[k];`, how a `for` and a
            // chain over them bind an element.)
            let copies_seq = l.init.as_ref().is_some_and(|i| {
                let mut e = crate::desugar::unparen(&i.expr);
                if let Expr::Reference(r) = e {
                    e = crate::desugar::unparen(&r.expr);
                }
                if let Expr::MethodCall(m) = e {
                    if m.args.is_empty()
                        && matches!(m.method.to_string().as_str(), "to_vec" | "clone" | "to_owned")
                    {
                        e = crate::desugar::unparen(&m.receiver);
                    }
                }
                // `vec![P { x: 1.0, v: x[0] }, ..]` (also `[P { .. }; n]`): struct literals.
                if crate::desugar::struct_literals(e) {
                    return true;
                }
                if let Expr::Index(i) = e {
                    // An element of a field of `self` or of a parameter of the user's
                    // type (`self.layers[k]`).
                    let base = crate::desugar::unparen(&i.expr);
                    if matches!(base, Expr::Field(_))
                        && crate::activity::root_name(base).is_some_and(|r| {
                            r == "self" || self.receivers.contains_key(&r)
                        })
                    {
                        return true;
                    }
                    e = base;
                }
                matches!(e, Expr::Path(p)
                    if p.path.get_ident().is_some_and(|i| self.struct_seqs.contains(&i.to_string())))
            });
            if copies_seq
                || ty.is_some_and(|t| crate::desugar::Receiver::user_elements(t).is_some())
            {
                self.struct_seqs.insert(n.clone());
            } else {
                self.struct_seqs.remove(n);
            }
        }
        let ty_is_ref = ty.is_some_and(activity::type_is_ref);
        let ty_tokens = ty.map(|t| quote!(: #t));
        let Some(init) = &l.init else {
            // `let x;` / `let x: T;`
            code.fwd
                .push(Fwd::Primal(quote!(#(#attrs)* let #pat #ty_tokens;)));
            self.bind_pattern_fresh(pat, any_active, ty_is_ref, code, false);
            return;
        };
        let init_expr = &*init.expr;
        // `let s = r.slot(1); *s *= x[0];` of a method of the crate's returning `&mut
        // f64` (called as written: its result is a reference), the binding written with
        // a derivative after: the write reaches `r` by a way the derivation does not
        // follow.
        if let Expr::MethodCall(m) = crate::desugar::unparen(init_expr) {
            if any_active
                && crate::twin::plain_user_method(&m.method.to_string())
                && mentions_any(&m.receiver, &self.active)
            {
                self.err(
                    &l.pat,
                    format!("mochi: this binding holds the reference `.{}(..)` returned, and a write through it is not followed by the derivation; write the place itself (`r.buf[i] *= ..`), or do the write inside a `&mut self` method marked `#[differentiable]`", m.method),
                );
                self.refused.extend(names.iter().cloned());
                return;
            }
        }
        let init_active = expr_is_active(init_expr, &self.active);
        // A constant initial value binds an inactive variable when nothing can make the
        // binding active later: no active name takes this value, or the binding is not
        // `mut` (it keeps its value whatever other bindings of the same name do).
        let constant =
            !init_active && (!mentions_any(init_expr, &self.active) || is_no_grad(init_expr));
        let stays_constant =
            !pattern_is_mut(pat) || (!any_active && !mentions_any(init_expr, &self.active));
        // `let mut b: Vec<i64> = x.iter().map(|v| (v * 2.0).floor() as i64).collect();`:
        // a type written without a tangent holds no derivative, whatever it is made of,
        // when making it changes nothing else (no `&mut`, no assignment, only reading
        // methods: `let c: bool = s.bump();` may write `s`, whose derivative goes on).
        let typed_constant = !any_active
            && ty.is_some_and(activity::type_is_inactive)
            && only_reads(init_expr, &self.mut_refs);
        if (constant && stays_constant) || typed_constant {
            code.fwd.push(Fwd::Primal(
                quote!(#(#attrs)* let #pat #ty_tokens = #init_expr;),
            ));
            self.bind_pattern_inactive(pat);
            // `let icf_sz = d * (d + 1) / 2;` at the top of the body, not `mut`, from
            // recomputable values: indices using it are recomputed in the reverse sweep
            // (which sees the top-level bindings) instead of saved per use.
            if let Pat::Ident(p) = pat {
                if p.mutability.is_none()
                    && p.subpat.is_none()
                    && self.loop_depth == 0
                    && self.nest_depth == 0
                    && !self.rebound.contains(&p.ident.to_string())
                    && self.recomputable_with(init_expr, true)
                {
                    if let Some(b) = self
                        .scopes
                        .last_mut()
                        .and_then(|s| s.get_mut(&p.ident.to_string()))
                    {
                        b.recompute = true;
                    }
                }
            }
            return;
        }
        // `let part = &x[a..b];`: a sub-slice of a differentiable sequence, whose
        // cotangent goes back into the range of `x`'s (as for a sub-slice argument).
        if any_active {
            if let Some((o, back)) = self.subslice_arg(init_expr, code) {
                let val = o.val();
                code.fwd
                    .push(Fwd::Primal(quote!(#(#attrs)* let #pat #ty_tokens = #val;)));
                code.rev.push(back);
                let adj = self.bind_pattern_fresh(pat, true, true, code, true);
                code.rev.push(Rev::back_into(o.cot(), adj));
                return;
            }
        }
        // `let mut it = x.iter().peekable();` that the desugaring did not write as a
        // position (see `desugar::inline_held_iters`): an iterator value has no cotangent.
        if init_active {
            let mut e = crate::desugar::unparen(init_expr);
            while let Expr::MethodCall(m) = e {
                if !matches!(
                    m.method.to_string().as_str(),
                    "copied" | "cloned" | "peekable" | "by_ref"
                ) {
                    break;
                }
                e = crate::desugar::unparen(&m.receiver);
            }
            if matches!(e, Expr::MethodCall(m) if m.args.is_empty()
                && matches!(m.method.to_string().as_str(), "iter" | "iter_mut" | "into_iter"))
            {
                self.err(init_expr, "mochi: an iterator over a differentiable sequence held in a variable is supported when it is read with `it.next()` and then consumed (`for v in it`, `it.map(..).sum()`); this one is used otherwise (`it.peek()`, handed to a call, bound again, or its sequence assigned while it is held); read the sequence by index (`x[k]`, `x.get(k + 1)`) instead");
                return;
            }
        }
        let o = self.lower_expr(init_expr, code);
        let mut val = o.val();
        // `let a = *v;`, `let [a, b] = *x;` of `x: &[f64; 2]` (also a tuple pattern):
        // `*v` lowers to the reference, so the binding reads through it (copies, as in
        // Rust).
        let deref_init = matches!(init_expr, Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)));
        let copied = deref_init && matches!(&o, Operand::Active { is_ref: true, .. });
        if copied {
            val = quote!(*#val);
        }
        // `let v = &x[i];`: the element is read by value; `v` stays a reference to it,
        // as written, so that `*v < 0.0` and `v.abs()` in code without a derivative
        // (conditions, indices) read it as the user's code does.
        let borrowed = matches!(init_expr, Expr::Reference(r) if r.mutability.is_none())
            && matches!(&o, Operand::Active { is_ref: false, .. })
            && matches!(pat, Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none());
        if borrowed {
            val = quote!(&#val);
        }
        code.fwd
            .push(Fwd::Primal(quote!(#(#attrs)* let #pat #ty_tokens = #val;)));
        let is_ref = borrowed
            || !copied
                && (match &o {
                    Operand::Active { is_ref, .. } => *is_ref,
                    Operand::Inactive(_) => matches!(init_expr, Expr::Reference(_)),
                } || ty_is_ref);
        if !any_active {
            self.bind_pattern_inactive(pat);
            return;
        }
        let back = self.bind_pattern_fresh(pat, true, is_ref, code, true);
        // `let y0: &[f64] = &[a, b];` (how an inlined helper binds a parameter given
        // `&[a, b]`), `let s: &[f64] = &z;` of an array `z`, `let to: &[f64] =
        // __mochi_carg0;` of a closure's parameter given `&z`: the array's cotangent
        // takes the slice's, a `Vec` (a `Vec`'s or a slice's takes it as it is). Before
        // 2026-12-06 only a literal: a type error at the attribute for a name.
        let named = |e: &Expr| matches!(crate::desugar::unparen(e), Expr::Path(p) if p.path.get_ident().is_some());
        let array_as_slice = matches!(ty, Some(syn::Type::Reference(r)) if matches!(&*r.elem, syn::Type::Slice(_)))
            && match crate::desugar::unparen(init_expr) {
                Expr::Reference(r) => {
                    matches!(
                        crate::desugar::unparen(&r.expr),
                        Expr::Array(_) | Expr::Repeat(_)
                    ) || named(&r.expr)
                }
                e => named(e),
            };
        match (o.cot(), array_as_slice) {
            (Some(c), true) => code.rev.push(Rev::Acc {
                into: c.clone(),
                value: back,
                how: AccKind::From,
            }),
            (c, _) => code.rev.push(Rev::back_into(c, back)),
        }
        self.record_local_shape(pat, init_expr, code);
    }

    /// Binds the names of `pat` as new variables; returns the reverse expression that
    /// takes their cotangents back in the shape of the pattern.
    fn bind_pattern_fresh(
        &mut self,
        pat: &Pat,
        active: bool,
        is_ref: bool,
        code: &mut Code,
        pin_now: bool,
    ) -> Adj {
        match pat {
            Pat::Ident(p) => {
                let name = p.ident.to_string();
                if !active || !self.active.contains(&name) {
                    self.bind_inactive(name);
                    return Adj::Zero;
                }
                let ident = &p.ident;
                let (cot, pin) = self.new_cot(&quote!(#ident));
                if pin_now {
                    code.fwd.push(pin);
                } else {
                    // pinned at the first assignment
                    self.pending_pins.insert(name.clone(), pin);
                }
                self.bind(
                    name,
                    Binding {
                        active: true,
                        cot: cot.clone(),
                        is_ref,
                        recompute: false,
                        param: false,
                        fixed: false,
                    },
                );
                Adj::Take(cot)
            }
            Pat::Tuple(t) => {
                let parts: Vec<_> = t
                    .elems
                    .iter()
                    .map(|e| self.bind_pattern_fresh(e, active, false, code, pin_now))
                    .collect();
                Adj::Pattern(parts, Brackets::Tuple)
            }
            // `let [a, b, c] = [..];`: an array's cotangent is an array.
            Pat::Slice(t) if !t.elems.iter().any(|e| matches!(e, Pat::Rest(_))) => {
                let parts: Vec<_> = t
                    .elems
                    .iter()
                    .map(|e| self.bind_pattern_fresh(e, active, false, code, pin_now))
                    .collect();
                Adj::Pattern(parts, Brackets::Array)
            }
            Pat::Paren(p) => self.bind_pattern_fresh(&p.pat, active, is_ref, code, pin_now),
            Pat::Type(t) => {
                let r = activity::type_is_ref(&t.ty);
                self.bind_pattern_fresh(&t.pat, active, r, code, pin_now)
            }
            Pat::Wild(_) => Adj::Zero,
            other => {
                self.err(
                    other,
                    "mochi: only names, `_`, and tuples and arrays of them (without `..`) can bind a differentiable value",
                );
                Adj::Zero
            }
        }
    }

    /// An unsuffixed float literal with the function's float type, if it has one; beside
    /// `partner` (the other operand, a method's receiver) of the other float type
    /// (`a * 2.0` of `a = x[0] as f32` in a function over `f64`), with that type.
    pub(super) fn typed_literal(&self, e: &Expr, partner: Option<&Expr>) -> Option<TokenStream> {
        let own = self.float_ty.as_ref()?;
        let other = partner.and_then(|p| other_float(p, own, &self.other_floats));
        let ty = other.as_ref().unwrap_or(own);
        match e {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Float(f),
                ..
            }) if f.suffix().is_empty() => {
                Some(crate::rewrite::typed_float(f.base10_digits(), ty, f.span()))
            }
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => {
                let inner = self.typed_literal(&u.expr, partner)?;
                Some(quote!(-#inner))
            }
            Expr::Paren(p) => self.typed_literal(&p.expr, partner),
            _ => None,
        }
    }

    fn bind_inactive(&mut self, name: String) {
        self.bind(
            name,
            Binding {
                active: false,
                cot: TokenStream::new(),
                is_ref: false,
                recompute: false,
                param: false,
                fixed: false,
            },
        );
    }

    /// Marks the inactive binding `name` as a reference to an element of a constant
    /// sequence, which rule calls take as the element (`&*p`).
    fn mark_element_ref(&mut self, name: &str) {
        if let Some(b) = self.scopes.last_mut().and_then(|s| s.get_mut(name)) {
            if !b.active {
                b.is_ref = true;
            }
        }
    }

    fn bind_pattern_inactive(&mut self, pat: &Pat) {
        let mut names = Vec::new();
        pat_names(pat, &mut names);
        for n in names {
            self.bind_inactive(n);
        }
    }

    fn lower_expr_stmt(&mut self, e: &Expr, code: &mut Code) {
        if let Some(w) = ViewWrite::parse(e) {
            if place_is_active(&w.place, &self.active) {
                self.lower_view_write(w, code);
                return;
            }
        }
        match e {
            Expr::Assign(a) => self.lower_assign(&a.left, &a.right, code),
            Expr::Binary(b) if compound_op(&b.op).is_some() => {
                let op = compound_op(&b.op).unwrap();
                let left = &b.left;
                let right = &b.right;
                if expr_is_active(right, &self.active) || place_is_active(left, &self.active) {
                    // In parentheses, or in braces for what parentheses cannot hold (a
                    // labelled `loop`, whose use as a value `lower_expr` reports; a
                    // valued one was rewritten before).
                    let right = match &**right {
                        Expr::Loop(_) | Expr::While(_) | Expr::ForLoop(_) => quote!({ #right }),
                        _ => quote!((#right)),
                    };
                    let rhs: Expr = match op {
                        "+" => parse_quote!(#left + #right),
                        "-" => parse_quote!(#left - #right),
                        "*" => parse_quote!(#left * #right),
                        "/" => parse_quote!(#left / #right),
                        _ => parse_quote!(#left % #right),
                    };
                    self.lower_assign(left, &rhs, code);
                } else if matches!(op, "*" | "/" | "%")
                    && mentions_any(left, &self.active)
                    && Place::parse(left).is_none()
                {
                    // `*m.w_mut() *= 3.0`: a write through a reference a call returned,
                    // whose factor would be lost.
                    self.err(left, "mochi: `*=`, `/=` or `%=` through this place is not supported (the reference it writes through comes from a call); write to the element itself (`v[i] *= c`, `m.w *= c`)");
                } else {
                    code.fwd.push(Fwd::Primal(quote!(#e;)));
                }
            }
            Expr::If(_) | Expr::Match(_) | Expr::Block(_)
                if mentions_any(e, &self.active) || self.may_exit(&Stmt::Expr(e.clone(), None)) =>
            {
                self.lower_control_value(e, code, false);
            }
            Expr::While(w) => self.lower_while(w, code),
            Expr::Loop(l) => self.lower_loop(l, code),
            Expr::ForLoop(f) => self.lower_for(f, code),
            Expr::Break(b) => {
                if b.expr.is_some() {
                    self.err(b, "mochi: `break` with a value is not supported; assign the value to a variable declared before the loop");
                    return;
                }
                self.lower_loop_exit(b, b.label.as_ref(), false, code);
            }
            Expr::Continue(c) => self.lower_loop_exit(c, c.label.as_ref(), true, code),
            Expr::Return(r) => self.lower_return(r, code),
            Expr::Macro(m) => self.lower_macro_stmt(&m.mac, quote!(#e), code),
            _ => {
                if expr_is_active(e, &self.active) || mentions_any(e, &self.active) {
                    let _ = self.lower_expr(e, code);
                } else {
                    code.fwd.push(Fwd::Primal(quote!(#e;)));
                }
            }
        }
    }

    /// `break`/`continue` (`cont`), with an optional label: the flags of every loop it
    /// leaves are set, and the target's `continue` flag for a `continue`.
    fn lower_loop_exit(
        &mut self,
        at: &impl ToTokens,
        label: Option<&syn::Lifetime>,
        cont: bool,
        code: &mut Code,
    ) {
        let what = if cont { "continue" } else { "break" };
        let target = match label {
            None => self.loops.len().checked_sub(1),
            Some(l) => {
                let name = l.ident.to_string();
                self.loops
                    .iter()
                    .rposition(|f| f.label.as_deref() == Some(name.as_str()))
            }
        };
        let Some(target) = target else {
            self.err(at, format!("mochi: `{what}` outside a loop"));
            return;
        };
        let mut sets = Vec::new();
        for (k, f) in self.loops.iter().enumerate().skip(target) {
            let flag = if k == target && cont { &f.cnt } else { &f.brk };
            match flag {
                Some(flag) => sets.push(quote!(#flag = true;)),
                None => {
                    self.err(at, format!("mochi: this `{what}` leaves a loop over a differentiable sequence, which cannot stop early; iterate over indices (`for i in 0..x.len()`)"));
                    return;
                }
            }
        }
        code.fwd.push(Fwd::Primal(quote!(#(#sets)*)));
    }

    fn lower_return(&mut self, r: &syn::ExprReturn, code: &mut Code) {
        let (Some(flag), Some(rv), Some(rc)) = (
            self.returned.clone(),
            self.ret_val.clone(),
            self.ret_cot.clone(),
        ) else {
            // A final `return e;` in a body without early returns.
            self.err(r, "mochi: internal: unexpected `return`");
            return;
        };
        let o = match &r.expr {
            Some(e) => self.lower_expr(e, code),
            None => Operand::Inactive(quote!(())),
        };
        let mut val = o.val();
        // `return *first;` of a binding to an element (`let first = &x[0];`): the operand
        // is the reference, and the value returned its copy.
        if matches!(&o, Operand::Active { is_ref: true, .. })
            && r.expr.as_deref().is_some_and(is_deref)
        {
            val = quote!(::core::clone::Clone::clone(#val));
        } else if matches!(&r.expr, Some(e) if matches!(crate::desugar::unparen(e), Expr::Path(p) if p.path.get_ident().is_some()))
        {
            val = quote!(::core::clone::Clone::clone(&#val));
        }
        code.fwd.push(Fwd::Primal(
            quote!(#rv = ::core::option::Option::Some(#val); #flag = true;),
        ));
        let value = Adj::Take(quote!(#rc));
        code.rev.push(Rev::back_into(o.cot(), value));
    }

    // ------------------------------------------------------------------ places

    fn lower_assign(&mut self, left: &Expr, right: &Expr, code: &mut Code) {
        let Some(place) = Place::parse(left) else {
            self.err(left, "mochi: assignment to this place is not supported; assign to a variable, a field, or an element `x[i]`, `m[i][j]`, `t[i][j][k]`");
            return;
        };
        let root = place.root.to_string();
        let binding = self.lookup(&root).cloned();
        let root_active = binding.as_ref().is_some_and(|b| b.active);
        if !root_active {
            if expr_is_active(right, &self.active) && !self.refused.contains(&root) {
                self.err(left, format!("mochi: `{root}` receives a differentiable value but is not tracked; declare it with `let` inside the function"));
            }
            if mentions_any(right, &self.active) {
                let o = self.lower_expr(right, code);
                let v = o.val();
                code.fwd.push(Fwd::Primal(quote!(#left = #v;)));
            } else {
                code.fwd.push(Fwd::Primal(quote!(#left = #right;)));
            }
            return;
        }
        let binding = binding.unwrap();
        let o = self.lower_expr(right, code);
        let val = o.val();
        let (fwd_place, take) = self.place_write(&place, &binding, code);
        code.fwd.push(Fwd::Primal(quote!(#fwd_place = #val;)));
        if place.fields.is_empty() && place.index.is_none() {
            if let Some(pin) = self.pending_pins.remove(&root) {
                code.fwd.push(pin);
            }
        }
        code.rev.push(Rev::back_into(o.cot(), take));
    }

    /// A write through a mutable view of an array (`b.row_mut(i).assign(&v)`,
    /// `b.slice_mut(s![..]).fill(c)`): in place. The selector's arguments are saved
    /// (unless recomputable) with the array's shape; the reverse sweep takes the view's
    /// part of the array's cotangent out (`view_take`, or its sum for `fill`) and adds
    /// it into the source's.
    fn lower_view_write(&mut self, w: ViewWrite, code: &mut Code) {
        let place = Place::parse(&w.place).expect("checked by place_is_active");
        let Some(binding) = self.lookup(&place.root.to_string()).cloned() else {
            self.err(
                &w.place,
                "mochi: internal: a view is written of a variable not in scope",
            );
            return;
        };
        let o = self.lower_expr(&w.value, code);
        let val = o.val();
        let root = &place.root;
        let fields = &place.fields;
        let deref = place.deref.then(|| quote!(*));
        let target = quote!((#deref #root) #(.#fields)*);
        let args = &w.args;
        let tuple: Expr = parse_quote!((#(#args,)*));
        let fill = w.fill;
        let sh = |_: &TokenStream| {
            let shape = ir::rt::shape_of(&target);
            if fill {
                shape
            } else {
                let source = ir::rt::shape_of(&quote!(#val));
                quote!((#shape, #source))
            }
        };
        let (f, pre, r, h) = self.index_parts(&tuple, Some(&sh), code);
        let names: Vec<Ident> = (0..args.len())
            .map(|k| format_ident!("__mochi_sel{}", k))
            .collect();
        let sel = &w.sel;
        let (write, take) = if w.fill {
            (quote!(fill(#val)), quote!(view_take_sum))
        } else {
            (quote!(assign(&#val)), quote!(view_take))
        };
        code.fwd.push(Fwd::Primal(quote!({
            let (#(#names,)*) = #f;
            #target.#sel(#(#names),*).#write;
        })));
        let cot = &binding.cot;
        let cot_place = quote!(#cot #(.#fields)*);
        let adj = Adj::Raw(quote!({
            #pre
            let (#(#names,)*) = #r;
            ::mochi::__private::#take(&mut #cot_place, &#h, |__mochi_a| __mochi_a.#sel(#(#names),*))
        }));
        code.rev.push(Rev::back_into(o.cot(), adj));
    }

    /// The forward place and the reverse "take the cotangent of this place" expression.
    fn place_write(&mut self, place: &Place, b: &Binding, code: &mut Code) -> (TokenStream, Adj) {
        let root = &place.root;
        let fields = &place.fields;
        let cot = &b.cot;
        let cot_place = quote!(#cot #(.#fields)*);
        let deref = place.deref.then(|| quote!(*));
        match &place.index {
            None => (quote!((#deref #root) #(.#fields)*), Adj::Take(cot_place)),
            Some(idx) => {
                // The shape lets the reverse sweep write out a structured cotangent
                // (an array in broadcast form) before taking one element of it.
                let (access, pre, rev_idx, shape) = self.index_with_shape(place, b, idx, code);
                (
                    quote!(#root #(.#fields)* #access),
                    Adj::TakeElement {
                        pre,
                        place: cot_place,
                        shape,
                        index: rev_idx,
                    },
                )
            }
        }
    }

    /// An index for the forward sweep and the reverse sweep: recomputed when it depends
    /// only on loop variables, literals and integer parameters, else saved. With
    /// `shape` (the forward expression of the container's shape, when it is not a
    /// parameter's), the shape is saved too. Returns the forward index, a reverse
    /// prelude, the reverse index and the reverse shape.
    fn index_parts(
        &mut self,
        idx: &Expr,
        shape: Option<&dyn Fn(&TokenStream) -> TokenStream>,
        code: &mut Code,
    ) -> (TokenStream, TokenStream, TokenStream, TokenStream) {
        let recompute = self.recomputable(idx);
        match (recompute, shape) {
            (true, None) => (
                quote!(#idx),
                TokenStream::new(),
                quote!(#idx),
                TokenStream::new(),
            ),
            (false, None) => {
                let i = self.fresh("i");
                code.fwd.push(Fwd::Let {
                    name: i.clone(),
                    value: quote!(#idx),
                });
                let get = self.save(quote!(#i), code);
                let ri = self.fresh("ri");
                (
                    quote!(#i),
                    quote!(let #ri = #get;),
                    quote!(#ri),
                    TokenStream::new(),
                )
            }
            (true, Some(h)) => {
                let hs = self.fresh("h");
                let h = h(&quote!(#idx));
                code.fwd.push(Fwd::Let {
                    name: hs.clone(),
                    value: h,
                });
                let get = self.save(quote!(#hs), code);
                let rh = self.fresh("rh");
                (
                    quote!(#idx),
                    quote!(let #rh = #get;),
                    quote!(#idx),
                    quote!(#rh),
                )
            }
            (false, Some(h)) => {
                let i = self.fresh("i");
                let hs = self.fresh("h");
                let h = h(&quote!(#i));
                code.fwd.push(Fwd::Let {
                    name: i.clone(),
                    value: quote!(#idx),
                });
                code.fwd.push(Fwd::Let {
                    name: hs.clone(),
                    value: h,
                });
                let get = self.save(quote!((#i, #hs)), code);
                let (ri, rh) = (self.fresh("ri"), self.fresh("rh"));
                (
                    quote!(#i),
                    quote!(let (#ri, #rh) = #get;),
                    quote!(#ri),
                    quote!(#rh),
                )
            }
        }
    }

    fn recomputable(&self, e: &Expr) -> bool {
        self.recomputable_with(e, false)
    }

    /// [`Self::recomputable`], and with `lengths` also the length of a variable
    /// (`x.len()`, `m.nrows()`, `m.ncols()`): for the value of a binding at the top of the
    /// body, which the reverse sweep sees as it was bound.
    fn recomputable_with(&self, e: &Expr, lengths: bool) -> bool {
        let r = |e: &Expr| self.recomputable_with(e, lengths);
        match e {
            Expr::MethodCall(m) if lengths => {
                m.args.is_empty()
                    && matches!(m.method.to_string().as_str(), "len" | "nrows" | "ncols")
                    && matches!(&*m.receiver, Expr::Path(p) if p.path.get_ident().is_some())
            }
            Expr::Lit(_) => true,
            // A window's index and length (`let w = &x[a..b];`, `split_at`): checks, then
            // arithmetic.
            Expr::Call(c) => {
                matches!(&*c.func, Expr::Path(p)
                    if p.path.segments.len() > 2
                        && p.path.segments.iter().any(|s| s.ident == "__private")
                        && p.path.segments.last().is_some_and(|s| s.ident == "window_at" || s.ident == "window_len"))
                    && c.args.iter().all(r)
            }
            Expr::Path(p) => match p.path.get_ident() {
                Some(i) => self.name_is(i, |b| b.recompute),
                None => p.path.segments.len() > 1, // constants such as `usize::MAX`
            },
            Expr::Binary(b) => r(&b.left) && r(&b.right),
            Expr::Paren(p) => r(&p.expr),
            Expr::Group(g) => r(&g.expr),
            Expr::Cast(c) => r(&c.expr),
            Expr::Tuple(t) => t.elems.iter().all(r),
            Expr::Array(a) => a.elems.iter().all(r),
            Expr::Unary(u) => r(&u.expr),
            _ => false,
        }
    }

    /// Whether the name `i` is a binding in scope of which `f` holds, or else a constant
    /// item (`HALF_LN_2PI`).
    fn name_is(&self, i: &Ident, f: impl Fn(&Binding) -> bool) -> bool {
        let n = i.to_string();
        match self.lookup(&n) {
            Some(b) => f(b),
            None => is_constant_name(&n),
        }
    }

    /// Whether `e` has the same value wherever it is evaluated in one call: literals,
    /// constants (`HALF_LN_2PI`, `f64::consts::PI`) and fixed bindings
    /// ([`Binding::fixed`]), their elements and fields, combined by operators, casts and
    /// pure functions and methods (`sigma.ln()`, `T::from(0.5).unwrap()`, `w.len()`).
    /// Evaluation is not moved: only what the tape keeps of it is.
    pub(super) fn invariant(&self, e: &Expr) -> bool {
        match e {
            Expr::Index(i) => self.invariant(&i.expr) && self.invariant(&i.index),
            Expr::Field(f) => self.invariant(&f.base),
            Expr::MethodCall(m) => {
                let name = m.method.to_string();
                [
                    PURE_METHODS,
                    crate::twin::FLOAT_METHODS,
                    activity::INACTIVE_METHODS,
                ]
                .iter()
                .any(|list| list.contains(&name.as_str()))
                    && self.invariant(&m.receiver)
                    && m.args.iter().all(|a| self.invariant(a))
            }
            Expr::Call(c) => {
                matches!(&*c.func, Expr::Path(p) if p.qself.is_none()
                    && p.path.segments.len() > 1
                    && p.path.segments.last().is_some_and(|s| PURE_FUNCTIONS.contains(&s.ident.to_string().as_str())))
                    && c.args.iter().all(|a| self.invariant(a))
            }
            Expr::Lit(_) => true,
            Expr::Path(p) if p.qself.is_none() => match p.path.get_ident() {
                Some(i) => self.name_is(i, |b| b.fixed),
                // `f64::consts::PI`, `std::f64::consts::E`: an associated or module
                // constant (upper case), not a function item or a unit value
                None => p.path.segments.last().is_some_and(|s| {
                    s.arguments.is_none() && is_constant_name(&s.ident.to_string())
                }),
            },
            Expr::Binary(b) => self.invariant(&b.left) && self.invariant(&b.right),
            Expr::Unary(u) => {
                matches!(u.op, syn::UnOp::Neg(_) | syn::UnOp::Not(_)) && self.invariant(&u.expr)
            }
            Expr::Paren(p) => self.invariant(&p.expr),
            Expr::Group(g) => self.invariant(&g.expr),
            Expr::Cast(c) => self.invariant(&c.expr),
            _ => false,
        }
    }

    /// Reads a place whose root is active.
    fn lower_place_read(&mut self, place: &Place, b: &Binding, code: &mut Code) -> Operand {
        let root = &place.root;
        let fields = &place.fields;
        let cot = &b.cot;
        let cot_place = quote!(#cot #(.#fields)*);
        let t = self.fresh("t");
        match &place.index {
            None => {
                let deref = place.deref.then(|| quote!(*));
                code.fwd.push(Fwd::Let {
                    name: t.clone(),
                    value: quote!(::core::clone::Clone::clone(&(#deref #root) #(.#fields)*)),
                });
                let (tc, pin) = self.new_cot(&quote!(#t));
                code.fwd.push(pin);
                code.rev.push(Rev::Acc {
                    into: cot_place,
                    value: Adj::Take(tc.clone()),
                    how: AccKind::Plain,
                });
                Operand::Active {
                    val: quote!(#t),
                    cot: tc,
                    is_ref: false,
                }
            }
            Some(idx) => {
                let (access, pre, rev_idx, shape) = self.index_with_shape(place, b, idx, code);
                code.fwd.push(Fwd::Let {
                    name: t.clone(),
                    value: quote!(::core::clone::Clone::clone(&#root #(.#fields)* #access)),
                });
                let (tc, pin) = self.new_cot(&quote!(#t));
                code.fwd.push(pin);
                // `x[i]` of a parameter `x: &[f64]`, or of a local whose cotangent is
                // never replaced whole: the cotangent is made dense once at the top of
                // the reverse sweep, and each read adds without a check (a call inside
                // the loop would keep the loop's floats in memory).
                let name = root.to_string();
                let plain = fields.is_empty()
                    && place.inner.is_none()
                    && !place.deref
                    && !matches!(idx, Expr::Array(_) | Expr::Tuple(_) | Expr::Range(_));
                let local_shape = (!b.param && !self.mut_borrowed.contains(&name))
                    .then(|| self.local_shapes.get(&name).cloned())
                    .flatten();
                let dense = plain
                    && ((b.param && self.shared_params.contains(&name)) || local_shape.is_some());
                if dense && self.densified.insert(name) {
                    let densify = quote! {
                        use ::mochi::__private::{DensifyAny as _, DensifyVec as _};
                        ::mochi::__private::Densify(&mut #cot_place, __mochi_sh).densify();
                    };
                    self.densify.push(match &local_shape {
                        // (a local bound in a branch not taken has no shape, and no reads)
                        Some(h) => quote!(if let ::core::option::Option::Some(__mochi_sh) = #h.as_ref() { #densify }),
                        None => quote!({ let __mochi_sh = &#shape; #densify }),
                    });
                }
                code.rev.push(Rev::AccElement {
                    pre,
                    into: cot_place,
                    shape,
                    index: rev_idx,
                    from: tc.clone(),
                    dense,
                });
                Operand::Active {
                    val: quote!(#t),
                    cot: tc,
                    is_ref: false,
                }
            }
        }
    }

    /// [`index_parts`](Self::index_parts) with the container's shape for the reverse
    /// sweep: a parameter's is read once at the top, any other container's is saved
    /// with the index (the reverse sweep materialises structural zeros and writes
    /// broadcast forms out with it).
    ///
    /// The first item is the forward accessor, `[i]` or `[i][j]`; for `m[i][j]` the
    /// reverse index is the pair `(i, j)` and the shape is the outer length with the
    /// shape of row `i`, saved at each access (rows may differ in length).
    fn index_with_shape(
        &mut self,
        place: &Place,
        b: &Binding,
        idx: &Expr,
        code: &mut Code,
    ) -> (TokenStream, TokenStream, TokenStream, TokenStream) {
        let root = &place.root;
        let fields = &place.fields;
        if let Some(inner) = &place.inner {
            let pair: Expr = parse_quote!((#idx, #inner));
            let recompute = self.recomputable(&pair);
            let row = move |fi: &TokenStream| {
                if recompute {
                    quote!(#idx)
                } else {
                    quote!(#fi.0)
                }
            };
            let sh = |fi: &TokenStream| {
                let r = row(fi);
                let (outer, row) = (
                    ir::rt::shape_of(&quote!(#root #(.#fields)*)),
                    ir::rt::shape_of(&quote!(#root #(.#fields)* [#r])),
                );
                quote!((#outer, #row))
            };
            let (f, pre, r, h) = self.index_parts(&pair, Some(&sh), code);
            let access = if recompute {
                quote!([#idx][#inner])
            } else {
                quote!([#f.0][#f.1])
            };
            return (access, pre, r, h);
        }
        // (A `&mut` parameter the body resizes, `v.push(..)`, has the shape of the moment
        // of each read, saved like a local's.)
        if b.param && fields.is_empty() && !self.grown.contains(&root.to_string()) {
            let h = self.param_shape(root);
            let (f, pre, r, _) = self.index_parts(idx, None, code);
            (quote!([#f]), pre, r, quote!(#h))
        } else if let Some(h) = fields
            .is_empty()
            .then(|| self.local_shapes.get(&root.to_string()).cloned())
            .flatten()
        {
            let (f, pre, r, _) = self.index_parts(idx, None, code);
            (quote!([#f]), pre, r, quote!((*#h.as_ref().unwrap())))
        } else if let Some(len) = fields
            .is_empty()
            .then(|| self.fixed_shapes.get(&root.to_string()).cloned())
            .flatten()
        {
            let (f, pre, r, _) = self.index_parts(idx, None, code);
            (quote!([#f]), pre, r, len)
        } else {
            let sh = |_: &TokenStream| ir::rt::shape_of(&quote!(#root #(.#fields)*));
            let (f, pre, r, h) = self.index_parts(idx, Some(&sh), code);
            (quote!([#f]), pre, r, h)
        }
    }

    /// After `let name = …;` of a differentiable local bound once, outside loops, and
    /// never resized: its shape, set once into a slot declared at the top. Inside a
    /// loop, `let v = vec![e; n];` with `n` recomputable: `n` itself.
    fn record_local_shape(&mut self, pat: &Pat, init: &Expr, code: &mut Code) {
        let Pat::Ident(p) = pat else { return };
        let name = p.ident.to_string();
        if p.subpat.is_some()
            || !self.indexed.contains(&name)
            || self.rebound.contains(&name)
            || self.resized.contains(&name)
            || self.array_locals.contains(&name)
        {
            return;
        }
        if self.loop_depth > 0 {
            if let Expr::Macro(m) = init {
                if let (true, Ok(r)) = (
                    m.mac.path.is_ident("vec") && !self.mut_receivers.contains(&name),
                    m.mac.parse_body::<crate::rewrite::Repeat>(),
                ) {
                    if let Some(len) = self.fixed_len(&r.len) {
                        self.fixed_shapes.insert(name, quote!((#len)));
                    }
                }
            }
            return;
        }
        let h = self.fresh("lshape");
        self.top
            .push(quote!(let mut #h = ::core::option::Option::None;));
        let ident = &p.ident;
        let shape = ir::rt::shape_of(&quote!(#ident));
        code.fwd.push(Fwd::Primal(
            quote!(#h = ::core::option::Option::Some(#shape);),
        ));
        self.local_shapes.insert(name, h);
    }

    /// A length the reverse sweep can recompute anywhere in the body, as it computes
    /// it: literals, names bound once with a recomputable value (an integer parameter
    /// never assigned, `let n = x.len();` at the top), the length of a parameter never
    /// resized (taken once at the top), and arithmetic of those.
    fn fixed_len(&mut self, e: &Expr) -> Option<TokenStream> {
        match e {
            Expr::Lit(_) => Some(quote!(#e)),
            Expr::Path(p) => p
                .path
                .get_ident()
                .filter(|i| {
                    let n = i.to_string();
                    !self.rebound.contains(&n) && self.lookup(&n).is_some_and(|b| b.recompute)
                })
                .map(|i| quote!(#i)),
            Expr::MethodCall(m) if m.args.is_empty() && m.method == "len" => {
                let Expr::Path(p) = &*m.receiver else {
                    return None;
                };
                let i = p.path.get_ident()?;
                let n = i.to_string();
                if self.rebound.contains(&n)
                    || self.resized.contains(&n)
                    || self.mut_receivers.contains(&n)
                    || !self.lookup(&n).is_some_and(|b| b.param)
                {
                    return None;
                }
                let h = match self.param_lens.get(&n) {
                    Some(h) => h.clone(),
                    None => {
                        let h = self.fresh("plen");
                        self.top.push(quote!(let #h = #i.len();));
                        self.param_lens.insert(n, h.clone());
                        h
                    }
                };
                Some(quote!(#h))
            }
            Expr::Binary(b) => {
                let (l, r) = (self.fixed_len(&b.left)?, self.fixed_len(&b.right)?);
                let op = &b.op;
                Some(quote!(#l #op #r))
            }
            Expr::Paren(p) => self.fixed_len(&p.expr).map(|e| quote!((#e))),
            Expr::Group(g) => self.fixed_len(&g.expr),
            _ => None,
        }
    }

    fn param_shape(&mut self, root: &Ident) -> Ident {
        let key = root.to_string();
        if let Some(h) = self.param_shapes.get(&key) {
            return h.clone();
        }
        let h = self.fresh("shape");
        let shape = ir::rt::shape_of(&quote!(#root));
        self.top.push(quote!(let #h = #shape;));
        self.param_shapes.insert(key, h.clone());
        h
    }
}

/// `root.f1.f2[idx]` or `root.f1.f2[idx][inner]`: a variable, field accesses, and at
/// most two final indices (a row, then an element of it).
pub struct Place {
    pub root: Ident,
    /// `*root`: the root is a reference written through (`*acc += v` on `acc: &mut f64`).
    pub deref: bool,
    pub fields: Vec<syn::Member>,
    pub index: Option<Expr>,
    /// The second index of `m[i][j]`.
    pub inner: Option<Expr>,
}

impl Place {
    pub fn parse(e: &Expr) -> Option<Place> {
        match e {
            Expr::Path(p) => p.path.get_ident().map(|i| Place {
                root: i.clone(),
                deref: false,
                fields: Vec::new(),
                index: None,
                inner: None,
            }),
            Expr::Field(f) => {
                let mut p = Place::parse(&f.base)?;
                if p.index.is_some() {
                    return None;
                }
                p.fields.push(f.member.clone());
                Some(p)
            }
            Expr::Index(i) => {
                let mut p = Place::parse(&i.expr)?;
                match p.index {
                    None => p.index = Some((*i.index).clone()),
                    Some(ref first) => {
                        let range = |e: &Expr| matches!(e, Expr::Range(_));
                        if p.inner.is_some() || range(first) || range(&i.index) {
                            return None;
                        }
                        p.inner = Some((*i.index).clone());
                    }
                }
                Some(p)
            }
            Expr::Paren(p) => Place::parse(&p.expr),
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => {
                let mut p = Place::parse(&u.expr)?;
                if p.fields.is_empty() && p.index.is_none() {
                    p.deref = true;
                }
                Some(p)
            }
            _ => None,
        }
    }
}

fn pattern_is_mut(p: &Pat) -> bool {
    match p {
        Pat::Ident(i) => i.mutability.is_some(),
        Pat::Tuple(t) => t.elems.iter().any(pattern_is_mut),
        Pat::Type(t) => pattern_is_mut(&t.pat),
        Pat::Paren(p) => pattern_is_mut(&p.pat),
        Pat::Reference(r) => pattern_is_mut(&r.pat),
        _ => false,
    }
}

fn is_no_grad(e: &Expr) -> bool {
    match e {
        Expr::Call(c) => {
            matches!(&*c.func, Expr::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "no_grad"))
        }
        Expr::Paren(p) => is_no_grad(&p.expr),
        _ => false,
    }
}

/// A write through a mutable view: `place.sel(args).assign(&value)` (`fill` when
/// `fill`); `mapv_inplace(f)` and `op=` are written as an `assign` of the view read
/// through its read-only selector (`row_mut` → `row`).
struct ViewWrite {
    place: Expr,
    sel: Ident,
    args: Vec<Expr>,
    value: Expr,
    fill: bool,
}

/// The mutable views of an array the lowering writes through, and their read-only twins.
pub const VIEW_SELECTORS: &[(&str, &str)] = &[
    ("slice_mut", "slice"),
    ("row_mut", "row"),
    ("column_mut", "column"),
    ("index_axis_mut", "index_axis"),
    ("slice_axis_mut", "slice_axis"),
    ("diag_mut", "diag"),
];

impl ViewWrite {
    fn parse(e: &Expr) -> Option<ViewWrite> {
        let view = |v: &Expr| -> Option<(syn::ExprMethodCall, Ident)> {
            let Expr::MethodCall(s) = crate::desugar::unparen(v) else {
                return None;
            };
            let name = s.method.to_string();
            let (_, ro) = VIEW_SELECTORS.iter().find(|(m, _)| *m == name)?;
            Place::parse(&s.receiver).filter(|p| p.index.is_none())?;
            Some((s.clone(), format_ident!("{}", ro, span = s.method.span())))
        };
        let make = |s: syn::ExprMethodCall, value: Expr, fill: bool| ViewWrite {
            place: (*s.receiver).clone(),
            sel: s.method.clone(),
            args: s.args.iter().cloned().collect(),
            value,
            fill,
        };
        match e {
            Expr::MethodCall(m) if m.args.len() == 1 => {
                let (s, ro) = view(&m.receiver)?;
                let arg = &m.args[0];
                match m.method.to_string().as_str() {
                    "assign" => {
                        let src = match arg {
                            Expr::Reference(r) if r.mutability.is_none() => (*r.expr).clone(),
                            other => other.clone(),
                        };
                        Some(make(s, src, false))
                    }
                    "fill" => Some(make(s, arg.clone(), true)),
                    "mapv_inplace" => {
                        let (recv, args) = (&s.receiver, &s.args);
                        let value = parse_quote!(#recv.#ro(#args).mapv(#arg));
                        Some(make(s, value, false))
                    }
                    _ => None,
                }
            }
            Expr::Binary(b) => {
                let op = compound_op(&b.op)?;
                let (s, ro) = view(&b.left)?;
                let (recv, args, right) = (&s.receiver, &s.args, &b.right);
                let read = quote!(&#recv.#ro(#args));
                let value = match op {
                    "+" => parse_quote!(#read + (#right)),
                    "-" => parse_quote!(#read - (#right)),
                    "*" => parse_quote!(#read * (#right)),
                    "/" => parse_quote!(#read / (#right)),
                    _ => return None,
                };
                Some(make(s, value, false))
            }
            _ => None,
        }
    }
}

fn place_is_active(e: &Expr, active: &HashSet<String>) -> bool {
    Place::parse(e).is_some_and(|p| active.contains(&p.root.to_string()))
}

fn compound_op(op: &syn::BinOp) -> Option<&'static str> {
    use syn::BinOp::*;
    match op {
        AddAssign(_) => Some("+"),
        SubAssign(_) => Some("-"),
        MulAssign(_) => Some("*"),
        DivAssign(_) => Some("/"),
        RemAssign(_) => Some("%"),
        _ => None,
    }
}

/// Whether an `if` with an `else` or a `match` ends every branch in a value (an
/// expression, or a block whose last statement is one), as opposed to statements.
fn yields_value(e: &Expr) -> bool {
    fn ends_in_value(e: &Expr) -> bool {
        match e {
            Expr::Block(b) => {
                matches!(b.block.stmts.last(), Some(Stmt::Expr(t, None)) if ends_in_value(t))
            }
            Expr::If(_) | Expr::Match(_) => yields_value(e),
            Expr::Return(_) | Expr::Break(_) | Expr::Continue(_) | Expr::Macro(_) => false,
            Expr::Assign(_) | Expr::ForLoop(_) | Expr::While(_) | Expr::Loop(_) => false,
            Expr::Binary(b) => !crate::activity::is_arithmetic_assign(&b.op),
            _ => true,
        }
    }
    match e {
        Expr::If(i) => {
            matches!(i.then_branch.stmts.last(), Some(Stmt::Expr(t, None)) if ends_in_value(t))
                && i.else_branch
                    .as_ref()
                    .is_some_and(|(_, e)| ends_in_value(e))
        }
        Expr::Match(m) => !m.arms.is_empty() && m.arms.iter().all(|a| ends_in_value(&a.body)),
        // (`{ let __mochi_tail = *ell; __mochi_tail }`, an arm's `*ell` of a field read
        // through a reference, at the tail of a branch: its value, a constant; before,
        // the branch had `()`, "expected `T`, found `()`".)
        Expr::Block(b) if b.label.is_none() => ends_in_value(e),
        _ => false,
    }
}

/// An `if`/`match` (or a chain of `else if`s) whose arms mention no active name: only
/// its conditions may, and they are evaluated as written.
fn constant_arms(e: &Expr, active: &HashSet<String>) -> bool {
    match e {
        Expr::If(i) => {
            !matches!(&*i.cond, Expr::Let(_))
                && !mentions_any(&i.then_branch, active)
                && i.else_branch.as_ref().is_some_and(|(_, e)| match &**e {
                    Expr::If(_) => constant_arms(e, active),
                    other => !mentions_any(other, active),
                })
        }
        Expr::Match(m) => {
            !expr_is_active(&m.expr, active)
                && m.arms.iter().all(|a| {
                    !mentions_any(&a.body, active)
                        && a.guard
                            .as_ref()
                            .is_none_or(|(_, g)| !mentions_any(g, active))
                })
        }
        _ => false,
    }
}

pub(crate) fn is_control_flow_stmt(e: &Expr) -> bool {
    matches!(
        e,
        Expr::If(_)
            | Expr::Match(_)
            | Expr::While(_)
            | Expr::Loop(_)
            | Expr::ForLoop(_)
            | Expr::Block(_)
    )
}

/// Does `e` mention any active name (anywhere, as a token)?
pub fn mentions_any(e: &impl ToTokens, active: &HashSet<String>) -> bool {
    activity::mentions_active(e, active)
}

/// Does the body return before its end?
/// `if c { ..; a } else { ..; b }` (a `match` too, nested in arms and `else if`s) with
/// each arm's value returned, `if c { ..; return a; } else { ..; return b; }`; `None`
/// for a tail that is not such a choice (an `if` without `else`, another expression).
fn returned_in_arms(e: &Expr) -> Option<Expr> {
    fn block(b: &Block) -> Option<Block> {
        let mut b = b.clone();
        match b.stmts.pop() {
            Some(Stmt::Expr(v, None)) => {
                let done: Stmt = match returned_in_arms(&v) {
                    Some(arms) => Stmt::Expr(arms, None),
                    None => Stmt::Expr(parse_quote!(return #v), Some(Default::default())),
                };
                b.stmts.push(done);
                Some(b)
            }
            // (An arm that ends by leaving, `return v;`, `panic!(..)`.)
            Some(other) => {
                b.stmts.push(other);
                Some(b)
            }
            None => None,
        }
    }
    match e {
        Expr::If(i) => {
            let mut i = i.clone();
            i.then_branch = block(&i.then_branch)?;
            let (_, other) = i.else_branch.as_mut()?;
            **other = match &**other {
                Expr::Block(b) => {
                    let mut b = b.clone();
                    b.block = block(&b.block)?;
                    Expr::Block(b)
                }
                nested => returned_in_arms(nested)?,
            };
            Some(Expr::If(i))
        }
        Expr::Match(m) => {
            let mut m = m.clone();
            for arm in &mut m.arms {
                let body = match &*arm.body {
                    Expr::Block(b) => {
                        let mut b = b.clone();
                        b.block = block(&b.block)?;
                        Expr::Block(b)
                    }
                    Expr::Return(_) => (*arm.body).clone(),
                    v => match returned_in_arms(v) {
                        Some(arms) => arms,
                        None => parse_quote!({ return #v; }),
                    },
                };
                *arm.body = body;
                arm.comma = Some(Default::default());
            }
            Some(Expr::Match(m))
        }
        Expr::Block(b) if b.label.is_none() => {
            let mut b = b.clone();
            b.block = block(&b.block)?;
            Some(Expr::Block(b))
        }
        _ => None,
    }
}

fn has_early_return(stmts: &[Stmt]) -> bool {
    let n = stmts.len();
    stmts.iter().enumerate().any(|(i, s)| {
        // A final `return e;` is not early.
        if i + 1 == n {
            if let Stmt::Expr(Expr::Return(_), _) = s {
                return false;
            }
        }
        Exits::of([s], None).leaves(false)
    })
}

/// In one pass over the body: the names whose length may change after their binding
/// (the receiver of a method that resizes, `v.push(e)`, `v.truncate(n)`, …, directly or
/// through a field; a name assigned as a whole, `v = …`; one borrowed `&mut`, which a
/// callee may resize), and the names indexed directly (`v[i]`, `m[i][j]`).
/// The variable `v` of a call argument `&mut v`.
pub(super) fn mut_borrowed_var(e: &Expr) -> Option<&Ident> {
    match e {
        Expr::Reference(r) if r.mutability.is_some() => match &*r.expr {
            Expr::Path(p) => p.path.get_ident(),
            _ => None,
        },
        _ => None,
    }
}

/// The parameters of `sig` that are `mut` or whose type is a `&mut` reference (`self`
/// for `&mut self` and `mut self`): their values may change after the call begins.
pub fn changeable_params(sig: &syn::Signature) -> HashSet<String> {
    sig.inputs
        .iter()
        .filter_map(|a| match a {
            syn::FnArg::Typed(pt) => match (&*pt.pat, &*pt.ty) {
                (Pat::Ident(i), syn::Type::Reference(r)) if r.mutability.is_some() => {
                    Some(i.ident.to_string())
                }
                (Pat::Ident(i), _) if i.mutability.is_some() => Some(i.ident.to_string()),
                _ => None,
            },
            syn::FnArg::Receiver(r) => r.mutability.is_some().then(|| "self".to_string()),
        })
        .collect()
}

/// The names that may hold a `&mut` reference or be changed through one: the parameters
/// `params` that do, the roots of `&mut ..` borrows (`g(&mut a)`), and the locals bound
/// to `&mut ..`, typed with a `&mut`, bound from a `.._mut` method (`let (a,
/// b) = v.split_at_mut(k);`) or from an expression that names one of these (`let r =
/// first(acc);` of a `&mut` parameter `acc`).
fn mut_ref_bindings(body: &Block, params: &HashSet<String>) -> HashSet<String> {
    struct V<'a>(HashSet<String>, &'a HashSet<String>);
    struct MutFound(bool);
    impl<'ast> syn::visit::Visit<'ast> for MutFound {
        fn visit_expr_reference(&mut self, r: &'ast syn::ExprReference) {
            self.0 |= r.mutability.is_some();
            syn::visit::visit_expr_reference(self, r);
        }
        fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
            self.0 |= m.method.to_string().ends_with("_mut");
            syn::visit::visit_expr_method_call(self, m);
        }
        fn visit_type_reference(&mut self, r: &'ast syn::TypeReference) {
            self.0 |= r.mutability.is_some();
            syn::visit::visit_type_reference(self, r);
        }
    }
    impl<'ast> syn::visit::Visit<'ast> for V<'_> {
        // `g(&mut a)`: what `a` holds may change in `g`, whatever `a` is
        fn visit_expr_reference(&mut self, r: &'ast syn::ExprReference) {
            if r.mutability.is_some() {
                if let Some(n) = activity::root_name(&r.expr) {
                    self.0.insert(n);
                }
            }
            syn::visit::visit_expr_reference(self, r);
        }
        fn visit_local(&mut self, l: &'ast syn::Local) {
            let mut found = MutFound(false);
            syn::visit::Visit::visit_pat(&mut found, &l.pat);
            if let Some(i) = &l.init {
                syn::visit::Visit::visit_expr(&mut found, &i.expr);
                found.0 |= mentions_any(&i.expr, &self.0) || mentions_any(&i.expr, self.1);
            }
            if found.0 {
                let mut names = Vec::new();
                pat_names(&l.pat, &mut names);
                self.0.extend(names);
            }
            syn::visit::visit_local(self, l);
        }
    }
    // to a fixpoint: a local bound from one found later in the body's order
    let mut v = V(params.clone(), params);
    loop {
        let before = v.0.len();
        syn::visit::Visit::visit_block(&mut v, body);
        if v.0.len() == before {
            return v.0;
        }
    }
}

/// The names under a `&mut` anywhere in `body` (macros' tokens included), and the
/// receivers of methods other than those that only read (`v.fill(0.0)` takes `&mut v`
/// without saying so).
fn mut_borrowed_names(body: &Block) -> (HashSet<String>, HashSet<String>) {
    const READ_ONLY: &[&str] = &[
        "len",
        "is_empty",
        "iter",
        "iter_mut",
        "clone",
        "to_vec",
        "to_owned",
        "split_at",
        "first",
        "last",
        "get",
        "windows",
        "chunks",
        "chunks_exact",
        "rchunks",
        "rchunks_exact",
        "sum",
        "product",
        "dot",
        "as_slice",
        "into_iter",
        "copied",
        "cloned",
        "nrows",
        "ncols",
        "shape",
        "dim",
    ];
    struct M(HashSet<String>, HashSet<String>);
    impl<'ast> syn::visit::Visit<'ast> for M {
        fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
            if !READ_ONLY.contains(&m.method.to_string().as_str()) {
                if let Some(n) = activity::root_name(&m.receiver) {
                    self.0.insert(n);
                }
                if let Expr::Path(p) = &*m.receiver {
                    if let Some(i) = p.path.get_ident() {
                        self.1.insert(i.to_string());
                    }
                }
            }
            syn::visit::visit_expr_method_call(self, m);
        }
        fn visit_expr_reference(&mut self, r: &'ast syn::ExprReference) {
            if r.mutability.is_some() {
                if let Some(n) = activity::root_name(&r.expr) {
                    self.0.insert(n.clone());
                    self.1.insert(n);
                }
            }
            syn::visit::visit_expr_reference(self, r);
        }
        fn visit_macro(&mut self, m: &'ast syn::Macro) {
            activity::token_idents(m.tokens.clone(), &mut self.0);
            if let Some(exprs) = vec_macro_exprs(m) {
                let mut inner = M(HashSet::new(), HashSet::new());
                exprs
                    .iter()
                    .for_each(|e| syn::visit::Visit::visit_expr(&mut inner, e));
                self.1.extend(inner.1);
            } else {
                activity::token_idents(m.tokens.clone(), &mut self.1);
            }
        }
    }
    let mut m = M(HashSet::new(), HashSet::new());
    syn::visit::Visit::visit_block(&mut m, body);
    (m.0, m.1)
}

/// The expressions of `vec![e; n]` or `vec![a, b, …]`.
fn vec_macro_exprs(m: &syn::Macro) -> Option<Vec<Expr>> {
    if !m.path.is_ident("vec") {
        return None;
    }
    if let Ok(r) = m.parse_body::<crate::rewrite::Repeat>() {
        return Some(vec![r.elem, r.len]);
    }
    type List = syn::punctuated::Punctuated<Expr, syn::Token![,]>;
    m.parse_body_with(List::parse_terminated)
        .ok()
        .map(|l| l.into_iter().collect())
}

/// Methods that may change the length of their receiver (and `assign`, which may
/// change an array's shape).
pub(crate) const RESIZING_METHODS: &[&str] = &[
    "push",
    "pop",
    "insert",
    "remove",
    "swap_remove",
    "truncate",
    "clear",
    "resize",
    "resize_with",
    "extend",
    "extend_from_slice",
    "append",
    "drain",
    "retain",
    "retain_mut",
    "dedup",
    "dedup_by",
    "dedup_by_key",
    "split_off",
    "splice",
    "extend_from_within",
    "resize_mut",
    "push_row",
    "push_column",
    "append_row",
    "assign",
];

/// The names whose length may change (`resized`: also those passed as `&mut`, assigned
/// whole or named in a macro), those indexed, and those a length-changing method is
/// called on (`grown`: `v.push(..)`).
fn resized_and_indexed_names(body: &Block) -> (HashSet<String>, HashSet<String>, HashSet<String>) {
    #[derive(Default)]
    struct Names {
        resized: HashSet<String>,
        indexed: HashSet<String>,
        grown: HashSet<String>,
    }
    impl<'ast> syn::visit::Visit<'ast> for Names {
        fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
            if RESIZING_METHODS.contains(&m.method.to_string().as_str()) {
                if let Some(n) = activity::root_name(&m.receiver) {
                    self.resized.insert(n.clone());
                    self.grown.insert(n);
                }
            }
            syn::visit::visit_expr_method_call(self, m);
        }
        fn visit_expr_assign(&mut self, a: &'ast syn::ExprAssign) {
            if let Expr::Path(p) = &*a.left {
                if let Some(i) = p.path.get_ident() {
                    self.resized.insert(i.to_string());
                }
            }
            syn::visit::visit_expr_assign(self, a);
        }
        fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
            // `g(&mut v)` of a variable: the call may change `v`'s length, and the
            // lowering follows it (the kept shape is saved and set anew per call).
            self.visit_expr(&c.func);
            for a in c.args.iter().filter(|a| mut_borrowed_var(a).is_none()) {
                self.visit_expr(a);
            }
        }
        fn visit_expr_reference(&mut self, r: &'ast syn::ExprReference) {
            if r.mutability.is_some() {
                if let Some(n) = activity::root_name(&r.expr) {
                    self.resized.insert(n);
                }
            }
            syn::visit::visit_expr_reference(self, r);
        }
        fn visit_expr_index(&mut self, i: &'ast syn::ExprIndex) {
            let mut base = &*i.expr;
            while let Expr::Index(inner) = base {
                base = &inner.expr;
            }
            if let Expr::Path(p) = base {
                if let Some(id) = p.path.get_ident() {
                    self.indexed.insert(id.to_string());
                }
            }
            syn::visit::visit_expr_index(self, i);
        }
        fn visit_macro(&mut self, m: &'ast syn::Macro) {
            // `vec![e; n]` and `vec![a, b]` hold expressions; the names inside any other
            // macro's tokens are not visited: count them all as resized.
            if let Some(exprs) = vec_macro_exprs(m) {
                exprs
                    .iter()
                    .for_each(|e| syn::visit::Visit::visit_expr(self, e));
                return;
            }
            activity::token_idents(m.tokens.clone(), &mut self.resized);
        }
    }
    let mut n = Names::default();
    syn::visit::Visit::visit_block(&mut n, body);
    (n.resized, n.indexed, n.grown)
}

/// A tail expression whose value is `()` whatever it contains: a loop without `break`
/// values, an `if` without `else`.
fn unit_tail(e: &Expr) -> bool {
    match e {
        Expr::ForLoop(_) | Expr::While(_) => true,
        Expr::If(i) => i.else_branch.is_none(),
        _ => false,
    }
}

/// The order the stacks are declared in, which is the order their buffers are carved
/// from the per-thread chunk (ascending addresses): the reverse of the order the reverse
/// sweep first reads them. A helper called in a loop then lays out its stacks so that
/// the reverse sweep, which reads the calls from the last to the first, starts each call
/// on the stack right below the one it just finished (the inner loop's record of a
/// nested loop below the outer loop's, not above it): carved in declaration order, the
/// outer loop's stack of a triangular product sat above the inner loop's larger record,
/// and every call of the helper began its reverse sweep with a cache miss there.
fn carve_order<'a>(stacks: &'a [Ident], rev: &TokenStream) -> Vec<&'a Ident> {
    // Each stack's rank among the stacks' first reads; never read: `usize::MAX`.
    let mut first: HashMap<String, usize> =
        stacks.iter().map(|s| (s.to_string(), usize::MAX)).collect();
    let mut reads = 0;
    expr::collect_idents(rev, &mut |name| {
        if let Some(rank) = first.get_mut(&name) {
            if *rank == usize::MAX {
                *rank = reads;
                reads += 1;
            }
        }
    });
    let mut order: Vec<&Ident> = stacks.iter().collect();
    // Stable: stacks the reverse sweep never reads keep their order, first.
    order.sort_by_key(|s| std::cmp::Reverse(first[&s.to_string()]));
    order
}

#[cfg(test)]
mod tests {
    use super::{carve_order, Lowerer};
    use quote::{format_ident, quote};

    /// The forward declarations of a lowered function.
    fn top_of(func: syn::ItemFn) -> String {
        let mut an = crate::analysis::analyse(&func);
        let mut l = Lowerer::new(&func.sig.ident.to_string(), an.active.clone());
        l.float_ty = an.float_ty.clone();
        l.mut_refs = super::changeable_params(&func.sig);
        let lowered = l.lower_body(std::mem::take(&mut an.specs), &an.body);
        assert!(l.errors.is_empty());
        lowered.top.to_string()
    }

    /// A constant factor the same on every trip (a literal, a named constant, a binding
    /// made once and never reassigned) gets a slot of its own, and so does an operation
    /// whose operands all are (`sigma.ln()`, `sigma * sigma`); one that may differ
    /// between trips (a shadowed name, a `mut` one, one bound in an outer loop, an
    /// index or loop variable, a call) does not.
    #[test]
    fn loop_invariant_constants_get_a_slot_and_others_do_not() {
        let hoisted = |func: syn::ItemFn| top_of(func).matches("HoistSlot").count();
        assert_eq!(
            hoisted(syn::parse_quote! {
                fn f(x: &[f64], n: usize) -> f64 {
                    let h = 2.0 / n as f64;
                    let mut s = 0.0;
                    for i in 0..x.len() {
                        s += h * x[i] / 2.0 + HALF * x[i] + f64::consts::PI * x[i]
                            + x[i] / x.len() as f64 + T::from(0.5).unwrap() * x[i];
                    }
                    s
                }
            }),
            6
        );
        assert_eq!(
            hoisted(syn::parse_quote! {
                fn f(x: &[f64], d: &[f64]) -> f64 {
                    let c = 3.0;
                    let mut w = 1.0;
                    let mut s = 0.0;
                    for k in 0..2 {
                        let e = k as f64;
                        for i in 0..x.len() {
                            let c = i as f64;
                            s += c * x[i] + w * x[i] + e * x[i] + d[i] * x[i]
                                + (k as f64) * x[i] + g(3.0) * x[i] + x[i] / d[k] + e.ln() * x[i];
                            w *= 0.5;
                        }
                    }
                    s * c
                }
            }),
            0
        );
        // values changed through references: a `&mut` parameter, a `&mut` local passed
        // on, an element written through one
        assert_eq!(
            hoisted(syn::parse_quote! {
                fn f(x: &[f64], acc: &mut [f64], mut v: Vec<f64>) -> f64 {
                    let r = &mut v;
                    let q = first(acc);
                    let c = [1.0, 2.0];
                    let mut s = 0.0;
                    for i in 0..x.len() {
                        acc[0] += x[i];
                        scale(r, 2.0);
                        bump(q, x[i]);
                        s += acc[0].sin() * x[i] + x[i] * r[0] + x[i] / acc.len() as f64
                            + q.exp() * x[i];
                    }
                    s * c[0]
                }
            }),
            0
        );
        assert_eq!(
            hoisted(syn::parse_quote! {
                fn f(x: &[f64], mut a: f64, t: f64) -> f64 {
                    let mut s = 0.0;
                    for i in 0..x.len() {
                        bump(&mut a, x[i]);
                        s += a.exp() * x[i] + t * x[i];
                    }
                    s
                }
            }),
            0
        );
        assert_eq!(
            hoisted(syn::parse_quote! {
                fn f(x: &[f64], t: f64) -> f64 {
                    let sigma = t.exp();
                    let mut s = 0.0;
                    for i in 0..x.len() {
                        s += x[i] / sigma - sigma.ln() + sigma * sigma;
                    }
                    s
                }
            }),
            2
        );
    }

    /// A nested loop's reverse sweep reads the outer loop's stack (`__mochi_s2`, the inner
    /// loop's ranges) before the inner loop's record (`__mochi_s3`), and both before the
    /// first loop's stack (`__mochi_s1`): they are declared first loop, inner, outer, so
    /// that the first one read sits highest; a stack never read keeps its place, first.
    #[test]
    fn stacks_are_carved_in_the_reverse_of_their_first_reads() {
        let stacks: Vec<_> = ["__mochi_s1", "__mochi_s2", "__mochi_s3", "__mochi_s4"]
            .iter()
            .map(|s| format_ident!("{}", s))
            .collect();
        let rev = quote! {
            for i in rev_iter(__mochi_s9) {
                for j in rev_iter(__mochi_s2.pop()) {
                    let (a, b) = __mochi_s3.pop();
                }
            }
            for i in rev_iter(__mochi_s8) { pull(__mochi_s1.pop(), __mochi_s3); }
        };
        let order: Vec<String> = carve_order(&stacks, &rev)
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(
            order,
            ["__mochi_s4", "__mochi_s1", "__mochi_s3", "__mochi_s2"]
        );
    }
}
