//! Query text handling shared by the backends: tokenising free text into search terms and
//! building FTS5 expressions that carry a recall's category and session filters inside the
//! index.

/// Most terms taken from one query.
pub const MAX_QUERY_TERMS: usize = 32;

/// Splits text into lowercase alphanumeric terms, deduplicated, in order of first appearance.
pub fn query_terms(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in text.split(|c: char| !c.is_alphanumeric()) {
        if word.is_empty() {
            continue;
        }
        let w = word.to_lowercase();
        if !out.contains(&w) {
            out.push(w);
            if out.len() == MAX_QUERY_TERMS {
                break;
            }
        }
    }
    out
}

/// The FTS5 scope token of the rows of one category (exact bytes, hex-encoded). Each agent
/// has an index of its own, so the token does not name the agent.
pub fn category_token(category: &str) -> String {
    let mut s = String::from("c");
    for b in category.as_bytes() {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// The FTS5 scope token of rows stored in a session (exact bytes, hex-encoded).
pub fn session_token(session: &str) -> String {
    let mut s = String::from("s");
    for b in session.as_bytes() {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// `"t1" OR "t2"`: any term matches, BM25 ranks rows matching more and rarer terms first.
pub fn fts_terms_expr(terms: &[String]) -> String {
    terms
        .iter()
        .map(|t| format!("\"{}\"", t.replace('"', "\"\"")))
        .collect::<Vec<_>>()
        .join(" OR ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_are_words() {
        assert_eq!(
            query_terms("Hello, hello WORLD!  café-au_lait \"x\""),
            vec!["hello", "world", "café", "au", "lait", "x"]
        );
        assert!(query_terms(" ,;:*\"() ").is_empty());
        assert_eq!(query_terms(&"a ".repeat(100)).len(), 1);
    }

    #[test]
    fn tokens_are_single_fts_tokens() {
        assert_eq!(category_token("Core"), "c436f7265");
        assert_eq!(category_token(""), "c");
        assert_eq!(session_token("s1"), "s7331");
        for t in [category_token("café / x"), session_token("a b\"c")] {
            assert!(t.chars().all(|c| c.is_ascii_alphanumeric()), "{t}");
        }
        assert_ne!(category_token("core"), category_token("Core"));
    }

    #[test]
    fn expressions_quote_terms() {
        let t = vec!["a".to_string(), "b\"c".to_string()];
        assert_eq!(fts_terms_expr(&t), "\"a\" OR \"b\"\"c\"");
    }
}
