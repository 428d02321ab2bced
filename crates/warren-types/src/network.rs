//! A risk profile's `network`: off, open, or confined to domains through Warren's proxy, and
//! the domain patterns it names (docs/configuration.md "network", docs/security.md "Network").
//!
//! The one parser of a domain pattern lives here: the config validation and the proxy both
//! call [`DomainPattern::parse`], and the proxy's [`DomainRules::decide`] is the one decision.

use serde::{Deserialize, Serialize};
use std::fmt;

/// `network = false | true | { allow = [...], deny = [...], allow_private = false }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(untagged)]
pub enum NetworkAccess {
    /// `false`: no network at all; `true`: the network as the host has it.
    Switch(bool),
    /// Only the named domains, through Warren's proxy, every connection recorded.
    Domains(DomainRules),
}

impl Default for NetworkAccess {
    fn default() -> Self {
        NetworkAccess::Switch(false)
    }
}

impl From<bool> for NetworkAccess {
    fn from(on: bool) -> Self {
        NetworkAccess::Switch(on)
    }
}

impl NetworkAccess {
    /// `network = true`: the host's network, unfiltered.
    pub fn is_open(&self) -> bool {
        matches!(self, NetworkAccess::Switch(true))
    }

    /// `network = false`: no network at all.
    pub fn is_off(&self) -> bool {
        matches!(self, NetworkAccess::Switch(false))
    }

    /// The domain rules, when the network goes through the proxy.
    pub fn domains(&self) -> Option<&DomainRules> {
        match self {
            NetworkAccess::Domains(d) => Some(d),
            NetworkAccess::Switch(_) => None,
        }
    }

    /// Whether `self` reaches no further than `parent` (a delegated child's profile): off is
    /// within everything; everything is within `on`; domains are within domains when the
    /// child's every allow pattern is one of the parent's (or the parent allows `*`), the
    /// parent's every deny pattern is also the child's, and the child allows private addresses
    /// only when the parent does. Patterns are compared as parsed (`*.Example.com` is
    /// `*.example.com`).
    pub fn within(&self, parent: &NetworkAccess) -> bool {
        match (self, parent) {
            (NetworkAccess::Switch(false), _) | (_, NetworkAccess::Switch(true)) => true,
            (_, NetworkAccess::Switch(false)) | (NetworkAccess::Switch(true), _) => false,
            (NetworkAccess::Domains(c), NetworkAccess::Domains(p)) => {
                let canon = |list: &[String]| -> Option<Vec<String>> {
                    list.iter()
                        .map(|x| DomainPattern::parse(x).ok().map(|d| d.to_string()))
                        .collect()
                };
                let (Some(ca), Some(cd), Some(pa), Some(pd)) = (
                    canon(&c.allow),
                    canon(&c.deny),
                    canon(&p.allow),
                    canon(&p.deny),
                ) else {
                    return false;
                };
                (!c.allow_private || p.allow_private)
                    && (pa.iter().any(|x| x == "*") || ca.iter().all(|x| pa.contains(x)))
                    && pd.iter().all(|x| cd.contains(x))
            }
        }
    }

    /// A word for reports: `off`, `on` or `by domain`.
    pub fn label(&self) -> &'static str {
        match self {
            NetworkAccess::Switch(false) => "off",
            NetworkAccess::Switch(true) => "on",
            NetworkAccess::Domains(_) => "by domain",
        }
    }
}

/// The table form of `network`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(default, deny_unknown_fields)]
pub struct DomainRules {
    /// Domain patterns a connection may reach (`crates.io`, `*.npmjs.org`,
    /// `api.github.com:443`, `*`).
    pub allow: Vec<String>,
    /// Domain patterns refused even when an allow pattern matches (deny wins).
    pub deny: Vec<String>,
    /// Let connections reach loopback, link-local, private (RFC 1918), ULA and other
    /// non-public addresses, and names that resolve to them (off by default).
    pub allow_private: bool,
}

/// One parsed domain pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DomainPattern {
    /// What the host must be (lower case, no trailing dot).
    pub host: HostPattern,
    /// The one port allowed (`None`: any).
    pub port: Option<u16>,
}

/// The host part of a [`DomainPattern`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostPattern {
    /// `*`: every host.
    Any,
    /// `example.com`: exactly this host.
    Exact(String),
    /// `*.example.com`: every name below `example.com` (not `example.com` itself).
    Below(String),
}

impl fmt::Display for DomainPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.host {
            HostPattern::Any => write!(f, "*")?,
            HostPattern::Exact(h) => write!(f, "{h}")?,
            HostPattern::Below(h) => write!(f, "*.{h}")?,
        }
        if let Some(p) = self.port {
            write!(f, ":{p}")?;
        }
        Ok(())
    }
}

impl DomainPattern {
    /// Parses `host`, `*.host`, `*`, each optionally followed by `:port`; an IPv6 literal is
    /// written in brackets (`[fd00::1]:8080`). The error says what is wrong in words.
    pub fn parse(text: &str) -> Result<DomainPattern, String> {
        let t = text.trim();
        if t.is_empty() {
            return Err("an empty pattern matches nothing".into());
        }
        if t != text {
            return Err("has spaces around it".into());
        }
        if let Some(scheme) = t.find("://") {
            return Err(format!(
                "is a URL; write the host alone (`{}`)",
                host_of_url(&t[scheme + 3..])
            ));
        }
        if t.contains('/') {
            return Err("has a path; write the host alone".into());
        }
        let (host, port) = split_port(t)?;
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        let host = if host == "*" {
            HostPattern::Any
        } else if let Some(rest) = host.strip_prefix("*.") {
            check_name(rest)?;
            HostPattern::Below(rest.to_string())
        } else if host.contains('*') {
            return Err("`*` is allowed only alone or as the first label (`*.example.com`)".into());
        } else {
            if !host.starts_with('[') {
                check_name(&host)?;
            }
            HostPattern::Exact(
                host.trim_start_matches('[')
                    .trim_end_matches(']')
                    .to_string(),
            )
        };
        Ok(DomainPattern { host, port })
    }

    /// Whether `host` (as a client asked for it) and `port` match this pattern.
    pub fn matches(&self, host: &str, port: u16) -> bool {
        if self.port.is_some_and(|p| p != port) {
            return false;
        }
        let host = normalize_host(host);
        match &self.host {
            HostPattern::Any => true,
            HostPattern::Exact(h) => *h == host,
            HostPattern::Below(h) => host.len() > h.len() + 1 && host.ends_with(&format!(".{h}")),
        }
    }
}

/// A host as compared with patterns: lower case, no trailing dot, no IPv6 brackets.
pub fn normalize_host(host: &str) -> String {
    host.trim_end_matches('.')
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase()
}

fn host_of_url(rest: &str) -> &str {
    rest.split(['/', '?', '#']).next().unwrap_or(rest)
}

fn split_port(t: &str) -> Result<(&str, Option<u16>), String> {
    // `[v6]` or `[v6]:port`
    if let Some(inner) = t.strip_prefix('[') {
        let Some(end) = inner.find(']') else {
            return Err("an IPv6 address opened with `[` is not closed with `]`".into());
        };
        let host = &t[..end + 2];
        let after = &inner[end + 1..];
        return match after.strip_prefix(':') {
            None if after.is_empty() => Ok((host, None)),
            None => Err(format!("unexpected `{after}` after the address")),
            Some(p) => Ok((host, Some(parse_port(p)?))),
        };
    }
    match t.rsplit_once(':') {
        None => Ok((t, None)),
        Some((h, _)) if h.contains(':') => {
            Err("an IPv6 address is written in brackets (`[fd00::1]` or `[fd00::1]:443`)".into())
        }
        Some((h, p)) => Ok((h, Some(parse_port(p)?))),
    }
}

fn parse_port(p: &str) -> Result<u16, String> {
    match p.parse::<u16>() {
        Ok(0) | Err(_) => Err(format!("`{p}` is not a port (1 to 65535)")),
        Ok(n) => Ok(n),
    }
}

fn check_name(host: &str) -> Result<(), String> {
    if host.is_empty() {
        return Err("names no host".into());
    }
    if host.len() > 253 {
        return Err("is longer than a host name can be (253 characters)".into());
    }
    for label in host.split('.') {
        if label.is_empty() {
            return Err("has an empty label (`..`)".into());
        }
        if label.len() > 63 {
            return Err(format!("label `{label}` is longer than 63 characters"));
        }
        if let Some(c) = label
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || *c == '-' || *c == '_'))
        {
            return Err(format!(
                "`{c}` cannot be in a host name (letters, digits, `-`, `_` and `.`; write an internationalised name in its `xn--` form)"
            ));
        }
    }
    Ok(())
}

/// What the rules say of one host and port before any address is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DomainDecision {
    /// Whether the connection may go ahead (its address is checked next).
    pub allowed: bool,
    /// Which rule decided, in words: `deny "*.evil.com"`, `allow "crates.io"`, `no allow
    /// pattern matches`.
    pub rule: String,
}

impl DomainRules {
    /// Every pattern of `allow` and `deny` that does not parse, as (key, index, pattern,
    /// problem), for the config's validation.
    pub fn problems(&self) -> Vec<(&'static str, usize, String, String)> {
        let mut out = Vec::new();
        for (key, list) in [("allow", &self.allow), ("deny", &self.deny)] {
            for (i, p) in list.iter().enumerate() {
                if let Err(e) = DomainPattern::parse(p) {
                    out.push((key, i, p.clone(), e));
                }
            }
        }
        out
    }

    /// The one decision on a host and port: a matching `deny` pattern refuses, then a matching
    /// `allow` pattern admits, else refused. A pattern that does not parse matches nothing (the
    /// config's validation refuses such a file before it is used).
    pub fn decide(&self, host: &str, port: u16) -> DomainDecision {
        let first = |list: &'_ [String]| -> Option<String> {
            list.iter()
                .find(|p| {
                    DomainPattern::parse(p)
                        .map(|p| p.matches(host, port))
                        .unwrap_or(false)
                })
                .cloned()
        };
        if let Some(p) = first(&self.deny) {
            return DomainDecision {
                allowed: false,
                rule: format!("deny \"{p}\""),
            };
        }
        if let Some(p) = first(&self.allow) {
            return DomainDecision {
                allowed: true,
                rule: format!("allow \"{p}\""),
            };
        }
        DomainDecision {
            allowed: false,
            rule: "no allow pattern matches".into(),
        }
    }
}

/// Whether `ip` is an address a sandboxed agent may reach only with `allow_private`: anything
/// not globally routable (loopback, unspecified, private RFC 1918, carrier-grade NAT, link-local,
/// multicast, broadcast, documentation and benchmarking ranges, IPv6 unique-local and
/// link-local, and IPv4 addresses mapped or embedded into IPv6).
pub fn is_private(ip: std::net::IpAddr) -> bool {
    use std::net::IpAddr;
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            v4.is_loopback()
                || v4.is_unspecified()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_multicast()
                || v4.is_broadcast()
                || v4.is_documentation()
                || o[0] == 0
                || (o[0] == 100 && (o[1] & 0xc0) == 64) // 100.64.0.0/10
                || (o[0] == 192 && o[1] == 0 && o[2] == 0) // 192.0.0.0/24
                || (o[0] == 198 && (o[1] & 0xfe) == 18) // 198.18.0.0/15
                || o[0] >= 240 // reserved
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_private(IpAddr::V4(v4));
            }
            let s = v6.segments();
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (s[0] & 0xfe00) == 0xfc00 // fc00::/7 unique local
                || (s[0] & 0xffc0) == 0xfe80 // fe80::/10 link local
                || (s[0] & 0xffc0) == 0xfec0 // fec0::/10 site local (deprecated)
                || (s[0] == 0x2001 && s[1] == 0x0db8) // documentation
                || (s[0] == 0x0064 && s[1] == 0xff9b) // NAT64 embeds an IPv4 address
                || s[0] == 0x2002 // 6to4 embeds an IPv4 address
                || (s[0..6] == [0, 0, 0, 0, 0, 0]) // IPv4-compatible (deprecated)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(allow: &[&str], deny: &[&str]) -> DomainRules {
        DomainRules {
            allow: allow.iter().map(std::string::ToString::to_string).collect(),
            deny: deny.iter().map(std::string::ToString::to_string).collect(),
            allow_private: false,
        }
    }

    #[test]
    fn patterns_parse_and_match() {
        let p = DomainPattern::parse("crates.io").unwrap();
        assert!(p.matches("crates.io", 443));
        assert!(p.matches("CRATES.IO.", 80));
        assert!(!p.matches("static.crates.io", 443));
        assert!(!p.matches("evilcrates.io", 443));
        let p = DomainPattern::parse("*.npmjs.org").unwrap();
        assert!(p.matches("registry.npmjs.org", 443));
        assert!(p.matches("a.b.npmjs.org", 443));
        assert!(!p.matches("npmjs.org", 443));
        assert!(!p.matches("xnpmjs.org", 443));
        let p = DomainPattern::parse("api.github.com:443").unwrap();
        assert!(p.matches("api.github.com", 443));
        assert!(!p.matches("api.github.com", 80));
        let p = DomainPattern::parse("[fd00::1]:8080").unwrap();
        assert!(p.matches("[fd00::1]", 8080));
        assert!(p.matches("fd00::1", 8080));
        assert!(DomainPattern::parse("*")
            .unwrap()
            .matches("anything.example", 1));
        assert_eq!(
            DomainPattern::parse("*.Example.COM:8443")
                .unwrap()
                .to_string(),
            "*.example.com:8443"
        );
    }

    #[test]
    fn bad_patterns_say_what_is_wrong() {
        for (text, words) in [
            ("", "empty"),
            (" crates.io", "spaces"),
            (
                "https://crates.io/api",
                "is a URL; write the host alone (`crates.io`)",
            ),
            ("crates.io/api", "path"),
            ("crates.io:0", "not a port"),
            ("crates.io:99999", "not a port"),
            ("crates.io:http", "not a port"),
            ("a*.example.com", "`*` is allowed only"),
            ("foo..bar", "empty label"),
            ("bücher.de", "xn--"),
            ("fd00::1", "brackets"),
            ("[fd00::1", "not closed"),
        ] {
            let e = DomainPattern::parse(text).unwrap_err();
            assert!(e.contains(words), "{text:?}: {e}");
        }
    }

    #[test]
    fn deny_wins_and_nothing_matching_is_refused() {
        let r = rules(&["*.example.com", "crates.io"], &["secret.example.com"]);
        assert!(r.decide("api.example.com", 443).allowed);
        assert_eq!(
            r.decide("api.example.com", 443).rule,
            "allow \"*.example.com\""
        );
        let d = r.decide("secret.example.com", 443);
        assert!(!d.allowed);
        assert_eq!(d.rule, "deny \"secret.example.com\"");
        let d = r.decide("pypi.org", 443);
        assert!(!d.allowed);
        assert_eq!(d.rule, "no allow pattern matches");
        assert_eq!(
            rules(&["ok.com", "bad url/x"], &["https://x.com"])
                .problems()
                .len(),
            2
        );
    }

    #[test]
    fn private_addresses_are_recognised() {
        for a in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "64:ff9b::7f00:1",
            "2002:7f00:1::",
            "224.0.0.1",
            "255.255.255.255",
        ] {
            assert!(is_private(a.parse().unwrap()), "{a}");
        }
        for a in [
            "93.184.216.34",
            "1.1.1.1",
            "2606:4700:4700::1111",
            "8.8.8.8",
        ] {
            assert!(!is_private(a.parse().unwrap()), "{a}");
        }
    }

    #[test]
    fn a_child_reaches_no_further_than_its_parent() {
        let off = NetworkAccess::Switch(false);
        let on = NetworkAccess::Switch(true);
        let d = |allow: &[&str], deny: &[&str], private: bool| {
            NetworkAccess::Domains(DomainRules {
                allow: allow.iter().map(std::string::ToString::to_string).collect(),
                deny: deny.iter().map(std::string::ToString::to_string).collect(),
                allow_private: private,
            })
        };
        let parent = d(&["crates.io", "*.npmjs.org"], &["bad.npmjs.org"], false);
        assert!(off.within(&parent) && parent.within(&on) && off.within(&off));
        assert!(!on.within(&parent) && !parent.within(&off));
        assert!(d(&["CRATES.IO"], &["bad.npmjs.org"], false).within(&parent));
        assert!(!d(&["pypi.org"], &["bad.npmjs.org"], false).within(&parent));
        assert!(
            !d(&["crates.io"], &[], false).within(&parent),
            "the parent's deny is dropped"
        );
        assert!(!d(&["crates.io"], &["bad.npmjs.org"], true).within(&parent));
        assert!(d(&["pypi.org"], &[], false).within(&d(&["*"], &[], false)));
    }

    #[test]
    fn the_config_forms_read_as_written() {
        let off: NetworkAccess = serde_json::from_str("false").unwrap();
        assert!(off.is_off());
        let on: NetworkAccess = serde_json::from_str("true").unwrap();
        assert!(on.is_open());
        let d: NetworkAccess =
            serde_json::from_str(r#"{"allow":["crates.io"],"allow_private":true}"#).unwrap();
        assert_eq!(d.domains().unwrap().allow, vec!["crates.io".to_string()]);
        assert!(d.domains().unwrap().allow_private);
        assert_eq!(serde_json::to_string(&on).unwrap(), "true");
        assert!(serde_json::from_str::<NetworkAccess>(r#"{"alow":[]}"#).is_err());
    }
}
