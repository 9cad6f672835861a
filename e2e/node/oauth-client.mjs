// An MCP client on the official TypeScript SDK's OAuth support, for the Go
// tests: it connects to toolnexus's /mcp with nothing but client
// credentials, so it must discover the identity provider from the 401
// (RFC 9728 protected resource metadata), get a token for /mcp from it and
// list the tools. Then it asks the same provider for a token meant for
// another resource and shows /mcp refuses it.
//
// usage: node oauth-client.mjs MCP_URL ISSUER CLIENT_ID CLIENT_SECRET
// prints one JSON line: {"tools": [...], "otherResource": {"refused": bool, "code": HTTP status, "error": "..."}}
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ClientCredentialsProvider } from "@modelcontextprotocol/sdk/client/auth-extensions.js";

const [mcpUrl, issuer, clientId, clientSecret] = process.argv.slice(2);

// The SDK passes no scope to a client-credentials token request on its own
// (it uses the provider's configured scope), so name the one /mcp requires.
const provider = new ClientCredentialsProvider({ clientId, clientSecret, expectedIssuer: issuer, scope: "tools" });
const client = new Client({ name: "toolnexus-oauth-e2e", version: "1" });
await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider }));
const { tools } = await client.listTools();
await client.close();

// A token the provider issues for a different resource (RFC 8707), from
// the token endpoint its discovery document names.
const discovery = await (await fetch(issuer + "/.well-known/openid-configuration")).json();
const resp = await fetch(discovery.token_endpoint, {
  method: "POST",
  headers: {
    "Content-Type": "application/x-www-form-urlencoded",
    Authorization: "Basic " + Buffer.from(clientId + ":" + clientSecret).toString("base64"),
  },
  body: new URLSearchParams({ grant_type: "client_credentials", resource: "https://other-resource.test/mcp", scope: "tools" }),
});
const other = (await resp.json()).access_token;
let otherResource = { refused: false, code: 0, error: "" };
const c2 = new Client({ name: "toolnexus-oauth-e2e", version: "1" });
try {
  await c2.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { requestInit: { headers: { Authorization: "Bearer " + other } } }));
  await c2.listTools();
  await c2.close();
} catch (e) {
  otherResource = { refused: true, code: e && e.code, error: String(e && e.message ? e.message : e) };
}
console.log(JSON.stringify({ tools: tools.map((t) => t.name), otherResource }));
