/**
 * Help that fits a screen: `<command> --help` with one line per argument and flag, its name then
 * what it does. The content comes from @effect/cli's own help documents (`getHelp`). Only the
 * layout is ours, where @effect/cli's rendering (`HelpDoc.toAnsiText`) takes too much room:
 *
 * - Definitions in two columns. @effect/cli spends eight lines a flag, 190 for `context --help`.
 *   No `CliConfig` setting drops the generic type line or the optional note, so they are read
 *   here and said in a few words.
 * - A short usage line, with `[flags]` instead of every flag spelled out.
 * - The program's commands as names and descriptions, not each command's full usage.
 * - The built-in flags said once, after the command's own.
 *
 * Span texts are read here too: @effect/cli's plain-text reading of a span is internal.
 */
import { CliConfig, Command, CommandDescriptor, type HelpDoc } from "@effect/cli"
import type { Span } from "@effect/cli/HelpDoc/Span"
import { Console, type Effect, HashMap, Option } from "effect"

/** The widest a help line gets before its description wraps. */
const width = 100

/** @effect/cli's type descriptions that say no more than the flag's value name. */
const genericTypes = new Set([
  "A user-defined piece of text.",
  "A true or false value.",
  "An integer.",
  "A floating point number."
])

const optional = "This setting is optional."

/** A command's own flags are read without @effect/cli's built-ins, which are listed apart. */
const config = CliConfig.make({ showBuiltIns: false })

/** The same help with the built-in flags (`--help`, `--version`, `--log-level`…) included. */
const withBuiltIns = CliConfig.make({ showBuiltIns: true })

/** @effect/cli's description of a choice's type, which the value name already lists. */
const choiceType = "One of the following: "

/** A flag whose value is a choice, as @effect/cli names it: `--log-level all | trace | …`. */
const choiceName = /^(.*?) (\S+(?: \| \S+)+)$/

const spanText = (span: Span): string => {
  switch (span._tag) {
    case "Text":
    case "URI":
      return span.value
    case "Sequence":
      return spanText(span.left) + spanText(span.right)
    case "Highlight":
    case "Strong":
    case "Weak":
      return spanText(span.value)
  }
}

/** The paragraphs of a help document, in order (an enumeration's elements as paragraphs). */
const paragraphs = (doc: HelpDoc.HelpDoc): Array<string> => {
  switch (doc._tag) {
    case "Empty":
    case "DescriptionList":
      return []
    case "Header":
    case "Paragraph":
      return [spanText(doc.value)]
    case "Enumeration":
      return doc.elements.flatMap(paragraphs)
    case "Sequence":
      return [...paragraphs(doc.left), ...paragraphs(doc.right)]
  }
}

/** A help document as plain text on one line, such as the parser's refusal of an argument. */
export const oneLine = (doc: HelpDoc.HelpDoc): string => paragraphs(doc).join(" ").trim()

/** A help document's sections: each header with the paragraphs and definitions under it. */
interface Section {
  readonly title: string
  readonly text: Array<string>
  readonly definitions: Array<readonly [string, HelpDoc.HelpDoc]>
}

const sections = (doc: HelpDoc.HelpDoc): Array<Section> => {
  const out: Array<Section> = []
  const current = (): Section => {
    const last = out.at(-1)
    if (last !== undefined) return last
    const first: Section = { title: "", text: [], definitions: [] }
    out.push(first)
    return first
  }
  const walk = (node: HelpDoc.HelpDoc): void => {
    switch (node._tag) {
      case "Empty":
        return
      case "Header":
        out.push({ title: spanText(node.value), text: [], definitions: [] })
        return
      case "Paragraph":
      case "Enumeration":
        current().text.push(...paragraphs(node))
        return
      case "DescriptionList":
        // `(-k, --k-raw-turns turns)`: the parentheses group a flag's names in a usage line only.
        current().definitions.push(
          ...node.definitions.map(([name, block]) => [spanText(name).replace(/^\((.*)\)$/, "$1"), block] as const)
        )
        return
      case "Sequence":
        walk(node.left)
        walk(node.right)
        return
    }
  }
  walk(doc)
  return out
}

/** Words of `text` in lines of at most `room` characters (a longer word keeps its own line). */
const wrap = (text: string, room: number): Array<string> => {
  const lines: Array<string> = []
  let line = ""
  for (const word of text.split(/\s+/).filter((w) => w.length > 0)) {
    if (line.length > 0 && line.length + 1 + word.length > room) {
      lines.push(line)
      line = word
    } else line = line.length === 0 ? word : `${line} ${word}`
  }
  if (line.length > 0) lines.push(line)
  return lines
}

/** Definitions as a two-column list: names padded to one width, descriptions wrapped beside them. */
const table = (rows: ReadonlyArray<readonly [string, string]>): Array<string> => {
  const column = Math.min(28, Math.max(0, ...rows.map(([name]) => name.length)) + 2)
  return rows.flatMap(([name, description]) => {
    const [first = "", ...rest] = wrap(description, width - column - 2)
    const head = name.length + 2 > column ? [`  ${name}`, `  ${" ".repeat(column)}${first}`] : [
      `  ${name.padEnd(column)}${first}`
    ]
    return [...head, ...rest.map((line) => `  ${" ".repeat(column)}${line}`)].map((line) => line.trimEnd())
  })
}

/**
 * One definition's description: @effect/cli's paragraphs without the generic type line.
 * "Optional" and the default are said in a few words. An argument says when it may be left out.
 * A flag says only its default, or that it is required.
 */
const describe = (block: HelpDoc.HelpDoc, kind: "argument" | "flag"): string => {
  const [type, ...rest] = paragraphs(block)
  const texts = type === undefined || genericTypes.has(type) || type.startsWith(choiceType) ? rest : [type, ...rest]
  const isOptional = texts.some((text) => text.startsWith(optional))
  const notes = texts.flatMap((text) => {
    if (!text.startsWith(optional)) return [text]
    const fallback = text.slice(optional.length).trim().replace(/^Defaults to: /, "")
    return fallback.length > 0 ? [`(default: ${fallback})`] : kind === "argument" ? ["(optional)"] : []
  })
  return [...notes, ...(isOptional ? [] : kind === "flag" ? ["(required)"] : [])].join(" ")
}

/**
 * One definition as a row of the table. A choice's value is named `choice`, and its choices lead
 * the description: listed in the name, they would push every description off the name column.
 */
const row = (name: string, block: HelpDoc.HelpDoc, kind: "argument" | "flag"): readonly [string, string] => {
  const choice = choiceName.exec(name)
  const description = describe(block, kind)
  return choice === null ? [name, description] : [`${choice[1]} choice`, `${choice[2]}: ${description}`]
}

/** The definitions of a help document's section. */
const definitionsOf = (help: HelpDoc.HelpDoc, title: string) =>
  sections(help).find((part) => part.title === title)?.definitions ?? []

/** A command's help as @effect/cli gives it under a configuration. */
type HelpOf = (config: CliConfig.CliConfig) => HelpDoc.HelpDoc

/** The built-in flags: those @effect/cli adds to the command's own, each with its description. */
const builtInsOf = (help: HelpOf): Array<readonly [string, string]> => {
  const own = new Set(definitionsOf(help(config), "OPTIONS").map(([name]) => name))
  return definitionsOf(help(withBuiltIns), "OPTIONS").flatMap(([name, block]) =>
    own.has(name) ? [] : [row(name, block, "flag")]
  )
}

/** The compact help of one command: usage, description, arguments, flags and the built-ins. */
const renderCommand = (program: string, name: string, helpOf: HelpOf): string => {
  const help = helpOf(config)
  const args = definitionsOf(help, "ARGUMENTS")
  const flags = definitionsOf(help, "OPTIONS")
  const usageArgs = args.map(([arg, block]) =>
    paragraphs(block).some((text) => text.startsWith(optional)) ? `[${arg}]` : arg
  )
  const lines = [
    `${program} ${name}: ${descriptionOf(help)}`,
    "",
    "USAGE",
    `  ${[program, name, ...(flags.length > 0 ? ["[flags]"] : []), ...usageArgs].join(" ")}`,
    ...(args.length === 0
      ? []
      : ["", "ARGUMENTS", ...table(args.map(([arg, block]) => row(arg, block, "argument")))]),
    ...(flags.length === 0
      ? []
      : ["", "FLAGS", ...table(flags.map(([flag, block]) => row(flag, block, "flag")))]),
    "",
    "BUILT-IN FLAGS",
    ...table(builtInsOf(helpOf))
  ]
  return lines.join("\n")
}

/** The description of a command's help. */
const descriptionOf = (help: HelpDoc.HelpDoc): string =>
  (sections(help).find((part) => part.title === "DESCRIPTION")?.text ?? []).join(" ")

/** The compact help of the program: what it does, its commands in order, and the built-ins. */
const renderRoot = (
  program: string,
  version: string,
  helpOf: HelpOf,
  subcommands: HashMap.HashMap<string, CommandDescriptor.Command<unknown>>
): string => {
  const help = helpOf(config)
  // Each line of @effect/cli's command list starts with the command's name.
  const names = (sections(help).find((part) => part.title === "COMMANDS")?.text ?? [])
    .map((line) => line.trim().split(/\s+/)[0] ?? "")
  const commands = names.flatMap((name) =>
    Option.match(HashMap.get(subcommands, name), {
      onNone: () => [],
      onSome: (command): ReadonlyArray<readonly [string, string]> => [[
        name,
        descriptionOf(CommandDescriptor.getHelp(command, config))
      ]]
    })
  )
  const lines = [
    `${program} ${version}: ${descriptionOf(help)}`,
    "",
    "USAGE",
    `  ${program} <command> [flags] [arguments]   (no command: replay the bundled conversation)`,
    "",
    "COMMANDS",
    ...table(commands),
    "",
    "BUILT-IN FLAGS",
    ...table(builtInsOf(helpOf)),
    "",
    `Flags of a command: ${program} <command> --help`
  ]
  return lines.join("\n")
}

/**
 * The compact help `args` ask for with `-h` or `--help` before any `--`. It is the help of the
 * command they name first, else of the program. `None` when they ask for none.
 */
export const helpFor = <Name extends string, R, E, A>(
  root: Command.Command<Name, R, E, A>,
  args: ReadonlyArray<string>,
  version: string
): Option.Option<string> => {
  const end = args.indexOf("--")
  const options = end === -1 ? args : args.slice(0, end)
  if (!options.includes("--help") && !options.includes("-h")) return Option.none()
  const program = [...Command.getNames(root)][0] ?? "effect-chat-memory"
  const first = args[0]
  const subcommand = first === undefined ? Option.none() : HashMap.get(Command.getSubcommands(root), first)
  return Option.some(Option.match(subcommand, {
    onNone: () => renderRoot(program, version, (config) => Command.getHelp(root, config), Command.getSubcommands(root)),
    onSome: (command) => renderCommand(program, first ?? "", (config) => CommandDescriptor.getHelp(command, config))
  }))
}

/** Prints the help `args` ask for, or runs `run` when they ask for none. */
export const orRun = <Name extends string, R, E, A, E2, R2>(
  root: Command.Command<Name, R, E, A>,
  args: ReadonlyArray<string>,
  version: string,
  run: Effect.Effect<void, E2, R2>
): Effect.Effect<void, E2, R2> =>
  Option.match(helpFor(root, args, version), { onNone: () => run, onSome: (text) => Console.log(text) })

/** A flag a command knows: its names (`--k-raw-turns`, `-k`), and whether a value follows it. */
export interface KnownFlag {
  readonly names: ReadonlyArray<string>
  readonly takesValue: boolean
}

/**
 * The flags, built-ins included, of the command `args` name first, else of the program. They are
 * read from the help documents: `-k, --k-raw-turns turns` names two spellings of a flag that
 * takes a value, `--json` one without.
 */
export const flagsOf = <Name extends string, R, E, A>(
  root: Command.Command<Name, R, E, A>,
  args: ReadonlyArray<string>
): { readonly command: Option.Option<string>; readonly flags: ReadonlyArray<KnownFlag> } => {
  const first = args[0]
  const subcommand = first === undefined ? Option.none() : HashMap.get(Command.getSubcommands(root), first)
  const help = Option.match(subcommand, {
    onNone: () => Command.getHelp(root, withBuiltIns),
    onSome: (command) => CommandDescriptor.getHelp(command, withBuiltIns)
  })
  const flags = definitionsOf(help, "OPTIONS").map(([definition]): KnownFlag => {
    const spellings = definition.split(", ")
    const last = spellings.at(-1) ?? ""
    return {
      names: spellings.map((spelling) => spelling.split(" ")[0] ?? spelling),
      takesValue: last.includes(" ")
    }
  })
  return { command: Option.as(subcommand, first ?? ""), flags }
}
