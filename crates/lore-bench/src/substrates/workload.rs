//! The seeded recurring-problem workload: problem types in several subjects, one stored case
//! per type, and queries in five similarity tiers against it — identical, paraphrase, the same
//! method with other numbers, another question on the same subject, and unrelated.

use serde::Serialize;

use crate::bench::corpus::Rng;

/// How a query relates to the stored case it was made from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    /// The same text.
    Identical,
    /// The same problem and numbers, worded differently.
    Paraphrase,
    /// The same problem with other numbers: the method applies, the answer does not.
    SameMethod,
    /// Another question about the same subject.
    SameSubject,
    /// Nothing to do with it.
    Unrelated,
}

impl Tier {
    /// Every tier, closest first.
    pub const ALL: [Tier; 5] = [
        Tier::Identical,
        Tier::Paraphrase,
        Tier::SameMethod,
        Tier::SameSubject,
        Tier::Unrelated,
    ];

    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Tier::Identical => "identical",
            Tier::Paraphrase => "paraphrase",
            Tier::SameMethod => "same method, other numbers",
            Tier::SameSubject => "same subject",
            Tier::Unrelated => "unrelated",
        }
    }
}

/// A problem type: how it is asked, how else it is asked, and another question on its subject.
struct Problem {
    ask: &'static str,
    paraphrase: &'static str,
    same_subject: &'static str,
}

const PROBLEMS: &[Problem] = &[
    Problem {
        ask: "A train covers {a} km at {b} km/h. How many hours does the trip take?",
        paraphrase: "How long, in hours, does a train running at {b} km/h need for {a} km?",
        same_subject: "Which train line has the most stations between the two cities?",
    },
    Problem {
        ask: "A tank holds {a} litres and drains at {b} litres per minute. When is it empty?",
        paraphrase: "Draining {b} litres each minute, how many minutes until a {a} litre tank is empty?",
        same_subject: "What material should a water tank be made of to avoid rust?",
    },
    Problem {
        ask: "Compound interest: {a} dollars at {b} percent a year for 3 years. What is the balance?",
        paraphrase: "What balance do {a} dollars reach after 3 years at {b} percent yearly compounding?",
        same_subject: "Should a savings account or a bond hold an emergency fund?",
    },
    Problem {
        ask: "Sort a list of {a} user records by age, then by name, in a stable way.",
        paraphrase: "Order {a} user records stably: age first, name second.",
        same_subject: "How should user records store a birthday to survive time zones?",
    },
    Problem {
        ask: "A rectangle is {a} cm by {b} cm. What is the length of its diagonal?",
        paraphrase: "Find the diagonal of a {a} cm by {b} cm rectangle.",
        same_subject: "How many rectangles can be drawn on a chessboard grid?",
    },
    Problem {
        ask: "The HTTP service returns 503 after {a} requests per second with {b} workers. Fix the overload.",
        paraphrase: "With {b} workers the HTTP service answers 503 beyond {a} requests per second; how to fix it?",
        same_subject: "Which HTTP status code fits a resource that moved permanently?",
    },
    Problem {
        ask: "A recipe for {a} people needs {b} grams of flour. How much flour for 3 people?",
        paraphrase: "If {b} grams of flour feed {a} people, what amount feeds 3 people?",
        same_subject: "Why does bread flour make chewier bread than cake flour?",
    },
    Problem {
        ask: "The git repository has {a} commits and the bisect range is {b} commits wide. How many steps?",
        paraphrase: "How many bisect steps cover a range of {b} commits in a repository of {a} commits?",
        same_subject: "How do git hooks run on the server side of a push?",
    },
];

const UNRELATED: &[&str] = &[
    "What is the capital of the country with the longest coastline?",
    "Suggest a name for a grey cat that likes boxes.",
    "Which chess opening suits a beginner who likes to attack?",
    "How do you keep basil alive on a windowsill in winter?",
    "Recommend a novel set on a ship in the nineteenth century.",
    "What is the best way to fold a fitted sheet?",
];

/// One stored case and the queries made from it.
pub struct Workload {
    /// The stored cases: one per problem type, then fillers.
    pub cases: Vec<String>,
    /// Queries: text, tier, and the stored case each was made from.
    pub queries: Vec<(String, Tier, usize)>,
}

fn fill(template: &str, a: u32, b: u32) -> String {
    template
        .replace("{a}", &a.to_string())
        .replace("{b}", &b.to_string())
}

/// A workload: the cases, `fillers` unrelated filler cases, and `per_tier` queries per tier.
pub fn generate(seed: u64, fillers: usize, per_tier: usize) -> Workload {
    let mut rng = Rng::new(seed);
    let numbers = |rng: &mut Rng| (10 + rng.below(490) as u32, 2 + rng.below(60) as u32);
    let mut cases = Vec::new();
    let mut originals = Vec::new();
    for p in PROBLEMS {
        let (a, b) = numbers(&mut rng);
        cases.push(fill(p.ask, a, b));
        originals.push((a, b));
    }
    let words = [
        "config", "deploy", "cache", "schema", "index", "network", "budget", "garden", "invoice",
        "backup", "printer", "meeting", "travel", "lecture", "report", "sensor",
    ];
    for i in 0..fillers {
        let w1 = words[rng.below(words.len())];
        let w2 = words[rng.below(words.len())];
        cases.push(format!(
            "Note {i}: the {w1} of the {w2} changed after {} days; keep an eye on it.",
            1 + rng.below(90)
        ));
    }
    let mut queries = Vec::new();
    for q in 0..per_tier {
        let case = q % PROBLEMS.len();
        let p = &PROBLEMS[case];
        let (a, b) = originals[case];
        let (mut c, mut d) = numbers(&mut rng);
        while (c, d) == (a, b) {
            (c, d) = numbers(&mut rng);
        }
        queries.push((fill(p.ask, a, b), Tier::Identical, case));
        queries.push((fill(p.paraphrase, a, b), Tier::Paraphrase, case));
        queries.push((fill(p.ask, c, d), Tier::SameMethod, case));
        queries.push((p.same_subject.to_string(), Tier::SameSubject, case));
        queries.push((
            UNRELATED[q % UNRELATED.len()].to_string(),
            Tier::Unrelated,
            case,
        ));
    }
    Workload { cases, queries }
}
