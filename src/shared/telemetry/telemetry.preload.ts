import { ConfigError, loadDotEnv, loadTelemetrySettings } from '../config/config.js';

/**
 * Loaded before the service (`node --import ./dist/shared/telemetry/telemetry.preload.js
 * dist/api/index.js`), so that the instrumentations are in place before `pg`, `ioredis` and `http`
 * are first used. With no OTLP endpoint set (or OTEL_SDK_DISABLED=true) it loads nothing more:
 * no SDK, no exporter, no instrumentation, and the API's no-op spans cost a function call.
 */
try {
  loadDotEnv();
  const settings = loadTelemetrySettings();
  if (settings.tracesUrl !== null) {
    const { startTracing } = await import('./tracing-sdk.js');
    startTracing({ ...settings, tracesUrl: settings.tracesUrl }, process.argv[1]);
  }
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
}
