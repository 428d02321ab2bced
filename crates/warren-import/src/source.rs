//! Reading a ZeroClaw install without changing it: `config.toml` (schema 3), the key file,
//! the shared SQLite memory store (opened read-only and immutable, so not even a `-wal` file
//! appears next to it), the Markdown memory files and the workspaces.

use std::collections::BTreeMap;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::str::FromStr;

use chacha20poly1305::aead::{Aead, KeyInit};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};
use chrono::{DateTime, Utc};
use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};
use sqlx::{Row, SqlitePool};
use uuid::Uuid;
use warren_memory::MemoryEntry;
use warren_types::{ApiError, ErrorCode};

/// The only config schema this importer reads.
pub const SUPPORTED_SCHEMA: i64 = 3;

/// A ZeroClaw install opened for reading. Everything under its folder is foreign data: it is
/// read relative to the folder's descriptor without following any symbolic link (a link
/// anywhere below the folder is refused, never read through), and the plan refuses an install
/// whose config, key, memory database, workspaces or memory files are links.
pub struct Source {
    /// The install folder (resolved once: the user chose it).
    pub root: PathBuf,
    /// The folder, held open.
    root_fd: OwnedFd,
    /// `<root>/config.toml`.
    pub config_path: PathBuf,
    /// The parsed config.
    pub config: toml::Table,
    /// `<root>/.secret_key`, decoded, when present.
    key: Option<Vec<u8>>,
}

fn io_error(action: &str, path: &Path, e: impl std::fmt::Display) -> ApiError {
    ApiError::new(ErrorCode::Io, format!("{action} {}: {e}", path.display()))
}

fn bad_source(path: &Path, what: impl std::fmt::Display) -> ApiError {
    ApiError::new(
        ErrorCode::InvalidArgument,
        format!("{}: {what}", path.display()),
    )
}

impl Source {
    /// Opens the install at `root`: reads and checks `config.toml` and the key file.
    pub fn open(root: &Path) -> Result<Self, ApiError> {
        if !root.is_dir() {
            return Err(ApiError::new(
                ErrorCode::NotFound,
                format!(
                    "no ZeroClaw install at {}: the folder does not exist",
                    root.display()
                ),
            ));
        }
        let root = root
            .canonicalize()
            .map_err(|e| io_error("resolving", root, e))?;
        let root_fd = warren_policy::open::open_dir_nofollow(&root)
            .map_err(|e| io_error("opening", &root, std::io::Error::from(e)))?;
        let config_path = root.join("config.toml");
        let text = match read_beneath(&root, &root_fd, &config_path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(ApiError::new(
                    ErrorCode::NotFound,
                    format!(
                        "no ZeroClaw install at {}: {} does not exist",
                        root.display(),
                        config_path.display()
                    ),
                ))
            }
            Err(e) => return Err(io_error("reading", &config_path, e)),
        };
        let config: toml::Table = text
            .parse()
            .map_err(|e| bad_source(&config_path, format!("not valid TOML: {e}")))?;
        match config.get("schema_version") {
            Some(toml::Value::Integer(SUPPORTED_SCHEMA)) => {}
            Some(v) => {
                return Err(bad_source(
                    &config_path,
                    format!(
                        "config schema_version {v} is not supported (this importer reads schema {SUPPORTED_SCHEMA})"
                    ),
                ))
            }
            None => {
                return Err(bad_source(
                    &config_path,
                    format!("no schema_version (this importer reads schema {SUPPORTED_SCHEMA})"),
                ))
            }
        }
        let key_path = root.join(".secret_key");
        let key = match read_beneath(&root, &root_fd, &key_path) {
            Ok(t) => Some(
                hex::decode(t.trim())
                    .ok()
                    .filter(|k| k.len() == 32)
                    .ok_or_else(|| {
                        bad_source(&key_path, "not a 32-byte key written as 64 hex digits")
                    })?,
            ),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(io_error("reading", &key_path, e)),
        };
        Ok(Source {
            root,
            root_fd,
            config_path,
            config,
            key,
        })
    }

    /// Opens the regular file `path` (under the install folder) for reading without following
    /// any link on the way.
    pub fn open_file(&self, path: &Path) -> std::io::Result<std::fs::File> {
        open_beneath_root(&self.root, &self.root_fd, path)
    }

    /// Reads the text file `path` (under the install folder) without following any link.
    pub fn read_to_string(&self, path: &Path) -> std::io::Result<String> {
        read_beneath(&self.root, &self.root_fd, path)
    }

    /// Every path the import reads that is a symbolic link (or lies under one), relative to the
    /// folder: the config, the key, the memory database, each agent's workspace, `MEMORY.md`,
    /// `memory/` and the files in it. Links elsewhere in a workspace are not copied (the plan
    /// lists them); these would be read, so they make the plan refuse.
    pub fn links(&self, aliases: &[String]) -> Vec<PathBuf> {
        let mut wanted: Vec<PathBuf> = [
            "config.toml",
            ".secret_key",
            "data/memory/brain.db",
            "data/memory/brain.db-wal",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        for a in aliases {
            let ws = Path::new("agents").join(a).join("workspace");
            wanted.push(ws.join(crate::markdown::CORE_FILE));
            let daily = ws.join(crate::markdown::DAILY_DIR);
            if let Ok(rd) = std::fs::read_dir(self.root.join(&daily)) {
                if !is_link_on_way(&self.root, &daily) {
                    for e in rd.flatten() {
                        wanted.push(daily.join(e.file_name()));
                    }
                }
            }
            wanted.push(daily);
            wanted.push(ws);
        }
        let mut out: Vec<PathBuf> = wanted
            .into_iter()
            .filter(|rel| is_link_on_way(&self.root, rel))
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// A table of the config by its dotted path (`agents`, `providers.models`).
    pub fn table(&self, path: &str) -> Option<&toml::Table> {
        let mut t = &self.config;
        for part in path.split('.') {
            t = t.get(part)?.as_table()?;
        }
        Some(t)
    }

    /// `<root>/agents/<alias>/workspace`.
    pub fn workspace(&self, alias: &str) -> PathBuf {
        self.root.join("agents").join(alias).join("workspace")
    }

    /// `<root>/data/memory/brain.db`.
    pub fn brain_path(&self) -> PathBuf {
        self.root.join("data").join("memory").join("brain.db")
    }

    /// Decrypts a stored secret: `enc2:` + hex(nonce ‖ ciphertext ‖ tag) under the key file;
    /// any other text is a plain value.
    pub fn decrypt(&self, value: &str) -> Result<String, String> {
        let Some(hexed) = value.strip_prefix("enc2:") else {
            if value.starts_with("enc:") {
                return Err(
                    "it uses an older encryption format this importer does not read".into(),
                );
            }
            return Ok(value.to_string());
        };
        let key = self.key.as_ref().ok_or_else(|| {
            format!(
                "it is encrypted and {} is missing",
                self.root.join(".secret_key").display()
            )
        })?;
        let bytes = hex::decode(hexed).map_err(|_| "its enc2 value is not hex".to_string())?;
        if bytes.len() < 12 + 16 {
            return Err("its enc2 value is too short".into());
        }
        let (nonce, sealed) = bytes.split_at(12);
        let cipher = ChaCha20Poly1305::new(Key::from_slice(key));
        let plain = cipher
            .decrypt(Nonce::from_slice(nonce), sealed)
            .map_err(|_| {
                format!(
                    "it does not decrypt with {} (wrong key or damaged value)",
                    self.root.join(".secret_key").display()
                )
            })?;
        String::from_utf8(plain).map_err(|_| "its decrypted value is not UTF-8".to_string())
    }

    /// Opens `brain.db` read-only and immutable, or `None` when the install has none.
    pub async fn brain(&self) -> Result<Option<Brain>, ApiError> {
        let path = self.brain_path();
        if std::fs::symlink_metadata(&path).is_err() {
            return Ok(None);
        }
        // SQLite opens by name: the file is held open without following links, and SQLite is
        // given that very file through `/proc/self/fd`.
        let file = self
            .open_file(&path)
            .map_err(|e| io_error("opening", &path, e))?;
        Brain::open(&path, file).await.map(Some)
    }
}

/// One memory row of the source, with its owner's alias.
#[derive(Debug, Clone)]
pub struct SourceRow {
    /// Owner alias (joined through `agents`).
    pub agent: String,
    /// The row, in Warren's shape (times as instants).
    pub entry: MemoryEntry,
}

/// The shared SQLite memory store of a ZeroClaw install, opened read-only.
pub struct Brain {
    path: PathBuf,
    pool: SqlitePool,
    /// The file SQLite reads, held open for as long as the pool is.
    _file: std::fs::File,
}

/// Counts of one agent's rows in the source store.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BrainCounts {
    /// Rows per category.
    pub categories: BTreeMap<String, u64>,
    /// Distinct sessions among the rows.
    pub sessions: u64,
    /// Rows whose `pinned` flag is set (Warren has no pinning).
    pub pinned: u64,
    /// Rows in a namespace other than `default`.
    pub other_namespace: u64,
    /// Rows marked as superseded by another row.
    pub superseded: u64,
    /// Rows carrying an embedding vector (Warren computes its own).
    pub embedded: u64,
}

impl Brain {
    async fn open(path: &Path, file: std::fs::File) -> Result<Self, ApiError> {
        use std::os::fd::AsRawFd;
        let opts = SqliteConnectOptions::from_str("sqlite://")
            .map_err(|e| bad_source(path, e))?
            .filename(format!("/proc/self/fd/{}", file.as_raw_fd()))
            .read_only(true)
            .immutable(true)
            .create_if_missing(false);
        let pool = SqlitePoolOptions::new()
            .max_connections(1)
            .idle_timeout(None)
            .max_lifetime(None)
            .connect_with(opts)
            .await
            .map_err(|e| corrupt(path, e))?;
        let brain = Brain {
            path: path.to_path_buf(),
            pool,
            _file: file,
        };
        // A damaged file opens lazily: check it now, naming the file.
        let check: String = sqlx::query_scalar("PRAGMA quick_check")
            .fetch_one(&brain.pool)
            .await
            .map_err(|e| corrupt(path, e))?;
        if check != "ok" {
            return Err(corrupt(path, check));
        }
        for table in ["agents", "memories"] {
            let found: Option<String> = sqlx::query_scalar(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?",
            )
            .bind(table)
            .fetch_optional(&brain.pool)
            .await
            .map_err(|e| corrupt(path, e))?;
            if found.is_none() {
                return Err(corrupt(path, format!("it has no `{table}` table")));
            }
        }
        Ok(brain)
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// alias → agent id (the UUID the rows point at).
    pub async fn agents(&self) -> Result<BTreeMap<String, String>, ApiError> {
        let rows = sqlx::query("SELECT alias, id FROM agents")
            .fetch_all(&self.pool)
            .await
            .map_err(|e| corrupt(&self.path, e))?;
        rows.iter()
            .map(|r| {
                Ok((
                    col(r, 0, "agents.alias", &self.path)?,
                    col(r, 1, "agents.id", &self.path)?,
                ))
            })
            .collect()
    }

    /// Per alias: the counts of its rows.
    pub async fn counts(&self) -> Result<BTreeMap<String, BrainCounts>, ApiError> {
        let rows = sqlx::query(
            "SELECT a.alias, m.category, COUNT(*), COUNT(DISTINCT m.session_id), \
             SUM(CASE WHEN m.pinned != 0 THEN 1 ELSE 0 END), \
             SUM(CASE WHEN COALESCE(m.namespace, 'default') != 'default' THEN 1 ELSE 0 END), \
             SUM(CASE WHEN m.superseded_by IS NOT NULL THEN 1 ELSE 0 END), \
             SUM(CASE WHEN m.embedding IS NOT NULL THEN 1 ELSE 0 END) \
             FROM memories m JOIN agents a ON a.id = m.agent_id GROUP BY a.alias, m.category",
        )
        .fetch_all(&self.pool)
        .await
        .map_err(|e| corrupt(&self.path, e))?;
        let mut out: BTreeMap<String, BrainCounts> = BTreeMap::new();
        for r in rows {
            let alias: String = col(&r, 0, "agents.alias", &self.path)?;
            let category: String = col(&r, 1, "memories.category", &self.path)?;
            let n = |i: usize, what: &str| -> Result<u64, ApiError> {
                let v: Option<i64> = col(&r, i, what, &self.path)?;
                Ok(v.unwrap_or(0).max(0) as u64)
            };
            let (rows, pinned, other, superseded, embedded) = (
                n(2, "memories (row count)")?,
                n(4, "memories.pinned")?,
                n(5, "memories.namespace")?,
                n(6, "memories.superseded_by")?,
                n(7, "memories.embedding")?,
            );
            let c = out.entry(alias).or_default();
            c.categories.insert(category, rows);
            c.pinned += pinned;
            c.other_namespace += other;
            c.superseded += superseded;
            c.embedded += embedded;
        }
        let sessions = sqlx::query(
            "SELECT a.alias, COUNT(DISTINCT m.session_id) FROM memories m JOIN agents a ON a.id = m.agent_id GROUP BY a.alias",
        )
        .fetch_all(&self.pool)
        .await
        .map_err(|e| corrupt(&self.path, e))?;
        for r in sessions {
            let alias: String = col(&r, 0, "agents.alias", &self.path)?;
            let n: i64 = col(&r, 1, "memories.session_id", &self.path)?;
            if let Some(c) = out.get_mut(&alias) {
                c.sessions = n.max(0) as u64;
            }
        }
        // Rows whose agent id has no `agents` row cannot be attributed to anyone.
        let orphans: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM memories m WHERE NOT EXISTS (SELECT 1 FROM agents a WHERE a.id = m.agent_id)",
        )
        .fetch_one(&self.pool)
        .await
        .map_err(|e| corrupt(&self.path, e))?;
        if orphans > 0 {
            out.entry(String::new())
                .or_default()
                .categories
                .insert("(no agent)".into(), orphans as u64);
        }
        Ok(out)
    }

    /// Up to `limit` rows of agent `agent_id` after row number `after`, in row order.
    pub async fn page(
        &self,
        alias: &str,
        agent_id: &str,
        after: i64,
        limit: i64,
    ) -> Result<(Vec<SourceRow>, i64, Vec<String>), ApiError> {
        let rows = sqlx::query(
            "SELECT rowid, id, key, content, category, session_id, importance, created_at, updated_at \
             FROM memories WHERE agent_id = ? AND rowid > ? ORDER BY rowid LIMIT ?",
        )
        .bind(agent_id)
        .bind(after)
        .bind(limit)
        .fetch_all(&self.pool)
        .await
        .map_err(|e| corrupt(&self.path, e))?;
        let mut last = after;
        let mut out = Vec::with_capacity(rows.len());
        let mut problems = Vec::new();
        let owner = Uuid::parse_str(agent_id).unwrap_or_else(|_| Uuid::new_v4());
        let p = &self.path;
        for r in rows {
            last = col(&r, 0, "memories.rowid", p)?;
            let key: String = col(&r, 2, "memories.key", p)?;
            let id_text: String = col(&r, 1, "memories.id", p)?;
            let created: String = col(&r, 7, "memories.created_at", p)?;
            let updated: String = col(&r, 8, "memories.updated_at", p)?;
            let content: String = col(&r, 3, "memories.content", p)?;
            let category: String = col(&r, 4, "memories.category", p)?;
            let session_id: Option<String> = col(&r, 5, "memories.session_id", p)?;
            // `importance` is a REAL in ZeroClaw's schema; an INTEGER there is read as one.
            let importance: Option<f64> = match r.try_get::<Option<f64>, _>(6) {
                Ok(v) => v,
                Err(_) => col::<Option<i64>>(&r, 6, "memories.importance", p)?.map(|v| v as f64),
            };
            let (Some(created_at), Some(updated_at)) = (parse_time(&created), parse_time(&updated))
            else {
                problems.push(format!(
                    "{alias}/{key}: its times ({created}, {updated}) are not RFC 3339"
                ));
                continue;
            };
            out.push(SourceRow {
                agent: alias.to_string(),
                entry: MemoryEntry {
                    id: Uuid::parse_str(&id_text).unwrap_or_else(|_| Uuid::new_v4()),
                    agent_id: owner,
                    agent: alias.to_string(),
                    key,
                    content,
                    category,
                    session_id,
                    importance: importance.unwrap_or(0.5).clamp(0.0, 1.0),
                    created_at,
                    updated_at,
                    score: None,
                },
            });
        }
        Ok((out, last, problems))
    }

    /// Closes the connection.
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

/// Column `i` of a row, decoded as `T`; a value of another type is an error naming the table
/// and column (a damaged or foreign database never panics the importer).
fn col<'r, T>(
    r: &'r sqlx::sqlite::SqliteRow,
    i: usize,
    column: &str,
    path: &Path,
) -> Result<T, ApiError>
where
    T: sqlx::Decode<'r, sqlx::Sqlite> + sqlx::Type<sqlx::Sqlite>,
{
    r.try_get(i).map_err(|e| {
        corrupt(
            path,
            format!("column `{column}` holds a value of an unexpected type ({e})"),
        )
    })
}

/// Whether `rel` (under `root`) is a symbolic link or lies under one.
fn is_link_on_way(root: &Path, rel: &Path) -> bool {
    let mut p = root.to_path_buf();
    for c in rel.components() {
        p.push(c);
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => return true,
            Ok(_) => {}
            Err(_) => return false,
        }
    }
    false
}

fn open_beneath_root(root: &Path, fd: &OwnedFd, path: &Path) -> std::io::Result<std::fs::File> {
    use warren_policy::rustix::fs::{fstat, FileType, Mode, OFlags};
    let rel = path.strip_prefix(root).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{} is outside the install folder", path.display()),
        )
    })?;
    let opened = warren_policy::open::open_beneath(
        fd.as_fd(),
        rel,
        OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOCTTY | OFlags::NONBLOCK,
        Mode::empty(),
    )
    .map_err(|e| {
        if e == warren_policy::rustix::io::Errno::LOOP {
            std::io::Error::other(
                "it is a symbolic link or lies under one, and a ZeroClaw install is read without following links",
            )
        } else {
            std::io::Error::from(e)
        }
    })?;
    let st = fstat(&opened).map_err(std::io::Error::from)?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    Ok(std::fs::File::from(opened))
}

fn read_beneath(root: &Path, fd: &OwnedFd, path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut text = String::new();
    open_beneath_root(root, fd, path)?.read_to_string(&mut text)?;
    Ok(text)
}

/// An RFC 3339 time with any offset, as an instant.
pub fn parse_time(s: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

fn corrupt(path: &Path, e: impl std::fmt::Display) -> ApiError {
    ApiError::new(
        ErrorCode::Storage,
        format!(
            "the ZeroClaw memory database {} cannot be read: {e}",
            path.display()
        ),
    )
}
