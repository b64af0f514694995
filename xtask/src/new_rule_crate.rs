//! `new-rule-crate <name>`: checks the name, then writes the crate, its design doc and
//! the workspace member entry, or nothing at all.

use std::path::{Path, PathBuf};

use crate::templates::{self, Names};
use crate::workspace;

/// Short names that a rule crate may not take: the engine's own crates and the
/// standard rule crates (`mochi-rules-core` would read as part of `mochi-core`).
const RESERVED: [&str; 7] = [
    "core", "macros", "engine", "scalar", "ndarray", "linalg", "stats",
];

/// Longest accepted short name; package names stay readable and well under the
/// registry's limit of 64 characters.
const MAX_LEN: usize = 40;

/// What was created.
#[derive(Debug)]
pub struct Created {
    package: String,
    name: String,
    files: Vec<String>,
}

impl Created {
    /// What to tell the contributor: the files and the next commands.
    pub fn summary(&self) -> String {
        let mut out = format!(
            "created {} in rules/{}/ and added \"rules/{}\" to the workspace members:\n",
            self.package, self.name, self.name
        );
        for f in &self.files {
            out.push_str(&format!("  {f}\n"));
        }
        out.push_str(&format!(
            "next:\n  cargo test -p {}\n  cargo clippy -p {} --all-targets -- -D warnings\n\
             then replace or extend the softplus example, fill in design-docs/rules-{}.md\n\
             and list it in design-docs/README.md (see CONTRIBUTING.md).\n",
            self.package, self.package, self.name
        ));
        out
    }
}

/// Checks that `name` can name a new rule crate: the reason it cannot otherwise.
pub fn check_name(name: &str) -> Result<(), String> {
    let rule = "a rule-crate name is lowercase letters, digits, `-` and `_`, starts with a \
                letter and ends with a letter or digit, e.g. `special` or `special-fns`";
    let refuse = |why: &str| {
        Err(format!(
            "cannot use `{name}` as a rule-crate name: {why}; {rule}"
        ))
    };
    if name.is_empty() {
        return Err(format!("the rule-crate name is empty; {rule}"));
    }
    if name.len() > MAX_LEN {
        return refuse(&format!(
            "it is {} characters long, at most {MAX_LEN} are accepted",
            name.len()
        ));
    }
    if let Some(c) = name.chars().find(|c| c.is_ascii_uppercase()) {
        return refuse(&format!(
            "it contains the uppercase letter `{c}` (write `{}`)",
            name.to_ascii_lowercase()
        ));
    }
    if let Some(c) = name
        .chars()
        .find(|&c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_'))
    {
        return refuse(&format!("it contains {c:?}"));
    }
    if !name.starts_with(|c: char| c.is_ascii_lowercase()) {
        return refuse("it does not start with a letter");
    }
    if name.ends_with(['-', '_']) {
        return refuse("it ends with a separator");
    }
    if RESERVED.contains(&name) {
        return refuse(&format!(
            "`{name}` is reserved for mochi's own crates ({})",
            RESERVED.join(", ")
        ));
    }
    Ok(())
}

/// Refuses a name that an existing crate, folder or design doc already uses. Package
/// names that differ only in `-` versus `_` name the same Rust crate, so they clash too.
fn check_free(root: &Path, name: &str, package: &str, members: &[String]) -> Result<(), String> {
    let taken = |what: String| {
        Err(format!(
            "cannot create rule crate `{name}`: {what}; choose another name, or extend that crate"
        ))
    };
    let folder = root.join("rules").join(name);
    if folder.exists() {
        return taken(format!("{} already exists", display(root, &folder)));
    }
    let doc = root.join("design-docs").join(format!("rules-{name}.md"));
    if doc.exists() {
        return taken(format!("{} already exists", display(root, &doc)));
    }
    let same = |other: &str| other.replace('_', "-") == package.replace('_', "-");
    let mut manifests: Vec<PathBuf> = members
        .iter()
        .map(|m| root.join(m).join("Cargo.toml"))
        .collect();
    if let Ok(entries) = std::fs::read_dir(root.join("rules")) {
        manifests.extend(
            entries
                .filter_map(Result::ok)
                .map(|e| e.path().join("Cargo.toml")),
        );
    }
    for manifest in manifests {
        let Ok(text) = std::fs::read_to_string(&manifest) else {
            continue;
        };
        if let Some(other) = package_name(&text).filter(|other| same(other)) {
            return taken(format!(
                "{} already defines package `{other}`",
                display(root, &manifest)
            ));
        }
    }
    Ok(())
}

/// The `name` of a manifest's `[package]` table.
fn package_name(manifest: &str) -> Option<String> {
    let package = manifest
        .split("\n[")
        .find(|t| t.trim_start_matches('[').starts_with("package]"))?;
    package.lines().find_map(|l| {
        let (key, value) = l.split_once('=')?;
        (key.trim() == "name").then(|| value.trim().trim_matches('"').to_string())
    })
}

fn display(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// Creates the rule crate `name` in the workspace at `root`; `date` is today
/// (`YYYY-MM-DD`). On any error nothing stays written.
pub fn create(root: &Path, name: &str, date: String) -> Result<Created, String> {
    check_name(name)?;
    let manifest_path = root.join("Cargo.toml");
    let manifest = std::fs::read_to_string(&manifest_path).map_err(|e| {
        format!(
            "cannot read {}: {e}; is {} the workspace root?",
            manifest_path.display(),
            root.display()
        )
    })?;
    let members = workspace::member_list(&manifest)?;
    let package = format!("mochi-rules-{name}");
    check_free(root, name, &package, &members)?;
    let member = format!("rules/{name}");
    let edited_manifest = workspace::add_member(&manifest, &member)?;
    let krate = package.replace('-', "_");
    let files = templates::files(&Names {
        name,
        package: &package,
        krate: &krate,
        date: &date,
    });

    let crate_dir = root.join(&member);
    let doc_path = root.join("design-docs").join(format!("rules-{name}.md"));
    let write_all = || -> Result<(), String> {
        for f in &files {
            let path = root.join(&f.path);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
            }
            std::fs::write(&path, &f.text)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
        std::fs::write(&manifest_path, &edited_manifest)
            .map_err(|e| format!("cannot write {}: {e}", manifest_path.display()))
    };
    if let Err(e) = write_all() {
        // Undo: the crate folder and the doc did not exist before (checked above), and
        // the manifest is written last, so only these can be partly written.
        let _ = std::fs::remove_dir_all(&crate_dir);
        let _ = std::fs::remove_file(&doc_path);
        return Err(format!("{e}; nothing was kept"));
    }
    let mut written: Vec<String> = files.into_iter().map(|f| f.path).collect();
    written.push("Cargo.toml (workspace members)".to_string());
    Ok(Created {
        package,
        name: name.to_string(),
        files: written,
    })
}

#[cfg(test)]
mod tests {
    use super::{check_name, package_name};

    #[test]
    fn accepts_lowercase_names_with_digits_and_separators() {
        for name in ["special", "special-fns", "bessel_j", "fft2", "a"] {
            assert_eq!(check_name(name), Ok(()), "{name}");
        }
    }

    #[test]
    fn refuses_malformed_and_reserved_names_saying_why() {
        let cases = [
            ("", "is empty"),
            ("Special", "uppercase letter `S` (write `special`)"),
            ("2d", "does not start with a letter"),
            ("-x", "does not start with a letter"),
            ("special fns", "contains ' '"),
            ("spécial", "contains 'é'"),
            ("rules/x", "contains '/'"),
            ("x-", "ends with a separator"),
            ("core", "reserved"),
            ("scalar", "reserved"),
        ];
        for (name, why) in cases {
            let err = check_name(name).unwrap_err();
            assert!(err.contains(why), "{name:?}: {err}");
            assert!(err.contains("e.g. `special`"), "{name:?}: {err}");
        }
        assert!(check_name(&"x".repeat(41))
            .unwrap_err()
            .contains("41 characters"));
    }

    #[test]
    fn reads_the_package_name() {
        let manifest = "[package]\nname = \"mochi-rules-x\"\nversion = \"1\"\n\n[dependencies]\nname = \"no\"\n";
        assert_eq!(package_name(manifest).as_deref(), Some("mochi-rules-x"));
        assert_eq!(package_name("[workspace]\nmembers = []\n"), None);
    }
}
