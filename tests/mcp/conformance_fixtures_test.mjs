// End to end: the MCP conformance suite's fixtures (boot profile=conformance) through the official
// SDK client over the serial line, as the suite's anonymous client reaches them: every fixture tool
// with its exact content, logging and progress in order before the result, prompts, completion,
// resources (text, blob, template), a subscription's notifications/resources/updated, and the tools
// that ask the client while they run (sampling/createMessage, elicitation/create: answered, refused,
// cancelled while waiting, unanswered past the wall-time limit).
// Usage: node conformance_fixtures_test.mjs KERNEL_ELF
import assert from "node:assert/strict";

import { boot, envelopeOf, types } from "./sdk.mjs";

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR42mP4z8AAAAMBAQD3A0FDAAAAAElFTkSuQmCC";
const kernel = process.argv[2];
const { client, transport, fail, done } = boot("basalt-conformance", ["--profile", "conformance", "--role", "anonymous"],
                                               { kernel, timeoutMs: 130000, capabilities: { sampling: {}, elicitation: {} } });

const text = (t) => [{ type: "text", text: t }];

// A request the server must refuse with JSON-RPC `code` and the envelope's `envelope` code.
async function refused(promise, code, envelope) {
  try {
    await promise;
  } catch (e) {
    assert.equal(e.code, code, String(e));
    assert.equal(e.data?.error?.code, envelope, JSON.stringify(e.data));
    return;
  }
  assert.fail(`accepted; expected ${code} ${envelope}`);
}

try {
  await client.connect(transport);
  // Every message from the kernel, in the order it arrived (the SDK client hides some ordering).
  const wire = [];
  const deliver = transport.onmessage;
  transport.onmessage = (message, ...rest) => {
    wire.push(message);
    deliver(message, ...rest);
  };
  const caps = client.getServerCapabilities();
  assert.ok(caps.tools && caps.prompts && caps.completions && caps.logging, JSON.stringify(caps));
  assert.equal(caps.resources.subscribe, true);

  // Exactly the fixtures, on one page (the suite's client reads one), none of the kernel's tools.
  const listed = await client.listTools();
  assert.equal(listed.nextCursor, undefined);
  assert.deepEqual(listed.tools.map((t) => t.name).sort(), [
    "json_schema_2020_12_tool", "test_audio_content", "test_custom_headers", "test_elicitation",
    "test_elicitation_sep1034_defaults", "test_elicitation_sep1330_enums", "test_embedded_resource", "test_error_handling",
    "test_image_content", "test_input_required_result_capabilities", "test_input_required_result_elicitation",
    "test_input_required_result_list_roots", "test_input_required_result_multi_round",
    "test_input_required_result_multiple_inputs", "test_input_required_result_request_state",
    "test_input_required_result_sampling", "test_input_required_result_tampered_state", "test_logging_tool",
    "test_missing_capability", "test_multiple_content_types", "test_reconnection", "test_sampling", "test_simple_text",
    "test_streaming_elicitation", "test_tool_with_logging", "test_tool_with_progress",
  ]);
  for (const t of listed.tools) {
    assert.ok(t.description, t.name);
    assert.equal(t.outputSchema, undefined, t.name);
  }
  const schema = listed.tools.find((t) => t.name === "json_schema_2020_12_tool").inputSchema;
  assert.equal(schema.$schema, "https://json-schema.org/draft/2020-12/schema");
  assert.ok(schema.$defs.address);
  assert.equal(schema.additionalProperties, false);
  await refused(client.callTool({ name: "kernel_info", arguments: {} }), -32602, "validation_unknown_tool");
  const invalid = await client.callTool({ name: "json_schema_2020_12_tool", arguments: { address: { zip: "1" } } });
  assert.equal(invalid.isError, true, "2025-11-25: invalid arguments are a tool error (SEP-1303)");
  assert.equal(envelopeOf(invalid).error.code, "validation_failed");
  assert.match(invalid.content[0].text, /Invalid arguments for tool 'json_schema_2020_12_tool'/);
  const schemaCall = await client.callTool({ name: "json_schema_2020_12_tool",
                                            arguments: { name: "a", address: { city: "Rome" }, email: "a@example.org" } });
  assert.deepEqual(schemaCall.content, text("JSON Schema 2020-12 tool executed (with an address)"));

  // Content written by the tools themselves, each run in a tool task of its own.
  const call = (name) => client.callTool({ name, arguments: {} });
  let r = await call("test_simple_text");
  assert.deepEqual(r.content, text("This is a simple text response for testing."));
  assert.equal(r.isError, false);
  assert.equal(r.structuredContent, undefined);
  r = await call("test_image_content");
  assert.deepEqual(r.content, [{ type: "image", data: PNG, mimeType: "image/png" }]);
  r = await call("test_audio_content");
  assert.equal(r.content[0].type, "audio");
  assert.equal(r.content[0].mimeType, "audio/wav");
  assert.equal(Buffer.from(r.content[0].data, "base64").subarray(0, 4).toString(), "RIFF");
  r = await call("test_embedded_resource");
  assert.deepEqual(r.content, [{ type: "resource", resource: { uri: "test://embedded-resource", mimeType: "text/plain",
                                                               text: "This is an embedded resource content." } }]);
  r = await call("test_multiple_content_types");
  assert.deepEqual(r.content.map((c) => c.type), ["text", "image", "resource"]);
  assert.equal(r.content[2].resource.text, '{"test":"data","value":123}');
  r = await call("test_error_handling");
  assert.equal(r.isError, true);
  assert.match(r.content[0].text, /This tool intentionally returns an error for testing/);
  assert.equal(envelopeOf(r).error.code, "internal_error");
  r = await call("test_reconnection");
  assert.deepEqual(r.content, text("Reconnection test completed"));

  // tools-call-with-logging: three records tied to the call, in order, before its result.
  const logs = [];
  client.setNotificationHandler(types.LoggingMessageNotificationSchema, (n) => logs.push(n.params));
  await client.setLoggingLevel("info");
  r = await call("test_tool_with_logging");
  const own = logs.filter((l) => l.logger === "test_tool_with_logging");
  assert.deepEqual(own.map((l) => [l.level, l.data]), [["info", "Tool execution started"], ["info", "Tool processing data"],
                                                       ["info", "Tool execution completed"]]);
  assert.deepEqual(r.content, text("Tool with logging executed successfully"));
  await client.setLoggingLevel("error");
  logs.length = 0;
  await call("test_tool_with_logging");
  assert.equal(logs.filter((l) => l.logger === "test_tool_with_logging").length, 0, "below the level asked for");

  // tools-call-with-progress: 0, 50, 100 of 100 before the result, as sent on the line. The SDK
  // client (1.32) runs notification handlers a tick later but responses at once, so a last
  // progress that arrives in the same read as the result never reaches onprogress: what the
  // client saw is a prefix of what was sent.
  const progress = [];
  wire.length = 0;
  r = await client.callTool({ name: "test_tool_with_progress", arguments: {} }, undefined,
                            { onprogress: (p) => progress.push(p) });
  const sent = wire.filter((m) => m.method === "notifications/progress");
  assert.deepEqual(sent.map((m) => [m.params.progress, m.params.total]), [[0, 100], [50, 100], [100, 100]]);
  assert.ok(wire.indexOf(sent[2]) < wire.findIndex((m) => m.result), "progress before the result");
  assert.ok(progress.length >= 2);
  assert.deepEqual(progress, sent.slice(0, progress.length).map((m) => ({ progress: m.params.progress, total: m.params.total })));
  assert.deepEqual(r.content, text("Tool with progress executed successfully"));

  // Tools that ask the client while they run: the request arrives, its answer becomes the result.
  const asked = [];
  const sleep = (ms) => new Promise((res) => setTimeout(res, ms));
  client.setRequestHandler(types.CreateMessageRequestSchema, async (req) => {
    asked.push(req);
    return { role: "assistant", content: { type: "text", text: "This is a test response from the client" },
             model: "test-model", stopReason: "endTurn" };
  });
  let elicit = async () => ({ action: "accept", content: { username: "testuser", email: "test@example.com" } });
  client.setRequestHandler(types.ElicitRequestSchema, async (req) => {
    asked.push(req);
    return elicit(req);
  });
  r = await client.callTool({ name: "test_sampling", arguments: { prompt: "Test prompt for sampling" } });
  assert.deepEqual(r.content, text("LLM response: This is a test response from the client"));
  assert.equal(asked.length, 1);
  assert.equal(asked[0].method, "sampling/createMessage");
  assert.deepEqual(asked[0].params.messages, [{ role: "user", content: { type: "text", text: "Test prompt for sampling" } }]);
  assert.equal(asked[0].params.maxTokens, 100);

  r = await client.callTool({ name: "test_elicitation", arguments: { message: "Please provide your information" } });
  assert.deepEqual(r.content,
                   text('User response: action=accept, content={"username":"testuser","email":"test@example.com"}'));
  assert.equal(asked[1].params.message, "Please provide your information");
  assert.deepEqual(asked[1].params.requestedSchema.required, ["username", "email"]);

  elicit = async () => ({ action: "accept", content: { name: "Jane Smith", age: 25, score: 88, status: "inactive", verified: false } });
  r = await call("test_elicitation_sep1034_defaults");
  assert.match(r.content[0].text, /^Elicitation completed: action=accept, content=\{"name":"Jane Smith"/);
  const defaults = asked[2].params.requestedSchema.properties;
  assert.deepEqual([defaults.name.default, defaults.age.default, defaults.score.default, defaults.status.default,
                    defaults.verified.default], ["John Doe", 30, 95.5, "active", true]);

  elicit = async () => ({ action: "accept", content: { untitledSingle: "option1", titledSingle: "value1", legacyEnum: "opt1",
                                                       untitledMulti: ["option1", "option2"], titledMulti: ["value1", "value2"] } });
  r = await call("test_elicitation_sep1330_enums");
  assert.match(r.content[0].text, /^Elicitation completed: action=accept, content=\{"untitledSingle":"option1"/);
  const enums = asked[3].params.requestedSchema.properties;
  assert.deepEqual(enums.titledSingle.oneOf[0], { const: "value1", title: "First Option" });
  assert.equal(enums.legacyEnum.enumNames.length, 3);
  assert.deepEqual(enums.titledMulti.items.anyOf.map((o) => o.const), ["value1", "value2", "value3"]);

  elicit = async () => ({ action: "decline" });
  r = await client.callTool({ name: "test_elicitation", arguments: { message: "no thanks" } });
  assert.deepEqual(r.content, text("User response: action=decline, content={}"));

  // The client answers with an error: an isError result, and the call task is gone.
  elicit = async () => { throw new Error("the user closed the dialog"); };
  r = await client.callTool({ name: "test_elicitation", arguments: { message: "refuse me" } });
  assert.equal(r.isError, true, JSON.stringify(r));
  assert.match(r.content[0].text, /the client refused the request/);

  // Cancelled while it waits for the client: no answer, and the tool task ends.
  let release;
  elicit = () => new Promise((res) => { release = () => res({ action: "cancel" }); });
  const abort = new AbortController();
  const cancelled = client.callTool({ name: "test_elicitation", arguments: { message: "wait" } }, undefined,
                                    { signal: abort.signal });
  for (let i = 0; i < 50 && !release; ++i)
    await sleep(20);
  assert.ok(release, "the request reached the client");
  abort.abort("changed my mind");
  await assert.rejects(cancelled);
  release(); // a late answer to a withdrawn request: dropped by the kernel
  await sleep(300);
  r = await call("test_simple_text");
  assert.deepEqual(r.content, text("This is a simple text response for testing."), "the line still works");

  // Never answered: the call ends at its wall-time limit (10 s), like any other.
  release = undefined;
  elicit = () => new Promise((res) => { release = () => res({ action: "cancel" }); });
  const started = Date.now();
  r = await client.callTool({ name: "test_elicitation", arguments: { message: "nobody home" } });
  assert.equal(r.isError, true);
  assert.equal(envelopeOf(r).error.code, "limit_time_exceeded", JSON.stringify(r));
  assert.ok(Date.now() - started >= 9000, "waited for the limit");
  release();
  r = await client.callTool({ name: "test_sampling", arguments: { prompt: "still there?" } });
  assert.deepEqual(r.content, text("LLM response: This is a test response from the client"));

  // The bodies written for 2026-07-28 input rounds, in this 2025 session: the same asks go to
  // the client as requests of their own, one after the other (one body serves both eras).
  elicit = async () => ({ action: "accept", content: { name: "Alice" } });
  asked.length = 0;
  r = await client.callTool({ name: "test_input_required_result_multi_round", arguments: {} });
  assert.deepEqual(asked.map((q) => q.params.message), ["Step 1: What is your name?", "Step 2: What is your favorite color?"]);
  assert.deepEqual(r.content, text('step1: {"name":"Alice"}; step2: {"name":"Alice"}'));

  // Prompts.
  const prompts = await client.listPrompts();
  assert.deepEqual(prompts.prompts.map((p) => p.name), ["test_simple_prompt", "test_prompt_with_arguments",
                                                        "test_prompt_with_embedded_resource", "test_prompt_with_image",
                                                        "test_input_required_result_prompt"]);
  assert.deepEqual(prompts.prompts[1].arguments.map((a) => [a.name, a.required]), [["arg1", true], ["arg2", true]]);
  let p = await client.getPrompt({ name: "test_simple_prompt" });
  assert.deepEqual(p.messages, [{ role: "user", content: { type: "text", text: "This is a simple prompt for testing." } }]);
  p = await client.getPrompt({ name: "test_prompt_with_arguments", arguments: { arg1: "testValue1", arg2: "testValue2" } });
  assert.equal(p.messages[0].content.text, "Prompt with arguments: arg1='testValue1', arg2='testValue2'");
  p = await client.getPrompt({ name: "test_prompt_with_embedded_resource", arguments: { resourceUri: "test://example-resource" } });
  assert.deepEqual(p.messages[0].content, { type: "resource", resource: { uri: "test://example-resource", mimeType: "text/plain",
                                                                          text: "Embedded resource content for testing." } });
  assert.equal(p.messages[1].content.text, "Please process the embedded resource above.");
  p = await client.getPrompt({ name: "test_prompt_with_image" });
  assert.deepEqual(p.messages[0].content, { type: "image", data: PNG, mimeType: "image/png" });
  await refused(client.getPrompt({ name: "no_such_prompt" }), -32602, "validation_unknown_tool");
  await refused(client.getPrompt({ name: "test_prompt_with_arguments", arguments: { arg1: "x" } }), -32602, "validation_failed");

  // Completion of a prompt argument and of the template's variable.
  let c = await client.complete({ ref: { type: "ref/prompt", name: "test_prompt_with_arguments" }, argument: { name: "arg1", value: "par" } });
  assert.deepEqual(c.completion, { values: ["paris", "park", "party"], total: 3, hasMore: false });
  c = await client.complete({ ref: { type: "ref/resource", uri: "test://template/{id}/data" }, argument: { name: "id", value: "7" } });
  assert.deepEqual(c.completion.values, ["789"]);
  await refused(client.complete({ ref: { type: "ref/prompt", name: "nope" }, argument: { name: "a", value: "" } }), -32602,
                "validation_unknown_tool");

  // Resources: text, blob, the template.
  const resources = await client.listResources();
  assert.deepEqual(resources.resources.map((x) => [x.uri, x.mimeType]), [["test://static-text", "text/plain"],
                   ["test://static-binary", "image/png"], ["test://watched-resource", "text/plain"]]);
  let read = await client.readResource({ uri: "test://static-text" });
  assert.equal(read.contents[0].text, "This is the content of the static text resource.");
  assert.equal(read.contents[0].mimeType, "text/plain");
  read = await client.readResource({ uri: "test://static-binary" });
  assert.equal(read.contents[0].blob, PNG);
  const templates = await client.listResourceTemplates();
  assert.deepEqual(templates.resourceTemplates.map((t) => t.uriTemplate), ["test://template/{id}/data"]);
  read = await client.readResource({ uri: "test://template/123/data" });
  assert.deepEqual(JSON.parse(read.contents[0].text), { id: "123", templateTest: true, data: "Data for ID: 123" });
  await refused(client.readResource({ uri: "test://template/a/b/data" }), -32002, "validation_unknown_tool");

  // A subscription hears when the watched resource changes (every 3 s), and stops on unsubscribe.
  const updates = [];
  client.setNotificationHandler(types.ResourceUpdatedNotificationSchema, (n) => updates.push(n.params.uri));
  assert.deepEqual(await client.subscribeResource({ uri: "test://watched-resource" }), {});
  for (let i = 0; i < 80 && updates.length === 0; ++i)
    await new Promise((res) => setTimeout(res, 100));
  assert.deepEqual(updates, ["test://watched-resource"]);
  await client.unsubscribeResource({ uri: "test://watched-resource" });
  updates.length = 0;
  await new Promise((res) => setTimeout(res, 3500));
  assert.deepEqual(updates, [], "no notification after unsubscribe");
  await refused(client.subscribeResource({ uri: "kernel://status" }), -32002, "validation_unknown_tool");

  console.log("conformance fixtures over the serial line: tools, logging, progress, sampling, elicitation, prompts, completion, resources, subscription ok");
  await done();
} catch (e) {
  await fail(e);
}
