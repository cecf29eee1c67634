//! The memory allocator: mimalloc, told to give the pages it frees back to the system at once,
//! and built without transparent huge pages.
//!
//! Why not the C library's: glibc keeps what a cycle frees in its arenas, in pages that still
//! hold a live allocation and cannot be given back; at 150,000 pods list mode held 147 MB of
//! live data in 291 to 377 MB resident, and a trim after each cycle walked every arena. With
//! mimalloc, at 150,000 simulated pods, watch mode holds 353 MB at rest against 409 and list
//! mode 258 against 301, and a cycle on a change costs 80 ms of CPU against 95. Huge pages made a
//! cycle cheaper still (65 ms) and held more everywhere: 394 MB at rest in watch mode, 2,626 MB
//! at the peak for 5,000 clusters against 2,314 (docs/performance.md, eighteenth step).
//!
//! Declared here, in the library, so that every binary built on it (the product's, the tests',
//! the benchmarks') runs on the allocator the product runs on. [`configure`] runs first thing
//! in `main`.

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` in mimalloc v3's `mi_option_t` (`mimalloc.h`; the sys crate names no
/// constant for it): how many milliseconds a freed page waits before it is given back.
const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Freed pages given back at once. mimalloc's default keeps them a second (and an arena's ten
/// times that) for a later allocation to take again: a cycle a minute never does, and the
/// resident size at rest stayed near the cycle's peak (385 MB at 150,000 pods in list mode,
/// against 319 with them given back at once).
pub fn configure() {
    // SAFETY: sets one of mimalloc's options, an integer it reads when it next frees a page.
    unsafe { libmimalloc_sys::mi_option_set(PURGE_DELAY, 0) }
}

/// The purge delay now, in milliseconds.
#[cfg(test)]
fn purge_delay() -> std::ffi::c_long {
    // SAFETY: reads one of mimalloc's options.
    unsafe { libmimalloc_sys::mi_option_get(PURGE_DELAY) }
}

#[cfg(test)]
mod tests {
    /// Set in the test's own process, which measures (the other tests of this binary, run beside
    /// it, would move its resident size).
    const ALONE: &str = "DUMBMONIT_TEST_ALLOCATOR_ALONE";

    /// Resident pages of this process, in bytes.
    fn resident() -> u64 {
        let statm = std::fs::read_to_string("/proc/self/statm").expect("statm");
        let pages: u64 = statm.split_whitespace().nth(1).and_then(|p| p.parse().ok()).expect("resident pages");
        pages * 4096
    }

    /// What a cycle frees is given back before the next: 256 MB of small records made and let
    /// go, on a thread of their own as a cycle's derivation runs, leave less than a quarter of
    /// them resident, measured at once. Measured in a process of its own: this test run again
    /// alone.
    #[test]
    fn memory_freed_is_given_back_at_once() {
        if std::env::var_os(ALONE).is_none() {
            let name = "allocator::tests::memory_freed_is_given_back_at_once";
            let out = std::process::Command::new(std::env::current_exe().expect("the test binary"))
                .args([name, "--exact", "--nocapture", "--test-threads=1"])
                .env(ALONE, "1")
                .output()
                .expect("the test binary runs");
            let said = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success() && said.contains("1 passed"), "alone, the test failed:\n{said}");
            return;
        }
        super::configure();
        assert_eq!(super::purge_delay(), 0, "the option is mimalloc's purge delay");
        let before = resident();
        let (held, after) = std::thread::spawn(move || {
            let records: Vec<Box<[u8; 256]>> = (0..1_000_000).map(|i| Box::new([(i % 251) as u8; 256])).collect();
            let held = resident();
            drop(records);
            (held, resident())
        })
        .join()
        .expect("the thread ends");
        assert!(held > before + 200_000_000, "256 MB made: {before} bytes resident before, {held} after");
        let kept = after.saturating_sub(before);
        assert!(kept < 64_000_000, "{kept} bytes of the 256 MB let go still resident");
    }
}
