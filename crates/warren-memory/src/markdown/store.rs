//! One agent's Markdown memory: `<workspace>/MEMORY.md` holds category `core`, and
//! `<workspace>/memory/YYYY-MM-DD.md` (UTC day of first store) everything else.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use tokio::sync::Mutex;
use uuid::Uuid;

use super::files::Workspace;
use super::format::{parse, render, MdEntry};
use crate::error::MemoryError;
use crate::text::query_terms;
use crate::types::{ListQuery, MemoryEntry, NewMemory, Page, RecallQuery, CORE_CATEGORY};

/// The file of category `core`, relative to the workspace.
const CORE_FILE: &str = "MEMORY.md";
/// The folder of the daily files, relative to the workspace.
const DAILY_DIR: &str = "memory";

/// A parsed memory file: its lines, each an entry or text kept verbatim.
struct MdFile {
    /// Relative to the workspace.
    rel: PathBuf,
    lines: Vec<Line>,
    dirty: bool,
}

enum Line {
    Entry(MdEntry),
    Text(String),
}

/// The Markdown memory of one agent (one workspace).
pub struct MarkdownStore {
    alias: String,
    workspace: PathBuf,
    lock: Mutex<()>,
}

/// The agent UUID a Markdown store reports (derived from the alias: files carry no UUID).
pub fn markdown_agent_id(alias: &str) -> Uuid {
    Uuid::new_v5(
        &Uuid::NAMESPACE_OID,
        format!("warren-markdown:{alias}").as_bytes(),
    )
}

impl MarkdownStore {
    /// A store over `workspace` for `alias` (files are created on the first store).
    pub fn new(alias: impl Into<String>, workspace: impl Into<PathBuf>) -> Self {
        MarkdownStore {
            alias: alias.into(),
            workspace: workspace.into(),
            lock: Mutex::new(()),
        }
    }

    /// The agent alias this store belongs to.
    pub fn alias(&self) -> &str {
        &self.alias
    }

    /// The workspace holding the files.
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// `<workspace>/MEMORY.md`.
    pub fn core_file(&self) -> PathBuf {
        self.workspace.join(CORE_FILE)
    }

    /// `<workspace>/memory/YYYY-MM-DD.md` for a UTC day.
    pub fn daily_file(&self, day: DateTime<Utc>) -> PathBuf {
        self.workspace
            .join(DAILY_DIR)
            .join(format!("{}.md", day.format("%Y-%m-%d")))
    }

    /// The file an entry goes to, relative to the workspace.
    fn target_file(category: &str, created: DateTime<Utc>) -> PathBuf {
        if category == CORE_CATEGORY {
            PathBuf::from(CORE_FILE)
        } else {
            Path::new(DAILY_DIR).join(format!("{}.md", created.format("%Y-%m-%d")))
        }
    }

    fn read_file(ws: &Workspace, rel: &Path) -> Result<Option<MdFile>, MemoryError> {
        let Some(text) = ws.read(rel)? else {
            return Ok(None);
        };
        let lines = text
            .lines()
            .map(|l| match parse(l) {
                Some(e) => Line::Entry(e),
                None => Line::Text(l.to_string()),
            })
            .collect();
        Ok(Some(MdFile {
            rel: rel.to_path_buf(),
            lines,
            dirty: false,
        }))
    }

    /// Every memory file, opened inside the workspace without following links (a planted link
    /// is an error naming it).
    ///
    /// The returned workspace holds an exclusive lock on the workspace directory until it is
    /// dropped: a read-modify-write by another process (or another store of the same files)
    /// waits instead of losing an update.
    fn load(&self) -> Result<(Workspace, Vec<MdFile>), MemoryError> {
        let ws = Workspace::open(&self.workspace)?;
        ws.lock()?;
        let mut files = Vec::new();
        if let Some(f) = Self::read_file(&ws, Path::new(CORE_FILE))? {
            files.push(f);
        }
        for rel in ws.list_md(Path::new(DAILY_DIR))? {
            if let Some(f) = Self::read_file(&ws, &rel)? {
                files.push(f);
            }
        }
        Ok((ws, files))
    }

    fn save(ws: &Workspace, files: &[MdFile]) -> Result<(), MemoryError> {
        for f in files.iter().filter(|f| f.dirty) {
            let mut text = String::new();
            for l in &f.lines {
                match l {
                    Line::Entry(e) => text.push_str(&render(e)),
                    Line::Text(t) => text.push_str(t),
                }
                text.push('\n');
            }
            ws.write_atomic(&f.rel, text.as_bytes())?;
        }
        Ok(())
    }

    fn entries(files: &[MdFile]) -> impl Iterator<Item = &MdEntry> {
        files.iter().flat_map(|f| {
            f.lines.iter().filter_map(|l| match l {
                Line::Entry(e) => Some(e),
                Line::Text(_) => None,
            })
        })
    }

    fn to_entry(&self, e: &MdEntry, score: Option<f64>) -> MemoryEntry {
        let agent_id = markdown_agent_id(&self.alias);
        MemoryEntry {
            id: Uuid::new_v5(&agent_id, e.key.as_bytes()),
            agent_id,
            agent: self.alias.clone(),
            key: e.key.clone(),
            content: e.content.clone(),
            category: e.category.clone(),
            session_id: e.session_id.clone(),
            importance: 0.5,
            created_at: e.created_at,
            updated_at: e.updated_at,
            score,
        }
    }

    /// Removes the entry with `key` from whichever file holds it; returns it.
    fn take(files: &mut [MdFile], key: &str) -> Option<(usize, usize, MdEntry)> {
        for (fi, f) in files.iter_mut().enumerate() {
            if let Some(li) = f
                .lines
                .iter()
                .position(|l| matches!(l, Line::Entry(e) if e.key == key))
            {
                if let Line::Entry(e) = f.lines.remove(li) {
                    f.dirty = true;
                    return Some((fi, li, e));
                }
            }
        }
        None
    }

    /// Stores rows (replacing by key), each in the file its category and first-store day pick.
    pub async fn store(
        &self,
        rows: &[NewMemory],
        now: DateTime<Utc>,
    ) -> Result<Vec<MemoryEntry>, MemoryError> {
        for r in rows {
            r.validate()?;
        }
        let _guard = self.lock.lock().await;
        let (ws, mut files) = self.load()?;
        let mut out = Vec::with_capacity(rows.len());
        for r in rows {
            let old = Self::take(&mut files, &r.key);
            let created = old.as_ref().map_or(now, |(_, _, e)| e.created_at);
            let entry = MdEntry {
                key: r.key.clone(),
                category: r.category.clone(),
                session_id: r.session_id.clone(),
                created_at: created,
                updated_at: now,
                content: r.content.clone(),
            };
            let target = Self::target_file(&r.category, created);
            let fi = match files.iter().position(|f| f.rel == target) {
                Some(fi) => fi,
                None => {
                    let title = if r.category == CORE_CATEGORY {
                        "# Memory".to_string()
                    } else {
                        format!("# {}", created.format("%Y-%m-%d"))
                    };
                    files.push(MdFile {
                        rel: target,
                        lines: vec![Line::Text(title), Line::Text(String::new())],
                        dirty: true,
                    });
                    files.len() - 1
                }
            };
            out.push(self.to_entry(&entry, None));
            let file = &mut files[fi];
            match old {
                Some((ofi, li, _)) if ofi == fi => file.lines.insert(li, Line::Entry(entry)),
                _ => file.lines.push(Line::Entry(entry)),
            }
            file.dirty = true;
        }
        Self::save(&ws, &files)?;
        Ok(out)
    }

    /// The entry with `key`.
    pub async fn get(&self, key: &str) -> Result<Option<MemoryEntry>, MemoryError> {
        let _guard = self.lock.lock().await;
        let (_ws, files) = self.load()?;
        let found = Self::entries(&files).find(|e| e.key == key);
        Ok(found.map(|e| self.to_entry(e, None)))
    }

    /// Keyword recall over this agent's entries (IDF-weighted term matches, then recency).
    pub async fn recall(&self, q: &RecallQuery) -> Result<Vec<MemoryEntry>, MemoryError> {
        let _guard = self.lock.lock().await;
        let (_ws, files) = self.load()?;
        let rows: Vec<&MdEntry> = Self::entries(&files)
            .filter(|e| q.category.as_ref().is_none_or(|c| &e.category == c))
            .filter(|e| q.session.is_none() || e.session_id == q.session)
            .collect();
        let terms = query_terms(&q.query);
        let mut scored: Vec<(Option<f64>, &MdEntry)> = if terms.is_empty() {
            rows.iter().map(|e| (None, *e)).collect()
        } else {
            let docs: Vec<Vec<String>> = rows
                .iter()
                .map(|e| words(&format!("{} {}", e.key, e.content)))
                .collect();
            let n = docs.len().max(1) as f64;
            let mut df: HashMap<&str, f64> = HashMap::new();
            for t in &terms {
                let c = docs.iter().filter(|d| d.contains(t)).count() as f64;
                df.insert(t.as_str(), c);
            }
            rows.iter()
                .zip(&docs)
                .filter_map(|(e, d)| {
                    let s: f64 = terms
                        .iter()
                        .filter(|t| d.contains(t))
                        .map(|t| (1.0 + n / df.get(t.as_str()).copied().unwrap_or(1.0)).ln())
                        .sum();
                    (s > 0.0).then_some((Some(s), *e))
                })
                .collect()
        };
        scored.sort_by(|a, b| {
            b.0.unwrap_or(0.0)
                .total_cmp(&a.0.unwrap_or(0.0))
                .then(b.1.updated_at.cmp(&a.1.updated_at))
        });
        scored.truncate(q.limit);
        Ok(scored
            .into_iter()
            .map(|(s, e)| self.to_entry(e, s))
            .collect())
    }

    /// This agent's entries, newest first, paginated.
    pub async fn list(&self, q: &ListQuery) -> Result<Page, MemoryError> {
        let all = self.all().await?;
        let mut rows: Vec<MemoryEntry> = all
            .into_iter()
            .filter(|e| q.category.as_ref().is_none_or(|c| &e.category == c))
            .filter(|e| q.session.is_none() || e.session_id == q.session)
            .collect();
        rows.sort_by(|a, b| b.updated_at.cmp(&a.updated_at).then(a.key.cmp(&b.key)));
        let total = rows.len() as u64;
        let start = usize::try_from(q.offset)
            .unwrap_or(usize::MAX)
            .min(rows.len());
        let mut page: Vec<MemoryEntry> = rows.drain(start..).collect();
        if let Some(l) = q.limit {
            page.truncate(usize::try_from(l).unwrap_or(usize::MAX));
        }
        Ok(Page::new(page, total, q))
    }

    /// The categories of this agent's entries, sorted, each once.
    pub async fn categories(&self) -> Result<Vec<String>, MemoryError> {
        let _guard = self.lock.lock().await;
        let (_ws, files) = self.load()?;
        let set: std::collections::BTreeSet<String> =
            Self::entries(&files).map(|e| e.category.clone()).collect();
        Ok(set.into_iter().collect())
    }

    /// Every entry, in file order.
    pub async fn all(&self) -> Result<Vec<MemoryEntry>, MemoryError> {
        let _guard = self.lock.lock().await;
        let (_ws, files) = self.load()?;
        Ok(Self::entries(&files)
            .map(|e| self.to_entry(e, None))
            .collect())
    }

    /// Removes the entry with `key`; `true` when one was removed.
    pub async fn forget(&self, key: &str) -> Result<bool, MemoryError> {
        let _guard = self.lock.lock().await;
        let (ws, mut files) = self.load()?;
        let removed = Self::take(&mut files, key).is_some();
        Self::save(&ws, &files)?;
        Ok(removed)
    }

    /// Number of entries.
    pub async fn count(&self) -> Result<u64, MemoryError> {
        let _guard = self.lock.lock().await;
        let (_ws, files) = self.load()?;
        Ok(Self::entries(&files).count() as u64)
    }

    /// Removes every entry line (other text stays); returns how many were removed.
    pub async fn purge(&self) -> Result<u64, MemoryError> {
        let _guard = self.lock.lock().await;
        let (ws, mut files) = self.load()?;
        let mut n = 0u64;
        for f in &mut files {
            let before = f.lines.len();
            f.lines.retain(|l| matches!(l, Line::Text(_)));
            let removed = (before - f.lines.len()) as u64;
            if removed > 0 {
                f.dirty = true;
                n += removed;
            }
        }
        Self::save(&ws, &files)?;
        Ok(n)
    }

    /// Writes exported rows back, keeping their times; keys already present are skipped.
    pub async fn import(&self, rows: &[MemoryEntry]) -> Result<(u64, u64), MemoryError> {
        let existing: Vec<String> = self.all().await?.into_iter().map(|e| e.key).collect();
        let (mut imported, mut skipped) = (0u64, 0u64);
        for r in rows {
            if existing.contains(&r.key) {
                skipped += 1;
                continue;
            }
            let row = NewMemory {
                key: r.key.clone(),
                content: r.content.clone(),
                category: r.category.clone(),
                session_id: r.session_id.clone(),
                importance: r.importance,
            };
            // Store at the original creation time so the row lands in its original day file.
            self.store(&[row], r.created_at).await?;
            imported += 1;
        }
        Ok((imported, skipped))
    }
}

/// Lowercase words of a text (no cap, unlike query terms).
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}
