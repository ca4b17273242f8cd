// The service's lists are numbered pages (`page` from 1, `per_page` within each list's bounds),
// newest first where they are time-ordered. This walks them in order as one async sequence.

export interface PageQuery {
  page: number
  per_page: number
}

export interface PaginateOptions {
  /** Items per request (the list's bounds apply: 10 at least; 100 for devices, 1000 for deliveries and audit, 10000 for scan results). */
  perPage?: number
  /** The first page to read (default 1). */
  firstPage?: number
}

/**
 * Every item of a paginated list: `fetchPage` reads one page (merge the query into the call's
 * `params.query` and return the page's items); a page shorter than `perPage` is the last.
 * Items created while iterating a newest-first list shift later pages: pin the list with its
 * `from`/`to` window where it has one.
 */
export async function* paginate<Item>(
  fetchPage: (query: PageQuery) => Promise<readonly Item[]>,
  options: PaginateOptions = {},
): AsyncGenerator<Item, void, undefined> {
  const perPage = options.perPage ?? 100
  for (let page = options.firstPage ?? 1; ; page++) {
    const items = await fetchPage({ page, per_page: perPage })
    yield* items
    if (items.length < perPage) return
  }
}

/** All items of a paginated list in one array (for lists known to be small). */
export async function collectPages<Item>(fetchPage: (query: PageQuery) => Promise<readonly Item[]>, options?: PaginateOptions): Promise<Item[]> {
  const items: Item[] = []
  for await (const item of paginate(fetchPage, options)) items.push(item)
  return items
}
