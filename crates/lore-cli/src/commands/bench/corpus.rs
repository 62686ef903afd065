//! A seeded generator of realistic-looking memories and queries for benchmarks: a vocabulary
//! of technical words and pseudo-words drawn with a Zipf-like skew, so posting lists have the
//! long-tailed lengths real text has.

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

const SYLLABLES: &[&str] = &[
    "ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa", "do", "fe", "gi", "hu", "ja", "ko",
    "li", "mo", "nu", "pe", "qua", "ri", "so", "tu", "va", "we", "xi", "yo", "zu", "bra",
];

const TAGS: &[&str] = &[
    "db", "perf", "security", "ux", "api", "infra", "testing", "docs", "build", "deps", "ci",
    "release", "bug", "design", "refactor", "storage", "network", "auth", "config", "tooling",
];

/// A small, fast, seeded generator (xorshift64*).
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

    /// A Zipf-like draw in 0..n: small indices are much more likely.
    pub fn skewed(&mut self, n: usize) -> usize {
        let u = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        ((n as f64).powf(u) - 1.0).floor().min(n as f64 - 1.0) as usize
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
        while words.len() < 5000 {
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
        &self.words[rng.skewed(self.words.len())]
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
            namespace: NAMESPACES[rng.skewed(NAMESPACES.len())].to_string(),
            summary,
            body,
            tags,
            ..NewMemory::default()
        }
    }

    /// A query of two to four words.
    pub fn query(&self, rng: &mut Rng) -> String {
        let n = 2 + rng.below(3);
        self.sentence(rng, n)
    }
}
