//! Property-test support: a runner configuration with a fixed seed and a bounded number of
//! cases, and generators of what an agent can put in a tool call's arguments.

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};
use serde_json::{json, Map, Value};

/// The seed every property runs with unless `WARREN_PROPTEST_SEED` names another.
const SEED: u64 = 0x5741_5252_454e;

/// A runner configuration with `cases` cases (or `WARREN_PROPTEST_CASES`) from the fixed seed.
pub fn config(cases: u32) -> Config {
    let seed = std::env::var("WARREN_PROPTEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(SEED);
    let cases = std::env::var("WARREN_PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(cases);
    eprintln!("WARREN_PROPTEST_SEED={seed} WARREN_PROPTEST_CASES={cases}");
    Config {
        cases,
        rng_seed: RngSeed::Fixed(seed),
        failure_persistence: None,
        ..Config::default()
    }
}

/// The argument names of a tool's JSON schema with their types (`"any"` when untyped).
pub fn schema_keys(parameters: &Value) -> Vec<(String, String)> {
    parameters["properties"]
        .as_object()
        .map(|o| {
            o.iter()
                .map(|(k, v)| (k.clone(), v["type"].as_str().unwrap_or("any").to_string()))
                .collect()
        })
        .unwrap_or_default()
}

/// Strings an agent might put in any argument.
pub fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        proptest::sample::select(vec![
            "",
            ".",
            "..",
            "/",
            "a.txt",
            "sub/b.txt",
            "../bob/notes.md",
            "../erin/secret.txt",
            "/etc/passwd",
            "~/x",
            "~root/.ssh",
            "a\u{0}b",
            "*",
            "**/*",
            "[",
            "(",
            "secrets/key",
            "status",
            "log",
            "diff",
            "commit",
            "init",
            "add",
            "ls",
            "echo hi",
            "cat a.txt",
            "--upload-pack=touch x",
            "-c",
            "HEAD",
            "main",
            "\u{202e}txt",
            "é",
        ])
        .prop_map(String::from),
        "[a-z./~*-]{0,12}",
        Just("x".repeat(5000)),
        Just("../".repeat(200)),
    ]
}

/// One JSON scalar an agent could put in an argument: hostile text, booleans, null, and numbers
/// at the edges of what JSON and Rust represent.
pub fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => text().prop_map(Value::String),
        1 => any::<bool>().prop_map(Value::Bool),
        1 => Just(Value::Null),
        1 => any::<i64>().prop_map(|n| json!(n)),
        1 => proptest::sample::select(vec![0.5f64, -1.0, 1e300, 0.0]).prop_map(|f| json!(f)),
        1 => proptest::sample::select(vec![u64::MAX, 1 << 53, 10_000_000]).prop_map(|n| json!(n)),
    ]
}

/// Any JSON value built from [`leaf`]s, nested a little (arrays and objects).
pub fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(2, 8, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::btree_map("[a-z]{1,4}", inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A value for an argument the schema types as `kind`: mostly of that type, now and then
/// anything.
pub fn value_for(kind: String) -> BoxedStrategy<Value> {
    let typed: BoxedStrategy<Value> = match kind.as_str() {
        "string" => text().prop_map(Value::String).boxed(),
        "boolean" => any::<bool>().prop_map(Value::Bool).boxed(),
        "integer" | "number" => prop_oneof![
            (0i64..50).prop_map(|n| json!(n)),
            any::<i64>().prop_map(|n| json!(n)),
        ]
        .boxed(),
        "array" => proptest::collection::vec(text().prop_map(Value::String), 0..4)
            .prop_map(Value::Array)
            .boxed(),
        _ => value().boxed(),
    };
    prop_oneof![12 => typed, 1 => value()].boxed()
}

/// Arguments for a tool whose schema names `keys` (with their types): each key now and then
/// left out, an unknown key now and then, and now and then not an object at all.
pub fn args_for(keys: Vec<(String, String)>) -> impl Strategy<Value = Value> {
    let mut fields: Vec<BoxedStrategy<Option<(String, Value)>>> = keys
        .into_iter()
        .map(|(k, kind)| {
            proptest::option::weighted(0.85, value_for(kind).prop_map(move |v| (k.clone(), v)))
                .boxed()
        })
        .collect();
    fields.push(
        proptest::option::weighted(0.05, value().prop_map(|v| ("unknown_key".to_string(), v)))
            .boxed(),
    );
    prop_oneof![
        20 => fields.prop_map(|kv| Value::Object(kv.into_iter().flatten().collect::<Map<_, _>>())),
        1 => leaf(),
    ]
}
