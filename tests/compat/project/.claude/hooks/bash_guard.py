#!/usr/bin/env python3
"""PreToolUse guard for Bash: blocks destructive commands (exit 2, reason on stderr)."""
import json
import re
import sys

BLOCKED = [
    (r"\brm\s+-[a-zA-Z]*r[a-zA-Z]*f\b|\brm\s+-[a-zA-Z]*f[a-zA-Z]*r\b", "rm -rf is not allowed in this project; delete files one by one"),
    (r"\bgit\s+reset\s+--hard\b", "git reset --hard discards work; use git stash"),
    (r"\bchmod\s+(-R\s+)?777\b", "world-writable permissions are not allowed"),
]

try:
    input_data = json.load(sys.stdin)
except json.JSONDecodeError as e:
    print(f"Error: Invalid JSON input: {e}", file=sys.stderr)
    sys.exit(1)

tool_name = input_data.get("tool_name", "")
tool_input = input_data.get("tool_input", {})
command = tool_input.get("command", "")

if tool_name != "Bash" or not command:
    sys.exit(0)

for pattern, message in BLOCKED:
    if re.search(pattern, command):
        print(f"Blocked: {message}", file=sys.stderr)
        sys.exit(2)

sys.exit(0)
