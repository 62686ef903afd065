//! `lore ui`: a local web UI over the same operations as the CLI and MCP (`lore::ops`).
//! Server-rendered HTML (axum), a little hand-written CSS and JS embedded in the binary, every
//! stored text escaped. The guard: the Host must be the loopback address the server is bound to,
//! every request carries the token (a cookie set from the printed address, or a bearer header),
//! and every form POST comes from an allowed Origin (`crate::http_guard`) with the token in its
//! `csrf` field.

mod context;
mod html;
mod memories;
mod overview;
mod review;
mod svg;
mod sync;
mod thoughts;

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use lore::ops::{Env, Operation};
use lore::{Lore, WriteContext};

use crate::error::{CmdResult, CommandError};
use crate::http_guard;

/// How many recall timings the overview plots.
const LATENCY_SAMPLES: usize = 200;

/// The largest form body accepted.
const MAX_FORM_BYTES: usize = 1 << 20;

/// One recall made through the UI: when, and how long the operation took.
#[derive(Clone, Copy, Debug)]
pub struct RecallTiming {
    /// Seconds since the server started.
    pub at: f64,
    /// Milliseconds the recall operation took.
    pub ms: f64,
}

/// What every request shares: the store behind a lock, who writes, the token and the rules.
pub struct App {
    lore: Mutex<Lore>,
    write: WriteContext,
    token: String,
    origins: Vec<String>,
    /// `Host` values accepted (empty: any, when bound beyond loopback).
    hosts: Vec<String>,
    cookie: String,
    started: Instant,
    recalls: Mutex<VecDeque<RecallTiming>>,
    /// Starts `lore upkeep` after a page whose reads left it due (see `Lore::defer_upkeep`).
    upkeep: Option<crate::upkeep_start::Starter>,
}

/// What a page handler gets besides the store: the token for its forms, and the request's
/// query.
pub struct PageCtx {
    /// The token forms carry in their `csrf` field.
    pub csrf: String,
    /// The query string's pairs, in order.
    pub query: Vec<(String, String)>,
}

impl PageCtx {
    /// The first value of a query parameter, if not empty.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, v)| k == name && !v.is_empty())
            .map(|(_, v)| v.as_str())
    }
}

/// Runs one operation on the locked store (the same way MCP does), returning its output and
/// the warnings gathered.
pub fn run_op<O: Operation>(env: &mut Env<'_>, request: O) -> Result<O::Output, lore::Error> {
    env.run(request)
}

type Rendered = Result<html::Page, lore::Error>;

impl App {
    fn record_recall(&self, ms: f64) {
        let mut r = self.recalls.lock().unwrap_or_else(|p| p.into_inner());
        if r.len() == LATENCY_SAMPLES {
            r.pop_front();
        }
        r.push_back(RecallTiming {
            at: self.started.elapsed().as_secs_f64(),
            ms,
        });
    }

    fn recalls(&self) -> Vec<RecallTiming> {
        let r = self.recalls.lock().unwrap_or_else(|p| p.into_inner());
        r.iter().copied().collect()
    }

    /// Renders a page on a blocking thread with the store locked, timing it for the
    /// `Server-Timing` header.
    async fn page(
        self: Arc<Self>,
        query: Vec<(String, String)>,
        render: impl FnOnce(&App, &mut Env<'_>, &PageCtx) -> Rendered + Send + 'static,
    ) -> Response {
        let app = Arc::clone(&self);
        let joined = tokio::task::spawn_blocking(move || {
            let started = Instant::now();
            let ctx = PageCtx {
                csrf: app.token.clone(),
                query,
            };
            let mut guard = app.lore.lock().unwrap_or_else(|p| p.into_inner());
            let mut env = Env::new(&mut guard, app.write.clone());
            let page = render(&app, &mut env, &ctx);
            let warnings = env.take_warnings();
            let stamp = run_op(&mut env, lore::ops::browse::Tips {})
                .map(|t| t.stamp)
                .unwrap_or_default();
            if let Some(upkeep) = &app.upkeep {
                upkeep.start_if_wanted(&mut guard);
            }
            drop(guard);
            let out = match page {
                Ok(mut page) => {
                    page.warnings.extend(warnings);
                    (StatusCode::OK, html::layout(&page, &stamp))
                }
                Err(e) => {
                    let status = match e.class() {
                        lore::ErrorClass::NotFound => StatusCode::NOT_FOUND,
                        lore::ErrorClass::InvalidInput => StatusCode::BAD_REQUEST,
                        lore::ErrorClass::Conflict => StatusCode::CONFLICT,
                        _ => StatusCode::INTERNAL_SERVER_ERROR,
                    };
                    (status, html::layout(&html::error_page(&e), &stamp))
                }
            };
            (out, started.elapsed())
        })
        .await;
        match joined {
            Ok(((status, body), took)) => {
                let mut response = (status, axum::response::Html(body)).into_response();
                if let Ok(v) =
                    HeaderValue::from_str(&format!("render;dur={:.2}", took.as_secs_f64() * 1000.0))
                {
                    response.headers_mut().insert("server-timing", v);
                }
                no_store(&mut response);
                response
            }
            Err(e) => (
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("lore ui: the page failed ({e})"),
            )
                .into_response(),
        }
    }

    /// Runs a write on a blocking thread and answers with a redirect (303) to where it says,
    /// or with the error as a page.
    async fn act(
        self: Arc<Self>,
        form: Vec<(String, String)>,
        action: impl FnOnce(&mut Env<'_>, &Form) -> Result<String, lore::Error> + Send + 'static,
    ) -> Response {
        let app = Arc::clone(&self);
        let joined = tokio::task::spawn_blocking(move || {
            let form = Form(form);
            let mut guard = app.lore.lock().unwrap_or_else(|p| p.into_inner());
            let mut env = Env::new(&mut guard, app.write.clone());
            action(&mut env, &form)
        })
        .await;
        match joined {
            Ok(Ok(to)) => Redirect::to(&to).into_response(),
            Ok(Err(e)) => {
                let app = Arc::clone(&self);
                app.page(Vec::new(), move |_, _, _| Err(e)).await
            }
            Err(e) => (
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("lore ui: the action failed ({e})"),
            )
                .into_response(),
        }
    }
}

/// A posted form's fields.
pub struct Form(Vec<(String, String)>);

impl Form {
    /// A field's value, if given and not blank.
    pub fn get(&self, name: &str) -> Option<String> {
        self.0
            .iter()
            .find(|(k, v)| k == name && !v.trim().is_empty())
            .map(|(_, v)| v.replace("\r\n", "\n"))
    }

    /// A field's value as given (blank included), if the field was sent.
    pub fn raw(&self, name: &str) -> Option<String> {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.replace("\r\n", "\n"))
    }
}

fn no_store(response: &mut Response) {
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
}

fn refuse(status: StatusCode, why: &str) -> Response {
    let mut response = (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        format!("lore ui: {why}\n"),
    )
        .into_response();
    no_store(&mut response);
    response
}

fn cookie_token<'a>(headers: &'a axum::http::HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

/// The path and query of a request without its `token` parameter.
fn without_token(uri: &axum::http::Uri) -> String {
    let kept: Vec<&str> = uri
        .query()
        .unwrap_or("")
        .split('&')
        .filter(|p| !p.is_empty() && !p.starts_with("token="))
        .collect();
    if kept.is_empty() {
        uri.path().to_string()
    } else {
        format!("{}?{}", uri.path(), kept.join("&"))
    }
}

/// The guard every request passes: Host, token, and for writes Origin and the form's token.
async fn guard(State(app): State<Arc<App>>, request: Request, next: Next) -> Response {
    let headers = request.headers();
    if !app.hosts.is_empty() {
        let host = headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .unwrap_or("");
        if !app.hosts.iter().any(|h| h.eq_ignore_ascii_case(host)) {
            return refuse(StatusCode::FORBIDDEN, "this Host is not served here");
        }
    }
    let authorized = cookie_token(headers, &app.cookie)
        .is_some_and(|t| http_guard::token_matches(t, &app.token))
        || http_guard::bearer_matches(headers, &app.token);
    if !authorized {
        let given = request.uri().query().and_then(|q| {
            q.split('&')
                .find_map(|p| p.strip_prefix("token="))
                .map(str::to_string)
        });
        if request.method() == Method::GET
            && given.is_some_and(|t| http_guard::token_matches(&t, &app.token))
        {
            let mut response = Redirect::to(&without_token(request.uri())).into_response();
            if let Ok(v) = HeaderValue::from_str(&format!(
                "{}={}; Path=/; HttpOnly; SameSite=Strict",
                app.cookie, app.token
            )) {
                response.headers_mut().insert(header::SET_COOKIE, v);
            }
            return response;
        }
        return refuse(
            StatusCode::UNAUTHORIZED,
            "open the address `lore ui` printed (it carries the token)",
        );
    }
    if request.method() == Method::GET || request.method() == Method::HEAD {
        return next.run(request).await;
    }
    let origin = headers
        .get(header::ORIGIN)
        .and_then(|o| o.to_str().ok())
        .unwrap_or("");
    if !http_guard::origin_allowed(origin, &app.origins) {
        return refuse(
            StatusCode::FORBIDDEN,
            "a write from a foreign (or missing) Origin is refused",
        );
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_FORM_BYTES).await else {
        return refuse(StatusCode::PAYLOAD_TOO_LARGE, "the form is too large");
    };
    let fields: Vec<(String, String)> = serde_urlencoded::from_bytes(&bytes).unwrap_or_default();
    let csrf_ok = fields
        .iter()
        .any(|(k, v)| k == "csrf" && http_guard::token_matches(v, &app.token));
    if !csrf_ok {
        return refuse(
            StatusCode::FORBIDDEN,
            "the form's token is missing or wrong: reload the page",
        );
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

async fn asset_css() -> Response {
    let mut r = (
        [(header::CONTENT_TYPE, "text/css; charset=utf-8")],
        include_str!("../../assets/webui/ui.css"),
    )
        .into_response();
    no_store(&mut r);
    r
}

async fn asset_js() -> Response {
    let mut r = (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        include_str!("../../assets/webui/ui.js"),
    )
        .into_response();
    no_store(&mut r);
    r
}

async fn tips(State(app): State<Arc<App>>) -> Response {
    let joined = tokio::task::spawn_blocking(move || {
        let mut guard = app.lore.lock().unwrap_or_else(|p| p.into_inner());
        let mut env = Env::new(&mut guard, app.write.clone());
        run_op(&mut env, lore::ops::browse::Tips {})
    })
    .await;
    let mut r = match joined {
        Ok(Ok(t)) => t.stamp.into_response(),
        Ok(Err(e)) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    };
    no_store(&mut r);
    r
}

fn router(app: Arc<App>) -> Router {
    Router::new()
        .route("/", get(memories::index))
        .route("/memories", get(memories::index))
        .route("/memory/{id}", get(memories::page))
        .route("/memory/{id}/edit", post(memories::edit))
        .route("/memory/{id}/status", post(memories::set_status))
        .route("/memory/{id}/forget", post(memories::forget))
        .route("/review", get(review::page))
        .route("/review/{id}/accept", post(review::accept))
        .route("/review/{id}/edit", post(review::edit))
        .route("/review/{id}/reject", post(review::reject))
        .route("/context", get(context::page))
        .route("/thoughts", get(thoughts::page))
        .route("/sync", get(sync::page))
        .route("/sync/resolve", post(sync::resolve))
        .route("/overview", get(overview::page))
        .route("/api/tips", get(tips))
        .route("/assets/ui.css", get(asset_css))
        .route("/assets/ui.js", get(asset_js))
        .layer(middleware::from_fn_with_state(Arc::clone(&app), guard))
        .with_state(app)
}

/// How the server is started.
pub struct Options {
    /// Where to listen.
    pub addr: SocketAddr,
    /// The token (random when none is given).
    pub token: Option<String>,
    /// Origins accepted besides loopback ones.
    pub extra_origins: Vec<String>,
    /// Open the browser at the address.
    pub open_browser: bool,
    /// Starts `lore upkeep` after a page that left it due (the store's handle defers it).
    pub upkeep: Option<crate::upkeep_start::Starter>,
}

fn random_token() -> CmdResult<String> {
    let mut bytes = [0u8; 24];
    getrandom::fill(&mut bytes)
        .map_err(|e| CommandError::usage(format!("cannot draw a random token: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

fn open_in_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    };
    if std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .is_err()
    {
        eprintln!("lore ui: could not start {opener}; open the address above yourself");
    }
}

/// Serves the UI until interrupted.
pub async fn serve(lore: Lore, write: WriteContext, options: Options) -> CmdResult {
    let listener = tokio::net::TcpListener::bind(options.addr)
        .await
        .map_err(|e| CommandError::usage(format!("cannot listen on {}: {e}", options.addr)))?;
    let local = listener
        .local_addr()
        .map_err(|e| CommandError::usage(format!("cannot read the bound address: {e}")))?;
    let token = match options.token.filter(|t| !t.is_empty()) {
        Some(t) => t,
        None => random_token()?,
    };
    let port = local.port();
    let hosts = if local.ip().is_loopback() {
        vec![
            format!("127.0.0.1:{port}"),
            format!("localhost:{port}"),
            format!("[::1]:{port}"),
        ]
    } else {
        Vec::new()
    };
    let app = Arc::new(App {
        lore: Mutex::new(lore),
        write,
        token: token.clone(),
        origins: http_guard::allowed_origins(&options.extra_origins),
        hosts,
        cookie: format!("lore_ui_{port}"),
        started: Instant::now(),
        recalls: Mutex::new(VecDeque::new()),
        upkeep: options.upkeep,
    });
    let host = if local.ip().is_loopback() {
        format!("127.0.0.1:{port}")
    } else {
        local.to_string()
    };
    let url = format!("http://{host}/?token={token}");
    println!("lore ui: {url}");
    use std::io::Write as _;
    let _ = std::io::stdout().flush();
    if options.open_browser {
        open_in_browser(&url);
    }
    axum::serve(listener, router(app))
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .map_err(|e| CommandError::usage(format!("HTTP server: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_leaves_the_address_it_came_in() {
        let uri: axum::http::Uri = "/memories?q=a&token=t0k&tag=b".parse().unwrap();
        assert_eq!(without_token(&uri), "/memories?q=a&tag=b");
        let uri: axum::http::Uri = "/?token=t0k".parse().unwrap();
        assert_eq!(without_token(&uri), "/");
    }

    #[test]
    fn the_cookie_is_found_among_others() {
        let mut h = axum::http::HeaderMap::new();
        h.insert(
            header::COOKIE,
            HeaderValue::from_static("a=1; lore_ui_9=t0k"),
        );
        assert_eq!(cookie_token(&h, "lore_ui_9"), Some("t0k"));
        assert_eq!(cookie_token(&h, "lore_ui_8"), None);
    }
}
