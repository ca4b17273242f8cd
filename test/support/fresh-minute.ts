// Rate limits count in fixed windows (a UTC minute, a UTC day): a test that expects a count to
// run down starts early enough in a minute that its requests cannot straddle two windows.

/** Waits for the next minute when fewer than `needSeconds` are left in this one. */
export async function awaitFreshMinute(needSeconds: number): Promise<void> {
  const intoMinute = (Date.now() % 60_000) / 1000
  if (intoMinute > 60 - needSeconds) await new Promise((resolve) => setTimeout(resolve, (60 - intoMinute) * 1000 + 200))
}
