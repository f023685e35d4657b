// The command line's grammar (commander): each command, its arguments and options, the values they
// take and their help (`--help`, `-h`, `help <command>`, on stdout). Values are checked here, before a
// database is opened or anything is sent to a server.
import { accessSync, constants, statSync } from 'node:fs'
import { Command, InvalidArgumentError, Option } from 'commander'

export interface Invocation {
  command: string
  arg?: string
  options: Record<string, unknown>
}

/** A file that exists and this user may read (an upload, a mapping, polygons, a backup to restore). */
function readableFile(value: string): string {
  try {
    accessSync(value, constants.R_OK)
    if (!statSync(value).isFile()) throw new Error('not a file')
  } catch (error) {
    throw new InvalidArgumentError(`${value} is not a readable file (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}).`)
  }
  return value
}

function positiveInteger(value: string): string {
  if (!/^[1-9]\d{0,9}$/.test(value) || Number(value) > 2 ** 31 - 1)
    throw new InvalidArgumentError(`${value} is not a location id (a whole number from 1 to 2147483647).`)
  return value
}

function serverUrl(value: string): string {
  try {
    if (['http:', 'https:'].includes(new URL(value).protocol)) return value
  } catch {}
  throw new InvalidArgumentError(`${value} is not an http:// or https:// URL.`)
}

const AFTER = `
Without --server, the command opens the database of DATABASE_URL, or the embedded one in DATA_DIR. While a
server holds the embedded database, create-user, create-key, set-password, revoke-key, upload, migrate
and backup go through its API as a superuser (--key, RHIZOME_API_KEY, or DATA_DIR/admin-api-key).
Exit codes: 0 done, 1 failed (the message says why), 2 a command or option used wrongly.`

/** The program; `run` is called with the command, its argument and every option, global ones included. */
export function program(run: (invocation: Invocation) => Promise<void>): Command {
  const cli = new Command('npm run cli --')
    .description('Operator commands of rhizome-api.')
    .addOption(new Option('--server <url>', 'send the command to the server at <url>').argParser(serverUrl))
    .option('--key <user:key>', "a superuser's API key for the server")
    .addHelpText('after', AFTER)
    .showSuggestionAfterError()
    // Inherited by the commands below: a misuse throws (cli/index.ts exits 2) rather than exiting 1 here.
    .exitOverride()
  const action = (command: string) =>
    async function (this: Command, arg?: string) {
      await run({ command, arg: typeof arg === 'string' ? arg : undefined, options: this.optsWithGlobals() })
    }
  cli.command('migrate').description('apply pending migrations').action(action('migrate'))
  cli
    .command('create-user')
    .description('create a user and print its first API key')
    .argument('<username>')
    .option('--superuser', 'a superuser')
    .option('--email <address>', 'its e-mail address')
    .option('--location <id>', 'its location responsibility: it sees and writes only that subtree', positiveInteger)
    .action(action('create-user'))
  cli.command('create-key').description('print a new API key for the user').argument('<username>').action(action('create-key'))
  cli
    .command('set-password')
    .description('set the password people sign in with (read from stdin or a prompt, never from the command line)')
    .argument('<username>')
    .action(action('set-password'))
  cli
    .command('revoke-key')
    .description('revoke one key (as printed, user:key), or every key of a user')
    .argument('[key]')
    .option('--user <username>', 'every key of this user')
    .action(action('revoke-key'))
  cli
    .command('load-geo')
    .description('load polygons: one `location_code|geo_json` line per location (a header line is optional, the JSON plain or CSV-quoted)')
    .argument('<file>', 'the polygons', readableFile)
    .action(action('load-geo'))
  cli
    .command('upload')
    .description('upload a file, transform it and print its ingest_stats (through a server: as a background job, with its progress)')
    .argument('<file>', 'CSV or XLSX', readableFile)
    .addOption(new Option('--type <type>', 'the kind of file').choices(['campaign', 'date']).makeOptionMandatory())
    .option('--map <file>', 'content_type,source_object_code,master_object_id lines: codes mapped, then refresh_master', readableFile)
    .addOption(new Option('--date-order <order>', 'how dates like 03/04/2016 read').choices(['MDY', 'DMY', 'YMD']))
    .addOption(new Option('--conflict <rule>', 'a cell the file gives two values: which one is written').choices(['last', 'first', 'reject']))
    .addOption(new Option('--encoding <encoding>', "a CSV's text encoding (default utf-8)").choices(['utf-8', 'windows-1252']))
    .action(action('upload'))
  cli.command('demo').description('load the demo data set into an empty database').action(action('demo'))
  cli
    .command('backup')
    .description('a snapshot of the embedded database (through the server holding it)')
    .argument('<file>', 'where to write it')
    .action(action('backup'))
  cli
    .command('restore')
    .description('a snapshot into an empty embedded data directory')
    .argument('<file>', 'the snapshot', readableFile)
    .action(action('restore'))
  cli
    .command('upgrade-data-dir')
    .description('the embedded database of an earlier PGlite into this one (once, server stopped)')
    .action(action('upgrade-data-dir'))
  return cli
}
