/**
 * The standard streams of the command line: the process's own when it runs as a program, and
 * buffers when a test runs it in-process.
 */
import { Context, type Effect, type Stream } from "effect"

/** The standard streams of the command line. */
export class Stdio extends Context.Tag("effect-chat-memory/cli/Stdio")<Stdio, Stdio.Service>() {}

export declare namespace Stdio {
  /** What the commands read from and write to, besides `Console`'s lines of results and messages. */
  export interface Service {
    /** Standard input, as bytes: `chat`'s lines, `mcp`'s requests. */
    readonly stdin: Stream.Stream<Uint8Array>
    /** Writes text to standard output as it is, adding no newline: `chat`'s prompt, `mcp`'s answers. */
    readonly writeOut: (text: string) => Effect.Effect<void>
    /** Writes text to standard error as it is, adding no newline: progress. */
    readonly writeErr: (text: string) => Effect.Effect<void>
    /** Whether standard input is a terminal where a person types, rather than a pipe or a file. */
    readonly stdinIsTerminal: boolean
    /** Whether standard error is a terminal, where progress is a bar redrawn in place. */
    readonly stderrIsTerminal: boolean
  }
}
