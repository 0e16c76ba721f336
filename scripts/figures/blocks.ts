/**
 * The generated blocks of a document: the text between `<!-- generated:NAME -->` and
 * `<!-- /generated:NAME -->`, read and replaced.
 */
import { Either } from "effect"
import { FiguresError } from "./files.js"

const marker = /<!-- generated:([a-z0-9-]+) -->\n([\s\S]*?)<!-- \/generated:\1 -->/g

/** The blocks of `text`, by name: what sits between the markers, without its last newline. */
export const read = (text: string): ReadonlyMap<string, string> =>
  new Map([...text.matchAll(marker)].map(([, name, body]) => [name ?? "", (body ?? "").replace(/\n$/, "")]))

/**
 * `text` with each block replaced by `blocks`' text of that name; fails on a block of `text` that
 * `blocks` lacks, and on a block of `blocks` that `text` lacks.
 */
export const replace = (
  document: string,
  text: string,
  blocks: ReadonlyMap<string, string>
): Either.Either<string, FiguresError> => {
  const found = read(text)
  const stale = [...found.keys()].filter((name) => !blocks.has(name))
  const missing = [...blocks.keys()].filter((name) => !found.has(name))
  if (stale.length > 0 || missing.length > 0) {
    return Either.left(
      new FiguresError({
        reason: `${document}: ${
          [
            ...(stale.length > 0 ? [`blocks nothing writes: ${stale.join(", ")}`] : []),
            ...(missing.length > 0 ? [`no markers for ${missing.join(", ")}`] : [])
          ].join("; ")
        }`
      })
    )
  }
  return Either.right(
    text.replace(
      marker,
      (_, name: string) => `<!-- generated:${name} -->\n${blocks.get(name) ?? ""}\n<!-- /generated:${name} -->`
    )
  )
}
