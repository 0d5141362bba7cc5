//! stub
use crate::conform::case::Case;
pub fn cases() -> Vec<Case> { vec![] }
