// Debian's Chromium driven by playwright-core, for the web app's tests: launch, sign in, and the
// axe-core accessibility check (run in the page through the DevTools protocol, which the page's CSP
// does not govern, so the app's own policy stays as it is served).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { chromium, type Browser, type Locator, type Page } from 'playwright-core'
import { buildApp } from '../app.js'
import { ensureAdmin } from '../lib/data/bootstrap.js'
import type { Database } from '../lib/data/database.js'
import { loadDemoData } from '../lib/engine/demo.js'
import { migratedDatabase } from './helper.js'
import { ADMIN_KEY, api, ROOT, type Server } from './processes.js'
import { axeViolations, CHROMIUM } from './chromium.js'

export { axeViolations, CHROMIUM }

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

let shared: Promise<Browser> | undefined

/**
 * This test process's Chromium, started by the first page file it runs and shared by the next ones
 * (a launch is about 2 CPU-s): the contexts a file opens are closed when it ends, the browser when the
 * process's tests end.
 */
async function launch(test: Test): Promise<Browser> {
  if (!shared) {
    const launching = chromium.launch({ executablePath: CHROMIUM, args: ARGS })
    shared = launching
    launching.then(
      (browser) => {
        browser.on('disconnected', () => {
          if (shared === launching) shared = undefined
        })
        t.teardown(() => browser.close())
      },
      () => {
        if (shared === launching) shared = undefined
      },
    )
  }
  const browser = await shared
  const before = new Set(browser.contexts())
  test.teardown(async () => {
    for (const context of browser.contexts()) if (!before.has(context)) await context.close()
  })
  return browser
}

/**
 * A new page that collects script errors and CSP refusals (`problems`), and every error the console
 * shows (`consoleErrors`: a failed request is one, such as a wrong password's 401).
 */
export async function watchedPage(browser: Browser, viewport = { width: 1280, height: 900 }, timezoneId?: string, locale?: string) {
  const context = await browser.newContext({ viewport, acceptDownloads: true, timezoneId, locale })
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

/** The demo's names → ids of one resource, read through the API as the admin key. */
export type Ids = Map<string, number>

/** What a page's test knows of the server: its address and the superuser's key. */
export type WebServer = Pick<Server, 'url' | 'admin'>

/**
 * The server as `npm start` runs it (the whole app, listening on a loopback port, a superuser made as
 * at a first start, the demo data loaded into the empty database), in this test process on its shared
 * database: a page's test pays no process start, no engine start and no model load of its own. The
 * start itself, as an operator runs it, is test/start.test.ts's.
 */
async function serveApp(database: Database, dataDir: string, port = 0) {
  const app = await buildApp({ database, logger: false, config: { DATA_DIR: dataDir, ADMIN_API_KEY: ADMIN_KEY, MAX_EVENT_LOOP_DELAY_MS: 0 } })
  try {
    await app.ready()
    await ensureAdmin(app.db.db, app.config, () => undefined)
    await loadDemoData(app.db.db)
    await app.listen({ host: '127.0.0.1', port })
  } catch (error) {
    // Not left listening on the shared database, which the next file resets.
    await app.close()
    throw error
  }
  const address = app.server.address()
  if (!address || typeof address !== 'object') throw new Error('the app is not listening on a port')
  const server: WebServer = { url: `http://127.0.0.1:${address.port}`, admin: () => ({ authorization: `ApiKey admin:${ADMIN_KEY}` }) }
  return { app, server, port: address.port }
}

/**
 * The server with the demo data on either engine, Chromium, and the demo's ids by name: what every
 * page's test starts from.
 */
export async function webApp(t: Test) {
  const dataDir = mkdtempSync(join(tmpdir(), 'rhizome-web-'))
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
  const database = await migratedDatabase()
  let running: Awaited<ReturnType<typeof serveApp>> | undefined = await serveApp(database, dataDir)
  const stop = async () => {
    const app = running?.app
    running = undefined
    await app?.close()
  }
  t.teardown(stop)
  const { server, port } = running
  /** Stops the server; `start()` starts it again on the same port and data, and waits until it is ready. */
  const stopped = async () => {
    await stop()
    return {
      start: async () => {
        running = await serveApp(database, dataDir, port)
        return running.server
      },
    }
  }
  const password = readFileSync(join(dataDir, 'admin-password'), 'utf8').trim()
  const read = async (path: string) => (await (await api(server, path)).json()) as { objects: Array<Record<string, unknown>> }
  const idsByName = async (path: string, field: string): Promise<Ids> => new Map((await read(path)).objects.map((o) => [o[field] as string, o.id as number]))
  const [indicator, campaign, location, dashboard] = await Promise.all([
    idsByName('/indicator/?limit=0', 'short_name'),
    idsByName('/campaign/?limit=0', 'name'),
    idsByName('/location/?limit=0', 'name'),
    idsByName('/dashboard/?limit=0', 'title'),
  ])
  const names = new Map([...location].map(([name, id]) => [id, name]))
  /** The API's value per location name for one indicator and campaign under a location selection, as the app writes whole numbers. */
  const apiValues = async (indicatorId: number, campaignId: number, selection: string) => {
    const rows = (await read(`/campaign_datapoint/?indicator__in=${indicatorId}&campaign__in=${campaignId}&${selection}`)).objects
    return Object.fromEntries(rows.map((r) => [names.get(r.location_id as number), (r.value as number).toLocaleString('en')]))
  }
  const browser = await launch(t)
  return {
    server,
    stopped,
    dataDir,
    password,
    browser,
    read,
    idsByName,
    apiValues,
    indicator,
    campaign,
    location,
    dashboard,
    march: campaign.get('March 2016 - NID - OPV')!,
  }
}

/** A chart's figure on the page, by its type. */
export const figure = (page: Page, type: string) => page.locator(`figure.chart[data-type="${type}"]`)

/**
 * Waits until `count` charts say they are drawn (a minute: a loaded 2-core machine draws five charts in
 * seconds, and more than 30 s was seen once); when they do not, says what each chart on the page shows.
 */
export async function chartsDrawn(page: Page, count: number) {
  try {
    await page.waitForFunction((n) => document.querySelectorAll('figure.chart[data-drawn="true"]').length === n, count, { timeout: 60_000 })
  } catch (error) {
    const figures = await page
      .locator('figure.chart')
      .evaluateAll((all) =>
        all.map((f) => `${(f as HTMLElement).dataset.type} drawn=${(f as HTMLElement).dataset.drawn}: ${f.textContent?.trim().slice(0, 120)}`),
      )
      .catch(() => [])
    throw new Error(`${count} charts drawn expected; on the page: ${figures.join(' | ') || 'none'}`, { cause: error })
  }
}

/** The rows of a chart's table view (opened if it is folded), as cell texts. */
export async function numbersOf(chart: Locator): Promise<string[][]> {
  const details = chart.locator('details.numbers')
  if ((await details.count()) && !(await details.getAttribute('open'))) await details.locator('summary').click()
  // Each cell's value: without what only a screen reader hears (its status) and its coverage line.
  return chart.locator('tbody tr').evaluateAll((rows) =>
    rows.map((row) =>
      [...row.children].map((cell) => {
        const copy = cell.cloneNode(true) as Element
        for (const extra of copy.querySelectorAll('.visually-hidden, .coverage')) extra.remove()
        return (copy.textContent ?? '').trim()
      }),
    ),
  )
}

/** A chart's table values once they equal `expected` (a chart redraws after a change), or as they are after 5 s. */
export async function settledValues(chart: Locator, expected: Record<string, string>, column = 2) {
  let values: Record<string, string> = {}
  for (const started = Date.now(); Date.now() - started < 5000; await new Promise((resolve) => setTimeout(resolve, 50))) {
    values = Object.fromEntries((await numbersOf(chart)).map((r) => [r[0], r[column]]))
    if (JSON.stringify(values) === JSON.stringify(expected)) break
  }
  return values
}

/** Checks one box of a group and unchecks the others. */
export async function checkOnly(page: Page, group: string, label: string) {
  const boxes = page.getByRole('group', { name: group })
  await boxes.getByLabel(label, { exact: true }).check()
  for (const box of await boxes.getByRole('checkbox').all()) {
    if ((await box.evaluate((input) => input.parentElement?.textContent?.trim())) !== label) await box.uncheck()
  }
}

/** Location name → the value in `column` of each row of a table view. */
export const tableValues = (rows: string[][], column = 2) => Object.fromEntries(rows.map((r) => [r[0], r[column]]))

/** axe at 1280 px and at 375 px on the page as it is: the violations of both, and anything wider than 375 px. */
export async function violationsAtBothWidths(page: Page): Promise<string[]> {
  const size = page.viewportSize() ?? { width: 1280, height: 900 }
  await page.setViewportSize({ width: 1280, height: 900 })
  const wide = await axeViolations(page)
  await page.setViewportSize({ width: 375, height: 800 })
  await page.waitForTimeout(100)
  const narrow = (await axeViolations(page)).map((v) => `375 px: ${v}`)
  // What sticks out, named by its tag, class and text, so that a failure says where to look.
  const overflow = await page.evaluate(() =>
    document.documentElement.scrollWidth > 375
      ? [...document.querySelectorAll('body *')]
          .filter((e) => e.getBoundingClientRect().right > 376 && !e.closest('.table-scroll'))
          .map((e) => `${e.tagName.toLowerCase()}.${e.className} “${(e.textContent ?? '').slice(0, 40)}” to ${Math.round(e.getBoundingClientRect().right)} px`)
          .slice(-3)
      : [],
  )
  await page.setViewportSize(size)
  return [...wide, ...narrow, ...overflow.map((e) => `375 px: wider than the screen: ${e}`)]
}

/**
 * Where a page's test writes its screenshots: WEB_APP_SCREENSHOTS (docs/web-app for the docs), else a
 * temporary directory removed afterwards, so that a plain run leaves the checkout as it was.
 */
export function screenshotsDir(t: Test) {
  const wanted = process.env.WEB_APP_SCREENSHOTS
  if (wanted) {
    const dir = join(ROOT, wanted)
    mkdirSync(dir, { recursive: true })
    return dir
  }
  const dir = mkdtempSync(join(tmpdir(), 'rhizome-shots-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** Picks a location in a location search: types the start of its name, then the match of that name. */
export async function pickLocation(page: Page, label: string | RegExp, name: string) {
  const box = page.getByRole('combobox', { name: label })
  await box.fill(name.slice(0, 4))
  await page.getByRole('option', { name: new RegExp(`(^| › )${name}$`) }).click()
}

/** A demo-sized campaign file in the demo's codes: one row per district code given. */
export function campaignFile(dir: string, name: string, column: string, values: Record<string, number>) {
  const path = join(dir, name)
  const lines = Object.entries(values).map(([code, v]) => `${code},March 2016 - NID - OPV,${v}`)
  writeFileSync(path, `geocode,campaign,${column}\n${lines.join('\n')}\n`)
  return path
}

/**
 * A chart's status legend as the page paints it: each status's name (the words before ":") → its
 * swatch's computed colour as #rrggbb, which the test compares with what the drawing paints.
 */
export async function legendColours(chart: Locator): Promise<Record<string, string>> {
  const items = await chart.locator('.status-legend li').evaluateAll((lis) =>
    lis.flatMap((li) => {
      const swatch = li.querySelector('.swatch')
      if (!swatch) return []
      const rgb = (getComputedStyle(swatch).backgroundColor.match(/\d+/g) ?? []).slice(0, 3).map(Number)
      const hex = `#${rgb.map((n) => n.toString(16).padStart(2, '0')).join('')}`
      return [[(li.textContent ?? '').split(':')[0].trim(), hex]]
    }),
  )
  return Object.fromEntries(items)
}

/** Hovers the middle of a part of a chart and returns the text of the chart's tooltip, lines joined by " / ". */
export async function tooltipAt(page: Page, type: string, part: string, index = 0) {
  await figure(page, type).locator(part).nth(index).scrollIntoViewIfNeeded()
  const box = (await figure(page, type).locator(part).nth(index).boundingBox())!
  await page.mouse.move(1, 1)
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2)
  const tip = figure(page, type).locator('.chart-tip')
  await tip.filter({ visible: true }).waitFor({ timeout: 3000 })
  return (await tip.locator('.tip-title, .tip-line').allTextContents()).join(' / ')
}
