// A model of the contract's aggregation and calculations, written apart from the engine's SQL, for the
// property tests to compare the engine with.

type Component = { indicator_id: number; indicator_component_id: number; calculation: string }

/**
 * The final values of `datapoint_with_computed` for one campaign, computed from its raw values by the
 * contract's rules, independently of the engine's SQL: ingestion §6's frontier mean for bool indicators, and §7
 * with step 5 — an int indicator without a raw value at a location is the sum of its children's final
 * values, where any child has one, else the location's own calculation.
 */
export function modelFinals(
  raw: Map<number, Map<number, number>>,
  children: Map<number, number[]>,
  locations: number[],
  formats: Map<number, string>,
  components: Component[],
): Map<string, number> {
  const parts = (indicator: number, kind: string) =>
    components.filter((c) => c.indicator_id === indicator && c.calculation === kind).map((c) => c.indicator_component_id)
  const memo = new Map<string, number | undefined>()
  /** The frontier of a bool indicator below L: each child's raw value, or else its own frontier. */
  const frontier = (i: number, L: number): number[] => (children.get(L) ?? []).flatMap((c) => (raw.get(c)?.has(i) ? [raw.get(c)!.get(i)!] : frontier(i, c)))
  /** The value no calculation at L replaces. */
  const base = (i: number, L: number): number | undefined => {
    const own = raw.get(L)?.get(i)
    if (own !== undefined) return own
    if (formats.get(i) === 'int') {
      const below = (children.get(L) ?? []).map((c) => final(i, c)).filter((v): v is number => v !== undefined)
      return below.length ? below.reduce((a, b) => a + b, 0) : undefined
    }
    if (formats.get(i) === 'bool') {
      const values = frontier(i, L)
      return values.length ? values.reduce((a, b) => a + b, 0) / values.length : undefined
    }
    return undefined
  }
  const sumOfParts = (i: number, L: number): number | undefined => {
    const values = parts(i, 'PART_TO_BE_SUMMED')
      .map((p) => base(p, L) ?? sumOfParts(p, L))
      .filter((v): v is number => v !== undefined)
    return values.length ? values.reduce((a, b) => a + b, 0) : undefined
  }
  const val = (i: number, L: number) => base(i, L) ?? sumOfParts(i, L)
  const total = (ids: number[], L: number) => {
    const values = ids.map((c) => val(c, L)).filter((v): v is number => v !== undefined)
    return values.length ? values.reduce((a, b) => a + b, 0) : undefined
  }
  const calculated = (i: number, L: number): number | undefined => {
    const [x, y] = [parts(i, 'WHOLE_OF_DIFFERENCE')[0], parts(i, 'PART_OF_DIFFERENCE')[0]]
    const [vx, vy] = [x === undefined ? undefined : val(x, L), y === undefined ? undefined : val(y, L)]
    if (vx !== undefined && vy !== undefined && vx !== 0) return (vx - vy) / vx
    const [num, den] = [total(parts(i, 'NUMERATOR'), L), total(parts(i, 'DENOMINATOR'), L)]
    if (num !== undefined && den !== undefined && den !== 0) return num / den
    return sumOfParts(i, L)
  }
  function final(i: number, L: number): number | undefined {
    const key = `${L}_${i}`
    if (!memo.has(key)) memo.set(key, base(i, L) ?? calculated(i, L))
    return memo.get(key)
  }
  const result = new Map<string, number>()
  for (const L of locations)
    for (const i of formats.keys()) {
      const v = final(i, L)
      if (v !== undefined) result.set(`${L}_${i}`, v)
    }
  return result
}
