"""The Rust side's files (python/src) import only downward: no two files import each other,
even through others, and none grows past 1,000 lines (src/lib.rs lists the layers)."""

import os
import re

import helpers

SRC = os.path.join(helpers.ROOT, "python", "src")
MAX_LINES = 1000


def sources():
    return {name[:-3]: open(os.path.join(SRC, name), encoding="utf-8").read()
            for name in sorted(os.listdir(SRC)) if name.endswith(".rs")}


def strip_comments(text):
    return re.sub(r"//[^\n]*", "", text)


def used_paths(text):
    """Every path of a `use` item (groups expanded) and every `crate::`/`super::` path of
    the code, as (from the crate root, segments); and the code without its `use` items."""
    text = strip_comments(text)
    paths = []

    def expand(rooted, prefix, tree):
        if tree.startswith("{") and tree.endswith("}"):
            depth, part = 0, ""
            for ch in tree[1:-1] + ",":
                if ch == "," and depth == 0:
                    if part:
                        expand(rooted, prefix, part)
                    part = ""
                    continue
                depth += (ch == "{") - (ch == "}")
                part += ch
            return
        head, sep, rest = tree.partition("::")
        if sep:
            expand(rooted, prefix + [head], rest)
        else:
            paths.append((rooted, prefix + [head]))

    # `crate::` and `super::` (every file is a child of the crate root), or a module's name
    # (lib.rs, the root, names its children so).
    for m in re.finditer(r"\buse\s+((?:crate|super)::)?([^;]*);", text, re.S):
        expand(m.group(1) is not None, [], re.sub(r"\s+", "", m.group(2)))
    code = re.sub(r"\buse\s+[^;]*;", "", text, flags=re.S)
    paths += [(True, [m.group(1), m.group(2)])
              for m in re.finditer(r"\b(?:crate|super)::(\w+)::(\w+)", code)]
    paths += [(True, [m.group(1)]) for m in re.finditer(r"\b(?:crate|super)::(\w+)\b(?!::)", code)]
    return paths, code


def imports():
    """file -> the files of python/src it takes names from."""
    files = sources()
    graph = {}
    for name, text in files.items():
        paths, code = used_paths(text)
        targets = {p[0] for _, p in paths if p[0] in files}
        # A path from the crate root to a name that is no module names lib.rs's own items;
        # other paths of `use` (`pyo3::...`, `std::...`) are other crates'.
        targets |= {"lib" for rooted, p in paths if rooted and p[0] not in files}
        # Paths in code that start with a module's name (not after `::`).
        targets |= {m.group(1) for m in re.finditer(r"(?<![\w:])(\w+)::\w+", code)
                    if m.group(1) in files}
        targets.discard(name)
        graph[name] = targets
    return graph


def circles(graph):
    """The sets of files that import each other (strongly connected, two files or more)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_reader_sees_imports():
    graph = imports()
    # A few edges the layers rest on, so that a reader gone blind fails here.
    assert "filter" in graph["codec"] and "settings" in graph["filter"]
    assert "plan_info" in graph["filter"] and "filter" in graph["plan"]
    assert "codec" in graph["lib"] and not graph["errors"] & set(graph)
    paths, _ = used_paths("use super::settings::{a, b::{c, d}};\nuse crate::{columns, MAX};\n"
                          "use pyo3::prelude::*;\nfn f() { crate::header::Info; }")
    assert sorted((rooted, p[0]) for rooted, p in paths) == [
        (False, "pyo3"), (True, "MAX"), (True, "columns"), (True, "header"),
        (True, "settings"), (True, "settings"), (True, "settings")]
    planted = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(planted) == [["a", "b", "c"]]


def test_no_file_circle():
    graph = imports()
    found = circles(graph)
    assert not found, "files of python/src import each other: " + "; ".join(
        " <-> ".join(group) + " (" + ", ".join(
            f"{a} -> {b}" for a in group for b in sorted(graph[a]) if b in group) + ")"
        for group in found)


def test_no_file_over_a_thousand_lines():
    long = {name: text.count("\n") for name, text in sources().items()
            if text.count("\n") > MAX_LINES}
    assert not long, long
