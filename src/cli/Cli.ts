/**
 * The command line as one effect: arguments in, results on `Console` and `Stdio`, and a failure as
 * one line on stderr. `main.ts` runs it in the process. Tests run it with their own console and
 * configuration.
 */
import { CliConfig, Command, CommandDescriptor, ValidationError } from "@effect/cli"
import { Cause, Console, Effect, Logger, LogLevel, Option } from "effect"
import { program, root } from "./Commands.js"
import { CliError, describe } from "./Errors.js"
import * as Flags from "./Flags.js"
import * as Help from "./Help.js"

const parse = Command.run(root, program)

const builtIns = new Set(["-h", "--help", "--version", "--wizard", "--completions"])

/**
 * The arguments as the parser expects them. With no command, `replay` is added, so a bare
 * `npm start` replays the bundled conversation. `--k` becomes `--k-raw-turns`, since the parser
 * reads one-letter names as short flags.
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
 * The arguments parsed before the command runs, so that a bad one is one line like every other
 * failure (`error: Missing argument <conversationId>`), where the parser would print its own.
 */
const preParse = (args: ReadonlyArray<string>) =>
  CommandDescriptor.parse(root.descriptor, [program.name, ...args], CliConfig.defaultConfig).pipe(
    Effect.flatMap((directive) =>
      directive._tag === "UserDefined" && directive.leftover.length > 0
        ? Effect.fail(new CliError({ reason: `unexpected argument: '${directive.leftover[0]}'` }))
        : Effect.void
    ),
    Effect.mapError((error) =>
      ValidationError.isValidationError(error) ? new CliError({ reason: Help.oneLine(error.error) }) : error
    )
  )

/**
 * Runs the command line on `args`, the arguments after the program's name. Help is compact, one
 * line per flag. An unknown flag is named, with the nearest known one. A failure prints one line
 * on stderr (`error: …`) and fails the effect, so the process exits non-zero. Logs go to stderr,
 * warnings and worse unless `--log-level` says otherwise. Stdout is for results.
 */
export const run = (args: ReadonlyArray<string>) => {
  const normalized = normalize(args)
  const unknown = Flags.unknownFlag(root, program.name, normalized)
  const command = Option.isSome(unknown)
    ? Effect.fail(new CliError({ reason: unknown.value }))
    : Effect.zipRight(preParse(normalized), parse(["node", program.name, ...normalized]))
  return Help.orRun(root, normalized, program.version, command).pipe(
    Effect.catchAllCause((cause) => {
      if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
      const failure = Cause.failureOption(cause)
      // The parser already printed its own message (usage, bad flag).
      if (failure._tag === "Some" && ValidationError.isValidationError(failure.value)) return Effect.failCause(cause)
      const error = failure._tag === "Some" ? failure.value : Cause.squash(cause)
      return Console.error(`error: ${describe(error)}`).pipe(Effect.zipRight(Effect.failCause(cause)))
    }),
    Logger.withMinimumLogLevel(LogLevel.Warning),
    Effect.provide(Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.logfmtLogger)))
  )
}
