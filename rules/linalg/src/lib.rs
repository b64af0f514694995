//! Reverse rules for dense linear algebra on ndarray matrices (Cholesky, triangular
//! solves, log-determinant, solve), with numerics by faer. The rules land in the next
//! commits; this crate is a workspace member already so the workspace builds.
