//! The Overview page: counts per namespace, growth over time and recall latency as plots, and
//! the health of the index and the store.

use std::sync::Arc;

use axum::extract::{Query, State};
use axum::response::Response;
use lore::ops::browse::{Overview, StoreOverview};
use maud::{Markup, html};

use super::html::{self, Page, Section};
use super::{App, PageCtx, RecallTiming, run_op, svg};

fn render(app: &App, env: &mut lore::ops::Env<'_>, _ctx: &PageCtx) -> Result<Page, lore::Error> {
    let ov = run_op(env, Overview {})?;
    let body = html! {
        (counts(&ov))
        @if ov.status.total == 0 {
            (html::empty_state(
                "The store is empty.",
                html! {
                    "Save a memory with " code { "lore remember \"…\"" }
                    " or connect an agent with " code { "lore setup" }
                    "; counts and growth appear here."
                },
            ))
        } @else {
            (charts(&ov))
        }
        (recall_latency(&app.recalls()))
        (health(&ov))
    };
    Ok(Page::new(Section::Overview, "Overview", body))
}

/// How many memories, branches, sessions and open contradictions; which project and store.
fn counts(ov: &StoreOverview) -> Markup {
    let st = &ov.status;
    html! {
        dl class="facts" {
            dt { "memories" } dd id="total" { (st.total) }
            dt { "context branches" } dd { (ov.context_branches) }
            dt { "reasoning sessions" } dd { (ov.reasoning_sessions) }
            dt { "open contradictions" } dd { (st.open_conflicts) }
            dt { "project" } dd { (st.project.as_deref().unwrap_or("(none)")) }
            dt { "git directory" } dd { code { (st.git_dir) } }
        }
    }
}

/// Memories per namespace as bars, and the store's growth by day as a line.
fn charts(ov: &StoreOverview) -> Markup {
    let rows: Vec<(String, f64)> = ov
        .status
        .namespaces
        .iter()
        .map(|n| (n.namespace.clone(), n.total as f64))
        .collect();
    let points: Vec<(f64, f64)> = ov
        .growth
        .iter()
        .enumerate()
        .map(|(i, g)| (i as f64, g.total as f64))
        .collect();
    let first = ov.growth.first().map(|g| g.day.as_str()).unwrap_or("");
    let last = ov.growth.last().map(|g| g.day.as_str()).unwrap_or("");
    html! {
        h2 { "Memories per namespace" }
        (svg::bars("Memories per namespace", &rows))
        h2 { "Growth" }
        (svg::line(
            "Memories in the store by the day they were created",
            &points,
            (first, last),
            "memories",
        ))
    }
}

/// The time of each recall made through this UI, with the median.
fn recall_latency(recalls: &[RecallTiming]) -> Markup {
    if recalls.is_empty() {
        return html! {
            h2 { "Recall latency" }
            p class="muted" {
                "No searches through this page yet: search on the "
                a href="/memories" { "Memories" }
                " page and each recall's time is plotted here."
            }
        };
    }
    let points: Vec<(f64, f64)> = recalls.iter().map(|r| (r.at, r.ms)).collect();
    let mut sorted: Vec<f64> = recalls.iter().map(|r| r.ms).collect();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2];
    html! {
        h2 { "Recall latency" }
        (svg::line(
            "Recall time of each search, in milliseconds",
            &points,
            ("start", "now"),
            "ms",
        ))
        p class="muted" {
            (recalls.len()) " recalls since the UI started; median "
            (format!("{median:.1}")) " ms."
        }
    }
}

/// The index's state, the embedder, the memory ref's tip and the files that do not parse.
fn health(ov: &StoreOverview) -> Markup {
    let st = &ov.status;
    let ix = &st.index;
    html! {
        h2 { "Health" }
        dl class="facts" {
            dt { "index" } dd { code { (ix.path) } }
            dt { "index was current" }
            dd { (if ix.was_current { "yes" } else { "no (caught up now)" }) }
            dt { "files caught up" } dd { (ix.caught_up_files) }
            dt { "embedder" } dd { (ix.embedder) }
            dt { "memory ref tip" } dd { code { (st.tip.as_deref().unwrap_or("(none)")) } }
            dt { "unreadable memory files" } dd { (st.invalid.len()) }
        }
        @if !st.invalid.is_empty() {
            ul class="invalid" {
                @for f in &st.invalid {
                    li class="warning" { (serde_json::to_string(f).unwrap_or_default()) }
                }
            }
        }
    }
}

/// `/overview`.
pub async fn page(
    State(app): State<Arc<App>>,
    Query(query): Query<Vec<(String, String)>>,
) -> Response {
    app.page(query, render).await
}
