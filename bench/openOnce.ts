/**
 * One open of the configured memory, in a process of its own: builds `ChatMemoryLive.layerConfig`
 * (the store MEMORY_STORE names) and prints the milliseconds it took, loading the store's packages
 * included, and the process's resident memory after it (and after a collection, when the process
 * runs with --expose-gc), as JSON.
 */
import { Effect, Layer } from "effect"
import { memoryUsage } from "node:process"
import * as ChatMemoryLive from "../src/layers/ChatMemoryLive.js"

const open = Effect.gen(function*() {
  const start = performance.now()
  yield* Layer.build(ChatMemoryLive.layerConfig())
  const ms = performance.now() - start
  const rssMiB = memoryUsage().rss / 2 ** 20
  // With --expose-gc: what stays resident once the garbage of the open (PGlite's initdb instance)
  // is collected.
  if (typeof globalThis.gc === "function") globalThis.gc()
  process.stdout.write(`${JSON.stringify({ ms, rssMiB, rssAfterGcMiB: memoryUsage().rss / 2 ** 20 })}\n`)
})

Effect.runPromise(Effect.scoped(open))
