//! The Context branches page: the roadmap and every branch; for one branch its commit timeline
//! and step log (windowed, like the CONTEXT views), its metadata, and the preview of merging it
//! into another branch.

use std::fmt::Write as _;
use std::sync::Arc;

use axum::extract::{Query, State};
use axum::response::Response;
use lore::ctx::preview::MergePreview;
use lore::ctx::view::{Overview, View};
use lore::ops::browse::CtxMergePreview;
use lore::ops::ctx::{CtxMetadataGet, CtxShow};
use lore::steps::Step;

use super::html::{self, Page, Section, esc, short};
use super::{App, PageCtx, run_op};

const COMMIT_WINDOW: usize = 10;
const LOG_WINDOW: usize = 20;

fn offset(ctx: &PageCtx, name: &str) -> usize {
    ctx.param(name).and_then(|v| v.parse().ok()).unwrap_or(0)
}

/// Links to the newer and older windows of a list of `total` items.
fn pager(
    branch: &str,
    name: &str,
    at: usize,
    window: usize,
    total: usize,
    other: (&str, usize),
) -> String {
    let link = |to: usize, label: &str| {
        let to_s = to.to_string();
        let other_s = other.1.to_string();
        format!(
            "<a href=\"/context{}\">{label}</a>",
            html::query(&[("branch", branch), (name, &to_s), (other.0, &other_s)])
        )
    };
    let mut out = String::from("<p class=\"pager\">");
    if at > 0 {
        out.push_str(&link(at.saturating_sub(window), "← newer"));
        out.push(' ');
    }
    let _ = write!(
        out,
        "<span class=\"muted\">{}–{} of {total}</span>",
        (at + 1).min(total),
        (at + window).min(total)
    );
    if at + window < total {
        out.push(' ');
        out.push_str(&link(at + window, "older →"));
    }
    out.push_str("</p>");
    out
}

fn render(env: &mut lore::ops::Env<'_>, ctx: &PageCtx) -> Result<Page, lore::Error> {
    let Some(ov) = context_overview(env)? else {
        return Ok(no_context_page());
    };
    let branch = ctx.param("branch").unwrap_or(&ov.current).to_string();
    let mut body = branches_and_roadmap(&ov, &branch);
    let (coff, loff) = (offset(ctx, "coff"), offset(ctx, "loff"));
    body.push_str(&commit_timeline(env, &branch, coff, loff)?);
    body.push_str(&step_log(env, &branch, loff, coff)?);
    body.push_str(&metadata_section(env, &branch)?);
    body.push_str(&merge_preview_section(env, ctx, &ov, &branch)?);
    Ok(Page::new(
        Section::Context,
        format!("Context: {branch}"),
        body,
    ))
}

/// The roadmap and every branch, or `None` when there is no context workspace yet.
fn context_overview(env: &mut lore::ops::Env<'_>) -> Result<Option<Overview>, lore::Error> {
    let overview = match run_op(env, CtxShow::default()) {
        Ok(shown) => shown,
        Err(e) if e.class() == lore::ErrorClass::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let View::Overview(ov) = overview.view else {
        return Err(lore::Error::Invalid {
            what: "view",
            value: String::new(),
            reason: "the context overview was expected".into(),
        });
    };
    Ok(Some(ov))
}

/// The page shown before a context workspace exists.
fn no_context_page() -> Page {
    Page::new(
        Section::Context,
        "Context branches",
        html::empty_state(
            "No context yet.",
            "Start one with <code>lore ctx init \"the goal\"</code> (or an agent's \
             <code>ctx_init</code> tool); branches, commits and the step log appear here.",
        ),
    )
}

/// The branch list (with `branch` marked as shown) beside the current branch's roadmap.
fn branches_and_roadmap(ov: &Overview, branch: &str) -> String {
    let mut body =
        String::from("<div class=\"columns\"><section><h2>Branches</h2><ul class=\"branches\">");
    for b in &ov.branches {
        let current = if b.name == branch {
            " aria-current=\"page\""
        } else {
            ""
        };
        let _ = write!(
            body,
            "<li><a href=\"/context{}\"{current}>{}</a>{} <span class=\"muted\">{} commits, {} \
             uncommitted</span><br><small>{}</small></li>",
            html::query(&[("branch", &b.name)]),
            esc(&b.name),
            if b.current { " (current)" } else { "" },
            b.commits,
            b.uncommitted,
            esc(&b.summary)
        );
    }
    let _ = write!(
        body,
        "</ul></section><section><h2>Roadmap ({})</h2><pre class=\"doc\">{}</pre></section></div>",
        esc(&ov.current),
        esc(&ov.roadmap)
    );
    body
}

/// A window of the branch's commits, newest first, from `coff`; `loff` keeps the step log's
/// window in the pager's links.
fn commit_timeline(
    env: &mut lore::ops::Env<'_>,
    branch: &str,
    coff: usize,
    loff: usize,
) -> Result<String, lore::Error> {
    let commits = run_op(
        env,
        CtxShow {
            branch: Some(branch.to_string()),
            window: Some(COMMIT_WINDOW),
            offset: coff,
            ..CtxShow::default()
        },
    )?;
    let mut body = format!("<h2>Commits of {}</h2>", esc(branch));
    if let View::Branch(v) = &commits.view {
        let _ = write!(
            body,
            "<p class=\"muted\">purpose: {}</p><ol class=\"timeline\" id=\"commits\">",
            esc(&v.meta.purpose)
        );
        for c in &v.entries {
            let e = &c.entry;
            let _ = write!(
                body,
                "<li><code title=\"{}\">{}</code> #{} {} <strong>{}</strong>{}<br>{}<br>\
                 <small class=\"muted\">summary: {}</small></li>",
                esc(&c.commit),
                esc(short(&c.commit)),
                e.seq,
                html::time(&e.time),
                esc(e.kind.as_str()),
                e.merged
                    .as_deref()
                    .map(|m| format!(" of {}", esc(m)))
                    .unwrap_or_default(),
                esc(&e.contribution),
                esc(&e.summary)
            );
        }
        body.push_str("</ol>");
        body.push_str(&pager(
            branch,
            "coff",
            coff,
            COMMIT_WINDOW,
            v.total,
            ("loff", loff),
        ));
    }
    Ok(body)
}

/// A window of the branch's step log, newest first, from `loff`; `coff` keeps the commit
/// timeline's window in the pager's links.
fn step_log(
    env: &mut lore::ops::Env<'_>,
    branch: &str,
    loff: usize,
    coff: usize,
) -> Result<String, lore::Error> {
    let log = run_op(
        env,
        CtxShow {
            branch: Some(branch.to_string()),
            log: true,
            window: Some(LOG_WINDOW),
            offset: loff,
            ..CtxShow::default()
        },
    )?;
    let mut body = String::from("<h2>Step log</h2>");
    let View::Log(v) = &log.view else {
        return Ok(body);
    };
    if v.total == 0 {
        body.push_str("<p class=\"muted\">No steps logged. Agents log them with <code>ctx_log</code>, hooks with each tool call.</p>");
        return Ok(body);
    }
    body.push_str("<table class=\"steps\"><thead><tr><th>#</th><th>when</th><th>what</th><th>committed</th></tr></thead><tbody>");
    for (n, s) in &v.steps {
        let _ = write!(
            body,
            "<tr><td>{n}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            html::time(&s.step.time),
            step_what(&s.step),
            if s.committed { "yes" } else { "no" }
        );
    }
    body.push_str("</tbody></table>");
    body.push_str(&pager(
        branch,
        "loff",
        loff,
        LOG_WINDOW,
        v.total,
        ("coff", coff),
    ));
    Ok(body)
}

/// A step's tool, text, arguments and result, those it has, as one line of HTML.
fn step_what(step: &Step) -> String {
    [
        step.tool
            .as_deref()
            .map(|t| format!("<strong>{}</strong>", esc(t))),
        step.text.as_deref().map(esc),
        step.arguments
            .as_deref()
            .map(|a| format!("<code>{}</code>", esc(a))),
        step.result.as_deref().map(|r| format!("→ {}", esc(r))),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join(" ")
}

/// The branch's metadata as YAML.
fn metadata_section(env: &mut lore::ops::Env<'_>, branch: &str) -> Result<String, lore::Error> {
    let metadata = run_op(
        env,
        CtxMetadataGet {
            segment: None,
            branch: Some(branch.to_string()),
        },
    )?;
    Ok(format!(
        "<h2>Metadata</h2><pre class=\"doc\" id=\"metadata\">{}</pre>",
        esc(&metadata.yaml)
    ))
}

/// The form that picks a branch to merge `branch` into and, once one is picked, what the merge
/// would do.
fn merge_preview_section(
    env: &mut lore::ops::Env<'_>,
    ctx: &PageCtx,
    ov: &Overview,
    branch: &str,
) -> Result<String, lore::Error> {
    let others: Vec<(String, String)> = ov
        .branches
        .iter()
        .filter(|b| b.name != branch)
        .map(|b| (b.name.clone(), b.name.clone()))
        .collect();
    let mut body = String::from("<h2>Merge preview</h2>");
    if others.is_empty() {
        body.push_str("<p class=\"muted\">Only one branch: make another with <code>lore ctx branch NAME</code> to merge.</p>");
        return Ok(body);
    }
    let into = ctx.param("into").unwrap_or("");
    let _ = write!(
        body,
        "<form method=\"get\" action=\"/context\" class=\"inline\"><input type=\"hidden\" \
         name=\"branch\" value=\"{}\">Merge {} {}<button type=\"submit\">Preview</button></form>",
        esc(branch),
        esc(branch),
        html::select("into", "into", &others, into)
    );
    if !into.is_empty() {
        let preview = run_op(
            env,
            CtxMergePreview {
                branch: branch.to_string(),
                into: Some(into.to_string()),
            },
        )?;
        body.push_str(&merge_outcome(&preview));
    }
    Ok(body)
}

/// What merging would do: nothing, or the steps that would come over, the conflicts and the
/// roadmap after it; then the command that merges for real.
fn merge_outcome(p: &MergePreview) -> String {
    let mut body = String::new();
    if p.up_to_date {
        let _ = write!(
            body,
            "<p class=\"ok\">{} already has everything {} has.</p>",
            esc(&p.into),
            esc(&p.from)
        );
    } else {
        let _ = write!(
            body,
            "<p>{} steps would come over{}; {} conflicts.</p>",
            p.incoming_steps,
            if p.uncommitted_left > 0 {
                format!(" ({} uncommitted would not)", p.uncommitted_left)
            } else {
                String::new()
            },
            p.conflicts.len()
        );
        if !p.shared_history {
            body.push_str("<p class=\"warning\">The branches share no history: every difference conflicts.</p>");
        }
        for c in &p.conflicts {
            let _ = write!(body, "<pre class=\"conflict\">{}</pre>", esc(c));
        }
        let _ = write!(
            body,
            "<h3>Roadmap after the merge</h3><pre class=\"doc\">{}</pre>",
            esc(&p.roadmap)
        );
    }
    let _ = write!(
        body,
        "<p class=\"muted\">Merge for real with <code>lore ctx merge {} --into {}</code>.</p>",
        esc(&p.from),
        esc(&p.into)
    );
    body
}

/// `/context`.
pub async fn page(
    State(app): State<Arc<App>>,
    Query(query): Query<Vec<(String, String)>>,
) -> Response {
    app.page(query, |_, env, ctx| render(env, ctx)).await
}
