// The demo's map: each place a shape with borders a person takes for a map's (not a rectangle), each
// a simple polygon, and the places of a parent tiling it: the districts' areas add up to their
// province's, the provinces' to the country's (a gap or an overlap between neighbours would not).
import t from 'tap'
import { build } from './helper.js'
import { loadDemoData } from '../lib/engine/demo.js'

type Point = [number, number]

/** A ring's area (shoelace), in square degrees. */
const area = (ring: Point[]) => Math.abs(ring.slice(1).reduce((sum, [x, y], i) => sum + ring[i][0] * y - x * ring[i][1], 0)) / 2

/** Whether segments p1-p2 and p3-p4 cross at a point inside both. */
function cross(p1: Point, p2: Point, p3: Point, p4: Point) {
  const side = (a: Point, b: Point, c: Point) => Math.sign((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]))
  return side(p1, p2, p3) * side(p1, p2, p4) < 0 && side(p3, p4, p1) * side(p3, p4, p2) < 0
}

/** Whether no two edges of a ring that do not share a point cross. */
function simple(ring: Point[]) {
  const edges = ring.slice(1).map((point, i): [Point, Point] => [ring[i], point])
  return edges.every((a, i) => edges.slice(i + 2).every((b, j) => (i === 0 && j + i + 2 === edges.length - 1) || !cross(a[0], a[1], b[0], b[1])))
}

t.test('the demo map: shapes that tile their parents, none a rectangle', async (t) => {
  const { db } = await build(t)
  await loadDemoData(db)
  const places = await db
    .selectFrom('location')
    .innerJoin('location_polygon', 'location_polygon.location_id', 'location.id')
    .select(['location.id', 'location.name', 'location.parent_location_id', 'location_polygon.geo_json'])
    .execute()
  const ringOf = new Map(
    places.map((p) => {
      const feature = typeof p.geo_json === 'string' ? JSON.parse(p.geo_json) : p.geo_json
      return [p.id, feature.geometry.coordinates[0] as Point[]]
    }),
  )
  t.equal(places.length, 13, 'the country, three provinces, nine districts')
  for (const place of places) {
    const ring = ringOf.get(place.id)!
    t.ok(ring.length > 5, `${place.name}: drawn through ${ring.length} points, not a rectangle's 5`)
    t.ok(simple(ring), `${place.name}: a simple polygon`)
  }
  for (const parent of places) {
    const children = places.filter((p) => p.parent_location_id === parent.id)
    if (!children.length) continue
    const sum = children.reduce((total, child) => total + area(ringOf.get(child.id)!), 0)
    t.ok(Math.abs(sum - area(ringOf.get(parent.id)!)) < 1e-6, `${parent.name}: its ${children.length} places cover it, no gap and no overlap`)
  }
})
