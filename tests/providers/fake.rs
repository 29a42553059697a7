//! A scripted HTTP server on 127.0.0.1:0 for protocol tests: a small axum
//! app that records every request (path, query, headers, JSON body) and
//! answers from a responder, with optional delays, and bodies sent whole,
//! endlessly, a byte at a time, cut off mid-way or not at all. Also a port
//! that refuses connections and a server that drops connections mid-request.
//!
//! Each server runs on its own thread and runtime, so tests may be plain
//! `#[test]`s that run the vaultbench binary, or `#[tokio::test]`s.

#![allow(dead_code)]

use std::io::Read;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

/// One request the server received.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub query: Option<String>,
    pub headers: Vec<(String, String)>,
    /// The body parsed as JSON (`Null` if it was not JSON).
    pub body: Value,
    pub raw_body: String,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// What the server answers.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
    /// Before the headers.
    pub delay: Duration,
    pub sending: Sending,
}

/// How the body goes out after the headers.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub enum Sending {
    /// All of it at once.
    #[default]
    Whole,
    /// The body, then `a` for ever (no length announced).
    Endless,
    /// One byte at a time, this long apart.
    Drip(Duration),
    /// The length of the whole body is announced, its first `n` bytes sent,
    /// then the connection is broken.
    BreakAfter(usize),
    /// The headers, then nothing, the connection kept open.
    Stall,
}

impl Reply {
    pub fn json(v: Value) -> Reply {
        Reply {
            status: 200,
            headers: vec![("content-type".into(), "application/json".into())],
            body: v.to_string(),
            delay: Duration::ZERO,
            sending: Sending::Whole,
        }
    }

    pub fn status(status: u16, body: &str) -> Reply {
        Reply { status, headers: vec![], body: body.to_string(), delay: Duration::ZERO, sending: Sending::Whole }
    }

    pub fn sending(mut self, sending: Sending) -> Reply {
        self.sending = sending;
        self
    }

    pub fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.into(), value.into()));
        self
    }

    pub fn delayed(mut self, delay: Duration) -> Reply {
        self.delay = delay;
        self
    }
}

type Responder = dyn Fn(&Recorded, usize) -> Reply + Send + Sync;

struct Shared {
    requests: Mutex<Vec<Recorded>>,
    responder: Box<Responder>,
}

/// A running fake server.
pub struct Fake {
    /// `http://127.0.0.1:PORT`, no trailing slash.
    pub url: String,
    shared: Arc<Shared>,
}

impl Fake {
    /// Answer request number `n` (from 0) with `responder(request, n)`.
    pub fn start(responder: impl Fn(&Recorded, usize) -> Reply + Send + Sync + 'static) -> Fake {
        let shared = Arc::new(Shared { requests: Mutex::new(Vec::new()), responder: Box::new(responder) });
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let state = shared.clone();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                let app = axum::Router::new().fallback(handle).with_state(state);
                axum::serve(listener, app).await.unwrap();
            });
        });
        Fake { url, shared }
    }

    /// Answer with `replies` in order; a request past the end gets a 599.
    pub fn scripted(replies: Vec<Reply>) -> Fake {
        Fake::start(move |_, n| replies.get(n).cloned().unwrap_or_else(|| Reply::status(599, "script exhausted")))
    }

    /// Always the same answer.
    pub fn always(reply: Reply) -> Fake {
        Fake::start(move |_, _| reply.clone())
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.requests.lock().unwrap().clone()
    }
}

async fn handle(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let raw_body = String::from_utf8_lossy(&body).into_owned();
    let recorded = Recorded {
        method: method.to_string(),
        path: uri.path().to_string(),
        query: uri.query().map(str::to_string),
        headers: headers.iter().map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("").to_string())).collect(),
        body: serde_json::from_str(&raw_body).unwrap_or(Value::Null),
        raw_body,
    };
    let n = {
        let mut requests = shared.requests.lock().unwrap();
        requests.push(recorded.clone());
        requests.len() - 1
    };
    let reply = (shared.responder)(&recorded, n);
    if !reply.delay.is_zero() {
        tokio::time::sleep(reply.delay).await;
    }
    let status = StatusCode::from_u16(reply.status).unwrap();
    let whole_length = reply.body.len();
    let mut response = match reply.sending {
        Sending::Whole => (status, reply.body).into_response(),
        sending => {
            let mut response = (status, streamed(reply.body, sending)).into_response();
            if let Sending::BreakAfter(_) = sending {
                response.headers_mut().insert(axum::http::header::CONTENT_LENGTH, whole_length.into());
            }
            response
        }
    };
    for (k, v) in reply.headers {
        response.headers_mut().insert(
            axum::http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
            axum::http::HeaderValue::from_str(&v).unwrap(),
        );
    }
    response
}

/// A body sent piece by piece, as `sending` says. A piece that fails to go
/// out (the client hung up) ends it.
fn streamed(body: String, sending: Sending) -> Body {
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(2);
    tokio::spawn(async move {
        let bytes = Bytes::from(body);
        match sending {
            Sending::Whole => {
                let _ = tx.send(Ok(bytes)).await;
            }
            Sending::Endless => {
                if tx.send(Ok(bytes)).await.is_err() {
                    return;
                }
                let block = Bytes::from(vec![b'a'; 64 * 1024]);
                while tx.send(Ok(block.clone())).await.is_ok() {}
            }
            Sending::Drip(every) => {
                for i in 0..bytes.len() {
                    if tx.send(Ok(bytes.slice(i..i + 1))).await.is_err() {
                        return;
                    }
                    tokio::time::sleep(every).await;
                }
            }
            Sending::BreakAfter(n) => {
                let _ = tx.send(Ok(bytes.slice(..n.min(bytes.len())))).await;
                tokio::time::sleep(Duration::from_millis(20)).await;
                let _ =
                    tx.send(Err(std::io::Error::new(std::io::ErrorKind::ConnectionReset, "broken on purpose"))).await;
            }
            Sending::Stall => {
                tx.closed().await;
            }
        }
    });
    Body::from_stream(tokio_stream::wrappers::ReceiverStream::new(rx))
}

/// An error answer whose body lists every request header, as a careless
/// proxy might.
pub fn echo_headers(status: u16) -> impl Fn(&Recorded, usize) -> Reply + Send + Sync + 'static {
    move |r, _| {
        let listed: Vec<String> = r.headers.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        Reply::json(serde_json::json!({ "error": { "message": format!("rejected request with headers {}", listed.join("; ")) } }))
            .with_status(status)
    }
}

impl Reply {
    pub fn with_status(mut self, status: u16) -> Reply {
        self.status = status;
        self
    }
}

/// A URL on which nothing listens.
pub fn refused_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    url
}

/// A server that reads the start of each request and closes the connection
/// without answering.
pub fn hanging_up_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut buf = [0u8; 64];
            let _ = stream.read(&mut buf);
            drop(stream);
        }
    });
    url
}
