// `GET /api/v1/<r>/schema/` (resource-api §12): the declaration and the table schema, described.
import type { ColumnKind, ColumnMeta } from '../../schemas/columns.js'
import { formatsOf } from './list-params.js'
import { LOOKUPS_BY_KIND } from './filters.js'
import { resolveField } from './filters.js'
import type { Resource } from './resource.js'
import { aliasOf, DEFAULT_LIMIT, helpOf, kindOf, MAX_LIMIT, SCHEMA_DOC_TYPE } from './query.js'

const HELP: Record<ColumnKind, string> = {
  integer: 'Integer data. Ex: 2673',
  float: 'Floating point numeric data. Ex: 26.73',
  string: 'Unicode string data. Ex: "Hello World"',
  boolean: 'Boolean data. Ex: True',
  date: 'A date as a string. Ex: "2010-11-10"',
  datetime: 'A date & time as a string. Ex: "2010-11-10T03:07:43.000000"',
  json: 'A JSON value.',
  related: 'Integer id of a <resource>.',
}

const METHOD_ORDER = ['GET', 'POST', 'PATCH', 'DELETE'] as const

export function describeResource(resource: Resource, resourceOfTable: (table: string) => string | undefined) {
  const field = (name: string, kind: ColumnKind, meta?: Partial<ColumnMeta>, extra: Record<string, unknown> = {}) => {
    const related = meta?.references ? (resourceOfTable(meta.references) ?? meta.references) : undefined
    return {
      type: kind,
      nullable: meta?.nullable ?? false,
      blank: kind === 'string' && meta?.maxLength !== undefined ? !meta?.enum : false,
      default: meta?.default !== undefined ? meta.default : 'No default provided.',
      unique: meta?.unique ?? false,
      primary_key: meta?.primaryKey ?? false,
      readonly: meta?.readonly ?? true,
      help_text: related ? HELP.related.replace('<resource>', related) : HELP[kind],
      verbose_name: name.replace(/_/g, ' '),
      ...(related ? { related_resource: related } : {}),
      ...extra,
    }
  }

  const fields: Record<string, unknown> = {}
  for (const [name, meta] of Object.entries(resource.columns)) fields[name] = field(name, meta.kind, meta)
  for (const name of resource.query_fields) {
    if (name in fields) continue
    const info = resolveField(resource, name)
    if (!info) continue
    const target = info.meta
    if (info.expression) fields[name] = field(name, info.kind, { readonly: true })
    else {
      fields[name] = field(
        name,
        target?.kind === 'related' ? 'integer' : info.kind,
        { readonly: true, nullable: true },
        {
          related_resource: info.path.length ? info.path[info.path.length - 1] : undefined,
          related_field: info.column,
        },
      )
    }
  }
  for (const [name, kind] of Object.entries(resource.result_fields)) fields[name] = field(name, kind)

  const filtering: Record<string, string[]> = {}
  for (const name of resource.filtering) {
    const info = resolveField(resource, name)
    if (info) filtering[name] = LOOKUPS_BY_KIND[info.kind]
  }
  const methods = new Set([...resource.methods.list, ...resource.methods.detail])
  const ordering = [...resource.ordering]
  if ('id' in resource.columns && !ordering.some((o) => o.replace('-', '') === 'id')) ordering.push('id')

  return {
    resource_name: resource.name,
    aliases: resource.aliases,
    kind: resource.kind,
    allowed_methods: METHOD_ORDER.filter((m) => methods.has(m)),
    allowed_list_http_methods: resource.methods.list.map((m) => m.toLowerCase()),
    allowed_detail_http_methods: resource.methods.detail.map((m) => m.toLowerCase()),
    default_format: 'application/json',
    formats: formatsOf(resource),
    default_limit: DEFAULT_LIMIT,
    max_limit: MAX_LIMIT,
    ordering: resource.kind === 'model' ? ordering : [],
    GET_params_required: resource.GET_params_required,
    required_fields_for_post: resource.required_fields_for_post,
    query_fields: resource.query_fields,
    filtering,
    // An alias is listed beside its parameter, said to be one.
    params: Object.fromEntries(
      Object.entries(resource.params).flatMap(([name, p]) => {
        const entry = { type: SCHEMA_DOC_TYPE[kindOf(p)], required: resource.GET_params_required.includes(name), help: helpOf(p) }
        const alias = aliasOf(p)
        return alias === undefined
          ? [[name, entry]]
          : [
              [name, entry],
              [alias, { ...entry, required: false, help: `alias of ${name}` }],
            ]
      }),
    ),
    list_delete_by: resource.list_delete_by,
    fields,
    ...(resource.description ? { description: resource.description } : {}),
  }
}
