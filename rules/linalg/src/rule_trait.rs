//! The shape every rule trait of this crate has.

/// Declares a rule trait: one method returning `(primal output, pullback)`.
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
