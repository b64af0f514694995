//! A pullback that is the same on every trip of a loop, kept once instead of per trip.
//!
//! `y_tmp[i] = yf[i] + h * k[i] / 2.0` in a loop: the pruned pullbacks of `h * k[i]`
//! and of `/ 2.0` hold only the constants `h` and `2.0` (`kit::keep`), and when those
//! are loop-invariant (a literal, or a binding made once per call outside every loop
//! and never reassigned, which `#[differentiable]` decides from the source) the
//! pullback is the same value on every trip. Saved per trip it is 8 bytes of tape per
//! operation for nothing: an RK4 step's four update loops saved `h`, `2.0` and `6.0` per
//! element.
//!
//! The macro writes, for such an operation inside a loop, a [`HoistSlot`] at the top of
//! the function and, per trip, `Hoist::new(&slot, pruned).record()` as the record: a
//! pullback type that says it depends on the constants only ([`Invariant`], the pruned
//! operator pullbacks of the scalar rules) is stored in the slot and the record is the
//! zero-sized [`Hoisted`]; any other type (a rule crate's pullback that kept its whole
//! value because it has no pruned form) is the record itself, as before. The reverse
//! sweep reads `Unhoist::new(&slot, record).get()`: the slot's copy for [`Hoisted`],
//! the record otherwise. The choice is method resolution's (the by-value impl for the
//! specialised case, the by-reference one as the fallback), as for `Keep`.
//!
//! The same holds for an operation whose every operand is the same on every trip
//! (`sigma.ln()` in a loop, `sigma` bound once outside it): rules are functions of their
//! operands, so its pullback is too, whatever it holds. `record_fixed` keeps any `Copy`
//! pullback once ([`HoistFixed`]), and any other on the tape ([`HoistFixedWhole`]).

use std::cell::Cell;

/// A pullback type that holds nothing but the constant operands of its operation, so
/// that two trips of a loop with the same constants have the same pullback.
///
/// # Contract
///
/// A value of the type is a function of the operation's constant (derivative-free)
/// operands only, never of an operand that carries a derivative; and it is `Copy`.
pub trait Invariant: Copy {}

/// Where a loop-invariant pullback is kept (declared once, before the loops).
pub struct HoistSlot<P>(Cell<Option<P>>);

impl<P> HoistSlot<P> {
    /// An empty slot.
    #[inline(always)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        HoistSlot(Cell::new(None))
    }
}

/// The record of a pullback kept in its slot (zero-sized).
#[derive(Clone, Copy, Debug)]
pub struct Hoisted;

/// A trip's pullback on its way to the tape: `Hoist::new(&slot, p).record()`.
pub struct Hoist<'a, P> {
    slot: &'a HoistSlot<P>,
    value: Cell<Option<P>>,
}

impl<'a, P> Hoist<'a, P> {
    /// Wraps this trip's pullback.
    #[inline(always)]
    pub fn new(slot: &'a HoistSlot<P>, value: P) -> Self {
        Hoist {
            slot,
            value: Cell::new(Some(value)),
        }
    }
}

/// `record` of an [`Invariant`] pullback: into the slot, [`Hoisted`] on the tape.
pub trait HoistInvariant {
    /// What the tape holds.
    type Rec;
    /// Records the trip's pullback.
    fn record(self) -> Self::Rec;
}

impl<P: Invariant> HoistInvariant for Hoist<'_, P> {
    type Rec = Hoisted;
    #[inline(always)]
    fn record(self) -> Hoisted {
        self.slot.0.set(self.value.get());
        Hoisted
    }
}

/// `record` of any other pullback: the pullback itself on the tape.
pub trait HoistWhole {
    /// What the tape holds.
    type Rec;
    /// Records the trip's pullback.
    fn record(self) -> Self::Rec;
}

impl<P> HoistWhole for &Hoist<'_, P> {
    type Rec = P;
    #[inline(always)]
    fn record(self) -> P {
        self.value.take().expect("a Hoist holds its pullback")
    }
}

/// `record_fixed` of a `Copy` pullback of operands that are the same on every trip:
/// into the slot, [`Hoisted`] on the tape.
pub trait HoistFixed {
    /// What the tape holds.
    type Rec;
    /// Records the trip's pullback.
    fn record_fixed(self) -> Self::Rec;
}

impl<P: Copy> HoistFixed for Hoist<'_, P> {
    type Rec = Hoisted;
    #[inline(always)]
    fn record_fixed(self) -> Hoisted {
        self.slot.0.set(self.value.get());
        Hoisted
    }
}

/// `record_fixed` of any other pullback: the pullback itself on the tape.
pub trait HoistFixedWhole {
    /// What the tape holds.
    type Rec;
    /// Records the trip's pullback.
    fn record_fixed(self) -> Self::Rec;
}

impl<P> HoistFixedWhole for &Hoist<'_, P> {
    type Rec = P;
    #[inline(always)]
    fn record_fixed(self) -> P {
        self.value.take().expect("a Hoist holds its pullback")
    }
}

/// A trip's record on its way back from the tape: `Unhoist::new(&slot, rec).get()`.
pub struct Unhoist<'a, P, R> {
    slot: &'a HoistSlot<P>,
    rec: Cell<Option<R>>,
}

impl<'a, P, R> Unhoist<'a, P, R> {
    /// Wraps the record popped from the tape.
    #[inline(always)]
    pub fn new(slot: &'a HoistSlot<P>, rec: R) -> Self {
        Unhoist {
            slot,
            rec: Cell::new(Some(rec)),
        }
    }
}

/// `get` of a [`Hoisted`] record: the slot's pullback.
pub trait UnhoistInvariant {
    /// The pullback.
    type Out;
    /// The trip's pullback.
    fn get(self) -> Self::Out;
}

impl<P: Copy> UnhoistInvariant for Unhoist<'_, P, Hoisted> {
    type Out = P;
    #[inline(always)]
    fn get(self) -> P {
        self.slot
            .0
            .get()
            .expect("mochi: a hoisted pullback is read after its loop ran")
    }
}

/// `get` of any other record: the record itself.
pub trait UnhoistWhole {
    /// The pullback.
    type Out;
    /// The trip's pullback.
    fn get(self) -> Self::Out;
}

impl<P, R> UnhoistWhole for &Unhoist<'_, P, R> {
    type Out = R;
    #[inline(always)]
    fn get(self) -> R {
        self.rec.take().expect("an Unhoist holds its record")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Copy, Debug, PartialEq)]
    struct Scale(f64);
    impl Invariant for Scale {}

    #[derive(Debug, PartialEq)]
    struct Whole(Vec<f64>);

    #[test]
    fn an_invariant_pullback_is_kept_once_and_read_back_every_trip() {
        let slot = HoistSlot::new();
        let mut tape = Vec::new();
        for _ in 0..3 {
            tape.push(Hoist::new(&slot, Scale(2.5)).record());
        }
        assert_eq!(std::mem::size_of_val(&tape[0]), 0);
        while let Some(rec) = tape.pop() {
            assert_eq!(Unhoist::new(&slot, rec).get(), Scale(2.5));
        }
    }

    #[test]
    fn a_copy_pullback_of_fixed_operands_is_kept_once() {
        #[derive(Clone, Copy, Debug, PartialEq)]
        struct Ln(f64);
        let slot = HoistSlot::new();
        let rec = Hoist::new(&slot, Ln(0.5)).record_fixed();
        assert_eq!(std::mem::size_of_val(&rec), 0);
        assert_eq!(Unhoist::new(&slot, rec).get(), Ln(0.5));
        let slot = HoistSlot::new();
        let rec = Hoist::new(&slot, Whole(vec![1.0])).record_fixed();
        assert_eq!(Unhoist::new(&slot, rec).get(), Whole(vec![1.0]));
    }

    #[test]
    fn any_other_pullback_is_its_own_record() {
        let slot = HoistSlot::new();
        let mut tape = Vec::new();
        for k in 0..3 {
            tape.push(Hoist::new(&slot, Whole(vec![k as f64])).record());
        }
        let mut k = 3;
        while let Some(rec) = tape.pop() {
            k -= 1;
            assert_eq!(Unhoist::new(&slot, rec).get(), Whole(vec![k as f64]));
        }
    }
}
