import type { BridgeMethod, MethodParams } from "@serverfs/domain"
import type { RpcHandler } from "@serverfs/rpc"
import { Effect } from "effect"
import type { TaskService } from "./tasks/TaskService.js"

/**
 * The bridge methods (bridge-internals §2) → TaskService. The RPC server has already decoded the
 * params with the method's schema, so each case reads typed params.
 */
export const rpcHandlers =
  (tasks: TaskService): RpcHandler =>
  (method: BridgeMethod, params: unknown) => {
    switch (method) {
      case "runtime.list":
        return tasks.runtimes()
      case "task.submit":
        return tasks.submit(params as MethodParams<"task.submit">)
      case "task.get":
        return tasks.get((params as MethodParams<"task.get">).task_id)
      case "task.events": {
        const p = params as MethodParams<"task.events">
        return tasks.events(p.task_id, p.after_event_id, p.limit)
      }
      case "task.result.read": {
        const p = params as MethodParams<"task.result.read">
        return tasks.readResult(p.task_id, p.offset_bytes, p.max_bytes)
      }
      case "task.approval.respond": {
        const p = params as MethodParams<"task.approval.respond">
        return tasks.respondApproval(p.task_id, p.request_id, p.decision, p.granted_permission_ids ?? [])
      }
      case "task.question.answer": {
        const p = params as MethodParams<"task.question.answer">
        return tasks.answerQuestion(p.task_id, p.request_id, p.answers)
      }
      case "task.message.send": {
        const p = params as MethodParams<"task.message.send">
        return tasks.sendMessage(p.task_id, p.message)
      }
      case "task.cancel":
        return tasks.cancel((params as MethodParams<"task.cancel">).task_id)
      default:
        return Effect.die(new Error("unreachable: the RPC server only dispatches known methods"))
    }
  }
