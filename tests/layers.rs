//! The house's rooms: each top-level module of `src/` imports only modules of a lower layer, so
//! there is no import circle and each room can be read with only what is below it in mind.
//! A new module must be given its layer here.

use std::collections::BTreeSet;
use std::path::Path;

/// From the bottom up. A module may use modules of lower layers only, never its own layer's.
const LAYERS: &[&[&str]] = &[
    &["collection"],
    &["error", "clock", "auth", "secret"],
    &["kube", "rbac"],
    &["collect", "config"],
    &["record", "health", "wire"],
    &["metrics", "rules", "report"],
    &["state", "replay"],
    &["notify"],
    &["board"],
    &["serve", "agent"],
    &["web", "manifests"],
    &["demo"],
    &["cli"],
];

fn layer(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// The code of a file without its unit tests (which may use anything).
fn without_tests(text: &str) -> &str {
    match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    }
}

/// The top-level modules named by `crate::NAME` in a text.
fn uses(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for (i, _) in text.match_indices("crate::") {
        let before = text[..i].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let name: String =
            text[i + "crate::".len()..].chars().take_while(|c| c.is_ascii_lowercase() || *c == '_').collect();
        if !name.is_empty() {
            found.insert(name);
        }
    }
    found
}

fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// (module, module it uses, file) for every use across modules.
fn edges(src: &Path) -> Vec<(String, String, String)> {
    let mut paths = Vec::new();
    files(src, &mut paths);
    let mut out = Vec::new();
    for path in paths {
        let rel = path.strip_prefix(src).unwrap();
        let top = rel.components().next().unwrap().as_os_str().to_string_lossy().trim_end_matches(".rs").to_string();
        if top == "lib" || top == "main" {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for used in uses(without_tests(&text)) {
            if used != top {
                out.push((top.clone(), used, rel.display().to_string()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_module_uses_only_modules_below_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let edges = edges(&src);
    assert!(edges.len() > 50, "the scan found too few uses to be right: {}", edges.len());
    let mut wrong = Vec::new();
    for (module, used, file) in &edges {
        match (layer(module), layer(used)) {
            (None, _) => wrong.push(format!("{module} ({file}) has no layer in tests/layers.rs")),
            (_, None) => wrong.push(format!("{used} (used by {file}) has no layer in tests/layers.rs")),
            (Some(a), Some(b)) if b >= a => wrong.push(format!("{file}: {module} uses {used}, which is not below it")),
            _ => {}
        }
    }
    wrong.dedup();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_scan_sees_a_use_in_either_direction() {
    // The check above is only as good as the scan: it must see both forms of a use, and not a
    // name that merely ends in "crate".
    let text = "use crate::serve::Board;\nfn f() { crate::web::start(); }\nlet x = mycrate::nope;";
    assert_eq!(uses(text), BTreeSet::from(["serve".to_string(), "web".to_string()]));
    let with_tests = "use crate::kube;\n#[cfg(test)]\nmod tests { use crate::cli; }";
    assert_eq!(uses(without_tests(with_tests)), BTreeSet::from(["kube".to_string()]));
    // An upward use is caught.
    let (a, b) = (layer("serve").unwrap(), layer("web").unwrap());
    assert!(b > a, "web is above serve");
}
