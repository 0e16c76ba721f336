/**
 * `mcp`: the recall tools (`search_memory`, `read_turns`) of one stored conversation, served as a
 * Model Context Protocol server over stdio, for an MCP client (an IDE, a desktop assistant) whose
 * agent searches its own past. Stdout carries only the protocol; logs and notices go to stderr.
 */
import { McpServer } from "@effect/ai"
import { Command, Options } from "@effect/cli"
import { NodeSink, NodeStream } from "@effect/platform-node"
import { Console, Effect, Layer } from "effect"
import * as ChatMemoryLive from "../layers/ChatMemoryLive.js"
import * as RecallToolkit from "../layers/RecallToolkit.js"
import { ChatMemoryService } from "../services/ChatMemoryService.js"
import * as Settings from "./Settings.js"

/** What the server says it is in its `initialize` answer. */
export interface ServerInfo {
  readonly name: string
  readonly version: string
}

/** The `mcp` command: serves until its client closes stdin (or the process is stopped). */
export const command = (server: ServerInfo) =>
  Command.make(
    "mcp",
    {
      conversation: Options.text("conversation").pipe(
        Options.withPseudoName("id"),
        Options.withDescription("the conversation the tools search and read (they can reach no other)")
      ),
      ...Settings.flags
    },
    ({ conversation, ...flags }) =>
      Effect.gen(function*() {
        const options = yield* Settings.resolve(flags)
        // The conversation is fixed here, once: no tool parameter can name another one.
        const served = McpServer.toolkit(RecallToolkit.mcpToolkit).pipe(
          Layer.provide(RecallToolkit.layer(conversation)),
          Layer.provide(McpServer.layerStdio({ ...server, stdin: NodeStream.stdin, stdout: NodeSink.stdout }))
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
  ).pipe(
    Command.withDescription("serve the recall tools of one conversation over stdio (Model Context Protocol)")
  )
