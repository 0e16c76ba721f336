/**
 * The in-memory store: a real implementation of every storage port (`RepositoryService`,
 * `SummaryStore`, `SettingsStore`, `MessageIndex`, `SummarizationLease`) over one `Ref`,
 * for tests, embedded use and as the store users compose in their own tests.
 *
 * @since 0.1.0
 */
import { Effect, type Layer } from "effect"
import * as Conversations from "./internal/memory/conversations.js"
import * as Lease from "./internal/memory/lease.js"
import * as MessageIndex from "./internal/memory/messageIndex.js"
import * as Settings from "./internal/memory/settings.js"
import * as State from "./internal/memory/state.js"
import * as Summaries from "./internal/memory/summaries.js"
import * as Users from "./internal/memory/users.js"
import * as Store from "./Store.js"

/**
 * Builds an empty in-memory store: the implementations of the ports, over the same data.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Store.Store> = Effect.gen(function*() {
  const state = yield* State.make
  return {
    repository: Conversations.make(state),
    summaries: Summaries.make(state),
    settings: Settings.make(state),
    index: MessageIndex.make(state),
    lease: yield* Lease.make,
    users: Users.make(state)
  }
})

/**
 * A layer with a fresh, empty in-memory store, providing every storage port.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Store.Ports> = Store.layer(make)
