#!/bin/bash
# Answers as hooks in the wild do, mistakes included; Claude Code decides what they mean.
command=$(jq -r '.tool_input.command // empty')
case "$command" in
  *compat-no-event-name*)
    # hookSpecificOutput without hookEventName
    echo '{"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "no event name"}}' ;;
  *compat-other-event*)
    # hookEventName of another event
    echo '{"hookSpecificOutput": {"hookEventName": "PostToolUse", "permissionDecision": "deny", "permissionDecisionReason": "names PostToolUse"}}' ;;
  *compat-extra-key*)
    # a key Claude Code does not define, beside a deny
    echo '{"version": 2, "hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "denied beside an extra key"}}' ;;
  *compat-block-no-reason*)
    echo '{"decision": "block"}' ;;
  *compat-exit-2-silent*)
    exit 2 ;;
  *compat-two-lines*)
    echo '{"decision": "block", "reason": "first line"}'
    echo '{"decision": "block", "reason": "second line"}' ;;
  *compat-plain-text*)
    echo "checked, looks fine" ;;
  *compat-crash*)
    echo "jq: error: Cannot index string with string \"x\"" >&2
    exit 5 ;;
esac
exit 0
