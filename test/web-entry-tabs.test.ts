// Two people on the data-entry page of the same campaign and location, in two tabs of one Chromium
// (two contexts: two users, each responsible for Northmarch), typing into ONE cell in turn without
// reloading, 50 rounds; in some rounds one tab is offline while it types and its value is replayed from
// its outbox once it is back. After every write the cell's history in the API says whether it changed
// the value: each change must have been made over the value its tab had seen (the value in its cell
// as it typed, or the one its conflict showed when Keep mine was pressed), else it overwrote another's
// value silently; each write that changed nothing must show as a conflict on its own tab, and only
// there; and "Every value is sent" never shows beside an open conflict (watched in each page on every
// change of its document). Conflicts are settled in turn, each tab alternating Keep mine and Take theirs.
import t from 'tap'
import type { Page } from 'playwright-core'
import { noChromium, signIn, watchedPage, webApp } from './browser.js'
import { api } from './processes.js'

const ROUNDS = 50
/** The rounds in which a tab types offline: A in rounds ≡ 1 (mod 5), B in rounds ≡ 3 (mod 5). */
const offlineTab = (round: number) => (round % 5 === 1 ? 0 : round % 5 === 3 ? 1 : -1)

// In each page, on every change of its document: "Every value is sent" beside a conflict is written down.
const WATCH = `(() => {
  window.__sentWithConflict = [];
  new MutationObserver(() => {
    const status = document.querySelector('p.entry-waiting');
    if (status && status.textContent === 'Every value is sent' && document.querySelector('td.entry-error .actions'))
      window.__sentWithConflict.push(new Date().toISOString());
  }).observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
})()`

/** Polls `probe` until it returns something other than undefined (30 s, on a loaded machine), else throws saying `what`. */
async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const started = Date.now()
  for (;;) {
    const found = await probe()
    if (found !== undefined) return found
    if (Date.now() - started > ms) throw new Error(`waited ${ms} ms for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

const number = (text: string) => Number(text.replace(/,/g, ''))
const CONFLICT = /^Changed by someone else since the form was loaded: ([\d,]+) there now$/

t.test('two people typing into one cell in two tabs never overwrite each other silently', { skip: noChromium }, async (t) => {
  const { server, browser, read, indicator, location, march } = await webApp(t)
  const post = async (path: string, body: unknown) => (await api(server, path, { method: 'POST', body: JSON.stringify(body) })).json()
  const northmarch = location.get('Northmarch')!
  const ashford = location.get('Ashford')!
  const vaccinated = indicator.get('Children vaccinated')!
  const people = ['ana', 'ben']
  const userIds: number[] = []
  for (const name of people) {
    const user = (await post('/user/', { username: name, password: `${name}-types-2016` })) as { id: number }
    await post('/location_responsibility/', { user_id: user.id, top_lvl_location_id: northmarch })
    userIds.push(user.id)
  }
  const cellPath = `location_id=${ashford}&indicator_id=${vaccinated}&campaign_id=${march}`
  /** The cell's changes so far, oldest first. */
  const history = async () => (await read(`/datapoint_history/?${cellPath}&limit=0`)).objects.sort((a, b) => (a.id as number) - (b.id as number))
  const serverValue = async () =>
    (await read(`/campaign_datapoint/?indicator__in=${vaccinated}&campaign__in=${march}&location_id__in=${ashford}`)).objects[0].value as number

  const tabs: Array<{ name: string; userId: number; page: Page; problems: string[]; keepNext: boolean }> = []
  for (const [i, name] of people.entries()) {
    const { page, problems } = await watchedPage(browser)
    await page.context().addInitScript(WATCH)
    await signIn(page, server.url, name, `${name}-types-2016`)
    await page.goto(`${server.url}/app/#/entry?campaign=${march}&location=${northmarch}`)
    await page.getByLabel('Children vaccinated at Ashford', { exact: true }).waitFor()
    // Ana settles her first conflict by taking the other's value, Ben his by keeping his; then each alternates.
    tabs.push({ name, userId: userIds[i], page, problems, keepNext: i === 1 })
  }
  const input = (page: Page) => page.getByLabel('Children vaccinated at Ashford', { exact: true })
  const stateOf = (page: Page) => page.locator(`#cell-${ashford}-${vaccinated}-state`)
  /** The conflict the tab shows on the cell: the value it says is there now, or undefined. */
  const conflictShown = async (page: Page) => {
    const words = (await stateOf(page).textContent()) ?? ''
    const match = CONFLICT.exec(words)
    return match ? number(match[1]) : undefined
  }
  const initial = await serverValue()
  t.equal(number(await input(tabs[0].page).inputValue()), initial, 'both tabs show the stored value')
  t.equal(number(await input(tabs[1].page).inputValue()), initial, 'in both tabs')

  let seenRows = (await history()).length
  const silent: string[] = []
  const problems: string[] = []
  let writes = 0
  let conflicts = 0
  /** Values kept whose conflict came back: the other tab had changed the value after the first was shown. */
  let reconflicts = 0
  let nextValue = 2000

  /**
   * Waits for the answer to the tab's write of `value` over `seen`: a change in the history (checked to
   * be over `seen`, and the tab to show it saved, no conflict), or a conflict on the tab (checked to show
   * the value there now, and nothing changed). `before`: the conflict words the tab showed before (a
   * Keep mine), which must go first. Returns whether the write lost.
   */
  const settle = async (tab: (typeof tabs)[number], value: number, seen: number, what: string, before?: string) => {
    writes++
    if (before) await until(`${what}: the old conflict replaced`, async () => ((await stateOf(tab.page).textContent()) !== before ? true : undefined))
    const outcome = await until(`${what}: saved or a conflict`, async () => {
      if ((await conflictShown(tab.page)) !== undefined) return 'conflict'
      const rows = await history()
      return rows.length > seenRows ? 'changed' : undefined
    })
    const rows = await history()
    let wrote = false
    for (const row of rows.slice(seenRows)) {
      const by = tabs.find((x) => x.userId === row.user_id)?.name ?? `user ${row.user_id}`
      if (row.user_id !== tab.userId || row.value_after !== value)
        problems.push(`${what}: a change not made by this write: ${by} ${row.value_before} → ${row.value_after}`)
      else if (row.value_before !== seen) silent.push(`${what}: ${by} wrote ${value} over ${row.value_before}, having seen ${seen}`)
      wrote ||= row.user_id === tab.userId
    }
    seenRows = rows.length
    if (outcome === 'changed') {
      // The winner shows its value saved, and no conflict.
      const words = await until(`${what}: saved on ${tab.name}'s tab`, async () => {
        const text = (await stateOf(tab.page).textContent()) ?? ''
        return /^(Saved|Flagged by .*)$/.test(text) || CONFLICT.test(text) ? text : undefined
      })
      if (CONFLICT.test(words)) problems.push(`${what}: the write was saved but ${tab.name}'s tab shows a conflict: ${words}`)
      if (number(await input(tab.page).inputValue()) !== value) problems.push(`${what}: ${tab.name}'s cell does not show the value saved`)
      return false
    }
    conflicts++
    const theirs = await conflictShown(tab.page)
    const now = await serverValue()
    if (theirs !== now) problems.push(`${what}: ${tab.name}'s conflict says ${theirs} is there, the server has ${now}`)
    if (wrote) problems.push(`${what}: the value was written, yet ${tab.name}'s tab shows a conflict`)
    const status = await tab.page.locator('p.entry-waiting').textContent()
    if (status === 'Every value is sent') problems.push(`${what}: "Every value is sent" beside ${tab.name}'s conflict`)
    return true
  }

  /** A tab types `value` into the cell over what its cell shows, and commits with Enter. Returns what it had seen. */
  const type = async (tab: (typeof tabs)[number], value: number) => {
    const cell = input(tab.page)
    const seen = number(await cell.inputValue())
    // Every conflict was settled at the end of the last round: none shows on a tab before it types.
    const early = await conflictShown(tab.page)
    if (early !== undefined) problems.push(`${tab.name} shows a conflict (${early} there) before typing ${value}`)
    await cell.click()
    await tab.page.keyboard.press('Control+A')
    await tab.page.keyboard.type(value.toLocaleString('en'))
    await tab.page.keyboard.press('Enter')
    return seen
  }

  /**
   * Settles every open conflict, each tab alternating Keep mine and Take theirs from one typed value to
   * the next. A value kept may conflict again (the other tab changed the value after the conflict was
   * shown): the person, who now sees that value, keeps hers again.
   */
  const settleConflicts = async (round: number) => {
    const choices = new Map<string, boolean>()
    for (let pass = 0; pass < 10; pass++) {
      let open = false
      for (const tab of tabs) {
        const theirs = await conflictShown(tab.page)
        if (theirs === undefined) continue
        open = true
        const cell = tab.page.locator('td', { has: input(tab.page) })
        if (!choices.has(tab.name)) {
          choices.set(tab.name, tab.keepNext)
          tab.keepNext = !tab.keepNext
        } else reconflicts++
        if (choices.get(tab.name)) {
          const mine = number(await input(tab.page).inputValue())
          const before = (await stateOf(tab.page).textContent()) ?? ''
          await cell.getByRole('button', { name: 'Keep mine' }).click()
          await settle(tab, mine, theirs, `round ${round}, ${tab.name} keeps ${mine}`, before)
        } else {
          await cell.getByRole('button', { name: 'Take theirs' }).click()
          await until(`round ${round}: ${tab.name} takes theirs`, async () => {
            const text = (await stateOf(tab.page).textContent()) ?? ''
            return !CONFLICT.test(text) && text !== '' ? true : undefined
          })
          const now = await serverValue()
          await until(`round ${round}: ${tab.name}'s cell shows ${now}`, async () => (number(await input(tab.page).inputValue()) === now ? true : undefined))
        }
      }
      if (!open) return
    }
    problems.push(`round ${round}: conflicts still open after 10 passes`)
  }

  const started = Date.now()
  for (let round = 0; round < ROUNDS; round++) {
    const offline = offlineTab(round)
    const [a, b] = tabs
    const values = [nextValue++, nextValue++]
    if (offline === 0) {
      // Ana types offline: her value waits while Ben types his, then leaves once she is back.
      await a.page.context().setOffline(true)
      const seenA = await type(a, values[0])
      await stateOf(a.page).filter({ hasText: 'Waiting to be sent' }).waitFor()
      const seenB = await type(b, values[1])
      await settle(b, values[1], seenB, `round ${round}, ben types ${values[1]} while ana is offline`)
      await a.page.context().setOffline(false)
      await settle(a, values[0], seenA, `round ${round}, ana's ${values[0]} typed offline, sent`)
    } else {
      const seenA = await type(a, values[0])
      await settle(a, values[0], seenA, `round ${round}, ana types ${values[0]}`)
      if (offline === 1) {
        // Ben types offline and is back once his value was seen waiting.
        await b.page.context().setOffline(true)
        const seenB = await type(b, values[1])
        await stateOf(b.page).filter({ hasText: 'Waiting to be sent' }).waitFor()
        await b.page.context().setOffline(false)
        await settle(b, values[1], seenB, `round ${round}, ben's ${values[1]} typed offline, sent`)
      } else {
        const seenB = await type(b, values[1])
        await settle(b, values[1], seenB, `round ${round}, ben types ${values[1]}`)
      }
    }
    await settleConflicts(round)
    // The round over: the server's value is the history's last, and no tab shows a conflict.
    const rows = await history()
    const last = rows[rows.length - 1]?.value_after
    const now = await serverValue()
    if (last !== now) problems.push(`round ${round}: the server has ${now}, its history's last change ${last}`)
  }
  const seconds = Math.round((Date.now() - started) / 1000)
  const sentWithConflict = await Promise.all(
    tabs.map((tab) => tab.page.evaluate(() => (window as unknown as { __sentWithConflict: string[] }).__sentWithConflict.length)),
  )

  t.comment(`${ROUNDS} rounds in ${seconds} s: ${writes} writes, ${conflicts} conflicts (${reconflicts} after Keep mine), ${silent.length} silent overwrites`)
  t.ok(conflicts >= ROUNDS / 2, `conflicts happened (${conflicts}), and were shown`)
  t.ok(reconflicts > 0, `a value kept after the other tab had changed it again came back as a conflict (${reconflicts} times), not written over it`)
  t.same(silent, [], 'no write changed the value over a version its tab had not seen: 0 silent overwrites')
  t.same(problems, [], 'each lost write shows a conflict on its own tab only, each won one is shown saved')
  t.same(sentWithConflict, [0, 0], '"Every value is sent" never showed while a conflict was open, in either tab')
  t.same([...tabs[0].problems, ...tabs[1].problems], [], 'no script error, no CSP refusal')
})
