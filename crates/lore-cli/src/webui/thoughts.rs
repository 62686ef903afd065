//! The Reasoning trees page: the sessions; one session's tree as a graph (score as colour,
//! outcomes marked, the best path highlighted); a node's replay (the path from the root with
//! each thought's text, scores and trace); the diff of two chosen nodes.

use std::sync::Arc;

use axum::extract::{Query, State};
use axum::response::Response;
use lore::ops::browse::{ReasoningTree, ThinkTree};
use lore::ops::thoughts::{ThinkDiff, ThinkReplay};
use lore::thoughts::ThoughtNode;
use maud::{Markup, html};

use super::html::{self, Page, Section, short};
use super::{App, PageCtx, run_op, svg};

fn render(env: &mut lore::ops::Env<'_>, ctx: &PageCtx) -> Result<Page, lore::Error> {
    let tree = run_op(
        env,
        ThinkTree {
            session: ctx.param("session").map(str::to_string),
        },
    )?;
    if tree.sessions.is_empty() {
        return Ok(Page::new(
            Section::Thoughts,
            "Reasoning trees",
            html::empty_state(
                "No reasoning sessions yet.",
                html! {
                    "Agents grow trees with the " code { "think_add" } " (or "
                    code { "sequentialthinking" } ") tool, or " code { "lore think add" }
                    "; each session appears here as a graph."
                },
            ),
        ));
    }
    let Some(session) = tree.session.clone() else {
        let body = html! {
            (sessions(&tree))
            p { "Choose a session to draw its tree." }
        };
        return Ok(Page::new(Section::Thoughts, "Reasoning trees", body));
    };
    let selected = ctx.param("node").unwrap_or("");
    let body = html! {
        (sessions(&tree))
        h2 { "Tree" }
        p class="muted" {
            (tree.thoughts.len()) " thoughts. Colour is the score (red 0, green 1); ✓ success, \
            ✗ failed; the thick line is the best path. Choose a node to replay it."
        }
        div class="tree-box" { (svg::tree(&session, &tree.thoughts, &tree.best_path, selected)) }
        (compare(env, ctx, &session, &tree)?)
        @if !selected.is_empty() {
            (replay(env, selected)?)
        }
    };
    Ok(Page::new(
        Section::Thoughts,
        format!("Reasoning: {session}"),
        body,
    ))
}

/// The sessions, the one shown marked.
fn sessions(tree: &ReasoningTree) -> Markup {
    html! {
        nav aria-label="Sessions" {
            h2 { "Sessions" }
            ul class="sessions" {
                @for s in &tree.sessions {
                    @let current = tree.session.as_deref() == Some(s.as_str());
                    li {
                        a href={ "/thoughts" (html::query(&[("session", s)])) }
                            aria-current=[current.then_some("page")]
                        { (s) }
                    }
                }
            }
        }
    }
}

/// The form that picks two thoughts of the session and, once both are picked, their diff.
fn compare(
    env: &mut lore::ops::Env<'_>,
    ctx: &PageCtx,
    session: &str,
    tree: &ReasoningTree,
) -> Result<Markup, lore::Error> {
    let options: Vec<(String, String)> = tree
        .thoughts
        .iter()
        .map(|t| {
            let line = t.text.lines().next().unwrap_or("");
            let label: String = line.chars().take(50).collect();
            (t.id.clone(), format!("{} {label}", short(&t.id)))
        })
        .collect();
    let from = ctx.param("from").unwrap_or("");
    let to = ctx.param("to").unwrap_or("");
    let diff = if !from.is_empty() && !to.is_empty() {
        let d = run_op(
            env,
            ThinkDiff {
                from: from.to_string(),
                to: to.to_string(),
            },
        )?;
        Some(html! {
            p {
                "score " (format!("{:.2}", d.from_scores.combined)) " → "
                (format!("{:.2}", d.to_scores.combined))
            }
            (html::diff_table(&d.lines))
        })
    } else {
        None
    };
    Ok(html! {
        h2 { "Compare two thoughts" }
        form method="get" action="/thoughts" class="inline" {
            input type="hidden" name="session" value=(session);
            (html::select("from", "from", &options, from))
            (html::select("to", "to", &options, to))
            button type="submit" { "Diff" }
        }
        @if let Some(diff) = diff { (diff) }
    })
}

/// The path from the root to the `selected` thought, each with its text, scores and trace.
fn replay(env: &mut lore::ops::Env<'_>, selected: &str) -> Result<Markup, lore::Error> {
    let replay = run_op(
        env,
        ThinkReplay {
            id: selected.to_string(),
            into: None,
        },
    )?;
    Ok(html! {
        h2 id="replay" { "Replay" }
        ol class="replay" {
            @for node in &replay.path { (replay_step(node)) }
        }
    })
}

/// One thought of a replay: id, depth, scores, time, agent, text and trace.
fn replay_step(node: &ThoughtNode) -> Markup {
    let components: Vec<String> = node
        .scores
        .components
        .iter()
        .map(|(k, v)| format!("{k} {v:.2}"))
        .collect();
    let trace: Vec<String> = node.trace.iter().map(|t| t.to_string()).collect();
    html! {
        li {
            code { (short(&node.id)) }
            " depth " (node.metadata.depth) " · score " (format!("{:.2}", node.scores.combined))
            @if !components.is_empty() { " (" (components.join(", ")) ")" }
            " · " (html::time(&node.metadata.created))
            @if let Some(a) = &node.metadata.agent { " · agent " (a) }
            pre class="doc" { (node.text) }
            @if !trace.is_empty() {
                details {
                    summary { "trace (" (trace.len()) ")" }
                    pre { (trace.join("\n")) }
                }
            }
        }
    }
}

/// `/thoughts`.
pub async fn page(
    State(app): State<Arc<App>>,
    Query(query): Query<Vec<(String, String)>>,
) -> Response {
    app.page(query, |_, env, ctx| render(env, ctx)).await
}
