// The HTTP transport a test project runs on (vitest.config.ts sets PALMVEIN_HTTP_SERVER per project).
export const transport = (process.env.PALMVEIN_HTTP_SERVER ?? 'auto') as 'uws' | 'node' | 'auto'

/** What /healthz says about the transport this project forces. */
export const transportLine = transport === 'node' ? /^http: node:http \(Node v\d+/m : transport === 'uws' ? /^http: uWebSockets\.js \d+\.\d+/m : /^http: /m
