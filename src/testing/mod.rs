//! Test and bench support, not used by the program itself: kept in the library (not
//! behind `cfg(test)`) because the benches, the integration tests and the TUI's unit
//! tests all reach it, and benches and integration tests see only the public library.

pub mod synthetic;
