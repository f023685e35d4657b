// The data-entry page offline in Chromium against the real server (either engine): the network cut
// (context.setOffline), 21 values typed, the page reloaded without a network while the server is down
// (it loads from the service worker and still shows what waits), the server started again on the same
// port and data, the network back: the 20 new values are saved exactly once (one insert each in the
// datapoint history, even for a value whose answer was lost and sent again with the same
// Idempotency-Key), and the value another user changed meanwhile is shown as a conflict, not overwritten.
import t from 'tap'
import { join } from 'node:path'
import { noChromium, screenshotsDir, signIn, watchedPage, webApp } from './browser.js'
import { api } from './processes.js'

t.test('data entry offline, a reload without a network and a restarted server', { skip: noChromium }, async (t) => {
  const { server, stopped, browser, read, indicator, location } = await webApp(t)
  const send = async (method: string, path: string, body: unknown) => {
    const response = await api(server, path, { method, body: JSON.stringify(body) })
    return { status: response.status, body: (await response.json()) as Record<string, unknown> }
  }
  const [nid] = (await read('/campaign_type/?limit=0')).objects
  const campaign = (
    await send('POST', '/campaign/', { name: 'November 2016 - NID - OPV', campaign_type_id: nid.id, start_date: '2016-11-01', end_date: '2016-11-30' })
  ).body.id as number
  const clerk = (await send('POST', '/user/', { username: 'clerk', password: 'offline-entry-2016' })).body.id as number
  const [vaccinated, missed, access] = ['Children vaccinated', 'Children missed', 'Access challenged'].map((n) => indicator.get(n)!)
  // The one value that exists when the form is loaded: the clerk will type over it, and the admin change it meanwhile.
  const existing = await send('POST', '/campaign_datapoint/', {
    indicator_id: vaccinated,
    location_id: location.get('Ashford'),
    campaign_id: campaign,
    value: 1000,
  })
  t.equal(existing.status, 201, 'a value at Ashford before the form is loaded')

  const { page, problems } = await watchedPage(browser)
  await signIn(page, server.url, 'clerk', 'offline-entry-2016')
  await page.getByRole('link', { name: 'Data entry' }).click()
  await page.getByRole('combobox', { name: /^Campaign/ }).selectOption({ label: 'November 2016 - NID - OPV' })
  const cell = (indicatorName: string, place: string) => page.getByLabel(`${indicatorName} at ${place}`, { exact: true })
  await cell('Children vaccinated', 'Ashford').waitFor()
  t.equal(await cell('Children vaccinated', 'Ashford').inputValue(), '1,000', 'the existing value in the form')
  const districts = await page.locator('tbody th').allTextContents()
  t.same(districts, ['Ashford', 'Brindle', 'Coldwater', 'Dunmore', 'Eastwick', 'Fallow', 'Glimmer', 'Harrow', 'Ivydale'], 'the nine districts')
  // The service worker controls the page and holds what a reload needs (the page, its modules, its reads).
  await page.locator('section.data-entry[data-offline-ready="true"]').waitFor()
  t.ok(await page.evaluate(() => navigator.serviceWorker.controller !== null), 'the service worker controls the page')

  await page.context().setOffline(true)
  // Keyboard only: the vaccinated column from Ashford down (Ashford typed over its 1,000), the missed column, three flags.
  const typed: Record<string, [number, number]> = {}
  districts.forEach((d, i) => (typed[d] = [1100 + 10 * i, 20 + i]))
  await cell('Children vaccinated', 'Ashford').click()
  for (const d of districts) {
    await page.keyboard.press('Control+A')
    await page.keyboard.type(typed[d][0].toLocaleString('en'))
    await page.keyboard.press('Enter')
  }
  await cell('Children missed', 'Ashford').focus()
  for (const d of districts) {
    await page.keyboard.press('Control+A')
    await page.keyboard.type(String(typed[d][1]))
    await page.keyboard.press('Enter')
  }
  const flags: Record<string, number> = { Ashford: 1, Brindle: 0, Coldwater: 1 }
  await cell('Access challenged', 'Ashford').focus()
  for (const d of Object.keys(flags)) {
    await page.keyboard.press('Control+A')
    await page.keyboard.type(flags[d] ? 'Yes' : 'No')
    await page.keyboard.press('Enter')
  }
  const waiting = page.locator('p.entry-waiting')
  /** What the page says of the values waiting, once it says `text`, all of it (or after `ms`). */
  const waitingSays = async (text: string, ms = 10_000) => {
    await waiting
      .filter({ hasText: new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) })
      .waitFor({ timeout: ms })
      .catch(() => {})
    return waiting.textContent()
  }
  t.equal(await waitingSays('21 values wait to be sent'), '21 values wait to be sent', 'offline: the page says 21 values wait')
  t.equal(await page.locator('.entry-state', { hasText: 'Waiting to be sent' }).count(), 21, 'each typed cell says it waits')
  t.equal(await page.locator('[data-cell="Brindle/Percent missed"]').textContent(), '…', 'offline, the percent of a line whose values wait is not guessed')

  // Meanwhile another user changes the value the clerk typed over.
  const theirs = await send('PATCH', `/campaign_datapoint/${existing.body.id}/`, { value: 1050 })
  t.equal(theirs.status, 200, 'the admin changes Ashford’s value meanwhile')

  // The server goes down; the page is reloaded without a network: it loads from the service worker.
  const down = await stopped()
  await page.reload()
  await page
    .getByRole('heading', { name: 'Data entry' })
    .waitFor()
    .catch(async (e) => {
      t.comment(await page.locator('body').textContent())
      t.comment(JSON.stringify(await page.evaluate(async () => caches.keys())))
      throw e
    })
  // The campaign chosen before is still chosen: it is in the page's address.
  await cell('Children vaccinated', 'Brindle').waitFor()
  t.equal(
    await page.getByRole('combobox', { name: /^Campaign/ }).evaluate((select) => (select as HTMLSelectElement).selectedOptions[0]?.textContent),
    'November 2016 - NID - OPV',
    'reloaded: the campaign chosen before',
  )
  t.equal(await waitingSays('21 values wait to be sent'), '21 values wait to be sent', 'reloaded offline, from the service worker: 21 values still wait')
  t.equal(await page.locator('.offline-note').textContent(), '(offline)', 'the header says she is signed in offline')
  // The form fills its cells from the outbox once drawn: wait for it.
  await page.waitForFunction(() => (document.querySelector('[aria-label="Children vaccinated at Brindle"]') as HTMLInputElement | null)?.value !== '')
  t.equal(await cell('Children vaccinated', 'Brindle').inputValue(), '1,110', 'a waiting value shown in its cell after the reload')
  t.equal(await cell('Access challenged', 'Coldwater').inputValue(), 'Yes', 'a waiting flag shown after the reload')
  t.equal(await page.locator('.entry-state', { hasText: 'Waiting to be sent' }).count(), 21, 'each cell still says it waits')

  // The server starts again (same port, same data); the network comes back. The answer of the first
  // new value (Brindle's, after Ashford's) is lost on the way back: the page sends it again with the same Idempotency-Key.
  await down.start()
  const keys: string[] = []
  let lost = 0
  await page.context().route('**/api/v1/campaign_datapoint/**', async (route) => {
    const request = route.request()
    if (request.method() === 'GET') return route.fallback()
    keys.push((await request.headerValue('idempotency-key')) ?? '')
    const response = await route.fetch()
    if (keys.length === 2 && !lost++) return route.abort('connectionreset')
    return route.fulfill({ response })
  })
  await page.context().setOffline(false)
  // The page tries every 4 s; a loaded machine's restarted server may take several of them to answer.
  // Everything is sent; Ashford's value, changed meanwhile by someone else, is a conflict: not saved.
  t.equal(
    await waitingSays('1 value was not saved: its cell says why', 90_000),
    '1 value was not saved: its cell says why',
    'online again: every value is sent but the one in conflict',
  )
  const stillWaiting = page.locator('.entry-state', { hasText: 'Waiting to be sent' })
  await stillWaiting
    .first()
    .waitFor({ state: 'detached', timeout: 10_000 })
    .catch(() => {})
  t.equal(await stillWaiting.count(), 0, 'no cell says it waits any more')
  await page
    .locator('.offline-note')
    .waitFor({ state: 'detached', timeout: 10_000 })
    .catch(() => {})
  t.equal(await page.locator('.offline-note').count(), 0, 'online again: the header no longer says offline')
  t.equal(
    await page
      .locator('td', { has: cell('Children vaccinated', 'Brindle') })
      .locator('.entry-state')
      .textContent(),
    'Saved',
    'a sent value says it is saved',
  )
  const percent = page.locator('[data-cell="Brindle/Percent missed"]')
  await percent
    .filter({ hasText: '1.86 %' })
    .waitFor({ timeout: 10_000 })
    .catch(() => {})
  t.equal(await percent.textContent(), '1.86 %', 'once sent, the server’s percent of what was typed (21 of 1,131)')
  t.ok(lost >= 1 && keys.length === 22, `22 writes sent for 21 values: the lost answer's write sent again (${keys.length} sent)`)
  t.equal(keys[1], keys[2], 'the write resent after its lost answer carries the same Idempotency-Key')
  t.equal(new Set(keys).size, 21, 'every other write has a key of its own')

  // In the API: the 20 new values; Ashford's value is still the admin's.
  const stored = (
    await read(
      `/campaign_datapoint/?campaign__in=${campaign}&indicator__in=${vaccinated},${missed},${access}&location_id__in=${districts.map((d) => location.get(d)).join(',')}&limit=0`,
    )
  ).objects
  const byCell = new Map(stored.map((r) => [`${r.indicator_id}/${r.location_id}`, r.value]))
  for (const d of districts) {
    const id = location.get(d)
    t.equal(
      byCell.get(`${vaccinated}/${id}`),
      d === 'Ashford' ? 1050 : typed[d][0],
      `${d}: vaccinated ${d === 'Ashford' ? 'is still the other user’s' : 'saved'}`,
    )
    t.equal(byCell.get(`${missed}/${id}`), typed[d][1], `${d}: missed saved`)
  }
  for (const [d, v] of Object.entries(flags)) t.equal(byCell.get(`${access}/${location.get(d)}`), v, `${d}: access challenged saved`)

  // The datapoint history: one insert for each of the 20 new values, and at Ashford's value only the admin's change.
  const history = (await read(`/datapoint_history/?campaign_id=${campaign}&limit=0`)).objects
  const changes = history.filter((h) => h.user_id === clerk)
  t.equal(changes.length, 20, 'the clerk’s writes: 20 changes')
  t.ok(
    changes.every((h) => h.change === 'insert'),
    'each one an insert',
  )
  t.equal(new Set(changes.map((h) => `${h.indicator_id}/${h.location_id}`)).size, 20, 'one per value')
  t.same(
    history
      .filter((h) => h.location_id === location.get('Ashford') && h.indicator_id === vaccinated)
      .map((h) => [h.change, h.value_after, h.user_id === clerk]),
    [
      ['insert', 1000, false],
      ['update', 1050, false],
    ],
    'Ashford’s value: created, changed by the other user, not overwritten',
  )

  // The conflict, shown for the clerk to settle.
  const conflict = page.locator('td', { has: cell('Children vaccinated', 'Ashford') })
  await conflict.locator('.entry-state', { hasText: 'Changed by someone else since the form was loaded: 1,050 there now' }).waitFor()
  t.equal(await cell('Children vaccinated', 'Ashford').inputValue(), '1,100', 'the clerk’s value kept in the cell')
  t.equal(await cell('Children vaccinated', 'Ashford').getAttribute('aria-invalid'), 'true', 'the cell says it is not settled')
  t.ok(await conflict.getByRole('button', { name: 'Keep mine' }).isVisible(), 'keep mine offered')
  t.ok(await conflict.getByRole('button', { name: 'Take theirs' }).isVisible(), 'take theirs offered')
  await page.screenshot({ path: join(screenshotsDir(t), 'entry.png') })
  await conflict.getByRole('button', { name: 'Take theirs' }).click()
  await conflict.locator('.entry-state', { hasText: 'Saved' }).waitFor()
  t.equal(await waitingSays('Every value is sent'), 'Every value is sent', 'the conflict settled: every value is sent')
  t.equal(await cell('Children vaccinated', 'Ashford').inputValue(), '1,050', 'taking theirs shows the other user’s value')
  t.same(problems, [], 'no script error, no CSP refusal')
})
