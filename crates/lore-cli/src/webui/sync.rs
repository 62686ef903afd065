//! The Sync page: each remote's standing (ahead, behind, parked refs, as of its last fetch) and
//! the open contradictions, each side by side with the base, adjudicated through `resolve`.

use std::sync::Arc;

use axum::extract::{Query, State};
use axum::response::Response;
use lore::ops::store::Status;
use lore::ops::sync::{Conflicts, Keep, Resolve};
use lore::{Conflict, ConflictVersion, StoreStatus};
use maud::{Markup, html};

use super::html::{self, Page, Section, enc, post_form};
use super::{App, Form, PageCtx, run_op};

/// One version of a contested memory, named by who wrote it and the commit (the memory's id is
/// the card's, not repeated per column); a version that forgot the memory reads as a forget.
fn side(title: &str, v: Option<&ConflictVersion>) -> Markup {
    let Some(v) = v else {
        return html! {
            section class="side" { h4 { (title) } p class="muted" { "none" } }
        };
    };
    let who = html! {
        p class="muted" {
            @let parts = [
                v.author.as_deref().map(|a| html! { "by " (a) }),
                v.agent.as_deref().map(|a| html! { "agent " (a) }),
                v.date.as_deref().map(|d| html! { (d) }),
                v.commit.as_deref().map(|c| html! { code { (html::short(c)) } }),
            ];
            @for (i, part) in parts.into_iter().flatten().enumerate() {
                @if i > 0 { " · " }
                (part)
            }
        }
    };
    let summary = v.summary.as_deref().unwrap_or("");
    if v.forgotten {
        return html! {
            section class="side forgot" {
                h4 { (title) }
                (who)
                p { strong { "Forgot the memory" } " (then: " s { (summary) } ")" }
            }
        };
    }
    html! {
        section class="side" {
            h4 { (title) }
            (who)
            p { strong { (summary) } }
            // A memory without a body shows none, not an empty box.
            @if let Some(body) = v.body.as_deref().filter(|b| !b.trim().is_empty()) {
                pre class="doc" { (body) }
            }
        }
    }
}

/// Who wrote a version (`by Name <email>`), for a button that keeps it.
fn by(v: &ConflictVersion) -> Option<String> {
    v.author.as_deref().map(|a| format!("by {a}"))
}

fn render(env: &mut lore::ops::Env<'_>, ctx: &PageCtx) -> Result<Page, lore::Error> {
    let status = run_op(env, Status {})?;
    let conflicts = run_op(env, Conflicts {})?;
    let body = html! {
        @if ctx.param("done") == Some("resolved") {
            p class="notice" role="status" { "Resolved: the decision was committed." }
        }
        (remotes(&status))
        h2 { "Open contradictions" }
        @if conflicts.conflicts.is_empty() {
            (html::empty_state(
                "No open contradictions.",
                html! {
                    "When two clones change one memory in contradicting ways, sync records both \
                     here to settle side by side."
                },
            ))
        }
        @for c in &conflicts.conflicts { (conflict_card(c, &ctx.csrf)) }
    };
    Ok(Page::new(Section::Sync, "Sync", body))
}

/// Each remote: fetched or not, how far ahead and behind, its parked refs.
fn remotes(status: &StoreStatus) -> Markup {
    html! {
        h2 { "Remotes" }
        @if status.remotes.is_empty() {
            (html::empty_state(
                "No remotes.",
                html! {
                    "Add one with " code { "git remote add origin URL" } ", then "
                    code { "lore sync --setup" } " and " code { "lore sync" }
                    " to carry memory both ways."
                },
            ))
        } @else {
            table class="remotes" {
                thead {
                    tr {
                        th { "remote" } th { "fetched" } th { "ahead (to push)" }
                        th { "behind (to merge)" } th { "parked" }
                    }
                }
                tbody {
                    @for r in &status.remotes {
                        tr {
                            td { (r.remote) }
                            td { (if r.fetched { "yes" } else { "never" }) }
                            td { (r.ahead) }
                            td { (r.behind) }
                            td { (r.parked.join(", ")) }
                        }
                    }
                }
            }
            p class="muted" {
                "As of each remote's last fetch: run " code { "lore sync" } " to bring them level."
            }
        }
    }
}

/// One contradiction: what it is, its versions side by side, the buttons that settle it and
/// the form that settles it with new text.
fn conflict_card(c: &Conflict, csrf: &str) -> Markup {
    let id = c
        .live
        .as_ref()
        .or(c.others.first())
        .map(|v| v.id.as_str())
        .unwrap_or("");
    let live = c.live.as_ref();
    html! {
        article class="conflict-card" {
            h3 { (c.name) }
            p {
                (c.description) " "
                span class="muted" {
                    "found " (c.detected) " · memory "
                    a href={ "/memory/" (enc(id)) } { (id) }
                }
            }
            div class="sides" {
                (side("In force", c.live.as_ref()))
                @for (i, o) in c.others.iter().enumerate() {
                    (side(&format!("Other version {}", i + 1), Some(o)))
                }
                (side("Base", c.base.as_ref()))
            }
            div class="actions" { (keep_buttons(c, csrf)) }
            (post_form("/sync/resolve", csrf, "edit", html! {
                input type="hidden" name="conflict" value=(c.name);
                input type="hidden" name="keep" value="edit";
                label {
                    "Summary "
                    input type="text" name="summary" maxlength="100"
                        value=(live.and_then(|l| l.summary.as_deref()).unwrap_or(""));
                }
                label {
                    "Body "
                    textarea name="body" rows="4" {
                        (live.and_then(|l| l.body.as_deref()).unwrap_or(""))
                    }
                }
                button type="submit" { "Resolve with this text" }
            }))
        }
    }
}

/// The buttons that keep one side: the version in force, each other version, or both.
fn keep_buttons(c: &Conflict, csrf: &str) -> Markup {
    let button = |keep: &str, label: &str, id: Option<&str>| {
        post_form(
            "/sync/resolve",
            csrf,
            "inline",
            html! {
                input type="hidden" name="conflict" value=(c.name);
                input type="hidden" name="keep" value=(keep);
                @if let Some(id) = id { input type="hidden" name="id" value=(id); }
                button type="submit" { (label) }
            },
        )
    };
    let in_force = c
        .live
        .as_ref()
        .and_then(by)
        .map(|b| format!(" ({b})"))
        .unwrap_or_default();
    // A resolve names a version by its memory id; of several versions of one id it takes the
    // newest, and the button says so.
    let mut offered: Vec<&str> = Vec::new();
    let mut others = Vec::new();
    for (i, o) in c.others.iter().enumerate() {
        if offered.contains(&o.id.as_str()) {
            continue;
        }
        offered.push(o.id.as_str());
        let shared = c.others.iter().filter(|x| x.id == o.id).count() > 1;
        let label = if shared {
            "Take the newest other version".to_string()
        } else {
            let n = i + 1;
            match (o.forgotten, by(o)) {
                (true, Some(b)) => format!("Accept the forget (other version {n}, {b})"),
                (true, None) => format!("Accept the forget (other version {n})"),
                (false, Some(b)) => format!("Take other version {n} ({b})"),
                (false, None) => format!("Take other version {n}"),
            }
        };
        others.push(button("theirs", &label, Some(o.id.as_str())));
    }
    html! {
        (button("ours", &format!("Keep the version in force{in_force}"), None))
        @for b in others { (b) }
        @if let Some(label) = keep_both_label(c) { (button("both", label, None)) }
    }
}

/// What keeping both does, when there is a version in force and another with text: keeping
/// both keeps the text of every other version that has one (a forget has none), appended to the
/// version in force when it is the same memory, else kept as a memory of its own beside it.
fn keep_both_label(c: &Conflict) -> Option<&'static str> {
    let live_id = c.live.as_ref().map(|l| &l.id);
    let kept: Vec<&ConflictVersion> = c.others.iter().filter(|o| !o.forgotten).collect();
    if c.live.is_none() || kept.is_empty() {
        return None;
    }
    Some(if kept.iter().all(|o| Some(&o.id) == live_id) {
        "Keep both: append the other text to the version in force"
    } else if kept.iter().all(|o| Some(&o.id) != live_id) {
        "Keep both: keep the other version as a memory of its own beside it"
    } else {
        "Keep both: each other text appended to the version in force or kept beside it"
    })
}

/// `/sync`.
pub async fn page(
    State(app): State<Arc<App>>,
    Query(query): Query<Vec<(String, String)>>,
) -> Response {
    app.page(query, |_, env, ctx| render(env, ctx)).await
}

/// POST `/sync/resolve`: settle one contradiction.
pub async fn resolve(
    State(app): State<Arc<App>>,
    axum::Form(form): axum::Form<Vec<(String, String)>>,
) -> Response {
    app.act(form, |env, f: &Form| {
        let keep = match f.get("keep").as_deref() {
            Some("ours") => Keep::Ours,
            Some("theirs") => Keep::Theirs,
            Some("both") => Keep::Both,
            Some("edit") => Keep::Edit,
            other => {
                return Err(lore::Error::Invalid {
                    what: "keep",
                    value: other.unwrap_or("").to_string(),
                    reason: "expected ours, theirs, both or edit".into(),
                });
            }
        };
        let edit = keep == Keep::Edit;
        run_op(
            env,
            Resolve {
                conflict: f.get("conflict").unwrap_or_default(),
                keep,
                id: f.get("id"),
                summary: if edit { f.get("summary") } else { None },
                body: if edit { f.get("body") } else { None },
            },
        )?;
        Ok("/sync?done=resolved".into())
    })
    .await
}
