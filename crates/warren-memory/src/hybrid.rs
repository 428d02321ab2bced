//! Hybrid recall for the SQL stores when an embedder is configured: the keyword candidates
//! (scoped BM25 / `ts_rank`, over-fetched) and the most recent scoped rows form a pool, every
//! pool row is scored `KEYWORD_WEIGHT * keyword + (1 - KEYWORD_WEIGHT) * cosine`, best first.
//! The pool comes from scoped queries, so grants still filter before ranking and the limit.

use std::collections::HashMap;

use uuid::Uuid;

use crate::embed::{cosine, Embedder};
use crate::error::MemoryError;
use crate::grants::RecallScope;
use crate::traits::MemoryStore;
use crate::types::{MemoryEntry, RecallQuery};

/// Share of the keyword rank in the hybrid score.
pub const KEYWORD_WEIGHT: f64 = 0.6;
/// Keyword candidates fetched per requested row.
pub const KEYWORD_OVERFETCH: usize = 4;
/// Recent rows added to the pool per requested row.
pub const RECENT_OVERFETCH: usize = 2;

/// Merges keyword and recent candidates with their vector similarities into the final list.
/// Keyword scores are normalised by the best one; rows with neither a keyword match nor a
/// positive similarity are dropped.
pub fn merge(
    keyword: Vec<MemoryEntry>,
    recent: Vec<MemoryEntry>,
    similarity: &HashMap<Uuid, f32>,
    limit: usize,
) -> Vec<MemoryEntry> {
    let best = keyword
        .iter()
        .filter_map(|r| r.score)
        .fold(0.0f64, f64::max);
    let mut pool: Vec<(f64, MemoryEntry)> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (is_kw, r) in keyword
        .into_iter()
        .map(|r| (true, r))
        .chain(recent.into_iter().map(|r| (false, r)))
    {
        if !seen.insert(r.id) {
            continue;
        }
        let kw = if is_kw && best > 0.0 {
            r.score.unwrap_or(0.0).max(0.0) / best
        } else {
            0.0
        };
        let sim = f64::from(similarity.get(&r.id).copied().unwrap_or(0.0)).max(0.0);
        if kw <= 0.0 && sim <= 0.0 {
            continue;
        }
        pool.push((KEYWORD_WEIGHT * kw + (1.0 - KEYWORD_WEIGHT) * sim, r));
    }
    pool.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then(b.1.updated_at.cmp(&a.1.updated_at))
    });
    pool.into_iter()
        .take(limit)
        .map(|(s, mut r)| {
            r.score = Some(s);
            r
        })
        .collect()
}

/// Runs a hybrid recall on `store` under `scope`.
pub async fn recall(
    store: &dyn MemoryStore,
    embedder: &dyn Embedder,
    scope: &RecallScope,
    q: &RecallQuery,
) -> Result<Vec<MemoryEntry>, MemoryError> {
    let kw_q = RecallQuery {
        limit: q.limit.saturating_mul(KEYWORD_OVERFETCH),
        ..q.clone()
    };
    let recent_q = RecallQuery {
        query: String::new(),
        limit: q.limit.saturating_mul(RECENT_OVERFETCH),
        ..q.clone()
    };
    let keyword = store.recall_for_agents(scope, &kw_q).await?;
    let recent = store.recall_for_agents(scope, &recent_q).await?;
    let mut texts = vec![q.query.clone()];
    let ids: Vec<Uuid> = keyword.iter().chain(&recent).map(|r| r.id).collect();
    texts.extend(
        keyword
            .iter()
            .chain(&recent)
            .map(|r| format!("{} {}", r.key, r.content)),
    );
    let vectors = embedder.embed(&texts).await?;
    let mut similarity = HashMap::new();
    if let Some((qv, rest)) = vectors.split_first() {
        for (id, v) in ids.iter().zip(rest) {
            similarity.insert(*id, cosine(qv, v));
        }
    }
    Ok(merge(keyword, recent, &similarity, q.limit))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::parse_ts;

    fn row(n: u128, score: Option<f64>) -> MemoryEntry {
        let t = parse_ts("2026-01-01T00:00:00Z").unwrap() + chrono::Duration::seconds(n as i64);
        MemoryEntry {
            id: Uuid::from_u128(n),
            agent_id: Uuid::nil(),
            agent: "a".into(),
            key: format!("k{n}"),
            content: String::new(),
            category: "core".into(),
            session_id: None,
            importance: 0.5,
            created_at: t,
            updated_at: t,
            score,
        }
    }

    #[test]
    fn blends_keyword_and_vector_scores() {
        let keyword = vec![row(1, Some(4.0)), row(2, Some(2.0))];
        let recent = vec![row(3, None), row(2, None), row(4, None)];
        let sims: HashMap<Uuid, f32> = [
            (Uuid::from_u128(1), 0.0),
            (Uuid::from_u128(2), 1.0),
            (Uuid::from_u128(3), 0.9),
            (Uuid::from_u128(4), 0.0),
        ]
        .into_iter()
        .collect();
        let out = merge(keyword, recent, &sims, 10);
        let ids: Vec<u128> = out.iter().map(|r| r.id.as_u128()).collect();
        // 2: 0.6*0.5 + 0.4*1.0 = 0.70; 1: 0.6; 3: 0.36; 4 has neither and is dropped.
        assert_eq!(ids, vec![2, 1, 3]);
        assert!((out[0].score.unwrap() - 0.7).abs() < 1e-9);
        assert_eq!(merge(vec![row(1, Some(1.0))], vec![], &sims, 0).len(), 0);
    }
}
