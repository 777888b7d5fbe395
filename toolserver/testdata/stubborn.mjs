// A tool server of MCP 2025-11-25, made with the official TypeScript SDK, whose tools go on
// after their call was cancelled and ask the client then (elicitation/create), as a server
// deaf to notifications/cancelled does. Run by toolserver's tests over stdio.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'

const server = new McpServer({ name: 'stubborn', version: '1' })
const schema = { type: 'object', properties: { ok: { type: 'boolean' } } }
for (const [name, who, after] of [['first', 'the first call', 300], ['second', 'the second call', 600]]) {
  server.registerTool(name, { description: `Waits ${after} ms, then asks a question for ${who}.` }, async () => {
    await new Promise((resolve) => setTimeout(resolve, after))
    const res = await server.server.elicitInput({ message: `A question for ${who}`, requestedSchema: schema })
    return { content: [{ type: 'text', text: `${who} got ${res.action}` }] }
  })
}
await server.connect(new StdioServerTransport())
