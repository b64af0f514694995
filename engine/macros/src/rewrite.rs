//! Small rewrites of user code shared by the desugaring and the lowering.

use syn::visit_mut::VisitMut;
use syn::Expr;

/// `*v` → `v` (also `**v`) for names now bound by value where the code as written had
/// references: loop elements, closure parameters, `Some(v)` of an element.
pub struct UnDeref<'a> {
    pub names: &'a [syn::Ident],
}

impl VisitMut for UnDeref<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
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
