import { type BridgeHandlers, handlerOf, type RpcHandler, withinContract } from "@serverfs/rpc"
import { countedRpc } from "./diagnostics/RpcCallMetric.js"
import type { TaskService } from "./tasks/TaskService.js"

/**
 * The bridge methods (bridge-internals §2) → TaskService, one handler per method, typed by the
 * contract (libs/domain rpc/Methods.ts): the RPC server has already decoded the params with the
 * method's schema (task and request ids branded), and each handler may fail only with the frozen
 * errors its method documents. A facade failure outside that list is a bug and becomes a defect
 * (`withinContract`), logged by the server and answered BRIDGE_PROTOCOL_ERROR.
 */
export const bridgeHandlers = (tasks: TaskService): BridgeHandlers => ({
  "runtime.list": () => tasks.runtimes().pipe(withinContract("runtime.list")),
  "runtime.models": (p) => tasks.models(p).pipe(withinContract("runtime.models")),
  "task.submit": (p) => tasks.submit(p).pipe(withinContract("task.submit")),
  "task.get": (p) => tasks.get(p.task_id).pipe(withinContract("task.get")),
  "task.events": (p) =>
    tasks.events(p.task_id, p.after_event_id, p.limit).pipe(withinContract("task.events")),
  "task.result.read": (p) =>
    tasks.readResult(p.task_id, p.offset_bytes, p.max_bytes).pipe(withinContract("task.result.read")),
  "task.approval.respond": (p) =>
    tasks
      .respondApproval(p.task_id, p.request_id, p.decision, p.granted_permission_ids ?? [])
      .pipe(withinContract("task.approval.respond")),
  "task.question.answer": (p) =>
    tasks.answerQuestion(p.task_id, p.request_id, p.answers).pipe(withinContract("task.question.answer")),
  "task.message.send": (p) =>
    tasks.sendMessage(p.task_id, p.message).pipe(withinContract("task.message.send")),
  "task.cancel": (p) => tasks.cancel(p.task_id).pipe(withinContract("task.cancel")),
  // The operator CLI's methods (issue 10): on this socket behind its peer check; never an MCP tool.
  "task.list": (p) => tasks.listTasks(p).pipe(withinContract("task.list")),
  "lease.list": () => tasks.listLeases().pipe(withinContract("lease.list")),
  "lease.recover": (p) => tasks.recoverGuard(p.slot, p.force ?? false).pipe(withinContract("lease.recover")),
  // Spec v0.22 §8.3: read-only, on this socket behind its peer check; never an MCP tool.
  "diagnostics.snapshot": () => tasks.diagnosticsSnapshot,
  "diagnostics.task": (p) => tasks.diagnosticsTask(p.task_id),
  "metrics.snapshot": () => tasks.metricsSnapshot
})

/** The RPC server's handler for the bridge: every call counted by method and outcome. */
export const rpcHandlers = (tasks: TaskService): RpcHandler => countedRpc(handlerOf(bridgeHandlers(tasks)))
