//! Integration tests of the ACP server: the conversation over an in-memory pipe, session
//! liveness, and the MCP servers a session is given.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod acp;
mod mcp;
