//! No two top-level modules of any crate import each other, directly or around a circle.
//!
//! A module's imports are the `crate::<module>` paths in its code (comments and test code left
//! out: files named `tests.rs` or `*_tests.rs`, and every `#[cfg(test)]` item wherever it
//! stands), with the names `lib.rs` re-exports (`crate::Lore`, `crate::WriteContext`, …) followed to
//! the module that defines them. A circle fails the test, naming every edge of it with a place.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// module → module it imports → the first place it does.
type Graph = BTreeMap<String, BTreeMap<String, String>>;

fn is_test_file(path: &Path) -> bool {
    let name = path.file_stem().unwrap().to_string_lossy();
    name == "tests" || name.ends_with("_tests")
}

/// The code of a file without comments and without its test items: each `#[cfg(test)]` item
/// (a `mod tests;` line, or a block to its closing brace) is left out, wherever it stands.
fn code_lines(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((i, line)) = lines.next() {
        if line.trim() != "#[cfg(test)]" {
            out.push((i + 1, line.split("//").next().unwrap_or("")));
            continue;
        }
        // Skip the item the attribute is on: to its `;`, or to the brace closing its block.
        let mut depth = 0usize;
        let mut opened = false;
        for (_, item) in lines.by_ref() {
            let code = item.split("//").next().unwrap_or("");
            for c in code.chars() {
                match c {
                    '{' => {
                        depth += 1;
                        opened = true;
                    }
                    '}' => depth = depth.saturating_sub(1),
                    _ => {}
                }
            }
            if (opened && depth == 0) || (!opened && code.trim_end().ends_with(';')) {
                break;
            }
        }
    }
    out
}

/// The identifiers that follow each `crate::` in a line.
fn crate_paths(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().last();
        rest = &rest[at + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue; // e.g. `$crate::` or `other_crate::`
        }
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        out.push(&rest[..end]);
    }
    out
}

/// The crate's top-level modules and the names `lib.rs`/`main.rs` re-exports from them.
fn modules_and_reexports(src: &Path) -> (BTreeSet<String>, BTreeMap<String, String>) {
    let mut modules = BTreeSet::new();
    for entry in fs::read_dir(src).unwrap() {
        let path = entry.unwrap().path();
        let stem = path.file_stem().unwrap().to_string_lossy().to_string();
        if path.is_dir() || (stem != "lib" && stem != "main") {
            modules.insert(stem);
        }
    }
    let mut reexports = BTreeMap::new();
    for root in ["lib.rs", "main.rs"] {
        let Ok(text) = fs::read_to_string(src.join(root)) else {
            continue;
        };
        // `pub use module::{A, B as C};` and `pub use module::path::Name;`, possibly over lines.
        for statement in text.split(';') {
            let statement = statement
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .collect::<Vec<_>>()
                .join(" ");
            let Some(at) = statement.find("pub use ") else {
                continue;
            };
            let path = statement[at + "pub use ".len()..].trim();
            let Some((module, names)) = path.split_once("::") else {
                continue;
            };
            if !modules.contains(module) {
                continue;
            }
            let names = names.rsplit("::").next().unwrap_or(names);
            for name in names
                .trim_matches(|c| c == '{' || c == '}' || c == ' ')
                .split(',')
            {
                let exported = name.rsplit(" as ").next().unwrap_or(name).trim();
                if !exported.is_empty() {
                    reexports.insert(exported.to_string(), module.to_string());
                }
            }
        }
    }
    (modules, reexports)
}

fn graph_of(src: &Path) -> Graph {
    let (modules, reexports) = modules_and_reexports(src);
    let mut graph = Graph::new();
    for module in &modules {
        let dir = src.join(module);
        let mut files = if dir.is_dir() {
            lore_testutils::rust_files(&dir)
        } else {
            vec![src.join(format!("{module}.rs"))]
        };
        files.sort();
        for file in files.iter().filter(|f| !is_test_file(f)) {
            let text = fs::read_to_string(file).unwrap();
            for (line_no, line) in code_lines(&text) {
                for name in crate_paths(line) {
                    let target = if modules.contains(name) {
                        name.to_string()
                    } else if let Some(m) = reexports.get(name) {
                        m.clone()
                    } else {
                        continue;
                    };
                    if &target != module {
                        let place =
                            format!("{}:{line_no}", file.strip_prefix(src).unwrap().display());
                        graph
                            .entry(module.clone())
                            .or_default()
                            .entry(target)
                            .or_insert(place);
                    }
                }
            }
        }
    }
    graph
}

/// Every circle, as the list of its edges with a place each (Tarjan's strongly connected
/// components; a component of more than one module holds a circle).
fn circles(graph: &Graph) -> Vec<Vec<String>> {
    struct Walk<'g> {
        graph: &'g Graph,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        found: Vec<Vec<&'g str>>,
    }
    impl<'g> Walk<'g> {
        fn visit(&mut self, v: &'g str) {
            let i = self.index.len();
            self.index.insert(v, i);
            self.low.insert(v, i);
            self.stack.push(v);
            for w in self.graph.get(v).into_iter().flat_map(|e| e.keys()) {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let lw = self.low[w];
                    self.low.entry(v).and_modify(|l| *l = (*l).min(lw));
                } else if self.stack.contains(&w) {
                    let iw = self.index[w];
                    self.low.entry(v).and_modify(|l| *l = (*l).min(iw));
                }
            }
            if self.low[v] == self.index[v] {
                let at = self.stack.iter().rposition(|m| *m == v).unwrap();
                self.found.push(self.stack.split_off(at));
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !walk.index.contains_key(v.as_str()) {
            walk.visit(v);
        }
    }
    walk.found
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|component| {
            let mut edges = Vec::new();
            for a in &component {
                for (b, place) in &graph[*a] {
                    if component.contains(&b.as_str()) {
                        edges.push(format!("{a} -> {b} ({place})"));
                    }
                }
            }
            edges
        })
        .collect()
}

fn crates_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

#[test]
fn no_crate_has_modules_that_import_each_other_in_a_circle() {
    let mut checked = 0;
    let mut found = Vec::new();
    for entry in fs::read_dir(crates_dir()).unwrap() {
        let src = entry.unwrap().path().join("src");
        if !src.is_dir() {
            continue;
        }
        checked += 1;
        for circle in circles(&graph_of(&src)) {
            found.push(format!("{}: {}", src.display(), circle.join(", ")));
        }
    }
    assert!(checked >= 4, "the crates were not found ({checked})");
    assert!(
        found.is_empty(),
        "modules in a circle:\n{}",
        found.join("\n")
    );
}

#[test]
fn a_circle_is_found_through_a_reexport_and_a_test_module_is_not_counted() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    fs::write(
        src.join("lib.rs"),
        "pub mod a;\npub mod b;\npub use a::{Thing, Other as Renamed};\n",
    )
    .unwrap();
    fs::write(
        src.join("a.rs"),
        "//! a\nuse crate::b::B;\npub struct Thing;\n",
    )
    .unwrap();
    fs::write(
        src.join("b.rs"),
        "//! b\n// crate::a in a comment\npub struct B;\n#[cfg(test)]\nuse crate::a::Thing;\n",
    )
    .unwrap();
    assert!(circles(&graph_of(src)).is_empty());
    fs::write(src.join("b.rs"), "//! b\nfn f(_: crate::Thing) {}\n").unwrap();
    let found = circles(&graph_of(src));
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].iter().any(|e| e.starts_with("b -> a (b.rs:2)")),
        "{found:?}"
    );
}
