// The web console's files at /console/ (index.html) and /console/assets/<hashed name>, and its
// sign-in (console-session.ts): served beside the API but not part of it (no credential, not in the
// OpenAPI document). When the console was not built, the service still serves the API and
// /console/ says how to build it.
import { ServiceError } from '../../errors.js'
import type { ConsoleAssets, ConsoleFile } from '../console/assets.js'
import { consoleHeaders } from '../console/headers.js'
import type { Config } from '../../config.js'
import { defineRoute, Reply, type Route } from '../route.js'
import { consoleSessionRoutes } from './console-session.js'
import { Type } from '../schema.js'

const tags = ['Console']
const IMMUTABLE = 'public, max-age=31536000, immutable'

function fileReply(config: Config, file: ConsoleFile, cacheControl: string, ifNoneMatch: string | undefined): Reply {
  const headers = { ...consoleHeaders(config), 'Cache-Control': cacheControl, ETag: file.etag }
  const matches = ifNoneMatch?.split(',').some((tag) => tag.trim().replace(/^W\//, '') === file.etag)
  return matches ? new Reply(304, null, null, headers) : new Reply(200, file.body, file.contentType, headers)
}

const notBuilt = () =>
  new ServiceError(
    'unavailable',
    'the console is not built in this installation: run `npm run build` (or `npm run build -w @palmvein/console`) and restart the service',
  )

export function consoleRoutes(assets: ConsoleAssets | null): Route[] {
  return [
    defineRoute({
      operationId: 'getConsole',
      method: 'get',
      path: '/console',
      auth: ['none'],
      access: 'none',
      tags,
      usesDatabase: false,
      summary: 'The web console (index.html; /console/ too)',
      responses: [{ status: 200, description: 'the console page', contentType: 'text/html' }],
      async handler({ app, headers }) {
        if (!assets) throw notBuilt()
        return fileReply(app.config, assets.index, 'no-cache', headers['if-none-match'])
      },
    }),
    defineRoute({
      operationId: 'getConsoleAsset',
      method: 'get',
      path: '/console/assets/:file',
      auth: ['none'],
      access: 'none',
      tags,
      usesDatabase: false,
      summary: 'A built console asset, named by the hash of its content',
      params: Type.Object({ file: Type.String({ pattern: '^[A-Za-z0-9._-]{1,128}$' }) }),
      responses: [{ status: 200, description: 'the asset' }],
      async handler({ app, params, headers }) {
        if (!assets) throw notBuilt()
        const file = assets.assets.get(params.file)
        if (!file) throw new ServiceError('not_found', `no console asset named ${params.file}`)
        return fileReply(app.config, file, IMMUTABLE, headers['if-none-match'])
      },
    }),
    ...consoleSessionRoutes,
  ]
}
