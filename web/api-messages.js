// The API's refusals in the reader's language. The API answers a stable `code` with an English
// `message` written for developers; a reader of another language gets the code said in her words,
// with what the answer's details name (a file's missing columns, a rule's name). An English reader,
// or a code not listed here, gets the API's own message.
import { language, t, tn } from './i18n.js'

/** What each code a person meets in the app means, from the answer's details. @type {Record<string, (details: any) => string>} */
const REFUSALS = {
  INVALID_CREDENTIALS: () => t('Wrong username or password.'),
  TOO_MANY_AUTH_FAILURES: () => t('Too many failed sign-ins: wait a minute, then try again.'),
  SIGN_IN_BUSY: () => t('Too many sign-ins at once: try again in a moment.'),
  UNAUTHENTICATED: () => t('Your session has ended: sign in again.'),
  FORBIDDEN: () => t('Your account may not do this.'),
  OWNER_FORBIDDEN: () => t('Only its owner or an administrator may do this.'),
  LOCATION_FORBIDDEN: () => t('This place is outside your part of the country.'),
  NOT_FOUND: () => t('It no longer exists: reload the page.'),
  UNIQUE_VIOLATION: () => t('That name or code is already taken.'),
  FOREIGN_KEY_VIOLATION: () => t('Something it refers to no longer exists: reload the page.'),
  NOT_NULL_VIOLATION: () => t('A required field is empty.'),
  CALCULATION_CYCLE: () => t('Refused: the indicator would be calculated from itself.'),
  LOCATION_CYCLE: () => t('Refused: a place cannot be inside itself.'),
  PRECONDITION_FAILED: () => t('Someone changed it meanwhile: reload the page to see their change.'),
  VALIDATION_BLOCKED: (details) =>
    tn(details?.count ?? 1, 'Refused by the validation rule {rules}.', 'Refused by the validation rules {rules}.', {
      rules: [...new Set((details?.violations ?? []).map((v) => t('“{name}”', { name: v.rule?.name ?? '?' })))].join(', '),
    }),
  ALREADY_FOLLOWED_UP: () => t('This value is already marked to be checked.'),
  ALREADY_RESOLVED: () => t('This follow-up is already resolved.'),
  MISSING_COLUMN: (details) =>
    tn(details?.missing?.length ?? 1, 'The file lacks the column {columns}.', 'The file lacks the columns {columns}.', {
      columns: (details?.missing ?? []).join(', '),
    }),
  EMPTY_FILE: () => t('The file is empty.'),
  UNSUPPORTED_FILE_TYPE: () => t('Not a CSV or XLSX file.'),
  UNREADABLE_FILE: () => t('The file cannot be read as CSV or XLSX.'),
  PAYLOAD_TOO_LARGE: () => t('The file is too large.'),
  FILE_TOO_LARGE_TO_READ: () => t('The file is too large.'),
  FILE_TOO_LARGE_UNCOMPRESSED: () => t('The file is too large.'),
  TOO_MANY_COLUMNS: () => t('The file has too many columns.'),
  DATABASE_BUSY: () => t('The database is busy with other work on the same data; nothing was changed. Try again in a moment.'),
  DATABASE_UNAVAILABLE: () => t('The database cannot be reached; nothing was changed. Try again in a moment.'),
  UNDER_PRESSURE: () => t('The server is busy: try again in a moment.'),
  TOO_MUCH_WORK: () => t('You have too much work running: wait for it to finish.'),
  TOO_MANY_JOBS: () => t('You have too much work running: wait for it to finish.'),
  SHUTTING_DOWN: () => t('The server is restarting: try again in a moment.'),
}

/**
 * What to tell the reader of a refused call: its `body` (`{code, message, details}`) in her language,
 * else the API's message, else `fallback`.
 * @param {{ code?: string, message?: string, details?: unknown } | null | undefined} body
 * @param {string} fallback
 */
export function refusalText(body, fallback) {
  const said = language() !== 'en' && body?.code ? REFUSALS[body.code] : undefined
  return said ? said(body.details) : (body?.message ?? fallback)
}
