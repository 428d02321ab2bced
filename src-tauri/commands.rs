//! The typed commands the window calls. Each one calls one `warren-api` function and returns
//! its result; the TypeScript side is generated into `ui/src/bindings.ts` (see `bindings`).

mod activity;
mod config_file;
mod cron;
mod editor;
mod import;
mod lifecycle;
mod live;
mod mcp;
mod memory;
mod memory_settings;
mod network;
mod pause;
mod profiles;
mod providers;
mod settings;

pub use crate::core::{blocking, Core, InstallInfo};
use tauri::State;
use warren_types::{
    AgentDetail, AgentSummary, ApiError, CreateAgentRequest, NewAgentChoices, ProviderSummary,
};

/// The install this window shows, or the error that stopped its first-start setup.
#[tauri::command]
#[specta::specta]
pub async fn install_info(core: State<'_, Core>) -> Result<InstallInfo, ApiError> {
    core.start.clone()
}

/// Every agent of the install.
#[tauri::command]
#[specta::specta]
pub async fn list_agents(core: State<'_, Core>) -> Result<Vec<AgentSummary>, ApiError> {
    blocking(&core, warren_api::Warren::list_agents).await
}

/// One agent with its grants and the references to it.
#[tauri::command]
#[specta::specta]
pub async fn show_agent(core: State<'_, Core>, alias: String) -> Result<AgentDetail, ApiError> {
    blocking(&core, move |w| w.show_agent(&alias)).await
}

/// Adds an agent (the config keeps its comments).
#[tauri::command]
#[specta::specta]
pub async fn create_agent(
    core: State<'_, Core>,
    req: CreateAgentRequest,
) -> Result<AgentSummary, ApiError> {
    blocking(&core, move |w| w.create_agent(req)).await
}

/// What a new agent starts with and may choose from (the create form's selects).
#[tauri::command]
#[specta::specta]
pub async fn new_agent_choices(core: State<'_, Core>) -> Result<NewAgentChoices, ApiError> {
    blocking(&core, warren_api::Warren::new_agent_choices).await
}

/// The configured provider routes.
#[tauri::command]
#[specta::specta]
pub async fn providers(core: State<'_, Core>) -> Result<Vec<ProviderSummary>, ApiError> {
    blocking(&core, warren_api::Warren::providers).await
}

/// Checks an alias against the alias rules, for inline validation while typing.
#[tauri::command]
#[specta::specta]
pub async fn check_alias(alias: String) -> Result<(), ApiError> {
    warren_api::check_alias(&alias)
}

/// The command and event set, for the invoke handler, the event registry and the bindings.
pub fn specta_builder<R: tauri::Runtime>() -> tauri_specta::Builder<R> {
    tauri_specta::Builder::<R>::new()
        // DTOs serialize and deserialize alike: one TypeScript type each.
        .disable_serde_phases()
        .commands(tauri_specta::collect_commands![
            install_info,
            list_agents,
            show_agent,
            create_agent,
            providers,
            check_alias,
            new_agent_choices,
            config_file::open_config_file,
            config_file::check_config_again,
            live::live_subscribe,
            live::live_unsubscribe,
            live::live_snapshot,
            live::agent_statuses,
            live::pending_approvals,
            live::answer_approval,
            live::send_prompt,
            live::cancel_turn,
            live::agent_meters,
            live::runtime_status,
            live::agent_turns,
            live::agent_sessions,
            live::session_turns,
            live::turn_events,
            lifecycle::rename_agent,
            lifecycle::delete_agent,
            lifecycle::list_archives,
            lifecycle::restore_agent,
            lifecycle::pending_operations,
            lifecycle::resume_operations,
            profiles::list_profiles,
            profiles::preview_profile_edit,
            profiles::save_profile_edit,
            profiles::delete_profile,
            profiles::restore_profile,
            profiles::create_profile,
            activity::usage_by_day,
            activity::tail_logs,
            activity::open_logs_folder,
            network::network_log,
            network::preview_allow_domain,
            network::allow_domain,
            pause::paused_agents,
            pause::set_agent_paused,
            pause::set_all_paused,
            memory::memory_recall,
            memory::memory_page,
            memory::memory_forget,
            memory::memory_grants,
            settings::provider_keys,
            settings::set_provider_key,
            settings::secret_backend,
            settings::sandbox_doctor,
            settings::desktop_settings,
            settings::set_start_hidden,
            settings::set_notifications,
            settings::set_start_on_login,
            cron::cron_jobs,
            cron::check_cron_job,
            cron::check_cron_edit,
            cron::add_cron_job,
            cron::edit_cron_job,
            cron::remove_cron_job,
            cron::run_cron_job,
            editor::agent_settings,
            editor::preview_agent_edit,
            editor::save_agent_edit,
            editor::permission_map,
            editor::explain_permission,
            editor::policy_check,
            mcp::mcp_servers,
            mcp::mcp_overview,
            mcp::preview_mcp_server,
            mcp::save_mcp_server,
            mcp::preview_remove_mcp_server,
            mcp::remove_mcp_server,
            mcp::set_agent_mcp_server,
            mcp::test_mcp_server,
            import::zeroclaw_install,
            import::plan_zeroclaw_import,
            import::import_zeroclaw,
            providers::preview_provider,
            providers::save_provider,
            providers::remove_provider,
            providers::test_provider,
            providers::provider_models,
            providers::detect_ollama,
            providers::first_run,
            providers::finish_first_run,
            memory_settings::memory_settings,
            memory_settings::preview_memory_settings,
            memory_settings::check_memory_settings,
            memory_settings::save_memory_settings,
        ])
        .events(tauri_specta::collect_events![
            crate::events::AgentsChanged,
            crate::events::AgentStatusChanged,
            crate::events::ApprovalsChanged,
            crate::events::BudgetAlert,
            crate::events::PausedChanged,
        ])
}

#[cfg(test)]
mod ipc_tests;

#[cfg(test)]
mod bindings {

    use std::path::Path;

    /// The TypeScript exporter settings of `ui/src/bindings.ts`.
    fn typescript() -> specta_typescript::Typescript {
        specta_typescript::Typescript::default()
            .header("// Generated from src-tauri/commands.rs by tauri-specta; do not edit.")
    }

    /// `ui/src/bindings.ts` must be what the commands generate today. Run with
    /// `WARREN_UPDATE_BINDINGS=1` to rewrite it after changing a command or a DTO.
    #[test]
    fn committed_bindings_are_fresh() {
        let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("ui/src/bindings.ts");
        let dir = tempfile::tempdir().unwrap();
        let fresh = dir.path().join("bindings.ts");
        super::specta_builder::<tauri::Wry>()
            .export(typescript(), &fresh)
            .unwrap();
        let fresh_text = std::fs::read_to_string(&fresh).unwrap();
        if std::env::var_os("WARREN_UPDATE_BINDINGS").is_some() {
            std::fs::write(&committed, &fresh_text).unwrap();
            return;
        }
        let committed_text = std::fs::read_to_string(&committed).unwrap_or_default();
        assert!(
            committed_text == fresh_text,
            "ui/src/bindings.ts is stale: regenerate it with \
             `WARREN_UPDATE_BINDINGS=1 cargo test -p warren-desktop --bin warren-desktop bindings`"
        );
    }
}
