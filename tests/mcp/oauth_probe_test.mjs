// An OAuth-capable client meeting Basalt: the official SDK's own OAuth code (client/auth.js, and
// StreamableHTTPClientTransport with an authProvider) against the booted appliance. After a 401
// the SDK tries RFC 9728 / RFC 8414 discovery, then dynamic registration; each answer must parse
// as an OAuth error (RFC 6749 section 5.2), so that what the user finally sees is Basalt's
// sentence (this server takes an API key), not "Invalid OAuth error response".
// Usage: node oauth_probe_test.mjs KERNEL_ELF
import assert from "node:assert/strict";
import path from "node:path";
import { pathToFileURL } from "node:url";

import { Client, StreamableHTTPClientTransport, bootHttp, root, watch } from "./sdk.mjs";

const sdk = (file) => import(pathToFileURL(path.join(root, ".deps/npm/node_modules/@modelcontextprotocol/sdk/dist/esm", file)));
const { auth, discoverOAuthProtectedResourceMetadata, discoverAuthorizationServerMetadata, registerClient,
        exchangeAuthorization } = await sdk("client/auth.js");
const { InvalidRequestError } = await sdk("server/auth/errors.js");

const kernel = process.argv[2];
const ADMIN = "admin-key-0123456789abcdef";
const SENTENCE = "this server does not use OAuth; it takes an API key: send it with every request as " +
  "'Authorization: Bearer <key>' or 'X-MCP-API-Key: <key>'";
const node = await bootHttp(["--key", `admin:root:${ADMIN}`], { kernel });
const verdict = watch(node, "oauth_probe_test", 120000);

// The error a user is shown: an OAuth invalid_request carrying the sentence, exactly.
function isTheSentence(e, what) {
  assert.ok(!/Invalid OAuth error response/.test(e.message), `${what}: ${e.message}`);
  assert.ok(e instanceof InvalidRequestError, `${what}: ${e.constructor.name}: ${e.message}`);
  assert.equal(e.message, SENTENCE, what);
  return true;
}

// What an interactive client (an IDE) keeps: nothing yet, so the SDK discovers and registers.
class Provider {
  constructor() { this.saved = undefined; this.redirected = false; }
  get redirectUrl() { return "http://127.0.0.1:1/callback"; }
  get clientMetadata() { return { client_name: "oauth-probe", redirect_uris: ["http://127.0.0.1:1/callback"] }; }
  clientInformation() { return this.saved; }
  saveClientInformation(info) { this.saved = info; }
  tokens() { return undefined; }
  saveTokens() {}
  redirectToAuthorization() { this.redirected = true; }
  saveCodeVerifier() {}
  codeVerifier() { return "verifier"; }
}

try {
  const origin = new URL(node.url).origin;

  // Discovery: the metadata documents are absent (404), which the SDK reads as "no OAuth here".
  await assert.rejects(discoverOAuthProtectedResourceMetadata(node.url),
                       /does not implement OAuth 2.0 Protected Resource Metadata/);
  assert.equal(await discoverAuthorizationServerMetadata(origin), undefined);
  const prm = await fetch(new URL("/.well-known/oauth-protected-resource/mcp", origin));
  assert.equal(prm.status, 404);
  assert.deepEqual(await prm.json(), { error: "invalid_request", error_description: SENTENCE });

  // Registration and the token endpoint: refused in OAuth's own shape, parsed by the SDK.
  await assert.rejects(registerClient(origin, { clientMetadata: new Provider().clientMetadata }),
                       (e) => isTheSentence(e, "registerClient"));
  await assert.rejects(exchangeAuthorization(origin, { clientInformation: { client_id: "x" }, authorizationCode: "c",
                                                       codeVerifier: "v", redirectUri: "http://127.0.0.1:1/callback" }),
                       (e) => isTheSentence(e, "exchangeAuthorization"));

  // The whole flow as auth() runs it: it ends on the sentence, having registered nothing and
  // sent nobody to an authorization page.
  const direct = new Provider();
  await assert.rejects(auth(direct, { serverUrl: node.url }), (e) => isTheSentence(e, "auth()"));
  assert.equal(direct.saved, undefined);
  assert.equal(direct.redirected, false);

  // And as a client meets it: a call without a key gets /mcp's 401, the transport runs auth()
  // with its provider, and the call fails with the sentence.
  const provider = new Provider();
  const client = new Client({ name: "oauth-probe", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(new URL(node.url), { authProvider: provider }));
  await assert.rejects(client.callTool({ name: "kernel_info", arguments: {} }), (e) => isTheSentence(e, "callTool"));
  assert.equal(provider.redirected, false);
  await client.close();

  // /mcp's own 401 (challenge and canonical envelope) is http_contract_test.mjs's first row.
  // The key the appliance does take works through the same transport.
  const keyed = new Client({ name: "oauth-probe", version: "1" });
  await keyed.connect(new StreamableHTTPClientTransport(new URL(node.url), { requestInit: { headers: { Authorization: `Bearer ${ADMIN}` } } }));
  const info = await keyed.callTool({ name: "kernel_info", arguments: {} });
  assert.equal(info.isError, false);
  await keyed.close();
  await verdict.pass();
} catch (e) {
  await verdict.fail(e);
}
