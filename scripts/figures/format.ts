/**
 * Numbers, tables and the line saying what a run ran on, as the generated blocks write them.
 */
import type { Document } from "./files.js"
import type { BenchRun } from "./runs.js"

/** A block of a document, between `<!-- generated:name -->` and `<!-- /generated:name -->`. */
export interface Block {
  readonly document: Document
  readonly name: string
  readonly text: string
}

/** `n` with thousands separators and `digits` decimals. */
export const separated = (n: number, digits = 0): string =>
  n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits })

/** Three significant digits, integers above 1,000 (`0.0642`, `2.95`, `1,071`). */
export const significant = (n: number): string =>
  Math.abs(n) >= 1000 ? separated(n) : Number(n.toPrecision(3)).toString()

/** Milliseconds, three significant digits. */
export const ms = (n: number | null): string => n === null ? "-" : `${significant(n)} ms`

/** A ratio: `42x`, `1.07x`; `-` when it could not be measured. */
export const times = (n: number | null): string => n === null ? "-" : n >= 10 ? `${separated(n)}x` : `${n.toFixed(2)}x`

/** An integer with thousands separators. */
export const int = (n: number): string => separated(n)

/** `part` as a whole percentage of `whole`. */
export const percentOf = (part: number, whole: number): string =>
  whole === 0 ? "-" : `${Math.round((part / whole) * 100)} %`

/** `part` and its percentage of `whole`: `54 (86 %)`. */
export const share = (part: number, whole: number): string => whole === 0 ? "-" : `${part} (${percentOf(part, whole)})`

/** The day of an ISO time. */
export const date = (iso: string | null): string => iso === null ? "unknown" : iso.slice(0, 10)

/** A column's alignment: `right` for numbers. */
export type Align = "left" | "right"

/** A Markdown table; `right` columns hold numbers. */
export const table = (
  columns: ReadonlyArray<readonly [string, Align]>,
  rows: ReadonlyArray<ReadonlyArray<string>>
): string =>
  [
    `| ${columns.map(([title]) => title).join(" | ")} |`,
    `| ${columns.map(([, align]) => (align === "right" ? "---:" : "---")).join(" | ")} |`,
    ...rows.map((row) => `| ${row.join(" | ")} |`)
  ].join("\n")

/** What a block of a section the run left out says. */
export const notMeasured = "Not measured in this run (`BENCH_SECTIONS` left this section out)."

/** The machine a run ran on, in one line. */
export const machineLine = (run: { readonly machine: BenchRun["machine"] }): string =>
  `${run.machine.cpu}, ${run.machine.cores} cores, ${run.machine.memoryGiB} GiB, Node ${
    run.machine.node.replace(/^v/, "")
  }, ${run.machine.os.split(" (")[0] ?? run.machine.os}`

/** The code a run ran, by version and commit date. */
export const codeLine = (code: BenchRun["code"]): string =>
  `version ${code.version}, the code of ${date(code.commitDate)}${
    code.uncommittedChanges === true ? " with uncommitted changes" : ""
  }`

/** The sum of `values`. */
export const sum = (values: ReadonlyArray<number>): number => values.reduce((a, b) => a + b, 0)
