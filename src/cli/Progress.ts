/**
 * Progress on stderr, so stdout stays clean for the results. A terminal gets a bar redrawn in
 * place. Otherwise, as in logs or CI, a line every tenth of the work.
 */
import { Clock, Effect, Ref } from "effect"
import { Stdio } from "./Stdio.js"

/** Reports progress through `total` steps. */
export interface Progress {
  readonly tick: (done: number) => Effect.Effect<void>
  /** Clears the bar on a terminal, or else reports the end. */
  readonly finish: Effect.Effect<void>
}

const width = 30

const seconds = (millis: number): string => `${(millis / 1000).toFixed(1)} s`

/** Progress through `total` steps of `label`. */
export const make = (label: string, total: number, unit: string): Effect.Effect<Progress, never, Stdio> =>
  Effect.gen(function*() {
    const { stderrIsTerminal, writeErr: write } = yield* Stdio
    const started = yield* Clock.currentTimeMillis
    const elapsed = Effect.map(Clock.currentTimeMillis, (now) => seconds(now - started))
    if (stderrIsTerminal) {
      // Redrawn at most every 100 ms, or a fast replay would spend its time drawing.
      const drawn = yield* Ref.make(Number.NEGATIVE_INFINITY)
      return {
        tick: (done) =>
          Effect.gen(function*() {
            const now = yield* Clock.currentTimeMillis
            if (done < total && now - (yield* Ref.get(drawn)) < 100) return
            yield* Ref.set(drawn, now)
            const filled = total === 0 ? width : Math.round((done / total) * width)
            const bar = `${"█".repeat(filled)}${"░".repeat(width - filled)}`
            yield* write(`\r${label} ${bar} ${done}/${total} ${unit} · ${seconds(now - started)}`)
          }),
        finish: write("\r\x1b[K")
      }
    }
    const step = Math.max(1, Math.ceil(total / 10))
    return {
      tick: (done) =>
        done % step === 0 && done < total
          ? Effect.flatMap(
            elapsed,
            (time) => write(`${label}: ${done}/${total} ${unit} (${Math.round((done / total) * 100)}%), ${time}\n`)
          )
          : Effect.void,
      finish: Effect.flatMap(elapsed, (time) => write(`${label}: ${total}/${total} ${unit}, ${time}\n`))
    }
  })
