//! `warren init [--preset locked_down|balanced|yolo]`.

use super::choices::PresetName;
use super::Ctx;
use std::process::ExitCode;
use warren_config::Preset;

/// Arguments of `warren init`.
#[derive(clap::Args)]
pub struct Args {
    /// Risk profile of the first agent.
    #[arg(long, value_enum, default_value_t = PresetName::Balanced)]
    preset: PresetName,
}

/// Runs `warren init`.
pub fn run(ctx: &Ctx, args: Args) -> ExitCode {
    let preset = Preset::from(args.preset);
    let path = ctx.warren.layout().config_path();
    let r = ctx.warren.init(preset).map(|()| {
        serde_json::json!({
            "ok": true,
            "config": path.display().to_string(),
            "preset": preset.as_str(),
            "agent": "assistant",
        })
    });
    ctx.out.result(r, |_| {
        format!(
            "Wrote {} (agent `assistant`, risk profile `{}`).\nNext: connect a provider (see the comments in the file), then `warren agents list`.",
            path.display(),
            preset
        )
    })
}
