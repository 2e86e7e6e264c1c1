#!/bin/bash
# Registered with "if": "Bash(git push *)": runs only for git push.
echo "Pushing is done by CI, not by the agent" >&2
exit 2
