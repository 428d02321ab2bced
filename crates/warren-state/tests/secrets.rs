//! The encrypted-file secret store.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use warren_state::secrets::{FileSecretStore, SecretError, SecretRef, SecretStore};
use warren_testkit::TestInstall;

#[test]
fn set_get_list_remove_round_trip_encrypted_on_disk() {
    let t = TestInstall::empty().unwrap();
    let s = FileSecretStore::for_install(&t.layout());
    let global = SecretRef::parse("OPENAI_API_KEY").unwrap();
    let scoped = SecretRef::parse("agent:bob/OPENAI_API_KEY").unwrap();
    assert_eq!(s.get(&global).unwrap(), None);
    s.set(&global, "sk-global-123").unwrap();
    s.set(&scoped, "sk-bob-456").unwrap();
    assert_eq!(s.get(&global).unwrap().as_deref(), Some("sk-global-123"));
    assert_eq!(s.get(&scoped).unwrap().as_deref(), Some("sk-bob-456"));
    assert_eq!(s.list().unwrap(), vec![global.clone(), scoped.clone()]);

    let data = fs::read(t.root().join("data/secrets.enc")).unwrap();
    let text = String::from_utf8_lossy(&data);
    assert!(
        !text.contains("sk-global-123") && !text.contains("OPENAI"),
        "plaintext on disk"
    );
    let key_mode = fs::metadata(t.root().join("data/secrets.key"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(key_mode & 0o777, 0o600);

    // A second handle (another process) reads the same values.
    let s2 = FileSecretStore::for_install(&t.layout());
    assert_eq!(s2.get(&scoped).unwrap().as_deref(), Some("sk-bob-456"));
    assert!(s2.remove(&global).unwrap());
    assert!(!s2.remove(&global).unwrap());
    assert_eq!(s.get(&global).unwrap(), None);
}

#[test]
fn tampering_and_loose_key_permissions_fail_closed() {
    let t = TestInstall::empty().unwrap();
    let s = FileSecretStore::for_install(&t.layout());
    let r = SecretRef::parse("K").unwrap();
    s.set(&r, "v").unwrap();
    let p = t.root().join("data/secrets.enc");
    let mut bytes = fs::read(&p).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    fs::write(&p, &bytes).unwrap();
    assert!(matches!(s.get(&r), Err(SecretError::Corrupt { .. })));

    let key = t.root().join("data/secrets.key");
    fs::set_permissions(&key, fs::Permissions::from_mode(0o644)).unwrap();
    let e = s.get(&r).unwrap_err();
    assert!(
        matches!(e, SecretError::InsecureKey { mode: 0o644, .. }),
        "{e}"
    );
    assert!(e.to_string().contains("chmod 600"));
}

mod keyring {
    use std::collections::{BTreeMap, HashMap};
    use warren_state::keyring::{open_user_secrets, KeyringStore};
    use warren_state::secrets::{FileSecretStore, SecretError, SecretRef, SecretStore};
    use warren_testkit::keyring::TestKeyring;
    use warren_testkit::TestInstall;
    use warren_types::SecretBackendKind;

    fn vars(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// Reads an item straight from the Secret Service, the way another keyring client would.
    fn raw_lookup(kr: &TestKeyring, install: &std::path::Path, name: &str) -> Option<String> {
        let addr = kr.address().to_string();
        let install = install.to_string_lossy().into_owned();
        let name = name.to_string();
        std::thread::spawn(move || {
            let conn = zbus::blocking::connection::Builder::address(addr.as_str())
                .unwrap()
                .build()
                .unwrap();
            let ss = secret_service::blocking::SecretService::connect_with_existing(
                secret_service::EncryptionType::Dh,
                conn,
            )
            .unwrap();
            let found = ss
                .search_items(HashMap::from([
                    ("application", "warren"),
                    ("warren-install", install.as_str()),
                    ("warren-secret", name.as_str()),
                ]))
                .unwrap();
            found
                .unlocked
                .first()
                .map(|i| String::from_utf8(i.get_secret().unwrap()).unwrap())
        })
        .join()
        .unwrap()
    }

    #[test]
    fn keyring_holds_user_secrets_and_nothing_reaches_the_file() {
        let kr = TestKeyring::start().unwrap();
        let t = TestInstall::empty().unwrap();
        let env = vars(&[("DBUS_SESSION_BUS_ADDRESS", kr.address())]);
        let s = open_user_secrets(&t.layout(), &env).unwrap();
        assert_eq!(s.backend(), SecretBackendKind::Keyring, "{}", s.describe());

        let global = SecretRef::parse("OPENAI_API_KEY").unwrap();
        let scoped = SecretRef::parse("agent:bob/OPENAI_API_KEY").unwrap();
        s.set(&global, "sk-global-kr").unwrap();
        s.set(&scoped, "sk-bob-kr").unwrap();
        // Replacing keeps one item.
        s.set(&scoped, "sk-bob-kr-2").unwrap();

        assert_eq!(s.get(&global).unwrap().as_deref(), Some("sk-global-kr"));
        assert_eq!(s.get(&scoped).unwrap().as_deref(), Some("sk-bob-kr-2"));
        assert_eq!(s.list().unwrap(), vec![global.clone(), scoped]);
        // Another client of the same Secret Service sees the items under Warren's attributes.
        assert_eq!(
            raw_lookup(&kr, t.root(), "agent:bob/OPENAI_API_KEY").as_deref(),
            Some("sk-bob-kr-2")
        );
        // The encrypted file was never written.
        assert!(!t.root().join("data/secrets.enc").exists());

        // A second process (new connection) reads the same values; another install does not.
        let s2 = open_user_secrets(&t.layout(), &env).unwrap();
        assert_eq!(s2.get(&global).unwrap().as_deref(), Some("sk-global-kr"));
        let other = TestInstall::empty().unwrap();
        let s3 = open_user_secrets(&other.layout(), &env).unwrap();
        assert_eq!(s3.get(&global).unwrap(), None);
        assert!(s3.list().unwrap().is_empty());

        assert!(s2.remove(&global).unwrap());
        assert!(!s2.remove(&global).unwrap());
        assert_eq!(s.get(&global).unwrap(), None);
        assert_eq!(raw_lookup(&kr, t.root(), "OPENAI_API_KEY"), None);
    }

    #[test]
    fn secrets_stored_in_the_file_before_the_keyring_keep_working_and_move_on_set() {
        let kr = TestKeyring::start().unwrap();
        let t = TestInstall::empty().unwrap();
        let file = FileSecretStore::for_install(&t.layout());
        let old = SecretRef::parse("ANTHROPIC_KEY").unwrap();
        file.set(&old, "from-file").unwrap();

        let env = vars(&[("DBUS_SESSION_BUS_ADDRESS", kr.address())]);
        let s = open_user_secrets(&t.layout(), &env).unwrap();
        assert_eq!(s.get(&old).unwrap().as_deref(), Some("from-file"));
        assert_eq!(s.list().unwrap(), vec![old.clone()]);

        s.set(&old, "now-in-keyring").unwrap();
        assert_eq!(
            file.get(&old).unwrap(),
            None,
            "the stale file copy is removed"
        );
        assert_eq!(
            raw_lookup(&kr, t.root(), "ANTHROPIC_KEY").as_deref(),
            Some("now-in-keyring")
        );
        // rm removes it everywhere.
        file.set(&old, "stale").unwrap();
        assert!(s.remove(&old).unwrap());
        assert_eq!(s.get(&old).unwrap(), None);
        assert_eq!(file.get(&old).unwrap(), None);
    }

    /// The keyring holds the new value even when the older copy in the encrypted file cannot
    /// be removed (here the file store refuses its key, readable by others): set succeeds and
    /// lookups answer the keyring's value.
    #[test]
    fn set_succeeds_when_the_stale_file_copy_cannot_be_removed() {
        use std::os::unix::fs::PermissionsExt;
        let kr = TestKeyring::start().unwrap();
        let t = TestInstall::empty().unwrap();
        let file = FileSecretStore::for_install(&t.layout());
        let old = SecretRef::parse("ANTHROPIC_KEY").unwrap();
        file.set(&old, "from-file").unwrap();
        let key = t.root().join("data/secrets.key");
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(matches!(
            file.remove(&old),
            Err(SecretError::InsecureKey { .. })
        ));

        let env = vars(&[("DBUS_SESSION_BUS_ADDRESS", kr.address())]);
        let s = open_user_secrets(&t.layout(), &env).unwrap();
        s.set(&old, "now-in-keyring").unwrap();
        assert_eq!(s.get(&old).unwrap().as_deref(), Some("now-in-keyring"));
        assert_eq!(
            raw_lookup(&kr, t.root(), "ANTHROPIC_KEY").as_deref(),
            Some("now-in-keyring")
        );
        // The stale copy is still there once the file store is usable again; the keyring wins.
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(file.get(&old).unwrap().as_deref(), Some("from-file"));
        assert_eq!(s.get(&old).unwrap().as_deref(), Some("now-in-keyring"));
    }

    #[test]
    fn backend_choice_without_a_keyring() {
        let t = TestInstall::empty().unwrap();
        // No session bus: the encrypted file, saying why.
        let s = open_user_secrets(&t.layout(), &vars(&[])).unwrap();
        assert_eq!(s.backend(), SecretBackendKind::File);
        assert!(
            s.fallback_reason()
                .unwrap()
                .contains("DBUS_SESSION_BUS_ADDRESS"),
            "{:?}",
            s.fallback_reason()
        );
        let r = SecretRef::parse("K").unwrap();
        s.set(&r, "v").unwrap();
        assert!(t.root().join("data/secrets.enc").exists());

        // A bus with no Secret Service on it: still the file, naming the failure.
        let bus = TestBusOnly::start();
        let env = vars(&[("DBUS_SESSION_BUS_ADDRESS", bus.address.as_str())]);
        let s = open_user_secrets(&t.layout(), &env).unwrap();
        assert_eq!(s.backend(), SecretBackendKind::File);
        assert!(s.describe().contains("desktop keyring"), "{}", s.describe());

        // Forcing the keyring refuses to fall back.
        let mut forced = env;
        forced.insert("WARREN_SECRET_BACKEND".into(), "keyring".into());
        let e = open_user_secrets(&t.layout(), &forced).err().unwrap();
        assert!(matches!(e, SecretError::Backend(_)));
        assert!(
            e.to_string().contains("WARREN_SECRET_BACKEND=keyring"),
            "{e}"
        );

        // A typo in the choice is named.
        let bad = vars(&[("WARREN_SECRET_BACKEND", "kering")]);
        let e = open_user_secrets(&t.layout(), &bad).err().unwrap();
        assert!(e.to_string().contains("`kering`"), "{e}");
    }

    #[test]
    fn forcing_the_file_never_asks_the_keyring() {
        let kr = TestKeyring::start().unwrap();
        let t = TestInstall::empty().unwrap();
        let env = vars(&[
            ("DBUS_SESSION_BUS_ADDRESS", kr.address()),
            ("WARREN_SECRET_BACKEND", "file"),
        ]);
        let s = open_user_secrets(&t.layout(), &env).unwrap();
        assert_eq!(s.backend(), SecretBackendKind::File);
        let r = SecretRef::parse("K").unwrap();
        s.set(&r, "v").unwrap();
        assert_eq!(raw_lookup(&kr, t.root(), "K"), None);
        assert_eq!(
            FileSecretStore::for_install(&t.layout())
                .get(&r)
                .unwrap()
                .as_deref(),
            Some("v")
        );
        // The keyring store on its own reports what it is.
        let k = KeyringStore::connect(Some(kr.address().to_string()), t.root()).unwrap();
        assert!(k.describe().contains(kr.address()));
    }

    #[test]
    fn a_locked_keyring_is_never_prompted_for() {
        let kr = TestKeyring::start().unwrap();
        let t = TestInstall::empty().unwrap();
        let env = vars(&[("DBUS_SESSION_BUS_ADDRESS", kr.address())]);
        let s = open_user_secrets(&t.layout(), &env).unwrap();
        let r = SecretRef::parse("K").unwrap();
        s.set(&r, "in-keyring").unwrap();
        kr.lock().unwrap();

        // Reading through an open handle: a clear error, no prompt, no hang.
        let e = s.get(&r).unwrap_err();
        assert!(e.to_string().contains("desktop keyring"), "{e}");
        // A new start uses the file and says why; forcing the keyring is refused.
        let s2 = open_user_secrets(&t.layout(), &env).unwrap();
        assert_eq!(s2.backend(), SecretBackendKind::File);
        assert!(
            s2.fallback_reason().unwrap().contains("locked"),
            "{:?}",
            s2.fallback_reason()
        );
        let mut forced = env;
        forced.insert("WARREN_SECRET_BACKEND".into(), "keyring".into());
        let e = open_user_secrets(&t.layout(), &forced).err().unwrap();
        assert!(e.to_string().contains("locked"), "{e}");
    }

    /// A private bus with nothing on it (no service is started on demand).
    struct TestBusOnly {
        child: std::process::Child,
        address: String,
        _dir: tempfile::TempDir,
    }

    impl TestBusOnly {
        fn start() -> Self {
            let dir = tempfile::tempdir().unwrap();
            let (child, address) = warren_testkit::keyring::private_bus(dir.path()).unwrap();
            TestBusOnly {
                child,
                address,
                _dir: dir,
            }
        }
    }

    impl Drop for TestBusOnly {
        fn drop(&mut self) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Several stores of one install writing at once (the runtime, the API, another process):
/// every secret set is still there afterwards, none dropped by another writer's older map.
#[test]
fn writers_of_one_install_at_once_lose_no_secret() {
    let t = warren_testkit::TestInstall::empty().unwrap();
    let layout = t.layout();
    let threads: Vec<_> = (0..8)
        .map(|w| {
            let layout = layout.clone();
            std::thread::spawn(move || {
                let store = warren_state::secrets::FileSecretStore::for_install(&layout);
                for i in 0..20 {
                    let r = warren_state::secrets::SecretRef::parse(&format!("W{w}_K{i}")).unwrap();
                    warren_state::secrets::SecretStore::set(&store, &r, &format!("v{w}.{i}"))
                        .unwrap();
                }
            })
        })
        .collect();
    for th in threads {
        th.join().unwrap();
    }
    let store = warren_state::secrets::FileSecretStore::for_install(&layout);
    let listed = warren_state::secrets::SecretStore::list(&store).unwrap();
    assert_eq!(
        listed.len(),
        160,
        "secrets were lost: {} of 160 left",
        listed.len()
    );
    for w in 0..8 {
        for i in 0..20 {
            let r = warren_state::secrets::SecretRef::parse(&format!("W{w}_K{i}")).unwrap();
            assert_eq!(
                warren_state::secrets::SecretStore::get(&store, &r).unwrap(),
                Some(format!("v{w}.{i}"))
            );
        }
    }
}

/// First uses of one secret at once, from separate stores, agree on one value (the receipt
/// key: two values would leave receipts no key verifies).
#[test]
fn first_uses_at_once_agree_on_one_value() {
    let t = warren_testkit::TestInstall::empty().unwrap();
    let layout = t.layout();
    let threads: Vec<_> = (0..8)
        .map(|w| {
            let layout = layout.clone();
            std::thread::spawn(move || {
                let store = warren_state::secrets::FileSecretStore::for_install(&layout);
                let r = warren_state::secrets::SecretRef::parse("ONE_KEY").unwrap();
                warren_state::secrets::SecretStore::get_or_set(&store, &r, &|| {
                    Ok(format!("made by {w}"))
                })
                .unwrap()
            })
        })
        .collect();
    let values: std::collections::BTreeSet<String> =
        threads.into_iter().map(|th| th.join().unwrap()).collect();
    assert_eq!(values.len(), 1, "{values:?}");
}
