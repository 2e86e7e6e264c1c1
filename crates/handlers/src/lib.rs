//! tollgate's out-of-process hook kinds: [command hooks](command), [http hooks](http) and
//! [llm hooks](llm).

pub mod class;
pub mod claude;
pub mod command;
pub mod http;
pub mod llm;
pub mod process_group;
pub mod text;

pub use class::{ClassError, ClassFactory, ClassInstance, ClassTable};
pub use command::CommandHook;
pub use http::HttpHook;
pub use llm::LlmHook;
