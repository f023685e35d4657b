// Which tables a read touched: a Kysely plugin that walks each statement before it runs and notes every
// table it names, in the query builder's nodes and in raw `sql` text alike. A cached answer is then
// dropped only by changes to those tables (lib/api/read-cache.ts). Names are matched against the
// tables that exist (`knownTables`), so a column or an alias that happens to share a table's name can
// only add a dependency, never hide one.
import type { KyselyPlugin, OperationNode, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely'

const WORD = /[a-z_][a-z0-9_]*/gi

export class TableRecorder implements KyselyPlugin {
  readonly tables = new Set<string>()

  constructor(private readonly knownTables: ReadonlySet<string>) {}

  transformQuery({ node }: PluginTransformQueryArgs): RootOperationNode {
    this.#visit(node)
    return node
  }

  async transformResult({ result }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return result
  }

  #note(name: string) {
    if (this.knownTables.has(name)) this.tables.add(name)
  }

  #visit(value: unknown): void {
    if (Array.isArray(value)) {
      for (const item of value) this.#visit(item)
      return
    }
    if (value === null || typeof value !== 'object') return
    const node = value as OperationNode & Record<string, unknown>
    // Values are data (a selection can bind thousands of ids), never names.
    if (node.kind === 'ValueNode' || node.kind === 'ValueListNode' || node.kind === 'PrimitiveValueListNode') return
    if (node.kind === 'IdentifierNode') this.#note(String(node.name))
    else if (node.kind === 'RawNode')
      for (const fragment of node.sqlFragments as string[]) for (const word of fragment.match(WORD) ?? []) this.#note(word.toLowerCase())
    for (const key in node) if (key !== 'kind') this.#visit(node[key])
  }
}
