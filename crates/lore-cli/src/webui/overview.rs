//! The Overview page: counts per namespace, growth over time and recall latency as plots, and
//! the health of the index and the store.

use std::fmt::Write as _;
use std::sync::Arc;

use axum::extract::{Query, State};
use axum::response::Response;
use lore::ops::browse::Overview;

use super::html::{self, Page, Section, esc};
use super::{App, PageCtx, run_op, svg};

fn render(app: &App, env: &mut lore::ops::Env<'_>, _ctx: &PageCtx) -> Result<Page, lore::Error> {
    let ov = run_op(env, Overview {})?;
    let st = &ov.status;
    let mut body = format!(
        "<dl class=\"facts\"><dt>memories</dt><dd id=\"total\">{}</dd><dt>context branches</dt>\
         <dd>{}</dd><dt>reasoning sessions</dt><dd>{}</dd><dt>open contradictions</dt><dd>{}</dd>\
         <dt>project</dt><dd>{}</dd><dt>git directory</dt><dd><code>{}</code></dd></dl>",
        st.total,
        ov.context_branches,
        ov.reasoning_sessions,
        st.open_conflicts,
        esc(st.project.as_deref().unwrap_or("(none)")),
        esc(&st.git_dir)
    );
    if st.total == 0 {
        body.push_str(&html::empty_state(
            "The store is empty.",
            "Save a memory with <code>lore remember \"…\"</code> or connect an agent with \
             <code>lore setup</code>; counts and growth appear here.",
        ));
    } else {
        let rows: Vec<(String, f64)> = st
            .namespaces
            .iter()
            .map(|n| (n.namespace.clone(), n.total as f64))
            .collect();
        let _ = write!(
            body,
            "<h2>Memories per namespace</h2>{}",
            svg::bars("Memories per namespace", &rows)
        );
        let points: Vec<(f64, f64)> = ov
            .growth
            .iter()
            .enumerate()
            .map(|(i, g)| (i as f64, g.total as f64))
            .collect();
        let first = ov.growth.first().map(|g| g.day.as_str()).unwrap_or("");
        let last = ov.growth.last().map(|g| g.day.as_str()).unwrap_or("");
        let _ = write!(
            body,
            "<h2>Growth</h2>{}",
            svg::line(
                "Memories in the store by the day they were created",
                &points,
                (first, last),
                "memories"
            )
        );
    }
    let recalls = app.recalls();
    body.push_str("<h2>Recall latency</h2>");
    if recalls.is_empty() {
        body.push_str("<p class=\"muted\">No searches through this page yet: search on the <a href=\"/memories\">Memories</a> page and each recall's time is plotted here.</p>");
    } else {
        let points: Vec<(f64, f64)> = recalls.iter().map(|r| (r.at, r.ms)).collect();
        let mut sorted: Vec<f64> = recalls.iter().map(|r| r.ms).collect();
        sorted.sort_by(f64::total_cmp);
        let median = sorted[sorted.len() / 2];
        let _ = write!(
            body,
            "{}<p class=\"muted\">{} recalls since the UI started; median {median:.1} ms.</p>",
            svg::line(
                "Recall time of each search, in milliseconds",
                &points,
                ("start", "now"),
                "ms"
            ),
            recalls.len()
        );
    }
    let ix = &st.index;
    let _ = write!(
        body,
        "<h2>Health</h2><dl class=\"facts\"><dt>index</dt><dd><code>{}</code></dd><dt>index was \
         current</dt><dd>{}</dd><dt>files caught up</dt><dd>{}</dd><dt>embedder</dt><dd>{}</dd>\
         <dt>memory ref tip</dt><dd><code>{}</code></dd><dt>unreadable memory files</dt><dd>{}</dd></dl>",
        esc(&ix.path),
        if ix.was_current {
            "yes"
        } else {
            "no (caught up now)"
        },
        ix.caught_up_files,
        esc(&ix.embedder),
        esc(st.tip.as_deref().unwrap_or("(none)")),
        st.invalid.len()
    );
    if !st.invalid.is_empty() {
        body.push_str("<ul class=\"invalid\">");
        for f in &st.invalid {
            let _ = write!(
                body,
                "<li class=\"warning\">{}</li>",
                esc(&serde_json::to_string(f).unwrap_or_default())
            );
        }
        body.push_str("</ul>");
    }
    Ok(Page::new(Section::Overview, "Overview", body))
}

/// `/overview`.
pub async fn page(
    State(app): State<Arc<App>>,
    Query(query): Query<Vec<(String, String)>>,
) -> Response {
    app.page(query, render).await
}
