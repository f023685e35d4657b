// Users' groups, set by superusers: each user's groups (data entry, metadata editors…) as checkboxes,
// each tick one write of `user_group` through the API.
import { api, change } from '../api.js'
import { html } from '../html.js'
import { t } from '../i18n.js'
import { useRows } from './actions.js'

export function CatalogGroups({ done, say, version }) {
  const fail = (e) => say({ text: e.message, error: true })
  const users = useRows('/user/?limit=0', version, fail)
  const groups = useRows('/group/?limit=0', version, fail)
  const members = useRows('/user_group/?limit=0', version, fail)
  const membership = (userId, groupId) => members.find((m) => m.user_id === userId && m.group_id === groupId)
  const toggle = async (user, group, on) => {
    try {
      const held = membership(user.id, group.id)
      if (on && !held) await change('POST', '/user_group/', { user_id: user.id, group_id: group.id })
      if (!on && held) await api('DELETE', `/user_group/${held.id}/`)
      await done(t('{username}: groups saved', { username: user.username }))
    } catch (e) {
      fail(e)
    }
  }
  return html`<h2>${t('Users’ groups')}</h2>
    ${users.map(
      (u) => html`<fieldset key=${u.id} class="checkboxes"><legend>${t('Groups of {username}', { username: u.username })}</legend>
        ${groups.map(
          (g) =>
            html`<label class="choice" key=${g.id}><input type="checkbox" checked=${Boolean(membership(u.id, g.id))} onChange=${(e) => toggle(u, g, e.target.checked)} /> ${g.name}</label>`,
        )}
      </fieldset>`,
    )}`
}
