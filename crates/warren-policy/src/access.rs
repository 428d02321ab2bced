//! The vocabulary of a decision: the access asked for, the rule that decided, and the denial.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::PathBuf;

/// The kind of access a tool asks for on a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum Access {
    /// Open for reading, list a directory.
    Read,
    /// Create, modify, remove.
    Write,
}

impl Access {
    /// The wire spelling (`read` / `write`).
    pub fn as_str(self) -> &'static str {
        match self {
            Access::Read => "read",
            Access::Write => "write",
        }
    }
}

impl fmt::Display for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// The rule that decided an authorization, allowed or denied (rules §2.1). The code is stable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// One of `/dev/null`, `/dev/zero`, `/dev/random`, `/dev/urandom`.
    Device,
    /// Inside the agent's own workspace.
    Workspace,
    /// Inside a sibling workspace granted `read_write`.
    ReadWriteGrant,
    /// Inside an `allowed_roots` entry of the risk profile.
    AllowedRoot,
    /// Inside a read-only root (a sibling granted `read`, or `shared/skills`): read allowed,
    /// write denied.
    ReadOnlyGrant,
    /// Inside a write-only root (a sibling granted `write`): write allowed, read denied.
    WriteOnlyGrant,
    /// Outside every root while `workspace_only` is off.
    Unrestricted,
    /// Outside every root while `workspace_only` is on.
    OutsideWorkspace,
    /// Under a `forbidden_paths` entry.
    ForbiddenPath,
    /// The config file, the `data/` tree or the deletion archives.
    RuntimeState,
    /// The path is malformed (NUL byte, empty, unsupported `~user`, no home for `~`).
    InvalidPath,
    /// More than 40 symbolic links were followed while resolving the path.
    SymlinkLoop,
    /// Another process's `/proc/<pid>` entries, or a write under `/proc` or `/sys`.
    KernelInterface,
    /// A write (rename, removal, replacement) of the install root or of a strict ancestor of a
    /// runtime-state path or of a root the agent may not write.
    ProtectedAncestor,
}

impl Rule {
    /// Every rule, in declaration order.
    pub const ALL: [Rule; 14] = [
        Rule::Device,
        Rule::Workspace,
        Rule::ReadWriteGrant,
        Rule::AllowedRoot,
        Rule::ReadOnlyGrant,
        Rule::WriteOnlyGrant,
        Rule::Unrestricted,
        Rule::OutsideWorkspace,
        Rule::ForbiddenPath,
        Rule::RuntimeState,
        Rule::InvalidPath,
        Rule::SymlinkLoop,
        Rule::KernelInterface,
        Rule::ProtectedAncestor,
    ];

    /// The stable snake_case code printed by `warren policy check`.
    pub fn code(self) -> &'static str {
        match self {
            Rule::Device => "device",
            Rule::Workspace => "workspace",
            Rule::ReadWriteGrant => "read_write_grant",
            Rule::AllowedRoot => "allowed_root",
            Rule::ReadOnlyGrant => "read_only_grant",
            Rule::WriteOnlyGrant => "write_only_grant",
            Rule::Unrestricted => "unrestricted",
            Rule::OutsideWorkspace => "outside_workspace",
            Rule::ForbiddenPath => "forbidden_path",
            Rule::RuntimeState => "runtime_state",
            Rule::InvalidPath => "invalid_path",
            Rule::SymlinkLoop => "symlink_loop",
            Rule::KernelInterface => "kernel_interface",
            Rule::ProtectedAncestor => "protected_ancestor",
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.code())
    }
}

/// The outcome of one authorization, allowed or not, with the resolved path it was decided on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Decision {
    /// Whether the access is allowed.
    pub allowed: bool,
    /// The access asked for.
    pub access: Access,
    /// The resolved path (the input as given when it could not be resolved).
    pub path: PathBuf,
    /// The path before symlink resolution (after `~`, joining and `..` normalisation).
    #[serde(skip)]
    pub lexical: PathBuf,
    /// The rule that decided.
    pub rule: Rule,
    /// Extra explanation for malformed paths.
    #[serde(skip)]
    pub detail: Option<String>,
}

impl Decision {
    /// Turns a denied decision into a [`Denial`], an allowed one into the authorized paths.
    pub fn into_result(self) -> Result<Authorized, Denial> {
        if self.allowed {
            Ok(Authorized {
                path: self.path,
                lexical: self.lexical,
                access: self.access,
                rule: self.rule,
            })
        } else {
            Err(Denial {
                path: self.path,
                access: self.access,
                rule: self.rule,
                detail: self.detail,
            })
        }
    }
}

/// A path the policy said yes to. Tools act on `path` (the resolved path), never on the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Authorized {
    /// The resolved path.
    pub path: PathBuf,
    /// The path before symlink resolution, used to refuse writing through a symlink leaf.
    pub lexical: PathBuf,
    /// The access granted.
    pub access: Access,
    /// The rule that allowed it.
    pub rule: Rule,
}

/// A denial: the path, the access and the rule that decided it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize)]
pub struct Denial {
    /// The resolved path (or the input when it could not be resolved).
    pub path: PathBuf,
    /// The access that was asked for.
    pub access: Access,
    /// The deciding rule.
    pub rule: Rule,
    /// Extra explanation for malformed paths.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl fmt::Display for Denial {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} access denied on {} (rule {})",
            self.access,
            self.path.display(),
            self.rule
        )?;
        if let Some(d) = &self.detail {
            write!(f, ": {d}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Tier;

    /// The JSON of every access, rule and tier is its documented code, and reads back.
    #[test]
    fn codes_serialise_as_their_wire_spelling() {
        let wire = |v: serde_json::Value| v.as_str().unwrap().to_string();
        for a in [Access::Read, Access::Write] {
            let v = serde_json::to_value(a).unwrap();
            assert_eq!(wire(v.clone()), a.as_str());
            assert_eq!(serde_json::from_value::<Access>(v).unwrap(), a);
        }
        for r in Rule::ALL {
            let v = serde_json::to_value(r).unwrap();
            assert_eq!(wire(v.clone()), r.code());
            assert_eq!(serde_json::from_value::<Rule>(v).unwrap(), r);
        }
        for t in Tier::ALL {
            let v = serde_json::to_value(t).unwrap();
            assert_eq!(wire(v.clone()), t.as_str());
            assert_eq!(serde_json::from_value::<Tier>(v).unwrap(), t);
        }
        assert_eq!(Rule::OutsideWorkspace.code(), "outside_workspace");
        assert_eq!(Tier::WriteOnly.as_str(), "write_only");
        // Display pads like a string, for the CLI's columns.
        assert_eq!(format!("[{:<11}]", Tier::ReadOnly), "[read_only  ]");
    }
}
