#!/usr/bin/env bash
# Fuzzes the booted service with schemathesis against its own /v1/openapi.json: once with an
# organization-wide API key, once with an organization admin's token. A fixed seed and a bounded
# number of examples per operation keep the run repeatable and short. Checks: no 5xx, responses
# conform to their documented schemas, documented status codes and content types only, and a
# request the document calls valid is accepted (positive_data_acceptance) but for the exceptions
# scripts/fuzz-api-hooks.py lists: rules JSON Schema cannot state, each with its status and codes.
#   scripts/fuzz-api.sh <path to the schemathesis executable> [examples per operation]
# Needs the built service (dist/) and a free loopback port; uses a temporary embedded database.
# With PALMVEIN_FUZZ_REPORT_DIR set, each run writes a JUnit report there (one test case per operation).
set -euo pipefail
cd "$(dirname "$0")/.."
st=${1:?usage: scripts/fuzz-api.sh <schemathesis executable> [examples per operation]}
examples=${2:-20}
seed=${PALMVEIN_FUZZ_SEED:-20261125}

work=$(mktemp -d)
port=$(node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close() })')
# node:http, the transport on Node 22/24 here: uWS (Node 20) drops the connection on a method it does
# not know, such as schemathesis's QUERY probes, instead of answering (docs/http-limits.md).
export PALMVEIN_HTTP_SERVER=${PALMVEIN_HTTP_SERVER:-node}
# The fuzzed project is on the business plan (sandbox allows 5 requests a minute): offered for self-service here.
export PALMVEIN_SELF_SERVICE_PLANS=sandbox,business
export PALMVEIN_DATA_DIR="$work/data" PORT="$port" HOST=127.0.0.1 PALMVEIN_LOG_LEVEL=warn PALMVEIN_MATCHER_THREADS=1
node dist/cli/main.js serve > "$work/service.log" 2>&1 &
service=$!
cleanup() { kill "$service" 2>/dev/null || true; wait "$service" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
pv="http://127.0.0.1:$port"
for _ in $(seq 1 600); do curl -sf "$pv/healthz" >/dev/null && break; sleep 0.2; done
curl -sf "$pv/healthz" >/dev/null || { cat "$work/service.log"; echo "the service did not start" >&2; exit 1; }

json() { node -p "JSON.parse(require('fs').readFileSync(0, 'utf8'))$1"; }
post() { curl -sS --fail-with-body "$pv$1" -H "Authorization: Bearer $2" -H 'Content-Type: application/json' -d "$3"; }
token=$(node dist/cli/main.js token --sub fuzz-admin@example.com --ttl 7200)
org=$(post /v1/organizations "$token" '{"name":"Fuzz"}' | json .id)
# Server lookup allowed, so turning it on is a rule of the fixture, not a refusal to excuse.
environment=$(post "/v1/organization/$org/environments" "$token" '{"name":"Fuzz","enables_server_lookup":true}' | json .id)
project=$(post "/v1/organization/$org/projects" "$token" "{\"name\":\"Fuzz\",\"environment_id\":\"$environment\",\"plan\":\"business\"}" | json .id)
key=$(post "/v1/organization/$org/api-keys" "$token" '{"name":"fuzz","project_ids":null}' | json .key)
member=$(post "/v1/projects/$project/members" "$key" '{"display_name":"Fuzz"}' | json .member_id)

# Real identifiers in the paths, so the operations reach their resources rather than 404 only.
cat > "$work/schemathesis.toml" <<TOML
[parameters]
"path.org_id" = "$org"
"path.project_id" = "$project"
"path.member_id" = "$member"

# No crash replay from an earlier run's .schemathesis/ cache: the seed alone decides what is sent.
[cache]
enabled = false

TOML
# Refusals of schema-valid requests the document states in words only (see that file).
"$(dirname "$st")/python" scripts/fuzz-api-hooks.py >> "$work/schemathesis.toml"
export SCHEMATHESIS_HOOKS="$PWD/scripts/fuzz-api-hooks.py"

# One worker: with two threads, hypothesis's lambda-source cache (Python 3.11's ast is not thread
# safe) sometimes fails inside schemathesis itself ("AST constructor recursion depth mismatch").
status=0
for credential in "api key:$key" "admin token:$token"; do
  name=${credential%%:*}
  report=()
  [ -n "${PALMVEIN_FUZZ_REPORT_DIR:-}" ] && report=(--report junit --report-junit-path "$PALMVEIN_FUZZ_REPORT_DIR/schemathesis-${name// /-}.xml")
  echo "== schemathesis with the $name: seed $seed, at most $examples examples per operation"
  "$st" --config-file "$work/schemathesis.toml" run "$pv/v1/openapi.json" \
    --header "Authorization: Bearer ${credential#*:}" \
    --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance,positive_data_acceptance,refusal_is_documented \
    --phases examples,coverage,fuzzing --seed "$seed" --max-examples "$examples" --workers 1 \
    --generation-database none --request-timeout 10 --no-color "${report[@]}" || status=$?
done
if grep -q '"level":5[0-9]' "$work/service.log"; then
  echo "the service logged errors during the fuzzing:" >&2
  grep '"level":5[0-9]' "$work/service.log" | head -5 | cut -c1-600 >&2
  status=1
fi
exit $status
