//! The preview server of `publish --watch`: the output folder over HTTP on
//! 127.0.0.1 (axum + tower-http's `ServeDir`), under the site's base path:
//! with `base_path = "/docs/"`, `/docs/` is the home page, `/` leads there,
//! and a missing page gets the site's `404.html` with status 404, as a
//! static host would answer.
//!
//! Only here, HTML responses get a small live-reload script; it listens on a
//! server-sent-events stream and reloads the page after each rebuild. While
//! the last build failed, every page request gets the error page instead, so
//! the browser shows the error and recovers by itself once it is fixed.
//! The files on disk are never changed by serving.
//!
//! Every file is streamed, HTML included (the script follows the page as a
//! last piece of the body, which a browser runs as part of the page), so a
//! response holds a chunk of its file in memory, never the whole of it.
//! Each file is opened under the shared lock of the output folder's writes
//! (`write::OutputDir::open_lock`): never in the middle of a build. No
//! redirect leaves the server: a path starting with `//` (which a browser
//! would read as another host) is taken as the one-slash path it means.

use std::convert::Infallible;
use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use tokio::sync::broadcast;
use tokio_stream::StreamExt;
use tokio_stream::wrappers::BroadcastStream;
use tower_http::services::{ServeDir, ServeFile};

use crate::publish::render::escape::escape_html;
use crate::publish::write::OutputDir;

pub const EVENTS_PATH: &str = "/__vaultbench/events";
pub const SCRIPT_PATH: &str = "/__vaultbench/livereload.js";
const SCRIPT: &str = include_str!("livereload.js");
/// Sent on the reload channel to end every event stream at shutdown.
const SHUTDOWN: u64 = u64::MAX;

/// What the server shares with the rebuild loop.
pub struct ServerState {
    /// The last build's error, shown in place of every page while set.
    pub error: RwLock<Option<String>>,
    /// A build number after each rebuild; `SHUTDOWN` ends the streams.
    pub reload: broadcast::Sender<u64>,
    pub base_path: String,
}

impl ServerState {
    pub fn new(base_path: String) -> Arc<ServerState> {
        let (reload, _) = broadcast::channel(16);
        Arc::new(ServerState { error: RwLock::new(None), reload, base_path })
    }

    /// Tell open pages to reload (a new build, or a new error).
    pub fn reload(&self, build: u64) {
        // No open page is not an error.
        let _ = self.reload.send(build);
    }

    pub fn close_streams(&self) {
        let _ = self.reload.send(SHUTDOWN);
    }
}

/// The preview server, listening on 127.0.0.1 (`publish --watch`, `view`).
pub struct Server {
    pub addr: std::net::SocketAddr,
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Server {
    /// Serve `out` on 127.0.0.1:`port` (0: any free port) on `runtime`.
    pub fn start(
        runtime: &tokio::runtime::Runtime,
        port: u16,
        out: PathBuf,
        state: Arc<ServerState>,
    ) -> anyhow::Result<Server> {
        use anyhow::Context;
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind(("127.0.0.1", port)))
            .with_context(|| format!("listening on 127.0.0.1:{port}"))?;
        let addr = listener.local_addr().context("reading the server address")?;
        let app = router(out, state);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = runtime.spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(async move {
                    let _ = stopped.await;
                })
                .await
        });
        Ok(Server { addr, stop, task })
    }

    /// Close the pages' reload streams, stop accepting, and give the
    /// requests under way up to 3 s to finish.
    pub fn stop(self, runtime: &tokio::runtime::Runtime, state: &ServerState) {
        state.close_streams();
        let _ = self.stop.send(());
        runtime.block_on(async {
            let _ = tokio::time::timeout(std::time::Duration::from_secs(3), self.task).await;
        });
    }
}

pub fn router(out: PathBuf, state: Arc<ServerState>) -> Router {
    let files = ServeDir::new(&out).not_found_service(ServeFile::new(out.join("404.html")));
    let site = Router::new()
        .fallback_service(files)
        .layer(middleware::from_fn_with_state(Arc::new(out), between_builds))
        .layer(middleware::from_fn_with_state(Arc::clone(&state), pages))
        .layer(middleware::from_fn_with_state(Arc::clone(&state), under_base_path));
    Router::new()
        .route(EVENTS_PATH, get(events))
        .route(SCRIPT_PATH, get(|| async { ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8")], SCRIPT) }))
        .merge(site)
        .with_state(state)
        .layer(middleware::from_fn(no_redirect_elsewhere))
}

/// A request path with its leading slashes (and backslashes) made one, and
/// a redirect answer whose target would leave the server made local: what a
/// browser reads as `//host/...` is never sent.
async fn no_redirect_elsewhere(mut req: Request, next: Next) -> Response {
    let path = req.uri().path();
    if path.starts_with("//") || path.starts_with("/\\") {
        let local = format!("/{}", path.trim_start_matches(['/', '\\']));
        let query = req.uri().query().map(|q| format!("?{q}")).unwrap_or_default();
        if let Ok(uri) = format!("{local}{query}").parse() {
            *req.uri_mut() = uri;
        }
    }
    let mut res = next.run(req).await;
    let location = res.headers().get(header::LOCATION).map(|l| String::from_utf8_lossy(l.as_bytes()).into_owned());
    if let Some(location) = location.filter(|l| !is_local(l)) {
        let value = HeaderValue::from_str(&local_target(&location)).unwrap_or(HeaderValue::from_static("/"));
        res.headers_mut().insert(header::LOCATION, value);
    }
    res
}

/// Whether a redirect target stays on this server: one slash, then a path.
fn is_local(location: &str) -> bool {
    location.starts_with('/') && !location.starts_with("//") && !location.starts_with("/\\")
}

/// The path of a redirect target that would leave the server, on this one.
fn local_target(location: &str) -> String {
    let rest = location.trim_start_matches(['/', '\\']);
    let path = match rest.split_once("://") {
        Some((_, after)) => after.split_once('/').map_or("", |(_, path)| path),
        None => rest,
    };
    format!("/{}", path.trim_start_matches(['/', '\\']))
}

/// Open the file between builds: under the shared lock of the folder's
/// writes, released once the file is open (the answer streams from the
/// open file, which a later build's renames do not change).
async fn between_builds(State(out): State<Arc<PathBuf>>, req: Request, next: Next) -> Response {
    let lock = tokio::task::spawn_blocking(move || OutputDir::open_lock(&out)).await.ok().flatten();
    let res = next.run(req).await;
    drop(lock);
    res
}

/// Serve the site under its base path: the prefix is taken off before the
/// file lookup and put back on redirects (`/docs/guide` to `/docs/guide/`).
async fn under_base_path(State(state): State<Arc<ServerState>>, mut req: Request, next: Next) -> Response {
    let base = state.base_path.as_str();
    if base == "/" {
        return next.run(req).await;
    }
    let path = req.uri().path().to_string();
    let inner = match path.strip_prefix(base.trim_end_matches('/')) {
        Some("") => return Redirect::temporary(base).into_response(),
        Some(rest) if rest.starts_with('/') => rest.to_string(),
        // Outside the base path: the home page is one click away.
        _ if path == "/" => return Redirect::temporary(base).into_response(),
        _ => "/__outside_the_base_path__".to_string(),
    };
    let mut parts = req.uri().clone().into_parts();
    let query = req.uri().query().map(|q| format!("?{q}")).unwrap_or_default();
    parts.path_and_query = format!("{inner}{query}").parse().ok();
    if let Ok(uri) = axum::http::Uri::from_parts(parts) {
        *req.uri_mut() = uri;
    }
    let mut res = next.run(req).await;
    if res.status().is_redirection() {
        let location = res.headers().get(header::LOCATION).and_then(|l| l.to_str().ok()).map(str::to_string);
        if let Some(location) = location.filter(|l| l.starts_with('/') && !l.starts_with("//")) {
            let prefixed = format!("{}{location}", base.trim_end_matches('/'));
            if let Ok(value) = HeaderValue::from_str(&prefixed) {
                res.headers_mut().insert(header::LOCATION, value);
            }
        }
    }
    res
}

async fn events(State(state): State<Arc<ServerState>>) -> impl IntoResponse {
    let stream = BroadcastStream::new(state.reload.subscribe())
        .filter_map(|r| r.ok())
        .take_while(|n| *n != SHUTDOWN)
        .map(|n| Ok::<_, Infallible>(Event::default().event("reload").data(n.to_string())));
    Sse::new(stream).keep_alive(KeepAlive::default())
}

/// The error page while a build is broken; otherwise the file, with the
/// live-reload script added to HTML.
async fn pages(State(state): State<Arc<ServerState>>, req: Request, next: Next) -> Response {
    let wants_page = {
        let path = req.uri().path();
        let last = path.rsplit('/').next().unwrap_or("");
        path.ends_with('/') || last.ends_with(".html") || !last.contains('.')
    };
    let error = state.error.read().expect("error lock").clone();
    if let (true, Some(error)) = (wants_page, error) {
        let mut res = Response::new(Body::from(error_page(&error)));
        *res.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
        res.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
        res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        return res;
    }
    let res = next.run(req).await;
    let is_html = res
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/html"));
    let (mut parts, body) = res.into_parts();
    parts.headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if !is_html {
        return Response::from_parts(parts, body);
    }
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.remove(header::ETAG);
    parts.headers.remove(header::LAST_MODIFIED);
    Response::from_parts(parts, with_script(body))
}

fn script_tag() -> String {
    format!("<script src=\"{SCRIPT_PATH}\"></script>")
}

/// A page's body with the live-reload script after it, streamed as it is
/// read. After `</html>` a browser still runs the script, as part of the
/// page's body.
fn with_script(body: Body) -> Body {
    let tag = Ok::<_, axum::Error>(axum::body::Bytes::from(script_tag()));
    Body::from_stream(body.into_data_stream().chain(tokio_stream::once(tag)))
}

/// The page shown in place of the site while the build is broken.
pub fn error_page(error: &str) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Build error · vaultbench</title>\
         <style>body{{font:16px/1.5 system-ui,sans-serif;margin:2em;color:#1f2328}}\
         pre{{background:#fff0f0;border-left:4px solid #cf222e;padding:1em;white-space:pre-wrap}}</style></head>\
         <body><h1>The site did not build</h1><p>The preview shows the last error until it is fixed; \
         this page reloads by itself after the next change.</p><pre id=\"build-error\">{}</pre>{}</body></html>\n",
        escape_html(error),
        script_tag()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_script_follows_the_page() {
        let body = with_script(Body::from("<p>x</p></body></html>"));
        let bytes = axum::body::to_bytes(body, 1 << 20).await.unwrap();
        assert_eq!(String::from_utf8_lossy(&bytes), format!("<p>x</p></body></html>{}", script_tag()));
    }

    #[test]
    fn no_redirect_target_leaves_the_server() {
        for (location, local) in [
            ("//static/", "/static/"),
            ("/\\evil.example/", "/evil.example/"),
            ("https://evil.example/x", "/x"),
            ("///a//b", "/a//b"),
        ] {
            assert!(!is_local(location), "{location}");
            assert_eq!(local_target(location), local, "{location}");
        }
        assert!(is_local("/docs/guide/"));
    }

    #[test]
    fn the_error_page_escapes_the_error() {
        let page = error_page("bad <script>x</script>");
        assert!(page.contains("bad &lt;script&gt;x&lt;/script&gt;"), "{page}");
        assert!(page.contains(SCRIPT_PATH));
    }
}
