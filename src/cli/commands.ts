// The CLI's commands, written once: program.ts builds the command line from it, reference.ts
// documents it (docs/cli.md). `summary`: the line `palmvein --help` lists; each command's module
// (loaded only when it runs or its help is asked for, so one command does not load them all)
// defines its options and longer description. `dataDirectory`: whether the command may create
// the data directory ('creates'), works only in one that exists ('existing': run elsewhere it
// would make a second ./data, with its own master key and token issuer), or needs none ('none').
import type { Command } from 'commander'

export interface CliCommand {
  name: string
  summary: string
  load: () => Promise<Command>
  dataDirectory: 'creates' | 'existing' | 'none'
}

export const COMMANDS: CliCommand[] = [
  { name: 'serve', summary: 'run the service', load: async () => (await import('./serve.js')).serveCommand(), dataDirectory: 'creates' },
  {
    name: 'migrate',
    summary: 'apply database migrations and exit',
    load: async () => (await import('./migrate.js')).migrateCommand(),
    dataDirectory: 'creates',
  },
  {
    name: 'token',
    summary: 'print an identity token from the local development issuer',
    load: async () => (await import('./token.js')).tokenCommand(),
    dataDirectory: 'existing',
  },
  { name: 'org', summary: 'create an organization with its admin', load: async () => (await import('./org.js')).orgCommand(), dataDirectory: 'existing' },
  {
    name: 'project',
    summary: "set a project's plan (the platform operator's action)",
    load: async () => (await import('./project.js')).projectCommand(),
    dataDirectory: 'existing',
  },
  {
    name: 'audit',
    summary: 'verify the audit trail, sign checkpoints, purge old records',
    load: async () => (await import('./audit.js')).auditCommand(),
    dataDirectory: 'existing',
  },
  {
    name: 'import',
    summary: 'import members with their palms from NDJSON',
    load: async () => (await import('./import.js')).importCommand(),
    dataDirectory: 'existing',
  },
  {
    name: 'export',
    summary: "print a project's members with their palm captures",
    load: async () => (await import('./export.js')).exportCommand(),
    dataDirectory: 'existing',
  },
  {
    name: 'dedup',
    summary: 'find members whose palms match each other',
    load: async () => (await import('./dedup.js')).dedupCommand(),
    dataDirectory: 'existing',
  },
  { name: 'keys', summary: 'rotate the master key', load: async () => (await import('./keys.js')).keysCommand(), dataDirectory: 'existing' },
  {
    name: 'cluster',
    summary: "the cluster's nodes and shards (PostgreSQL)",
    load: async () => (await import('./cluster.js')).clusterCommand(),
    dataDirectory: 'existing',
  },
  { name: 'backup', summary: 'back up the embedded database', load: async () => (await import('./backup.js')).backupCommand(), dataDirectory: 'none' },
  {
    name: 'restore',
    summary: 'restore a backup into an empty data directory',
    load: async () => (await import('./restore.js')).restoreCommand(),
    dataDirectory: 'creates',
  },
  {
    name: 'eval',
    summary: 'measure open-set 1:N accuracy with the real matcher',
    load: async () => (await import('./eval.js')).evalCommand(),
    dataDirectory: 'none',
  },
  {
    name: 'console',
    summary: 'print a one-time sign-in link to the web console',
    load: async () => (await import('./console.js')).consoleCommand(),
    dataDirectory: 'existing',
  },
  {
    name: 'terminal',
    summary: 'run a simulated palm terminal (Device-Com) against a service',
    load: async () => (await import('./terminal.js')).terminalCommand(),
    dataDirectory: 'none',
  },
  { name: 'capture', summary: 'print a synthetic palm capture', load: async () => (await import('./capture.js')).captureCommand(), dataDirectory: 'none' },
]
