//! A central bare repository and clones of it, written by real `lore` processes: the network
//! the sync tests run on.

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use serde_json::Value;

use super::{lore_command, stdout_of};

/// A central bare repository and clones of it, all in one temp dir, with one hermetic home.
pub struct Net {
    pub dir: tempfile::TempDir,
}

impl Net {
    pub fn new() -> Net {
        let net = Net {
            dir: tempfile::tempdir().unwrap(),
        };
        std::fs::create_dir_all(net.home()).unwrap();
        net.git(
            net.dir.path(),
            &["init", "-q", "--bare", "-b", "main", "central.git"],
        );
        net
    }

    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    pub fn central(&self) -> PathBuf {
        self.dir.path().join("central.git")
    }

    /// A clone of `url` (default: the central repository) named `name`.
    pub fn clone_from(&self, url: &str, name: &str) -> PathBuf {
        self.git(self.dir.path(), &["clone", "-q", url, name]);
        let path = self.dir.path().join(name);
        self.git(&path, &["config", "user.name", name]);
        self.git(
            &path,
            &["config", "user.email", &format!("{name}@example.com")],
        );
        path
    }

    pub fn clone(&self, name: &str) -> PathBuf {
        let url = self.central().display().to_string();
        self.clone_from(&url, name)
    }

    pub fn git(&self, dir: &Path, args: &[&str]) -> String {
        lore_testutils::git_in(dir, &self.home(), args)
    }

    pub fn lore(&self, dir: &Path, args: &[&str]) -> Output {
        lore_command(dir, &self.home(), args)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    pub fn ok(&self, dir: &Path, args: &[&str]) -> String {
        let out = self.lore(dir, args);
        // With --json the error is on stdout: show it.
        let what = format!(
            "lore {args:?} ({})",
            String::from_utf8_lossy(&out.stdout).trim()
        );
        stdout_of(out, &what)
    }

    pub fn json(&self, dir: &Path, args: &[&str]) -> Value {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        serde_json::from_str(&self.ok(dir, &all)).unwrap()
    }

    pub fn remember(&self, dir: &Path, summary: &str, extra: &[&str]) -> String {
        let mut args = vec!["remember", summary];
        args.extend_from_slice(extra);
        self.json(dir, &args)["memory"]["id"]
            .as_str()
            .unwrap()
            .to_string()
    }

    pub fn sync(&self, dir: &Path) -> Value {
        self.json(dir, &["sync"])
    }

    /// Every memory id in a clone, sorted.
    pub fn ids(&self, dir: &Path) -> Vec<String> {
        let list = self.json(dir, &["list", "--limit", "100000"]);
        let mut ids: Vec<String> = list["memories"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["id"].as_str().unwrap().to_string())
            .collect();
        ids.sort();
        ids
    }

    pub fn tip(&self, dir: &Path) -> String {
        self.git(dir, &["rev-parse", "refs/lore/memory"])
    }

    pub fn conflicts(&self, dir: &Path) -> Vec<Value> {
        self.json(dir, &["conflicts"])["conflicts"]
            .as_array()
            .unwrap()
            .clone()
    }
}
