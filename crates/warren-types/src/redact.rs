//! The secrets this process holds, and their removal from text that leaves it (docs/security.md,
//! "Secrets in text"). Every place that obtains a secret value (a provider key from the
//! environment or the secret store, a memory server's key or password) registers it here; every
//! place where text goes out (turn events, tool results entering a model's history, provider
//! errors, log lines) passes it through [`redact`]. Whatever echoed the secret (a provider's 401
//! body, an MCP server's error, a command's output), the text carries [`REDACTED`] instead.
//!
//! Values shorter than [`MIN_SECRET_LEN`] are not registered: they would mask ordinary words
//! and carry little to guess from. The registry only grows; a process holds few secrets.

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::RwLock;

/// What a secret becomes in text.
pub const REDACTED: &str = "[redacted]";

/// The shortest value treated as a secret.
pub const MIN_SECRET_LEN: usize = 8;

static SECRETS: RwLock<Vec<String>> = RwLock::new(Vec::new());
static ANY: AtomicBool = AtomicBool::new(false);

/// Registers `secret` (surrounding white space ignored), and its percent-encoded form when that
/// differs (a key inside a URL). Short values are ignored.
pub fn register(secret: &str) {
    let secret = secret.trim();
    if secret.chars().count() < MIN_SECRET_LEN {
        return;
    }
    let mut forms = vec![secret.to_string()];
    let encoded = percent_encode(secret);
    if encoded != secret {
        forms.push(encoded);
    }
    let mut all = SECRETS
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    for f in forms {
        if !all.contains(&f) {
            all.push(f);
        }
    }
    // Longest first: a secret that contains another is replaced whole.
    all.sort_by_key(|s| std::cmp::Reverse(s.len()));
    ANY.store(true, Ordering::Release);
}

/// Words that mark an environment variable's name as holding a credential (an MCP server's
/// `env`): such a value is registered as a secret when obtained and hidden on screen.
pub const CREDENTIAL_WORDS: &[&str] = &[
    "KEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "AUTH",
    "CREDENTIAL",
];

/// Whether the variable `name` says it holds a credential (any case).
pub fn names_credential(name: &str) -> bool {
    let name = name.to_ascii_uppercase();
    CREDENTIAL_WORDS.iter().any(|w| name.contains(w))
}

/// `text` with every registered secret replaced by [`REDACTED`] (borrowed when none occurs).
pub fn redact(text: &str) -> Cow<'_, str> {
    if !ANY.load(Ordering::Acquire) {
        return Cow::Borrowed(text);
    }
    let all = SECRETS
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut out: Cow<'_, str> = Cow::Borrowed(text);
    for s in all.iter() {
        if out.contains(s.as_str()) {
            out = Cow::Owned(out.replace(s.as_str(), REDACTED));
        }
    }
    out
}

/// [`redact`] in place.
pub fn redact_string(text: &mut String) {
    if let Cow::Owned(clean) = redact(text) {
        *text = clean;
    }
}

/// Whether `text` holds a registered secret.
pub fn holds_secret(text: &str) -> bool {
    matches!(redact(text), Cow::Owned(_))
}

fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_variable_names_a_credential_by_its_words_in_any_case() {
        for n in [
            "API_KEY",
            "github_token",
            "DbPassword",
            "BASIC_AUTH",
            "AWS_CREDENTIALS",
        ] {
            assert!(names_credential(n), "{n}");
        }
        for n in ["LOG_LEVEL", "PATH", "LANG", ""] {
            assert!(!names_credential(n), "{n}");
        }
    }

    #[test]
    fn registered_secrets_leave_no_trace() {
        assert_eq!(redact("nothing here"), "nothing here");
        register("  sk-test-REDACT-0123456789  ");
        register("short");
        register("p@ss/word+with:stuff");
        let text = "HTTP 401: invalid key sk-test-REDACT-0123456789 (sk-test-REDACT-0123456789)";
        assert_eq!(
            redact(text),
            "HTTP 401: invalid key [redacted] ([redacted])"
        );
        assert!(matches!(redact("short words stay"), Cow::Borrowed(_)));
        assert_eq!(
            redact("postgres://u:p%40ss%2Fword%2Bwith%3Astuff@h/db"),
            "postgres://u:[redacted]@h/db"
        );
        let mut s = String::from("key=p@ss/word+with:stuff;");
        redact_string(&mut s);
        assert_eq!(s, "key=[redacted];");
        assert!(holds_secret("x sk-test-REDACT-0123456789 y"));
        assert!(!holds_secret("sk-test-REDACT-012345678"));
    }
}
