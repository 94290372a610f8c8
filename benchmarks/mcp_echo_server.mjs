// The MCP peer of benchmarks/mcp_peer.py: the Node MCP SDK serving a `translate` tool over stdio that does what
// the bridge benchmark's echo method does — each entry's source comes back as its prediction.
// Run from a directory where `npm install @modelcontextprotocol/sdk zod` was done (the nox session does it).
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'echo-method', version: '1.0.0' });
server.registerTool('translate', {
  description: 'Translate entries: each source is returned as its prediction',
  inputSchema: { entries: z.array(z.object({ id: z.string(), source: z.string() })) },
}, async ({ entries }) => ({
  content: [{ type: 'text', text: JSON.stringify(entries.map((e) => ({ id: e.id, predicted: e.source }))) }],
}));
await server.connect(new StdioServerTransport());
