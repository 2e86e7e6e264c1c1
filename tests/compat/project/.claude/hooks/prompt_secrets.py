#!/usr/bin/env python3
"""UserPromptSubmit: a prompt that pastes a secret is blocked before it reaches the model."""
import json
import re
import sys

prompt = json.load(sys.stdin).get("prompt", "")
if re.search(r"\bsk-[A-Za-z0-9]{20,}\b", prompt):
    print(json.dumps({"decision": "block", "reason": "The prompt contains what looks like an API key; remove it and try again."}))
    sys.exit(0)
sys.exit(0)
