//! The address parser: any text either becomes an `https://host:port` URL or a clear error.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(url) = dumbmonit::kube::address::parse_address(text, 6443) {
        assert!(url.starts_with("https://"), "{url}");
        // What it returns parses again to itself.
        assert_eq!(dumbmonit::kube::address::parse_address(&url, 6443).ok().as_deref(), Some(url.as_str()));
        let _ = dumbmonit::kube::address::host_of(&url);
    }
});
