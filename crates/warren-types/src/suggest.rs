//! "Did you mean": the known name closest to a misspelt one, by edit distance (insertions,
//! deletions, substitutions and swaps of two neighbours each count one). One helper for config
//! keys, profile, provider and agent names, and the CLI's word arguments.

/// Edits needed to turn `a` into `b` (optimal string alignment distance, case-sensitive).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // Three rows: two back (for swaps), the previous one and the current one.
    let mut back2 = vec![0usize; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0usize; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(back2[j - 2] + 1);
            }
            cur[j] = d;
        }
        std::mem::swap(&mut back2, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// The candidate closest to `word` when it is close enough to be a slip of the keyboard: at
/// most one edit for words of up to four characters, two up to eight, three beyond. Ties go to
/// the first candidate. `None` when `word` itself is a candidate or nothing is close.
pub fn did_you_mean<'a, I, S>(word: &str, candidates: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a S>,
    S: AsRef<str> + ?Sized + 'a,
{
    let limit = match word.chars().count() {
        0 => return None,
        1..=4 => 1,
        5..=8 => 2,
        _ => 3,
    };
    let mut best: Option<(usize, &'a str)> = None;
    for c in candidates {
        let c = c.as_ref();
        if c == word {
            return None;
        }
        let d = edit_distance(&word.to_lowercase(), &c.to_lowercase());
        if d <= limit && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

/// ` (did you mean `x`?)` for a close candidate, or an empty string: ready to append to a
/// message that names an unknown word.
pub fn did_you_mean_hint<'a, I, S>(word: &str, candidates: I) -> String
where
    I: IntoIterator<Item = &'a S>,
    S: AsRef<str> + ?Sized + 'a,
{
    did_you_mean(word, candidates)
        .map(|c| format!(" (did you mean `{c}`?)"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(edit_distance("", ""), 0);
        assert_eq!(edit_distance("abc", ""), 3);
        assert_eq!(edit_distance("risk_profle", "risk_profile"), 1);
        assert_eq!(edit_distance("balancd", "balanced"), 1);
        assert_eq!(edit_distance("aprove", "approve"), 1);
        // A swap of neighbours is one edit.
        assert_eq!(edit_distance("asisstant", "assistant"), 1);
        assert_eq!(edit_distance("ca", "abc"), 3);
        assert_eq!(edit_distance("teh", "the"), 1);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    #[test]
    fn suggestions() {
        let keys = ["workspace_only", "allowed_roots", "level"];
        assert_eq!(did_you_mean("workspace_onl", &keys), Some("workspace_only"));
        assert_eq!(did_you_mean("levl", &keys), Some("level"));
        assert_eq!(did_you_mean("LEVEL", &keys), Some("level"));
        assert_eq!(did_you_mean("network", &keys), None);
        assert_eq!(did_you_mean("level", &keys), None);
        assert_eq!(did_you_mean("", &keys), None);
        let agents = vec!["assistant".to_string(), "reviewer".to_string()];
        assert_eq!(did_you_mean("asistant", &agents), Some("assistant"));
        assert_eq!(
            did_you_mean_hint("reviwer", &agents),
            " (did you mean `reviewer`?)"
        );
        assert_eq!(did_you_mean_hint("zzz", &agents), "");
        // Short words allow one slip only.
        assert_eq!(did_you_mean("ab", &["xy"]), None);
    }
}
