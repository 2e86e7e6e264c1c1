//! Slack block actions (not built yet).
