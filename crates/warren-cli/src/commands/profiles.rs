//! `warren profiles list | show | set | allow-domain | create | rm`: risk and runtime profiles through the same
//! service as the desktop's Profiles screen. `list --json` → `[{"kind", "name", "used_by",
//! "risk", "runtime"}]`; `show --json` → one such object; `set --dry-run` → the preview of
//! `agents set` (see `settings`).

use super::choices::Kind;
use super::Ctx;
use std::process::ExitCode;
use warren_api::profiles::{FieldChange, ProfileEdit, ProfileKind, ProfileView};
use warren_api::{ApiError, ErrorCode};

/// `warren profiles ...` subcommands.
#[derive(clap::Subcommand)]
pub enum Cmd {
    /// Every risk and runtime profile with the agents using it.
    List,
    /// One profile's effective values (defaults filled in).
    Show {
        /// The kind of profile.
        kind: Kind,
        /// The profile's name.
        name: String,
    },
    /// Set one field of a profile (VALUE is JSON when it parses as JSON, e.g. true, 10,
    /// '["ls","cat"]', a network by domain '{"allow": ["crates.io"]}'; else text). Every agent
    /// using the profile gets it at its next turn.
    Set {
        /// The kind of profile.
        kind: Kind,
        /// The profile's name.
        name: String,
        /// The field, e.g. level, allowed_roots, max_tool_iterations.
        key: String,
        /// The new value.
        #[arg(required_unless_present = "unset", conflicts_with = "unset")]
        value: Option<String>,
        /// Remove the key so its default applies.
        #[arg(long)]
        unset: bool,
        /// Print the change and the validator's findings; write nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Add a profile with default values.
    Create {
        /// The kind of profile.
        kind: Kind,
        /// The new profile's name.
        name: String,
    },
    /// Let an agent reach a host it was refused: adds HOST to the `allow` list of the agent's
    /// risk profile (whose network must be by domain), for every agent using that profile; the
    /// window's "Allow this domain". Refused when a `deny` pattern wins or the host is allowed
    /// already (its address was the reason).
    AllowDomain {
        /// The agent that was refused.
        #[arg(long)]
        agent: String,
        /// The host, as the program asked for it (see `warren logs --network --refused`).
        host: String,
        /// The port it asked for (a deny pattern may name one).
        #[arg(long, default_value_t = 443)]
        port: u16,
        /// Print the change and the validator's findings; write nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Remove a profile no agent uses.
    Rm {
        /// The kind of profile.
        kind: Kind,
        /// The profile's name.
        name: String,
    },
}

fn kind_name(k: ProfileKind) -> &'static str {
    match k {
        ProfileKind::Risk => "risk",
        ProfileKind::Runtime => "runtime",
    }
}

fn fields(p: &ProfileView) -> String {
    let v = match (&p.risk, &p.runtime) {
        (Some(r), _) => serde_json::to_value(r),
        (_, Some(r)) => serde_json::to_value(r),
        _ => Ok(serde_json::Value::Null),
    };
    let mut s = format!("{} profile `{}`\n", kind_name(p.kind), p.name);
    if let Ok(serde_json::Value::Object(m)) = v {
        for (k, v) in m {
            s.push_str(&format!("  {k} = {v}\n"));
        }
    }
    let users = if p.used_by.is_empty() {
        "-".to_string()
    } else {
        p.used_by.join(", ")
    };
    s.push_str(&format!("used by: {users}\n"));
    s
}

fn find(ctx: &Ctx, k: ProfileKind, name: &str) -> Result<ProfileView, ApiError> {
    ctx.warren
        .list_profiles()?
        .into_iter()
        .find(|p| p.kind == k && p.name == name)
        .ok_or_else(|| {
            ApiError::new(
                ErrorCode::NotFound,
                format!("{} profile `{name}` does not exist", kind_name(k)),
            )
        })
}

/// Runs a `warren profiles` subcommand.
pub fn run(ctx: &Ctx, cmd: Cmd) -> ExitCode {
    let r = match cmd {
        Cmd::List => {
            return ctx.out.result(ctx.warren.list_profiles(), |all| {
                let mut s = format!("{:<8} {:<24} {}\n", "KIND", "NAME", "USED BY");
                for p in all {
                    let users = if p.used_by.is_empty() {
                        "-".to_string()
                    } else {
                        p.used_by.join(", ")
                    };
                    s.push_str(&format!(
                        "{:<8} {:<24} {users}\n",
                        kind_name(p.kind),
                        p.name
                    ));
                }
                s
            })
        }
        Cmd::Show { kind: k, name } => find(ctx, k.into(), &name),
        Cmd::Set {
            kind: k,
            name,
            key,
            value,
            unset: _,
            dry_run,
        } => {
            let value = match value
                .as_deref()
                .map(|v| super::settings::parse_value(v, false))
            {
                None => None,
                Some(Ok(v)) => Some(v),
                Some(Err(e)) => return ctx.out.fail(&e),
            };
            let edit = ProfileEdit {
                kind: k.into(),
                name,
                changes: vec![FieldChange { field: key, value }],
            };
            if dry_run {
                return super::settings::render_preview(
                    ctx,
                    ctx.warren.preview_profile_edit(&edit),
                );
            }
            ctx.warren.save_profile_edit(&edit)
        }
        Cmd::AllowDomain {
            agent,
            host,
            port,
            dry_run,
        } => {
            if dry_run {
                return super::settings::render_preview(
                    ctx,
                    ctx.warren
                        .preview_allow_domain(&agent, &host, port)
                        .map(|p| p.preview),
                );
            }
            ctx.warren.allow_domain(&agent, &host, port)
        }
        Cmd::Create { kind: k, name } => ctx.warren.create_profile(k.into(), &name),
        Cmd::Rm { kind: k, name } => {
            let r = ctx.warren.delete_profile(k.into(), &name);
            return ctx
                .out
                .result(r.map(|_| serde_json::json!({"removed": name})), |_| {
                    "removed".into()
                });
        }
    };
    ctx.out.result(r, fields)
}
