//! The crate's layers, as data, held against its imports.
//!
//! Every path in `src/` outside test code (`#[cfg(test)]` items) that starts with `crate::`,
//! `super::` or `self::`, or with a module below the file's, in a `use` item or in code,
//! is resolved to the file that defines what it names (through the faces' re-exports:
//! `lib.rs` and the `mod.rs` files), and is an edge from the file that holds it to that
//! file. The test fails on an edge from a lower layer to a higher one, on an edge between
//! two codings of the entropy layer (each is a room of its own: what they share sits below
//! them), on any cycle between modules, and on any cycle between files (a face's re-export
//! is an alias, not an import of its own code). The crate documentation's module map lists
//! the layers in the same order.

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

/// A module's path from the crate root: `[]` for `lib.rs`, `["format"]` for
/// `format/mod.rs` (a module's face), `["format", "checked"]` for `format/checked.rs`.
type ModPath = Vec<String>;

fn dotted(m: &[String]) -> String {
    if m.is_empty() {
        "crate".to_string()
    } else {
        m.join("::")
    }
}

/// One file of `src/`, its code only (no comments, strings or test items).
struct Source {
    code: String,
    /// `lib.rs` or a `mod.rs`: the face of a module with files below it.
    face: bool,
}

/// Every file of `src/` by its module path.
fn sources() -> BTreeMap<ModPath, Source> {
    let dir = src();
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    let mut out = BTreeMap::new();
    for file in files {
        let rel = file.strip_prefix(&dir).unwrap();
        let mut path: ModPath = rel
            .components()
            .map(|c| c.as_os_str().to_str().unwrap().to_string())
            .collect();
        let last = path.pop().unwrap();
        let face = last == "lib.rs" || last == "mod.rs";
        if !face {
            path.push(last.strip_suffix(".rs").unwrap().to_string());
        }
        let code = without_tests(&code_only(&std::fs::read_to_string(&file).unwrap()));
        out.insert(path, Source { code, face });
    }
    out
}

/// A path as written in a file, with where it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Written {
    /// Its segments (`super`, `crate`, `self` and a glob's `*` included).
    segs: Vec<String>,
    /// The inline modules (`mod sealed { ... }`) around it, outermost first.
    inline: Vec<String>,
    /// In a `use` item.
    in_use: bool,
    /// In a `pub use` (any visibility) at the top of a face: a re-export, which names a
    /// module for the layers but is no dependency of the face's own code.
    reexport: bool,
    /// The name the path is known by in its module (a `use`'s last segment or its `as`).
    alias: Option<String>,
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// The paths of a `use` tree (`a::{b, c::{d as e, *}}`), each with the name it binds.
fn use_tree(tree: &str, prefix: &[String], out: &mut Vec<(Vec<String>, Option<String>)>) {
    let tree = tree.trim();
    if tree.is_empty() {
        return;
    }
    if let Some(inner) = tree.strip_prefix('{') {
        let inner = &inner[..inner.rfind('}').unwrap_or(inner.len())];
        let (mut depth, mut start) = (0, 0);
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    use_tree(&inner[start..i], prefix, out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        use_tree(&inner[start..], prefix, out);
        return;
    }
    let head: String = tree
        .chars()
        .take_while(|&c| is_ident(c) || c == '*')
        .collect();
    let rest = tree[head.len()..].trim_start();
    let mut segs = prefix.to_vec();
    segs.push(head.clone());
    if let Some(sub) = rest.strip_prefix("::") {
        use_tree(sub, &segs, out);
    } else if let Some(name) = rest.strip_prefix("as ") {
        out.push((segs, Some(name.trim().to_string())));
    } else if head == "self" {
        let name = prefix.last().cloned();
        out.push((prefix.to_vec(), name));
    } else {
        let name = (head != "*").then_some(head);
        out.push((segs, name));
    }
}

/// Every path of `code` that may name a module of the crate: the paths of its `use` items,
/// and the paths elsewhere that start with `crate`, `$crate`, `super` or `self`, or with a
/// name that `is_child` says is a module below the file's.
fn written(code: &str, face: bool, is_child: impl Fn(&[String], &str) -> bool) -> Vec<Written> {
    let chars: Vec<(usize, char)> = code.char_indices().collect();
    let mut out = Vec::new();
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    let word_at = |i: usize| -> String {
        chars[i..]
            .iter()
            .map(|&(_, c)| c)
            .take_while(|&c| is_ident(c))
            .collect()
    };
    while i < chars.len() {
        let (at, c) = chars[i];
        match c {
            '{' => {
                depth += 1;
                i += 1;
                continue;
            }
            '}' => {
                depth = depth.saturating_sub(1);
                if inline.last().is_some_and(|&(_, d)| d == depth) {
                    inline.pop();
                }
                i += 1;
                continue;
            }
            _ => {}
        }
        let boundary = i == 0 || {
            let p = chars[i - 1].1;
            !is_ident(p) && p != ':'
        };
        if !(boundary && is_ident(c)) {
            i += 1;
            continue;
        }
        let word = word_at(i);
        let next = i + word.chars().count();
        let here: Vec<String> = inline.iter().map(|(n, _)| n.clone()).collect();
        if word == "mod" {
            let rest = code[chars[next].0..].trim_start();
            let name: String = rest.chars().take_while(|&c| is_ident(c)).collect();
            if rest[name.len()..].trim_start().starts_with('{') {
                inline.push((name, depth));
            }
            i = next;
            continue;
        }
        if word == "use" {
            let end = code[at..].find(';').map_or(code.len(), |e| at + e);
            let before = code[..at].trim_end();
            let public = before.ends_with("pub")
                || before.ends_with(')') && {
                    let open = before.rfind('(').unwrap_or(0);
                    before[..open].trim_end().ends_with("pub")
                };
            let mut trees = Vec::new();
            use_tree(&code[at + 3..end], &[], &mut trees);
            for (segs, alias) in trees {
                let root = &segs[0];
                if ["crate", "$crate", "super", "self"].contains(&root.as_str())
                    || is_child(&here, root)
                {
                    out.push(Written {
                        segs,
                        inline: here.clone(),
                        in_use: true,
                        reexport: face && public && here.is_empty(),
                        alias,
                    });
                }
            }
            while i < chars.len() && chars[i].0 < end {
                i += 1;
            }
            continue;
        }
        // A path in code: `root::a::b`, up to the first segment not followed by `::`.
        let mut segs = vec![word.clone()];
        let mut j = next;
        while j + 1 < chars.len() && chars[j].1 == ':' && chars[j + 1].1 == ':' {
            let seg = word_at(j + 2);
            if seg.is_empty() {
                break;
            }
            j += 2 + seg.chars().count();
            segs.push(seg);
        }
        if segs.len() > 1
            && (["crate", "$crate", "super", "self"].contains(&word.as_str())
                || is_child(&here, &word))
        {
            out.push(Written {
                segs,
                inline: here,
                in_use: false,
                reexport: false,
                alias: None,
            });
        }
        i = j.max(next);
    }
    out
}

/// The code outside its `use` items.
fn outside_uses(code: &str) -> String {
    let mut out = String::new();
    let mut rest = code;
    while let Some(at) = rest.find("use ") {
        let starts_word = at == 0 || !rest[..at].ends_with(|c: char| is_ident(c));
        let end = if starts_word {
            rest[at..].find(';').map_or(rest.len(), |e| at + e + 1)
        } else {
            at + 4
        };
        out.push_str(&rest[..if starts_word { at } else { end }]);
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// Whether `name` stands in `code` as a word of its own.
fn has_word(code: &str, name: &str) -> bool {
    code.match_indices(name).any(|(at, _)| {
        let before = code[..at].chars().next_back();
        let after = code[at + name.len()..].chars().next();
        !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
    })
}

/// The crate's files and how their paths resolve.
struct Crate {
    sources: BTreeMap<ModPath, Source>,
    /// `(face, name) -> path`: what a face's `pub use` makes a name of the face stand for.
    aliases: BTreeMap<(ModPath, String), Vec<String>>,
    /// `face -> modules` whose items a face re-exports with `*`.
    globs: BTreeMap<ModPath, Vec<ModPath>>,
    /// `file -> paths written in it`, made absolute.
    paths: BTreeMap<ModPath, Vec<(Vec<String>, bool)>>,
}

/// `written`'s path made absolute from the module `file` (plus its inline modules).
fn absolute(file: &[String], w: &Written) -> Option<Vec<String>> {
    let mut base: Vec<String> = file.iter().chain(&w.inline).cloned().collect();
    let mut segs = w.segs.as_slice();
    match segs[0].as_str() {
        "crate" | "$crate" => {
            base.clear();
            segs = &segs[1..];
        }
        "self" => segs = &segs[1..],
        "super" => {
            while segs.first().is_some_and(|s| s == "super") {
                base.pop()?;
                segs = &segs[1..];
            }
        }
        _ => {}
    }
    base.extend(segs.iter().cloned());
    Some(base)
}

impl Crate {
    fn read() -> Crate {
        Crate::of(sources())
    }

    fn of(sources: BTreeMap<ModPath, Source>) -> Crate {
        let mut aliases = BTreeMap::new();
        let mut globs: BTreeMap<ModPath, Vec<ModPath>> = BTreeMap::new();
        let mut paths = BTreeMap::new();
        for (file, source) in &sources {
            let is_child = |inline: &[String], name: &str| {
                let mut m = file.clone();
                m.extend(inline.iter().cloned());
                m.push(name.to_string());
                sources.contains_key(&m)
            };
            let mut list = Vec::new();
            let own_code = outside_uses(&source.code);
            for w in written(&source.code, source.face, is_child) {
                let Some(abs) = absolute(file, &w) else {
                    continue;
                };
                if w.reexport {
                    if abs.last().is_some_and(|s| s == "*") {
                        globs
                            .entry(file.clone())
                            .or_default()
                            .push(abs[..abs.len() - 1].to_vec());
                    } else if let Some(alias) = &w.alias {
                        aliases.insert((file.clone(), alias.clone()), abs.clone());
                    }
                }
                // A name a face re-exports and also uses in its own code is a dependency.
                let used = w
                    .alias
                    .as_deref()
                    .is_some_and(|name| has_word(&own_code, name));
                list.push((abs, w.reexport && !used));
            }
            paths.insert(file.clone(), list);
        }
        Crate {
            sources,
            aliases,
            globs,
            paths,
        }
    }

    /// Whether the file of module `m` defines a public item `name`.
    fn defines(&self, m: &[String], name: &str) -> bool {
        let Some(s) = self.sources.get(m) else {
            return false;
        };
        [
            "struct", "enum", "fn", "const", "static", "type", "trait", "mod",
        ]
        .iter()
        .any(|kw| {
            let item = format!("{kw} {name}");
            s.code.match_indices(&item).any(|(at, _)| {
                let after = s.code[at + item.len()..].chars().next();
                let before = s.code[..at].trim_end();
                !after.is_some_and(is_ident) && (before.ends_with("pub") || before.ends_with(')'))
            })
        })
    }

    /// The file (module) an absolute path lands in: the deepest module it names, through
    /// the faces' re-exports to the file that defines the item.
    fn resolve(&self, abs: &[String], hops: usize) -> ModPath {
        let mut at: ModPath = Vec::new();
        for (i, seg) in abs.iter().enumerate() {
            let mut next = at.clone();
            next.push(seg.clone());
            if self.sources.contains_key(&next) {
                at = next;
                continue;
            }
            if hops < 16 {
                if let Some(target) = self.aliases.get(&(at.clone(), seg.clone())) {
                    let mut whole = target.clone();
                    whole.extend(abs[i + 1..].iter().cloned());
                    return self.resolve(&whole, hops + 1);
                }
                for glob in self.globs.get(&at).into_iter().flatten() {
                    if self.defines(glob, seg) {
                        let mut whole = glob.clone();
                        whole.extend(abs[i..].iter().cloned());
                        return self.resolve(&whole, hops + 1);
                    }
                }
            }
            break;
        }
        at
    }

    /// `file -> {file it names}`, re-exports included (`with_reexports`) or not.
    fn edges(&self, with_reexports: bool) -> BTreeMap<ModPath, BTreeSet<ModPath>> {
        let mut edges: BTreeMap<ModPath, BTreeSet<ModPath>> = BTreeMap::new();
        for (file, list) in &self.paths {
            let to = edges.entry(file.clone()).or_default();
            for (abs, reexport) in list {
                if *reexport && !with_reexports {
                    continue;
                }
                let target = self.resolve(abs, 0);
                if &target != file && self.sources.contains_key(&target) {
                    to.insert(target);
                }
            }
        }
        edges
    }
}

/// The file edges grouped: for each file under `prefix` (its module path starts with it and
/// goes one further), the module one level below `prefix` it belongs to, to the same of
/// each file it names (edges inside one such module and to files outside `prefix` left out).
fn graph(
    edges: &BTreeMap<ModPath, BTreeSet<ModPath>>,
    prefix: &[&str],
) -> BTreeMap<String, BTreeSet<String>> {
    let below = |m: &ModPath| -> Option<String> {
        (m.len() > prefix.len() && m.iter().zip(prefix).all(|(a, b)| a == b))
            .then(|| m[prefix.len()].clone())
    };
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (file, tos) in edges {
        let Some(from) = below(file) else {
            continue;
        };
        let set = out.entry(from.clone()).or_default();
        for to in tos.iter().filter_map(below) {
            if to != from {
                set.insert(to);
            }
        }
    }
    out
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

/// The groups of nodes that reach each other (the strongly connected components of more
/// than one node), so that a failure names every circle at once.
fn circles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    let reach = |from: &String| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.clone()];
        while let Some(n) = todo.pop() {
            for next in edges.get(&n).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    todo.push(next.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&String, BTreeSet<String>> =
        edges.keys().map(|n| (n, reach(n))).collect();
    let mut out: Vec<BTreeSet<String>> = Vec::new();
    for (n, r) in &reached {
        if !r.contains(*n) || out.iter().any(|c| c.contains(*n)) {
            continue;
        }
        let group: BTreeSet<String> = r
            .iter()
            .filter(|o| reached.get(o).is_some_and(|back| back.contains(*n)))
            .cloned()
            .collect();
        out.push(group);
    }
    out
}

#[test]
fn no_module_names_a_higher_layer_or_forms_a_cycle() {
    let krate = Crate::read();
    let edges = krate.edges(true);
    let top = graph(&edges, &[]);
    let mut bad = violations(&top, LAYERS, None, "");
    let entropy = graph(&edges, &["entropy"]);
    bad.extend(violations(&entropy, ENTROPY, Some(ROOMS), "entropy::"));
    let own = krate.edges(false);
    for (g, place) in [
        (graph(&own, &[]), ""),
        (graph(&own, &["entropy"]), "entropy::"),
    ] {
        if let Some(c) = cycle(&g) {
            bad.push(format!("a cycle: {place}{}", c.join(" -> ")));
        }
    }
    assert!(bad.is_empty(), "\n{}", bad.join("\n"));
}

/// The SIMD and BMI2 kernels of a coding that compile the body of its face (`mod.rs`) or use
/// its tables, while the face dispatches to them at run time: the one import back up that
/// the file-circle test allows (zstd's `HUF_DGEN` makes its default and BMI2 decoders the
/// same way).
const KERNEL_TWINS: &[&str] = &[
    "entropy::escape::bmi2",
    "entropy::nibble_rans::encode_avx2",
    "entropy::nibble_rans::encode_avx512",
    "entropy::small::bmi2",
    "entropy::small::table_avx512",
    "entropy::wide::avx2",
    "entropy::wide::avx512",
];

#[test]
fn no_file_imports_in_a_circle() {
    // Between the files of `src/`: `crate::`, `super::` and `self::` paths, in `use` items
    // and in code, resolved through the faces' re-exports to the file that defines the
    // item. A face's `pub use` is an alias, not a dependency of its own code.
    let mut own = Crate::read().edges(false);
    for twin in KERNEL_TWINS {
        let file: ModPath = twin.split("::").map(str::to_string).collect();
        let face = file[..file.len() - 1].to_vec();
        let tos = own
            .get_mut(&file)
            .unwrap_or_else(|| panic!("no file {twin}"));
        assert!(
            tos.remove(&face),
            "{twin} no longer names its face: take it off the list"
        );
    }
    let by_name: BTreeMap<String, BTreeSet<String>> = own
        .iter()
        .map(|(f, tos)| (dotted(f), tos.iter().map(|t| dotted(t)).collect()))
        .collect();
    let circles = circles(&by_name);
    assert!(
        circles.is_empty(),
        "files that import each other in a circle:\n{}",
        circles
            .iter()
            .map(|c| c.iter().cloned().collect::<Vec<_>>().join(", "))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn above_the_entropy_layer_only_the_table_of_codings_is_named() {
    // The frame layer, the streams and the optimizer ask the table of codings
    // (`entropy::coding`, spec 4.0's registry), never a coding's own room: the policy and
    // the mechanisms above name no coding's code.
    let mut bad = Vec::new();
    for (file, tos) in Crate::read().edges(true) {
        if !["format", "stream", "optimizer"].contains(&file.first().map_or("", |s| s.as_str())) {
            continue;
        }
        for to in tos {
            if to.len() > 1 && to[0] == "entropy" && ENTROPY[ROOMS].contains(&to[1].as_str()) {
                bad.push(format!("{} names {}", dotted(&file), dotted(&to)));
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

/// A crate made of the given files (`path -> code`), for the parser's own tests.
fn crate_of(files: &[(&str, &str)]) -> Crate {
    Crate::of(
        files
            .iter()
            .map(|(path, code)| {
                let mut m: ModPath = path.split('/').map(str::to_string).collect();
                let face = m.last().is_some_and(|l| l == "mod.rs" || l == "lib.rs");
                let last = m.pop().unwrap();
                if !face {
                    m.push(last.strip_suffix(".rs").unwrap().to_string());
                }
                let code = without_tests(&code_only(code));
                (m, Source { code, face })
            })
            .collect(),
    )
}

#[test]
fn the_parser_sees_what_it_must() {
    let krate = crate_of(&[
        ("lib.rs", "mod a; mod e; pub use e::E;"),
        ("a/mod.rs", "mod b; mod c; pub use c::C; pub(crate) use b::{self as bee, *};"),
        // super::, a group, a glob re-export, `self as`, a path in code, a comment.
        (
            "a/b.rs",
            "use super::{C, c::C as C2}; // crate::e\n#[cfg(test)]\nmod t { use crate::e; }\npub fn f() { crate::E::new(); }",
        ),
        ("a/c.rs", "pub struct C; fn g() { super::f(); }"),
        ("e.rs", "pub struct E; mod inner { use super::super::a::c; }"),
        // A face that re-exports a name and uses it in its own code depends on it.
        ("f/mod.rs", "mod g; pub use g::G; pub fn h() -> G { G }"),
        ("f/g.rs", "pub struct G;"),
    ]);
    let edges = krate.edges(false);
    let m = |s: &str| -> ModPath { s.split("::").map(str::to_string).collect() };
    assert_eq!(edges[&m("a::b")], BTreeSet::from([m("a::c"), m("e")]));
    // `super::f` is `a::b::f` through the face's glob re-export.
    assert_eq!(edges[&m("a::c")], BTreeSet::from([m("a::b")]));
    // From an inline module, `super::super` is the crate.
    assert_eq!(edges[&m("e")], BTreeSet::from([m("a::c")]));
    // The faces' re-exports are aliases, not dependencies, unless the face uses them.
    assert!(edges[&m("a")].is_empty());
    assert_eq!(edges[&m("f")], BTreeSet::from([m("f::g")]));
    assert_eq!(
        krate.edges(true)[&m("a")],
        BTreeSet::from([m("a::b"), m("a::c")])
    );
    let by_name: BTreeMap<String, BTreeSet<String>> = edges
        .iter()
        .map(|(f, tos)| (dotted(f), tos.iter().map(|t| dotted(t)).collect()))
        .collect();
    assert_eq!(
        cycle(&by_name),
        Some(vec!["a::b".into(), "a::c".into(), "a::b".into()])
    );
}
