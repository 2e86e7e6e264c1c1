//! tollgate's reference agent runtime: a ReAct loop that dispatches every lifecycle event
//! through a per-session hook registry, the tools it offers (shell, SQLite, files,
//! delegation), the model providers (scripted, OpenAI-compatible) and the run's trace.
//!
//! ```no_run
//! use std::sync::Arc;
//! use tollgate_runtime::{AgentDef, RunRequest, Services, run, trace::Collect};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let agent = AgentDef::load("examples/ops/agent.yaml".as_ref())?;
//! let trace = Arc::new(Collect::default());
//! let request = RunRequest {
//!     agent,
//!     prompt: "How many orders are open?".into(),
//!     skills: vec![],
//!     model: None,
//!     workspace: None,
//!     run_id: None,
//! };
//! let report = run(request, &Services::default(), vec![trace.clone()], Default::default()).await;
//! println!("{:?}: {:?} ({} trace lines)", report.status, report.answer, trace.lines().len());
//! # Ok(()) }
//! ```

pub mod agent;
pub mod approval;
pub mod gate;
pub mod model;
pub mod session;
pub mod tools;
pub mod trace;

pub use agent::{AgentDef, AgentError, ConfigShape, config_shape, config_shape_of};
pub use approval::{ApprovalPolicy, DurableApprover, InlineAnswer, InlineChannel};
pub use gate::{Approval, ApprovalRequest, Approver, DenyApprover, RuntimeGate, Waiting};
pub use model::{Model, ModelSpec};
pub use session::{
    Assembly, EndStatus, Journal, RunReport, RunRequest, Services, assemble, assemble_for,
    grant_refusal, resume, run,
};
pub use tokio_util::sync::CancellationToken;
pub use tollgate_core::BoxFuture;
