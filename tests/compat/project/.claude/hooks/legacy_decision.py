#!/usr/bin/env python3
"""The older output shape: top-level "decision" approve/block, and a bare updatedInput."""
import json
import re
import sys

data = json.load(sys.stdin)
if data.get("tool_name") != "Bash":
    sys.exit(0)
command = data["tool_input"].get("command", "")

if command.startswith("make lint"):
    print(json.dumps({"decision": "approve", "reason": "linting is always fine"}))
elif "docker system prune" in command:
    print(json.dumps({"decision": "block", "reason": "docker prune removes shared images"}))
elif re.match(r"^sleep \d+$", command) and int(command.split()[1]) > 1:
    # Long sleeps are capped; no decision, so the usual permission check still applies.
    new_input = dict(data["tool_input"], command="sleep 1")
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": new_input}}))
sys.exit(0)
