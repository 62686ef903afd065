//! The Review queue page: what capture suggested, each with accept (as is or edited), save an
//! edit, or reject.

use std::fmt::Write as _;
use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::response::Response;
use lore::ops::review::{ReviewAccept, ReviewChange, ReviewEdit, ReviewList, ReviewReject};

use super::html::{self, Page, Section, enc, esc, post_form};
use super::{App, Form, PageCtx, run_op};

fn render(env: &mut lore::ops::Env<'_>, ctx: &PageCtx) -> Result<Page, lore::Error> {
    let queue = run_op(env, ReviewList {})?;
    let mut body = String::new();
    match ctx.param("done") {
        Some("accepted") => body.push_str(&format!(
            "<p class=\"notice\" role=\"status\">Accepted: written as memory <a href=\"/memory/{0}\">{1}</a>.</p>",
            enc(ctx.param("memory").unwrap_or("")),
            esc(ctx.param("memory").unwrap_or(""))
        )),
        Some("edited") => body.push_str("<p class=\"notice\" role=\"status\">Edited; still in the queue.</p>"),
        Some("rejected") => body.push_str("<p class=\"notice\" role=\"status\">Rejected.</p>"),
        _ => {}
    }
    if queue.suggestions.is_empty() {
        body.push_str(&html::empty_state(
            "The review queue is empty.",
            "Capture queues what it is not sure of (signals of 0.70–0.95 confidence) from \
             agent sessions: set up the hooks with <code>lore setup</code>, and suggestions \
             appear here to accept, edit or reject.",
        ));
        return Ok(Page::new(Section::Review, "Review queue", body));
    }
    let _ = write!(
        body,
        "<p class=\"muted\">{} suggestions, oldest first.</p><ul class=\"queue\">",
        queue.suggestions.len()
    );
    for s in &queue.suggestions {
        let id = &s.id;
        let action = |what: &str| format!("/review/{}/{what}", enc(id));
        let fields = format!(
            "<label>Namespace <input type=\"text\" name=\"namespace\" value=\"{}\"></label>\
             <label>Summary <input type=\"text\" name=\"summary\" maxlength=\"100\" value=\"{}\"></label>\
             <label>Body <textarea name=\"body\" rows=\"4\">{}</textarea></label>",
            esc(&s.signal.namespace),
            esc(&s.signal.summary),
            esc(&s.signal.body)
        );
        let accept = post_form(
            &action("accept"),
            &ctx.csrf,
            "suggestion-edit",
            &format!(
                "{fields}<button type=\"submit\" class=\"accept\">Accept</button>\
                 <button type=\"submit\" formaction=\"{}\">Save edit</button>",
                esc(&action("edit"))
            ),
        );
        let reject = post_form(
            &action("reject"),
            &ctx.csrf,
            "inline",
            "<button type=\"submit\" class=\"danger\">Reject</button>",
        );
        let _ = write!(
            body,
            "<li class=\"suggestion\" data-id=\"{}\"><h2>{}</h2><p class=\"prov\">\
             <span class=\"ns\">{}</span> confidence {:.2} · queued {}{}{}</p>{accept}{reject}</li>",
            esc(id),
            esc(&s.signal.summary),
            esc(&s.signal.namespace),
            s.signal.confidence,
            html::time(&s.created),
            s.agent
                .as_deref()
                .map(|a| format!(" · agent {}", esc(a)))
                .unwrap_or_default(),
            s.session
                .as_deref()
                .map(|x| format!(" · session {}", esc(x)))
                .unwrap_or_default(),
        );
    }
    body.push_str("</ul>");
    Ok(Page::new(Section::Review, "Review queue", body))
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
