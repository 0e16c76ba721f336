/**
 * One conversation's message log in the in-memory store, ascending by seq. It appends in O(1) and
 * finds a seq in O(log n), and snapshots can share it.
 */
import type { Message } from "../../../domain/Message.js"

/**
 * A view of the first `size` messages of an array that only grows. Appending to the newest view
 * pushes onto the shared array; older views still see their own prefix. Appending to an older view
 * copies its prefix first, since pushing would overwrite a newer view's messages. A prune makes a
 * new array. So every view is immutable, and a store snapshot can hold one.
 */
export class MessageLog {
  private constructor(
    private readonly items: Array<Message>,
    /** How many messages this view holds. */
    readonly size: number
  ) {}

  /** The empty log. */
  static empty(): MessageLog {
    return new MessageLog([], 0)
  }

  /** The log of `messages`, ascending by seq. */
  static of(messages: ReadonlyArray<Message>): MessageLog {
    return new MessageLog([...messages], messages.length)
  }

  /** The message at `index`; none outside `[0, size)`. */
  at(index: number): Message | undefined {
    return index < this.size ? this.items[index] : undefined
  }

  /** The newest message, if any. */
  last(): Message | undefined {
    return this.size === 0 ? undefined : this.items[this.size - 1]
  }

  /** This log with `messages` appended. Their seqs must be above every seq held. */
  append(messages: ReadonlyArray<Message>): MessageLog {
    if (messages.length === 0) return this
    const items = this.items.length === this.size ? this.items : this.items.slice(0, this.size)
    for (const message of messages) items.push(message)
    return new MessageLog(items, this.size + messages.length)
  }

  /** A new log of the messages that satisfy `keep`. */
  filter(keep: (message: Message) => boolean): MessageLog {
    const items: Array<Message> = []
    for (let i = 0; i < this.size; i++) {
      const message = this.items[i]
      if (message !== undefined && keep(message)) items.push(message)
    }
    return new MessageLog(items, items.length)
  }

  /** The index of the first message whose seq is greater than `seq`. */
  indexAfter(seq: number): number {
    let lo = 0
    let hi = this.size
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if ((this.items[mid]?.seq ?? Number.POSITIVE_INFINITY) <= seq) lo = mid + 1
      else hi = mid
    }
    return lo
  }

  /** Whether a message with `seq` is held. */
  has(seq: number): boolean {
    return this.get(seq) !== undefined
  }

  /** The message with `seq`, if held. */
  get(seq: number): Message | undefined {
    const message = this.at(this.indexAfter(seq - 1))
    return message?.seq === seq ? message : undefined
  }

  /** The messages at indexes `[start, end)`, mapped by `f`. */
  slice<A>(start: number, end: number, f: (message: Message) => A): Array<A> {
    const out: Array<A> = []
    for (let i = Math.max(0, start); i < Math.min(end, this.size); i++) {
      const message = this.items[i]
      if (message !== undefined) out.push(f(message))
    }
    return out
  }
}
