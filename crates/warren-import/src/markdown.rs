//! ZeroClaw's Markdown memory: `MEMORY.md` (category `core`) and `memory/YYYY-MM-DD.md` (every
//! other category, by local day), one entry per line as `- **<key>**: <content>`. The files keep
//! no time of day, session or original category. Importing rewrites each entry line, in the
//! copied workspace, as a Warren Markdown entry line; every other line stays as it was.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use chrono::{DateTime, NaiveDate, Utc};
use warren_memory::markdown::format::{render, MdEntry};

/// The file that holds `core` entries.
pub const CORE_FILE: &str = "MEMORY.md";
/// The folder of the dated files.
pub const DAILY_DIR: &str = "memory";

/// One memory file of a Markdown agent, relative to its workspace.
#[derive(Debug, Clone)]
pub struct MdFile {
    /// Relative path (`MEMORY.md`, `memory/2026-08-17.md`).
    pub rel: PathBuf,
    /// The category its entries get (`core` or `daily`).
    pub category: &'static str,
    /// The time its entries get: noon UTC of the file's day, or the file's modification time.
    pub time: DateTime<Utc>,
}

/// The memory files of a workspace, in a stable order. Links are not followed: a `MEMORY.md`
/// or a `memory/` that is a link is not a memory file here (the plan refuses such a source).
pub fn memory_files(workspace: &Path) -> Vec<MdFile> {
    let mut out = Vec::new();
    let core = workspace.join(CORE_FILE);
    if std::fs::symlink_metadata(&core).is_ok_and(|m| m.is_file()) {
        let time = std::fs::symlink_metadata(&core)
            .and_then(|m| m.modified())
            .map(DateTime::<Utc>::from)
            .unwrap_or_else(|_| Utc::now());
        out.push(MdFile {
            rel: PathBuf::from(CORE_FILE),
            category: "core",
            time,
        });
    }
    let mut days = Vec::new();
    let daily = workspace.join(DAILY_DIR);
    let daily_is_dir = std::fs::symlink_metadata(&daily).is_ok_and(|m| m.is_dir());
    if let Some(rd) = daily_is_dir
        .then(|| std::fs::read_dir(&daily).ok())
        .flatten()
    {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(stem) = name.strip_suffix(".md") else {
                continue;
            };
            let Ok(day) = NaiveDate::parse_from_str(stem, "%Y-%m-%d") else {
                continue;
            };
            if !e.file_type().is_ok_and(|t| t.is_file()) {
                continue;
            }
            if let Some(noon) = day.and_hms_opt(12, 0, 0) {
                days.push(MdFile {
                    rel: Path::new(DAILY_DIR).join(&name),
                    category: "daily",
                    time: noon.and_utc(),
                });
            }
        }
    }
    days.sort_by(|a, b| a.rel.cmp(&b.rel));
    out.extend(days);
    out
}

/// `- **key**: content` → (key, content).
fn entry_line(line: &str) -> Option<(&str, &str)> {
    let rest = line.strip_prefix("- **")?;
    let end = rest.find("**:")?;
    let key = &rest[..end];
    if key.trim().is_empty() {
        return None;
    }
    let content = &rest[end + 3..];
    Some((key, content.strip_prefix(' ').unwrap_or(content)))
}

/// A parsed file: its lines, with each entry (and the lines continuing it) grouped.
#[derive(Debug, Clone)]
enum Piece {
    Text(String),
    Entry(MdEntry),
}

fn parse(text: &str, file: &MdFile) -> Vec<Piece> {
    let mut pieces: Vec<Piece> = Vec::new();
    let mut open = false;
    for line in text.lines() {
        if let Some((key, content)) = entry_line(line) {
            pieces.push(Piece::Entry(MdEntry {
                key: key.to_string(),
                category: file.category.to_string(),
                session_id: None,
                created_at: file.time,
                updated_at: file.time,
                content: content.to_string(),
            }));
            open = true;
            continue;
        }
        // A non-blank line right under an entry continues its content (a stored text with
        // line breaks); a blank line or a heading ends it.
        if open && !line.trim().is_empty() && !line.starts_with('#') && !line.starts_with("- ") {
            if let Some(Piece::Entry(e)) = pieces.last_mut() {
                e.content.push('\n');
                e.content.push_str(line);
                continue;
            }
        }
        open = false;
        pieces.push(Piece::Text(line.to_string()));
    }
    pieces
}

/// The entries of a workspace's memory files, in file order; a key stored again later wins.
/// Each file is read through `read` (the source's reader, which never follows a link).
pub fn entries(
    read: &dyn Fn(&Path) -> std::io::Result<String>,
    workspace: &Path,
) -> Result<Vec<MdEntry>, (PathBuf, std::io::Error)> {
    let mut by_key: BTreeMap<String, usize> = BTreeMap::new();
    let mut out: Vec<MdEntry> = Vec::new();
    for f in memory_files(workspace) {
        let path = workspace.join(&f.rel);
        let text = read(&path).map_err(|e| (path.clone(), e))?;
        for p in parse(&text, &f) {
            if let Piece::Entry(e) = p {
                match by_key.get(&e.key) {
                    Some(&i) => out[i] = e,
                    None => {
                        by_key.insert(e.key.clone(), out.len());
                        out.push(e);
                    }
                }
            }
        }
    }
    Ok(out)
}

/// Rewrites one copied memory file: entry lines become Warren entry lines (only the last
/// occurrence of a key, per `keep`); everything else is kept byte for byte, line by line.
pub fn convert(text: &str, file: &MdFile, keep: &dyn Fn(&MdEntry) -> bool) -> String {
    let mut out = String::with_capacity(text.len() + 256);
    for p in parse(text, file) {
        match p {
            Piece::Text(t) => out.push_str(&t),
            Piece::Entry(e) if keep(&e) => out.push_str(&render(&e)),
            // An earlier copy of a key stored again later: dropped, the later line holds it.
            Piece::Entry(_) => continue,
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(category: &'static str) -> MdFile {
        MdFile {
            rel: PathBuf::from("memory/2026-08-21.md"),
            category,
            time: NaiveDate::from_ymd_opt(2026, 8, 21)
                .and_then(|d| d.and_hms_opt(12, 0, 0))
                .unwrap()
                .and_utc(),
        }
    }

    #[test]
    fn entry_lines_become_warren_lines_and_the_rest_stays() {
        let text = "# Daily Log — 2026-08-21\n\n- **evening**: Week wrapped up.\n\n- **multi**: first\nsecond\n\nA note by hand.\n";
        let f = file("daily");
        let out = convert(text, &f, &|_| true);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "# Daily Log — 2026-08-21");
        let parsed: Vec<MdEntry> = lines
            .iter()
            .filter_map(|l| warren_memory::markdown::format::parse(l))
            .collect();
        assert_eq!(parsed.len(), 2, "{out}");
        assert_eq!(parsed[0].key, "evening");
        assert_eq!(parsed[0].content, "Week wrapped up.");
        assert_eq!(parsed[0].category, "daily");
        assert_eq!(parsed[1].content, "first\nsecond");
        assert!(out.contains("\nA note by hand.\n"), "{out}");
    }

    #[test]
    fn lines_that_are_not_entries_are_not_parsed_as_entries() {
        for l in ["- plain bullet", "- ****: x", "# **x**: y", "-**k**: v"] {
            assert!(entry_line(l).is_none(), "{l}");
        }
        assert_eq!(entry_line("- **k**: v: w"), Some(("k", "v: w")));
    }
}
