/**
 * The BM25 index of one conversation of the in-memory store, over MiniSearch. It follows the
 * conversation's log (appends, prunes) and ranks as the SQL stores do.
 */
import type { MessageIndex } from "../../../services/MessageIndex.js"
import type { MessageLog } from "./log.js"
import { LogFollower, Postings } from "./postings.js"
import * as Search from "./search.js"

/**
 * The mutable index of one conversation value (a conversation deleted and written again gets a new
 * one), its documents identified by seq. `sync` brings it up to a snapshot of that conversation: it
 * adds the searchable messages it has not seen and drops the pruned ones. An older snapshot changes
 * nothing, so a reader may sync with whatever snapshot it holds.
 */
export class SearchIndex {
  private readonly index = new Postings()
  private readonly follower = new LogFollower()

  /** Brings the index up to `messages` (ascending by seq) of a conversation with that system prefix. */
  sync(messages: MessageLog, systemPrefixSeq: number): void {
    const dropped = this.follower.sync(
      messages,
      systemPrefixSeq,
      (seq, text) => this.index.addMessage(seq, text),
      (seq) => this.index.discard(seq)
    )
    // A posting left behind would still count in its term's document frequency.
    if (dropped) this.index.compact()
  }

  /** The best matches of `query`, best first (ties: the newer first). */
  search(query: MessageIndex.SearchQuery): Array<MessageIndex.SearchHit> {
    const plan = this.index.plan(query.text)
    const before = Number.isNaN(query.before) ? 0 : query.before
    if (plan === undefined || before <= 1) return []
    const candidates = this.index.rare(plan, (shortId) => (this.index.idOf(shortId) ?? before) < before)
    // Messages that hold only common terms: the newest of them.
    if (plan.common.length > 0) {
      this.follower.addNewest(plan, before, (seq) => this.index.shortIdOf(seq), candidates, Search.recentCandidates)
    }
    const hits: Array<MessageIndex.SearchHit> = []
    for (const shortId of candidates) {
      const seq = this.index.idOf(shortId)
      if (seq !== undefined) hits.push({ seq, score: this.index.score(plan, shortId) })
    }
    hits.sort((x, y) => y.score - x.score || y.seq - x.seq)
    return hits.slice(0, Search.clampLimit(query.limit))
  }
}
