#!/usr/bin/env python3
"""PreToolUse guard for Write/Edit/MultiEdit: protects secrets and generated files."""
import json
import sys

data = json.load(sys.stdin)
file_path = data.get("tool_input", {}).get("file_path", "")

PROTECTED = [".env", "secrets/", ".git/"]
ASK = ["package-lock.json", "Cargo.lock"]


def answer(decision, reason):
    print(json.dumps({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": decision,
            "permissionDecisionReason": reason,
        }
    }))
    sys.exit(0)


if any(part in file_path for part in PROTECTED):
    answer("deny", f"{file_path} is a protected file")
if any(file_path.endswith(name) for name in ASK):
    answer("ask", f"{file_path} is generated; confirm the edit")
sys.exit(0)
