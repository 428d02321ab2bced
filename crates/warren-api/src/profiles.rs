//! Risk and runtime profile editing (rules §1.1, the desktop's Profiles screen): list profiles
//! with the agents using them, preview an edit (the real validator's findings and a diff of
//! the file), save it (only the changed keys are written, so comments and layout stay), and
//! delete a profile no agent references.

use crate::{errors::config_error, Warren};
use serde::{Deserialize, Serialize};
use warren_config::{parse_for_install, ConfigDocument, ConfigError, DocumentError};
use warren_types::{
    ApiError, Config, ConfigIssue, DomainRules, ErrorCode, RiskProfile, RuntimeProfile,
};

/// Which kind of profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum ProfileKind {
    /// `[risk_profiles.<name>]`.
    Risk,
    /// `[runtime_profiles.<name>]`.
    Runtime,
}

impl ProfileKind {
    fn section(self) -> &'static str {
        match self {
            ProfileKind::Risk => "risk_profiles",
            ProfileKind::Runtime => "runtime_profiles",
        }
    }
}

/// One profile with its effective values and the agents that use it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ProfileView {
    /// Risk or runtime.
    pub kind: ProfileKind,
    /// The profile's name.
    pub name: String,
    /// Agents whose `risk_profile` / `runtime_profile` names it.
    pub used_by: Vec<String>,
    /// The effective values of a risk profile (defaults filled in).
    pub risk: Option<RiskProfile>,
    /// The effective values of a runtime profile (defaults filled in).
    pub runtime: Option<RuntimeProfile>,
}

/// A profile as a delete removed it: enough to put it back as it was.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RemovedProfile {
    /// Risk or runtime.
    pub kind: ProfileKind,
    /// The profile's name.
    pub name: String,
    /// Its `[<section>.<name>]` table as TOML text, comments included.
    pub text: String,
}

/// One field to set (or, with no value, to remove so its default applies).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct FieldChange {
    /// The key inside the profile table, e.g. `single_tool_rounds`.
    pub field: String,
    /// The new value; none removes the key.
    pub value: Option<FieldValue>,
}

/// A value a profile field can take.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(untagged)]
pub enum FieldValue {
    /// `true` / `false`.
    Bool(bool),
    /// A number (whole numbers are written as TOML integers).
    Number(f64),
    /// Text (also what a number field holds when what was typed is not a number).
    Text(String),
    /// A list of text.
    List(Vec<String>),
    /// A risk profile's `network` by domain (`{ allow = [...], deny = [...], allow_private }`);
    /// a table already written is edited key by key, its comments kept.
    Domains(DomainRules),
}

/// An edit of one profile (a new name creates the profile).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ProfileEdit {
    /// Risk or runtime.
    pub kind: ProfileKind,
    /// The profile's name.
    pub name: String,
    /// The fields that change.
    pub changes: Vec<FieldChange>,
}

/// What a diff line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum DiffKind {
    /// An unchanged line shown for context.
    Same,
    /// A line the edit adds.
    Add,
    /// A line the edit removes.
    Remove,
    /// Unchanged lines left out (the text is `…`).
    Gap,
}

/// One line of a diff of `config.toml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct DiffLine {
    /// What the line is.
    pub kind: DiffKind,
    /// The line's text.
    pub text: String,
}

/// What saving an edit would do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ProfilePreview {
    /// The changed lines of `config.toml`, with two lines of context.
    pub diff: Vec<DiffLine>,
    /// The validator's findings on the edited config (saving is refused while any exist).
    pub errors: Vec<ConfigIssue>,
}

fn invalid(message: impl Into<String>) -> ApiError {
    ApiError::new(ErrorCode::InvalidArgument, message)
}

fn profile_name_ok(name: &str) -> Result<(), ApiError> {
    warren_types::validate_alias(name).map_err(|e| invalid(format!("profile name `{name}`: {e}")))
}

/// Writes `v` at `path` as its TOML value.
pub(crate) fn set_field(
    doc: &mut ConfigDocument,
    path: &[&str],
    v: &FieldValue,
) -> Result<(), ApiError> {
    let done = match v {
        FieldValue::Bool(b) => doc.set_value(path, (*b).into()),
        // Whole numbers in i64's range are TOML integers (the validator then checks the range
        // of the field, e.g. that a count is not negative).
        FieldValue::Number(n) if n.fract() == 0.0 && n.abs() < 9.0e15 => {
            #[allow(clippy::cast_possible_truncation)]
            let i = *n as i64;
            doc.set_value(path, i.into())
        }
        FieldValue::Number(n) => doc.set_value(path, (*n).into()),
        FieldValue::Text(s) => doc.set_value(path, s.as_str().into()),
        FieldValue::List(items) => doc.set_value(
            path,
            ConfigDocument::string_array(items.iter().map(String::as_str)),
        ),
        FieldValue::Domains(rules) => doc.set_network_domains(path, rules),
    };
    done.map_err(|e| invalid(e.to_string()))
}

fn apply(doc: &mut ConfigDocument, edit: &ProfileEdit) -> Result<(), ApiError> {
    profile_name_ok(&edit.name)?;
    let section = edit.kind.section();
    for c in &edit.changes {
        let path = [section, edit.name.as_str(), c.field.as_str()];
        match &c.value {
            Some(v) => set_field(doc, &path, v)?,
            None => {
                doc.remove(&path).map_err(|e| invalid(e.to_string()))?;
            }
        }
    }
    Ok(())
}

fn used_by(cfg: &Config, kind: ProfileKind, name: &str) -> Vec<String> {
    cfg.agents
        .iter()
        .filter(|(_, a)| match kind {
            ProfileKind::Risk => a.risk_profile == name,
            ProfileKind::Runtime => a.runtime_profile.as_deref() == Some(name),
        })
        .map(|(alias, _)| alias.clone())
        .collect()
}

fn view(cfg: &Config, kind: ProfileKind, name: &str) -> Option<ProfileView> {
    let (risk, runtime) = match kind {
        ProfileKind::Risk => (Some(cfg.risk_profiles.get(name)?.clone()), None),
        ProfileKind::Runtime => (None, Some(cfg.runtime_profiles.get(name)?.clone())),
    };
    Some(ProfileView {
        kind,
        name: name.to_string(),
        used_by: used_by(cfg, kind, name),
        risk,
        runtime,
    })
}

/// The changed lines of `new` against `old` with `context` unchanged lines around each change
/// (a line diff by longest common subsequence; config files are small).
pub fn line_diff(old: &str, new: &str, context: usize) -> Vec<DiffLine> {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    // An edit changes a few lines of a long file: the lines both share at the start and at the
    // end are equal, and only what lies between needs the quadratic common-subsequence table.
    let head = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let tail = a[head..]
        .iter()
        .rev()
        .zip(b[head..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (mid_a, mid_b) = (&a[head..a.len() - tail], &b[head..b.len() - tail]);
    let (n, m) = (mid_a.len(), mid_b.len());
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if mid_a[i] == mid_b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let mut all: Vec<(DiffKind, &str)> = a[..head].iter().map(|l| (DiffKind::Same, *l)).collect();
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i < n && j < m && mid_a[i] == mid_b[j] {
            all.push((DiffKind::Same, mid_a[i]));
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1]) {
            all.push((DiffKind::Remove, mid_a[i]));
            i += 1;
        } else {
            all.push((DiffKind::Add, mid_b[j]));
            j += 1;
        }
    }
    all.extend(a[a.len() - tail..].iter().map(|l| (DiffKind::Same, *l)));
    let changed: Vec<usize> = (0..all.len())
        .filter(|k| all[*k].0 != DiffKind::Same)
        .collect();
    let near = |k: usize| changed.iter().any(|c| c.abs_diff(k) <= context);
    let mut out = Vec::new();
    let mut skipped = false;
    for (k, (kind, text)) in all.iter().enumerate() {
        if near(k) {
            if skipped && !out.is_empty() {
                out.push(DiffLine {
                    kind: DiffKind::Gap,
                    text: "…".into(),
                });
            }
            skipped = false;
            out.push(DiffLine {
                kind: *kind,
                text: (*text).to_string(),
            });
        } else {
            skipped = true;
        }
    }
    out
}

fn issue(i: &warren_config::Issue) -> ConfigIssue {
    ConfigIssue {
        path: i.path.clone(),
        message: i.message.clone(),
        line: i.line.and_then(|l| u32::try_from(l).ok()),
        column: i.column.and_then(|c| u32::try_from(c).ok()),
    }
}

impl Warren {
    /// What `apply` would change in `config.toml` (a diff with two lines of context) and the
    /// validator's findings on the result. Nothing is written. Every config editor (profiles,
    /// agent settings, provider routes) previews through this.
    pub(crate) fn preview_config_edit(
        &self,
        apply: impl FnOnce(&mut ConfigDocument) -> Result<(), ApiError>,
    ) -> Result<ProfilePreview, ApiError> {
        let (old, new, parsed) = self.edited_config(apply)?;
        let errors = match parsed {
            Ok(_) => Vec::new(),
            Err(errors) => errors,
        };
        Ok(ProfilePreview {
            diff: line_diff(&old, &new, 2),
            errors,
        })
    }

    /// Applies `apply` to the config's text without saving: the text before, the text after,
    /// and the edited config (or the validator's findings on it).
    #[allow(clippy::type_complexity)]
    pub(crate) fn edited_config(
        &self,
        apply: impl FnOnce(&mut ConfigDocument) -> Result<(), ApiError>,
    ) -> Result<(String, String, Result<Config, Vec<ConfigIssue>>), ApiError> {
        let old = self.load()?.text;
        let mut doc = ConfigDocument::parse(&old)
            .map_err(|e| ApiError::new(ErrorCode::InvalidConfig, e.to_string()))?;
        apply(&mut doc)?;
        let new = doc.to_string();
        let parsed = parse_for_install(&new, self.store.layout())
            .map(|(config, _)| config)
            .map_err(|errs| errs.issues.iter().map(issue).collect());
        Ok((old, new, parsed))
    }

    /// Saves `apply`'s edit when the whole config still validates (atomic, only the changed
    /// keys written, comments kept); otherwise nothing is written and the error is `apply`'s
    /// own or lists every finding.
    pub(crate) fn save_config_edit(
        &self,
        apply: impl FnOnce(&mut ConfigDocument) -> Result<(), ApiError>,
    ) -> Result<Config, ApiError> {
        let mut refused = None;
        let result = self.store.edit(|doc, _| {
            apply(doc).map_err(|e| {
                refused = Some(e.clone());
                ConfigError::Edit(DocumentError::Syntax(e.message))
            })
        });
        match (result, refused) {
            (Err(_), Some(e)) => Err(e),
            (r, _) => r.map(|((), cfg)| cfg).map_err(config_error),
        }
    }

    /// Every risk and runtime profile with its effective values and the agents using it.
    pub fn list_profiles(&self) -> Result<Vec<ProfileView>, ApiError> {
        let cfg = self.load()?.config;
        let risk = cfg
            .risk_profiles
            .keys()
            .filter_map(|n| view(&cfg, ProfileKind::Risk, n));
        let runtime = cfg
            .runtime_profiles
            .keys()
            .filter_map(|n| view(&cfg, ProfileKind::Runtime, n));
        Ok(risk.chain(runtime).collect())
    }

    /// What saving `edit` would change in `config.toml`, and what the validator says about
    /// the result. Nothing is written.
    pub fn preview_profile_edit(&self, edit: &ProfileEdit) -> Result<ProfilePreview, ApiError> {
        self.preview_config_edit(|doc| apply(doc, edit))
    }

    /// Saves `edit` when the whole config still validates (only the changed keys are written;
    /// comments stay). Otherwise nothing is written and every finding is in the error.
    pub fn save_profile_edit(&self, edit: &ProfileEdit) -> Result<ProfileView, ApiError> {
        let cfg = self.save_config_edit(|doc| apply(doc, edit))?;
        tracing::info!(profile = %edit.name, kind = ?edit.kind, "profile saved");
        view(&cfg, edit.kind, &edit.name)
            .ok_or_else(|| ApiError::new(ErrorCode::Internal, "profile missing after saving it"))
    }

    /// Adds a profile with default values (its table gets one explicit key, so the file
    /// shows it: `level` for a risk profile, `max_tool_iterations` for a runtime profile).
    pub fn create_profile(&self, kind: ProfileKind, name: &str) -> Result<ProfileView, ApiError> {
        profile_name_ok(name)?;
        let cfg = self.load()?.config;
        if view(&cfg, kind, name).is_some() {
            return Err(ApiError::new(
                ErrorCode::AlreadyExists,
                format!("{} `{name}` already exists", kind.section()),
            ));
        }
        let first = match kind {
            ProfileKind::Risk => FieldChange {
                field: "level".into(),
                value: Some(FieldValue::Text("supervised".into())),
            },
            ProfileKind::Runtime => FieldChange {
                field: "max_tool_iterations".into(),
                value: Some(FieldValue::Number(10.0)),
            },
        };
        self.save_profile_edit(&ProfileEdit {
            kind,
            name: name.to_string(),
            changes: vec![first],
        })
    }

    /// Removes a profile no agent uses and returns its table as it was (comments included),
    /// which [`Warren::restore_profile`] puts back (the window's Undo). A profile still
    /// referenced is refused with the agents that use it.
    pub fn delete_profile(
        &self,
        kind: ProfileKind,
        name: &str,
    ) -> Result<RemovedProfile, ApiError> {
        let cfg = self.load()?.config;
        if view(&cfg, kind, name).is_none() {
            return Err(ApiError::new(
                ErrorCode::NotFound,
                format!("{} `{name}` does not exist", kind.section()),
            ));
        }
        let users = used_by(&cfg, kind, name);
        if !users.is_empty() {
            return Err(ApiError::new(
                ErrorCode::Denied,
                format!(
                    "{} `{name}` is used by {}; point them at another profile first",
                    kind.section(),
                    users.join(", ")
                ),
            )
            .with_details(users));
        }
        let (removed, _) = self
            .store
            .edit(|doc, _| {
                doc.remove_named_block(kind.section(), name)
                    .map_err(ConfigError::Edit)
            })
            .map_err(config_error)?;
        let removed = removed.ok_or_else(|| {
            ApiError::new(
                ErrorCode::NotFound,
                format!("{} `{name}` does not exist", kind.section()),
            )
        })?;
        tracing::info!(profile = %name, section = kind.section(), "profile deleted");
        Ok(RemovedProfile {
            kind,
            name: name.to_string(),
            text: removed.text,
        })
    }

    /// Puts back a profile [`Warren::delete_profile`] removed, as it was (its comments too).
    /// Refused when the name was taken since; the config is validated in full before it is
    /// saved.
    pub fn restore_profile(&self, removed: &RemovedProfile) -> Result<ProfileView, ApiError> {
        profile_name_ok(&removed.name)?;
        let kind = removed.kind;
        self.store
            .edit(|doc, _| {
                doc.insert_named_block(kind.section(), &removed.name, &removed.text)
                    .map_err(ConfigError::Edit)
            })
            .map_err(config_error)?;
        tracing::info!(profile = %removed.name, section = kind.section(), "profile restored");
        let cfg = self.load()?.config;
        view(&cfg, kind, &removed.name)
            .ok_or_else(|| ApiError::new(ErrorCode::Internal, "profile missing after restoring it"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deleted_profile_comes_back_with_its_comments_and_only_once() {
        let cfg = "schema_version = 1\n\n[risk_profiles.p]\nlevel = \"supervised\"\n\n# Read-only reviewers.\n[risk_profiles.careful]\nlevel = \"readonly\" # never writes\nnetwork = false\n\n[agents.alice]\nrisk_profile = \"p\"\n";
        let (dir, w) = crate::test_support::install(cfg);
        let path = dir.path().join("config.toml");
        let removed = w.delete_profile(ProfileKind::Risk, "careful").unwrap();
        assert!(removed.text.contains("# never writes"), "{}", removed.text);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            !text.contains("careful") && !text.contains("Read-only reviewers"),
            "{text}"
        );
        let view = w.restore_profile(&removed).unwrap();
        assert_eq!(
            view.risk.unwrap().level,
            warren_types::AutonomyLevel::Readonly
        );
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.contains("# Read-only reviewers.\n[risk_profiles.careful]\nlevel = \"readonly\" # never writes"),
            "{text}"
        );
        // Taken again: refused, and the file is left as it is.
        let err = w.restore_profile(&removed).unwrap_err();
        assert_eq!(err.code, ErrorCode::AlreadyExists, "{}", err.message);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
        // A block that is not the profile it claims to be is refused.
        let forged = RemovedProfile {
            text: "[risk_profiles.other]\nlevel = \"full\"\n".into(),
            ..removed
        };
        let _ = w.delete_profile(ProfileKind::Risk, "careful").unwrap();
        assert!(w.restore_profile(&forged).is_err());
        assert!(!std::fs::read_to_string(&path).unwrap().contains("other"));
    }

    #[test]
    fn network_goes_by_domain_and_back_through_a_profile_edit_with_bad_patterns_at_their_place() {
        let cfg = "[risk_profiles.p]\nlevel = \"full\"\nnetwork = false # for now\n\n[agents.alice]\nrisk_profile = \"p\"\n";
        let (dir, w) = crate::test_support::install(cfg);
        let path = dir.path().join("config.toml");
        // What the window sends for By domain: a table, read as the domain rules.
        let change: FieldChange = serde_json::from_value(serde_json::json!({
            "field": "network",
            "value": {"allow": ["crates.io", "https://pypi.org/simple"], "deny": [], "allow_private": false}
        }))
        .unwrap();
        assert!(
            matches!(change.value, Some(FieldValue::Domains(_))),
            "{change:?}"
        );
        let edit = |change: FieldChange| ProfileEdit {
            kind: ProfileKind::Risk,
            name: "p".into(),
            changes: vec![change],
        };
        let p = w.preview_profile_edit(&edit(change.clone())).unwrap();
        assert_eq!(p.errors.len(), 1, "{:?}", p.errors);
        assert_eq!(p.errors[0].path, "risk_profiles.p.network.allow[1]");
        assert!(p.errors[0].message.contains("is a URL"), "{:?}", p.errors);
        assert!(w.save_profile_edit(&edit(change)).is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), cfg);

        let good = FieldChange {
            field: "network".into(),
            value: Some(FieldValue::Domains(DomainRules {
                allow: vec!["crates.io".into()],
                deny: vec![],
                allow_private: true,
            })),
        };
        let view = w.save_profile_edit(&edit(good)).unwrap();
        assert!(view.risk.unwrap().network.domains().is_some());
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            cfg.replace(
                "network = false",
                "network = { allow = [\"crates.io\"], allow_private = true }"
            )
        );
        // Back to on: the table is replaced by the switch, the comment stays.
        w.save_profile_edit(&edit(FieldChange {
            field: "network".into(),
            value: Some(FieldValue::Bool(true)),
        }))
        .unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            cfg.replace("network = false", "network = true")
        );
    }

    #[test]
    fn the_diff_shows_changed_lines_with_context_and_gaps() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let new = "a\nb\nc\nd\nE\nf\ng\nh\n";
        let d = line_diff(old, new, 1);
        let kinds: Vec<DiffKind> = d.iter().map(|l| l.kind).collect();
        use DiffKind::{Add, Gap, Remove, Same};
        assert_eq!(kinds, [Same, Remove, Add, Same]);
        assert_eq!(d[1].text, "e");
        assert_eq!(d[2].text, "E");
        let d = line_diff("x\n1\n2\n3\n4\ny\n", "X\n1\n2\n3\n4\nY\n", 0);
        let kinds: Vec<DiffKind> = d.iter().map(|l| l.kind).collect();
        assert_eq!(kinds, [Remove, Add, Gap, Remove, Add]);
    }

    #[test]
    fn a_long_file_with_one_change_diffs_to_that_change_with_its_context() {
        let old: String = (0..3000).map(|i| format!("line {i}\n")).collect();
        let new = old.replace("line 1500\n", "line 1500 changed\nline 1500b\n");
        let d = line_diff(&old, &new, 2);
        let got: Vec<(DiffKind, &str)> = d.iter().map(|l| (l.kind, l.text.as_str())).collect();
        use DiffKind::{Add, Remove, Same};
        assert_eq!(
            got,
            [
                (Same, "line 1498"),
                (Same, "line 1499"),
                (Remove, "line 1500"),
                (Add, "line 1500 changed"),
                (Add, "line 1500b"),
                (Same, "line 1501"),
                (Same, "line 1502"),
            ]
        );
        assert!(line_diff(&old, &old, 2).is_empty());
    }
}
