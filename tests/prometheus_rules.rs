//! `dumbmonit rules` for Prometheus: it passes `promtool check rules`, and `promtool test rules`
//! reproduces on the same series the timings that the replay test checks.

mod common;

use common::dumbmonit;

fn promtool(args: &[&str], dir: &std::path::Path) -> (bool, String) {
    let out = std::process::Command::new("promtool")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("promtool is needed: install the Debian package `prometheus` (scripts/test.sh does)");
    (out.status.success(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_exported_rules_pass_promtool_and_its_unit_tests() {
    let dir = tempfile::tempdir().unwrap();
    let run = dumbmonit(&["rules".into()], &[], dir.path()).await;
    assert_eq!(run.code, 0);
    std::fs::write(dir.path().join("rules.yml"), &run.stdout).unwrap();
    let (ok, report) = promtool(&["check", "rules", "rules.yml"], dir.path());
    assert!(ok, "{report}");
    assert!(report.contains("SUCCESS: 34 rules found"), "{report}");

    let test = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/prometheus/rules_test.yml");
    std::fs::copy(test, dir.path().join("rules_test.yml")).unwrap();
    let (ok, report) = promtool(&["test", "rules", "rules_test.yml"], dir.path());
    assert!(ok, "promtool test rules failed:\n{report}");
    assert!(report.contains("SUCCESS"), "{report}");
}
