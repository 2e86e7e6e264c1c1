#!/bin/bash
# PostToolUse on Write|Edit: tells the model when it left a TODO behind.
input=$(cat)
file=$(jq -r '.tool_input.file_path // empty' <<<"$input")
[[ -n "$file" && -f "$file" ]] || exit 0
if grep -q "TODO" "$file"; then
  jq -n --arg f "$(basename "$file")" '{decision: "block", reason: ("\($f) still contains a TODO; finish it before moving on")}'
fi
exit 0
