// For superusers: users and their passwords, API keys, location responsibilities (which part of the
// country a user is limited to). Indicators' bounds and class labels are the Catalog's. Every change
// goes through the same API a script would use.
import { useEffect, useState } from 'preact/hooks'
import { change, list } from '../api.js'
import { formatTime } from '../format.js'
import { html } from '../html.js'
import { t } from '../i18n.js'
import { LocationSearch } from './location-search.js'
import { ActionMessage, useActions } from './actions.js'
import { CopyButton } from './copy-button.js'
import { ScrollCue, useScrollCue } from './scroll-cue.js'

/**
 * A new user from the form, limited to `part` (null: everywhere) before she can sign in: made
 * disabled, limited, then enabled (her link is made after); a failure between leaves her disabled, and says so.
 */
async function createLimitedUser(form, part) {
  const username = form.get('username')
  const created = await change('POST', '/user/', { username, is_superuser: form.get('is_superuser') === 'on', is_active: part == null })
  if (part == null) return created
  try {
    await change('POST', '/location_responsibility/', { user_id: created.id, top_lvl_location_id: Number(part) })
    await change('PATCH', `/user/${created.id}/`, { is_active: true })
  } catch (e) {
    throw new Error(
      t('{username} was created disabled, without her limit ({reason}): set her location in the table, then enable her.', { username, reason: e.message }),
    )
  }
  return created
}

export function Admin({ catalog, user }) {
  const [users, setUsers] = useState([])
  // On a phone the users' table is wider than the screen: its Password and Access columns are a scroll away, said so.
  const [usersScroller, moreUserColumns] = useScrollCue()
  const [keys, setKeys] = useState([])
  const [responsibilities, setResponsibilities] = useState(new Map())
  const { message, setMessage, version, act } = useActions()
  const [newKey, setNewKey] = useState(null)
  const [resetLink, setResetLink] = useState(null)
  /** Responsibilities chosen but not saved yet, by user id (null: everywhere). */
  const [chosen, setChosen] = useState(new Map())
  useEffect(() => {
    ;(async () => {
      const people = await list('/user/?limit=0&order_by=username')
      setUsers(people)
      setKeys(await list('/api_key/?limit=0'))
      const rows = await Promise.all(people.map((u) => list(`/location_responsibility/?user_id=${u.id}`)))
      setResponsibilities(new Map(rows.flat().map((r) => [r.user_id, r])))
    })().catch((e) => setMessage({ text: e.message, error: true }))
  }, [version])
  /** A one-time link for `user` to set their own password: shown here once, never a password. */
  const showResetLink = async (user) => {
    const link = await change('POST', `/user/${user.id}/password_reset/`, {})
    setResetLink({ username: user.username, url: new URL(link.url, location.href).href, expires: formatTime(link.expires_at) })
  }
  const createUser = (form, part, onDone) =>
    act(t('User created: send them the link below to set their password'), async () => {
      await showResetLink(await createLimitedUser(form, part))
      onDone()
    })
  const issueResetLink = (user) => act(t('Reset link made for {username}', { username: user.username }), () => showResetLink(user))
  const setResponsibility = (user) =>
    act(t('Responsibility saved for {username}', { username: user.username }), () => {
      const current = responsibilities.get(user.id)
      const location = chosen.has(user.id) ? chosen.get(user.id) : current?.top_lvl_location_id
      if (location == null) return current ? change('DELETE', `/location_responsibility/${current.id}/`) : Promise.resolve()
      const body = { user_id: user.id, top_lvl_location_id: Number(location) }
      return current ? change('PATCH', `/location_responsibility/${current.id}/`, body) : change('POST', '/location_responsibility/', body)
    })
  const setActive = (user, active) =>
    act(
      active ? t('{username} may sign in again', { username: user.username }) : t('{username} is disabled: no sign-in, no key', { username: user.username }),
      () => change('PATCH', `/user/${user.id}/`, { is_active: active }),
    )
  const createKey = act(t('Key created: copy it now, it is not shown again'), async (form) => {
    const created = await change('POST', '/api_key/', { user_id: Number(form.get('user')) })
    setNewKey({ id: created.id, text: `${created.user__username}:${created.key}` })
  })
  const revokeKey = (key) =>
    act(t('Key {id} revoked', { id: key.id }), async () => {
      await change('DELETE', `/api_key/${key.id}/`)
      if (newKey?.id === key.id) setNewKey(null)
    })

  return html`<h1>${t('Administration')}</h1>
    <${ActionMessage} message=${message} />
    <section aria-labelledby="users-heading">
      <h2 id="users-heading">${t('Users')}</h2>
      <${ScrollCue} more=${moreUserColumns} />
      <div class="table-scroll" ref=${usersScroller} tabindex="0" role="region" aria-label=${t('Users, scrollable')}><table>
        <thead><tr><th scope="col">${t('User')}</th><th scope="col">${t('Superuser')}</th><th scope="col">${t('Limited to')}</th><th scope="col">${t('Password')}</th><th scope="col">${t('Access')}</th></tr></thead>
        <tbody>${users.map(
          (u) => html`<tr key=${u.id}>
            <th scope="row">${u.username}</th>
            <td>${u.is_superuser ? t('yes') : t('no')}</td>
            <td><form class="inline" onSubmit=${setResponsibility(u)}>
              <${LocationSearch} catalog=${catalog} label=${t('Location responsibility of {username}', { username: u.username })} hideLabel=${true} allowNone=${true}
                locationId=${chosen.has(u.id) ? chosen.get(u.id) : responsibilities.get(u.id)?.top_lvl_location_id}
                onChange=${(id) => setChosen(new Map(chosen).set(u.id, id))} />
              <button type="submit" class="secondary" aria-label=${t('Save responsibility of {username}', { username: u.username })}>${t('Save')}</button>
            </form></td>
            <td><button class="secondary" onClick=${issueResetLink(u)} aria-label=${t('Reset link for {username}', { username: u.username })}>${t('Reset link')}</button></td>
            <td>${
              u.id === user?.id
                ? html`<span class="hint">${t('You cannot disable yourself')}</span>`
                : html`${u.is_active === false ? `${t('disabled')} ` : ''}<button class="secondary" onClick=${setActive(u, u.is_active === false)} aria-label=${u.is_active === false ? t('Enable {username}', { username: u.username }) : t('Disable {username}', { username: u.username })}>
              ${u.is_active === false ? t('Enable') : t('Disable')}</button>`
            }</td>
          </tr>`,
        )}</tbody>
      </table></div>
      <${NewUser} catalog=${catalog} onCreate=${createUser} />
    </section>
    ${
      resetLink &&
      html`<p class="notice">${t('A link for {username} to set their password, once, until {expires}:', { username: resetLink.username, expires: resetLink.expires })} <code class="reset-link">${resetLink.url}</code>
        <${CopyButton} text=${resetLink.url} selector="code.reset-link" /></p>`
    }
    <${ApiKeys} keys=${keys} users=${users} newKey=${newKey} onCreate=${createKey} onRevoke=${revokeKey} />
    <p class="hint">${t('Indicators’ bounds and class labels are indicator metadata:')} <a href="#/catalog/indicators">${t('Catalog, Indicators')}</a></p>`
}

/**
 * The new user form: her name, the part of the country she is limited to (none: everywhere) and
 * whether she is a superuser. `onCreate(form data, part, onDone)` gives the handler that creates her.
 */
function NewUser({ catalog, onCreate }) {
  const [part, setPart] = useState(null)
  // The limit chosen stays until she is created, as the name typed does (a refusal keeps both).
  const submit = (event) => onCreate(new FormData(event.target), part, () => setPart(null))(event)
  return html`<h3>${t('New user')}</h3>
    <form class="inline" onSubmit=${submit}>
      <label>${t('New username')} <input name="username" required pattern="[A-Za-z0-9_.@+\\-]+" /></label>
      <${LocationSearch} catalog=${catalog} label=${t('Limited to')} allowNone=${true} locationId=${part} onChange=${setPart} />
      <label class="choice"><input type="checkbox" name="is_superuser" /> ${t('Superuser')}</label>
      <button type="submit">${t('Create user')}</button>
    </form>`
}

/**
 * The API keys: each with when it was made and last used, a revoke button that asks first (a script
 * using the key stops at once, and a revoked key cannot be brought back); a new one shown once.
 */
function ApiKeys({ keys, users, newKey, onCreate, onRevoke }) {
  const [asking, setAsking] = useState(null)
  const confirm = (key) => async (event) => {
    setAsking(null)
    await onRevoke(key)(event)
  }
  return html`<section aria-labelledby="keys-heading">
      <h2 id="keys-heading">${t('API keys')}</h2>
      ${newKey && html`<p class="notice">${t('New key (send it as Authorization: ApiKey and the key):')} <code class="new-key">${newKey.text}</code></p>`}
      <ul class="cards">${keys.map(
        (
          k,
        ) => html`<li key=${k.id} class="chart-item"><span>${t('Key {id} of {username}, made {made}, last used {used}', { id: k.id, username: k.user__username, made: formatTime(k.created_at), used: k.last_used_at ? formatTime(k.last_used_at) : t('never') })}</span>
          <span class="actions">
            <button class="secondary" onClick=${() => setAsking(k.id)} aria-label=${t('Revoke key {id}', { id: k.id })} aria-expanded=${asking === k.id ? 'true' : 'false'}>${t('Revoke')}</button>
            ${
              asking === k.id &&
              html`<span class="error" role="alert">${t('Revoke key {id}? Whatever uses it loses its access at once, for good.', { id: k.id })}</span>
                <button class="danger" onClick=${confirm(k)}>${t('Yes, revoke key {id}', { id: k.id })}</button>
                <button class="secondary" onClick=${() => setAsking(null)}>${t('Cancel')}</button>`
            }
          </span></li>`,
      )}</ul>
      <form class="inline" onSubmit=${onCreate}>
        <label>${t('Key for')} <select name="user">${users.map((u) => html`<option key=${u.id} value=${u.id}>${u.username}</option>`)}</select></label>
        <button type="submit">${t('Create key')}</button>
      </form>
    </section>`
}
