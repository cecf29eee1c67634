//! The house's rooms: each top-level module of `src/` imports only modules of a lower layer, so
//! there is no import circle and each room can be read with only what is below it in mind.
//! A new module must be given its layer here.

use std::collections::BTreeSet;
use std::path::Path;

use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};

/// From the bottom up. A module may use modules of lower layers only, never its own layer's.
const LAYERS: &[&[&str]] = &[
    &["allocator", "collection", "flat", "silence", "lang", "redact"],
    &["error", "clock", "auth", "secret"],
    &["kube", "logs"],
    &["collect", "config"],
    &["record", "health", "wire", "rbac"],
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

/// The top-level modules a top-level module's file names (see [`uses_in`]).
fn uses(text: &str) -> BTreeSet<String> {
    uses_in(text, 1)
}

/// The top-level modules that a file's code names, read as Rust tokens (so that comments and
/// strings are not code): `crate::NAME` and `$crate::NAME` paths, grouped ones
/// (`crate::{a, b::{c, d}}`, on as many lines as they like), and `super::` paths that climb to
/// the crate's root. `depth` is how deep the file's module is: 1 for src/cli.rs and
/// src/serve/mod.rs, 2 for src/serve/agents.rs. A `super::` that stays inside the top-level
/// module is a use of its own room; one that climbs to the root names a room as `crate::`
/// does. Inline modules (`mod name { … }`) count one deeper; `#[cfg(test)]` items are left out.
/// A file included with `#[path]` is taken at the depth its own place in src/ gives.
fn uses_in(text: &str, depth: usize) -> BTreeSet<String> {
    let tokens: TokenStream = text.parse().unwrap_or_else(|e| panic!("not Rust tokens: {e:?}"));
    let mut found = BTreeSet::new();
    walk(&tokens.into_iter().collect::<Vec<_>>(), depth, &mut found);
    found
}

fn walk(tokens: &[TokenTree], depth: usize, found: &mut BTreeSet<String>) {
    let mut i = 0;
    while i < tokens.len() {
        if cfg_test(tokens, i) {
            i = after_item(tokens, i + 2);
            continue;
        }
        match &tokens[i] {
            TokenTree::Ident(id) if id == "mod" => {
                if let (Some(TokenTree::Ident(_)), Some(TokenTree::Group(body))) =
                    (tokens.get(i + 1), tokens.get(i + 2))
                    && body.delimiter() == Delimiter::Brace
                {
                    walk(&body.stream().into_iter().collect::<Vec<_>>(), depth + 1, found);
                    i += 3;
                    continue;
                }
            }
            TokenTree::Ident(id) if id == "crate" && path_sep(tokens, i + 1) && !after_path_sep(tokens, i) => {
                rooms(tokens.get(i + 3), found);
            }
            TokenTree::Ident(id) if id == "super" && path_sep(tokens, i + 1) && !after_path_sep(tokens, i) => {
                let mut climbs = 0;
                let mut j = i;
                while matches!(tokens.get(j), Some(TokenTree::Ident(s)) if s == "super") && path_sep(tokens, j + 1) {
                    climbs += 1;
                    j += 3;
                }
                // Fewer climbs stay inside the room; more than the depth is no path at all.
                if climbs == depth {
                    rooms(tokens.get(j), found);
                }
            }
            TokenTree::Group(g) => walk(&g.stream().into_iter().collect::<Vec<_>>(), depth, found),
            _ => {}
        }
        i += 1;
    }
}

/// The rooms named by the segment after the crate's root: `web`, or each first segment of a
/// group (`{board, web::Page, {a, b}}`).
fn rooms(segment: Option<&TokenTree>, found: &mut BTreeSet<String>) {
    match segment {
        Some(TokenTree::Ident(id)) => {
            let name = id.to_string();
            if name.starts_with(|c: char| c.is_ascii_lowercase()) && !["self", "super", "crate"].contains(&&*name) {
                found.insert(name);
            }
        }
        Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace => {
            let inner: Vec<TokenTree> = g.stream().into_iter().collect();
            for item in inner.split(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ',')) {
                rooms(item.first(), found);
            }
        }
        _ => {}
    }
}

/// `::` at `i`.
fn path_sep(tokens: &[TokenTree], i: usize) -> bool {
    matches!(
        (tokens.get(i), tokens.get(i + 1)),
        (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
            if a.as_char() == ':' && a.spacing() == Spacing::Joint && b.as_char() == ':'
    )
}

/// The token at `i` follows a `::`: not the start of a path.
fn after_path_sep(tokens: &[TokenTree], i: usize) -> bool {
    i >= 2 && path_sep(tokens, i - 2)
}

/// `#[cfg(test)]` at `i`.
fn cfg_test(tokens: &[TokenTree], i: usize) -> bool {
    matches!(
        (tokens.get(i), tokens.get(i + 1)),
        (Some(TokenTree::Punct(p)), Some(TokenTree::Group(g)))
            if p.as_char() == '#' && g.delimiter() == Delimiter::Bracket
                && g.stream().to_string().split_whitespace().collect::<String>() == "cfg(test)"
    )
}

/// Where the item starting at `i` ends (past its other attributes, then up to its body or `;`).
fn after_item(tokens: &[TokenTree], mut i: usize) -> usize {
    while i < tokens.len() {
        match &tokens[i] {
            TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => return i + 1,
            TokenTree::Punct(p) if p.as_char() == ';' => return i + 1,
            _ => i += 1,
        }
    }
    i
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

/// (module, module it uses, file) for every use across modules in `src` (each file by its path
/// under src/, and its text).
fn edges_of(src: &[(String, String)]) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for (rel, text) in src {
        let parts: Vec<&str> = rel.split('/').collect();
        let top = parts[0].trim_end_matches(".rs").to_string();
        if top == "lib" || top == "main" {
            continue;
        }
        // src/serve/mod.rs is the module serve (depth 1), src/serve/agents.rs serve::agents (2).
        let depth = if parts.len() > 1 && parts[parts.len() - 1] == "mod.rs" { parts.len() - 1 } else { parts.len() };
        for used in uses_in(without_tests(text), depth) {
            if used != top {
                out.push((top.clone(), used, rel.clone()));
            }
        }
    }
    out.sort();
    out
}

/// Every file of `src`: (its path under src/, its text).
fn sources(src: &Path) -> Vec<(String, String)> {
    let mut paths = Vec::new();
    files(src, &mut paths);
    paths
        .iter()
        .map(|p| {
            let rel: Vec<String> =
                p.strip_prefix(src).unwrap().components().map(|c| c.as_os_str().to_string_lossy().into()).collect();
            (rel.join("/"), std::fs::read_to_string(p).unwrap())
        })
        .collect()
}

/// (module, module it uses, file) for every use across modules of the crate.
fn edges(src: &Path) -> Vec<(String, String, String)> {
    edges_of(&sources(src))
}

/// What breaks the layering among `edges`.
fn wrong(edges: &[(String, String, String)]) -> Vec<String> {
    let mut wrong = Vec::new();
    for (module, used, file) in edges {
        match (layer(module), layer(used)) {
            (None, _) => wrong.push(format!("{module} ({file}) has no layer in tests/layers.rs")),
            (_, None) => wrong.push(format!("{used} (used by {file}) has no layer in tests/layers.rs")),
            (Some(a), Some(b)) if b >= a => wrong.push(format!("{file}: {module} uses {used}, which is not below it")),
            _ => {}
        }
    }
    wrong.dedup();
    wrong
}

#[test]
fn every_module_uses_only_modules_below_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let edges = edges(&src);
    assert!(edges.len() > 50, "the scan found too few uses to be right: {}", edges.len());
    let wrong = wrong(&edges);
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

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|n| n.to_string()).collect()
}

#[test]
fn the_scan_sees_grouped_imports_on_any_number_of_lines() {
    let text = "use crate::{\n    collect::{self, Snapshot},\n    rules::{engine::RuleState, Alert},\n    health,\n};";
    assert_eq!(uses(text), set(&["collect", "health", "rules"]));
    assert_eq!(
        uses("pub use crate::{board::{Board, {view::View}}, {web, serve::x}};"),
        set(&["board", "serve", "web"])
    );
    // In a function, in a macro's arguments, under a `$crate` of macro_rules.
    let text = "fn f() { tokio::spawn(async { crate::serve::run().await }); println!(\"{}\", crate::web::x()); }\n\
                macro_rules! m { () => { $crate::notify::send() } }";
    assert_eq!(uses(text), set(&["notify", "serve", "web"]));
    // Words in comments and strings are not code; `pub(crate)` is no path.
    let text = "// crate::web\n/// [`crate::cli`]\npub(crate) fn f() { let s = \"crate::serve\"; /* crate::demo */ }";
    assert_eq!(uses(text), set(&[]));
}

#[test]
fn the_scan_follows_super_out_of_folders() {
    // src/serve/agents.rs: one climb is serve itself, two the crate's root.
    assert_eq!(uses_in("use super::{Arrival, Watch, log};\nfn f() { super::take(); }", 2), set(&[]));
    assert_eq!(uses_in("use super::super::web::Page;", 2), set(&["web"]));
    assert_eq!(uses_in("use super::super::{board::Board, web};", 2), set(&["board", "web"]));
    // A top-level module's super is the crate's root; three folders down it takes three.
    assert_eq!(uses_in("use super::metrics::render;", 1), set(&["metrics"]));
    assert_eq!(uses_in("use super::super::wire::Stat;", 3), set(&[]));
    assert_eq!(uses_in("use super::super::super::web;", 3), set(&["web"]));
    // An inline module is one deeper; a unit test module is left out.
    assert_eq!(uses_in("mod inner { use super::super::web; }", 1), set(&["web"]));
    assert_eq!(
        uses_in("#[cfg(test)]\n#[allow(unused)]\nmod t { use super::super::web; }\nuse crate::kube;", 1),
        set(&["kube"])
    );
    assert_eq!(uses_in("pub(super) fn f() {}\npub(in super::super) fn g() {}", 2), set(&[]));
}

#[test]
fn an_upward_grouped_or_super_import_fails_the_check() {
    let src = |files: &[(&str, &str)]| -> Vec<(String, String)> {
        files.iter().map(|(p, t)| (p.to_string(), t.to_string())).collect()
    };
    let wrong_of = |files: &[(&str, &str)]| wrong(&edges_of(&src(files)));
    let found = wrong_of(&[
        ("health/mod.rs", "use crate::{\n    collect::Snapshot,\n    rules::RuleState,\n};"),
        ("serve/agents.rs", "use super::{Arrival, Watch};\nuse super::super::web::Page;"),
        ("collect/wire/codec.rs", "use super::super::super::{kube, board};"),
    ]);
    assert_eq!(
        found,
        [
            "collect/wire/codec.rs: collect uses board, which is not below it",
            "health/mod.rs: health uses rules, which is not below it",
            "serve/agents.rs: serve uses web, which is not below it",
        ]
    );
    // The same rooms imported downward, or from inside their own room, are fine.
    let fine = wrong_of(&[
        ("rules/engine.rs", "use crate::{\n    collect::Snapshot,\n    health::{Health, Memory},\n};"),
        ("serve/agents.rs", "use super::{Arrival, Watch};\nuse super::super::{board::Board, state};"),
        ("collect/wire/mod.rs", "use super::{CollectionStat, Snapshot};\nuse super::super::kube;"),
        ("collect/wire/codec.rs", "use super::super::Snapshot;\nuse super::super::super::kube;"),
    ]);
    assert!(fine.is_empty(), "{fine:?}");
}

/// The public functions (`pub fn`, `pub async fn`, in impls and modules too, unit tests left
/// out) whose result's error is a bare `String`: an error of that kind cannot be matched on,
/// and says nothing of what went wrong to the code that gets it.
fn string_errors(text: &str) -> Vec<String> {
    let tokens: TokenStream = text.parse().unwrap_or_else(|e| panic!("not Rust tokens: {e:?}"));
    let mut found = Vec::new();
    find_string_errors(&tokens.into_iter().collect::<Vec<_>>(), &mut found);
    found
}

fn find_string_errors(tokens: &[TokenTree], found: &mut Vec<String>) {
    let mut i = 0;
    while i < tokens.len() {
        if cfg_test(tokens, i) {
            i = after_item(tokens, i + 2);
            continue;
        }
        if let TokenTree::Group(g) = &tokens[i] {
            find_string_errors(&g.stream().into_iter().collect::<Vec<_>>(), found);
        }
        let is = |at: usize, word: &str| matches!(tokens.get(at), Some(TokenTree::Ident(id)) if id == word);
        if is(i, "pub") {
            // `pub fn`, `pub async fn`, `pub const fn`, `pub unsafe fn`.
            let mut at = i + 1;
            while is(at, "async") || is(at, "const") || is(at, "unsafe") {
                at += 1;
            }
            if is(at, "fn")
                && let Some(TokenTree::Ident(name)) = tokens.get(at + 1)
            {
                // The return type: after the first `->` outside the parameters, up to the body,
                // a `where` or the end.
                let punct = |k: usize, c: char| matches!(tokens.get(k), Some(TokenTree::Punct(p)) if p.as_char() == c);
                let body = |k: usize| matches!(&tokens[k], TokenTree::Group(g) if g.delimiter() == Delimiter::Brace);
                let mut j = at + 2;
                let arrow = |k: usize| punct(k, '-') && punct(k + 1, '>');
                while !(j >= tokens.len() || arrow(j) || body(j) || punct(j, ';')) {
                    j += 1;
                }
                let start = if punct(j, '-') { j + 2 } else { tokens.len() };
                let returns: Vec<String> = tokens[start.min(tokens.len())..]
                    .iter()
                    .take_while(|t| {
                        !matches!(t, TokenTree::Group(g) if g.delimiter() == Delimiter::Brace)
                            && !matches!(t, TokenTree::Ident(id) if id == "where")
                            && !matches!(t, TokenTree::Punct(p) if p.as_char() == ';')
                    })
                    .map(ToString::to_string)
                    .collect();
                let returns = returns.join(" ");
                if returns.contains("Result <") && returns.ends_with(", String >") {
                    found.push(name.to_string());
                }
            }
        }
        i += 1;
    }
}

#[test]
fn no_public_function_returns_a_bare_string_as_its_error() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut paths = Vec::new();
    files(&src, &mut paths);
    let mut found = Vec::new();
    for p in paths {
        let text = std::fs::read_to_string(&p).unwrap();
        for name in string_errors(&text) {
            found.push(format!("{}: {name}", p.strip_prefix(&src).unwrap().display()));
        }
    }
    assert!(found.is_empty(), "public functions whose error is a bare String (give them an error type): {found:#?}");
}

#[test]
fn the_string_error_scan_sees_them_wherever_they_are() {
    let text = "pub fn a() -> Result<u8, String> { 1 }\n\
                fn private() -> Result<u8, String> { 1 }\n\
                impl X {\n    pub async fn c(&self, f: impl Fn() -> u8) -> Result<Vec<u8>, String>\n    where Self: Sized { todo!() }\n    pub fn d() -> Result<(), E> { todo!() }\n    pub fn e(s: Result<u8, String>) -> u8 { 1 }\n}\n\
                pub mod m { pub fn f() -> std::result::Result<u8, String>; }\n\
                #[cfg(test)]\nmod tests { pub fn g() -> Result<u8, String> { 1 } }";
    assert_eq!(string_errors(text), ["a", "c", "f"]);
}

/// `pub` at `i` with no restriction after it (`pub(crate)`, `pub(super)` are not public).
fn public(tokens: &[TokenTree], i: usize) -> bool {
    matches!(tokens.get(i), Some(TokenTree::Ident(p)) if p == "pub")
        && !matches!(tokens.get(i + 1), Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis)
}

/// The public types (`pub struct`, `enum`, `type`, `trait`) a file's text declares, those of
/// its public inline modules included; none of a private module or of a `#[cfg(test)]` item.
fn public_types(tokens: &[TokenTree], out: &mut Vec<String>) {
    let mut i = 0;
    while i < tokens.len() {
        if cfg_test(tokens, i) {
            i = after_item(tokens, i + 2);
            continue;
        }
        if let Some(TokenTree::Ident(kw)) = tokens.get(i + 1)
            && public(tokens, i)
            && let Some(TokenTree::Ident(name)) = tokens.get(i + 2)
        {
            let kw = kw.to_string();
            if ["struct", "enum", "type", "trait"].contains(&kw.as_str()) {
                out.push(name.to_string());
            }
        }
        if let (Some(TokenTree::Ident(m)), Some(TokenTree::Ident(_)), Some(TokenTree::Group(body))) =
            (tokens.get(i), tokens.get(i + 1), tokens.get(i + 2))
            && m == "mod"
            && body.delimiter() == Delimiter::Brace
        {
            if i >= 1 && public(tokens, i - 1) {
                public_types(&body.stream().into_iter().collect::<Vec<_>>(), out);
            }
            i += 3;
            continue;
        }
        i += 1;
    }
}

/// Whether a file's module is reachable from outside its room: declared `pub mod` in its parent,
/// and its parent too, up to the crate's root. `src` holds (path under src/, text).
fn reachable(rel: &str, src: &[(String, String)]) -> bool {
    let stem = rel.trim_end_matches(".rs").trim_end_matches("/mod");
    if stem == "lib" || stem == "main" {
        return true;
    }
    let (parent_dir, name) = stem.rsplit_once('/').unwrap_or(("", stem));
    let parents: Vec<String> = if parent_dir.is_empty() {
        vec!["lib.rs".into()]
    } else {
        vec![format!("{parent_dir}/mod.rs"), format!("{parent_dir}.rs")]
    };
    let Some((parent, text)) = src.iter().find(|(p, _)| parents.contains(p)) else { return false };
    let declared = text.lines().any(|l| l.trim() == format!("pub mod {name};"));
    declared && reachable(parent, src)
}

/// (type name, rooms that declare it public) for each name more than one room declares.
fn shared_type_names(src: &[(String, String)]) -> Vec<(String, BTreeSet<String>)> {
    let mut rooms: std::collections::BTreeMap<String, BTreeSet<String>> = Default::default();
    for (rel, text) in src.iter().filter(|(rel, _)| reachable(rel, src)) {
        let room = rel.split('/').next().unwrap().trim_end_matches(".rs").to_string();
        let tokens: TokenStream = text.parse().unwrap_or_else(|e| panic!("{rel}: not Rust tokens: {e:?}"));
        let mut names = Vec::new();
        public_types(&tokens.into_iter().collect::<Vec<_>>(), &mut names);
        for n in names {
            rooms.entry(n).or_default().insert(room.clone());
        }
    }
    rooms.into_iter().filter(|(_, r)| r.len() > 1).collect()
}

#[test]
fn no_two_rooms_declare_a_public_type_of_the_same_name() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    assert_eq!(shared_type_names(&sources(&src)), [], "a public type's name is its room's alone");
}

#[test]
fn the_type_name_scan_sees_public_types_and_leaves_private_ones_out() {
    let src = |files: &[(&str, &str)]| -> Vec<(String, String)> {
        files.iter().map(|(p, t)| (p.to_string(), t.to_string())).collect()
    };
    let files = src(&[
        ("lib.rs", "pub mod a;\npub mod b;\npub mod c;\n"),
        ("a/mod.rs", "pub mod inner;\nmod hidden;\npub struct Kept;\nmod wire { pub struct Spec; }\n"),
        ("a/inner.rs", "pub enum Outcome { A }\n"),
        ("a/hidden.rs", "pub struct Spec;\n"),
        ("b.rs", "pub(crate) struct Kept;\npub type Outcome = u8;\n#[cfg(test)]\nmod tests { pub struct Spec; }\n"),
        ("c.rs", "pub mod open { pub trait Kept {} }\nstruct Spec;\n"),
    ]);
    let shared: Vec<(String, Vec<String>)> =
        shared_type_names(&files).into_iter().map(|(n, r)| (n, r.into_iter().collect())).collect();
    assert_eq!(
        shared,
        [
            ("Kept".to_string(), vec!["a".to_string(), "c".to_string()]),
            ("Outcome".into(), vec!["a".into(), "b".into()])
        ]
    );
}
