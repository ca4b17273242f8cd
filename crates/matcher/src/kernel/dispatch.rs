//! Pick the kernel table once and cache it (memchr-style: one atomic, read with `Relaxed` on
//! every call; the tables are `'static`, so a racing first call at worst detects twice).

use std::sync::atomic::{AtomicU8, Ordering};

use super::{Isa, Kernels};
use crate::CoreError;

/// Forces the ISA at first dispatch (tests, benchmarks), e.g. `PALMVEIN_MATCHER_ISA=avx2`.
pub const ISA_ENVIRONMENT_VARIABLE: &str = "PALMVEIN_MATCHER_ISA";

const UNSET: u8 = u8::MAX;

/// Index into `Isa::ALL` of the active ISA, or `UNSET`.
static ACTIVE: AtomicU8 = AtomicU8::new(UNSET);

fn index_of(isa: Isa) -> u8 {
    Isa::ALL
        .iter()
        .position(|candidate| *candidate == isa)
        .unwrap_or(Isa::ALL.len() - 1) as u8
}

/// The kernels in use, chosen on the first call (best available, or the environment's choice).
#[inline]
pub fn active_kernels() -> &'static Kernels {
    match ACTIVE.load(Ordering::Relaxed) {
        UNSET => initialize(),
        index => Isa::ALL[usize::from(index)].table(),
    }
}

/// The ISA in use (chooses it if nothing has run yet).
pub fn active_isa() -> Isa {
    active_kernels().isa()
}

/// ISAs usable on this CPU, best first; always ends with `Scalar`.
pub fn available_isas() -> Vec<Isa> {
    Isa::ALL
        .into_iter()
        .filter(|isa| isa.is_available())
        .collect()
}

/// Forces an ISA (tests, benchmarks); fails if this CPU cannot run it. Returns the active ISA.
pub fn set_isa(isa: Isa) -> Result<Isa, CoreError> {
    if !isa.is_available() {
        return Err(CoreError::IsaUnavailable {
            isa,
            available: available_isas(),
        });
    }
    ACTIVE.store(index_of(isa), Ordering::Relaxed);
    Ok(isa)
}

/// The ISA to start with given the environment variable's value, and a warning to print when the
/// request cannot be honoured (unknown name, or not available on this CPU).
pub fn choose_isa(requested: Option<&str>) -> (Isa, Option<String>) {
    let best = available_isas()[0];
    let Some(requested) = requested.map(str::trim).filter(|value| !value.is_empty()) else {
        return (best, None);
    };
    let names = || Isa::ALL.map(Isa::name).join(", ");
    match Isa::from_name(requested) {
        Some(isa) if isa.is_available() => (isa, None),
        Some(isa) => (
            best,
            Some(format!("{ISA_ENVIRONMENT_VARIABLE}={isa} is not available on this CPU; ignored, using {best}")),
        ),
        None => (
            best,
            Some(format!("{ISA_ENVIRONMENT_VARIABLE}={requested:?} is not an ISA ({}); ignored, using {best}", names())),
        ),
    }
}

#[cold]
fn initialize() -> &'static Kernels {
    let requested = std::env::var(ISA_ENVIRONMENT_VARIABLE).ok();
    let (isa, warning) = choose_isa(requested.as_deref());
    match ACTIVE.compare_exchange(UNSET, index_of(isa), Ordering::Relaxed, Ordering::Relaxed) {
        Ok(_) => {
            if let Some(warning) = warning {
                eprintln!("palmvein matcher: {warning}");
            }
            isa.table()
        }
        // Another thread (or `set_isa`) got there first: its choice stands.
        Err(index) => Isa::ALL[usize::from(index)].table(),
    }
}
