//! tollgate's out-of-process hook kinds. This crate holds [command hooks](command); http and
//! llm hooks follow.

pub mod command;

pub use command::CommandHook;
