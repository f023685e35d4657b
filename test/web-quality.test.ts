// The Data quality page in Chromium, on the demo: a rule made in the app (missed at most vaccinated),
// a file uploaded in the app that breaks it at Ashford (its report names the rule and both numbers),
// the value listed with both numbers and the rule, sorts, and leaves as a CSV; a
// planted value is an outlier, also outside the ranges made from history, followed up from there,
// counted on the dashboard and said in its column's tooltip with the rule it breaks, then resolved; a
// new district without values shows in its province's completeness ("3 of 4", named); a provincial
// officer's page holds her province only.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import type { Page } from 'playwright-core'
import { checkOnly, figure, noChromium, signIn, violationsAtBothWidths, watchedPage, webApp } from './browser.js'
import { api } from './processes.js'

/** The tooltip of the column chart's column of `place` (hovered one column after another), its lines joined by " / ". */
async function columnTooltip(page: Page, place: string) {
  const chart = figure(page, 'ColumnChart')
  const columns = chart.locator('svg path[fill="#0b5cad"]')
  const tip = chart.locator('.chart-tip')
  // The card may draw again while it is read (its campaign or location settling): scanned again until
  // a column says `place`, for 20 s.
  const deadline = Date.now() + 20_000
  while (Date.now() < deadline) {
    await page.locator('figure.chart[data-type="ColumnChart"][data-drawn="true"]').waitFor()
    await chart.scrollIntoViewIfNeeded()
    for (let n = 0; n < (await columns.count()); n++) {
      const box = await columns.nth(n).boundingBox()
      if (!box) break
      await page.mouse.move(1, 1)
      await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2)
      // A column too short to hover shows no tooltip: the next one.
      const shown = await tip
        .filter({ visible: true })
        .waitFor({ timeout: 2000 })
        .then(() => true)
        .catch(() => false)
      const lines = shown ? (await tip.locator('.tip-title, .tip-line').allTextContents()).join(' / ') : ''
      if (lines.startsWith(`${place} /`)) return lines
    }
    await page.waitForTimeout(500)
  }
  return `no column of ${place}`
}

t.test('the data quality page: rule violations with both numbers, outliers, completeness per parent, her part only', { skip: noChromium }, async (t) => {
  const { server, password, browser, read, indicator, campaign, location, dashboard } = await webApp(t)
  const send = async (method: string, path: string, body: unknown) => {
    const res = await api(server, path, { method, body: JSON.stringify(body) })
    t.ok(res.status < 300, `${method} ${path}: ${res.status}`)
    return (await res.json()) as Record<string, unknown>
  }
  const october = campaign.get('October 2016 - NID - bOPV')!
  const [ashfordVaccinated] = (
    await read(`/campaign_datapoint/?indicator__in=${indicator.get('Children vaccinated')}&campaign__in=${october}&location_id__in=${location.get('Ashford')}`)
  ).objects
  const vaccinated = (ashfordVaccinated.value as number).toLocaleString('en')
  const district = (await (await api(server, `/location/${location.get('Fallow')}/`)).json()) as { location_type_id: number; parent_location_id: number }
  await send('POST', '/location/', {
    name: 'Newfield',
    location_code: 'VD24',
    location_type_id: district.location_type_id,
    parent_location_id: district.parent_location_id,
  })
  const province = (await (await api(server, `/location/${district.parent_location_id}/`)).json()).name as string

  const { page, problems } = await watchedPage(browser)
  await signIn(page, server.url, 'admin', password)
  // The rule, made in the app.
  await page.goto(`${server.url}/app/#/catalog/rules`)
  const form = page.locator('form', { has: page.getByRole('button', { name: 'Create rule' }) })
  await form.getByLabel('Name').fill('missed at most vaccinated')
  await form.getByLabel('Indicator').selectOption({ label: 'Children missed' })
  await form.getByLabel('Operator').selectOption('<=')
  await form.getByLabel('Compared with').selectOption({ label: 'Children vaccinated' })
  await form.getByLabel('When broken').selectOption('flag')
  await form.getByRole('button', { name: 'Create rule' }).click()
  await page.locator('li.rule', { hasText: 'missed at most vaccinated' }).waitFor()
  // A file that breaks it, uploaded in the app: its report names the rule, the campaign and both numbers.
  const { location_code } = (await (await api(server, `/location/${location.get('Ashford')}/`)).json()) as { location_code: string }
  const dir = mkdtempSync(join(tmpdir(), 'quality-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const recount = join(dir, 'recount.csv')
  writeFileSync(recount, `geocode,campaign,Children missed\r\n${location_code},October 2016 - NID - bOPV,5000\r\n`)
  await page.goto(`${server.url}/app/#/upload`)
  await page.getByLabel('File (CSV or XLSX)').setInputFiles(recount)
  await page.getByRole('button', { name: 'Upload' }).click()
  // Its column is mapped to the indicator once (a template's columns need none).
  await page.getByLabel('indicator “Children missed”').selectOption({ label: 'Children missed' })
  await page.getByRole('button', { name: 'Apply mappings' }).click()
  await page.getByText('Done: 1 value saved.').waitFor()
  const implausible = page.locator('section[aria-labelledby="implausible-heading"] tbody tr', { hasText: 'Ashford' })
  t.same(
    await implausible.locator('td').allTextContents(),
    ['missed at most vaccinated', 'Ashford', 'October 2016 - NID - bOPV', 'Children missed 5,000', '≤', `Children vaccinated ${vaccinated}`],
    "the upload's report: the rule, the place, the campaign, both numbers",
  )
  await page.getByRole('link', { name: 'Data quality' }).click()
  await page.getByRole('heading', { name: 'Data quality', level: 1 }).waitFor()
  t.equal(await page.getByLabel('Campaign').inputValue(), String(october), 'the latest campaign first')

  const violations = page.locator('table.violations')
  const planted = violations.locator('tr', { hasText: 'Ashford' })
  await planted.waitFor()
  t.match(
    await planted.textContent(),
    /Ashford.*missed at most vaccinated.*Children missed 5,000.*≤.*Children vaccinated [\d,]+.*Flagged/,
    'both numbers and the rule',
  )
  // Sorted by a header: by value, then back.
  await violations.getByRole('button', { name: 'Location' }).click()
  t.equal(await violations.locator('th[aria-sort]').getAttribute('aria-sort'), 'descending')
  // The CSV holds the same lines.
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download as CSV' }).click()])
  t.equal(download.suggestedFilename(), 'rule violations.csv')
  const csv = readFileSync((await download.path())!, 'utf8')
  t.match(csv, /^Location,Rule,Value,Operator,Compared with,When broken\r\n/)
  t.match(csv, /Ashford,missed at most vaccinated,"Children missed 5,000",≤,"Children vaccinated [\d,]+",Flagged/)
  t.match(await page.locator('.violation-count').textContent(), /^\d+ values? breaks? a rule or a limit of (its|their) indicator\.$/, 'how many, in words')

  // The planted 5,000 is far from what Ashford reported before (20 and 31): an outlier, with its numbers.
  const ashfordMissed = page.locator('table.outliers tr', { hasText: 'Ashford' }).filter({ hasText: 'Children missed' })
  await ashfordMissed.first().waitFor()
  t.match(
    await ashfordMissed.first().textContent(),
    /Ashford.*Children missed.*5,000.*much higher than usual: its last 2 values averaged 25\.5; a usual value lies between 10 and 41/,
    'an outlier: far from its history, said in words',
  )
  t.match(await ashfordMissed.first().locator('td[title]').getAttribute('title'), /^[\d,.]+ standard deviations from the mean$/, 'the statistics on asking')
  t.equal(
    await ashfordMissed
      .first()
      .locator('td')
      .nth(2)
      .evaluate((cell) => getComputedStyle(cell).textAlign),
    'right',
    'its value right-aligned, as every number',
  )
  // On a phone each line is a block: its place and its button in sight, with no sideways scroll.
  await page.setViewportSize({ width: 375, height: 800 })
  const phoneButton = await ashfordMissed.first().getByRole('button', { name: 'Follow up' }).boundingBox()
  const phonePlace = await ashfordMissed.first().locator('td').first().boundingBox()
  t.ok(phoneButton && phoneButton.x >= 0 && phoneButton.x + phoneButton.width <= 375, `at 375 px the line's button is in sight: ${JSON.stringify(phoneButton)}`)
  t.ok(phonePlace && phonePlace.x >= 0 && phonePlace.x + phonePlace.width <= 375, `and its place: ${JSON.stringify(phonePlace)}`)
  await page.setViewportSize({ width: 1280, height: 900 })
  // Ranges made from history: the 5,000 is outside Ashford's too.
  await page.getByRole('button', { name: 'Make ranges from history' }).click()
  await page
    .getByRole('status')
    .filter({ hasText: /ranges? made or updated/ })
    .waitFor()
  const outsideRange = ashfordMissed.filter({ hasText: 'outside its range' })
  await outsideRange.waitFor()
  t.match(await outsideRange.textContent(), /outside its range [\d.]+ – [\d.]+ \(from its history\)/, 'and outside the range made from it')

  // Followed up: marked with a comment from its outlier line, listed as open, counted on the dashboard, resolved.
  await ashfordMissed.first().getByRole('button', { name: 'Follow up' }).click()
  await ashfordMissed.first().getByLabel('What to check').fill('Five thousand missed? Check the tally sheet.')
  await ashfordMissed.first().getByRole('button', { name: 'Follow up' }).click()
  const open = page.locator('table.followups tr', { hasText: 'Check the tally sheet' })
  await open.waitFor()
  t.match(await open.textContent(), /Ashford.*Children missed.*5,000.*Five thousand missed\? Check the tally sheet\./, 'listed as open, with its comment')
  // Its outlier lines say it is followed up, with what to check, and offer no second mark.
  await ashfordMissed.first().locator('.followed-up').waitFor()
  const marks = await ashfordMissed.locator('.followed-up').allTextContents()
  t.ok(marks.length >= 1 && marks.every((text) => text === 'Followed up: Five thousand missed? Check the tally sheet.'), `its outlier lines say so: ${marks}`)
  t.equal(await ashfordMissed.getByRole('button', { name: 'Follow up' }).count(), 0, 'and offer no second mark')
  const [followup] = (await read(`/datapoint_followup/?campaign_id=${october}&resolved_at__isnull=true`)).objects
  t.match(followup, { location_id: location.get('Ashford'), value: 5000, comment: 'Five thousand missed? Check the tally sheet.', resolved_at: null })
  const quality = page.url()
  await page.goto(`${server.url}/app/#/dashboard/${[...dashboard.values()][0]}?campaign=${october}`)
  const count = page.locator('.followup-count')
  await count.waitFor()
  t.equal((await count.textContent())?.trim(), '1 value of this campaign waits for a follow-up', 'the dashboard of its campaign counts it')
  // Drilled to Ashford's province, its column's tooltip says both flags in words.
  const ashfordProvince = ((await (await api(server, `/location/${location.get('Ashford')}/`)).json()) as { parent_location_id: number }).parent_location_id
  await page.goto(`${server.url}/app/#/dashboard/${[...dashboard.values()][0]}?campaign=${october}&location=${ashfordProvince}`)
  t.match(
    await columnTooltip(page, 'Ashford'),
    /^Ashford \/ Children missed: 5,000.* \/ ⚑ Flagged by “missed at most vaccinated”: 5,000 should be ≤ Children vaccinated [\d,]+ \/ ⚑ To follow up: Five thousand missed\? Check the tally sheet\.$/,
    'a dashboard tooltip: the broken rule with both numbers, and the follow-up',
  )
  // Its districts have nothing below them: a column is no link, and shows no hand.
  const cursor = await figure(page, 'ColumnChart')
    .locator('.drawing')
    .evaluate((drawing) => [...drawing.querySelectorAll('div')].map((d) => (d as HTMLElement).style.cursor).find(Boolean) ?? 'none set')
  t.not(cursor, 'pointer', `no hand over a column that drills nowhere (${cursor})`)
  await page.goto(quality)
  // Where the grading that is not these rules is set: the Catalog, where the bounds are edited.
  t.match(await page.getByText(/^Values that break a validation rule/).textContent(), /the indicator’s bounds \(Catalog, Indicators\)/)
  await open.getByRole('button', { name: 'Resolve' }).click()
  await open.getByLabel('How it was resolved').fill('Typing error: 50, corrected.')
  await open.getByRole('button', { name: 'Resolve' }).click()
  await page.getByText('No value waits for a follow-up.').waitFor()
  await ashfordMissed.first().getByRole('button', { name: 'Follow up' }).waitFor()
  t.pass('resolved: its outlier line offers a new mark again')
  t.match(
    (await read(`/datapoint_followup/${followup.id}/`)) as unknown,
    { resolution_comment: 'Typing error: 50, corrected.', resolved_at: String },
    'resolved, both comments kept',
  )

  // The data browser marks the planted value with the rule it breaks, both numbers in words.
  await page.goto(`${server.url}/app/#/data`)
  await checkOnly(page, 'Indicators', 'Children missed')
  await checkOnly(page, 'Campaigns', 'October 2016 - NID - bOPV')
  await page.getByRole('combobox', { name: /^Depth/ }).selectOption('2')
  const browsed = page.locator('section[aria-label="Values"] tbody tr', { hasText: 'Ashford' }).locator('td.number').first()
  await browsed.locator('.value-flag').waitFor()
  t.match(
    await browsed.locator('.value-flag').getAttribute('title'),
    /^Flagged by “missed at most vaccinated”: 5,000 should be ≤ Children vaccinated [\d,]+$/,
    'the data browser: the value marked with its rule and both numbers',
  )
  await page.goBack()
  await page.getByRole('heading', { name: 'Data quality', level: 1 }).waitFor()

  const completeness = page.locator('table.completeness')
  t.match(
    await completeness.locator('tr', { hasText: province }).textContent(),
    new RegExp(`${province}.*3 of 4 \\(75 %\\).*Newfield`),
    'Newfield has not reported',
  )
  t.same(await violationsAtBothWidths(page), [], 'axe at 1280 and 375 px')
  t.same(problems, [], 'no script error, no CSP refusal')

  // A provincial officer of Northmarch: her province's places only.
  const officer = await send('POST', '/user/', { username: 'officer', password: 'northmarch-officer-1' })
  await send('POST', '/location_responsibility/', { user_id: officer.id, top_lvl_location_id: location.get('Northmarch') })
  const hers = await watchedPage(browser)
  await signIn(hers.page, server.url, 'officer', 'northmarch-officer-1')
  await hers.page.goto(`${server.url}/app/#/quality?campaign=${october}`)
  const rows = hers.page.locator('table.completeness').locator('tbody tr')
  await rows.first().waitFor()
  t.same(await rows.locator('td:first-child').allTextContents(), ['Northmarch'], 'completeness: Northmarch only')
  t.notOk(await hers.page.locator('tr', { hasText: province }).count(), `nothing of ${province}`)
  // A campaign whose values break nothing: the page says what a dashboard's red is instead.
  await hers.page.goto(`${server.url}/app/#/quality?campaign=${campaign.get('March 2016 - NID - OPV')}`)
  const none = hers.page.locator('.violation-count')
  await none
    .filter({ hasText: /^No value/ })
    .waitFor({ timeout: 10_000 })
    .catch(() => {})
  t.equal(
    await none.textContent(),
    'No value breaks a rule or a limit of its indicator. A value a dashboard shows as bad has missed its target: that is not a mistake in the data.',
    'none broken: said, with what a bad value on a dashboard means',
  )
  t.same(hers.problems, [], 'no script error for her either')
})
