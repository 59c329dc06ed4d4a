/** The exit codes of `alisio` (the user contract). */
export const ExitCode = {
  completed: 0,
  failed: 1,
  usage: 2,
  turnsExceeded: 3,
  cancelled: 130
} as const
