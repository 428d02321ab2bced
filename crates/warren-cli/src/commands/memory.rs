//! `warren memory store | recall | list | forget`: an agent's memory through its scoped handle.
//! `--json` prints `recall` and `list` as an array of
//! `{"agent", "key", "content", "category", "session", "score", "created_at"}`.

use super::Ctx;
use std::process::ExitCode;
use warren_api::MemoryItem;

/// `warren memory ...` subcommands.
#[derive(clap::Subcommand)]
pub enum Cmd {
    /// Store (or replace) a memory of an agent.
    Store {
        /// The agent.
        #[arg(long)]
        agent: String,
        /// Key, unique per agent.
        #[arg(long)]
        key: String,
        /// Category (default `core`).
        #[arg(long)]
        category: Option<String>,
        /// Session id.
        #[arg(long)]
        session: Option<String>,
        /// The text to remember; `-` (or nothing) reads it from standard input, so the text
        /// never has to appear on a command line.
        text: Option<String>,
    },
    /// Recall what an agent may see (its own rows plus granted ones), best first.
    Recall {
        /// The agent.
        #[arg(long)]
        agent: String,
        /// Most rows to return.
        #[arg(long, default_value_t = 10)]
        limit: usize,
        /// Free text; empty gives the most recent rows.
        query: String,
    },
    /// List an agent's own rows, newest first (all of them unless --limit).
    List {
        /// The agent.
        #[arg(long)]
        agent: String,
        /// Rows to skip.
        #[arg(long, default_value_t = 0)]
        offset: u64,
        /// Most rows to print.
        #[arg(long)]
        limit: Option<u64>,
    },
    /// Forget one of an agent's rows.
    Forget {
        /// The agent.
        #[arg(long)]
        agent: String,
        /// The key to remove.
        key: String,
    },
}

fn lines(items: &[MemoryItem]) -> String {
    if items.is_empty() {
        return "no memories".into();
    }
    items
        .iter()
        .map(|m| {
            let score = m.score.map(|s| format!(" ({s:.3})")).unwrap_or_default();
            format!(
                "[{}] {} ({}){score}: {}",
                m.agent, m.key, m.category, m.content
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs a `warren memory` subcommand.
pub fn run(ctx: &Ctx, cmd: Cmd) -> ExitCode {
    let w = &ctx.warren;
    match cmd {
        Cmd::Store {
            agent,
            key,
            category,
            session,
            text,
        } => {
            let text = match text.as_deref() {
                Some("-") | None => {
                    use std::io::Read;
                    let mut buf = String::new();
                    if let Err(e) = std::io::stdin().read_to_string(&mut buf) {
                        return ctx.out.fail(&warren_api::ApiError::new(
                            warren_api::ErrorCode::InvalidArgument,
                            format!("reading the memory text from standard input: {e}"),
                        ));
                    }
                    // One trailing newline is what `echo` and here-documents add, not text.
                    if buf.ends_with('\n') {
                        buf.pop();
                        if buf.ends_with('\r') {
                            buf.pop();
                        }
                    }
                    if buf.is_empty() {
                        return ctx.out.fail(&warren_api::ApiError::new(
                            warren_api::ErrorCode::InvalidArgument,
                            "the memory text read from standard input is empty",
                        ));
                    }
                    buf
                }
                Some(t) => t.to_string(),
            };
            let r = ctx.block_on(w.store_memory(
                &agent,
                &key,
                &text,
                category.as_deref(),
                session.as_deref(),
            ));
            if let Ok(s) = &r {
                for warning in &s.warnings {
                    eprintln!("warning: {warning}");
                }
            }
            ctx.out.result(r, |s| {
                format!(
                    "stored `{}` for {} ({})",
                    s.item.key, s.item.agent, s.item.category
                )
            })
        }
        Cmd::Recall {
            agent,
            limit,
            query,
        } => ctx
            .out
            .result(ctx.block_on(w.recall_memory(&agent, &query, limit)), |v| {
                lines(v)
            }),
        Cmd::List {
            agent,
            offset,
            limit,
        } => ctx
            .out
            .result(ctx.block_on(w.list_memory(&agent, offset, limit)), |v| {
                lines(v)
            }),
        Cmd::Forget { agent, key } => ctx
            .out
            .result(ctx.block_on(w.forget_memory(&agent, &key)), |f| {
                format!("forgot `{}` of {}", f.key, f.agent)
            }),
    }
}
