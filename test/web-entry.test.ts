// The data-entry page in Chromium against the real server (either engine): a district officer limited
// to Northmarch enters a campaign's values for her three districts by keyboard, sees the calculated
// percent follow as she types, a value flagged by a bound, the values in the API and its province's
// total, and on her dashboard; the page offers only her locations. axe at 1280 and 375 px, English and French.
import t from 'tap'
import { figure, noChromium, settledValues, signIn, violationsAtBothWidths, watchedPage, webApp } from './browser.js'
import { api } from './processes.js'

t.test('data entry in Chromium', { skip: noChromium }, async (t) => {
  const { server, browser, read, indicator, location, campaign, march, dashboard } = await webApp(t)
  const post = async (path: string, body: unknown) => (await api(server, path, { method: 'POST', body: JSON.stringify(body) })).json()
  const officer = (await post('/user/', { username: 'officer', password: 'north-march-2016' })) as { id: number }
  await post('/location_responsibility/', { user_id: officer.id, top_lvl_location_id: location.get('Northmarch') })
  // Children missed is plausible from 0 to 5,000: more is flagged.
  await post('/indicator_bound/', { indicator_id: indicator.get('Children missed'), mn_val: 0, mx_val: 5000, bound_name: 'plausible' })

  const { page, problems } = await watchedPage(browser)
  await signIn(page, server.url, 'officer', 'north-march-2016')
  await page.getByRole('link', { name: 'Data entry' }).click()
  await page.getByRole('heading', { name: 'Data entry' }).waitFor()
  await page.getByRole('combobox', { name: /^Campaign/ }).selectOption({ label: 'March 2016 - NID - OPV' })
  const cell = (indicatorName: string, place: string) => page.getByLabel(`${indicatorName} at ${place}`, { exact: true })
  await cell('Children vaccinated', 'Ashford').waitFor()
  t.same(await page.locator('tbody th').allTextContents(), ['Ashford', 'Brindle', 'Coldwater'], 'her three districts, and nothing outside Northmarch')

  // Keyboard only: type, Enter moves down the column and selects the value there, so what is typed
  // replaces it (each district holds the demo's values); the percent follows what is typed.
  await cell('Children vaccinated', 'Ashford').click()
  await page.keyboard.press('Control+A')
  const typed: Record<string, [number, number]> = { Ashford: [900, 100], Brindle: [1800, 200], Coldwater: [950, 50] }
  for (const [place, [vaccinated]] of Object.entries(typed)) {
    await page.keyboard.type(String(vaccinated))
    await page.keyboard.press('Enter')
    t.pass(`${place}: vaccinated typed`)
  }
  await cell('Children missed', 'Ashford').focus()
  for (const [, [, missed]] of Object.entries(typed)) {
    await page.keyboard.type(String(missed))
    if (missed === 100)
      t.equal(await page.locator('[data-cell="Ashford/Percent missed"]').textContent(), '…', 'while a value is typed, its line’s percent waits for the server')
    await page.keyboard.press('Enter')
  }
  // The last value, the moment it is entered, is said to be on its way, not yet in the browser's outbox.
  const lastState = page.locator(`#cell-${location.get('Coldwater')}-${indicator.get('Children missed')}-state`)
  t.match(await lastState.textContent(), /^(Saving…|Waiting to be sent|Saved)$/, 'the last value entered is said to be on its way at once')
  await page.getByRole('status').filter({ hasText: 'Every value is sent' }).waitFor()
  t.equal(await lastState.textContent(), 'Saved', 'every value is sent only when the last one is saved')
  const calculatedCell = (place: string, name: string) => page.locator(`[data-cell="${place}/${name}"]`)
  /** What a calculated cell shows once it shows `text` (or after 10 s). */
  const shows = async (place: string, name: string, text: string) => {
    await calculatedCell(place, name)
      .filter({ hasText: text })
      .waitFor({ timeout: 10_000 })
      .catch(() => {})
    return calculatedCell(place, name).textContent()
  }
  t.equal(await shows('Ashford', 'Percent missed', '10 %'), '10 %', 'saved: the server’s percent, read again')

  // Brindle holds its own Children targeted (4,000, not the 2,000 its parts sum to): the page shows
  // the server's values, not a sum of its own, before and after Brindle's next value.
  const targeted = await api(server, '/campaign_datapoint/', {
    method: 'POST',
    body: JSON.stringify({ indicator_id: indicator.get('Children targeted'), location_id: location.get('Brindle'), campaign_id: march, value: 4000 }),
  })
  t.equal(targeted.status, 201, 'Brindle’s own targeted children stored')
  await page.reload()
  t.equal(await shows('Brindle', 'Children targeted', '4,000'), '4,000', 'the form shows Brindle’s own targeted, as the server does')
  t.equal(await shows('Brindle', 'Percent missed', '5 %'), '5 %', 'and the percent the server computes from it (200 of 4,000)')
  await cell('Children missed', 'Brindle').click()
  await page.keyboard.press('Control+A')
  await page.keyboard.type('400')
  await page.keyboard.press('Enter')
  t.equal(await shows('Brindle', 'Percent missed', '10 %'), '10 %', 'after a new value: the server’s 400 of 4,000, not a sum of the form’s own')
  t.equal(await calculatedCell('Brindle', 'Children targeted').textContent(), '4,000', 'her own targeted still shown')
  const server10 = (
    await read(`/campaign_datapoint/?indicator__in=${indicator.get('Percent missed')}&campaign__in=${march}&location_id__in=${location.get('Brindle')}`)
  ).objects[0].value
  t.equal(server10, 0.1, 'the API says the same')
  // A click on a cell selects its whole value, as in a spreadsheet: what is typed then replaces it.
  await cell('Children missed', 'Brindle').click()
  await page.keyboard.type('200')
  t.equal(await cell('Children missed', 'Brindle').inputValue(), '200', 'a click, then typing: the value replaced')
  await page.keyboard.press('Enter')
  // Enter moved to Coldwater's value, selected; a click there keeps it selected (it once placed the
  // caret at its end, and "50" typed after 50 was saved as 5,050).
  await cell('Children missed', 'Coldwater').click()
  await page.keyboard.type('50')
  t.equal(await cell('Children missed', 'Coldwater').inputValue(), '50', 'Enter, a click on the cell it moved to, then typing: the value replaced')
  // A second click places the caret, to edit within the value.
  await cell('Children missed', 'Coldwater').click()
  const selected = await cell('Children missed', 'Coldwater').evaluate((input: HTMLInputElement) =>
    input.value.slice(input.selectionStart ?? 0, input.selectionEnd ?? 0),
  )
  t.equal(selected, '', 'a second click: nothing selected, a caret to edit within the value')
  await page.keyboard.press('Enter')
  await page.getByRole('status').filter({ hasText: 'Every value is sent' }).waitFor()
  t.equal(await shows('Brindle', 'Percent missed', '5 %'), '5 %', 'Brindle’s 200 back')
  const own = (await targeted.json()) as { id: number }
  t.equal((await api(server, `/campaign_datapoint/${own.id}/`, { method: 'DELETE' })).status, 204, 'her own targeted removed: the engine sums the parts again')
  await page.reload()
  t.equal(await shows('Brindle', 'Percent missed', '10 %'), '10 %', 'the server’s 200 of 2,000 again')
  const values = async () => {
    const rows = (
      await read(
        `/campaign_datapoint/?indicator__in=${indicator.get('Children missed')}&campaign__in=${march}&location_id__in=${location.get('Ashford')},${location.get('Brindle')},${location.get('Coldwater')},${location.get('Northmarch')}`,
      )
    ).objects
    return Object.fromEntries(rows.map((r) => [r.location_id, r.value]))
  }
  const saved = await values()
  t.same(
    [saved[location.get('Ashford')!], saved[location.get('Brindle')!], saved[location.get('Coldwater')!], saved[location.get('Northmarch')!]],
    [100, 200, 50, 350],
    'the values are saved, and the province totals them',
  )
  // A reload comes back to the campaign she chose (not the newest, the default): it is in the address.
  t.match(page.url(), new RegExp(`#/entry\\?campaign=${march}&location=${location.get('Northmarch')}$`), 'the choice in the address')
  await page.reload()
  await cell('Children missed', 'Coldwater').waitFor()
  t.equal(
    await page.getByRole('combobox', { name: /^Campaign/ }).evaluate((select) => (select as HTMLSelectElement).selectedOptions[0]?.textContent),
    'March 2016 - NID - OPV',
    'reloaded: the campaign she chose',
  )
  t.equal(await cell('Children missed', 'Coldwater').inputValue(), '50', 'with the values she typed')

  // Her dashboard shows them: the province chart reads her districts, the table their percents.
  await page.goto(`${server.url}/app/#/dashboard/${dashboard.get('Campaign overview')}?campaign=${march}`)
  const column = figure(page, 'ColumnChart')
  t.same(
    await settledValues(column, { Ashford: '100', Brindle: '200', Coldwater: '50' }),
    { Ashford: '100', Brindle: '200', Coldwater: '50' },
    'the dashboard draws what she entered',
  )
  await page.getByRole('link', { name: 'Data entry' }).click()
  await page.getByRole('combobox', { name: /^Campaign/ }).selectOption({ label: 'March 2016 - NID - OPV' })
  await cell('Children vaccinated', 'Ashford').waitFor()

  // A value beyond the bounds is saved and flagged.
  await cell('Children missed', 'Brindle').fill('9000')
  await cell('Children missed', 'Brindle').press('Tab')
  await page.locator('.entry-state', { hasText: /^Flagged by “Children missed within its bounds”: 9,000 should be [≤<≥>] [\d,]+$/ }).waitFor()
  t.pass('a value beyond the bounds is flagged')

  // A value that is not one stays in its cell, not saved: meanwhile the page never says every value is sent.
  const sending = page.locator('p.entry-waiting')
  await cell('Children missed', 'Ashford').fill('abc')
  await cell('Children missed', 'Ashford').press('Tab')
  await sending
    .filter({ hasText: 'not saved' })
    .waitFor({ timeout: 10_000 })
    .catch(() => {})
  t.equal(await sending.textContent(), '1 value was not saved: its cell says why', 'a value not saved: the status counts it, instead of every value sent')
  await cell('Children missed', 'Ashford').fill('100')
  await cell('Children missed', 'Ashford').press('Tab')
  await sending.filter({ hasText: 'Every value is sent' }).waitFor()
  t.equal(await cell('Children missed', 'Ashford').getAttribute('aria-invalid'), null, 'typed back to its saved value: the cell settled, every value sent')

  // Brindle's missed children followed up (marked and resolved) and marked again, as a reviewer would.
  const [brindleMissed] = (
    await read(`/campaign_datapoint/?indicator__in=${indicator.get('Children missed')}&campaign__in=${march}&location_id__in=${location.get('Brindle')}`)
  ).objects
  const followUp = async (method: string, path: string, body: unknown) => (await api(server, path, { method, body: JSON.stringify(body) })).json()
  const marked = (await followUp('POST', '/datapoint_followup/', { datapoint_id: brindleMissed.id, comment: 'Check the tally sheet.' })) as { id: number }
  await followUp('PATCH', `/datapoint_followup/${marked.id}/`, { resolution_comment: 'Right after all.' })
  await followUp('POST', '/datapoint_followup/', { datapoint_id: brindleMissed.id, comment: 'Ask the team again.' })

  // Its history on demand: the value's changes, and its follow-ups.
  await page.getByRole('button', { name: 'History of Children missed at Brindle' }).click()
  await page.getByRole('heading', { name: 'History of Children missed at Brindle' }).waitFor()
  await page.locator('.entry-history-panel tbody tr').nth(1).waitFor()
  const followups = page.locator('.followup-history li')
  await followups.nth(1).waitFor()
  t.match(
    await followups.allTextContents(),
    [/^\s*Marked .+ by .+: Ask the team again\.\s*Open\s*$/, /^\s*Marked .+ by .+: Check the tally sheet\.\s*Resolved .+ by .+: Right after all\.\s*$/],
    'its follow-ups in its history, newest first: the open one, and the one resolved with both comments',
  )
  t.ok((await page.locator('.entry-history-panel tbody tr').count()) >= 2, 'who changed it, when, what')
  // Through what, in words: the demo's value came with the demo data, not from "document 1".
  const through = await page.locator('.entry-history-panel tbody tr td:nth-child(5)').allTextContents()
  t.ok(through.includes('the demo data'), `the demo's value: the demo data (${through.join(' · ')})`)
  t.notOk(
    through.some((text) => /^document \d+$/.test(text)),
    'no bare document number',
  )

  // A value far from what its place usually reports says so as soon as it is saved.
  await page.getByRole('combobox', { name: /^Campaign/ }).selectOption({ label: 'October 2016 - NID - bOPV' })
  await cell('Children vaccinated', 'Coldwater').waitFor()
  t.equal(await page.locator('.entry-state', { hasText: 'Unusual' }).count(), 0, 'the demo’s October: nothing unusual')
  await cell('Children vaccinated', 'Coldwater').fill('150000')
  await cell('Children vaccinated', 'Coldwater').press('Tab')
  const unusual = page.locator('.entry-state', {
    hasText:
      /^Saved, but unusual: much higher than usual: its last \d values averaged [\d,.]+; a usual value lies between [\d,]+ and [\d,]+\. Check it, and correct it if it is a mistake\.$/,
  })
  await unusual.waitFor({ timeout: 10_000 }).catch(() => {})
  t.equal(await unusual.count(), 1, `a value 100 times its history: unusual, in words (${await page.locator('.entry-state').allTextContents()})`)

  // A yes/no flag is chosen from Yes and No, not typed, and saved as 1 or 0.
  const flag = cell('Access challenged', 'Ashford')
  t.equal(await flag.evaluate((e) => e.tagName), 'SELECT', 'a yes/no flag is a choice')
  t.same(await flag.locator('option').allTextContents(), ['–', 'Yes', 'No'], 'of empty, Yes and No')
  const flagRead = `/campaign_datapoint/?indicator__in=${indicator.get('Access challenged')}&campaign__in=${campaign.get('October 2016 - NID - bOPV')}&location_id__in=${location.get('Ashford')}`
  const before = (await read(flagRead)).objects[0]?.value
  t.equal(await flag.inputValue(), before === 1 ? 'Yes' : before === 0 ? 'No' : '', 'showing the value held')
  const [choice, stored] = before === 1 ? ['No', 0] : ['Yes', 1]
  await flag.selectOption({ label: choice })
  const flagState = page.locator(`#cell-${location.get('Ashford')}-${indicator.get('Access challenged')}-state`)
  await flagState
    .filter({ hasText: 'Saved' })
    .waitFor({ timeout: 10_000 })
    .catch(() => {})
  t.equal(await flagState.textContent(), 'Saved', `${choice} chosen: saved at once`)
  t.equal((await read(flagRead)).objects[0]?.value, stored, `the API holds ${choice} as ${stored}`)

  // Offline: the page says so, and stops saying so when the network is back.
  await page.context().setOffline(true)
  const offline = page.getByText('You are offline')
  await offline.waitFor({ timeout: 5000 }).catch(() => {})
  t.ok(await offline.isVisible(), 'offline: a notice the reader sees')
  // Down the grid, on a phone: the notice stays in sight (it scrolled away with the page's top before).
  await page.setViewportSize({ width: 375, height: 500 })
  await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight))
  const noticeInView = await offline.evaluate((p) => {
    const box = p.getBoundingClientRect()
    return box.top >= 0 && box.bottom <= window.innerHeight
  })
  t.ok(noticeInView, 'scrolled to the grid’s end at 375 px: the offline notice still in view')
  await page.setViewportSize({ width: 1280, height: 900 })
  await page.context().setOffline(false)
  await offline.waitFor({ state: 'detached', timeout: 5000 }).catch(() => {})
  t.equal(await offline.count(), 0, 'online again: the notice gone')

  // Tab goes from value to value, never stopping at a cell's History button; Alt+H opens the history of the cell one is in.
  await page.locator('input.entry-value').first().focus()
  await page.keyboard.press('Tab')
  t.equal(await page.evaluate(() => document.activeElement?.className), 'entry-value', 'Tab: the next value, not a History button')
  const next = await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))
  await page.keyboard.press('Alt+H')
  const itsHistory = page.getByRole('heading', { name: `History of ${next}` })
  await itsHistory.waitFor({ timeout: 5000 }).catch(() => {})
  t.ok(await itsHistory.isVisible(), `Alt+H: the history of ${next}`)

  // On a phone the grid scrolls sideways under its locations, which stay in sight.
  await page.setViewportSize({ width: 375, height: 800 })
  const cue = page.getByText('More columns: scroll the table sideways →')
  await cue.waitFor({ timeout: 5000 }).catch(() => {})
  t.ok(await cue.isVisible(), 'at 375 px the grid says more columns are to its right')
  const scroller = page.locator('.table-scroll', { has: page.locator('.entry-grid') })
  await scroller.evaluate((e) => {
    e.scrollLeft = e.scrollWidth
  })
  t.ok(await scroller.evaluate((e) => e.scrollLeft > 100), 'at 375 px the grid scrolls sideways')
  await cue.waitFor({ state: 'detached', timeout: 5000 }).catch(() => {})
  t.notOk(await cue.isVisible(), 'scrolled to its end, the cue goes')
  const rowHeaderOffset = await page
    .locator('.entry-grid tbody th')
    .first()
    .evaluate((th) => th.getBoundingClientRect().left - (th.closest('.table-scroll')?.getBoundingClientRect().left ?? 0))
  t.equal(Math.round(rowHeaderOffset), 0, 'scrolled sideways: the locations stay at the grid’s left edge')
  // Alt+H on a phone: the history, below the grid, brought into view with the focus on its heading.
  await page.evaluate(() => window.scrollTo(0, 0))
  await cell('Children vaccinated', 'Coldwater').focus()
  await page.keyboard.press('Alt+H')
  const coldwaterHistory = page.getByRole('heading', { name: 'History of Children vaccinated at Coldwater' })
  await coldwaterHistory.waitFor()
  await page.waitForFunction(() => document.activeElement?.id === 'history-heading', null, { timeout: 5000 }).catch(() => {})
  t.equal(await page.evaluate(() => document.activeElement?.id), 'history-heading', 'Alt+H: the focus on the history’s heading')
  const inView = await coldwaterHistory.evaluate((h) => {
    const box = h.getBoundingClientRect()
    return box.top >= 0 && box.bottom <= window.innerHeight
  })
  t.ok(inView, 'Alt+H at 375 px: the history’s heading in view')
  // And its rows with it, once they are read (the heading stayed at the window's bottom edge, its rows below).
  const firstChange = page.locator('.entry-history-panel tbody tr').first()
  await firstChange.waitFor()
  await page
    .waitForFunction(() => (document.querySelector('.entry-history-panel tbody tr')?.getBoundingClientRect().bottom ?? Infinity) <= window.innerHeight, null, {
      timeout: 5000,
    })
    .catch(() => {})
  t.ok(await firstChange.evaluate((row) => row.getBoundingClientRect().bottom <= window.innerHeight), 'Alt+H at 375 px: the history’s latest change in view')
  await page.getByRole('button', { name: 'Close history' }).click()
  t.equal(
    await page.evaluate(() => document.activeElement?.getAttribute('aria-label')),
    'Children vaccinated at Coldwater',
    'closed: the focus back in its cell',
  )
  await page.setViewportSize({ width: 1280, height: 900 })
  t.same(await violationsAtBothWidths(page), [], 'axe: the data-entry page at 1280 and 375 px')
  await page.evaluate(() => localStorage.setItem('rhizome-language', 'fr'))
  await page.reload()
  await page.getByRole('heading', { name: 'Saisie des données' }).waitFor()
  await page.getByRole('combobox', { name: /^Campagne/ }).selectOption({ label: 'March 2016 - NID - OPV' })
  await page.getByLabel('Children vaccinated à Ashford', { exact: true }).waitFor()
  t.equal(await page.getByLabel('Children vaccinated à Ashford', { exact: true }).inputValue(), '900')
  t.same(await violationsAtBothWidths(page), [], 'axe: in French')
  t.same(problems, [], 'no script error, no CSP refusal')
})
