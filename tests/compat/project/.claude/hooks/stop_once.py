#!/usr/bin/env python3
"""Stop: asks for one more look before the session ends, once (stop_hook_active)."""
import json
import sys

data = json.load(sys.stdin)
if data.get("stop_hook_active"):
    sys.exit(0)
print(json.dumps({
    "decision": "block",
    "reason": "Before you stop: run the test suite and report the result.",
}))
sys.exit(0)
