//! LLM judge hooks (filled in by the llm work).
