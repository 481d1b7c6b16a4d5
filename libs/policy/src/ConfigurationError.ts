import { Data } from "effect"

/**
 * A configuration value the server refuses to start with. The process prints one line,
 * `ServerFS: configuration error: <VARIABLE>: <problem>`, and exits with code 2. The problem text
 * never repeats the value (it may be a host path or a secret).
 */
export class ConfigurationError extends Data.TaggedError("ConfigurationError")<{
  readonly variable: string
  readonly problem: string
}> {
  override get message() {
    return `${this.variable}: ${this.problem}`
  }
}
