//! Returns the C heap's free pages to the system. After a large load (a gallery decrypted from
//! millions of rows) glibc keeps the freed memory of the main thread's heap resident: its top is
//! rarely free, so `free` cannot shrink it. `malloc_trim` also releases free pages in the middle.
use napi::bindgen_prelude::{Uint8ArraySlice, Unknown};
use napi_derive::napi;

use crate::typed_array;

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

#[cfg(all(target_os = "linux", target_env = "gnu"))]
extern "C" {
    fn mallopt(param: i32, value: i32) -> i32;
}

/// Caps how many malloc arenas glibc creates (`M_ARENA_MAX`). glibc gives each new thread an arena
/// of its own, up to 8 per core, each kept at its high-water mark: an idle service held 55 MiB in
/// four of them. It binds only arenas not yet created, so it is called before the process starts
/// its threads. True when set; false where there is nothing to call (not glibc).
#[napi(js_name = "limitMallocArenas")]
pub fn limit_malloc_arenas(count: u32) -> napi::Result<bool> {
    if count == 0 || count > i32::MAX as u32 {
        return Err(napi::Error::from_reason(format!(
            "count must be a positive 32-bit integer, not {count}"
        )));
    }
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        const M_ARENA_MAX: i32 = -8;
        // SAFETY: mallopt takes no pointers and locks the allocator's state itself.
        Ok(unsafe { mallopt(M_ARENA_MAX, count as i32) == 1 })
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        Ok(false)
    }
}

#[cfg(target_os = "linux")]
extern "C" {
    fn madvise(address: *mut std::ffi::c_void, length: usize, advice: i32) -> i32;
}

/// Asks Linux to back a gallery slab with transparent huge pages (2 MiB) where the system leaves
/// that to the program (`/sys/kernel/mm/transparent_hugepage/enabled` = `madvise`). A scan reads
/// hundreds of MB in order; with 4 KiB pages every 4 KiB costs a page walk. Only the 2 MiB-aligned
/// part of the buffer is advised; pages already touched keep their size. True when advised.
#[napi(js_name = "adviseHugePages", ts_args_type = "bytes: Uint8Array")]
pub fn advise_huge_pages(bytes: Unknown<'_>) -> napi::Result<bool> {
    let buffer: Uint8ArraySlice =
        typed_array("bytes", "a Uint8Array", bytes).map_err(napi::Error::from)?;
    #[cfg(target_os = "linux")]
    {
        const HUGE_PAGE: usize = 2 << 20;
        const MADV_HUGEPAGE: i32 = 14;
        let start = buffer.as_ptr() as usize;
        let aligned_start = start.next_multiple_of(HUGE_PAGE);
        let end = (start + buffer.len()) & !(HUGE_PAGE - 1);
        if end <= aligned_start {
            return Ok(false);
        }
        // SAFETY: the range lies inside the buffer's mapping; MADV_HUGEPAGE changes no contents.
        Ok(unsafe { madvise(aligned_start as *mut _, end - aligned_start, MADV_HUGEPAGE) == 0 })
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = buffer;
        Ok(false)
    }
}

/// Bytes from the start of `bytes` to the first address that is a multiple of `alignment` (a power
/// of two). A `SharedArrayBuffer` of 1 GiB comes from glibc's `calloc`, whose mapping starts 16
/// bytes before the data: rows laid from its start straddle cache lines, and its huge pages start
/// mid-region. The slab memory pads each slab by this much.
#[napi(
    js_name = "bytesToAlignment",
    ts_args_type = "bytes: Uint8Array, alignment: number"
)]
pub fn bytes_to_alignment(bytes: Unknown<'_>, alignment: u32) -> napi::Result<u32> {
    let buffer: Uint8ArraySlice =
        typed_array("bytes", "a Uint8Array", bytes).map_err(napi::Error::from)?;
    if !alignment.is_power_of_two() {
        return Err(napi::Error::from_reason(format!(
            "alignment must be a power of two, not {alignment}"
        )));
    }
    let start = buffer.as_ptr() as usize;
    Ok((start.next_multiple_of(alignment as usize) - start) as u32)
}
