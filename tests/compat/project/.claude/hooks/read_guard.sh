#!/bin/bash
# Registered with an empty matcher: refuses reads of SSH keys by any tool.
path=$(jq -r '.tool_input.file_path // .tool_input.path // ""')
if [[ "$path" == *"/.ssh/"* ]]; then
  echo "Reading SSH keys is not allowed: $path" >&2
  exit 2
fi
exit 0
