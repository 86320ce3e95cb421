//! Tuning of mimalloc, the allocator the binary and the benches use.

// The binary picks mimalloc; this keeps its C library linked wherever `tune` is.
use mimalloc as _;

/// mimalloc hands a freed page back to the system 10 ms after it empties. A load
/// frees every decoded object right after modelling it and allocates the next batch
/// at once, so the same pages went back and were faulted in (and zeroed) again
/// thousands of times: a sixth of a live list's CPU, a tenth of a snapshot load's.
/// A second's delay keeps them through a load; idle memory is returned as before.
pub fn tune() {
    /// `mi_option_purge_delay`: the sixteenth option of mimalloc.h, in both the v2
    /// and the v3 library that libmimalloc-sys (pinned in Cargo.lock) builds; the
    /// sys crate names no constant for it.
    const MI_OPTION_PURGE_DELAY: std::ffi::c_int = 15;
    const DELAY_MS: std::ffi::c_long = 1000;
    unsafe extern "C" {
        fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
    }
    // SAFETY: sets one integer option; no pointers, callable from any thread.
    unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, DELAY_MS) }
}
