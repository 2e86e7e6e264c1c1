//! Loopback stand-ins for the model APIs that agent CLIs call, for tests that run the real
//! CLIs (Claude Code, Codex) without reaching the real services.
//!
//! Each stand-in is a real HTTP server on `127.0.0.1` (an ephemeral port) that speaks one
//! service's wire format, answers from a [`Script`] and records every request it got:
//!
//! - [`anthropic`]: the Anthropic Messages API (`POST /v1/messages`, streamed as Server-Sent
//!   Events or answered as one JSON message), as Claude Code calls it through
//!   `ANTHROPIC_BASE_URL`;
//! - [`openai`]: the OpenAI Responses API (`POST /v1/responses`, streamed or not), as Codex
//!   calls it through a `model_providers` entry with `wire_api = "responses"`.
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
pub mod openai;

pub use error::{Error, Result};
pub use recorder::RecordedRequest;
pub use script::{Script, Step, ToolUse};
pub use server::StandIn;
