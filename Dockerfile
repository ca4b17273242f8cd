# palmvein's image: the service on Node, its prebuilt matcher addon, its production dependencies,
# nothing else (no sources, no build tools, no Rust toolchain). docs/container.md says how to build
# and run it. The build context holds the packed packages (build/container/*.tgz: `npm pack` of the
# service, @palmvein/matcher, @palmvein/matcher-linux-x64-gnu and @palmvein/client; see
# scripts/pack-packages.sh): the TypeScript is compiled and the addon built when they are packed.
ARG BASE=node:24-bookworm-slim

FROM ${BASE} AS install
# Behind a TLS-intercepting proxy: its CA bundle's path inside the build (mounted with
# `--volume`), so npm reaches the registry; unset, Node's own CAs. Not kept in the image.
ARG NODE_EXTRA_CA_CERTS
WORKDIR /opt/palmvein
COPY build/container/*.tgz /tmp/packages/
# A project of its own that depends on the tarballs: npm resolves the service's dependency on the
# matcher and the client to them, and fetches the rest (production dependencies only).
RUN echo '{"name":"palmvein-image","private":true}' > package.json \
 && npm install --omit=dev --no-audit --no-fund --no-update-notifier /tmp/packages/*.tgz \
 && rm -rf /tmp/packages package-lock.json \
 # The uWebSockets.js packages carry a binary per platform and Node version (220 MB): keep the one
 # this Node loads (none: the service serves on node:http).
 && node -e "const fs = require('node:fs'); const keep = 'uws_' + process.platform + '_' + process.arch + '_' + process.versions.modules + '.node'; for (const file of fs.readdirSync('node_modules', { recursive: true })) if (/(^|\/)uws_[^/]*[.]node$/.test(file) && !file.endsWith('/' + keep)) fs.rmSync('node_modules/' + file)" \
 && mkdir /data

FROM ${BASE}
COPY --from=install /opt/palmvein /opt/palmvein
# The data directory (embedded database, master key, token issuer's key) belongs to the service's
# user; a new named volume mounted here takes this ownership.
COPY --from=install --chown=1000:1000 /data /data
ENV PALMVEIN_DATA_DIR=/data \
    PORT=8080 \
    HOST=0.0.0.0 \
    PALMVEIN_METRICS_HOST=0.0.0.0 \
    PALMVEIN_METRICS_PORT=9464 \
    PATH=/opt/palmvein/node_modules/.bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
VOLUME /data
WORKDIR /data
# Numeric, so an orchestrator can check it is not root (the official Node image's user node).
USER 1000:1000
EXPOSE 8080 9464
# No curl in the image: Node asks /healthz (503 when a critical check fails).
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Exec form: node is PID 1 and gets SIGTERM itself (serve closes and exits 0).
CMD ["node", "/opt/palmvein/node_modules/palmvein/dist/cli/main.js", "serve"]
