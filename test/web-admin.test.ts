// Administration and a restricted user in Chromium against the real server (either engine): users,
// responsibilities, keys (the new key's notice gone once it is revoked), disabling a user; then a
// user limited to one province sees her province's values in every chart, a country chart drawn for
// her own part and saying so, no editing of dashboards she does not own, and her upload writes
// nothing outside her province. axe at 1280 and 375 px.
import t from 'tap'
import {
  legendColours,
  campaignFile,
  chartsDrawn,
  figure,
  noChromium,
  numbersOf,
  pickLocation,
  signIn,
  tableValues,
  violationsAtBothWidths,
  watchedPage,
  webApp,
} from './browser.js'
import { api } from './processes.js'

t.test('administration and a restricted user in Chromium', { skip: noChromium }, async (t) => {
  const { server, password, browser, read, idsByName, dataDir, indicator, location, march, apiValues, dashboard } = await webApp(t)
  const dashboardId = dashboard.get('Campaign overview')!

  await t.test(
    'administration: a user created with a one-time link to set her password, limited to Northmarch; a key shown once and revoked; a user disabled',
    async (t) => {
      const { page, problems } = await watchedPage(browser)
      await signIn(page, server.url, 'admin', password)
      await page.getByRole('link', { name: 'Administration' }).click()
      await page.getByLabel('New username').fill('fieldworker')
      // Limited from the start: never a moment where her link works and she sees the whole country.
      await pickLocation(page, 'Limited to', 'Eastvale')
      await page.getByRole('button', { name: 'Create user' }).click()
      await page.getByRole('status').getByText('User created: send them the link below to set their password').waitFor()
      const created = (await idsByName('/user/', 'username')).get('fieldworker')!
      t.match(
        (await read(`/location_responsibility/?user_id=${created}`)).objects,
        [{ top_lvl_location_id: location.get('Eastvale') }],
        'limited as she is created',
      )
      t.match((await read(`/user/${created}/`)) as unknown, { is_active: true }, 'and enabled once limited')
      const link = (await page.locator('code.reset-link').textContent())!
      t.match(link, new RegExp(`^${server.url}/app/#/reset/[\\w-]{43}$`), 'a link to set her password, no password shown')
      await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url })
      await page.locator('p.notice').getByRole('button', { name: 'Copy' }).click()
      await page.locator('p.notice').getByRole('status').getByText('Copied').waitFor()
      t.equal(await page.evaluate(() => navigator.clipboard.readText()), link, 'copied with one click')

      // She opens it in her own browser, sets her password, and signs in with it; the link works once.
      const hers = await watchedPage(browser)
      await hers.page.goto(link)
      await hers.page.getByRole('heading', { name: 'Set your password' }).waitFor()
      t.same(await violationsAtBothWidths(hers.page), [], 'axe: the reset page at 1280 and 375 px')
      await hers.page.getByLabel('New password', { exact: true }).fill('north-march-2016')
      await hers.page.getByLabel('New password again').fill('north-march-2016')
      await hers.page.getByRole('button', { name: 'Set password' }).click()
      await hers.page.getByRole('status').getByText('Your password is set: sign in with it.').waitFor()
      await hers.page.reload()
      await hers.page.getByLabel('New password', { exact: true }).fill('another-password-1')
      await hers.page.getByLabel('New password again').fill('another-password-1')
      await hers.page.getByRole('button', { name: 'Set password' }).click()
      t.match(await hers.page.getByRole('alert').textContent(), /This reset link does not work: it was used/, 'a second use is refused')
      await signIn(hers.page, server.url, 'fieldworker', 'north-march-2016')
      t.pass('she signs in with the password she chose')
      await hers.page.context().close()
      await pickLocation(page, 'Location responsibility of fieldworker', 'Northmarch')
      await page.getByRole('button', { name: 'Save responsibility of fieldworker' }).click()
      await page.getByRole('status').getByText('Responsibility saved for fieldworker').waitFor()
      const fieldworker = (await idsByName('/user/', 'username')).get('fieldworker')!
      t.match(
        (await read(`/location_responsibility/?user_id=${fieldworker}`)).objects,
        [{ top_lvl_location_id: location.get('Northmarch') }],
        'moved to Northmarch in the users’ table',
      )
      await page.getByLabel('Key for').selectOption({ label: 'fieldworker' })
      await page.getByRole('button', { name: 'Create key' }).click()
      const key = (await page.locator('code.new-key').textContent())!
      const keyWorks = async () => (await fetch(`${server.url}/api/v1/session/`, { headers: { authorization: `ApiKey ${key}` } })).status
      t.equal(await keyWorks(), 200, 'the key shown once works')
      const keyId = (await read(`/api_key/?user_id=${fieldworker}`)).objects[0].id
      t.match(await page.getByText(`Key ${keyId} of fieldworker`).textContent(), /made \w{3} \d+, \d{4}, \d+:\d\d [AP]M UTC/, 'when it was made, with the zone')
      // Revoking asks first, in the page: a first click revokes nothing, and Cancel leaves the key as it was.
      await page.getByRole('button', { name: `Revoke key ${keyId}` }).click()
      const yes = page.getByRole('button', { name: `Yes, revoke key ${keyId}` })
      await yes.waitFor({ timeout: 5000 }).catch(() => {})
      t.ok(await yes.isVisible(), 'Revoke asks first')
      t.equal(await keyWorks(), 200, 'asked: the key still works')
      await page.getByRole('button', { name: 'Cancel' }).click()
      await yes.waitFor({ state: 'detached' })
      t.equal(await keyWorks(), 200, 'cancelled: the key still works')
      await page.getByRole('button', { name: `Revoke key ${keyId}` }).click()
      await yes.click()
      await page.getByRole('status').getByText(`Key ${keyId} revoked`).waitFor()
      t.equal(await keyWorks(), 401, 'revoked')
      t.equal(await page.locator('code.new-key').count(), 0, 'and no longer shown as the new key')

      // A limit refused (a network cut between the two writes): she stays disabled, it is said, and the choice is kept.
      await page.route('**/api/v1/location_responsibility/', (route) =>
        route.request().method() === 'POST'
          ? route.fulfill({ status: 503, contentType: 'application/json', body: '{"message":"unavailable"}' })
          : route.continue(),
      )
      await page.getByLabel('New username').fill('halfmade')
      await pickLocation(page, 'Limited to', 'Eastvale')
      await page.getByRole('button', { name: 'Create user' }).click()
      await page
        .getByRole('alert')
        .filter({ hasText: /^halfmade was created disabled, without her limit/ })
        .waitFor()
      const halfmade = (await idsByName('/user/', 'username')).get('halfmade')!
      t.match((await read(`/user/${halfmade}/`)) as unknown, { is_active: false }, 'a user whose limit was not saved is disabled')
      t.equal(await page.getByRole('combobox', { name: 'Limited to' }).inputValue(), 'Veridia › Eastvale', 'the limit chosen is still there to retry')
      await page.unroute('**/api/v1/location_responsibility/')

      await api(server, '/user/', { method: 'POST', body: JSON.stringify({ username: 'leaver', password: 'leaver-password-1' }) })
      await page.reload()
      await page.getByRole('button', { name: 'Disable leaver' }).click()
      await page.getByRole('status').getByText('leaver is disabled: no sign-in, no key').waitFor()
      // The administrator cannot disable himself: his own row says so instead of offering it.
      const own = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'admin', exact: true }) })
      t.equal(await own.getByRole('button', { name: /^(Disable|Enable) / }).count(), 0, 'no Disable button on his own row')
      t.ok(await own.getByText('You cannot disable yourself').isVisible(), 'his row says why')
      // A message can be dismissed.
      await page.locator('.action-message').getByRole('button', { name: 'Dismiss' }).click()
      t.equal(await page.locator('.action-message').count(), 0, 'dismissed')
      const signInAs = (username: string, pass: string) =>
        fetch(`${server.url}/api/v1/session/`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ username, password: pass }),
        })
      t.equal((await signInAs('leaver', 'leaver-password-1')).status, 401, 'a disabled user cannot sign in')
      await page.getByRole('button', { name: 'Enable leaver' }).click()
      await page.getByRole('status').getByText('leaver may sign in again').waitFor()
      t.equal((await signInAs('leaver', 'leaver-password-1')).status, 200, 'enabled again')
      t.same(await violationsAtBothWidths(page), [], 'axe: administration at 1280 and 375 px')
      // Bounds and class labels are indicator metadata: edited in the Catalog alone, Administration links there.
      t.equal(await page.getByRole('region', { name: 'Indicator bounds' }).count(), 0, 'no bounds editor in Administration')
      t.equal(await page.getByRole('heading', { name: 'Class labels' }).count(), 0, 'no class labels in Administration')
      t.equal(await page.getByRole('link', { name: 'Catalog, Indicators' }).getAttribute('href'), '#/catalog/indicators', 'a link to where they are')
      // At 375 px the users' table scrolls sideways: its location search keeps a width to read in, and its list is not cut off.
      await page.setViewportSize({ width: 375, height: 800 })
      const cue = page.locator('section[aria-labelledby="users-heading"]').getByText('More columns: scroll the table sideways →')
      await cue.waitFor({ timeout: 5000 }).catch(() => {})
      t.ok(await cue.isVisible(), 'at 375 px the users’ table says its Password and Access columns are a scroll away')
      const search = page.getByRole('combobox', { name: 'Location responsibility of admin' })
      await search.fill('Nor')
      const matches = page.getByRole('listbox', { name: 'Location responsibility of admin: matches' })
      await matches.getByRole('option').first().waitFor()
      const fit = await matches.evaluate((list) => {
        const scroller = list.closest('.table-scroll')!.getBoundingClientRect()
        const box = list.getBoundingClientRect()
        return { inside: box.top >= scroller.top && box.bottom <= scroller.bottom, width: Math.round(box.width) }
      })
      t.same(fit, { inside: true, width: fit.width }, 'at 375 px the location list of the users’ table is not cut off')
      t.ok(fit.width >= 200, `and as wide as a name (${fit.width} px)`)
      await search.press('Escape')
      await page.setViewportSize({ width: 1280, height: 900 })
      t.same(problems, [])
    },
  )

  await t.test('indicator bounds edited in the app: good and bad bounds, a named range added and removed; the dashboard follows', async (t) => {
    const { page, problems } = await watchedPage(browser)
    await signIn(page, server.url, 'admin', password)
    await page.goto(`${server.url}/app/#/catalog/indicators`)
    // One message at a time on the page: the catalog's refusal gives way to the bounds' message.
    const component = page.locator('form', { has: page.getByRole('button', { name: 'Add component' }) })
    await component.locator('select[name="indicator_id"]').selectOption({ label: 'Percent missed' })
    await component.locator('select[name="indicator_component_id"]').selectOption({ label: 'Percent missed' })
    await component.getByRole('button', { name: 'Add component' }).click()
    await page.getByRole('alert').waitFor()
    const bounds = page.getByRole('region', { name: 'Indicator bounds' })
    await bounds.getByLabel('Indicator').selectOption({ label: 'Children missed' })
    await bounds.getByLabel('Good bound').fill('200')
    await bounds.getByLabel('Bad bound').fill('400')
    await bounds.getByLabel('Flag a total reported by fewer of its places than (%)').fill('80')
    await bounds.getByRole('button', { name: 'Save bounds' }).click()
    await bounds.getByRole('status').getByText('Bounds saved').waitFor()
    t.equal(await page.locator('.action-message').count(), 1, 'the catalog’s refusal gave way to the bounds’ message')
    const missedId = indicator.get('Children missed')!
    t.match((await read(`/indicator/${missedId}/`)) as object, { good_bound: 200, bad_bound: 400, coverage_threshold: 0.8 }, 'saved through the API')
    t.same(
      await bounds.locator('.status-legend li').allTextContents(),
      ['good: 200 or less', 'ok: between 200 and 400', 'bad: 400 or more'],
      'the legend: lower is better, as the bounds’ order says',
    )
    // A percent's bounds are typed and shown in percent: "3" and "4" are 3 % and 4 %, stored as 0.03 and 0.04.
    const percentId = indicator.get('Percent missed')!
    await bounds.locator('select').first().selectOption({ label: 'Percent missed' })
    t.equal(await bounds.getByLabel('Good bound (%)').inputValue(), '3', 'the demo’s 0.03 shown as 3 (%)')
    await bounds.getByLabel('Good bound (%)').fill('3')
    await bounds.getByLabel('Bad bound (%)').fill('4')
    await bounds.getByRole('button', { name: 'Save bounds' }).click()
    await bounds.getByRole('status').getByText('Bounds saved').waitFor()
    t.match((await read(`/indicator/${percentId}/`)) as object, { good_bound: 0.03, bad_bound: 0.04 }, 'stored as fractions, the one form of the API')
    t.same(
      await bounds.locator('.status-legend li').allTextContents(),
      ['good: 3 % or less', 'ok: between 3 % and 4 %', 'bad: 4 % or more'],
      '3 % and 4 % in the legend',
    )
    await bounds.locator('select').first().selectOption({ label: 'Children missed' })
    await bounds.getByLabel('Range name').fill('Outbreak risk')
    await bounds.getByLabel('From').fill('1000')
    await bounds.getByRole('button', { name: 'Add range' }).click()
    await bounds.getByText('Outbreak risk: from 1,000 to ∞, 1,000 included').waitFor()
    t.match((await read(`/indicator_bound/?indicator_id=${missedId}`)).objects, [{ bound_name: 'Outbreak risk', mn_val: 1000, mx_val: null, direction: 1 }])
    t.same(await violationsAtBothWidths(page), [], 'axe: the bounds editor at 1280 and 375 px')

    // The dashboard's column chart of missed children: one bar, one status colour each.
    await page.goto(`${server.url}/app/#/dashboard/${dashboardId}?campaign=${march}`)
    await chartsDrawn(page, 5)
    const statuses = (
      await read(`/campaign_datapoint/?indicator__in=${missedId}&campaign__in=${march}&location_id=${location.get('Veridia')}&location_depth=1&with_status=1`)
    ).objects.map((o) => o.status as string)
    // Each status's colour as its legend swatch shows it.
    const FILL = await legendColours(figure(page, 'ColumnChart'))
    const fills = await figure(page, 'ColumnChart')
      .locator('svg path')
      .evaluateAll((paths) => paths.map((p) => p.getAttribute('fill')))
    for (const status of statuses) t.ok(fills.includes(FILL[status]), `a bar in ${status}’s colour`)
    t.match(await figure(page, 'ColumnChart').locator('.status-legend').textContent(), /Outbreak risk: from 1,000/)

    // A range meant for districts grades districts only: the province bars keep their own statuses.
    await page.goto(`${server.url}/app/#/catalog/indicators`)
    await bounds.getByLabel('Indicator').selectOption({ label: 'Children missed' })
    await bounds.getByLabel('Range name').fill('District alert')
    await bounds.getByLabel('From').fill('1')
    await bounds.getByLabel('Level').selectOption({ label: 'District' })
    await bounds.getByRole('button', { name: 'Add range' }).click()
    await bounds.getByText('District alert: from 1 to ∞, 1 included, at District level only').waitFor()
    const alert = (
      (await read(`/indicator_bound/?indicator_id=${missedId}`)).objects as Array<{ id: number; bound_name: string; location_type_id: number }>
    ).find((r) => r.bound_name === 'District alert')!
    t.ok(alert?.location_type_id, 'saved with its level')
    await page.goto(`${server.url}/app/#/dashboard/${dashboardId}?campaign=${march}`)
    await chartsDrawn(page, 5)
    const provinceStatuses = (
      await read(`/campaign_datapoint/?indicator__in=${missedId}&campaign__in=${march}&location_id=${location.get('Veridia')}&location_depth=1&with_status=1`)
    ).objects.map((o) => o.status as string)
    t.same(provinceStatuses, statuses, 'no province is graded by the district range')
    const districtStatuses = (
      await read(`/campaign_datapoint/?indicator__in=${missedId}&campaign__in=${march}&location_id=${location.get('Veridia')}&location_depth=2&with_status=1`)
    ).objects.map((o) => o.status as string)
    t.ok(districtStatuses.includes('District alert'), 'the districts are')
    const alertFill = (await legendColours(figure(page, 'ColumnChart')))['District alert (District only)']
    t.ok(alertFill, 'the legend names the district range')
    t.match(await figure(page, 'ColumnChart').locator('.status-legend').textContent(), /District alert \(District only\): from 1/)
    const provinceFills = await figure(page, 'ColumnChart')
      .locator('svg path')
      .evaluateAll((paths) => paths.map((p) => p.getAttribute('fill')))
    t.notOk(provinceFills.includes(alertFill), 'no province bar in the district range’s colour')
    for (const status of statuses) t.ok(provinceFills.includes(FILL[status]), `a province bar still in ${status}’s colour`)
    t.equal((await api(server, `/indicator_bound/${alert.id}/`, { method: 'DELETE' })).status, 204)

    // The ranges of the indicator shown first answer late, after those of the one chosen: the page
    // keeps the chosen one's (answers out of order once emptied its list).
    const otherRanges = (url: URL) => url.pathname.endsWith('/indicator_bound/') && url.searchParams.get('indicator_id') !== String(missedId)
    await page.route(otherRanges, async (route) => {
      await new Promise((resolve) => setTimeout(resolve, 1500))
      await route.continue()
    })
    await page.goto(`${server.url}/app/#/catalog/indicators`)
    await bounds.getByLabel('Indicator').selectOption({ label: 'Children missed' })
    await bounds.getByText('Outbreak risk: from 1,000 to ∞').waitFor()
    await page.waitForTimeout(2000)
    t.ok(await bounds.getByText('Outbreak risk: from 1,000 to ∞').isVisible(), 'a late answer for another indicator does not replace the chosen one’s ranges')
    await bounds.getByRole('button', { name: 'Remove range Outbreak risk' }).click()
    await bounds.getByRole('status').getByText('Range “Outbreak risk” removed').waitFor()
    t.equal((await read(`/indicator_bound/?indicator_id=${missedId}`)).objects.length, 0)

    // A class indicator's labels, added and removed here.
    const lqas = (await (
      await api(server, '/indicator/', { method: 'POST', body: JSON.stringify({ name: 'LQAS result', short_name: 'LQAS', data_format: 'class' }) })
    ).json()) as { id: number }
    await page.reload()
    const labels = page.getByRole('region', { name: 'Class labels' })
    await labels.getByLabel('Class indicator').selectOption({ label: 'LQAS' })
    for (const [value, label] of [
      ['1', 'pass'],
      ['0', 'fail'],
    ]) {
      await labels.getByLabel('Value').fill(value)
      await labels.getByLabel('Label', { exact: true }).fill(label)
      await labels.getByRole('button', { name: 'Add label' }).click()
      await labels.getByText(`${value}: ${label}`).waitFor()
    }
    t.match((await read(`/indicator_class_map/?indicator_id=${lqas.id}&order_by=value`)).objects, [
      { value: 0, label: 'fail' },
      { value: 1, label: 'pass' },
    ])
    await labels.getByRole('button', { name: 'Remove label fail' }).click()
    await labels.getByRole('status').getByText('Label “fail” removed').waitFor()
    t.equal((await read(`/indicator_class_map/?indicator_id=${lqas.id}`)).objects.length, 1)
    t.same(await violationsAtBothWidths(page), [], 'axe: the class labels editor at 1280 and 375 px')
    t.same(problems, [])
  })

  await t.test('your account: your own password changed with the current one; other sessions end', async (t) => {
    const first = await watchedPage(browser)
    const second = await watchedPage(browser)
    await signIn(first.page, server.url, 'fieldworker', 'north-march-2016')
    await signIn(second.page, server.url, 'fieldworker', 'north-march-2016')
    await second.page.getByRole('link', { name: 'Account', exact: true }).click()
    await second.page.getByRole('heading', { name: 'Your account' }).waitFor()
    t.same(await violationsAtBothWidths(second.page), [], 'axe: the account page at 1280 and 375 px')
    await second.page.getByLabel('Current password').fill('not-her-password')
    await second.page.getByLabel('New password', { exact: true }).fill('north-march-2017')
    await second.page.getByLabel('New password again').fill('north-march-2017')
    await second.page.getByRole('button', { name: 'Change password' }).click()
    t.equal(await second.page.getByRole('alert').textContent(), 'The current password is wrong')
    await second.page.getByLabel('Current password').fill('north-march-2016')
    await second.page.getByRole('button', { name: 'Change password' }).click()
    await second.page.getByRole('status').getByText('Password changed. Your other sessions have ended; this one goes on.').waitFor()
    await second.page.getByRole('link', { name: 'Data', exact: true }).click()
    await second.page.getByRole('heading', { name: 'Data' }).waitFor()
    t.pass('this browser stays signed in')
    const other = await first.page.evaluate(() => fetch('/api/v1/session/').then((r) => r.status))
    t.equal(other, 204, 'the other browser’s session ended')
    await first.page.context().close()
    await second.page.context().close()
  })

  await t.test('a restricted user: her districts in the province charts, a country chart drawn for her part, no editing others’ dashboards', async (t) => {
    const { page, problems } = await watchedPage(browser)
    await signIn(page, server.url, 'fieldworker', 'north-march-2017')
    t.notOk(await page.getByRole('link', { name: 'Administration' }).count(), 'no administration for her')
    await page.goto(`${server.url}/app/#/dashboard/${dashboardId}?campaign=${march}`)
    await chartsDrawn(page, 5)
    // The province charts are saved for the viewer's location: for her, Northmarch's districts.
    const hers = await apiValues(indicator.get('Children missed')!, march, `location_id=${location.get('Northmarch')}&location_depth=1`)
    t.same(Object.keys(hers).sort(), ['Ashford', 'Brindle', 'Coldwater'])
    t.same(tableValues(await numbersOf(figure(page, 'ColumnChart'))), hers, 'the column chart: her three districts, the API’s numbers')
    t.equal(await figure(page, 'ColumnChart').locator('.subtitle').textContent(), 'March 2016 - NID - OPV · Districts of Northmarch', 'and says so')
    t.same(Object.keys(tableValues(await numbersOf(figure(page, 'PieChart')))).sort(), ['Ashford', 'Brindle', 'Coldwater'], 'the pie: her districts')
    t.same(Object.keys(tableValues(await numbersOf(figure(page, 'TableChart')))).sort(), ['Ashford', 'Brindle', 'Coldwater'], 'the table: her districts only')
    t.equal(await figure(page, 'ChoroplethMap').getAttribute('data-polygons'), '3', 'the map: her districts’ polygons')
    // The polio chart reads the country itself (depth 0): for her, Northmarch's months.
    const line = figure(page, 'LineChart')
    const months = (await read(`/date_datapoint/?indicator__in=${indicator.get('Polio cases')}&group_by_time=month&location_id=${location.get('Northmarch')}`))
      .objects
    const rows = await numbersOf(line)
    t.same(
      rows.map((r) => [r[0], r[2]]),
      months.map((m) => ['Northmarch', String(m.value)]),
      'the country’s polio chart shows her province’s months, as the API sums them',
    )
    t.ok(months.length > 0 && months.some((m) => (m.value as number) > 0), 'values, not an empty chart')
    t.equal(await line.locator('.scope').textContent(), 'Shown for Northmarch: the part of the country you can see.', 'and says so')
    t.equal(await page.getByRole('link', { name: 'Edit dashboard' }).count(), 0, 'no "Edit dashboard" on a dashboard she does not own')
    t.equal(await page.getByRole('button', { name: 'Duplicate to edit' }).count(), 1, '"Duplicate to edit" instead')
    t.same(await violationsAtBothWidths(page), [], 'axe: her dashboard at 1280 and 375 px')

    await page.getByRole('link', { name: 'Data', exact: true }).click()
    await page.getByRole('heading', { name: 'Data' }).waitFor()
    await page.getByRole('combobox', { name: 'Location' }).fill('')
    const offered = await page.getByRole('listbox', { name: 'Location: matches' }).getByRole('option').allTextContents()
    t.same(offered, ['Northmarch', 'Northmarch › Ashford', 'Northmarch › Brindle', 'Northmarch › Coldwater'], 'the data browser offers her locations only')
    await page.getByRole('combobox', { name: 'Location' }).fill('dun')
    await page.getByRole('option', { name: 'No location matches “dun”' }).waitFor()
    t.pass('Dunmore, outside her province, is not found')

    await page.getByRole('link', { name: 'Upload' }).click()
    const file = campaignFile(dataDir, 'her-counts.csv', 'Children missed', { VD11: 500, VD21: 600 })
    await page.getByLabel('File (CSV or XLSX)').setInputFiles(file)
    await page.getByRole('button', { name: 'Upload' }).click()
    await page.getByRole('heading', { name: 'Codes to map' }).waitFor()
    t.equal(await page.getByRole('button', { name: 'Apply mappings', exact: true }).count(), 0, 'she may not map codes: no mapping form…')
    t.match(
      await page.locator('.mapping').textContent(),
      /someone who edits metadata maps them.*indicator “Children missed”/s,
      '…but which code waits, and for whom',
    )
    // An administrator maps the column; she applies the mappings to her file.
    const documentId = (await read('/document/?order_by=-id&limit=1')).objects[0].id
    const code = (await read(`/source_object_map/?document_id=${documentId}&is_mapped=0`)).objects.find((m) => m.source_object_code === 'Children missed')!
    await api(server, `/source_object_map/${code.id}/`, { method: 'PATCH', body: JSON.stringify({ master_object_id: indicator.get('Children missed') }) })
    await page.getByRole('button', { name: 'Apply mappings made since' }).click()
    await page.getByText('Done: 1 value saved.').waitFor()
    const summary = Object.fromEntries(
      await page.locator('.summary dl div').evaluateAll((items) => items.map((i) => [i.querySelector('dt')!.textContent, i.querySelector('dd')!.textContent])),
    )
    t.match(summary, { 'Rows processed': '1', 'Rows outside your locations': '1', 'Values updated': '1' }, 'one row hers, one refused')
    const after = await apiValues(indicator.get('Children missed')!, march, `location_id__in=${location.get('Ashford')},${location.get('Dunmore')}`)
    t.same(after, { Ashford: '500', Dunmore: '41' }, 'Ashford written; Dunmore, outside her province, as it was')

    // An administrator's document, opened by her: its report is not hers to read, nor its revert to run.
    const csv = `geocode,campaign,Children missed\nVD12,${((await read(`/campaign/${march}/`)) as unknown as { name: string }).name},77\n`
    const uploaded = (await (
      await api(server, '/document/', {
        method: 'POST',
        body: JSON.stringify({ docfile: Buffer.from(csv).toString('base64'), doc_title: 'ministry.csv', file_type: 'campaign' }),
      })
    ).json()) as { id: number }
    await api(server, `/transform_upload/?document_id=${uploaded.id}`)
    await page.goto(`${server.url}/app/#/upload/${uploaded.id}`)
    await page.getByRole('heading', { name: 'Report of ministry.csv' }).waitFor()
    t.ok(
      await page
        .getByText('Another user uploaded this file: its report, mappings and revert are theirs, and those of users who see the whole country.')
        .isVisible(),
      'says whose it is',
    )
    t.equal(await page.getByText('This document has not been read yet.').count(), 0, 'not that it was never read')
    t.equal(await page.getByRole('button', { name: 'Revert' }).count(), 0, 'no Revert she could not run')
    t.same(problems, [])
  })
})
