//! One scheduling cycle.
