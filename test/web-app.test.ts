// The web app at /app/ in a real browser: Debian's Chromium driven by playwright-core, against the real
// server (`node cli/start.mjs`, embedded database, demo data). .ci/run installs Chromium.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { chromium } from 'playwright-core'
import { startServer, until200 } from './processes.js'

const CHROMIUM = '/usr/bin/chromium'
const skip =
  (!existsSync(CHROMIUM) && `needs Debian's chromium at ${CHROMIUM} (.ci/run installs it)`) ||
  (!!process.env.DATABASE_URL && 'the demo data: embedded database only')
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

t.test('sign in at /app/: a wrong password says so and opens no session; the right one shows the dashboards; sign-out ends it', { skip }, async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'rhizome-web-'))
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
  const server = await startServer(t, { DATA_DIR: dataDir, DATABASE_URL: '' })
  await until200(server, '/health/ready')
  const password = readFileSync(join(dataDir, 'admin-password'), 'utf8').trim()

  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS })
  t.teardown(() => browser.close())
  const page = await browser.newPage()
  const problems: string[] = []
  // A 401 of "who is signed in?" before sign-in is logged by the browser too: only refusals by the CSP count.
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content Security Policy|Refused to/.test(message.text())) problems.push(message.text())
  })
  page.on('pageerror', (error) => problems.push(error.message))

  const loaded = await page.goto(`${server.url}/app/`)
  t.match(loaded?.headers()['content-security-policy'], /script-src 'self'; style-src 'self'/, 'a CSP without unsafe-inline')
  await page.getByLabel('Username').fill('admin')
  await page.getByLabel('Password').fill('not the password')
  await page.getByRole('button', { name: 'Sign in' }).click()
  t.equal(await page.getByRole('alert').textContent(), 'Wrong username or password')
  t.notOk(
    (await page.context().cookies()).some((c) => c.name === 'rhizome_session'),
    'no session',
  )

  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Sign in' }).click()
  // The heading comes first, the list once the API answered: wait for the dashboard itself.
  await page.getByText('Campaign overview').waitFor()
  t.ok(await page.getByRole('heading', { name: 'Dashboards' }).isVisible(), 'the dashboards list, with the demo dashboard')
  const [cookie] = (await page.context().cookies()).filter((c) => c.name === 'rhizome_session')
  t.match(cookie, { httpOnly: true, sameSite: 'Lax', secure: false })

  await page.reload()
  await page.getByRole('heading', { name: 'Dashboards' }).waitFor()
  t.pass('the session survives a reload')

  await page.getByRole('button', { name: 'Sign out' }).click()
  await page.getByRole('heading', { name: 'Sign in' }).waitFor()
  const withOldCookie = await fetch(`${server.url}/api/v1/session/`, { headers: { cookie: `rhizome_session=${cookie.value}` } })
  t.equal(withOldCookie.status, 401, 'the API refuses the cookie after sign-out')
  t.same(problems, [], 'no script error and no CSP violation in the console')
})
