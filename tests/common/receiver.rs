//! An HTTP receiver of notifications that records every POST and can be told to fail.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;

#[derive(Clone, Debug)]
pub struct Received {
    pub path: String,
    /// The query string, without its `?`.
    pub query: String,
    pub authorization: String,
    pub idempotency_key: String,
    pub body: String,
}

pub struct Receiver {
    pub addr: SocketAddr,
    /// Every POST answered 200.
    pub received: Arc<Mutex<Vec<Received>>>,
    /// While set, every request is answered 503.
    pub fail: Arc<AtomicBool>,
    /// How many of the next POSTs to refuse with 400 (`invalid_payload`), as a receiver refuses
    /// a notification for good; each refused one is kept in `refused`.
    pub refuse: Arc<AtomicUsize>,
    pub refused: Arc<Mutex<Vec<Received>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Receiver {
    pub async fn start() -> Receiver {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let received = Arc::new(Mutex::new(Vec::new()));
        let fail = Arc::new(AtomicBool::new(false));
        let refuse = Arc::new(AtomicUsize::new(0));
        let refused = Arc::new(Mutex::new(Vec::new()));
        let (r, f, no, nos) = (received.clone(), fail.clone(), refuse.clone(), refused.clone());
        let task = tokio::spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else { continue };
                let (r, f, no, nos) = (r.clone(), f.clone(), no.clone(), nos.clone());
                tokio::spawn(async move {
                    let service = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                        let (r, f, no, nos) = (r.clone(), f.clone(), no.clone(), nos.clone());
                        async move {
                            let path = req.uri().path().to_string();
                            let query = req.uri().query().unwrap_or_default().to_string();
                            let header = |name: &str| {
                                req.headers()
                                    .get(name)
                                    .map(|v| v.to_str().unwrap_or("").to_string())
                                    .unwrap_or_default()
                            };
                            let authorization = header("authorization");
                            let idempotency_key = header("idempotency-key");
                            let body = req.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
                            let body = String::from_utf8_lossy(&body).into_owned();
                            let received = Received { path, query, authorization, idempotency_key, body };
                            let (status, answer) = if f.load(Ordering::SeqCst) {
                                (503, "")
                            } else if no.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1)).is_ok()
                            {
                                nos.lock().unwrap().push(received);
                                (400, r#"{"error":"invalid_payload"}"#)
                            } else {
                                r.lock().unwrap().push(received);
                                (200, "")
                            };
                            Ok::<_, std::convert::Infallible>(
                                hyper::Response::builder()
                                    .status(status)
                                    .body(Full::new(Bytes::from_static(answer.as_bytes())))
                                    .unwrap(),
                            )
                        }
                    });
                    let _ =
                        hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(tcp), service).await;
                });
            }
        });
        Receiver { addr, received, fail, refuse, refused, task }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn bodies(&self) -> Vec<serde_json::Value> {
        self.received.lock().unwrap().iter().map(|r| serde_json::from_str(&r.body).unwrap()).collect()
    }
}
