#!/usr/bin/env bash
# Three gateway nodes sharing one PostgreSQL database and one Redis: budgets, rate limits and configuration are shared.
# Usage: examples/multi-node/run.sh   (stop with Ctrl-C)
set -euo pipefail
cd "$(dirname "$0")/../.."
export AGENTGW_DATABASE_URL="${AGENTGW_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}"
export AGENTGW_REDIS_URL="${AGENTGW_REDIS_URL:-redis://127.0.0.1:6379}"
export AGENTGW_ADMIN_KEY="${AGENTGW_ADMIN_KEY:?set AGENTGW_ADMIN_KEY to the admin key all nodes share}"
npm run build --silent
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait' EXIT INT TERM
for port in 8081 8082 8083; do
  ./cli/dist/bin.js serve --port "$port" &
  pids+=($!)
done
wait
