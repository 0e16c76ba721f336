#!/usr/bin/env node
/**
 * The command line (`npm start`, and the `effect-chat-memory` bin): replay a transcript through
 * the memory, read and clear stored conversations, chat with a model. With no command it replays
 * the bundled conversation.
 */
import { Command, ValidationError } from "@effect/cli"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Cause, Console, Effect, Logger, LogLevel } from "effect"
import * as Chat from "./Chat.js"
import * as Conversations from "./Conversations.js"
import { describe } from "./Errors.js"
import * as Eval from "./Eval.js"
import * as Help from "./Help.js"
import * as Mcp from "./Mcp.js"
import * as Replay from "./Replay.js"

const version = "0.1.0"

const root = Command.make("effect-chat-memory").pipe(
  Command.withDescription("conversation memory for LLM agents: facts, a running summary and recent turns in a budget"),
  Command.withSubcommands([
    Replay.command,
    Eval.command,
    ...Conversations.commands,
    Chat.command,
    Mcp.command({ name: "effect-chat-memory", version })
  ])
)

const cli = Command.run(root, { name: "effect-chat-memory", version })

const builtIns = new Set(["-h", "--help", "--version", "--wizard", "--completions"])

/**
 * The arguments as the parser expects them: `replay` when no command is given (so that a bare
 * `npm start`, or `npm start -- --json`, replays the bundled conversation), and `--k` spelled as
 * the parser knows it (it reads one-letter names as short flags, `-k`).
 */
const normalize = (args: ReadonlyArray<string>): ReadonlyArray<string> => {
  const first = args[0]
  const withCommand = first === undefined || (first.startsWith("-") && !builtIns.has(first))
    ? ["replay", ...args]
    : args
  return withCommand.map((
    arg
  ) => (arg === "--k" ? "--k-raw-turns" : arg.startsWith("--k=") ? `--k-raw-turns=${arg.slice(4)}` : arg))
}

const [node = "node", script = "effect-chat-memory", ...rest] = process.argv

const args = normalize(rest)

// Help is printed compactly (one line per flag); everything else goes to the parser.
const main = Help.orRun(root, args, version, cli([node, script, ...args])).pipe(
  Effect.catchAllCause((cause) => {
    if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
    const failure = Cause.failureOption(cause)
    // The parser printed its own message (usage, bad flag) already.
    if (failure._tag === "Some" && ValidationError.isValidationError(failure.value)) return Effect.failCause(cause)
    const error = failure._tag === "Some" ? failure.value : Cause.squash(cause)
    return Console.error(`error: ${describe(error)}`).pipe(Effect.zipRight(Effect.failCause(cause)))
  }),
  // Logs go to stderr, warnings and worse unless `--log-level` says otherwise: stdout is for results.
  Logger.withMinimumLogLevel(LogLevel.Warning),
  Effect.provide(Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.logfmtLogger))),
  Effect.provide(NodeContext.layer)
)

NodeRuntime.runMain(main, { disableErrorReporting: true, disablePrettyLogger: true })
