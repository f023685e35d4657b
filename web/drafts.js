// Unsaved edits kept in the tab's session storage, so that leaving the dashboard editor to build a
// chart, or reloading, loses nothing; cleared when the edit is saved or cancelled.

const keyOf = (kind, id) => `rhizome:draft:${kind}:${id}`

/** The draft of one thing being edited, or null. */
export function loadDraft(kind, id) {
  try {
    return JSON.parse(sessionStorage.getItem(keyOf(kind, id)) ?? 'null')
  } catch {
    return null
  }
}

export const saveDraft = (kind, id, draft) => sessionStorage.setItem(keyOf(kind, id), JSON.stringify(draft))
export const clearDraft = (kind, id) => sessionStorage.removeItem(keyOf(kind, id))
