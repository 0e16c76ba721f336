/**
 * A store as one unit: the storage ports one adapter implements together, and the layer that
 * provides them all. Swapping a store stays a one-line change.
 *
 * @since 0.1.0
 */
import type { Scope } from "effect"
import { Context, Effect, Layer } from "effect"
import { MessageIndex } from "../../services/MessageIndex.js"
import { RepositoryService } from "../../services/RepositoryService.js"
import { SettingsStore } from "../../services/SettingsStore.js"
import { SummarizationLease } from "../../services/SummarizationLease.js"
import { SummaryStore } from "../../services/SummaryStore.js"
import { UserStore } from "../../services/UserStore.js"

/**
 * The tags every store provides.
 *
 * @since 0.1.0
 * @category models
 */
export type Ports = RepositoryService | SummaryStore | SettingsStore | MessageIndex | SummarizationLease | UserStore

/**
 * One store's implementations of the ports, sharing the store's data. `repository`'s
 * `deleteConversation` clears what the others hold. `summaries`' pruning commits what the log and
 * the index hold.
 *
 * @since 0.1.0
 * @category models
 */
export interface Store {
  readonly repository: RepositoryService.Service
  readonly summaries: SummaryStore.Service
  readonly settings: SettingsStore.Service
  readonly index: MessageIndex.Service
  readonly lease: SummarizationLease.Service
  readonly users: UserStore.Service
}

/**
 * The context that provides every port of `store`.
 */
const context = (store: Store): Context.Context<Ports> =>
  Context.make(RepositoryService, store.repository).pipe(
    Context.add(SummaryStore, store.summaries),
    Context.add(SettingsStore, store.settings),
    Context.add(MessageIndex, store.index),
    Context.add(SummarizationLease, store.lease),
    Context.add(UserStore, store.users)
  )

/**
 * The store in context as one value, to wrap it (e.g. in a fault-injecting double) or build another
 * layer from its parts.
 *
 * @since 0.1.0
 * @category utils
 */
export const get: Effect.Effect<Store, never, Ports> = Effect.all({
  repository: RepositoryService,
  summaries: SummaryStore,
  settings: SettingsStore,
  index: MessageIndex,
  lease: SummarizationLease,
  users: UserStore
})

/**
 * A layer providing every port of the store `make` builds in the layer's scope.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <E, R>(make: Effect.Effect<Store, E, R>): Layer.Layer<Ports, E, Exclude<R, Scope.Scope>> =>
  Layer.scopedContext(Effect.map(make, context))

/**
 * A layer providing every port of a store already built.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerFrom = (store: Store): Layer.Layer<Ports> => Layer.succeedContext(context(store))
