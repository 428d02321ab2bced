//! Cron (rules §1.1 `[cron.<id>]`): jobs from the config plus jobs created at runtime
//! (`data/cron.db`, kept by `warren_state::cron`), UTC cron expressions, run history, and the
//! missed-run policy — after a sleep or downtime a job runs once, not once per missed tick.
//! Each run is a normal turn with trigger `cron`, its events stored with its session.

mod scheduler;

pub use scheduler::{Scheduler, TickReport};
