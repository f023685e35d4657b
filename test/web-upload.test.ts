// The upload page in Chromium against the real server (either engine): what a file must hold and a
// template of it, an upload's progress said honestly (saved, and waiting for mapping), the file under
// its own name, its code mapped here and the new values in a chart, the jobs with names and times in
// the reader's zone, axe at 1280 and 375 px.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { api } from './processes.js'
import { campaignFile, chartsDrawn, figure, noChromium, screenshotsDir, settledValues, signIn, violationsAtBothWidths, watchedPage, webApp } from './browser.js'

t.test('the upload page in Chromium', { skip: noChromium }, async (t) => {
  const { server, password, browser, dataDir, dashboard, march, indicator } = await webApp(t)
  const { page, problems } = await watchedPage(browser, undefined, 'Asia/Kolkata')
  await signIn(page, server.url, 'admin', password)
  await page.getByRole('link', { name: 'Upload' }).click()
  await page.getByRole('heading', { name: 'What the file holds' }).waitFor()
  t.match(await page.locator('.file-format').textContent(), /geocode, campaign/, 'the columns a campaign file needs')
  t.match(
    await page.locator('.file-format p').textContent(),
    /per indicator\. A geocode is a location’s code; campaign is the campaign’s name\. A column/,
    'its sentences apart',
  )
  const [template] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download a campaign file template' }).click()])
  t.equal(template.suggestedFilename(), 'campaign-template October 2016 - NID - bOPV.csv', 'named after its campaign')
  const lines = readFileSync((await template.path())!, 'utf8')
    .trim()
    .split('\r\n')
  t.equal(
    lines[0],
    'geocode,location_name,campaign,Access challenged,Children missed,Children vaccinated',
    'the fixed columns and the place’s name, then the indicators entered (calculated ones left out)',
  )
  t.equal(lines.length, 10, 'a row per district')
  t.equal(
    lines[1],
    'VD21,Dunmore,October 2016 - NID - bOPV,,,',
    'a row: a district’s code, its name and the latest campaign; Eastvale’s districts first, as in the tree by name',
  )
  t.match(
    await page.locator('.template-made').textContent(),
    /9 rows and 3 indicator columns\. Calculated by the system, so left out: Children targeted, Percent missed\./,
  )
  // Filled in as it is and uploaded: every value saved, nothing to map.
  const filledTemplate = join(dataDir, 'campaign-template.csv')
  writeFileSync(filledTemplate, `${[lines[0], ...lines.slice(1).map((line, i) => line.replace(/,,,$/, `,${i % 2},${30 + i},${900 + i}`))].join('\r\n')}\r\n`)
  await page.getByLabel('File (CSV or XLSX)').setInputFiles(filledTemplate)
  await page.getByRole('button', { name: 'Upload' }).click()
  await page.getByText('Done: 27 values saved.').waitFor()
  t.equal(await page.getByRole('heading', { name: 'Codes to map' }).count(), 0, 'the filled template: nothing to map')
  await page.getByLabel('Document type').selectOption('date')
  t.match(await page.locator('.file-format').textContent(), /geocode, data_date, unique_key/, 'a date file’s columns')
  await page.getByLabel('Document type').selectOption('campaign')

  const codes = ['VD11', 'VD12', 'VD13', 'VD21', 'VD22', 'VD23', 'VD31', 'VD32', 'VD33']
  const file = campaignFile(dataDir, 'field-counts.csv', 'Missed (field count)', Object.fromEntries(codes.map((code, i) => [code, 200 + i])))
  await page.getByLabel('File (CSV or XLSX)').setInputFiles(file)
  await page.getByRole('button', { name: 'Upload' }).click()
  await page.getByRole('heading', { name: 'Codes to map' }).waitFor()
  t.equal(await page.locator('progress').getAttribute('value'), '100', 'the transform’s progress reached 100 %')
  t.equal(await page.locator('.progress label').textContent(), 'Reading field-counts.csv100 %', 'the file under its own name')
  t.equal(
    await page.locator('.progress p').textContent(),
    '100 % Done: 0 values saved. 1 code waits for mapping below.',
    'honest wording: nothing saved yet, a code waits',
  )
  t.same(await violationsAtBothWidths(page), [], 'axe: the upload page with its summary and mapping, at 1280 and 375 px')

  await page.getByLabel('indicator “Missed (field count)”').selectOption({ label: 'Children missed' })
  await page.getByRole('button', { name: 'Apply mappings' }).click()
  await page.getByText('Applying mappings to field-counts.csv').waitFor()
  await page.getByText('Done: 9 values saved.').waitFor()
  const summary = Object.fromEntries(
    await page.locator('.summary dl div').evaluateAll((items) => items.map((i) => [i.querySelector('dt')!.textContent, i.querySelector('dd')!.textContent])),
  )
  t.match(summary, { 'Rows processed': '9', 'Values updated': '9', 'Campaigns recomputed': '1' }, 'the ingest summary')
  t.notOk('Lines without a key' in summary || 'Rows without a known location' in summary, 'no tile for a problem the file does not have')
  // The jobs' list is read again when the step ends: its newest row, once it shows this step finished.
  const newestJob = page.getByRole('region', { name: 'Jobs, scrollable' }).locator('tbody tr').first()
  await newestJob.filter({ hasText: 'Apply mappings' }).filter({ hasText: 'completed' }).waitFor()
  const jobs = await newestJob.evaluate((tr) => [...tr.children].map((c) => c.textContent))
  t.match(
    jobs,
    [/^\d+$/, 'Apply mappings', 'field-counts.csv', 'completed', /^\w{3} \d+, \d{4}, \d+:\d\d [AP]M GMT\+5:30$/],
    'a job: its step and file by name, finished in the reader’s zone',
  )

  await page.screenshot({ path: join(screenshotsDir(t), 'upload.png'), fullPage: true })

  await page.goto(`${server.url}/app/#/dashboard/${dashboard.get('Campaign overview')}?campaign=${march}`)
  await chartsDrawn(page, 5)
  const sums = {
    Northmarch: (200 + 201 + 202).toLocaleString('en'),
    Eastvale: (203 + 204 + 205).toLocaleString('en'),
    Southreach: (206 + 207 + 208).toLocaleString('en'),
  }
  t.same(await settledValues(figure(page, 'ColumnChart'), sums), sums, 'the uploaded values, summed by province, in the chart')

  // A recount whose file gives VD11 twice and VD13 on 23 lines, with different values: listed (VD13's
  // first 20 lines), and (the app's choice) neither saved.
  const recount = join(dataDir, 'recount.csv')
  const vd13 = Array.from({ length: 23 }, (_, i) => 500 + (i % 2))
  writeFileSync(
    recount,
    'geocode,campaign,Missed (field count)\nVD11,March 2016 - NID - OPV,300\nVD12,March 2016 - NID - OPV,400\nVD11,March 2016 - NID - OPV,310\n' +
      vd13.map((value) => `VD13,March 2016 - NID - OPV,${value}\n`).join(''),
  )
  await page.getByRole('link', { name: 'Upload' }).click()
  await page.getByLabel('File (CSV or XLSX)').setInputFiles(recount)
  t.equal(await page.getByLabel('When the file gives one cell two different values').inputValue(), 'reject', 'the app offers saving neither first')
  await page.getByRole('button', { name: 'Upload' }).click()
  await page.getByRole('heading', { name: 'Cells given two different values' }).waitFor()
  const duplicatesPart = page.locator('section[aria-labelledby="duplicates-heading"]')
  t.match(
    await duplicatesPart.locator('p').first().textContent(),
    /^2 cells have different values on different lines of the file\. None of these cells was saved\.$/,
  )
  const vd13Lines = vd13.slice(0, 20).map((_, i) => i + 5)
  t.same(
    await duplicatesPart.locator('tbody tr').evaluateAll((rows) => rows.map((r) => [...r.children].map((c) => c.textContent))),
    [
      ['VD11', 'March 2016 - NID - OPV', 'Missed (field count)', '2, 4', '300 · 310'],
      [
        'VD13',
        'March 2016 - NID - OPV',
        'Missed (field count)',
        `${vd13Lines.join(', ')} … and 3 more lines`,
        `${vd13.slice(0, 20).join(' · ')} … and 3 more lines`,
      ],
    ],
    'the location and campaign apart, the column, the file’s lines and their values; of a cell on many lines, the first 20 and how many more',
  )
  await page.getByText('Done: 1 value saved.').waitFor()
  // The value it changed, named: where, what, which campaign, from what to what.
  const changed = page.locator('section[aria-labelledby="changed-heading"] tbody tr')
  await changed.first().waitFor()
  t.same(
    await changed.evaluateAll((rows) => rows.map((r) => [...r.children].map((c) => c.textContent))),
    [['Brindle', 'Children missed', 'March 2016 - NID - OPV', '201', '400']],
    'the report names the value updated: Brindle’s missed children in March, 201 before, 400 after',
  )
  t.same(
    await changed.first().evaluate((row) => [...row.children].map((cell) => getComputedStyle(cell).textAlign)),
    ['left', 'left', 'left', 'right', 'right'],
    'its numbers right-aligned, as in every table',
  )
  // On a phone the value changed is a block: what it became in sight, under its column's name.
  await page.setViewportSize({ width: 375, height: 740 })
  const after = changed.first().locator('td').nth(4)
  t.ok(
    await after.evaluate((cell) => {
      const box = cell.getBoundingClientRect()
      return box.left >= 0 && box.right <= window.innerWidth && getComputedStyle(cell, '::before').content.includes('After')
    }),
    'at 375 px: After in view, named',
  )
  await page.setViewportSize({ width: 1280, height: 900 })
  t.same(await violationsAtBothWidths(page), [], 'axe: the upload page listing what disagrees, at 1280 and 375 px')

  // A file with a bad number, an unknown location, a cell given twice and a column to map.
  const messy = join(dataDir, 'messy.csv')
  writeFileSync(
    messy,
    'geocode,campaign,Children missed,Mystery\nVD21,June 2016 - SNID - OPV,abc,1\nXX99,June 2016 - SNID - OPV,4,2\nVD22,June 2016 - SNID - OPV,5,3\nVD22,June 2016 - SNID - OPV,6,3\n',
  )
  await page.getByRole('link', { name: 'Upload' }).click()
  await page.getByLabel('File (CSV or XLSX)').setInputFiles(messy)
  await page.getByRole('button', { name: 'Upload' }).click()
  await page.getByRole('heading', { name: 'Codes to map' }).waitFor()
  const table = (heading: string) =>
    page.locator(`section[aria-labelledby="${heading}"] tbody tr`).evaluateAll((rows) => rows.map((r) => [...r.children].map((c) => c.textContent)))
  const expectReport = async (when: string) => {
    t.same(await table('skipped-heading'), [['3', 'its location code is not mapped', 'XX99', 'June 2016 - SNID - OPV']], `${when}: the skipped line and why`)
    t.same(await table('rejected-heading'), [['2', 'Children missed', 'abc', 'not a number']], `${when}: the refused cell, its line, column and value`)
    t.same(await table('duplicates-heading'), [['VD22', 'June 2016 - SNID - OPV', 'Children missed', '4, 5', '5 · 6']], `${when}: the cell given twice`)
  }
  await expectReport('read')
  await page.getByLabel('indicator “Mystery”').selectOption({ label: 'Children vaccinated' })
  await page.getByRole('button', { name: 'Apply mappings' }).click()
  await page.getByText('Applying mappings to messy.csv').waitFor()
  await page.getByText('Done: 2 values saved.').waitFor()
  t.equal(
    await page.locator('.progress p').textContent(),
    '100 % Done: 2 values saved. 1 cell refused (listed below). 1 line skipped (listed below). 1 code waits for mapping below.',
    'the line says what was not saved beside what was',
  )
  await expectReport('after mapping')
  t.same(await violationsAtBothWidths(page), [], 'axe: the report of a messy file, at 1280 and 375 px')
  await page.screenshot({ path: join(screenshotsDir(t), 'upload-report.png'), fullPage: true })

  // Found again from the jobs list after leaving the page.
  await page.getByRole('link', { name: 'Dashboards' }).click()
  await page.getByRole('link', { name: 'Upload' }).click()
  const jobsTable = page.getByRole('region', { name: 'Jobs, scrollable' })
  await jobsTable.getByRole('link', { name: 'messy.csv' }).first().click()
  await page.getByRole('heading', { name: 'Report of messy.csv' }).waitFor()
  await expectReport('reopened')
  t.match(await page.getByRole('region', { name: 'Documents, scrollable' }).locator('tbody tr').first().textContent(), /messy\.csv.*Apply mappings: completed/)
  t.same(
    await page.getByRole('region', { name: 'Documents, scrollable' }).locator('tbody tr', { hasText: 'Data Entry' }).count(),
    0,
    'the documents are uploads: the one typed values are kept in is not listed',
  )

  // Revert: what it undoes said first.
  let question = ''
  page.once('dialog', (dialog) => {
    question = dialog.message()
    dialog.accept()
  })
  await page.getByRole('button', { name: 'Revert' }).click()
  await page.getByText(/^Reverted: /).waitFor()
  t.match(question, /^Revert “messy\.csv”\? Its \d+ values go back to what they were before it/)
  t.match(await page.locator('.reverted').textContent(), /^Reverted: 2 values put back, 0 removed/, 'the values before it back')

  // A DHIS2 data value set chosen as a file: imported as DHIS2 sends it, its summary said, its document's report opened.
  const mapped = await api(server, '/source_object_map/', {
    method: 'POST',
    body: JSON.stringify({ content_type: 'indicator', source_object_code: 'fClA2Erf6IO', master_object_id: indicator.get('Children missed') }),
  })
  t.equal(mapped.status, 201)
  const set = join(dataDir, 'set.json')
  writeFileSync(
    set,
    JSON.stringify({
      period: '201610',
      orgUnit: 'VD13',
      dataValues: [
        { dataElement: 'fClA2Erf6IO', value: '61' },
        { dataElement: 'fClA2Erf6IO', period: '201601', value: '9' },
      ],
    }),
  )
  await page.goto(`${server.url}/app/#/upload`)
  await page.getByLabel('File (CSV or XLSX)').setInputFiles(set)
  await page.getByRole('button', { name: 'Upload file' }).click()
  const imported = page.locator('.dhis2-summary')
  await imported.waitFor()
  t.equal(await imported.getByRole('status').textContent(), '0 values imported, 1 updated, 1 ignored.', 'DHIS2’s counts, in words')
  t.same(
    await imported.locator('li').allTextContents(),
    ['Values 2: no campaign starts in period 201601'],
    'the value set aside, by its place in the file, and why',
  )
  await page.waitForURL(/#\/upload\/\d+$/)
  t.pass('its document’s page opened')
  // The same as ADX XML: DHIS2's other format, chosen the same way.
  const adx = join(dataDir, 'set.xml')
  writeFileSync(
    adx,
    '<adx xmlns="urn:ihe:qrph:adx:2015" exported="2016-11-01T00:00:00Z"><group orgUnit="VD13" period="2016-10-01/P1M" dataSet="NID">' +
      '<dataValue dataElement="fClA2Erf6IO" value="62"/></group></adx>',
  )
  await page.goto(`${server.url}/app/#/upload`)
  await page.getByLabel('File (CSV or XLSX)').setInputFiles(adx)
  await page.getByRole('button', { name: 'Upload file' }).click()
  await page.locator('.dhis2-summary').getByText('0 values imported, 1 updated, 0 ignored.').waitFor()
  t.pass('an ADX file imported, its summary said')

  // A district added under Northmarch: the template lists it among Northmarch's districts, by name,
  // not at the end of the file.
  const byCode = async (code: string) => (await (await api(server, `/location/?location_code=${code}`)).json()).objects[0]
  const [northmarch, ashford] = [await byCode('VD1'), await byCode('VD11')]
  const added = await api(server, '/location/', {
    method: 'POST',
    body: JSON.stringify({ name: 'Aldermoor', location_code: 'VD14', location_type_id: ashford.location_type_id, parent_location_id: northmarch.id }),
  })
  t.equal(added.status, 201, 'Aldermoor added under Northmarch')
  await page.goto(`${server.url}/app/#/upload`)
  const [again] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download a campaign file template' }).click()])
  const templateCodes = readFileSync((await again.path())!, 'utf8')
    .trim()
    .split('\r\n')
    .slice(1)
    .map((line) => line.split(',')[0])
  const northmarchRows = templateCodes.flatMap((code, i) => (/^VD1\d$/.test(code) ? [i] : []))
  t.same(
    northmarchRows.map((i) => templateCodes[i]),
    ['VD14', 'VD11', 'VD12', 'VD13'],
    'Northmarch’s districts by name: Aldermoor before Ashford',
  )
  t.equal(northmarchRows.at(-1)! - northmarchRows[0], 3, 'together, under their province')
  t.same(problems, [])
})
