// The web app's sign-in in Chromium against the real server (either engine): a wrong password, a busy button, a
// session cookie that survives a reload and dies at sign-out, and cross-site requests refused.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import type { Route } from 'playwright-core'
import { noChromium, axeViolations, signIn, violationsAtBothWidths, watchedPage, webApp } from './browser.js'

t.test('sign-in and cross-site requests in Chromium', { skip: noChromium }, async (t) => {
  const { server, password, browser, read, march } = await webApp(t)

  await t.test('sign-in: a wrong password says so and opens no session; the right one shows the dashboards', async (t) => {
    const { page, problems, consoleErrors } = await watchedPage(browser)
    const loaded = await page.goto(`${server.url}/app/`)
    t.match(
      loaded?.headers()['content-security-policy'],
      /script-src 'self' 'sha256-[A-Za-z0-9+/=]+'; style-src 'self';/,
      'a CSP without unsafe-inline: the import map allowed by its hash',
    )
    await page.getByRole('heading', { name: 'Sign in' }).waitFor()
    t.same(consoleErrors, [], 'asking who is signed in before anyone is logs no error (204, not 401)')
    await page.getByLabel('Username').fill('admin')
    await page.getByLabel('Password').fill('not the password')
    await page.getByRole('button', { name: 'Sign in' }).click()
    t.equal(await page.getByRole('alert').textContent(), 'Wrong username or password')
    t.notOk(
      (await page.context().cookies()).some((c) => c.name === 'rhizome_session'),
      'no session',
    )
    t.same(await violationsAtBothWidths(page), [], 'axe: the sign-in page at 1280 and 375 px')

    // While the server checks the password, the button says so and takes no second click.
    const slowly = async (route: Route) => {
      if (route.request().method() === 'POST') await new Promise((resolve) => setTimeout(resolve, 1000))
      await route.continue()
    }
    await page.route('**/api/v1/session/', slowly)
    await page.getByLabel('Password').fill(password)
    await page.getByRole('button', { name: 'Sign in' }).click()
    t.ok(await page.getByRole('button', { name: 'Signing in…' }).isDisabled(), 'a busy state: the button says so and is disabled')
    t.equal(await page.locator('form.sign-in').getAttribute('aria-busy'), 'true')
    await page.getByRole('link', { name: 'Campaign overview' }).waitFor()
    await page.unroute('**/api/v1/session/', slowly)
    t.ok(await page.getByRole('heading', { name: 'Dashboards' }).isVisible(), 'the dashboards list, with the demo dashboard')
    const [cookie] = (await page.context().cookies()).filter((c) => c.name === 'rhizome_session')
    t.match(cookie, { httpOnly: true, sameSite: 'Lax', secure: false })
    t.same(await axeViolations(page), [], 'axe: the dashboards list')
    await page.reload()
    await page.getByRole('link', { name: 'Campaign overview' }).waitFor()
    t.pass('the session survives a reload')

    // An address naming no page says so, in words a person reads, with a way back.
    for (const hash of ['#/dashboard/abc', '#/chart/x1', '#/nowhere']) {
      await page.goto(`${server.url}/app/${hash}`)
      await page.getByRole('heading', { level: 1, name: 'Page not found' }).waitFor()
      t.notMatch(await page.locator('main').textContent(), /Invalid id|null/, `${hash}: no API message`)
      t.ok(await page.getByRole('link', { name: 'Back to the dashboards' }).isVisible())
    }
    t.same(await violationsAtBothWidths(page), [], 'axe: the not-found page at 1280 and 375 px')
    await page.getByRole('link', { name: 'Back to the dashboards' }).click()
    await page.getByRole('link', { name: 'Campaign overview' }).waitFor()

    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByRole('heading', { name: 'Sign in' }).waitFor()
    const withOldCookie = await fetch(`${server.url}/api/v1/campaign/`, { headers: { cookie: `rhizome_session=${cookie.value}` } })
    t.equal(withOldCookie.status, 401, 'the API refuses the cookie after sign-out')
    t.same(problems, [], 'no script error and no CSP violation in the console')
  })

  await t.test('cross-site: a form POST with the cookie and a link to a pipeline step are refused', async (t) => {
    const { page } = await watchedPage(browser)
    await signIn(page, server.url, 'admin', password)
    const attacker = createServer((_request, response) => {
      response.setHeader('content-type', 'text/html')
      response.end(`<form method="post" action="${server.url}/api/v1/dashboard/"><input name="title" value="Forged"><button>Post</button></form>
        <a href="${server.url}/api/v1/agg_refresh/?campaign_id=${march}">Run</a>`)
    })
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve))
    t.teardown(() => attacker.close())
    // localhost and 127.0.0.1 are different sites to the browser.
    await page.goto(`http://localhost:${(attacker.address() as AddressInfo).port}/`)
    const [posted] = await Promise.all([page.waitForResponse(`${server.url}/api/v1/dashboard/`), page.getByRole('button', { name: 'Post' }).click()])
    t.ok([401, 403].includes(posted.status()), `the forged POST refused (${posted.status()})`)
    t.equal((await read('/dashboard/?title=Forged')).objects.length, 0, 'nothing written')
    await page.goto(`http://localhost:${(attacker.address() as AddressInfo).port}/`)
    const [ran] = await Promise.all([page.waitForResponse((r) => r.url().includes('/agg_refresh/')), page.getByRole('link', { name: 'Run' }).click()])
    t.equal(ran.status(), 403, 'a cross-site link to a pipeline step, cookie sent (Lax), refused')
    t.match(await ran.json(), { code: 'CROSS_SITE_REFUSED' })
  })
})
