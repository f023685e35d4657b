import { sql } from 'kysely'
import { IndicatorTag } from '../schemas/indicator_tag.js'
import { defineResource } from '../lib/api/resource.js'
import { badRequest } from '../lib/core/errors.js'
import { Param } from '../lib/api/query.js'

const PARAMS = { show_leaf: Param.flag('any value but "", 0 or false: only tags that have a parent') }

export default defineResource({
  name: 'indicator_tag',
  schema: IndicatorTag,
  query_fields: ['id', 'tag_name', 'parent_tag_id', 'parent_tag__tag_name'],
  required_fields_for_post: ['tag_name'],
  params: PARAMS,
  hooks: {
    async list(ctx, query) {
      if (ctx.params.show_leaf) {
        query = query.where('t.parent_tag_id', 'is not', null)
      }
      return { query }
    },
    async beforeWrite(ctx, values, existing) {
      const parent = values.parent_tag_id as number | null | undefined
      if (!existing || parent === undefined || parent === null) return
      // The new parent must not be the tag itself or one of its descendants.
      const { rows } = await sql`with recursive up(id, parent) as (
          select id, parent_tag_id from indicator_tag where id = ${parent}
          union all select t.id, t.parent_tag_id from indicator_tag t join up on t.id = up.parent)
        select 1 from up where id = ${existing.id} limit 1`.execute(ctx.db)
      if (rows.length) throw badRequest('TAG_CYCLE', `parent_tag_id ${parent} would make tag ${existing.id} its own ancestor`)
    },
  },
})
