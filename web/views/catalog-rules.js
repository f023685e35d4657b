// Validation rules in the catalog: each compares two indicators' final values at one location and
// campaign (missed ≤ targeted); a broken rule flags the value, or refuses the write that broke it.
// Made, changed and deleted through the public API, which refuses sides it cannot compare and says why.
import { change } from '../api.js'
import { html } from '../html.js'
import { t } from '../i18n.js'
import { useRows } from './actions.js'
import { CreateForm, DeleteButton } from './catalog-parts.js'

/** The operators as the API spells them, each with its words. */
const OPERATORS = {
  '<=': () => t('at most'),
  '<': () => t('less than'),
  '=': () => t('equal to'),
  '>=': () => t('at least'),
  '>': () => t('more than'),
  '!=': () => t('other than'),
}
const ACTIONS = {
  flag: () => t('Flag the value'),
  block: () => t('Refuse the write'),
}
const choices = (words) =>
  Object.entries(words).map(([code, label]) => html`<option key=${code} value=${code}>${code in OPERATORS ? `${code} (${label()})` : label()}</option>`)

/** A rule as a sentence: "Children missed is at most Children targeted". */
const sentence = (rule, name) =>
  t('{left} is {operator} {right}', {
    left: name(rule.left_indicator_id),
    operator: OPERATORS[rule.operator]?.() ?? rule.operator,
    right: name(rule.right_indicator_id),
  })

/** One rule: what it says, its operator and action to change, its delete. */
function Rule({ rule, name, user, done, say }) {
  const save = async (event) => {
    event.preventDefault()
    const form = new FormData(event.target)
    try {
      await change('PATCH', `/validation_rule/${rule.id}/`, { operator: form.get('operator'), action: form.get('action') })
      done(t('Rule {name} saved', { name: rule.name }))
    } catch (e) {
      say({ text: e.message, error: true })
    }
  }
  return html`<li class="chart-item rule">
    <span><strong>${rule.name}</strong>: ${sentence(rule, name)} · ${ACTIONS[rule.action]?.() ?? rule.action}</span>
    <form class="inline" onSubmit=${save} aria-label=${t('Change {name}', { name: rule.name })}>
      <label>${t('Operator')} <select name="operator" value=${rule.operator}>${choices(OPERATORS)}</select></label>
      <label>${t('When broken')} <select name="action" value=${rule.action}>${choices(ACTIONS)}</select></label>
      <button type="submit" class="secondary">${t('Save')}</button>
    </form>
    <${DeleteButton} resource="validation_rule" row=${rule} name=${rule.name} user=${user} onDeleted=${() => done('')} onMessage=${say} />
  </li>`
}

export function CatalogRules({ catalog, user, done, say, version }) {
  const rules = useRows('/validation_rule/?limit=0&order_by=name', version, (e) => say({ text: e.message, error: true }))
  const name = (id) => catalog.indicatorName.get(id) ?? String(id)
  const indicators = catalog.indicators.map((i) => html`<option key=${i.id} value=${i.id}>${i.short_name}</option>`)
  return html`<h2>${t('New rule')}</h2>
    <p class="hint">${t('A rule compares two indicators of one format at each location and campaign. A value that breaks it is flagged in data entry and in uploads; a rule that refuses the write stops it.')}</p>
    <${CreateForm} resource="validation_rule" submit=${t('Create rule')} onCreated=${() => done(t('Rule created'))} onMessage=${say}
      fields=${[['name'], ['left_indicator_id', 'number'], ['operator'], ['right_indicator_id', 'number'], ['action']]}>
      <label>${t('Name')} <input name="name" required maxlength="255" /></label>
      <label>${t('Indicator')} <select name="left_indicator_id">${indicators}</select></label>
      <label>${t('Operator')} <select name="operator">${choices(OPERATORS)}</select></label>
      <label>${t('Compared with')} <select name="right_indicator_id">${indicators}</select></label>
      <label>${t('When broken')} <select name="action">${choices(ACTIONS)}</select></label>
    <//>
    <h2>${t('Rules')}</h2>
    ${rules.length === 0 && html`<p>${t('No rules yet.')}</p>`}
    <ul class="cards">${rules.map((rule) => html`<${Rule} key=${rule.id} rule=${rule} name=${name} user=${user} done=${done} say=${say} />`)}</ul>`
}
