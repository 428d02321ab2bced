//! The entry point: one shared HTTP client and key resolver, turning config references into
//! clients and routes.

use crate::client::ProviderClient;
use crate::entry::ProviderEntry;
use crate::error::LlmError;
use crate::http::{HttpClients, ProxyMode};
use crate::keys::KeyResolver;
use crate::route::Route;
use std::sync::Arc;
use warren_types::Config;

/// Builds provider clients and routes that share one connection pool. Cheap to clone.
#[derive(Clone)]
pub struct Providers {
    http: HttpClients,
    keys: Arc<dyn KeyResolver>,
}

impl std::fmt::Debug for Providers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Providers").finish_non_exhaustive()
    }
}

impl Providers {
    /// Providers whose keys come from `keys`, with the system proxy settings (loopback
    /// servers are always reached directly).
    pub fn new(keys: Arc<dyn KeyResolver>) -> Result<Self, LlmError> {
        Self::with_proxy(keys, ProxyMode::System)
    }

    /// Providers with an explicit proxy mode (`Direct` for servers on 127.0.0.1 in tests).
    pub fn with_proxy(keys: Arc<dyn KeyResolver>, proxy: ProxyMode) -> Result<Self, LlmError> {
        Ok(Providers {
            http: HttpClients::new(proxy)?,
            keys,
        })
    }

    /// A client for one resolved entry.
    pub fn client(&self, entry: ProviderEntry) -> ProviderClient {
        let http = self.http.for_url(&entry.url());
        ProviderClient::new(entry, http, self.keys.clone())
    }

    /// A route over resolved entries, in order.
    pub fn route_of(&self, entries: Vec<ProviderEntry>) -> Route {
        Route::new(entries.into_iter().map(|e| self.client(e)).collect())
    }

    /// The route of `reference`: that entry followed by its own `fallbacks` (not theirs),
    /// duplicates and the entry itself removed.
    pub fn route(&self, config: &Config, reference: &str) -> Result<Route, LlmError> {
        Ok(self.route_of(resolve_route(config, reference)?))
    }
}

/// The entries of the route of `reference`, resolved from `config`, primary first.
pub fn resolve_route(config: &Config, reference: &str) -> Result<Vec<ProviderEntry>, LlmError> {
    let primary = ProviderEntry::from_config(config, reference, None)?;
    let mut entries = vec![primary];
    for fb in entries[0].fallbacks.clone() {
        if entries.iter().any(|e| e.reference == fb) {
            continue;
        }
        entries.push(ProviderEntry::from_config(config, &fb, Some(reference))?);
    }
    Ok(entries)
}
