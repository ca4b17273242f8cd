//! Returns the C heap's free pages to the system. After a large load (a gallery decrypted from
//! millions of rows) glibc keeps the freed memory of the main thread's heap resident: its top is
//! rarely free, so `free` cannot shrink it. `malloc_trim` also releases free pages in the middle.
use napi_derive::napi;

#[cfg(all(target_os = "linux", target_env = "gnu"))]
extern "C" {
    fn malloc_trim(pad: usize) -> i32;
}

/// True when memory was returned to the system; false where there is nothing to call (not glibc).
#[napi]
pub fn release_free_heap() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: malloc_trim takes no pointers and is thread-safe (it locks each arena).
        unsafe { malloc_trim(0) == 1 }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}
