//! Feishu / Lark interactive cards (not built yet).
