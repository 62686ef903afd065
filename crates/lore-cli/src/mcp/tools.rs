//! The operations offered to agents as MCP tools, and how a call becomes a result.
//!
//! Not offered: import/export and the `.GCC/` transfer (they name files on the server's
//! machine, and an HTTP client may be elsewhere), accepting or rejecting capture suggestions
//! (a person reviews what agents suggested), eval and bench (long measurements for people),
//! reasoning bundles (files on the server's machine, like import/export), team stores and moving
//! memories between scopes (they change this machine's stores and the user's configuration: a
//! person decides what leaves a scope).

use std::sync::Arc;

use lore::ops::{
    self, Effect, Env, Operation, ctx, memory, review, sequential, store, sync, thoughts,
};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations};
use serde_json::Value;

/// What one call returned: the response as JSON.
pub struct Reply {
    value: Value,
}

impl Reply {
    /// The tool result: structured content, with the same response as the first text block —
    /// plain JSON that parses back to the structured content, for clients that read only text
    /// (an operation whose response is a rendering carries it as a field, e.g. `text`) — and
    /// warnings, if any, in a second block.
    pub fn into_result(self, warnings: &[String]) -> CallToolResult {
        let text = lore::agent_text::json_text(&self.value);
        let mut content = vec![ContentBlock::text(text)];
        if !warnings.is_empty() {
            let lines: Vec<String> = warnings
                .iter()
                .map(|w| {
                    let w = lore::secrets::scrubbed_message(w);
                    format!("warning: {}", lore::agent_text::neutralize(&w))
                })
                .collect();
            content.push(ContentBlock::text(lines.join("\n")));
        }
        let mut result = CallToolResult::structured(self.value);
        result.content = content;
        result
    }
}

fn tool<O: Operation>() -> Tool {
    let annotations = ToolAnnotations::with_title(O::TITLE).open_world(false);
    let annotations = match O::EFFECT {
        Effect::ReadOnly => annotations.read_only(true),
        Effect::Write { idempotent } => annotations
            .read_only(false)
            .destructive(false)
            .idempotent(idempotent),
        Effect::Destructive { idempotent } => annotations
            .read_only(false)
            .destructive(true)
            .idempotent(idempotent),
    };
    Tool::new(O::NAME, O::DESCRIPTION, Arc::new(JsonObject::new()))
        .with_input_schema::<O>()
        .with_output_schema::<O::Output>()
        .with_title(O::TITLE)
        .with_annotations(annotations)
}

fn reply<O: Operation>(env: &mut Env<'_>, args: Value) -> lore::Result<Reply> {
    let out = ops::run_json::<O>(env, args)?;
    let value = serde_json::to_value(&out).map_err(|e| lore::Error::Parse {
        context: "encoding the result".into(),
        message: e.to_string(),
    })?;
    Ok(Reply { value })
}

macro_rules! catalog {
    ($($op:ty),* $(,)?) => {
        /// Every tool, in the order agents see them.
        pub fn all() -> Vec<Tool> {
            vec![$(tool::<$op>()),*]
        }

        /// Whether a tool of that name exists.
        pub fn exists(name: &str) -> bool {
            [$(<$op as Operation>::NAME),*].contains(&name)
        }

        /// Runs the tool `name` (`None`: no such tool).
        pub fn call(name: &str, env: &mut Env<'_>, args: Value) -> Option<lore::Result<Reply>> {
            $(
                if name == <$op as Operation>::NAME {
                    return Some(reply::<$op>(env, args));
                }
            )*
            None
        }
    };
}

catalog!(
    memory::Context,
    memory::Recall,
    memory::Remember,
    memory::Show,
    memory::List,
    memory::History,
    memory::Update,
    memory::Supersede,
    memory::Forget,
    store::Init,
    store::Status,
    store::Verify,
    store::Scan,
    store::Namespaces,
    store::NamespaceAdd,
    store::Reindex,
    review::ReviewList,
    sync::Sync,
    sync::Conflicts,
    sync::Resolve,
    ctx::CtxInit,
    ctx::CtxBranch,
    ctx::CtxSwitch,
    ctx::CtxLog,
    ctx::CtxStatus,
    ctx::CtxCommit,
    ctx::CtxMerge,
    ctx::CtxShow,
    ctx::CtxMetadataGet,
    ctx::CtxMetadataSet,
    ctx::CtxRead,
    ctx::CtxUpdate,
    ctx::CtxHistory,
    ctx::CtxSnapshot,
    ctx::CtxRecall,
    sequential::SequentialThinking,
    thoughts::ThinkAdd,
    thoughts::ThinkScore,
    thoughts::ThinkOutcome,
    thoughts::ThinkDone,
    thoughts::ThinkSearch,
    thoughts::ThinkReplay,
    thoughts::ThinkDiff,
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_has_an_object_schema_and_a_unique_name() {
        let tools = all();
        let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), tools.len());
        for t in &tools {
            assert_eq!(
                t.input_schema.get("type").and_then(|v| v.as_str()),
                Some("object"),
                "{}",
                t.name
            );
            assert!(exists(&t.name));
            let output = t.output_schema.as_ref().expect("an output schema");
            assert!(
                output.get("type").and_then(|v| v.as_str()) == Some("object")
                    || output.contains_key("anyOf")
                    || output.contains_key("oneOf"),
                "{}: {output:?}",
                t.name
            );
        }
        assert!(!exists("import"));
    }
}
