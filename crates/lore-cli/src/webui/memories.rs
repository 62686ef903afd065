//! The Memories pages: search (hybrid recall with its explanation) and filters over the list,
//! with provenance; one memory with its versions from git as a timeline, the line diff between
//! two of them, its citations against the current code, its relations; edit, resolve, archive,
//! forget.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Instant;

use axum::extract::{Path, Query, State};
use axum::response::Response;
use lore::Memory;
use lore::index::Hit;
use lore::ops::browse::{HistoryDiff, MemoryDiff};
use lore::ops::memory::{Filter, Forget, History, Level, List, Recall, Show, Update};
use lore::ops::store::{Namespaces, Verify};

use super::html::{self, Page, Section, enc, esc, post_form, short};
use super::{App, Form, PageCtx, run_op};

type Pairs = Query<Vec<(String, String)>>;

fn provenance(m: &Memory) -> String {
    let mut out = format!(
        "<span class=\"ns\">{}</span> <span class=\"status s-{}\">{}</span> ",
        esc(m.namespace.as_str()),
        esc(m.status.as_str()),
        esc(m.status.as_str())
    );
    if let Some(key) = &m.key {
        let _ = write!(out, "<span class=\"key\">key {}</span> ", esc(key.as_str()));
    }
    let who = [
        m.author.as_deref().map(|a| format!("by {}", esc(a))),
        m.agent.as_deref().map(|a| format!("agent {}", esc(a))),
        m.session.as_deref().map(|s| format!("session {}", esc(s))),
    ];
    for part in who.into_iter().flatten() {
        let _ = write!(out, "<span>{part}</span> ");
    }
    let _ = write!(out, "<span>updated {}</span>", html::time(&m.updated));
    for t in &m.tags {
        let _ = write!(out, " <span class=\"tag\">#{}</span>", esc(t));
    }
    out
}

fn memory_link(m: &Memory) -> String {
    format!(
        "<a href=\"/memory/{}\">{}</a>",
        enc(m.id.as_str()),
        esc(&m.summary)
    )
}

fn explain(hit: &Hit) -> String {
    let Some(e) = &hit.explain else {
        return String::new();
    };
    let part = |name: &str, value: Option<String>| match value {
        Some(v) => format!("<dt>{name}</dt><dd>{}</dd>", esc(&v)),
        None => format!("<dt>{name}</dt><dd class=\"muted\">no match</dd>"),
    };
    format!(
        "<dl class=\"explain\" aria-label=\"Why this hit\">{}{}<dt>fused</dt><dd>{:.3}</dd>\
         <dt>recency</dt><dd>×{:.3}</dd><dt>namespace</dt><dd>×{:.2}</dd><dt>status</dt>\
         <dd>×{:.2}</dd></dl>",
        part(
            "BM25",
            e.bm25
                .map(|b| format!("{b:.3} (rank {})", e.bm25_rank.unwrap_or(0)))
        ),
        part(
            "vector",
            e.cosine
                .map(|c| format!("cos {c:.3} (rank {})", e.vector_rank.unwrap_or(0)))
        ),
        e.fused,
        e.recency,
        e.namespace,
        e.status
    )
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

fn search_form(app_env: &mut lore::ops::Env<'_>, ctx: &PageCtx) -> Result<String, lore::Error> {
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
    let stale = if ctx.param("stale").is_some() {
        " checked"
    } else {
        ""
    };
    Ok(format!(
        "<form method=\"get\" action=\"/memories\" class=\"search\" role=\"search\">\
         <label>Search <input type=\"search\" name=\"q\" id=\"q\" value=\"{}\" \
         placeholder=\"what was decided about…\" autofocus></label>{}{}\
         <label>Tag <input type=\"text\" name=\"tag\" value=\"{}\" size=\"10\"></label>\
         <label><input type=\"checkbox\" name=\"stale\" value=\"1\"{stale}> stale citations \
         only</label><button type=\"submit\">Search</button></form>",
        esc(ctx.param("q").unwrap_or("")),
        html::select(
            "namespace",
            "Namespace",
            &ns_options,
            ctx.param("namespace").unwrap_or("")
        ),
        html::select(
            "status",
            "Status",
            &st_options,
            ctx.param("status").unwrap_or("")
        ),
        esc(ctx.param("tag").unwrap_or("")),
    ))
}

fn render_index(
    app: &App,
    env: &mut lore::ops::Env<'_>,
    ctx: &PageCtx,
) -> Result<Page, lore::Error> {
    let mut body = search_form(env, ctx)?;
    let stale_only = stale_ids(env, ctx)?;
    if let Some(q) = ctx.param("q") {
        body.push_str(&search_results(app, env, ctx, q, stale_only.as_ref())?);
        return Ok(Page::new(Section::Memories, format!("Search: {q}"), body));
    }
    body.push_str(&memory_list(env, ctx, stale_only.as_ref())?);
    Ok(Page::new(Section::Memories, "Memories", body))
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
) -> Result<String, lore::Error> {
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
            "Try other words, or clear the filters. Memories are saved with \
             <code>lore remember</code> or by an agent's <code>remember</code> tool.",
        ));
    }
    let mut body = format!(
        "<p class=\"muted\" id=\"result-count\">{} hits, best first. {}</p><ol class=\"hits\">",
        hits.len(),
        esc(&recalled.notice)
    );
    for h in hits {
        body.push_str(&hit_item(h));
    }
    body.push_str("</ol>");
    Ok(body)
}

/// One hit: its link, provenance, warnings, score and explanation.
fn hit_item(h: &Hit) -> String {
    let mut flags = String::new();
    if let Some(s) = &h.stale {
        let _ = write!(flags, "<p class=\"warning\">stale: {}</p>", esc(s));
    }
    if let Some(c) = &h.contradicted {
        let _ = write!(flags, "<p class=\"warning\">contradicted: {}</p>", esc(c));
    }
    // A memory of another scope lives in another store: labelled, and not linked to this
    // store's pages.
    let other = h.project.is_some() || !matches!(h.scope.as_str(), "" | "project");
    let title = if other {
        esc(&h.memory.summary)
    } else {
        memory_link(&h.memory)
    };
    let label = match &h.project {
        Some(p) => format!("project {p}"),
        None if h.scope.is_empty() => "project".to_string(),
        None => h.scope.clone(),
    };
    format!(
        "<li class=\"hit\"><h2>{}</h2><p class=\"prov\"><span class=\"scope\">{}</span> {}</p>{flags}\
         <p class=\"score\">score {:.3}</p>{}</li>",
        title,
        esc(&label),
        provenance(&h.memory),
        h.score,
        explain(h)
    )
}

/// The memories under the page's filters, newest first.
fn memory_list(
    env: &mut lore::ops::Env<'_>,
    ctx: &PageCtx,
    stale_only: Option<&HashSet<String>>,
) -> Result<String, lore::Error> {
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
            "Save one with <code>lore remember -n decisions \"…\"</code>, let an agent call \
             the <code>remember</code> tool, or accept a suggestion in the \
             <a href=\"/review\">review queue</a>. With filters set, clear them.",
        ));
    }
    let mut body = format!(
        "<p class=\"muted\">{} memories, newest first.</p><ul class=\"memories\">",
        memories.len()
    );
    for m in memories.iter().take(200) {
        let _ = write!(
            body,
            "<li><h2>{}</h2><p class=\"prov\">{}</p></li>",
            memory_link(m),
            provenance(m)
        );
    }
    body.push_str("</ul>");
    Ok(body)
}

/// `/` and `/memories`: search and list.
pub async fn index(State(app): State<Arc<App>>, Query(query): Pairs) -> Response {
    app.page(query, render_index).await
}

/// What a timeline row says a commit did: its subject, or for a merge that made a version of
/// its own, what it brought to this clone's version.
fn version_label(v: &lore::MemoryVersion) -> String {
    let Some(m) = &v.merge else {
        return format!("<span class=\"subject\">{}</span>", esc(&v.subject));
    };
    let from = m
        .remote
        .as_deref()
        .map(|r| format!(" from {}", esc(r)))
        .unwrap_or_default();
    let what = if m.fields.is_empty() {
        "only its times".to_string()
    } else {
        esc(&m.fields.join(", "))
    };
    format!(
        "<span class=\"subject merge\" title=\"{}\">Merge{from} brought: {what}</span>",
        esc(&v.subject)
    )
}

fn timeline(id: &str, versions: &[lore::MemoryVersion], to: &str) -> String {
    let mut out = String::from(
        "<form method=\"get\" class=\"timeline-form\"><ol class=\"timeline\" id=\"timeline\">",
    );
    // The version shown is marked once, even where one commit holds two entries (a path move).
    let shown = versions
        .iter()
        .position(|v| v.commit == to && v.memory.is_some())
        .or_else(|| versions.iter().position(|v| v.commit == to));
    for (i, v) in versions.iter().enumerate() {
        let current = if Some(i) == shown {
            " aria-current=\"true\""
        } else {
            ""
        };
        // A commit that removed the memory's file forgot it, unless it wrote it at another
        // path (a move).
        let moved = versions
            .iter()
            .any(|o| o.commit == v.commit && o.memory.is_some());
        let what = match &v.memory {
            Some(m) => esc(&m.summary),
            None if moved => format!("<em>moved from {}</em>", esc(&v.path)),
            None => "<em>forgotten</em>".into(),
        };
        // A merge's diff starts at the version this clone had before it: what it brought.
        let before = match &v.merge {
            Some(m) => m.from.as_deref(),
            None => versions.get(i + 1).map(|p| p.commit.as_str()),
        };
        let diff_link = match before {
            Some(p) => format!(
                "<a href=\"/memory/{}{}#diff\">diff with the version before</a>",
                enc(id),
                html::query(&[("from", p), ("to", &v.commit)])
            ),
            None => "first version".into(),
        };
        let _ = write!(
            out,
            "<li class=\"version\" data-commit=\"{commit}\"{current}>\
             <label><input type=\"radio\" name=\"from\" value=\"{commit}\"> from</label> \
             <label><input type=\"radio\" name=\"to\" value=\"{commit}\"> to</label> \
             <code title=\"{commit}\">{short}</code> {time} {label} \
             <span class=\"muted\">{committer}</span><br>{what} · {diff_link}</li>",
            commit = esc(&v.commit),
            short = esc(short(&v.commit)),
            time = html::time(&v.time),
            label = version_label(v),
            committer = esc(&v.committer),
        );
    }
    out.push_str("</ol><button type=\"submit\">Compare the chosen versions</button></form>");
    out
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
    let mut body = done_notice(ctx);
    let _ = write!(
        body,
        "<p class=\"prov\">{}</p><p class=\"muted\">id <code>{}</code> · path <code>{}</code>{}</p>\
         <pre class=\"body\" id=\"memory-body\">{}</pre>",
        provenance(&m),
        esc(&id),
        esc(&shown.path),
        m.confidence
            .map(|c| format!(" · confidence {c:.2}"))
            .unwrap_or_default(),
        esc(&m.body)
    );
    body.push_str(&relations_section(&m));
    body.push_str(&citations_section(env, &m)?);
    body.push_str(&versions_section(&id, &history.versions, &diff));
    body.push_str(&actions_section(&id, &m, ctx));
    Ok(Page::new(Section::Memories, m.summary.clone(), body))
}

/// The notice after an action redirected back here (`?done=…`), else nothing.
fn done_notice(ctx: &PageCtx) -> String {
    let Some(done) = ctx.param("done") else {
        return String::new();
    };
    let said = match done {
        "updated" => "Saved: a new version was committed.",
        "status" => "Status changed: a new version was committed.",
        _ => "Done.",
    };
    format!("<p class=\"notice\" role=\"status\">{said}</p>")
}

/// The memories this one supersedes, is superseded by, or relates to.
fn relations_section(m: &Memory) -> String {
    let mut relations = String::new();
    for (label, other) in [
        ("supersedes", m.supersedes.as_ref()),
        ("superseded by", m.superseded_by.as_ref()),
    ] {
        if let Some(o) = other {
            let _ = write!(
                relations,
                "<li>{label} <a href=\"/memory/{}\">{}</a></li>",
                enc(o.as_str()),
                esc(o.as_str())
            );
        }
    }
    for r in &m.relates_to {
        let _ = write!(
            relations,
            "<li>relates to <a href=\"/memory/{}\">{}</a></li>",
            enc(r.as_str()),
            esc(r.as_str())
        );
    }
    let mut body = String::from("<h2>Relations</h2>");
    if relations.is_empty() {
        body.push_str("<p class=\"muted\">None. Relate memories with <code>lore update ID --relates-to OTHER</code>.</p>");
    } else {
        let _ = write!(body, "<ul class=\"relations\">{relations}</ul>");
    }
    body
}

/// The memory's citations, checked against the current code.
fn citations_section(env: &mut lore::ops::Env<'_>, m: &Memory) -> Result<String, lore::Error> {
    let mut body = String::from("<h2>Citations</h2>");
    if m.citations.is_empty() {
        body.push_str("<p class=\"muted\">None. Cite code with <code>lore update ID --cite path:lines</code>.</p>");
        return Ok(body);
    }
    let report = run_op(env, Verify {})?;
    let reasons: Vec<String> = report
        .stale
        .into_iter()
        .filter(|s| s.id == m.id.as_str())
        .flat_map(|s| s.reasons)
        .collect();
    body.push_str("<ul class=\"citations\">");
    for c in &m.citations {
        let lines = c.lines.map(|l| format!(":{l}")).unwrap_or_default();
        let _ = write!(
            body,
            "<li><code>{}{}</code> <span class=\"muted\">blob {}</span></li>",
            esc(&c.path),
            esc(&lines),
            esc(short(c.blob.as_deref().unwrap_or("unpinned")))
        );
    }
    body.push_str("</ul>");
    if reasons.is_empty() {
        body.push_str("<p class=\"ok\">The cited code is as it was when cited.</p>");
    } else {
        for r in reasons {
            let _ = write!(
                body,
                "<p class=\"warning\">changed since cited: {}</p>",
                esc(&r)
            );
        }
    }
    Ok(body)
}

/// The timeline of the memory's versions and the diff between the two chosen.
fn versions_section(id: &str, versions: &[lore::MemoryVersion], diff: &MemoryDiff) -> String {
    format!(
        "<h2>Versions</h2>{}<h2 id=\"diff\">Diff {} → {}</h2>{}",
        timeline(id, versions, &diff.to.commit),
        esc(diff
            .from
            .as_ref()
            .map(|f| short(&f.commit))
            .unwrap_or("(nothing)")),
        esc(short(&diff.to.commit)),
        html::diff_table(&diff.lines)
    )
}

/// The buttons that resolve, archive, reactivate or forget the memory, and the edit form.
fn actions_section(id: &str, m: &Memory, ctx: &PageCtx) -> String {
    let action = |what: &str| format!("/memory/{}/{what}", enc(id));
    let edit = post_form(
        &action("edit"),
        &ctx.csrf,
        "edit",
        &format!(
            "<label>Summary <input type=\"text\" name=\"summary\" id=\"edit-summary\" \
             maxlength=\"100\" value=\"{}\" required></label>\
             <label>Body <textarea name=\"body\" id=\"edit-body\" rows=\"8\">{}</textarea></label>\
             <label>Add tags <input type=\"text\" name=\"add_tags\" placeholder=\"a,b\"></label>\
             <label>Remove tags <input type=\"text\" name=\"remove_tags\" placeholder=\"a,b\"></label>\
             <button type=\"submit\" id=\"edit-save\">Save a new version</button>",
            esc(&m.summary),
            esc(&m.body)
        ),
    );
    let status_button = |status: &str, label: &str| {
        post_form(
            &action("status"),
            &ctx.csrf,
            "inline",
            &format!(
                "<input type=\"hidden\" name=\"status\" value=\"{status}\">\
                 <button type=\"submit\">{label}</button>"
            ),
        )
    };
    let forget = format!(
        "<form method=\"post\" action=\"{}\" class=\"inline\" data-confirm=\"Forget this \
         memory? It leaves recall; its history stays in git.\"><input type=\"hidden\" \
         name=\"csrf\" value=\"{}\"><button type=\"submit\" class=\"danger\">Forget</button></form>",
        esc(&action("forget")),
        esc(&ctx.csrf)
    );
    format!(
        "<h2>Actions</h2><div class=\"actions\">{}{}{}{forget}</div><h3>Edit</h3>{edit}",
        status_button("resolved", "Resolve"),
        status_button("archived", "Archive"),
        status_button("active", "Make active again"),
    )
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
