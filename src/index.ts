// palmvein as a library: the service's composition root and configuration.
// The matcher is its own package, @palmvein/matcher (packages/matcher).
export { start, type Service, type StartOptions } from './server.js'
export { loadConfig, type Config } from './config.js'
