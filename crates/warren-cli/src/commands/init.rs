//! `warren init [--preset locked_down|balanced|yolo]`.

use super::Ctx;
use std::process::ExitCode;
use warren_config::Preset;

/// Arguments of `warren init`.
#[derive(clap::Args)]
pub struct Args {
    /// Risk profile of the first agent: locked_down, balanced or yolo.
    #[arg(long, default_value = "balanced", value_parser = clap::builder::ValueParser::new(|s: &str| s.parse::<Preset>()))]
    preset: Preset,
}

/// Runs `warren init`.
pub fn run(ctx: &Ctx, args: Args) -> ExitCode {
    let path = ctx.warren.layout().config_path();
    let r = ctx.warren.init(args.preset).map(|()| {
        serde_json::json!({
            "ok": true,
            "config": path.display().to_string(),
            "preset": args.preset.as_str(),
            "agent": "assistant",
        })
    });
    ctx.out.result(r, |_| {
        format!(
            "Wrote {} (agent `assistant`, risk profile `{}`).\nNext: connect a provider (see the comments in the file), then `warren agents list`.",
            path.display(),
            args.preset
        )
    })
}
