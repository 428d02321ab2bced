//! `[runtime] kind = "docker"` (rules §4): the shell runs each command in a container of
//! `[runtime.docker] image`, with the workspace and read-write roots mounted read-write and
//! read-only roots read-only at the same paths (write-only roots are not mounted: a mount cannot
//! mean write-only), forbidden paths inside them masked, network as configured (default none).
//! The argument list is a pure function of the policy's layered plan.

use super::plan::{FsGrant, SYSTEM_DIRS};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Why a container command cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DockerError {
    /// `[runtime.docker] image` is not set.
    #[error("runtime.docker.image: no image configured for the docker runtime")]
    NoImage,
    /// A path cannot be expressed in a `--mount` argument.
    #[error("cannot mount {0} into the container: the path contains a comma")]
    UnmountablePath(PathBuf),
}

/// The container settings (`[runtime.docker]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DockerRun<'a> {
    /// The image.
    pub image: Option<&'a str>,
    /// The network (`none` when unset).
    pub network: Option<&'a str>,
    /// Environment passed into the container.
    pub env: Vec<(String, String)>,
    /// Container name, so a timeout can `docker kill` it.
    pub name: String,
}

/// The arguments of `docker` (starting with `run`) that run `sh -c command` in `cwd`.
pub fn docker_args(
    plan: &[FsGrant],
    run: &DockerRun<'_>,
    cwd: &Path,
    command: &str,
) -> Result<Vec<OsString>, DockerError> {
    let image = run
        .image
        .filter(|i| !i.is_empty())
        .ok_or(DockerError::NoImage)?;
    let mut a: Vec<OsString> = [
        "run",
        "--rm",
        "--init",
        "--cap-drop",
        "ALL",
        "--security-opt",
        "no-new-privileges",
        "--network",
        run.network.unwrap_or("none"),
        "--name",
        run.name.as_str(),
    ]
    .iter()
    .map(OsString::from)
    .collect();
    let mut mounted: Vec<&Path> = Vec::new();
    for g in plan {
        if g.path.starts_with("/dev") || g.path.starts_with("/proc") {
            continue;
        }
        // System directories come from the image.
        if SYSTEM_DIRS.iter().any(|s| g.path.starts_with(s)) {
            continue;
        }
        let p = g.path.to_string_lossy();
        if p.contains(',') {
            return Err(DockerError::UnmountablePath(g.path.clone()));
        }
        if g.read {
            let ro = if g.write { "" } else { ",readonly" };
            a.push("--mount".into());
            a.push(format!("type=bind,src={p},dst={p}{ro}").into());
            mounted.push(&g.path);
        } else if mounted.iter().any(|m| g.path.starts_with(m)) && g.is_dir {
            // Denied inside a mounted root: mask with an empty read-only tmpfs.
            a.push("--mount".into());
            a.push(format!("type=tmpfs,dst={p},readonly").into());
        }
    }
    for (k, v) in &run.env {
        a.push("--env".into());
        a.push(format!("{k}={v}").into());
    }
    a.push("--workdir".into());
    a.push(cwd.as_os_str().to_os_string());
    a.push(image.into());
    a.push("sh".into());
    a.push("-c".into());
    a.push(command.into());
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(path: &str, read: bool, write: bool, exec: bool) -> FsGrant {
        FsGrant {
            path: PathBuf::from(path),
            is_dir: true,
            read,
            write,
            exec,
        }
    }

    #[test]
    fn mounts_follow_the_plan() {
        let plan = vec![
            g("/usr", true, false, true),
            g("/w", true, true, true),
            g("/ro", true, false, true),
            g("/wo", false, true, false),
            g("/w/secrets", false, false, false),
            g("/elsewhere", false, false, false),
        ];
        let run = DockerRun {
            image: Some("debian:12"),
            network: None,
            env: vec![("LANG".into(), "C.UTF-8".into())],
            name: "warren-t".into(),
        };
        let args: Vec<String> = docker_args(&plan, &run, Path::new("/w"), "ls -la")
            .unwrap()
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let want: Vec<&str> = vec![
            "run",
            "--rm",
            "--init",
            "--cap-drop",
            "ALL",
            "--security-opt",
            "no-new-privileges",
            "--network",
            "none",
            "--name",
            "warren-t",
            "--mount",
            "type=bind,src=/w,dst=/w",
            "--mount",
            "type=bind,src=/ro,dst=/ro,readonly",
            "--mount",
            "type=tmpfs,dst=/w/secrets,readonly",
            "--env",
            "LANG=C.UTF-8",
            "--workdir",
            "/w",
            "debian:12",
            "sh",
            "-c",
            "ls -la",
        ];
        assert_eq!(args, want);
    }

    #[test]
    fn errors_are_named() {
        let run = DockerRun {
            image: None,
            network: Some("bridge"),
            env: Vec::new(),
            name: "n".into(),
        };
        assert_eq!(
            docker_args(&[], &run, Path::new("/w"), "ls"),
            Err(DockerError::NoImage)
        );
        let run = DockerRun {
            image: Some("img"),
            ..run
        };
        let args = docker_args(&[], &run, Path::new("/w"), "ls").unwrap();
        assert!(args
            .windows(2)
            .any(|w| w[0] == "--network" && w[1] == "bridge"));
        let plan = vec![g("/a,b", true, true, true)];
        assert!(matches!(
            docker_args(&plan, &run, Path::new("/w"), "ls"),
            Err(DockerError::UnmountablePath(_))
        ));
    }
}
