//! The shared HTTP client: reqwest over rustls with the ring provider and the platform's
//! certificate verifier; one connection pool for every provider entry.

use crate::error::LlmError;
use std::sync::Arc;
use std::time::Duration;

/// How the HTTP client reaches the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProxyMode {
    /// Honour `HTTPS_PROXY` / `HTTP_PROXY` / `NO_PROXY` as HTTP clients usually do, except
    /// for loopback servers (a local Ollama), which are always reached directly.
    System,
    /// Connect directly (tests on 127.0.0.1, or a front-end that wants no proxy).
    Direct,
}

/// The HTTP clients of one process: one honouring the proxy settings, one direct.
#[derive(Debug, Clone)]
pub(crate) struct HttpClients {
    proxied: reqwest::Client,
    direct: reqwest::Client,
}

impl HttpClients {
    /// Builds the clients. Done once per process (the verifier loads the system roots).
    pub(crate) fn new(proxy: ProxyMode) -> Result<Self, LlmError> {
        let direct = build_client(ProxyMode::Direct)?;
        let proxied = match proxy {
            ProxyMode::System => build_client(ProxyMode::System)?,
            ProxyMode::Direct => direct.clone(),
        };
        Ok(HttpClients { proxied, direct })
    }

    /// The client for `url`: direct for loopback hosts, else per the proxy mode.
    pub(crate) fn for_url(&self, url: &str) -> reqwest::Client {
        if is_loopback(url) {
            self.direct.clone()
        } else {
            self.proxied.clone()
        }
    }
}

/// True when `url`'s host is `localhost`, in 127.0.0.0/8 or `[::1]`.
pub(crate) fn is_loopback(url: &str) -> bool {
    let Ok(u) = reqwest::Url::parse(url) else {
        return false;
    };
    let Some(host) = u.host_str() else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// An HTTP client with the same TLS setup and redirect rule as the provider clients, for other
/// HTTP services an agent is configured to reach (streamable-HTTP MCP servers).
pub fn service_client(proxy: ProxyMode) -> Result<reqwest::Client, LlmError> {
    build_client(proxy)
}

/// Builds one HTTP client.
fn build_client(proxy: ProxyMode) -> Result<reqwest::Client, LlmError> {
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
        // an API answering with a redirect is misconfigured: report it instead of replaying
        // the request somewhere else with the key
        .redirect(reqwest::redirect::Policy::none())
        .tcp_nodelay(true);
    if proxy == ProxyMode::Direct {
        builder = builder.no_proxy();
    }
    builder
        .build()
        .map_err(|e| setup(crate::error::describe(&e)))
}

#[cfg(test)]
mod tests {
    use super::is_loopback;

    #[test]
    fn loopback_hosts() {
        let cases = [
            ("http://127.0.0.1:11434", true),
            ("http://127.1.2.3/v1", true),
            ("http://localhost:8080/v1", true),
            ("http://[::1]:11434", true),
            ("https://api.openai.com/v1", false),
            ("http://10.0.0.1:11434", false),
            ("not a url", false),
        ];
        for (url, want) in cases {
            assert_eq!(is_loopback(url), want, "{url}");
        }
    }
}
