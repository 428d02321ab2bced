//! Processes found by their command line: the way to tell whether something a sandboxed child
//! started is still running (its own pids are those of its pid namespace).

/// Processes other than this one whose command line contains `needle`.
pub fn running_with(needle: &str) -> Vec<u32> {
    let me = std::process::id();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_string_lossy().parse().ok()?;
            let cmd = std::fs::read(e.path().join("cmdline")).ok()?;
            let text = String::from_utf8_lossy(&cmd).replace('\0', " ");
            (pid != me && text.contains(needle)).then_some(pid)
        })
        .collect()
}
