//! Bounds on what API server responses may hold, so that a server sending an
//! endless or huge body fails the request instead of filling memory: a list
//! response (one page) may hold [`MAX_LIST_RESPONSE_BYTES`], one watch event
//! [`MAX_WATCH_EVENT_BYTES`], and all responses being read at once (one list per
//! kind at start-up) [`MAX_IN_FLIGHT_BYTES`] together. Every client schedscope
//! makes goes through [`client`].

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{Request, Response};
use http_body::{Body as HttpBody, Frame, SizeHint};
use kube::client::{Body, ClientBuilder};
use kube::{Client, Config};

/// A list page holds at most 500 objects (kube-rs' page size, and `snapshot
/// save`'s), typically a few KiB each (a pod ~10 KiB, a full ResourceSlice ~100
/// KiB): 64 MiB is 128 KiB per object.
pub const MAX_LIST_RESPONSE_BYTES: u64 = 64 << 20;
/// One watch event carries one object, which the API server's request limit keeps
/// under 3 MiB: 16 MiB is five times that.
pub const MAX_WATCH_EVENT_BYTES: u64 = 16 << 20;
/// Every response being read at once, together.
pub const MAX_IN_FLIGHT_BYTES: u64 = 256 << 20;

/// Bytes held by the responses being read now.
static IN_FLIGHT: AtomicU64 = AtomicU64::new(0);

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A response that passed its bound.
#[derive(Debug, thiserror::Error)]
#[error("the API server's response to {path} passed {} MiB{}: refused", .limit >> 20, .what)]
pub struct TooLarge {
    pub path: String,
    pub limit: u64,
    pub what: &'static str,
}

/// A kube client whose responses are bounded.
pub fn client(config: Config) -> Result<Client, kube::Error> {
    Ok(ClientBuilder::try_from(config)?
        .with_layer(&BoundLayer)
        .build())
}

#[derive(Clone, Copy)]
struct BoundLayer;

impl<S> tower::Layer<S> for BoundLayer {
    type Service = Bound<S>;
    fn layer(&self, inner: S) -> Bound<S> {
        Bound { inner }
    }
}

#[derive(Clone)]
struct Bound<S> {
    inner: S,
}

impl<S, B> tower::Service<Request<Body>> for Bound<S>
where
    S: tower::Service<Request<Body>, Response = Response<B>>,
    S::Future: Send + 'static,
    B: HttpBody<Data = Bytes> + Unpin + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Response = Response<Bounded<B>>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<Body>) -> Self::Future {
        let uri = req.uri();
        let watch = uri
            .query()
            .is_some_and(|q| q.split('&').any(|p| p == "watch=true" || p == "watch=1"));
        let path = uri.path().to_string();
        let fut = self.inner.call(req);
        Box::pin(async move {
            let resp = fut.await?;
            Ok(resp.map(|inner| Bounded {
                inner,
                seen: 0,
                limit: if watch {
                    MAX_WATCH_EVENT_BYTES
                } else {
                    MAX_LIST_RESPONSE_BYTES
                },
                watch,
                path,
            }))
        })
    }
}

/// A response body that fails once it passes its bound: in total, or for a watch,
/// since its last newline (one event per line).
pub struct Bounded<B> {
    inner: B,
    seen: u64,
    limit: u64,
    watch: bool,
    path: String,
}

impl<B> HttpBody for Bounded<B>
where
    B: HttpBody<Data = Bytes> + Unpin,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    let held = match (this.watch, memchr::memrchr(b'\n', data)) {
                        (true, Some(at)) => (data.len() - at - 1) as u64,
                        _ => this.seen + data.len() as u64,
                    };
                    let all = IN_FLIGHT.fetch_add(held, Ordering::Relaxed) + held - this.seen;
                    IN_FLIGHT.fetch_sub(this.seen, Ordering::Relaxed);
                    this.seen = held;
                    let over = if held > this.limit {
                        Some((
                            this.limit,
                            if this.watch {
                                " in one watch event"
                            } else {
                                ""
                            },
                        ))
                    } else if all > MAX_IN_FLIGHT_BYTES {
                        Some((MAX_IN_FLIGHT_BYTES, " with the other responses being read"))
                    } else {
                        None
                    };
                    if let Some((limit, what)) = over {
                        return Poll::Ready(Some(Err(Box::new(TooLarge {
                            path: std::mem::take(&mut this.path),
                            limit,
                            what,
                        }))));
                    }
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(e.into()))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl<B> Drop for Bounded<B> {
    fn drop(&mut self) {
        IN_FLIGHT.fetch_sub(self.seen, Ordering::Relaxed);
    }
}
