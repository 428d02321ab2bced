//! The shared HTTP client: reqwest over rustls with the ring provider and the platform's
//! certificate verifier; one connection pool for every provider entry.

use crate::error::LlmError;
use std::sync::Arc;
use std::time::Duration;

/// How the HTTP client reaches the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProxyMode {
    /// Honour `HTTPS_PROXY` / `HTTP_PROXY` / `NO_PROXY` as HTTP clients usually do.
    System,
    /// Connect directly (tests on 127.0.0.1, or a front-end that wants no proxy).
    Direct,
}

/// Builds the HTTP client. Done once per process (the verifier loads the system roots).
pub(crate) fn build_client(proxy: ProxyMode) -> Result<reqwest::Client, LlmError> {
    let setup = |detail: String| LlmError::InvalidRequest {
        entry: String::new(),
        detail: format!("cannot set up the HTTP client: {detail}"),
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = rustls_platform_verifier::Verifier::new(provider.clone())
        .map_err(|e| setup(format!("certificate verifier: {e}")))?;
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| setup(format!("TLS versions: {e}")))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    let mut builder = reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .pool_idle_timeout(Duration::from_secs(60))
        .tcp_nodelay(true);
    if proxy == ProxyMode::Direct {
        builder = builder.no_proxy();
    }
    builder
        .build()
        .map_err(|e| setup(crate::error::describe(&e)))
}
