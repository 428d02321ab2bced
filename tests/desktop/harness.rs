//! Starts what a whole-app test needs — Xvfb on a free display, tauri-driver on free ports,
//! the app in its own `WARREN_HOME` — and stops every process it started when dropped, also
//! when the test fails.

use fantoccini::{Client, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;
use std::io::{BufRead, BufReader};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tempfile::TempDir;

/// How long to wait for a window element to appear.
pub const UI_TIMEOUT: Duration = Duration::from_secs(30);

const SETUP_HINT: &str = "run `scripts/setup.sh --test` to install the desktop test tools";

/// A running app under WebDriver, with its display and its install root.
pub struct Desktop {
    /// The WebDriver session on the app's window.
    pub client: Client,
    /// Time from asking for the session to the window being ready for commands.
    pub session_started: Duration,
    /// The install root given to the app as `WARREN_HOME`.
    pub home: PathBuf,
    /// The X display the window is on.
    pub display: String,
    /// The app's `DBUS_SESSION_BUS_ADDRESS` (`disabled:` when it has none).
    pub bus_address: String,
    /// Notifications the app sent (with [`Bus::PrivateWithNotifications`]).
    pub notifications: Received,
    procs: Procs,
}

/// Every process of one test, killed by PID on drop.
struct Procs {
    xvfb: Option<Child>,
    driver: Option<Child>,
    bus: Option<Child>,
    /// Holds `org.kde.StatusNotifierWatcher` on the private bus while it lives.
    tray_host: Option<zbus::blocking::Connection>,
    /// A Secret Service on its own private bus (dropped after the app is gone).
    keyring: Option<warren_testkit::keyring::TestKeyring>,
    /// Serves `org.freedesktop.Notifications` on the private bus while it lives.
    notifier: Option<zbus::blocking::Connection>,
    /// Scratch dir holding the install and the app's XDG dirs; its path marks our processes.
    scratch: TempDir,
}

impl Drop for Procs {
    fn drop(&mut self) {
        self.tray_host.take();
        self.notifier.take();
        // The app, WebKitWebDriver and WebKit's helpers inherit our WARREN_HOME: find them by it.
        let marker = format!("WARREN_HOME={}", self.scratch.path().join("home").display());
        kill_leaves_first(&marker);
        for child in [self.driver.take(), self.bus.take(), self.xvfb.take()]
            .into_iter()
            .flatten()
        {
            let mut child = child;
            let _ = child.kill();
            let _ = child.wait();
        }
        self.keyring.take();
    }
}

/// PIDs of processes whose environment contains `entry` (exactly `KEY=value`).
pub fn pids_with_env(entry: &str) -> Vec<u32> {
    let me = std::process::id();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| *pid != me)
        .filter(|pid| environ(*pid).iter().any(|kv| kv == entry))
        .collect()
}

/// The environment of a process (`KEY=value` entries); empty when it cannot be read.
pub fn environ(pid: u32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/environ"))
        .map(|bytes| {
            bytes
                .split(|b| *b == 0)
                .filter(|kv| !kv.is_empty())
                .map(|kv| String::from_utf8_lossy(kv).into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// The parent PID of a process, from /proc.
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name (which may contain spaces) start after the last ')'.
    stat.rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// Kills (by PID) every process marked with `marker`, children before their parents, so each
/// parent still lives to reap its children and no zombie is left behind.
fn kill_leaves_first(marker: &str) {
    for _ in 0..40 {
        let pids = pids_with_env(marker);
        if pids.is_empty() {
            return;
        }
        let parents: Vec<u32> = pids.iter().filter_map(|p| parent_of(*p)).collect();
        for pid in pids.iter().filter(|p| !parents.contains(p)) {
            let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Resident set size of a process in KiB, from /proc.
pub fn rss_kib(pid: u32) -> Option<u64> {
    status_kib(pid, "VmRSS:")
}

/// The anonymous (private, not shared-library) part of the resident set, in KiB.
pub fn rss_anon_kib(pid: u32) -> Option<u64> {
    status_kib(pid, "RssAnon:")
}

fn status_kib(pid: u32, key: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(key))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The short process name of a PID.
pub fn comm(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or_else(|e| panic!("no free TCP port: {e}"))
}

fn spawn_or_hint(cmd: &mut Command, what: &str) -> Child {
    match cmd.spawn() {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            panic!("`{what}` is not installed: {SETUP_HINT}")
        }
        Err(e) => panic!("starting `{what}` failed: {e}"),
    }
}

/// Starts Xvfb with `-displayfd`, so the server picks a free display and tells us which.
fn start_xvfb() -> (Child, String) {
    let mut child = spawn_or_hint(
        Command::new("Xvfb")
            .args([
                "-displayfd",
                "1",
                "-screen",
                "0",
                "1280x800x24",
                "-nolisten",
                "tcp",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null()),
        "Xvfb",
    );
    let mut line = String::new();
    let stdout = child
        .stdout
        .take()
        .unwrap_or_else(|| panic!("Xvfb has no stdout"));
    BufReader::new(stdout)
        .read_line(&mut line)
        .unwrap_or_else(|e| panic!("reading Xvfb's display number: {e}"));
    let display = line.trim().to_string();
    assert!(!display.is_empty(), "Xvfb did not report a display");
    (child, format!(":{display}"))
}

/// Starts a private D-Bus session bus and returns it with its address.
fn start_session_bus() -> (Child, String) {
    let mut child = spawn_or_hint(
        Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--print-address=1"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null()),
        "dbus-daemon",
    );
    let mut line = String::new();
    let stdout = child
        .stdout
        .take()
        .unwrap_or_else(|| panic!("dbus-daemon has no stdout"));
    BufReader::new(stdout)
        .read_line(&mut line)
        .unwrap_or_else(|e| panic!("reading the bus address: {e}"));
    let address = line.trim().to_string();
    assert!(!address.is_empty(), "dbus-daemon did not print its address");
    (child, address)
}

/// The D-Bus session the app runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bus {
    /// No session bus (`DBUS_SESSION_BUS_ADDRESS=disabled:`).
    None,
    /// A private session bus with nothing else on it.
    Private,
    /// A private session bus on which the test owns `org.kde.StatusNotifierWatcher`, as a
    /// desktop that shows tray icons does.
    PrivateWithTrayHost,
    /// A private session bus with a real Secret Service (GNOME Keyring) on it.
    Keyring,
    /// Like `PrivateWithTrayHost`, and the test serves `org.freedesktop.Notifications` there,
    /// recording every notification (see [`Desktop::notifications`]).
    PrivateWithNotifications,
}

/// Notifications received on the private bus: (summary, body).
pub type Received = std::sync::Arc<std::sync::Mutex<Vec<(String, String)>>>;

/// The test's notification server: records what the app sends.
struct NotificationRecorder(Received);

#[zbus::interface(name = "org.freedesktop.Notifications")]
impl NotificationRecorder {
    #[allow(clippy::too_many_arguments)]
    fn notify(
        &self,
        _app_name: String,
        _replaces_id: u32,
        _app_icon: String,
        summary: String,
        body: String,
        _actions: Vec<String>,
        _hints: std::collections::HashMap<String, zbus::zvariant::OwnedValue>,
        _expire_timeout: i32,
    ) -> u32 {
        let mut got = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        got.push((summary, body));
        u32::try_from(got.len()).unwrap_or(u32::MAX)
    }

    fn get_capabilities(&self) -> Vec<String> {
        vec!["body".into()]
    }

    fn get_server_information(&self) -> (String, String, String, String) {
        (
            "warren-test".into(),
            "warren".into(),
            "1".into(),
            "1.2".into(),
        )
    }
}

/// Sets up a scratch install, Xvfb and tauri-driver, then opens the app under WebDriver.
/// `prepare` fills the install root (it exists and is empty when called). The app gets no
/// session bus, so single-instance and the tray never reach a real desktop session.
pub async fn launch(prepare: impl FnOnce(&Path)) -> Desktop {
    launch_with(Bus::None, prepare).await
}

/// Like [`launch`], in the given D-Bus session.
pub async fn launch_with(bus: Bus, prepare: impl FnOnce(&Path)) -> Desktop {
    launch_with_env(bus, &[], prepare).await
}

/// Like [`launch_with`], with extra environment variables for the app (such as `GTK_THEME`).
/// The install records the first-run flow as skipped (unless `prepare` wrote its own record),
/// so the flow does not cover the screen a test is about; [`launch_first_run`] leaves it.
pub async fn launch_with_env(
    bus: Bus,
    env: &[(&str, &str)],
    prepare: impl FnOnce(&Path),
) -> Desktop {
    launch_inner(bus, env, true, prepare).await
}

/// Like [`launch`], without the first-run record: the app decides whether the flow shows.
pub async fn launch_first_run(prepare: impl FnOnce(&Path)) -> Desktop {
    launch_inner(Bus::None, &[], false, prepare).await
}

/// [`launch_first_run`] with more environment for the app (a ZeroClaw install's folder, say).
pub async fn launch_first_run_with_env(
    env: &[(&str, &str)],
    prepare: impl FnOnce(&Path),
) -> Desktop {
    launch_inner(Bus::None, env, false, prepare).await
}

/// Writes the first-run record "skipped" into `home` unless it has one.
fn skip_first_run(home: &Path) {
    let record = home.join("data").join("first_run.json");
    if record.exists() {
        return;
    }
    std::fs::create_dir_all(home.join("data"))
        .unwrap_or_else(|e| panic!("creating {}/data: {e}", home.display()));
    std::fs::write(&record, r#"{"outcome": "skipped"}"#)
        .unwrap_or_else(|e| panic!("writing {}: {e}", record.display()));
}

async fn launch_inner(
    bus: Bus,
    env: &[(&str, &str)],
    skip_setup: bool,
    prepare: impl FnOnce(&Path),
) -> Desktop {
    let app = PathBuf::from(env!("CARGO_BIN_EXE_warren-desktop"));
    let scratch = tempfile::Builder::new()
        .prefix("warren-desktop-test")
        .tempdir()
        .unwrap_or_else(|e| panic!("temp dir: {e}"));
    let home = scratch.path().join("home");
    std::fs::create_dir_all(&home).unwrap_or_else(|e| panic!("creating {}: {e}", home.display()));
    prepare(&home);
    if skip_setup {
        skip_first_run(&home);
    }
    let mut procs = Procs {
        xvfb: None,
        driver: None,
        bus: None,
        tray_host: None,
        keyring: None,
        notifier: None,
        scratch,
    };

    let (xvfb, display) = start_xvfb();
    procs.xvfb = Some(xvfb);
    let bus_address = if bus == Bus::None {
        "disabled:".to_string()
    } else if bus == Bus::Keyring {
        let keyring = warren_testkit::keyring::TestKeyring::start()
            .unwrap_or_else(|e| panic!("starting a test keyring: {e} ({SETUP_HINT})"));
        let address = keyring.address().to_string();
        procs.keyring = Some(keyring);
        address
    } else {
        let (child, address) = start_session_bus();
        procs.bus = Some(child);
        address
    };
    if matches!(
        bus,
        Bus::PrivateWithTrayHost | Bus::PrivateWithNotifications
    ) {
        // zbus's blocking API runs its own runtime when built with tokio support, which may
        // not start inside the test's runtime: connect from a plain thread.
        let address = bus_address.clone();
        let host = std::thread::spawn(move || {
            zbus::blocking::connection::Builder::address(address.as_str())
                .and_then(|b| b.name("org.kde.StatusNotifierWatcher"))
                .and_then(zbus::blocking::connection::Builder::build)
        })
        .join()
        .unwrap_or_else(|_| panic!("the D-Bus connection thread panicked"))
        .unwrap_or_else(|e| panic!("owning the tray host name on the private bus: {e}"));
        procs.tray_host = Some(host);
    }
    let received: Received = Default::default();
    if bus == Bus::PrivateWithNotifications {
        let address = bus_address.clone();
        let recorder = NotificationRecorder(received.clone());
        let server = std::thread::spawn(move || {
            zbus::blocking::connection::Builder::address(address.as_str())
                .and_then(|b| b.name("org.freedesktop.Notifications"))
                .and_then(|b| b.serve_at("/org/freedesktop/Notifications", recorder))
                .and_then(zbus::blocking::connection::Builder::build)
        })
        .join()
        .unwrap_or_else(|_| panic!("the D-Bus connection thread panicked"))
        .unwrap_or_else(|e| panic!("serving notifications on the private bus: {e}"));
        procs.notifier = Some(server);
    }

    let port = free_port();
    let native_port = free_port();
    let xdg = procs.scratch.path().join("xdg");
    let driver = spawn_or_hint(
        Command::new("tauri-driver")
            .args([
                "--port",
                &port.to_string(),
                "--native-port",
                &native_port.to_string(),
            ])
            .env("DISPLAY", &display)
            .env("WARREN_HOME", &home)
            .env("WARREN_LOG", "warn")
            .env("WEBKIT_DISABLE_COMPOSITING_MODE", "1")
            .env("NO_AT_BRIDGE", "1")
            .env("DBUS_SESSION_BUS_ADDRESS", &bus_address)
            .envs(env.iter().copied())
            .env("XDG_DATA_HOME", xdg.join("data"))
            .env("XDG_CONFIG_HOME", xdg.join("config"))
            .env("XDG_CACHE_HOME", xdg.join("cache"))
            .env_remove("WAYLAND_DISPLAY")
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
        "tauri-driver",
    );
    procs.driver = Some(driver);
    let deadline = Instant::now() + Duration::from_secs(15);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "tauri-driver did not listen on {port}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }

    let mut caps = serde_json::Map::new();
    caps.insert(
        "tauri:options".into(),
        serde_json::json!({ "application": app }),
    );
    // tauri-driver listens before WebKitWebDriver behind it does: retry a refused session.
    let started = Instant::now();
    let deadline = started + Duration::from_secs(20);
    let client = loop {
        let attempt = ClientBuilder::new(HttpConnector::new())
            .capabilities(caps.clone())
            .connect(&format!("http://127.0.0.1:{port}"))
            .await;
        match attempt {
            Ok(c) => break c,
            Err(e) if Instant::now() > deadline => {
                panic!("WebDriver session on the app failed: {e}")
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    };
    Desktop {
        client,
        session_started: started.elapsed(),
        home,
        display,
        bus_address,
        notifications: received,
        procs,
    }
}

impl Desktop {
    /// Waits for an element matching `css` and returns it. Any WebDriver error is retried
    /// until the deadline: while the page first loads, WebKit answers "unload" errors.
    pub async fn wait_for(&self, css: &str) -> fantoccini::elements::Element {
        let deadline = Instant::now() + UI_TIMEOUT;
        loop {
            match self.client.find(Locator::Css(css)).await {
                Ok(e) => return e,
                Err(e) if Instant::now() > deadline => {
                    let source = self.client.source().await.unwrap_or_default();
                    let url = self.client.current_url().await.map(|u| u.to_string());
                    self.screenshot("timeout").await;
                    panic!(
                        "no `{css}` in the window within {UI_TIMEOUT:?}: {e:?}\nurl: {url:?}\n{source}"
                    )
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            }
        }
    }

    /// Waits until the text of `css` satisfies `ok` and returns it; panics with the last text
    /// seen (and a screenshot) at the deadline.
    pub async fn wait_text(&self, css: &str, ok: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + UI_TIMEOUT;
        loop {
            let text = self.wait_for(css).await.text().await.unwrap_or_default();
            if ok(&text) {
                return text;
            }
            if Instant::now() > deadline {
                self.screenshot("timeout").await;
                panic!("`{css}` never showed the expected text; last: {text:?}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Opens a screen through its link in the top navigation (`nav-<screen>`) and waits until
    /// the window shows it (the URL's `#<screen>`). A click that lands while the page is being
    /// re-rendered can be lost, so the click is repeated until the route changed.
    pub async fn nav(&self, screen: &str) {
        let css = format!("[data-testid=nav-{screen}]");
        let want = format!("#{screen}");
        let deadline = Instant::now() + UI_TIMEOUT;
        loop {
            self.click(&css).await;
            let settle = Instant::now() + Duration::from_secs(2);
            while Instant::now() < settle {
                let url = self.client.current_url().await.map(|u| u.to_string());
                if url.as_deref().is_ok_and(|u| u.contains(&want)) {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            if Instant::now() > deadline {
                self.screenshot("nav-timeout").await;
                panic!("the window never showed `{want}` after clicking `{css}`");
            }
        }
    }

    /// Clicks the element matching `css` once it is there. An element the page re-rendered
    /// between finding and clicking it (a refresh after a file change, say) is found again.
    pub async fn click(&self, css: &str) {
        let deadline = Instant::now() + UI_TIMEOUT;
        loop {
            match self.wait_for(css).await.click().await {
                Ok(_) => return,
                Err(e) if is_stale(&e) && Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Err(e) => panic!("clicking `{css}`: {e}"),
            }
        }
    }

    /// Saves a PNG of the display into `target/screenshots/<name>.png` and returns its path.
    /// ImageMagick's `import` grabs the X display: WebKitWebDriver's own screenshot never
    /// answers when compositing is disabled under Xvfb.
    pub async fn screenshot(&self, name: &str) -> PathBuf {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .parent()
            .unwrap_or_else(|| Path::new("target"))
            .join("screenshots");
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let path = dir.join(format!("{name}.png"));
        let status = tokio::process::Command::new("import")
            .args(["-display", &self.display, "-window", "root"])
            .arg(&path)
            .status()
            .await;
        match status {
            Ok(s) if s.success() => eprintln!("screenshot: {}", path.display()),
            Ok(s) => panic!("`import` failed ({s}) taking {}", path.display()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                panic!("ImageMagick's `import` is not installed: {SETUP_HINT}")
            }
            Err(e) => panic!("running `import`: {e}"),
        }
        path
    }

    /// Narrows the window to 640 px, takes a screenshot named `name`, checks that nothing runs
    /// off the side (the page is no wider than the window), and gives the window its size back.
    pub async fn narrow_screenshot(&self, name: &str) {
        let size = self.client.get_window_size().await.unwrap();
        self.client.set_window_size(640, 760).await.unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        let overflow = self
            .client
            .execute(
                "const w = window.innerWidth; \
                 const past = [...document.body.querySelectorAll('*')] \
                   .filter((e) => e.getBoundingClientRect().right > w + 0.5) \
                   .slice(-4) \
                   .map((e) => e.tagName.toLowerCase() + (e.dataset.testid ? `[${e.dataset.testid}]` : '') \
                     + (e.className && typeof e.className === 'string' ? '.' + e.className.split(' ')[0] : '') \
                     + ': ' + (e.textContent || '').trim().slice(0, 40)); \
                 return [document.documentElement.scrollWidth, w, past];",
                vec![],
            )
            .await
            .unwrap();
        self.screenshot(name).await;
        let (scroll, inner) = (overflow[0].as_u64().unwrap(), overflow[1].as_u64().unwrap());
        assert!(
            scroll <= inner,
            "{name}: the page overflows a {inner} px window: {scroll} px wide (past its edge: {})",
            overflow[2]
        );
        self.client
            .set_window_size(size.0 as u32, size.1 as u32)
            .await
            .unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    }

    /// Takes a screenshot (as [`screenshot`](Desktop::screenshot)) once WebKit has painted the
    /// page, and copies it into `ui/docs/<name>.png`, where the docs show it.
    pub async fn docs_screenshot(&self, name: &str) {
        // The element is in the page a moment before WebKit paints it on the display.
        tokio::time::sleep(std::time::Duration::from_millis(800)).await;
        let shot = self.screenshot(name).await;
        let docs = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("ui")
            .join("docs")
            .join(format!("{name}.png"));
        std::fs::copy(&shot, &docs).unwrap_or_else(|e| panic!("{}: {e}", docs.display()));
    }

    /// Runs `prompt` as a turn of `agent` through the app's own `send_prompt` command: the
    /// turn's result, or the command's error as `{ error: {code, message} }`.
    pub async fn send_prompt(&self, agent: &str, prompt: &str) -> serde_json::Value {
        self.client
            .execute_async(
                "const [agent, prompt, done] = arguments;
                 window.__TAURI_INTERNALS__.invoke('send_prompt', { req: { agent, session: null, prompt } })
                   .then((r) => done(r), (e) => done({ error: e }));",
                vec![serde_json::json!(agent), serde_json::json!(prompt)],
            )
            .await
            .unwrap_or_else(|e| panic!("send_prompt for {agent}: {e}"))
    }

    /// The app's own process (the Tauri backend), found by its binary and our WARREN_HOME.
    pub fn backend_pid(&self) -> Option<u32> {
        let marker = format!("WARREN_HOME={}", self.home.display());
        pids_with_env(&marker)
            .into_iter()
            .find(|pid| comm(*pid).starts_with("warren-desktop"))
    }

    /// Every process started for this test's app except the backend (WebKit helpers, drivers).
    pub fn other_pids(&self) -> Vec<u32> {
        let marker = format!("WARREN_HOME={}", self.home.display());
        let backend = self.backend_pid();
        pids_with_env(&marker)
            .into_iter()
            .filter(|p| Some(*p) != backend)
            .collect()
    }

    /// The app's `XDG_CONFIG_HOME`.
    pub fn xdg_config_home(&self) -> PathBuf {
        self.procs.scratch.path().join("xdg").join("config")
    }

    /// The map state of the app's top-level window (`IsViewable`, `IsUnMapped`, …), from
    /// `xwininfo` on the test's display; `None` when no window is named `Warren`.
    pub fn window_map_state(&self) -> Option<String> {
        let out = Command::new("xwininfo")
            .args(["-display", &self.display, "-name", "Warren"])
            .output()
            .unwrap_or_else(|e| panic!("running xwininfo: {e} ({SETUP_HINT})"));
        String::from_utf8_lossy(&out.stdout).lines().find_map(|l| {
            l.trim()
                .strip_prefix("Map State:")
                .map(|s| s.trim().to_string())
        })
    }

    /// Starts a second `warren-desktop` with the first one's environment (not under WebDriver).
    pub fn second_instance(&self) -> Child {
        let xdg = self.procs.scratch.path().join("xdg");
        Command::new(env!("CARGO_BIN_EXE_warren-desktop"))
            .env("DISPLAY", &self.display)
            .env("WARREN_HOME", &self.home)
            .env("WARREN_LOG", "warn")
            .env("WEBKIT_DISABLE_COMPOSITING_MODE", "1")
            .env("NO_AT_BRIDGE", "1")
            .env("DBUS_SESSION_BUS_ADDRESS", &self.bus_address)
            .env("XDG_DATA_HOME", xdg.join("data"))
            .env("XDG_CONFIG_HOME", xdg.join("config"))
            .env("XDG_CACHE_HOME", xdg.join("cache"))
            .env_remove("WAYLAND_DISPLAY")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("starting a second instance: {e}"))
    }

    /// Ends the WebDriver session (closing the app), then stops Xvfb and tauri-driver.
    pub async fn close(self) {
        let Desktop { client, procs, .. } = self;
        let _ = client.close().await;
        drop(procs);
    }
}

/// The element a WebDriver call named is gone from the page (WebKitWebDriver says "Node with
/// identifier … was not found"; the standard error is "stale element reference").
fn is_stale(e: &fantoccini::error::CmdError) -> bool {
    if let fantoccini::error::CmdError::Standard(w) = e {
        if w.error() == "stale element reference" {
            return true;
        }
    }
    let text = e.to_string();
    text.contains("stale element")
        || (text.contains("Node with identifier") && text.contains("was not found"))
}
