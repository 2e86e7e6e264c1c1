#!/usr/bin/env python3
import json
import sys

data = json.load(sys.stdin)
if data.get("tool_name") == "Bash" and "docker push" in data["tool_input"].get("command", ""):
    print(json.dumps({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "lenient-args: images are pushed by CI",
        }
    }))
sys.exit(0)
