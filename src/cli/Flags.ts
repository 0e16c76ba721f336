/**
 * Unknown flags, named before the parser sees them. @effect/cli takes a mistyped flag for a
 * positional argument: `replay --bugdet 100` reports an unknown argument `100`. Here the flag is
 * named, with the nearest flag the command knows.
 */
import type { Command } from "@effect/cli"
import { Option } from "effect"
import * as Help from "./Help.js"

/** The edit distance between two spellings: insertions, deletions, substitutions, swaps of neighbours. */
const distance = (a: string, b: string): number => {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => i + j))
  const at = (i: number, j: number) => rows[i]?.[j] ?? Number.POSITIVE_INFINITY
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, at(i - 2, j - 2) + 1)
      const row = rows[i]
      if (row !== undefined) row[j] = best
    }
  }
  return at(a.length, b.length)
}

/** The known spelling nearest `name`, when it is near enough to be what was meant. */
const nearest = (name: string, known: ReadonlyArray<string>): Option.Option<string> => {
  const ranked = known.filter((spelling) => spelling.startsWith("--"))
    .map((spelling) => ({ spelling, distance: distance(name, spelling) }))
    .sort((a, b) => a.distance - b.distance)
  const best = ranked[0]
  return best !== undefined && best.distance <= Math.max(2, Math.floor((name.length - 2) / 3))
    ? Option.some(best.spelling)
    : Option.none()
}

/** Whether `arg` is written as a flag: `--name`, `--name=value`, `-k`. A negative number is a value. */
const isFlag = (arg: string) => /^--[^-]/.test(arg) || /^-[A-Za-z]/.test(arg)

/**
 * The line that names the first flag of `args`, before any `--`, that their command does not
 * know: `unknown flag --bugdet; did you mean --budget?`. `None` when every flag is known.
 */
export const unknownFlag = <Name extends string, R, E, A>(
  root: Command.Command<Name, R, E, A>,
  program: string,
  args: ReadonlyArray<string>
): Option.Option<string> => {
  const { command, flags } = Help.flagsOf(root, args)
  const byName = new Map(flags.flatMap((flag) => flag.names.map((name) => [name, flag] as const)))
  const start = Option.isSome(command) ? 1 : 0
  for (let i = start; i < args.length; i++) {
    const arg = args[i] ?? ""
    if (arg === "--") break
    if (!isFlag(arg)) continue
    const name = arg.split("=")[0] ?? arg
    const known = byName.get(name)
    if (known === undefined) {
      const where = Option.match(command, { onNone: () => program, onSome: (name) => `${program} ${name}` })
      return Option.some(Option.match(nearest(name, [...byName.keys()]), {
        onNone: () => `unknown flag ${name} (the flags: ${where} --help)`,
        onSome: (spelling) => `unknown flag ${name}; did you mean ${spelling}?`
      }))
    }
    // Its value is the next argument unless given with `=`. A value may start with a dash.
    if (known.takesValue && !arg.includes("=")) i++
  }
  return Option.none()
}
