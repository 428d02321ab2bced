//! `warren-confine <landlock-ruleset-fd> -- <program> [args...]`: started by bubblewrap inside
//! an agent's sandbox, enters the Landlock ruleset Warren built and executes the program (see
//! `warren_policy::sandbox::layer`). Exits 125 without running anything when it cannot.

fn main() -> std::process::ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let message = warren_policy::sandbox::layer::helper_main(&args);
    eprintln!("{message}");
    std::process::ExitCode::from(125)
}
