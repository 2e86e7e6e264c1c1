#!/usr/bin/env bash
# PreToolUse policy for Bash, in jq: deny, ask, allow, or rewrite the command.
set -euo pipefail

input=$(cat)
command=$(echo "$input" | jq -r '.tool_input.command // empty')

decide() {
  jq -n --arg decision "$1" --arg reason "$2" '{
    hookSpecificOutput: {
      hookEventName: "PreToolUse",
      permissionDecision: $decision,
      permissionDecisionReason: $reason
    }
  }'
  exit 0
}

case "$command" in
  *"curl "*"| sh"*|*"curl "*"| bash"*)
    decide deny "Piping a download into a shell is not allowed" ;;
  *"npm publish"*)
    decide ask "Publishing a package needs a person's confirmation" ;;
  "ls"|"ls "*|"pwd"|"git status"*)
    decide allow "Read-only command" ;;
  "rm "[!-]*)
    # Rewrite: move the file to .trash instead of deleting it.
    target=${command#rm }
    new_command="mkdir -p .trash && mv -- $target .trash/"
    echo "$input" | jq --arg cmd "$new_command" '{
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "allow",
        permissionDecisionReason: "rm rewritten to a move into .trash",
        updatedInput: (.tool_input + {command: $cmd})
      }
    }'
    exit 0 ;;
esac
exit 0
