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
    assert!(report.contains("SUCCESS: 39 rules found"), "{report}");

    let test = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/prometheus/rules_test.yml");
    std::fs::copy(test, dir.path().join("rules_test.yml")).unwrap();
    let (ok, report) = promtool(&["test", "rules", "rules_test.yml"], dir.path());
    assert!(ok, "promtool test rules failed:\n{report}");
    assert!(report.contains("SUCCESS"), "{report}");
}

/// `dumbmonit rules --config FILE`: the file's `[[rule]]` entries without matchers tune the
/// export (a rule off is left out, a hold is its `for`, labels are added); those with matchers
/// are serve's alone, and said so. An overridden hold passes `promtool test rules`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_files_rules_tune_the_export() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("dumbmonit.toml");
    std::fs::write(
        &file,
        "state_dir = \"state\"\nexternal_url = \"https://dumbmonit.example.com\"\n\
         [[rule]]\nname = \"KubernetesNodeNotReady\"\nfor = \"12m\"\nlabels = { team = \"platform\" }\n\
         [[rule]]\nname = \"KubernetesNodePressure\"\nenabled = false\n\
         [[rule]]\nname = \"KubernetesPodPending\"\nseverity = \"warning\"\nmatchers = ['namespace=\"prod\"']\n",
    )
    .unwrap();
    let run = dumbmonit(&["rules".into(), "--config".into(), file.to_str().unwrap().into()], &[], dir.path()).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!run.stdout.contains("alert: KubernetesNodePressure\n"), "a rule turned off is left out");
    assert!(
        run.stdout.contains(
            "# - [[rule]] 3 (KubernetesPodPending, matchers namespace=\"prod\") is applied by serve only: route those alerts in Alertmanager;"
        ),
        "{}",
        run.stdout
    );
    std::fs::write(dir.path().join("rules.yml"), &run.stdout).unwrap();
    let (ok, report) = promtool(&["check", "rules", "rules.yml"], dir.path());
    assert!(ok && report.contains("SUCCESS: 38 rules found"), "{report}");
    assert!(
        run.stdout.contains("runbook_url: 'https://dumbmonit.example.com/runbooks/en#kubernetespodcrashlooping'"),
        "{}",
        run.stdout
    );
    std::fs::write(
        dir.path().join("tuned_test.yml"),
        r#"rule_files:
  - rules.yml
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'dumbmonit_k8s_node_ready{cluster="lab",node="node-3"}'
        values: '1x1 0x30'
    alert_rule_test:
      - eval_time: 13m
        alertname: KubernetesNodeNotReady
        exp_alerts: []
      - eval_time: 14m
        alertname: KubernetesNodeNotReady
        exp_alerts:
          - exp_labels: {severity: warning, team: platform, cluster: lab, node: node-3}
            exp_annotations:
              summary: 'Node node-3 is not ready'
              description: 'The Ready condition of node node-3 is False, Unknown or missing.'
              runbook_url: 'https://dumbmonit.example.com/runbooks/en#kubernetesnodenotready'
"#,
    )
    .unwrap();
    let (ok, report) = promtool(&["test", "rules", "tuned_test.yml"], dir.path());
    assert!(ok, "the overridden hold: {report}");

    std::fs::write(&file, "state_dir = \"state\"\n[[rule]]\nname = \"KubernetesNodeGone\"\n").unwrap();
    let refused = dumbmonit(&["rules".into(), "--config".into(), file.to_str().unwrap().into()], &[], dir.path()).await;
    assert_eq!(refused.code, 3);
    assert!(
        refused.stderr.contains("rule 1 (\"KubernetesNodeGone\"): field `name`: no built-in rule is called \"KubernetesNodeGone\"; the rules are KubernetesNodeNotReady, "),
        "{}",
        refused.stderr
    );
}
