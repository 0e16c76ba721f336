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
    const terms = Search.queryTerms(query.text)
    const documents = this.index.documentCount
    if (terms.length === 0 || documents === 0) return []
    const postings = terms.map((term) => this.index.postings(term))
    const plan = Search.plan(postings.map((p) => p.size), documents)
    const average = this.index.averageLength()
    const before = Number.isNaN(query.before) ? 0 : query.before
    if (before <= 1) return []
    const candidates = new Set<number>()
    plan.forEach((term, t) => {
      if (!term.rare) return
      for (const shortId of postings[t]?.keys() ?? []) {
        const seq = this.index.idOf(shortId)
        if (seq !== undefined && seq < before) candidates.add(shortId)
      }
    })
    // Messages that hold only common terms: the newest of them.
    const common = postings.filter((_, t) => plan[t]?.rare === false)
    if (common.length > 0) {
      let recent = 0
      this.follower.newest(before, (seq) => {
        const shortId = this.index.shortIdOf(seq)
        if (shortId === undefined || !common.some((p) => p.has(shortId))) return true
        candidates.add(shortId)
        recent += 1
        return recent < Search.recentCandidates
      })
    }
    const hits: Array<MessageIndex.SearchHit> = []
    for (const shortId of candidates) {
      const seq = this.index.idOf(shortId)
      if (seq !== undefined) hits.push({ seq, score: this.index.score(plan, postings, shortId, average) })
    }
    hits.sort((x, y) => y.score - x.score || y.seq - x.seq)
    return hits.slice(0, Search.clampLimit(query.limit))
  }
}
