import { randomBytes } from "node:crypto"
import { type RpcRequestId, rpcRequestId } from "@serverfs/domain"

/** The MCP client's request ids (bridge-internals §1.4): `mcp_` and 24 lowercase hex digits. */
export const MCP_REQUEST_ID_PATTERN = /^mcp_[0-9a-f]{24}$/

export const newRequestId = (): RpcRequestId => rpcRequestId(`mcp_${randomBytes(12).toString("hex")}`)
