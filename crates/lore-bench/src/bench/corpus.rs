//! A seeded generator of realistic-looking memories and queries for benchmarks.
//!
//! Text is 40% function words (which recall ignores) and 60% content words drawn from a
//! 20,000-word vocabulary with a Zipf–Mandelbrot law, P(rank r) ∝ 1/(r + 20): the commonest
//! content word is ~0.7% of tokens and lands in about a third of the memories, the long tail in
//! a handful — the long-tailed posting lists natural text has once stop words are gone.

use lore::NewMemory;

const NAMESPACES: [&str; 10] = lore::model::BUILTIN_NAMESPACES;

const TECH: &[&str] = &[
    "sqlite",
    "index",
    "cache",
    "latency",
    "retry",
    "timeout",
    "schema",
    "migration",
    "parser",
    "token",
    "budget",
    "embedding",
    "vector",
    "search",
    "commit",
    "branch",
    "merge",
    "conflict",
    "deploy",
    "config",
    "session",
    "agent",
    "hook",
    "memory",
    "context",
    "summary",
    "review",
    "test",
    "fixture",
    "snapshot",
    "benchmark",
    "profile",
    "allocation",
    "thread",
    "lock",
    "queue",
    "worker",
    "scheduler",
    "network",
    "socket",
    "protocol",
    "encoding",
    "utf8",
    "unicode",
    "path",
    "file",
    "directory",
    "permission",
    "secret",
    "credential",
    "auth",
    "login",
    "database",
    "query",
    "transaction",
    "rollback",
    "backup",
    "restore",
    "logging",
    "metrics",
    "alert",
    "dashboard",
    "release",
    "version",
    "dependency",
    "compiler",
    "linker",
    "crate",
    "module",
    "trait",
    "closure",
    "iterator",
    "async",
    "runtime",
    "tokio",
    "serde",
    "yaml",
    "json",
    "markdown",
    "frontend",
    "backend",
    "api",
    "endpoint",
    "handler",
    "router",
    "middleware",
    "docker",
    "kubernetes",
    "terraform",
    "pipeline",
    "ci",
    "flaky",
    "regression",
    "bug",
    "fix",
    "workaround",
    "upstream",
    "patch",
    "refactor",
    "rename",
    "cleanup",
];

const FUNCTION_WORDS: &[&str] = &[
    "the", "a", "of", "to", "and", "in", "is", "it", "that", "for", "on", "with", "as", "was",
    "we", "this", "be", "by", "not", "but", "when", "if", "so", "because", "then", "after",
];

/// Zipf–Mandelbrot offset and vocabulary size (see the module doc).
const ZIPF_OFFSET: f64 = 20.0;
const VOCABULARY: usize = 20_000;

const SYLLABLES: &[&str] = &[
    "ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa", "do", "fe", "gi", "hu", "ja", "ko",
    "li", "mo", "nu", "pe", "qua", "ri", "so", "tu", "va", "we", "xi", "yo", "zu", "bra",
];

const TAGS: &[&str] = &[
    "db", "perf", "security", "ux", "api", "infra", "testing", "docs", "build", "deps", "ci",
    "release", "bug", "design", "refactor", "storage", "network", "auth", "config", "tooling",
];

/// A small, fast, seeded generator (xorshift64*). Written here rather than taken from a crate:
/// the corpora behind the published figures must come out the same from a seed whatever
/// version of a dependency is built, and a crate's seeded stream is not promised to.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// A uniform draw in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A Zipf–Mandelbrot draw in 0..n (exponent 1, offset `q`), by inverting the continuous CDF.
    pub fn zipf(&mut self, n: usize, q: f64) -> usize {
        let u = self.unit();
        let r = q * ((n as f64 + q) / q).powf(u) - q;
        (r.floor() as usize).min(n - 1)
    }
}

/// The benchmark vocabulary: technical words first (the common ones), then pseudo-words.
pub struct Corpus {
    words: Vec<String>,
}

impl Corpus {
    pub fn new() -> Corpus {
        let mut words: Vec<String> = TECH.iter().map(|w| w.to_string()).collect();
        let mut rng = Rng::new(7);
        while words.len() < VOCABULARY {
            let n = 2 + rng.below(3);
            let w: String = (0..n)
                .map(|_| SYLLABLES[rng.below(SYLLABLES.len())])
                .collect();
            if !words.contains(&w) {
                words.push(w);
            }
        }
        Corpus { words }
    }

    fn word(&self, rng: &mut Rng) -> &str {
        if rng.below(10) < 4 {
            FUNCTION_WORDS[rng.below(FUNCTION_WORDS.len())]
        } else {
            self.content_word(rng)
        }
    }

    fn content_word(&self, rng: &mut Rng) -> &str {
        &self.words[rng.zipf(self.words.len(), ZIPF_OFFSET)]
    }

    fn sentence(&self, rng: &mut Rng, n: usize) -> String {
        (0..n).map(|_| self.word(rng)).collect::<Vec<_>>().join(" ")
    }

    /// A memory like an agent would write: a short summary, a paragraph or two, a few tags.
    pub fn memory(&self, rng: &mut Rng) -> NewMemory {
        let n = 5 + rng.below(6);
        let mut summary = self.sentence(rng, n);
        summary.truncate(100);
        let summary = summary.trim().to_string();
        let paragraphs = 1 + rng.below(2);
        let body = (0..paragraphs)
            .map(|_| {
                let n = 20 + rng.below(40);
                format!("{}.", self.sentence(rng, n))
            })
            .collect::<Vec<_>>()
            .join("\n\n")
            + "\n";
        let tags = (0..1 + rng.below(3))
            .map(|_| TAGS[rng.below(TAGS.len())].to_string())
            .collect();
        NewMemory {
            namespace: NAMESPACES[rng.zipf(NAMESPACES.len(), 1.0)].to_string(),
            summary,
            body,
            tags,
            ..NewMemory::default()
        }
    }

    /// A query of the three most common content words (their postings hold a large share of
    /// the store).
    pub fn common_query(&self) -> String {
        self.words[..3].join(" ")
    }

    /// A question-like query: a function word or two and two to four content words.
    pub fn query(&self, rng: &mut Rng) -> String {
        let n = 2 + rng.below(3);
        let mut words = vec!["why", "did", "we"];
        words.truncate(1 + rng.below(3));
        let content: Vec<&str> = (0..n).map(|_| self.content_word(rng)).collect();
        words.extend(content);
        words.join(" ")
    }
}
