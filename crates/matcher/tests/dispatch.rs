//! Dispatch: chosen once, forced by PALMVEIN_MATCHER_ISA at first use, by `set_isa` afterwards.
//! One test function, because the choice is process-wide.

use palmvein_matcher::kernel::{choose_isa, ISA_ENVIRONMENT_VARIABLE};
use palmvein_matcher::{active_isa, available_isas, set_isa, set_isa_by_name, CoreError, Isa};

#[test]
fn dispatch_honours_the_environment_then_set_isa() {
    let available = available_isas();
    assert_eq!(available.last(), Some(&Isa::Scalar));
    // First dispatch reads the environment: force the scalar kernels.
    std::env::set_var(ISA_ENVIRONMENT_VARIABLE, "scalar");
    assert_eq!(active_isa(), Isa::Scalar);
    // Later changes of the variable are ignored: the choice is cached.
    std::env::set_var(ISA_ENVIRONMENT_VARIABLE, available[0].name());
    assert_eq!(active_isa(), Isa::Scalar);
    for &isa in &available {
        assert_eq!(set_isa(isa), Ok(isa));
        assert_eq!(active_isa(), isa);
        assert_eq!(
            palmvein_matcher::dot_i8(&[127, -127, 3], &[127, 127, 2]),
            Ok(6)
        );
    }
    assert_eq!(
        set_isa_by_name("mmx"),
        Err(CoreError::UnknownIsa { name: "mmx".into() })
    );
    for isa in Isa::ALL.into_iter().filter(|isa| !available.contains(isa)) {
        assert!(matches!(
            set_isa(isa),
            Err(CoreError::IsaUnavailable { .. })
        ));
    }
    assert_eq!(
        active_isa(),
        *available.last().unwrap(),
        "a failed set_isa leaves the choice alone"
    );
}

#[test]
fn choose_isa_prefers_the_best_and_explains_what_it_ignores() {
    let best = available_isas()[0];
    assert_eq!(choose_isa(None), (best, None));
    assert_eq!(choose_isa(Some("  ")), (best, None));
    assert_eq!(choose_isa(Some("scalar")), (Isa::Scalar, None));
    let (isa, warning) = choose_isa(Some("sse9"));
    assert_eq!(isa, best);
    assert!(warning.unwrap().contains("\"sse9\" is not an ISA"));
    if let Some(missing) = Isa::ALL.into_iter().find(|isa| !isa.is_available()) {
        let (isa, warning) = choose_isa(Some(missing.name()));
        assert_eq!(isa, best);
        assert!(warning.unwrap().contains("is not available on this CPU"));
    }
}
