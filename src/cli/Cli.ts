/**
 * The command line as one effect: the arguments in, the results on `Console` and `Stdio`, a failure
 * told in one line on stderr. `main.ts` runs it in the process; tests run it in-process, with a
 * console of their own and the configuration they give.
 */
import { Command, ValidationError } from "@effect/cli"
import { Cause, Console, Effect, Logger, LogLevel, Option } from "effect"
import { program, root } from "./Commands.js"
import { CliError, describe } from "./Errors.js"
import * as Flags from "./Flags.js"
import * as Help from "./Help.js"

const parse = Command.run(root, program)

const builtIns = new Set(["-h", "--help", "--version", "--wizard", "--completions"])

/**
 * The arguments as the parser expects them: `replay` when no command is given (so that a bare
 * `npm start`, or `npm start -- --json`, replays the bundled conversation), and `--k` spelled as
 * the parser knows it (it reads one-letter names as short flags, `-k`).
 */
export const normalize = (args: ReadonlyArray<string>): ReadonlyArray<string> => {
  const first = args[0]
  const withCommand = first === undefined || (first.startsWith("-") && !builtIns.has(first))
    ? ["replay", ...args]
    : args
  return withCommand.map((
    arg
  ) => (arg === "--k" ? "--k-raw-turns" : arg.startsWith("--k=") ? `--k-raw-turns=${arg.slice(4)}` : arg))
}

/**
 * Runs the command line on `args` (the arguments after the program's name). Help is printed
 * compactly (one line per flag); a flag the command does not know is named, with the nearest one it
 * knows; a failure is printed as one line on stderr (`error: …`) and
 * fails the effect, so that the process exits with a non-zero code. Logs go to stderr, warnings
 * and worse unless `--log-level` says otherwise: stdout is for results.
 */
export const run = (args: ReadonlyArray<string>) => {
  const normalized = normalize(args)
  const unknown = Flags.unknownFlag(root, program.name, normalized)
  const command = Option.isSome(unknown)
    ? Effect.fail(new CliError({ reason: unknown.value }))
    : parse(["node", program.name, ...normalized])
  return Help.orRun(root, normalized, program.version, command).pipe(
    Effect.catchAllCause((cause) => {
      if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
      const failure = Cause.failureOption(cause)
      // The parser printed its own message (usage, bad flag) already.
      if (failure._tag === "Some" && ValidationError.isValidationError(failure.value)) return Effect.failCause(cause)
      const error = failure._tag === "Some" ? failure.value : Cause.squash(cause)
      return Console.error(`error: ${describe(error)}`).pipe(Effect.zipRight(Effect.failCause(cause)))
    }),
    Logger.withMinimumLogLevel(LogLevel.Warning),
    Effect.provide(Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.logfmtLogger)))
  )
}
