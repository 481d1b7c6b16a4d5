import { Either } from "effect"
import { ConfigurationError } from "./ConfigurationError.js"
import type { Parse } from "./Parsers.js"

/**
 * The machinery of one configuration pass that collects every problem instead of stopping at
 * the first (ServerConfiguration.ts): a check ends with `fail`, `attempt` collects it and the
 * pass goes on; a bad value is collected by `read`, which hands back the default so the checks
 * that follow still have a value; `requireValid` skips a rule whose inputs already failed.
 */
export type Lookup = (variable: string) => string | undefined

/** The problems of one pass, in the order found, and the variables that have one. */
export class Collector {
  readonly problems: Array<ConfigurationError> = []
  readonly failed = new Set<string>()
  add(error: ConfigurationError): void {
    this.problems.push(error)
    this.failed.add(error.variable)
  }
}

/** Ends the current check (a global rule, a slot) with a problem. */
class Failure {
  constructor(readonly error: ConfigurationError) {}
}

/** Ends the current check silently: a variable it depends on already has its own problem. */
class Skip {}

export const fail = (variable: string, problem: string): never => {
  throw new Failure(new ConfigurationError({ variable, problem }))
}

/** Runs one check; a problem it ends with is collected and the pass goes on. */
export const attempt = <A>(c: Collector, check: () => A): A | undefined => {
  try {
    return check()
  } catch (e) {
    if (e instanceof Failure) c.add(e.error)
    else if (!(e instanceof Skip)) throw e
    return undefined
  }
}

/** A rule about variables that already failed would only repeat a consequence of that problem. */
export const requireValid = (c: Collector, ...variables: ReadonlyArray<string>): void => {
  if (variables.some((v) => c.failed.has(v))) throw new Skip()
}

/** A value, or its default after collecting the problem (the checks that follow need a value). */
export const read = <A>(c: Collector, lookup: Lookup, variable: string, parse: Parse<A>): A => {
  const parsed = parse(lookup(variable))
  if (Either.isRight(parsed)) return parsed.right
  c.add(new ConfigurationError({ variable, problem: parsed.left }))
  return Either.getOrThrow(parse(undefined))
}

export const isSet = (lookup: Lookup, variable: string): boolean => (lookup(variable) ?? "").trim() !== ""
