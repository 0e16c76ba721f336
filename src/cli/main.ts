#!/usr/bin/env node
/**
 * The command line (`npm start`, and the `effect-chat-memory` bin): replay a transcript through
 * the memory, read and clear stored conversations, chat with a model. With no command it replays
 * the bundled conversation.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeStream from "@effect/platform-node/NodeStream"
import { Effect, Layer } from "effect"
import * as Cli from "./Cli.js"
import { Stdio } from "./Stdio.js"

/** The process's own standard streams. */
const stdio = Layer.sync(Stdio, () => ({
  stdin: NodeStream.stdin,
  writeOut: (text: string) => Effect.sync(() => void process.stdout.write(text)),
  writeErr: (text: string) => Effect.sync(() => void process.stderr.write(text)),
  stdinIsTerminal: process.stdin.isTTY === true,
  stderrIsTerminal: process.stderr.isTTY === true
}))

Cli.run(process.argv.slice(2)).pipe(
  Effect.provide(Layer.merge(NodeContext.layer, stdio)),
  NodeRuntime.runMain({ disableErrorReporting: true, disablePrettyLogger: true })
)
