/**
 * Figures of the benchmarks: medians and p99 of samples, ratios, and plain-text tables. Absolute
 * times on a shared machine are noisy, so every figure is a median (or a ratio of medians taken
 * in the same run), and says how many runs and warm-up runs it took.
 */
import { Console, Effect } from "effect"

/** The median and p99 of a series of samples, with how they were taken. */
export interface Figure {
  readonly median: number
  readonly p99: number
  readonly runs: number
  readonly warmup: number
}

const quantile = (sorted: ReadonlyArray<number>, q: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN

/** The median and p99 of `samples` (the warm-up already left out). */
export const summarize = (samples: ReadonlyArray<number>, warmup: number): Figure => {
  const sorted = [...samples].sort((a, b) => a - b)
  return { median: quantile(sorted, 0.5), p99: quantile(sorted, 0.99), runs: samples.length, warmup }
}

/** `a / b`, or NaN when either is missing or `b` is 0. */
export const ratio = (a: number | undefined, b: number | undefined): number =>
  a === undefined || b === undefined || b === 0 ? Number.NaN : a / b

/**
 * Times several bodies (each returns the milliseconds it measured) over `warmup + runs` rounds,
 * keeping the last `runs`: each round runs every body once, in an order that rotates
 * from round to round, so that a slow moment of a shared machine falls on all of them alike and
 * their ratios hold even when the absolute times drift.
 */
export const interleaved = <E, R>(
  warmup: number,
  runs: number,
  bodies: ReadonlyArray<(i: number) => Effect.Effect<number, E, R>>
): Effect.Effect<ReadonlyArray<Figure>, E, R> =>
  Effect.gen(function*() {
    const samples = bodies.map((): Array<number> => [])
    for (let i = 0; i < warmup + runs; i++) {
      for (let k = 0; k < bodies.length; k++) {
        const j = (i + k) % bodies.length
        const body = bodies[j]
        if (body === undefined) continue
        const ms = yield* body(i)
        if (i >= warmup) samples[j]?.push(ms)
      }
    }
    return samples.map((series) => summarize(series, warmup))
  })

/** Milliseconds spent in `effect`, with its result. */
export const timed = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<readonly [number, A], E, R> =>
  Effect.suspend(() => {
    const start = performance.now()
    return Effect.map(effect, (a) => [performance.now() - start, a] as const)
  })

/** Milliseconds, with three significant decimals for small values. */
export const ms = (x: number): string =>
  Number.isNaN(x) ? "n/a" : x < 1 ? `${x.toFixed(3)} ms` : x < 100 ? `${x.toFixed(2)} ms` : `${x.toFixed(0)} ms`

/** A ratio such as `31.7x`. */
export const times = (x: number): string =>
  Number.isNaN(x) ? "n/a" : x >= 100 ? `${x.toFixed(0)}x` : x >= 10 ? `${x.toFixed(1)}x` : `${x.toFixed(2)}x`

/** An integer with thousands separators. */
export const int = (x: number): string => Number.isNaN(x) ? "n/a" : Math.round(x).toLocaleString("en-US")

/** A number with `digits` decimals. */
export const fixed = (x: number, digits: number): string => Number.isNaN(x) ? "n/a" : x.toFixed(digits)

/** Prints a table: a title, how it was measured, then left-aligned first column and right-aligned others. */
export const printTable = (
  title: string,
  method: string,
  header: ReadonlyArray<string>,
  rows: ReadonlyArray<ReadonlyArray<string>>,
  notes: ReadonlyArray<string> = []
): Effect.Effect<void> => {
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((row) => (row[c] ?? "").length)))
  const line = (cells: ReadonlyArray<string>) =>
    cells.map((cell, c) => (c === 0 ? cell.padEnd(widths[c] ?? 0) : cell.padStart(widths[c] ?? 0))).join("  ")
      .trimEnd()
  const rule = widths.map((w) => "-".repeat(w)).join("  ")
  return Console.log(
    [
      "",
      `== ${title}`,
      `   ${method}`,
      "",
      line(header),
      rule,
      ...rows.map(line),
      ...notes.map((note) => `  ${note}`)
    ].join("\n")
  )
}
