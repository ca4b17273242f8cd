// What the console's browser tests share: Debian's Chromium through playwright-core (no browser
// download), a page whose errors are collected (the console must print none), and an axe-core scan
// that fails on any serious or critical violation and leaves a screenshot in test-output/console/.
import fs from 'node:fs'
import path from 'node:path'
import { AxeBuilder } from '@axe-core/playwright'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { expect } from 'vitest'

export const SCREENSHOTS = path.resolve('test-output/console')

export interface ConsoleBrowser {
  browser: Browser
  context: BrowserContext
  page: Page
  /** Every uncaught exception and console error of the console's pages (not another origin's, e.g. an OpenID provider's), with where it came from. */
  errors: string[]
  /** axe on the page as it is now; a screenshot named `name`. */
  scan(name: string): Promise<void>
  close(): Promise<void>
}

/** `origin`: the service's; errors of pages on other origins (an OpenID provider's sign-in page) are not the console's. */
export async function openConsoleBrowser(origin: string): Promise<ConsoleBrowser> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true })
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true })
  const context = await browser.newContext({ viewport: { width: 1200, height: 800 } })
  const page = await context.newPage()
  const errors: string[] = []
  const ours = () => new URL(page.url()).origin === origin
  page.on('pageerror', (error) => {
    if (ours()) errors.push(`pageerror: ${error.message}`)
  })
  page.on('console', (message) => {
    if (message.type() === 'error' && ours()) errors.push(`${message.text()} at ${message.location().url}`)
  })
  return {
    browser,
    context,
    page,
    errors,
    async scan(name) {
      const { violations } = await new AxeBuilder({ page }).analyze()
      const grave = violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
      expect(
        grave.map((violation) => `${violation.id}: ${violation.help} (${violation.nodes.map((node) => node.target.join(' ')).join(', ')})`),
        name,
      ).toEqual([])
      await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true })
    },
    close: () => browser.close(),
  }
}
