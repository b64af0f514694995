//! The shape every rule trait of this crate has.

/// Declares a rule trait: one method returning `(primal output, pullback)`.
///
/// The trait is local to this crate, so it can be implemented for
/// `mochi_core::Call<(&ArrayBase<..>, ..)>` despite the orphan rule.
macro_rules! rule_trait {
    ($(#[$meta:meta])* $name:ident => $method:ident) => {
        $(#[$meta])*
        pub trait $name {
            /// The primal output of the operation.
            type Output;
            /// The pullback returned with it.
            type Pullback: mochi_core::Pullback;
            /// Runs the operation, returning its value and its pullback.
            fn $method(self) -> (Self::Output, Self::Pullback);
        }
    };
}
pub(crate) use rule_trait;
