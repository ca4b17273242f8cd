#!/usr/bin/env bash
# Builds pgvector (the bench's PostgreSQL peer, and CI's pgvector stage) from its public source and
# installs it into the local PostgreSQL 15, as root. Idempotent: does nothing when the pinned
# version is installed already; the build tree is cached by version.
#   bash scripts/pgvector-build.sh            # exit 0: installed (or already there)
# Where the source comes from, first found:
#   PALMVEIN_PGVECTOR_SOURCE   a source tree, a .tar.gz of one, or a git directory holding the tag
#   /work/.mirror/pgvector+pgvector/repo  the workplace's mirror of the public repository (git)
# Exits non-zero with one line on stderr saying why when it cannot build (no source, no
# postgresql-server-dev-15, not root); the bench prints that line as "pgvector: skipped (...)".
set -euo pipefail

version=${PALMVEIN_PGVECTOR_VERSION:-0.8.6}
pg_config=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
# -march=native: a build cached on one CPU model is not reused on another.
cpu=$(grep -m1 "model name" /proc/cpuinfo | md5sum | cut -c1-8)
cache=${PALMVEIN_CI_CACHE:-$HOME/.cache/palmvein-ci}/pgvector-$version-$cpu
tarball=${PALMVEIN_CI_CACHE:-$HOME/.cache/palmvein-ci}/pgvector-$version-source.tar.gz
no() {
  echo "$1" >&2
  exit 1
}

[ -x "$pg_config" ] || no "no $pg_config (Debian's postgresql-server-dev-15 provides it)"
installed="$("$pg_config" --sharedir)/extension/vector--$version.sql"
if [ -f "$installed" ] && [ -f "$("$pg_config" --pkglibdir)/vector.so" ]; then
  echo "pgvector $version: installed already"
  exit 0
fi
[ "$(id -u)" = 0 ] || no "installing into $("$pg_config" --pkglibdir) needs root"

if [ ! -f "$cache/vector.so" ]; then
  source=${PALMVEIN_PGVECTOR_SOURCE:-/work/.mirror/pgvector+pgvector/repo}
  rm -rf "$cache.part"
  mkdir -p "$cache.part"
  if [ -f "$source/vector.control" ]; then
    cp -r "$source"/. "$cache.part"
  elif [ -f "$source" ]; then
    tar -xzf "$source" -C "$cache.part" --strip-components="${PALMVEIN_PGVECTOR_STRIP:-0}"
  elif git --git-dir="$source" rev-parse -q --verify "v$version^{commit}" >/dev/null 2>&1; then
    git --git-dir="$source" archive --format=tar.gz -o "$tarball.part" "v$version" && mv "$tarball.part" "$tarball"
    tar -xzf "$tarball" -C "$cache.part"
  elif [ -f "$tarball" ]; then
    # The tag's source kept by an earlier build here: a new CPU model rebuilds without the mirror.
    tar -xzf "$tarball" -C "$cache.part"
  else
    rm -rf "$cache.part"
    no "no pgvector $version source (set PALMVEIN_PGVECTOR_SOURCE to a source tree, tarball or git directory; looked at $source)"
  fi
  [ -f "$cache.part/vector.control" ] || no "the pgvector source has no vector.control"
  # pgvector's own default flags (-march=native): the peer is built as a user would build it here.
  nice -n 10 make -s -C "$cache.part" USE_PGXS=1 PG_CONFIG="$pg_config" -j"$(nproc)" >"$cache.part/build.log" 2>&1 \
    || no "pgvector $version did not build (log: $cache.part/build.log)"
  rm -rf "$cache"
  mv "$cache.part" "$cache"
fi
make -s -C "$cache" USE_PGXS=1 PG_CONFIG="$pg_config" install >/dev/null
echo "pgvector $version: built and installed into $("$pg_config" --pkglibdir)"
