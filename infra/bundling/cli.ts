// `node --import tsx infra/bundling/cli.ts <function> <folder> [--cedar]`: bundles one function
// for the stack. The stack runs it as a child process because CDK asks for its bundles
// synchronously and esbuild's plugins run only in its asynchronous API.
import { parseArgs } from 'node:util';
import { errorText } from '../../shared/errors.js';
import { bundleFunction } from './bundle-function.js';

const { values, positionals } = parseArgs({
  options: { cedar: { type: 'boolean', default: false } },
  allowPositionals: true,
  strict: true,
});
const [name, folder] = positionals;
if (name === undefined || folder === undefined || positionals.length !== 2) {
  process.stderr.write('usage: cli.ts <function> <folder> [--cedar]\n');
  process.exit(2);
}
bundleFunction(name, folder, { cedar: values.cedar }).then(
  (bundle) => {
    process.stdout.write(`${name}: ${bundle.coldStartBytes} bytes at cold start, ${bundle.shippedBytes} shipped\n`);
  },
  (error: unknown) => {
    process.stderr.write(`${errorText(error)}\n`);
    process.exit(1);
  },
);
