/** How often the operations page's live panels ask again while the page is visible (the browser test waits on it). */
export const REFRESH_MS = 5_000
