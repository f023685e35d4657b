// Two people on one browser (one Chromium profile), against the real server (either engine): the
// data-entry outbox is bound to the user who typed each value. A superuser's values typed offline are
// not sent under the officer who signs in next (a district of the officer's, after the superuser's
// session ended without a sign-out), and are
// sent under her own name once she is back; an entry written into the outbox by hand (the officer's
// plant, for a district outside her province, in the superuser's name) is never sent; at sign-out the
// person is told what still waits and sends it first or discards it; once a session has ended, a page
// without a network shows nothing of it and the service worker answers none of its reads.
import t from 'tap'
import type { Page, Route } from 'playwright-core'
import { noChromium, signIn, watchedPage, webApp } from './browser.js'
import { api } from './processes.js'

t.test('two people on one browser: the outbox and the offline reads are bound to their user', { skip: noChromium }, async (t) => {
  const { server, browser, read, indicator, location, password } = await webApp(t)
  const send = async (method: string, path: string, body: unknown) => (await api(server, path, { method, body: JSON.stringify(body) })).json()
  const officer = (await send('POST', '/user/', { username: 'officer', password: 'north-march-2016' })) as { id: number }
  await send('POST', '/location_responsibility/', { user_id: officer.id, top_lvl_location_id: location.get('Northmarch') })
  const admin = (await read('/user/?username=admin')).objects[0].id as number
  const [nid] = (await read('/campaign_type/?limit=0')).objects
  const campaign = (
    await send('POST', '/campaign/', { name: 'December 2016 - NID - OPV', campaign_type_id: nid.id, start_date: '2016-12-01', end_date: '2016-12-31' })
  ).id as number
  const vaccinated = indicator.get('Children vaccinated')!
  /** The stored value of Children vaccinated at `place` in the new campaign, and who wrote its history. */
  const stored = async (place: string) => {
    const rows = (await read(`/campaign_datapoint/?indicator__in=${vaccinated}&campaign__in=${campaign}&location_id__in=${location.get(place)}`)).objects
    const history = (await read(`/datapoint_history/?campaign_id=${campaign}&location_id=${location.get(place)}&limit=0`)).objects
    return { value: rows[0]?.value ?? null, writers: [...new Set(history.map((h) => h.user_id))] }
  }

  const { page, problems } = await watchedPage(browser)
  const context = page.context()
  const cell = (place: string) => page.getByLabel(`Children vaccinated at ${place}`, { exact: true })
  const waiting = page.locator('p.entry-waiting')
  const openEntry = async () => {
    await page.getByRole('link', { name: 'Data entry' }).click()
    await page.getByRole('combobox', { name: /^Campaign/ }).selectOption({ label: 'December 2016 - NID - OPV' })
    await page.locator('section.data-entry[data-offline-ready="true"]').waitFor()
  }
  const type = async (place: string, value: string) => {
    await cell(place).click()
    await page.keyboard.press('Control+A')
    await page.keyboard.type(value)
    await page.keyboard.press('Enter')
  }
  /**
   * Waits until the outbox in IndexedDB holds `count` entries: the page says a value waits as soon as
   * it is typed, a moment before the outbox has it (a navigation in that moment would lose it).
   */
  const outboxHolds = (count: number) =>
    page.waitForFunction(
      (count) =>
        new Promise<boolean>((resolve) => {
          const request = indexedDB.open('rhizome-entry', 1)
          request.onsuccess = () => {
            const counted = request.result.transaction('outbox').objectStore('outbox').count()
            counted.onsuccess = () => resolve(counted.result === count)
          }
          request.onerror = () => resolve(false)
        }),
      count,
    )
  /** Two rounds of the page's sending (at once, then every 4 s) after the grid is shown. */
  const sendingRounds = () => page.waitForTimeout(9_000)
  const signOut = (p: Page) => p.getByRole('button', { name: 'Sign out' }).click()

  // 1. The superuser types a value offline; her session then ends without a sign-out (its cookie gone).
  await signIn(page, server.url, 'admin', password)
  await openEntry()
  await context.setOffline(true)
  await type('Coldwater', '777')
  await waiting.filter({ hasText: '1 value waits to be sent' }).waitFor()
  await outboxHolds(1)
  await context.clearCookies()
  await context.setOffline(false)
  await page.goto(`${server.url}/app/`)
  await page.getByLabel('Username').waitFor()

  // The officer signs in on the same browser and opens data entry: the superuser's value is neither shown nor sent.
  await signIn(page, server.url, 'officer', 'north-march-2016')
  await openEntry()
  await sendingRounds()
  t.equal(await waiting.textContent(), 'Every value is sent', 'the officer sees no value of the superuser’s waiting')
  t.same(await stored('Coldwater'), { value: null, writers: [] }, 'the superuser’s value (in the officer’s province) was not sent under her session')

  // 2. The officer plants two entries for Dunmore (outside her province) by hand: in the superuser's
  // name and in her own, with a seal she cannot make. She signs out: nothing of hers waits, no question.
  const planted = await page.evaluate(
    ({ admin, officer, campaign, vaccinated, dunmore }) =>
      new Promise<number>((resolve, reject) => {
        const request = indexedDB.open('rhizome-entry', 1)
        request.onsuccess = () => {
          const transaction = request.result.transaction('outbox', 'readwrite')
          const store = transaction.objectStore('outbox')
          for (const user_id of [admin, officer]) {
            store.add({
              resource: 'campaign_datapoint',
              location_id: dunmore,
              indicator_id: vaccinated,
              campaign_id: campaign,
              value: 13,
              row_id: null,
              etag: null,
              user_id,
              key: crypto.randomUUID(),
              state: 'waiting',
              seal: 'ab'.repeat(32),
            })
          }
          const count = store.count()
          transaction.oncomplete = () => resolve(count.result)
          transaction.onerror = () => reject(transaction.error)
        }
      }),
    { admin, officer: officer.id, campaign, vaccinated, dunmore: location.get('Dunmore')! },
  )
  t.equal(planted, 3, 'the outbox holds the superuser’s value and the two planted entries')
  await signOut(page)
  await page.getByLabel('Username').waitFor()

  // 3. The superuser signs in again: her own value is sent under her name, the planted ones never.
  await signIn(page, server.url, 'admin', password)
  await openEntry()
  await waiting.filter({ hasText: 'Every value is sent' }).waitFor({ timeout: 20_000 })
  await sendingRounds()
  t.same(await stored('Coldwater'), { value: 777, writers: [admin] }, 'her value is sent under her own session')
  t.same(await stored('Dunmore'), { value: null, writers: [] }, 'the planted 13 is never sent')

  // 4. At sign-out, what still waits is said: sent first (the network back), or discarded.
  await context.setOffline(true)
  await type('Ashford', '4321')
  await waiting.filter({ hasText: '1 value waits to be sent' }).waitFor()
  await outboxHolds(3) // hers, and the two planted that are never sent
  await signOut(page)
  const question = page.getByRole('alertdialog')
  t.equal(await question.getByRole('heading').textContent(), '1 value you typed has not reached the server', 'sign-out says what waits')
  await question.getByRole('button', { name: 'Send them, then sign out' }).click()
  await question.getByRole('alert').waitFor()
  t.match(
    await question.getByRole('alert').textContent(),
    /^No network: the values wait on this browser\. Send them once it is back\.$/,
    'offline: said at once that the value cannot be sent, she stays signed in',
  )
  // The network back, the data entry page sends it: the question follows the outbox and goes.
  await context.setOffline(false)
  const allSent = page.getByRole('status').filter({ hasText: 'Every value you typed has reached the server: you may sign out.' })
  await allSent.waitFor({ timeout: 20_000 }).catch(() => {})
  t.ok(await allSent.isVisible(), 'online again: the value sent, the sign-out question says so instead of asking')
  t.equal(await question.count(), 0, 'and no longer counts a value the server holds')
  await signOut(page)
  await page.getByLabel('Username').waitFor()
  t.same(await stored('Ashford'), { value: 4321, writers: [admin] }, 'sent first, then signed out')

  // Discarded (still offline: the sign-out itself waits for the network): gone from the outbox, never sent.
  await signIn(page, server.url, 'admin', password)
  // A discard and a sending that start together (the network back as she chose to discard): nothing
  // of what she discarded is sent.
  const outboxModule = '/app/outbox.js'
  await page.waitForFunction(async (url) => (await import(url)).outboxReady(), outboxModule)
  const entry = {
    resource: 'campaign_datapoint',
    indicator_id: vaccinated,
    location_id: location.get('Brindle'),
    campaign_id: campaign,
    value: 555,
    row_id: null,
  }
  const raced = await page.evaluate(
    async ({ url, entry }) => {
      const outbox = await import(url)
      await outbox.enqueue(entry)
      let answered = 0
      await Promise.all([outbox.discardMine(), outbox.flush(() => answered++)])
      return { answered, left: (await outbox.entries()).length }
    },
    { url: outboxModule, entry },
  )
  t.same(raced, { answered: 0, left: 0 }, 'a discard wins over a sending that starts with it')
  // Two sendings started together (the sign-out's and the data entry page's, when a cell is left for
  // the Sign out button): one run, and each caller hears its answers, so the page's cell says Saved.
  const heard = await page.evaluate(
    async ({ url, entry }) => {
      const outbox = await import(url)
      await outbox.enqueue(entry)
      const counts = [0, 0]
      await Promise.all([outbox.flush(() => counts[0]++), outbox.flush(() => counts[1]++)])
      return counts
    },
    { url: outboxModule, entry: { ...entry, location_id: location.get('Harrow'), value: 556 } },
  )
  t.same(heard, [1, 1], 'both callers of a joined sending hear its answer')
  t.same(await stored('Harrow'), { value: 556, writers: [admin] }, 'sent once')
  await openEntry()
  await context.setOffline(true)
  await type('Brindle', '999')
  await waiting.filter({ hasText: '1 value waits to be sent' }).waitFor()
  await outboxHolds(3)
  await signOut(page)
  await page.getByRole('button', { name: 'Discard them and sign out' }).click()
  await page.getByRole('alert').filter({ hasText: 'No network: sign out once it is back.' }).waitFor()
  t.equal(
    await page.getByRole('alert').filter({ hasText: 'No network' }).textContent(),
    'Your values were discarded. No network: sign out once it is back.',
    'offline, a discard says the values are gone and the sign-out waits for the network',
  )
  await waiting
    .filter({ hasText: 'Every value is sent' })
    .waitFor({ timeout: 5000 })
    .catch(() => {})
  t.equal(await waiting.textContent(), 'Every value is sent', 'the page no longer says a discarded value waits')
  t.equal(await cell('Brindle').inputValue(), '', 'its cell shows the server’s value again (none)')
  await context.setOffline(false)
  await sendingRounds()
  await signOut(page)
  await page.getByLabel('Username').waitFor()
  await signIn(page, server.url, 'admin', password)
  await openEntry()
  await sendingRounds()
  t.same(await stored('Brindle'), { value: null, writers: [] }, 'a discarded value is never sent')

  // Signed out in another tab: this tab asks again at once, and shows the sign-in form, not her grid.
  const other = await context.newPage()
  await other.goto(`${server.url}/app/`)
  await other.getByRole('button', { name: 'Sign out' }).click()
  await other.getByLabel('Username').waitFor()
  await page.getByLabel('Username').waitFor({ timeout: 10_000 })
  t.pass('a sign-out in another tab signs this one out')
  await other.close()
  await signIn(page, server.url, 'admin', password)
  await openEntry()

  // A value typed without Enter or Tab when Sign out is pressed: leaving the cell commits it, and the
  // sign-out counts it. Online it is sent first; offline the sign-out asks.
  const typeOnly = async (place: string, value: string) => {
    await cell(place).click()
    await page.keyboard.press('Control+A')
    await page.keyboard.type(value)
  }
  await typeOnly('Coldwater', '321')
  // Its sending held back a moment: the button says the sign-out is under way, and takes no second press.
  const held = (route: Route) => setTimeout(() => route.continue().catch(() => {}), 3000)
  await page.route('**/api/v1/campaign_datapoint/**', held)
  await signOut(page)
  const busy = page.getByRole('button', { name: 'Signing out…' })
  await busy.waitFor({ timeout: 5000 })
  t.same(
    [await busy.isDisabled(), await busy.getAttribute('aria-busy')],
    [true, 'true'],
    'while the values are sent first, Sign out says so, busy and disabled',
  )
  await page.getByLabel('Username').waitFor()
  await page.unroute('**/api/v1/campaign_datapoint/**', held)
  t.same(await stored('Coldwater'), { value: 321, writers: [admin] }, 'online: a value typed without Enter is sent before the sign-out')
  await signIn(page, server.url, 'admin', password)
  await openEntry()
  await context.setOffline(true)
  await typeOnly('Coldwater', '322')
  await signOut(page)
  /** The sign-out's question, once it is asked within `timeout` (`otherwise` if it never is). */
  const questionAsked = async (timeout: number, otherwise: string) => {
    const asked = page.getByRole('alertdialog')
    await asked.waitFor({ timeout }).catch(() => {})
    return asked
      .getByRole('heading')
      .textContent()
      .catch(() => otherwise)
  }
  t.equal(await questionAsked(5000, 'signed out'), '1 value you typed has not reached the server', 'offline: the sign-out asks about it')
  await context.setOffline(false)
  await page.getByText('Every value you typed has reached the server: you may sign out.').waitFor()
  t.same(await stored('Coldwater'), { value: 322, writers: [admin] }, 'sent once the network is back')
  // Online, but the server never answers the sending: after ten seconds the sign-out asks her instead.
  const stalled: Route[] = []
  const stall = (route: Route) => void stalled.push(route)
  await page.route('**/api/v1/campaign_datapoint/**', stall)
  await typeOnly('Coldwater', '323')
  await signOut(page)
  t.equal(
    await questionAsked(20_000, 'still signing out'),
    '1 value you typed has not reached the server',
    'a sending that never ends: the sign-out asks after its time limit',
  )
  await page.unroute('**/api/v1/campaign_datapoint/**', stall)
  for (const route of stalled) await route.continue().catch(() => {})
  await page.getByText('Every value you typed has reached the server: you may sign out.').waitFor({ timeout: 20_000 })
  t.same(await stored('Coldwater'), { value: 323, writers: [admin] }, 'the held sending arrives once answered')
  await signOut(page)
  await page.getByLabel('Username').waitFor()
  await signIn(page, server.url, 'admin', password)
  await openEntry()

  // 5. Offline while her session may still be alive: the page reloads as hers (data entry works on);
  // once it has surely ended (an hour unused), it shows nothing of hers, and no read of hers is answered.
  await context.setOffline(true)
  await page.reload()
  await page.getByRole('heading', { name: 'Data entry' }).waitFor()
  t.match(await page.locator('p.who').textContent(), /Signed in as admin \(offline\)/, 'offline, within her session: the page is hers')
  const usersRead = () =>
    page.evaluate(() =>
      fetch('/api/v1/user/?fields=id,username&limit=0').then(
        (r) => r.status,
        () => 'no answer',
      ),
    )
  t.equal(await usersRead(), 200, 'her list of users answered from the cache meanwhile')
  await page.clock.setSystemTime(Date.now() + 2 * 3_600_000)
  await page.reload()
  await page.getByLabel('Username').waitFor()
  t.notOk(await page.getByText('Signed in as').count(), 'two hours later, offline: nobody is shown as signed in')
  t.equal(await usersRead(), 'no answer', 'no read of hers is answered from the cache')
  t.same(await page.evaluate(async () => (await caches.keys()).filter((name) => name.startsWith('rhizome-api:'))), [], 'her reads are deleted from the browser')
  t.same(problems, [], 'no script error')
})
