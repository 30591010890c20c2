// `npm start`: runs the whole gateway on this machine and tells you how to talk to it.
import { errorText, stackText } from '../../shared/errors.js';
import { banner } from './banner.js';
import { parseLocalOptions, usage } from './options.js';
import { type LocalRuntime, startLocalRuntime } from './runtime.js';
import { stopSignals } from './stop-signals.js';

const main = async (): Promise<number> => {
  // Everything this process writes (the store's files, the data key, the credential file) is its
  // owner's only: the store's files are made by LevelDB, which takes its modes from the umask.
  process.umask(0o077);
  const parsed = parseLocalOptions(process.argv.slice(2), process.env);
  if (parsed.kind === 'help') {
    process.stdout.write(usage);
    return 0;
  }
  if (parsed.kind === 'error') {
    process.stderr.write(`${parsed.message}\n\n${usage}`);
    return 2;
  }
  let runtime: LocalRuntime;
  try {
    runtime = await startLocalRuntime(parsed.options, { variables: process.env });
  } catch (error) {
    process.stderr.write(`${errorText(error)}\n`);
    return 1;
  }
  process.stdout.write(banner(runtime, parsed.options.memory));
  await new Promise<void>((resolve) => {
    const requests = stopSignals(Date.now);
    const shutdown = (signal: string) => {
      const request = requests(signal);
      if (request === 'same') {
        process.stdout.write(
          `${signal} received again within a second: still stopping cleanly (once more stops at once).\n`,
        );
        return;
      }
      if (request === 'force') {
        // Calls cut short here are settled at the next start (never sent twice).
        process.stdout.write(`\n${signal} received again: stopping at once.\n`);
        process.exit(1);
      }
      process.stdout.write(
        `\n${signal} received, stopping: new requests are refused, calls in flight finish first (Ctrl-C again stops at once)...\n`,
      );
      resolve();
    };
    process.on('SIGINT', () => shutdown('SIGINT'));
    process.on('SIGTERM', () => shutdown('SIGTERM'));
  });
  await runtime.stop();
  process.stdout.write('Stopped.\n');
  return 0;
};

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${stackText(error)}\n`);
    process.exit(1);
  },
);
