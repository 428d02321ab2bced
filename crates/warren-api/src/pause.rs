//! Pausing agents: a paused agent runs no new turns (prompt, cron, ACP) until resumed. The
//! state lives in `<install>/data/paused.json` and survives restarts (see `Host::set_paused`).

use crate::{errors::host_error, Warren};
use warren_types::ApiError;

impl Warren {
    /// The agents paused now, read straight from the install (no host needed): for watchers
    /// such as the desktop tray.
    pub fn paused_now(&self) -> Result<Vec<String>, ApiError> {
        Ok(warren_state::pause::paused_agents(self.layout())
            .map_err(|e| host_error(e.into()))?
            .into_iter()
            .collect())
    }

    /// The agents paused now, sorted.
    pub async fn paused_agents(&self) -> Result<Vec<String>, ApiError> {
        let host = self.host().await?;
        Ok(host.paused().map_err(host_error)?.into_iter().collect())
    }

    /// Pauses or resumes one agent; returns the agents paused afterwards. Pausing an agent the
    /// config does not have is a not-found error; the check is made under the pause lock (see
    /// `warren_state::pause::pause_configured_agents`), so a pause racing a rename or delete
    /// of the agent cannot leave the old alias paused.
    pub async fn set_agent_paused(
        &self,
        alias: &str,
        paused: bool,
    ) -> Result<Vec<String>, ApiError> {
        let host = self.host().await?;
        let set = host
            .set_paused(&[alias.to_string()], paused)
            .map_err(|e| self.hint_unknown_agent(host_error(e), alias))?;
        tracing::info!(agent = %alias, paused, "agent {}", if paused { "paused" } else { "resumed" });
        Ok(set.into_iter().collect())
    }

    /// Pauses every agent of the config (as read under the pause lock), or resumes every
    /// paused agent; returns the agents paused afterwards.
    pub async fn set_all_paused(&self, paused: bool) -> Result<Vec<String>, ApiError> {
        let host = self.host().await?;
        let set = if paused {
            host.pause_all().map_err(host_error)?
        } else {
            let aliases: Vec<String> = host.paused().map_err(host_error)?.into_iter().collect();
            host.set_paused(&aliases, false).map_err(host_error)?
        };
        tracing::info!(
            paused,
            agents = set.len(),
            "all agents {}",
            if paused { "paused" } else { "resumed" }
        );
        Ok(set.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use crate::Warren;
    use std::time::{Duration, Instant};
    use warren_config::InstallLayout;
    use warren_types::ErrorCode;

    /// Waits until a process blocks on the flock of `path` (a `->` line of `/proc/locks` on its
    /// inode); panics after 20 seconds.
    fn wait_for_a_waiter_on(path: &std::path::Path) {
        use std::os::unix::fs::MetadataExt;
        let ino = std::fs::metadata(path).unwrap().ino();
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let locks = std::fs::read_to_string("/proc/locks").unwrap();
            let waiting = locks.lines().any(|l| {
                l.contains("->")
                    && l.split_whitespace()
                        .any(|f| f.rsplit(':').next() == Some(&ino.to_string()))
            });
            if waiting {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "nothing waited for {}:\n{locks}",
                path.display()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// A pause that passed its first look at the config while a rename was about to change it
    /// checks again under the pause lock: it is refused, and the old alias is not paused.
    #[test]
    fn a_pause_racing_a_rename_re_checks_the_agent_under_the_lock() {
        let dir = tempfile::tempdir().unwrap();
        let config = "[risk_profiles.p]\n[agents.old]\nrisk_profile = \"p\"\n";
        std::fs::write(dir.path().join("config.toml"), config).unwrap();
        let layout = InstallLayout::new(dir.path());
        let rt = crate::test_support::runtime();
        let w = std::sync::Arc::new(Warren::open(layout.clone()));
        rt.block_on(async { w.host().await.map(|_| ()) }).unwrap();

        // The test holds the pause lock, as a rename's pause participant does.
        std::fs::create_dir_all(layout.data_dir()).unwrap();
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(layout.paused_lock_path())
            .unwrap();
        lock.lock().unwrap();
        let pausing = {
            let w = w.clone();
            let handle = rt.handle().clone();
            std::thread::spawn(move || handle.block_on(w.set_agent_paused("old", true)))
        };
        // Once the pause waits for the lock, the rename makes its config change.
        wait_for_a_waiter_on(&layout.paused_lock_path());
        std::fs::write(
            dir.path().join("config.toml"),
            config.replace("[agents.old]", "[agents.new]"),
        )
        .unwrap();
        lock.unlock().unwrap();

        let e = pausing.join().unwrap().unwrap_err();
        assert_eq!(e.code, ErrorCode::NotFound, "{e:?}");
        assert!(e.message.contains("agent `old`"), "{}", e.message);
        assert!(w.paused_now().unwrap().is_empty());
        // The renamed agent can be paused.
        let set = rt.block_on(w.set_agent_paused("new", true)).unwrap();
        assert_eq!(set, ["new"]);
    }

    /// Pausing everything pauses the agents of the config as read under the lock.
    #[test]
    fn pausing_all_pauses_the_agents_of_the_config() {
        let (_dir, w) = crate::test_support::install("[risk_profiles.p]\n[agents.a]\nrisk_profile = \"p\"\n[agents.b]\nrisk_profile = \"p\"\n");
        let rt = crate::test_support::runtime();
        rt.block_on(async {
            assert_eq!(w.set_all_paused(true).await.unwrap(), ["a", "b"]);
            let e = w.set_agent_paused("ghost", true).await.unwrap_err();
            assert_eq!(e.code, ErrorCode::NotFound);
            assert_eq!(w.set_all_paused(false).await.unwrap(), Vec::<String>::new());
        });
    }
}
