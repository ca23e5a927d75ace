export default async function teardown(): Promise<void> {
  await (globalThis as { __REELAY_REDIS__?: { stop(): Promise<void> } }).__REELAY_REDIS__?.stop();
}
