// DHIS2's ImportReport for a metadata import: per type, what was created, updated or ignored, and each
// object's errors and warnings, with DHIS2's codes where one means the same. One object's refusal (an
// ObjectError, or a resource's 4xx) becomes its error report and the import goes on; anything else (the
// database gone, a bug) is not the object's and fails the import. Apart from the import's writes
// (metadata-import.ts), which log into it: what DHIS2's clients read back is in one place.
import { ApiError, fromDatabaseError } from '../core/errors.js'
import type { MetadataImportOptions } from './metadata-payload.js'

/** DHIS2's class of each type, as its reports name it. */
export const KLASS = {
  level: 'org.hisp.dhis.organisationunit.OrganisationUnitLevel',
  unit: 'org.hisp.dhis.organisationunit.OrganisationUnit',
  element: 'org.hisp.dhis.dataelement.DataElement',
} as const

/**
 * The codes of object reports: DHIS2's where one means the same (E3000 not allowed to create, E3001 to
 * update, E4001 a value the resource refuses, E5002 a reference not imported, E5003 a name or code
 * already another object's); warnings are this API's own (W1xxx), since DHIS2 has none in this report.
 */
export const CODE = {
  forbidden: 'E3000',
  notUpdatable: 'E3001',
  invalid: 'E4001',
  reference: 'E5002',
  taken: 'E5003',
  renamed: 'W1001',
  mappedElsewhere: 'W1002',
  notMapped: 'W1003',
  valueType: 'W1004',
} as const

export interface ErrorReport {
  message: string
  mainKlass: string
  errorCode: string
  errorProperty?: string
}

interface ObjectReport {
  klass: string
  index: number
  uid?: string
  displayName?: string
  errorReports: ErrorReport[]
  warningReports?: ErrorReport[]
}

export interface Stats {
  created: number
  updated: number
  deleted: number
  ignored: number
  total: number
}

export interface TypeReport {
  klass: string
  stats: Stats
  objectReports: ObjectReport[]
}

/** DHIS2's ImportReport, with the payload's keys this API does not import (`ignoredTypes`). */
export interface ImportReport {
  importParams: MetadataImportOptions & { username: string }
  status: 'OK' | 'WARNING' | 'ERROR'
  typeReports: TypeReport[]
  stats: Stats
  ignoredTypes: string[]
}

export type Outcome = 'created' | 'updated' | 'ignored'

/** What one object's import found: its errors (it is not imported) and warnings (it is, as said). */
export class ObjectLog {
  readonly errors: ErrorReport[] = []
  readonly warnings: ErrorReport[] = []
  /** It names a row that exists: a refusal is of an update. */
  matched = false
  constructor(
    readonly klass: string,
    readonly index: number,
    readonly uid: string | undefined,
    readonly displayName: string,
  ) {}

  warn(errorCode: string, message: string, errorProperty?: string) {
    this.warnings.push({ message, mainKlass: this.klass, errorCode, ...(errorProperty ? { errorProperty } : {}) })
  }
}

/** An object's error that the import reports (the object is not imported) and goes on. */
export class ObjectError extends Error {
  constructor(
    readonly errorCode: string,
    message: string,
    readonly errorProperty?: string,
  ) {
    super(message)
  }
}

/** A failure of one object as its error report; undefined for one that is not the object's (the database gone, a bug). */
export function errorReportOf(error: unknown, klass: string, updating: boolean): ErrorReport | undefined {
  if (error instanceof ObjectError) {
    return { message: error.message, mainKlass: klass, errorCode: error.errorCode, ...(error.errorProperty ? { errorProperty: error.errorProperty } : {}) }
  }
  const refused = error instanceof ApiError ? error : fromDatabaseError(error)
  if (!refused || refused.statusCode >= 500) return undefined
  const errorCode =
    refused.statusCode === 403 || refused.statusCode === 404
      ? updating
        ? CODE.notUpdatable
        : CODE.forbidden
      : refused.statusCode === 409
        ? CODE.taken
        : CODE.invalid
  // A row outside the requester's part is not found by her writes (404): said as what it is.
  const message = refused.statusCode === 404 ? 'The location is outside the locations you are responsible for' : refused.message
  return { message, mainKlass: klass, errorCode }
}

/** One type's objects as reported. */
export class TypeLog {
  readonly stats: Stats = { created: 0, updated: 0, deleted: 0, ignored: 0, total: 0 }
  readonly objects: ObjectLog[] = []
  constructor(readonly klass: string) {}

  add(outcome: Outcome, log: ObjectLog) {
    this.stats[outcome]++
    this.stats.total++
    this.objects.push(log)
  }

  get errors() {
    return this.objects.reduce((n, o) => n + o.errors.length, 0)
  }

  get warnings() {
    return this.objects.reduce((n, o) => n + o.warnings.length, 0)
  }

  /** Its report; `rolledBack`: nothing of it was kept, every object counted as ignored. */
  report(mode: MetadataImportOptions['importReportMode'], rolledBack: boolean): TypeReport {
    const stats = rolledBack ? { created: 0, updated: 0, deleted: 0, ignored: this.stats.total, total: this.stats.total } : { ...this.stats }
    const listed = mode === 'ERRORS' ? this.objects.filter((o) => o.errors.length || o.warnings.length) : this.objects
    return {
      klass: this.klass,
      stats,
      objectReports: listed.map((o) => ({
        klass: o.klass,
        index: o.index,
        ...(o.uid ? { uid: o.uid } : {}),
        ...(mode === 'DEBUG' ? { displayName: o.displayName } : {}),
        errorReports: o.errors,
        ...(o.warnings.length ? { warningReports: o.warnings } : {}),
      })),
    }
  }
}
