// The dashboard editor and the chart builder in Chromium against the real server (either engine):
// nothing unsaved is lost on the way to building a chart, a taken title is said in words with a free
// one offered, reorder, remove, delete and duplicate, someone else's dashboard duplicated to edit,
// the builder's first indicator and its empty selection, axe at 1280 and 375 px.
import t from 'tap'
import type { Page } from 'playwright-core'
import {
  chartsDrawn,
  checkOnly,
  figure,
  noChromium,
  numbersOf,
  pickLocation,
  settledValues,
  signIn,
  tableValues,
  violationsAtBothWidths,
  watchedPage,
  webApp,
} from './browser.js'
import { api } from './processes.js'

t.test('the dashboard editor and the chart builder in Chromium', { skip: noChromium }, async (t) => {
  const app = await webApp(t)
  const { server, password, browser, read, indicator, location, march, apiValues } = app
  /** The chart uuids of a dashboard, in order, as the API has them. */
  const uuids = async (id: number) =>
    ((await (await api(server, `/dashboard/${id}/`)).json()).rows as Array<{ charts: Array<{ uuid: string }> }>).flatMap((r) => r.charts.map((c) => c.uuid))
  const dashboardId = async (title: string) => (await app.idsByName('/dashboard/?limit=0', 'title')).get(title)
  /** Fills the builder for bars of children vaccinated in Northmarch's districts, March. */
  const buildBars = async (page: Page, title: string) => {
    await page.getByLabel('Title').fill(title)
    await page.getByLabel('Chart type').selectOption('BarChart')
    await checkOnly(page, 'Indicators', 'Children vaccinated')
    await checkOnly(page, 'Campaigns', 'March 2016 - NID - OPV')
    await pickLocation(page, 'Location', 'Northmarch')
    await page.getByRole('combobox', { name: /^Depth/ }).selectOption('1')
  }

  await t.test('an added chart and the description survive building a new chart; saved, in order', async (t) => {
    const { page, problems } = await watchedPage(browser)
    await signIn(page, server.url, 'admin', password)
    await page.getByLabel('New dashboard title').fill('Field review')
    await page.getByRole('button', { name: 'Create dashboard' }).click()
    await page.getByRole('heading', { name: 'Edit dashboard' }).waitFor()
    await page.getByLabel('Description').fill('Numbers for the field review')
    await page.getByLabel('Add a saved chart').selectOption({ label: 'Missed children' })
    await page.getByRole('button', { name: 'Add chart' }).click()
    await page.getByRole('status').getByText('Unsaved changes').waitFor()
    await page.getByRole('link', { name: 'Build a new chart' }).click()
    await page.getByRole('heading', { name: 'New chart' }).waitFor()
    t.same(await violationsAtBothWidths(page), [], 'axe: the chart builder at 1280 and 375 px')
    await buildBars(page, 'Vaccinated by district, bars')
    const preview = page.getByRole('region', { name: 'Preview' }).locator('figure.chart[data-drawn="true"]')
    await preview.waitFor()
    const vaccinated = await apiValues(indicator.get('Children vaccinated')!, march, `location_id=${location.get('Northmarch')}&location_depth=1`)
    t.same(await settledValues(preview, vaccinated), vaccinated, 'the preview draws the API’s values')
    await page.getByRole('button', { name: 'Save chart' }).click()

    await page.getByRole('heading', { name: 'Edit dashboard' }).waitFor()
    const items = await page.locator('ol.cards li > span:first-child').allTextContents()
    t.same(items, ['Missed children', 'Vaccinated by district, bars'], 'back in the editor: the added chart kept, the new one after it')
    t.equal(await page.getByLabel('Description').inputValue(), 'Numbers for the field review', 'the description kept')
    await page.reload()
    await page.getByRole('heading', { name: 'Edit dashboard' }).waitFor()
    t.same(await page.locator('ol.cards li > span:first-child').allTextContents(), items, 'and through a reload')
    t.same(await violationsAtBothWidths(page), [], 'axe: the dashboard editor at 1280 and 375 px')
    await page.getByRole('button', { name: 'Save dashboard' }).click()
    await page.getByRole('heading', { name: 'Field review' }).waitFor()
    await chartsDrawn(page, 2)
    // The dashboard opens on the latest campaign with values (October), which the new March chart follows.
    const october = await apiValues(
      indicator.get('Children vaccinated')!,
      app.campaign.get('October 2016 - NID - bOPV')!,
      `location_id=${location.get('Northmarch')}&location_depth=1`,
    )
    t.same(tableValues(await numbersOf(figure(page, 'BarChart'))), october, 'the new chart on the dashboard, under its campaign')
    const boardId = (await dashboardId('Field review'))!
    const saved = (await read('/custom_chart/?title=Vaccinated by district, bars')).objects[0]
    t.match(saved.chart_json, {
      type: 'BarChart',
      indicator_ids: [indicator.get('Children vaccinated')],
      campaign_ids: [march],
      location_ids: [location.get('Northmarch')],
      location_depth: 1,
    })
    t.same(await uuids(boardId), ['demo-missed-by-province', saved.uuid], 'saved in the order shown')
    t.match((await (await api(server, `/dashboard/${boardId}/`)).json()).description, 'Numbers for the field review')

    await page.getByRole('link', { name: 'Edit dashboard' }).click()
    await page.getByRole('button', { name: 'Move Vaccinated by district, bars up' }).click()
    await page.getByRole('button', { name: 'Remove Missed children' }).click()
    await page.getByRole('button', { name: 'Save dashboard' }).click()
    await page.getByRole('heading', { name: 'Field review' }).waitFor()
    t.same(await uuids(boardId), [saved.uuid], 'reordered and removed')
    t.same(problems, [])
  })

  await t.test('a taken title is said in words, a free one offered and used', async (t) => {
    const { page, problems } = await watchedPage(browser)
    await signIn(page, server.url, 'admin', password)
    const boardId = (await dashboardId('Field review'))!
    await page.goto(`${server.url}/app/#/chart/new/${boardId}`)
    await page.getByRole('heading', { name: 'New chart' }).waitFor()
    await buildBars(page, 'Missed children')
    await page.getByRole('button', { name: 'Save chart' }).click()
    const alert = page.getByRole('alert')
    await alert.waitFor()
    t.equal(await alert.textContent(), '“Missed children” is already the title of a chart (titles are shared by everyone). “Missed children (2)” is free.')
    t.notMatch(await page.locator('main').textContent(), /key: |already exists/, 'not the API’s raw message')
    await page.getByRole('button', { name: 'Use “Missed children (2)”' }).click()
    t.equal(await page.getByLabel('Title').inputValue(), 'Missed children (2)')
    await page.getByRole('button', { name: 'Save chart' }).click()
    await page.getByRole('heading', { name: 'Edit dashboard' }).waitFor()
    t.equal((await read('/custom_chart/?title=Missed children (2)')).objects.length, 1, 'saved under the free title')
    t.same(problems, [])
  })

  await t.test('the builder starts on a count, not a yes/no flag, and says what an empty selection needs', async (t) => {
    const { page, problems, consoleErrors } = await watchedPage(browser)
    await signIn(page, server.url, 'admin', password)
    await page.goto(`${server.url}/app/#/chart/new`)
    await page.getByRole('heading', { name: 'New chart' }).waitFor()
    const ticked = await page
      .getByRole('group', { name: 'Indicators' })
      .getByRole('checkbox', { checked: true })
      .evaluateAll((boxes) => boxes.map((b) => b.parentElement?.textContent?.trim()))
    t.same(ticked, ['Children missed'], 'the first indicator ticked is a count (Access challenged, a yes/no flag, comes first by name)')
    await page.getByRole('group', { name: 'Indicators' }).getByLabel('Children missed', { exact: true }).uncheck()
    await page.getByText('Choose at least one indicator to see a preview.').waitFor()
    t.notMatch(await page.locator('main').textContent(), /Missing required parameter/, 'no API message')
    t.same(consoleErrors, [], 'no request refused')
    t.same(problems, [])
  })

  await t.test('delete a chart; duplicate a dashboard with copies of its charts; someone else’s dashboard is duplicated to edit', async (t) => {
    await api(server, '/user/', { method: 'POST', body: JSON.stringify({ username: 'planner', password: 'planner-password-1' }) })
    const { page, problems } = await watchedPage(browser)
    await signIn(page, server.url, 'planner', 'planner-password-1')
    await page.goto(`${server.url}/app/#/dashboard/${await dashboardId('Campaign overview')}`)
    await chartsDrawn(page, 5)
    t.equal(await page.getByRole('link', { name: 'Edit dashboard' }).count(), 0, 'no editing of a dashboard she does not own')
    await page.getByRole('button', { name: 'Duplicate to edit' }).click()
    await page.getByRole('heading', { name: 'Edit dashboard' }).waitFor()
    t.equal(await page.getByLabel('Title').inputValue(), 'Campaign overview (copy)', 'a copy under a free title, open in the editor')
    const copy = (await read('/dashboard/?title=Campaign overview (copy)')).objects[0]
    const planner = (await read('/user/?username=planner')).objects[0]
    t.equal(copy.owner_id, planner.id, 'hers')
    const originals = await uuids((await dashboardId('Campaign overview'))!)
    const copies = await uuids(copy.id as number)
    t.equal(copies.length, originals.length, 'as many charts')
    t.notOk(
      copies.some((uuid) => originals.includes(uuid)),
      'copies of its charts, not the same ones: changing hers never changes the original',
    )

    // Her copy of a chart is hers to edit: renamed, the original keeps its title.
    await page.getByRole('link', { name: 'Edit Missed children (copy)' }).click()
    await page.getByRole('heading', { name: 'Edit chart' }).waitFor()
    await page.getByLabel('Title').fill('Missed children, my copy')
    await page.getByRole('button', { name: 'Save chart' }).click()
    await page.getByRole('heading', { name: 'Edit dashboard' }).waitFor()
    t.equal(await page.locator('ol.cards li > span:first-child').first().textContent(), 'Missed children, my copy', 'renamed on her dashboard')
    await page.getByRole('button', { name: 'Save dashboard' }).click()
    await page.getByRole('heading', { name: 'Campaign overview (copy)' }).waitFor()
    t.equal((await read('/custom_chart/?title=Missed children')).objects.length, 1, 'the original chart as it was')

    // The original's editor, opened by its address, says at once that it is not hers.
    await page.goto(`${server.url}/app/#/dashboard/${await dashboardId('Campaign overview')}/edit`)
    t.match(await page.getByRole('alert').textContent(), /someone else’s dashboard: open it and duplicate it/, 'not an editor that fails at save')
    t.equal(await page.getByRole('button', { name: 'Save dashboard' }).count(), 0)
    await page.goto(`${server.url}/app/#/dashboard/${copy.id}`)
    await page.getByRole('heading', { name: 'Campaign overview (copy)' }).waitFor()

    // Her own chart she may delete: it leaves her dashboard too.
    await page.getByRole('link', { name: 'Edit dashboard' }).click()
    await page.getByRole('link', { name: 'Edit Missed children, my copy' }).click()
    page.once('dialog', (dialog) => dialog.accept())
    await page.getByRole('button', { name: 'Delete chart' }).click()
    await page.getByRole('heading', { name: 'Edit dashboard' }).waitFor()
    t.equal((await read('/custom_chart/?title=Missed children, my copy')).objects.length, 0, 'deleted')
    t.notOk((await page.locator('ol.cards').textContent())?.includes('my copy'), 'and gone from the editor')
    page.once('dialog', (dialog) => dialog.accept())
    await page.getByRole('button', { name: 'Delete dashboard' }).click()
    await page.getByRole('heading', { name: 'Dashboards' }).waitFor()
    t.equal((await read('/dashboard/?title=Campaign overview (copy)')).objects.length, 0, 'her dashboard deleted')
    t.same(problems, [])
  })
})
