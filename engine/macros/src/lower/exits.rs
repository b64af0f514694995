//! The exit analysis: what a piece of code does to the loops and the function around
//! it (`break`, `continue`, `return`), found by one visit that every question about
//! exits goes through.

use syn::Stmt;

/// How code leaves: with `label` the label of the loop the code is the body of (or of
/// no loop), a `break`/`continue` without a label, or with that label, is the loop's
/// own; one with another label that no loop inside the code has leaves an enclosing
/// loop.
#[derive(Default)]
pub struct Exits {
    /// The loop's label, without the quote.
    label: Option<String>,
    /// Labels of the loops entered inside the code (their exits stay inside).
    inner: Vec<Option<String>>,
    /// Something ends the loop: its own `break`, or an exit of an enclosing loop.
    pub brk: bool,
    /// The loop's own `continue`.
    pub cnt: bool,
    /// A `return`.
    pub ret: bool,
    /// A labelled `break`/`continue` of an enclosing loop, which a loop left as written
    /// could not express once that enclosing loop is lowered.
    pub outward: bool,
}

impl Exits {
    /// The exits of `stmts`, the body of a loop labelled `label` (or of no loop).
    pub fn of<'a>(stmts: impl IntoIterator<Item = &'a Stmt>, label: Option<&syn::Label>) -> Self {
        let mut e = Exits {
            label: label.map(|l| l.name.ident.to_string()),
            ..Default::default()
        };
        for s in stmts {
            syn::visit::Visit::visit_stmt(&mut e, s);
        }
        e
    }

    /// Does the code leave: `return`, or (inside a loop) any `break`/`continue` that is
    /// not of a loop inside it?
    pub fn leaves(&self, in_loop: bool) -> bool {
        self.ret || (in_loop && (self.brk || self.cnt))
    }

    /// Whom a `break`/`continue` with `target` leaves: `None` for a loop inside the
    /// code, `Some(true)` for the code's own loop, `Some(false)` for an enclosing one.
    fn target(&self, target: &Option<syn::Lifetime>) -> Option<bool> {
        match target.as_ref().map(|l| l.ident.to_string()) {
            None if self.inner.is_empty() => Some(true),
            None => None,
            Some(t) if self.inner.iter().any(|l| l.as_deref() == Some(t.as_str())) => None,
            Some(t) => Some(self.label.as_deref() == Some(t.as_str())),
        }
    }

    fn exit(&mut self, label: &Option<syn::Lifetime>, cont: bool) {
        match self.target(label) {
            Some(true) if cont => self.cnt = true,
            Some(true) => self.brk = true,
            Some(false) => {
                self.brk = true;
                self.outward = true;
            }
            None => {}
        }
    }

    fn enter(&mut self, label: &Option<syn::Label>) {
        self.inner
            .push(label.as_ref().map(|l| l.name.ident.to_string()));
    }
}

impl<'ast> syn::visit::Visit<'ast> for Exits {
    fn visit_expr_break(&mut self, b: &'ast syn::ExprBreak) {
        self.exit(&b.label, false);
    }
    fn visit_expr_continue(&mut self, c: &'ast syn::ExprContinue) {
        self.exit(&c.label, true);
    }
    fn visit_expr_return(&mut self, _: &'ast syn::ExprReturn) {
        self.ret = true;
    }
    // Closures and items have exits of their own.
    fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
    fn visit_item(&mut self, _: &'ast syn::Item) {}
    fn visit_expr_while(&mut self, w: &'ast syn::ExprWhile) {
        self.enter(&w.label);
        syn::visit::visit_expr_while(self, w);
        self.inner.pop();
    }
    fn visit_expr_loop(&mut self, w: &'ast syn::ExprLoop) {
        self.enter(&w.label);
        syn::visit::visit_expr_loop(self, w);
        self.inner.pop();
    }
    fn visit_expr_for_loop(&mut self, w: &'ast syn::ExprForLoop) {
        self.enter(&w.label);
        syn::visit::visit_expr_for_loop(self, w);
        self.inner.pop();
    }
}
