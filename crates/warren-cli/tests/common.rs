//! Running the built `warren` binary.

use std::path::Path;
use std::process::{Command, Output};

/// The result of one `warren` run.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// stdout parsed as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
                self.stdout, self.stderr
            )
        })
    }
}

impl From<Output> for Run {
    fn from(o: Output) -> Self {
        Run {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

/// A `warren` command with a clean environment pointed at `home` through `--home`.
pub fn warren_cmd(home: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_warren"));
    c.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.join("fake-home"))
        .arg("--home")
        .arg(home);
    c
}

/// Runs `warren --home HOME ARGS...`.
pub fn warren(home: &Path, args: &[&str]) -> Run {
    warren_cmd(home)
        .args(args)
        .output()
        .expect("spawn warren")
        .into()
}

/// Runs `warren secrets set ARGS...` with `value` on standard input.
pub fn set_secret(t: &warren_testkit::TestInstall, args: &[&str], value: &str) -> Run {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = warren_cmd(t.root())
        .args(["secrets", "set"])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(value.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap().into()
}
