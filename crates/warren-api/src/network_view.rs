//! The network log as `warren logs --network` and the window show it: the connections each
//! agent's sandboxed commands and MCP servers made, or were refused, through Warren's proxy
//! (profiles whose `network` is by domain); and "Allow this domain", the edit of an agent's
//! risk profile that lets a refused host through.

use crate::activity::storage;
use crate::profiles::{
    FieldChange, FieldValue, ProfileEdit, ProfileKind, ProfilePreview, ProfileView,
};
use crate::Warren;
use serde::{Deserialize, Serialize};
use warren_types::{ApiError, Config, DomainPattern, DomainRules, ErrorCode, NetworkAccess};

/// One connection through the proxy. Byte counts and the duration are `u64` here and `number`
/// in the window's TypeScript types (JSON carries them exactly up to 2^53).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct NetworkConnectionView {
    /// The agent (its alias now).
    pub agent: String,
    /// When it started, RFC 3339 in UTC.
    pub time: String,
    /// The host as the program asked for it.
    pub host: String,
    /// The port.
    pub port: u16,
    /// Whether it was let through.
    pub allowed: bool,
    /// The rule that decided, in words (`allow "crates.io"`, `no allow pattern matches`,
    /// `private address 127.0.0.1 (allow_private is off)`).
    pub rule: String,
    /// The address connected to, when one was.
    pub address: Option<String>,
    /// Bytes the program sent.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub bytes_up: u64,
    /// Bytes it received.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub bytes_down: u64,
    /// How long the connection lasted, in milliseconds.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub duration_ms: u64,
    /// `connect` (an HTTPS tunnel) or `http` (one plain HTTP request).
    pub kind: String,
}

/// The most connections one query returns.
pub const MAX_NETWORK_ROWS: u32 = 5000;

impl Warren {
    /// The newest `limit` connections (1 to 5000) of `agent` (every agent when `None`), only
    /// the refused ones when `refused_only`, newest first.
    pub async fn network_log(
        &self,
        agent: Option<&str>,
        refused_only: bool,
        limit: u32,
    ) -> Result<Vec<NetworkConnectionView>, ApiError> {
        if let Some(a) = agent {
            let config = self.load()?.config;
            if !config.agents.contains_key(a) {
                return Err(crate::errors::unknown_agent(&config, a));
            }
        }
        if limit == 0 || limit > MAX_NETWORK_ROWS {
            return Err(ApiError::new(
                warren_types::ErrorCode::InvalidArgument,
                format!("the number of connections must be 1 to {MAX_NETWORK_ROWS}, not {limit}"),
            ));
        }
        let host = self.host().await?;
        let rows =
            warren_state::network_log::recent(host.sessions().pool(), agent, refused_only, limit)
                .await
                .map_err(storage("the network log".to_string()))?;
        Ok(rows
            .into_iter()
            .map(|r| NetworkConnectionView {
                time: chrono::DateTime::<chrono::Utc>::from_timestamp_millis(r.time_ms)
                    .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
                    .unwrap_or_default(),
                agent: r.agent,
                host: r.host,
                port: r.port,
                allowed: r.allowed,
                rule: r.rule,
                address: r.address,
                bytes_up: r.bytes_up,
                bytes_down: r.bytes_down,
                duration_ms: r.duration_ms,
                kind: r.kind,
            })
            .collect())
    }
}

/// What "Allow this domain" would change: the edit of the agent's risk profile that adds the
/// host to its `allow` list, and that edit's preview (a diff of `config.toml` and the
/// validator's findings). Nothing is written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct AllowDomainPreview {
    /// The agent whose connection was refused.
    pub agent: String,
    /// Its risk profile, the one the edit changes.
    pub profile: String,
    /// Every agent using that profile: the edit lets each of them reach the host.
    pub used_by: Vec<String>,
    /// The pattern added to `allow`: the host as the program asked for it, without its port.
    pub pattern: String,
    /// The profile edit itself.
    pub edit: ProfileEdit,
    /// What saving it would change.
    pub preview: ProfilePreview,
}

fn refuse(message: String) -> ApiError {
    ApiError::new(ErrorCode::InvalidArgument, message)
}

/// The edit of `agent`'s risk profile that adds `host` (as asked, port left out) to its
/// `allow` list, with the profile and the pattern added. Refused when the agent's network is
/// not by domain, when a `deny` pattern refuses the host (deny wins, so allowing it would
/// change nothing), when an `allow` pattern already admits it, and when the host makes no
/// pattern. The one decision, [`DomainRules::decide`], judges each case.
fn allow_domain_edit(
    cfg: &Config,
    agent: &str,
    host: &str,
    port: u16,
) -> Result<(String, String, ProfileEdit), ApiError> {
    let a = cfg
        .agents
        .get(agent)
        .ok_or_else(|| crate::errors::unknown_agent(cfg, agent))?;
    let profile = a.risk_profile.clone();
    let rp = cfg.risk_profiles.get(&profile).ok_or_else(|| {
        ApiError::new(
            ErrorCode::NotFound,
            format!("risk profile `{profile}` of agent `{agent}` does not exist"),
        )
    })?;
    let rules = match &rp.network {
        NetworkAccess::Domains(rules) => rules,
        other => {
            return Err(refuse(format!(
                "the network of agent `{agent}` (risk profile `{profile}`) is {}, not by domain: \
                 its commands do not go through Warren's proxy, so there is no allow list to add \
                 `{host}` to",
                other.label()
            )))
        }
    };
    // Deny wins: with every host allowed, is this one still refused?
    let deny_only = DomainRules {
        allow: vec!["*".into()],
        deny: rules.deny.clone(),
        allow_private: rules.allow_private,
    };
    let denied = deny_only.decide(host, port);
    if !denied.allowed {
        return Err(refuse(format!(
            "`{host}:{port}` is refused by {} of risk profile `{profile}`, and deny wins over \
             allow: remove that pattern from its denied domains first",
            denied.rule
        )));
    }
    let now = rules.decide(host, port);
    if now.allowed {
        return Err(refuse(format!(
            "`{host}:{port}` is already allowed by {} of risk profile `{profile}`; it was refused \
             for another reason (its address, say: private addresses need allow_private)",
            now.rule
        )));
    }
    let host = warren_types::network::normalize_host(host);
    // An IPv6 literal is written in brackets in a pattern.
    let pattern = if host.contains(':') {
        format!("[{host}]")
    } else {
        host.clone()
    };
    DomainPattern::parse(&pattern)
        .map_err(|e| refuse(format!("`{host}` cannot be allowed: \"{pattern}\" {e}")))?;
    let mut next = rules.clone();
    next.allow.push(pattern.clone());
    if !next.decide(&host, port).allowed {
        return Err(ApiError::new(
            ErrorCode::Internal,
            format!("adding \"{pattern}\" to allow would still refuse `{host}:{port}`"),
        ));
    }
    let edit = ProfileEdit {
        kind: ProfileKind::Risk,
        name: profile.clone(),
        changes: vec![FieldChange {
            field: "network".into(),
            value: Some(FieldValue::Domains(next)),
        }],
    };
    Ok((profile, pattern, edit))
}

impl Warren {
    /// What "Allow this domain" on a refused connection of `agent` to `host:port` would change:
    /// the agent's risk profile with `host` added to its `allow` list (see
    /// [`AllowDomainPreview`]). Nothing is written; refused in words when the agent's network
    /// is not by domain or a `deny` pattern refuses the host.
    pub fn preview_allow_domain(
        &self,
        agent: &str,
        host: &str,
        port: u16,
    ) -> Result<AllowDomainPreview, ApiError> {
        let cfg = self.load()?.config;
        let (profile, pattern, edit) = allow_domain_edit(&cfg, agent, host, port)?;
        let preview = self.preview_profile_edit(&edit)?;
        let used_by = cfg
            .agents
            .iter()
            .filter(|(_, a)| a.risk_profile == profile)
            .map(|(alias, _)| alias.clone())
            .collect();
        Ok(AllowDomainPreview {
            agent: agent.to_string(),
            profile,
            used_by,
            pattern,
            edit,
            preview,
        })
    }

    /// Saves what [`Warren::preview_allow_domain`] shows, built again from the config as it is
    /// now (an edit saved since is kept): only the `allow` list changes, comments stay.
    pub fn allow_domain(
        &self,
        agent: &str,
        host: &str,
        port: u16,
    ) -> Result<ProfileView, ApiError> {
        let cfg = self.load()?.config;
        let (_, pattern, edit) = allow_domain_edit(&cfg, agent, host, port)?;
        let view = self.save_profile_edit(&edit)?;
        tracing::info!(agent, pattern = %pattern, profile = %edit.name, "domain allowed");
        Ok(view)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profiles::DiffKind;

    const CONFIG: &str = r#"# Network test install.
schema_version = 1

[agents.web]
risk_profile = "net"

[agents.helper]
risk_profile = "net"

[agents.quiet]
risk_profile = "off"

[agents.wide]
risk_profile = "open"

# Builders reach their registries only.
[risk_profiles.net]
level = "full"
network = { allow = ["crates.io"], deny = ["*.evil.example"] } # keep it short

[risk_profiles.off]
level = "readonly" # no network at all

[risk_profiles.open]
network = true
"#;

    fn added(p: &AllowDomainPreview) -> Vec<&str> {
        p.preview
            .diff
            .iter()
            .filter(|l| l.kind == DiffKind::Add)
            .map(|l| l.text.as_str())
            .collect()
    }

    #[test]
    fn allowing_a_refused_domain_previews_the_profile_edit_then_saves_it_with_comments_kept() {
        let (dir, w) = crate::test_support::install(CONFIG);
        let path = dir.path().join("config.toml");
        let p = w.preview_allow_domain("web", "Example.COM", 443).unwrap();
        assert_eq!(p.profile, "net");
        assert_eq!(p.pattern, "example.com");
        assert_eq!(p.used_by, ["helper", "web"]);
        assert!(p.preview.errors.is_empty(), "{:?}", p.preview.errors);
        assert_eq!(
            added(&p),
            [
                r#"network = { allow = ["crates.io", "example.com"], deny = ["*.evil.example"] } # keep it short"#
            ]
        );
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            CONFIG,
            "the preview wrote the file"
        );

        let view = w.allow_domain("web", "Example.COM", 443).unwrap();
        assert_eq!(view.name, "net");
        let saved = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            saved,
            CONFIG.replace(
                r#"allow = ["crates.io"]"#,
                r#"allow = ["crates.io", "example.com"]"#
            ),
            "only the allow list changed"
        );
        let net = &w.load().unwrap().config.risk_profiles["net"].network;
        let rules = net.domains().unwrap();
        assert!(rules.decide("example.com", 443).allowed);
        assert!(
            rules.decide("example.com", 80).allowed,
            "the port is left out"
        );

        // Allowed now: asking again is refused in words, the file stays.
        let err = w.allow_domain("web", "example.com", 443).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidArgument);
        assert!(
            err.message
                .contains(r#"already allowed by allow "example.com""#),
            "{}",
            err.message
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), saved);
    }

    #[test]
    fn a_denied_host_and_an_agent_whose_network_is_not_by_domain_are_refused() {
        let (dir, w) = crate::test_support::install(CONFIG);
        let path = dir.path().join("config.toml");
        let err = w
            .preview_allow_domain("web", "cdn.evil.example", 443)
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidArgument);
        assert!(
            err.message
                .contains(r#"refused by deny "*.evil.example" of risk profile `net`"#),
            "{}",
            err.message
        );
        assert!(w.allow_domain("web", "cdn.evil.example", 443).is_err());
        for (agent, words) in [
            ("quiet", "is off, not by domain"),
            ("wide", "is on, not by domain"),
        ] {
            let err = w
                .preview_allow_domain(agent, "example.com", 443)
                .unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidArgument);
            assert!(err.message.contains(words), "{}", err.message);
            assert!(w.allow_domain(agent, "example.com", 443).is_err());
        }
        let err = w
            .preview_allow_domain("wbe", "example.com", 443)
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::NotFound);
        assert!(
            err.message.contains("did you mean `web`"),
            "{}",
            err.message
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), CONFIG);
    }

    #[test]
    fn a_network_sub_table_written_one_item_a_line_gets_a_line_of_its_own() {
        let cfg = r#"[agents.web]
risk_profile = "net"

[risk_profiles.net]
level = "full"

# What the build fetches.
[risk_profiles.net.network]
allow = [
  "crates.io",        # the index
  "static.crates.io", # the downloads
]
allow_private = true
"#;
        let (dir, w) = crate::test_support::install(cfg);
        let p = w.preview_allow_domain("web", "fd00::1", 8080).unwrap();
        assert_eq!(p.pattern, "[fd00::1]");
        assert_eq!(added(&p), [r#"  "[fd00::1]","#]);
        w.allow_domain("web", "fd00::1", 8080).unwrap();
        let saved = std::fs::read_to_string(dir.path().join("config.toml")).unwrap();
        assert_eq!(
            saved,
            cfg.replace(
                "  \"static.crates.io\", # the downloads\n",
                "  \"static.crates.io\", # the downloads\n  \"[fd00::1]\",\n"
            )
        );
    }
}
