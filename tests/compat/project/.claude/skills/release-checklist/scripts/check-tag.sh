#!/bin/bash
# While the release skill is in use, tags are made by CI only.
command=$(jq -r '.tool_input.command')
if [[ "$command" =~ (^|[;&|[:space:]])git[[:space:]]+tag ]]; then
  echo "release-checklist: tags are made by CI; do not tag by hand" >&2
  exit 2
fi
exit 0
