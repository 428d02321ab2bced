//! One module per command area; each `run` parses nothing more than clap gave it, calls one
//! `warren-api` function and renders the result.

pub mod agents;
pub mod config;
pub mod init;

use crate::output::Output;

/// What every command gets: the service handle and the renderer.
pub struct Ctx {
    /// The install.
    pub warren: warren_api::Warren,
    /// The renderer.
    pub out: Output,
}
