//! `warren tool --agent A NAME 'JSON' [--approve]`: one tool call through the loop's gates.

use super::Ctx;
use std::process::ExitCode;

/// Arguments of `warren tool`.
#[derive(clap::Args)]
pub struct Args {
    /// The agent whose policy applies.
    #[arg(long)]
    agent: String,
    /// The tool: file_read, file_write, file_edit, glob_search, content_search, shell,
    /// git_operations, or one of the agent's MCP tools as `server__tool` (its server is started
    /// in the agent's sandbox for the call).
    name: String,
    /// The arguments as a JSON object, e.g. '{"path": "notes.txt"}'.
    #[arg(default_value = "{}")]
    args: String,
    /// Approve the call if the policy asks (without it, there is no one to ask: denied).
    #[arg(long)]
    approve: bool,
}

/// Runs `warren tool`.
pub fn run(ctx: &Ctx, a: Args) -> ExitCode {
    // Unfinished renames, deletes and restores are finished first; an agent one of them
    // still involves runs no tool (tool_call refuses it).
    ctx.block_on_multi(ctx.warren.resume_pending());
    match ctx.warren.tool_call(&a.agent, &a.name, &a.args, a.approve) {
        Ok(r) => {
            let code = ctx.out.ok(&r, || match &r.error {
                None => match &r.output {
                    serde_json::Value::String(s) => s.clone(),
                    v => serde_json::to_string_pretty(v).unwrap_or_default(),
                },
                Some(_) => String::new(),
            });
            match &r.error {
                None => code,
                Some(e) => {
                    eprintln!("error: {}: {}", e.code, e.message);
                    ExitCode::from(1)
                }
            }
        }
        Err(e) => ctx.out.fail(&e),
    }
}
