//! `warren memory store | recall | list | forget`: an agent's memory through its scoped handle;
//! `warren memory backends show | check | set`: the install's `[memory]` settings.
//! `--json` prints `recall` and `list` as an array of
//! `{"agent", "key", "content", "category", "session", "score", "created_at", "updated_at"}`.

use super::choices::Backend;
use super::Ctx;
use std::process::ExitCode;
use warren_api::memory_settings::{MemorySettingsInput, MemorySettingsView};
use warren_api::MemoryItem;
use warren_types::MemoryBackendKind;

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
    /// The install's memory backends (`[memory]`): show, check or change them.
    #[command(subcommand)]
    Backends(BackendsCmd),
}

/// `warren memory backends ...`.
#[derive(clap::Subcommand)]
pub enum BackendsCmd {
    /// The default backend, each backend's settings and the agents using each.
    Show,
    /// Open every backend the settings (with the changes given) would use, and report each.
    Check(BackendArgs),
    /// Change the settings: previewed with --dry-run; saved only when every backend in use opens.
    Set {
        #[command(flatten)]
        args: BackendArgs,
        /// Print the config diff and the validator's findings; write nothing.
        #[arg(long)]
        dry_run: bool,
    },
}

/// Changes of `[memory]`; an empty value removes the key (its default applies).
#[derive(clap::Args)]
pub struct BackendArgs {
    /// The install-wide default backend.
    #[arg(long, value_enum)]
    backend: Option<Backend>,
    /// `[memory.sqlite] path`.
    #[arg(long)]
    sqlite_path: Option<String>,
    /// `[memory.postgres] url`.
    #[arg(long)]
    postgres_url: Option<String>,
    /// `[memory.postgres] schema`.
    #[arg(long)]
    postgres_schema: Option<String>,
    /// `[memory.qdrant] url`.
    #[arg(long)]
    qdrant_url: Option<String>,
    /// `[memory.qdrant] collection`.
    #[arg(long)]
    qdrant_collection: Option<String>,
    /// `[memory.qdrant] api_key_env`.
    #[arg(long)]
    qdrant_api_key_env: Option<String>,
    /// `[memory.lucid] command`.
    #[arg(long)]
    lucid_command: Option<String>,
}

impl BackendArgs {
    fn input(self) -> MemorySettingsInput {
        MemorySettingsInput {
            backend: self.backend.map(MemoryBackendKind::from),
            sqlite_path: self.sqlite_path,
            postgres_url: self.postgres_url,
            postgres_schema: self.postgres_schema,
            qdrant_url: self.qdrant_url,
            qdrant_collection: self.qdrant_collection,
            qdrant_api_key_env: self.qdrant_api_key_env,
            lucid_command: self.lucid_command,
        }
    }
}

fn settings_text(v: &MemorySettingsView) -> String {
    let opt = |o: &Option<String>| o.clone().unwrap_or_else(|| "(unset)".into());
    let mut t = format!(
        "default backend:   {}\nsqlite path:       {} ({})\npostgres url:      {}\npostgres schema:   {}\nqdrant url:        {}\nqdrant collection: {}\nqdrant key env:    {}\nlucid command:     {}\n",
        v.backend.as_str(),
        opt(&v.sqlite_path),
        v.sqlite_effective_path,
        opt(&v.postgres_url),
        opt(&v.postgres_schema),
        opt(&v.qdrant_url),
        opt(&v.qdrant_collection),
        opt(&v.qdrant_api_key_env),
        opt(&v.lucid_command),
    );
    for u in &v.in_use {
        t.push_str(&format!(
            "in use: {} by {}\n",
            u.backend.as_str(),
            u.agents.join(", ")
        ));
    }
    t
}

fn backends(ctx: &Ctx, cmd: BackendsCmd) -> ExitCode {
    let w = &ctx.warren;
    match cmd {
        BackendsCmd::Show => ctx.out.result(w.memory_settings(), settings_text),
        BackendsCmd::Check(args) => {
            let input = args.input();
            match ctx.block_on(w.check_memory_settings(&input)) {
                Ok(checks) => {
                    let failed = checks.iter().any(|c| !c.ok);
                    let code = ctx.out.result(Ok::<_, warren_api::ApiError>(checks), |cs| {
                        cs.iter()
                            .map(|c| match &c.error {
                                None => {
                                    format!("{}: ok ({} ms)\n", c.backend.as_str(), c.duration_ms)
                                }
                                Some(e) => format!("{}: failed: {e}\n", c.backend.as_str()),
                            })
                            .collect()
                    });
                    if failed {
                        ExitCode::from(1)
                    } else {
                        code
                    }
                }
                Err(e) => ctx.out.fail(&e),
            }
        }
        BackendsCmd::Set { args, dry_run } => {
            let input = args.input();
            if dry_run {
                return super::settings::render_preview(ctx, w.preview_memory_settings(&input));
            }
            ctx.out
                .result(ctx.block_on(w.save_memory_settings(&input)), settings_text)
        }
    }
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
        Cmd::Backends(cmd) => backends(ctx, cmd),
        Cmd::Forget { agent, key } => ctx
            .out
            .result(ctx.block_on(w.forget_memory(&agent, &key)), |f| {
                format!("forgot `{}` of {}", f.key, f.agent)
            }),
    }
}
