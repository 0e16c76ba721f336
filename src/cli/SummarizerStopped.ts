/**
 * A replay whose summarizer keeps failing. When its breaker opens (`SummarizerUnavailable`), the
 * replay stops waiting for summaries. It ends with an error that names the summarizer, what a
 * connection to its server says, the skill's last error, and that nothing was lost.
 */
import { Effect, Option, Predicate, Queue } from "effect"
import { connect } from "node:net"
import type { MemoryEvent, SummarizerUnavailable } from "../domain/MemoryEvent.js"
import type * as ChatMemoryConfig from "../layers/ChatMemoryConfig.js"
import { CliError } from "./Errors.js"
import * as Settings from "./Settings.js"

/** The summarizer's breaker opened at `turn`, so the replay stops waiting for summaries. */
export interface Stopped {
  readonly turn: number
  readonly event: SummarizerUnavailable
}

/** The newest `SummarizerUnavailable` among the events received so far. */
export const breakerOpened = (events: Queue.Dequeue<MemoryEvent>) =>
  Effect.map(Queue.takeAll(events), (chunk) =>
    Option.fromNullable(
      [...chunk].filter((event): event is SummarizerUnavailable => event._tag === "SummarizerUnavailable").at(-1)
    ))

/** The OS's word for a failed connection, which a transport error from the HTTP client hides. */
const socketFailure = (error: Error): string => {
  const code = Predicate.hasProperty(error, "code") && typeof error.code === "string" ? error.code : undefined
  switch (code) {
    case "ECONNREFUSED":
      return "connection refused"
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return "host not found"
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return "host unreachable"
    default:
      return error.message
  }
}

/** What a TCP connection to `url`'s server says within 2 s: the cause behind a transport error. */
const reachability = (url: string): Effect.Effect<string> =>
  URL.canParse(url)
    ? Effect.async<string>((resume) => {
      const target = new URL(url)
      const port = Number(target.port || (target.protocol === "https:" ? 443 : 80))
      const socket = connect({ host: target.hostname.replace(/^\[(.*)\]$/, "$1"), port })
      const done = (outcome: string) => {
        socket.destroy()
        resume(Effect.succeed(outcome))
      }
      socket.setTimeout(2000)
      socket.once("connect", () => done("the server accepts connections"))
      socket.once("timeout", () => done("no answer to a connection within 2 s"))
      socket.once("error", (error) => done(socketFailure(error)))
      return Effect.sync(() => socket.destroy())
    })
    : Effect.succeed("not a valid URL")

/**
 * The error that ends a replay stopped by the summarizer's breaker. It names the summarizer, its
 * server and what a connection to it says, the skill's last error, and that nothing was lost.
 */
export const summarizerStopped = (
  stopped: Stopped,
  options: ChatMemoryConfig.Options,
  conversationId: string,
  totals: { readonly turns: number; readonly messagesStored: number; readonly summarizedUpTo: number }
) =>
  Effect.gen(function*() {
    const configuration = Settings.describe(options)
    const url = configuration.summarizer === "openai"
      ? configuration.summarizerUrl ?? "https://api.openai.com/v1"
      : undefined
    const where = url === undefined
      ? `the ${configuration.summarizer} summarizer`
      : `the summarizer ${configuration.summarizerModel} at ${url} (${yield* reachability(url)})`
    return new CliError({
      reason: `replay stopped after turn ${stopped.turn} of ${totals.turns}: ${where} failed ` +
        `${stopped.event.failures} summarizations in a row, so summarization is paused ` +
        `(last error: ${stopped.event.detail}). Nothing is lost: all ${totals.messagesStored} messages are stored ` +
        `under "${conversationId}" (summarized up to seq ${totals.summarizedUpTo}). ` +
        (url === undefined
          ? "Check the summarizer and replay again."
          : `Check ${Settings.variables.openAiBaseUrl.name} and ${Settings.variables.openAiApiKey.name} ` +
            "(unset both for the offline summarizer) and replay again.")
    })
  })
