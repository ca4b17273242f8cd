#!/usr/bin/env bash
# The container image as users run it (issue #54), with podman on the host network: build the
# Dockerfile on the local stand-in base (scripts/container-base.sh) from the packed packages; run it
# on the embedded database with a read-only root file system, and on PostgreSQL with its
# DATABASE_URL and master key from secret files; each time run the README walkthrough against it
# (its `npx palmvein` steps inside the container), stop it with SIGTERM (exit 0 within 10 s), start
# a new container on the same volume and identify the member enrolled before. Then compose.yaml with
# podman-compose (PostgreSQL a local stand-in image): the walkthrough, stop, down and up again.
# Fails if the service runs as root or writes outside its volume. Prints one ok/failed line with
# its time.
# Needs: root, podman, runc, debootstrap, podman-compose, psql; the checkout built (npm ci / npm run build); node, curl.
# Environment: PALMVEIN_CI_DATABASE_URL (PostgreSQL; a database container_check_<pid> is made on
# it and dropped), PALMVEIN_CONTAINER_PORT (default 18280; the metrics port is the next one).
set -Eeuo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
started=$SECONDS
port="${PALMVEIN_CONTAINER_PORT:-18280}"
metrics_port=$((port + 1))
tag="check-$$"
image="localhost/palmvein:check"
# This VM's podman needs these (crun fails on its cgroups; podman's default ulimits are refused).
export CONTAINERS_CONF="${CONTAINERS_CONF:-$root/.ci/containers.conf}"
podman() { command podman --runtime runc --cgroup-manager cgroupfs "$@"; }
say() { echo "[container] $*"; }
fail() { echo "[container] FAILED after $((SECONDS - started)) s: $*" >&2; exit 1; }

work="$(mktemp -d)"
database=""
cleanup() {
  podman ps -a --filter "name=^$tag[-_]" --format '{{.Names}}' | xargs -r podman rm -f -t 0 >/dev/null 2>&1 || true
  podman volume ls --filter "name=^$tag[-_]" --format '{{.Name}}' | xargs -r podman volume rm -f >/dev/null 2>&1 || true
  podman network rm -f "${tag}_default" >/dev/null 2>&1 || true
  [ -z "$database" ] || psql -q "$PALMVEIN_CI_DATABASE_URL" -c "DROP DATABASE IF EXISTS $database WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'fail "line $LINENO: $BASH_COMMAND"' ERR

say "base image (the stand-in for node:24-bookworm-slim)"
base="$(bash "$root/scripts/container-base.sh")"

say "the packed packages (as built) in the build context"
mkdir -p "$work/context/build/container"
PALMVEIN_PACK_AS_BUILT=1 bash "$root/scripts/pack-packages.sh" "$work/context/build/container" | sed 's/^/  /'

say "podman build on $base"
build_started=$SECONDS
# Behind this machine's TLS-intercepting proxy npm needs its CA: mounted for the build only.
podman build --format docker --network host --pull=never --build-arg "BASE=$base" \
  --volume /etc/ssl/certs/ca-certificates.crt:/run/host-ca.crt:ro --build-arg NODE_EXTRA_CA_CERTS=/run/host-ca.crt \
  -f "$root/Dockerfile" -t "$image" "$work/context" >"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; fail "podman build"; }
size() { podman image inspect --format '{{.Size}}' "$1" | awk '{ printf "%.0f MB", $1 / 1e6 }'; }
app="$(podman run --rm --network host --entrypoint du "$image" -sm /opt/palmvein 2>/dev/null | cut -f1)"
say "built in $((SECONDS - build_started)) s: $(size "$image") ($(size "$base") base + ${app} MB in /opt/palmvein)"

# The image's own settings: a numeric non-root user, the healthcheck, the exec-form command.
user="$(podman image inspect --format '{{.Config.User}}' "$image")"
[[ "$user" =~ ^[1-9][0-9]*(:[0-9]+)?$ ]] || fail "the image's user is '$user', not a numeric non-root one"
podman image inspect --format '{{json .Config.Healthcheck.Test}}' "$image" | grep -q '/healthz' || fail "the image has no HEALTHCHECK on /healthz"
podman image inspect --format '{{json .Config.Cmd}}' "$image" | grep -q '^\["node",' || fail "the image's CMD is not the exec form"
if podman run --rm --network host --entrypoint sh "$image" -c 'command -v curl || command -v gcc || command -v cargo || ls /opt/palmvein/node_modules/palmvein/src' >/dev/null 2>&1; then
  fail "the image holds curl, a compiler or the sources"
fi

# Starts a container on volume $1 (extra podman run arguments follow) and waits for /healthz.
container=""
start_container() {
  local volume="$1"; shift
  container="$tag-$((++runs))"
  podman run -d --name "$container" --network host --health-interval disable \
    -v "$volume:/data" -e PORT="$port" -e PALMVEIN_METRICS_PORT="$metrics_port" -e PALMVEIN_LOG_LEVEL=warn \
    -e WEBHOOK_ALLOW_LOCALHOST=true "$@" "$image" >/dev/null 2>"$work/run.log" || { cat "$work/run.log" >&2; fail "podman run"; }
  wait_healthy
}
runs=0

# Waits for $container's /healthz on $port.
wait_healthy() {
  for _ in $(seq 1 120); do
    curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && return 0
    [ "$(podman inspect --format '{{.State.Running}}' "$container")" = true ] || break
    sleep 0.5
  done
  podman logs "$container" >&2 || true
  fail "$container did not become healthy"
}

# SIGTERM to the running container (or the command given, which sends it): it must exit 0 within 10 s.
stop_container() {
  local begun=$SECONDS code
  if [ $# -eq 0 ]; then podman kill --signal TERM "$container" >/dev/null; else "$@"; fi
  code="$(timeout 15 podman wait "$container" || echo timeout)"
  [ "$code" = 0 ] && [ $((SECONDS - begun)) -le 10 ] || { podman logs "$container" 2>&1 | tail -20 >&2; fail "SIGTERM: exit $code after $((SECONDS - begun)) s"; }
  say "  SIGTERM: exit 0 after $((SECONDS - begun)) s"
}

# The README's walkthrough block, as test/readme-walkthrough.test.ts runs it, against the container:
# `npx palmvein ...` runs inside it. Leaves KEY, PROJECT, MEMBER, LATER in $work/walkthrough.env.
walkthrough() {
  node -e '
    const readme = require("fs").readFileSync(process.argv[1], "utf8")
    const match = /<!-- walkthrough -->\n```sh\n([\s\S]*?)\n```/.exec(readme)
    if (!match) throw new Error("README.md has no <!-- walkthrough --> sh block")
    process.stdout.write(match[1])' "$root/README.md" >"$work/walkthrough.sh"
  # The variables the later checks use, written where the block leaves them.
  printf '\n{ echo "KEY=$KEY"; echo "PROJECT=$PROJECT"; echo "MEMBER=$MEMBER"; echo "LATER=$LATER"; } >"%s"\n' "$work/walkthrough.env" >>"$work/walkthrough.sh"
  (cd "$work" && PV="http://127.0.0.1:$port" CONTAINER="$container" bash -euo pipefail -c '
    npx() { shift; command podman --runtime runc --cgroup-manager cgroupfs exec "$CONTAINER" palmvein "$@"; }
    source ./walkthrough.sh' >"$work/walkthrough.out" 2>&1) || { cat "$work/walkthrough.out" >&2; fail "the README walkthrough failed"; }
  # shellcheck disable=SC1091
  source "$work/walkthrough.env"
  node -e '
    const [output, member] = process.argv.slice(1)
    const answers = output.split("\n").filter((line) => line.startsWith("{")).map((line) => JSON.parse(line))
    const [enrolled, found, stranger, webhook] = answers
    const ok = answers.length === 4 && enrolled.member_id === member && found.status === "Found" && found.member_id === member
      && stranger.status === "NotFound" && webhook.enabled === true
    if (!ok) { console.error(output); process.exit(1) }' "$(cat "$work/walkthrough.out")" "$MEMBER" || fail "the README walkthrough answered otherwise than it shows"
  say "  README walkthrough: enrolled $MEMBER, found her, not the stranger, webhook subscribed"
}

# The member enrolled by the walkthrough, found again by a later capture.
found_again() {
  local answer
  answer="$(curl -sS --fail-with-body "http://127.0.0.1:$port/v1/projects/$PROJECT/biometrics/identify" -H "Authorization: Bearer $KEY" \
    -H 'Content-Type: application/json' -d "{\"palm\":{\"identify_capture\":\"$LATER\"}}")" || fail "identify after the restart: $answer"
  grep -q "\"status\":\"Found\",\"member_id\":\"$MEMBER\"" <<<"$answer" || fail "after the restart the member is not found: $answer"
  say "  after a restart on the same volume: $MEMBER found again"
}

# The Prometheus listener answers (read whole first: grep -q leaving early would fail curl's write).
metrics_answer() {
  local metrics
  metrics="$(curl -sf "http://127.0.0.1:$metrics_port/metrics")" && grep -q '^process_cpu_user_seconds_total' <<<"$metrics" \
    || fail "no metrics on port $metrics_port"
}

# Who the service runs as, seen from the host (no user namespace: the same uid).
not_root() {
  local pid uid
  pid="$(podman inspect --format '{{.State.Pid}}' "$container")"
  uid="$(ps -o uid= -p "$pid" | tr -d ' ')"
  [ -n "$uid" ] && [ "$uid" != 0 ] || fail "the service runs as uid '$uid'"
  say "  runs as uid $uid"
}

# After the container stopped: nothing written outside its volume. podman itself bind-mounts
# /etc/hosts, /etc/hostname and /etc/resolv.conf (the one entry, C /etc, it reports for them).
wrote_nothing() {
  local changes
  changes="$(podman diff --format json "$container" | node -e '
    const diff = JSON.parse(require("fs").readFileSync(0, "utf8"))
    const entries = [...(diff.added ?? []), ...(diff.changed ?? []), ...(diff.deleted ?? [])].filter((entry) => entry !== "/etc")
    console.log(entries.join(" "))')"
  [ -z "$changes" ] || fail "$container wrote outside its volume: $changes"
  say "  podman diff: nothing written outside /data"
}

# exercise <volume> <what> [podman run arguments...]
exercise() {
  local volume="$tag-$1"; say "$2"; shift 2
  start_container "$volume" "$@"
  not_root
  podman healthcheck run "$container" >/dev/null 2>&1 || fail "the image's HEALTHCHECK failed"
  say "  HEALTHCHECK: healthy; $(curl -sf "http://127.0.0.1:$port/healthz" | grep '^database:')"
  [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/console/")" = 200 ] || fail "/console/ is not served from the image"
  metrics_answer
  walkthrough
  stop_container
  wrote_nothing
  start_container "$volume" "$@"
  found_again
  stop_container
}

# The embedded database in the volume, the root file system read-only (podman puts tmpfs on /tmp
# and /run then; the service needs nothing else).
exercise embedded "embedded database, --read-only" --read-only

[ -n "${PALMVEIN_CI_DATABASE_URL:-}" ] || fail "PALMVEIN_CI_DATABASE_URL is not set (PostgreSQL)"
database="container_check_$$"
psql -q "$PALMVEIN_CI_DATABASE_URL" -c "CREATE DATABASE $database" >/dev/null
url="$(node -e 'const url = new URL(process.argv[1]); url.pathname = "/" + process.argv[2]; console.log(url.href)' "$PALMVEIN_CI_DATABASE_URL" "$database")"
# Secrets as files (Docker/Kubernetes secrets), readable by the service's user only.
mkdir -p "$work/secrets"
printf '%s\n' "$url" >"$work/secrets/database-url"
node -e 'console.log(require("crypto").randomBytes(32).toString("base64"))' >"$work/secrets/master-key"
chown -R 1000:1000 "$work/secrets" && chmod 0400 "$work/secrets"/*
# A writable root file system: what the service would write outside /data shows in podman diff.
exercise postgres "PostgreSQL (DATABASE_URL_FILE, PALMVEIN_MASTER_KEY_FILE)" \
  -v "$work/secrets:/run/secrets:ro" -e DATABASE_URL_FILE=/run/secrets/database-url -e PALMVEIN_MASTER_KEY_FILE=/run/secrets/master-key
podman run --rm --network host -v "$tag-postgres:/data" --entrypoint ls "$image" /data 2>/dev/null | grep -qx master.key \
  && fail "a master key was generated into /data although PALMVEIN_MASTER_KEY_FILE was set"

say "compose.yaml with podman-compose (bridge network; PostgreSQL: a local stand-in for postgres:15-bookworm)"
postgres_image="localhost/palmvein-postgres:stand-in"
podman build --network host --pull=never --build-arg "BASE=$base" -t "$postgres_image" "$root/scripts/postgres-stand-in" >"$work/postgres-build.log" 2>&1 \
  || { cat "$work/postgres-build.log" >&2; fail "building the PostgreSQL stand-in"; }
# podman-compose calls `podman`; this one with the runtime flags above.
printf '#!/bin/sh\nexec podman --runtime runc --cgroup-manager cgroupfs "$@"\n' >"$work/podman" && chmod +x "$work/podman"
compose() {
  PALMVEIN_IMAGE="$image" POSTGRES_IMAGE="$postgres_image" PALMVEIN_PORT="$port" PALMVEIN_METRICS_PORT="$metrics_port" WEBHOOK_ALLOW_LOCALHOST=true \
    timeout 120 podman-compose --podman-path "$work/podman" -p "$tag" -f "$root/compose.yaml" "$@" >>"$work/compose.log" 2>&1 \
    || { cat "$work/compose.log" >&2; fail "podman-compose $*"; }
}
compose up -d
container="${tag}_palmvein_1"
wait_healthy
not_root
say "  $(curl -sf "http://127.0.0.1:$port/healthz" | grep '^database:'); metrics on 127.0.0.1:$metrics_port"
metrics_answer
walkthrough
stop_container compose stop
compose down
compose up -d
wait_healthy
found_again
compose down -v

trap - ERR
say "ok in $((SECONDS - started)) s"
