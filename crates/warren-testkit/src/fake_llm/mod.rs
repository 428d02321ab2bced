//! Fake LLM provider servers for tests: one real HTTP server per test on 127.0.0.1:0 speaking
//! the OpenAI Chat Completions, Anthropic Messages or Ollama chat wire format, streamed
//! (SSE / NDJSON, as the request asks) or not. Each also serves its vendor's model list
//! (`GET /v1/models` for OpenAI and Anthropic, `GET /api/tags` for Ollama) in the real shape,
//! listing [`FAKE_MODELS`] unless the test sets others ([`FakeLlm::set_models`]) or makes it
//! refuse ([`FakeLlm::refuse_models`]); those requests are recorded too.
//!
//! ```text
//! let fake = FakeLlm::start(ProviderFamily::Openai)?;
//! fake.push(Reply::text("hello").usage(12, 3));
//! fake.push(Reply::tool_calls([("file_read", json!({"path": "a"})), ("shell", json!({"command": "ls"}))]));
//! // point a provider entry at fake.uri(), run the code under test, then:
//! assert_eq!(fake.requests()[0].body["parallel_tool_calls"], false);
//! ```
//!
//! A request the script does not expect (script exhausted, wrong path, body not JSON) gets a
//! loud HTTP error and is recorded; so does a request the real API would reject with a 400
//! (a tool call without its result in the history, a result without its call, OpenAI's
//! `parallel_tool_calls` without tools, Anthropic without `max_tokens`). Dropping the server
//! panics over recorded failures unless the test took them with
//! [`FakeLlm::acknowledge_failures`].

#![warn(missing_docs)]

mod anthropic;
mod ollama;
mod openai;
mod script;
mod server;
mod validate;

pub use script::{Reply, ScriptedCall};
pub use server::{closed_port_uri, models_path, wire_path, FakeLlm, RecordedRequest, FAKE_MODELS};
pub use warren_types::ProviderFamily;
