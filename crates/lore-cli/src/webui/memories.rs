//! The Memories pages: search (hybrid recall with its explanation) and filters over the list,
//! with provenance; one memory with its versions from git as a timeline, the line diff between
//! two of them, its citations against the current code, its relations; edit, resolve, archive,
//! forget.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Instant;

use axum::extract::{Path, Query, State};
use axum::response::Response;
use lore::Memory;
use lore::index::Hit;
use lore::ops::browse::{HistoryDiff, MemoryDiff};
use lore::ops::memory::{Filter, Forget, History, Level, List, Recall, Show, Update};
use lore::ops::store::{Namespaces, Verify};
use maud::{Markup, html};

use super::html::{self, Page, Section, enc, post_form, short};
use super::{App, Form, PageCtx, run_op};

type Pairs = Query<Vec<(String, String)>>;

fn provenance(m: &Memory) -> Markup {
    let who = [
        m.author.as_deref().map(|a| ("by ", a)),
        m.agent.as_deref().map(|a| ("agent ", a)),
        m.session.as_deref().map(|s| ("session ", s)),
    ];
    html! {
        span class="ns" { (m.namespace.as_str()) } " "
        span class={ "status s-" (m.status.as_str()) } { (m.status.as_str()) } " "
        @if let Some(key) = &m.key { span class="key" { "key " (key.as_str()) } " " }
        @for (label, name) in who.into_iter().flatten() { span { (label) (name) } " " }
        span { "updated " (html::time(&m.updated)) }
        @for t in &m.tags { " " span class="tag" { "#" (t) } }
    }
}

fn memory_link(m: &Memory) -> Markup {
    html! { a href={ "/memory/" (enc(m.id.as_str())) } { (m.summary) } }
}

fn explain(hit: &Hit) -> Markup {
    let Some(e) = &hit.explain else {
        return html! {};
    };
    let part = |name: &str, value: Option<String>| {
        html! {
            dt { (name) }
            @match value {
                Some(v) => dd { (v) },
                None => dd class="muted" { "no match" },
            }
        }
    };
    html! {
        dl class="explain" aria-label="Why this hit" {
            (part("BM25", e.bm25.map(|b| format!("{b:.3} (rank {})", e.bm25_rank.unwrap_or(0)))))
            (part(
                "vector",
                e.cosine.map(|c| format!("cos {c:.3} (rank {})", e.vector_rank.unwrap_or(0))),
            ))
            dt { "fused" } dd { (format!("{:.3}", e.fused)) }
            dt { "recency" } dd { (format!("×{:.3}", e.recency)) }
            dt { "namespace" } dd { (format!("×{:.2}", e.namespace)) }
            dt { "status" } dd { (format!("×{:.2}", e.status)) }
        }
    }
}

/// The filter the page's query string asks for; a status that is not one is an error.
fn filter_of(ctx: &PageCtx) -> Result<Filter, lore::Error> {
    Ok(Filter {
        namespace: ctx.param("namespace").map(str::to_string),
        tag: ctx.param("tag").map(str::to_string),
        status: match ctx.param("status").filter(|s| !s.is_empty()) {
            Some(s) => vec![s.parse()?],
            None => Vec::new(),
        },
        since: None,
        until: None,
    })
}

fn search_form(app_env: &mut lore::ops::Env<'_>, ctx: &PageCtx) -> Result<Markup, lore::Error> {
    let namespaces = run_op(app_env, Namespaces {})?;
    let mut ns_options = vec![(String::new(), "any".to_string())];
    ns_options.extend(
        namespaces
            .namespaces
            .into_iter()
            .map(|n| (n.name.clone(), n.name)),
    );
    let mut st_options = vec![(String::new(), "any".to_string())];
    st_options.extend(
        lore::Status::ALL
            .iter()
            .map(|s| (s.as_str().to_string(), s.as_str().to_string())),
    );
    let param = |name: &str| ctx.param(name).unwrap_or("");
    Ok(html! {
        form method="get" action="/memories" class="search" role="search" {
            label {
                "Search "
                input type="search" name="q" id="q" value=(param("q"))
                    placeholder="what was decided about…" autofocus;
            }
            (html::select("namespace", "Namespace", &ns_options, param("namespace")))
            (html::select("status", "Status", &st_options, param("status")))
            label { "Tag " input type="text" name="tag" value=(param("tag")) size="10"; }
            label {
                input type="checkbox" name="stale" value="1" checked[ctx.param("stale").is_some()];
                " stale citations only"
            }
            button type="submit" { "Search" }
        }
    })
}

fn render_index(
    app: &App,
    env: &mut lore::ops::Env<'_>,
    ctx: &PageCtx,
) -> Result<Page, lore::Error> {
    let form = search_form(env, ctx)?;
    let stale_only = stale_ids(env, ctx)?;
    if let Some(q) = ctx.param("q") {
        let results = search_results(app, env, ctx, q, stale_only.as_ref())?;
        let body = html! { (form) (results) };
        return Ok(Page::new(Section::Memories, format!("Search: {q}"), body));
    }
    let list = memory_list(env, ctx, stale_only.as_ref())?;
    Ok(Page::new(
        Section::Memories,
        "Memories",
        html! { (form) (list) },
    ))
}

/// With "stale citations only" ticked, the ids of the memories whose cited code changed;
/// otherwise `None`, which keeps every memory.
fn stale_ids(
    env: &mut lore::ops::Env<'_>,
    ctx: &PageCtx,
) -> Result<Option<HashSet<String>>, lore::Error> {
    if ctx.param("stale").is_none() {
        return Ok(None);
    }
    Ok(Some(
        run_op(env, Verify {})?
            .stale
            .into_iter()
            .map(|s| s.id)
            .collect(),
    ))
}

/// Whether a memory passes the "stale citations only" filter.
fn kept(stale_only: Option<&HashSet<String>>, m: &Memory) -> bool {
    stale_only.is_none_or(|s| s.contains(m.id.as_str()))
}

/// The hits of recalling `q` under the page's filters, best first, each with why it ranked.
fn search_results(
    app: &App,
    env: &mut lore::ops::Env<'_>,
    ctx: &PageCtx,
    q: &str,
    stale_only: Option<&HashSet<String>>,
) -> Result<Markup, lore::Error> {
    let started = Instant::now();
    let recalled = run_op(
        env,
        Recall {
            query: q.to_string(),
            filter: filter_of(ctx)?,
            limit: Some(20),
            explain: true,
            ..Recall::default()
        },
    )?;
    app.record_recall(started.elapsed().as_secs_f64() * 1000.0);
    let hits: Vec<&Hit> = recalled
        .hits
        .iter()
        .filter(|h| kept(stale_only, &h.memory))
        .collect();
    if hits.is_empty() {
        return Ok(html::empty_state(
            "Nothing recalled for this search.",
            html! {
                "Try other words, or clear the filters. Memories are saved with "
                code { "lore remember" } " or by an agent's " code { "remember" } " tool."
            },
        ));
    }
    Ok(html! {
        p class="muted" id="result-count" {
            (hits.len()) " hits, best first. " (recalled.notice)
        }
        ol class="hits" {
            @for h in hits { (hit_item(h)) }
        }
    })
}

/// One hit: its link, provenance, warnings, score and explanation.
fn hit_item(h: &Hit) -> Markup {
    // A memory of another scope lives in another store: labelled, and not linked to this
    // store's pages.
    let other = h.project.is_some() || !matches!(h.scope.as_str(), "" | "project");
    let label = match &h.project {
        Some(p) => format!("project {p}"),
        None if h.scope.is_empty() => "project".to_string(),
        None => h.scope.clone(),
    };
    html! {
        li class="hit" {
            h2 {
                @if other { (h.memory.summary) } @else { (memory_link(&h.memory)) }
            }
            p class="prov" { span class="scope" { (label) } " " (provenance(&h.memory)) }
            @if let Some(s) = &h.stale { p class="warning" { "stale: " (s) } }
            @if let Some(c) = &h.contradicted { p class="warning" { "contradicted: " (c) } }
            p class="score" { "score " (format!("{:.3}", h.score)) }
            (explain(h))
        }
    }
}

/// The memories under the page's filters, newest first.
fn memory_list(
    env: &mut lore::ops::Env<'_>,
    ctx: &PageCtx,
    stale_only: Option<&HashSet<String>>,
) -> Result<Markup, lore::Error> {
    let listed = run_op(
        env,
        List {
            filter: filter_of(ctx)?,
            sort: None,
            limit: Some(if stale_only.is_some() { 0 } else { 50 }),
        },
    )?;
    let memories: Vec<&Memory> = listed
        .memories
        .iter()
        .filter(|m| kept(stale_only, m))
        .collect();
    if memories.is_empty() {
        return Ok(html::empty_state(
            "No memories here yet.",
            html! {
                "Save one with " code { "lore remember -n decisions \"…\"" }
                ", let an agent call the " code { "remember" }
                " tool, or accept a suggestion in the " a href="/review" { "review queue" }
                ". With filters set, clear them."
            },
        ));
    }
    Ok(html! {
        p class="muted" { (memories.len()) " memories, newest first." }
        ul class="memories" {
            @for m in memories.iter().take(200) {
                li { h2 { (memory_link(m)) } p class="prov" { (provenance(m)) } }
            }
        }
    })
}

/// `/` and `/memories`: search and list.
pub async fn index(State(app): State<Arc<App>>, Query(query): Pairs) -> Response {
    app.page(query, render_index).await
}

/// What a timeline row says a commit did: its subject, or for a merge that made a version of
/// its own, what it brought to this clone's version.
fn version_label(v: &lore::MemoryVersion) -> Markup {
    let Some(m) = &v.merge else {
        return html! { span class="subject" { (v.subject) } };
    };
    html! {
        span class="subject merge" title=(v.subject) {
            "Merge"
            @if let Some(r) = &m.remote { " from " (r) }
            " brought: "
            @if m.fields.is_empty() { "only its times" } @else { (m.fields.join(", ")) }
        }
    }
}

fn timeline(id: &str, versions: &[lore::MemoryVersion], to: &str) -> Markup {
    // The version shown is marked once, even where one commit holds two entries (a path move).
    let shown = versions
        .iter()
        .position(|v| v.commit == to && v.memory.is_some())
        .or_else(|| versions.iter().position(|v| v.commit == to));
    html! {
        form method="get" class="timeline-form" {
            ol class="timeline" id="timeline" {
                @for i in 0..versions.len() {
                    (version_row(id, versions, i, Some(i) == shown))
                }
            }
            button type="submit" { "Compare the chosen versions" }
        }
    }
}

/// The timeline's row for `versions[i]`: the radio buttons that choose it for the diff, the
/// commit, what it did, and the link to its diff with the version before.
fn version_row(id: &str, versions: &[lore::MemoryVersion], i: usize, current: bool) -> Markup {
    let v = &versions[i];
    // A commit that removed the memory's file forgot it, unless it wrote it at another path
    // (a move).
    let moved = versions
        .iter()
        .any(|o| o.commit == v.commit && o.memory.is_some());
    // A merge's diff starts at the version this clone had before it: what it brought.
    let before = match &v.merge {
        Some(m) => m.from.as_deref(),
        None => versions.get(i + 1).map(|p| p.commit.as_str()),
    };
    html! {
        li class="version" data-commit=(v.commit) aria-current=[current.then_some("true")] {
            label { input type="radio" name="from" value=(v.commit); " from" } " "
            label { input type="radio" name="to" value=(v.commit); " to" } " "
            code title=(v.commit) { (short(&v.commit)) } " "
            (html::time(&v.time)) " " (version_label(v)) " "
            span class="muted" { (v.committer) }
            br;
            @match &v.memory {
                Some(m) => (m.summary),
                None if moved => em { "moved from " (v.path) },
                None => em { "forgotten" },
            }
            " · "
            @match before {
                Some(p) => a href={
                    "/memory/" (enc(id)) (html::query(&[("from", p), ("to", &v.commit)])) "#diff"
                } { "diff with the version before" },
                None => "first version",
            }
        }
    }
}

fn render_memory(
    id: String,
    env: &mut lore::ops::Env<'_>,
    ctx: &PageCtx,
) -> Result<Page, lore::Error> {
    let shown = run_op(
        env,
        Show {
            memory: id.clone(),
            level: Level::Full,
            ..Show::default()
        },
    )?;
    let m = shown.memory;
    let id = m.id.as_str().to_string();
    let history = run_op(env, History { memory: id.clone() })?;
    let diff = run_op(
        env,
        HistoryDiff {
            memory: id.clone(),
            from: ctx.param("from").map(str::to_string),
            to: ctx.param("to").map(str::to_string),
        },
    )?;
    let body = html! {
        (done_notice(ctx))
        p class="prov" { (provenance(&m)) }
        p class="muted" {
            "id " code { (id) } " · path " code { (shown.path) }
            @if let Some(c) = m.confidence { " · confidence " (format!("{c:.2}")) }
        }
        pre class="body" id="memory-body" { (m.body) }
        (relations_section(&m))
        (citations_section(env, &m)?)
        (versions_section(&id, &history.versions, &diff))
        (actions_section(&id, &m, ctx))
    };
    Ok(Page::new(Section::Memories, m.summary.clone(), body))
}

/// The notice after an action redirected back here (`?done=…`), else nothing.
fn done_notice(ctx: &PageCtx) -> Markup {
    let Some(done) = ctx.param("done") else {
        return html! {};
    };
    let said = match done {
        "updated" => "Saved: a new version was committed.",
        "status" => "Status changed: a new version was committed.",
        _ => "Done.",
    };
    html! { p class="notice" role="status" { (said) } }
}

/// The memories this one supersedes, is superseded by, or relates to.
fn relations_section(m: &Memory) -> Markup {
    let relations: Vec<(&str, &str)> = [
        ("supersedes", m.supersedes.as_ref()),
        ("superseded by", m.superseded_by.as_ref()),
    ]
    .into_iter()
    .filter_map(|(label, other)| other.map(|o| (label, o.as_str())))
    .chain(m.relates_to.iter().map(|r| ("relates to", r.as_str())))
    .collect();
    html! {
        h2 { "Relations" }
        @if relations.is_empty() {
            p class="muted" {
                "None. Relate memories with " code { "lore update ID --relates-to OTHER" } "."
            }
        } @else {
            ul class="relations" {
                @for (label, other) in relations {
                    li { (label) " " a href={ "/memory/" (enc(other)) } { (other) } }
                }
            }
        }
    }
}

/// The memory's citations, checked against the current code.
fn citations_section(env: &mut lore::ops::Env<'_>, m: &Memory) -> Result<Markup, lore::Error> {
    if m.citations.is_empty() {
        return Ok(html! {
            h2 { "Citations" }
            p class="muted" {
                "None. Cite code with " code { "lore update ID --cite path:lines" } "."
            }
        });
    }
    let report = run_op(env, Verify {})?;
    let reasons: Vec<String> = report
        .stale
        .into_iter()
        .filter(|s| s.id == m.id.as_str())
        .flat_map(|s| s.reasons)
        .collect();
    Ok(html! {
        h2 { "Citations" }
        ul class="citations" {
            @for c in &m.citations {
                li {
                    code { (c.path) @if let Some(l) = c.lines { ":" (l) } } " "
                    span class="muted" { "blob " (short(c.blob.as_deref().unwrap_or("unpinned"))) }
                }
            }
        }
        @if reasons.is_empty() {
            p class="ok" { "The cited code is as it was when cited." }
        }
        @for r in &reasons { p class="warning" { "changed since cited: " (r) } }
    })
}

/// The timeline of the memory's versions and the diff between the two chosen.
fn versions_section(id: &str, versions: &[lore::MemoryVersion], diff: &MemoryDiff) -> Markup {
    let from = diff.from.as_ref().map(|f| short(&f.commit));
    html! {
        h2 { "Versions" }
        (timeline(id, versions, &diff.to.commit))
        h2 id="diff" {
            "Diff " (from.unwrap_or("(nothing)")) " → " (short(&diff.to.commit))
        }
        (html::diff_table(&diff.lines))
    }
}

/// The buttons that resolve, archive, reactivate or forget the memory, and the edit form.
fn actions_section(id: &str, m: &Memory, ctx: &PageCtx) -> Markup {
    let action = |what: &str| format!("/memory/{}/{what}", enc(id));
    let edit = post_form(
        &action("edit"),
        &ctx.csrf,
        "edit",
        html! {
            label {
                "Summary "
                input type="text" name="summary" id="edit-summary" maxlength="100"
                    value=(m.summary) required;
            }
            label { "Body " textarea name="body" id="edit-body" rows="8" { (m.body) } }
            label { "Add tags " input type="text" name="add_tags" placeholder="a,b"; }
            label { "Remove tags " input type="text" name="remove_tags" placeholder="a,b"; }
            button type="submit" id="edit-save" { "Save a new version" }
        },
    );
    let status_button = |status: &str, label: &str| {
        post_form(
            &action("status"),
            &ctx.csrf,
            "inline",
            html! {
                input type="hidden" name="status" value=(status);
                button type="submit" { (label) }
            },
        )
    };
    html! {
        h2 { "Actions" }
        div class="actions" {
            (status_button("resolved", "Resolve"))
            (status_button("archived", "Archive"))
            (status_button("active", "Make active again"))
            form method="post" action=(action("forget")) class="inline"
                data-confirm="Forget this memory? It leaves recall; its history stays in git."
            {
                input type="hidden" name="csrf" value=(ctx.csrf);
                button type="submit" class="danger" { "Forget" }
            }
        }
        h3 { "Edit" }
        (edit)
    }
}

/// `/memory/{id}`: one memory.
pub async fn page(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    Query(query): Pairs,
) -> Response {
    app.page(query, move |_, env, ctx| render_memory(id, env, ctx))
        .await
}

fn split(value: Option<String>) -> Vec<String> {
    value.map(|v| vec![v]).unwrap_or_default()
}

/// POST `/memory/{id}/edit`: a new version.
pub async fn edit(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    axum::Form(form): axum::Form<Vec<(String, String)>>,
) -> Response {
    app.act(form, move |env, f: &Form| {
        let written = run_op(
            env,
            Update {
                memory: id,
                summary: f.get("summary"),
                body: f.raw("body"),
                add_tags: split(f.get("add_tags")),
                remove_tags: split(f.get("remove_tags")),
                ..Update::default()
            },
        )?;
        Ok(format!(
            "/memory/{}?done=updated",
            enc(written.memory.id.as_str())
        ))
    })
    .await
}

/// POST `/memory/{id}/status`: resolve, archive, or make active again.
pub async fn set_status(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    axum::Form(form): axum::Form<Vec<(String, String)>>,
) -> Response {
    app.act(form, move |env, f: &Form| {
        let written = run_op(
            env,
            Update {
                memory: id,
                status: f.get("status"),
                ..Update::default()
            },
        )?;
        Ok(format!(
            "/memory/{}?done=status",
            enc(written.memory.id.as_str())
        ))
    })
    .await
}

/// POST `/memory/{id}/forget`.
pub async fn forget(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    axum::Form(form): axum::Form<Vec<(String, String)>>,
) -> Response {
    app.act(form, move |env, _| {
        run_op(
            env,
            Forget {
                memory: id,
                purge: false,
            },
        )?;
        Ok("/memories".to_string())
    })
    .await
}
