// Parts of the catalog pages: a list of rows each with its edit in place (one PATCH of the fields
// changed) and its delete (which says first what depends on the row: the API's 409 names the
// dependent rows, and only then is the cascade offered), and a form that creates a row through the
// public API.
import { useState } from 'preact/hooks'
import { api, change } from '../api.js'
import { html } from '../html.js'
import { t } from '../i18n.js'
import { refusalText } from '../api-messages.js'

/** The words of the API's dependents ({table: count}): "2 campaign, 14 datapoint". */
const dependentsText = (dependents) =>
  Object.entries(dependents ?? {})
    .map(([table, n]) => t('{n} {table} row(s)', { n, table }))
    .join(', ')

/**
 * A delete button, for superusers (the API lets only them delete shared metadata): the first click asks
 * the API without cascade; rows that depend on this one are named, and only then is their delete offered.
 */
export function DeleteButton({ resource, row, name, user, onDeleted, onMessage }) {
  const [dependents, setDependents] = useState(null)
  if (!user.is_superuser) return null
  const remove = async (cascade) => {
    const res = await api('DELETE', `/${resource}/${row.id}/${cascade ? '?cascade=true' : ''}`)
    if (res.status === 204) {
      setDependents(null)
      onMessage({ text: t('{name} deleted', { name }), error: false })
      return onDeleted()
    }
    if (res.body?.code === 'HAS_DEPENDENTS') return setDependents(res.body.details.dependents)
    onMessage({ text: refusalText(res.body, String(res.status)), error: true })
  }
  return html`<span class="actions">
    <button type="button" class="secondary" aria-label=${t('Delete {name}', { name })} onClick=${() => remove(false)}>${t('Delete')}</button>
    ${
      dependents &&
      html`<span class="error" role="alert">${t('{name} is used by {rows}.', { name, rows: dependentsText(dependents) })}</span>
        <button type="button" class="danger" onClick=${() => remove(true)}>${t('Delete {name} and what depends on it', { name })}</button>`
    }
  </span>`
}

/** A form whose fields become one POST (numbers read as numbers, empty fields left out). */
export function CreateForm({ resource, fields, submit, onCreated, onMessage, children }) {
  const send = async (event) => {
    event.preventDefault()
    const form = event.target
    const body = {}
    for (const [name, kind] of fields) {
      const value = new FormData(form).get(name)
      if (value === null || value === '') continue
      body[name] = kind === 'number' ? Number(String(value).replace(',', '.')) : value
    }
    try {
      const created = await change('POST', `/${resource}/`, body)
      form.reset()
      await onCreated(created)
    } catch (e) {
      onMessage({ text: e.message, error: true })
    }
  }
  return html`<form class="inline catalog-form" onSubmit=${send}>${children}<button type="submit">${submit}</button></form>`
}

/**
 * A row's fields edited where it is listed: the button opens them filled with the row's values, and
 * Save sends the ones changed as one PATCH. `fields`: [{ field, label, type }] (type of the input, text
 * by default); every field is required, as on creation.
 */
export function EditButton({ resource, row, name, fields, onSaved, onMessage }) {
  const [open, setOpen] = useState(false)
  if (!open) return html`<button type="button" class="secondary" aria-label=${t('Edit {name}', { name })} onClick=${() => setOpen(true)}>${t('Edit')}</button>`
  const save = async (event) => {
    event.preventDefault()
    const form = new FormData(event.target)
    const changed = Object.fromEntries(
      fields.map(({ field }) => [field, String(form.get(field) ?? '')]).filter(([field, value]) => value !== String(row[field] ?? '')),
    )
    try {
      if (Object.keys(changed).length) await change('PATCH', `/${resource}/${row.id}/`, changed)
      setOpen(false)
      await onSaved(t('{name} saved', { name: changed.name ?? changed.short_name ?? name }))
    } catch (e) {
      onMessage({ text: e.message, error: true })
    }
  }
  return html`<form class="inline catalog-form" aria-label=${t('Edit {name}', { name })} onSubmit=${save}>
    ${fields.map(({ field, label, type = 'text' }) => html`<label key=${field}>${label} <input name=${field} type=${type} required value=${row[field] ?? ''} /></label>`)}
    <button type="submit">${t('Save')}</button>
    <button type="button" class="secondary" onClick=${() => setOpen(false)}>${t('Cancel')}</button>
  </form>`
}
