//! Loopback stand-ins for the services tollgate's tests cannot reach: the model APIs that
//! agent CLIs call (so tests run the real Claude Code and Codex), and the Feishu/Lark open
//! platform (so the approval channel is tested against the platform's wire format).
//!
//! Each stand-in is a real HTTP server on `127.0.0.1` (an ephemeral port) that speaks one
//! service's wire format, answers from a [`Script`] (the model APIs) or from its own state
//! (Feishu), and records every request it got:
//!
//! - [`anthropic`]: the Anthropic Messages API (`POST /v1/messages`, streamed as Server-Sent
//!   Events or answered as one JSON message), as Claude Code calls it through
//!   `ANTHROPIC_BASE_URL`;
//! - [`openai`]: the OpenAI Responses API (`POST /v1/responses`, streamed or not), as Codex
//!   calls it through a `model_providers` entry with `wire_api = "responses"`;
//! - [`slack`]: Slack's Web API (`chat.postMessage`, `chat.update`) and a click's
//!   `response_url`, plus [`slack::SlackUser`], who presses a message's buttons and sends the
//!   signed `block_actions` interaction.
//! - [`feishu`]: the Feishu/Lark open platform's token and message API (stateful: tokens it
//!   issued, messages it holds, faults a test queues), and the callbacks its users' clicks
//!   become ([`feishu::Callbacks`]).
//!
//! A script is a list of model turns. Which turn a request gets is the number of model turns
//! the conversation it carries already holds (see [`Script`]), so a CLI that retries a request
//! gets the same turn again, and a script of "call the shell tool, then answer with what it
//! printed" reads:
//!
//! ```no_run
//! use tollgate_standins::{Script, anthropic};
//!
//! let api = anthropic::start(Script::new().shell("touch ran.marker").echo_tool_result())?;
//! // … run `claude -p` with ANTHROPIC_BASE_URL = api.base_url() …
//! let results = anthropic::tool_results(&api.requests());
//! # Ok::<(), tollgate_standins::Error>(())
//! ```
//!
//! The server runs on its own thread and runtime, so sync tests and async tests use it alike;
//! dropping the [`StandIn`] stops it.

mod error;
mod recorder;
mod script;
mod server;
mod sse;

pub mod anthropic;
pub mod feishu;
pub mod openai;
pub mod slack;

pub use error::{Error, Result};
pub use recorder::RecordedRequest;
pub use script::{Script, Step, ToolUse};
pub use server::StandIn;
