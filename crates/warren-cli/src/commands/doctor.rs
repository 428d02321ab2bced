//! `warren doctor`: what this machine offers and the sandbox each agent gets.

use super::Ctx;
use std::process::ExitCode;

/// Runs `warren doctor`.
pub fn run(ctx: &Ctx) -> ExitCode {
    ctx.out.result(ctx.warren.doctor(), |r| {
        let mut t = String::new();
        t.push_str(&match r.landlock_abi {
            0 => "landlock:    not supported by this kernel\n".to_string(),
            v => format!("landlock:    ABI {v}\n"),
        });
        t.push_str(&match (&r.bubblewrap, &r.bubblewrap_problem) {
            (Some(p), _) => format!("bubblewrap:  {p}\n"),
            (None, Some(why)) => format!("bubblewrap:  unavailable ({why})\n"),
            (None, None) => "bubblewrap:  unavailable\n".to_string(),
        });
        t.push_str(&format!("secrets:     {}\n", r.secrets));
        for a in &r.agents {
            let s = &a.sandbox;
            t.push_str(&format!(
                "agent {:<20} sandbox {} -> {}: {}\n",
                a.agent,
                s.configured,
                s.effective.as_deref().unwrap_or("UNAVAILABLE"),
                s.error.as_deref().unwrap_or(&s.reason)
            ));
            for l in &s.layers {
                t.push_str(&format!("      layer: {l}\n"));
            }
            for n in &s.notes {
                t.push_str(&format!("      limit: {n}\n"));
            }
        }
        t
    })
}
