//! Provider clients for the three wire protocols Warren speaks: OpenAI Chat Completions,
//! Anthropic Messages and Ollama's native chat API. Each supports native tool calling and
//! streaming (SSE / NDJSON), reports usage and cost, and runs inside a [`Route`] whose fallbacks
//! take over on connection errors, timeouts, 429 and 5xx (rules §6.5).
//!
//! The agent loop uses it like this: build [`Providers`] once with a [`KeyResolver`], get the
//! agent's [`Route`] from the config, check [`Route::supports_single_tool`], then call
//! [`Route::chat`] once per round with a [`ChatRequest`], receiving [`RouteEvent`]s as the
//! answer streams in and a [`ChatResponse`] at the end. [`recover_tool_calls`] finds tool calls
//! that a model wrote as text.

#![warn(missing_docs)]

mod assemble;
mod client;
mod entry;
mod error;
mod http;
mod keys;
mod lines;
mod models;
mod providers;
mod recover;
mod route;
pub mod sse;
mod types;
mod wire;

pub use assemble::MAX_REPLY_BYTES;
pub use client::ProviderClient;
pub use entry::{family_supports_single_tool, ProviderEntry};
pub use error::{LlmError, TimeoutPhase};
pub use http::{service_client, ProxyMode};
pub use keys::{KeyResolver, KeySource, NoKeys, ProcessEnvKeys, StaticKeys};
pub use models::ModelInfo;
pub use providers::{resolve_route, Providers};
pub use recover::{recover_tool_calls, Recovered};
pub use route::{Route, RouteEvent};
pub use types::{
    ChatRequest, ChatResponse, Message, Prices, StopReason, StreamEvent, ToolCall, ToolSpec, Usage,
};
pub use warren_types::ProviderFamily;
