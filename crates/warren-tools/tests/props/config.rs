//! The config decoder and its editor on generated configs: valid and broken lines of every
//! section, then bytes inserted, removed and swapped. No text makes the decoder panic; every
//! refusal names a key; a config that decodes, written back through the editor (every field
//! of every profile and provider set again to the value it decoded to), decodes to the same
//! value, and so does the decoded value serialised on its own.

use proptest::prelude::*;
use proptest::test_runner::TestRunner;
use warren_config::{parse_config, parse_for_install, ConfigDocument, InstallLayout};
use warren_types::Config;

fn one_of(items: &'static [&'static str]) -> impl Strategy<Value = &'static str> {
    proptest::sample::select(items)
}

/// The lines of a section, one group per key: `(valid values, broken values)`.
type Groups = &'static [(&'static [&'static str], &'static [&'static str])];

const PROFILE: Groups = &[
    (
        &[
            "level = \"supervised\"",
            "level = \"full\"",
            "level = \"readonly\"",
        ],
        &["level = \"root\""],
    ),
    (
        &["workspace_only = false", "workspace_only = true"],
        &["workspace_only = \"yes\""],
    ),
    (
        &[
            "allowed_commands = [\"ls\", \"cat\", \"git\"]",
            "allowed_commands = [\"*\"]",
        ],
        &["allowed_commands = [\"\"]"],
    ),
    (&["forbidden_paths = [\"secrets\", \"/etc\"]"], &[]),
    (
        &["allowed_roots = [\"/tmp/shared\"]"],
        &["allowed_roots = [\"relative\"]"],
    ),
    (
        &[
            "sandbox = \"none\"",
            "sandbox = \"landlock\"",
            "sandbox = \"bubblewrap\"",
        ],
        &["sandbox = \"chroot\""],
    ),
    (&["network = true", "network = false"], &["network = 1"]),
    (&["auto_approve = [\"file_read\", \"shell\"]"], &[]),
    (&["always_ask = [\"file_write\"]"], &[]),
    (
        &["excluded_tools = [\"git_operations\"]"],
        &["excluded_tools = [\"nope\"]"],
    ),
    (
        &["shell_env_passthrough = [\"LANG\"]"],
        &["shell_env_passthrough = [\"LD_PRELOAD\"]"],
    ),
    (
        &["delegation = \"forbidden\"", "delegation = \"allow\""],
        &["delegation = \"sometimes\""],
    ),
    (&["block_high_risk_commands = false"], &[]),
    (&[], &["colour = \"red\""]),
];

const RUNTIME: Groups = &[
    (
        &["max_tool_iterations = 5"],
        &[
            "max_tool_iterations = 0",
            "max_tool_iterations = -3",
            "max_tool_iterations = 99999999999",
        ],
    ),
    (&["parallel_tools = true"], &[]),
    (&["max_actions_per_hour = 10"], &[]),
    (&["max_cost_per_day_cents = 250"], &[]),
    (&["shell_timeout_secs = 1"], &["shell_timeout_secs = 0"]),
    (&["turn_timeout_secs = 600"], &["turn_timeout_secs = 0"]),
    (&["max_delegation_depth = 2"], &[]),
    (
        &["max_context_tokens = 8000"],
        &["max_context_tokens = 1.5"],
    ),
];

const AGENT: Groups = &[
    (
        &["risk_profile = \"p\"", "risk_profile = \"q\""],
        &["risk_profile = \"missing\""],
    ),
    (
        &["runtime_profile = \"dev\""],
        &["runtime_profile = \"gone\""],
    ),
    (&["enabled = false"], &[]),
    (
        &["model_provider = \"ollama.local\""],
        &["model_provider = \"nowhere.x\""],
    ),
    (&["delegates = [\"bob\"]"], &["delegates = [\"ghost\"]"]),
    (
        &[
            "memory = { backend = \"markdown\" }",
            "memory = { backend = \"none\" }",
        ],
        &["memory = { backend = \"bogus\" }"],
    ),
    (
        &["workspace = { access = { bob = \"read\" } }"],
        &["workspace = { access = { alice = \"admin\" } }"],
    ),
];

const NAMES: &[&str] = &["dev2", "ro", "ops"];
const BAD_NAMES: &[&str] = &["Bad Name", "x.y"];
const ALIASES: &[&str] = &["alice", "bob", "carol"];
const BAD_ALIASES: &[&str] = &["Bad_Alias", "0zero"];

const OTHER: Groups = &[
    (&["[providers.models.ollama.local]\nmodel = \"llama3\"\nuri = \"http://127.0.0.1:11434\"\n"], &[]),
    (&["[providers.models.ollama.other]\nmodel = \"qwen\"\nfallbacks = [\"ollama.local\"]\n"], &[]),
    (&["[providers.models.openai.main]\nmodel = \"gpt\"\napi_key_env = \"OPENAI_API_KEY\"\ninput_cost_per_mtok = 2.5\n"], &["[providers.models.anthropic.a]\nmodel = \"c\"\nuri = \"not a url\"\ntimeout_secs = 0\n"]),
    (&["[memory]\nbackend = \"sqlite\"\n"], &["[memory]\nbackend = \"postgres\"\n"]),
    (&["[cron.nightly]\nagent = \"alice\"\nschedule = \"0 3 * * *\"\nprompt = \"tidy\"\n"], &["[cron.bad]\nagent = \"ghost\"\nschedule = \"every day\"\nprompt = \"\"\n"]),
    (&["[mcp_servers.files]\ncommand = \"npx\"\nargs = [\"-y\", \"server\"]\nenv = { TOKEN = \"x\" }\n"], &["[mcp_servers.both]\ncommand = \"a\"\nurl = \"http://b\"\n"]),
    (&["[runtime]\nkind = \"native\"\n"], &["[unknown_section]\nkey = 1\n"]),
];

/// At most one line of each group; broken values only when `broken`.
fn lines(groups: Groups, broken: bool) -> impl Strategy<Value = String> {
    let per_group: Vec<_> = groups
        .iter()
        .map(|(valid, bad)| {
            let mut choices: Vec<&'static str> = valid.to_vec();
            if broken {
                choices.extend_from_slice(bad);
            }
            proptest::option::of(proptest::sample::select(if choices.is_empty() {
                vec![""]
            } else {
                choices
            }))
        })
        .collect();
    per_group.prop_map(|picked| {
        picked
            .into_iter()
            .flatten()
            .filter(|l| !l.is_empty())
            .map(|l| format!("{l}\n"))
            .collect()
    })
}

fn sections(
    header: &'static str,
    names: &'static [&'static str],
    bad_names: &'static [&'static str],
    groups: Groups,
    broken: bool,
) -> impl Strategy<Value = String> {
    let mut all: Vec<&'static str> = names.to_vec();
    if broken {
        all.extend_from_slice(bad_names);
    }
    let n = all.len();
    // Valid configs name all agents (their lines refer to one another).
    let least = if header == "agents" && !broken { n } else { 0 };
    proptest::sample::subsequence(all, least..=n)
        .prop_flat_map(move |chosen| {
            let bodies: Vec<_> = chosen.iter().map(|_| lines(groups, broken)).collect();
            (Just(chosen), bodies)
        })
        .prop_map(move |(chosen, bodies)| {
            chosen
                .iter()
                .zip(bodies)
                .map(|(name, body)| {
                    if header == "agents" && !broken && !body.contains("risk_profile") {
                        format!("[{header}.{name}]\nrisk_profile = \"p\"\n{body}")
                    } else {
                        format!("[{header}.{name}]\n{body}")
                    }
                })
                .collect()
        })
}

/// A config: a schema version, profiles, agents and other sections, each drawn from valid
/// lines and, when `broken`, from broken ones too.
fn config_text(broken: bool) -> impl Strategy<Value = String> {
    (
        proptest::sample::select(if broken {
            vec!["schema_version = 1\n", "schema_version = 2\n", ""]
        } else {
            vec!["schema_version = 1\n", ""]
        }),
        sections("risk_profiles", NAMES, BAD_NAMES, PROFILE, broken),
        sections("runtime_profiles", NAMES, BAD_NAMES, RUNTIME, broken),
        sections("agents", ALIASES, BAD_ALIASES, AGENT, broken),
        lines(OTHER, broken),
    )
        .prop_map(|(version, risks, runtimes, agents, others)| {
            let mut s = String::from(version);
            // Profiles the agent lines name, so that many generated configs are valid.
            s.push_str("[risk_profiles.p]\n[risk_profiles.q]\nlevel = \"full\"\n");
            s.push_str("[runtime_profiles.dev]\n");
            s.push_str(&risks);
            s.push_str(&runtimes);
            s.push_str(&agents);
            s.push_str(&others);
            s
        })
}

/// A config text with bytes inserted, removed or swapped at generated places.
fn mangled() -> impl Strategy<Value = String> {
    (
        config_text(true),
        proptest::collection::vec(
            (
                any::<prop::sample::Index>(),
                0u8..3,
                one_of(&[
                    "[", "]", "=", "\"", "'", "\n", "{", "}", ",", ".", "#", "\\", "\u{0}", "é",
                    "1e999",
                ]),
            ),
            1..6,
        ),
    )
        .prop_map(|(text, edits)| {
            let mut chars: Vec<char> = text.chars().collect();
            for (at, op, piece) in edits {
                if chars.is_empty() {
                    break;
                }
                let i = at.index(chars.len());
                match op {
                    0 => {
                        chars.splice(i..i, piece.chars());
                    }
                    1 => {
                        chars.remove(i);
                    }
                    _ => {
                        let j = (i + 7).min(chars.len() - 1);
                        chars.swap(i, j);
                    }
                }
            }
            chars.into_iter().collect()
        })
}

/// Every refusal says where: a key path or a line.
fn check_refusal(text: &str, result: Result<Config, warren_config::ConfigErrors>) {
    if let Err(e) = result {
        assert!(!e.issues.is_empty(), "a refusal without an issue: {text:?}");
        for i in &e.issues {
            assert!(
                !i.message.is_empty(),
                "an issue without a message: {text:?}"
            );
            assert!(
                !i.path.is_empty() || i.line.is_some(),
                "issue `{}` names no key and no line: {text:?}",
                i.message
            );
        }
    }
}

#[test]
fn no_text_makes_the_decoder_panic_and_every_refusal_names_a_key() {
    let dir = tempfile::tempdir().unwrap();
    let layout = InstallLayout::new(dir.path());
    let mut runner = TestRunner::new(crate::config(600));
    let strategy = prop_oneof![config_text(true), mangled()];
    let result = runner.run(&strategy, |text| {
        check_refusal(&text, parse_config(&text));
        let _ = parse_for_install(&text, &layout);
        let _ = ConfigDocument::parse(&text);
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

/// Converts a decoded value to the editor's value type.
fn edit_value(v: &toml::Value) -> toml_edit::Value {
    v.to_string()
        .parse::<toml_edit::Value>()
        .expect("a TOML value reads back")
}

/// Sets every field of the table at `path` to what `decoded` holds for it.
fn set_all(doc: &mut ConfigDocument, path: &[&str], decoded: &toml::Value) {
    let Some(table) = decoded.as_table() else {
        return;
    };
    for (k, v) in table {
        if v.is_table() {
            // Nested tables (a provider family's entries) are set field by field.
            let mut p: Vec<&str> = path.to_vec();
            p.push(k);
            set_all(doc, &p, v);
            continue;
        }
        let mut p: Vec<&str> = path.to_vec();
        p.push(k);
        doc.set_value(&p, edit_value(v))
            .expect("the editor sets it");
    }
}

#[test]
fn a_decoded_config_written_back_through_the_editor_decodes_to_the_same_value() {
    let mut runner = TestRunner::new(crate::config(300));
    let decoded_count = std::cell::Cell::new(0u32);
    let result = runner.run(&config_text(false), |text| {
        let config = match parse_config(&text) {
            Ok(c) => c,
            Err(e) => {
                if std::env::var("WARREN_PROPTEST_SHOW").is_ok() {
                    eprintln!(
                        "refused: {:?}",
                        e.issues
                            .iter()
                            .map(|i| (&i.path, &i.message))
                            .collect::<Vec<_>>()
                    );
                }
                return Ok(());
            }
        };
        decoded_count.set(decoded_count.get() + 1);
        // The editor keeps every byte it was not asked to change.
        let doc = ConfigDocument::parse(&text).expect("decoded text is TOML");
        prop_assert_eq!(doc.document().to_string(), text);
        // Every field of every profile and provider entry set again to its decoded value.
        let mut doc = doc;
        for (name, p) in &config.risk_profiles {
            let v = toml::Value::try_from(p).unwrap();
            set_all(&mut doc, &["risk_profiles", name], &v);
        }
        for (name, p) in &config.runtime_profiles {
            let v = toml::Value::try_from(p).unwrap();
            set_all(&mut doc, &["runtime_profiles", name], &v);
        }
        for (family, entries) in &config.providers.models {
            for (name, m) in entries {
                let v = toml::Value::try_from(m).unwrap();
                set_all(&mut doc, &["providers", "models", family, name], &v);
            }
        }
        let written = doc.document().to_string();
        let again = parse_config(&written)
            .map_err(|e| TestCaseError::fail(format!("{e:?}\n--- written\n{written}")))?;
        prop_assert_eq!(&again, &config, "written back:\n{}", written);
        // The decoded value serialised on its own decodes to itself.
        let alone = toml::to_string(&config).unwrap();
        let back = parse_config(&alone)
            .map_err(|e| TestCaseError::fail(format!("{e:?}\n--- serialised\n{alone}")))?;
        prop_assert_eq!(&back, &config, "serialised:\n{}", alone);
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    let n = decoded_count.get();
    eprintln!("generated configs that decoded and were written back: {n}");
    assert!(n > 30, "only {n} generated configs decoded");
}
