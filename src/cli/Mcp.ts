/**
 * `mcp`: the recall tools (`search_memory`, `read_turns`) of one stored conversation, as a Model
 * Context Protocol server over stdio. An MCP client's agent uses them to search its own past.
 * Stdout carries only the protocol. Logs and notices go to stderr.
 */
import * as McpServer from "@effect/ai/McpServer"
import { Cause, Console, Effect, Either, Exit, Fiber, Layer, Option, type ParseResult, Schema } from "effect"
import { ConversationId } from "../domain/ConversationId.js"
import { UserId } from "../domain/UserId.js"
import * as ChatMemoryLive from "../layers/ChatMemoryLive.js"
import * as RecallTools from "../layers/internal/recallTools.js"
import * as RecallToolkit from "../layers/RecallToolkit.js"
import { ChatMemoryService } from "../services/ChatMemoryService.js"
import { check } from "./Errors.js"
import * as McpStdio from "./McpStdio.js"
import * as Settings from "./Settings.js"
import { Stdio } from "./Stdio.js"

/** What the server says it is in its `initialize` answer. */
export interface ServerInfo {
  readonly name: string
  readonly version: string
}

/** What `mcp` was asked. */
export interface Input {
  readonly server: ServerInfo
  readonly conversation: string
  /** The conversation's user: `search_memory` then searches the user's other conversations too. */
  readonly user: Option.Option<string>
  readonly flags: Settings.Flags
}

/** Why a tool's parameters schema refuses arguments, if it does. */
const argumentsCheck = <A, I>(schema: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknownEither(schema)
  return (args: unknown): Option.Option<string> =>
    Either.match(decode(args), {
      onLeft: (error: ParseResult.ParseError) => Option.some(McpStdio.issuesText(error)),
      onRight: () => Option.none()
    })
}

/** The recall tools' argument checks, by name, as the tools served take them. */
const mcpTools = RecallTools.mcpToolkit.tools
const tools: ReadonlyMap<string, (args: unknown) => Option.Option<string>> = new Map([
  [mcpTools.search_memory.name, argumentsCheck(mcpTools.search_memory.parametersSchema)],
  [mcpTools.read_turns.name, argumentsCheck(mcpTools.read_turns.parametersSchema)]
])

/**
 * `mcp`: serves until its client closes stdin or the process is stopped. A bad line or call gets a
 * JSON-RPC error or a tool error result, and the server goes on (`McpStdio`).
 */
export const serve = ({ conversation, flags, server, user }: Input) =>
  Effect.gen(function*() {
    const options = yield* Settings.resolve(flags)
    const stdio = yield* Stdio
    // The conversation and its user are fixed here, so no tool parameter can name another. Both
    // are checked before serving, so a bad one is refused once, not on every call.
    const userId = Option.isSome(user) ? yield* check(UserId, "--user", user.value) : undefined
    yield* check(ConversationId, "--conversation", conversation)
    const served = McpServer.toolkit(RecallTools.mcpToolkit).pipe(
      Layer.provide(RecallToolkit.layer(conversation, { userId })),
      Layer.provide(McpStdio.layer({ ...server, stdin: stdio.stdin, writeOut: stdio.writeOut, tools }))
    )
    yield* Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      // Refuses a conversation of another user.
      const known = yield* memory.getMessages(conversation, { limit: 1, userId }).pipe(
        Effect.as(true),
        Effect.catchTag("ConversationNotFoundError", () => Effect.succeed(false))
      )
      if (!known) {
        yield* Console.error(
          `mcp: conversation "${conversation}" holds no messages yet` +
            (Settings.isPersistent(options.store)
              ? ""
              : ` (the store is in memory: pass ${Settings.optionName(Settings.variables.dataDir)}, or ` +
                `${Settings.variables.store.name}=postgres with ${Settings.variables.databaseUrl.name})`)
        )
      }
      const of = userId === undefined ? "" : ` of user "${userId}"`
      yield* Console.error(`mcp: serving search_memory and read_turns for "${conversation}"${of} on stdio`)
      // At the end of the input, the transport interrupts the server's fiber, and the command is done.
      const running = yield* Effect.fork(Layer.launch(served))
      const exit = yield* Fiber.await(running)
      if (Exit.isFailure(exit) && !Cause.isInterruptedOnly(exit.cause)) return yield* Effect.failCause(exit.cause)
    }).pipe(Effect.provide(ChatMemoryLive.layer(options)))
  })
