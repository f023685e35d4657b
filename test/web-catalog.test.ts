// The catalog managed in the app, in Chromium against the real server (either engine): a superuser puts
// a user in the metadata editors' group (manage_system) on the groups page; she, not a superuser,
// creates a class indicator with its labels Pass and Fail, a campaign, a location with a polygon
// uploaded as a GeoJSON file, and a calculated ratio; a component cycle is refused with the API's
// message; a delete first says what depends on the row; after values are entered the ratio's map
// draws at the new location. axe at 1280 and 375 px, English and French, on #/catalog and #/entry.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import type { Page } from 'playwright-core'
import { chartsDrawn, figure, noChromium, numbersOf, pickLocation, screenshotsDir, signIn, violationsAtBothWidths, watchedPage, webApp } from './browser.js'
import { api } from './processes.js'

t.test('the catalog in Chromium: a metadata editor', { skip: noChromium }, async (t) => {
  const { server, password, browser, read, dataDir } = await webApp(t)
  const shots = screenshotsDir(t)
  const send = async (method: string, path: string, body?: unknown) => {
    const response = await api(server, path, { method, body: body === undefined ? undefined : JSON.stringify(body) })
    return { status: response.status, body: (await response.json().catch(() => null)) as Record<string, unknown> }
  }
  await send('POST', '/user/', { username: 'editor', password: 'catalog-editor-2016' })

  // A superuser gives her the metadata editors' group.
  {
    const { page, problems } = await watchedPage(browser)
    await signIn(page, server.url, 'admin', password)
    // Reached by its links, as a person reaches it: a goto right after signing in has ended elsewhere
    // before (web-data), and here CI once waited 30 s for the groups after one.
    await page.getByRole('link', { name: 'Catalog', exact: true }).click()
    await page.getByRole('navigation', { name: 'Catalog sections' }).getByRole('link', { name: 'Users’ groups' }).click()
    const groups = page.getByRole('group', { name: 'Groups of editor' })
    await groups.getByLabel('manage_system').check()
    await page.getByRole('status').filter({ hasText: 'editor: groups saved' }).waitFor()
    const editorId = (await read('/user/?limit=0')).objects.find((u) => u.username === 'editor')!.id
    const memberships = (await read('/user_group/?limit=0')).objects.filter((m) => m.user_id === editorId)
    const groupNames = new Map((await read('/group/?limit=0')).objects.map((g) => [g.id, g.name]))
    t.same(
      memberships.map((m) => groupNames.get(m.group_id)),
      ['manage_system'],
      'the superuser put her in manage_system, through the API',
    )
    t.same(await violationsAtBothWidths(page), [], 'axe: users’ groups at 1280 and 375 px')
    await page.evaluate(() => localStorage.setItem('rhizome-language', 'fr'))
    await page.reload()
    await page.getByRole('heading', { name: 'Catalogue', level: 1 }).waitFor()
    await page.getByRole('group', { name: /editor/ }).waitFor()
    t.same(await violationsAtBothWidths(page), [], 'axe: users’ groups in French')
    t.same(problems, [], 'no script error, no CSP refusal')
  }

  const { page, problems } = await watchedPage(browser)
  await signIn(page, server.url, 'editor', 'catalog-editor-2016')
  t.notOk(await page.getByRole('link', { name: 'Administration' }).count(), 'not a superuser: no administration')
  await page.getByRole('link', { name: 'Catalog' }).click()
  await page.getByRole('heading', { name: 'Catalog', level: 1 }).waitFor()
  const form = (submit: string) => page.locator('form', { has: page.getByRole('button', { name: submit, exact: true }) })
  /** Waits until the page says `text`; a refusal instead fails with its words. */
  const said = async (text: string) => {
    await page
      .getByRole('status')
      .filter({ hasText: text })
      .waitFor({ timeout: 10_000 })
      .catch(async (e) => {
        throw new Error(`${e.message}; the page says: ${((await page.locator('#content').textContent()) ?? '').slice(0, 1500)}`)
      })
  }

  // Indicators: a class indicator, two counts and their ratio.
  const indicatorForm = form('Create indicator')
  const createIndicator = async (name: string, short: string, format: string) => {
    await indicatorForm.getByLabel('Name', { exact: true }).fill(name)
    await indicatorForm.getByLabel('Short name').fill(short)
    await indicatorForm.getByLabel('Data format').selectOption(format)
    await indicatorForm.getByRole('button', { name: 'Create indicator' }).click()
    // Its format in words, the API's code in its title: "LQAS result (Class)".
    await page
      .locator('li.chart-item', { hasText: `${short} (` })
      .locator(`span[title="${format}"]`)
      .waitFor()
  }
  await createIndicator('LQAS lot result', 'LQAS result', 'class')
  await createIndicator('Doses given in the lot', 'Doses given', 'int')
  await createIndicator('Doses planned for the lot', 'Doses planned', 'int')
  await createIndicator('Share of planned doses given', 'Dose ratio', 'pct')
  const indicators = new Map((await read('/indicator/?limit=0')).objects.map((i) => [i.short_name as string, i]))
  t.equal(indicators.get('LQAS result')?.data_format, 'class', 'the class indicator, in the API')

  // Its labels, Pass and Fail.
  const labels = page.locator('section[aria-labelledby="class-labels-heading"]')
  await labels.getByLabel('Class indicator').selectOption({ label: 'LQAS result' })
  for (const [value, label] of [
    ['1', 'Pass'],
    ['0', 'Fail'],
  ]) {
    await labels.getByLabel('Value', { exact: true }).fill(value)
    await labels.getByLabel('Label', { exact: true }).fill(label)
    await labels.getByRole('button', { name: 'Add label' }).click()
    await labels.getByText(`${value}: ${label}`).waitFor()
  }
  const classMap = (await read(`/indicator_class_map/?indicator_id=${indicators.get('LQAS result')!.id}&limit=0`)).objects
  t.same(
    classMap.map((c) => [c.value, c.label]).sort(),
    [
      [0, 'Fail'],
      [1, 'Pass'],
    ],
    'Pass and Fail, in the API',
  )

  // The ratio: given over planned.
  const components = form('Add component')
  const addComponent = async (calculated: string, component: string, calculation: string) => {
    await components.getByLabel('Calculated indicator').selectOption({ label: calculated })
    await components.getByRole('combobox', { name: /^Component/ }).selectOption({ label: component })
    await components.getByLabel('Calculation').selectOption(calculation)
    await components.getByRole('button', { name: 'Add component' }).click()
  }
  await addComponent('Dose ratio', 'Doses given', 'NUMERATOR')
  await said('Component added')
  await addComponent('Dose ratio', 'Doses planned', 'DENOMINATOR')
  await page.getByText('Dose ratio ← Doses planned (Denominator)').waitFor()
  t.pass('the ratio’s numerator and denominator listed')

  // A cycle is refused with the API's message.
  await addComponent('Doses given', 'Dose ratio', 'PART_TO_BE_SUMMED')
  const cycle = `indicator ${indicators.get('Dose ratio')!.id} cannot be a component of ${indicators.get('Doses given')!.id}: it would depend on itself`
  await page.getByRole('alert').filter({ hasText: cycle }).waitFor()
  t.pass('a component cycle refused with the API’s message')
  t.equal((await read(`/calculated_indicator_component/?indicator_id=${indicators.get('Doses given')!.id}`)).objects.length, 0, 'and nothing written')

  // Only superusers may delete shared metadata (the API's rule): she is offered no delete.
  t.equal(await page.getByRole('button', { name: /^Delete / }).count(), 0, 'no delete for a metadata editor')
  t.same(await violationsAtBothWidths(page), [], 'axe: the catalog’s indicators at 1280 and 375 px')
  await page.evaluate(() => scrollTo(0, 0))
  await page.screenshot({ path: join(shots, 'catalog.png') })

  // A campaign.
  await page.getByRole('link', { name: 'Campaigns', exact: true }).click()
  const campaignForm = form('Create campaign')
  await campaignForm.getByLabel('Name', { exact: true }).fill('December 2016 - NID - LQAS')
  await campaignForm.getByLabel('Campaign type').selectOption({ label: 'National Immunization Days (NID)' })
  await campaignForm.getByLabel('Start').fill('2016-12-01')
  await campaignForm.getByLabel('End').fill('2016-12-15')
  await campaignForm.getByRole('button', { name: 'Create campaign' }).click()
  await said('Campaign created')
  const campaign = (await read('/campaign/?limit=0')).objects.find((c) => c.name === 'December 2016 - NID - LQAS')!
  t.same([campaign.start_date, campaign.end_date], ['2016-12-01', '2016-12-15'], 'the campaign, in the API')
  // Edited where it is listed: its end moved a day, one PATCH.
  const listed = page.locator('li.chart-item', { hasText: 'December 2016 - NID - LQAS' })
  await listed.getByRole('button', { name: 'Edit December 2016 - NID - LQAS' }).click()
  await listed.getByLabel('End').fill('2016-12-16')
  await listed.getByRole('button', { name: 'Save' }).click()
  await said('December 2016 - NID - LQAS saved')
  await listed.getByText('(2016-12-01 – 2016-12-16)').waitFor()
  const edited = (await read('/campaign/?limit=0')).objects.find((c) => c.id === campaign.id)!
  t.equal(edited.end_date, '2016-12-16', 'edited in place, in the API')
  t.same(await violationsAtBothWidths(page), [], 'axe: the catalog’s campaigns at 1280 and 375 px')

  // A district of Southreach with its polygon, from a GeoJSON file.
  await page.getByRole('link', { name: 'Locations', exact: true }).click()
  const locationForm = form('Create location')
  await locationForm.getByLabel('Name', { exact: true }).fill('Juniper')
  await locationForm.getByLabel('Code').fill('VD34')
  await locationForm.getByLabel('Location type').selectOption({ label: 'District' })
  await pickLocation(page, 'Parent', 'Southreach')
  await locationForm.getByRole('button', { name: 'Create location' }).click()
  await said('Location created')
  const juniper = (await read('/location/?limit=0')).objects.find((l) => l.name === 'Juniper')!
  const southreach = (await read('/location/?limit=0')).objects.find((l) => l.name === 'Southreach')!
  t.equal(juniper.parent_location_id, southreach.id, 'Juniper, under Southreach, in the API')
  const square = [
    [21.6, 9.6],
    [22.0, 9.6],
    [22.0, 10.0],
    [21.6, 10.0],
    [21.6, 9.6],
  ]
  const file = join(dataDir, 'juniper.geojson')
  writeFileSync(
    file,
    JSON.stringify({
      type: 'FeatureCollection',
      features: [{ type: 'Feature', properties: { name: 'Juniper' }, geometry: { type: 'Polygon', coordinates: [square] } }],
    }),
  )
  await page.getByLabel('Polygon (GeoJSON file)').setInputFiles(file)
  await page.getByRole('button', { name: 'Upload shape' }).click()
  await said('Shape saved')
  const shape = (await read(`/geo/?location_id__in=${juniper.id}`)).objects
  t.ok(JSON.stringify(shape[0]).includes(JSON.stringify([square])), 'its polygon, in the API')
  t.same(await violationsAtBothWidths(page), [], 'axe: the catalog’s locations at 1280 and 375 px')

  // Values entered (the API, as an upload or another client would) at Juniper: the engine calculates the ratio.
  for (const [short, value] of [
    ['Doses given', 80],
    ['Doses planned', 100],
    ['LQAS result', 1],
  ] as const) {
    const written = await send('POST', '/campaign_datapoint/', {
      indicator_id: indicators.get(short)!.id,
      location_id: juniper.id,
      campaign_id: campaign.id,
      value,
    })
    t.equal(written.status, 201, `${short} entered at Juniper`)
  }
  const ratioId = indicators.get('Dose ratio')!.id as number
  let ratio: unknown
  for (const started = Date.now(); Date.now() - started < 30_000 && ratio === undefined; await new Promise((r) => setTimeout(r, 200))) {
    ratio = (await read(`/campaign_datapoint/?indicator__in=${ratioId}&campaign__in=${campaign.id}&location_id__in=${juniper.id}`)).objects[0]?.value
  }
  t.equal(ratio, 0.8, 'the engine calculates the ratio at Juniper')

  // A map of the ratio by district of Southreach, on a dashboard: it draws, and Juniper's region holds 80 %.
  const chart = await send('POST', '/custom_chart/', {
    uuid: 'dose-ratio-map',
    title: 'Dose ratio by district',
    chart_json: JSON.stringify({
      type: 'ChoroplethMap',
      indicator_ids: [ratioId],
      campaign_ids: [campaign.id],
      location_ids: [southreach.id],
      location_depth: 1,
    }),
  })
  t.equal(chart.status, 201, 'the chart saved')
  const board = await send('POST', '/dashboard/', { title: 'LQAS lots', rows: [{ charts: ['dose-ratio-map'] }] })
  await page.goto(`${server.url}/app/#/dashboard/${board.body.id}?campaign=each`)
  await chartsDrawn(page, 1)
  const map = figure(page, 'ChoroplethMap')
  const rows = await numbersOf(map)
  t.same(rows.find((r) => r[0] === 'Juniper')?.slice(-1), ['80 %'], `the map's numbers: Juniper 80 % (${JSON.stringify(rows)})`)
  t.ok((await map.locator('.drawing svg path').count()) >= 4, 'the map draws its regions, Juniper’s among them')

  // A superuser's delete first says what depends on the row, and only then offers to delete it too.
  {
    const { page, problems } = await watchedPage(browser)
    await signIn(page, server.url, 'admin', password)
    await page.goto(`${server.url}/app/#/catalog/indicators`)
    await page.getByRole('button', { name: 'Delete Doses planned', exact: true }).click()
    const dependents = page.getByRole('alert').filter({ hasText: 'Doses planned is used by' })
    await dependents.waitFor()
    t.match(
      await dependents.textContent(),
      /^Doses planned is used by .*1 calculated_indicator_component row\(s\).*\.$/,
      `the delete names what depends on it: ${await dependents.textContent()}`,
    )
    t.ok(await page.getByRole('button', { name: 'Delete Doses planned and what depends on it' }).isVisible(), 'and only then offers to delete them too')
    t.equal((await send('GET', `/indicator/${indicators.get('Doses planned')!.id}/`)).status, 200, 'nothing deleted yet')
    t.same(problems, [], 'no script error, no CSP refusal')
  }

  // axe in French, and on the data-entry page in both languages.
  await page.goto(`${server.url}/app/#/entry`)
  await page.getByRole('heading', { name: 'Data entry' }).waitFor()
  await page.locator('.entry-grid').waitFor()
  t.same(await violationsAtBothWidths(page), [], 'axe: the data-entry page at 1280 and 375 px')
  await frenchAxe(t, page, server.url)
  t.same(problems, [], 'no script error, no CSP refusal')
})

async function frenchAxe(t: Test, page: Page, url: string) {
  await page.evaluate(() => localStorage.setItem('rhizome-language', 'fr'))
  await page.goto(`${url}/app/#/entry`)
  await page.reload()
  await page.getByRole('heading', { name: 'Saisie des données' }).waitFor()
  await page.locator('.entry-grid').waitFor()
  t.same(await violationsAtBothWidths(page), [], 'axe: the data-entry page in French')
  for (const section of ['indicators', 'campaigns', 'locations']) {
    await page.goto(`${url}/app/#/catalog/${section}`)
    await page.getByRole('heading', { name: 'Catalogue', level: 1 }).waitFor()
    t.same(await violationsAtBothWidths(page), [], `axe: the catalog’s ${section} in French`)
  }
  await page.evaluate(() => localStorage.setItem('rhizome-language', 'en'))
}

t.test('validation rules in the app: made, changed, refused with the reason, deleted', { skip: noChromium }, async (t) => {
  const { server, password, browser, read, indicator } = await webApp(t)
  const { page, problems } = await watchedPage(browser)
  await signIn(page, server.url, 'admin', password)
  await page.goto(`${server.url}/app/#/catalog/rules`)
  await page.getByRole('heading', { name: 'New rule' }).waitFor()
  const form = page.locator('form', { has: page.getByRole('button', { name: 'Create rule' }) })
  const make = async (name: string, left: string, operator: string, right: string, action: string) => {
    await form.getByLabel('Name').fill(name)
    await form.getByLabel('Indicator').selectOption({ label: left })
    await form.getByLabel('Operator').selectOption(operator)
    await form.getByLabel('Compared with').selectOption({ label: right })
    await form.getByLabel('When broken').selectOption(action)
    await form.getByRole('button', { name: 'Create rule' }).click()
  }
  await make('missed within targeted', 'Children missed', '<=', 'Children targeted', 'flag')
  const item = page.locator('li.rule', { hasText: 'missed within targeted' })
  await item.waitFor()
  t.match(await item.textContent(), /Children missed is at most Children targeted · Flag the value/, 'the rule in words')
  // The demo's own rules are there too: the test reads its own by name.
  const rules = async () => (await read('/validation_rule/?limit=0')).objects
  const demoRules = (await rules()).length - 1
  const ours = async () => (await rules()).filter((rule) => rule.name === 'missed within targeted')
  t.match(await ours(), [
    {
      name: 'missed within targeted',
      left_indicator_id: indicator.get('Children missed'),
      operator: '<=',
      right_indicator_id: indicator.get('Children targeted'),
      action: 'flag',
    },
  ])

  // Changed: it refuses the write that breaks it.
  await item.getByLabel('When broken').selectOption('block')
  await item.getByRole('button', { name: 'Save' }).click()
  await page.getByRole('status').filter({ hasText: 'Rule missed within targeted saved' }).waitFor()
  t.match(await ours(), [{ action: 'block' }], 'saved through the API')

  // Sides it cannot compare: the API's reason, and nothing made.
  await make('counts against a share', 'Children missed', '<=', 'Percent missed', 'block')
  await page.getByRole('alert').filter({ hasText: 'Children missed is a count and Percent missed a percentage' }).waitFor()
  t.equal((await rules()).length, demoRules + 1, 'the refused rule is not made')

  await item.getByRole('button', { name: 'Delete missed within targeted' }).click()
  await page.getByRole('status').filter({ hasText: 'missed within targeted deleted' }).waitFor()
  t.same(await ours(), [], 'deleted')
  t.same(await violationsAtBothWidths(page), [], 'axe: the rules page at 1280 and 375 px')
  t.same(problems, [], 'no script error, no CSP refusal')
})
