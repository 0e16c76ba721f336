/**
 * The summarization lease port: at most one summarization of a conversation at a time, in this
 * process and, on a shared store, across processes.
 *
 * @since 0.1.0
 */
import type { Effect, Option } from "effect"
import { Context } from "effect"
import type { ConversationId } from "../domain/ConversationId.js"
import type { RepositoryError } from "../errors/RepositoryError.js"

/**
 * Keeps two summarizations of one conversation from running at once. Every implementation passes
 * the lease contract suite.
 *
 * Laws:
 * - `withLease` runs its effect only while no other holder of the conversation's lease runs, in
 *   this process and, for shared stores, across processes. It does not wait: with the lease held
 *   elsewhere it returns `None` at once.
 * - The lease is released when the effect ends, whatever its outcome, failure and interruption
 *   included. Leases of different conversations are independent.
 * - It needs no stored conversation and creates none. The log stays readable and writable while a
 *   lease is held.
 *
 * @since 0.1.0
 * @category tags
 */
export class SummarizationLease extends Context.Tag("effect-chat-memory/SummarizationLease")<
  SummarizationLease,
  SummarizationLease.Service
>() {}

/**
 * The shape of the service (`Service`) and the types it takes and gives.
 *
 * @since 0.1.0
 * @category models
 */
export declare namespace SummarizationLease {
  /**
   * The lease's operations; their laws are on the tag.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    /**
     * Runs `effect` holding the conversation's summarization lease, or returns `None` at once when
     * another holder has it.
     */
    readonly withLease: <A, E, R>(
      conversationId: ConversationId,
      effect: Effect.Effect<A, E, R>
    ) => Effect.Effect<Option.Option<A>, E | RepositoryError, R>
  }
}
