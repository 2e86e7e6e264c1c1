#!/usr/bin/env bash
# Tells the person at the keyboard that the agent waits for them (here: a line in a file).
jq -r '"\(.notification_type): \(.message)"' >> "$CLAUDE_PROJECT_DIR/notified.log"
