// Unit tests of the filter grammar (lib/api/filters.ts): pure, no database — conditions are compiled to
// SQL with Kysely's PostgreSQL compiler and inspected, values must always be bound parameters.
import t from 'tap'
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } from 'kysely'
import { parseFilters, LOOKUPS_BY_KIND } from '../lib/api/filters.js'
import { ApiError } from '../lib/core/errors.js'
import campaign from '../resources/campaign.js'
import indicatorToTag from '../resources/indicator_to_tag.js'
import indicator from '../resources/indicator.js'
import location from '../resources/location.js'
import type { Resource } from '../lib/api/resource.js'

// biome-ignore lint/suspicious/noExplicitAny: tables and columns chosen at run time, checked by the schemas
const compiler = new Kysely<any>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
})

function compile(resource: Resource, query: string) {
  const params = [...new URLSearchParams(query)].reduce<Array<[string, string[]]>>((acc, [k, v]) => {
    const found = acc.find(([name]) => name === k)
    if (found) found[1].push(v)
    else acc.push([k, [v]])
    return acc
  }, [])
  const { conditions, joins } = parseFilters(resource, params)
  let q = compiler.selectFrom(`${resource.table} as t`).select('t.id')
  for (const c of conditions) q = q.where(c)
  const { sql, parameters } = q.compile()
  return { where: sql.replace(/^select "t"."id" from "\w+" as "t" where /, ''), parameters, joins }
}

function rejects(t: Asserts, resource: Resource, query: string, code: string, message?: string) {
  try {
    compile(resource, query)
    t.fail(`${query} should be rejected with ${code}`)
  } catch (error) {
    t.ok(error instanceof ApiError, query)
    t.equal((error as ApiError).code, code, query)
    if (message) t.equal((error as ApiError).message, message)
  }
}
type Asserts = Pick<typeof t, 'ok' | 'equal' | 'fail'>

t.test('every lookup of every kind compiles to a bound condition', async (t) => {
  const cases: Array<[string, string, unknown[]]> = [
    ['id=5', '"t"."id" = $1', [5]],
    ['id__exact=5', '"t"."id" = $1', [5]],
    ['id__gt=5', '"t"."id" > $1', [5]],
    ['id__gte=5', '"t"."id" >= $1', [5]],
    ['id__lt=5', '"t"."id" < $1', [5]],
    ['id__lte=5', '"t"."id" <= $1', [5]],
    ['id__in=1,2&id__in=3', '("t"."id" in ($1, $2, $3))', [1, 2, 3]],
    ['id__range=1,9', '"t"."id" between $1 and $2', [1, 9]],
    ['id__isnull=true', '"t"."id" is null', []],
    ['id__isnull=False', '"t"."id" is not null', []],
    ['name=Polio', '"t"."name" = $1', ['Polio']],
    ['name__iexact=polio', 'lower("t"."name") = lower($1)', ['polio']],
    ['name__contains=50%_', 'strpos("t"."name", $1) > 0', ['50%_']],
    ['name__icontains=x', 'strpos(lower("t"."name"), lower($1)) > 0', ['x']],
    ['name__startswith=Pol', 'starts_with("t"."name", $1)', ['Pol']],
    ['name__istartswith=pol', 'starts_with(lower("t"."name"), lower($1))', ['pol']],
    ['name__endswith=es', 'right("t"."name", char_length($1)) = $2', ['es', 'es']],
    ['name__iendswith=ES', 'lower(right("t"."name", char_length($1))) = lower($2)', ['ES', 'ES']],
    ['name__gt=M', '"t"."name" > $1', ['M']],
    ['name__in=a,b', '("t"."name" in ($1, $2))', ['a', 'b']],
    ['start_date=2016-01-01', '"t"."start_date" = $1::date', ['2016-01-01']],
    ['start_date__range=2016-01-01,2016-12-31', '"t"."start_date" between $1::date and $2::date', ['2016-01-01', '2016-12-31']],
    ['start_date__year=2016', 'extract(year from "t"."start_date") = $1', [2016]],
    ['start_date__month=3', 'extract(month from "t"."start_date") = $1', [3]],
    ['start_date__day=1', 'extract(day from "t"."start_date") = $1', [1]],
    ['created_at__gte=2016-05-04T02:31:29.227679', '"t"."created_at" >= $1::timestamptz', ['2016-05-04T02:31:29.227679']],
    ['created_at__lt=2016-05-04', '"t"."created_at" < $1::timestamptz', ['2016-05-04']],
    ['campaign_type_id=none', '"t"."campaign_type_id" is null', []],
    ['campaign_type=3', '"t"."campaign_type_id" = $1', [3]],
    ['campaign_type__in=3,4', '("t"."campaign_type_id" in ($1, $2))', [3, 4]],
  ]
  for (const [query, where, parameters] of cases) {
    const compiled = compile(campaign, query)
    t.equal(compiled.where, where, query)
    t.same(compiled.parameters, parameters, query)
  }
  const bools = compile(indicator, 'is_reported=True&good_bound__lte=1.5e2')
  t.equal(bools.where, '"t"."is_reported" = $1 and "t"."good_bound" <= $2')
  t.same(bools.parameters, [true, 150])
})

t.test('lookups allowed per kind follow resource-api §8.2', async (t) => {
  t.same(LOOKUPS_BY_KIND.boolean, ['exact', 'in', 'isnull'])
  t.notOk(LOOKUPS_BY_KIND.integer.includes('contains'))
  t.ok(LOOKUPS_BY_KIND.date.includes('year'))
  t.same(LOOKUPS_BY_KIND.json, [])
  rejects(t, campaign, 'start_date__icontains=2016', 'INVALID_LOOKUP', "'icontains' is not an allowed filter on the 'start_date' field.")
  rejects(t, campaign, 'id__startswith=1', 'INVALID_LOOKUP')
  rejects(t, indicator, 'is_reported__gt=1', 'INVALID_LOOKUP')
  rejects(t, campaign, 'name__year=2016', 'INVALID_LOOKUP')
})

t.test('relation paths join through foreign keys', async (t) => {
  const direct = compile(campaign, 'campaign_type__name=NID')
  t.equal(direct.where, '"campaign_type"."name" = $1')
  t.same(direct.joins, [['campaign_type']])
  const join = compile(indicatorToTag, 'indicator__short_name__icontains=polio')
  t.equal(join.where, 'strpos(lower("indicator"."short_name"), lower($1)) > 0')
  const chained = compile(location, 'location_type__name=Province&parent_location__location_type__admin_level=0')
  t.same(chained.joins, [['location_type'], ['parent_location', 'location_type']])
  t.equal(chained.where, '"location_type"."name" = $1 and "parent_location__location_type"."admin_level" = $2')
  rejects(t, campaign, 'campaign_type__nope=1', 'UNKNOWN_FILTER', "The 'campaign_type__nope' field does not allow filtering.")
  rejects(t, campaign, 'nope__name=1', 'UNKNOWN_FILTER')
})

t.test('coercion and values that match nothing', async (t) => {
  t.equal(compile(campaign, 'id=2147483648').where, 'false', 'outside int32: no row, no error')
  t.equal(compile(campaign, 'id__in=').where, 'false', 'an empty in-list matches nothing')
  t.equal(compile(campaign, 'id__in=1,null').where, '("t"."id" in ($1) or "t"."id" is null)')
  t.equal(compile(campaign, 'name=x&name=x').parameters[0], 'x', 'repeated with the same value: harmless')
  rejects(t, campaign, 'name=x&name=y', 'DUPLICATE_PARAMETER', 'Parameter name is given more than once with different values')
  rejects(t, campaign, 'id=abc', 'INVALID_VALUE', 'Invalid value for id: "abc" (expected integer)')
  rejects(t, campaign, 'id=1.5', 'INVALID_VALUE')
  rejects(t, campaign, 'id__in=1,x', 'INVALID_VALUE')
  rejects(t, campaign, 'id__range=1', 'INVALID_VALUE')
  rejects(t, campaign, 'id__range=1,2,3', 'INVALID_VALUE')
  rejects(t, campaign, 'start_date=2016-02-30', 'INVALID_VALUE')
  rejects(t, campaign, 'start_date=yesterday', 'INVALID_VALUE')
  rejects(t, campaign, 'created_at=2016-01-01T25:00', 'INVALID_VALUE')
  rejects(t, campaign, 'id__isnull=maybe', 'INVALID_VALUE')
  rejects(t, campaign, 'start_date__year=MMXVI', 'INVALID_VALUE')
  rejects(t, indicator, 'is_reported=yes', 'INVALID_VALUE')
  rejects(t, indicator, 'good_bound=NaN', 'INVALID_VALUE')
  rejects(t, indicator, 'good_bound=Infinity', 'INVALID_VALUE')
})

t.test('hostile keys are rejected and hostile values are bound, never spliced', async (t) => {
  const injections = ['1; drop table campaign; --', "' or '1'='1", 'x") or true --', "Robert'); DROP TABLE indicator;--", '$1', '\\x00']
  for (const value of injections) {
    const compiled = compile(campaign, `name=${encodeURIComponent(value)}`)
    t.equal(compiled.where, '"t"."name" = $1', 'the SQL text never changes')
    t.same(compiled.parameters, [value])
    rejects(t, campaign, `id=${encodeURIComponent(value)}`, 'INVALID_VALUE')
  }
  for (const key of ['name;drop table campaign', 'name" or 1=1 --', 'name__in)--', '__proto__', 'constructor', 'name__exact__gt']) {
    rejects(t, campaign, `${encodeURIComponent(key)}=1`, 'UNKNOWN_FILTER')
  }
})

t.test('JSON columns and synthetic fields are never filterable', async (t) => {
  rejects(t, indicator, 'tag_json=1', 'UNKNOWN_FILTER')
  rejects(t, location, 'lvl=1', 'UNKNOWN_FILTER')
})
