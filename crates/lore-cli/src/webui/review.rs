//! The Review queue page: what capture suggested, each with accept (as is or edited), save an
//! edit, or reject.

use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::response::Response;
use lore::ops::review::{ReviewAccept, ReviewChange, ReviewEdit, ReviewList, ReviewReject};
use maud::{Markup, html};

use super::html::{self, Page, Section, enc, post_form};
use super::{App, Form, PageCtx, run_op};

fn render(env: &mut lore::ops::Env<'_>, ctx: &PageCtx) -> Result<Page, lore::Error> {
    let queue = run_op(env, ReviewList {})?;
    let body = html! {
        (done_notice(ctx))
        @if queue.suggestions.is_empty() {
            (html::empty_state(
                "The review queue is empty.",
                html! {
                    "Capture queues what it is not sure of (signals of 0.70–0.95 confidence) \
                     from agent sessions: set up the hooks with " code { "lore setup" }
                    ", and suggestions appear here to accept, edit or reject."
                },
            ))
        } @else {
            p class="muted" { (queue.suggestions.len()) " suggestions, oldest first." }
            ul class="queue" {
                @for s in &queue.suggestions { (suggestion(s, &ctx.csrf)) }
            }
        }
    };
    Ok(Page::new(Section::Review, "Review queue", body))
}

/// The notice after an action redirected back here (`?done=…`), else nothing.
fn done_notice(ctx: &PageCtx) -> Markup {
    html! {
        @match ctx.param("done") {
            Some("accepted") => {
                @let memory = ctx.param("memory").unwrap_or("");
                p class="notice" role="status" {
                    "Accepted: written as memory "
                    a href={ "/memory/" (enc(memory)) } { (memory) } "."
                }
            }
            Some("edited") => p class="notice" role="status" { "Edited; still in the queue." },
            Some("rejected") => p class="notice" role="status" { "Rejected." },
            _ => {}
        }
    }
}

/// One suggestion: what it says and where it came from, the form that accepts it (as is or
/// edited) or saves an edit, and the button that rejects it.
fn suggestion(s: &lore::capture::Suggestion, csrf: &str) -> Markup {
    let action = |what: &str| format!("/review/{}/{what}", enc(&s.id));
    let accept = post_form(
        &action("accept"),
        csrf,
        "suggestion-edit",
        html! {
            label { "Namespace " input type="text" name="namespace" value=(s.signal.namespace); }
            label {
                "Summary "
                input type="text" name="summary" maxlength="100" value=(s.signal.summary);
            }
            label { "Body " textarea name="body" rows="4" { (s.signal.body) } }
            button type="submit" class="accept" { "Accept" }
            button type="submit" formaction=(action("edit")) { "Save edit" }
        },
    );
    let reject = post_form(
        &action("reject"),
        csrf,
        "inline",
        html! { button type="submit" class="danger" { "Reject" } },
    );
    html! {
        li class="suggestion" data-id=(s.id) {
            h2 { (s.signal.summary) }
            p class="prov" {
                span class="ns" { (s.signal.namespace) }
                " confidence " (format!("{:.2}", s.signal.confidence))
                " · queued " (html::time(&s.created))
                @if let Some(a) = &s.agent { " · agent " (a) }
                @if let Some(x) = &s.session { " · session " (x) }
            }
            (accept)
            (reject)
        }
    }
}

/// `/review`.
pub async fn page(
    State(app): State<Arc<App>>,
    Query(query): Query<Vec<(String, String)>>,
) -> Response {
    app.page(query, |_, env, ctx| render(env, ctx)).await
}

fn change(id: String, f: &Form) -> ReviewChange {
    ReviewChange {
        id,
        namespace: f.get("namespace"),
        summary: f.get("summary"),
        body: f.raw("body"),
    }
}

/// POST `/review/{id}/accept`: write it as a memory (with the edits in the form).
pub async fn accept(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    axum::Form(form): axum::Form<Vec<(String, String)>>,
) -> Response {
    app.act(form, move |env, f| {
        let written = run_op(
            env,
            ReviewAccept {
                change: change(id, f),
            },
        )?;
        Ok(format!(
            "/review{}",
            html::query(&[("done", "accepted"), ("memory", written.memory.id.as_str())])
        ))
    })
    .await
}

/// POST `/review/{id}/edit`: keep it queued with the edits.
pub async fn edit(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    axum::Form(form): axum::Form<Vec<(String, String)>>,
) -> Response {
    app.act(form, move |env, f| {
        run_op(
            env,
            ReviewEdit {
                change: change(id, f),
            },
        )?;
        Ok("/review?done=edited".into())
    })
    .await
}

/// POST `/review/{id}/reject`.
pub async fn reject(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    axum::Form(form): axum::Form<Vec<(String, String)>>,
) -> Response {
    app.act(form, move |env, _| {
        run_op(env, ReviewReject { id })?;
        Ok("/review?done=rejected".into())
    })
    .await
}
