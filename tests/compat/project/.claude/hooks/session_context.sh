#!/bin/bash
# SessionStart: plain stdout becomes context for the model.
cat > /dev/null
echo "Session context: the default branch is main; CI runs on every push."
