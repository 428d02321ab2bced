//! Stable codes below the API: why a tool call failed ([`ToolErrorCode`]), why a provider call
//! failed ([`LlmErrorCode`]), why a turn failed ([`TurnFailure`]) and what a notice is about
//! ([`NoticeCode`]). Each is serialised as its snake_case name (the strings are part of the
//! event stream, `--json` output and stored events) and code matches on the variants, never on
//! the strings or on message text.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Defines a code enum: each variant with its wire name, `as_str`, `Display` and `ALL`.
macro_rules! codes {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $wire:literal, )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[cfg_attr(feature = "specta", derive(specta::Type))]
        pub enum $name {
            $( $(#[$vmeta])* #[serde(rename = $wire)] $variant, )*
        }

        impl $name {
            /// Every code, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),*];

            /// The snake_case name used on the wire.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $wire,)*
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

codes! {
    /// Why a tool call failed or was refused.
    pub enum ToolErrorCode {
        /// No tool of that name.
        UnknownTool = "unknown_tool",
        /// An argument is missing, of the wrong type or malformed (an empty or unparsable shell
        /// line included).
        InvalidArgument = "invalid_argument",
        /// The policy denied a path (the deciding rule is given beside the code).
        Denied = "denied",
        /// The shell line runs a program the risk profile does not allow.
        CommandNotAllowed = "command_not_allowed",
        /// The shell line cannot be analysed and there is no sandbox to contain it.
        SandboxRequired = "sandbox_required",
        /// The tool is not allowed by the risk profile.
        ToolNotAllowed = "tool_not_allowed",
        /// The agent is read-only and the tool has side effects.
        Readonly = "readonly",
        /// A high-risk shell command while high-risk commands are blocked.
        HighRiskBlocked = "high_risk_blocked",
        /// The delegation rules refuse the `delegate` call.
        DelegationRefused = "delegation_refused",
        /// The user denied the approval.
        ApprovalDenied = "approval_denied",
        /// The call needed approval and there was no one to ask.
        NoApprover = "no_approver",
        /// The hourly action budget is spent.
        BudgetExhausted = "budget_exhausted",
        /// The sandbox the profile requires is not available here.
        SandboxUnavailable = "sandbox_unavailable",
        /// The sandbox could not be set up.
        SandboxError = "sandbox_error",
        /// A path of the sandbox changed between its check and the sandbox's set-up.
        SandboxPathChanged = "sandbox_path_changed",
        /// The container runtime failed.
        ContainerError = "container_error",
        /// The file or directory does not exist.
        NotFound = "not_found",
        /// The file is larger than the tool reads.
        TooLarge = "too_large",
        /// The path is not a regular file.
        NotAFile = "not_a_file",
        /// The path's last component is a symbolic link.
        SymlinkLeaf = "symlink_leaf",
        /// The path changed between its check and its opening.
        PathChanged = "path_changed",
        /// The file cannot be written.
        NotWritable = "not_writable",
        /// The path is not a directory.
        NotADirectory = "not_a_directory",
        /// `file_edit` found no match of the old text.
        EditNoMatch = "edit_no_match",
        /// `file_edit` found the old text more than once.
        EditAmbiguous = "edit_ambiguous",
        /// The file is not UTF-8 text.
        NotText = "not_text",
        /// The command ran and exited unsuccessfully.
        CommandFailed = "command_failed",
        /// The call ran out of time.
        Timeout = "timeout",
        /// The call was cancelled.
        Cancelled = "cancelled",
        /// An I/O error.
        Io = "io",
        /// The MCP server answered the call with an error.
        McpCallFailed = "mcp_call_failed",
        /// The MCP server stopped before the call was sent.
        McpServerGone = "mcp_server_gone",
        /// The directory is not a git repository.
        NotARepository = "not_a_repository",
        /// A git metadata path is a symbolic link.
        GitMetadataSymlink = "git_metadata_symlink",
        /// Git metadata is unusable (a setting or file Warren refuses).
        GitMetadata = "git_metadata",
        /// A git write inside a container runtime.
        GitWriteInContainer = "git_write_in_container",
        /// A git object is missing.
        GitMissingObject = "git_missing_object",
        /// Another git failure.
        GitError = "git_error",
        /// Warren's own storage failed while deciding the call.
        Internal = "internal",
    }
}

codes! {
    /// Why a call to a model provider failed.
    pub enum LlmErrorCode {
        /// The provider could not be reached.
        ProviderUnreachable = "provider_unreachable",
        /// The provider did not answer in time.
        ProviderTimeout = "provider_timeout",
        /// The provider answered with an HTTP error status.
        ProviderHttp = "provider_http",
        /// The answer could not be read.
        MalformedResponse = "malformed_response",
        /// The streamed answer broke off.
        StreamInterrupted = "stream_interrupted",
        /// The provider reported an error in its answer.
        ProviderError = "provider_error",
        /// No API key is available for the provider.
        NoApiKey = "no_api_key",
        /// The provider reference names no configured provider.
        UnknownProvider = "unknown_provider",
        /// The request could not be built.
        InvalidRequest = "invalid_request",
    }
}

codes! {
    /// Why a turn failed: the `code` of a `turn_failed` event and of a failed turn's record.
    pub enum TurnFailure {
        /// The session store failed.
        Storage = "storage",
        /// The turn ran longer than `turn_timeout_secs`.
        TurnTimeout = "turn_timeout",
        /// Today's spend could not be read.
        BudgetUnavailable = "budget_unavailable",
        /// Today's spend reached `max_cost_per_day_cents`.
        CostBudgetExceeded = "cost_budget_exceeded",
        /// The model asked for several tool calls while single-tool rounds are on.
        MultipleToolCalls = "multiple_tool_calls",
        /// The provider could not be reached.
        ProviderUnreachable = "provider_unreachable",
        /// The provider did not answer in time.
        ProviderTimeout = "provider_timeout",
        /// The provider answered with an HTTP error status.
        ProviderHttp = "provider_http",
        /// The provider's answer could not be read.
        MalformedResponse = "malformed_response",
        /// The provider's streamed answer broke off.
        StreamInterrupted = "stream_interrupted",
        /// The provider reported an error.
        ProviderError = "provider_error",
        /// No API key is available for the provider.
        NoApiKey = "no_api_key",
        /// The agent's provider reference names no configured provider.
        UnknownProvider = "unknown_provider",
        /// The provider request could not be built.
        InvalidRequest = "invalid_request",
        /// The turn could not be set up or ended without an answer.
        Internal = "internal",
        /// A code this version does not know (an event stored by a newer one).
        #[serde(other)]
        Other = "other",
    }
}

impl From<LlmErrorCode> for TurnFailure {
    fn from(code: LlmErrorCode) -> Self {
        match code {
            LlmErrorCode::ProviderUnreachable => TurnFailure::ProviderUnreachable,
            LlmErrorCode::ProviderTimeout => TurnFailure::ProviderTimeout,
            LlmErrorCode::ProviderHttp => TurnFailure::ProviderHttp,
            LlmErrorCode::MalformedResponse => TurnFailure::MalformedResponse,
            LlmErrorCode::StreamInterrupted => TurnFailure::StreamInterrupted,
            LlmErrorCode::ProviderError => TurnFailure::ProviderError,
            LlmErrorCode::NoApiKey => TurnFailure::NoApiKey,
            LlmErrorCode::UnknownProvider => TurnFailure::UnknownProvider,
            LlmErrorCode::InvalidRequest => TurnFailure::InvalidRequest,
        }
    }
}

codes! {
    /// What a `notice` event is about.
    pub enum NoticeCode {
        /// The agent's memory could not be opened; the turn runs without it.
        MemoryUnavailable = "memory_unavailable",
        /// The route cannot restrict the model to one tool call per round.
        SingleToolRoundsUnsupported = "single_tool_rounds_unsupported",
        /// An MCP server failed; its tools are not available in this turn.
        McpServerFailed = "mcp_server_failed",
        /// A provider route entry failed and the next entry is tried.
        ProviderFallback = "provider_fallback",
        /// A code this version does not know (an event stored by a newer one).
        #[serde(other)]
        Other = "other",
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The JSON string a code serialises to (shared by the view-code tests).
    pub(crate) fn wire<T: Serialize>(v: T) -> String {
        serde_json::to_value(v)
            .unwrap()
            .as_str()
            .unwrap()
            .to_string()
    }

    /// The wire name, `as_str` and `Display` agree for every code, every name is unique
    /// snake_case, and each name reads back as its code.
    #[test]
    fn every_code_reads_back_from_its_name() {
        fn check<T>(all: &[T])
        where
            T: Serialize + for<'de> Deserialize<'de> + fmt::Display + PartialEq + fmt::Debug + Copy,
        {
            let mut seen = std::collections::BTreeSet::new();
            for c in all {
                let name = wire(*c);
                assert_eq!(name, c.to_string());
                assert!(
                    name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'),
                    "{name}"
                );
                assert!(seen.insert(name.clone()), "{name} twice");
                let back: T = serde_json::from_value(serde_json::Value::String(name)).unwrap();
                assert_eq!(back, *c);
            }
        }
        check(ToolErrorCode::ALL);
        check(LlmErrorCode::ALL);
        check(TurnFailure::ALL);
        check(NoticeCode::ALL);
        // Every provider failure is a turn failure of the same name.
        for c in LlmErrorCode::ALL {
            assert_eq!(TurnFailure::from(*c).as_str(), c.as_str());
        }
        // A stored event of a newer version still reads.
        let newer: TurnFailure = serde_json::from_str("\"no_such_code\"").unwrap();
        assert_eq!(newer, TurnFailure::Other);
        let newer: NoticeCode = serde_json::from_str("\"no_such_code\"").unwrap();
        assert_eq!(newer, NoticeCode::Other);
        assert!(serde_json::from_str::<ToolErrorCode>("\"no_such_code\"").is_err());
    }
}
