// Each function run as Lambda's Node.js runtime runs it: its shipped folder as the task root, the
// handler `file.export` found as the runtime finds it (file.js, file.mjs, then file.cjs, the
// module format by its extension), with exactly the environment given (the template's variables
// and what the runtime itself sets), one invocation at a time per instance (a second instance
// starts when all are busy, as Lambda scales), each given the function's timeout. An instance is
// a worker thread: its own process.env, its own module graph. The AWS SDK is the project's, found
// through NODE_PATH as the runtime's own copy is in Lambda (for ES modules too, as Lambda's
// runtime does since Node.js 18).
import { Worker } from 'node:worker_threads';

export interface LambdaFunctionSpec {
  /** The function's logical id in the template (for messages). */
  readonly logicalId: string;
  readonly functionName: string;
  readonly functionArn: string;
  readonly taskRoot: string;
  /** `file.export`, as the template's Handler. */
  readonly handler: string;
  readonly timeoutSeconds: number;
  readonly memoryMiB: number;
  /** The whole environment of the function: template variables and the runtime's own. */
  readonly environment: Readonly<Record<string, string>>;
}

/** A function's invocation failed as Lambda reports it: an errorType and an errorMessage. */
export class LambdaInvocationError extends Error {
  constructor(
    readonly functionLogicalId: string,
    readonly errorType: string,
    readonly errorMessage: string,
  ) {
    super(`${functionLogicalId} failed: ${errorType}: ${errorMessage}`);
    this.name = errorType;
  }
}

// The runtime's bootstrap inside the worker: plain JavaScript, as it runs before any TypeScript.
const bootstrap = `
const { parentPort, workerData } = require('node:worker_threads');
const { registerHooks } = require('node:module');
// Lambda's Node.js runtime also looks in NODE_PATH for a package an ES module imports (the SDK it
// ships in /var/runtime/node_modules), where Node alone would not.
const nodePath = (process.env.NODE_PATH || '').split(':').filter(Boolean);
registerHooks({
  resolve(specifier, context, nextResolve) {
    try {
      return nextResolve(specifier, context);
    } catch (error) {
      if (error.code !== 'ERR_MODULE_NOT_FOUND') throw error;
      for (const folder of nodePath) {
        try {
          return nextResolve(specifier, { ...context, parentURL: require('node:url').pathToFileURL(folder + '/../lambda-node-path.mjs').href });
        } catch {}
      }
      throw error;
    }
  },
});
const { existsSync, readFileSync } = require('node:fs');
// Node reads NODE_EXTRA_CA_CERTS once, when the process starts; an instance is a thread of a
// process already started, so its bootstrap adds them as Node would, to the agent that HTTPS
// requests use by default.
if (process.env.NODE_EXTRA_CA_CERTS) {
  const https = require('node:https');
  const tls = require('node:tls');
  https.globalAgent.options.ca = [...tls.rootCertificates, readFileSync(process.env.NODE_EXTRA_CA_CERTS, 'utf8')];
}
const { join } = require('node:path');
const { pathToFileURL } = require('node:url');
const { taskRoot, handler, functionName, functionArn, memoryMiB } = workerData;
const dot = handler.lastIndexOf('.');
const file = handler.slice(0, dot);
const exportName = handler.slice(dot + 1);
const failure = (error, type) => ({
  errorType: type || (error && error.name) || 'Error',
  errorMessage: error && error.message !== undefined ? String(error.message) : String(error),
});
const loaded = (async () => {
  const found = ['.js', '.mjs', '.cjs'].map((ext) => join(taskRoot, file + ext)).find((path) => existsSync(path));
  if (found === undefined) throw Object.assign(new Error("Cannot find module '" + file + "'"), { lambdaType: 'Runtime.ImportModuleError' });
  let module;
  try {
    module = await import(pathToFileURL(found).href);
  } catch (error) {
    throw Object.assign(error, { lambdaType: 'Runtime.ImportModuleError' });
  }
  const fn = module[exportName];
  if (typeof fn !== 'function') throw Object.assign(new Error(handler + ' is undefined or not exported'), { lambdaType: 'Runtime.HandlerNotFound' });
  return fn;
})();
loaded.catch(() => undefined);
parentPort.on('message', async ({ event, deadline, requestId }) => {
  const context = {
    callbackWaitsForEmptyEventLoop: true,
    functionName, functionVersion: '$LATEST', invokedFunctionArn: functionArn,
    memoryLimitInMB: String(memoryMiB), awsRequestId: requestId,
    logGroupName: '/aws/lambda/' + functionName, logStreamName: 'harness',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done() {}, fail() {}, succeed() {},
  };
  try {
    const fn = await loaded;
    const result = await fn(event, context);
    parentPort.postMessage({ ok: true, result: result === undefined ? null : JSON.parse(JSON.stringify(result)) });
  } catch (error) {
    parentPort.postMessage({ ok: false, ...failure(error, error && error.lambdaType) });
  }
});
`;

interface Instance {
  readonly worker: Worker;
  busy: boolean;
}

type Outcome = { ok: true; result: unknown } | { ok: false; errorType: string; errorMessage: string };

const isOutcome = (value: unknown): value is Outcome =>
  typeof value === 'object' && value !== null && 'ok' in value && typeof value.ok === 'boolean';

export interface LambdaFunction {
  readonly spec: LambdaFunctionSpec;
  /** The last part of what the function's instances wrote (their log lines). */
  logs(): string;
  /** Invokes the function with an event; rejects with a LambdaInvocationError as Lambda reports one. */
  invoke(event: unknown): Promise<unknown>;
  close(): Promise<void>;
}

export const lambdaFunction = (spec: LambdaFunctionSpec): LambdaFunction => {
  const instances: Instance[] = [];
  let requests = 0;
  let logs = '';

  const start = (): Instance => {
    const worker = new Worker(bootstrap, {
      eval: true,
      env: { ...spec.environment },
      workerData: {
        taskRoot: spec.taskRoot,
        handler: spec.handler,
        functionName: spec.functionName,
        functionArn: spec.functionArn,
        memoryMiB: spec.memoryMiB,
      },
      // Lambda's memory setting bounds the instance.
      resourceLimits: { maxOldGenerationSizeMb: spec.memoryMiB },
      stdout: true,
      stderr: true,
    });
    // What the function logs is kept (the last part of it), as CloudWatch keeps it, for messages.
    for (const stream of [worker.stdout, worker.stderr]) {
      stream.on('data', (chunk: Buffer) => {
        logs = `${logs}${chunk.toString('utf8')}`.slice(-64 * 1024);
      });
    }
    const instance = { worker, busy: false };
    instances.push(instance);
    return instance;
  };

  const retire = (instance: Instance) => {
    instances.splice(instances.indexOf(instance), 1);
    void instance.worker.terminate();
  };

  const run = (instance: Instance, event: unknown): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const timeoutMs = spec.timeoutSeconds * 1000;
      const fail = (type: string, message: string) => {
        cleanup();
        reject(new LambdaInvocationError(spec.logicalId, type, message));
      };
      const onMessage = (message: unknown) => {
        cleanup();
        instance.busy = false;
        if (!isOutcome(message)) reject(new LambdaInvocationError(spec.logicalId, 'Runtime.Unknown', 'no outcome'));
        else if (message.ok) resolve(message.result);
        else reject(new LambdaInvocationError(spec.logicalId, message.errorType, message.errorMessage));
      };
      const onError = (error: Error) => {
        retire(instance);
        fail('Runtime.ExitError', error.message);
      };
      const onExit = (code: number) => fail('Runtime.ExitError', `the instance exited with code ${code}`);
      // The instance is stopped at its timeout, as Lambda stops one; the next call starts a new one.
      const timer = setTimeout(() => {
        retire(instance);
        fail('Sandbox.Timedout', `Task timed out after ${spec.timeoutSeconds.toFixed(2)} seconds`);
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        instance.worker.off('message', onMessage).off('error', onError).off('exit', onExit);
      };
      instance.worker.on('message', onMessage).on('error', onError).on('exit', onExit);
      requests += 1;
      instance.worker.postMessage({
        event,
        deadline: Date.now() + timeoutMs,
        requestId: `${spec.functionName}-${requests}`,
      });
    });

  return {
    spec,
    logs: () => logs,
    invoke: (event) => {
      const instance = instances.find((candidate) => !candidate.busy) ?? start();
      instance.busy = true;
      return run(instance, event);
    },
    close: async () => {
      await Promise.all(instances.splice(0).map((instance) => instance.worker.terminate()));
    },
  };
};
