//! The repository's own documents hold together: every relative link in README.md and
//! docs/**.md reaches a file inside the repository (and, into a Markdown file, a heading it
//! has), so a clone shows no broken link; and the interface reference lists every error
//! code the service answers with. No server is started.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The repository's root (this package's manifest folder).
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every Markdown file under docs/.
fn documents() -> Vec<PathBuf> {
    let mut found = vec![root().join("README.md")];
    let mut folders = vec![root().join("docs")];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).expect("docs/ is readable") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// The targets of a Markdown text's inline links and images, `[text](target)`, outside code
/// (fenced blocks and `code spans`).
fn link_targets(text: &str) -> Vec<String> {
    let mut targets = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // Code spans hold no links: drop every other backtick-delimited stretch.
        let prose: String = line
            .split('`')
            .enumerate()
            .filter(|(i, _)| i % 2 == 0)
            .map(|(_, part)| part)
            .collect::<Vec<_>>()
            .join(" ");
        let mut rest = prose.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            let target = after[..end].split_whitespace().next().unwrap_or("");
            targets.push(target.to_owned());
            rest = &after[end..];
        }
    }
    targets
}

/// A heading's anchor as GitHub makes it: lower case, spaces to hyphens, and every
/// character but letters, digits, `-` and `_` dropped.
fn anchor_of(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a Markdown file's headings (outside fenced code).
fn anchors(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            found.insert(anchor_of(line.trim_start_matches('#')));
        }
    }
    found
}

/// What is wrong with one link of `from`, if anything.
fn broken(from: &Path, target: &str) -> Option<String> {
    if target.contains("://") || target.starts_with("mailto:") {
        return None;
    }
    let (file, anchor) = match target.split_once('#') {
        Some((file, anchor)) => (file, Some(anchor)),
        None => (target, None),
    };
    let path = match file {
        "" => from.to_path_buf(),
        file => from.parent().expect("a folder").join(file),
    };
    let Ok(resolved) = path.canonicalize() else {
        return Some(format!("{target}: no such file"));
    };
    let root = root().canonicalize().expect("the root");
    if !resolved.starts_with(&root) {
        return Some(format!("{target}: outside the repository"));
    }
    match anchor {
        Some(anchor) if resolved.extension().is_some_and(|e| e == "md") => {
            let text = std::fs::read_to_string(&resolved).expect("a Markdown file");
            (!anchors(&text).contains(anchor)).then(|| format!("{target}: no such heading"))
        }
        _ => None,
    }
}

#[test]
fn every_link_in_the_readme_and_docs_reaches_a_file_in_the_repository() {
    let documents = documents();
    assert!(documents.len() > 3, "docs/ holds the interface reference");
    let mut problems = Vec::new();
    for document in &documents {
        let text = std::fs::read_to_string(document).expect("a document");
        for target in link_targets(&text) {
            if let Some(problem) = broken(document, &target) {
                let name = document.strip_prefix(root()).unwrap_or(document);
                problems.push(format!("{}: {problem}", name.display()));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "broken links:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_interface_reference_lists_every_error_code() {
    let path = root().join("docs/interface/errors-and-limits.md");
    let text = std::fs::read_to_string(&path).expect("the errors reference");
    let missing: Vec<&str> = workboard::http::error::ErrorCode::TABLE
        .iter()
        .map(|(code, _, _)| code.as_str())
        .filter(|code| !text.contains(&format!("| `{code}` |")))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/interface/errors-and-limits.md lacks the codes {missing:?}"
    );
}

#[test]
fn links_are_read_and_judged_as_a_reader_would_follow_them() {
    let text =
        "[a](b.md) `[not](code.md)` ![img](c.png#x) [web](https://x.org)\n```\n[no](d.md)\n```";
    assert_eq!(link_targets(text), ["b.md", "c.png#x", "https://x.org"]);
    assert_eq!(anchor_of(" 3. The change socket"), "3-the-change-socket");
    assert_eq!(anchor_of("HEAD"), "head");
    let readme = root().join("README.md");
    assert!(broken(&readme, "docs/architecture.md").is_none());
    assert!(broken(&readme, "../shared/spec/contract.md").is_some());
    assert!(broken(&readme, "docs/nothing.md").is_some());
}
