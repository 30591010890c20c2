// The bench's view into a process it started with `--inspect=127.0.0.1:0`: full collections, the
// process's own memory reading, and heap snapshots, over the inspector's WebSocket (Chrome
// DevTools protocol). The process under test runs no code of the bench's.
import { writeFile } from 'node:fs/promises';
import * as z from 'zod';

const Message = z.object({
  id: z.number().optional(),
  method: z.string().optional(),
  params: z.object({ chunk: z.string().optional() }).optional(),
  result: z.unknown().optional(),
  error: z.object({ message: z.string() }).optional(),
});

const Evaluated = z.object({ result: z.object({ value: z.string() }) });

/** process.memoryUsage() of the inspected process, in bytes. */
export const MemoryUsage = z.object({
  rss: z.number(),
  heapTotal: z.number(),
  heapUsed: z.number(),
  external: z.number(),
  arrayBuffers: z.number(),
});
export type MemoryUsage = z.infer<typeof MemoryUsage>;

/** The inspector's address, as the process prints it on stderr when it starts. */
export const inspectorUrlIn = (output: string): string | undefined =>
  /Debugger listening on (ws:\/\/\S+)/.exec(output)?.[1];

export class InspectorSession {
  private next = 1;
  private readonly waiting = new Map<number, { resolve: (result: unknown) => void; reject: (error: Error) => void }>();
  private chunks: string[] = [];

  private constructor(private readonly socket: WebSocket) {
    socket.addEventListener('message', (event) => {
      const message = Message.parse(JSON.parse(String(event.data)));
      if (message.method === 'HeapProfiler.addHeapSnapshotChunk' && message.params?.chunk !== undefined) {
        this.chunks.push(message.params.chunk);
      }
      if (message.id === undefined) return;
      const waiter = this.waiting.get(message.id);
      this.waiting.delete(message.id);
      if (message.error !== undefined) waiter?.reject(new Error(`inspector: ${message.error.message}`));
      else waiter?.resolve(message.result);
    });
  }

  static open(url: string): Promise<InspectorSession> {
    const socket = new WebSocket(url);
    return new Promise((resolve, reject) => {
      socket.addEventListener('open', () => resolve(new InspectorSession(socket)));
      socket.addEventListener('error', () => reject(new Error(`no inspector at ${url}`)));
    });
  }

  private send(method: string, params: Record<string, unknown> = {}): Promise<unknown> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.socket.send(JSON.stringify({ id, method, params }));
    });
  }

  /** process.memoryUsage() right after full collections: what the heap still holds is reachable. */
  async memoryAfterCollection(): Promise<MemoryUsage> {
    // Twice: objects with finalizers or weak references are freed by the second.
    await this.send('HeapProfiler.collectGarbage');
    await this.send('HeapProfiler.collectGarbage');
    const answer = Evaluated.parse(
      await this.send('Runtime.evaluate', { expression: 'JSON.stringify(process.memoryUsage())', returnByValue: true }),
    );
    return MemoryUsage.parse(JSON.parse(answer.result.value));
  }

  /** Writes a heap snapshot (what Chrome DevTools' Memory tab loads) to a file. */
  async snapshot(file: string): Promise<void> {
    this.chunks = [];
    await this.send('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
    await writeFile(file, this.chunks.join(''));
    this.chunks = [];
  }

  close(): void {
    this.socket.close();
  }
}
