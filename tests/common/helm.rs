//! The test suite's Helm (v4, built from its Go module by scripts/helm.sh) and the chart.

use std::path::{Path, PathBuf};
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The Helm binary (`DUMBMONIT_HELM`, else target/testenv/helm), built when it is not yet.
pub fn bin() -> PathBuf {
    let bin = std::env::var_os("DUMBMONIT_HELM")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(ROOT).join("target/testenv/helm"));
    if !bin.exists() {
        let out = Command::new(Path::new(ROOT).join("scripts/helm.sh")).arg("build").output().unwrap();
        assert!(out.status.success(), "scripts/helm.sh build: {}", String::from_utf8_lossy(&out.stderr));
    }
    bin
}

/// deploy/helm/dumbmonit.
pub fn chart() -> PathBuf {
    Path::new(ROOT).join("deploy/helm/dumbmonit")
}

/// `helm template dumbmonit CHART -n dumbmonit ARGS`: the YAML, or what Helm said.
pub fn template(args: &[&str]) -> Result<String, String> {
    let out = Command::new(bin())
        .args(["template", "dumbmonit"])
        .arg(chart())
        .args(["--namespace", "dumbmonit"])
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if out.status.success() { Ok(stdout) } else { Err(format!("{stderr}{stdout}")) }
}
