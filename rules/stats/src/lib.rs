//! Reverse rules for log-densities, bijections to unconstrained space and kernel
//! matrices. The rules land in the next commits; this crate is a workspace member
//! already so the workspace builds.
