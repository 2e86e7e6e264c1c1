#!/usr/bin/env python3
"""Decides permission dialogs for web fetches: grants the docs host, refuses the rest."""
import json
import sys

event = json.load(sys.stdin)
url = event.get("tool_input", {}).get("url", "")
if "docs.compat.invalid" in url:
    decision = {"behavior": "allow"}
elif "tracker.compat.invalid" in url:
    decision = {"behavior": "deny", "message": "no fetching from the tracker"}
else:
    sys.exit(0)
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}}))
