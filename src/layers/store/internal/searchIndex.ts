/**
 * The BM25 index of one conversation of the in-memory store, over MiniSearch. It follows the
 * conversation's log (appends, prunes) and ranks as the SQL stores do.
 */
import MiniSearch from "minisearch"
import type { MessageIndex } from "../../../services/MessageIndex.js"
import type { MessageLog } from "./log.js"
import * as Search from "./search.js"

interface Document {
  readonly seq: number
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
class Postings extends MiniSearch<Document> {
  constructor() {
    super({
      idField: "seq",
      fields: ["terms"],
      tokenize: (terms) => terms.split(" "),
      processTerm: (term) => term,
      autoVacuum: false
    })
  }

  /**
   * Each term's postings, by term. A user-scoped search looks up each query term in every
   * conversation of the user, most of them holding none of the rarer ones. A hash lookup answers
   * that where the radix tree walks the term. A vacuum may detach a term's postings, so it unsets
   * the map; the next lookup builds it again.
   */
  private byTerm: Map<string, ReadonlyMap<number, number>> | undefined = new Map()

  /** The documents (by short id) that hold `term`, with its frequency in each (none: empty). */
  postings(term: string): ReadonlyMap<number, number> {
    return (this.byTerm ?? this.mapTerms()).get(term) ?? noPostings
  }

  /** Indexes a message by its terms. */
  addMessage(seq: number, text: string): void {
    const terms = tokens(text)
    this.add({ seq, terms: terms.join(" ") })
    const byTerm = this.byTerm
    if (byTerm === undefined) return
    for (const term of terms) {
      if (byTerm.has(term)) continue
      const found = this._index.get(term)?.get(0)
      if (found !== undefined) byTerm.set(term, found)
    }
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

  /** The seq of a document by its short id. */
  seqOf(shortId: number): number | undefined {
    const seq: unknown = this._documentIds.get(shortId)
    return typeof seq === "number" ? seq : undefined
  }

  /** The short id of a document by its seq. */
  shortIdOf(seq: number): number | undefined {
    return this._idToShortId.get(seq)
  }

  /** The mean length of the index's documents. */
  averageLength(): number {
    return this._avgFieldLength[0] ?? 1
  }

  /** A document's length: its distinct terms. */
  documentLength(shortId: number): number {
    return this._fieldLength.get(shortId)?.[0] ?? 1
  }
}

/**
 * The mutable index of one conversation value (a conversation deleted and written again gets a new
 * one). `sync` brings it up to a snapshot of that conversation: it adds the searchable messages it
 * has not seen and drops the pruned ones. An older snapshot changes nothing, so a reader may sync
 * with whatever snapshot it holds.
 */
export class SearchIndex {
  private readonly index = new Postings()
  /** The searchable seqs indexed, ascending; those before `head` were dropped. */
  private seqs: Array<number> = []
  private head = 0
  /** The highest seq looked at. */
  private seen = 0
  /** The log and system prefix last synced with: a log never changes, so the same one is a no-op. */
  private synced: { readonly log: MessageLog; readonly prefix: number } | undefined

  /** Brings the index up to `messages` (ascending by seq) of a conversation with that system prefix. */
  sync(messages: MessageLog, systemPrefixSeq: number): void {
    if (this.synced?.log === messages && this.synced.prefix === systemPrefixSeq) return
    this.synced = { log: messages, prefix: systemPrefixSeq }
    const lastSeq = messages.last()?.seq ?? 0
    // Pruning removes the oldest messages after the system prefix: the pruned seqs are the oldest
    // indexed. Only seqs the snapshot could hold are checked. An older snapshot lacks the newer
    // messages, and that is not a prune.
    let dropped = false
    while (this.head < this.seqs.length) {
      const seq = this.seqs[this.head]
      if (seq === undefined || seq > lastSeq || messages.has(seq)) break
      this.index.discard(seq)
      this.head += 1
      dropped = true
    }
    if (dropped) this.compact()
    for (let i = messages.indexAfter(this.seen); i < messages.size; i++) {
      const message = messages.at(i)
      if (message === undefined) break
      this.seen = message.seq
      if (!Search.isSearchable(message, systemPrefixSeq)) continue
      this.index.addMessage(message.seq, Search.searchableText(message))
      this.seqs.push(message.seq)
    }
  }

  /** The best matches of `query`, best first (ties: the newer first). */
  search(query: MessageIndex.SearchQuery): Array<MessageIndex.SearchHit> {
    const terms = Search.queryTerms(query.text)
    const documents = this.index.documentCount
    if (terms.length === 0 || documents === 0) return []
    const postings = terms.map((term) => this.index.postings(term))
    const plan = Search.plan(postings.map((p) => p.size), documents)
    const average = this.index.averageLength()
    const hits: Array<MessageIndex.SearchHit> = []
    for (const { seq, shortId } of this.candidates(plan, postings, query.before, Search.recentCandidates)) {
      const length = this.index.documentLength(shortId)
      let score = 0
      plan.forEach((term, t) => {
        const frequency = postings[t]?.get(shortId)
        if (frequency !== undefined) score += Search.bm25(term.idf, frequency, length, average)
      })
      hits.push({ seq, score })
    }
    hits.sort((x, y) => y.score - x.score || y.seq - x.seq)
    return hits.slice(0, Search.clampLimit(query.limit))
  }

  /**
   * The best matches of `query` over several conversations' indexes, ranked as one index of all
   * their messages would rank them. Best first; ties go to the newer, then to the first index given.
   *
   * - Each term's document frequency and the mean length are summed over the indexes. Each index
   *   ranks its own candidates with those weights.
   * - A part's `before` bounds its seqs.
   * - The parts come the conversation said last first. Messages that hold only common terms are
   *   looked for in the parts marked `recent`, `Search.recentCandidates` in all.
   */
  static searchAcross<K>(
    parts: ReadonlyArray<
      { readonly key: K; readonly index: SearchIndex; readonly before: number; readonly recent: boolean }
    >,
    query: { readonly text: string; readonly limit: number }
  ): Array<{ readonly key: K; readonly seq: number; readonly score: number }> {
    const terms = Search.queryTerms(query.text)
    if (terms.length === 0) return []
    let documents = 0
    let lengthSum = 0
    const frequencies = new Array<number>(terms.length).fill(0)
    const postingsOf: Array<Array<ReadonlyMap<number, number>>> = []
    for (const { index } of parts) {
      const count = index.index.documentCount
      documents += count
      lengthSum += index.index.averageLength() * count
      const postings: Array<ReadonlyMap<number, number>> = []
      for (let t = 0; t < terms.length; t++) {
        const found = index.index.postings(terms[t] ?? "")
        frequencies[t] = (frequencies[t] ?? 0) + found.size
        postings.push(found)
      }
      postingsOf.push(postings)
    }
    if (documents === 0) return []
    const plan = Search.plan(frequencies, documents)
    const average = lengthSum / documents
    const hits: Array<{ readonly key: K; readonly seq: number; readonly score: number }> = []
    let recentLeft = Search.recentCandidates
    parts.forEach(({ before, index, key, recent }, p) => {
      const postings = postingsOf[p] ?? []
      const recentMax = recent ? recentLeft : 0
      // Most of a user's conversations hold none of the rare terms and are not among the newest.
      if (recentMax <= 0 && !plan.some((term, t) => term.rare && (postings[t]?.size ?? 0) > 0)) return
      const candidates = index.candidates(plan, postings, before, recentMax)
      recentLeft -= candidates.recent
      for (const { seq, shortId } of candidates) {
        const length = index.index.documentLength(shortId)
        let score = 0
        plan.forEach((term, t) => {
          const frequency = postings[t]?.get(shortId)
          if (frequency !== undefined) score += Search.bm25(term.idf, frequency, length, average)
        })
        hits.push({ key, seq, score })
      }
    })
    return hits.map((hit, order) => ({ hit, order }))
      .sort((x, y) => y.hit.score - x.hit.score || y.hit.seq - x.hit.seq || x.order - y.order)
      .slice(0, Search.clampLimit(query.limit))
      .map(({ hit }) => hit)
  }

  /**
   * The messages a search ranks in this index under `plan`. At most `recentMax` of them hold only
   * common terms (among the newest); `recent` says how many do.
   */
  private candidates(
    plan: ReadonlyArray<{ readonly rare: boolean }>,
    postings: ReadonlyArray<ReadonlyMap<number, number>>,
    rawBefore: number,
    recentMax: number
  ): Array<{ readonly seq: number; readonly shortId: number }> & { recent: number } {
    const before = Number.isNaN(rawBefore) ? 0 : rawBefore
    const out: Array<{ readonly seq: number; readonly shortId: number }> & { recent: number } = Object.assign([], {
      recent: 0
    })
    if (before <= 1) return out
    const candidates = new Set<number>()
    plan.forEach((term, t) => {
      if (!term.rare) return
      for (const shortId of postings[t]?.keys() ?? []) {
        const seq = this.index.seqOf(shortId)
        if (seq !== undefined && seq < before) candidates.add(shortId)
      }
    })
    if (recentMax > 0 && plan.some((term) => !term.rare)) {
      const common = postings.filter((_, t) => plan[t]?.rare === false)
      const floor = Math.min(before - 1, this.seen) - Search.recentWindow
      for (let i = this.seqs.length - 1; i >= this.head && out.recent < recentMax; i--) {
        const seq = this.seqs[i]
        if (seq === undefined || seq <= floor) break
        if (seq >= before) continue
        const shortId = this.index.shortIdOf(seq)
        if (shortId === undefined || !common.some((p) => p.has(shortId))) continue
        candidates.add(shortId)
        out.recent += 1
      }
    }
    for (const shortId of candidates) {
      const seq = this.index.seqOf(shortId)
      if (seq !== undefined) out.push({ seq, shortId })
    }
    return out
  }

  /**
   * Forgets the dropped seqs and removes the discarded documents from the postings at once. A
   * posting left behind would still count in its term's document frequency.
   */
  private compact(): void {
    if (this.head > 1024 && this.head * 2 > this.seqs.length) {
      this.seqs = this.seqs.slice(this.head)
      this.head = 0
    }
    this.index.compact()
  }
}
