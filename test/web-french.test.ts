// The app in French in Chromium: a browser whose language is fr-FR gets the app in French (the sign-in
// button and its refusal, the dashboard's words, numbers as French writes them), axe clean in both
// languages, and a picked language is kept in this browser.
import t from 'tap'
import { chartsDrawn, figure, noChromium, numbersOf, tableValues, tooltipAt, violationsAtBothWidths, watchedPage, webApp } from './browser.js'

t.test('the app in French', { skip: noChromium }, async (t) => {
  const app = await webApp(t)
  const { server, password, browser } = app
  const dashboardId = app.dashboard.get('Campaign overview')!
  const { page, problems } = await watchedPage(browser, undefined, undefined, 'fr-FR')
  await page.goto(`${server.url}/app/`)
  const signIn = page.getByRole('button', { name: 'Se connecter' })
  await signIn.waitFor()
  t.equal(await page.evaluate(() => document.documentElement.lang), 'fr', 'the page says its language')
  t.same(await violationsAtBothWidths(page), [], 'axe: the sign-in page in French')
  await page.getByLabel('Nom d’utilisateur').fill('admin')
  // The API's refusal said in French, not in its English message.
  await page.getByLabel('Mot de passe').fill('not-the-password')
  await signIn.click()
  await page.getByText('Nom d’utilisateur ou mot de passe incorrect.').waitFor()
  t.pass('a wrong password refused in French')
  await page.getByLabel('Mot de passe').fill(password)
  await signIn.click()
  await page.getByRole('button', { name: 'Se déconnecter' }).waitFor()

  await page.goto(`${server.url}/app/#/dashboard/${dashboardId}?campaign=${app.march}`)
  await chartsDrawn(page, 5)
  t.equal(await page.getByRole('button', { name: 'Dupliquer', exact: true }).count(), 1, 'the dashboard’s words in French')
  // The location field shows its French words whole, on a computer and on a phone.
  const field = page.getByRole('combobox', { name: 'Lieu', exact: true })
  for (const width of [1280, 375]) {
    await page.setViewportSize({ width, height: 900 })
    t.equal(await field.inputValue(), 'Les lieux de chaque graphique')
    const cut = await field.evaluate((input) => input.scrollWidth - input.clientWidth)
    t.ok(cut <= 0, `at ${width} px the field shows its whole text (${cut} px cut off)`)
  }
  await page.setViewportSize({ width: 1280, height: 900 })
  const percents = tableValues(await numbersOf(figure(page, 'TableChart')), 4)
  t.equal(percents.Eastwick, '4,38 %', 'a percent as French writes it')
  t.match(await figure(page, 'LineChart').locator('svg').textContent(), /mars 2016/, 'months in French')
  // A tooltip as French writes it: a no-break space before its colons, its coverage after a comma, in
  // words ("3 districts sur 3", as English says "3 of 3 districts").
  const columnTip = await tooltipAt(page, 'ColumnChart', 'svg path[fill="#0b5cad"]', 1)
  t.match(columnTip, /\u00a0: [\d\u202f\u00a0]+, \d+ districts sur \d+/, `a column's tooltip in French: ${columnTip}`)
  t.notMatch(columnTip, /[^\u00a0]:/, 'no colon without its no-break space')
  t.match(await page.locator('.title-bar details.export a', { hasText: 'PDF, A4' }).getAttribute('href'), /lang=fr/, 'its export in French too')
  t.same(await page.locator('.title-bar details.export a').allTextContents(), ['PDF, A4', 'PDF, lettre US', 'PNG', 'SVG'], 'the files offered named in French')
  t.same(await violationsAtBothWidths(page), [], 'axe: the dashboard in French')
  // Every other page in French: axe at both widths, nothing wider than a phone (French runs longer).
  for (const [hash, heading] of [
    ['#/data', 'Données'],
    ['#/upload', 'Téléversement'],
    ['#/admin', 'Administration'],
    ['#/account', 'Votre compte'],
    [`#/chart/new/${dashboardId}`, 'Nouveau graphique'],
    [`#/dashboard/${dashboardId}/edit`, 'Modifier le tableau de bord'],
  ]) {
    await page.goto(`${server.url}/app/${hash}`)
    await page.getByRole('heading', { level: 1, name: heading }).waitFor()
    t.same(await violationsAtBothWidths(page), [], `axe: ${hash} in French`)
    // The page is an upload (a noun); its button uploads (a verb).
    if (hash === '#/upload') t.ok(await page.getByRole('button', { name: 'Téléverser', exact: true }).isVisible(), 'the upload button: Téléverser')
  }
  // The catalog says data formats and calculations in words, the API's code in the title.
  await page.goto(`${server.url}/app/#/catalog`)
  await page.getByRole('heading', { level: 1, name: 'Catalogue' }).waitFor()
  t.same(
    await page.getByLabel('Format des données').locator('option').allTextContents(),
    ['Nombre', 'Pourcentage', 'Oui ou non', 'Classe', 'Nombre par date'],
    'data formats in French words, no code',
  )
  // The components are read after the page is drawn: the demo's Percent missed has a numerator.
  const numerator = page.locator('ul.cards li', { hasText: '(Numérateur)' }).first()
  await numerator.waitFor()
  t.notMatch(await numerator.textContent(), /NUMERATOR/, 'a component’s calculation in words only')
  await page.goto(`${server.url}/app/#/dashboard/${dashboardId}?campaign=${app.march}`)
  await chartsDrawn(page, 5)

  // Picked: English, kept across a reload.
  await Promise.all([page.waitForEvent('load'), page.getByLabel('Langue').selectOption('en')])
  await page.getByRole('button', { name: 'Sign out' }).waitFor()
  await page.reload()
  await page.getByRole('button', { name: 'Sign out' }).waitFor()
  t.equal(await page.evaluate(() => document.documentElement.lang), 'en')
  await chartsDrawn(page, 5)
  t.equal(tableValues(await numbersOf(figure(page, 'TableChart')), 4).Eastwick, '4.38 %')
  t.same(await violationsAtBothWidths(page), [], 'axe: the dashboard in English')
  t.same(problems, [], 'no script error and no CSP refusal')
})
