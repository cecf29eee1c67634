//! The list-page decoder, with each compact view: any bytes decode or fail with a reason.
#![no_main]

use dumbmonit::collect::{Api, Node, Pod, Pvc};
use dumbmonit::kube::fetch::decode_page;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(page) = decode_page::<Api<Pod>>(data) {
        for pod in &page.items {
            let _ = pod.0.crashlooping();
        }
        let _ = page.continue_token();
    }
    let _ = decode_page::<Api<Node>>(data);
    let _ = decode_page::<Api<Pvc>>(data);
    let _ = decode_page::<Api<dumbmonit::collect::events::Event>>(data);
});
