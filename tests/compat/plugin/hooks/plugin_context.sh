#!/bin/bash
cat > /dev/null
jq -n '{hookSpecificOutput: {hookEventName: "SessionStart", additionalContext: "compat-guards is active: generated/ is read-only."}}'
