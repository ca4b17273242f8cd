// A database of its own on a PostgreSQL server, for one benchmark run: created empty, dropped
// (with any sessions still on it) at the end.
import postgres from 'postgres'

/** Creates `name` on the server of `serverUrl`; returns its URL and `drop()`. */
export async function scratchDatabase(serverUrl, name) {
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} })
  await admin.unsafe(`CREATE DATABASE ${name}`)
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    async drop() {
      await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {})
      await admin.end({ timeout: 5 })
    },
  }
}
