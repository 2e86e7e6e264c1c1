#!/bin/bash
# A guard registered with "onFailure": "block": if it breaks, the call must not go ahead.
command=$(jq -r '.tool_input.command')
if [[ "$command" == *compat-guard-breaks* ]]; then
  echo "policy file missing" >&2
  exit 1
fi
exit 0
