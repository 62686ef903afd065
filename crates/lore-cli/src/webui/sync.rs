//! The Sync page: each remote's standing (ahead, behind, parked refs, as of its last fetch) and
//! the open contradictions, each side by side with the base, adjudicated through `resolve`.

use std::fmt::Write as _;
use std::sync::Arc;

use axum::extract::{Query, State};
use axum::response::Response;
use lore::ConflictVersion;
use lore::ops::store::Status;
use lore::ops::sync::{Conflicts, Keep, Resolve};

use super::html::{self, Page, Section, enc, esc, post_form};
use super::{App, Form, PageCtx, run_op};

/// One version of a contested memory, named by who wrote it and the commit (the memory's id is
/// the card's, not repeated per column); a version that forgot the memory reads as a forget.
fn side(title: &str, v: Option<&ConflictVersion>) -> String {
    let Some(v) = v else {
        return format!(
            "<section class=\"side\"><h4>{}</h4><p class=\"muted\">none</p></section>",
            esc(title)
        );
    };
    let who = [
        v.author.as_deref().map(|a| format!("by {}", esc(a))),
        v.agent.as_deref().map(|a| format!("agent {}", esc(a))),
        v.date.as_deref().map(esc),
        v.commit
            .as_deref()
            .map(|c| format!("<code>{}</code>", esc(html::short(c)))),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join(" · ");
    if v.forgotten {
        return format!(
            "<section class=\"side forgot\"><h4>{}</h4><p class=\"muted\">{who}</p>\
             <p><strong>Forgot the memory</strong> (then: <s>{}</s>)</p></section>",
            esc(title),
            esc(v.summary.as_deref().unwrap_or(""))
        );
    }
    // A memory without a body shows none, not an empty box.
    let body = v
        .body
        .as_deref()
        .filter(|b| !b.trim().is_empty())
        .map(|b| format!("<pre class=\"doc\">{}</pre>", esc(b)))
        .unwrap_or_default();
    format!(
        "<section class=\"side\"><h4>{}</h4><p class=\"muted\">{who}</p><p><strong>{}</strong></p>\
         {body}</section>",
        esc(title),
        esc(v.summary.as_deref().unwrap_or(""))
    )
}

/// Who wrote a version (`by Name <email>`), for a button that keeps it.
fn by(v: &ConflictVersion) -> Option<String> {
    v.author.as_deref().map(|a| format!("by {}", esc(a)))
}

fn render(env: &mut lore::ops::Env<'_>, ctx: &PageCtx) -> Result<Page, lore::Error> {
    let status = run_op(env, Status {})?;
    let conflicts = run_op(env, Conflicts {})?;
    let mut body = String::new();
    if ctx.param("done") == Some("resolved") {
        body.push_str(
            "<p class=\"notice\" role=\"status\">Resolved: the decision was committed.</p>",
        );
    }
    body.push_str("<h2>Remotes</h2>");
    if status.remotes.is_empty() {
        body.push_str(&html::empty_state(
            "No remotes.",
            "Add one with <code>git remote add origin URL</code>, then <code>lore sync \
             --setup</code> and <code>lore sync</code> to carry memory both ways.",
        ));
    } else {
        body.push_str("<table class=\"remotes\"><thead><tr><th>remote</th><th>fetched</th><th>ahead (to push)</th><th>behind (to merge)</th><th>parked</th></tr></thead><tbody>");
        for r in &status.remotes {
            let _ = write!(
                body,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&r.remote),
                if r.fetched { "yes" } else { "never" },
                r.ahead,
                r.behind,
                esc(&r.parked.join(", "))
            );
        }
        body.push_str("</tbody></table><p class=\"muted\">As of each remote's last fetch: run <code>lore sync</code> to bring them level.</p>");
    }
    body.push_str("<h2>Open contradictions</h2>");
    if conflicts.conflicts.is_empty() {
        body.push_str(&html::empty_state(
            "No open contradictions.",
            "When two clones change one memory in contradicting ways, sync records both here \
             to settle side by side.",
        ));
    }
    for c in &conflicts.conflicts {
        let _ = write!(
            body,
            "<article class=\"conflict-card\"><h3>{}</h3><p>{} <span class=\"muted\">found {} · memory <a href=\"/memory/{}\">{}</a></span></p><div class=\"sides\">{}",
            esc(&c.name),
            esc(&c.description),
            esc(&c.detected),
            enc(c
                .live
                .as_ref()
                .or(c.others.first())
                .map(|v| v.id.as_str())
                .unwrap_or("")),
            esc(c
                .live
                .as_ref()
                .or(c.others.first())
                .map(|v| v.id.as_str())
                .unwrap_or("")),
            side("In force", c.live.as_ref())
        );
        for (i, o) in c.others.iter().enumerate() {
            body.push_str(&side(&format!("Other version {}", i + 1), Some(o)));
        }
        body.push_str(&side("Base", c.base.as_ref()));
        body.push_str("</div>");
        let button = |keep: &str, label: &str, extra: &str| {
            post_form(
                "/sync/resolve",
                &ctx.csrf,
                "inline",
                &format!(
                    "<input type=\"hidden\" name=\"conflict\" value=\"{}\"><input type=\"hidden\" \
                     name=\"keep\" value=\"{keep}\">{extra}<button type=\"submit\">{label}</button>",
                    esc(&c.name)
                ),
            )
        };
        body.push_str("<div class=\"actions\">");
        let in_force = c
            .live
            .as_ref()
            .and_then(by)
            .map(|b| format!(" ({b})"))
            .unwrap_or_default();
        body.push_str(&button(
            "ours",
            &format!("Keep the version in force{in_force}"),
            "",
        ));
        // A resolve names a version by its memory id; of several versions of one id it takes
        // the newest, and the button says so.
        let mut offered: Vec<&str> = Vec::new();
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
            body.push_str(&button(
                "theirs",
                &label,
                &format!(
                    "<input type=\"hidden\" name=\"id\" value=\"{}\">",
                    esc(o.id.as_str())
                ),
            ));
        }
        // Keeping both keeps the text of every other version that has one (a forget has
        // none): appended to the version in force when it is the same memory, else kept as a
        // memory of its own beside it.
        let live_id = c.live.as_ref().map(|l| &l.id);
        let kept: Vec<&ConflictVersion> = c.others.iter().filter(|o| !o.forgotten).collect();
        if c.live.is_some() && !kept.is_empty() {
            let label = if kept.iter().all(|o| Some(&o.id) == live_id) {
                "Keep both: append the other text to the version in force"
            } else if kept.iter().all(|o| Some(&o.id) != live_id) {
                "Keep both: keep the other version as a memory of its own beside it"
            } else {
                "Keep both: each other text appended to the version in force or kept beside it"
            };
            body.push_str(&button("both", label, ""));
        }
        body.push_str("</div>");
        let live = c.live.as_ref();
        body.push_str(&post_form(
            "/sync/resolve",
            &ctx.csrf,
            "edit",
            &format!(
                "<input type=\"hidden\" name=\"conflict\" value=\"{}\"><input type=\"hidden\" \
                 name=\"keep\" value=\"edit\"><label>Summary <input type=\"text\" name=\"summary\" \
                 maxlength=\"100\" value=\"{}\"></label><label>Body <textarea name=\"body\" \
                 rows=\"4\">{}</textarea></label><button type=\"submit\">Resolve with this text</button>",
                esc(&c.name),
                esc(live.and_then(|l| l.summary.as_deref()).unwrap_or("")),
                esc(live.and_then(|l| l.body.as_deref()).unwrap_or(""))
            ),
        ));
        body.push_str("</article>");
    }
    Ok(Page::new(Section::Sync, "Sync", body))
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
