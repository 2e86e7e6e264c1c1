//! `ResultTruncateHook`: spills oversized tool results to a file and hands the model a preview.
//!
//! On `post_tool_use`, the result's text (a string result as is, any other JSON value
//! serialized compactly) is measured in UTF-8 bytes. Over `max_bytes` (default 16384) it is
//! written in full to `spill_dir` (default `<temp dir>/tollgate-spill`) by
//! [`tollgate_core::spill::spill`] and the result becomes the preview, a JSON string of at most
//! `max_bytes` bytes naming the file; a `result_spilled` side effect records the file and the
//! sizes. At or under the limit the result is left alone.

use std::path::PathBuf;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Value, json};
use tollgate_core::spill::{SpillConfig, Spilled, spill};
use tollgate_core::{BoxFuture, Hook, HookContext, HookError};
use tollgate_protocol::{EventData, HookKind, Outcome, SideEffect};

use super::{ClassError, ClassInstance, parse_params};

/// The class name.
pub(super) const CLASS: &str = "ResultTruncateHook";

/// Smallest `max_bytes`: the preview must fit the line that names the spill file.
const MIN_MAX_BYTES: usize = 512;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct Params {
    max_bytes: usize,
    spill_dir: PathBuf,
}

impl Default for Params {
    fn default() -> Self {
        Self {
            max_bytes: 16 * 1024,
            spill_dir: std::env::temp_dir().join("tollgate-spill"),
        }
    }
}

/// Builds the class from its params.
pub(super) fn instantiate(params: &Value) -> Result<ClassInstance, ClassError> {
    let params: Params = parse_params(CLASS, params)?;
    // Below this the preview's marker line (which names the spill file) cannot fit.
    if params.max_bytes < MIN_MAX_BYTES {
        return Err(ClassError::bad_params(
            CLASS,
            format!(
                "max_bytes: must be at least {MIN_MAX_BYTES} (room for the preview line naming the file)"
            ),
        ));
    }
    let hook = ResultTruncateHook {
        config: SpillConfig::new(params.spill_dir, params.max_bytes),
    };
    Ok(ClassInstance {
        hook: Some(Arc::new(hook)),
        events: vec![tollgate_protocol::Event::PostToolUse],
        tools: None,
        observer: None,
    })
}

struct ResultTruncateHook {
    config: SpillConfig,
}

/// The text the limit applies to: a string result itself, anything else as compact JSON.
fn result_text(result: &Value) -> String {
    match result {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

fn spilled_outcome(spilled: Spilled) -> Outcome {
    let Some(file) = spilled.file else {
        return Outcome::allow();
    };
    let detail = json!({
        "file": file,
        "original_bytes": spilled.original_bytes,
        "preview_bytes": spilled.text.len(),
    });
    Outcome::allow()
        .with_result(Value::String(spilled.text))
        .with_side_effect(SideEffect::new("result_spilled", detail))
}

impl Hook for ResultTruncateHook {
    fn name(&self) -> &str {
        CLASS
    }

    fn kind(&self) -> HookKind {
        HookKind::Class
    }

    fn should_trigger(&self, ctx: &HookContext) -> bool {
        matches!(ctx.payload().data, EventData::PostToolUse(_))
    }

    /// # Cancel safety
    ///
    /// The spill runs on Tokio's blocking pool; when the future is dropped (deadline), a spill
    /// already started still completes and leaves its file behind.
    fn execute(&self, ctx: HookContext) -> BoxFuture<'_, Result<Outcome, HookError>> {
        Box::pin(async move {
            let EventData::PostToolUse(done) = &ctx.payload().data else {
                return Ok(Outcome::allow());
            };
            let text = result_text(&done.tool_result);
            if text.len() <= self.config.limit_bytes {
                return Ok(Outcome::allow());
            }
            let config = self.config.clone();
            let spilled = tokio::task::spawn_blocking(move || spill(&text, &config)).await??;
            Ok(spilled_outcome(spilled))
        })
    }
}
