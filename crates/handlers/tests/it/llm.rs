//! LLM hooks against a local server speaking the Chat Completions wire format.
