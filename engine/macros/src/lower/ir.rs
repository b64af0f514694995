//! What lowering produces: a small typed IR of what differentiation adds to a body,
//! and its emission as tokens.
//!
//! The IR names the transform's own vocabulary: the **tape** (a [`Slot`] the forward
//! sweep fills and the reverse sweep reads back), the **rule calls** and the type pins
//! of the forward sweep ([`Fwd`]), and the **cotangent flow** of the reverse sweep
//! ([`Rev`]: pullback calls, accumulations, splits of aggregate cotangents, and the
//! control flow that replays the forward sweep's record). Primal code — the user's
//! expressions and statements, as written or as rewritten by the desugaring — is
//! carried as tokens inside it ([`Fwd::Primal`], the conditions and patterns of the
//! control flow); so are the cotangent *places* (`__mochi_d3`, `(*__mochi_dp0).1`).
//!
//! Every path into the runtime support (`::mochi::__private::…`) that the lowering of
//! statements needs is written here, in [`ToTokens`] impls, and nowhere else in the
//! lowering of statements and control flow.
//!
//! A [`Code`]'s reverse pieces are kept in *forward* order (the order the forward
//! sweep runs the statements they reverse) and emitted backwards, at every level.

use proc_macro2::{Ident, TokenStream};
use quote::{quote, ToTokens};

/// Where the forward sweep keeps a value for the reverse sweep.
#[derive(Clone)]
pub enum Slot {
    /// `let s = v;` at the top level of the body: read once, in place.
    Local(Ident),
    /// `s = Some(v);` inside a branch, into an `Option` declared at the top.
    Branch(Ident),
    /// `s.push(v);` inside a loop, onto a pooled stack declared at the top.
    Loop(Ident),
}

impl Slot {
    /// The declaration at the top of the forward sweep, if the slot needs one.
    pub fn declaration(&self) -> Option<TokenStream> {
        match self {
            Slot::Local(_) => None,
            Slot::Branch(s) => Some(quote!(let mut #s = ::core::option::Option::None;)),
            Slot::Loop(s) => Some(quote!(let mut #s = ::mochi::__private::Stack::new({
                static SITE: ::mochi::__private::Site = ::mochi::__private::Site::new();
                &SITE
            });)),
        }
    }

    /// The reverse sweep's expression that takes the saved value back.
    pub fn load(&self) -> TokenStream {
        match self {
            Slot::Local(s) => quote!(#s),
            Slot::Branch(s) => quote!(::mochi::__private::unslot(&mut #s)),
            Slot::Loop(s) => quote!(#s.pop()),
        }
    }
}

/// A statement of the forward sweep.
pub enum Fwd {
    /// Primal code, as written or rewritten (whole statements).
    Primal(TokenStream),
    /// `let name = value;`: a value the lowering introduces.
    Let { name: Ident, value: TokenStream },
    /// `let (value, pullback) = call;`: a rule called on the operands.
    Rule {
        value: Ident,
        pullback: Ident,
        call: TokenStream,
    },
    /// Records the type of a cotangent variable: the tangent type of `value`.
    Pin { ty: Ident, value: TokenStream },
    /// Saves `value` for the reverse sweep.
    Save { slot: Slot, value: TokenStream },
    /// `if cond { then } else { els }` (no `else` when `els` is `None`).
    If {
        cond: TokenStream,
        then: Vec<Fwd>,
        els: Option<Vec<Fwd>>,
    },
    /// `match scrutinee { pattern => { arm = k; body } … }`: each arm records its
    /// number `k` in `arm`.
    Match {
        scrutinee: TokenStream,
        arm: Ident,
        arms: Vec<(TokenStream, Vec<Fwd>)>,
    },
    /// A loop that counts its trips in `count`: `prelude; let mut count = 0; while
    /// !(stop) && (cond) { head; body; count += 1; }`.
    Counted {
        prelude: TokenStream,
        count: Ident,
        stop: TokenStream,
        cond: TokenStream,
        head: TokenStream,
        body: Vec<Fwd>,
    },
    /// `for pattern in iter { body }` (replayed backwards from a saved iterator).
    For {
        pattern: TokenStream,
        iter: TokenStream,
        body: Vec<Fwd>,
    },
    /// `{ body }`.
    Block(Vec<Fwd>),
}

/// A cotangent flowing back: taken from its place (which becomes a structural zero) or
/// given by an expression of the reverse sweep.
pub enum Adj {
    /// `take(&mut place)`.
    Take(TokenStream),
    /// `{ pre; index_take(&mut place, &shape, index) }`: one element of a container's.
    TakeElement {
        pre: TokenStream,
        place: TokenStream,
        shape: TokenStream,
        index: TokenStream,
    },
    /// The cotangents of a pattern's names, in its shape (a tuple, an array).
    Pattern(Vec<Adj>, Brackets),
    /// A structural zero.
    Zero,
    /// An expression written out as it is (a view's part of a cotangent).
    Raw(TokenStream),
    /// The cotangents of the elements `push` or `extend_from_slice` added to a buffer,
    /// off the end of its place (`n` elements, or one); with `row`, off the end of that
    /// row of the place (`m[i].push(v)` on a `Vec<Vec<f64>>`).
    TakeTail {
        place: TokenStream,
        n: Option<TokenStream>,
        row: Option<TokenStream>,
    },
}

/// How [`Adj::Pattern`] groups its parts.
#[derive(Clone, Copy)]
pub enum Brackets {
    Tuple,
    Array,
}

/// How a cotangent is added into a place.
#[derive(Clone, Copy)]
pub enum AccKind {
    /// `*dst += v`.
    Plain,
    /// Into the wrapper of an `unwrap`ped value (`Option`: `Some(v)`).
    Unwrapped,
    /// From a value of another cotangent type (an array into a slice's `Vec`, an
    /// `Option` into its `Some` value's).
    From,
}

/// A statement of the reverse sweep.
pub enum Rev {
    /// A rule's pullback: `pull(pullback, take(&mut out), (&mut a, …))`, with a
    /// temporary for a cotangent that two arguments share (`x * x`).
    Pull {
        pullback: TokenStream,
        out: TokenStream,
        args: Vec<Option<TokenStream>>,
        /// Fresh names of the temporaries, one per argument.
        temps: Vec<Ident>,
        /// The arguments whose cotangent may be of another type than the callee's
        /// (`&h` of an array given for a `&[f64]`): reached through `with_arg_cot`.
        coerce: Vec<bool>,
    },
    /// Adds `value` into the place `into`.
    Acc {
        into: TokenStream,
        value: Adj,
        how: AccKind,
    },
    /// Takes a cotangent that flows nowhere (the place must still become zero).
    Drop(Adj),
    /// Adds the cotangent taken from `from` into element `index` of `into`'s (after
    /// `pre`, which reads saved indices back).
    AccElement {
        pre: TokenStream,
        into: TokenStream,
        shape: TokenStream,
        index: TokenStream,
        from: TokenStream,
        /// `into` was made dense at the top of the reverse sweep: no shape check.
        dense: bool,
    },
    /// The cotangent of an element `&x[i]` passed to a call: element `index` of `into`'s
    /// is taken out into `slot` (after `pre`, which reads saved indices back), `body`
    /// (the call's pullback, which adds into `slot`) runs, and `slot` goes back.
    Slot {
        pre: TokenStream,
        into: TokenStream,
        shape: TokenStream,
        index: TokenStream,
        slot: Ident,
        body: Vec<Rev>,
    },
    /// Adds the cotangent in `from` into `into`'s over the range a sub-slice covered
    /// (saved as `(range, length)` in `saved`), leaving `from` empty with its buffer.
    AccRange {
        saved: TokenStream,
        into: TokenStream,
        from: TokenStream,
    },
    /// Splits the cotangent taken from `from` by member (`.0`, `.field`): each part goes
    /// into its place.
    Split {
        from: TokenStream,
        parts: Vec<(TokenStream, TokenStream)>,
    },
    /// Splits the cotangent of an array of `len` elements taken from `from`: element
    /// `k` goes into its place.
    SplitArray {
        from: TokenStream,
        len: usize,
        parts: Vec<(usize, TokenStream)>,
    },
    /// `if cond { then } else { els }`.
    If {
        cond: TokenStream,
        then: Vec<Rev>,
        els: Vec<Rev>,
    },
    /// `match choice { k => { arm k } … }` with the arm numbers the forward sweep saved.
    Match {
        choice: TokenStream,
        arms: Vec<Vec<Rev>>,
    },
    /// `for _ in 0..times { body }`: a loop's trips, replayed.
    Repeat { times: TokenStream, body: Vec<Rev> },
    /// `for pattern in rev_iter(iter) { body }`: a loop over a saved iterator, backwards.
    Replay {
        pattern: TokenStream,
        iter: TokenStream,
        body: Vec<Rev>,
    },
    /// `{ body }`.
    Block(Vec<Rev>),
    /// Declares a cotangent temporary as a structural zero.
    Temp(Ident),
    /// `place = value;`: a kept shape set back to what it was before a call changed it.
    Restore {
        place: TokenStream,
        value: TokenStream,
    },
    /// Pops a loop trip's record (`record`, the load of its stack) and binds each value
    /// to the name of the stack it would have had, in a holder whose `pop` gives it.
    Unpack {
        record: TokenStream,
        names: Vec<Ident>,
    },
}

/// The declarations and reads of the runtime support the lowering writes besides the
/// IR's statements.
pub mod rt {
    use proc_macro2::{Ident, TokenStream};
    use quote::quote;

    /// `let mut ty = PhantomData;`: a cotangent type, pinned later ([`Fwd::Pin`](super::Fwd::Pin)).
    pub fn type_slot(ty: &Ident) -> TokenStream {
        quote!(let mut #ty = ::core::marker::PhantomData;)
    }
    /// `let mut d = zero_for(ty);`: a cotangent variable, a structural zero of its type.
    pub fn cot_decl(d: &Ident, ty: &Ident) -> TokenStream {
        quote!(let mut #d = ::mochi::__private::zero_for(#ty);)
    }
    /// `let mut d = zero();`: a cotangent variable whose type inference finds.
    pub fn zero_decl(d: &Ident) -> TokenStream {
        quote!(let mut #d = ::mochi::__private::zero();)
    }
    /// Seeds a result's cotangent place with the reverse sweep's `__mochi_dy`.
    pub fn seed(place: &TokenStream) -> TokenStream {
        quote!(::mochi::__private::acc(&mut #place, __mochi_dy);)
    }
    /// The shape an index into `container` is checked against: at the container,
    /// where a type that is indexed but no sequence (a struct of the user's with an
    /// `Index` impl) is reported.
    pub fn shape_of(container: &TokenStream) -> TokenStream {
        let span = super::first_span(container);
        quote::quote_spanned!(span=> ::mochi::__private::index_shape(&#container))
    }
    /// The length of a sequence: at the sequence, where a type that is no sequence is
    /// reported.
    pub fn seq_len(seq: &TokenStream) -> TokenStream {
        let span = super::first_span(seq);
        quote::quote_spanned!(span=> ::mochi::__private::seq_len(&#seq))
    }
    /// The bounds of a range, as a `(start, end)` the reverse sweep can keep.
    pub fn range_bounds(range: &TokenStream) -> TokenStream {
        quote!(::mochi::__private::range_bounds(#range))
    }
}

impl Rev {
    /// `value` added into the operand cotangent `into`, or taken and dropped when the
    /// operand carries none.
    pub fn back_into(into: Option<&TokenStream>, value: Adj) -> Rev {
        match into {
            Some(c) => Rev::Acc {
                into: c.clone(),
                value,
                how: AccKind::Plain,
            },
            None => Rev::Drop(value),
        }
    }
}

/// Forward statements and reverse pieces of some code; `rev` in *forward* order.
#[derive(Default)]
pub struct Code {
    pub fwd: Vec<Fwd>,
    pub rev: Vec<Rev>,
}

/// Emits reverse pieces kept in forward order: backwards.
pub struct Backwards<'a>(pub &'a [Rev]);

impl ToTokens for Backwards<'_> {
    fn to_tokens(&self, out: &mut TokenStream) {
        for r in self.0.iter().rev() {
            r.to_tokens(out);
        }
    }
}

/// Emits forward statements in order.
pub struct Forwards<'a>(pub &'a [Fwd]);

impl ToTokens for Forwards<'_> {
    fn to_tokens(&self, out: &mut TokenStream) {
        for f in self.0 {
            f.to_tokens(out);
        }
    }
}

impl ToTokens for Fwd {
    fn to_tokens(&self, out: &mut TokenStream) {
        out.extend(match self {
            Fwd::Primal(t) => t.clone(),
            Fwd::Let { name, value } => quote!(let #name = #value;),
            Fwd::Rule {
                value,
                pullback,
                call,
            } => quote!(let (#value, #pullback) = #call;),
            Fwd::Pin { ty, value } => quote!(#ty = ::mochi::__private::cot_of(&#value);),
            Fwd::Save { slot, value } => match slot {
                Slot::Local(s) => quote!(let #s = #value;),
                Slot::Branch(s) => quote!(#s = ::core::option::Option::Some(#value);),
                Slot::Loop(s) => quote!(#s.push(#value);),
            },
            Fwd::If { cond, then, els } => {
                let then = Forwards(then);
                match els {
                    Some(e) => {
                        let e = Forwards(e);
                        quote!(if #cond { #then } else { #e })
                    }
                    None => quote!(if #cond { #then }),
                }
            }
            Fwd::Match {
                scrutinee,
                arm,
                arms,
            } => {
                let arms = arms.iter().enumerate().map(|(k, (pattern, body))| {
                    let body = Forwards(body);
                    quote!(#pattern => { #arm = #k; #body })
                });
                quote!(let #arm: usize; match #scrutinee { #(#arms)* })
            }
            Fwd::Counted {
                prelude,
                count,
                stop,
                cond,
                head,
                body,
            } => {
                let body = Forwards(body);
                quote!(
                    #prelude
                    let mut #count: usize = 0;
                    while !(#stop) && (#cond) {
                        #head
                        #body
                        #count += 1;
                    }
                )
            }
            Fwd::For {
                pattern,
                iter,
                body,
            } => {
                let body = Forwards(body);
                quote!(for #pattern in #iter { #body })
            }
            Fwd::Block(body) => {
                let body = Forwards(body);
                quote!({ #body })
            }
        });
    }
}

impl ToTokens for Adj {
    fn to_tokens(&self, out: &mut TokenStream) {
        out.extend(match self {
            Adj::Take(place) => quote!(::mochi::__private::take(&mut #place)),
            Adj::TakeElement {
                pre,
                place,
                shape,
                index,
            } => quote!({ #pre ::mochi::__private::index_take(&mut #place, &#shape, #index) }),
            Adj::Pattern(parts, Brackets::Tuple) => quote!((#(#parts,)*)),
            Adj::Pattern(parts, Brackets::Array) => quote!([#(#parts,)*]),
            Adj::Zero => quote!(::mochi::__private::zero()),
            Adj::Raw(e) => e.clone(),
            Adj::TakeTail {
                place,
                n: None,
                row: None,
            } => quote!(::mochi::__private::pop_cot(&mut #place)),
            Adj::TakeTail {
                place,
                n: Some(n),
                row: None,
            } => {
                quote!(::mochi::__private::split_cot(&mut #place, #n))
            }
            Adj::TakeTail {
                place,
                n: None,
                row: Some(r),
            } => quote!(::mochi::__private::pop_row_cot(&mut #place, #r)),
            Adj::TakeTail {
                place,
                n: Some(n),
                row: Some(r),
            } => {
                quote!(::mochi::__private::split_row_cot(&mut #place, #r, #n))
            }
        });
    }
}

impl ToTokens for Rev {
    fn to_tokens(&self, out: &mut TokenStream) {
        out.extend(match self {
            Rev::Pull {
                pullback,
                out: dy,
                args,
                temps,
                coerce,
            } => {
                let mut seen: Vec<String> = Vec::new();
                let mut pre = TokenStream::new();
                let mut list = Vec::new();
                let mut post = TokenStream::new();
                let mut wraps = Vec::new();
                for (k, (a, t)) in args.iter().zip(temps).enumerate() {
                    let first = a.as_ref().is_some_and(|c| {
                        let c = c.to_string();
                        let first = !seen.contains(&c);
                        if first {
                            seen.push(c);
                        }
                        first
                    });
                    match a {
                        Some(c) if first && coerce.get(k) == Some(&true) => {
                            list.push(quote!(#t));
                            wraps.push((c, t));
                        }
                        Some(c) if first => list.push(quote!(&mut #c)),
                        Some(c) => {
                            pre.extend(quote!(let mut #t = ::mochi::__private::zero();));
                            list.push(quote!(&mut #t));
                            post.extend(quote!(::mochi::__private::acc(&mut #c, #t);));
                        }
                        None => list.push(quote!(&mut ::mochi::__private::zero())),
                    }
                }
                let mut call = quote!(
                    ::mochi::__private::pull(#pullback, ::mochi::__private::take(&mut #dy), (#(#list,)*));
                );
                for (c, t) in wraps.into_iter().rev() {
                    call = quote!(::mochi::__private::with_arg_cot(&mut #c, |#t| { #call });)
                }
                quote!({
                    #pre
                    #call
                    #post
                })
            }
            // The value is taken before `into` is borrowed: they may be one place
            // (`x = x`).
            Rev::Acc { into, value, how } => {
                let f = match how {
                    AccKind::Plain => quote!(acc),
                    AccKind::Unwrapped => quote!(acc_unwrapped),
                    AccKind::From => quote!(acc_from),
                };
                quote!(let __mochi_v = #value; ::mochi::__private::#f(&mut #into, __mochi_v);)
            }
            Rev::Drop(Adj::Take(place)) => quote!(::mochi::__private::discard(&mut #place);),
            Rev::Drop(value) => quote!(let _ = #value;),
            Rev::AccElement {
                pre,
                into,
                shape,
                index,
                from,
                dense,
            } => {
                let f = if *dense {
                    quote!(index_acc_dense)
                } else {
                    quote!(index_acc)
                };
                quote!({
                    #pre
                    ::mochi::__private::#f(&mut #into, &#shape, #index, ::mochi::__private::take(&mut #from));
                })
            }
            Rev::Slot {
                pre,
                into,
                shape,
                index,
                slot,
                body,
            } => {
                let body = Backwards(body);
                quote!({
                    #pre
                    let mut #slot = ::mochi::__private::index_take(&mut #into, &#shape, #index);
                    #body
                    ::mochi::__private::index_acc(&mut #into, &#shape, #index, #slot);
                })
            }
            Rev::AccRange { saved, into, from } => quote!({
                let (__mochi_r, __mochi_l) = #saved;
                ::mochi::__private::acc_range_from(&mut #into, __mochi_l, __mochi_r, &mut #from);
            }),
            Rev::Split { from, parts } => {
                let accs = parts
                    .iter()
                    .map(|(m, into)| quote!(::mochi::__private::acc(&mut #into, __mochi_g #m);));
                quote!({
                    #[allow(unused_variables)]
                    let __mochi_g = ::mochi::__private::take(&mut #from);
                    #(#accs)*
                })
            }
            Rev::SplitArray { from, len, parts } => {
                let names: Vec<Ident> = (0..*len)
                    .map(|i| quote::format_ident!("__mochi_g{}", i))
                    .collect();
                let accs = parts.iter().map(|(k, into)| {
                    let name = &names[*k];
                    quote!(::mochi::__private::acc(&mut #into, #name);)
                });
                quote!({
                    #[allow(unused_variables)]
                    let [#(#names,)*] = ::mochi::__private::take(&mut #from);
                    #(#accs)*
                })
            }
            Rev::If { cond, then, els } => {
                let (then, els) = (Backwards(then), Backwards(els));
                if els.0.is_empty() {
                    quote!(if #cond { #then })
                } else {
                    quote!(if #cond { #then } else { #els })
                }
            }
            Rev::Match { choice, arms } => {
                let arms = arms.iter().enumerate().map(|(k, body)| {
                    let body = Backwards(body);
                    quote!(#k => { #body })
                });
                quote!(match #choice {
                    #(#arms)*
                    _ => unreachable!("mochi: a match arm the forward sweep did not record")
                })
            }
            Rev::Repeat { times, body } => {
                let body = Backwards(body);
                quote!(for _ in 0..#times { #body })
            }
            Rev::Replay {
                pattern,
                iter,
                body,
            } => {
                let body = Backwards(body);
                quote!(for #pattern in ::mochi::__private::rev_iter(#iter) { #body })
            }
            Rev::Block(body) => {
                let body = Backwards(body);
                quote!({ #body })
            }
            Rev::Temp(t) => quote!(let mut #t = ::mochi::__private::zero();),
            Rev::Restore { place, value } => quote!(#place = #value;),
            Rev::Unpack { record, names } => quote!(
                let (#(#names,)*) = #record;
                #(let mut #names = ::mochi::__private::Saved::new(#names);)*
            ),
        });
    }
}

/// The span of the first token of `ts` (the call site for an empty stream).
fn first_span(ts: &TokenStream) -> proc_macro2::Span {
    ts.clone()
        .into_iter()
        .next()
        .map_or_else(proc_macro2::Span::call_site, |t| t.span())
}
