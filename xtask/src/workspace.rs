//! The workspace root and its `members` list, edited as text so that the rest of the
//! root `Cargo.toml` (comments, order, formatting) stays as it is.

use std::path::{Path, PathBuf};

/// The nearest ancestor of the current directory (itself included) whose `Cargo.toml`
/// has a `[workspace]` table.
pub fn find_root() -> Result<PathBuf, String> {
    let cwd =
        std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
    cwd.ancestors()
        .find(|dir| {
            std::fs::read_to_string(dir.join("Cargo.toml"))
                .is_ok_and(|text| text.lines().any(|l| l.trim() == "[workspace]"))
        })
        .map(Path::to_path_buf)
        .ok_or_else(|| {
            format!(
                "no Cargo workspace above {}; run from inside the mochi repository or pass --workspace <dir>",
                cwd.display()
            )
        })
}

/// The `members = [ … ]` array of the `[workspace]` table: the byte range of the
/// text between its brackets, and the entries.
struct Members {
    inside: std::ops::Range<usize>,
    entries: Vec<String>,
}

fn members(manifest: &str) -> Result<Members, String> {
    let not_found = || {
        "the root Cargo.toml has no `members = [ … ]` array in its [workspace] table".to_string()
    };
    let workspace = manifest
        .match_indices("[workspace]")
        .map(|(i, _)| i)
        .find(|&i| i == 0 || manifest[..i].ends_with('\n'))
        .ok_or_else(not_found)?;
    let body_start = workspace + "[workspace]".len();
    // The table ends where the next table header starts.
    let body_end = manifest[body_start..]
        .match_indices("\n[")
        .next()
        .map_or(manifest.len(), |(i, _)| body_start + i + 1);
    let body = &manifest[body_start..body_end];
    let key = body
        .match_indices("members")
        .map(|(i, _)| i)
        .find(|&i| {
            body[..i].ends_with('\n') && body[i + "members".len()..].trim_start().starts_with('=')
        })
        .ok_or_else(not_found)?;
    let open = body[key..].find('[').ok_or_else(not_found)? + key + 1;
    let close = body[open..].find(']').ok_or_else(not_found)? + open;
    let entries = body[open..close]
        .split(',')
        .map(|e| e.lines().map(code_of).collect::<String>())
        .map(|e| e.trim().trim_matches('"').to_string())
        .filter(|e| !e.is_empty())
        .collect();
    Ok(Members {
        inside: body_start + open..body_start + close,
        entries,
    })
}

/// The part of a TOML line before its comment (entries here contain no `#`).
fn code_of(line: &str) -> &str {
    line.split('#').next().unwrap_or("")
}

/// The workspace members listed in `manifest`.
pub fn member_list(manifest: &str) -> Result<Vec<String>, String> {
    Ok(members(manifest)?.entries)
}

/// `manifest` with `member` added to the `members` array: after the last `rules/…`
/// entry (or at the end), one entry per line, as the array is written.
pub fn add_member(manifest: &str, member: &str) -> Result<String, String> {
    let Members { inside, entries } = members(manifest)?;
    if entries.iter().any(|e| e == member) {
        return Err(format!("\"{member}\" is already a workspace member"));
    }
    let array = &manifest[inside.clone()];
    let line = format!("    \"{member}\",\n");
    let edited = if array.contains('\n') {
        // One entry per line: a new line after the last `rules/` entry, else after the
        // last entry.
        let mut lines: Vec<String> = array.split_inclusive('\n').map(String::from).collect();
        let entry_lines: Vec<usize> = (0..lines.len())
            .filter(|&i| code_of(&lines[i]).trim().starts_with('"'))
            .collect();
        let after = entry_lines
            .iter()
            .rev()
            .find(|&&i| code_of(&lines[i]).trim().starts_with("\"rules/"))
            .or(entry_lines.last())
            .copied();
        let at = match after {
            Some(i) => {
                let code = code_of(&lines[i]).trim_end();
                if !code.ends_with(',') {
                    // The entry had no trailing comma (it was the last one).
                    let rest = lines[i][code.len()..].to_string();
                    lines[i] = format!("{code},{rest}");
                }
                if !lines[i].ends_with('\n') {
                    lines[i].push('\n');
                }
                i + 1
            }
            None => usize::from(lines.first().is_some_and(|l| l.trim().is_empty())),
        };
        lines.insert(at, line);
        lines.concat()
    } else {
        // All on one line: `members = ["a", "b"]`.
        let kept = array.trim_end().trim_end_matches(',');
        if kept.trim().is_empty() {
            format!("\"{member}\"")
        } else {
            format!("{kept}, \"{member}\"")
        }
    };
    Ok(format!(
        "{}{}{}",
        &manifest[..inside.start],
        edited,
        &manifest[inside.end..]
    ))
}

#[cfg(test)]
mod tests {
    use super::{add_member, member_list};

    const ROOT: &str = "\
[workspace]
resolver = \"2\"
members = [
    \"engine/mochi\",
    \"rules/scalar\",
    \"rules/ndarray\", # arrays
    \"bot\",
]

[workspace.package]
members = \"not this one\"
";

    #[test]
    fn lists_the_members() {
        assert_eq!(
            member_list(ROOT).unwrap(),
            ["engine/mochi", "rules/scalar", "rules/ndarray", "bot"]
        );
    }

    #[test]
    fn adds_after_the_last_rule_crate_and_keeps_everything_else() {
        let edited = add_member(ROOT, "rules/special").unwrap();
        assert_eq!(
            edited,
            ROOT.replace(
                "    \"rules/ndarray\", # arrays\n",
                "    \"rules/ndarray\", # arrays\n    \"rules/special\",\n"
            )
        );
        assert_eq!(
            member_list(&edited).unwrap(),
            [
                "engine/mochi",
                "rules/scalar",
                "rules/ndarray",
                "rules/special",
                "bot"
            ]
        );
    }

    #[test]
    fn adds_at_the_end_without_rule_crates_and_adds_a_missing_comma() {
        let root = "[workspace]\nmembers = [\n    \"engine/mochi\",\n    \"bot\"\n]\n";
        let edited = add_member(root, "rules/special").unwrap();
        assert_eq!(
            edited,
            "[workspace]\nmembers = [\n    \"engine/mochi\",\n    \"bot\",\n    \"rules/special\",\n]\n"
        );
    }

    #[test]
    fn adds_to_a_one_line_array() {
        let root = "[workspace]\nmembers = [\"engine/mochi\", \"bot\"]\n";
        assert_eq!(
            add_member(root, "rules/x").unwrap(),
            "[workspace]\nmembers = [\"engine/mochi\", \"bot\", \"rules/x\"]\n"
        );
        let empty = "[workspace]\nmembers = []\n";
        assert_eq!(
            add_member(empty, "rules/x").unwrap(),
            "[workspace]\nmembers = [\"rules/x\"]\n"
        );
    }

    #[test]
    fn refuses_a_duplicate_and_a_manifest_without_members() {
        assert!(add_member(ROOT, "rules/scalar")
            .unwrap_err()
            .contains("already a workspace member"));
        let err = add_member("[package]\nname = \"x\"\n", "rules/x").unwrap_err();
        assert!(err.contains("no `members = [ … ]` array"), "{err}");
    }
}
