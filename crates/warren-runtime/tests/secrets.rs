//! The encrypted-file secret store.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use warren_runtime::secrets::{FileSecretStore, SecretError, SecretRef, SecretStore};
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
