// badwords-list ships no types: its CommonJS export, as Node's ESM default import gives it.
declare module 'badwords-list' {
  const lists: { array: string[]; object: Record<string, number>; regex: RegExp }
  export default lists
}
