//! The crate's layers, as data, held against its imports.
//!
//! Every `crate::` path in `src/` outside test code (`#[cfg(test)]` items) is an edge from
//! the module whose file holds it to the module it names. The test fails on an edge from a
//! lower layer to a higher one, on an edge between two codings of the entropy layer (each is
//! a room of its own: what they share sits below them), and on any cycle between modules.
//! The crate documentation's module map lists the layers in the same order.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The top-level modules of `src/`, lowest layer first; a module may import from its own
/// layer and the layers before it.
const LAYERS: &[&[&str]] = &[
    &["error", "cpu"],
    &["filter", "wire"],
    &["theory"],
    &["entropy"],
    &["format"],
    &["stream"],
    &["optimizer"],
];

/// The modules of `src/entropy/`, lowest first: what the codings share, the codings (one
/// folder each, none importing another), the table of codings, chunked payloads.
const ENTROPY: &[&[&str]] = &[
    &[
        "bmi2_twins",
        "codec",
        "counter_table",
        "model",
        "nibble_rans",
        "profile",
        "range_coder",
        "scratch",
        "symbol_lookup",
        "tans_stream",
    ],
    &[
        "raw",
        "arithmetic",
        "symbols",
        "counters",
        "interleaved",
        "positional",
        "small",
        "wide",
        "escape",
    ],
    &["coding"],
    &["chunks"],
];

/// The level of `ENTROPY` whose modules may not import each other.
const ROOMS: usize = 1;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The text without comments (line comments, doc comments and block comments) and string
/// literals, so that only code is read.
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let end = text[i + 2..].find("*/").map_or(b.len(), |e| i + 2 + e + 2);
            i = end;
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if b[i] == b'\'' && i + 2 < b.len() && (b[i + 2] == b'\'' || b[i + 1] == b'\\') {
            // A char literal ('{', '\n'): skipped, so that its brace is not counted.
            let end = text[i + 1..].find('\'').map_or(b.len(), |e| i + 1 + e + 1);
            i = end;
        } else {
            let ch = text[i..].chars().next().unwrap();
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

/// The code without the items marked `#[cfg(test)]`: a `use` or other item up to its `;`,
/// or a module or function up to its closing brace.
fn without_tests(code: &str) -> String {
    let mut out = String::new();
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let item = &rest[at..];
        let brace = item.find('{');
        let semi = item.find(';');
        let end = match (brace, semi) {
            (Some(b), Some(s)) if s < b => s + 1,
            (Some(b), _) => {
                let mut depth = 0;
                let mut end = item.len();
                for (i, c) in item[b..].char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = b + i + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                end
            }
            (None, Some(s)) => s + 1,
            (None, None) => item.len(),
        };
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

/// The first path segment after every `crate::` in `code`, and every name of a
/// `crate::{a, b::c}` group; for `prefix` (say `entropy`), the segment after
/// `crate::prefix::` instead.
fn names(code: &str, prefix: Option<&str>) -> BTreeSet<String> {
    let lead = match prefix {
        None => "crate::".to_string(),
        Some(p) => format!("crate::{p}::"),
    };
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut found = BTreeSet::new();
    let mut rest = code;
    while let Some(at) = rest.find(&lead) {
        let after = &rest[at + lead.len()..];
        if let Some(group) = after.strip_prefix('{') {
            let mut depth = 1;
            let mut start = 0;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            found.insert(ident(group[start..].trim_start()));
                            break;
                        }
                    }
                    ',' if depth == 1 => {
                        found.insert(ident(group[start..].trim_start()));
                        start = i + 1;
                    }
                    _ => {}
                }
            }
        } else {
            found.insert(ident(after));
        }
        rest = after;
    }
    found.retain(|n| !n.is_empty() && n != "self");
    found
}

/// The module a file under `dir` belongs to: its first path component, without `.rs`.
fn module_of(dir: &Path, file: &Path) -> String {
    let first = file.strip_prefix(dir).unwrap().components().next().unwrap();
    let name = first.as_os_str().to_str().unwrap();
    name.strip_suffix(".rs").unwrap_or(name).to_string()
}

/// `module -> {module it names}` for the files under `dir` (its `mod.rs` and `lib.rs`
/// left out: they declare the modules), for the paths `crate::prefix::...`.
fn graph(dir: &Path, prefix: Option<&str>) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(dir, &mut files);
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let name = file.file_name().unwrap().to_str().unwrap();
        if file.parent() == Some(dir) && (name == "lib.rs" || name == "mod.rs") {
            continue;
        }
        let from = module_of(dir, &file);
        let text = std::fs::read_to_string(&file).unwrap();
        let code = without_tests(&code_only(&text));
        let to = edges.entry(from.clone()).or_default();
        for n in names(&code, prefix) {
            if n != from {
                to.insert(n);
            }
        }
    }
    edges
}

fn level_of(levels: &[&[&str]], module: &str) -> Option<usize> {
    levels.iter().position(|l| l.contains(&module))
}

/// Every edge that goes up a level (or between two rooms), as a message.
fn violations(
    edges: &BTreeMap<String, BTreeSet<String>>,
    levels: &[&[&str]],
    rooms: Option<usize>,
    place: &str,
) -> Vec<String> {
    let mut bad = Vec::new();
    for (from, tos) in edges {
        let Some(lf) = level_of(levels, from) else {
            bad.push(format!("{place}{from} is in no layer: add it to the list"));
            continue;
        };
        for to in tos {
            let Some(lt) = level_of(levels, to) else {
                continue; // a name defined in the layer's root (lib.rs, mod.rs)
            };
            if lt > lf {
                bad.push(format!(
                    "{place}{from} (layer {lf}) names {place}{to} (layer {lt}), a higher layer"
                ));
            } else if Some(lf) == rooms && lt == lf {
                bad.push(format!(
                    "{place}{from} names {place}{to}: codings share only what sits below them"
                ));
            }
        }
    }
    bad
}

/// A cycle in `edges`, if there is one.
fn cycle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|p| p == node) {
            let mut c = path[at..].to_vec();
            c.push(node.to_string());
            return Some(c);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in edges.get(node).into_iter().flatten() {
            if let Some(c) = visit(next, edges, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    edges
        .keys()
        .find_map(|n| visit(n, edges, &mut Vec::new(), &mut done))
}

#[test]
fn no_module_names_a_higher_layer_or_forms_a_cycle() {
    let top = graph(&src(), None);
    let mut bad = violations(&top, LAYERS, None, "");
    let entropy = graph(&src().join("entropy"), Some("entropy"));
    bad.extend(violations(&entropy, ENTROPY, Some(ROOMS), "entropy::"));
    for (g, place) in [(&top, ""), (&entropy, "entropy::")] {
        if let Some(c) = cycle(g) {
            bad.push(format!("a cycle: {place}{}", c.join(" -> ")));
        }
    }
    assert!(bad.is_empty(), "\n{}", bad.join("\n"));
}

#[test]
fn above_the_entropy_layer_only_the_table_of_codings_is_named() {
    // The frame layer, the streams and the optimizer ask the table of codings
    // (`entropy::coding`, spec 4.0's registry), never a coding's own room: the policy and
    // the mechanisms above name no coding's code.
    let mut bad = Vec::new();
    for dir in ["format", "stream", "optimizer"] {
        let mut files = Vec::new();
        rust_files(&src().join(dir), &mut files);
        for file in files {
            let code = without_tests(&code_only(&std::fs::read_to_string(&file).unwrap()));
            for room in ENTROPY[ROOMS] {
                if code.contains(&format!("entropy::{room}::"))
                    || code.contains(&format!("entropy::{{{room}"))
                    || code.contains(&format!(", {room}}}")) && code.contains("entropy::{")
                {
                    bad.push(format!("{} names entropy::{room}", file.display()));
                }
            }
        }
    }
    assert!(bad.is_empty(), "\n{}", bad.join("\n"));
}

#[test]
fn the_module_map_lists_the_layers_in_order() {
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    let rows: Vec<String> = lib
        .lines()
        .filter_map(|l| l.strip_prefix("//! | "))
        .filter_map(|l| {
            let cell = l.split('|').next()?.trim();
            let name = cell.trim_matches(|c| c == '`' || c == '[' || c == ']' || c == '/');
            let name = name.strip_suffix(".rs").unwrap_or(name);
            LAYERS
                .iter()
                .any(|l| l.contains(&name))
                .then(|| name.to_string())
        })
        .collect();
    let levels: Vec<usize> = rows.iter().map(|r| level_of(LAYERS, r).unwrap()).collect();
    assert!(
        levels.windows(2).all(|w| w[0] <= w[1]),
        "the module map's rows {rows:?} are not in layer order"
    );
    let listed: BTreeSet<&str> = rows.iter().map(String::as_str).collect();
    for layer in LAYERS {
        for m in *layer {
            assert!(listed.contains(m), "the module map has no row for {m}");
        }
    }
}

#[test]
fn the_parser_sees_what_it_must() {
    let code = "use crate::a::b; use crate::{c::d, e}; // crate::z\n#[cfg(test)]\nmod t { use crate::y; }\nfn f() { crate::g::h(); }";
    let names = names(&without_tests(&code_only(code)), None);
    let want: BTreeSet<String> = ["a", "c", "e", "g"].iter().map(|s| s.to_string()).collect();
    assert_eq!(names, want);
    let mut edges = BTreeMap::new();
    edges.insert("a".to_string(), BTreeSet::from(["b".to_string()]));
    edges.insert("b".to_string(), BTreeSet::from(["a".to_string()]));
    assert!(cycle(&edges).is_some());
}
