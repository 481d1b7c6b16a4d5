import { HostPathRedaction } from "@serverfs/domain"

/**
 * The one form of a working directory shown to the chat, for every runtime: the form of the task
 * record's `relative_cwd` (what `walkStartDirectory` stores), workdir-relative without "./", and
 * `""` for the workdir root itself — never "." (Codex's cwd is absolute; the redaction rule would
 * show the root as "."). A directory outside the workdir is `<outside-workdir>`; no host path
 * survives.
 */
export const relativeCwd = (workdirRoot: string | HostPathRedaction, cwd: string): string => {
  const redaction = typeof workdirRoot === "string" ? new HostPathRedaction(workdirRoot) : workdirRoot
  const shown = redaction.path(cwd)
  return shown === "." ? "" : shown
}
