/**
 * Where the published figures live: the committed JSON of the runs, and the documents whose
 * generated blocks are written from it.
 */
import { Data } from "effect"
import { fileURLToPath } from "node:url"

/** The repository's folder: every path below is relative to it. */
export const root = fileURLToPath(new URL("../../", import.meta.url))

/** The bench run the documents show (`BENCH_OUT` of `npm run bench`). */
export const benchFile = "figures/bench.json"

/** One JSON file per question set, written by `npm run figures:eval`. */
export const evalDirectory = "figures/eval"

/** `path` of the repository, for the file system. */
export const inRoot = (path: string): string => `${root}${path}`

/** The documents that hold generated blocks. */
export const documents = ["docs/performance.md", "docs/evaluation.md", "README.md"] as const

/** A document that holds generated blocks. */
export type Document = (typeof documents)[number]

/** How a questions file's name ends. */
export const questionsSuffix = ".questions.json"

/** The set a questions file holds: its name without the suffix (`offsite.hard`). */
export const setOf = (file: string): string =>
  file.endsWith(questionsSuffix) ? file.slice(0, -questionsSuffix.length) : file

/** A failure of the figures scripts, said in one line. */
export class FiguresError extends Data.TaggedError("FiguresError")<{ readonly reason: string }> {
  override get message(): string {
    return this.reason
  }
}
