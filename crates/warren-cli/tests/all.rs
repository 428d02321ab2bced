//! Black-box tests of the `warren` binary against hermetic installs. One module per command area.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod approvals_cli;
mod authority_cli;
mod bounds_cli;
mod common;
mod config_cli;
mod cron_cli;
mod escape_cli;
mod git_cli;
mod import_cli;
mod lifecycle_cli;
mod mcp_cli;
mod memory_backends_cli;
mod memory_cli;
mod network_cli;
mod policy_cli;
mod providers_cli;
mod run_cli;
mod secrets_cli;
mod serve_cli;
mod sessions_cli;
mod settings_cli;
mod words_cli;
