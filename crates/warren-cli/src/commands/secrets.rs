//! `warren secrets set NAME [--agent A] | list | rm NAME [--agent A]`. Values are read from
//! standard input (without echo on a terminal) and never printed.

use super::Ctx;
use std::io::{IsTerminal, Read};
use std::process::ExitCode;
use warren_api::{ApiError, ErrorCode};
use warren_types::SecretBackendKind;

/// `warren secrets ...` subcommands.
#[derive(clap::Subcommand)]
pub enum Cmd {
    /// Store a secret; the value is read from standard input.
    Set {
        /// Secret name (or `agent:<alias>/NAME`).
        name: String,
        /// Store it in this agent's namespace.
        #[arg(long)]
        agent: Option<String>,
    },
    /// List secret names (never values).
    List,
    /// Remove a secret.
    Rm {
        /// Secret name (or `agent:<alias>/NAME`).
        name: String,
        /// The agent namespace.
        #[arg(long)]
        agent: Option<String>,
    },
}

fn read_value() -> Result<String, ApiError> {
    let stdin = std::io::stdin();
    let value = if stdin.is_terminal() {
        rpassword::prompt_password("value (not echoed): ")
            .map_err(|e| ApiError::new(ErrorCode::Io, format!("reading the value: {e}")))?
    } else {
        let mut s = String::new();
        stdin.lock().read_to_string(&mut s).map_err(|e| {
            ApiError::new(ErrorCode::Io, format!("reading the value from stdin: {e}"))
        })?;
        s
    };
    Ok(value.trim_end_matches(['\n', '\r']).to_string())
}

/// Runs a `warren secrets` subcommand.
pub fn run(ctx: &Ctx, cmd: Cmd) -> ExitCode {
    match cmd {
        Cmd::Set { name, agent } => {
            let r = read_value().and_then(|v| ctx.warren.set_secret(&name, agent.as_deref(), &v));
            ctx.out.result(r, |e| {
                let place = match e.store {
                    SecretBackendKind::Keyring => "the desktop keyring",
                    SecretBackendKind::File => "the encrypted file",
                };
                format!("stored secret `{}` in {place}", e.reference)
            })
        }
        Cmd::List => ctx.out.result(ctx.warren.list_secrets(), |v| {
            if v.is_empty() {
                "no secrets".into()
            } else {
                v.iter()
                    .map(|e| format!("{:<40} {}", e.reference, e.store))
                    .collect::<Vec<_>>()
                    .join("\n")
            }
        }),
        Cmd::Rm { name, agent } => ctx
            .out
            .result(ctx.warren.remove_secret(&name, agent.as_deref()), |e| {
                format!("removed secret `{}`", e.reference)
            }),
    }
}
