//! A test that keeps a crate's `src/` layered: no module imports, directly or through
//! others, a module that imports it back. It reads the source tree, takes every path a file
//! names (`use`, and `crate::`, `super::`, `self::` or a child module's name in code, test
//! modules included) and fails naming the first circle it finds. The binary runs it over
//! `src/`; `write-model` and `domain` include this file (`#[path]`) to run it over theirs.
//!
//! A node is a file (`http/mod.rs` is `http`). A `pub use` re-export is a name, not a use: a
//! path through it counts against the module that defines the item, and the line itself is
//! no edge (so a `mod.rs` that re-exports its children does not import them).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

type Module = Vec<String>;

/// The source without comments, string and char literals, so what is left is code.
fn code_of(src: &str) -> String {
    let b = src.as_bytes();
    let (mut out, mut i) = (String::with_capacity(src.len()), 0);
    let word_before = |i: usize| i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
    while i < b.len() {
        if src[i..].starts_with("//") {
            i = src[i..].find('\n').map_or(b.len(), |j| i + j);
        } else if src[i..].starts_with("/*") {
            i = src[i + 2..].find("*/").map_or(b.len(), |j| i + 2 + j + 2);
        } else if b[i] == b'r' && !word_before(i) && raw_string_start(&b[i + 1..]).is_some() {
            let hashes = raw_string_start(&b[i + 1..]).unwrap_or(0);
            let end = format!("\"{}", "#".repeat(hashes));
            let from = i + 2 + hashes;
            i = src[from..]
                .find(&end)
                .map_or(b.len(), |j| from + j + end.len());
            out.push_str("\"\"");
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if b[i] == b'\'' && char_literal(&src[i..]).is_some() {
            i += char_literal(&src[i..]).unwrap_or(1);
            out.push_str("' '");
        } else {
            let c = src[i..].chars().next().unwrap_or(' ');
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// After an `r`: `#`* then `"` opens a raw string; how many `#`.
fn raw_string_start(b: &[u8]) -> Option<usize> {
    let hashes = b.iter().take_while(|&&c| c == b'#').count();
    (b.get(hashes) == Some(&b'"')).then_some(hashes)
}

/// The length of a char literal at the start of `s` (`'a'`, `'\n'`, `'\u{1F600}'`), or
/// `None` for a lifetime.
fn char_literal(s: &str) -> Option<usize> {
    let mut chars = s.char_indices().skip(1);
    let (_, c) = chars.next()?;
    if c == '\\' {
        // The escaped character, then up to the closing quote (`'\''`, `'\u{1F600}'`).
        return s.get(3..)?.find('\'').map(|j| 3 + j + 1);
    }
    let (j, close) = chars.next()?;
    (close == '\'').then_some(j + 1)
}

/// `a::{b, c::{d, e}}` as `a::b`, `a::c::d`, `a::c::e`.
fn expand(tree: &str) -> Vec<String> {
    let tree: String = tree.split_whitespace().collect::<Vec<_>>().join(" ");
    let Some(open) = tree.find('{') else {
        return vec![tree];
    };
    let (head, body) = (&tree[..open], &tree[open + 1..tree.len() - 1]);
    let (mut parts, mut depth, mut start) = (Vec::new(), 0, 0);
    for (i, c) in body.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&body[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&body[start..]);
    parts
        .into_iter()
        .filter(|p| !p.trim().is_empty())
        .flat_map(|p| expand(&format!("{head}{}", p.trim())))
        .collect()
}

/// A `use` statement: whether it is a re-export (`pub use`, `pub(crate) use`), its tree,
/// and where the statement ends in the code.
struct Use {
    public: bool,
    tree: String,
    end: usize,
}

fn uses(code: &str) -> Vec<Use> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = find_word(&code[from..], "use").map(|at| from + at) {
        let last = code[..at].split_whitespace().next_back().unwrap_or("");
        let public = last == "pub" || last.starts_with("pub(");
        let end = code[at..].find(';').map_or(code.len(), |j| at + j + 1);
        let tree = code[at + 3..end].trim_end_matches(';').trim().to_owned();
        found.push(Use { public, tree, end });
        from = end;
    }
    found
}

/// `code` without its re-exports, the `pub use` statements.
fn without_re_exports(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut from = 0;
    for u in uses(code).into_iter().filter(|u| u.public) {
        let start = code[..u.end].rfind("pub").unwrap_or(from).max(from);
        out.push_str(&code[from..start]);
        from = u.end;
    }
    out.push_str(&code[from..]);
    out
}

/// Where `word` stands alone in `s`.
fn find_word(s: &str, word: &str) -> Option<usize> {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    s.match_indices(word).map(|(i, _)| i).find(|&i| {
        !s[..i].chars().next_back().is_some_and(ident)
            && !s[i + word.len()..].chars().next().is_some_and(ident)
    })
}

/// Paths in code that start with `crate`, `super`, `self` or one of `children`.
fn paths(code: &str, children: &BTreeSet<String>) -> Vec<String> {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut found = Vec::new();
    let mut i = 0;
    while i < code.len() {
        let start_ok = !code[..i]
            .chars()
            .next_back()
            .is_some_and(|c| ident(c) || c == ':');
        let word_len = code[i..]
            .find(|c: char| !ident(c))
            .unwrap_or(code.len() - i);
        if word_len == 0 {
            i += code[i..].chars().next().map_or(1, char::len_utf8);
            continue;
        }
        let word = &code[i..i + word_len];
        if start_ok
            && (matches!(word, "crate" | "super" | "self") || children.contains(word))
            && code[i + word_len..].starts_with("::")
        {
            let mut end = i + word_len;
            while code[end..].starts_with("::") {
                let seg = code[end + 2..]
                    .find(|c: char| !ident(c))
                    .unwrap_or(code.len() - end - 2);
                if seg == 0 {
                    break;
                }
                end += 2 + seg;
            }
            // `super::{a, b}` and `crate::a::{B, C}` are `use` trees, read whole by `uses`:
            // the head is no use of `a` (`B` may be a name `a` re-exports).
            if end > i + word_len && !code[end..].starts_with("::{") {
                found.push(code[i..end].to_owned());
            }
            i = end;
        } else {
            i += word_len;
        }
    }
    found
}

struct Tree {
    /// Each module's code, test modules included (their `super` made `self`).
    code: BTreeMap<Module, String>,
    /// (module, name) -> the absolute path a `pub use` (or `#[macro_export]`) gives it.
    names: BTreeMap<(Module, String), Module>,
}

impl Tree {
    fn new(files: BTreeMap<Module, String>) -> Tree {
        let mut code = BTreeMap::new();
        for (module, src) in files {
            let mut text = code_of(&src);
            if let Some(at) = text.find("#[cfg(test)]\nmod tests") {
                let tests = text[at..].replace("super::", "self::");
                text = format!("{}{tests}", &text[..at]);
            }
            code.insert(module, text);
        }
        let mut tree = Tree {
            code,
            names: BTreeMap::new(),
        };
        let mut names = BTreeMap::new();
        for (module, text) in &tree.code {
            for u in uses(text).into_iter().filter(|u| u.public) {
                for path in expand(&u.tree) {
                    let name = path.rsplit([':', ' ']).next().unwrap_or("").to_owned();
                    if let Some(to) = tree.absolute(module, &path) {
                        names.insert((module.clone(), name), to);
                    }
                }
            }
            let mut rest = text.as_str();
            while let Some(at) = rest.find("#[macro_export]") {
                rest = &rest[at..];
                if let Some(m) = rest.find("macro_rules!") {
                    let name: String = rest[m + 12..]
                        .trim_start()
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    let mut to = module.clone();
                    to.push(name.clone());
                    names.insert((Vec::new(), name), to);
                }
                rest = &rest[1..];
            }
        }
        tree.names = names;
        tree
    }

    fn children(&self, of: &Module) -> BTreeSet<String> {
        self.code
            .keys()
            .filter(|m| m.len() == of.len() + 1 && m.starts_with(of))
            .map(|m| m[of.len()].clone())
            .collect()
    }

    /// A path's segments from the crate root; `None` for another crate's.
    fn absolute(&self, from: &Module, path: &str) -> Option<Module> {
        let path = path.split(" as ").next().unwrap_or(path);
        let mut segs: Vec<String> = path
            .split("::")
            .map(str::trim)
            .filter(|s| !s.is_empty() && *s != "*")
            .map(str::to_owned)
            .collect();
        if segs.last().is_some_and(|s| s == "self") {
            segs.pop();
        }
        let first = segs.first()?.clone();
        Some(match first.as_str() {
            "crate" => segs[1..].to_vec(),
            "self" => [from.clone(), segs[1..].to_vec()].concat(),
            "super" => {
                let ups = segs.iter().take_while(|s| *s == "super").count();
                let base = &from[..from.len().saturating_sub(ups)];
                [base.to_vec(), segs[ups..].to_vec()].concat()
            }
            child if self.children(from).contains(child) => [from.clone(), segs].concat(),
            _ => return None,
        })
    }

    /// The file that defines what `path` names, through re-exports.
    fn module_of(&self, path: &[String], hops: usize) -> Option<Module> {
        (0..=path.len()).rev().find_map(|n| {
            let module = path[..n].to_vec();
            if !self.code.contains_key(&module) {
                return None;
            }
            match path.get(n) {
                Some(name) if hops < 8 => match self.names.get(&(module.clone(), name.clone())) {
                    Some(to) => {
                        self.module_of(&[to.clone(), path[n + 1..].to_vec()].concat(), hops + 1)
                    }
                    None => Some(module),
                },
                _ => Some(module),
            }
        })
    }

    fn edges(&self) -> BTreeMap<Module, BTreeSet<Module>> {
        let mut edges = BTreeMap::new();
        for (module, text) in &self.code {
            let code = without_re_exports(text);
            let mut named: Vec<String> = uses(&code)
                .into_iter()
                .flat_map(|u| expand(&u.tree))
                .collect();
            named.extend(paths(&code, &self.children(module)));
            let to: BTreeSet<Module> = named
                .iter()
                .filter_map(|p| self.absolute(module, p))
                .filter_map(|p| self.module_of(&p, 0))
                .filter(|m| m != module)
                .collect();
            edges.insert(module.clone(), to);
        }
        edges
    }

    /// A circle of imports, as the modules along it, if there is one.
    fn circle(&self) -> Option<Vec<Module>> {
        let edges = self.edges();
        let mut done = BTreeSet::new();
        for start in edges.keys() {
            let mut path = Vec::new();
            if let Some(c) = walk(start, &edges, &mut path, &mut done) {
                return Some(c);
            }
        }
        None
    }
}

fn walk(
    at: &Module,
    edges: &BTreeMap<Module, BTreeSet<Module>>,
    path: &mut Vec<Module>,
    done: &mut BTreeSet<Module>,
) -> Option<Vec<Module>> {
    if let Some(i) = path.iter().position(|m| m == at) {
        let mut circle = path[i..].to_vec();
        circle.push(at.clone());
        return Some(circle);
    }
    if done.contains(at) {
        return None;
    }
    path.push(at.clone());
    for next in edges.get(at).into_iter().flatten() {
        if let Some(c) = walk(next, edges, path, done) {
            return Some(c);
        }
    }
    path.pop();
    done.insert(at.clone());
    None
}

fn read_tree(root: &Path, dir: &Path, files: &mut BTreeMap<Module, String>) {
    for entry in std::fs::read_dir(dir).expect("the source folder").flatten() {
        let path = entry.path();
        if path.is_dir() {
            read_tree(root, &path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path
                .strip_prefix(root)
                .expect("under the root")
                .with_extension("");
            let mut module: Module = rel.iter().map(|s| s.to_string_lossy().into()).collect();
            match module.last().map(String::as_str) {
                Some("main") if module.len() == 1 => continue,
                Some("lib") if module.len() == 1 => module.clear(),
                Some("mod") => {
                    module.pop();
                }
                _ => {}
            }
            let text = std::fs::read_to_string(&path).expect("a source file");
            files.insert(module, text);
        }
    }
}

fn name(m: &Module) -> String {
    if m.is_empty() {
        "crate".into()
    } else {
        m.join("::")
    }
}

#[test]
fn no_module_of_the_crate_imports_one_that_imports_it_back() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = BTreeMap::new();
    read_tree(&root, &root, &mut files);
    let tree = Tree::new(files);
    let edges: usize = tree.edges().values().map(BTreeSet::len).sum();
    assert!(
        edges > tree.code.len(),
        "the reader finds the imports ({edges} among {} files)",
        tree.code.len()
    );
    if let Some(circle) = tree.circle() {
        let circle: Vec<String> = circle.iter().map(name).collect();
        panic!(
            "an import circle in {}'s src/: {}",
            env!("CARGO_PKG_NAME"),
            circle.join(" -> ")
        );
    }
}

#[test]
fn the_reader_sees_a_circle_through_uses_paths_children_and_re_exports() {
    let tree = |files: &[(&str, &str)]| {
        Tree::new(
            files
                .iter()
                .map(|(m, src)| {
                    let module = m.split("::").filter(|s| !s.is_empty()).map(Into::into);
                    (module.collect(), src.to_string())
                })
                .collect(),
        )
    };
    let circle = |t: Tree| t.circle().map(|c| c.iter().map(name).collect::<Vec<_>>());
    // A `use` one way, a path in code the other.
    let t = tree(&[
        ("", "mod a; mod b;"),
        ("a", "use crate::b::{B, c::{D}};"),
        ("b", "fn f() { crate::a::g() }"),
    ]);
    assert_eq!(circle(t), Some(vec!["a".into(), "b".into(), "a".into()]));
    // A parent's code naming a child that uses the parent's own item.
    let t = tree(&[
        ("h", "mod k; fn f() { k::g() } pub fn s() {}"),
        ("h::k", "use super::s;"),
    ]);
    assert!(circle(t).is_some());
    // Only re-exports from the parent, and names in comments and strings: no circle.
    let t = tree(&[
        (
            "h",
            "mod k; pub use k::g; pub fn s() {} // k::g\nconst T: &str = \"k::g\";",
        ),
        ("h::k", "use super::s; pub fn g() {}"),
    ]);
    assert_eq!(circle(t), None);
    // A path through a re-export counts against the module that defines the item.
    let t = tree(&[
        ("", "mod x; mod y; mod z;"),
        ("x", "pub use crate::y::Y;"),
        ("y", "fn f() { crate::z::g() }"),
        ("z", "use crate::x::Y;"),
    ]);
    assert_eq!(circle(t), Some(vec!["y".into(), "z".into(), "y".into()]));
    // A use tree through a parent's re-export names the child that defines the item, not
    // the parent: no circle.
    let t = tree(&[
        ("a", "mod b; mod c; pub use c::C; fn f() { b::g() }"),
        ("a::b", "use crate::a::{C}; pub fn g() {}"),
        ("a::c", "pub struct C;"),
    ]);
    assert_eq!(circle(t), None);
}
