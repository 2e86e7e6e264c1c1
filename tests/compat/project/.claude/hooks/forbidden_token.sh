#!/usr/bin/env bash
# Registered with matcher "*": no tool may carry the deploy token, whatever the tool.
input=$(cat)
if jq -e '.tool_input | tostring | contains("DEPLOY_TOKEN=")' >/dev/null <<<"$input"; then
  tool=$(jq -r '.tool_name' <<<"$input")
  jq -n --arg reason "$tool call carries a deploy token" '{
    hookSpecificOutput: {hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: $reason}
  }'
fi
exit 0
