//! `warren`: the headless Warren command line. Each subcommand parses its arguments, calls one
//! `warren-api` function and renders the result (human text, or JSON with `--json`).
//! Exit codes: 0 ok, 1 denied or failed, 2 usage error or invalid config.

mod commands;
mod output;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

/// Warren: a desktop home for AI agents, headless.
#[derive(Parser)]
#[command(name = "warren", version, about, propagate_version = true)]
struct Cli {
    /// Install root (default: $WARREN_HOME, else $XDG_DATA_HOME/warren, else ~/.local/share/warren).
    #[arg(long, global = true, value_name = "DIR")]
    home: Option<PathBuf>,
    /// Machine-readable JSON output.
    #[arg(long, global = true)]
    json: bool,
    /// More log output on stderr (-v info, -vv debug).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    verbose: u8,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Write a fresh, commented config with one agent.
    Init(commands::init::Args),
    /// Inspect the config.
    #[command(subcommand)]
    Config(commands::config::Cmd),
    /// List, show, create, rename, delete, restore, pause and resume agents.
    #[command(subcommand)]
    Agents(commands::agents::Cmd),
    /// List, show, change, create and remove risk and runtime profiles.
    #[command(subcommand)]
    Profiles(commands::profiles::Cmd),
    /// List, add, test and remove provider routes (keys go to the secret store).
    #[command(subcommand)]
    Providers(commands::providers::Cmd),
    /// Store, recall, list and forget an agent's memory.
    #[command(subcommand)]
    Memory(commands::memory::Cmd),
    /// Store, list and remove secrets (API keys).
    #[command(subcommand)]
    Secrets(commands::secrets::Cmd),
    /// Show an agent's effective policy, or check one path against it.
    #[command(subcommand)]
    Policy(commands::policy::Cmd),
    /// Run one tool call through the same gates as the agent loop.
    Tool(commands::tool::Args),
    /// Report the sandbox each agent gets on this machine.
    Doctor,
    /// Run one prompt for an agent (a turn), streaming its events.
    Run(commands::run::Args),
    /// List, add, edit, remove and run cron jobs.
    #[command(subcommand)]
    Cron(commands::cron::Cmd),
    /// The headless runtime: cron jobs and ACP session liveness, until SIGTERM.
    Serve,
    /// Serve one agent over the Agent Client Protocol on stdin/stdout (for editors).
    Acp(commands::acp::Args),
    /// Approval requests waiting in any process of the install, and answering them.
    #[command(subcommand)]
    Approvals(commands::approvals::Cmd),
    /// List chat sessions with their turn counts and last activity.
    #[command(subcommand)]
    Sessions(commands::sessions::Cmd),
    /// Provider requests, tokens and cost per agent and day.
    Usage(commands::usage::UsageArgs),
    /// The newest lines of Warren's logs, by agent and level.
    Logs(commands::usage::LogsArgs),
    /// Check tool-call receipts.
    #[command(subcommand)]
    Receipts(commands::receipts::Cmd),
    /// Import another agent host's install (ZeroClaw).
    #[command(subcommand)]
    Import(commands::import::Cmd),
    /// List an agent's MCP servers, their status and tools.
    #[command(subcommand)]
    Mcp(commands::mcp::Cmd),
}

fn main() -> ExitCode {
    warren_api::protect_process();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(e, std::env::args_os().skip(1)),
    };
    let env = warren_config::HomeEnv::from_process();
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    let out = output::Output::new(cli.json);
    let root = match warren_config::resolve_install_root(cli.home.as_deref(), &env, &cwd) {
        Ok(r) => r,
        Err(e) => {
            return out.fail(&warren_api::ApiError::new(
                warren_api::ErrorCode::InvalidArgument,
                e.to_string(),
            ))
        }
    };
    let layout = warren_config::InstallLayout::new(root);
    let filter = match cli.verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    let logs = layout.root().exists().then(|| layout.logs_dir());
    let _guard = warren_api::logging::init_logging(filter, logs.as_deref());
    let warren = warren_api::Warren::open_with_env(layout, warren_api::HostEnv::from_process());
    let ctx = commands::Ctx { warren, out };
    match cli.command {
        Command::Init(a) => commands::init::run(&ctx, a),
        Command::Config(c) => commands::config::run(&ctx, c),
        Command::Agents(c) => commands::agents::run(&ctx, c),
        Command::Profiles(c) => commands::profiles::run(&ctx, c),
        Command::Providers(c) => commands::providers::run(&ctx, c),
        Command::Memory(c) => commands::memory::run(&ctx, c),
        Command::Secrets(c) => commands::secrets::run(&ctx, c),
        Command::Receipts(c) => commands::receipts::run(&ctx, c),
        Command::Run(a) => commands::run::run(&ctx, a),
        Command::Policy(c) => commands::policy::run(&ctx, c),
        Command::Tool(a) => commands::tool::run(&ctx, a),
        Command::Doctor => commands::doctor::run(&ctx),
        Command::Cron(c) => commands::cron::run(&ctx, c),
        Command::Serve => commands::serve::run(&ctx),
        Command::Acp(a) => commands::acp::run(&ctx, a),
        Command::Approvals(c) => commands::approvals::run(&ctx, c),
        Command::Sessions(c) => commands::sessions::run(&ctx, c),
        Command::Usage(a) => commands::usage::usage(&ctx, a),
        Command::Logs(a) => commands::usage::logs(&ctx, a),
        Command::Import(c) => commands::import::run(&ctx, c),
        Command::Mcp(c) => commands::mcp::run(&ctx, c),
    }
}

/// A command line clap refused. Help and version go out as clap prints them; an error is
/// clap's text on stderr and, when `--json` was asked for, also the JSON error document on
/// stdout like every other failure (code `invalid_argument`, exit 2), so a script reading
/// stdout gets JSON whatever went wrong.
fn usage_error(e: clap::Error, args: impl Iterator<Item = std::ffi::OsString>) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) || !json_asked(args) {
        e.exit();
    }
    let text = e.render().to_string();
    let mut lines: Vec<&str> = text
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.is_empty() && !l.starts_with("For more information"))
        .collect();
    let message = lines
        .first()
        .map(|l| l.strip_prefix("error: ").unwrap_or(l).to_string())
        .unwrap_or_else(|| e.kind().to_string());
    if !lines.is_empty() {
        lines.remove(0);
    }
    let details = lines.into_iter().map(|l| l.trim().to_string()).collect();
    let err = warren_api::ApiError::new(warren_api::ErrorCode::InvalidArgument, message)
        .with_details(details);
    output::Output::new(true).fail(&err)
}

/// Whether `--json` is among the options (arguments after a bare `--` are operands).
fn json_asked(args: impl Iterator<Item = std::ffi::OsString>) -> bool {
    args.take_while(|a| a != "--").any(|a| a == "--json")
}

#[cfg(test)]
mod docs_list_every_command {
    use super::Cli;
    use clap::CommandFactory;

    /// Every command path, `["agents", "create"]` and so on (clap's own `help` left out).
    fn paths(cmd: &clap::Command, prefix: &[String], out: &mut Vec<Vec<String>>) {
        for sub in cmd.get_subcommands() {
            if sub.get_name() == "help" {
                continue;
            }
            let mut p = prefix.to_vec();
            p.push(sub.get_name().to_string());
            out.push(p.clone());
            paths(sub, &p, out);
        }
    }

    /// docs/cli.md's synopsis has a line `warren <command> …` naming each subcommand (as a
    /// word of that line: `warren agents list | show A` lists both `list` and `show`).
    #[test]
    fn docs_cli_md_lists_every_command_and_subcommand() {
        let docs = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/cli.md"),
        )
        .unwrap();
        let mut all = Vec::new();
        paths(&Cli::command(), &[], &mut all);
        assert!(all.len() > 40, "the walk found only {all:?}");
        let mut missing = Vec::new();
        for p in &all {
            let listed = docs.lines().any(|line| {
                let mut words = line.split(|c: char| c.is_whitespace() || c == '|');
                words.next() == Some("warren") && {
                    let rest: Vec<&str> = words.collect();
                    rest.first() == Some(&p[0].as_str())
                        && p[1..].iter().all(|w| rest.contains(&w.as_str()))
                }
            });
            if !listed {
                missing.push(p.join(" "));
            }
        }
        assert!(
            missing.is_empty(),
            "docs/cli.md does not list: {}",
            missing.join(", ")
        );
    }
}
