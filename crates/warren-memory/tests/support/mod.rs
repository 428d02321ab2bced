//! Test support: hermetic installs, configs checked by the real validator, a stepping clock,
//! fresh Postgres schemas.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use chrono::{DateTime, TimeZone, Utc};
use tempfile::TempDir;
use warren_config::{parse_config, InstallLayout};
use warren_memory::{Clock, Memory, MemoryStores};
use warren_types::Config;

/// A clock that starts at a fixed UTC time and advances one millisecond per reading.
pub struct StepClock {
    ms: AtomicI64,
}

impl StepClock {
    pub fn at(start: DateTime<Utc>) -> Arc<Self> {
        Arc::new(StepClock {
            ms: AtomicI64::new(start.timestamp_millis()),
        })
    }
}

impl Clock for StepClock {
    fn now(&self) -> DateTime<Utc> {
        let ms = self.ms.fetch_add(1, Ordering::SeqCst);
        Utc.timestamp_millis_opt(ms).single().unwrap_or_default()
    }
}

pub fn day(y: i32, m: u32, d: u32, h: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, m, d, h, 0, 0)
        .single()
        .unwrap_or_default()
}

/// The agents of the behavioural suite:
/// - alice reads all of bob (plain grant); bob reads all of erin (so alice→bob→erin);
/// - carol reads only bob's `core` (structured grant); dave reads bob's `nonexistent` category;
/// - erin reads nobody.
///
/// Without category support (Markdown) carol and dave read nobody.
pub fn suite_config(memory: &str, categories: bool) -> Config {
    let text = suite_text(memory, categories);
    match parse_config(&text) {
        Ok(c) => c,
        Err(e) => panic!("suite config rejected by the validator: {e}\n{text}"),
    }
}

/// The suite's config parsed without validation (to test the factory's own checks).
pub fn unvalidated_config(memory: &str) -> Config {
    let text = suite_text(memory, true);
    toml::from_str(&text).unwrap_or_else(|e| panic!("{e}"))
}

fn suite_text(memory: &str, categories: bool) -> String {
    let (carol, dave) = if categories {
        (
            r#"read_memory_from = [{ agent = "bob", categories = ["core"] }]"#,
            r#"read_memory_from = [{ agent = "bob", categories = ["nonexistent"] }]"#,
        )
    } else {
        ("", "")
    };
    format!(
        r#"
[risk_profiles.p]

[agents.alice]
risk_profile = "p"
[agents.alice.workspace]
read_memory_from = ["bob"]

[agents.bob]
risk_profile = "p"
[agents.bob.workspace]
read_memory_from = ["erin"]

[agents.carol]
risk_profile = "p"
[agents.carol.workspace]
{carol}

[agents.dave]
risk_profile = "p"
[agents.dave.workspace]
{dave}

[agents.erin]
risk_profile = "p"

{memory}
"#
    )
}

/// One backend under test: a registry, the config, a temp install.
pub struct Env {
    pub name: &'static str,
    pub stores: MemoryStores,
    pub config: Config,
    /// Whether the backend holds category-scoped grants (not Markdown).
    pub categories: bool,
    pub dir: TempDir,
}

impl Env {
    pub fn new(name: &'static str, memory: &str, categories: bool) -> Env {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let stores = MemoryStores::new(InstallLayout::new(dir.path()))
            .with_clock(StepClock::at(day(2026, 3, 4, 23)));
        Env {
            name,
            stores,
            config: suite_config(memory, categories),
            categories,
            dir,
        }
    }

    pub fn layout(&self) -> InstallLayout {
        InstallLayout::new(self.dir.path())
    }

    pub async fn h(&self, alias: &str) -> Arc<dyn Memory> {
        match self.stores.handle_for(&self.config, alias).await {
            Ok(h) => h,
            Err(e) => panic!("[{}] handle for {alias}: {e}", self.name),
        }
    }
}

/// The Postgres URL of the test server, or `None` after printing the skip line.
pub fn pg_url() -> Option<String> {
    match std::env::var("WARREN_TEST_POSTGRES_URL") {
        Ok(u) if !u.is_empty() => Some(u),
        _ => {
            println!("skipped: WARREN_TEST_POSTGRES_URL not set");
            None
        }
    }
}

/// A fresh schema name, dropped (with everything in it) when the guard goes away.
pub struct PgSchema {
    pub url: String,
    pub name: String,
}

impl PgSchema {
    pub fn fresh(url: &str) -> PgSchema {
        PgSchema {
            url: url.to_string(),
            name: format!(
                "wm_test_{}",
                &uuid::Uuid::new_v4().simple().to_string()[..16]
            ),
        }
    }

    pub fn memory_section(&self) -> String {
        format!(
            "[memory]\nbackend = \"postgres\"\n[memory.postgres]\nurl = \"{}\"\nschema = \"{}\"\n",
            self.url, self.name
        )
    }
}

impl Drop for PgSchema {
    fn drop(&mut self) {
        let (url, name) = (self.url.clone(), self.name.clone());
        // Drop from a thread with its own runtime: this may run inside or outside tokio.
        let _ = std::thread::spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(async move {
                use sqlx::Connection;
                if let Ok(mut c) = sqlx::PgConnection::connect(&url).await {
                    // Never hang a test run on a lock held by a connection of a failed test.
                    let _ = sqlx::query("SET lock_timeout = '5s'").execute(&mut c).await;
                    let dropped = sqlx::query(&format!("DROP SCHEMA IF EXISTS \"{name}\" CASCADE"))
                        .execute(&mut c)
                        .await;
                    if let Err(e) = dropped {
                        eprintln!("could not drop test schema {name}: {e}");
                    }
                }
            });
        })
        .join();
    }
}
