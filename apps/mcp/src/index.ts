export {
  canonicalJson,
  catalogMarker,
  type ListedTool,
  MARKER_LENGTH,
  MARKER_PLACEHOLDER,
  stampCatalog
} from "./CatalogMarker.js"
export { INSTRUCTIONS } from "./Instructions.js"
export {
  type FileIngressOptions,
  fileIngressLayer,
  makeFileIngress
} from "./ingress/FileIngressLive.js"
export type { IngressTestAllowance } from "./ingress/Protocol.js"
export {
  type ObjectJsonSchema,
  objectJsonSchema
} from "./JsonSchema.js"
export {
  McpServerLayer,
  mcpServerLayerWith
} from "./Layers.js"
export {
  McpServer,
  SERVER_NAME,
  SERVER_VERSION
} from "./McpServer.js"
export {
  parseResourceUri,
  RESOURCE_SCHEME,
  RESOURCE_TEMPLATE,
  type ResourceLocation,
  resourceUri
} from "./ResourceTemplate.js"
export {
  type ServerCatalog,
  serverCatalog,
  type ToolGroupEntry
} from "./ServerCatalog.js"
export { startupFields } from "./StartupLog.js"
export {
  callTool,
  encodeSuccess,
  errorResult,
  responseTooLarge,
  successResult,
  type ToolResult
} from "./ToolCall.js"
export {
  type AnyTool,
  defineTool,
  READ_ANNOTATIONS,
  type RenderedResult,
  type ToolAnnotations,
  type ToolDefinition
} from "./ToolDefinition.js"
export {
  type AgentToolContext,
  agentTools,
  agentToolsEnabled
} from "./tools/agentTools.js"
export { mutationTools } from "./tools/mutationTools.js"
export { readTools } from "./tools/readTools.js"
export {
  SERVER_INFO,
  serverInfoDescription,
  serverInfoTool
} from "./tools/serverInfoTool.js"
