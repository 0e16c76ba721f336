/**
 * The policy port: what to do after messages are added, and how to assemble the context.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import {
 *   ApproximateTokenCounter,
 *   ChatMemory,
 *   MemoryManagementStrategy,
 *   MemoryStore,
 *   NoopStrategy,
 *   SlidingWindowStrategy
 * } from "effect-chat-memory"
 *
 * // Swapping the policy is swapping one layer: the rest of the composition stays.
 * const memoryWith = <E, R>(strategy: Layer.Layer<MemoryManagementStrategy.MemoryManagementStrategy, E, R>) =>
 *   ChatMemory.layer.pipe(
 *     Layer.provideMerge(strategy),
 *     Layer.provideMerge(MemoryStore.layer),
 *     Layer.provideMerge(ApproximateTokenCounter.layer)
 *   )
 *
 * const program = Effect.gen(function*() {
 *   const memory = yield* ChatMemory.ChatMemoryService
 *   for (let i = 1; i <= 20; i++) {
 *     yield* memory.addMessages("c1", [
 *       { role: "user", content: `Question ${i}?` },
 *       { role: "assistant", content: `Answer ${i}.` }
 *     ])
 *   }
 *   return yield* memory.getContext("c1")
 * })
 *
 * Promise.all([
 *   Effect.runPromise(program.pipe(Effect.provide(memoryWith(NoopStrategy.layer)))),
 *   Effect.runPromise(program.pipe(Effect.provide(memoryWith(SlidingWindowStrategy.layer({ tokenBudget: 100 })))))
 * ]).then(([whole, window]) => {
 *   // The whole conversation, against the newest turns that fit, the others counted as omitted.
 *   assert.strictEqual(whole.turnsShown, 20)
 *   assert.strictEqual(window.turnsShown + window.turnsOmitted, 20)
 *   assert.ok(window.turnsShown < 20)
 * })
 * ```
 *
 * @since 0.1.0
 */
import type { Effect, Queue, Scope } from "effect"
import { Context } from "effect"
import type { Overrides } from "../domain/ContextSettings.js"
import type { ConversationId } from "../domain/ConversationId.js"
import type { MemoryContext } from "../domain/MemoryContext.js"
import type { MemoryEvent } from "../domain/MemoryEvent.js"
import type { UserId } from "../domain/UserId.js"
import type { RepositoryError } from "../errors/RepositoryError.js"

/**
 * A memory policy. `NoopStrategy`, `SlidingWindowStrategy`, `SummarizationStrategy` and
 * `HierarchicalStrategy` provide it. Swapping the policy is swapping this one layer.
 *
 * Laws, tested against every implementation:
 * - `postAddMessagesHook` returns promptly and never fails. Background work is forked and reports
 *   its own failures.
 * - `buildContext` fails only on store errors. An unknown or cleared conversation has an empty
 *   context: no messages, nothing omitted, the strategy's budget.
 * - The context's `userId` is the conversation's (`ConversationInfo.userId`). The memory refuses a
 *   read that names another user by it.
 * - With a budget, the context fits it whenever its protected part does. That part is the leading
 *   system messages, and the facts of a strategy that shows them; neither is trimmed.
 * - The context keeps the newest turns verbatim, at least the strategy's minimum when they fit. It
 *   never splits a tool call from its result and never drops a leading system message.
 * - The context accounts for every message: covered by the summary, shown, or counted as omitted.
 * - `awaitIdle` completes once no background work of the conversation runs (of any, without one).
 * - `forget` stops the background work of a conversation about to be cleared.
 * - Background work runs in fibers the strategy's layer owns. Closing the layer interrupts them.
 *
 * @since 0.1.0
 * @category tags
 */
export class MemoryManagementStrategy extends Context.Tag("effect-chat-memory/MemoryManagementStrategy")<
  MemoryManagementStrategy,
  MemoryManagementStrategy.Service
>() {}

/**
 * The shape of the service (`Service`) and the types it takes and gives.
 *
 * @since 0.1.0
 * @category models
 */
export declare namespace MemoryManagementStrategy {
  /**
   * The strategy's operations; their laws are on the tag.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    /** The strategy's name, reported in every context it builds. */
    readonly name: string
    /** Runs after every successful `addMessages`. */
    readonly postAddMessagesHook: (input: PostAddMessagesInput) => Effect.Effect<void>
    /**
     * Assembles the context for the next model call. `settings` are the call's, such as its budget
     * and query. They override the conversation's stored settings
     * (`RepositoryService.WindowRead.settings`), which override the strategy's own options. A
     * strategy ignores what it has no use for: `noop` has no budget, the sliding window no K or
     * view.
     */
    readonly buildContext: (
      conversationId: ConversationId,
      settings?: ContextSettings | undefined
    ) => Effect.Effect<MemoryContext, RepositoryError>
    /** Waits until no background work runs for the conversation, or for any without one. */
    readonly awaitIdle: (conversationId?: ConversationId) => Effect.Effect<void>
    /** Interrupts the background work of a conversation about to be cleared. */
    readonly forget: (conversationId: ConversationId) => Effect.Effect<void>
    /** Subscribes to the strategy's events (summarized, summarization failed, fallback used). */
    readonly subscribe: Effect.Effect<Queue.Dequeue<MemoryEvent>, never, Scope.Scope>
  }

  /**
   * The settings a strategy assembles a context with.
   *
   * @since 0.1.0
   * @category models
   */
  export interface ContextSettings extends Overrides {
    /** What the next model call is about. A strategy with recall adds the older turns matching it. */
    readonly query?: string | undefined
    /**
     * The user of a conversation not written yet, whose context then shows the user's facts. A
     * written conversation keeps its own user, or none.
     */
    readonly userId?: UserId | undefined
  }

  /**
   * What `postAddMessagesHook` receives after an append.
   *
   * @since 0.1.0
   * @category models
   */
  export interface PostAddMessagesInput {
    readonly conversationId: ConversationId
    /** The user the conversation belongs to, or null. */
    readonly userId: UserId | null
    readonly addedMessagesCount: number
    readonly totalMessagesCount: number
  }
}
