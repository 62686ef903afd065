//! Every figure a benchmark prints is measured: its sources hold no number a report prints as a
//! result, only targets ("≤ 15 ms") and the formats that measured values fill in.
//!
//! The benchmark sources (`lore-bench/src` and this crate's `commands/bench`) are read as Rust:
//! each string literal outside comments and test modules is checked for a figure with a unit
//! (`130 ms`, `4.0 GB`, `87%`) that is not a target, and every `const` is checked for a name that
//! says it holds someone else's figure (`PAPER_…`, `BEFORE_…`, `QUOTED_…`, `PREVIOUS_…`). The
//! docs' tables are checked for rows of quoted figures.

use std::fs;
use std::path::{Path, PathBuf};

use regex::Regex;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let stem = path.file_stem().unwrap().to_string_lossy();
            if stem != "tests" && !stem.ends_with("_tests") {
                out.push(path);
            }
        }
    }
}

fn bench_sources() -> Vec<PathBuf> {
    let mut files = Vec::new();
    rust_files(&workspace().join("crates/lore-bench/src"), &mut files);
    rust_files(
        &workspace().join("crates/lore-cli/src/commands/bench"),
        &mut files,
    );
    files.sort();
    files
}

/// The code before a file's test module (`#[cfg(test)]` followed by `mod …`), which the
/// benchmark sources keep last.
fn without_tests(text: &str) -> &str {
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        if line.trim() == "#[cfg(test)]" && text[at + line.len()..].trim_start().starts_with("mod ")
        {
            return &text[..at];
        }
        at += line.len();
    }
    text
}

/// The string literals of Rust code, with the line each starts on: comments, char literals and
/// lifetimes are stepped over; raw strings are read to their closing `"#…`.
fn string_literals(code: &str) -> Vec<(usize, String)> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        match c {
            '\n' => line += 1,
            '/' if next == Some('/') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            '/' if next == Some('*') => {
                i += 2;
                while i + 1 < chars.len() && !(chars[i] == '*' && chars[i + 1] == '/') {
                    line += usize::from(chars[i] == '\n');
                    i += 1;
                }
                i += 2;
                continue;
            }
            '\'' if next == Some('\\') || chars.get(i + 2) == Some(&'\'') => {
                // A char literal: to its closing quote.
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
            }
            'r' if matches!(next, Some('"') | Some('#'))
                && (i == 0 || !chars[i - 1].is_alphanumeric() && chars[i - 1] != '_') =>
            {
                let hashes = chars[i + 1..].iter().take_while(|&&h| h == '#').count();
                if chars.get(i + 1 + hashes) == Some(&'"') {
                    let start = line;
                    let mut j = i + 2 + hashes;
                    let mut text = String::new();
                    while j < chars.len()
                        && !(chars[j] == '"'
                            && chars[j + 1..]
                                .iter()
                                .take(hashes)
                                .filter(|&&h| h == '#')
                                .count()
                                == hashes)
                    {
                        line += usize::from(chars[j] == '\n');
                        text.push(chars[j]);
                        j += 1;
                    }
                    out.push((start, text));
                    i = j + 1 + hashes;
                    continue;
                }
            }
            '"' => {
                let start = line;
                let mut text = String::new();
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    if chars[i] == '\\' {
                        // An escape, or a line continuation (which also skips the indent).
                        text.push(chars[i]);
                        i += 1;
                    }
                    line += usize::from(chars[i] == '\n');
                    text.push(chars[i]);
                    i += 1;
                }
                out.push((start, text));
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// A figure with a unit that is not a target: `130 ms`, `≈ 4.0 GB`, `87%` — but not `≤ 15 ms`,
/// `≥ .92`, nor a format placeholder's width (`{:.2} ms`).
fn unmeasured_figures(literal: &str) -> Vec<String> {
    let figure = Regex::new(
        r"(\d+(?:[.,]\d+)*)\s?(ms|µs|s|min|MB|GB|KB|kB|KiB|MiB|GiB|bytes|B|%)\b|(\d+(?:\.\d+)?)%",
    )
    .unwrap();
    figure
        .captures_iter(literal)
        .filter_map(|cap| {
            let whole = cap.get(0).unwrap();
            let before: String = literal[..whole.start()].chars().rev().take(3).collect();
            let before: String = before.chars().rev().collect();
            let is_target = ["≤", "≥", "<", ">"]
                .iter()
                .any(|mark| before.trim_end().ends_with(mark));
            let is_placeholder =
                before.ends_with(':') || before.ends_with('.') || before.ends_with('{');
            (!is_target && !is_placeholder).then(|| whole.as_str().to_string())
        })
        .collect()
}

#[test]
fn the_scanner_finds_figures_and_passes_targets_and_formats() {
    let literals = string_literals(
        "let a = \"≈ 130 ms\"; // \"not 5 ms\"\nlet b = '\"'; let c = r#\"42 MB\"#;\n\
         let d = \"≤ 15 ms p50, {:.2} ms, {} ms\"; let e: &'static str = \"87%\";",
    );
    let found: Vec<(usize, Vec<String>)> = literals
        .iter()
        .map(|(line, text)| (*line, unmeasured_figures(text)))
        .filter(|(_, figures)| !figures.is_empty())
        .collect();
    assert_eq!(
        found,
        vec![
            (1, vec!["130 ms".to_string()]),
            (2, vec!["42 MB".to_string()]),
            (3, vec!["87%".to_string()]),
        ]
    );
}

#[test]
fn no_benchmark_prints_a_figure_it_did_not_measure() {
    let sources = bench_sources();
    assert!(
        sources.len() > 20,
        "the benchmark sources were not found: {sources:?}"
    );
    let quoted_const = Regex::new(r"\bconst\s+\w*(PAPER|BEFORE|QUOTED|PREVIOUS)\w*\s*:").unwrap();
    let mut found = Vec::new();
    for path in &sources {
        let text = fs::read_to_string(path).unwrap();
        let code = without_tests(&text);
        let place = path.strip_prefix(workspace()).unwrap_or(path).display();
        for (line, literal) in string_literals(code) {
            for figure in unmeasured_figures(&literal) {
                found.push(format!("{place}:{line}: \"{figure}\" in {literal:?}"));
            }
        }
        for (i, line) in code.lines().enumerate() {
            if quoted_const.is_match(line) {
                found.push(format!("{place}:{}: {}", i + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "figures printed without being measured:\n{}",
        found.join("\n")
    );
}

#[test]
fn no_docs_table_quotes_a_figure_instead_of_measuring_it() {
    let mut pages = vec![workspace().join("README.md")];
    for entry in fs::read_dir(workspace().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            pages.push(path);
        }
    }
    let quoted = Regex::new(r"(?i)\b(quoted|paper's)\b|\|\s*[~≈]\s?\d").unwrap();
    let mut found = Vec::new();
    for page in &pages {
        let text = fs::read_to_string(page).unwrap();
        for (i, line) in text.lines().enumerate() {
            if line.starts_with('|') && quoted.is_match(line) {
                found.push(format!("{}:{}: {line}", page.display(), i + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "table rows of quoted figures:\n{}",
        found.join("\n")
    );
}
