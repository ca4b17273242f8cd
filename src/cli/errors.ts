// The CLI's expected failures: each ends the command with one line on stderr and exit 2, never a
// stack trace (main.ts). Anything else is a defect and keeps its stack.

/** The command line is wrong (a missing or malformed option): one line, the command's help hint. */
export class UsageError extends Error {}

/** The command cannot start (no such project, no environment of its own, a missing confirmation, a missing data directory). */
export class CommandRefused extends Error {}
