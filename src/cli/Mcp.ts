/**
 * `mcp`: the recall tools (`search_memory`, `read_turns`) of one stored conversation, served as a
 * Model Context Protocol server over stdio, for an MCP client (an IDE, a desktop assistant) whose
 * agent searches its own past. Stdout carries only the protocol; logs and notices go to stderr.
 */
import * as McpServer from "@effect/ai/McpServer"
import { Console, Effect, Layer } from "effect"
import * as ChatMemoryLive from "../layers/ChatMemoryLive.js"
import * as RecallToolkit from "../layers/RecallToolkit.js"
import { ChatMemoryService } from "../services/ChatMemoryService.js"
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
  readonly flags: Settings.Flags
}

/** `mcp`: serves until its client closes stdin (or the process is stopped). */
export const serve = ({ conversation, flags, server }: Input) =>
  Effect.gen(function*() {
    const options = yield* Settings.resolve(flags)
    const stdio = yield* Stdio
    // The conversation is fixed here, once: no tool parameter can name another one.
    const served = McpServer.toolkit(RecallToolkit.mcpToolkit).pipe(
      Layer.provide(RecallToolkit.layer(conversation)),
      Layer.provide(McpServer.layerStdio({ ...server, stdin: stdio.stdin, stdout: stdio.stdout }))
    )
    yield* Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const known = yield* memory.stats(conversation).pipe(
        Effect.as(true),
        Effect.catchTag("ConversationNotFoundError", () => Effect.succeed(false))
      )
      if (!known) {
        yield* Console.error(
          `mcp: conversation "${conversation}" holds no messages yet` +
            (Settings.isPersistent(options.store)
              ? ""
              : " (the store is in memory: pass --data-dir, or MEMORY_STORE=postgres with DATABASE_URL)")
        )
      }
      yield* Console.error(`mcp: serving search_memory and read_turns for "${conversation}" on stdio`)
      return yield* Layer.launch(served)
    }).pipe(Effect.provide(ChatMemoryLive.layer(options)))
  })
