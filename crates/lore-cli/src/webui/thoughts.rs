//! The Reasoning trees page: the sessions; one session's tree as a graph (score as colour,
//! outcomes marked, the best path highlighted); a node's replay (the path from the root with
//! each thought's text, scores and trace); the diff of two chosen nodes.

use std::fmt::Write as _;
use std::sync::Arc;

use axum::extract::{Query, State};
use axum::response::Response;
use lore::ops::browse::ThinkTree;
use lore::ops::thoughts::{ThinkDiff, ThinkReplay};

use super::html::{self, Page, Section, esc, short};
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
                "Agents grow trees with the <code>think_add</code> (or \
                 <code>sequentialthinking</code>) tool, or <code>lore think add</code>; each \
                 session appears here as a graph.",
            ),
        ));
    }
    let mut body =
        String::from("<nav aria-label=\"Sessions\"><h2>Sessions</h2><ul class=\"sessions\">");
    for s in &tree.sessions {
        let current = if tree.session.as_deref() == Some(s.as_str()) {
            " aria-current=\"page\""
        } else {
            ""
        };
        let _ = write!(
            body,
            "<li><a href=\"/thoughts{}\"{current}>{}</a></li>",
            html::query(&[("session", s)]),
            esc(s)
        );
    }
    body.push_str("</ul></nav>");
    let Some(session) = tree.session.clone() else {
        body.push_str("<p>Choose a session to draw its tree.</p>");
        return Ok(Page::new(Section::Thoughts, "Reasoning trees", body));
    };
    let selected = ctx.param("node").unwrap_or("");
    let _ = write!(
        body,
        "<h2>Tree</h2><p class=\"muted\">{} thoughts. Colour is the score (red 0, green 1); ✓ \
         success, ✗ failed; the thick line is the best path. Choose a node to replay it.</p>\
         <div class=\"tree-box\">{}</div>",
        tree.thoughts.len(),
        svg::tree(&session, &tree.thoughts, &tree.best_path, selected)
    );
    // The diff form: two nodes.
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
    let _ = write!(
        body,
        "<h2>Compare two thoughts</h2><form method=\"get\" action=\"/thoughts\" class=\"inline\">\
         <input type=\"hidden\" name=\"session\" value=\"{}\">{}{}<button type=\"submit\">Diff</button></form>",
        esc(&session),
        html::select("from", "from", &options, from),
        html::select("to", "to", &options, to)
    );
    if !from.is_empty() && !to.is_empty() {
        let d = run_op(
            env,
            ThinkDiff {
                from: from.to_string(),
                to: to.to_string(),
            },
        )?;
        let _ = write!(
            body,
            "<p>score {:.2} → {:.2}</p>{}",
            d.from_scores.combined,
            d.to_scores.combined,
            html::diff_table(&d.lines)
        );
    }
    if !selected.is_empty() {
        let replay = run_op(
            env,
            ThinkReplay {
                id: selected.to_string(),
                into: None,
            },
        )?;
        body.push_str("<h2 id=\"replay\">Replay</h2><ol class=\"replay\">");
        for node in &replay.path {
            let components: Vec<String> = node
                .scores
                .components
                .iter()
                .map(|(k, v)| format!("{} {v:.2}", esc(k)))
                .collect();
            let trace = if node.trace.is_empty() {
                String::new()
            } else {
                let lines: Vec<String> = node.trace.iter().map(|t| t.to_string()).collect();
                format!(
                    "<details><summary>trace ({})</summary><pre>{}</pre></details>",
                    node.trace.len(),
                    esc(&lines.join("\n"))
                )
            };
            let _ = write!(
                body,
                "<li><code>{}</code> depth {} · score {:.2}{} · {}{}<pre class=\"doc\">{}</pre>{trace}</li>",
                esc(short(&node.id)),
                node.metadata.depth,
                node.scores.combined,
                if components.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", components.join(", "))
                },
                html::time(&node.metadata.created),
                node.metadata
                    .agent
                    .as_deref()
                    .map(|a| format!(" · agent {}", esc(a)))
                    .unwrap_or_default(),
                esc(&node.text)
            );
        }
        body.push_str("</ol>");
    }
    Ok(Page::new(
        Section::Thoughts,
        format!("Reasoning: {session}"),
        body,
    ))
}

/// `/thoughts`.
pub async fn page(
    State(app): State<Arc<App>>,
    Query(query): Query<Vec<(String, String)>>,
) -> Response {
    app.page(query, |_, env, ctx| render(env, ctx)).await
}
