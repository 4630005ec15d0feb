//! The hand-written header and the Rust entry points say the same: every `bw_` function of
//! one is in the other, every status has the same value, and every struct of the header
//! has the fields of its `#[repr(C)]` twin in the same order.

use std::collections::BTreeSet;

use bloomwire_capi::Status;

fn header() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/include/bloomwire.h")).unwrap()
}

fn sources() -> String {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
    let mut all = String::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        all.push_str(&std::fs::read_to_string(entry.unwrap().path()).unwrap());
    }
    all
}

/// The identifiers that follow `marker` and start with `bw_`.
fn names_after(text: &str, marker: &str) -> BTreeSet<String> {
    text.match_indices(marker)
        .map(|(i, _)| {
            text[i + marker.len()..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect::<String>()
        })
        .filter(|name| name.starts_with("bw_"))
        .collect()
}

/// The text without its `/* ... */` comments.
fn without_comments(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("/*") {
        out.push_str(&rest[..start]);
        rest = &rest[start + 2..];
        rest = &rest[rest.find("*/").map_or(rest.len(), |end| end + 2)..];
    }
    out.push_str(rest);
    out
}

/// The `bw_` identifiers directly followed by `(`: the functions a header declares.
fn declared(header: &str) -> BTreeSet<String> {
    let code = without_comments(header);
    code.match_indices("bw_")
        .filter(|(i, _)| {
            *i == 0 || !code[..*i].ends_with(|c: char| c.is_alphanumeric() || c == '_')
        })
        .filter_map(|(i, _)| {
            let name: String = code[i..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            code[i + name.len()..].starts_with('(').then_some(name)
        })
        .collect()
}

/// The entries of the `setters! { ... }` calls (`    fn bw_...(`), each an entry point.
fn setters(sources: &str) -> BTreeSet<String> {
    sources
        .match_indices("\nsetters! {\n")
        .flat_map(|(i, _)| {
            let call = &sources[i..];
            let call = &call[..call.find("\n}\n").unwrap()];
            names_after(call, "\n    fn ")
        })
        .collect()
}

#[test]
fn every_function_is_declared_and_defined() {
    let sources = sources();
    let mut defined = names_after(&sources, "pub unsafe extern \"C\" fn ")
        .union(&names_after(&sources, "pub extern \"C\" fn "))
        .cloned()
        .collect::<BTreeSet<_>>();
    defined.extend(setters(&sources));
    assert_eq!(declared(&header()), defined);
    assert!(defined.len() > 50, "{} functions", defined.len());
}

/// `BadMagic` as `BW_ERR_BAD_MAGIC`.
fn constant(status: Status) -> String {
    let name = status.name().to_str().unwrap();
    let mut screaming = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            screaming.push('_');
        }
        screaming.push(c.to_ascii_uppercase());
    }
    if status == Status::Ok {
        "BW_OK".into()
    } else {
        format!("BW_ERR_{screaming}")
    }
}

#[test]
fn every_status_has_its_value() {
    let header = header();
    for status in Status::ALL {
        let line = format!("{} = {},", constant(status), status as i32);
        let last = format!("{} = {}", constant(status), status as i32);
        assert!(
            header.contains(&line) || header.contains(&last),
            "{line} is not in the header"
        );
    }
}

/// The field names of the C struct `name` (`typedef struct name { ... } name;`).
fn c_fields(header: &str, name: &str) -> Vec<String> {
    let start = header.find(&format!("typedef struct {name} {{")).unwrap();
    let body = &header[start..];
    let body = &body[body.find('{').unwrap() + 1..body.find('}').unwrap()];
    without_comments(body)
        .split(';')
        .filter_map(|decl| {
            Some(
                decl.split_whitespace()
                    .last()?
                    .trim_start_matches('*')
                    .to_string(),
            )
        })
        .collect()
}

/// The field names of the Rust struct `name`.
fn rust_fields(sources: &str, name: &str) -> Vec<String> {
    let start = sources.find(&format!("pub struct {name} {{")).unwrap();
    let body = &sources[start..];
    let body = &body[..body.find("\n}").unwrap()];
    body.lines()
        .filter_map(|l| {
            l.trim()
                .strip_prefix("pub ")?
                .split(':')
                .next()
                .map(str::to_string)
        })
        .filter(|f| !f.starts_with("struct"))
        .collect()
}

#[test]
fn every_struct_has_the_same_fields() {
    let (header, sources) = (header(), sources());
    for (c, rust) in [
        ("bw_error", "ErrorInfo"),
        ("bw_plan_info", "PlanInfo"),
        ("bw_filter_info", "FilterInfo"),
        ("bw_frame_desc", "FrameDesc"),
        ("bw_update", "UpdateInfo"),
    ] {
        assert_eq!(c_fields(&header, c), rust_fields(&sources, rust), "{c}");
    }
}
