//! The CA parser (PEM, base64 of PEM, DER): never panics, and what it accepts is non-empty.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(certificates) = dumbmonit::kube::ca::parse_ca(data, "--ca") {
        assert!(!certificates.is_empty());
    }
});
