// Each role's own call bucket, as the appliance boots by default (no `rate=`): the console's
// admin makes 400 calls back to back and every one is served (an admin loading vectors or running
// searches from the serial line is not throttled at 50), while a reader's bucket (200, refilled at
// 100/s) still refuses what goes past it. Bounds, not timings: at least the bucket is served and
// at most the bucket plus what the refill gave during the calls, however fast the machine is.
// Usage: node role_limits_test.mjs KERNEL_ELF
import assert from "node:assert/strict";

import { boot, types } from "./sdk.mjs";

const { CallToolResultSchema } = types;
const kernel = process.argv[2];
const READER = "reader-key-0123456789abcdef";
const { client, transport, fail, done } = boot("basalt-role-limits-test", ["--key", `reader:rita:${READER}`],
                                               { kernel, timeoutMs: 120000, metered: true });

// Calls kernel_mem n times one after another; returns what was served, refused and how long it took.
async function burst(n, key) {
  const meta = key ? { _meta: { "io.basalt/api-key": key } } : {};
  let served = 0, refused = 0;
  const t0 = performance.now();
  for (let i = 0; i < n; ++i) {
    await client.request({ method: "tools/call", params: { name: "kernel_mem", arguments: {}, ...meta } }, CallToolResultSchema)
      .then((r) => {
        assert.equal(r.isError, false);
        ++served;
      }, (e) => {
        assert.equal(e.code, -32003, `${e}`);
        assert.equal(e.data.error.code, "limit_rate_exceeded");
        ++refused;
      });
  }
  return { served, refused, seconds: (performance.now() - t0) / 1000 };
}

try {
  await client.connect(transport);
  const admin = await burst(400);
  assert.equal(admin.served, 400, `the console's admin: ${admin.served} of 400 served`);

  const reader = await burst(400, READER);
  const most = 200 + Math.ceil(100 * reader.seconds) + 1;
  assert.ok(reader.served >= 200 && reader.served <= most,
            `reader: ${reader.served} of 400 served in ${reader.seconds.toFixed(2)} s (at least 200, at most ${most})`);
  if (most < 400)
    assert.ok(reader.refused > 0, "the reader's bucket refused nothing");
  console.log(`role_limits_test: admin 400/400 served in ${admin.seconds.toFixed(2)} s; reader ${reader.served}/400 ` +
              `served, ${reader.refused} limited in ${reader.seconds.toFixed(2)} s`);
  await done();
} catch (e) {
  await fail(e);
}
