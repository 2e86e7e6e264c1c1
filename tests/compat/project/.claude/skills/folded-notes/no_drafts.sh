#!/bin/bash
# A relative command: Claude Code runs hooks from the project folder.
path=$(jq -r '.tool_input.file_path // empty')
if [[ "$path" == *.draft.md ]]; then
  echo "folded-notes: drafts are not written to the repository ($path)" >&2
  exit 2
fi
exit 0
