/**
 * The command line of the two servers (serverfs-mcp, serverfs-bridge). Both are configured by
 * environment variables only, so the only arguments are `--help`/`-h` and `--version`/`-V`: they
 * print to stdout and exit 0 before any configuration is read or anything starts. Any other
 * argument is refused with exit code 2 — `serverfs-mcp /srv/docs` once started silently with
 * zero workdirs, and a usage mistake is a configuration mistake: fail closed.
 *
 * Deliberately free of imports (not even `effect`): serverfs-bridge decides before its two
 * loading stages (apps/bridge/src/main.ts), so `--help` loads nothing else and a normal start
 * pays for one small module. Reached as `@serverfs/policy/ProgramArguments`.
 */
export interface ProgramIdentity {
  readonly name: string
  readonly version: string
  /** The help text after the usage line: what the program is and how it is configured. */
  readonly description: string
}

export type ProgramDecision =
  | { readonly _tag: "run" }
  | { readonly _tag: "exit"; readonly code: 0 | 2; readonly stdout: string; readonly stderr: string }

/** The longest piece of a refused argument repeated back (it may be anything the caller typed). */
const SHOWN_ARGUMENT_CHARS = 64

const shown = (argument: string): string => {
  const chars = Array.from(argument)
  const visible = chars
    .slice(0, SHOWN_ARGUMENT_CHARS)
    .map((c) => {
      const code = c.codePointAt(0) ?? 0
      return code < 0x20 || (code >= 0x7f && code <= 0x9f) ? "?" : c
    })
    .join("")
  return chars.length > SHOWN_ARGUMENT_CHARS ? `${visible}…` : visible
}

const HELP = new Set(["--help", "-h"])
const VERSION = new Set(["--version", "-V"])

export const helpText = (program: ProgramIdentity): string =>
  [
    `Usage: ${program.name} [--help | --version]`,
    "",
    program.description,
    "",
    "Configuration comes from environment variables and the optional file named by",
    "SERVERFS_ENV_FILE (docs/configuration.md); `serverfs config check` validates it and",
    "`serverfs doctor` checks the running setup.",
    "",
    "Options:",
    "  -h, --help     print this help and exit",
    "  -V, --version  print the version and exit",
    "",
    "Exit codes: 0 success or stopped by a signal, 1 failure, 2 configuration or usage error.",
    ""
  ].join("\n")

/**
 * What to do with `argv` (without the node binary and script). An unknown argument wins over
 * `--help`: `serverfs-mcp --help /srv/docs` is still a mistake worth naming.
 */
export const decideProgramArguments = (
  argv: ReadonlyArray<string>,
  program: ProgramIdentity
): ProgramDecision => {
  const unknown = argv.find((a) => !HELP.has(a) && !VERSION.has(a))
  if (unknown !== undefined) {
    return {
      _tag: "exit",
      code: 2,
      stdout: "",
      stderr: `${program.name}: unknown argument "${shown(unknown)}": it takes no arguments (configuration comes from the environment); see ${program.name} --help\n`
    }
  }
  if (argv.some((a) => HELP.has(a))) return { _tag: "exit", code: 0, stdout: helpText(program), stderr: "" }
  if (argv.some((a) => VERSION.has(a))) {
    return { _tag: "exit", code: 0, stdout: `${program.name} ${program.version}\n`, stderr: "" }
  }
  return { _tag: "run" }
}

/**
 * Applies a decision to the process: prints and sets the exit code (the event loop drains, so a
 * piped stdout is flushed), or reports that the program should start. A function of the process
 * on purpose — it is the entry point's edge, before any runtime exists.
 */
export const handleProgramArguments = (program: ProgramIdentity): boolean => {
  const decision = decideProgramArguments(process.argv.slice(2), program)
  if (decision._tag === "run") return true
  if (decision.stdout !== "") process.stdout.write(decision.stdout)
  if (decision.stderr !== "") process.stderr.write(decision.stderr)
  process.exitCode = decision.code
  return false
}
