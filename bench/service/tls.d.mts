// Types of tls.mjs for the TypeScript tests (test/webhooks/receivers.ts).
export function selfSignedCertificate(directory: string, names: string[], certFile?: string, keyFile?: string): { certFile: string; keyFile: string }
export function benchTls(directory: string, env?: NodeJS.ProcessEnv): Promise<{ serviceEnv: Record<string, string>; caFile: string } | null>
