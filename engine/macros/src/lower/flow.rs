//! Lowering control flow: branches save their choice, loops their trip count (or are
//! replayed backwards from their iterator), and the reverse sweep follows the record.

use super::exits::Exits;
use super::ir::{AccKind, Adj, Fwd, Rev, Slot};
use super::{mentions_any, Binding, Code, LoopFlags, Lowerer, Operand};
use crate::activity::{expr_is_active, iterates_enumerated, pat_names};
use crate::rewrite::UnDeref;
use proc_macro2::{Ident, TokenStream};
use quote::quote;
use std::collections::HashMap;
use syn::{parse_quote, Expr, Pat, Stmt};

impl Lowerer {
    /// `if`, `match` or a block; with `want_value`, returns the value through a
    /// variable declared before it.
    pub(super) fn lower_control_value(
        &mut self,
        e: &Expr,
        code: &mut Code,
        want_value: bool,
    ) -> Option<Operand> {
        let value_active = want_value && expr_is_active(e, &self.active);
        let out = if want_value {
            Some(self.fresh("v"))
        } else {
            None
        };
        if let Some(v) = &out {
            code.fwd.push(Fwd::Primal(quote!(let #v;)));
        }
        let out_cot = if value_active {
            let v = out.clone().unwrap();
            let (cot, pin) = self.new_cot(&quote!(#v));
            Some((cot, pin))
        } else {
            None
        };
        let out_info = out
            .clone()
            .map(|v| (v, out_cot.as_ref().map(|c| c.0.clone())));
        match e {
            Expr::If(i) => self.lower_if(i, out_info.as_ref(), code),
            Expr::Match(m) => self.lower_match(m, out_info.as_ref(), code),
            Expr::Block(b) => {
                if b.label.is_some() {
                    self.err(b, "mochi: labelled blocks are not supported");
                }
                let inner = self.branch_block(&b.block.stmts, out_info.as_ref());
                code.fwd.push(Fwd::Block(inner.fwd));
                code.rev.push(Rev::Block(inner.rev));
            }
            _ => unreachable!(),
        }
        let v = out?;
        match out_cot {
            Some((cot, pin)) => {
                code.fwd.push(pin);
                Some(Operand::Active {
                    val: quote!(#v),
                    cot,
                    is_ref: false,
                })
            }
            None => Some(Operand::Inactive(quote!(#v))),
        }
    }

    /// Lowers a branch body in its own scope; with `out`, its tail is assigned to the
    /// output variable.
    fn branch_block(
        &mut self,
        stmts: &[Stmt],
        out: Option<&(syn::Ident, Option<TokenStream>)>,
    ) -> Code {
        self.nest_depth += 1;
        self.branch_depth += 1;
        self.scopes.push(HashMap::new());
        let mut inner = Code::default();
        // A branch that panics gives no value (the desugaring moves the branches that
        // leave by `return`, `break` or `continue` out of a `let`'s value).
        let out = out.filter(|_| !stmts.last().is_some_and(panics));
        let tail = self.lower_stmts(stmts, &mut inner, out.is_some());
        self.branch_depth -= 1;
        // (`[a] => *a` of a binding to an element: the tail is the reference, and the
        // branch's value its copy.)
        let deref_tail = matches!(stmts.last(), Some(Stmt::Expr(e, None)) if super::is_deref(e));
        if let Some((v, cot)) = out {
            match tail {
                Some(o) => {
                    // A value captured by a closure gives its value, as it would outside
                    // the closure (`if c { 1.0 - tau } else { tau }` in a chain's closure,
                    // where `tau` is read through the reference the closure holds).
                    let val = match &o {
                        Operand::Active {
                            is_ref: true, val, ..
                        } if deref_tail || self.captured.contains(&val.to_string()) => {
                            quote!(::core::clone::Clone::clone(#val))
                        }
                        _ => o.val(),
                    };
                    inner.fwd.push(Fwd::Primal(quote!(#v = #val;)));
                    if let (Some(oc), Some(c)) = (o.cot(), cot) {
                        inner.rev.push(Rev::Acc {
                            into: oc.clone(),
                            value: Adj::Take(c.clone()),
                            how: AccKind::Plain,
                        });
                    } else if let Some(c) = cot {
                        inner.rev.push(Rev::Drop(Adj::Take(c.clone())));
                    }
                }
                // A unit-valued tail.
                None => {
                    inner.fwd.push(Fwd::Primal(quote!(#v = ();)));
                }
            }
        }
        self.scopes.pop();
        self.nest_depth -= 1;
        inner
    }

    fn lower_if(
        &mut self,
        i: &syn::ExprIf,
        out: Option<&(syn::Ident, Option<TokenStream>)>,
        code: &mut Code,
    ) {
        if let Expr::Let(l) = &*i.cond {
            self.err(
                l,
                "mochi: `if let` is not supported in differentiable code; use `match`",
            );
            return;
        }
        let cond = self.as_written(&i.cond);
        let c = self.fresh("c");
        code.fwd.push(Fwd::Primal(quote!(let #c: bool = #cond;)));
        let get = self.save(quote!(#c), code);
        let then = self.branch_block(&i.then_branch.stmts, out);
        let els = match &i.else_branch {
            Some((_, e)) => {
                let stmts: Vec<Stmt> = match &**e {
                    Expr::Block(b) => b.block.stmts.clone(),
                    other => vec![Stmt::Expr(other.clone(), None)],
                };
                self.branch_block(&stmts, out)
            }
            None => {
                if out.is_some() {
                    self.branch_block(&[Stmt::Expr(parse_quote!(()), None)], out)
                } else {
                    Code::default()
                }
            }
        };
        code.fwd.push(Fwd::If {
            cond: quote!(#c),
            then: then.fwd,
            els: Some(els.fwd),
        });
        code.rev.push(Rev::If {
            cond: get,
            then: then.rev,
            els: els.rev,
        });
    }

    fn lower_match(
        &mut self,
        m: &syn::ExprMatch,
        out: Option<&(syn::Ident, Option<TokenStream>)>,
        code: &mut Code,
    ) {
        let scrut = &m.expr;
        // An arm that binds part of a differentiable value would need its derivative; arms
        // that bind nothing (`Act::Relu =>`, `0 =>`, `_ =>`) only choose, like an `if`.
        // A variant of an enum of the user's (`Loss::Huber(d)`, `Self::Scaled { k }`)
        // binds the settings of a choice, which carry no derivative (`derive(Tangent)`
        // of an enum): bound as constants, like the names of any arm.
        // A tuple of values (`match (self.on, v > hi, v < lo)`): an arm's names bind
        // parts that carry no derivative when they sit where the tuple's value has none
        // (a comparison, a literal, a `bool` or integer field of the crate's structs).
        let parts: Option<Vec<bool>> = match crate::desugar::unparen(scrut) {
            Expr::Tuple(t) => Some(t.elems.iter().map(|e| self.carries(e)).collect()),
            _ => None,
        };
        let binds = m.arms.iter().any(|arm| {
            if let (Some(parts), Pat::Tuple(t)) = (&parts, &arm.pat) {
                if t.elems.len() == parts.len() {
                    return t.elems.iter().zip(parts).any(|(p, &carries)| {
                        let mut names = Vec::new();
                        pat_names(p, &mut names);
                        carries
                            && names
                                .iter()
                                .any(|n| !n.starts_with(|c: char| c.is_uppercase()))
                    });
                }
            }
            let mut names = Vec::new();
            pat_names(&arm.pat, &mut names);
            names
                .iter()
                .any(|n| !n.starts_with(|c: char| c.is_uppercase()))
                && !choice_variant(&arm.pat)
        });
        if binds && expr_is_active(scrut, &self.active) {
            self.err(scrut, "mochi: a `match` arm or `if let` pattern that binds parts of a differentiable value (a tuple, a tuple of `Option`s, some slice patterns, arms that bind different names) is not supported; match on an integer, a bool or an enum, compare with `if`, bind one name in every arm (`v if v > 0.0 => .., v => ..`), bind `if let Some(v) = o` without a guard and test `v` inside, or index a slice (`x[0]`, `x[x.len() - 1]`)");
        }
        let a = self.fresh("arm");
        let mut fwd_arms = Vec::new();
        let mut rev_arms = Vec::new();
        for arm in &m.arms {
            let pat = &arm.pat;
            let guard = arm.guard.as_ref().map(|(_, g)| quote!(if #g));
            self.scopes.push(HashMap::new());
            self.bind_pattern_inactive(pat);
            let stmts: Vec<Stmt> = match &*arm.body {
                Expr::Block(b) if b.label.is_none() => b.block.stmts.clone(),
                other => vec![Stmt::Expr(other.clone(), None)],
            };
            // The arm's names carry no derivative; one named as a value of the function
            // that does (`Shape::Rect { w, h } => w * h` beside a differentiable `w`) is
            // the arm's own throughout a body that neither binds nor assigns it again, and
            // is read there as the constant it is (before, the arm's `w` was taken for
            // the function's: `&&f64` arguments to the rules of a lent element, and a
            // call with a derivative to the generic form's lift of the field).
            // (In a generic form, the fields the pattern binds lifted to its scalar at the
            // head of the arm, `let w = ref_like(__mochi_bound_w, &..);`, are the arm's
            // names.)
            let mut names = Vec::new();
            pat_names(pat, &mut names);
            let lifts = |s: &Stmt| {
                let Stmt::Local(l) = s else { return false };
                l.init.as_ref().is_some_and(|i| {
                    matches!(&*i.expr, Expr::Call(c) if matches!(&*c.func, Expr::Path(f)
                        if f.path.segments.last().is_some_and(|g| g.ident == "ref_like" || g.ident == "lift_value")))
                })
            };
            for s in stmts.iter().take_while(|s| lifts(s)) {
                if let Stmt::Local(l) = s {
                    pat_names(&l.pat, &mut names);
                }
            }
            let body = syn::Block {
                brace_token: Default::default(),
                stmts: stmts.iter().skip_while(|s| lifts(s)).cloned().collect(),
            };
            let assigned = crate::analysis::assigned_names(&body);
            let hidden: Vec<String> = names
                .into_iter()
                .filter(|n| {
                    self.active.contains(n)
                        && !assigned.contains(n)
                        && !crate::desugar::binds_name(&body, n)
                })
                .collect();
            for n in &hidden {
                self.active.remove(n);
            }
            let inner = self.branch_block(&stmts, out);
            self.active.extend(hidden);
            self.scopes.pop();
            fwd_arms.push((quote!(#pat #guard), inner.fwd));
            rev_arms.push(inner.rev);
        }
        // (A value a derived closure captured is a reference there: matched through it,
        // `match (*loss) { Loss::Huber(delta) => .. }`, so that its arms bind what they
        // bind in the closure as written, `delta: f64`.)
        code.fwd.push(Fwd::Match {
            scrutinee: self.as_written(scrut),
            arm: a.clone(),
            arms: fwd_arms,
        });
        let get = self.save(quote!(#a), code);
        code.rev.push(Rev::Match {
            choice: get,
            arms: rev_arms,
        });
    }

    /// Lowers a loop body with the given flags.
    fn loop_body(
        &mut self,
        stmts: &[Stmt],
        flags: LoopFlags,
        bind: impl FnOnce(&mut Self),
    ) -> Code {
        self.loop_depth += 1;
        self.nest_depth += 1;
        self.loops.push(flags);
        self.scopes.push(HashMap::new());
        bind(self);
        let mut inner = Code::default();
        self.lower_stmts(stmts, &mut inner, false);
        self.merge_records(&mut inner);
        self.scopes.pop();
        self.loops.pop();
        self.nest_depth -= 1;
        self.loop_depth -= 1;
        inner
    }

    /// One record per trip: the values a loop body saves at its top level (every trip
    /// runs those saves once: exits inside the body guard the statements after them)
    /// go onto one stack as a tuple pushed at the end of the trip, instead of onto one
    /// stack each. The reverse sweep pops the record once at the start of the trip and
    /// hands each value to the place that read its own stack, through a [`Saved`]
    /// holder of the same name. One capacity check, one length and one buffer per trip
    /// instead of one per saved value.
    ///
    /// [`Saved`]: ../../../mochi_core/kit/tape/struct.Saved.html
    fn merge_records(&mut self, inner: &mut Code) {
        let saved: Vec<Ident> = inner
            .fwd
            .iter()
            .filter_map(|f| match f {
                Fwd::Save {
                    slot: Slot::Loop(s),
                    ..
                } => Some(s.clone()),
                _ => None,
            })
            .collect();
        if saved.len() < 2 {
            return;
        }
        for f in inner.fwd.iter_mut() {
            if let Fwd::Save {
                slot: Slot::Loop(s),
                value,
            } = f
            {
                *f = Fwd::Let {
                    name: s.clone(),
                    value: std::mem::take(value),
                };
            }
        }
        self.stacks.retain(|s| !saved.contains(s));
        let load = self.save(quote!((#(#saved,)*)), inner);
        // Kept in forward order and emitted backwards: the unpacking comes first.
        inner.rev.push(Rev::Unpack {
            record: load,
            names: saved,
        });
    }

    fn make_flags(
        &mut self,
        label: Option<&syn::Label>,
        body: &[Stmt],
        code: &mut Code,
    ) -> (LoopFlags, TokenStream, TokenStream) {
        let v = Exits::of(body, label);
        let brk = v.brk.then(|| self.fresh("brk"));
        let cnt = v.cnt.then(|| self.fresh("cnt"));
        if let Some(b) = &brk {
            code.fwd.push(Fwd::Primal(quote!(let mut #b = false;)));
        }
        if let Some(c) = &cnt {
            code.fwd.push(Fwd::Primal(quote!(let mut #c = false;)));
        }
        let mut stop = Vec::new();
        if let Some(b) = &brk {
            stop.push(quote!(#b));
        }
        if let Some(r) = &self.returned {
            stop.push(quote!(#r));
        }
        let stop = if stop.is_empty() {
            quote!(false)
        } else {
            quote!(#(#stop)||*)
        };
        let reset = cnt
            .as_ref()
            .map(|c| quote!(#c = false;))
            .unwrap_or_default();
        let label = label.map(|l| l.name.ident.to_string());
        (LoopFlags { brk, cnt, label }, stop, reset)
    }

    /// Does a loop body `return`, or leave an enclosing loop by its label (which must
    /// become a flag, not a real `return` or `break`)?
    fn exits_outward(&self, label: Option<&syn::Label>, stmts: &[Stmt]) -> bool {
        let v = Exits::of(stmts, label);
        v.ret || v.outward
    }

    pub(super) fn lower_while(&mut self, w: &syn::ExprWhile, code: &mut Code) {
        if let Expr::Let(l) = &*w.cond {
            self.err(l, "mochi: `while let` is not supported in differentiable code; use `loop` with `match`");
            return;
        }
        let label = w.label.as_ref();
        if !mentions_any(w, &self.active) && !self.exits_outward(label, &w.body.stmts) {
            code.fwd.push(Fwd::Primal(quote!(#w)));
            return;
        }
        let cond = self.as_written(&w.cond);
        self.counted_loop(label, &w.body.stmts, cond, code);
    }

    pub(super) fn lower_loop(&mut self, l: &syn::ExprLoop, code: &mut Code) {
        let label = l.label.as_ref();
        if !mentions_any(l, &self.active) && !self.exits_outward(label, &l.body.stmts) {
            code.fwd.push(Fwd::Primal(quote!(#l)));
            return;
        }
        self.counted_loop(label, &l.body.stmts, quote!(true), code);
    }

    /// A loop whose trip count is saved: `while`, `loop`.
    fn counted_loop(
        &mut self,
        label: Option<&syn::Label>,
        body: &[Stmt],
        cond: TokenStream,
        code: &mut Code,
    ) {
        let (flags, stop, reset) = self.make_flags(label, body, code);
        let n = self.fresh("n");
        let inner = self.loop_body(body, flags, |_| {});
        code.fwd.push(Fwd::Counted {
            prelude: TokenStream::new(),
            count: n.clone(),
            stop,
            cond,
            head: reset,
            body: inner.fwd,
        });
        let times = self.save(quote!(#n), code);
        code.rev.push(Rev::Repeat {
            times,
            body: inner.rev,
        });
    }

    pub(super) fn lower_for(&mut self, f: &syn::ExprForLoop, code: &mut Code) {
        let label = f.label.as_ref();
        if !mentions_any(f, &self.active) && !self.exits_outward(label, &f.body.stmts) {
            code.fwd.push(Fwd::Primal(quote!(#f)));
            return;
        }
        if expr_is_active(&f.expr, &self.active) {
            return self.lower_for_over_sequence(f, code);
        }
        let iter = &f.expr;
        let pat = &f.pat;
        let exits = Exits::of(&f.body.stmts, label);
        // An iterator that borrows a local (`for &p in points.iter()` over a local
        // array) or a parameter (`for w in sizes.windows(2)`) cannot be replayed in the
        // pullback, which outlives the locals and captures no argument's lifetime: the
        // loop is counted instead.
        if exits.brk || exits.cnt || exits.ret || self.borrows_local(iter) {
            // Saved trip count; the loop variable is not replayed.
            let (flags, stop, reset) = self.make_flags(label, &f.body.stmts, code);
            let it = self.fresh("it");
            let n = self.fresh("n");
            let pat_c = pat.clone();
            let refs = element_refs(iter, &pat_c);
            let inner = self.loop_body(&f.body.stmts, flags, |s| {
                s.bind_pattern_inactive(&pat_c);
                for n in &refs {
                    s.mark_element_ref(n);
                }
            });
            code.fwd.push(Fwd::Counted {
                prelude: quote!(let mut #it = ::core::iter::IntoIterator::into_iter(#iter);),
                count: n.clone(),
                stop,
                cond: quote!(true),
                head: quote!(
                    let #pat = match ::core::iter::Iterator::next(&mut #it) {
                        ::core::option::Option::Some(v) => v,
                        ::core::option::Option::None => break,
                    };
                    #reset
                ),
                body: inner.fwd,
            });
            let times = self.save(quote!(#n), code);
            code.rev.push(Rev::Repeat {
                times,
                body: inner.rev,
            });
            return;
        }
        // Replayed backwards from a clone of the iterator: nothing saved per iteration.
        let it = self.fresh("it");
        code.fwd.push(Fwd::Let {
            name: it.clone(),
            value: quote!(#iter),
        });
        // A range whose bounds the reverse sweep can compute again (`0..d`, `i + 1..n`
        // inside another loop) is written again there, not saved on every trip of the
        // loops around it.
        let get = match &**iter {
            Expr::Range(r)
                if r.start.as_deref().is_some_and(|e| self.recomputable(e))
                    && r.end.as_deref().is_some_and(|e| self.recomputable(e)) =>
            {
                quote!((#r))
            }
            _ => self.save(quote!(::core::clone::Clone::clone(&#it)), code),
        };
        let pat_c = pat.clone();
        let flags = LoopFlags {
            brk: None,
            cnt: None,
            label: label.map(|l| l.name.ident.to_string()),
        };
        let refs = element_refs(iter, &pat_c);
        let inner = self.loop_body(&f.body.stmts, flags, |s| {
            let mut names = Vec::new();
            pat_names(&pat_c, &mut names);
            let simple = matches!(&*pat_c, Pat::Ident(_));
            for n in names {
                let is_ref = refs.contains(&n);
                s.bind(
                    n,
                    Binding {
                        active: false,
                        cot: TokenStream::new(),
                        is_ref,
                        recompute: simple,
                        param: false,
                        fixed: false,
                    },
                );
            }
        });
        code.fwd.push(Fwd::For {
            pattern: quote!(#pat),
            iter: quote!(#it),
            body: inner.fwd,
        });
        code.rev.push(Rev::Replay {
            pattern: quote!(#pat),
            iter: get,
            body: inner.rev,
        });
    }

    /// Whether `e` borrows a variable of the function, a local or a parameter: `&v`,
    /// `v.iter()`, `v.windows(2)` and the like.
    fn borrows_local(&self, e: &Expr) -> bool {
        fn local_root(e: &Expr) -> Option<&syn::Ident> {
            match e {
                Expr::Path(p) => p.path.get_ident(),
                Expr::Field(f) => local_root(&f.base),
                Expr::Index(i) => local_root(&i.expr),
                Expr::Paren(p) => local_root(&p.expr),
                _ => None,
            }
        }
        // (A parameter too: the pullback captures no lifetime of the arguments, so
        // `for pair in sizes.windows(2)` of `sizes: &[usize]` is counted as well.)
        let is_local = |id: &syn::Ident| self.lookup(&id.to_string()).is_some();
        match e {
            Expr::Reference(r) => {
                local_root(&r.expr).is_some_and(is_local) || self.borrows_local(&r.expr)
            }
            Expr::MethodCall(m) => {
                let borrowing = matches!(
                    m.method.to_string().as_str(),
                    "iter"
                        | "iter_mut"
                        | "windows"
                        | "chunks"
                        | "chunks_exact"
                        | "rchunks"
                        | "rchunks_exact"
                        | "as_slice"
                        | "outer_iter"
                        | "axis_iter"
                        | "axis_chunks_iter"
                        | "rows"
                        | "columns"
                        | "lanes"
                        | "split_at"
                        | "keys"
                        | "values"
                );
                (borrowing && local_root(&m.receiver).is_some_and(is_local))
                    || self.borrows_local(&m.receiver)
                    || m.args.iter().any(|a| self.borrows_local(a))
            }
            Expr::Paren(p) => self.borrows_local(&p.expr),
            _ => false,
        }
    }

    /// Whether `e` is a variable whose value is not a reference (a `Vec<f64>` parameter
    /// or local), so that iterating it by value yields its elements by value.
    fn held_by_value(&self, e: &Expr) -> bool {
        match e {
            Expr::Path(p) => p
                .path
                .get_ident()
                .and_then(|i| self.lookup(&i.to_string()))
                .is_some_and(|b: &Binding| !b.is_ref),
            _ => false,
        }
    }

    /// `for v in x.iter()`, `for (i, v) in x.iter().enumerate()`, `for (a, b) in
    /// x.iter().zip(y.iter())`: rewritten as an index loop over `0..len` whose body
    /// starts with `let v = x[k];`.
    fn lower_for_over_sequence(&mut self, f: &syn::ExprForLoop, code: &mut Code) {
        let strip = |e: &Expr| -> Option<Expr> {
            match e {
                Expr::MethodCall(m)
                    if (m.method == "iter" || m.method == "into_iter") && m.args.is_empty() =>
                {
                    Some((*m.receiver).clone())
                }
                Expr::MethodCall(m)
                    if (m.method == "copied" || m.method == "cloned") && m.args.is_empty() =>
                {
                    match &*m.receiver {
                        Expr::MethodCall(i) if i.method == "iter" => Some((*i.receiver).clone()),
                        _ => None,
                    }
                }
                Expr::Reference(r) => Some((*r.expr).clone()),
                Expr::Path(_) | Expr::Field(_) => Some(e.clone()),
                _ => None,
            }
        };
        let k: syn::Ident = self.fresh("k");
        let mut enumerate = false;
        let mut src = f.expr.as_ref().clone();
        if iterates_enumerated(&src) {
            if let Expr::MethodCall(m) = &src {
                src = (*m.receiver).clone();
                enumerate = true;
            }
        }
        let sources: Vec<&Expr> = match &src {
            Expr::MethodCall(z) if z.method == "zip" && z.args.len() == 1 => {
                vec![&z.receiver, &z.args[0]]
            }
            other => vec![other],
        };
        let seqs: Vec<Expr> = sources.iter().filter_map(|e| strip(e)).collect();
        let seqs = if seqs.len() == sources.len() {
            seqs
        } else {
            Vec::new()
        };
        // Sources that yield elements by value: `copied()`, `cloned()`, and `v` or
        // `v.into_iter()` of a `Vec` held by value (a `Vec<f64>` parameter or local).
        let by_value: Vec<bool> = sources
            .iter()
            .map(|e| match e {
                Expr::MethodCall(m) if m.method == "copied" || m.method == "cloned" => true,
                Expr::MethodCall(m) if m.method == "into_iter" => self.held_by_value(&m.receiver),
                Expr::Path(_) => self.held_by_value(e),
                _ => false,
            })
            .collect();
        if seqs.is_empty() || seqs.iter().any(|s| crate::lower::Place::parse(s).is_none()) {
            self.err(&f.expr, "mochi: this `for` over a differentiable sequence (or this iterator chain, which is written as one) is not one the derivation writes as an index loop. It takes `x.iter()`, `&x`, `x.iter_mut()` (also with `skip`, `take`, `step_by`, `rev`), `&mut x`, `.enumerate()`, `.zip(..)` of variables, `x.windows(m)`, `x.chunks(m)`, `x.chunks_mut(m)` (a piece read as `w[j]`, `w.len()`, `w.iter()` or passed to a call), and chains of `map`, `filter`, `filter_map`, `skip`, `take`, `rev`, `step_by`; here the sequence, or a use of the element, is another; use an index loop `for i in 0..x.len()`");
            return;
        }
        // Patterns: v | &v | (i, v) | (a, b) | (i, (a, b)) with & allowed on elements.
        let unref = |p: &Pat| -> Pat {
            match p {
                Pat::Reference(r) => (*r.pat).clone(),
                other => other.clone(),
            }
        };
        let mut lets: Vec<Stmt> = Vec::new();
        let mut pat = f.pat.as_ref().clone();
        if enumerate {
            let Pat::Tuple(t) = &pat else {
                self.err(&f.pat, "mochi: bind `.enumerate()` as `(i, v)`");
                return;
            };
            if t.elems.len() != 2 {
                self.err(&f.pat, "mochi: bind `.enumerate()` as `(i, v)`");
                return;
            }
            let i = &t.elems[0];
            lets.push(parse_quote!(let #i = #k;));
            pat = t.elems[1].clone();
        }
        let written: Vec<Pat> = if seqs.len() == 2 {
            match &pat {
                Pat::Tuple(t) if t.elems.len() == 2 => t.elems.iter().cloned().collect(),
                _ => {
                    self.err(&f.pat, "mochi: bind `.zip(..)` as `(a, b)`");
                    return;
                }
            }
        } else {
            vec![pat.clone()]
        };
        let elem_pats: Vec<Pat> = written.iter().map(unref).collect();
        // Names bound by reference (`v`, not `&v`): the body treats them as `&f64`.
        let mut names = Vec::new();
        for ((w, p), by_value) in written.iter().zip(&elem_pats).zip(&by_value) {
            if !matches!(w, Pat::Reference(_)) && !by_value {
                pat_names(p, &mut names);
            }
        }
        // `.clone()` (the identity rule): elements that are not `Copy` (the rows of a
        // `Vec<Vec<f64>>`) are read too.
        let mut first_binds = Vec::new();
        pat_names(&elem_pats[0], &mut first_binds);
        // (An ndarray array of two or more dimensions, `for v in m.iter()` of a local
        // `Array2`, is read at the multi-index of position `k` in logical order.)
        let at =
            |s: &Expr| crate::iterchain::flat_index(s, &quote!(#k), syn::spanned::Spanned::span(s));
        let hides_second = seqs.len() == 2
            && crate::activity::tokens_mention(&quote::quote!(#(#seqs)*), &|i| {
                first_binds.iter().any(|n| i == n)
            });
        if hides_second {
            // `for (y, x) in x.iter().zip(y.iter())`: both elements are read before
            // either name is bound.
            let (p0, p1, s0, s1) = (&elem_pats[0], &elem_pats[1], &seqs[0], &seqs[1]);
            let (i0, i1) = (at(s0), at(s1));
            lets.push(parse_quote!(let (#p0, #p1) = (#s0[#i0].clone(), #s1[#i1].clone());));
        } else {
            for (p, s) in elem_pats.iter().zip(&seqs) {
                let i = at(s);
                lets.push(parse_quote!(let #p = #s[#i].clone();));
            }
        }
        // `f(v)` passed the element by reference, and still does: `f(&v)`; `*v` in the
        // body refers to the element, now bound by value (`f(*v)` becomes `f(v)`, after
        // the first rewrite, so that it stays by value).
        let mut body = f.body.clone();
        syn::visit_mut::VisitMut::visit_block_mut(&mut RefArgs { names: &names }, &mut body);
        let idents: Vec<syn::Ident> = names
            .iter()
            .map(|n| quote::format_ident!("{}", n))
            .collect();
        syn::visit_mut::VisitMut::visit_block_mut(&mut UnDeref { names: &idents }, &mut body);
        let len = if seqs.len() == 2 {
            let (a, b) = (&seqs[0], &seqs[1]);
            let (la, lb) = (
                super::ir::rt::seq_len(&quote!(#a)),
                super::ir::rt::seq_len(&quote!(#b)),
            );
            quote!(::core::cmp::min(#la, #lb))
        } else {
            let a = &seqs[0];
            super::ir::rt::seq_len(&quote!(#a))
        };
        let mut stmts = lets;
        stmts.extend(body.stmts);
        let label = &f.label;
        let lowered: syn::ExprForLoop = parse_quote!(#label for #k in 0..#len { #(#stmts)* });
        self.lower_for(&lowered, code);
    }
}

/// `f(v)` → `f(&v)` for the element names `v` now bound by value; also a method of the
/// user's, `l.forward(v)` (a method the library has, `a.max(v)`, takes the value), a
/// lookup by key, `m.get(v)`, and an index `m[v]` (of a map: a slice's index is not a
/// reference).
struct RefArgs<'a> {
    names: &'a [String],
}

impl RefArgs<'_> {
    fn lend<'e>(&mut self, args: impl Iterator<Item = &'e mut Expr>) {
        for a in args {
            if let Expr::Path(p) = a {
                if p.path
                    .get_ident()
                    .is_some_and(|i| self.names.contains(&i.to_string()))
                {
                    *a = parse_quote!(&#p);
                    continue;
                }
            }
            syn::visit_mut::VisitMut::visit_expr_mut(self, a);
        }
    }
}

impl syn::visit_mut::VisitMut for RefArgs<'_> {
    fn visit_expr_call_mut(&mut self, c: &mut syn::ExprCall) {
        self.lend(c.args.iter_mut());
    }

    // `match s { Shape::Circle { r } if *r > 1.0 => .. }` of an element the loop bound
    // by reference: matched by reference still, so its patterns bind references.
    fn visit_expr_match_mut(&mut self, m: &mut syn::ExprMatch) {
        syn::visit_mut::visit_expr_match_mut(self, m);
        let destructures = m
            .arms
            .iter()
            .any(|a| matches!(&a.pat, Pat::Struct(_) | Pat::TupleStruct(_)));
        if let Expr::Path(p) = &*m.expr {
            if destructures
                && p.path
                    .get_ident()
                    .is_some_and(|i| self.names.contains(&i.to_string()))
            {
                *m.expr = parse_quote!(&#p);
            }
        }
    }

    // `counts[l]` of a map keyed by the elements (a slice is not indexed by a
    // reference, so the index as written is a key): `counts[&l]`.
    fn visit_expr_index_mut(&mut self, i: &mut syn::ExprIndex) {
        self.visit_expr_mut(&mut i.expr);
        self.lend(std::iter::once(&mut *i.index));
    }

    fn visit_expr_method_call_mut(&mut self, m: &mut syn::ExprMethodCall) {
        self.visit_expr_mut(&mut m.receiver);
        // A map's or a set's lookups by key (`counts.get(l)`, `seen.contains(l)`) take
        // the reference they were given.
        let by_key = matches!(
            m.method.to_string().as_str(),
            "get" | "get_mut" | "contains_key" | "contains" | "get_key_value"
        );
        if !by_key && super::expr::is_library_method(&m.method.to_string()) {
            for a in m.args.iter_mut() {
                self.visit_expr_mut(a);
            }
        } else {
            self.lend(m.args.iter_mut());
        }
    }
}

impl Lowerer {
    /// `e` as primal code inside a derived closure, where the captured differentiable
    /// variables are references: each bare use of one (`r <= delta`) becomes `(*delta)`,
    /// the value the closure as written sees. Elsewhere `e` as it is.
    pub(super) fn as_written(&self, e: &Expr) -> TokenStream {
        if self.captured.is_empty() {
            return quote!(#e);
        }
        struct Deref<'a>(&'a Lowerer);
        impl syn::visit_mut::VisitMut for Deref<'_> {
            fn visit_expr_mut(&mut self, e: &mut Expr) {
                match e {
                    Expr::Path(p) => {
                        if let Some(i) = p.path.get_ident() {
                            let n = i.to_string();
                            let captured = self.0.captured.contains(&n)
                                && self.0.lookup(&n).is_some_and(|b| b.is_ref && b.active);
                            if captured {
                                *e = syn::parse_quote!((*#i));
                            }
                        }
                    }
                    // Method calls and fields auto-dereference; closures bind their own.
                    Expr::MethodCall(m) => {
                        for a in &mut m.args {
                            self.visit_expr_mut(a);
                        }
                    }
                    Expr::Field(_) | Expr::Closure(_) | Expr::Macro(_) => {}
                    Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => {}
                    _ => syn::visit_mut::visit_expr_mut(self, e),
                }
            }
        }
        let mut e = e.clone();
        syn::visit_mut::VisitMut::visit_expr_mut(&mut Deref(self), &mut e);
        quote!(#e)
    }
}

/// The names a `for` pattern binds to references into the sequence: `p` in `for p in
/// v.iter()` or `for p in &v`, `(a, b)` in `for (a, b) in v.iter()` (bound by reference
/// through the default binding mode), `v` in `for (i, v) in v.iter().enumerate()`.
fn element_refs(iter: &Expr, pat: &Pat) -> Vec<String> {
    let by_ref = |e: &Expr| match e {
        Expr::MethodCall(m) => m.method == "iter" && m.args.is_empty(),
        Expr::Reference(r) => r.mutability.is_none(),
        _ => false,
    };
    let idents = |p: &Pat| -> Vec<String> {
        match p {
            Pat::Ident(i) if i.by_ref.is_none() && i.subpat.is_none() => {
                vec![i.ident.to_string()]
            }
            Pat::Tuple(t) => t
                .elems
                .iter()
                .filter_map(|e| match e {
                    Pat::Ident(i) if i.by_ref.is_none() && i.subpat.is_none() => {
                        Some(i.ident.to_string())
                    }
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        }
    };
    if by_ref(iter) {
        return idents(pat);
    }
    match (iter, pat) {
        (Expr::MethodCall(m), Pat::Tuple(t))
            if m.method == "enumerate" && by_ref(&m.receiver) && t.elems.len() == 2 =>
        {
            idents(&t.elems[1])
        }
        _ => Vec::new(),
    }
}

/// A statement that is a `panic!`, `unreachable!`, `todo!` or `unimplemented!` (with
/// or without a semicolon).
fn panics(s: &Stmt) -> bool {
    let m = match s {
        Stmt::Expr(Expr::Macro(m), _) => &m.mac,
        Stmt::Macro(m) => &m.mac,
        _ => return false,
    };
    m.path.segments.last().is_some_and(|s| {
        matches!(
            s.ident.to_string().as_str(),
            "panic" | "unreachable" | "todo" | "unimplemented"
        )
    })
}

/// `Loss::Huber(d)`, `Shape::Circle { r }` (also `|`-alternatives of them): a variant of an
/// enum named by its path, not an `Option`'s or a `Result`'s.
impl Lowerer {
    /// Whether a part of a matched tuple may carry a derivative: not a comparison, a
    /// `!`, a literal, nor a `bool` or integer field of the crate's structs
    /// ([`crate::twin::plain_field`]).
    fn carries(&self, e: &Expr) -> bool {
        if crate::twin::is_bool_expr(e) {
            return false;
        }
        match crate::desugar::unparen(e) {
            Expr::Binary(b) => self.carries(&b.left) || self.carries(&b.right),
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Not(_)) => false,
            Expr::Unary(u) => self.carries(&u.expr),
            Expr::Cast(c) => !crate::activity::type_is_inactive(&c.ty) && self.carries(&c.expr),
            Expr::Lit(_) => false,
            Expr::Field(f) => match &f.member {
                syn::Member::Named(n) if crate::twin::plain_field(&n.to_string()) => false,
                _ => expr_is_active(e, &self.active),
            },
            other => expr_is_active(other, &self.active),
        }
    }
}

fn choice_variant(p: &syn::Pat) -> bool {
    let path = match p {
        syn::Pat::TupleStruct(t) => &t.path,
        syn::Pat::Struct(s) => &s.path,
        syn::Pat::Or(o) => return o.cases.iter().all(choice_variant),
        syn::Pat::Paren(q) => return choice_variant(&q.pat),
        _ => return false,
    };
    path.segments.len() >= 2
        && path.segments.iter().all(|s| {
            !matches!(
                s.ident.to_string().as_str(),
                "Some" | "None" | "Ok" | "Err" | "Option" | "Result"
            )
        })
}
