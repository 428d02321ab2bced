//! Reads tauri.conf.json (frontend, icons, capabilities) for `generate_context!`.
//! The frontend must be built first: `npm ci && npm run build` in `ui/` creates `ui/dist`.

fn main() {
    if !std::path::Path::new("ui/dist/index.html").exists() {
        println!(
            "cargo:warning=ui/dist is missing: run `npm ci && npm run build` in ui/ before building the desktop app"
        );
    }
    println!("cargo:rerun-if-changed=ui/dist");
    tauri_build::build();
}
