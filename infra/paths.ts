// Paths inside the project, independent of the directory a command runs from.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

export const projectPath = (...segments: string[]): string => join(root, ...segments);
