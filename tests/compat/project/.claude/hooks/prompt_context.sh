#!/bin/bash
# UserPromptSubmit: plain stdout becomes context for the model.
cat > /dev/null
echo "Project conventions: tests live in tests/, run them with make test."
