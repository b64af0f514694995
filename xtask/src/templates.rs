//! The files of a new rule crate, as templates under `xtask/templates/` with
//! `{{name}}`, `{{package}}`, `{{crate}}` and `{{date}}` placeholders.

/// A file to write: its path relative to the workspace root and its text.
pub struct File {
    /// Relative path, `/`-separated.
    pub path: String,
    /// Contents.
    pub text: String,
}

/// What the placeholders stand for.
pub struct Names<'a> {
    /// The crate's short name, e.g. `special-fns` (the folder under `rules/`).
    pub name: &'a str,
    /// The package, `mochi-rules-special-fns`.
    pub package: &'a str,
    /// The crate as Rust code names it, `mochi_rules_special_fns`.
    pub krate: &'a str,
    /// Today, `YYYY-MM-DD`, for `last-reviewed`.
    pub date: &'a str,
}

/// (path under `rules/<name>/`, template) of the crate's files.
const CRATE_FILES: [(&str, &str); 6] = [
    (
        "Cargo.toml",
        include_str!("../templates/rule-crate/Cargo.toml.tmpl"),
    ),
    (
        "README.md",
        include_str!("../templates/rule-crate/README.md.tmpl"),
    ),
    (
        "src/lib.rs",
        include_str!("../templates/rule-crate/src/lib.rs.tmpl"),
    ),
    (
        "src/rules.rs",
        include_str!("../templates/rule-crate/src/rules.rs.tmpl"),
    ),
    (
        "src/softplus.rs",
        include_str!("../templates/rule-crate/src/softplus.rs.tmpl"),
    ),
    (
        "src/test_support.rs",
        include_str!("../templates/rule-crate/src/test_support.rs.tmpl"),
    ),
];

const DESIGN_DOC: &str = include_str!("../templates/design-doc.md.tmpl");

/// Every file of the new crate and its design doc, filled in.
pub fn files(names: &Names) -> Vec<File> {
    let fill = |template: &str| {
        template
            .replace("{{name}}", names.name)
            .replace("{{package}}", names.package)
            .replace("{{crate}}", names.krate)
            .replace("{{date}}", names.date)
    };
    let mut files: Vec<File> = CRATE_FILES
        .iter()
        .map(|(path, template)| File {
            path: format!("rules/{}/{path}", names.name),
            text: fill(template),
        })
        .collect();
    files.push(File {
        path: format!("design-docs/rules-{}.md", names.name),
        text: fill(DESIGN_DOC),
    });
    files
}

#[cfg(test)]
mod tests {
    use super::{files, Names};

    #[test]
    fn every_placeholder_is_filled() {
        let names = Names {
            name: "special-fns",
            package: "mochi-rules-special-fns",
            krate: "mochi_rules_special_fns",
            date: "2026-11-29",
        };
        let files = files(&names);
        assert!(files
            .iter()
            .any(|f| f.path == "rules/special-fns/src/softplus.rs"));
        assert!(files
            .iter()
            .any(|f| f.path == "design-docs/rules-special-fns.md"));
        for f in &files {
            assert!(!f.text.contains("{{"), "{} keeps a placeholder", f.path);
        }
        let doc = files
            .iter()
            .find(|f| f.path.ends_with(".md") && f.path.starts_with("design-docs"))
            .unwrap();
        assert!(doc
            .text
            .starts_with("---\nlast-reviewed: 2026-11-29\ncovers: [rules/special-fns/src/**]\n"));
    }
}
