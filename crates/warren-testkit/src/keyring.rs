//! A real desktop keyring for tests: a private D-Bus session bus with GNOME Keyring's Secret
//! Service on it, its login keyring created and unlocked in a temp home. Nothing touches the
//! user's own session or keyring; both processes are killed on drop.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tempfile::TempDir;

/// A running private bus with a Secret Service on it.
pub struct TestKeyring {
    address: String,
    bus: Child,
    keyring: Child,
    _home: TempDir,
}

impl TestKeyring {
    /// Starts `dbus-daemon` and `gnome-keyring-daemon`, and waits until the Secret Service owns
    /// its name. Errors name the missing program (`scripts/setup.sh --test` installs both).
    pub fn start() -> std::io::Result<Self> {
        Self::start_listening("unix:tmpdir=/tmp")
    }

    /// [`start`](Self::start) with the bus socket at `socket` (where a desktop session keeps
    /// it: `$XDG_RUNTIME_DIR/bus`).
    pub fn start_at(socket: &Path) -> std::io::Result<Self> {
        Self::start_listening(&format!("unix:path={}", socket.display()))
    }

    fn start_listening(listen: &str) -> std::io::Result<Self> {
        let home = tempfile::Builder::new()
            .prefix("warren-keyring-")
            .tempdir()?;
        let (mut bus, address) = private_bus_listening(home.path(), listen)?;
        let runtime = home.path().join("run");
        std::fs::create_dir_all(&runtime)?;
        std::fs::set_permissions(
            &runtime,
            std::os::unix::fs::PermissionsExt::from_mode(0o700),
        )?;
        let spawned = Command::new("gnome-keyring-daemon")
            .args(["--foreground", "--unlock", "--components=secrets"])
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", home.path())
            .env("XDG_DATA_HOME", home.path().join("data"))
            .env("XDG_CONFIG_HOME", home.path().join("config"))
            .env("XDG_RUNTIME_DIR", &runtime)
            .env("DBUS_SESSION_BUS_ADDRESS", &address)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let mut keyring = match spawned {
            Ok(k) => k,
            Err(e) => {
                let _ = bus.kill();
                let _ = bus.wait();
                return Err(missing("gnome-keyring-daemon", e));
            }
        };
        // The unlock password creates (and unlocks) the login keyring, which becomes the
        // default collection.
        if let Some(mut stdin) = keyring.stdin.take() {
            stdin.write_all(b"warren-test")?;
        }
        let kr = TestKeyring {
            address,
            bus,
            keyring,
            _home: home,
        };
        kr.wait_for_service()?;
        Ok(kr)
    }

    /// The bus address, for `DBUS_SESSION_BUS_ADDRESS`.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// The keyring's home folder (where its files live).
    pub fn home(&self) -> &Path {
        self._home.path()
    }

    /// Locks the default collection (as a screen lock or a user would), without any prompt.
    pub fn lock(&self) -> std::io::Result<()> {
        let o = Command::new("dbus-send")
            .args([
                "--session",
                "--print-reply",
                "--dest=org.freedesktop.secrets",
                "/org/freedesktop/secrets",
                "org.freedesktop.Secret.Service.Lock",
                "array:objpath:/org/freedesktop/secrets/collection/login",
            ])
            .env("DBUS_SESSION_BUS_ADDRESS", &self.address)
            .output()?;
        if o.status.success() {
            Ok(())
        } else {
            Err(std::io::Error::other(format!(
                "locking the keyring failed: {}",
                String::from_utf8_lossy(&o.stderr)
            )))
        }
    }

    /// Stops the Secret Service, leaving the bus up (a session whose keyring went away).
    pub fn stop_service(&mut self) {
        let _ = self.keyring.kill();
        let _ = self.keyring.wait();
    }

    fn wait_for_service(&self) -> std::io::Result<()> {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let out = Command::new("dbus-send")
                .args([
                    "--session",
                    "--print-reply",
                    "--dest=org.freedesktop.secrets",
                    "/org/freedesktop/secrets",
                    "org.freedesktop.Secret.Service.ReadAlias",
                    "string:default",
                ])
                .env("DBUS_SESSION_BUS_ADDRESS", &self.address)
                .stderr(Stdio::null())
                .output();
            if let Ok(o) = out {
                if o.status.success() && String::from_utf8_lossy(&o.stdout).contains("/collection/")
                {
                    return Ok(());
                }
            }
            if Instant::now() > deadline {
                return Err(std::io::Error::other(
                    "gnome-keyring-daemon did not offer a default collection within 20 s",
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// A private session bus whose config lists no service folders: nothing on it is started on
/// demand, so a test sees exactly the services it started. Returns the daemon and its address.
pub fn private_bus(dir: &Path) -> std::io::Result<(Child, String)> {
    private_bus_listening(dir, "unix:tmpdir=/tmp")
}

/// [`private_bus`] listening at `listen` (a D-Bus server address).
pub fn private_bus_listening(dir: &Path, listen: &str) -> std::io::Result<(Child, String)> {
    let config = dir.join("bus.conf");
    std::fs::write(
        &config,
        format!(
            r#"<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>{listen}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"#
        ),
    )?;
    let mut bus = Command::new("dbus-daemon")
        .arg(format!("--config-file={}", config.display()))
        .args(["--nofork", "--print-address=1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| missing("dbus-daemon", e))?;
    let mut line = String::new();
    if let Some(out) = bus.stdout.take() {
        BufReader::new(out).read_line(&mut line)?;
    }
    let address = line.trim().to_string();
    if address.is_empty() {
        let _ = bus.kill();
        let _ = bus.wait();
        return Err(std::io::Error::other("dbus-daemon printed no address"));
    }
    Ok((bus, address))
}

fn missing(program: &str, e: std::io::Error) -> std::io::Error {
    std::io::Error::new(
        e.kind(),
        format!("cannot start {program} ({e}); run scripts/setup.sh --test"),
    )
}

impl Drop for TestKeyring {
    fn drop(&mut self) {
        let _ = self.keyring.kill();
        let _ = self.keyring.wait();
        let _ = self.bus.kill();
        let _ = self.bus.wait();
    }
}
