//! The daily design-doc review: survey the docs, plan the day, keep one tracking issue.

pub mod front_matter;
pub mod plan;
pub mod review;
pub mod survey;
