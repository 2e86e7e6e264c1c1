#!/bin/bash
# PreToolUse: an emergency stop: continue:false ends the session.
command=$(jq -r '.tool_input.command')
if [[ "$command" == *compat-halt* ]]; then
  echo '{"continue": false, "stopReason": "Emergency stop requested by the halt hook"}'
fi
exit 0
