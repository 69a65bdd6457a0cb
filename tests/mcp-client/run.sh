#!/bin/sh
# The real-client tests: the official MCP TypeScript SDK client (from npm)
# against `sightline mcp` and `sightline serve` (client.mjs, or the script
# given, such as load.mjs). Skips (77) without Node.js
# 18+ and npm; installs the locked SDK with `npm ci` when it is missing.
set -eu
cd "$(dirname "$0")"

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "SKIP: node and npm are not installed; the MCP SDK client test needs them"
  exit 77
fi
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 18 ]; then
  echo "SKIP: Node.js $major is too old for the MCP SDK (18 or newer)"
  exit 77
fi
if [ ! -f node_modules/@modelcontextprotocol/sdk/package.json ]; then
  echo "# installing the locked MCP SDK with npm ci"
  npm ci --no-audit --no-fund >&2
fi
script=${1:-client.mjs}
[ $# -gt 0 ] && shift
exec node "$script" "$@"
