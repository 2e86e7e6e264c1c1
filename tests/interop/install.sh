#!/usr/bin/env bash
# Installs the pinned Claude Code and Codex CLIs (versions.env) with npm into a cache folder and
# prints the folder holding their executables, for TOLLGATE_INTEROP_BIN:
#
#   export TOLLGATE_INTEROP_BIN="$(tests/interop/install.sh)"
#
# The folder is $1, else $TOLLGATE_INTEROP_PREFIX, else ${XDG_CACHE_HOME:-~/.cache}/tollgate-interop.
# When both CLIs there already report the pinned versions, nothing is downloaded.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=versions.env
source "$here/versions.env"

prefix=${1:-${TOLLGATE_INTEROP_PREFIX:-${XDG_CACHE_HOME:-${HOME:?set HOME, XDG_CACHE_HOME or TOLLGATE_INTEROP_PREFIX}/.cache}/tollgate-interop}}
bin="$prefix/node_modules/.bin"

# True when both executables run and report the pinned versions.
pinned_versions_installed() {
  local claude codex
  claude=$("$bin/claude" --version 2>/dev/null) || return 1
  codex=$("$bin/codex" --version 2>/dev/null) || return 1
  [[ "$claude" == "$CLAUDE_CODE_VERSION "* && "$codex" == "codex-cli $CODEX_VERSION" ]]
}

if ! pinned_versions_installed; then
  command -v npm >/dev/null || { echo "install.sh: npm is needed (apt-get install npm)" >&2; exit 1; }
  mkdir -p "$prefix"
  echo "installing @anthropic-ai/claude-code@$CLAUDE_CODE_VERSION and @openai/codex@$CODEX_VERSION into $prefix" >&2
  npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error \
    "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" "@openai/codex@$CODEX_VERSION" >&2
  # Claude Code's postinstall puts the native binary in place of bin/claude.exe; an npm that
  # skips install scripts leaves a placeholder there, so run it by hand in that case.
  if ! "$bin/claude" --version >/dev/null 2>&1; then
    (cd "$prefix/node_modules/@anthropic-ai/claude-code" && node install.cjs) >&2
  fi
  if ! pinned_versions_installed; then
    echo "install.sh: after npm install, $bin does not hold claude $CLAUDE_CODE_VERSION and codex $CODEX_VERSION:" >&2
    "$bin/claude" --version >&2 || true
    "$bin/codex" --version >&2 || true
    exit 1
  fi
fi
echo "$bin"
