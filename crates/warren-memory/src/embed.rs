//! Embedders turn text into vectors for Qdrant and for hybrid recall. The built-in `local`
//! embedder is deterministic and offline: feature hashing of words and word pairs (FNV-1a),
//! sublinear term frequency, L2-normalised. Other providers are injected by the runtime.

use async_trait::async_trait;

use crate::error::MemoryError;

/// Dimensions of the local embedder when the config does not say.
pub const DEFAULT_LOCAL_DIMENSIONS: usize = 256;

/// Turns texts into vectors of a fixed dimension.
#[async_trait]
pub trait Embedder: Send + Sync {
    /// Vector length.
    fn dimensions(&self) -> usize;
    /// A name for messages (`local`, `openai.small`, ...).
    fn name(&self) -> String;
    /// One vector per text, in order.
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, MemoryError>;
}

/// The built-in deterministic offline embedder.
#[derive(Debug, Clone, Copy)]
pub struct LocalEmbedder {
    dims: usize,
}

impl LocalEmbedder {
    /// An embedder producing `dims`-long vectors (at least 8).
    pub fn new(dims: usize) -> Self {
        LocalEmbedder { dims: dims.max(8) }
    }

    /// Embeds one text (pure; the same text always gives the same vector).
    pub fn embed_one(&self, text: &str) -> Vec<f32> {
        let words: Vec<String> = text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect();
        let mut v = vec![0f32; self.dims];
        let mut add = |feature: &str, weight: f32| {
            let h = fnv1a(feature.as_bytes());
            let idx = (h % self.dims as u64) as usize;
            let sign = if h >> 63 == 0 { 1.0 } else { -1.0 };
            v[idx] += sign * weight;
        };
        for w in &words {
            add(w, 1.0);
        }
        for pair in words.windows(2) {
            add(&format!("{} {}", pair[0], pair[1]), 0.5);
        }
        for x in v.iter_mut() {
            *x = x.signum() * (1.0 + x.abs()).ln();
        }
        normalize(&mut v);
        v
    }
}

#[async_trait]
impl Embedder for LocalEmbedder {
    fn dimensions(&self) -> usize {
        self.dims
    }
    fn name(&self) -> String {
        "local".into()
    }
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, MemoryError> {
        Ok(texts.iter().map(|t| self.embed_one(t)).collect())
    }
}

/// 64-bit FNV-1a.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Scales a vector to unit length (a zero vector stays zero).
pub fn normalize(v: &mut [f32]) {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if n > 0.0 {
        for x in v.iter_mut() {
            *x /= n;
        }
    }
}

/// Cosine similarity of two equally long vectors (0 when either is zero).
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let (mut dot, mut na, mut nb) = (0f32, 0f32, 0f32);
    for (x, y) in a.iter().zip(b) {
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na.sqrt() * nb.sqrt())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_normalised() {
        let e = LocalEmbedder::new(64);
        let a = e.embed_one("The cat sat on the mat");
        assert_eq!(a, e.embed_one("the CAT sat, on the mat!"));
        assert_eq!(a.len(), 64);
        let n: f32 = a.iter().map(|x| x * x).sum();
        assert!((n - 1.0).abs() < 1e-4);
        assert!(e.embed_one("").iter().all(|x| *x == 0.0));
    }

    #[test]
    fn similar_texts_are_closer() {
        let e = LocalEmbedder::new(256);
        let q = e.embed_one("favourite colour blue");
        let near = e.embed_one("my favourite colour is blue");
        let far = e.embed_one("the train leaves at noon from platform four");
        assert!(cosine(&q, &near) > cosine(&q, &far) + 0.2);
    }

    #[test]
    fn fnv_reference_values() {
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
