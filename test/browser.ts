// Debian's Chromium driven by playwright-core, for the web app's tests: launch, sign in, and the
// axe-core accessibility check (run in the page through the DevTools protocol, which the page's CSP
// does not govern, so the app's own policy stays as it is served).
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { Test } from 'tap'
import { chromium, type Browser, type Page } from 'playwright-core'

export const CHROMIUM = '/usr/bin/chromium'
export const noChromium = !existsSync(CHROMIUM) && `needs Debian's chromium at ${CHROMIUM} (.ci/run installs it)`

// As the machine's notes say: without the background-networking flags Chromium keeps calling out.
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

export async function launch(t: Test): Promise<Browser> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS })
  t.teardown(() => browser.close())
  return browser
}

/**
 * A new page that collects script errors and CSP refusals (`problems`), and every error the console
 * shows (`consoleErrors`: a failed request is one, such as a wrong password's 401).
 */
export async function watchedPage(browser: Browser, viewport = { width: 1280, height: 900 }) {
  const context = await browser.newContext({ viewport, acceptDownloads: true })
  const page = await context.newPage()
  const problems: string[] = []
  const consoleErrors: string[] = []
  page.on('console', (message) => {
    if (message.type() !== 'error') return
    consoleErrors.push(message.text())
    if (/Content Security Policy|Refused to/.test(message.text())) problems.push(message.text())
  })
  page.on('pageerror', (error) => problems.push(error.message))
  return { page, problems, consoleErrors }
}

export async function signIn(page: Page, url: string, username: string, password: string) {
  await page.goto(`${url}/app/`)
  await page.getByLabel('Username').fill(username)
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('button', { name: 'Sign out' }).waitFor()
}

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

/** axe-core's serious and critical violations on the page as it is now: `rule: target…` lines. */
export async function seriousViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate('typeof axe !== "undefined"'))) await page.evaluate(AXE)
  const violations = (await page.evaluate('axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations)')) as Array<{
    id: string
    impact: string
    nodes: Array<{ target: string[] }>
  }>
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)
}
