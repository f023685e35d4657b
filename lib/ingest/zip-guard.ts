// Zip bombs (SECURITY.md): an XLSX file is a zip archive, and the XLSX reader inflates every part into
// memory. Before it runs, each entry is inflated once as a stream and thrown away, counting bytes, so
// an archive that would grow past the limit is refused while it is still small. yauzl compares each
// entry's real size with the size its header declares (validateEntrySizes), so a header that lies
// fails as well.
import yauzl from 'yauzl'
import { ApiError } from '../core/errors.js'

const MAX_ENTRIES = 10_000

export const tooLargeUncompressed = (limit: number) =>
  new ApiError(422, 'FILE_TOO_LARGE_UNCOMPRESSED', `The XLSX file expands to more than ${limit} bytes; split it or upload a CSV file`)

/** Resolves when the archive is readable and inflates to at most `limit` bytes; 422 otherwise. */
export function assertZipWithin(bytes: Buffer, limit: number, unreadable: () => ApiError): Promise<void> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(bytes, { lazyEntries: true, validateEntrySizes: true }, (openError, zip) => {
      if (openError || !zip) return reject(unreadable())
      if (zip.entryCount > MAX_ENTRIES) {
        zip.close()
        return reject(unreadable())
      }
      let total = 0
      const fail = (error: ApiError) => {
        zip.close()
        reject(error)
      }
      zip.on('error', () => fail(unreadable()))
      zip.on('end', () => resolve())
      zip.on('entry', (entry: yauzl.Entry) => {
        if (total + entry.uncompressedSize > limit) return fail(tooLargeUncompressed(limit))
        zip.openReadStream(entry, (streamError, stream) => {
          if (streamError || !stream) return fail(unreadable())
          stream.on('data', (chunk: Buffer) => {
            total += chunk.length
            if (total > limit) {
              stream.destroy()
              fail(tooLargeUncompressed(limit))
            }
          })
          stream.on('error', () => fail(unreadable()))
          stream.on('end', () => zip.readEntry())
        })
      })
      zip.readEntry()
    })
  })
}
