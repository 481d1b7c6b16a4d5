/**
 * The one rule for the environment of a provider's CLI (Claude Code, `codex app-server` over
 * stdio, the autostarted Codex daemon, the short `codex --version`): the bridge's own environment
 * — the operator's native one, with their provider authentication, CODEX_HOME, proxies and locale —
 * less ServerFS's own configuration. `SERVERFS_*` and `WORKDIR_*` name every workdir's host path,
 * the bridge socket and the lock directory; the agent's process has no business with them, and
 * anything it runs (a model-chosen command) would see them. Nothing is added, nothing of the
 * provider's is overridden.
 */

/** Variables that configure ServerFS itself. */
const SERVERFS_VARIABLE = /^(SERVERFS_|WORKDIR_)/

export const isServerFsVariable = (name: string): boolean => SERVERFS_VARIABLE.test(name)

export const childEnvironment = (
  environment: Readonly<Record<string, string | undefined>>
): Record<string, string | undefined> => {
  const out: Record<string, string | undefined> = {}
  for (const [key, value] of Object.entries(environment)) {
    if (value !== undefined && !isServerFsVariable(key)) out[key] = value
  }
  return out
}
