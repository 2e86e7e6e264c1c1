#!/usr/bin/env python3
import json
import shlex
import sys

event = json.load(sys.stdin)
if event.get("tool_name") == "Bash":
    try:
        words = shlex.split(event["tool_input"]["command"])
    except ValueError:
        words = []
    if words and words[0] == "sudo":
        json.dump({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "compat-guards: the agent never runs sudo",
        }}, sys.stdout)
sys.exit(0)
