//! Context operations that move the workspace in and out of a `.GCC/` directory.

use std::path::Path;

use schemars::JsonSchema;
use serde::Deserialize;

use super::in_workspace;
use crate::error::Result;
use crate::ops::{Effect, Env, Operation};
use crate::workspace::gcc::GccReport;

/// Write the workspace as a `.GCC/` directory.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CtxExport {
    /// The directory (e.g. .GCC).
    pub dir: String,
}

impl Operation for CtxExport {
    const NAME: &'static str = "ctx_export";
    const TITLE: &'static str = "Context: export .GCC";
    const DESCRIPTION: &'static str = "Write the context workspace in the .GCC/ layout \
        (main.md, branches/NAME/{commit.md, log.md, metadata.yaml}).";
    const EFFECT: Effect = Effect::Write { idempotent: true };
    type Output = GccReport;

    fn run(self, env: &mut Env<'_>) -> Result<GccReport> {
        Ok(in_workspace(env, |ws, _| ws.export_gcc(Path::new(&self.dir)))?.0)
    }
}

/// Read a `.GCC/` directory into context branches.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CtxImport {
    /// The directory (e.g. .GCC).
    pub dir: String,
    /// Replace branches that exist.
    #[serde(default)]
    pub force: bool,
}

impl Operation for CtxImport {
    const NAME: &'static str = "ctx_import";
    const TITLE: &'static str = "Context: import .GCC";
    const DESCRIPTION: &'static str = "Read a .GCC/ directory into context branches (one \
        commit per branch); existing branches are refused unless force.";
    const EFFECT: Effect = Effect::Write { idempotent: false };
    type Output = GccReport;

    fn run(self, env: &mut Env<'_>) -> Result<GccReport> {
        let (report, secrets) = in_workspace(env, |ws, w| {
            ws.import_gcc(Path::new(&self.dir), self.force, w)
        })?;
        for s in secrets {
            env.warn(format!("secret scanner: {}", s.describe()));
        }
        Ok(report)
    }
}
