//! The module graph of this crate has no cycle: each domain folder (and
//! each top-level file) may use others only in one direction. Checked from
//! the source's `crate::<module>` paths (comments aside), so a new cycle
//! fails here instead of waiting for a reviewer's eye.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The top-level modules and, for each, the top-level modules it uses.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut modules = BTreeMap::new();
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if name != "lib" && name != "layers" {
            modules.insert(name, path);
        }
    }
    let names: BTreeSet<String> = modules.keys().cloned().collect();
    modules
        .iter()
        .map(|(name, path)| {
            let mut uses = BTreeSet::new();
            for file in rust_files(path) {
                let text = std::fs::read_to_string(&file).unwrap();
                for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
                    for (i, _) in line.match_indices("crate::") {
                        let rest = &line[i + "crate::".len()..];
                        let used: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                        if used != *name && names.contains(&used) {
                            uses.insert(used);
                        }
                    }
                }
            }
            (name.clone(), uses)
        })
        .collect()
}

fn rust_files(path: &Path) -> Vec<std::path::PathBuf> {
    if path.is_file() {
        return vec![path.to_path_buf()];
    }
    let mut files = Vec::new();
    for entry in std::fs::read_dir(path).unwrap() {
        files.extend(rust_files(&entry.unwrap().path()));
    }
    files
}

/// A cycle through `from`, if there is one (depth-first search).
fn cycle(graph: &BTreeMap<String, BTreeSet<String>>, from: &str) -> Option<Vec<String>> {
    fn walk(graph: &BTreeMap<String, BTreeSet<String>>, path: &mut Vec<String>, start: &str) -> bool {
        let last = path.last().unwrap().clone();
        for next in graph.get(&last).into_iter().flatten() {
            if next == start {
                path.push(next.clone());
                return true;
            }
            if !path.contains(next) {
                path.push(next.clone());
                if walk(graph, path, start) {
                    return true;
                }
                path.pop();
            }
        }
        false
    }
    let mut path = vec![from.to_owned()];
    walk(graph, &mut path, from).then_some(path)
}

#[test]
fn no_module_of_the_crate_is_in_a_cycle() {
    let graph = graph();
    assert!(graph.len() >= 10 && graph["payments"].contains("orders"), "the graph was not read: {graph:?}");
    let cycles: Vec<String> = graph.keys().filter_map(|m| cycle(&graph, m)).map(|c| c.join(" -> ")).collect();
    assert!(cycles.is_empty(), "module cycles:\n{}", cycles.join("\n"));
}

#[test]
fn the_check_finds_a_cycle_when_there_is_one() {
    let mut graph = graph();
    graph.get_mut("kv").unwrap().insert("payments".into());
    assert!(cycle(&graph, "kv").is_some());
}
