//! The normalised chat model shared by every provider family: requests, messages, tool specs,
//! streamed events and the final response.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One call to a model: the conversation so far and the tools it may call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    /// System prompt; empty means none.
    #[serde(default)]
    pub system: String,
    /// The conversation, oldest first.
    pub messages: Vec<Message>,
    /// Tools the model may call natively; empty means a call without tools.
    #[serde(default)]
    pub tools: Vec<ToolSpec>,
    /// Ask for at most one tool call per response (rules §6.4). Sent only to entries whose family
    /// (or `single_tool_control` override) supports it, and only when `tools` is not empty.
    #[serde(default)]
    pub single_tool: bool,
    /// Upper bound on generated tokens; `None` leaves the vendor default (Anthropic needs one:
    /// 4096 is sent).
    #[serde(default)]
    pub max_tokens: Option<u32>,
    /// Offer `tools` (so a history holding tool calls stays valid) but forbid calling them:
    /// `tool_choice: "none"` (OpenAI), `{"type": "none"}` (Anthropic); Ollama, which has no
    /// such control, gets no tools. Used for the summary call at the iteration cap.
    #[serde(default)]
    pub forbid_tool_calls: bool,
    /// Stream the response (SSE / NDJSON). True by default; false asks for one JSON body.
    #[serde(default = "default_stream")]
    pub stream: bool,
}

fn default_stream() -> bool {
    true
}

impl ChatRequest {
    /// A streaming request with a system prompt and messages, no tools.
    pub fn new(system: impl Into<String>, messages: Vec<Message>) -> Self {
        ChatRequest {
            system: system.into(),
            messages,
            tools: Vec::new(),
            single_tool: false,
            forbid_tool_calls: false,
            max_tokens: None,
            stream: true,
        }
    }

    /// The same request with these tools.
    pub fn with_tools(mut self, tools: Vec<ToolSpec>) -> Self {
        self.tools = tools;
        self
    }
}

/// One entry of the conversation history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// What the user said.
    User {
        /// The text.
        content: String,
    },
    /// What the model answered: text and native tool calls, in the model's order.
    Assistant {
        /// Text (may be empty when the model only called tools).
        #[serde(default)]
        text: String,
        /// Tool calls the model asked for.
        #[serde(default)]
        tool_calls: Vec<ToolCall>,
    },
    /// The result of one tool call, matched to it by `call_id`.
    Tool {
        /// The id of the call this answers.
        call_id: String,
        /// The tool's name (Ollama matches results by name).
        name: String,
        /// The result text given to the model.
        content: String,
        /// The call failed (Anthropic marks the result `is_error`).
        #[serde(default)]
        is_error: bool,
    },
}

impl Message {
    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Message::User {
            content: content.into(),
        }
    }

    /// An assistant message with text only.
    pub fn assistant(text: impl Into<String>) -> Self {
        Message::Assistant {
            text: text.into(),
            tool_calls: Vec::new(),
        }
    }

    /// A successful tool result.
    pub fn tool_result(call: &ToolCall, content: impl Into<String>) -> Self {
        Message::Tool {
            call_id: call.id.clone(),
            name: call.name.clone(),
            content: content.into(),
            is_error: false,
        }
    }
}

/// A tool the model may call, described by a JSON schema of its arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The registered tool name.
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// JSON schema of the arguments object.
    pub parameters: Value,
}

/// A tool call requested by the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The call id given by the provider (generated when the provider gives none).
    pub id: String,
    /// The tool name.
    pub name: String,
    /// The arguments, parsed as JSON (an object for well-behaved models).
    pub arguments: Value,
}

/// Token counts of one response.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens (Anthropic: including cache creation and cache reads).
    pub input_tokens: u64,
    /// Generated tokens.
    pub output_tokens: u64,
}

/// Prices of a provider entry, USD per million tokens; a missing price counts as zero.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Prices {
    /// USD per million input tokens.
    pub input_per_mtok: Option<f64>,
    /// USD per million output tokens.
    pub output_per_mtok: Option<f64>,
}

impl Prices {
    /// The cost of `usage` in USD.
    pub fn cost_usd(&self, usage: Usage) -> f64 {
        let i = self.input_per_mtok.unwrap_or(0.0) * usage.input_tokens as f64;
        let o = self.output_per_mtok.unwrap_or(0.0) * usage.output_tokens as f64;
        (i + o) / 1_000_000.0
    }
}

/// Why the model stopped generating.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model finished its answer.
    EndTurn,
    /// The model stopped to have tools called.
    ToolUse,
    /// The token limit was reached.
    MaxTokens,
    /// A stop sequence was generated.
    StopSequence,
    /// Anything else, as the vendor spelled it.
    Other(String),
}

/// The complete answer of one provider call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatResponse {
    /// The route entry that answered (`"family.alias"`).
    pub provider: String,
    /// The model name sent to the vendor.
    pub model: String,
    /// All text of the answer, concatenated.
    pub text: String,
    /// Native tool calls in the model's order.
    pub tool_calls: Vec<ToolCall>,
    /// Token counts. Count them even when the caller rejects the response.
    pub usage: Usage,
    /// Cost of `usage` at the entry's prices, in USD.
    pub cost_usd: f64,
    /// Why generation stopped.
    pub stop_reason: StopReason,
}

/// Something that happened while a response streamed in. Tool-call events carry the call's
/// position in the response (0-based).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamEvent {
    /// More answer text.
    TextDelta {
        /// The new text.
        text: String,
    },
    /// The model started a tool call.
    ToolCallStarted {
        /// Position of the call in the response.
        index: usize,
        /// The call id.
        id: String,
        /// The tool name.
        name: String,
    },
    /// More of a tool call's JSON arguments (raw text, not yet parseable on its own).
    ToolCallArgsDelta {
        /// Position of the call in the response.
        index: usize,
        /// The next piece of the arguments text.
        delta: String,
    },
    /// Final token counts and cost of the response (sent once, when it completed).
    Usage {
        /// Token counts.
        usage: Usage,
        /// Cost in USD.
        cost_usd: f64,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn history_round_trips_through_json() {
        let call = ToolCall {
            id: "c1".into(),
            name: "shell".into(),
            arguments: json!({"command": "ls"}),
        };
        let history = vec![
            Message::user("hi"),
            Message::Assistant {
                text: String::new(),
                tool_calls: vec![call.clone()],
            },
            Message::tool_result(&call, "a\nb"),
        ];
        let text = serde_json::to_string(&history).unwrap();
        let back: Vec<Message> = serde_json::from_str(&text).unwrap();
        assert_eq!(back, history);
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v[0], json!({"role": "user", "content": "hi"}));
        assert_eq!(v[2]["role"], "tool");
    }

    #[test]
    fn cost_from_prices() {
        let usage = Usage {
            input_tokens: 1_000_000,
            output_tokens: 500_000,
        };
        let both = Prices {
            input_per_mtok: Some(3.0),
            output_per_mtok: Some(15.0),
        };
        assert!((both.cost_usd(usage) - 10.5).abs() < 1e-9);
        let input_only = Prices {
            input_per_mtok: Some(3.0),
            output_per_mtok: None,
        };
        assert!((input_only.cost_usd(usage) - 3.0).abs() < 1e-9);
        assert_eq!(Prices::default().cost_usd(usage), 0.0);
    }
}
