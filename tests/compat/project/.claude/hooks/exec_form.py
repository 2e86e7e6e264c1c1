#!/usr/bin/env python3
"""Registered in Claude Code's exec form (command + args, no shell): its arguments arrive as
written, `$HOME` included."""
import json
import sys

data = json.load(sys.stdin)
if " -g" in data["tool_input"].get("command", ""):
    print(f"Global installs are not allowed (checked with {sys.argv[1:]})", file=sys.stderr)
    sys.exit(2)
sys.exit(0)
