//! The Context branches page: the roadmap and every branch; for one branch its commit timeline
//! and step log (windowed, like the CONTEXT views), its metadata, and the preview of merging it
//! into another branch.

use std::sync::Arc;

use axum::extract::{Query, State};
use axum::response::Response;
use lore::ops::browse::CtxMergePreview;
use lore::ops::ctx::{CtxMetadataGet, CtxShow};
use lore::steps::Step;
use lore::workspace::preview::MergePreview;
use lore::workspace::view::{Overview, View};
use maud::{Markup, html};

use super::html::{self, Page, Section, short};
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
) -> Markup {
    let link = |to: usize, label: &str| {
        let to_s = to.to_string();
        let other_s = other.1.to_string();
        html! {
            a href={
                "/context" (html::query(&[("branch", branch), (name, &to_s), (other.0, &other_s)]))
            } { (label) }
        }
    };
    html! {
        p class="pager" {
            @if at > 0 { (link(at.saturating_sub(window), "← newer")) " " }
            span class="muted" {
                ((at + 1).min(total)) "–" ((at + window).min(total)) " of " (total)
            }
            @if at + window < total { " " (link(at + window, "older →")) }
        }
    }
}

fn render(env: &mut lore::ops::Env<'_>, ctx: &PageCtx) -> Result<Page, lore::Error> {
    let Some(ov) = context_overview(env)? else {
        return Ok(no_context_page());
    };
    let branch = ctx.param("branch").unwrap_or(&ov.current).to_string();
    let (coff, loff) = (offset(ctx, "coff"), offset(ctx, "loff"));
    let body = html! {
        (branches_and_roadmap(&ov, &branch))
        (commit_timeline(env, &branch, coff, loff)?)
        (step_log(env, &branch, loff, coff)?)
        (metadata_section(env, &branch)?)
        (merge_preview_section(env, ctx, &ov, &branch)?)
    };
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
            html! {
                "Start one with " code { "lore ctx init \"the goal\"" } " (or an agent's "
                code { "ctx_init" } " tool); branches, commits and the step log appear here."
            },
        ),
    )
}

/// The branch list (with `branch` marked as shown) beside the current branch's roadmap.
fn branches_and_roadmap(ov: &Overview, branch: &str) -> Markup {
    html! {
        div class="columns" {
            section {
                h2 { "Branches" }
                ul class="branches" {
                    @for b in &ov.branches {
                        li {
                            a href={ "/context" (html::query(&[("branch", &b.name)])) }
                                aria-current=[(b.name == branch).then_some("page")]
                            { (b.name) }
                            @if b.current { " (current)" }
                            " "
                            span class="muted" {
                                (b.commits) " commits, " (b.uncommitted) " uncommitted"
                            }
                            br;
                            small { (b.summary) }
                        }
                    }
                }
            }
            section {
                h2 { "Roadmap (" (ov.current) ")" }
                pre class="doc" { (ov.roadmap) }
            }
        }
    }
}

/// A window of the branch's commits, newest first, from `coff`; `loff` keeps the step log's
/// window in the pager's links.
fn commit_timeline(
    env: &mut lore::ops::Env<'_>,
    branch: &str,
    coff: usize,
    loff: usize,
) -> Result<Markup, lore::Error> {
    let commits = run_op(
        env,
        CtxShow {
            branch: Some(branch.to_string()),
            window: Some(COMMIT_WINDOW),
            offset: coff,
            ..CtxShow::default()
        },
    )?;
    Ok(html! {
        h2 { "Commits of " (branch) }
        @if let View::Branch(v) = &commits.view {
            p class="muted" { "purpose: " (v.meta.purpose) }
            ol class="timeline" id="commits" {
                @for c in &v.entries {
                    @let e = &c.entry;
                    li {
                        code title=(c.commit) { (short(&c.commit)) }
                        " #" (e.seq) " " (html::time(&e.time)) " "
                        strong { (e.kind.as_str()) }
                        @if let Some(m) = &e.merged { " of " (m) }
                        br;
                        (e.contribution)
                        br;
                        small class="muted" { "summary: " (e.summary) }
                    }
                }
            }
            (pager(branch, "coff", coff, COMMIT_WINDOW, v.total, ("loff", loff)))
        }
    })
}

/// A window of the branch's step log, newest first, from `loff`; `coff` keeps the commit
/// timeline's window in the pager's links.
fn step_log(
    env: &mut lore::ops::Env<'_>,
    branch: &str,
    loff: usize,
    coff: usize,
) -> Result<Markup, lore::Error> {
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
    let View::Log(v) = &log.view else {
        return Ok(html! { h2 { "Step log" } });
    };
    if v.total == 0 {
        return Ok(html! {
            h2 { "Step log" }
            p class="muted" {
                "No steps logged. Agents log them with " code { "ctx_log" }
                ", hooks with each tool call."
            }
        });
    }
    Ok(html! {
        h2 { "Step log" }
        table class="steps" {
            thead { tr { th { "#" } th { "when" } th { "what" } th { "committed" } } }
            tbody {
                @for (n, s) in &v.steps {
                    tr {
                        td { (n) }
                        td { (html::time(&s.step.time)) }
                        td { (step_what(&s.step)) }
                        td { (if s.committed { "yes" } else { "no" }) }
                    }
                }
            }
        }
        (pager(branch, "loff", loff, LOG_WINDOW, v.total, ("coff", coff)))
    })
}

/// A step's tool, text, arguments and result, those it has, on one line.
fn step_what(step: &Step) -> Markup {
    let parts = [
        step.tool.as_deref().map(|t| html! { strong { (t) } }),
        step.text.as_deref().map(|t| html! { (t) }),
        step.arguments.as_deref().map(|a| html! { code { (a) } }),
        step.result.as_deref().map(|r| html! { "→ " (r) }),
    ];
    html! {
        @for (i, part) in parts.into_iter().flatten().enumerate() {
            @if i > 0 { " " }
            (part)
        }
    }
}

/// The branch's metadata as YAML.
fn metadata_section(env: &mut lore::ops::Env<'_>, branch: &str) -> Result<Markup, lore::Error> {
    let metadata = run_op(
        env,
        CtxMetadataGet {
            segment: None,
            branch: Some(branch.to_string()),
        },
    )?;
    Ok(html! {
        h2 { "Metadata" }
        pre class="doc" id="metadata" { (metadata.yaml) }
    })
}

/// The form that picks a branch to merge `branch` into and, once one is picked, what the merge
/// would do.
fn merge_preview_section(
    env: &mut lore::ops::Env<'_>,
    ctx: &PageCtx,
    ov: &Overview,
    branch: &str,
) -> Result<Markup, lore::Error> {
    let others: Vec<(String, String)> = ov
        .branches
        .iter()
        .filter(|b| b.name != branch)
        .map(|b| (b.name.clone(), b.name.clone()))
        .collect();
    if others.is_empty() {
        return Ok(html! {
            h2 { "Merge preview" }
            p class="muted" {
                "Only one branch: make another with " code { "lore ctx branch NAME" }
                " to merge."
            }
        });
    }
    let into = ctx.param("into").unwrap_or("");
    let outcome = if into.is_empty() {
        None
    } else {
        Some(run_op(
            env,
            CtxMergePreview {
                branch: branch.to_string(),
                into: Some(into.to_string()),
            },
        )?)
    };
    Ok(html! {
        h2 { "Merge preview" }
        form method="get" action="/context" class="inline" {
            input type="hidden" name="branch" value=(branch);
            "Merge " (branch) " " (html::select("into", "into", &others, into))
            button type="submit" { "Preview" }
        }
        @if let Some(p) = &outcome { (merge_outcome(p)) }
    })
}

/// What merging would do: nothing, or the steps that would come over, the conflicts and the
/// roadmap after it; then the command that merges for real.
fn merge_outcome(p: &MergePreview) -> Markup {
    html! {
        @if p.up_to_date {
            p class="ok" { (p.into) " already has everything " (p.from) " has." }
        } @else {
            p {
                (p.incoming_steps) " steps would come over"
                @if p.uncommitted_left > 0 {
                    " (" (p.uncommitted_left) " uncommitted would not)"
                }
                "; " (p.conflicts.len()) " conflicts."
            }
            @if !p.shared_history {
                p class="warning" {
                    "The branches share no history: every difference conflicts."
                }
            }
            @for c in &p.conflicts { pre class="conflict" { (c) } }
            h3 { "Roadmap after the merge" }
            pre class="doc" { (p.roadmap) }
        }
        p class="muted" {
            "Merge for real with " code { "lore ctx merge " (p.from) " --into " (p.into) } "."
        }
    }
}

/// `/context`.
pub async fn page(
    State(app): State<Arc<App>>,
    Query(query): Query<Vec<(String, String)>>,
) -> Response {
    app.page(query, |_, env, ctx| render(env, ctx)).await
}
