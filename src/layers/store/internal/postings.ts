/**
 * What the in-memory store's BM25 indexes share: MiniSearch with read access to its postings, and
 * the follower of one conversation value's log that feeds an index the messages added and pruned.
 */
import MiniSearch from "minisearch"
import type { MessageLog } from "./log.js"
import * as Search from "./search.js"

interface Document {
  /** The document's id: a seq, or a number the index gives. */
  readonly id: number
  /** The message's terms, each as often as it occurs, separated by spaces (a term holds none). */
  readonly terms: string
}

/** A message's terms, each repeated as often as it occurs: MiniSearch counts the frequencies. */
const tokens = (text: string): Array<string> => {
  const out: Array<string> = []
  for (const [term, count] of Search.documentTerms(text)) for (let i = 0; i < count; i++) out.push(term)
  return out
}

/** The postings of a term no document holds: one shared value, never written to. */
const noPostings: ReadonlyMap<number, number> = new Map()

/**
 * MiniSearch with read access to its postings. Its own `search` scores every document of every
 * query term, and common words are in most messages of a long conversation. The postings let a
 * search rank a bounded set of candidates instead (`Search.plan`), with the same BM25 weights.
 */
export class Postings extends MiniSearch<Document> {
  constructor() {
    super({
      idField: "id",
      fields: ["terms"],
      tokenize: (terms) => terms.split(" "),
      processTerm: (term) => term,
      autoVacuum: false
    })
  }

  /**
   * Each term's postings, by term: a hash lookup, where the radix tree walks the term. A vacuum may
   * detach a term's postings, so it unsets the map; the next lookup builds it again.
   */
  private byTerm: Map<string, ReadonlyMap<number, number>> | undefined = new Map()

  /** The documents (by short id) that hold `term`, with its frequency in each (none: empty). */
  postings(term: string): ReadonlyMap<number, number> {
    return (this.byTerm ?? this.mapTerms()).get(term) ?? noPostings
  }

  /** Indexes a message's text under `id`. Its short id (the postings' key). */
  addMessage(id: number, text: string): number | undefined {
    const terms = tokens(text)
    this.add({ id, terms: terms.join(" ") })
    const byTerm = this.byTerm
    if (byTerm !== undefined) {
      for (const term of terms) {
        if (byTerm.has(term)) continue
        const found = this._index.get(term)?.get(0)
        if (found !== undefined) byTerm.set(term, found)
      }
    }
    return this._idToShortId.get(id)
  }

  /**
   * Removes the discarded documents from the postings, before it returns. MiniSearch's `vacuum`
   * does the same, but while its last run has not settled (a microtask later) it only queues the
   * next one: a second prune in the same tick would leave its postings counted.
   */
  compact(): void {
    for (const [term, fields] of this._index) {
      const found = fields.get(0)
      if (found !== undefined) {
        for (const shortId of found.keys()) if (!this._documentIds.has(shortId)) found.delete(shortId)
        if (found.size > 0) continue
      }
      this._index.delete(term)
    }
    this._dirtCount = 0
    this.byTerm = undefined
  }

  private mapTerms(): Map<string, ReadonlyMap<number, number>> {
    const byTerm = new Map<string, ReadonlyMap<number, number>>()
    for (const [term, fields] of this._index) {
      const found = fields.get(0)
      if (found !== undefined) byTerm.set(term, found)
    }
    this.byTerm = byTerm
    return byTerm
  }

  /** The id of a document by its short id. */
  idOf(shortId: number): number | undefined {
    const id: unknown = this._documentIds.get(shortId)
    return typeof id === "number" ? id : undefined
  }

  /** The short id of a document by its id. */
  shortIdOf(id: number): number | undefined {
    return this._idToShortId.get(id)
  }

  /** The mean length of the index's documents. */
  averageLength(): number {
    return this._avgFieldLength[0] ?? 1
  }

  /** A document's length: its distinct terms. */
  documentLength(shortId: number): number {
    return this._fieldLength.get(shortId)?.[0] ?? 1
  }

  /**
   * What a search for `text` reads: each query term's postings and weight, and the mean length.
   * Undefined when the text holds no term or the index no document.
   */
  plan(text: string): Plan | undefined {
    const terms = Search.queryTerms(text)
    const documents = this.documentCount
    if (terms.length === 0 || documents === 0) return undefined
    const postings = terms.map((term) => this.postings(term))
    const weights = Search.plan(postings.map((p) => p.size), documents)
    return {
      postings,
      weights,
      average: this.averageLength(),
      common: postings.filter((_, t) => weights[t]?.rare === false)
    }
  }

  /** The documents (short ids) that hold a rare term of `plan` and that `keep` keeps. */
  rare(plan: Plan, keep: (shortId: number) => boolean): Set<number> {
    const found = new Set<number>()
    plan.weights.forEach((term, t) => {
      if (!term.rare) return
      for (const shortId of plan.postings[t]?.keys() ?? []) if (keep(shortId)) found.add(shortId)
    })
    return found
  }

  /** A document's BM25 score under `plan`. */
  score(plan: Plan, shortId: number): number {
    const length = this.documentLength(shortId)
    let score = 0
    plan.weights.forEach((term, t) => {
      const frequency = plan.postings[t]?.get(shortId)
      if (frequency !== undefined) score += Search.bm25(term.idf, frequency, length, plan.average)
    })
    return score
  }
}

/** A search's reading of an index (`Postings.plan`). */
export interface Plan {
  /** Each query term's postings, by short id. */
  readonly postings: ReadonlyArray<ReadonlyMap<number, number>>
  /** Each query term's weight, and whether it is rare (`Search.plan`). */
  readonly weights: ReadonlyArray<{ readonly idf: number; readonly rare: boolean }>
  readonly average: number
  /** The postings of the common terms: a message holding only those is found among the newest. */
  readonly common: ReadonlyArray<ReadonlyMap<number, number>>
}

/**
 * Follows one conversation value's log for an index. `sync` hands the index the searchable messages
 * it has not seen and the pruned ones. An older snapshot changes nothing, so a reader may sync with
 * whatever snapshot it holds.
 */
export class LogFollower {
  /** The searchable seqs handed on, ascending; those before `head` were dropped. */
  private seqs: Array<number> = []
  private head = 0
  /** The highest seq looked at. */
  private seen = 0
  /** The log and system prefix last synced with: a log never changes, so the same one is a no-op. */
  private synced: { readonly log: MessageLog; readonly prefix: number } | undefined

  /**
   * Brings the follower up to `messages` (ascending by seq) of a conversation with that system
   * prefix: `drop` for each pruned seq, then `add` for each new searchable message. Whether it
   * dropped any.
   */
  sync(
    messages: MessageLog,
    systemPrefixSeq: number,
    add: (seq: number, text: string) => void,
    drop: (seq: number) => void
  ): boolean {
    if (this.synced?.log === messages && this.synced.prefix === systemPrefixSeq) return false
    this.synced = { log: messages, prefix: systemPrefixSeq }
    const lastSeq = messages.last()?.seq ?? 0
    // Pruning removes the oldest messages after the system prefix: the pruned seqs are the oldest
    // handed on. Only seqs the snapshot could hold are checked. An older snapshot lacks the newer
    // messages, and that is not a prune.
    let dropped = false
    while (this.head < this.seqs.length) {
      const seq = this.seqs[this.head]
      if (seq === undefined || seq > lastSeq || messages.has(seq)) break
      drop(seq)
      this.head += 1
      dropped = true
    }
    if (dropped && this.head > 1024 && this.head * 2 > this.seqs.length) {
      this.seqs = this.seqs.slice(this.head)
      this.head = 0
    }
    for (let i = messages.indexAfter(this.seen); i < messages.size; i++) {
      const message = messages.at(i)
      if (message === undefined) break
      this.seen = message.seq
      if (!Search.isSearchable(message, systemPrefixSeq)) continue
      add(message.seq, Search.searchableText(message))
      this.seqs.push(message.seq)
    }
    return dropped
  }

  /**
   * Adds to `candidates` the newest messages below `before` (within `Search.recentWindow` of the
   * newest) that hold a common term of `plan`, at most `budget` of them. How many it added.
   */
  addNewest(
    plan: Plan,
    before: number,
    shortIdOf: (seq: number) => number | undefined,
    candidates: Set<number>,
    budget: number
  ): number {
    const floor = Math.min(before - 1, this.seen) - Search.recentWindow
    let added = 0
    for (let i = this.seqs.length - 1; i >= this.head && added < budget; i--) {
      const seq = this.seqs[i]
      if (seq === undefined || seq <= floor) break
      if (seq >= before) continue
      const shortId = shortIdOf(seq)
      if (shortId === undefined || !plan.common.some((found) => found.has(shortId))) continue
      candidates.add(shortId)
      added += 1
    }
    return added
  }
}
