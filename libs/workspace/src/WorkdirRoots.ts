import { ConfigurationError, slotId, type Workdir, WorkdirRegistry } from "@serverfs/policy"
import { AT, close, fstat, O, openat } from "@serverfs/posix"
import { Effect } from "effect"
import { isDirectory } from "./FileKind.js"

/**
 * The held root descriptor of every workdir, opened once at startup (O_DIRECTORY|O_NOFOLLOW)
 * and closed when the service's scope ends. The root is the only named anchor; every request
 * is resolved relative to this fd, so replacing the host directory afterwards cannot redirect
 * requests elsewhere.
 */
export class WorkdirRoots extends Effect.Service<WorkdirRoots>()("@serverfs/workspace/WorkdirRoots", {
  scoped: Effect.gen(function* () {
    const registry = yield* WorkdirRegistry
    const roots = new Map<number, number>()
    for (const workdir of registry.all) {
      const variable = `WORKDIR_${slotId(workdir.slot)}_PATH`
      const fd = yield* Effect.acquireRelease(
        Effect.try({
          try: () => {
            const opened = openat(AT.FDCWD, workdir.hostPath, O.RDONLY | O.DIRECTORY | O.NOFOLLOW)
            const stat = fstat(opened)
            if (!isDirectory(stat)) {
              close(opened)
              throw new Error("not a directory")
            }
            return { opened, id: `${stat.dev}:${stat.ino}` }
          },
          catch: () => new ConfigurationError({ variable, problem: "cannot be opened as a directory" })
        }),
        ({ opened }) => Effect.sync(() => close(opened))
      ).pipe(
        // The overlap check compared this directory with the others; a parent renamed since then
        // could make the path name another one (inside a different workdir, say).
        Effect.filterOrFail(
          ({ id }) => workdir.directoryId === undefined || id === workdir.directoryId,
          () =>
            new ConfigurationError({
              variable,
              problem:
                "changed during startup: it is no longer the directory the configuration check inspected"
            })
        ),
        Effect.map(({ opened }) => opened)
      )
      roots.set(workdir.slot, fd)
    }
    const rootOf = (workdir: Workdir): number => {
      const fd = roots.get(workdir.slot)
      if (fd === undefined) throw new Error(`no held root for slot ${workdir.slot}`)
      return fd
    }
    return { rootOf } as const
  })
}) {}
