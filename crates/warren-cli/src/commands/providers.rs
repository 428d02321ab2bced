//! `warren providers list | add | test | rm`: provider routes through the same services as the
//! desktop's Settings. The API key is read from standard input (`--key-stdin`), stored in the
//! secret store and never written into `config.toml`. `list --json` → `[{"reference",
//! "family", "model", "uri", "secret", "api_key_env", "key_set", "store"}]`; `add` → one such
//! object; `test --json` → `{"reference", "model", "url", "ok", "answer", "error_code", "error",
//! "duration_ms"}` (exit 1 when the call failed); `models --json` → `{"reference", "url", "ok",
//! "models": [{"id", "display_name", "created", "owned_by", "size", "details"}], "error_code",
//! "error"}` (exit 1 when the list could not be read); `rm` → `{"removed": REF}`.

use super::Ctx;
use std::process::ExitCode;
use warren_api::providers::ProviderInput;
use warren_api::{ApiError, ErrorCode};

/// `warren providers ...` subcommands.
#[derive(clap::Subcommand)]
pub enum Cmd {
    /// Every provider route with the state of its key (never the key).
    List,
    /// Add a route, or change one (options left out keep their value).
    Add(AddArgs),
    /// Make one small call to a route and show the answer or the vendor's error.
    Test {
        /// `family.alias`.
        reference: String,
    },
    /// List the models the route's provider offers (its own list, read with the route's key).
    Models {
        /// `family.alias`.
        reference: String,
    },
    /// Remove a route no agent and no fallback list uses.
    Rm {
        /// `family.alias`.
        reference: String,
    },
}

/// `warren providers add`.
#[derive(clap::Args)]
pub struct AddArgs {
    /// `family.alias`: openai (or any OpenAI-compatible server with --uri), anthropic, ollama.
    reference: String,
    /// The vendor's model name (required for a new route).
    #[arg(long)]
    model: Option<String>,
    /// Base URL, e.g. http://127.0.0.1:8000/v1 for an OpenAI-compatible server.
    #[arg(long)]
    uri: Option<String>,
    /// Routes to fall back to, comma-separated.
    #[arg(long, value_delimiter = ',')]
    fallbacks: Option<Vec<String>>,
    /// Request timeout in seconds.
    #[arg(long)]
    timeout_secs: Option<u32>,
    /// Force the single-tool control on or off (true|false).
    #[arg(long)]
    single_tool_control: Option<bool>,
    /// Read the key from this environment variable instead.
    #[arg(long)]
    api_key_env: Option<String>,
    /// Read the API key from standard input and keep it in the secret store.
    #[arg(long)]
    key_stdin: bool,
    /// Print the change and the validator's findings; write nothing.
    #[arg(long)]
    dry_run: bool,
}

fn read_key() -> Result<String, ApiError> {
    use std::io::Read;
    let mut buf = String::new();
    std::io::stdin().read_to_string(&mut buf).map_err(|e| {
        ApiError::new(
            ErrorCode::InvalidArgument,
            format!("reading the API key from standard input: {e}"),
        )
    })?;
    Ok(buf.trim().to_string())
}

/// Runs a `warren providers` subcommand.
pub fn run(ctx: &Ctx, cmd: Cmd) -> ExitCode {
    match cmd {
        Cmd::List => ctx.out.result(ctx.warren.provider_keys(), |list| {
            if list.is_empty() {
                return "no provider routes".into();
            }
            let mut s = format!("{:<24} {:<24} {:<9} {}\n", "ROUTE", "MODEL", "KEY", "URL");
            for p in list {
                let key = p.store.map_or("none", |s| s.as_str());
                s.push_str(&format!(
                    "{:<24} {:<24} {:<9} {}\n",
                    p.reference, p.model, key, p.uri
                ));
            }
            s
        }),
        Cmd::Add(a) => {
            let input = ProviderInput {
                reference: a.reference,
                model: a.model,
                uri: a.uri,
                fallbacks: a.fallbacks,
                timeout_secs: a.timeout_secs,
                single_tool_control: a.single_tool_control,
                api_key_env: a.api_key_env,
            };
            if a.dry_run {
                return super::settings::render_preview(ctx, ctx.warren.preview_provider(&input));
            }
            let key = if a.key_stdin {
                match read_key() {
                    Ok(k) => Some(k),
                    Err(e) => return ctx.out.fail(&e),
                }
            } else {
                None
            };
            ctx.out
                .result(ctx.warren.save_provider(&input, key.as_deref()), |p| {
                    let key = match &p.store {
                        Some(s) => format!("key in {s}"),
                        None => "no key set".into(),
                    };
                    format!("saved `{}` ({}, {key})", p.reference, p.model)
                })
        }
        Cmd::Test { reference } => match ctx.block_on_multi(ctx.warren.test_provider(&reference)) {
            Err(e) => ctx.out.fail(&e),
            Ok(t) => {
                let ok = t.ok;
                ctx.out.ok(&t, || {
                    if t.ok {
                        format!(
                            "{} answered in {} ms: {}",
                            t.reference,
                            t.duration_ms,
                            t.answer.as_deref().unwrap_or("").trim()
                        )
                    } else {
                        format!(
                            "{} failed after {} ms: {}",
                            t.reference,
                            t.duration_ms,
                            t.error.as_deref().unwrap_or("unknown error")
                        )
                    }
                });
                if ok {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::from(1)
                }
            }
        },
        Cmd::Models { reference } => {
            match ctx.block_on_multi(ctx.warren.provider_models(&reference)) {
                Err(e) => ctx.out.fail(&e),
                Ok(list) if list.ok || ctx.out.json() => {
                    let ok = list.ok;
                    ctx.out.ok(&list, || models_text(&list));
                    if ok {
                        ExitCode::SUCCESS
                    } else {
                        ExitCode::from(1)
                    }
                }
                Ok(list) => {
                    eprintln!("error: {}", crate::output::shown(&models_text(&list)));
                    ExitCode::from(1)
                }
            }
        }
        Cmd::Rm { reference } => {
            let r = ctx.warren.remove_provider(&reference);
            ctx.out.result(
                r.map(|()| serde_json::json!({ "removed": reference })),
                |_| "removed".into(),
            )
        }
    }
}

/// The model list as a table: the id to put in `model`, then what the vendor says about it.
fn models_text(list: &warren_api::provider_models::ProviderModelsView) -> String {
    if !list.ok {
        return format!(
            "{}: cannot list models from {}: {}",
            list.reference,
            list.url,
            list.error.as_deref().unwrap_or("unknown error")
        );
    }
    if list.models.is_empty() {
        return format!("{} lists no models ({})", list.reference, list.url);
    }
    let mut s = String::new();
    for m in &list.models {
        let about: Vec<&str> = [
            m.display_name.as_deref(),
            m.details.as_deref(),
            m.size.as_deref(),
            m.owned_by.as_deref(),
        ]
        .into_iter()
        .flatten()
        .collect();
        if about.is_empty() {
            s.push_str(&format!("{}\n", m.id));
        } else {
            s.push_str(&format!("{:<40} {}\n", m.id, about.join(", ")));
        }
    }
    s
}
