// What a page test and a benchmark both need of Chromium, without tap: test/browser.ts re-exports it
// for the tests, and bench/ imports it directly (importing tap starts a TAP run, whose 30 s timeout
// ends a benchmark).
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { Page } from 'playwright-core'

export const CHROMIUM = '/usr/bin/chromium'

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

/** axe-core's violations on the page as it is now, of any impact: `impact rule: target…` lines. */
export async function axeViolations(page: Page): Promise<string[]> {
  // Every page of the app has one h1: a page still loading its view (right after signing in) has none yet.
  await page.locator('h1').first().waitFor()
  if (!(await page.evaluate('typeof axe !== "undefined"'))) await page.evaluate(AXE)
  const violations = (await page.evaluate('axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations)')) as Array<{
    id: string
    impact: string
    nodes: Array<{ target: string[] }>
  }>
  return violations.map((v) => `${v.impact} ${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)
}
