//! Per-agent memory for Warren (rules §7): the [`Memory`] handle an agent holds, the shared
//! [`MemoryStore`] backends (SQLite, Postgres, Lucid, Qdrant, None) and the per-workspace
//! Markdown store, grant resolution, the agent-scoped wrappers and the factory.

pub mod blocking;
pub mod embed;
pub mod error;
pub mod export;
pub mod factory;
pub mod grants;
pub mod hybrid;
pub mod lucid;
pub mod markdown;
pub mod migrate;
pub mod none;
pub mod postgres;
pub mod qdrant;
mod scope_sql;
pub mod scoped;
pub mod sqlite;
pub mod text;
pub mod traits;
pub mod types;
pub mod unavailable;

pub use embed::{Embedder, LocalEmbedder};
pub use error::MemoryError;
pub use export::export_agent;
pub use factory::{create_memory_for_agent, AgentMemoryAdmin, MemoryHandle, MemoryStores};
pub use grants::{check_grants, resolve_grants, GrantSpec, RecallScope, ScopeEntry};
pub use lucid::LucidStore;
pub use markdown::{AgentScopedMarkdownMemory, MarkdownStore};
pub use none::NoneStore;
pub use postgres::PostgresStore;
pub use qdrant::QdrantStore;
pub use scoped::AgentScopedMemory;
pub use sqlite::SqliteStore;
pub use traits::{Memory, MemoryStore};
pub use types::*;
pub use unavailable::UnavailableMemory;
