//! Reaching the API server: client configuration, the bounded first request, and
//! the errors a connection can end with.

use std::fmt::Debug;
use std::path::PathBuf;
use std::time::Duration;

use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};

use super::state::chain;

/// How long changes are collected before one update is published.
pub const DEBOUNCE: Duration = Duration::from_millis(250);

/// How long a TCP (and TLS) connection to the API server may take. kube's default
/// is 30 s; an unreachable server should be said at once, as kubectl does.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Where the cluster is and what to watch.
#[derive(Clone, Debug, Default)]
pub struct LiveOptions {
    /// `--kubeconfig`; otherwise `KUBECONFIG`, `~/.kube/config`, then in-cluster.
    pub kubeconfig: Option<PathBuf>,
    /// `--context`: a kubeconfig context other than the current one.
    pub context: Option<String>,
    /// `--namespace`: list only this namespace's pods (and their scheduling events).
    /// Nodes and cluster objects are always read whole.
    pub namespace: Option<String>,
    /// How long a server that accepted the connection may stay silent before it is
    /// called unresponsive; `None` is [`FIRST_ANSWER`].
    pub first_answer: Option<Duration>,
}

/// How long the API server may take to answer its first request. Go's clients give a
/// TLS handshake 10 s; a server past that is not going to answer a list either.
pub const FIRST_ANSWER: Duration = Duration::from_secs(10);

impl LiveOptions {
    pub fn first_answer(&self) -> Duration {
        self.first_answer.unwrap_or(FIRST_ANSWER)
    }
}

/// Ask the server for its version, bounded: a server that accepted the connection
/// but never answers (a wrong port, a stuck proxy) is an error after `within`
/// instead of a silent wait for the watchers' 5-minute read timeout, and one that
/// cannot be reached is said once, plainly. An answer, even a refusal, is left to
/// the watchers, which name the kind and the verb.
pub async fn probe(client: &Client, within: Duration) -> Result<(), LiveError> {
    match tokio::time::timeout(within, client.apiserver_version()).await {
        Ok(Ok(_)) | Ok(Err(kube::Error::Api(_))) => Ok(()),
        Ok(Err(e @ (kube::Error::HyperError(_) | kube::Error::Service(_)))) => {
            // The connect timeout covers the TLS handshake: a listener that accepts
            // and stays silent ends here, not in the timeout above.
            let timed_out =
                std::iter::successors(Some(&e as &dyn std::error::Error), |c| c.source()).any(
                    |c| {
                        c.downcast_ref::<std::io::Error>()
                            .is_some_and(|io| io.kind() == std::io::ErrorKind::TimedOut)
                            || c.to_string() == "deadline has elapsed"
                    },
                );
            Err(if timed_out {
                LiveError::Silent(CONNECT_TIMEOUT)
            } else {
                LiveError::Unreachable(chain(&e))
            })
        }
        Ok(Err(_)) => Ok(()),
        Err(_) => Err(LiveError::Silent(within)),
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    #[error("cannot read kubeconfig {path}: {source}")]
    Kubeconfig {
        path: PathBuf,
        source: kube::config::KubeconfigError,
    },
    #[error("cannot use kubeconfig{}: {source}", context_suffix(.context))]
    Context {
        context: Option<String>,
        source: kube::config::KubeconfigError,
    },
    #[error(
        "no cluster configuration found (tried KUBECONFIG, ~/.kube/config and the \
         in-cluster service account): {0}; pass --kubeconfig FILE or --snapshot PATH"
    )]
    Infer(kube::config::InferConfigError),
    #[error("cannot create the API client: {0}")]
    Client(kube::Error),
    #[error("{what}: {}", crate::source::api_error_text(.source))]
    Api { what: String, source: kube::Error },
    /// The first failure of a kind the engine needs (or any failure but a 403 or
    /// 404 of an optional one), in full.
    #[error("{message}")]
    Read { kind: &'static str, message: String },
    #[error("the cluster did not answer the initial lists within {0:?}: {1}")]
    Timeout(Duration, String),
    #[error(
        "the API server did not answer within {0:?}: no connection, or a connection \
         that stays silent (check the server address and any proxy in between)"
    )]
    Silent(Duration),
    #[error("cannot reach the API server: {0}")]
    Unreachable(String),
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
}

pub(super) fn context_suffix(c: &Option<String>) -> String {
    c.as_ref()
        .map(|c| format!(" (context {c:?})"))
        .unwrap_or_default()
}

/// The client configuration: an explicit kubeconfig file (and context), the
/// default kubeconfig with another context, or kube-rs's inference (KUBECONFIG,
/// `~/.kube/config`, in-cluster); connecting may take [`CONNECT_TIMEOUT`] at most.
pub async fn client_config(opts: &LiveOptions) -> Result<Config, LiveError> {
    let mut config = read_client_config(opts).await?;
    config.connect_timeout = Some(
        config
            .connect_timeout
            .map_or(CONNECT_TIMEOUT, |t| t.min(CONNECT_TIMEOUT)),
    );
    Ok(config)
}

pub(super) async fn read_client_config(opts: &LiveOptions) -> Result<Config, LiveError> {
    let kopts = KubeConfigOptions {
        context: opts.context.clone(),
        ..Default::default()
    };
    if let Some(path) = &opts.kubeconfig {
        let kc = Kubeconfig::read_from(path).map_err(|source| LiveError::Kubeconfig {
            path: path.clone(),
            source,
        })?;
        return Config::from_custom_kubeconfig(kc, &kopts)
            .await
            .map_err(|source| LiveError::Context {
                context: opts.context.clone(),
                source,
            });
    }
    if opts.context.is_some() {
        return Config::from_kubeconfig(&kopts)
            .await
            .map_err(|source| LiveError::Context {
                context: opts.context.clone(),
                source,
            });
    }
    Config::infer().await.map_err(LiveError::Infer)
}

pub async fn connect(opts: &LiveOptions) -> Result<Client, LiveError> {
    let config = client_config(opts).await?;
    super::bounded::client(config).map_err(LiveError::Client)
}

/// A short description of where the client points, for the status bar.
pub fn describe(config: &Config, opts: &LiveOptions) -> String {
    let mut s = format!("live {}", config.cluster_url);
    if let Some(c) = &opts.context {
        s.push_str(&format!(" ({c})"));
    }
    if let Some(ns) = &opts.namespace {
        s.push_str(&format!(" ns {ns}"));
    }
    s
}
