//! The app killed in the middle of a rename step and started again: with the agent's memory on
//! PostgreSQL, the test holds a row lock on the agent's row, so the rename started from the
//! window waits inside its memory step; the app's process is then killed with SIGKILL, the lock
//! released, and the next start finishes the rename on its own.

use super::{copy_install, journal_entries, memory_keys, notice_gone, wait_listed, ALICE};
use crate::harness::{comm, launch, UI_TIMEOUT};
use crate::{block_on_mt, serial};
use fantoccini::Locator;
use sqlx::{Connection, PgConnection};
use std::path::Path;
use std::time::{Duration, Instant};
use warren_config::InstallLayout;

/// The Postgres server of the tests, or `None` after printing the skip line.
fn pg_url() -> Option<String> {
    match std::env::var("WARREN_TEST_POSTGRES_URL") {
        Ok(u) if !u.is_empty() => Some(u),
        _ => {
            println!("skipped: WARREN_TEST_POSTGRES_URL not set");
            None
        }
    }
}

/// A schema of its own for one test, dropped with everything in it when the guard goes away
/// (also when the test fails).
struct Schema {
    url: String,
    name: String,
}

impl Schema {
    fn fresh(url: &str) -> Schema {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        Schema {
            url: url.to_string(),
            name: format!("wd_killed_{}_{nanos}", std::process::id()),
        }
    }

    /// `ALICE` with the memory of every agent in this schema.
    fn config(&self) -> String {
        let head = "schema_version = 1\n";
        assert!(ALICE.contains(head));
        ALICE.replacen(
            head,
            &format!(
                "{head}\n[memory]\nbackend = \"postgres\"\n\n[memory.postgres]\nurl = \"{}\"\nschema = \"{}\"\n",
                self.url, self.name
            ),
            1,
        )
    }

    /// The aliases in the schema's `agents` table, sorted.
    async fn aliases(&self, c: &mut PgConnection) -> Vec<String> {
        sqlx::query_scalar(&format!(
            "SELECT alias FROM \"{}\".agents ORDER BY alias",
            self.name
        ))
        .fetch_all(c)
        .await
        .unwrap()
    }

    /// The keys of the memory rows stored under `alias`, sorted.
    async fn keys_of(&self, c: &mut PgConnection, alias: &str) -> Vec<String> {
        sqlx::query_scalar(&format!(
            "SELECT m.key FROM \"{s}\".memories m JOIN \"{s}\".agents a ON a.id = m.agent_id \
             WHERE a.alias = $1 ORDER BY m.key",
            s = self.name
        ))
        .bind(alias)
        .fetch_all(c)
        .await
        .unwrap()
    }
}

impl Drop for Schema {
    fn drop(&mut self) {
        let (url, name) = (self.url.clone(), self.name.clone());
        // From a thread with its own runtime: the guard may go away inside or outside tokio.
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let Ok(mut c) = PgConnection::connect(&url).await else {
                    eprintln!("could not connect to drop test schema {name}");
                    return;
                };
                let _ = sqlx::query("SET lock_timeout = '5s'").execute(&mut c).await;
                let mut last = None;
                for _ in 0..5 {
                    // A failed test may leave a session of the killed app waiting on the
                    // schema: end the sessions whose last query named it.
                    let _ = sqlx::query(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                         WHERE pid <> pg_backend_pid() AND strpos(query, $1) > 0",
                    )
                    .bind(format!("\"{name}\""))
                    .execute(&mut c)
                    .await;
                    match sqlx::query(&format!("DROP SCHEMA IF EXISTS \"{name}\" CASCADE"))
                        .execute(&mut c)
                        .await
                    {
                        Ok(_) => return,
                        Err(e) => last = Some(e),
                    }
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                eprintln!("could not drop test schema {name}: {last:?}");
            });
        })
        .join();
    }
}

/// Fills `home` with the install on Postgres memory: alice has a workspace file and a memory
/// row (which creates the schema).
async fn seed(home: &Path, schema: &Schema) {
    std::fs::write(home.join("config.toml"), schema.config()).unwrap();
    let ws = home.join("agents/alice/workspace");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("draft.md"), "first draft").unwrap();
    let w = warren_api::Warren::open(InstallLayout::new(home));
    w.store_memory("alice", "tone", "alice writes tersely", None, None)
        .await
        .unwrap();
}

/// Whether `pid` still runs (a zombie has stopped running).
fn running(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

/// The steps the journal entry at `path` records as done.
fn journaled_steps(path: &Path) -> Vec<String> {
    let entry: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    entry["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

/// Sessions of the server waiting on a lock held by the session `holder`: (pid, query).
async fn waiting_on(c: &mut PgConnection, holder: i32) -> Vec<(i32, String)> {
    sqlx::query_as(
        "SELECT pid, query FROM pg_stat_activity \
         WHERE wait_event_type = 'Lock' AND $1 = ANY(pg_blocking_pids(pid))",
    )
    .bind(holder)
    .fetch_all(c)
    .await
    .unwrap()
}

#[test]
fn the_app_killed_in_the_middle_of_a_rename_step_finishes_it_when_started_again() {
    let Some(url) = pg_url() else { return };
    let _serial = serial();
    block_on_mt(async {
        let schema = Schema::fresh(&url);
        let seeded = tempfile::tempdir().unwrap();
        seed(seeded.path(), &schema).await;
        let mut watch = PgConnection::connect(&url).await.unwrap();
        assert_eq!(schema.aliases(&mut watch).await, vec!["alice".to_string()]);

        let d = launch(|home| copy_install(seeded.path(), home)).await;
        wait_listed(&d, &["alice", "bob"]).await;

        // Another session holds alice's row: the rename's memory step, which moves that row to
        // the new alias, waits on it. Reads of the row (the rename's plan) are not blocked.
        let mut holder = PgConnection::connect(&url).await.unwrap();
        let holder_pid: i32 = sqlx::query_scalar("SELECT pg_backend_pid()")
            .fetch_one(&mut holder)
            .await
            .unwrap();
        let mut lock = holder.begin().await.unwrap();
        let locked: Vec<String> = sqlx::query_scalar(&format!(
            "SELECT alias FROM \"{}\".agents WHERE alias = 'alice' FOR UPDATE",
            schema.name
        ))
        .fetch_all(&mut *lock)
        .await
        .unwrap();
        assert_eq!(locked, vec!["alice".to_string()]);

        // The rename runs from the window.
        d.click("[data-alias=alice] [data-testid=agent-rename]")
            .await;
        let input = d.wait_for("[data-testid=rename-input]").await;
        input.send_keys("ann").await.unwrap();
        d.wait_text("[data-testid=rename-error]", str::is_empty)
            .await;
        d.click("[data-testid=rename-submit]").await;

        // It is inside its memory step: the app's session waits on the row lock with the
        // statement that renames the row, and the journal shows the steps before it done.
        let deadline = Instant::now() + UI_TIMEOUT;
        let (stuck_pid, stuck_query) = loop {
            let now = waiting_on(&mut watch, holder_pid).await;
            if let Some(w) = now.into_iter().next() {
                break w;
            }
            assert!(
                Instant::now() < deadline,
                "no session waited on the row lock; journal: {:?}",
                journal_entries(&d.home)
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        assert!(
            stuck_query.contains("UPDATE") && stuck_query.contains("SET alias"),
            "{stuck_query}"
        );
        let journal = journal_entries(&d.home);
        assert_eq!(journal.len(), 1, "{journal:?}");
        assert_eq!(journaled_steps(&journal[0]), ["config", "workspace"]);
        let results = d
            .client
            .find_all(Locator::Css("[data-testid=lifecycle-result]"))
            .await
            .unwrap();
        assert!(results.is_empty(), "the rename already answered");

        // The app's process dies on the spot.
        let app = d.backend_pid().expect("the app's process");
        assert!(comm(app).starts_with("warren-desktop"), "{}", comm(app));
        let killed = std::process::Command::new("kill")
            .args(["-KILL", &app.to_string()])
            .status()
            .unwrap();
        assert!(killed.success(), "kill -KILL {app}: {killed}");
        eprintln!(
            "killed the app ({app}) while its database session {stuck_pid} waited on: {stuck_query}"
        );
        let deadline = Instant::now() + UI_TIMEOUT;
        while running(app) {
            assert!(Instant::now() < deadline, "the app ({app}) still runs");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }

        // The lock goes away; the dead app's session gets the row, finds its client gone and
        // ends, rolling its transaction back: the row was never moved.
        lock.rollback().await.unwrap();
        holder.close().await.unwrap();
        let deadline = Instant::now() + UI_TIMEOUT;
        loop {
            let alive: Option<i32> =
                sqlx::query_scalar("SELECT pid FROM pg_stat_activity WHERE pid = $1")
                    .bind(stuck_pid)
                    .fetch_optional(&mut watch)
                    .await
                    .unwrap();
            if alive.is_none() {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the killed app's session {stuck_pid} never ended"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert_eq!(schema.aliases(&mut watch).await, vec!["alice".to_string()]);
        assert_eq!(schema.keys_of(&mut watch, "alice").await, ["tone"]);

        // What the kill left on disk: config and workspace renamed, the journal open.
        let text = std::fs::read_to_string(d.home.join("config.toml")).unwrap();
        assert!(text.contains("[agents.ann]"), "{text}");
        assert!(d.home.join("agents/ann/workspace/draft.md").exists());
        assert_eq!(journaled_steps(&journal[0]), ["config", "workspace"]);
        let saved = tempfile::tempdir().unwrap();
        copy_install(&d.home, saved.path());
        // The window is gone with the app: the session's end is best effort.
        let _ = tokio::time::timeout(Duration::from_secs(20), d.close()).await;

        // The next start finishes the rename before the window shows the agents.
        let d = launch(|home| copy_install(saved.path(), home)).await;
        wait_listed(&d, &["ann", "bob"]).await;
        notice_gone(&d).await;
        d.screenshot("killed-rename-finished").await;
        assert!(journal_entries(&d.home).is_empty());
        let text = std::fs::read_to_string(d.home.join("config.toml")).unwrap();
        assert!(
            text.contains("[agents.ann]") && !text.contains("[agents.alice]"),
            "{text}"
        );
        assert!(text.contains("delegates = [\"ann\"]"), "{text}");
        assert_eq!(
            std::fs::read_to_string(d.home.join("agents/ann/workspace/draft.md")).unwrap(),
            "first draft"
        );
        assert!(!d.home.join("agents/alice").exists());
        assert_eq!(schema.aliases(&mut watch).await, vec!["ann".to_string()]);
        assert_eq!(schema.keys_of(&mut watch, "ann").await, ["tone"]);
        assert!(schema.keys_of(&mut watch, "alice").await.is_empty());
        assert_eq!(memory_keys(&d.home, "ann").await, vec!["tone".to_string()]);
        let old = warren_api::Warren::open(InstallLayout::new(&d.home))
            .memory_page("alice", 0, 50)
            .await
            .unwrap_err();
        assert_eq!(old.code, warren_api::ErrorCode::NotFound, "{old:?}");
        watch.close().await.unwrap();
        d.close().await;
    });
}
