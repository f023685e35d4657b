import { LocationType } from '../schemas/location_type.js'
import { defineResource } from '../lib/api/resource.js'

export default defineResource({
  name: 'location_type',
  schema: LocationType,
  required_fields_for_post: ['name', 'admin_level'],
})
