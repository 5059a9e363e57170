/** Says plainly, once per run, which suites are skipped on this machine. */
export default function setup(): void {
  if (!process.env.TEST_MQTT_URL) {
    console.warn(
      '\n[dpp] External-broker suite SKIPPED: TEST_MQTT_URL is not set (e.g. mqtt://127.0.0.1:1883).',
    );
  }
  if (!process.env.TEST_DATABASE_URL) {
    console.warn(
      '\n[dpp] PostgreSQL suites SKIPPED: TEST_DATABASE_URL is not set. ' +
        'Set it (e.g. postgres://postgres@127.0.0.1:5432/test) to run the store tests on PostgreSQL too.\n',
    );
  } else {
    console.warn(
      `\n[dpp] PostgreSQL suites run against ${process.env.TEST_DATABASE_URL.replace(/\/\/[^@]*@/, '//***@')}\n`,
    );
  }
}
