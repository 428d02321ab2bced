//! `warren tool` (rules §9.1): one tool call of an agent through the same gates as the agent
//! loop, its MCP tools included, with a receipt for an executed call.

use crate::policy::path_var;
use crate::Warren;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use warren_policy::sandbox::SandboxSupport;
use warren_tools::{ApprovalAnswer, Registry, ToolContext};
use warren_types::{ApiError, ErrorCode};

/// The error of a tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ToolErrorView {
    /// Stable code (`denied`, `invalid_argument`, `no_approver`, ...).
    pub code: warren_types::ToolErrorCode,
    /// Human message.
    pub message: String,
    /// The policy rule, for denials.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
}

/// `warren tool` (rules §9.1): `{ok, output, error?}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ToolCallResult {
    /// The tool ran and succeeded.
    pub ok: bool,
    /// The tool's JSON result (or the captured output of a failed command).
    pub output: serde_json::Value,
    /// Why it did not succeed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ToolErrorView>,
}

impl Warren {
    /// One tool call of `alias` through the same gates as the agent loop. `args` is the JSON
    /// text of the arguments; `approve` answers every approval request with yes (otherwise there
    /// is no one to ask and such calls are denied).
    pub fn tool_call(
        &self,
        alias: &str,
        tool: &str,
        args: &str,
        approve: bool,
    ) -> Result<ToolCallResult, ApiError> {
        let host = &self.env;
        // An agent an unfinished rename, delete or restore involves runs no tool.
        self.refuse_if_lifecycle_pending(alias)?;
        let args: serde_json::Value = serde_json::from_str(args).map_err(|e| {
            ApiError::new(
                ErrorCode::InvalidArgument,
                format!("tool arguments are not valid JSON: {e}"),
            )
        })?;
        let cfg = self.load()?.config;
        let p = self.policy_for(&cfg, alias, host)?;
        // The agent is about to act: its workspace exists (reading a policy makes nothing).
        p.prepare()
            .map_err(|e| ApiError::new(ErrorCode::Storage, e.to_string()))?;
        let support = SandboxSupport::probe(path_var(host));
        let mut ctx = ToolContext::new(Arc::new(p), support, host.vars.clone());
        // The install's action ledger, shared with every other process (rules §2.3).
        let ledger = warren_state::ledger::DbLedger::open(&self.layout().sessions_db())
            .map_err(|e| ApiError::new(ErrorCode::Storage, format!("the action ledger: {e}")))?;
        ctx.ledger = Arc::new(ledger);
        let mut registry = Registry::builtin();
        let answer = if approve {
            ApprovalAnswer::approve()
        } else {
            ApprovalAnswer::no_one()
        };
        // Called outside any runtime (`warren tool`): the call is driven on one of its own.
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| {
                ApiError::new(
                    ErrorCode::Internal,
                    format!("cannot start a runtime for the call: {e}"),
                )
            })?;
        let result = rt.block_on(async {
            // A profile whose network is by domain goes through a proxy of this process,
            // recording to the install's sessions database.
            let network_log = match warren_state::db::open_sessions_db(&self.layout().sessions_db())
                .await
            {
                Ok(pool) => {
                    let log = warren_state::network_log::NetworkLog::start(pool);
                    ctx.network = Some(warren_state::network_log::proxy_recording_to(log.clone()));
                    Some(log)
                }
                Err(e) => {
                    tracing::warn!("no network log for this call: {e}");
                    None
                }
            };
            let ctx = &ctx;
            // An agent's MCP tool (`server__tool`): its server is started in the agent's
            // sandbox and registered as a turn registers it, so the call meets the same gates.
            let started =
                crate::mcp::register_mcp_tool(&mut registry, &cfg, self.layout(), alias, tool, ctx)
                    .await;
            // The server (if any) lives until the end of this block, past the call.
            let (result, _servers) = match started {
                Err(e) => (Err(e), None),
                Ok(set) => (registry.invoke(tool, &args, ctx, &answer).await, set),
            };
            // An executed call gets a receipt, as in the agent loop (rules §6.3).
            let executed = match &result {
                Ok(v) => Some(match v {
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                }),
                Err(e) if e.ran() => Some(e.to_json().to_string()),
                Err(_) => None,
            };
            if let Some(content) = executed {
                warren_state::receipts::append_for_install(
                    self.layout(),
                    alias,
                    tool,
                    &args,
                    &content,
                )
                .await
                .map_err(|e| {
                    ApiError::new(
                        ErrorCode::Storage,
                        format!("the tool ran but its receipt could not be written: {e}"),
                    )
                })?;
            }
            if let Some(log) = &network_log {
                log.flush().await;
            }
            Ok::<_, ApiError>(result)
        })?;
        Ok(match result {
            Ok(output) => ToolCallResult {
                ok: true,
                output,
                error: None,
            },
            Err(e) => {
                let output = match &e {
                    warren_tools::ToolError::CommandFailed {
                        exit_code,
                        stdout,
                        stderr,
                    } => {
                        serde_json::json!({"exit_code": exit_code, "stdout": stdout, "stderr": stderr})
                    }
                    _ => serde_json::Value::Null,
                };
                ToolCallResult {
                    ok: false,
                    output,
                    error: Some(ToolErrorView {
                        code: e.code(),
                        message: e.to_string(),
                        rule: e.rule().map(str::to_string),
                    }),
                }
            }
        })
    }
}
