import {
  type CreateDirectoryInput,
  type CreateTextFileInput,
  type DeleteDirectoryInput,
  type DeleteFileInput,
  type EditTextFileInput,
  WorkdirBusy
} from "@serverfs/domain"
import { Configuration, type Workdir, WorkdirRegistry } from "@serverfs/policy"
import { AuditLog } from "@serverfs/telemetry-local"
import { Effect } from "effect"
import { workdirLookup } from "./ChannelContext.js"
import { type LeaseError, LeaseManager } from "./LeaseManager.js"
import { createDirectory } from "./mutations/createDirectory.js"
import { createTextFile } from "./mutations/createTextFile.js"
import { deleteDirectory } from "./mutations/deleteDirectory.js"
import { deleteFile } from "./mutations/deleteFile.js"
import { editTextFile, writeTextFile } from "./mutations/editTextFile.js"
import type { MutationContext } from "./mutations/MutationContext.js"
import { WorkdirRoots } from "./WorkdirRoots.js"

/** The mutation tools over a context whose `guard` serializes and leases as the caller must. */
const mutationsWith = (guard: MutationContext["guard"]) =>
  Effect.gen(function* () {
    const { global } = yield* Configuration
    const registry = yield* WorkdirRegistry
    const roots = yield* WorkdirRoots
    const audit = yield* AuditLog
    const context: MutationContext = {
      settings: global,
      workdir: registry.get,
      lookup: workdirLookup(registry.all),
      rootOf: roots.rootOf,
      guard,
      directoryFsyncFailed: (errno) => audit.emit("WARNING", "directory_fsync_failed", { errno })
    }
    return {
      createTextFile: (input: CreateTextFileInput) => createTextFile(context, input),
      editTextFile: (input: EditTextFileInput) => editTextFile(context, input),
      deleteFile: (input: DeleteFileInput) => deleteFile(context, input),
      createDirectory: (input: CreateDirectoryInput) => createDirectory(context, input),
      deleteDirectory: (input: DeleteDirectoryInput) => deleteDirectory(context, input),
      /** Create or replace a whole text file (not an MCP tool: see writeTextFile). */
      writeTextFile: (input: CreateTextFileInput) => writeTextFile(context, input),
      /** The context itself, for the binary upload (BinaryTransfer): same lock, same lease. */
      context
    } as const
  })

/**
 * The five mutation tools. Every one runs under one process-wide mutation lock (spec v0.2 §5:
 * mutation traffic is low, a per-path lock table would be premature) and, inside it, the
 * workdir lease shared with the Agent Bridge. Reads never take either.
 */
export class Mutations extends Effect.Service<Mutations>()("@serverfs/workspace/Mutations", {
  effect: Effect.gen(function* () {
    const lease = yield* LeaseManager
    const lock = yield* Effect.makeSemaphore(1)
    return yield* mutationsWith((workdir, effect) => lock.withPermits(1)(lease.hold(workdir, effect)))
  })
}) {}

/**
 * The same mutations for the process that already holds the workdir's lease: the Agent Bridge,
 * writing for a workspace-write task (the scripted runtime's `write:`). The bridge holds
 * flock(LOCK_EX) on the slot's lock file for the whole turn, so the MCP side's non-blocking
 * probe would answer WORKDIR_BUSY against the bridge itself, and the recovery guard it would
 * find is the task's own. Instead `holds(workdir)` must say the caller holds that workdir's
 * lease right now, else WORKDIR_BUSY; the flock it holds keeps serverfs-mcp out meanwhile.
 * Every other check (read-only, path policy, symlinks, hard links, content, size) is the tools'.
 */
export const leaseHolderMutations = (holds: (workdir: Workdir) => boolean) =>
  Effect.gen(function* () {
    const lock = yield* Effect.makeSemaphore(1)
    const guard = <A, E, R>(
      workdir: Workdir,
      effect: Effect.Effect<A, E, R>
    ): Effect.Effect<A, E | LeaseError, R> =>
      lock.withPermits(1)(
        Effect.suspend(
          (): Effect.Effect<A, E | LeaseError, R> =>
            holds(workdir) ? effect : Effect.fail(new WorkdirBusy({ workdir: workdir.alias }))
        )
      )
    return yield* mutationsWith(guard)
  })
